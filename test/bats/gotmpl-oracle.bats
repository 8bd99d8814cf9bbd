#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# pkg/gotmpl against Go itself: Debian's golang-go and Sprig (golang-github-masterminds-sprig-dev)
# run the same templates over the same data (test/gotmpl-oracle), and every output and error
# text must be Go's, except the differences test/gotmpl-oracle/allow.txt names (each with its
# reason: Debian's Go 1.19 and Sprig 3.2.3 are older than what NFD v0.19 builds with, and
# nodeprobe follows the newer; or a documented bound of nodeprobe's).
load helpers

setup_file() {
  command -v go >/dev/null || return 0
  export ORACLE_DIR="$BATS_FILE_TMPDIR/oracle"
  # GOPATH mode over Debian's packages: nothing is fetched.
  mkdir -p "$ORACLE_DIR/gopath/src/gotmpl-oracle" "$BUILD/go-cache"
  cp "$NP_ROOT"/test/gotmpl-oracle/*.go "$ORACLE_DIR/gopath/src/gotmpl-oracle/"
  (cd "$ORACLE_DIR/gopath/src/gotmpl-oracle" &&
    GO111MODULE=off GOPATH="$ORACLE_DIR/gopath:/usr/share/gocode" GOCACHE="$BUILD/go-cache" \
      GOFLAGS= go build -o "$ORACLE_DIR/oracle" .) > "$ORACLE_DIR/build.log" 2>&1 || true
}

setup() {
  command -v go >/dev/null || skip "go is absent (scripts/install-deps installs golang-go)"
  [ -x "$ORACLE_DIR/oracle" ] || { cat "$ORACLE_DIR/build.log"; false; }
  O=$ORACLE_DIR/oracle
  RUN=$BUILD/test/tools/gotmpl-run
  ALLOW=$NP_ROOT/test/gotmpl-oracle/allow.txt
  OPEN=$NP_ROOT/test/gotmpl-oracle/open.txt
}

# differ CASES: both programs over CASES, then the comparison (its summary lines start '# ').
differ() {
  "$O" run "$1" > "$1.go"
  "$RUN" "$1" > "$1.np"
  run "$O" compare "$1.go" "$1.np" "$ALLOW" "$OPEN"
  grep '^# [0-9]' <<<"$output" | sed 's/^/# /' >&3 || true
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "3000 generated templates (seed 27) print and fail as Go's text/template with Sprig" {
  "$O" gen 27 3000 > "$BATS_TEST_TMPDIR/gen.jsonl"
  differ "$BATS_TEST_TMPDIR/gen.jsonl"
}

@test "a second seed: 2000 more" {
  "$O" gen 1 2000 > "$BATS_TEST_TMPDIR/gen.jsonl"
  differ "$BATS_TEST_TMPDIR/gen.jsonl"
}

@test "the fixtures (test/fixtures/gotmpl but hostile.json) and the fuzzer's seeds print and fail as Go's" {
  # hostile.json is left out: its templates are built to run past nodeprobe's step budget, and
  # Go, which has none, runs them for hours or overflows its stack (test/fixtures/gotmpl/README.md).
  local f fix=()
  for f in "$NP_ROOT"/test/fixtures/gotmpl/*.json; do
    [ "${f##*/}" = hostile.json ] || fix+=("$f")
  done
  "$O" corpus "${fix[@]}" "$NP_ROOT"/test/fuzz/fuzz_gotmpl.seeds/* > "$BATS_TEST_TMPDIR/fix.jsonl"
  differ "$BATS_TEST_TMPDIR/fix.jsonl"
}

@test "the generator is seeded: the same seed gives the same corpus" {
  [ "$("$O" gen 5 50 | sha256sum)" = "$("$O" gen 5 50 | sha256sum)" ]
  [ "$("$O" gen 5 50 | sha256sum)" != "$("$O" gen 6 50 | sha256sum)" ]
}
