#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/check-negations: no test line asserts with a bare `! cmd`, which set -e ignores.

load helpers

@test "the tree has no bare '!' assertion" {
  run "$NP_ROOT/scripts/check-negations"
  [ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
  [[ $output == "check-negations: "*" shell files, no bare \"!\" assertion" ]]
}

@test "why: under bats a '! cmd' that is not the test's last line passes when cmd succeeds" {
  printf '%s\n' '@test bare { ! true; echo after; }' '@test guarded { ! true || false; echo after; }' \
    >"$BATS_TEST_TMPDIR/t.bats"
  run bats --tap "$BATS_TEST_TMPDIR/t.bats"
  [ "$status" -eq 1 ]
  [ "${lines[1]}" = "ok 1 bare" ]
  [ "${lines[2]}" = "not ok 2 guarded" ]
}

@test "a bare '!' in a test or a helper fails, naming file and line; guarded ones and conditions pass" {
  T=$BATS_TEST_TMPDIR/tree
  mkdir -p "$T/test/bats"
  cat >"$T/test/bats/a.bats" <<'EOF'
t() {
  ! grep -q a "$f" || false
  ! grep -q b "$f" || { echo b; return 1; }
  if ! grep -q c "$f"; then :; fi
  [ -e "$f" ] && ! grep -q d "$f" || false
  grep -q e "$f" ||
    ! grep -q f "$f"
  cat <<X
! not a command
X
  ! grep -q 'a || b' "$f"
  ! grep -q g "$f" || true
}
EOF
  printf '%s\n' 'h() {' '  for x in a b; do' '    ! grep -q "$x" f' '  done' '}' >"$T/test/bats/h.bash"
  run "$NP_ROOT/scripts/check-negations" "$T"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 3 ]
  [ "${lines[0]}" = "test/bats/a.bats:11: a bare \"!\" asserts nothing under set -e (bats): add \"|| false\": ! grep -q 'a || b' \"\$f\"" ]
  [[ ${lines[1]} == 'test/bats/a.bats:12: '*'! grep -q g "$f" || true' ]]
  [[ ${lines[2]} == 'test/bats/h.bash:3: '* ]]
  sed -i -e '11s/$/ || false/' -e '12s/|| true$/|| false/' "$T/test/bats/a.bats"
  sed -i '3s/$/ || return 1/' "$T/test/bats/h.bash"
  run "$NP_ROOT/scripts/check-negations" "$T"
  [ "$status" -eq 0 ]
  [ "$output" = 'check-negations: 2 shell files, no bare "!" assertion' ]
}
