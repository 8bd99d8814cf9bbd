#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# k8s/: every kustomization renders offline with `kubectl kustomize`, and the rendered objects
# follow the rules in test/k8s/check-manifests; RBAC equals what nodeprobe-reload calls; the
# Flux, helmfile and Helm-values forms say the same as the kustomize forms.
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
  for d in k8s/mirror k8s/mirror/cleanup; do
    render "$d" | "$T/check-manifests" || { echo "in $d" >&2; return 1; }
  done
  for d in k8s/reload k8s/reload/namespaced; do
    render "$d" | "$T/check-manifests" --rbac "$T/rbac-reload.txt" || { echo "in $d" >&2; return 1; }
  done
  # --enable-ha: the same, plus a Role granting exactly rbac-reload-ha.txt
  render k8s/reload/ha | "$T/check-manifests" --rbac "$T/rbac-reload.txt" --rbac "$T/rbac-reload-ha.txt" ||
    { echo "in k8s/reload/ha" >&2; return 1; }
  # Components, rendered onto NFD's and Spegel's own output: only our containers are ours.
  for d in test/k8s/nfd-chart test/k8s/nfd-kustomize test/k8s/spegel-chart; do
    render "$d" | "$T/check-manifests" --ours "$OURS" || { echo "in $d" >&2; return 1; }
  done
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
    '.spec.template.spec.containers[0].securityContext.runAsNonRoot = false' \
    '.spec.template.spec.automountServiceAccountToken = true' \
    '.spec.template.spec.hostNetwork = true' \
    'del(.spec.template.spec.securityContext.seccompProfile)'; do
    jq "if .kind == \"DaemonSet\" then $bad else . end" "$W/good.json" >"$W/bad.json"
    run "$T/check-manifests" <"$W/bad.json"
    [ "$status" -eq 1 ] || { echo "not caught: $bad" >&2; return 1; }
  done
  # RBAC: one verb more, or one less, than rbac-reload.txt.
  render k8s/reload >"$W/rbac.json"
  jq 'if .kind == "ClusterRole" then .rules[2].verbs += ["delete"] else . end' "$W/rbac.json" >"$W/bad.json"
  run "$T/check-manifests" --rbac "$T/rbac-reload.txt" <"$W/bad.json"
  [ "$status" -eq 1 ]
  [[ $output == *"grants core events delete"* ]]
  jq 'if .kind == "ClusterRole" then .rules[1].verbs -= ["patch"] else . end' "$W/rbac.json" >"$W/bad.json"
  run "$T/check-manifests" --rbac "$T/rbac-reload.txt" <"$W/bad.json"
  [ "$status" -eq 1 ]
  [[ $output == *"lacks apps deployments patch"* ]]
  # --enable-ha's Role missing: its grants are not "nowhere" but a failure
  run "$T/check-manifests" --rbac "$T/rbac-reload.txt" --rbac "$T/rbac-reload-ha.txt" <"$W/rbac.json"
  [ "$status" -eq 1 ]
  [[ $output == *"no Role or ClusterRole grants exactly $T/rbac-reload-ha.txt"* ]]
  # Nothing to check is not a pass: RBAC rules without any Role, a component that added none
  # of our containers (NFD's and Spegel's own output alone).
  jq 'select(.kind | test("Role$") | not)' "$W/rbac.json" >"$W/norole.json"
  run "$T/check-manifests" --rbac "$T/rbac-reload.txt" <"$W/norole.json"
  [ "$status" -eq 2 ]
  [[ $output == *"no Role or ClusterRole"* ]]
  local fx
  for fx in nfd-chart/worker.yaml nfd-kustomize/worker.yaml spegel-chart/daemonset.yaml; do
    KUBECONFIG=/dev/null kubectl patch --local -f "$T/$fx" --type merge -p '{}' -o json >"$W/alone.json"
    run "$T/check-manifests" --ours "$OURS" <"$W/alone.json"
    { [ "$status" -eq 2 ] && [[ $output == *"no container checked"* ]]; } || { echo "$fx alone: $status $output" >&2; return 1; }
  done
}

