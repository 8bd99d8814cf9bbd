#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# k8s/: every kustomization renders offline with `kubectl kustomize`, and the rendered objects
# follow the rules in test/k8s/check-manifests; RBAC equals what nodeprobe-reload calls; the
# Flux, helmfile and Helm-values forms say the same as the kustomize forms. Our components
# and post-renderer are applied to the REAL published NFD and Spegel charts and NFD's kustomize
# deployment in ../shared/charts (rendered with the pinned helm), when that directory exists.
load helpers

K=$NP_ROOT/k8s
T=$NP_ROOT/test/k8s
OURS=ghcr.io/nodeprobe/

setup() {
  cd "$NP_ROOT"
  # kubectl (kustomize) is no Debian bookworm package, so install-deps cannot provide it.
  command -v kubectl >/dev/null ||
    { echo "kubectl not found: k8s.bats renders every manifest with \`kubectl kustomize\`" >&2; return 1; }
  W=$(mktemp -d)
}

teardown() {
  rm -rf "$W"
}

render() { "$T/render" "$@"; }

# json: YAML objects on stdin as a stream of JSON objects (test/k8s/render's conversion).
json() { KUBECONFIG=/dev/null kubectl patch --local -f - --type merge -p '{}' -o json; }

CH=$SHARED/charts
# charts_or_skip: skip the calling test when ../shared/charts is absent (a plain clone).
charts_or_skip() {
  [ -d "$CH" ] || skip "$CH absent: the real NFD and Spegel charts are not rendered (a plain clone)"
  command -v helm >/dev/null || { echo "helm not found: scripts/install-deps installs it" >&2; return 1; }
}
# Every NFD chart and Spegel chart published there, and NFD's kustomize deployments.
nfd_charts() { ls -d "$CH"/nfd-v*/node-feature-discovery "$CH"/nfd-HEAD/node-feature-discovery; }
spegel_charts() { ls -d "$CH"/spegel-v*/spegel "$CH"/spegel-HEAD/spegel; }
nfd_kustomizes() { ls -d "$CH"/nfd-kustomize-v*/deployment; }
# label CHART_DIR: nfd-v0.17.3 etc. (the folder name holds the version, Chart.yaml does not).
label() { basename "$(dirname "$1")"; }

# nfd_render CHART_DIR [HELM ARGS...]: the chart's objects as JSON, release nfd.
nfd_render() { local c=$1; shift; helm template nfd "$c" -n node-feature-discovery "$@" | json; }
# nfd_worker FILE: NFD's worker DaemonSet out of a render.
nfd_worker() { jq 'select(.kind == "DaemonSet" and ((.metadata.labels.role // "") == "worker" or .metadata.name == "nfd-worker"))' "$1"; }
# nfd_kustomize_render DEPLOYMENT_DIR [COMPONENT]: NFD's overlays/default (+ a component), JSON.
nfd_kustomize_render() {
  local d=$W/kz-$RANDOM
  mkdir "$d"
  printf 'resources: [%s]\n' "$(realpath --relative-to="$d" "$1/overlays/default")" >"$d/kustomization.yaml"
  [ -z "${2:-}" ] || printf 'components: [%s]\n' "$(realpath --relative-to="$d" "$2")" >>"$d/kustomization.yaml"
  render "$d"
}
# spegel_render CHART_DIR [HELM ARGS...]: Spegel's objects as JSON, release spegel.
spegel_render() { local c=$1; shift; helm template spegel "$c" -n spegel "$@" | json; }

# one KIND FILTER FILE: exactly one object of KIND in FILE, and FILTER is true for it.
one() {
  jq -e -s --arg k "$1" "map(select(.kind == \$k)) | length == 1 and (.[0] | $2)" "$3" >/dev/null ||
    { echo "not true for the one $1 in $3: $2" >&2; return 1; }
}

# Directories holding a Kustomization (not a Component): each must render on its own.
kustomizations() {
  grep -L '^kind: Component' $(find k8s test/k8s -name kustomization.yaml | sort) | xargs -n1 dirname
}

@test "every kustomization renders offline, without remote bases" {
  local n=0 d
  for d in $(kustomizations); do
    render "$d" >"$W/out.json" || { echo "render failed: $d" >&2; return 1; }
    [ -s "$W/out.json" ] || { echo "empty render: $d" >&2; return 1; }
    n=$((n + 1))
  done
  [ "$n" -ge 12 ]
  # Nothing fetched: no URL in any resources/components/patch reference.
  run grep -rnE '^\s*-\s*(https?://|github\.com/|git@)' --include=kustomization.yaml k8s
  [ "$status" -eq 1 ]
}

@test "our workloads: pinned images, limits, no escalation, caps dropped, read-only root" {
  local d
  for d in k8s/mirror k8s/mirror/cleanup k8s/nfd/remove k8s/devices k8s/devices/with-classes; do
    render "$d" | "$T/check-manifests" || { echo "in $d" >&2; return 1; }
  done
  render k8s/devices/with-dra | "$T/check-manifests" --role nodeprobe-devices-dra="$T/rbac-devices-dra.txt"
  for d in k8s/reload k8s/reload/namespaced; do
    render "$d" | "$T/check-manifests" --rbac "$T/rbac-reload.txt" || { echo "in $d" >&2; return 1; }
  done
  # --enable-ha: the same ClusterRole, plus a Role granting exactly rbac-lease.txt
  render k8s/reload/ha | "$T/check-manifests" --role nodeprobe-reload="$T/rbac-reload.txt" \
    --role nodeprobe-reload-leader-election="$T/rbac-lease.txt" || { echo "in k8s/reload/ha" >&2; return 1; }
  # The component on the trimmed NFD kustomize fixture (a plain clone has no real charts).
  render test/k8s/nfd-kustomize | "$T/check-manifests" --ours "$OURS"
}

@test "real NFD and Spegel charts + our post-renderer: our containers pass the checks" {
  charts_or_skip
  local c n=0
  for c in $(nfd_charts); do
    helm template nfd "$c" -n node-feature-discovery --post-renderer ./k8s/post-render --post-renderer-args k8s/nfd |
      json | "$T/check-manifests" --ours "$OURS" || { echo "in $(label "$c")" >&2; return 1; }
    n=$((n + 1))
  done
  for c in $(nfd_kustomizes); do
    nfd_kustomize_render "$c" k8s/nfd | "$T/check-manifests" --ours "$OURS" || { echo "in $c" >&2; return 1; }
    n=$((n + 1))
  done
  for c in $(spegel_charts); do
    [ "$(label "$c")" = spegel-HEAD ] && continue  # no host port: refused (test below)
    helm template spegel "$c" -n spegel -f k8s/mirror/spegel/values.yaml --post-renderer ./k8s/post-render --post-renderer-args k8s/mirror/spegel |
      json | "$T/check-manifests" --ours "$OURS" || { echo "in $(label "$c")" >&2; return 1; }
    n=$((n + 1))
  done
  [ "$n" -ge 13 ]
  echo "# swept $n real chart renders from $CH" >&3
}

