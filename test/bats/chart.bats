#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# k8s/chart/nodeprobe: helm lint --strict and helm template (helm 3 and helm 4, the pinned
# binaries scripts/install-tools puts first in PATH) over every values file of test/k8s/values;
# every render passes test/k8s/check-manifests; what each values file selects is in the render;
# the arguments the chart passes are accepted by the binaries and do the job; the packaged chart
# goes through a real OCI registry (helm push, helm pull, helm template of the pulled chart).
load helpers
source "$NP_ROOT/test/fake-apiserver/fake.bash"

C=$NP_ROOT/k8s/chart/nodeprobe
T=$NP_ROOT/test/k8s
V=$NP_ROOT/test/k8s/values

setup() {
  cd "$NP_ROOT"
  command -v helm >/dev/null || { echo "helm not found: scripts/install-deps installs it (scripts/install-tools)" >&2; return 1; }
  command -v kubectl >/dev/null || { echo "kubectl not found: scripts/install-deps installs it" >&2; return 1; }
  W=$(mktemp -d)
}

teardown() {
  [ -n "${NS:-}" ] && e2e_stop
  rm -rf "$W"
}

# tpl [HELM] ARGS...: helm template of the chart, release nodeprobe in namespace nodeprobe, as
# a stream of JSON objects (test/k8s/render's conversion).
tpl() {
  local h=helm
  case ${1:-} in helm|helm4) h=$1; shift ;; esac
  "$h" template nodeprobe "$C" -n nodeprobe "$@" | KUBECONFIG=/dev/null kubectl patch --local -f - --type merge -p '{}' -o json
}

# check FILE: check-manifests with each Role checked against its own grant list.
check() {
  local args=() r f
  for r in $(jq -r 'select(.kind | test("Role$")) | .metadata.name' "$1" | sort -u); do
    case $r in
      *-leader-election) f=rbac-lease.txt ;;
      *-mirror-cleanup) f=rbac-mirror-cleanup.txt ;;
      *-reload) f=rbac-reload.txt ;;
      *-devices-dra) f=rbac-devices-dra.txt ;;
      *) echo "unexpected role $r" >&2; return 1 ;;
    esac
    f=$T/$f
    # --is-Argo-Rollouts adds the rollouts grant of nodeprobe-reload(8), section RBAC
    if [ "${f##*/}" = rbac-reload.txt ] &&
      jq -s -e '[.[] | select(.kind == "Deployment") | .spec.template.spec.containers[].args[]?] | index("--is-Argo-Rollouts=true") != null' "$1" >/dev/null; then
      { cat "$f"; printf 'argoproj.io rollouts %s\n' get list watch patch; } >"$W/rbac-reload-argo.txt"
      f=$W/rbac-reload-argo.txt
    fi
    # --enable-csi-integration adds the secretproviderclasspodstatuses grant (test/k8s/rbac-csi.txt)
    if [ "${f##*/}" != rbac-lease.txt ] && [ "${f##*/}" != rbac-mirror-cleanup.txt ] &&
      jq -s -e '[.[] | select(.kind == "Deployment") | .spec.template.spec.containers[].args[]?] | index("--enable-csi-integration") != null' "$1" >/dev/null; then
      { cat "$f"; grep -v '^#' "$T/rbac-csi.txt"; } >"$W/rbac-reload-csi.txt"
      f=$W/rbac-reload-csi.txt
    fi
    args+=(--role "$r=$f")
  done
  "$T/check-manifests" "${args[@]}" <"$1"
}

# one KIND FILTER FILE: exactly one object of KIND in FILE, and FILTER is true for it.
one() {
  jq -e -s --arg k "$1" "map(select(.kind == \$k)) | length == 1 and (.[0] | $2)" "$3" >/dev/null ||
    { echo "not true for the one $1 in $3: $2" >&2; return 1; }
}

