# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the image suites (image.bats, image-multiarch.bats, image-cross.bats,
# image-qemu.bats, image-e2e.bats): one suite per costly part, so make test runs them side by
# side; scripts/image-rootfs builds one architecture's objects at a time (a lock per object
# directory), so they share those objects instead of tearing them.

setup() {
  cd "$NP_ROOT"
  W=$(mktemp -d)
}

teardown() {
  rm -rf "$W"
}

# All four binaries must exist for the image; no silent partial image.
need_all_binaries() {
  local missing=()
  [ -f cmd/nodeprobe/main.c ] || missing+=(nodeprobe)
  [ -f hooks/mirror/main.c ] || missing+=(nodeprobe-mirror)
  [ -f hooks/reload/main.c ] || missing+=(nodeprobe-reload)
  [ -f hooks/devices/main.c ] || missing+=(nodeprobe-devices)
  [ ${#missing[@]} -eq 0 ] || { echo "image needs all four binaries; not in this tree: ${missing[*]}" >&2; return 1; }
}

# cross_missing: what this machine lacks to build the ARM images, on stdout, and status 0; status
# 1 when nothing (scripts/install-deps, as root, sets them up: make test runs it, so CI always
# has them).
cross_missing() {
  local a t
  for a in arm64 armhf; do
    t=$([ "$a" = arm64 ] && echo aarch64-linux-gnu || echo arm-linux-gnueabihf)
    command -v "$t-g++" >/dev/null || { echo "no $t-g++: crossbuild-essential-$a not installed (scripts/install-deps as root)"; return 0; }
    [ -f "${NP_CROSS_ROOT:-/opt/nodeprobe-cross}/$a/.nodeprobe-packages" ] ||
      { echo "no :$a sysroot in ${NP_CROSS_ROOT:-/opt/nodeprobe-cross} (scripts/install-deps as root)"; return 0; }
  done
  return 1
}

# cross_or_skip: skip when this machine cannot build the ARM images.
cross_or_skip() {
  local why
  if why=$(cross_missing); then skip "$why"; fi
}

# manifest_of LAYOUT TAG: the image manifest (or index) file tagged TAG in an OCI layout.
manifest_of() {
  echo "$1/blobs/sha256/$(jq -r --arg t "$2" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest[7:]' "$1/index.json")"
}
