# SPDX-License-Identifier: GPL-2.0-or-later
# Shared set-up for the nodeprobe-mirror end-to-end test: a docker-registry and a containerd,
# both on 127.0.0.1 inside a network namespace with no route out, under one scratch directory.
# Every process started here is recorded in $E2E/pids and stopped by e2e_stop.
# Needs root (ip netns). Variables: E2E (scratch dir), NS (namespace name), E2E_REG_PORT.

E2E_REG_PORT=5123

# e2e_in CMD...: run CMD inside the namespace.
e2e_in() {
  ip netns exec "$NS" "$@"
}

# e2e_bg NAME CMD...: start CMD in the namespace in the background, log to $E2E/NAME.log.
e2e_bg() {
  local name=$1; shift
  ip netns exec "$NS" "$@" >"$E2E/$name.log" 2>&1 </dev/null 3>&- &
  echo "$!" >"$E2E/$name.pid"
  echo "$!" >>"$E2E/pids"
}

# e2e_kill NAME: stop one process started by e2e_bg, by its PID, and wait for it.
e2e_kill() {
  local pid
  pid=$(cat "$E2E/$1.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$E2E/$1.pid"
}

# e2e_wait_http URL: poll until URL answers (inside the namespace), at most 10 s.
e2e_wait_http() {
  local i
  for i in $(seq 100); do
    e2e_in /usr/bin/python3 -c 'import sys,urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "e2e: $1 did not come up" >&2
  return 1
}

# e2e_wait_sock PATH: wait until a unix socket exists, at most 10 s.
e2e_wait_sock() {
  local i
  for i in $(seq 100); do
    [ -S "$1" ] && return 0
    sleep 0.1
  done
  echo "e2e: socket $1 did not appear" >&2
  return 1
}

e2e_start_registry() {
  mkdir -p "$E2E/reg-storage"
  cat >"$E2E/reg.yml" <<YML
version: 0.1
log:
  level: info
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: $E2E/reg-storage
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$E2E_REG_PORT
YML
  e2e_bg registry docker-registry serve "$E2E/reg.yml"
  e2e_wait_http "http://127.0.0.1:$E2E_REG_PORT/v2/"
}

e2e_start_containerd() {
  mkdir -p "$E2E/root" "$E2E/state" "$E2E/certs.d"
  cat >"$E2E/containerd.toml" <<TOML
version = 2
root = "$E2E/root"
state = "$E2E/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$E2E/containerd.sock"
[ttrpc]
  address = "$E2E/containerd.sock.ttrpc"
[debug]
  address = "$E2E/containerd-debug.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.invalid/pause:none"
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "$E2E/cni/bin"
  conf_dir = "$E2E/cni/conf"
[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "$E2E/certs.d"
TOML
  e2e_bg containerd containerd --config "$E2E/containerd.toml"
  e2e_wait_sock "$E2E/containerd.sock"
}

# e2e_ctr ARGS...: ctr against our containerd, namespace "e2e", inside the network namespace.
e2e_ctr() {
  e2e_in ctr -a "$E2E/containerd.sock" -n e2e "$@"
}

# e2e_build_image DIR TAG: write a one-layer OCI image layout by hand into DIR.
e2e_build_image() {
  local dir=$1 tag=$2 b layer_sz layer_dg diff_id cfg cfg_dg cfg_sz man man_dg man_sz
  mkdir -p "$dir/blobs/sha256" "$dir/rootfs"
  printf 'hello from the mirror\n' >"$dir/rootfs/hello.txt"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=2020-01-01 -C "$dir/rootfs" -cf "$dir/layer.tar" .
  gzip -n -c "$dir/layer.tar" >"$dir/layer.tar.gz"
  diff_id=$(sha256sum <"$dir/layer.tar" | cut -d' ' -f1)
  layer_dg=$(sha256sum <"$dir/layer.tar.gz" | cut -d' ' -f1)
  layer_sz=$(stat -c %s "$dir/layer.tar.gz")
  cp "$dir/layer.tar.gz" "$dir/blobs/sha256/$layer_dg"
  cfg='{"architecture":"amd64","os":"linux","config":{"Cmd":["/hello.txt"]},"rootfs":{"type":"layers","diff_ids":["sha256:'$diff_id'"]}}'
  printf '%s' "$cfg" >"$dir/config.json"
  cfg_dg=$(sha256sum <"$dir/config.json" | cut -d' ' -f1)
  cfg_sz=$(stat -c %s "$dir/config.json")
  cp "$dir/config.json" "$dir/blobs/sha256/$cfg_dg"
  man='{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:'$cfg_dg'","size":'$cfg_sz'},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:'$layer_dg'","size":'$layer_sz'}]}'
  printf '%s' "$man" >"$dir/manifest.json"
  man_dg=$(sha256sum <"$dir/manifest.json" | cut -d' ' -f1)
  man_sz=$(stat -c %s "$dir/manifest.json")
  cp "$dir/manifest.json" "$dir/blobs/sha256/$man_dg"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"%s"}}]}' \
    "$man_dg" "$man_sz" "$tag" >"$dir/index.json"
  echo "sha256:$man_dg"
}

# e2e_push DIR TAG: push the layout's TAG into the registry as library/hello:TAG.
e2e_push() {
  e2e_in skopeo copy --quiet --dest-tls-verify=false "oci:$1:$2" "docker://127.0.0.1:$E2E_REG_PORT/library/hello:$2"
}

# e2e_setup: namespace + registry + containerd. Call from setup_file.
e2e_setup() {
  E2E=$(mktemp -d /tmp/np-mirror-e2e.XXXXXX)
  NS=np-mirror-$$-$RANDOM
  echo "$NS" >"$E2E/netns"
  : >"$E2E/pids"
  ip netns add "$NS" || return 1
  e2e_in ip link set lo up || return 1
  e2e_start_registry || return 1
  e2e_start_containerd
}

# e2e_stop: stop every process we started (by PID), remove the namespace and the scratch dir.
e2e_stop() {
  [ -n "${E2E:-}" ] && [ -d "$E2E" ] || return 0
  local pid
  for n in containerd registry; do e2e_kill "$n"; done
  while read -r pid; do
    kill "$pid" 2>/dev/null && sleep 0.2 && kill -9 "$pid" 2>/dev/null
  done <"$E2E/pids"
  grep -qs " $E2E/" /proc/mounts && awk -v p="$E2E/" 'index($2,p)==1{print $2}' /proc/mounts | sort -r | xargs -r -n1 umount -l
  [ -f "$E2E/netns" ] && ip netns del "$(cat "$E2E/netns")" 2>/dev/null
  rm -rf "$E2E"
}
