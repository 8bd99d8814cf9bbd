#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end test of the container image, with Debian's tools only and no daemon of the host's:
#   1. scripts/build-image builds the OCI layout (umoci, no engine): linux/amd64, linux/arm64 and
#      linux/arm/v7 in one index (this machine's architecture only, said so, when the cross
#      toolchains or sysroots of scripts/install-deps are missing);
#   2. a private docker-registry on 127.0.0.1 receives it (skopeo copy --all);
#   3. a private containerd (own root, state, socket) pulls it (ctr, plain HTTP), this machine's
#      platform as a node does, then every platform (each one's blobs come from the registry);
#   4. ctr (runc) runs it as uid/gid 65534 with a read-only root, containerd's default seccomp
#      profile and no capability, as the manifests do: `nodeprobe --version`, and
#      `nodeprobe --dry-run` against a PCI fixture bind-mounted read-only at /host-sys.
# The registry, the push and the pull run in a fresh network namespace (no route out), so the
# image can only come from the local registry. Every process started here is stopped by PID on
# exit, pass or fail, and the containers' cgroup parent is removed.
# Needs root. Output: the steps, the image's layers and size, and nodeprobe's output; the last
# line is "image e2e: ok". Env: IMAGE_DIR (default: a scratch dir), FIXTURE (sysfs tree),
# NP_IMAGE_PARTIAL=1 to allow a missing binary (reported; the binary's run is then skipped).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
FIXTURE=${FIXTURE:-$ROOT/test/fixtures/pci/linuxhw-intel-nuc12-alderlake}
VERSION=$(sed -n 's/^VERSION *:= *//p' Makefile)
ARCH=$(dpkg --print-architecture)