# args FILE CONTAINER: the args of the (init) container named CONTAINER of the non-hook DaemonSet.
ds_args() {
  jq -r --arg c "$2" 'select(.kind == "DaemonSet" and (.metadata.annotations["helm.sh/hook"] // "") == "")
    | .spec.template.spec | (.initContainers // []) + .containers | .[] | select(.name == $c) | .args[]' "$1"
}

@test "helm lint --strict passes with every values file, helm 3 and helm 4" {
  local v h n=0
  helm version --short | grep -q '^v3\.'
  for h in helm helm4; do
    command -v $h >/dev/null || { echo "# $h not installed: lint with it skipped" >&3; continue; }
    for v in "$V"/*.yaml; do
      $h lint --strict "$C" -f "$v" >"$W/lint.txt" 2>&1 || { cat "$W/lint.txt" >&2; echo "$h lint $v" >&2; return 1; }
      grep -q '0 chart(s) failed' "$W/lint.txt"
      n=$((n + 1))
    done
  done
  [ "$n" -ge 10 ]
}

@test "every values file renders (helm 3 and 4 alike) and passes the hardening checks" {
  local v n=0
  for v in "$V"/*.yaml; do
    tpl -f "$v" >"$W/r.json" || { echo "render failed: $v" >&2; return 1; }
    check "$W/r.json" || { echo "in $v" >&2; return 1; }
    if command -v helm4 >/dev/null; then
      tpl helm4 -f "$v" >"$W/r4.json"
      diff -u <(jq -S . "$W/r.json") <(jq -S . "$W/r4.json") || { echo "helm 4 renders $v differently" >&2; return 1; }
    fi
    # Every object is labelled as ours; nothing outside the release namespace but cluster RBAC
    # and the namespaced-scope Roles.
    jq -e -s 'all(.[]; .metadata.labels["app.kubernetes.io/part-of"] == "nodeprobe")' "$W/r.json" >/dev/null
    n=$((n + 1))
  done
  [ "$n" -ge 10 ]
  # A render of our chart with a weakened container is caught (the checks can fail here).
  tpl >"$W/r.json"
  jq 'if .kind == "DaemonSet" then .spec.template.spec.initContainers[0].securityContext.readOnlyRootFilesystem = false else . end' "$W/r.json" >"$W/bad.json"
  run check "$W/bad.json"
  [ "$status" -eq 1 ]
  jq 'if .kind == "ClusterRole" then .rules[0].verbs += ["delete"] else . end' "$W/r.json" >"$W/bad.json"
  run check "$W/bad.json"
  [ "$status" -eq 1 ]
  [[ $output == *"grants core configmaps delete"* ]]
}

@test "values schema and template checks refuse bad values with the field named" {
  local bad
  while IFS='|' read -r bad msg; do
    run helm template nodeprobe "$C" $bad
    [ "$status" -ne 0 ] || { echo "accepted: $bad" >&2; return 1; }
    [[ $output == *"$msg"* ]] || { echo "$bad: $output" >&2; return 1; }
  done <<'E'
--set mirror.distro=ubuntu|mirror.distro must be one of the following
--set mirror.bogus=1|Additional property bogus is not allowed
--set mirror.spegel.targets=hostport|mirror.spegel.targets must be one of the following
--set mirror.configPath=/a:/b|mirror.configPath
--set mirror.registries={docker.io}|mirror.registries.0
--set mirror.dialTimeout=200|mirror.dialTimeout
--set mirror.resources.limits=null|mirror.resources
--set reload.replicas=2|reload.replicas > 1 needs reload.ha.enabled
--set reload.rbac.scope=global|reload.rbac.scope must be one of the following
--set reload.networkPolicy.enabled=true|reload.networkPolicy.apiServer.cidrs
--set mirror.spegel.targets=none|mirror: no mirror target
--set reload.serviceAccount.create=false|reload.serviceAccount.name is required
--set mirror.extraRegistries=docker.io|mirror: registry docker.io given twice
--set mirror.registries={http://ghcr.io,https://ghcr.io}|mirror: registry ghcr.io given twice
E
}

@test "mirror: each distro preset mounts and configures its containerd config path" {
  local d want
  while read -r d want; do
    if [ "$d" = kubeadm ]; then tpl >"$W/r.json"; else tpl -f "$V/distro-$d.yaml" >"$W/r.json"; fi
    # The same path in the configure args, the mount, the hostPath, and in the cleanup hook.
    one DaemonSet "(.metadata.annotations[\"nodeprobe.io/distro\"] == \"$d\") and (.spec.template.spec.volumes[0].hostPath.path == \"$want\")
      and (.spec.template.spec.initContainers[0].volumeMounts[0].mountPath == \"$want\")
      and (.spec.template.spec.initContainers[0].args | index(\"--config-path=$want\") != null)" \
      <(jq 'select((.metadata.annotations["helm.sh/hook"] // "") == "")' "$W/r.json")
    one DaemonSet ".spec.template.spec.initContainers[0].args == [\"cleanup\", \"--config-path=$want\"]
      and .spec.template.spec.volumes[0].hostPath.path == \"$want\"" \
      <(jq 'select(.metadata.annotations["helm.sh/hook"] == "pre-delete")' "$W/r.json")
  done <<'E'
kubeadm /etc/containerd/certs.d
talos /etc/cri/conf.d/hosts
k3s /var/lib/rancher/k3s/agent/etc/containerd/certs.d
rke2 /var/lib/rancher/rke2/agent/etc/containerd/certs.d
k0s /etc/containerd/certs.d
microk8s /var/snap/microk8s/current/args/certs.d
kind /etc/containerd/certs.d
E
  # An explicit configPath wins over the preset.
  tpl --set mirror.distro=talos --set mirror.configPath=/srv/certs.d >"$W/r.json"
  ds_args "$W/r.json" configure | grep -qx -- '--config-path=/srv/certs.d'
  # Every node, system-node-critical, no API token, NODE_IP from the kubelet.
  tpl >"$W/r.json"
  jq 'select(.kind == "DaemonSet" and (.metadata.annotations["helm.sh/hook"] // "") == "")' "$W/r.json" >"$W/ds.json"
  one DaemonSet '.spec.template.spec.tolerations == [{"operator": "Exists"}] and .spec.template.spec.priorityClassName == "system-node-critical"
    and .spec.template.spec.automountServiceAccountToken == false
    and (.spec.template.spec.initContainers[0].env[] | select(.name == "NODE_IP") | .valueFrom.fieldRef.fieldPath) == "status.hostIP"' "$W/ds.json"
}

@test "mirror: targets for each Spegel generation, registries, options" {
  tpl >"$W/r.json"
  ds_args "$W/r.json" configure >"$W/a"
  # watch (the long-running container) keeps exactly what configure writes: the same options.
  diff <(tail -n +2 "$W/a") <(ds_args "$W/r.json" watch | tail -n +2)
  [ "$(ds_args "$W/r.json" watch | head -1)" = watch ]
  [ "$(grep -- '--mirror-target=' "$W/a")" = '--mirror-target=http://$(NODE_IP):30020' ]
  [ "$(grep -c -- '--registry=' "$W/a")" -eq 7 ]
  grep -qx -- '--dial-timeout=200ms' "$W/a"
  grep -qx -- '--resolve-tags=true' "$W/a"
  tpl -f "$V/spegel-v0.7.yaml" >"$W/r.json"
  ds_args "$W/r.json" configure >"$W/a"
  [ "$(grep -- '--mirror-target=' "$W/a" | paste -sd' ')" = '--mirror-target=http://$(NODE_IP):30020 --mirror-target=http://$(NODE_IP):30021' ]
  grep -qx -- '--registry=\*' "$W/a"
  grep -qx -- '--basic-auth-dir=/etc/secrets/basic-auth' "$W/a"
  one DaemonSet '.spec.template.spec.volumes[] | select(.name == "basic-auth") | .secret.secretName == "spegel-basic-auth"' \
    <(jq 'select((.metadata.annotations["helm.sh/hook"] // "") == "")' "$W/r.json")
  tpl --set mirror.spegel.targets=prefer-same-node >"$W/r.json"
  [ "$(ds_args "$W/r.json" configure | grep -- '--mirror-target=')" = '--mirror-target=http://$(NODE_IP):30021' ]
  tpl -f "$V/seed-29999.yaml" >"$W/r.json"
  ds_args "$W/r.json" configure >"$W/a"
  [ "$(grep -- '--mirror-target=' "$W/a" | paste -sd' ')" = '--mirror-target=http://$(NODE_IP):29999 --mirror-target=http://$(NODE_IP):30021' ]
  grep -qx -- '--registry=https://gitea.example.internal' "$W/a"
  grep -qx -- '--registry=https://registry.example.internal:5000' "$W/a"
  grep -qx -- '--prepend-existing' "$W/a"
  ! grep -q -- '--dial-timeout' "$W/a" || false
  # watch off: a pause container keeps the pod up.
  [ "$(jq -r 'select(.kind == "DaemonSet") | [.spec.template.spec.containers[] | .name + "=" + .image] | join(",")' "$W/r.json")" = pause=registry.k8s.io/pause:3.10 ]
  # Pinned by digest; no cleanup hook when turned off.
  jq -e -s '[.[] | .. | objects | select(has("image")) | .image | select(startswith("ghcr.io/nodeprobe/"))] | length > 0 and
    all(. == "ghcr.io/nodeprobe/nodeprobe:0.1.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")' "$W/r.json"
  [ "$(jq -r 'select(.metadata.annotations["helm.sh/hook"]?) | .kind' "$W/r.json")" = "" ]
}

@test "mirror: uninstall cleanup is a pre-delete hook: stop, clean every node, wait" {
  tpl >"$W/r.json"
  jq -c 'select(.metadata.annotations["helm.sh/hook"]?)' "$W/r.json" >"$W/hooks.json"
  # All pre-delete, removed once they succeeded (and before a retry creates them again).
  jq -e -s 'length == 6 and all(.[]; .metadata.annotations["helm.sh/hook"] == "pre-delete"
    and .metadata.annotations["helm.sh/hook-delete-policy"] == "before-hook-creation,hook-succeeded")' "$W/hooks.json"
  # Weight order: RBAC, the stop Job, the cleanup DaemonSet, the wait Job.
  [ "$(jq -r -s 'sort_by(.metadata.annotations["helm.sh/hook-weight"] | tonumber) | map(.kind + "/" + .metadata.name) | join(" ")' "$W/hooks.json")" = \
    "ServiceAccount/nodeprobe-mirror-cleanup Role/nodeprobe-mirror-cleanup RoleBinding/nodeprobe-mirror-cleanup Job/nodeprobe-mirror-cleanup-stop DaemonSet/nodeprobe-mirror-cleanup Job/nodeprobe-mirror-cleanup-wait" ]
  one Job '.metadata.name == "nodeprobe-mirror-cleanup-stop" and .spec.template.spec.containers[0].args ==
    ["--namespace=nodeprobe", "delete", "daemonset", "nodeprobe-mirror", "--ignore-not-found", "--cascade=foreground", "--wait=true", "--timeout=10m"]' \
    <(jq 'select(.metadata.name == "nodeprobe-mirror-cleanup-stop")' "$W/hooks.json")
  one Job '.spec.template.spec.containers[0].args == ["--namespace=nodeprobe", "rollout", "status", "daemonset/nodeprobe-mirror-cleanup", "--timeout=10m"]' \
    <(jq 'select(.metadata.name == "nodeprobe-mirror-cleanup-wait")' "$W/hooks.json")
  # The Role reaches only the two DaemonSets, by name.
  one Role '.rules[0].resourceNames == ["nodeprobe-mirror", "nodeprobe-mirror-cleanup"]' "$W/hooks.json"
  # The cleanup DaemonSet is the configure DaemonSet's pod with `cleanup` for `configure`, under
  # its own selector (it never adopts the configure pods).
  jq 'select(.kind == "DaemonSet")' "$W/r.json" >"$W/ds.json"
  diff <(jq -S 'select(.metadata.name == "nodeprobe-mirror") | .spec.template.spec | del(.initContainers[0].args, .initContainers[0].name, .initContainers[0].env, .containers)' "$W/ds.json") \
       <(jq -S 'select(.metadata.name == "nodeprobe-mirror-cleanup") | .spec.template.spec | del(.initContainers[0].args, .initContainers[0].name, .containers)' "$W/ds.json")
  # Its pods only wait once clean (pause), nothing keeps the configuration in place there.
  [ "$(jq -r 'select(.metadata.name == "nodeprobe-mirror-cleanup") | [.spec.template.spec.containers[].name] | join(",")' "$W/ds.json")" = pause ]
  [ "$(jq -r '.spec.selector.matchLabels["app.kubernetes.io/component"]' "$W/ds.json" | paste -sd,)" = mirror,mirror-cleanup-node ]
  # Nothing runs on pod stop: no lifecycle hooks anywhere.
  ! grep -q -e preStop -e postStart "$W/r.json" || false
}

@test "every object name fits Kubernetes' limits with the longest release name" {
  # A Job's name is also its pods' job-name label (63 at most: the API refuses the Job, and a
  # pre-delete hook that cannot be created stops helm uninstall); a Service's is a DNS label.
  local long
  long=$(printf 'n%.0s' {1..63})
  for f in "" "--set fullnameOverride=$long"; do
    # shellcheck disable=SC2086
    tpl -f "$V/ha-monitoring.yaml" --set mirror.enabled=true $f >"$W/r.json"
    jq -e -s 'map(select(.kind == "Job")) | length == 2' "$W/r.json" >/dev/null
    jq -r 'select(((.kind | test("^(Job|Service|DaemonSet|Deployment)$")) and (.metadata.name | length) > 63)
      or ((.metadata.name | length) > 253)) | "\(.kind) \(.metadata.name): \(.metadata.name | length) characters"' \
      "$W/r.json" >"$W/long"
    [ ! -s "$W/long" ] || { cat "$W/long" >&2; return 1; }
  done
}

@test "reload: cluster or namespaced RBAC, HA Lease, monitors, PDB, NetworkPolicy" {
  tpl >"$W/r.json"
  one ClusterRoleBinding '.subjects == [{"kind": "ServiceAccount", "name": "nodeprobe-reload", "namespace": "nodeprobe"}]' "$W/r.json"
  one Deployment '.spec.replicas == 1 and .spec.strategy.type == "Recreate" and .spec.template.spec.containers[0].args == ["--listen=:9090"]' "$W/r.json"
  [ "$(jq -r 'select(.kind | test("Monitor$|NetworkPolicy")) | .kind' "$W/r.json")" = "" ]
  one PodDisruptionBudget '.spec.maxUnavailable == 1' "$W/r.json"
  tpl -f "$V/namespaced.yaml" >"$W/r.json"
  [ "$(jq -r 'select(.kind | test("^Cluster")) | .kind' "$W/r.json")" = "" ]
  [ "$(jq -r 'select(.kind == "Role") | .metadata.namespace' "$W/r.json" | paste -sd,)" = shop,billing ]
  [ "$(jq -r 'select(.kind == "RoleBinding") | .subjects[0].namespace' "$W/r.json" | sort -u)" = nodeprobe ]
  one Deployment '.spec.template.spec.containers[0].args == ["--listen=:9090", "--namespace=shop", "--namespace=billing"]' "$W/r.json"
  tpl --set reload.rbac.scope=namespaced --set mirror.enabled=false >"$W/r.json"
  one Role '.metadata.namespace == "nodeprobe"' "$W/r.json"
  tpl -f "$V/ha-monitoring.yaml" >"$W/r.json"
  one Deployment '.spec.replicas == 2 and .spec.strategy.type == "RollingUpdate" and (.spec.template.spec.containers[0].args | index("--enable-ha") != null)
    and ([.spec.template.spec.containers[0].env[].name] == ["POD_NAME", "POD_NAMESPACE", "NODEPROBE_RELOAD_LEASE_OWNER"])
    and (.spec.template.spec.containers[0].env[2].value == .metadata.name)' "$W/r.json"
  one RoleBinding '.roleRef.name == "nodeprobe-reload-leader-election" and .metadata.namespace == "nodeprobe"' "$W/r.json"
  # the Lease's owner (NODEPROBE_RELOAD_LEASE_OWNER) is read by a grant of the leader-election
  # Role, by name: namespaced grants elsewhere (shop, billing) do not cover the release namespace
  tpl -f "$V/namespaced.yaml" --set reload.replicas=2 --set reload.ha.enabled=true >"$W/ha.json"
  one Role '.metadata.name == "nodeprobe-reload-leader-election" and .metadata.namespace == "nodeprobe"
    and .rules[1] == {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"], "resourceNames": ["nodeprobe-reload"]}' \
    <(jq 'select(.metadata.name == "nodeprobe-reload-leader-election")' "$W/ha.json")
  check "$W/ha.json"
  one ServiceMonitor '.metadata.labels.release == "kube-prometheus-stack" and .spec.endpoints[0].port == "http" and .spec.endpoints[0].path == "/metrics"' "$W/r.json"
  one PodMonitor '.spec.podMetricsEndpoints[0].port == "http"' "$W/r.json"
  one Service '.spec.ports[0].port == 9090' "$W/r.json"
  # The policy selects the reload pod, lets in only the metrics port from the monitoring
  # namespace and lets out only the API server addresses and ports.
  one NetworkPolicy '.spec.policyTypes == ["Ingress", "Egress"]
    and .spec.podSelector.matchLabels["app.kubernetes.io/component"] == "reload"
    and .spec.ingress == [{"ports": [{"port": "http", "protocol": "TCP"}], "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]}]
    and .spec.egress == [{"to": [{"ipBlock": {"cidr": "10.0.0.10/32"}}, {"ipBlock": {"cidr": "10.0.0.11/32"}}],
                          "ports": [{"port": 443, "protocol": "TCP"}, {"port": 6443, "protocol": "TCP"}]}]' "$W/r.json"
  [ "$(jq -r .kind "$W/r.json" | grep -c DaemonSet)" -eq 0 ]
}

@test "reload: the CPU request is the CPU limit, in the chart and in k8s/reload alike (issue 30)" {
  # Under contention the kubelet weighs a container by its CPU request (cpu.shares = request *
  # 1024 / 1000, or the cgroup v2 cpu.weight from it): a 10m request, under a 200m limit, got about
  # 1% of a busy core and took a minute to open its watches (make bench, reload-latency).
  tpl >"$W/r.json"
  "$T/render" "$NP_ROOT/k8s/reload" >"$W/k.json"
  for f in "$W/r.json" "$W/k.json"; do
    one Deployment '.spec.template.spec.containers[0].resources.requests.cpu == .spec.template.spec.containers[0].resources.limits.cpu' "$f"
  done
  [ "$(jq -c 'select(.kind == "Deployment") | .spec.template.spec.containers[0].resources' "$W/r.json")" = \
    "$(jq -c 'select(.kind == "Deployment") | .spec.template.spec.containers[0].resources' "$W/k.json")" ]
}

@test "the arguments the chart passes are accepted by the binaries and do the job" {
  [ -x "$BUILD/nodeprobe-mirror" ]
  [ -x "$BUILD/nodeprobe-reload" ]
  local v path cleaned=0
  for v in default distro-talos distro-k3s distro-microk8s spegel-v0.7 seed-29999; do
    tpl -f "$V/$v.yaml" >"$W/r.json"
    path=$(ds_args "$W/r.json" configure | sed -n 's/^--config-path=//p')
    rm -rf "$W/root" && mkdir -p "$W/root$path/example.org"
    printf 'server = "https://example.org"\n' >"$W/root$path/example.org/hosts.toml"
    cp -a "$W/root" "$W/before"
    # The kubelet's $(NODE_IP) expansion and the host path under $W/root, done by sed.
    mapfile -t a < <(ds_args "$W/r.json" configure | sed -e 's|\$(NODE_IP)|10.0.0.5|' -e "s|^--config-path=|--config-path=$W/root|" \
      -e "s|^--basic-auth-dir=.*|--basic-auth-dir=$W/auth|")
    mkdir -p "$W/auth" && printf u >"$W/auth/username" && printf p >"$W/auth/password"
    "$BUILD/nodeprobe-mirror" "${a[@]}" || { echo "$v: ${a[*]}" >&2; return 1; }
    local first
    first=$(ds_args "$W/r.json" configure | sed -n 's|^--mirror-target=||p' | head -1 | sed 's|\$(NODE_IP)|10.0.0.5|')
    grep -rqx "\[host.'$first'\]" "$W/root$path" || { echo "$v: no host $first under $path" >&2; return 1; }
    "$BUILD/nodeprobe-mirror" check --config-path="$W/root$path"
    # The pre-delete hook's cleanup brings the directory back to what it was.
    if jq -e -s 'any(.[]; .metadata.name == "nodeprobe-mirror-cleanup" and .kind == "DaemonSet")' "$W/r.json" >/dev/null; then
      cleaned=$((cleaned + 1))
      mapfile -t a < <(jq -r 'select(.metadata.name == "nodeprobe-mirror-cleanup" and .kind == "DaemonSet") | .spec.template.spec.initContainers[0].args[]' "$W/r.json" |
        sed "s|^--config-path=|--config-path=$W/root|")
      "$BUILD/nodeprobe-mirror" "${a[@]}"
      diff -r "$W/before" "$W/root"
    fi
    rm -rf "$W/before"
  done
  [ "$cleaned" -eq 5 ]
  # watch, as the Talos values run it: a re-sync that removes a registry directory of ours is
  # repaired; SIGTERM ends it with 0 and nothing touched.
  tpl -f "$V/distro-talos.yaml" >"$W/r.json"
  path=$(ds_args "$W/r.json" watch | sed -n 's/^--config-path=//p')
  [ "$path" = /etc/cri/conf.d/hosts ]
  rm -rf "$W/root" && mkdir -p "$W/root$path"
  mapfile -t a < <(ds_args "$W/r.json" watch | sed -e 's|\$(NODE_IP)|10.0.0.5|' -e "s|^--config-path=|--config-path=$W/root|")
  "$BUILD/nodeprobe-mirror" "${a[@]}" 2>"$W/watch.log" &
  local pid=$! i
  for i in $(seq 100); do [ -f "$W/root$path/docker.io/hosts.toml" ] && break; sleep 0.1; done
  cp "$W/root$path/docker.io/hosts.toml" "$W/want.toml"
  sleep 0.3
  rm -rf "$W/root$path/docker.io"
  for i in $(seq 100); do [ -f "$W/root$path/docker.io/hosts.toml" ] && break; sleep 0.1; done
  kill -TERM "$pid"
  wait "$pid"
  cmp "$W/want.toml" "$W/root$path/docker.io/hosts.toml"
  grep -q 'docker.io' "$W/watch.log"
  # nodeprobe-reload's command lines parse (exit 2 would be a bad command line): with no
  # cluster to talk to, it gets as far as looking for one. --enable-ha is issue 9's.
  for v in default namespaced ha-monitoring; do
    tpl -f "$V/$v.yaml" >"$W/r.json"
    mapfile -t a < <(jq -r 'select(.kind == "Deployment") | .spec.template.spec.containers[0].args[]' "$W/r.json")
    if printf '%s\n' "${a[@]}" | grep -qx -- --enable-ha && ! "$BUILD/nodeprobe-reload" --help | grep -q -- --enable-ha; then
      echo "# nodeprobe-reload has no --enable-ha yet (issue 9): $v's command line not run" >&3
      continue
    fi
    run env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT KUBECONFIG=/nonexistent \
      "$BUILD/nodeprobe-reload" "${a[@]}" --mode once
    [ "$status" -eq 1 ] || { echo "$v: ${a[*]}: exit $status: $output" >&2; return 1; }
    [[ $output == *"not in a cluster"* ]]
  done
}

@test "OCI: helm package, helm push to a local registry, helm pull and template of the pulled chart" {
  [ "$(id -u)" -eq 0 ] || skip "needs root for a network namespace"
  command -v docker-registry >/dev/null || skip "docker-registry not installed"
  source "$NP_ROOT/test/e2e/mirror-env.bash"
  E2E=$(mktemp -d /tmp/np-chart-oci.XXXXXX)
  NS=np-chart-$$-$RANDOM
  echo "$NS" >"$E2E/netns"
  : >"$E2E/pids"
  ip netns add "$NS"
  e2e_in ip link set lo up
  e2e_start_registry
  local log=$BUILD/chart-oci-transcript.txt reg=127.0.0.1:$E2E_REG_PORT
  # helm's own state (registry config, cache) stays in the scratch directory.
  export HELM_CONFIG_HOME=$E2E/helm/config HELM_CACHE_HOME=$E2E/helm/cache HELM_DATA_HOME=$E2E/helm/data
  : >"$log"
  step() { echo "\$ ${*}" >>"$log"; e2e_in "$@" >>"$log" 2>&1; }
  step helm version --short
  step helm package "$C" -d "$E2E/pkg"
  [ -f "$E2E/pkg/nodeprobe-0.1.0.tgz" ]
  step helm push "$E2E/pkg/nodeprobe-0.1.0.tgz" "oci://$reg/charts" --plain-http
  grep -q "^Pushed: $reg/charts/nodeprobe:0.1.0" "$log"
  # The registry holds it as an OCI artifact of Helm's media type.
  step curl -sf -H 'Accept: application/vnd.oci.image.manifest.v1+json' "http://$reg/v2/charts/nodeprobe/manifests/0.1.0"
  echo >>"$log"
  grep -q '"mediaType":"application/vnd.cncf.helm.config.v1+json"' "$log"
  mkdir "$E2E/pulled"
  step helm pull "oci://$reg/charts/nodeprobe" --version 0.1.0 --plain-http -d "$E2E/pulled"
  cmp "$E2E/pkg/nodeprobe-0.1.0.tgz" "$E2E/pulled/nodeprobe-0.1.0.tgz"
  step helm template nodeprobe "$E2E/pulled/nodeprobe-0.1.0.tgz" -n nodeprobe --set mirror.distro=talos
  e2e_in helm template nodeprobe "$E2E/pulled/nodeprobe-0.1.0.tgz" -n nodeprobe --set mirror.distro=talos |
    KUBECONFIG=/dev/null kubectl patch --local -f - --type merge -p '{}' -o json >"$W/pulled.json"
  # The pulled chart renders what the working tree renders, and passes the same checks.
  tpl --set mirror.distro=talos >"$W/tree.json"
  diff <(jq -S . "$W/tree.json") <(jq -S . "$W/pulled.json")
  check "$W/pulled.json"
  # Straight from the registry, too.
  e2e_in helm template nodeprobe "oci://$reg/charts/nodeprobe" --version 0.1.0 --plain-http -n nodeprobe --set mirror.distro=talos |
    KUBECONFIG=/dev/null kubectl patch --local -f - --type merge -p '{}' -o json >"$W/direct.json"
  diff <(jq -S . "$W/tree.json") <(jq -S . "$W/direct.json")
  # The registry saw the push and the pulls.
  grep -q 'PUT /v2/charts/nodeprobe/manifests/0.1.0' "$E2E/registry.log"
  [ "$(grep -c 'GET /v2/charts/nodeprobe/blobs/' "$E2E/registry.log")" -ge 2 ]
  echo "# transcript: $log" >&3
}

@test "every option and subcommand the chart passes is one the binary's man page documents" {
  local v
  for v in "$V"/*.yaml; do tpl -f "$v"; done >"$W/all.json"
  local bin man missing=0 word pending
  for bin in nodeprobe-mirror nodeprobe-reload; do
    man=hooks/${bin#nodeprobe-}/$bin.8
    jq -r --arg c "/usr/bin/$bin" '.. | objects | select(.command? == [$c]) | .args[]' "$W/all.json" |
      sed 's/=.*//' | sort -u >"$W/words"
    [ -s "$W/words" ] || { echo "no container runs $bin" >&2; return 1; }
    while read -r word; do
      sed 's/\\-/-/g' "$man" | grep -qw -- "$word" && continue
      # Reloader's --enable-ha comes with issue 9 (HA); the chart passes it only with reload.ha.enabled.
      if [ "$word" = --enable-ha ]; then pending+=" $word"; continue; fi
      echo "$bin: '$word' not in $man" >&2
      missing=1
    done <"$W/words"
  done
  [ -z "${pending:-}" ] || echo "# not yet in nodeprobe-reload.8 (issue 9):$pending" >&3
  [ "$missing" -eq 0 ]
}

@test "NOTES: what was installed, where each node's mirror points, and the uninstall behaviour" {
  command -v helm4 >/dev/null || skip "helm4 not installed (helm 3 cannot render NOTES without a cluster)"
  helm4 install nodeprobe "$C" -n nodeprobe --dry-run=client -f "$V/distro-talos.yaml" >"$W/out" 2>&1
  sed -n '/^NOTES:/,$p' "$W/out" >"$W/notes"
  grep -qF -- '- nodeprobe-mirror on every node: /etc/cri/conf.d/hosts (talos) -> http://$(NODE_IP):30020, then upstream.' "$W/notes"
  grep -q 'pre-delete hook that restores' "$W/notes"
  helm4 install nodeprobe "$C" -n nodeprobe --dry-run=client -f "$V/seed-29999.yaml" | sed -n '/^NOTES:/,$p' >"$W/notes"
  grep -qF 'http://$(NODE_IP):29999, http://$(NODE_IP):30021' "$W/notes"
  grep -q "leaves the nodes' hosts.toml files as they are" "$W/notes"
}

@test "hostile strings in every string value: refused by the schema by path, or the same objects" {
  # test/k8s/chart-fuzz enumerates every string value of values.yaml (a new value is covered
  # as it is added) and sets newlines with '---', block-scalar headers (' |1'), '{{', quotes,
  # YAML indicators and 10 KB strings into each; every render must fail the schema naming the
  # value's path, or render exactly the default's objects (kind, namespace, name).
  local h
  for h in helm helm4; do
    command -v $h >/dev/null || { echo "# $h not installed: fuzz with it skipped" >&3; continue; }
    "$T/chart-fuzz" "$C" --helm $h --base "$T/chart-fuzz-all-on.yaml" >"$W/fuzz.txt" ||
      { cat "$W/fuzz.txt" >&2; return 1; }
    grep '^#' "$W/fuzz.txt" >&3
  done
  # The fuzz sees an injection: the chart with basicAuthSecretName unquoted and unchecked.
  cp -r "$C" "$W/c"
  sed -i 's/secretName: {{ $m.basicAuthSecretName | quote }}/secretName: {{ $m.basicAuthSecretName }}/' \
    "$W/c/templates/mirror-daemonset.yaml"
  jq '.properties.mirror.properties.basicAuthSecretName = {"type": "string"}' "$C/values.schema.json" >"$W/c/values.schema.json"
  run "$T/chart-fuzz" "$W/c" --only mirror.basicAuthSecretName
  [ "$status" -eq 1 ]
  [[ $output == *'mirror.basicAuthSecretName = "x\n---\napiVersion: v1\nkind: Secret'*"objects differ: extra [('Secret', 'nodeprobe', 'injected')]"* ]]
}

# same_class_args FILE: the devices DaemonSet's nodeprobe init container (labels) has the plugin's
# class options, in order, and the host's /dev read-only.
same_class_args() {
  jq -e -s '[.[] | select(.kind == "DaemonSet") | .spec.template.spec
      | select(any(.containers[]; .name == "devices"))] | length == 1 and (.[0] |
    def cls: [.args[] | select(test("^--(domain|preset|device|classes|shared-dev-num|allocation-policy)="))];
    (.initContainers[] | select(.name == "labels")) as $l
    | (.containers[] | select(.name == "devices")) as $d
    | ($l | cls) == ($d | cls) and ($l | cls | length) > 0
    and ($l.command == ["/usr/bin/nodeprobe"])
    and any($l.volumeMounts[]; .mountPath == "/host/dev" and .readOnly == true))' "$1" >/dev/null ||
    { echo "labels and devices disagree in $1:" >&2; jq -c 'select(.kind == "DaemonSet") | .spec.template.spec | [.initContainers[]?, .containers[]] | map({name, args})' "$1" >&2; return 1; }
}

