#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Cross builds (make cross): every unit test, built for arm64 and armhf (32-bit), passes under
# Debian's qemu-user-static with the target's libraries (-L the sysroot; no binfmt_misc).
# The images' binaries are compared with amd64 in image.bats (test/e2e/qemu.sh).
load helpers

setup() {
  cd "$NP_ROOT"
  CROSS_ROOT=${NP_CROSS_ROOT:-/opt/nodeprobe-cross}
}

# cross_or_skip ARCH TRIPLET QEMU: skip when this machine cannot build or run ARCH.
cross_or_skip() {
  command -v "$2-gcc" >/dev/null || skip "no $2-gcc: crossbuild-essential-$1 not installed (scripts/install-deps as root)"
  [ -f "$CROSS_ROOT/$1/.nodeprobe-packages" ] || skip "no :$1 sysroot in $CROSS_ROOT (scripts/install-deps as root)"
  command -v "$3" >/dev/null || skip "no $3: qemu-user-static not installed (scripts/install-deps as root)"
}

# unit_under_qemu ARCH QEMU: make cross's unit tests of ARCH, each under QEMU; the tools they
# call (test/tools, e.g. dtb2fs) are this machine's ($BUILD). Every case passes or skips as natively.
unit_under_qemu() {
  local a=$1 q=$2 t out n=0 native
  # A release build whatever called us (make check passes SAN=1, which cross builds do not do).
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN -u CFLAGS -u LDFLAGS \
    make --no-print-directory -j2 BUILD="$BUILD" cross >"$BATS_TEST_TMPDIR/make.log" 2>&1 ||
    { tail -20 "$BATS_TEST_TMPDIR/make.log" >&2; return 1; }
  for t in "$BUILD/cross/$a"/test/unit/test_*; do
    case $t in *.o | *.d) continue ;; esac
    file -b "$t" | grep -q "ARM" || { echo "$t is not an ARM binary" >&2; return 1; }
    out=$(BUILD=$BUILD NP_EMULATED=1 "$q" -L "$CROSS_ROOT/$a" "$t" 2>&1) || { echo "--- $a $(basename "$t")" >&2; echo "$out" | grep -v '^PASS: ' >&2; return 1; }
    # As many cases run as on this machine (none lost to an early exit); a case for x86 only
    # (the cpuid instruction) skips under ARM.
    native=$("$BUILD/test/unit/$(basename "$t")" 2>&1 | grep -cE '^(PASS|SKIP): ' || true)
    [ "$(grep -cE '^(PASS|SKIP): ' <<<"$out")" -eq "$native" ] || { echo "$a $(basename "$t"): $(grep -cE '^(PASS|SKIP): ' <<<"$out") passed or skipped, $native natively" >&2; return 1; }
    n=$((n + 1))
  done
  [ "$n" -ge 10 ]
  echo "# $a: $n unit test binaries pass under $q" >&3
}

@test "unit tests, built for arm64, pass under qemu-aarch64-static" {
  cross_or_skip arm64 aarch64-linux-gnu qemu-aarch64-static
  unit_under_qemu arm64 qemu-aarch64-static
}

@test "unit tests, built for armhf (32-bit ARMv7), pass under qemu-arm-static" {
  cross_or_skip armhf arm-linux-gnueabihf qemu-arm-static
  unit_under_qemu armhf qemu-arm-static
}