die() { echo "image e2e: error: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (network namespace, containerd)"
[ -d "$FIXTURE/bus/pci/devices" ] || die "fixture $FIXTURE has no bus/pci/devices"
for t in umoci skopeo docker-registry containerd containerd-shim-runc-v2 ctr runc ip jq; do
  command -v "$t" >/dev/null || die "$t not installed (scripts/install-deps)"
done

# The nodeprobe-mirror e2e helpers: network namespace, docker-registry, PID bookkeeping, teardown.
. test/e2e/mirror-env.bash
E2E=$(mktemp -d /tmp/np-image-e2e.XXXXXX)
echo "e2e dir: $E2E"
NS=np-image-$$-$RANDOM
echo "$NS" >"$E2E/netns"
: >"$E2E/pids"
CTR_ID=np-image-$$
# The containerd namespace names the containers' cgroup parent (/sys/fs/cgroup/*/$CTR_NS):
# one of our own, removed on exit, so no run leaves a cgroup behind or touches another's.
CTR_NS=np-image-$$-$RANDOM
cleanup() {
  local rc=$? pid
  set +e # teardown goes on whatever fails (e2e_stop's kill of an already-dead PID fails)
  if [ -S "$E2E/containerd.sock" ]; then
    ctr -a "$E2E/containerd.sock" -n "$CTR_NS" tasks kill -s SIGKILL "$CTR_ID" >/dev/null 2>&1 || true
    ctr -a "$E2E/containerd.sock" -n "$CTR_NS" tasks rm -f "$CTR_ID" >/dev/null 2>&1 || true
    ctr -a "$E2E/containerd.sock" -n "$CTR_NS" containers rm "$CTR_ID" >/dev/null 2>&1 || true
  fi
  e2e_kill containerd
  # Our cgroup parents, once empty (rmdir removes nothing else).
  rmdir /sys/fs/cgroup/*/"$CTR_NS" /sys/fs/cgroup/"$CTR_NS" 2>/dev/null || true
  # Shims containerd started for our containers (ours only: their command line names our root).
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $E2E/" 2>/dev/null); do
    kill -9 "$pid" 2>/dev/null || true
  done
  [ $rc -eq 0 ] || { echo "--- logs ($E2E)"; tail -n 15 "$E2E"/*.log 2>/dev/null || true; }
  e2e_stop
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' INT TERM
wait_for() {
  local what=$1; shift
  for _ in $(seq 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  die "$what did not come up"
}

ip netns add "$NS"
e2e_in ip link set lo up

# Every architecture when this machine can cross build them (test/e2e/qemu.sh runs those).
ARCHS=("$ARCH")
for a in arm64 armhf; do
  [ "$a" != "$ARCH" ] || continue
  t=$([ "$a" = arm64 ] && echo aarch64-linux-gnu || echo arm-linux-gnueabihf)
  if command -v "$t-g++" >/dev/null && [ -f "${NP_CROSS_ROOT:-/opt/nodeprobe-cross}/$a/.nodeprobe-packages" ]; then
    ARCHS+=("$a")
  else
    echo "== note: no $a image: $t-g++ or the :$a sysroot missing (scripts/install-deps as root)"
  fi
done
echo "== build (scripts/build-image ${ARCHS[*]})"
export IMAGE_DIR=${IMAGE_DIR:-$E2E/image}
scripts/build-image "${ARCHS[@]}" | tee "$E2E/build.txt"
LAYOUT=$IMAGE_DIR/oci
[ -f "$IMAGE_DIR/rootfs-$ARCH/files.txt" ] || die "no files.txt"

echo "== registry (docker-registry on 127.0.0.1:$E2E_REG_PORT in netns $NS)"
e2e_start_registry >/dev/null
REF=127.0.0.1:$E2E_REG_PORT/nodeprobe/nodeprobe:$VERSION
e2e_in skopeo copy --quiet --all --dest-tls-verify=false "oci:$LAYOUT:$VERSION" "docker://$REF"
e2e_in skopeo inspect --raw --tls-verify=false "docker://$REF" | jq -r '"pushed index: " + .mediaType + ", " + ([.manifests[].platform | [.os, .architecture, .variant // empty] | join("/")] | join(", "))'

echo "== containerd (own root, state and socket)"
# Not e2e_start_containerd: containerd must stay in the host's network namespace, because
# `ip netns exec` remounts /sys and runc then finds no cgroups. It opens no port (CRI off, API
# on a unix socket); the pull is client-side in ctr, which does run in the namespace.
mkdir -p "$E2E/ctr-root" "$E2E/ctr-state"
printf 'version = 2\nroot = "%s"\nstate = "%s"\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n[grpc]\n  address = "%s"\n[ttrpc]\n  address = "%s"\n' \
  "$E2E/ctr-root" "$E2E/ctr-state" "$E2E/containerd.sock" "$E2E/containerd.sock.ttrpc" >"$E2E/ctr.toml"
containerd --config "$E2E/ctr.toml" >"$E2E/containerd.log" 2>&1 </dev/null 3>&- &
echo "$!" >"$E2E/containerd.pid"
echo "$!" >>"$E2E/pids"
e2e_wait_sock "$E2E/containerd.sock"
ctr_() { ctr -a "$E2E/containerd.sock" -n "$CTR_NS" "$@"; }
e2e_in ctr -a "$E2E/containerd.sock" -n "$CTR_NS" images pull --plain-http "$REF" >"$E2E/pull.log"
tail -n 2 "$E2E/pull.log"
ctr_ images ls | awk 'NR == 1 || /nodeprobe/'
# containerd holds exactly what the layout holds: the same image index digest.
want=$(jq -r --arg t "$VERSION" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' "$LAYOUT/index.json")
ctr_ images ls -q >/dev/null
got=$(ctr_ images ls | awk -v r="$REF" '$1 == r {print $3}')
[ "$got" = "$want" ] || die "pulled digest $got, built $want"
echo "pulled $REF = $want"
if [ ${#ARCHS[@]} -gt 1 ]; then
  # Every platform's manifest and layers, from the registry (as a mirror such as Spegel fetches).
  e2e_in ctr -a "$E2E/containerd.sock" -n "$CTR_NS" images pull --all-platforms --plain-http "$REF" >"$E2E/pull-all.log"
  ctr_ content ls -q | sort >"$E2E/content.txt"
  for a in "${ARCHS[@]}"; do
    m=$(jq -r --arg t "$VERSION-$a" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' "$LAYOUT/index.json")
    for d in "$m" $(jq -r '.config.digest, .layers[].digest' "$LAYOUT/blobs/sha256/${m#sha256:}"); do
      grep -qx "$d" "$E2E/content.txt" || die "containerd has no $d of the $a image"
    done
  done
  echo "pulled every platform: ${ARCHS[*]} (manifests, configs and layers in containerd's content store)"
fi

echo "== run (ctr run, runc, uid 65534, read-only root, seccomp default, no capabilities)"
# run_in_image CMD...: a container from the image with the image's own user (config.user,
# 65534:65534), a read-only root and the fixture at /host-sys read-only; prints CMD's output.
# ctr 1.6 has no --user: the uid is checked in the container's runtime spec instead.
# CTR_OPTS: extra `ctr containers create` options (mounts, env) for the next run.
CTR_OPTS=()
# ctr 1.6 knows no `--cap-drop ALL`: each of its default capabilities, by name (the spec
# check below fails if a default is missing here).
DROP_CAPS=()
for c in CHOWN DAC_OVERRIDE FSETID FOWNER MKNOD NET_RAW SETGID SETUID SETFCAP SETPCAP \
         NET_BIND_SERVICE SYS_CHROOT KILL AUDIT_WRITE; do
  DROP_CAPS+=(--cap-drop "CAP_$c")
done
run_in_image() {
  ctr_ containers create --read-only --seccomp "${DROP_CAPS[@]}" \
    --mount "type=bind,src=$FIXTURE,dst=/host-sys,options=rbind:ro" "${CTR_OPTS[@]}" \
    "$REF" "$CTR_ID" "$@" >/dev/null
  ctr_ containers info "$CTR_ID" >"$E2E/spec.json"
  local user
  # As the manifests run it: the image's user, read-only root, containerd's default seccomp
  # profile (RuntimeDefault), no capability at all, no new privileges.
  user=$(jq -c '[.Spec.process.user.uid, .Spec.process.user.gid, .Spec.root.readonly,
                 .Spec.linux.seccomp.defaultAction, ([.Spec.process.capabilities[]?[]] | length),
                 .Spec.process.noNewPrivileges]' "$E2E/spec.json")
  [ "$user" = '[65534,65534,true,"SCMP_ACT_ERRNO",0,true]' ] ||
    die "container uid, gid, read-only root, seccomp, capabilities, no-new-privs = $user, want [65534,65534,true,\"SCMP_ACT_ERRNO\",0,true]"
  local rc=0
  ctr_ tasks start "$CTR_ID" || rc=$?
  ctr_ containers rm "$CTR_ID" >/dev/null
  return $rc
}
failed=0
expect_bin() {
  grep -q " app/usr/bin/$1\$" "$IMAGE_DIR/rootfs-$ARCH/files.txt" && return 0
  echo "MISSING: $1 is not in the image"
  failed=1
  return 1
}
if expect_bin nodeprobe; then
  echo "\$ nodeprobe --version"
  run_in_image /usr/bin/nodeprobe --version | tee "$E2E/version.txt"
  grep -q "$VERSION" "$E2E/version.txt" || die "nodeprobe --version does not print $VERSION"
  echo "\$ nodeprobe --dry-run --sysfs /host-sys   (fixture: ${FIXTURE#"$ROOT"/})"
  run_in_image /usr/bin/nodeprobe --dry-run --sysfs /host-sys | tee "$E2E/dry-run.txt"
  # The same binary on the host, on the same tree, prints the same labels.
  if [ -x "$IMAGE_DIR/rootfs-$ARCH/app/usr/bin/nodeprobe" ] && [ -n "${BUILD:-}" ] && [ -x "$BUILD/nodeprobe" ]; then
    "$BUILD/nodeprobe" --dry-run --sysfs "$FIXTURE" >"$E2E/host-dry-run.txt"
    diff -u "$E2E/host-dry-run.txt" "$E2E/dry-run.txt" || die "labels differ between host and image"
  fi
  [ -s "$E2E/dry-run.txt" ] || die "nodeprobe --dry-run printed nothing"
fi
for b in nodeprobe-mirror nodeprobe-reload; do
  if expect_bin "$b"; then
    echo "\$ $b --version"
    run_in_image "/usr/bin/$b" --version | tee "$E2E/$b.txt"
    grep -q "$VERSION" "$E2E/$b.txt" || die "$b --version does not print $VERSION"
  fi
done
if expect_bin nodeprobe-mirror >/dev/null; then
  # configure as in k8s/mirror (target from $NODE_IP), into a directory the image's user owns,
  # then check; the files must be byte-identical to what the host's build writes.
  args=(--config-path /certs.d --registry https://docker.io --registry https://gitea.example.internal
        --mirror-target 'http://${NODE_IP}:29999' --resolve-tags=true --dial-timeout=200ms)
  install -d -o 65534 -g 65534 "$E2E/certs.d"
  CTR_OPTS=(--env NODE_IP=10.0.0.5 --mount "type=bind,src=$E2E/certs.d,dst=/certs.d,options=rbind:rw")
  echo "\$ NODE_IP=10.0.0.5 nodeprobe-mirror configure ${args[*]}"
  run_in_image /usr/bin/nodeprobe-mirror configure "${args[@]}"
  echo "\$ nodeprobe-mirror check --config-path /certs.d"
  run_in_image /usr/bin/nodeprobe-mirror check --config-path /certs.d
  CTR_OPTS=()
  echo "--- certs.d/docker.io/hosts.toml"
  cat "$E2E/certs.d/docker.io/hosts.toml"; echo
  if [ -n "${BUILD:-}" ] && [ -x "$BUILD/nodeprobe-mirror" ]; then
    mkdir "$E2E/host-certs.d"
    NODE_IP=10.0.0.5 "$BUILD/nodeprobe-mirror" configure "${args[@]/#\/certs.d/$E2E/host-certs.d}"
    diff -r "$E2E/host-certs.d" "$E2E/certs.d" || die "nodeprobe-mirror wrote different files in the image"
  fi
fi

if expect_bin nodeprobe-reload >/dev/null && [ -f test/fake-apiserver/fake.bash ]; then
  # In-cluster, as k8s/reload runs it: the token, CA and namespace at the service-account path,
  # the server from KUBERNETES_SERVICE_HOST/PORT, against test/fake-apiserver on the host's
  # loopback (--net-host). One stale Deployment: one PATCH, one Event. Every request it makes
  # must be covered by the RBAC the manifests grant (test/k8s/rbac-reload.txt).
  NP_ROOT=$ROOT
  . test/fake-apiserver/fake.bash
  FAKE_DIR=$E2E/fake fake_start
  echo "$FAKE_PID" >>"$E2E/pids" # stopped by e2e_stop; not a job, so no "Killed" line
  disown "$FAKE_PID"
  fake_ctl POST /objects '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"},"data":{"k":"new"}}' >/dev/null
  fake_ctl POST /objects '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}],"env":[{"name":"STAKATER_CFG_CONFIGMAP","value":"stale"}]}]}}}}' >/dev/null
  mkdir -p "$E2E/sa"
  printf '%s' "$FAKE_TOKEN" >"$E2E/sa/token"
  cp "$FAKE_CA" "$E2E/sa/ca.crt"
  printf default >"$E2E/sa/namespace"
  chmod -R a+rX "$E2E/sa"
  CTR_OPTS=(--net-host --env KUBERNETES_SERVICE_HOST=127.0.0.1 --env "KUBERNETES_SERVICE_PORT=$FAKE_PORT"
            --mount "type=bind,src=$E2E/sa,dst=/var/run/secrets/kubernetes.io/serviceaccount,options=rbind:ro")
  echo "\$ nodeprobe-reload --mode once   (in-cluster, fake API server at 127.0.0.1:$FAKE_PORT)"
  run_in_image /usr/bin/nodeprobe-reload --mode once
  CTR_OPTS=()
  fake_ctl GET /requests | jq -r '.items[] | .method + " " + .path + (if .query != "" then "?" + .query else "" end) + " " + (.status | tostring)' | tee "$E2E/requests.txt"
  grep -Eq '^PATCH /apis/apps/v1/namespaces/default/deployments/web(\?[^ ]*)? 200$' "$E2E/requests.txt" || die "no rollout PATCH"
  grep -q '^POST /api/v1/namespaces/default/events 20[01]$' "$E2E/requests.txt" || die "no Event"
  # method + path -> "<group> <resource> <verb>", as RBAC sees it.
  fake_ctl GET /requests | jq -r '.items[] | (.path | split("/")) as $p
      | (if $p[1] == "api" then ["core", $p[3:]] else [$p[2], $p[4:]] end) as [$g, $r]
      | (if $r[0] == "namespaces" and ($r | length) > 2 then $r[2:] else $r end) as $r
      | $g + " " + $r[0] + " " + (if .method == "GET" then (if ($r | length) > 1 then "get"
          elif (.query | test("(^|&)watch=(1|true)")) then "watch" else "list" end)
        elif .method == "POST" then "create" else (.method | ascii_downcase) end)' | sort -u >"$E2E/used.txt"
  grep -v '^#' test/k8s/rbac-reload.txt | sort >"$E2E/granted.txt"
  comm -23 "$E2E/used.txt" "$E2E/granted.txt" >"$E2E/ungranted.txt"
  [ ! -s "$E2E/ungranted.txt" ] || die "nodeprobe-reload used what RBAC does not grant: $(paste -sd, "$E2E/ungranted.txt")"
  echo "RBAC used: $(paste -sd, "$E2E/used.txt")"
fi

echo "== size"
for a in "${ARCHS[@]}"; do
  jq -r --arg t "$VERSION-$a" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest[7:]' "$LAYOUT/index.json" >"$E2E/m"
  manifest=$LAYOUT/blobs/sha256/$(cat "$E2E/m")
  compressed=$(jq '[.layers[].size] | add' "$manifest")
  uncompressed=$(awk '$1 !~ /^d/ {s += $2} END {print s}' "$IMAGE_DIR/rootfs-$a/files.txt")
  jq -r --arg a "$a" '.layers[] | $a + " layer " + .digest[7:19] + "  " + (.size | tostring) + " bytes gzip"' "$manifest"
  echo "image $a: $compressed bytes compressed, $uncompressed bytes of files"
  [ "$compressed" -lt $((15 * 1024 * 1024)) ] || die "$a image is $compressed bytes compressed (target < 15 MiB)"
done
[ "$failed" -eq 0 ] || { [ "${NP_IMAGE_PARTIAL:-0}" = 1 ] || die "binaries missing from the image"; echo "image e2e: PARTIAL (binaries missing, see above)"; exit 0; }
echo "image e2e: ok"
