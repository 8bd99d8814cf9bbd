# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by cross-arm64.bats and cross-armhf.bats: every unit test, built for one ARM
# architecture (make cross CROSS_ARCHS=ARCH, into $BUILD/cross/ARCH), passes under Debian's
# qemu-user-static with the target's libraries (-L the sysroot; no binfmt_misc). One suite per
# architecture, so make test runs them side by side and builds each arch once. The images'
# binaries are compared with amd64 in image-qemu.bats (test/e2e/qemu.sh).

cross_setup() {
  cd "$NP_ROOT"
  CROSS_ROOT=${NP_CROSS_ROOT:-/opt/nodeprobe-cross}
}

# cross_or_skip ARCH TRIPLET QEMU: skip when this machine cannot build or run ARCH.
cross_or_skip() {
  command -v "$2-gcc" >/dev/null || skip "no $2-gcc: crossbuild-essential-$1 not installed (scripts/install-deps as root)"
  [ -f "$CROSS_ROOT/$1/.nodeprobe-packages" ] || skip "no :$1 sysroot in $CROSS_ROOT (scripts/install-deps as root)"
  command -v "$3" >/dev/null || skip "no $3: qemu-user-static not installed (scripts/install-deps as root)"
}

# cross_build ARCH: make cross for ARCH alone, its unit tests only (the binaries are
# image-cross.bats's); a release build whatever called us (make check passes SAN=1, which cross
# builds do not do).
cross_build() {
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN -u CFLAGS -u LDFLAGS \
    make --no-print-directory -j2 BUILD="$BUILD" CROSS_ARCHS="$1" CROSS_WHAT=units cross >"$BATS_TEST_TMPDIR/make.log" 2>&1 ||
    { tail -20 "$BATS_TEST_TMPDIR/make.log" >&2; return 1; }
}

# unit_under_qemu ARCH QEMU: make cross's unit tests of ARCH, each under QEMU; the tools they
# call (test/tools, e.g. dtb2fs) are this machine's ($BUILD). Every case this machine's binary
# lists (--list) runs and passes or skips, by name: none lost to an early exit or a missing
# registration; a case for x86 only (the cpuid instruction) skips under ARM.
unit_under_qemu() {
  local a=$1 q=$2 t name out n=0 ran
  cross_build "$a" || return 1
  for t in "$BUILD/cross/$a"/test/unit/test_*; do
    case $t in *.o | *.d) continue ;; esac
    name=$(basename "$t")
    file -b "$t" | grep -q "ARM" || { echo "$t is not an ARM binary" >&2; return 1; }
    out=$(BUILD=$BUILD NP_EMULATED=1 "$q" -L "$CROSS_ROOT/$a" "$t" 2>&1) || { echo "--- $a $name" >&2; echo "$out" | grep -v '^PASS: ' >&2; return 1; }
    ran=$(sed -n 's/^\(PASS\|SKIP\): //p' <<<"$out")
    diff <("$BUILD/test/unit/$name" --list) <(printf '%s\n' "$ran") >&2 ||
      { echo "$a $name: the cases that passed or skipped under $q (+) are not the native --list (-)" >&2; return 1; }
    n=$((n + 1))
  done
  [ "$n" -ge 10 ]
  echo "# $a: $n unit test binaries pass under $q" >&3
}
