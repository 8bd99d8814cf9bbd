#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The build itself: make's dependency files, in a copy of the build files (Makefile, pkg/,
# cmd/, hooks/, scripts/) so the tree under test is never touched.
load helpers

setup() {
  W=$BATS_TEST_TMPDIR/tree
  mkdir -p "$W"
  cp -r "$NP_ROOT/Makefile" "$NP_ROOT/pkg" "$NP_ROOT/cmd" "$NP_ROOT/hooks" "$NP_ROOT/scripts" "$W/"
  cd "$W"
  find . -exec touch -d '2020-01-01' {} + # sources older than anything built here
}

# make test builds with an absolute BUILD (scripts/run-tests), make and make cross with a
# relative one: an object built one way must still be rebuilt the other way when a header it
# includes changes. Before the .d files named both, make saw the object as up to date and
# linked it, built against the old header (a stale struct rule crashed the ARM nodeprobe).
@test "an object built with an absolute BUILD is rebuilt by a relative one when a header changes" {
  obj=pkg/rules/rules_uses.o
  make --no-print-directory BUILD="$W/build" "$W/build/$obj" >/dev/null
  run make --no-print-directory -q BUILD=build "build/$obj"
  [ "$status" -eq 0 ] # up to date: nothing changed
  touch pkg/rules/rules_internal.h
  run make --no-print-directory -q BUILD=build "build/$obj"
  [ "$status" -eq 1 ] # the header is newer: rebuild
  # and the other way round
  make --no-print-directory BUILD=build "build/$obj" >/dev/null
  run make --no-print-directory -q BUILD="$W/build" "$W/build/$obj"
  [ "$status" -eq 0 ]
  touch pkg/feature/feature.h
  run make --no-print-directory -q BUILD="$W/build" "$W/build/$obj"
  [ "$status" -eq 1 ]
}
