#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/check-layers: every #include between modules follows README's table of layers.

load helpers

setup() {
  T=$(mktemp -d)
  cp -r "$NP_ROOT/pkg" "$NP_ROOT/cmd" "$NP_ROOT/hooks" "$NP_ROOT/README.md" "$T/"
}

teardown() {
  rm -rf "$T"
}

@test "the tree follows README's layers" {
  run "$NP_ROOT/scripts/check-layers"
  [ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
  [[ $output == "check-layers: "*" modules, every include within its layer" ]]
}

@test "a mirror file including reload/reload.h (another part) fails, naming file, line and modules" {
  f="$T/pkg/mirror/mirror_render.c"
  n=$(grep -n '^#include "' "$f" | tail -1 | cut -d: -f1)
  sed -i "${n}a #include \"reload/reload.h\"" "$f"
  run "$NP_ROOT/scripts/check-layers" "$T"
  [ "$status" -eq 1 ]
  grep -qx "pkg/mirror/mirror_render.c:$((n + 1)): mirror (mirror) includes reload (API): not allowed by README's layers" <<<"$output"
}

@test "core including a part, and a library including cli, fail" {
  sed -i '0,/^#include "/s//#include "rules\/rules.h"\n&/' "$T/pkg/strbuf/strbuf.c"
  sed -i '0,/^#include "/s//#include "cli\/cli.h"\n&/' "$T/pkg/dt/dt.c"
  run "$NP_ROOT/scripts/check-layers" "$T"
  [ "$status" -eq 1 ]
  grep -q '^pkg/strbuf/strbuf.c:[0-9]*: strbuf (core) includes rules (node scan)' <<<"$output"
  grep -q '^pkg/dt/dt.c:[0-9]*: dt (node scan) includes cli (cli)' <<<"$output"
}

@test "a module missing from the table, or a wrong binaries column, fails" {
  mkdir "$T/pkg/newthing"
  printf '#include "log/log.h"\n' >"$T/pkg/newthing/newthing.c"
  sed -i 's/^| `pkg\/kvmap` | core | \(.*\) | nodeprobe, nodeprobe-devices |$/| `pkg\/kvmap` | core | \1 | nodeprobe-mirror |/' "$T/README.md"
  run "$NP_ROOT/scripts/check-layers" "$T"
  [ "$status" -eq 1 ]
  grep -qx "pkg/newthing: not in README's table of modules and layers" <<<"$output"
  grep -qx "README.md: pkg/kvmap is used by nodeprobe, nodeprobe-devices, the table says nodeprobe-mirror" <<<"$output"
}