@test "devices: nodeprobe's labels init container gets the plugin's class options and /dev read-only" {
  tpl --set devices.enabled=true --set devices.domain=nodeprobe.io --set 'devices.presets={kvm,fuse}' >"$W/a.json"
  same_class_args "$W/a.json"
  ds_args "$W/a.json" labels | grep -qx -- '--output-name=nodeprobe-devices'
  tpl --set devices.enabled=true --set 'devices.classes[0].name=zigbee' \
    --set 'devices.classes[0].spec.preset=serial' --set devices.sharedDevNum=3 >"$W/b.json"
  same_class_args "$W/b.json"
  ds_args "$W/b.json" labels | grep -qx -- '--classes=/etc/nodeprobe-devices/classes.yaml'
  tpl --set devices.enabled=true --set 'devices.presets={kvm}' --set devices.labels.enabled=false >"$W/c.json"
  [ -z "$(ds_args "$W/c.json" labels)" ]
}

# dev_sys FILE: "sys" when the devices DaemonSet mounts the host's /sys (volume, mounts and both
# --sys-root/--sysfs, all or none), "none" when it does not; anything else fails.
dev_sys() {
  jq -r -s '[.[] | select(.kind == "DaemonSet") | .spec.template.spec
      | select(any(.containers[]; .name == "devices"))][0]
    | [any(.volumes[]; .hostPath.path == "/sys"),
       any(.containers[] | select(.name == "devices") | .volumeMounts[]; .mountPath == "/host/sys"),
       any(.containers[] | select(.name == "devices") | .args[]; . == "--sys-root=/host/sys"),
       any(.initContainers[] | select(.name == "labels") | .volumeMounts[]; .mountPath == "/host/sys"),
       any(.initContainers[] | select(.name == "labels") | .args[]; . == "--sysfs=/host/sys")]
    | if all then "sys" elif any then "partly: \(.)" else "none" end' "$1"
}

