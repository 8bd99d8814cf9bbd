#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Cross build for arm64: every unit test passes under qemu-aarch64-static (test/bats/cross.bash).
load helpers
load cross

setup() { cross_setup; }

@test "unit tests, built for arm64, pass under qemu-aarch64-static" {
  cross_or_skip arm64 aarch64-linux-gnu qemu-aarch64-static
  unit_under_qemu arm64 qemu-aarch64-static
}
