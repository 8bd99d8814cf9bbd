#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The probing findings of issue 12, each fixed and held here: duplicate targets, a _backup that
# is a symbolic link or not ours, an empty or partial _backup, durations out of Go's range,
# files too large; and issue 17's symlinked registry directory (refused, as documented).
load helpers

setup() {
  BIN="$BUILD/nodeprobe-mirror"
  T=$(mktemp -d "$BATS_TMPDIR/np-safety.XXXXXX")
  C="$T/certs.d"
  unset CONTAINERD_REGISTRY_CONFIG_PATH MIRRORED_REGISTRIES MIRROR_TARGETS RESOLVE_TAGS \
    PREPEND_EXISTING MIRROR_DIAL_TIMEOUT MIRROR_BASIC_AUTH_DIR NODEPROBE_MIRROR_CONFIG NODE_IP
  export MIRROR_BASIC_AUTH_DIR="$T/no-secret"
}

teardown() {
  rm -rf "$T"
}

tree() {
  (cd "$1" && find . -printf '%p %y %i %m %s\n' | sort && find . -type f -exec sha256sum {} + | sort)
}

@test "the same target twice is refused before anything is written" {
  run "$BIN" configure --config-path "$C" -r docker.io -m http://a:1 -m http://a:1
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: mirror target 'http://a:1' given twice: containerd would refuse the file (duplicate [host] table)" ]
  [ ! -e "$C" ]
  # also after expansion, and whatever the case of the scheme and host
  NODE_IP=10.0.0.5 run "$BIN" configure --config-path "$C" -m 'http://${NODE_IP}:30020' -m HTTP://10.0.0.5:30020
  [ "$status" -eq 1 ]
  [ ! -e "$C" ]
}

@test "a _backup symlink to a directory outside the config path is refused, nothing moved" {
  mkdir -p "$C/docker.io" "$T/outside/secret-dir"
  printf 'mine' >"$C/docker.io/hosts.toml"
  printf 'keep out' >"$T/outside/secret-dir/file"
  ln -s "$T/outside" "$C/_backup"
  before=$(tree "$T")
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: $C/_backup is a symbolic link (to $T/outside): refused, it could lead out of the config path; nothing was moved" ]
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:30020
  [ "$status" -eq 1 ]
  grep -q "_backup is a symbolic link" <<<"$output"
  [ "$(tree "$T")" = "$before" ]
  # the same for our other two directories
  rm "$C/_backup"
  ln -s "$T/outside" "$C/.nodeprobe-restore"
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 1 ]
  [ -e "$T/outside/secret-dir/file" ] && [ ! -e "$C/secret-dir" ]
}

@test "a _backup that is a file or owned by someone else is refused" {
  mkdir -p "$C"
  printf x >"$C/_backup"
  run "$BIN" configure --config-path "$C" -m http://10.0.0.5:30020
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: $C/_backup is not a directory: refused, nothing was moved" ]
  [ "$(id -u)" -eq 0 ] || skip "chown needs root"
  rm "$C/_backup"
  mkdir "$C/_backup"
  chown 65534 "$C/_backup"
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: $C/_backup is owned by uid 65534, not by us (uid 0): refused, nothing was moved" ]
}

@test "a registry directory in _backup that is a symlink is never followed (prepend)" {
  mkdir -p "$C/_backup" "$T/outside"
  printf "[host.'https://evil']\ncapabilities = ['pull']\n" >"$T/outside/hosts.toml"
  ln -s "$T/outside" "$C/_backup/docker.io"
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:30020 --prepend-existing
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: $C/_backup/docker.io is not a real directory: refused, never followed, nothing was changed; replace it with a directory and run configure again" ]
  [ ! -e "$C/docker.io" ]
}

@test "an empty _backup never costs the user's hosts.toml" {
  mkdir -p "$C/_backup" "$C/docker.io" "$C/quay.io"
  printf "server = 'https://mirror.corp'\n" >"$C/docker.io/hosts.toml"
  printf "server = 'https://quay.corp'\n" >"$C/quay.io/hosts.toml"
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:30020
  [ "$status" -eq 0 ]
  [ "$(cat "$C/_backup/docker.io/hosts.toml")" = "server = 'https://mirror.corp'" ]
  [ "$(cat "$C/_backup/quay.io/hosts.toml")" = "server = 'https://quay.corp'" ]
  grep -q "$C/docker.io/hosts.toml was not in _backup: moved there, not deleted" <<<"$output"
  grep -qx "\[host.'http://10.0.0.5:30020'\]" "$C/docker.io/hosts.toml"
  # and cleanup gives both back
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  [ "$(cat "$C/docker.io/hosts.toml")" = "server = 'https://mirror.corp'" ]
  [ "$(cat "$C/quay.io/hosts.toml")" = "server = 'https://quay.corp'" ]
  [ ! -e "$C/_backup" ]
}

