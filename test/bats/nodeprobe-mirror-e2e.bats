#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-mirror against a real containerd and a real docker-registry, both on 127.0.0.1
# inside a network namespace with no route out: the only way to get an image is the mirror.
load helpers

E2E_DIR="$BATS_TEST_DIRNAME/../e2e"

setup_file() {
  [ "$(id -u)" -eq 0 ] || skip "needs root for ip netns"
  source "$E2E_DIR/mirror-env.bash"
  # stop whatever did start if any step fails (teardown_file may not run then)
  if ! { e2e_setup && e2e_build_image "$E2E/img" v1 >"$E2E/digest" && e2e_push "$E2E/img" v1; }; then
    e2e_stop
    return 1
  fi
  export E2E NS
}

teardown_file() {
  source "$E2E_DIR/mirror-env.bash"
  e2e_stop
}

setup() {
  source "$E2E_DIR/mirror-env.bash"
  BIN="$BUILD/nodeprobe-mirror"
}

# The configuration every test starts from (idempotent: no write when already there).
configure_mirror() {
  "$BIN" configure --config-path "$E2E/certs.d" --registry https://docker.io \
    --registry registry.example.internal:5000 --mirror-target http://127.0.0.1:5123
}

# Registry log lines written after line $1 that asked for library/hello.
registry_lines_after() {
  tail -n +"$(($1 + 1))" "$E2E/registry.log" | grep -E '"(HEAD|GET) /v2/library/hello/' || true
}

@test "configure, then ctr pulls docker.io/library/hello through the mirror" {
  run configure_mirror
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  diff -u "$E2E_DIR/expected/docker.io.toml" "$E2E/certs.d/docker.io/hosts.toml"
  diff -u "$E2E_DIR/expected/registry.example.internal:5000.toml" \
    "$E2E/certs.d/registry.example.internal:5000/hosts.toml"

  before=$(wc -l <"$E2E/registry.log")
  run e2e_ctr images pull --hosts-dir "$E2E/certs.d" docker.io/library/hello:v1
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  lines=$(registry_lines_after "$before")
  echo "$lines" >"$E2E/pull-docker.io.log"
  echo "$lines"
  grep -q '"HEAD /v2/library/hello/manifests/v1?ns=docker.io HTTP/1.1" 200' <<<"$lines"
  grep -q "\"GET /v2/library/hello/manifests/$(cat "$E2E/digest")?ns=docker.io HTTP/1.1\" 200" <<<"$lines"
  grep -qE '"GET /v2/library/hello/blobs/sha256:[0-9a-f]{64}\?ns=docker.io HTTP/1.1" 200' <<<"$lines"
  # the pulled layer holds the file we put in the image
  layer=$(sha256sum <"$E2E/img/layer.tar.gz" | cut -d' ' -f1)
  run bash -c "ip netns exec '$NS' ctr -a '$E2E/containerd.sock' -n e2e content get sha256:$layer | tar -xzO ./hello.txt"
  [ "$output" = "hello from the mirror" ]

  # a host:port registry goes through its own directory; the mirror sees ?ns=host%3Aport
  before=$(wc -l <"$E2E/registry.log")
  run e2e_ctr images pull --hosts-dir "$E2E/certs.d" registry.example.internal:5000/library/hello:v1
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  registry_lines_after "$before" | grep -q 'manifests/v1?ns=registry.example.internal%3A5000 HTTP/1.1" 200'
}

@test "without the hosts.toml the same pull fails: nothing is reachable but the mirror" {
  run e2e_ctr images pull docker.io/library/hello:v1
  [ "$status" -ne 0 ]
  grep -q 'registry-1.docker.io' <<<"$output"
}