@test "the checker rejects each rule it enforces" {
  render k8s/mirror >"$W/good.json"
  "$T/check-manifests" <"$W/good.json"
  local bad
  for bad in \
    '.spec.template.spec.initContainers[0].image = "ghcr.io/nodeprobe/nodeprobe:latest"' \
    '.spec.template.spec.initContainers[0].image = "ghcr.io/nodeprobe/nodeprobe"' \
    'del(.spec.template.spec.initContainers[0].resources.limits.memory)' \
    '.spec.template.spec.initContainers[0].securityContext.allowPrivilegeEscalation = true' \
    '.spec.template.spec.initContainers[0].securityContext.privileged = true' \
    '.spec.template.spec.initContainers[0].securityContext.capabilities = {"add": ["SYS_ADMIN"], "drop": ["ALL"]}' \
    '.spec.template.spec.initContainers[0].securityContext.capabilities.drop = ["NET_RAW"]' \
    '.spec.template.spec.initContainers[0].securityContext.readOnlyRootFilesystem = false' \
    '.spec.template.spec.initContainers[0].volumeMounts[0].readOnly = true' \
    '.spec.template.spec.containers[0].securityContext.runAsUser = 1000' \
    '.spec.template.spec.automountServiceAccountToken = true' \
    '.spec.template.spec.hostNetwork = true' \
    'del(.spec.template.spec.securityContext.seccompProfile)'; do
    jq "if .kind == \"DaemonSet\" then $bad else . end" "$W/good.json" >"$W/bad.json"
    run "$T/check-manifests" <"$W/bad.json"
    [ "$status" -eq 1 ] || { echo "not caught: $bad" >&2; return 1; }
  done
  # RBAC: one verb more, or one less, than rbac-reload.txt.
  render k8s/reload >"$W/rbac.json"
  jq 'if .kind == "ClusterRole" then .rules[4].verbs += ["delete"] else . end' "$W/rbac.json" >"$W/bad.json"
  run "$T/check-manifests" --rbac "$T/rbac-reload.txt" <"$W/bad.json"
  [ "$status" -eq 1 ]
  [[ $output == *"grants core events delete"* ]]
  jq 'if .kind == "ClusterRole" then .rules[1].verbs -= ["patch"] else . end' "$W/rbac.json" >"$W/bad.json"
  run "$T/check-manifests" --rbac "$T/rbac-reload.txt" <"$W/bad.json"
  [ "$status" -eq 1 ]
  [[ $output == *"lacks apps deployments patch"* ]]
  # --enable-ha's Role missing: its grants are not "nowhere" but a failure
  run "$T/check-manifests" --role nodeprobe-reload="$T/rbac-reload.txt" \
    --role nodeprobe-reload-leader-election="$T/rbac-lease.txt" <"$W/rbac.json"
  [ "$status" -eq 2 ]
  [[ $output == *"--role nodeprobe-reload-leader-election: no Role or ClusterRole of that name"* ]]
  # Nothing to check is not a pass: RBAC rules without any Role, a component that added none
  # of our containers (NFD's and Spegel's own output alone).
  jq 'select(.kind | test("Role$") | not)' "$W/rbac.json" >"$W/norole.json"
  run "$T/check-manifests" --rbac "$T/rbac-reload.txt" <"$W/norole.json"
  [ "$status" -eq 2 ]
  [[ $output == *"no Role or ClusterRole"* ]]
  KUBECONFIG=/dev/null kubectl patch --local -f "$T/nfd-kustomize/worker.yaml" --type merge -p '{}' -o json >"$W/alone.json"
  run "$T/check-manifests" --ours "$OURS" <"$W/alone.json"
  { [ "$status" -eq 2 ] && [[ $output == *"no container checked"* ]]; } || { echo "nfd-kustomize alone: $status $output" >&2; return 1; }
  [ -d "$CH" ] || return 0
  local c
  for c in "$CH/nfd-v0.19.0/node-feature-discovery" "$CH/spegel-v0.7.4/spegel"; do
    helm template x "$c" | json >"$W/alone.json"
    run "$T/check-manifests" --ours "$OURS" <"$W/alone.json"
    { [ "$status" -eq 2 ] && [[ $output == *"no container checked"* ]]; } || { echo "$c alone: $status $output" >&2; return 1; }
  done
}

@test "check-manifests: an emptyDir sizeLimit under 64Ki is refused, in any quantity notation" {
  # The nfd component's token-hiding emptyDir: 1Ki got NFD's worker evicted every minute (an
  # empty directory uses 4 KiB on ext4). Every install path's render goes through the checker.
  render test/k8s/nfd-kustomize >"$W/good.json"
  local q
  for q in 1Ki 4Ki 1024 65535 64k 0.06Mi 100m 1e3 63.9Ki x12; do
    jq ".spec.template.spec.volumes |= map(if .name == \"nodeprobe-no-token\" then .emptyDir.sizeLimit = \"$q\" else . end)" \
      "$W/good.json" >"$W/bad.json"
    run "$T/check-manifests" --ours "$OURS" <"$W/bad.json"
    { [ "$status" -eq 1 ] && [[ $output == *"volume nodeprobe-no-token: emptyDir sizeLimit"* ]]; } ||
      { echo "sizeLimit $q not refused: $status $output" >&2; return 1; }
  done
  for q in 64Ki 65536 0.5Mi 1Mi 66k 1e5 1Gi; do
    jq ".spec.template.spec.volumes |= map(if .name == \"nodeprobe-no-token\" then .emptyDir.sizeLimit = \"$q\" else . end)" \
      "$W/good.json" >"$W/ok.json"
    "$T/check-manifests" --ours "$OURS" <"$W/ok.json" || { echo "sizeLimit $q refused" >&2; return 1; }
  done
  # A plain number (65536 bytes as YAML int) counts as bytes too.
  jq '.spec.template.spec.volumes |= map(if .name == "nodeprobe-no-token" then .emptyDir.sizeLimit = 1024 else . end)' \
    "$W/good.json" >"$W/bad.json"
  run "$T/check-manifests" --ours "$OURS" <"$W/bad.json"
  [ "$status" -eq 1 ]
  # What we ship: 64Ki in both token-hiding volumes.
  grep -q 'sizeLimit: 64Ki' k8s/nfd/worker-init.yaml
  grep -q 'sizeLimit: 64Ki' k8s/mirror/spegel/configuration.yaml
}