@test "a partial _backup (an older Spegel killed while backing up) is completed, not trusted" {
  mkdir -p "$C/_backup/docker.io" "$C/ghcr.io"
  printf 'a' >"$C/_backup/docker.io/hosts.toml"   # moved before the kill
  printf 'b' >"$C/ghcr.io/hosts.toml"             # not moved yet
  printf 'c' >"$C/ca.crt"
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:30020
  [ "$status" -eq 0 ]
  [ "$(cat "$C/_backup/ghcr.io/hosts.toml")" = b ]
  [ "$(cat "$C/_backup/ca.crt")" = c ]
  [ "$(ls -A "$C")" = "$(printf '_backup\ndocker.io')" ]
  # what configure wrote is still replaced without a copy: a second run with other
  # registries removes docker.io (ours) and keeps _backup as it is
  before=$(tree "$C/_backup")
  run "$BIN" configure --config-path "$C" -r quay.io -m http://10.0.0.5:30020
  [ "$status" -eq 0 ]
  [ "$(ls -A "$C")" = "$(printf '_backup\nquay.io')" ]
  [ "$(tree "$C/_backup")" = "$before" ]
}

@test "durations outside Go's range are refused" {
  run "$BIN" configure --config-path "$C" -m http://10.0.0.5:30020 --dial-timeout 99999999999999999999h
  [ "$status" -eq 2 ]
  [ "${lines[0]}" = "nodeprobe-mirror: error: --dial-timeout: '99999999999999999999h' is out of range: a Go duration is at most 2562047h47m16.854775807s" ]
  run "$BIN" configure --config-path "$C" -m http://10.0.0.5:30020 --dial-timeout 2562048h
  [ "$status" -eq 2 ]
  MIRROR_DIAL_TIMEOUT=9223372036854775808ns run "$BIN" configure --config-path "$C" -m http://10.0.0.5:30020
  [ "$status" -eq 1 ]
  grep -q 'is out of range' <<<"$output"
  [ ! -e "$C" ]
  # the largest one is fine
  run "$BIN" configure --config-path "$C" -m http://10.0.0.5:30020 --dial-timeout 2562047h47m16.854775807s
  [ "$status" -eq 0 ]
}

@test "a file over the cap is 'file too large', never 'Argument list too long'" {
  mkdir -p "$C/docker.io"
  { printf "[host.'http://a:1']\ncapabilities = ['pull']\n"; head -c 1100000 /dev/zero | tr '\0' '#'; } >"$C/docker.io/hosts.toml"
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:30020 --prepend-existing
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: $C/docker.io/hosts.toml: file too large (over 1024 KiB)" ]
  run "$BIN" check --config-path "$C"
  [ "$status" -eq 1 ]
  [ "$output" = "$C/docker.io/hosts.toml: error: file too large (over 1024 KiB): not checked" ]
  head -c 5000000 /dev/zero >"$T/big.toml"
  run "$BIN" check --config-path "$C" --containerd-config "$T/big.toml"
  grep -q "$T/big.toml: error: file too large (over 4096 KiB)" <<<"$output"
  ! grep -q 'Argument list too long' <<<"$output" || false
}

@test "a registry directory that is a symbolic link is refused, as the man page says, nothing changed" {
  # issue 17 finding 10: the man page said "replaced"; configure refuses it, before the first
  # backup and after it, and says what to do
  mkdir -p "$C" "$T/outside"
  printf "server = 'https://evil'" >"$T/outside/hosts.toml"
  ln -s "$T/outside" "$C/docker.io"
  before=$(tree "$T")
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:30020
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: $C/docker.io is not a real directory: refused, never followed, nothing was changed; replace it with a directory and run configure again" ]
  [ "$(tree "$T")" = "$before" ]
  rm "$C/docker.io"
  "$BIN" configure --config-path "$C" -r quay.io -m http://10.0.0.5:30020
  ln -s "$T/outside" "$C/docker.io"
  before=$(tree "$T")
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:30020
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: $C/docker.io is a symbolic link (to $T/outside), not a directory: refused, never followed, nothing was changed; replace it with a real directory and run configure again" ]
  [ "$(tree "$T")" = "$before" ]
  grep -q 'symbolic link or a file stops configure before any change' "$BATS_TEST_DIRNAME/../../hooks/mirror/nodeprobe-mirror.8"
}