@test "check flags exactly the hosts.toml files containerd refuses to decode" {
  ver=$(containerd --version | awk '{print $3}')
  rejected=0 accepted=0 mismatch=()
  for f in "$E2E_DIR"/hosts-cases/*.toml; do
    name=$(basename "$f" .toml)
    rm -rf "$E2E/case"
    mkdir -p "$E2E/case/docker.io"
    cp "$f" "$E2E/case/docker.io/hosts.toml"
    out=$(e2e_ctr images pull --hosts-dir "$E2E/case" docker.io/library/hello:v1 2>&1 >/dev/null || true)
    e2e_ctr images rm docker.io/library/hello:v1 >/dev/null 2>&1 || true
    if grep -q 'failed to decode hosts.toml' <<<"$out"; then ctrd=reject; rejected=$((rejected + 1)); else ctrd=accept; accepted=$((accepted + 1)); fi
    chk=$("$BIN" check --config-path "$E2E/case" --containerd-version "$ver" 2>&1 || true)
    if grep -q ': error: ' <<<"$chk"; then ours=reject; else ours=accept; fi
    printf '%-28s containerd=%-6s check=%-6s %s\n' "$name" "$ctrd" "$ours" "$(head -n1 <<<"$chk" | sed "s|$E2E/case/||")" >>"$E2E/cases.txt"
    [ "$ctrd" = "$ours" ] || mismatch+=("$name")
  done
  cat "$E2E/cases.txt"
  [ ${#mismatch[@]} -eq 0 ] || { echo "mismatch: ${mismatch[*]}"; false; }
  # both kinds are really exercised
  [ "$rejected" -ge 20 ]
  [ "$accepted" -ge 10 ]
}

@test "the 4 known cases where containerd 1.x's old decoder is laxer than TOML: containerd accepts, check errs" {
  ver=$(containerd --version | awk '{print $3}')
  case $ver in 1.*) ;; *) skip "containerd $ver uses a strict TOML decoder" ;; esac
  n=0
  for f in "$E2E_DIR"/hosts-stricter/*.toml; do
    rm -rf "$E2E/case"
    mkdir -p "$E2E/case/docker.io"
    cp "$f" "$E2E/case/docker.io/hosts.toml"
    out=$(e2e_ctr images pull --hosts-dir "$E2E/case" docker.io/library/hello:v1 2>&1 >/dev/null || true)
    e2e_ctr images rm docker.io/library/hello:v1 >/dev/null 2>&1 || true
    ! grep -q 'failed to decode hosts.toml' <<<"$out" || { echo "containerd refused $f"; false; }
    run "$BIN" check --config-path "$E2E/case" --containerd-version "$ver"
    [ "$status" -eq 1 ] || { echo "check accepted $f: $output"; false; }
    n=$((n + 1))
  done
  [ "$n" -eq 4 ]
}

@test "CRI PullImage (the kubelet's path) reads config_path: mirror used, broken file refused, repaired" {
  configure_mirror
  # containerd's own config, which it is running with, passes check; Spegel's default
  # dial_timeout draws the one warning a containerd before 2.0.7 deserves
  ver=$(containerd --version | awk '{print $3}')
  run "$BIN" check --config-path "$E2E/certs.d" --containerd-config "$E2E/containerd.toml" \
    --containerd-version "$ver"
  case $ver in
  1.* | 2.0.[0-6]) [ "$status" -eq 3 ] || { echo "$output"; false; }
    [ "$(grep -vc "warning: containerd [0-9.]* ignores 'dial_timeout'" <<<"$output")" -eq 0 ] ;;
  *) [ "$status" -eq 0 ] || { echo "$output"; false; } ;;
  esac
  e2e_ctr -n k8s.io images rm docker.io/library/hello:v1 >/dev/null 2>&1 || true
  before=$(wc -l <"$E2E/registry.log")
  run e2e_in "$E2E_DIR/cri-pull" "$E2E/containerd.sock" docker.io/library/hello:v1
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output == sha256:* ]]
  registry_lines_after "$before" | grep -q '"HEAD /v2/library/hello/manifests/v1?ns=docker.io HTTP/1.1" 200'

  # containerd re-reads hosts.toml on every pull: a broken one is refused in the daemon log
  cp "$E2E_DIR/hosts-cases/unknown-capability.toml" "$E2E/certs.d/docker.io/hosts.toml"
  e2e_ctr -n k8s.io images rm docker.io/library/hello:v1 >/dev/null 2>&1 || true
  logbefore=$(wc -l <"$E2E/containerd.log")
  run e2e_in "$E2E_DIR/cri-pull" "$E2E/containerd.sock" docker.io/library/hello:v1
  [ "$status" -ne 0 ]
  tail -n +"$((logbefore + 1))" "$E2E/containerd.log" | grep -q 'failed to decode hosts.toml.*unknown capability resolv'
  run "$BIN" check --config-path "$E2E/certs.d"
  [ "$status" -eq 1 ]
  grep -q "docker.io/hosts.toml:4:25: error: unknown capability 'resolv'" <<<"$output"

  # configure repairs it; the next pull goes through the mirror again
  configure_mirror
  diff -u "$E2E_DIR/expected/docker.io.toml" "$E2E/certs.d/docker.io/hosts.toml"
  run e2e_in "$E2E_DIR/cri-pull" "$E2E/containerd.sock" docker.io/library/hello:v1
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "check --probe against the real registry: up, resolving the image, and on the wrong port" {
  configure_mirror
  run e2e_in "$BIN" check --config-path "$E2E/certs.d" --probe --image docker.io/library/hello:v1
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  echo "$output" >"$E2E/probe-up.txt"
  [ "${lines[0]}" = "http://127.0.0.1:5123: ok: mirror answering (GET /v2/: HTTP 200)" ]
  [ "${lines[1]}" = "http://127.0.0.1:5123: ok: resolves docker.io/library/hello:v1 ($(cat "$E2E/digest"))" ]
  grep -q '"HEAD /v2/library/hello/manifests/v1?ns=docker.io HTTP/1.1" 200' "$E2E/registry.log"
  # an image the mirror does not have: a warning, its pulls go upstream
  run e2e_in "$BIN" check --config-path "$E2E/certs.d" --probe --image quay.io/team/missing:v9
  [ "$status" -eq 3 ]
  [ "${lines[1]}" = "http://127.0.0.1:5123: warning: cannot resolve quay.io/team/missing:v9 (HEAD manifest: HTTP 404): pulls of it go upstream" ]
  # a mirror target on the wrong port: nothing answers there
  run e2e_in "$BIN" check --config-path "$E2E/certs.d" --probe -m http://127.0.0.1:5124
  [ "$status" -eq 1 ]
  [[ "${lines[0]}" == "http://127.0.0.1:5124: error: mirror not answering: every pull goes upstream (GET /v2/: "*"(Connection refused))" ]] || { echo "$output"; false; }
}

# The containerd config file of distro $1 under root $2 (paths as nodeprobe-mirror's --distro).
distro_containerd_config() {
  case $1 in
  talos) echo "$2/etc/cri/containerd.toml" ;;
  k3s | rke2) echo "$2/var/lib/rancher/$1/agent/etc/containerd/config.toml" ;;
  k0s) echo "$2/etc/k0s/containerd.toml" ;;
  microk8s) echo "$2/var/snap/microk8s/current/args/containerd.toml" ;;
  *) echo "$2/etc/containerd/config.toml" ;;
  esac
}

@test "every distro preset: a real containerd whose config_path is that distro's path pulls through the mirror" {
  ver=$(containerd --version | awk '{print $3}')
  n=0
  for d in kubeadm talos k3s rke2 k0s microk8s kind; do
    r="$E2E/roots/$d"
    run "$BIN" configure --distro "$d" --host-root "$r" -r https://docker.io -m http://127.0.0.1:5123
    [ "$status" -eq 0 ] || { echo "$d: $output"; false; }
    hosts=$(find "$r" -name hosts.toml)
    cfg=$(distro_containerd_config "$d" "$r")
    mkdir -p "$(dirname "$cfg")"
    # this machine's containerd reads version 2 files: the distro's path, not its format
    cat >"$cfg" <<TOML
version = 2
root = "$r/var/lib/containerd"
state = "$E2E/st-$d"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$E2E/$d.sock"
[ttrpc]
  address = "$E2E/$d.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.invalid/pause:none"
[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "$(dirname "$(dirname "$hosts")")"
TOML
    # check finds the distro's containerd config by itself and accepts it
    run "$BIN" check --distro "$d" --host-root "$r" --containerd-version "$ver"
    [ "$status" -le 3 ] && ! grep -q ': error: ' <<<"$output" || { echo "$d: $output"; false; }
    e2e_bg "ctrd-$d" containerd --config "$cfg"
    e2e_wait_sock "$E2E/$d.sock"
    before=$(wc -l <"$E2E/registry.log")
    run e2e_in "$E2E_DIR/cri-pull" "$E2E/$d.sock" docker.io/library/hello:v1
    e2e_kill "ctrd-$d"
    [ "$status" -eq 0 ] || { echo "$d: $output"; false; }
    registry_lines_after "$before" | grep -q '"HEAD /v2/library/hello/manifests/v1?ns=docker.io HTTP/1.1" 200' ||
      { echo "$d: no pull through the mirror"; false; }
    printf '%-9s %s\n' "$d" "${hosts#"$r"}" >>"$E2E/distros.txt"
    n=$((n + 1))
  done
  cat "$E2E/distros.txt"
  [ "$n" -eq 7 ]
}

@test "watch: a Talos-style re-sync under a running watch is repaired before the next CRI pull" {
  configure_mirror
  "$BIN" watch -v --config-path "$E2E/certs.d" --registry https://docker.io \
    --registry registry.example.internal:5000 --mirror-target http://127.0.0.1:5123 \
    >"$E2E/watch.log" 2>&1 &
  wpid=$!
  for ((i = 0; i < 200; i++)); do grep -q watching "$E2E/watch.log" && break; sleep 0.1; done
  # talos@ad88231 cri_config.go syncHosts: its own directories written, every other one removed
  # (the watch stopped meanwhile, so that it sees the whole re-sync at once)
  kill -STOP "$wpid"
  mkdir "$E2E/certs.d/registry.talos.dev"
  printf "server = 'https://registry.talos.dev'\n" >"$E2E/certs.d/registry.talos.dev/hosts.toml"
  find "$E2E/certs.d" -mindepth 1 -maxdepth 1 ! -name registry.talos.dev -exec rm -rf {} +
  kill -CONT "$wpid"
  for ((i = 0; i < 200; i++)); do
    cmp -s "$E2E_DIR/expected/docker.io.toml" "$E2E/certs.d/docker.io/hosts.toml" && break
    sleep 0.1
  done
  kill "$wpid"
  wait "$wpid" || true
  cat "$E2E/watch.log"
  grep -q "written by someone else (a distro's re-sync?): backing up what is there now and re-applying" "$E2E/watch.log"
  diff -u "$E2E_DIR/expected/docker.io.toml" "$E2E/certs.d/docker.io/hosts.toml"
  [ -f "$E2E/certs.d/_backup/registry.talos.dev/hosts.toml" ]
  e2e_ctr -n k8s.io images rm docker.io/library/hello:v1 >/dev/null 2>&1 || true
  before=$(wc -l <"$E2E/registry.log")
  run e2e_in "$E2E_DIR/cri-pull" "$E2E/containerd.sock" docker.io/library/hello:v1
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  registry_lines_after "$before" | grep -q '"HEAD /v2/library/hello/manifests/v1?ns=docker.io HTTP/1.1" 200'
}

@test "with the mirror stopped the pull falls back to server at once (connection refused)" {
  configure_mirror
  e2e_ctr images rm docker.io/library/hello:v1 >/dev/null 2>&1 || true
  e2e_kill registry
  run e2e_ctr images pull --hosts-dir "$E2E/certs.d" docker.io/library/hello:v1
  echo "$output"
  [ "$status" -ne 0 ]
  grep -q 'trying next host.*dial tcp 127.0.0.1:5123: connect: connection refused.*host="127.0.0.1:5123"' <<<"$output"
  grep -q 'trying next host.*registry-1.docker.io.*host=registry-1.docker.io' <<<"$output"
  # and check --probe says so
  run e2e_in "$BIN" check --config-path "$E2E/certs.d" --probe
  echo "$output" >"$E2E/probe-down.txt"
  [ "$status" -eq 1 ]
  [[ "${lines[0]}" == "http://127.0.0.1:5123: error: mirror not answering: every pull goes upstream (GET /v2/: "*"(Connection refused))" ]] || { echo "$output"; false; }
}
