#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-mirror command line: exact files, idempotence, backup/cleanup, rejections, check.
load helpers

D="$BATS_TEST_DIRNAME/mirror"

setup() {
  BIN="$BUILD/nodeprobe-mirror"
  T=$(mktemp -d "$BATS_TMPDIR/np-mirror.XXXXXX")
  C="$T/certs.d"
  unset CONTAINERD_REGISTRY_CONFIG_PATH MIRRORED_REGISTRIES MIRROR_TARGETS RESOLVE_TAGS \
    PREPEND_EXISTING MIRROR_DIAL_TIMEOUT MIRROR_BASIC_AUTH_DIR NODEPROBE_MIRROR_CONFIG
}

teardown() {
  rm -rf "$T"
}

# Path, inode, mode, size, mtime and ctime of everything under $1 (ctime moves on any write).
snapshot() {
  (cd "$1" && find . -printf '%p %i %m %s %T@ %C@\n' | sort)
}

# Path, mode and content hash of everything under $1.
contents() {
  (cd "$1" && find . -printf '%p %y %m\n' | sort && find . -type f -exec sha256sum {} + | sort)
}

@test "--help and the man page list the same options" {
  check_help_matches_man "$BIN" "$BATS_TEST_DIRNAME/../../hooks/mirror/nodeprobe-mirror.8"
}

@test "configure writes Spegel's bytes: several targets, dial_timeout" {
  run "$BIN" configure --config-path "$C" -r http://foo.bar:5000 --dial-timeout 200ms \
    -m http://127.0.0.1:5000 -m http://127.0.0.2:5000 -m http://127.0.0.1:5001
  [ "$status" -eq 0 ]
  diff -u "$D/expected/multi-targets.toml" "$C/foo.bar:5000/hosts.toml"
  [ "$(stat -c %a "$C/foo.bar:5000/hosts.toml")" = 644 ]
  [ "$(stat -c %a "$C/foo.bar:5000")" = 755 ]
  [ -d "$C/_backup" ]
}

@test "configure: docker.io, host:port and _default, NODE_IP expanded, resolve-tags=false" {
  NODE_IP=10.0.0.5 run "$BIN" configure --config-path "$C" -r https://docker.io \
    -m 'http://${NODE_IP}:29999' --resolve-tags=false
  [ "$status" -eq 0 ]
  diff -u "$D/expected/docker.io-no-resolve.toml" "$C/docker.io/hosts.toml"
  NODE_IP=10.0.0.5 run "$BIN" configure --config-path "$C" -r registry.local:5000 -r '*' \
    -m 'http://${NODE_IP}:29999'
  [ "$status" -eq 0 ]
  diff -u "$D/expected/hostport.toml" "$C/registry.local:5000/hosts.toml"
  diff -u "$D/expected/_default.toml" "$C/_default/hosts.toml"
  # the docker.io directory of the previous run is gone, as with Spegel
  [ ! -e "$C/docker.io" ]
  run "$BIN" configure --config-path "$T/other" -m http://10.0.0.5:29999
  [ "$status" -eq 0 ]
  diff -u "$D/expected/_default.toml" "$T/other/_default/hosts.toml"
}

@test "configure: unset NODE_IP is an error and nothing is written" {
  run "$BIN" configure --config-path "$C" -r docker.io -m 'http://${NODE_IP}:29999'
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: mirror target 'http://\${NODE_IP}:29999': environment variable NODE_IP is not set" ]
  [ ! -e "$C" ]
}

