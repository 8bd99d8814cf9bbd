#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The ARM images under qemu-user print byte for byte what amd64 prints (test/e2e/qemu.sh;
# test/bats/image.bash).
load helpers
load image

@test "qemu-user: the arm64 and armhf images print byte for byte what amd64 prints (board fixtures, PCI machines, ../shared sweep)" {
  need_all_binaries
  cross_or_skip
  command -v qemu-aarch64-static >/dev/null && command -v qemu-arm-static >/dev/null ||
    skip "qemu-user-static not installed (scripts/install-deps as root)"
  run test/e2e/qemu.sh
  printf '%s\n' "$output" >"$BUILD/qemu-e2e.log"
  [ "$status" -eq 0 ] || { echo "$output" | tail -40 >&2; return 1; }
  [[ ${lines[-1]} == "qemu e2e: ok: "*" cases, arm64 armhf identical to amd64" ]]
  # The three boards, each as blob and live tree, were compared.
  for b in bcm2711-rpi-4-b tegra210-p3450-0000 am335x-boneblack; do
    grep -q "same: .*$b.dtb (blob) " <<<"$output"
    grep -q "same: .*$b.dtb (live tree) " <<<"$output"
  done
  if [ -d "$SHARED/fixtures" ]; then
    grep -q '^== the sweep of ' <<<"$output"
    echo "# swept $(grep -c 'same: shared ' <<<"$output") blobs and PCI machines of ../shared/fixtures under qemu" >&3
  fi
}