@test "RBAC: only nodeprobe-reload has any, exactly as listed in its man page" {
  local d
  for d in k8s/mirror k8s/mirror/cleanup k8s/nfd/values test/k8s/nfd-chart test/k8s/spegel-chart; do
    run sh -c "'$T/render' '$d' | jq -r 'select(.kind | test(\"Role|ServiceAccount\")) | .kind'"
    [ -z "$output" ] || { echo "$d has $output" >&2; return 1; }
  done
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
  diff -u <(grep -hv '^#' "$T/rbac-reload.txt" "$T/rbac-reload-ha.txt" | sort) <(sort "$W/man-rbac.txt")
  # --enable-ha's leases: a Role in the pod's own namespace (the Lease's), never cluster-wide
  render k8s/reload/ha >"$W/ha.json"
  [ "$(jq -r 'select(.kind == "Role") | [.metadata.name, .metadata.namespace] | join(" ")' "$W/ha.json")" = "nodeprobe-reload-leases nodeprobe-system" ]
  [ "$(jq -r 'select(.kind == "ClusterRole") | .rules[].resources[]' "$W/ha.json" | grep -c leases)" -eq 0 ]
  one RoleBinding '.roleRef.name == "nodeprobe-reload-leases" and .subjects[0].name == "nodeprobe-reload"' "$W/ha.json"
  one Deployment '.spec.replicas == 2 and (.spec.template.spec.containers[0].args | index("--enable-ha=true") != null) and ([.spec.template.spec.containers[0].env[].name] == ["POD_NAME", "POD_NAMESPACE"])' "$W/ha.json"
  # the component on the one-namespace variant: both env vars kept, the leases Role there too
  render test/k8s/reload-namespaced-ha >"$W/nsha.json"
  "$T/check-manifests" --rbac "$T/rbac-reload.txt" --rbac "$T/rbac-reload-ha.txt" <"$W/nsha.json"
  [ "$(jq -r 'select(.kind | test("^Cluster")) | .kind' "$W/nsha.json")" = "" ]
  [ "$(jq -r 'select(.kind == "Role") | .metadata.namespace' "$W/nsha.json" | sort -u)" = my-app ]
  one Deployment '([.spec.template.spec.containers[0].env[].name] | sort) == ["POD_NAME", "POD_NAMESPACE"] and (.spec.template.spec.containers[0].args | index("--namespace=$(POD_NAMESPACE)") != null)' "$W/nsha.json"
}

@test "nfd component: adds the init container, leaves NFD's own containers alone" {
  local d
  for d in nfd-chart nfd-kustomize; do
    render "test/k8s/$d" >"$W/after.json"
    # Before: the fixture alone.
    KUBECONFIG=/dev/null kubectl patch --local -f "test/k8s/$d/worker.yaml" --type merge -p '{}' -o json >"$W/before.json"
    diff <(jq -S .spec.template.spec.containers "$W/before.json") <(jq -S .spec.template.spec.containers "$W/after.json")
    [ "$(jq -r '.spec.template.spec.initContainers | map(.name) | join(",")' "$W/after.json")" = nodeprobe ]
    jq -e '.spec.template.spec.initContainers[0] | .args == ["--sysfs=/host-sys", "--features-dir=/etc/kubernetes/node-feature-discovery/features.d"]' "$W/after.json"
    # Mounts NFD's existing volumes: features-d read-write, host-sys and host-lib read-only.
    jq -e '.spec.template.spec.initContainers[0].volumeMounts | map({(.name): (.readOnly // false)}) | add
           | .["features-d"] == false and .["host-sys"] == true and .["host-lib"] == true' "$W/after.json"
    jq -e '.spec.template.spec.initContainers[0].volumeMounts[] | select(.name == "host-lib") | .mountPath == "/lib/modules" and .subPath == "modules"' "$W/after.json"
    # Every volume it mounts exists in the pod (NFD's, or the component's own).
    jq -e '.spec.template.spec as $p | [$p.initContainers[0].volumeMounts[].name] - [$p.volumes[].name] == []' "$W/after.json"
    # NFD's volumes are left as they were (host-lib included), one more for the token.
    diff <(jq -S '.spec.template.spec.volumes | sort_by(.name)' "$W/before.json") \
         <(jq -S '.spec.template.spec.volumes | map(select(.name != "nodeprobe-no-token")) | sort_by(.name)' "$W/after.json")
  done
  # Older NFD charts have no host-lib volume (nor mount): the component brings it, so the pod
  # still mounts only volumes that exist.
  mkdir "$W/old"
  jq 'del(.spec.template.spec.volumes[] | select(.name == "host-lib"))
      | del(.spec.template.spec.containers[0].volumeMounts[] | select(.name == "host-lib"))' \
    "$W/before.json" >"$W/old/worker.json"
  printf 'resources: [worker.json]\ncomponents: [%s]\n' "$(realpath --relative-to="$W/old" k8s/nfd)" >"$W/old/kustomization.yaml"
  render "$W/old" >"$W/old.json"
  jq -e '.spec.template.spec as $p | [$p.initContainers[0].volumeMounts[].name] - [$p.volumes[].name] == []' "$W/old.json"
  jq -e '.spec.template.spec.volumes[] | select(.name == "host-lib") | .hostPath.path == "/lib"' "$W/old.json"
}

