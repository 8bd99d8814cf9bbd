#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Cross build for armhf (32-bit ARMv7): every unit test passes under qemu-arm-static
# (test/bats/cross.bash).
load helpers
load cross

setup() { cross_setup; }

@test "unit tests, built for armhf (32-bit ARMv7), pass under qemu-arm-static" {
  cross_or_skip armhf arm-linux-gnueabihf qemu-arm-static
  unit_under_qemu armhf qemu-arm-static
}
