#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The image end to end: pushed to a registry, pulled by containerd, run by runc
# (test/e2e/image.sh). Needs root, as CI has (test/bats/image.bash).
load helpers
load image

@test "image e2e: pushed to docker-registry, pulled by containerd, run by runc as 65534" {
  need_all_binaries
  [ "$(id -u)" -eq 0 ] || skip "needs root (network namespace, containerd)"
  run test/e2e/image.sh
  printf '%s\n' "$output" >"$BUILD/image-e2e.log"
  [ "$status" -eq 0 ] || { echo "$output" | tail -40 >&2; return 1; }
  [ "${lines[-1]}" = "image e2e: ok" ]
  # Processes: nothing of this run left running (another run's e2e may be going on beside it).
  dir=$(sed -n 's/^e2e dir: //p' <<<"$output")
  [[ $dir == /tmp/np-image-e2e.* ]]
  run pgrep -f "$dir"
  [ "$status" -eq 1 ]
}