@test "nfd: Helm values (chart >= 0.19) and post-renderer (older charts) give the same container" {
  render test/k8s/nfd-chart | jq -S '.spec.template.spec.initContainers[0]' >"$W/component.json"
  render --yaml-doc k8s/nfd/values/values.yaml | jq -S '.worker.initContainers[0]' >"$W/values.json"
  # Identical except how the token is hidden (the chart has no extra-volume value).
  diff -u <(jq 'del(.volumeMounts)' "$W/component.json") <(jq 'del(.volumeMounts)' "$W/values.json")
  diff -u <(jq '.volumeMounts[:3]' "$W/component.json") <(jq '.volumeMounts[:3]' "$W/values.json")
  jq -e '.volumeMounts[3] | .mountPath == "/var/run/secrets/kubernetes.io/serviceaccount" and .readOnly' "$W/values.json"
  # The post-renderer output is the component's output.
  k8s/post-render k8s/nfd <test/k8s/nfd-chart/worker.yaml >"$W/post.yaml"
  diff -u <(kubectl kustomize test/k8s/nfd-chart) "$W/post.yaml"
  run k8s/post-render /nonexistent </dev/null
  [ "$status" -ne 0 ]
  # A chart in which the component finds nothing to patch is an error, not a silent no-op.
  run k8s/post-render k8s/nfd <test/k8s/spegel-chart/daemonset.yaml
  [ "$status" -eq 1 ]
  [[ $output == *"k8s/nfd changed nothing"* ]]
  run k8s/post-render k8s/mirror/spegel <test/k8s/nfd-chart/worker.yaml
  [ "$status" -eq 1 ]
  k8s/post-render k8s/mirror/spegel <test/k8s/spegel-chart/daemonset.yaml | grep -q 'image: ghcr.io/nodeprobe/nodeprobe:'
}

@test "mirror: every node, all registries, Spegel on 29999 via the node IP; cleanup only on uninstall" {
  render k8s/mirror >"$W/m.json"
  one DaemonSet '.spec.template.spec.tolerations == [{"operator": "Exists"}]' "$W/m.json"
  jq -r 'select(.kind == "DaemonSet") | .spec.template.spec.initContainers[0].args[]' "$W/m.json" >"$W/args"
  [ "$(head -1 "$W/args")" = configure ]
  grep -qx -- '--mirror-target=http://$(NODE_IP):29999' "$W/args"
  one DaemonSet '.spec.template.spec.initContainers[0].env | map(select(.name == "NODE_IP")) | .[0].valueFrom.fieldRef.fieldPath == "status.hostIP"' "$W/m.json"
  local r
  for r in docker.io ghcr.io quay.io gcr.io registry.k8s.io mcr.microsoft.com public.ecr.aws gitea.example.internal; do
    grep -qx -- "--registry=https://$r" "$W/args" || { echo "missing $r" >&2; return 1; }
  done
  # The Spegel variant configures exactly the same.
  render test/k8s/spegel-chart | jq -r '.spec.template.spec.initContainers[] | select(.name == "configuration") | .args[]' >"$W/sargs"
  diff -u "$W/args" "$W/sargs"
  # Nothing runs on pod stop: no lifecycle hooks, anywhere.
  for d in k8s/mirror k8s/mirror/cleanup test/k8s/spegel-chart; do
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
  diff <(jq -S 'select(.kind == "DaemonSet") | del(.spec.template.spec.initContainers[0].args, .spec.template.spec.initContainers[0].name, .spec.template.metadata.annotations)' "$W/m.json") \
       <(jq -S 'select(.kind == "DaemonSet") | del(.spec.template.spec.initContainers[0].args, .spec.template.spec.initContainers[0].name, .spec.template.metadata.annotations)' "$W/c.json")
  # Spegel variant: Spegel's configuration container is replaced, not added to.
  [ "$(render test/k8s/spegel-chart | jq -r '[.spec.template.spec.initContainers[].image] | join(",")')" = ghcr.io/nodeprobe/nodeprobe:0.1.0 ]
}

