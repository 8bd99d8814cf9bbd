#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/check-calls: inside each module calls run one way (from the objects' symbol tables),
# and no pkg/ file is over 800 lines.

load helpers

setup() {
  T=$(mktemp -d)
  mkdir -p "$T/pkg/demo" "$T/build/pkg/demo"
}

teardown() {
  rm -rf "$T"
}

# obj NAME 'C source': write pkg/demo/NAME.c and compile it to build/pkg/demo/NAME.o.
obj() {
  printf '%s\n' "$2" >"$T/pkg/demo/$1.c"
  cc -c -o "$T/build/pkg/demo/$1.o" "$T/pkg/demo/$1.c"
}

@test "the tree's modules call one way and keep their files under 800 lines" {
  run "$NP_ROOT/scripts/check-calls" "$BUILD" "$NP_ROOT"
  [ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
  [[ $(tail -1 <<<"$output") == "check-calls: "*" modules, "*" files, calls one way inside each, none over 800 lines"* ]]
}

@test "a pipeline (a calls b, b calls c) passes" {
  obj demo_a 'int demo_b(void); int demo_a(void) { return demo_b(); }'
  obj demo_b 'int demo_c(void); int demo_b(void) { return demo_c(); }'
  obj demo_c 'int demo_c(void) { return 1; }'
  run "$NP_ROOT/scripts/check-calls" "$T/build" "$T"
  [ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
}

@test "two files calling each other both ways fail, naming both and a symbol each way" {
  obj demo_a 'int demo_b(void); int demo_a(void) { return demo_b(); }'
  obj demo_b 'int demo_a(void); int demo_b(void) { return demo_a(); }'
  run "$NP_ROOT/scripts/check-calls" "$T/build" "$T"
  [ "$status" -eq 1 ]
  grep -qx 'pkg/demo: files call each other in a circle: demo_a.c (demo_b) -> demo_b.c (demo_a) -> demo_a.c (the circle holds 2 files: demo_a.c, demo_b.c)' <<<"$output"
}

@test "a longer loop (a -> b -> c -> a) fails too, and a file over 800 lines is named" {
  obj demo_a 'int demo_b(void); int demo_a(void) { return demo_b(); }'
  obj demo_b 'int demo_c(void); int demo_b(void) { return demo_c(); }'
  obj demo_c 'int demo_a(void); int demo_c(void) { return demo_a(); }'
  for i in $(seq 801); do echo "/* $i */"; done >"$T/pkg/demo/demo_long.h"
  run "$NP_ROOT/scripts/check-calls" "$T/build" "$T"
  [ "$status" -eq 1 ]
  grep -qx 'pkg/demo: files call each other in a circle: demo_a.c (demo_b) -> demo_b.c (demo_c) -> demo_c.c (demo_a) -> demo_a.c (the circle holds 3 files: demo_a.c, demo_b.c, demo_c.c)' <<<"$output"
  grep -qx 'pkg/demo/demo_long.h: 801 lines, over 800: split it by phase' <<<"$output"
}

@test "a missing object is exit 2 with a hint, never a pass" {
  obj demo_a 'int demo_a(void) { return 0; }'
  printf 'int demo_z(void) { return 0; }\n' >"$T/pkg/demo/demo_z.c"
  run "$NP_ROOT/scripts/check-calls" "$T/build" "$T"
  [ "$status" -eq 2 ]
  [[ $output == *"demo_z.o: missing; run make first" ]]
}

@test "a listed pending circle is printed, not failed; a pending entry that holds now fails" {
  obj demo_a 'int demo_b(void); int demo_a(void) { return demo_b(); }'
  obj demo_b 'int demo_a(void); int demo_b(void) { return demo_a(); }'
  obj demo_c 'int demo_c(void) { return 1; }'
  mkdir -p "$T/scripts"
  printf '# pending\npkg/demo   # its circle\n' >"$T/scripts/check-calls.pending"
  run "$NP_ROOT/scripts/check-calls" "$T/build" "$T"
  [ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
  grep -q '^pending: pkg/demo: files call each other in a circle: demo_a.c (demo_b)' <<<"$output"
  [[ $(tail -1 <<<"$output") == *"but for the 1 pending in scripts/check-calls.pending" ]]
  printf 'pkg/demo/demo_c.c\n' >>"$T/scripts/check-calls.pending"
  run "$NP_ROOT/scripts/check-calls" "$T/build" "$T"
  [ "$status" -eq 1 ]
  grep -qx 'scripts/check-calls.pending: pkg/demo/demo_c.c holds now: take it off the list' <<<"$output"
}
