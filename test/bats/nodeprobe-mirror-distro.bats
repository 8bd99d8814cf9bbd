#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# --distro: each distribution's paths under a fake host root, auto detection, the exact fixes
# check prints, k3s/RKE2 registries.yaml left alone, talos-config, check --probe.
load helpers

setup() {
  BIN="$BUILD/nodeprobe-mirror"
  T=$(mktemp -d "$BATS_TMPDIR/np-distro.XXXXXX")
  R="$T/host"
  unset CONTAINERD_REGISTRY_CONFIG_PATH MIRRORED_REGISTRIES MIRROR_TARGETS RESOLVE_TAGS \
    PREPEND_EXISTING MIRROR_DIAL_TIMEOUT NODEPROBE_MIRROR_CONFIG
  export MIRROR_BASIC_AUTH_DIR="$T/no-secret" NODE_IP=10.0.0.5
}

teardown() {
  [ -f "$T/http.pid" ] && kill "$(cat "$T/http.pid")" 2>/dev/null
  rm -rf "$T"
}

talos_root() {
  mkdir -p "$R/etc/cri/conf.d"
  printf 'NAME="Talos"\nID=talos\nVERSION_ID=v1.13.0\n' >"$R/etc/os-release"
  # what Talos 1.13 generates: containerd.toml imports cri.toml (00-base.part: discard true)
  printf 'version = 3\nimports = ["/etc/cri/conf.d/cri.toml"]\n' >"$R/etc/cri/containerd.toml"
  cat >"$R/etc/cri/conf.d/cri.toml" <<'TOML'
version = 3

[plugins."io.containerd.cri.v1.images"]
  discard_unpacked_layers = true

[plugins."io.containerd.cri.v1.images".registry]
  config_path = "/etc/cri/conf.d/hosts"
TOML
}