@test "devices: the host's /sys is mounted only when a class reads it; hostPaths that are not ours are type Directory" {
  local c=(--set devices.enabled=true) f
  want() { # SYS|none ARGS...
    local w=$1; shift
    tpl "${c[@]}" "$@" >"$W/d.json"
    [ "$(dev_sys "$W/d.json")" = "$w" ] || { echo "$*: $(dev_sys "$W/d.json"), want $w" >&2; return 1; }
  }
  want none --set 'devices.presets={kvm,tun,fuse,serial,video,snd}'
  want sys --set 'devices.presets={kvm,dri}'
  want sys --set 'devices.presets={intel-gpu}'
  want sys --set 'devices.classes[0].name=z' --set 'devices.classes[0].spec.matchFeatures[0].feature=usb.device'
  want sys --set 'devices.classes[0].name=g' --set 'devices.classes[0].spec.preset=intel-gpu'
  want none --set 'devices.classes[0].name=k' --set 'devices.classes[0].spec.preset=kvm'
  want sys --set 'devices.classes[0].name=u' --set 'devices.classes[0].spec.groups[0].usb[0].vendor=10c4' \
    --set 'devices.classes[0].spec.groups[0].usb[0].product=ea60'
  want none --set 'devices.classes[0].name=p' --set 'devices.classes[0].spec.groups[0].paths[0].path=/dev/ttyUSB*'
  want sys --set 'devices.classes[0].name=m' --set 'devices.classes[0].spec.groups[0].paths[0].path=/sys/class/tty' \
    --set 'devices.classes[0].spec.groups[0].paths[0].type=Mount'
  # every hostPath is Directory (nothing created on the host) but the CDI spec directory, which
  # each CDI writer creates when absent; each has a comment saying why it is there
  for f in "$W/d.json"; do
    jq -e -s '[.[] | select(.kind == "DaemonSet") | .spec.template.spec
        | select(any(.containers[]; .name == "devices")) | .volumes[] | select(.hostPath)
        | {name, type: .hostPath.type}] | map(select(.type != "Directory")) == [{"name": "cdi", "type": "DirectoryOrCreate"}]' "$f" >/dev/null
  done
  for v in dev sys plugins features-d cdi; do
    grep -B3 -- "- name: $v\$" "$C/templates/devices-daemonset.yaml" | grep -q '^ *#' ||
      { echo "hostPath $v has no comment" >&2; return 1; }
  done
}