@test "configure: a second identical run writes nothing (inodes, mtimes, ctimes unchanged)" {
  args=(configure --config-path "$C" -r docker.io -r ghcr.io -r registry.local:5000 -m http://10.0.0.5:29999)
  "$BIN" "${args[@]}"
  before=$(snapshot "$C")
  sleep 0.05
  run "$BIN" -v "${args[@]}"
  [ "$status" -eq 0 ]
  [ -z "$output" ]   # -v reports every write; there is none
  [ "$(snapshot "$C")" = "$before" ]
  # changing one registry's file rewrites that file only; a file of the user's beside it stays
  # (issue 17: it used to be deleted)
  echo 'junk' >"$C/ghcr.io/stray.crt"
  run "$BIN" -v configure --config-path "$C" -r docker.io -r ghcr.io -r registry.local:5000 \
    -m http://10.0.0.5:29999 --resolve-tags false
  [ "$status" -eq 0 ]
  [ "$(cat "$C/ghcr.io/stray.crt")" = junk ]
  [ "$(grep -c '^nodeprobe-mirror: wrote ' <<<"$output")" -eq 3 ]
}

@test "configure backs up the user's files once; cleanup restores them exactly; twice is safe" {
  mkdir -p "$C/docker.io" "$C/quay.io/sub"
  printf "server = 'https://mirror.corp'\n" >"$C/docker.io/hosts.toml"
  printf 'CERT' >"$C/quay.io/sub/ca.crt"
  chmod 600 "$C/quay.io/sub/ca.crt"
  printf 'x' >"$C/loose-file"
  orig=$(contents "$C")
  inodes=$(cd "$C" && find . -mindepth 1 -printf '%p %i\n' | sort)

  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999
  [ "$status" -eq 0 ]
  [ "$(cat "$C/_backup/docker.io/hosts.toml")" = "server = 'https://mirror.corp'" ]
  [ -f "$C/_backup/quay.io/sub/ca.crt" ]
  [ -f "$C/_backup/loose-file" ]
  [ "$(ls -A "$C")" = "$(printf '_backup\ndocker.io')" ]
  # a second run does not back up our own files
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.6:29999
  [ "$status" -eq 0 ]
  [ "$(cat "$C/_backup/docker.io/hosts.toml")" = "server = 'https://mirror.corp'" ]

  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  [ "$(contents "$C")" = "$orig" ]
  [ "$(cd "$C" && find . -mindepth 1 -printf '%p %i\n' | sort)" = "$inodes" ]
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  [ "$(contents "$C")" = "$orig" ]
}

@test "a directory left by Spegel's init container is taken over without a write, and cleaned up" {
  # what Spegel v0.7.4 leaves: the user's files in _backup, its own hosts.toml (no trailing newline)
  mkdir -p "$C/_backup/ghcr.io" "$C/foo.bar:5000"
  printf "server = 'https://ghcr.mirror.corp'" >"$C/_backup/ghcr.io/hosts.toml"
  cp "$D/expected/multi-targets.toml" "$C/foo.bar:5000/hosts.toml"
  before=$(snapshot "$C")
  run "$BIN" configure --config-path "$C" -r http://foo.bar:5000 --dial-timeout 200ms \
    -m http://127.0.0.1:5000 -m http://127.0.0.2:5000 -m http://127.0.0.1:5001
  [ "$status" -eq 0 ]
  [ "$(snapshot "$C")" = "$before" ]
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  [ "$(ls -A "$C")" = ghcr.io ]
  [ "$(cat "$C/ghcr.io/hosts.toml")" = "server = 'https://ghcr.mirror.corp'" ]
}

@test "cleanup finishes an interrupted restore and never deletes restored files" {
  mkdir -p "$C/.nodeprobe-restore/ghcr.io" "$C/docker.io"
  printf 'a' >"$C/.nodeprobe-restore/ghcr.io/hosts.toml"
  printf 'b' >"$C/docker.io/hosts.toml"   # restored before the interruption
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  [ "$(ls -A "$C")" = "$(printf 'docker.io\nghcr.io')" ]
  [ "$(cat "$C/docker.io/hosts.toml")" = b ]
}

@test "configure --prepend-existing keeps the user's hosts after ours and their files" {
  mkdir -p "$C/docker.io/nested"
  cp "$D/input/prepend-docker.io.toml" "$C/docker.io/hosts.toml"
  printf 'Hello World' >"$C/docker.io/hello.txt"
  printf 'Foo Bar' >"$C/docker.io/nested/cert.tls"
  chmod 600 "$C/docker.io/nested/cert.tls"
  run "$BIN" configure --config-path "$C" -r https://docker.io -r http://foo.bar:5000 \
    -m http://127.0.0.1:5000 --dial-timeout 200ms --prepend-existing
  [ "$status" -eq 0 ]
  diff -u "$D/expected/prepend-docker.io.toml" "$C/docker.io/hosts.toml"
  diff -u "$D/input/prepend-docker.io.toml" "$C/_backup/docker.io/hosts.toml"
  [ "$(cat "$C/docker.io/hello.txt")" = "Hello World" ]
  [ "$(cat "$C/docker.io/nested/cert.tls")" = "Foo Bar" ]
  [ "$(stat -c %a "$C/docker.io/nested/cert.tls")" = 600 ]
  before=$(snapshot "$C")
  run "$BIN" configure --config-path "$C" -r https://docker.io -r http://foo.bar:5000 \
    -m http://127.0.0.1:5000 --dial-timeout 200ms --prepend-existing
  [ "$status" -eq 0 ]
  [ "$(snapshot "$C")" = "$before" ]
}

@test "configure: basic auth header as Spegel writes it; the password is never printed" {
  mkdir -p "$T/auth"
  printf 'hello' >"$T/auth/username"
  printf 'world' >"$T/auth/password"
  run "$BIN" -vv configure --config-path "$C" -r http://foo.bar:5000 --dial-timeout 200ms \
    -m http://127.0.0.1:5000 -m http://127.0.0.1:5001 --basic-auth-dir "$T/auth"
  [ "$status" -eq 0 ]
  diff -u "$D/expected/basic-auth.toml" "$C/foo.bar:5000/hosts.toml"
  ! grep -q -e world -e aGVsbG86d29ybGQ <<<"$output" || false
}

@test "a broken user hosts.toml is only parsed with --prepend-existing; its mode is kept" {
  mkdir -p "$C/docker.io"
  printf "[host.'http://x'\n" >"$C/docker.io/hosts.toml"
  chmod 600 "$C/docker.io/hosts.toml"
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999
  [ "$status" -eq 0 ]
  [ "$(stat -c %a "$C/docker.io/hosts.toml")" = 600 ]
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999 --prepend-existing
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: $C/_backup/docker.io/hosts.toml:1:17: unclosed table header" ]
  run "$BIN" check --config-path "$T/nothing-here"
  [ "$status" -eq 1 ]
  mkdir "$T/empty"
  run "$BIN" check --config-path "$T/empty"
  [ "$status" -eq 3 ]
  [ "$output" = "$T/empty: warning: no */hosts.toml: containerd uses no mirror" ]
}

@test "configure rejects names that would escape the config path" {
  for bad in ../../etc '../x' 'docker.io/evil' 'https://docker.io/v2' _backup '..' \
             'https://user@docker.io' 'ftp://docker.io' 'a b' 'host:99999' '.hidden'; do
    run "$BIN" configure --config-path "$C" -r "$bad" -m http://10.0.0.5:29999
    [ "$status" -eq 1 ] || { echo "accepted: $bad"; false; }
    grep -q "^nodeprobe-mirror: error: registry '" <<<"$output" || { echo "$output"; false; }
  done
  [ ! -e "$C" ]
  [ ! -e "$T/etc" ]
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999/path
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: mirror target 'http://10.0.0.5:29999/path': must be scheme://host[:port] with no path, query or fragment" ]
  run "$BIN" configure --config-path "$C" -r '*' -r _default -m http://10.0.0.5:29999
  [ "$status" -eq 1 ]
  # no target: the newest Spegel's one, its registry nodePort 30020 on the node's IP
  run "$BIN" configure --config-path "$C" -r docker.io
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: mirror target 'http://\${NODE_IP}:30020': environment variable NODE_IP is not set" ]
  [ ! -e "$C" ]
}

@test "options come from the environment (Spegel's names) and a YAML file; flags win" {
  CONTAINERD_REGISTRY_CONFIG_PATH="$C" MIRRORED_REGISTRIES="https://docker.io" \
    MIRROR_TARGETS="http://10.0.0.5:29999" RESOLVE_TAGS=false run "$BIN" configure
  [ "$status" -eq 0 ]
  diff -u "$D/expected/docker.io-no-resolve.toml" "$C/docker.io/hosts.toml"
  cat >"$T/opts.yaml" <<YAML
containerdRegistryConfigPath: $T/y
mirroredRegistries:
  - registry.local:5000
mirrorTargets: ["http://10.0.0.9:1"]
resolveTags: true
YAML
  MIRROR_TARGETS="http://10.0.0.5:29999" run "$BIN" configure --config "$T/opts.yaml"
  [ "$status" -eq 0 ]
  diff -u "$D/expected/hostport.toml" "$T/y/registry.local:5000/hosts.toml"
  run "$BIN" configure -c "$T/opts.yaml" --config-path "$T/z" -m http://10.0.0.5:29999 -r '*'
  [ "$status" -eq 0 ]
  diff -u "$D/expected/_default.toml" "$T/z/_default/hosts.toml"
  printf 'mirrorTargets: [a]\nresolvTags: false\n' >"$T/bad.yaml"
  run "$BIN" configure -c "$T/bad.yaml"
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: $T/bad.yaml:2:1: unknown option 'resolvTags'" ]
  RESOLVE_TAGS=perhaps run "$BIN" configure --config-path "$C" -m http://a
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: RESOLVE_TAGS: 'perhaps' is not true or false" ]
}

@test "usage errors exit 2" {
  run "$BIN"
  [ "$status" -eq 2 ]
  run "$BIN" frob
  [ "$status" -eq 2 ]
  run "$BIN" configure --dial-timeout soon
  [ "$status" -eq 2 ]
  [ "${lines[0]}" = "nodeprobe-mirror: error: --dial-timeout: 'soon' is not a duration like 200ms" ]
  run "$BIN" check extra
  [ "$status" -eq 2 ]
  run "$BIN" check --containerd-version banana --config-path "$T"
  [ "$status" -eq 1 ]
}

@test "check: what configure writes is clean; two broken files are reported by line" {
  "$BIN" configure --config-path "$C" -r docker.io -r quay.io -m http://10.0.0.5:29999
  run "$BIN" check --config-path "$C"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  cp "$D/input/broken-capability.toml" "$C/docker.io/hosts.toml"
  cp "$D/input/broken-unclosed.toml" "$C/quay.io/hosts.toml"
  run "$BIN" check --config-path "$C" --containerd-version 1.6.20
  [ "$status" -eq 1 ]
  [ "$output" = "$C/docker.io/hosts.toml:4:25: error: unknown capability 'resolv' (pull, resolve or push)
$C/docker.io/hosts.toml:5:1: warning: containerd 1.6.20 ignores 'dial_timeout' (read from 2.0.7 and 2.1.0 on): a dead mirror costs 30 s per request
$C/quay.io/hosts.toml:3:30: error: unclosed table header" ]
}

@test "check: warnings only exit 3; versions change the verdict" {
  mkdir -p "$C/docker.io" "$C/r:5000" "$C/r_5000_"
  printf "server = 'https://registry-1.docker.io'\n[host.'10.0.0.5:29999']\ncapabilites = ['pull']\n" >"$C/docker.io/hosts.toml"
  printf "[host.'http://[fd00::5]:29999']\ncapabilities = ['pull']\n" >"$C/r:5000/hosts.toml"
  run "$BIN" check --config-path "$C" --containerd-version 2.1.0
  [ "$status" -eq 3 ]
  [ "$output" = "$C/docker.io/hosts.toml:2:7: warning: host '10.0.0.5:29999' has no http:// or https:// scheme: containerd uses 'https://10.0.0.5:29999'
$C/docker.io/hosts.toml:3:1: warning: unknown key 'capabilites': containerd ignores it
$C/r:5000/hosts.toml: warning: not used: containerd reads $C/r_5000_ first" ]
  run "$BIN" check --config-path "$C" --containerd-version 1.7.27
  [ "$status" -eq 1 ]
  grep -q "r:5000/hosts.toml:1:7: error: containerd 1.x cannot parse a table header whose key contains ']'" <<<"$output"
}

@test "check --containerd-config: config_path (v2, v3, lists), discard_unpacked_layers, mirrors" {
  "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999
  cat >"$T/v2.toml" <<TOML
version = 2
[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "/etc/docker/certs.d:$C"
TOML
  run "$BIN" check --config-path "$C" --containerd-config "$T/v2.toml"
  [ "$status" -eq 0 ]
  cat >"$T/v3.toml" <<TOML
version = 3
[plugins.'io.containerd.cri.v1.images']
  discard_unpacked_layers = true
[plugins.'io.containerd.cri.v1.images'.registry]
  config_path = '/etc/containerd/certs.d'
[plugins.'io.containerd.cri.v1.images'.registry.mirrors.'docker.io']
  endpoint = ['https://mirror.example']
TOML
  run "$BIN" check --config-path "$C" --containerd-config "$T/v3.toml"
  [ "$status" -eq 1 ]
  [ "$output" = "$T/v3.toml:3:29: error: discard_unpacked_layers = true: layers are deleted after unpacking, so this node cannot serve them to Spegel
$T/v3.toml:6:49: error: legacy 'mirrors' set beside config_path: containerd's CRI plugin refuses to start
$T/v3.toml:5:17: error: config_path '/etc/containerd/certs.d' does not include $C" ]
  printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\nsnapshotter = "overlayfs"\n' >"$T/none.toml"
  run "$BIN" check --config-path "$C" --containerd-config "$T/none.toml"
  [ "$status" -eq 1 ]
  [ "$output" = "$T/none.toml: error: [plugins.\"io.containerd.grpc.v1.cri\".registry] config_path is not set: the CRI never reads $C" ]
}

@test "modes: never wider than 0644, a stricter user mode is kept (credentials in header tables)" {
  mkdir -p "$C/docker.io" "$C/quay.io" "$C/ghcr.io"
  printf "server = 'https://registry-1.docker.io'\n" >"$C/docker.io/hosts.toml"
  printf "server = 'https://quay.io'\n" >"$C/quay.io/hosts.toml"
  printf "[host.'https://m.corp']\nca = 'ca.crt'\n" >"$C/ghcr.io/hosts.toml"
  printf 'CA' >"$C/ghcr.io/ca.crt"
  printf 'KEY' >"$C/ghcr.io/client.key"
  chmod 666 "$C/docker.io/hosts.toml"
  chmod 640 "$C/quay.io/hosts.toml"
  chmod 4777 "$C/ghcr.io/ca.crt"
  chmod 600 "$C/ghcr.io/client.key"
  run "$BIN" configure --config-path "$C" -r docker.io -r quay.io -r ghcr.io \
    -m http://10.0.0.5:29999 --prepend-existing
  [ "$status" -eq 0 ]
  [ "$(stat -c %a "$C/docker.io/hosts.toml")" = 644 ]
  [ "$(stat -c %a "$C/quay.io/hosts.toml")" = 640 ]
  [ "$(stat -c %a "$C/ghcr.io/hosts.toml")" = 644 ]
  # the user's certificate and key stay in place, untouched (issue 17): not ours to re-mode
  [ "$(stat -c %a "$C/ghcr.io/ca.crt")" = 4777 ]
  [ "$(stat -c %a "$C/ghcr.io/client.key")" = 600 ]
  # the backup itself is untouched
  [ "$(stat -c %a "$C/_backup/docker.io/hosts.toml")" = 666 ]
}

@test "--prepend-existing: the user's certificates, symlinks included, stay in place and resolve" {
  # issue 17: files kept beside hosts.toml (containerd docs/hosts.md: ca.crt, client.cert,
  # client.key) are never moved, copied or deleted, so relative and absolute ca/client paths work
  mkdir -p "$C/ghcr.io/certs" "$T/pki"
  printf "[host.'https://m.corp']\nca = ['ca.crt', 'certs/rel.crt', '$C/ghcr.io/abs.crt']\nclient = [['client.cert', 'client.key']]\n" >"$C/ghcr.io/hosts.toml"
  printf 'CA-ABS' >"$T/pki/ca.pem"
  printf 'CA-REL' >"$C/ghcr.io/certs/rel.pem"
  printf 'CA2' >"$C/ghcr.io/abs.crt"
  printf 'CERT' >"$C/ghcr.io/client.cert"
  printf 'KEY' >"$C/ghcr.io/client.key"
  chmod 600 "$C/ghcr.io/client.key"
  ln -s "$T/pki/ca.pem" "$C/ghcr.io/ca.crt"
  ln -s rel.pem "$C/ghcr.io/certs/rel.crt"
  orig=$(contents "$C")
  run "$BIN" configure --config-path "$C" -r ghcr.io -m http://10.0.0.5:29999 --prepend-existing
  [ "$status" -eq 0 ]
  [ -L "$C/ghcr.io/ca.crt" ]
  [ "$(cat "$C/ghcr.io/ca.crt")" = CA-ABS ]
  [ "$(cat "$C/ghcr.io/certs/rel.crt")" = CA-REL ]
  [ "$(cat "$C/ghcr.io/abs.crt")" = CA2 ]
  [ "$(ls -A "$C/_backup/ghcr.io")" = hosts.toml ]
  grep -qF "ca = ['ca.crt', 'certs/rel.crt', '$C/ghcr.io/abs.crt']" "$C/ghcr.io/hosts.toml"
  run "$BIN" check --config-path "$C"
  [ "$status" -eq 0 ]
  # and a second run writes nothing
  before=$(snapshot "$C")
  run "$BIN" configure --config-path "$C" -r ghcr.io -m http://10.0.0.5:29999 --prepend-existing
  [ "$status" -eq 0 ]
  [ "$(snapshot "$C")" = "$before" ]
  # cleanup gives back the original tree, the files that stayed in place included
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  [ "$(contents "$C")" = "$orig" ]
}

@test "a bad dial timeout from the environment or the YAML file names its source" {
  MIRROR_DIAL_TIMEOUT=soon run "$BIN" configure --config-path "$C" -m http://10.0.0.5:29999
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: MIRROR_DIAL_TIMEOUT: 'soon' is not a duration like 200ms" ]
  printf 'mirrorTargets: [http://10.0.0.5:29999]\ndialTimeout: 5 s\n' >"$T/o.yaml"
  run "$BIN" configure --config-path "$C" -c "$T/o.yaml"
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: $T/o.yaml:2:14: dialTimeout: '5 s' is not a duration like 200ms" ]
  [ ! -e "$C" ]
}

@test "boolean variables take Go's strconv.ParseBool spellings, as Spegel's go-arg does" {
  mkdir -p "$C/docker.io"
  printf "[host.'https://m.corp']\ncapabilities = ['pull']\n" >"$C/docker.io/hosts.toml"
  PREPEND_EXISTING=T RESOLVE_TAGS=f run "$BIN" configure --config-path "$C" -r docker.io \
    -m http://10.0.0.5:29999
  [ "$status" -eq 0 ]
  [ "$(cat "$C/docker.io/hosts.toml")" = "server = 'https://registry-1.docker.io'

[host.'http://10.0.0.5:29999']
capabilities = ['pull']
dial_timeout = '200ms'

[host.'https://m.corp']
capabilities = ['pull']" ]
}

@test "configure errors name the real path: a file as config path, a broken file before the backup" {
  touch "$T/file"
  run "$BIN" configure --config-path "$T/file" -m http://10.0.0.5:29999
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: config path $T/file: not a directory" ]
  mkdir -p "$C/docker.io"
  printf "[host.'http://x'\n" >"$C/docker.io/hosts.toml"
  before=$(snapshot "$C")
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999 --prepend-existing
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: $C/docker.io/hosts.toml:1:17: unclosed table header" ]
  [ "$(snapshot "$C")" = "$before" ]
}

@test "basic auth uses the Secret files' bytes as Spegel does (its registry compares them raw)" {
  mkdir -p "$T/auth"
  printf 'hello\n' >"$T/auth/username"
  printf 'world\n' >"$T/auth/password"
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999 --basic-auth-dir "$T/auth"
  [ "$status" -eq 0 ]
  grep -qx "Authorization = 'Basic aGVsbG8KOndvcmxkCg=='" "$C/docker.io/hosts.toml"
  # username only: "hello:"
  printf 'hello' >"$T/auth/username"
  rm "$T/auth/password"
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999 --basic-auth-dir "$T/auth"
  [ "$status" -eq 0 ]
  grep -qx "Authorization = 'Basic aGVsbG86'" "$C/docker.io/hosts.toml"
  # no Secret mounted (Spegel's chart without basicAuthSecretName): no header at all
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999 --basic-auth-dir "$T/none"
  [ "$status" -eq 0 ]
  ! grep -q header "$C/docker.io/hosts.toml" || false
  # a ':' in the user name can never authenticate: refused
  mkdir -p "$T/bad"
  printf 'a:b' >"$T/bad/username"
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999 --basic-auth-dir "$T/bad"
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: $T/bad/username: a user name with ':' cannot be sent in basic auth" ]
}

@test "check --containerd-config follows imports (k0s drop-ins, as Spegel's docs set config_path)" {
  "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999
  mkdir -p "$T/containerd.d"
  cat >"$T/config.toml" <<TOML
version = 2
imports = ["containerd.d/*.toml", "$T/extra.toml"]
[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
TOML
  cat >"$T/containerd.d/spegel.toml" <<TOML
version = 2
[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "$C"
[plugins."io.containerd.grpc.v1.cri".containerd]
  discard_unpacked_layers = false
TOML
  printf 'version = 2\n' >"$T/extra.toml"
  run "$BIN" check --config-path "$C" --containerd-config "$T/config.toml"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ -z "$output" ]
  # a later import overrides an earlier value; findings name the file that set it
  printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  discard_unpacked_layers = true\n' >"$T/extra.toml"
  run "$BIN" check --config-path "$C" --containerd-config "$T/config.toml"
  [ "$status" -eq 1 ]
  [ "$output" = "$T/extra.toml:3:29: error: discard_unpacked_layers = true: layers are deleted after unpacking, so this node cannot serve them to Spegel" ]
  # an import that does not exist stops containerd
  rm "$T/extra.toml"
  run "$BIN" check --config-path "$C" --containerd-config "$T/config.toml"
  [ "$status" -eq 1 ]
  [ "$output" = "$T/config.toml:2:35: error: import '$T/extra.toml' cannot be read (No such file or directory): containerd does not start" ]
}

@test "a negative dial timeout is refused: containerd would give up every dial at once" {
  run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999 --dial-timeout=-1s
  [ "$status" -eq 2 ]
  [ "${lines[0]}" = "nodeprobe-mirror: error: --dial-timeout: '-1s' is negative: every dial to the mirror would fail at once" ]
  MIRROR_DIAL_TIMEOUT=-1s run "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999
  [ "$status" -eq 1 ]
  [ "$output" = "nodeprobe-mirror: error: MIRROR_DIAL_TIMEOUT: '-1s' is negative: every dial to the mirror would fail at once" ]
  [ ! -e "$C" ]
}

@test "cleanup after a configure interrupted during the first backup puts the user's files back" {
  mkdir -p "$C/.nodeprobe-backup/docker.io" "$C/quay.io"
  printf 'a' >"$C/.nodeprobe-backup/docker.io/hosts.toml"   # moved before the interruption
  printf 'b' >"$C/quay.io/hosts.toml"                       # not moved yet
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  [ "$(ls -A "$C")" = "$(printf 'docker.io\nquay.io')" ]
  [ "$(cat "$C/docker.io/hosts.toml")" = a ]
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  [ "$(ls -A "$C")" = "$(printf 'docker.io\nquay.io')" ]
}

@test "check --containerd-config: legacy configs.<host>.tls beside config_path stops the CRI plugin" {
  "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999
  cat >"$T/tls.toml" <<TOML
version = 2
[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "$C"
[plugins."io.containerd.grpc.v1.cri".registry.configs."reg.corp".auth]
  username = "u"
[plugins."io.containerd.grpc.v1.cri".registry.configs."reg.corp".tls]
  insecure_skip_verify = true
TOML
  run "$BIN" check --config-path "$C" --containerd-config "$T/tls.toml"
  [ "$status" -eq 1 ]
  [ "$output" = "$T/tls.toml:6:1: error: legacy registry.configs.\"reg.corp\".tls set beside config_path: containerd's CRI plugin refuses to start" ]
  # auth alone is only deprecated
  sed -i '6,7d' "$T/tls.toml"
  run "$BIN" check --config-path "$C" --containerd-config "$T/tls.toml"
  [ "$status" -eq 0 ]
}

@test "check --containerd-config: imports past the bound are reported, not skipped silently" {
  # issue 17 finding 10: every limit named where it bites (man page LIMITS: 32 files)
  mkdir -p "$T/d"
  printf 'version = 2\nimports = ["d/*.toml"]\n[plugins."io.containerd.grpc.v1.cri".registry]\nconfig_path = "%s"\n' "$C" >"$T/config.toml"
  for i in $(seq -w 34); do printf 'version = 2\n' >"$T/d/$i.toml"; done
  "$BIN" configure --config-path "$C" -r docker.io -m http://10.0.0.5:29999
  run "$BIN" check --config-path "$C" --containerd-config "$T/config.toml"
  [ "$status" -eq 3 ]
  [ "$output" = "$T/d/32.toml: warning: not read: imports go over 32 files or 8 levels deep; check this file with --containerd-config
$T/d/33.toml: warning: not read: imports go over 32 files or 8 levels deep; check this file with --containerd-config
$T/d/34.toml: warning: not read: imports go over 32 files or 8 levels deep; check this file with --containerd-config" ]
}