@test "RBAC: only nodeprobe-reload has any, exactly as listed in its man page" {
  local d
  for d in k8s/mirror k8s/mirror/cleanup k8s/nfd/values test/k8s/nfd-kustomize; do
    run sh -c "'$T/render' '$d' | jq -r 'select(.kind | test(\"Role|ServiceAccount\")) | .kind'"
    [ -z "$output" ] || { echo "$d has $output" >&2; return 1; }
  done
  # On the real charts, the post-renderer adds no object at all (RBAC included).
  if [ -d "$CH" ]; then
    local c
    for c in "$CH/nfd-v0.12.4/node-feature-discovery" "$CH/nfd-HEAD/node-feature-discovery"; do
      diff <(helm template nfd "$c" | json | jq -r '.kind + "/" + .metadata.name' | sort) \
           <(helm template nfd "$c" --post-renderer ./k8s/post-render --post-renderer-args k8s/nfd | json | jq -r '.kind + "/" + .metadata.name' | sort)
    done
    c=$CH/spegel-v0.7.4/spegel
    diff <(helm template spegel "$c" -f k8s/mirror/spegel/values.yaml | json | jq -r '.kind + "/" + .metadata.name' | sort) \
         <(helm template spegel "$c" -f k8s/mirror/spegel/values.yaml --post-renderer ./k8s/post-render --post-renderer-args k8s/mirror/spegel | json | jq -r '.kind + "/" + .metadata.name' | sort)
  fi
  # The namespaced variant grants the same, as a Role, and binds no ClusterRole.
  render k8s/reload/namespaced >"$W/ns.json"
  [ "$(jq -r 'select(.kind | test("^Cluster")) | .kind' "$W/ns.json")" = "" ]
  [ "$(jq -r 'select(.kind == "Role") | .metadata.namespace' "$W/ns.json")" = my-app ]
  one Deployment '.spec.template.spec.containers[0].args | index("--namespace=$(POD_NAMESPACE)") != null' "$W/ns.json"
  # rbac-reload.txt is what the man page lists (section RBAC, lines "group resource verbs").
  local man=hooks/reload/nodeprobe-reload.8
  if [ ! -f "$man" ]; then
    echo "# $man not merged yet: RBAC checked against test/k8s/rbac-reload.txt only" >&3
    return 0
  fi
  "$T/man-rbac" "$man" >"$W/man-rbac.txt"
  diff -u <(grep -hv '^#' "$T/rbac-reload.txt" "$T/rbac-lease.txt" "$T/rbac-csi.txt" | sort -u) <(sort "$W/man-rbac.txt")
  # --enable-ha's leases: a Role in the pod's own namespace (the Lease's), never cluster-wide
  render k8s/reload/ha >"$W/ha.json"
  [ "$(jq -r 'select(.kind == "Role") | [.metadata.name, .metadata.namespace] | join(" ")' "$W/ha.json")" = "nodeprobe-reload-leader-election nodeprobe-system" ]
  [ "$(jq -r 'select(.kind == "ClusterRole") | .rules[].resources[]' "$W/ha.json" | grep -c leases)" -eq 0 ]
  one RoleBinding '.roleRef.name == "nodeprobe-reload-leader-election" and .subjects[0].name == "nodeprobe-reload"' "$W/ha.json"
  # and a get of its own Deployment by name (NODEPROBE_RELOAD_LEASE_OWNER, the Lease's owner)
  one Role '.rules[1] == {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"], "resourceNames": ["nodeprobe-reload"]}' "$W/ha.json"
  one Deployment '.spec.replicas == 2 and (.spec.template.spec.containers[0].args | index("--enable-ha=true") != null) and ([.spec.template.spec.containers[0].env[].name] == ["POD_NAME", "POD_NAMESPACE", "NODEPROBE_RELOAD_LEASE_OWNER"]) and (.spec.template.spec.containers[0].env[2].value == .metadata.name)' "$W/ha.json"
  # the component on the one-namespace variant: both env vars kept, the leases Role there too
  render test/k8s/reload-namespaced-ha >"$W/nsha.json"
  "$T/check-manifests" --role nodeprobe-reload="$T/rbac-reload.txt" \
    --role nodeprobe-reload-leader-election="$T/rbac-lease.txt" <"$W/nsha.json"
  [ "$(jq -r 'select(.kind | test("^Cluster")) | .kind' "$W/nsha.json")" = "" ]
  [ "$(jq -r 'select(.kind == "Role") | .metadata.namespace' "$W/nsha.json" | sort -u)" = my-app ]
  one Deployment '([.spec.template.spec.containers[0].env[].name] | sort) == ["NODEPROBE_RELOAD_LEASE_OWNER", "POD_NAME", "POD_NAMESPACE"] and (.spec.template.spec.containers[0].args | index("--namespace=$(POD_NAMESPACE)") != null)' "$W/nsha.json"
}

@test "RBAC: the Secrets Store CSI component (off by default) adds its flag and rbac-csi.txt, nothing else" {
  # off by default: without the component neither the flag nor the grant (--rbac above is exact)
  render k8s/reload >"$W/plain.json"
  [ "$(jq -r 'select(.kind == "Deployment") | .spec.template.spec.containers[0].args[]' "$W/plain.json" | grep -c csi)" -eq 0 ]
  grep -hv '^#' "$T/rbac-reload.txt" "$T/rbac-csi.txt" >"$W/rbac-reload-csi.txt"
  # cluster-wide with leader election: the ClusterRole gains the grant, the leases Role does not
  render test/k8s/reload-csi >"$W/csi.json"
  "$T/check-manifests" --role nodeprobe-reload="$W/rbac-reload-csi.txt" \
    --role nodeprobe-reload-leader-election="$T/rbac-lease.txt" <"$W/csi.json"
  one Deployment '.spec.template.spec.containers[0].args | index("--enable-csi-integration=true") != null and index("--enable-ha=true") != null' "$W/csi.json"
  # one namespace: the Role gains it, still nothing cluster-wide
  render test/k8s/reload-namespaced-csi >"$W/nscsi.json"
  "$T/check-manifests" --rbac "$W/rbac-reload-csi.txt" <"$W/nscsi.json"
  [ "$(jq -r 'select(.kind | test("^Cluster")) | .kind' "$W/nscsi.json")" = "" ]
  one Deployment '.spec.template.spec.containers[0].args | index("--enable-csi-integration=true") != null' "$W/nscsi.json"
  # the binary takes the flag as the component spells it
  "$BUILD/nodeprobe-reload" --enable-csi-integration=true --version >/dev/null
}

@test "nfd component: adds the init container, leaves NFD's own containers alone" {
  # worker_ok BEFORE AFTER: the DaemonSet AFTER is BEFORE with our init container added.
  worker_ok() {
    diff <(jq -S .spec.template.spec.containers "$1") <(jq -S .spec.template.spec.containers "$2")
    [ "$(jq -r '.spec.template.spec.initContainers | map(.name) | join(",")' "$2")" = nodeprobe ]
    jq -e '.spec.template.spec.initContainers[0].args == ["--sysfs=/host-sys", "--features-dir=/etc/kubernetes/node-feature-discovery/features.d", "--boot=/host-boot", "--os-release=/host-etc/os-release"]' "$2"
    # Mounts NFD's existing volumes: features-d read-write, host-sys, host-boot, host-os-release
    # (where nfd-worker mounts them) and host-lib read-only.
    jq -e '.spec.template.spec.initContainers[0].volumeMounts | map({(.name): (.readOnly // false)}) | add
           | .["features-d"] == false and .["host-sys"] == true and .["host-lib"] == true
             and .["host-boot"] == true and .["host-os-release"] == true' "$2"
    jq -e '.spec.template.spec.initContainers[0].volumeMounts | map({(.name): .mountPath}) | add
           | .["host-boot"] == "/host-boot" and .["host-os-release"] == "/host-etc/os-release"' "$2"
    jq -e '.spec.template.spec.initContainers[0].volumeMounts[] | select(.name == "host-lib") | .mountPath == "/lib/modules" and .subPath == "modules"' "$2"
    # features-d and host-sys are NFD's own volumes, at the host paths nodeprobe writes and reads.
    jq -e '.spec.template.spec.volumes | map({(.name): .hostPath.path}) | add
           | (.["features-d"] | rtrimstr("/")) == "/etc/kubernetes/node-feature-discovery/features.d" and .["host-sys"] == "/sys" and .["host-lib"] == "/lib"
             and .["host-boot"] == "/boot" and .["host-os-release"] == "/etc/os-release"' "$2"
    # Every volume it mounts exists in the pod (NFD's, or the component's own).
    jq -e '.spec.template.spec as $p | [$p.initContainers[0].volumeMounts[].name] - [$p.volumes[].name] == []' "$2"
    # NFD's volumes are left as they were, plus the token blocker (and host-lib where NFD has none).
    local had_lib
    had_lib=$(jq '[.spec.template.spec.volumes[].name] | index("host-lib") != null' "$1")
    diff <(jq -S '.spec.template.spec.volumes | sort_by(.name)' "$1") \
         <(jq -S --argjson l "$had_lib" '.spec.template.spec.volumes | map(select(.name != "nodeprobe-no-token" and ($l or .name != "host-lib"))) | sort_by(.name)' "$2")
  }
  # The trimmed kustomize fixture (every clone has it).
  render test/k8s/nfd-kustomize >"$W/after.json"
  KUBECONFIG=/dev/null kubectl patch --local -f test/k8s/nfd-kustomize/worker.yaml --type merge -p '{}' -o json >"$W/before.json"
  worker_ok "$W/before.json" "$W/after.json"
  charts_or_skip
  # Every published NFD chart through the post-renderer: v0.12.4 has no host-lib volume, which
  # the component brings.
  local c n=0
  for c in $(nfd_charts); do
    nfd_render "$c" >"$W/b.json"
    nfd_render "$c" --post-renderer ./k8s/post-render --post-renderer-args k8s/nfd >"$W/a.json"
    nfd_worker "$W/b.json" >"$W/before.json"
    nfd_worker "$W/a.json" >"$W/after.json"
    worker_ok "$W/before.json" "$W/after.json" || { echo "in $(label "$c")" >&2; return 1; }
    # Nothing but the worker DaemonSet changed (kustomize reorders objects and drops empty maps).
    local others='map(select(.kind != "DaemonSet" or .metadata.labels.role != "worker")) | sort_by(.kind, .metadata.name)
      | walk(if type == "object" then with_entries(select(.value != {})) else . end)'
    diff <(jq -S -s "$others" "$W/b.json") <(jq -S -s "$others" "$W/a.json")
    n=$((n + 1))
  done
  [ "$(jq '[.spec.template.spec.volumes[].name] | index("host-lib")' <(nfd_worker <(nfd_render "$CH/nfd-v0.12.4/node-feature-discovery")))" = null ]
  # NFD's own kustomize deployment, with the component.
  for c in $(nfd_kustomizes); do
    nfd_kustomize_render "$c" | jq 'select(.kind == "DaemonSet" and .metadata.name == "nfd-worker")' >"$W/before.json"
    nfd_kustomize_render "$c" k8s/nfd | jq 'select(.kind == "DaemonSet" and .metadata.name == "nfd-worker")' >"$W/after.json"
    worker_ok "$W/before.json" "$W/after.json" || { echo "in $c" >&2; return 1; }
    n=$((n + 1))
  done
  [ "$n" -ge 10 ]
  echo "# swept $n real NFD deployments" >&3
}