@test "devices: api: dra (issue 28): a token for the plugin only, RBAC on slices and claims, DeviceClasses; device-plugin-only stays token-free" {
  tpl --set devices.enabled=true --set 'devices.presets={intel-gpu}' --set devices.api=dra \
    --set 'devices.classes[0].name=zigbee' --set 'devices.classes[0].spec.preset=serial' \
    --set 'devices.classes[1].name=cam' --set 'devices.classes[1].spec.preset=video' \
    --set 'devices.classes[1].spec.api=device-plugin' --set devices.dra.extendedResourceName=true >"$W/d.json"
  check "$W/d.json"
  # the classes file holds both documents, each with its own spec.api (a join without the newline
  # ran "preset: serial---" into one document), and the binary takes it
  jq -r 'select(.kind == "ConfigMap" and .metadata.name == "nodeprobe-devices") | .data["classes.yaml"]' "$W/d.json" >"$W/classes.yaml"
  [ "$(grep -c '^---$' "$W/classes.yaml")" = 1 ]
  "$BUILD/nodeprobe-devices" --list --classes "$W/classes.yaml" --dev-root "$W" --sys-root "$W" >/dev/null
  # one DeviceClass per DRA class, CEL on our driver and class; cam stays a device plugin
  [ "$(jq -r 'select(.kind == "DeviceClass") | .metadata.name' "$W/d.json" | sort | tr '\n' ' ')" = "i915.nodeprobe.io zigbee.nodeprobe.io " ]
  [ "$(jq -r 'select(.kind == "DeviceClass" and .metadata.name == "zigbee.nodeprobe.io") | .spec.selectors[0].cel.expression' "$W/d.json")" = 'device.driver == "nodeprobe.io" && device.attributes["nodeprobe.io"].class == "zigbee"' ]
  [ "$(jq -r 'select(.kind == "DeviceClass" and .metadata.name == "i915.nodeprobe.io") | .spec.extendedResourceName' "$W/d.json")" = gpu.intel.com/i915 ]
  ds_args "$W/d.json" devices | grep -qx -- '--api=dra'
  ds_args "$W/d.json" devices | grep -qx -- '--dra-driver=nodeprobe.io'
  ds_args "$W/d.json" devices | grep -qx -- '--plugins-registry=/var/lib/kubelet/plugins_registry'
  jq -s -e '.[] | select(.kind == "DaemonSet" and .metadata.name == "nodeprobe-devices") | .spec.template.spec |
    .automountServiceAccountToken == false and .serviceAccountName == "nodeprobe-devices" and
    ((.containers[] | select(.name == "devices") | .volumeMounts | map(.name) | index("sa-token")) != null) and
    ((.initContainers[] | select(.name == "labels") | .volumeMounts | map(.name) | index("sa-token")) == null) and
    ((.containers[] | select(.name == "devices") | .env[0].valueFrom.fieldRef.fieldPath) == "spec.nodeName")' "$W/d.json" >/dev/null
  # the chart's arguments are the binary's: --help names every one
  for a in api dra-driver plugins-registry dra-plugins-dir; do
    "$BUILD/nodeprobe-devices" --help | grep -q -- "--$a"
  done
  # a class name with '_' (the values schema takes it) is no DNS subdomain: '-' in the
  # DeviceClass name, which ends in an alphanumeric
  tpl --set devices.enabled=true --set devices.api=dra --set 'devices.classes[0].name=My_Dev' \
    --set 'devices.classes[0].spec.preset=serial' >"$W/u.json"
  [ "$(jq -r 'select(.kind == "DeviceClass") | .metadata.name' "$W/u.json")" = my-dev.nodeprobe.io ]
  # device-plugin only: no ServiceAccount, no role, no token
  tpl --set devices.enabled=true --set 'devices.presets={kvm}' >"$W/p.json"
  check "$W/p.json"
  [ "$(jq -r 'select(.metadata.name | test("devices")) | .kind' "$W/p.json" | sort -u | tr '\n' ' ')" = "DaemonSet " ]
  jq -s -e '.[] | select(.kind == "DaemonSet" and .metadata.name == "nodeprobe-devices") | .spec.template.spec |
    .automountServiceAccountToken == false and .serviceAccountName == null' "$W/p.json" >/dev/null
}