@test "flux: v1 Kustomizations with prune, wait or health checks, real paths, NFD part after NFD" {
  render k8s/flux >"$W/f.json"
  jq -c 'select(.kind == "Kustomization")' "$W/f.json" >"$W/ks.json"
  [ "$(wc -l <"$W/ks.json")" -eq 4 ]
  jq -e -s 'all(.[]; .apiVersion == "kustomize.toolkit.fluxcd.io/v1" and .spec.prune == true
             and (.spec.wait == true or (.spec.healthChecks | length) > 0) and .spec.sourceRef.name == "nodeprobe")' "$W/ks.json"
  local p
  for p in $(jq -r '.spec.path' "$W/ks.json"); do
    render "$p" >/dev/null || { echo "flux path $p does not render" >&2; return 1; }
  done
  dep() { jq -r "select(.metadata.name == \"$1\") | [.spec.dependsOn[]?.name] | join(\",\")" "$W/ks.json"; }
  [ "$(dep nodeprobe-mirror)" = "" ]
  [ "$(dep spegel)" = nodeprobe-mirror ]
  [ "$(dep nodeprobe-nfd)" = node-feature-discovery ]
  [ "$(dep nodeprobe-reload)" = nodeprobe-mirror ]
  render k8s/flux/spegel >"$W/s.json"
  one HelmRelease '.spec.values.service.registry.hostPort == 29999 and .spec.values.spegel.containerdMirrorAdd == false' "$W/s.json"
}

@test "helmfile: mirror, then Spegel, then everything else, via needs" {
  local f=k8s/helmfile/helmfile.d/00-bootstrap.yaml
  render --yaml-doc "$f" >"$W/h.json"
  jq -c '.releases[]' "$W/h.json" >"$W/rel.json"
  needs() { jq -r "select(.name == \"$1\") | [.needs[]?] | join(\",\")" "$W/rel.json"; }
  [ "$(jq -r .name "$W/rel.json" | head -2 | paste -sd,)" = nodeprobe-mirror,spegel ]
  [ "$(needs nodeprobe-mirror)" = "" ]
  [ "$(needs spegel)" = nodeprobe-mirror/nodeprobe-mirror ]
  local r
  for r in $(jq -r 'select(.name != "nodeprobe-mirror" and .name != "spegel") | .name' "$W/rel.json"); do
    [ "$(needs "$r")" = spegel/spegel ] || { echo "$r does not need spegel" >&2; return 1; }
  done
  # Every `needs` names a release of this file as namespace/name.
  jq -r '.namespace + "/" + .name' "$W/rel.json" | sort >"$W/names"
  jq -r '.needs[]?' "$W/rel.json" | sort -u | comm -23 - "$W/names" >"$W/dangling"
  [ ! -s "$W/dangling" ]
  # Local charts, values files and hook paths exist and render, relative to helmfile.d/.
  local dir=k8s/helmfile/helmfile.d p
  for p in $(jq -r 'select(.chart | startswith("../")) | .chart' "$W/rel.json") \
           $(jq -r '.hooks[]?.args | select(index("-k")) | .[index("-k") + 1]' "$W/rel.json"); do
    render "$dir/$p" >/dev/null || { echo "helmfile path $p does not render" >&2; return 1; }
  done
  for p in $(jq -r '.values[]? | strings' "$W/rel.json"); do
    [ -f "$dir/$p" ] || { echo "missing values file $p" >&2; return 1; }
  done
  # The uninstall hook runs only on uninstall.
  [ "$(jq -r '.hooks[]?.events[]' "$W/rel.json" | sort -u)" = preuninstall ]
}

@test "every option and subcommand the manifests pass is one the binary documents" {
  local d
  for d in $(kustomizations); do render "$d"; done >"$W/all.json"
  render --yaml-doc k8s/nfd/values/values.yaml >>"$W/all.json"
  local bin man missing=0 word
  for bin in nodeprobe nodeprobe-mirror nodeprobe-reload; do
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
  args() { jq -r --arg c "$2" '.. | objects | select(.command? == [$c]) | .args[]' "$1"; }
  # nodeprobe as the NFD component runs it, with the host paths moved onto a fixture and $W.
  render test/k8s/nfd-chart >"$W/nfd.json"
  mapfile -t a < <(args "$W/nfd.json" /usr/bin/nodeprobe |
    sed -e "s|^--sysfs=/host-sys\$|--sysfs=$FIX/pci/linuxhw-intel-nuc12-alderlake|" \
        -e "s|^--features-dir=/etc/kubernetes/node-feature-discovery/features.d\$|--features-dir=$W/features.d|")
  [ "${#a[@]}" -eq 2 ]
  [[ ${a[0]} == --sysfs=$FIX/* ]]
  [[ ${a[1]} == --features-dir=$W/* ]]
  mkdir "$W/features.d"
  "$BUILD/nodeprobe" "${a[@]}"
  grep -qx 'intel.feature.node.kubernetes.io/gpu=true' "$W/features.d/nodeprobe"
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
  grep -qx "\[host.'http://10.0.0.5:29999'\]" "$W/certs.d/docker.io/hosts.toml"
  grep -qx "\[host.'http://10.0.0.5:29999'\]" "$W/certs.d/gitea.example.internal/hosts.toml"
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
