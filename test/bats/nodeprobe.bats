#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe's command line and its features.d file: atomic, idempotent, never half-written.

load helpers

NUC="$FIX/pci/linuxhw-intel-nuc12-alderlake"

setup() {
  T=$(mktemp -d)
  mkdir -p "$T/proc" "$T/modules" "$T/fd"
  NP=("$BUILD/nodeprobe" --sysfs "$NUC" --proc "$T/proc" --modules-dir "$T/modules" --features-dir "$T/fd")
}

teardown() {
  chmod -R u+w "$T" 2>/dev/null
  rm -rf "$T"
}

@test "--help and the man page list the same options" {
  check_help_matches_man "$BUILD/nodeprobe" cmd/nodeprobe/nodeprobe.8
}

@test "-V prints the version" {
  run "$BUILD/nodeprobe" -V
  [ "$status" -eq 0 ]
  [[ "$output" =~ ^nodeprobe\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "an unknown option is a usage error (exit 2) naming it" {
  run_expect_fail 2 "$BUILD/nodeprobe" --bogus
  [[ "${lines[0]}" == "nodeprobe: error: unknown option '--bogus'" ]]
}

@test "a missing option argument is a usage error" {
  run_expect_fail 2 "$BUILD/nodeprobe" --sysfs
  [[ "${lines[0]}" == *"missing argument"* ]]
}

@test "the file equals --dry-run output, mode 0644, sorted, no comments" {
  run "${NP[@]}" --dry-run
  [ "$status" -eq 0 ]
  [ -n "$output" ]
  dry=$output
  [ ! -e "$T/fd/nodeprobe" ]            # dry run writes nothing
  run "${NP[@]}"
  [ "$status" -eq 0 ]
  [ "$(cat "$T/fd/nodeprobe")" = "$dry" ]
  [ "$(stat -c %a "$T/fd/nodeprobe")" = 644 ]
  diff -u <(sort "$T/fd/nodeprobe") "$T/fd/nodeprobe"
  ! grep -q '^#' "$T/fd/nodeprobe"
  [ "$(ls -A "$T/fd")" = nodeprobe ]     # no temp file left behind
}

@test "an unchanged file is not rewritten" {
  "${NP[@]}"
  ino=$(stat -c %i "$T/fd/nodeprobe")
  touch -d @1000000000 "$T/fd/nodeprobe"
  "${NP[@]}"
  [ "$(stat -c %i "$T/fd/nodeprobe")" = "$ino" ]
  [ "$(stat -c %Y "$T/fd/nodeprobe")" = 1000000000 ]
}

@test "stale labels clear: a run that finds nothing writes an empty file" {
  printf 'old.example.com/x=true\n' > "$T/fd/nodeprobe"
  mkdir -p "$T/empty"
  run "$BUILD/nodeprobe" --sysfs "$T/empty" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/fd" --no-builtin-rules
  [ "$status" -eq 0 ]
  [ -f "$T/fd/nodeprobe" ]
  [ ! -s "$T/fd/nodeprobe" ]
}

@test "the features dir is created when missing" {
  run "$BUILD/nodeprobe" --sysfs "$NUC" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/new/features.d"
  [ "$status" -eq 0 ]
  [ -f "$T/new/features.d/nodeprobe" ]
}

@test "a malformed rules file: exit 3, file:line:col, previous file untouched" {
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  printf 'apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nspec:\n  rules: [\n' > "$T/bad.yaml"
  run_expect_fail 3 "${NP[@]}" --rules "$T/bad.yaml"
  [[ "$output" == "nodeprobe: error: $T/bad.yaml:"[0-9]*:[0-9]*": "* ]]
  [ "$(cat "$T/fd/nodeprobe")" = "keep.example.com/x=true" ]
}

@test "a corrupt devicetree blob: exit 3 naming the file, previous file untouched" {
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  head -c 200 "$FIX/dtb/arm64/broadcom/bcm2711-rpi-4-b.dtb" > "$T/trunc.dtb"
  run_expect_fail 3 "${NP[@]}" --fdt "$T/trunc.dtb"
  [[ "$output" == "nodeprobe: error: $T/trunc.dtb"* ]]
  [ "$(cat "$T/fd/nodeprobe")" = "keep.example.com/x=true" ]
}

@test "an unwritable features dir: exit 4" {
  touch "$T/file"
  run_expect_fail 4 "$BUILD/nodeprobe" --sysfs "$NUC" --proc "$T/proc" \
    --modules-dir "$T/modules" --features-dir "$T/file/features.d"
  [[ "$output" == "nodeprobe: error: $T/file/features.d: "* ]]
}

@test "a full disk: exit 4, previous file untouched, no temp file left" {
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  # RLIMIT_FSIZE 0 makes every write fail with EFBIG, as a full disk fails with ENOSPC.
  run bash -c 'trap "" XFSZ; ulimit -f 0; exec "$@"' _ "${NP[@]}"
  [ "$status" -eq 4 ]
  [[ "$output" == "nodeprobe: error: $T/fd/nodeprobe: "* ]]
  [ "$(cat "$T/fd/nodeprobe")" = "keep.example.com/x=true" ]
  [ "$(ls -A "$T/fd")" = nodeprobe ]
}