@test "nfd: Helm values (chart >= 0.19) and post-renderer (older charts) give the same container" {
  # The values file and the component carry the same container (token hiding aside: the chart
  # has no value for an extra pod volume).
  render test/k8s/nfd-kustomize | jq -S '.spec.template.spec.initContainers[0]' >"$W/component.json"
  render --yaml-doc k8s/nfd/values/values.yaml | jq -S '.worker.initContainers[0]' >"$W/values.json"
  diff -u <(jq 'del(.volumeMounts)' "$W/component.json") <(jq 'del(.volumeMounts)' "$W/values.json")
  diff -u <(jq '.volumeMounts[:5]' "$W/component.json") <(jq '.volumeMounts[:5]' "$W/values.json")
  jq -e '.volumeMounts[5] | .mountPath == "/var/run/secrets/kubernetes.io/serviceaccount" and .readOnly' "$W/values.json"
  run k8s/post-render /nonexistent </dev/null
  [ "$status" -ne 0 ]
  charts_or_skip
  # On the real charts that have worker.initContainers (v0.19.0 and newer), the values give the
  # post-renderer's container; every volume they mount is one the chart has.
  local c n=0
  for c in $(nfd_charts); do
    grep -q initContainers "$c/templates/worker.yaml" || continue
    nfd_worker <(nfd_render "$c" -f k8s/nfd/values/values.yaml) >"$W/v.json"
    nfd_worker <(nfd_render "$c" --post-renderer ./k8s/post-render --post-renderer-args k8s/nfd) >"$W/p.json"
    diff -u <(jq -S '.spec.template.spec.initContainers[0] | del(.volumeMounts)' "$W/p.json") \
            <(jq -S '.spec.template.spec.initContainers[0] | del(.volumeMounts)' "$W/v.json")
    jq -e '.spec.template.spec as $p | [$p.initContainers[0].volumeMounts[].name] - [$p.volumes[].name] == []' "$W/v.json"
    jq -e '.spec.template.spec.volumes[] | select(.name == "nfd-worker-conf") | .configMap != null' "$W/v.json"
    "$T/check-manifests" --ours "$OURS" <"$W/v.json"
    n=$((n + 1))
  done
  [ "$n" -ge 2 ]
  # A chart in which the component finds nothing to patch is an error, not a silent no-op.
  run sh -c "helm template spegel '$CH/spegel-v0.7.4/spegel' | k8s/post-render k8s/nfd"
  [ "$status" -eq 1 ]
  [[ $output == *"k8s/nfd changed nothing"* ]]
  run sh -c "helm template nfd '$CH/nfd-v0.19.0/node-feature-discovery' | k8s/post-render k8s/mirror/spegel"
  [ "$status" -eq 1 ]
}