@test "devices: DRA slices policy (issue 28): our ServiceAccount writes only its node's slices of its driver; auto, true, false" {
  dra=(--set devices.enabled=true --set devices.api=dra --set 'devices.classes[0].name=zigbee' --set 'devices.classes[0].spec.preset=serial')
  tpl "${dra[@]}" --set devices.dra.driver=dev.example.org >"$W/d.json"
  check "$W/d.json"
  vap() { jq -c --arg k "$1" 'select(.kind == $k)' "$W/d.json"; }
  [ "$(vap ValidatingAdmissionPolicy | jq -r .metadata.name)" = nodeprobe-devices-slices ]
  # the binding denies, for the policy it names
  [ "$(vap ValidatingAdmissionPolicyBinding | jq -c '[.metadata.name, .spec]')" = '["nodeprobe-devices-slices",{"policyName":"nodeprobe-devices-slices","validationActions":["Deny"]}]' ]
  vap ValidatingAdmissionPolicy | jq -r .spec >"$W/vap.json"
  # writes of slices, any version, a failed expression denies
  [ "$(jq -c '[.failurePolicy, .matchConstraints.resourceRules]' "$W/vap.json")" = '["Fail",[{"apiGroups":["resource.k8s.io"],"apiVersions":["*"],"operations":["CREATE","UPDATE","DELETE"],"resources":["resourceslices"]}]]' ]
  # only our ServiceAccount, by the name the DaemonSet runs as
  sa=$(jq -r 'select(.kind == "DaemonSet" and .metadata.name == "nodeprobe-devices") | "system:serviceaccount:\(.metadata.namespace):\(.spec.template.spec.serviceAccountName)"' "$W/d.json")
  [ "$(jq -r '.matchConditions | length' "$W/vap.json")" = 1 ]
  [ "$(jq -r '.matchConditions[0].expression' "$W/vap.json")" = "request.userInfo.username == \"$sa\"" ]
  # the node: the token's node-name extra, exactly one; the slice: the object, the old one on DELETE
  [ "$(jq -r '.variables[] | "\(.name)=\(.expression)"' "$W/vap.json")" = 'nodeNames=request.userInfo.extra[?"authentication.kubernetes.io/node-name"].orValue([])
nodeName=variables.nodeNames.size() == 1 ? variables.nodeNames[0] : ""
slice=request.operation == "DELETE" ? oldObject : object' ]
  # each validation: a node, spec.nodeName that node, spec.driver ours
  [ "$(jq -r '.validations[].expression' "$W/vap.json")" = 'variables.nodeName != ""
variables.slice.spec.?nodeName.orValue("") == variables.nodeName
variables.slice.spec.driver == "dev.example.org"' ]
  [ "$(jq '[.validations[] | select((.message // .messageExpression // "") == "")] | length' "$W/vap.json")" = 0 ]
  # kubectl takes every DRA object (kinds and scopes from the fake API server's discovery)
  jq 'select(.metadata.name | test("devices|dev.example.org$"))' "$W/d.json" >"$W/dra.json"
  fake_dry_run "$W/dra.json" >"$W/dry.txt"
  [ "$(sort "$W/dry.txt" | tr '\n' ' ')" = "clusterrole.rbac.authorization.k8s.io/nodeprobe-devices-dra clusterrolebinding.rbac.authorization.k8s.io/nodeprobe-devices-dra configmap/nodeprobe-devices daemonset.apps/nodeprobe-devices deviceclass.resource.k8s.io/zigbee.dev.example.org serviceaccount/nodeprobe-devices validatingadmissionpolicy.admissionregistration.k8s.io/nodeprobe-devices-slices validatingadmissionpolicybinding.admissionregistration.k8s.io/nodeprobe-devices-slices " ]
  # auto: only where admissionregistration.k8s.io/v1 exists (1.30+); true and false force it
  n() { tpl "${dra[@]}" "$@" | jq -r 'select(.kind | test("^ValidatingAdmissionPolicy")) | .kind' | wc -l; }
  [ "$(n --kube-version 1.29.0)" = 0 ]
  [ "$(n --kube-version 1.29.0 --api-versions admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy)" = 2 ]
  [ "$(n --kube-version 1.29.0 --set devices.dra.slicePolicy=true)" = 2 ]
  [ "$(n --set devices.dra.slicePolicy=false)" = 0 ]
  run helm template nodeprobe "$C" "${dra[@]}" --set devices.dra.slicePolicy=yes
  [ "$status" -ne 0 ]
  [[ $output == *slicePolicy* ]]
  # device-plugin only: no policy
  [ "$(tpl --set devices.enabled=true --set 'devices.presets={kvm}' | jq -r 'select(.kind | test("^ValidatingAdmissionPolicy")) | .kind' | wc -l)" = 0 ]
}

@test "devices: DRA DeviceClasses (issue 28): YAML-looking class names stay strings, every object passes the schema check, bad values refused" {
  tpl --set devices.enabled=true --set devices.api=dra --set devices.domain=nodeprobe.io \
    --set 'devices.classes[0].name=on' --set 'devices.classes[0].spec.preset=serial' \
    --set 'devices.classes[1].name=1e3' --set 'devices.classes[1].spec.preset=video' \
    --set 'devices.classes[1].spec.resource=video.example.org/cam.v2' \
    --set devices.dra.driver=dra.example.org --set devices.dra.extendedResourceName=true >"$W/d.json"
  check "$W/d.json"
  [ "$(jq -c -s '[.[] | select(.kind == "DeviceClass") | [.metadata.name, .spec.selectors[0].cel.expression, .spec.extendedResourceName]] | sort' "$W/d.json")" = \
    '[["1e3.dra.example.org","device.driver == \"dra.example.org\" && device.attributes[\"dra.example.org\"].class == \"1e3\"","video.example.org/cam.v2"],["on.dra.example.org","device.driver == \"dra.example.org\" && device.attributes[\"dra.example.org\"].class == \"on\"","nodeprobe.io/on"]]' ]
  # the classes file the binary reads keeps them strings too
  jq -r 'select(.kind == "ConfigMap" and .metadata.name == "nodeprobe-devices") | .data["classes.yaml"]' "$W/d.json" >"$W/classes.yaml"
  "$BUILD/nodeprobe-devices" --list --classes "$W/classes.yaml" --dev-root "$W" --sys-root "$W" >/dev/null
  # the schema refuses what would make a bad DeviceClass or policy
  for bad in 'devices.dra.driver=Bad_Driver' 'devices.dra.extendedResourceName=yes' 'devices.classes[0].spec.api=DRA' \
    'devices.classes[0].spec.resource=no-slash'; do
    run helm template nodeprobe "$C" --set devices.enabled=true --set 'devices.classes[0].name=a' \
      --set 'devices.classes[0].spec.preset=serial' --set "$bad"
    [ "$status" -ne 0 ] && [[ $output == *values* || $output == *schema* ]] || { echo "$bad: accepted: $output" >&2; return 1; }
  done
}
