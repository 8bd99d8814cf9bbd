#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The unit harness cannot report success without running: unknown names fail, cases are isolated.

load helpers

H="$BUILD/test/unit/test_harness"

@test "a made-up case name fails, naming it, and runs nothing else" {
  run "$H" no_such_case
  [ "$status" -eq 1 ]
  [ "${lines[0]}" = "FAIL: no_such_case: no such case" ]
  [ "${lines[-1]}" = "0 passed, 1 failed, 0 skipped" ]
  run "$BUILD/test/unit/test_strbuf" no_such_case
  [ "$status" -eq 1 ]
}

@test "named cases run alone; a made-up name among them still fails" {
  run "$H" skips_in_selftest aborts_in_selftest
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "2 passed, 0 failed, 0 skipped" ]
  run "$H" skips_in_selftest typo_case
  [ "$status" -eq 1 ]
  [ "${lines[-1]}" = "1 passed, 1 failed, 0 skipped" ]
}

@test "each case in its own process: an abort and a failed REQUIRE do not reach the next case" {
  NP_HARNESS_SELFTEST=1 run "$H"
  [ "$status" -eq 1 ]
  grep -qx 'FAIL: aborts_in_selftest' <<<"$output"
  grep -q 'aborts_in_selftest: killed by signal 6' <<<"$output"
  grep -qx 'FAIL: fails_after_setting_state_in_selftest' <<<"$output"
  grep -qx 'PASS: state_of_an_earlier_case_is_not_seen' <<<"$output"
  grep -qx 'SKIP: skips_in_selftest' <<<"$output"
  [ "${lines[-1]}" = "1 passed, 2 failed, 1 skipped" ]
}

@test "more than 256 cases are all registered (no silent case limit)" {
  gen="$BATS_TEST_TMPDIR/test_many.c"
  { echo '#include "harness.h"'; for i in $(seq 300); do echo "TEST(c$i) { CHECK($i > 0); }"; done; } >"$gen"
  cc -std=c17 -D_GNU_SOURCE -I"$NP_ROOT/test/unit" -o "$BATS_TEST_TMPDIR/many" "$gen"
  run "$BATS_TEST_TMPDIR/many"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "300 passed, 0 failed, 0 skipped" ]
  run "$BATS_TEST_TMPDIR/many" c300
  [ "${lines[-1]}" = "1 passed, 0 failed, 0 skipped" ]
}

@test "--list names every case in file order and runs none" {
  gen="$BATS_TEST_TMPDIR/test_list.c"
  { echo '#include "harness.h"'; for i in 3 1 2; do echo "TEST(c$i) { CHECK(0); }"; done; } >"$gen"
  cc -std=c17 -D_GNU_SOURCE -I"$NP_ROOT/test/unit" -o "$BATS_TEST_TMPDIR/list" "$gen"
  run "$BATS_TEST_TMPDIR/list" --list
  [ "$status" -eq 0 ]
  [ "$output" = $'c3\nc1\nc2' ]
  # every case fails when run: none ran above
  run "$BATS_TEST_TMPDIR/list"
  [ "$status" -eq 1 ]
  [ "${lines[-1]}" = "0 passed, 3 failed, 0 skipped" ]
}

@test "run-tests counts skips apart, in unit binaries and bats files" {
  out=$(NP_HARNESS_SELFTEST=1 ONLY='^test_harness$' "$NP_ROOT/scripts/run-tests" 2>&1) && return 1
  [ "$(tail -1 <<<"$out")" = "1 passed, 2 failed, 1 skipped" ]
}
