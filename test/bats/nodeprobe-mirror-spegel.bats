#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# With default flags, configure writes exactly what Spegel's own tests expect: every case of
# TestMirrorConfiguration and TestExistingHosts (test/bats/mirror/spegel/README.md).
load helpers

S="$BATS_TEST_DIRNAME/mirror/spegel"

setup() {
  BIN="$BUILD/nodeprobe-mirror"
  T=$(mktemp -d "$BATS_TMPDIR/np-spegel.XXXXXX")
  unset CONTAINERD_REGISTRY_CONFIG_PATH MIRRORED_REGISTRIES MIRROR_TARGETS RESOLVE_TAGS \
    PREPEND_EXISTING MIRROR_DIAL_TIMEOUT MIRROR_BASIC_AUTH_DIR NODEPROBE_MIRROR_CONFIG NODE_IP
}

teardown() {
  rm -rf "$T"
}

# same_files A B: the same regular files (Spegel's test walks files only) with the same bytes.
# One difference by design (issue 17): the user's files beside hosts.toml in a registry
# directory stay in place, so _backup holds only what moved; every file of B's _backup must be
# in A's with the same bytes, and the files outside _backup are exactly A's.
same_files() {
  diff -u <(cd "$1" && find . -type f ! -path './_backup/*' | sort) \
    <(cd "$2" && find . \( -type f -o -type l \) ! -path './_backup/*' | sort) &&
    (cd "$2" && find ./_backup \( -type f -o -type l \) -exec cmp {} "$1/{}" \; 2>&1) | { ! grep . ; } &&
    (cd "$1" && find . -type f ! -path './_backup/*' -exec cmp {} "$2/{}" \; 2>&1) | { ! grep . ; }
}

# run_case NAME: configure as the case says; the tree must equal expected/ (files and bytes).
run_case() {
  local dir="$S/$1" c="$T/$1/etc/containerd/certs.d" args=()
  [ -d "$dir/expected" ] || { echo "no case $1"; return 1; }
  [ -e "$dir/create-config-path" ] && mkdir -p "$c"
  [ -d "$dir/existing" ] && { mkdir -p "$c"; cp -a "$dir/existing/." "$c/"; }
  while IFS= read -r a; do args+=("${a//@CASE@/$dir}"); done <"$dir/args"
  # no Secret at Spegel's path unless the case has one
  [[ " ${args[*]} " == *--basic-auth-dir* ]] || args+=(--basic-auth-dir "$T/no-secret")
  "$BIN" configure --config-path "$c" "${args[@]}"
  [ -d "$c/_backup" ]
  same_files "$dir/expected" "$c"
}

@test "every Spegel case: the files and bytes of Spegel's expected output" {
  n=0
  for d in "$S"/*/; do
    name=$(basename "$d")
    run run_case "$name"
    [ "$status" -eq 0 ] || { echo "case $name:"; echo "$output"; false; }
    n=$((n + 1))
  done
  [ "$n" -eq 12 ]
}

@test "the cases one by one: multiple targets, _default, prepend, basic auth, existing hosts" {
  for name in multiple-mirrors-targets empty-mirrored-registries-defaults-to-_default \
    default-is-explicitly-set resolve-tags-disabled prepend-to-existing-configuration \
    with-basic-authentication existing-hosts; do
    run_case "$name"
  done
}

@test "Spegel's own command line, as its chart renders it, writes the same bytes" {
  dir="$S/resolve-tags-disabled"
  c="$T/c"
  run "$BIN" configuration --log-level=INFO --containerd-registry-config-path="$c" \
    --mirrored-registries https://docker.io http://foo.bar:5000 \
    --mirror-targets http://127.0.0.1:5000 --resolve-tags=false --prepend-existing=false \
    --basic-auth-dir "$T/no-secret"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  same_files "$dir/expected" "$c"
  grep -q "wrote $c/docker.io/hosts.toml" <<<"$output"   # INFO is -v
  # a bare --resolve-tags is true (go-arg's bool flag)
  run "$BIN" configure --containerd-registry-config-path "$T/d" --mirror-targets http://127.0.0.1:5000 \
    --resolve-tags --mirrored-registries https://docker.io --basic-auth-dir ''
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  diff -u "$S/config-path-directory-does-exist/expected/docker.io/hosts.toml" "$T/d/docker.io/hosts.toml"
  run "$BIN" configure --config-path "$T/e" -m http://127.0.0.1:5000 --log-level=LOUD
  [ "$status" -eq 2 ]
}

@test "--dial-timeout 0 leaves the line out (containerd before 2.0.7 ignores it anyway)" {
  run "$BIN" configure --config-path "$T/c" -r http://foo.bar:5000 -m http://127.0.0.1:5000 --dial-timeout 0
  [ "$status" -eq 0 ]
  [ "$(cat "$T/c/foo.bar:5000/hosts.toml")" = "server = 'http://foo.bar:5000'

[host.'http://127.0.0.1:5000']
capabilities = ['pull', 'resolve']" ]
  MIRROR_DIAL_TIMEOUT=0s run "$BIN" configure --config-path "$T/c" -r http://foo.bar:5000 -m http://127.0.0.1:5000
  [ "$status" -eq 0 ]
  ! grep -q dial_timeout "$T/c/foo.bar:5000/hosts.toml" || false
}

@test "Spegel's basic-auth Secret path is read by default (a parameter for tests)" {
  mkdir -p "$T/auth"
  printf hello >"$T/auth/username"
  printf world >"$T/auth/password"
  MIRROR_BASIC_AUTH_DIR="$T/auth" run "$BIN" configure --config-path "$T/c" -r http://foo.bar:5000 \
    -m http://127.0.0.1:5000 -m http://127.0.0.1:5001
  [ "$status" -eq 0 ]
  diff -u "$S/with-basic-authentication/expected/foo.bar:5000/hosts.toml" "$T/c/foo.bar:5000/hosts.toml"
  run "$BIN" --help
  grep -q -- '--basic-auth-dir DIR .*(/etc/secrets/basic-auth)' <<<"$output"
}

@test "an IPv6 NODE_IP is bracketed in the URL; the default target is the node port 30020" {
  NODE_IP=fd00::5 run "$BIN" configure --config-path "$T/c" -r docker.io --basic-auth-dir ''
  [ "$status" -eq 0 ]
  grep -q "containerd 1.x cannot read a \[host\] key with ']' (IPv6)" <<<"$output"
  [ "$(cat "$T/c/docker.io/hosts.toml")" = "server = 'https://registry-1.docker.io'

[host.'http://[fd00::5]:30020']
capabilities = ['pull', 'resolve']
dial_timeout = '200ms'" ]
  # check: containerd 1.6 cannot read it (an error), 2.x can
  run "$BIN" check --config-path "$T/c" --containerd-version 1.6.20
  [ "$status" -eq 1 ]
  grep -q "containerd 1.x cannot parse a table header whose key contains ']'" <<<"$output"
  run "$BIN" check --config-path "$T/c" --containerd-version 2.1.0
  [ "$status" -eq 0 ]
  NODE_IP=10.0.0.5 run "$BIN" configure --config-path "$T/c" -r docker.io --basic-auth-dir ''
  [ "$status" -eq 0 ]
  grep -qx "\[host.'http://10.0.0.5:30020'\]" "$T/c/docker.io/hosts.toml"
}
