#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 17: nothing nodeprobe-mirror manages is lost or taken over when configure or cleanup is
# killed (kill -9 at random moments) or the disk is full (a small tmpfs). The tree the user had is
# compared as a manifest of paths, kinds, modes, link targets and contents.
load helpers

setup() {
  BIN="$BUILD/nodeprobe-mirror"
  T=$(mktemp -d "$BATS_TMPDIR/np-crash.XXXXXX")
  C="$T/certs.d"
  unset CONTAINERD_REGISTRY_CONFIG_PATH MIRRORED_REGISTRIES MIRROR_TARGETS RESOLVE_TAGS \
    PREPEND_EXISTING MIRROR_DIAL_TIMEOUT MIRROR_BASIC_AUTH_DIR NODEPROBE_MIRROR_CONFIG NODE_IP
  export MIRROR_BASIC_AUTH_DIR="$T/no-secret"
  # registry.k8s.io is not in the user tree: its directory is ours alone
  ARGS=(--config-path "$C" -r docker.io -r ghcr.io -r quay.io -r registry.k8s.io -m http://10.0.0.5:30020)
}

teardown() {
  rm -rf "$T"
}

# Paths, kinds, modes, link targets, then the contents of every file under $1.
manifest() {
  (cd "$1" && find . -printf '%p %y %m %l\n' | sort &&
    find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# The same in one hash (tar: names, kinds, modes, link targets, contents; times and owners
# fixed), cheap enough to take after each of 200 kills.
digest() {
  tar -C "$1" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - . | sha256sum
}

# A user's config path: n registry directories (hosts.toml, some with certificates, a key, a
# nested directory), the three we write among them with files beside their hosts.toml, and a
# loose file.
user_tree() {
  local n=$1 i d
  mkdir -p "$C"
  for ((i = 0; i < n; i++)); do
    d="$C/reg$i.example:5000"
    mkdir "$d"
    printf "server = 'https://reg%d.example:5000'\n" "$i" >"$d/hosts.toml"
    if ((i % 3 == 0)); then
      printf 'CA %d' "$i" >"$d/ca.crt"
      printf 'KEY %d' "$i" >"$d/client.key"
      chmod 600 "$d/client.key"
    fi
    ((i % 7 == 0)) && mkdir -m 700 "$d/sub" && printf 'x' >"$d/sub/cert.pem"
  done
  for d in docker.io ghcr.io quay.io; do
    mkdir "$C/$d"
    printf "server = 'https://%s'\n[host.'https://m.corp']\nca = 'ca.crt'\n" "$d" >"$C/$d/hosts.toml"
    printf 'CA %s' "$d" >"$C/$d/ca.crt"
    printf 'CERT' >"$C/$d/client.cert"
    printf 'KEY' >"$C/$d/client.key"
    chmod 600 "$C/$d/client.key"
  done
  chmod 700 "$C/quay.io"
  printf 'loose' >"$C/loose-file"
}

@test "a temp file named like an older version's in a directory we write is kept; an empty directory a killed configure left: removed, never backed up" {
  user_tree 3
  # a file with our temp name in a directory we do not write is the user's: it is kept
  printf 'mine' >"$C/reg1.example:5000/.hosts.toml.Zz99Yy"
  touch -d '-1 hour' "$C/reg1.example:5000/.hosts.toml.Zz99Yy"
  orig=$(manifest "$C")
  "$BIN" configure "${ARGS[@]}"
  [ -f "$C/_backup/reg1.example:5000/.hosts.toml.Zz99Yy" ]
  # what a configure of an older version killed in fs_publish left in a directory of ours (or a
  # user's file of that name: kept, never removed), and a killed staging
  printf 'half' >"$C/docker.io/.hosts.toml.Ab12Cd"
  touch -d '-2 minutes' "$C/docker.io/.hosts.toml.Ab12Cd"
  printf 'half' >"$C/ghcr.io/.hosts.toml.Ef34Gh"
  mkdir -p "$C/.nodeprobe-stage/ghcr.io"
  printf 'half' >"$C/.nodeprobe-stage/ghcr.io/hosts.toml"
  run "$BIN" configure "${ARGS[@]}"
  [ "$status" -eq 0 ]
  [ -f "$C/docker.io/.hosts.toml.Ab12Cd" ] && [ ! -e "$C/.nodeprobe-stage" ]
  rm "$C/docker.io/.hosts.toml.Ab12Cd"
  [ -f "$C/ghcr.io/.hosts.toml.Ef34Gh" ] && rm "$C/ghcr.io/.hosts.toml.Ef34Gh"
  [ -f "$C/_backup/reg1.example:5000/.hosts.toml.Zz99Yy" ]
  ! find "$C/_backup" -name '.nodeprobe-*' | grep . || false
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  [ "$(manifest "$C")" = "$orig" ]
  # a first configure killed right after staging: the stage only, no _backup yet
  mkdir -p "$C/.nodeprobe-stage/docker.io"
  printf 'half' >"$C/.nodeprobe-stage/docker.io/hosts.toml"
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  [ "$(manifest "$C")" = "$orig" ]
}

@test "kill -9 torture: 200 kills of configure and cleanup, then configure and cleanup restore the tree byte for byte" {
  user_tree 150
  orig=$(manifest "$C")
  # how long one run takes, to kill at random moments within it
  t0=$(date +%s%N)
  "$BIN" configure "${ARGS[@]}" --prepend-existing
  t1=$(date +%s%N)
  "$BIN" cleanup --config-path "$C"
  t2=$(date +%s%N)
  [ "$(manifest "$C")" = "$orig" ]
  want=$(digest "$C")
  span=$(((t2 - t0) / 2000))   # microseconds: the mean of the two runs
  ((span > 100)) || span=100
  echo "# configure $(((t1 - t0) / 1000000)) ms, cleanup $(((t2 - t1) / 1000000)) ms" >&3
  start=$(date +%s)
  for ((i = 0; i < 200; i++)); do
    extra=()
    ((RANDOM % 2)) && extra=(--prepend-existing)
    if ((RANDOM % 2)); then
      "$BIN" configure "${ARGS[@]}" "${extra[@]}" 2>/dev/null &
    else
      "$BIN" configure "${ARGS[@]}" "${extra[@]}" 2>/dev/null
      "$BIN" cleanup --config-path "$C" 2>/dev/null &
    fi
    pid=$!
    sleep "$(printf '0.%06d' $(((RANDOM * 32768 + RANDOM) % span)))"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    "$BIN" configure "${ARGS[@]}" "${extra[@]}" || { echo "kill $i: configure failed"; false; }
    "$BIN" cleanup --config-path "$C" || { echo "kill $i: cleanup failed"; false; }
    [ "$(digest "$C")" = "$want" ] ||
      { echo "kill $i:"; diff <(echo "$orig") <(manifest "$C"); false; }
  done
  echo "# 200 kills in $(($(date +%s) - start)) s" >&3
}

# The ENOSPC part runs in its own mount namespace on a small tmpfs (test/bats/mirror/enospc.sh).
@test "a full disk: configure fails with ENOSPC and changes nothing; watch names ENOSPC and repairs later" {
  [ "$(id -u)" -eq 0 ] || skip "mounting a tmpfs needs root"
  unshare -m true 2>/dev/null || skip "unshare -m refused here (no CAP_SYS_ADMIN): cannot mount a small tmpfs"
  run unshare -m --propagation private bash "$BATS_TEST_DIRNAME/mirror/enospc.sh" "$BIN" "$T"
  echo "$output"
  [ "$status" -ne 77 ] || skip "mount -t tmpfs refused in the new namespace"
  [ "$status" -eq 0 ]
  grep -q '^levels that failed: [1-9]' <<<"$output"
  grep -q "^inode levels that failed: [1-9]" <<<"$output"
}