@test "spegel variant: every chart with a host port gets our container; without one, refused by name" {
  charts_or_skip
  local c
  # A component copy whose mirror target is host port 29999 (the seed cluster's set-up), and
  # values asking the chart for that host port.
  mkdir "$W/hp"
  cp k8s/mirror/spegel/*.yaml "$W/hp/"
  sed -i 's|--mirror-target=http://$(NODE_IP):[0-9]*|--mirror-target=http://$(NODE_IP):29999|' "$W/hp/configuration.yaml"
  grep -q -- '--mirror-target=http://$(NODE_IP):29999' "$W/hp/configuration.yaml"
  for c in $(spegel_charts); do
    run sh -c "helm template spegel '$c' -n spegel --set service.registry.hostPort=29999 | k8s/post-render '$W/hp' >'$W/out.yaml'"
    if grep -q hostPort "$c/templates/daemonset.yaml"; then
      [ "$status" -eq 0 ] || { echo "$(label "$c"): $output" >&2; return 1; }
      json <"$W/out.yaml" >"$W/s.json"
      # Spegel's configuration container is replaced by ours, same name and volume, token hidden.
      [ "$(jq -r 'select(.kind == "DaemonSet" and .metadata.name == "spegel") | [.spec.template.spec.initContainers[] | .name + "=" + .image] | join(",")' "$W/s.json")" = \
        "configuration=$(jq -r 'select(.kind == "DaemonSet") | .spec.template.spec.initContainers[0].image' <(render k8s/mirror))" ]
      # (jq 1.6 -e judges by the last input: select first, then test.)
      jq 'select(.kind == "DaemonSet" and .metadata.name == "spegel")' "$W/s.json" | jq -e '.spec.template.spec as $p
        | ($p.containers[0].ports[] | select(.hostPort) | .hostPort) == 29999
        and ($p.initContainers[0].volumeMounts | map(.name) | index("containerd-config") != null)
        and ([$p.initContainers[0].volumeMounts[].name] - [$p.volumes[].name] == [])'
    else
      # Spegel main (no host port, d2446b5): loud failure naming the port, never a silent render.
      [ "$status" -eq 1 ] || { echo "$(label "$c"): accepted a host port the chart does not open" >&2; return 1; }
      [[ $output == *"mirror target port 29999 is neither a hostPort nor a nodePort"* ]]
      [ ! -s "$W/out.yaml" ]
    fi
  done
  # The same chart is fine with the node port it does open.
  sed -i 's|:29999|:30020|' "$W/hp/configuration.yaml"
  helm template spegel "$CH/spegel-HEAD/spegel" -n spegel | k8s/post-render "$W/hp" | grep -q -- '--mirror-target=http://$(NODE_IP):30020'
}

@test "mirror: every node, all registries, Spegel on 30020 via the node IP; cleanup only on uninstall" {
  render k8s/mirror >"$W/m.json"
  one DaemonSet '.spec.template.spec.tolerations == [{"operator": "Exists"}]' "$W/m.json"
  jq -r 'select(.kind == "DaemonSet") | .spec.template.spec.initContainers[0].args[]' "$W/m.json" >"$W/args"
  [ "$(head -1 "$W/args")" = configure ]
  grep -qx -- '--mirror-target=http://$(NODE_IP):30020' "$W/args"
  one DaemonSet '.spec.template.spec.initContainers[0].env | map(select(.name == "NODE_IP")) | .[0].valueFrom.fieldRef.fieldPath == "status.hostIP"' "$W/m.json"
  local r
  for r in docker.io ghcr.io quay.io gcr.io registry.k8s.io mcr.microsoft.com public.ecr.aws gitea.example.internal; do
    grep -qx -- "--registry=https://$r" "$W/args" || { echo "missing $r" >&2; return 1; }
  done
  # The Spegel variant (real chart v0.7.4, our values and post-renderer) configures exactly the same.
  if [ -d "$CH" ]; then
    helm template spegel "$CH/spegel-v0.7.4/spegel" -n spegel -f k8s/mirror/spegel/values.yaml \
      --post-renderer ./k8s/post-render --post-renderer-args k8s/mirror/spegel | json >"$W/sp.json"
    jq -r 'select(.kind == "DaemonSet" and .metadata.name == "spegel") | .spec.template.spec.initContainers[] | select(.name == "configuration") | .args[]' "$W/sp.json" >"$W/sargs"
    diff -u "$W/args" "$W/sargs"
    # Spegel's configuration container is replaced, not added to; no lifecycle hook comes in.
    [ "$(jq -r 'select(.kind == "DaemonSet" and .metadata.name == "spegel") | [.spec.template.spec.initContainers[].image] | join(",")' "$W/sp.json")" = \
      "$(jq -r 'select(.kind == "DaemonSet") | .spec.template.spec.initContainers[0].image' "$W/m.json")" ]
    ! grep -q -e preStop -e postStart "$W/sp.json" || false
  fi
  # Nothing runs on pod stop: no lifecycle hooks, anywhere.
  for d in k8s/mirror k8s/mirror/cleanup; do
    run sh -c "'$T/render' '$d' | grep -c -e preStop -e postStart"
    [ "$output" = 0 ] || { echo "$d has a lifecycle hook" >&2; return 1; }
  done
  # cleanup = the same DaemonSet, only the init container's job differs.
  render k8s/mirror/cleanup >"$W/c.json"
  # The same objects, Namespace included: Flux switching its path to cleanup prunes nothing
  # (pruning the Namespace would delete the DaemonSet before it has cleaned every node).
  diff <(jq -r '.kind + "/" + (.metadata.namespace // "") + "/" + .metadata.name' "$W/m.json" | sort) \
       <(jq -r '.kind + "/" + (.metadata.namespace // "") + "/" + .metadata.name' "$W/c.json" | sort)
  one DaemonSet '.spec.template.spec.initContainers[0].args == ["cleanup", "--config-path=/etc/containerd/certs.d"]' "$W/c.json"
  # (and the long-running container: watch, pause in cleanup, so nothing re-applies)
  diff <(jq -S 'select(.kind == "DaemonSet") | del(.spec.template.spec.initContainers[0].args, .spec.template.spec.initContainers[0].name, .spec.template.metadata.annotations, .spec.template.spec.containers)' "$W/m.json") \
       <(jq -S 'select(.kind == "DaemonSet") | del(.spec.template.spec.initContainers[0].args, .spec.template.spec.initContainers[0].name, .spec.template.metadata.annotations, .spec.template.spec.containers)' "$W/c.json")
  one DaemonSet '.spec.template.spec.containers | map(.name) == ["pause"]' "$W/c.json"
}

@test "flux: v1 Kustomizations with prune, wait or health checks, real paths, NFD part after NFD" {
  # fsub DIR [VAR=VALUE...]: render DIR with Flux's postBuild substitution (defaults, or VARs).
  fsub() { local d=$1; shift; kubectl kustomize "$d" | env "$@" "$T/flux-subst" | json; }
  # Every variable has a default: nothing to edit in a repository Flux pulls from.
  ! grep -rnE '\$\{[_a-zA-Z0-9]+\}' k8s/flux || false
  [ "$(grep -rhoE '\$\{[_a-zA-Z0-9]+:=' k8s/flux | sort -u | paste -sd' ')" = \
    '${GITEA_REGISTRY:= ${NFD_KUSTOMIZATION:= ${NFD_NAMESPACE:= ${NFD_RELEASE:= ${NODEPROBE_DISTRO:=' ]
  # The bootstrap: the source and one Kustomization applying k8s/flux with the user's settings.
  render k8s/flux/bootstrap >"$W/b.json"
  one GitRepository '.spec.ref.tag | test("^v[0-9]")' "$W/b.json"
  one Kustomization '.spec.path == "./k8s/flux" and .spec.postBuild.substituteFrom == [{"kind": "ConfigMap", "name": "nodeprobe-settings", "optional": true}]' "$W/b.json"
  fsub k8s/flux >"$W/f.json"
  jq -c 'select(.kind == "Kustomization")' "$W/f.json" >"$W/ks.json"
  [ "$(wc -l <"$W/ks.json")" -eq 3 ]
  jq -e -s 'all(.[]; .apiVersion == "kustomize.toolkit.fluxcd.io/v1" and .spec.prune == true and .metadata.namespace == "flux-system"
             and (.spec.wait == true or (.spec.healthChecks | length) > 0) and .spec.sourceRef.name == "nodeprobe")' "$W/ks.json"
  local p
  for p in $(jq -r '.spec.path' "$W/ks.json"); do
    fsub "$p" >/dev/null || { echo "flux path $p does not render" >&2; return 1; }
  done
  dep() { jq -r "select(.metadata.name == \"$1\") | [.spec.dependsOn[]?.name] | join(\",\")" "$2"; }
  [ "$(dep nodeprobe "$W/ks.json")" = "" ]
  [ "$(dep spegel "$W/ks.json")" = nodeprobe ]
  [ "$(dep nodeprobe-nfd "$W/ks.json")" = node-feature-discovery ]
  one Kustomization '.metadata.name != "nodeprobe-nfd" or (.spec.targetNamespace == "node-feature-discovery"
    and .spec.healthChecks == [{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "name": "node-feature-discovery", "namespace": "node-feature-discovery"}])' \
    <(jq 'select(.metadata.name == "nodeprobe-nfd")' "$W/ks.json")
  # NFD released as `nfd` in namespace `nfd`, by a Kustomization `nfd`: settings, no edit.
  fsub k8s/flux NFD_RELEASE=nfd NFD_NAMESPACE=nfd NFD_KUSTOMIZATION=nfd | jq 'select(.metadata.name == "nodeprobe-nfd")' >"$W/n.json"
  one Kustomization '.spec.dependsOn == [{"name": "nfd"}] and .spec.targetNamespace == "nfd"
    and .spec.healthChecks[0].name == "nfd" and .spec.healthChecks[0].namespace == "nfd"' "$W/n.json"
  # OCI charts come through OCIRepository (Flux's documented way), never HelmRepository type oci.
  ! grep -rn 'type: oci' k8s/flux || false
  fsub k8s/flux/nodeprobe >"$W/np.json"
  one Namespace '.metadata.labels["pod-security.kubernetes.io/enforce"] == "privileged"' "$W/np.json"
  # Pruning the Kustomization deletes its objects at once, without waiting for the HelmRelease's
  # uninstall (fluxcd/pkg ssa DeleteAll): the Namespace must stay, or its deletion removes the
  # DaemonSet and refuses the pre-delete hook's objects, and no node is cleaned.
  one Namespace '.metadata.annotations["kustomize.toolkit.fluxcd.io/prune"] == "disabled"' "$W/np.json"
  one OCIRepository '.spec.url == "oci://ghcr.io/nodeprobe/charts/nodeprobe" and .spec.layerSelector.operation == "copy"' "$W/np.json"
  one HelmRelease '.spec.chartRef == {"kind": "OCIRepository", "name": "nodeprobe"} and .metadata.namespace == "nodeprobe"' "$W/np.json"
  # The HelmRelease's values, substituted, are values our chart takes: with defaults and with a
  # Gitea registry and Talos set.
  command -v helm >/dev/null || { echo "helm not found: scripts/install-deps installs it" >&2; return 1; }
  jq 'select(.kind == "HelmRelease") | .spec.values' "$W/np.json" >"$W/vals.json"
  helm template nodeprobe k8s/chart/nodeprobe -n nodeprobe -f "$W/vals.json" | json >"$W/chart.json"
  [ "$(jq -r 'select(.kind == "DaemonSet" and .metadata.name == "nodeprobe-mirror") | .spec.template.spec.volumes[0].hostPath.path' "$W/chart.json")" = /etc/containerd/certs.d ]
  fsub k8s/flux/nodeprobe GITEA_REGISTRY=gitea.example.internal NODEPROBE_DISTRO=talos | jq 'select(.kind == "HelmRelease") | .spec.values' >"$W/vals.json"
  helm template nodeprobe k8s/chart/nodeprobe -n nodeprobe -f "$W/vals.json" | json >"$W/chart.json"
  jq -r 'select(.kind == "DaemonSet" and .metadata.name == "nodeprobe-mirror") | .spec.template.spec.initContainers[0].args[]' "$W/chart.json" >"$W/args"
  grep -qx -- '--registry=https://gitea.example.internal' "$W/args"
  grep -qx -- '--config-path=/etc/cri/conf.d/hosts' "$W/args"
  # Spegel: values written once (the ConfigMap holds the file itself), from an OCIRepository.
  fsub k8s/flux/spegel >"$W/s.json"
  one OCIRepository '.spec.url == "oci://ghcr.io/spegel-org/helm-charts/spegel" and .spec.layerSelector.mediaType == "application/vnd.cncf.helm.chart.content.v1.tar+gzip"' "$W/s.json"
  one HelmRelease '.spec.chartRef == {"kind": "OCIRepository", "name": "spegel"} and .spec.values == null
    and .spec.valuesFrom == [{"kind": "ConfigMap", "name": "spegel-values", "valuesKey": "values.yaml"}]' "$W/s.json"
  diff <(jq -j 'select(.kind == "ConfigMap" and .metadata.name == "spegel-values") | .data["values.yaml"]' "$W/s.json") k8s/flux/spegel/values.yaml
  one Namespace '.metadata.labels["pod-security.kubernetes.io/enforce"] == "privileged"' "$W/s.json"
  # With those values the real Spegel charts serve the chart's default mirror target, port 30020
  # on the node (host port up to v0.7.4, node port after), and write no containerd config.
  [ -d "$CH" ] || return 0
  local c target
  target=$(helm template nodeprobe k8s/chart/nodeprobe | sed -n 's/.*--mirror-target=http:\/\/$(NODE_IP):\([0-9]*\).*/\1/p' | sort -u)
  [ "$target" = 30020 ]
  for c in $(spegel_charts); do
    spegel_render "$c" -f k8s/flux/spegel/values.yaml >"$W/sp.json"
    jq -e -s --argjson p "$target" '[.[] | .. | objects | (.hostPort?, .nodePort?) | numbers] | index($p) != null' "$W/sp.json" >/dev/null ||
      { echo "$(label "$c") opens no port $target" >&2; return 1; }
    [ "$(jq -r 'select(.kind == "DaemonSet") | .spec.template.spec.initContainers[]?.name' "$W/sp.json")" = "" ]
  done
}