@test "each distro's config path under --host-root; the bytes are the same everywhere" {
  for d in kubeadm:/etc/containerd/certs.d talos:/etc/cri/conf.d/hosts \
    k3s:/var/lib/rancher/k3s/agent/etc/containerd/certs.d \
    rke2:/var/lib/rancher/rke2/agent/etc/containerd/certs.d k0s:/etc/containerd/certs.d \
    microk8s:/var/snap/microk8s/current/args/certs.d kind:/etc/containerd/certs.d; do
    name=${d%%:*} path=${d#*:}
    rm -rf "$R"
    run "$BIN" configure --distro "$name" --host-root "$R" -r docker.io
    [ "$status" -eq 0 ] || { echo "$name: $output"; false; }
    [ "$(cat "$R$path/docker.io/hosts.toml")" = "server = 'https://registry-1.docker.io'

[host.'http://10.0.0.5:30020']
capabilities = ['pull', 'resolve']
dial_timeout = '200ms'" ] || { echo "$name: $R$path"; false; }
  done
  run "$BIN" configure --distro gentoo
  [ "$status" -eq 2 ]
  [ "${lines[0]}" = "nodeprobe-mirror: error: --distro: 'gentoo' is not kubeadm, talos, k3s, rke2, k0s, microk8s, kind or auto" ]
}

@test "--distro auto: Talos by os-release, RKE2, k3s, k0s, MicroK8s, kind, kubeadm by their directories" {
  talos_root
  run "$BIN" -v configure --distro auto --host-root "$R" -r docker.io
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "nodeprobe-mirror: --distro auto: talos 1.13.0" ]
  [ -f "$R/etc/cri/conf.d/hosts/docker.io/hosts.toml" ]
  for d in rke2:var/lib/rancher/rke2/agent k3s:var/lib/rancher/k3s/agent k0s:etc/k0s \
    microk8s:var/snap/microk8s kind:kind kubeadm:etc/containerd; do
    rm -rf "$R" && mkdir -p "$R/${d#*:}"
    run "$BIN" -v check --distro auto --host-root "$R"
    [ "${lines[0]}" = "nodeprobe-mirror: --distro auto: ${d%%:*}" ] || { echo "$output"; false; }
  done
  rm -rf "$R" && mkdir -p "$R"
  run "$BIN" check --distro auto --host-root "$R"
  [ "$status" -eq 1 ]
  grep -q "^nodeprobe-mirror: error: --distro auto: $R shows none of Talos" <<<"$output"
}

@test "Talos: check reads containerd.toml and its import, and prints the machine-config fix" {
  talos_root
  "$BIN" configure --distro talos --host-root "$R" -r docker.io
  run "$BIN" check --distro talos --host-root "$R"
  [ "$status" -eq 1 ]
  [ "$output" = "$R/etc/cri/conf.d/cri.toml:4:29: error: discard_unpacked_layers = true: layers are deleted after unpacking, so this node cannot serve them to Spegel
  Talos 1.14 or later: apply this machine-config document (talosctl patch mc --patch @spegel.yaml); CRI restarts, no reboot (before 1.14: a machine.files entry /etc/cri/conf.d/20-customization.part, see nodeprobe-mirror(8)):
    apiVersion: v1alpha1
    kind: CRICustomizationConfig
    name: spegel
    content: |
        [plugins.\"io.containerd.cri.v1.images\"]
          discard_unpacked_layers = false" ]
  run "$BIN" check --distro auto --host-root "$R"
  [ "$status" -eq 1 ]
  [ "$output" = "$R/etc/cri/conf.d/cri.toml:4:29: error: discard_unpacked_layers = true: layers are deleted after unpacking, so this node cannot serve them to Spegel
  Talos 1.13.0: add this machine-config patch (talosctl patch mc --patch @spegel.yaml), then reboot the node:
    machine:
      files:
        - path: /etc/cri/conf.d/20-customization.part
          op: create
          content: |
            [plugins.\"io.containerd.cri.v1.images\"]
              discard_unpacked_layers = false" ]
  # the fix applied (a 20-customization.part merged into cri.toml): clean
  sed -i 's/discard_unpacked_layers = true/discard_unpacked_layers = false/' "$R/etc/cri/conf.d/cri.toml"
  run "$BIN" check --distro talos --host-root "$R"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "kubeadm, k0s, MicroK8s, kind: the exact fix for a missing config_path" {
  printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  snapshotter = "overlayfs"\n' >"$T/v2.toml"
  "$BIN" configure --distro kubeadm --host-root "$R" -r docker.io
  run "$BIN" check --distro kubeadm --host-root "$R" --containerd-config "$T/v2.toml"
  [ "$status" -eq 1 ]
  [ "$output" = "$T/v2.toml: error: [plugins.\"io.containerd.grpc.v1.cri\".registry] config_path is not set: the CRI never reads $R/etc/containerd/certs.d
  in /etc/containerd/config.toml (config version 2) set the following, then restart containerd (systemctl restart containerd):
    [plugins.\"io.containerd.grpc.v1.cri\".registry]
      config_path = \"/etc/containerd/certs.d\"" ]
  run "$BIN" check --distro k0s --host-root "$R" --containerd-config "$T/v2.toml" --containerd-version 1.7.27
  [ "$status" -eq 1 ]
  [ "$(tail -n +3 <<<"$output")" = "  k0s 1.35 or earlier: write this drop-in as /etc/k0s/containerd.d/spegel.toml (k0s restarts containerd when it changes):
    version = 2
    [plugins.\"io.containerd.grpc.v1.cri\".registry]
      config_path = \"/etc/containerd/certs.d\"" ]
  run "$BIN" check --distro k0s --host-root "$R" --containerd-config "$T/v2.toml" --distro-version 1.36
  grep -qx '    version = 3' <<<"$output"
  grep -qx '    \[plugins."io.containerd.cri.v1.images".registry\]' <<<"$output"
  run "$BIN" check --distro kind --host-root "$R" --containerd-config "$T/v2.toml"
  [ "$(tail -n +2 <<<"$output")" = "  kind: add to the Cluster config and recreate the cluster (kind create cluster --config FILE):
    containerdConfigPatches:
      - |-
        [plugins.\"io.containerd.grpc.v1.cri\".registry]
          config_path = \"/etc/containerd/certs.d\"" ]
  "$BIN" configure --distro microk8s --host-root "$R" -r docker.io
  printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  discard_unpacked_layers = true\n[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/var/snap/microk8s/current/args/certs.d"\n' \
    >"$R/var/snap/microk8s/current/args/containerd.toml"
  run "$BIN" check --distro microk8s --host-root "$R"
  [ "$status" -eq 1 ]
  [ "$(tail -n +2 <<<"$output")" = "  MicroK8s renders args/containerd.toml from its template at every start: in /var/snap/microk8s/current/args/containerd-template.toml set the following, then run snap restart microk8s.daemon-containerd:
    [plugins.\"io.containerd.grpc.v1.cri\".containerd]
      discard_unpacked_layers = false" ]
}

@test "k3s: registries that registries.yaml manages, or k3s generated, are never written, moved or removed" {
  C="$R/var/lib/rancher/k3s/agent/etc/containerd/certs.d"
  mkdir -p "$R/etc/rancher/k3s" "$C/docker.io" "$C/registry.local:5000" "$C/quay.io"
  printf 'mirrors:\n  docker.io:\n    endpoint:\n      - "https://mirror.corp"\n' >"$R/etc/rancher/k3s/registries.yaml"
  printf "server = 'https://registry-1.docker.io'\n[host.'https://mirror.corp']\n" >"$C/docker.io/hosts.toml"
  printf "# File generated by k3s. DO NOT EDIT.\n[host.'https://r.corp']\n" >"$C/registry.local:5000/hosts.toml"
  printf "server = 'https://quay.io'\n" >"$C/quay.io/hosts.toml"
  kept=$(cd "$C" && find docker.io registry.local:5000 -printf '%p %i %s\n' | sort)
  run "$BIN" configure --distro k3s --host-root "$R" -r docker.io -r ghcr.io
  [ "$status" -eq 0 ]
  [ "$output" = "nodeprobe-mirror: warning: docker.io: managed by k3s's registries.yaml: not written (add the mirror there)" ]
  [ "$(cd "$C" && find docker.io registry.local:5000 -printf '%p %i %s\n' | sort)" = "$kept" ]
  [ "$(ls -A "$C")" = "$(printf '_backup\ndocker.io\nghcr.io\nregistry.local:5000')" ]
  [ "$(ls -A "$C/_backup")" = quay.io ]
  grep -qx "\[host.'http://10.0.0.5:30020'\]" "$C/ghcr.io/hosts.toml"
  run "$BIN" cleanup --distro k3s --host-root "$R"
  [ "$status" -eq 0 ]
  [ "$(ls -A "$C")" = "$(printf 'docker.io\nquay.io\nregistry.local:5000')" ]
  [ "$(cd "$C" && find docker.io registry.local:5000 -printf '%p %i %s\n' | sort)" = "$kept" ]
  # "*" in registries.yaml is _default
  printf 'mirrors:\n  "*":\n    endpoint: ["https://m"]\n' >"$R/etc/rancher/k3s/registries.yaml"
  run "$BIN" configure --distro k3s --host-root "$R"
  grep -q "_default: managed by k3s's registries.yaml" <<<"$output"
  # RKE2 reads its own file
  mkdir -p "$R/etc/rancher/rke2"
  printf 'mirrors:\n  ghcr.io: {}\n' >"$R/etc/rancher/rke2/registries.yaml"
  run "$BIN" configure --distro rke2 --host-root "$R" -r ghcr.io -r quay.io
  [ "$status" -eq 0 ]
  grep -q "ghcr.io: managed by rke2's registries.yaml" <<<"$output"
  [ -f "$R/var/lib/rancher/rke2/agent/etc/containerd/certs.d/quay.io/hosts.toml" ]
}

@test "talos-config: one RegistryMirrorConfig per registry, the node's mirror then upstream" {
  run "$BIN" talos-config -r docker.io -r ghcr.io -r registry.local:5000 -r '*'
  [ "$status" -eq 0 ]
  [ "$output" = "apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: docker.io
endpoints:
  - url: http://10.0.0.5:30020
  - url: https://registry-1.docker.io
---
apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: ghcr.io
endpoints:
  - url: http://10.0.0.5:30020
  - url: https://ghcr.io
---
apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: registry.local:5000
endpoints:
  - url: http://10.0.0.5:30020
  - url: https://registry.local:5000
---
apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: '*'
endpoints:
  - url: http://10.0.0.5:30020" ]
  unset NODE_IP
  run "$BIN" talos-config -r docker.io
  [ "$status" -eq 1 ]
}

# A stand-in registry API on 127.0.0.1 (python's http.server over a directory): /v2/ answers
# 200, the manifest path 200, anything else 404. The e2e probes a real docker-registry.
start_http() {
  mkdir -p "$T/www/v2/library/hello/manifests"
  printf '{}' >"$T/www/v2/library/hello/manifests/v1"
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  python3 -m http.server --bind 127.0.0.1 --directory "$T/www" "$PORT" >"$T/http.log" 2>&1 &
  echo $! >"$T/http.pid"
  for _ in $(seq 50); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/v2/" && return 0; sleep 0.1; done
  return 1
}

@test "check --probe: a live mirror answers, a closed port does not (exit 1)" {
  start_http
  mkdir -p "$T/c"
  "$BIN" configure --config-path "$T/c" -r docker.io -m "http://127.0.0.1:$PORT"
  run "$BIN" check --config-path "$T/c" --probe
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$output" = "http://127.0.0.1:$PORT: ok: mirror answering (GET /v2/: HTTP 200)" ]
  run "$BIN" check --config-path "$T/c" --probe --image hello:v1
  [ "$status" -eq 0 ]
  [ "${lines[1]}" = "http://127.0.0.1:$PORT: ok: resolves docker.io/library/hello:v1 (no digest header)" ]
  grep -q '"HEAD /v2/library/hello/manifests/v1?ns=docker.io HTTP/1.1" 200' "$T/http.log"
  run "$BIN" check --config-path "$T/c" --probe --image docker.io/library/other:v2
  [ "$status" -eq 3 ]
  [ "${lines[1]}" = "http://127.0.0.1:$PORT: warning: cannot resolve docker.io/library/other:v2 (HEAD manifest: HTTP 404): pulls of it go upstream" ]
  kill "$(cat "$T/http.pid")"; wait "$(cat "$T/http.pid")" 2>/dev/null || true; rm "$T/http.pid"
  run "$BIN" check --config-path "$T/c" --probe
  [ "$status" -eq 1 ]
  [[ "$output" == "http://127.0.0.1:$PORT: error: mirror not answering: every pull goes upstream (GET /v2/: Couldn't connect to server (Connection refused))" ]]
  # something answers, but not as a registry (no /v2/): the same silent fallback
  mkdir -p "$T/plain"
  python3 -m http.server --bind 127.0.0.1 --directory "$T/plain" "$PORT" >"$T/http.log" 2>&1 &
  echo $! >"$T/http.pid"
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
  run "$BIN" check --config-path "$T/c" --probe
  [ "$status" -eq 1 ]
  [ "$output" = "http://127.0.0.1:$PORT: error: mirror not answering as a registry: every pull goes upstream (GET /v2/: HTTP 404)" ]
  # explicit targets are probed instead of the files' hosts
  run "$BIN" check --config-path "$T/c" --probe -m http://127.0.0.1:1
  [ "$status" -eq 1 ]
  grep -q '^http://127.0.0.1:1: error: mirror not answering' <<<"$output"
}

@test "a directory k3s generated is left alone without --distro too (the DaemonSet mounts no registries.yaml)" {
  C="$T/certs.d"
  mkdir -p "$C/docker.io"
  printf "# File generated by k3s. DO NOT EDIT.\nserver = 'https://registry-1.docker.io'\n" >"$C/docker.io/hosts.toml"
  kept=$(cd "$C" && find docker.io -printf '%p %i %s\n')
  run "$BIN" configure --config-path "$C" -r docker.io -r quay.io
  [ "$status" -eq 0 ]
  [ "$output" = "nodeprobe-mirror: warning: docker.io: managed by k3s's registries.yaml: not written (add the mirror there)" ]
  [ "$(cd "$C" && find docker.io -printf '%p %i %s\n')" = "$kept" ]
  [ "$(ls -A "$C")" = "$(printf '_backup\ndocker.io\nquay.io')" ]
  run "$BIN" cleanup --config-path "$C"
  [ "$(ls -A "$C")" = docker.io ]
}
