#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The build itself: make's dependency files, in a copy of the build files (Makefile, pkg/,
# cmd/, hooks/, scripts/) so the tree under test is never touched.
load helpers

# built OBJ...: date the objects 2021, after the 2020 sources but surely before a header touched
# now (file times are coarse: a header touched in the same tick as the build would not count
# as newer).
built() {
  touch -d '2021-01-01' "$@"
}

# sources: date the copied sources 2020, older than anything built here.
sources() {
  find Makefile pkg cmd hooks scripts -exec touch -d '2020-01-01' {} +
}

setup() {
  W=$BATS_TEST_TMPDIR/tree
  mkdir -p "$W"
  cp -r "$NP_ROOT/Makefile" "$NP_ROOT/pkg" "$NP_ROOT/cmd" "$NP_ROOT/hooks" "$NP_ROOT/scripts" "$W/"
  cd "$W"
  sources
}

# make test builds with an absolute BUILD (scripts/run-tests), make and make cross with a
# relative one: an object built one way must still be rebuilt the other way when a header it
# includes changes. Before the .d files named both, make saw the object as up to date and
# linked it, built against the old header (a stale struct rule crashed the ARM nodeprobe).
@test "an object built with an absolute BUILD is rebuilt by a relative one when a header changes" {
  obj=pkg/rules/rules_uses.o
  make --no-print-directory BUILD="$W/build" "$W/build/$obj" >/dev/null
  built "build/$obj"
  run make --no-print-directory -q BUILD=build "build/$obj"
  [ "$status" -eq 0 ] # up to date: nothing changed
  touch pkg/rules/rules_internal.h
  run make --no-print-directory -q BUILD=build "build/$obj"
  [ "$status" -eq 1 ] # the header is newer: rebuild
  # and the other way round
  sources
  make --no-print-directory BUILD=build "build/$obj" >/dev/null
  built "build/$obj"
  run make --no-print-directory -q BUILD="$W/build" "$W/build/$obj"
  [ "$status" -eq 0 ]
  touch pkg/feature/feature.h
  run make --no-print-directory -q BUILD="$W/build" "$W/build/$obj"
  [ "$status" -eq 1 ]
}

# BUILD as a user may spell it: outside the tree (../out) or with a trailing slash. The .d must
# name the object as make does, or a header change leaves it stale.
@test "objects under BUILD=../out and BUILD=build/ are rebuilt when a header changes" {
  obj=pkg/rules/rules_uses.o
  for b in ../out build/; do
    sources
    make --no-print-directory BUILD="$b" "$b/$obj" >/dev/null
    built "$b/$obj"
    run make --no-print-directory -q BUILD="$b" "$b/$obj"
    [ "$status" -eq 0 ]
    touch pkg/rules/rules_internal.h
    run make --no-print-directory -q BUILD="$b" "$b/$obj"
    echo "BUILD=$b: make -q exit $status after the header changed" >&2
    [ "$status" -eq 1 ]
  done
}

# scripts/run-tests builds with BUILD=$(pwd -P)/build: through a symlinked tree that is the
# physical path, as make's CURDIR, so a later plain make (relative BUILD) shares the .d files.
@test "through a symlinked tree, an absolute physical BUILD and a relative one share .d files" {
  ln -s "$W" "$BATS_TEST_TMPDIR/link"
  cd "$BATS_TEST_TMPDIR/link"
  obj=pkg/rules/rules_uses.o
  make --no-print-directory BUILD="$(pwd -P)/build" "$(pwd -P)/build/$obj" >/dev/null
  built "build/$obj"
  touch pkg/rules/rules_internal.h
  run make --no-print-directory -q BUILD=build "build/$obj"
  echo "make -q exit $status: $output" >&2
  [ "$status" -eq 1 ]
}

# make cannot name a target whose path holds a space, but such a tree must still build (the
# extra names are left out there).
@test "a tree whose path holds a space still builds" {
  mkdir "$BATS_TEST_TMPDIR/sp ace"
  cp -r "$W" "$BATS_TEST_TMPDIR/sp ace/tree"
  cd "$BATS_TEST_TMPDIR/sp ace/tree"
  run make --no-print-directory BUILD=build build/pkg/rules/rules_uses.o
  echo "$output" >&2
  [ "$status" -eq 0 ]
  [ -f build/pkg/rules/rules_uses.o ]
}