@test "helmfile: one state file; namespaces, then the chart, then Spegel, then the rest, via needs" {
  local dir=k8s/helmfile f=k8s/helmfile/helmfile.yaml
  # One state file: helmfile >= 1.3 runs the files of helmfile.d/ in parallel.
  [ ! -e "$dir/helmfile.d" ]
  [ "$(find "$dir" -maxdepth 1 -name '*.yaml' -o -maxdepth 1 -name '*.gotmpl' | wc -l)" -eq 1 ]
  render --yaml-doc "$f" >"$W/h.json"
  jq -c '.releases[]' "$W/h.json" >"$W/rel.json"
  needs() { jq -r "select(.name == \"$1\") | [.needs[]?] | join(\",\")" "$W/rel.json"; }
  [ "$(jq -r .name "$W/rel.json" | paste -sd,)" = namespaces,nodeprobe,spegel,node-feature-discovery ]
  [ "$(needs namespaces)" = "" ]
  [ "$(needs nodeprobe)" = kube-system/namespaces ]
  [ "$(needs spegel)" = nodeprobe/nodeprobe ]
  [ "$(needs node-feature-discovery)" = spegel/spegel ]
  # Every `needs` names a release of this file as namespace/name.
  jq -r '.namespace + "/" + .name' "$W/rel.json" | sort >"$W/names"
  jq -r '.needs[]?' "$W/rel.json" | sort -u | comm -23 - "$W/names" >"$W/dangling"
  [ ! -s "$W/dangling" ]
  # Nothing but Helm: no kustomize directory (chartify), no hooks, no kubectl. kubectl is looked
  # for in the parsed state, not the file: the file's header comment says "no kubectl hooks".
  [ "$(jq -r '.hooks[]?' "$W/rel.json")" = "" ]
  ! grep -q kubectl "$W/h.json" || false
  # Namespaces are created only by the namespaces release, labelled privileged: every release
  # namespace is in it (the bootstrap namespace kube-system aside).
  jq -e '.helmDefaults.createNamespace == false' "$W/h.json"
  [ "$(jq -r 'select(.createNamespace == true) | .name' "$W/rel.json")" = "" ]
  command -v helm >/dev/null || { echo "helm not found: scripts/install-deps installs it" >&2; return 1; }
  jq 'select(.name == "namespaces") | .values[0]' "$W/rel.json" >"$W/ns-values.json"
  helm lint --strict "$dir/namespaces" -f "$W/ns-values.json" >/dev/null
  helm template namespaces "$dir/namespaces" -f "$W/ns-values.json" | json >"$W/ns.json"
  diff <(jq -r 'select(.namespace != "kube-system") | .namespace' "$W/rel.json" | sort) \
       <(jq -r 'select(.kind == "Namespace" and .metadata.labels["pod-security.kubernetes.io/enforce"] == "privileged") | .metadata.name' "$W/ns.json" | sort)
  # Local charts and values files exist, relative to the state file, and render.
  local p
  for p in $(jq -r '.values[]? | strings' "$W/rel.json"); do
    [ -f "$dir/$p" ] || { echo "missing values file $p" >&2; return 1; }
  done
  jq 'select(.name == "nodeprobe") | .values[0]' "$W/rel.json" >"$W/np-values.json"
  helm template nodeprobe "$dir/$(jq -r 'select(.name == "nodeprobe") | .chart' "$W/rel.json")" -n nodeprobe -f "$W/np-values.json" | json >"$W/np.json"
  "$T/check-manifests" --role nodeprobe-reload="$T/rbac-reload.txt" --role nodeprobe-mirror-cleanup="$T/rbac-mirror-cleanup.txt" <"$W/np.json"
  # Spegel's values are the Flux ones (one file); NFD's are k8s/nfd's.
  [ "$(jq -r 'select(.name == "spegel") | .values[0]' "$W/rel.json")" = ../flux/spegel/values.yaml ]
  [ "$(jq -r 'select(.name == "node-feature-discovery") | .values[0]' "$W/rel.json")" = ../nfd/values/values.yaml ]
  # The NFD chart named here has worker.initContainers (>= 0.19).
  [ "$(jq -r 'select(.name == "node-feature-discovery") | .version' "$W/rel.json")" = 0.19.0 ]
  # Every repository a release uses is declared before use (`helm repo add` equivalent).
  for p in $(jq -r '.chart | select(test("^[a-z0-9-]+/")) | split("/")[0]' "$W/rel.json"); do
    jq -e --arg r "$p" '.repositories | map(.name) | index($r) != null' "$W/h.json" >/dev/null
  done
}

@test "every option and subcommand the manifests pass is one the binary documents" {
  local d
  for d in $(kustomizations); do render "$d"; done >"$W/all.json"
  render --yaml-doc k8s/nfd/values/values.yaml >>"$W/all.json"
  local bin man missing=0 word
  for bin in nodeprobe nodeprobe-mirror nodeprobe-reload nodeprobe-devices; do
    case $bin in
      nodeprobe) man=cmd/nodeprobe/nodeprobe.8 ;;
      *) man=hooks/${bin#nodeprobe-}/$bin.8 ;;
    esac
    # Option names (before any '=') and bare words (subcommands) passed to /usr/bin/$bin.
    jq -r --arg c "/usr/bin/$bin" '.. | objects | select(.command? == [$c]) | .args[]' "$W/all.json" |
      sed 's/=.*//' | sort -u >"$W/words"
    [ -s "$W/words" ] || { echo "no container runs $bin" >&2; return 1; }
    if [ ! -f "$man" ]; then
      echo "# $man not merged yet: $(paste -sd' ' "$W/words") unchecked" >&3
      continue
    fi
    while read -r word; do
      sed 's/\\-/-/g' "$man" | grep -qw -- "$word" || { echo "$bin: '$word' not in $man" >&2; missing=1; }
    done <"$W/words"
  done
  [ "$missing" -eq 0 ]
}

@test "the argument lists the manifests pass are accepted by the binaries and do the job" {
  [ -x "$BUILD/nodeprobe" ]
  [ -x "$BUILD/nodeprobe-mirror" ]
  # the first container running $2 (the mirror's init container; its watch takes the same)
  args() { jq -r --arg c "$2" 'first(((.spec.template.spec.initContainers? // [])[] | select(.command == [$c])), (.. | objects | select(.command? == [$c]))) | .args[]' "$1"; }
  # nodeprobe as the NFD component runs it, with the host paths moved onto a fixture and $W.
  render test/k8s/nfd-kustomize >"$W/nfd.json"
  mapfile -t a < <(args "$W/nfd.json" /usr/bin/nodeprobe |
    sed -e "s|^--sysfs=/host-sys\$|--sysfs=$FIX/pci/linuxhw-intel-nuc12-alderlake|" \
        -e "s|^--features-dir=/etc/kubernetes/node-feature-discovery/features.d\$|--features-dir=$W/features.d|" \
        -e "s|^--boot=/host-boot\$|--boot=$W/boot|" \
        -e "s|^--os-release=/host-etc/os-release\$|--os-release=$FIX/os-release/talos-v1.9.5|")
  [ "${#a[@]}" -eq 4 ]
  [[ ${a[0]} == --sysfs=$FIX/* ]]
  [[ ${a[1]} == --features-dir=$W/* ]]
  [[ ${a[2]} == --boot=$W/* ]]
  [[ ${a[3]} == --os-release=$FIX/* ]]
  mkdir "$W/features.d" "$W/boot"
  # The host's os-release reaches system.osrelease (a rule as a user writes it for NFD).
  printf '%s\n' 'apiVersion: nfd.k8s-sigs.io/v1alpha1' 'kind: NodeFeatureRule' 'metadata: {name: os}' \
    'spec: {rules: [{name: talos, labels: {example.com/os: talos}, matchFeatures: [{feature: system.osrelease,' \
    '  matchExpressions: {ID: {op: In, value: [talos]}}}]}]}' >"$W/os.yaml"
  "$BUILD/nodeprobe" "${a[@]}" -r "$W/os.yaml"
  grep -qx 'intel.feature.node.kubernetes.io/gpu=true' "$W/features.d/nodeprobe"
  grep -qx 'example.com/os=talos' "$W/features.d/nodeprobe"
  # k8s/nfd/remove (the uninstall): its nodeprobe --remove deletes exactly that file, twice is
  # fine, and another tool's file beside it stays.
  render k8s/nfd/remove >"$W/rm.json"
  printf 'other.example.com/x=true\n' >"$W/features.d/other"
  mapfile -t a < <(args "$W/rm.json" /usr/bin/nodeprobe |
    sed -e "s|^--features-dir=/etc/kubernetes/node-feature-discovery/features.d\$|--features-dir=$W/features.d|")
  [ "${a[0]}" = --remove ]
  printf '%s\n' "${a[@]}" | grep -qx -- "--features-dir=$W/features.d"
  "$BUILD/nodeprobe" "${a[@]}"
  [ ! -e "$W/features.d/nodeprobe" ]
  "$BUILD/nodeprobe" "${a[@]}"
  [ "$(ls -A "$W/features.d")" = other ]
  # nodeprobe-mirror configure and cleanup as k8s/mirror runs them; $(NODE_IP) is the kubelet's
  # expansion of the pod's env, done here by sed.
  render k8s/mirror >"$W/m.json"
  render k8s/mirror/cleanup >"$W/c.json"
  mkdir -p "$W/certs.d/example.org"
  printf 'server = "https://example.org"\n' >"$W/certs.d/example.org/hosts.toml"
  cp -a "$W/certs.d" "$W/before"
  mapfile -t a < <(args "$W/m.json" /usr/bin/nodeprobe-mirror |
    sed -e 's|\$(NODE_IP)|10.0.0.5|' -e "s|^--config-path=/etc/containerd/certs.d\$|--config-path=$W/certs.d|")
  [ "${a[0]}" = configure ]
  printf '%s\n' "${a[@]}" | grep -qx -- "--config-path=$W/certs.d"
  "$BUILD/nodeprobe-mirror" "${a[@]}"
  grep -qx "\[host.'http://10.0.0.5:30020'\]" "$W/certs.d/docker.io/hosts.toml"
  grep -qx "\[host.'http://10.0.0.5:30020'\]" "$W/certs.d/gitea.example.internal/hosts.toml"
  "$BUILD/nodeprobe-mirror" check --config-path="$W/certs.d"
  mapfile -t a < <(args "$W/c.json" /usr/bin/nodeprobe-mirror |
    sed -e "s|^--config-path=/etc/containerd/certs.d\$|--config-path=$W/certs.d|")
  [ "${a[0]}" = cleanup ]
  "$BUILD/nodeprobe-mirror" "${a[@]}"
  diff -r "$W/before" "$W/certs.d"
  # nodeprobe-reload's command lines parse (exit 2 would be a bad command line): with no
  # cluster to talk to, it gets as far as looking for one.
  [ -x "$BUILD/nodeprobe-reload" ]
  local d
  for d in k8s/reload k8s/reload/namespaced k8s/reload/ha; do
    render "$d" >"$W/r.json"
    mapfile -t a < <(args "$W/r.json" /usr/bin/nodeprobe-reload | sed 's|\$(POD_NAMESPACE)|my-app|')
    [ "${#a[@]}" -ge 1 ]
    # (--enable-ha runs in watch mode only)
    [ "$d" = k8s/reload/ha ] || a+=(--mode once)
    run env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT KUBECONFIG=/nonexistent \
      "$BUILD/nodeprobe-reload" "${a[@]}"
    [ "$status" -eq 1 ] || { echo "$d: ${a[*]}: exit $status: $output" >&2; return 1; }
    [[ $output == *"not in a cluster"* ]]
  done
}

@test "nfd remove: on every node, only NFD's features.d mounted, the same path the component writes" {
  render k8s/nfd/remove >"$W/rm.json"
  render test/k8s/nfd-kustomize >"$W/nfd.json"
  one DaemonSet '.metadata.namespace == "node-feature-discovery"
    and .spec.template.spec.tolerations == [{"operator": "Exists"}]
    and .spec.template.spec.automountServiceAccountToken == false
    and (.spec.template.spec.volumes | length == 1 and .[0].hostPath.path == "/etc/kubernetes/node-feature-discovery/features.d")
    and ([.spec.template.spec.initContainers[].volumeMounts[]] | length == 1 and .[0].readOnly != true)
    and ([.spec.template.spec.containers[].volumeMounts // [] | .[]] | length == 0)' "$W/rm.json"
  # no Namespace object: `kubectl delete -k` must never delete NFD's namespace
  [ "$(jq -s 'map(select(.kind == "Namespace")) | length' "$W/rm.json")" -eq 0 ]
  # the directory it removes from is the one the component writes to, and NFD mounts
  diff <(jq -r '.spec.template.spec.initContainers[] | select(.name == "nodeprobe") | .args[] | select(startswith("--features-dir="))' "$W/nfd.json") \
       <(jq -r '.spec.template.spec.initContainers[0].args[] | select(startswith("--features-dir="))' "$W/rm.json")
  jq -e -s '[.[] | select(.kind == "DaemonSet") | .spec.template.spec.volumes[] | select(.name == "features-d") | .hostPath.path | rtrimstr("/")] | unique == ["/etc/kubernetes/node-feature-discovery/features.d"]' "$W/nfd.json"
}

@test "Helm 4: the post-renderer as a postrenderer/v1 plugin gives Helm 3's output, and fails the same" {
  command -v helm4 >/dev/null || skip "helm4 not installed"
  # A chart holding NFD's worker (the kustomize fixture), so this runs on a plain clone too.
  mkdir -p "$W/c/templates"
  printf 'apiVersion: v2\nname: w\nversion: 0.1.0\n' >"$W/c/Chart.yaml"
  cp test/k8s/nfd-kustomize/worker.yaml "$W/c/templates/"
  export HELM_CONFIG_HOME=$W/h/config HELM_DATA_HOME=$W/h/data HELM_CACHE_HOME=$W/h/cache
  helm4 plugin install k8s/helm-plugin/nodeprobe-post-render
  [ "$(helm4 plugin list | awk '$1 == "nodeprobe-post-render" {print $3}')" = postrenderer/v1 ]
  helm4 template w "$W/c" --post-renderer nodeprobe-post-render --post-renderer-args k8s/nfd >"$W/h4.yaml"
  HELM_DATA_HOME=$W/h/data3 helm template w "$W/c" --post-renderer ./k8s/post-render --post-renderer-args k8s/nfd >"$W/h3.yaml"
  # The same objects (Helm 4 also keeps its "# Source:" comments).
  diff <(json <"$W/h3.yaml" | jq -S .) <(json <"$W/h4.yaml" | jq -S .)
  grep -q 'image: ghcr.io/nodeprobe/nodeprobe:' "$W/h4.yaml"
  # Helm 4 passes an executable path no more: only the plugin works.
  run helm4 template w "$W/c" --post-renderer ./k8s/post-render --post-renderer-args k8s/nfd
  [ "$status" -ne 0 ]
  # A component that changes nothing fails the render (Helm 4.1.4 shows only "exited with error").
  run helm4 template w "$W/c" --post-renderer nodeprobe-post-render --post-renderer-args k8s/mirror/spegel
  [ "$status" -ne 0 ]
  [[ $output == *'"nodeprobe-post-render" exited with error'* ]]
}

@test "devices: the kustomize labels init container has the plugin's class options and /dev read-only" {
  local d
  for d in k8s/devices k8s/devices/with-classes k8s/devices/with-dra; do
    render "$d" | json >"$W/r.json"
    jq -e -s '[.[] | select(.kind == "DaemonSet") | .spec.template.spec] | length == 1 and (.[0] |
      def cls: [.args[] | select(test("^--(domain|preset|device|classes|shared-dev-num|allocation-policy)="))];
      (.initContainers[] | select(.name == "labels")) as $l
      | (.containers[] | select(.name == "devices")) as $d
      | ($l | cls) == ($d | cls) and ($l | cls | length) > 0
      and any($l.volumeMounts[]; .mountPath == "/host/dev" and .readOnly == true))' "$W/r.json" >/dev/null ||
      { echo "in $d" >&2; jq -c '.spec.template.spec? | [.initContainers[]?, .containers[]?] | map({name, args})' "$W/r.json" >&2; return 1; }
  done
  render k8s/devices/with-classes | grep -q -- '--classes=/etc/nodeprobe-devices/classes.yaml'
}

@test "devices: kustomize mounts the host's /sys only with components/sys (with-classes reads it); hostPaths not ours are Directory" {
  sysd() { # DIR: "sys" or "none" (all of volume, mounts and args, or none of them)
    render "$1" | json | jq -r -s '[.[] | select(.kind == "DaemonSet") | .spec.template.spec][0]
      | [any(.volumes[]; .hostPath.path == "/sys"),
         any(.containers[0].volumeMounts[]; .mountPath == "/host/sys"),
         any(.containers[0].args[]; . == "--sys-root=/host/sys"),
         any(.initContainers[0].volumeMounts[]; .mountPath == "/host/sys"),
         any(.initContainers[0].args[]; . == "--sysfs=/host/sys")]
      | if all then "sys" elif any then "partly \(.)" else "none" end'
  }
  [ "$(sysd k8s/devices)" = none ]
  [ "$(sysd k8s/devices/with-classes)" = sys ]
  [ "$(sysd k8s/devices/with-dra)" = sys ]
  render k8s/devices/with-classes | json | jq -e -s '[.[] | select(.kind == "DaemonSet") | .spec.template.spec
    | .volumes[] | select(.hostPath) | {name, type: .hostPath.type}] | map(select(.type != "Directory"))
    == [{"name": "cdi", "type": "DirectoryOrCreate"}]' >/dev/null
}

