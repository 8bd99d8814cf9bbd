#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# k8s/devices/components/dra (issue 28; k8s.bats holds the other kustomize forms): its DRA
# classes, DeviceClasses and slices policy are the chart's for the same classes; every object is
# one kubectl takes (test/fake-apiserver's discovery) and passes test/k8s/k8s_schema.py, whose
# rules are each shown to bite.
load helpers
source "$NP_ROOT/test/fake-apiserver/fake.bash"

K=$NP_ROOT/k8s
T=$NP_ROOT/test/k8s

setup() {
  cd "$NP_ROOT" && W=$(mktemp -d)
  command -v kubectl >/dev/null || { echo "kubectl not found (test/k8s/render uses it)" >&2; return 1; }
}

teardown() { rm -rf "$W"; }

@test "devices: components/dra (issue 28): DRA classes with the chart's DeviceClasses, token for the plugin only, the chart's RBAC and slices policy" {
  command -v helm >/dev/null || { echo "helm not found: scripts/install-deps installs it" >&2; return 1; }
  "$T/render" k8s/devices/with-dra >"$W/k.json"
  "$T/check-manifests" --role nodeprobe-devices-dra="$T/rbac-devices-dra.txt" <"$W/k.json"
  # kubectl takes every object (kinds and scopes from the fake API server's discovery)
  [ "$(fake_dry_run "$W/k.json" | grep -c '^deviceclass.resource.k8s.io/')" = 3 ]
  # the chart with the component's classes (nodeprobe.io, extendedResourceName on), released as
  # nodeprobe in nodeprobe-devices: its ServiceAccount is the component's nodeprobe-devices
  python3 -c 'import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
print(json.dumps({"devices": {"enabled": True, "domain": "nodeprobe.io", "classes": [{"name": d["metadata"]["name"], "spec": d["spec"]} for d in docs],
  "dra": {"extendedResourceName": True}}}))' k8s/devices/components/dra/classes.yaml >"$W/values.json"
  helm template nodeprobe "$NP_ROOT/k8s/chart/nodeprobe" -n nodeprobe-devices -f "$W/values.json" |
    KUBECONFIG=/dev/null kubectl patch --local -f - --type merge -p '{}' -o json >"$W/c.json"
  # one DeviceClass per DRA class of classes.yaml, each the chart's to the byte (labels aside)
  dc() { jq -c -s '[.[] | select(.kind == "DeviceClass") | {name: .metadata.name, spec}] | sort_by(.name)' "$1"; }
  [ "$(dc "$W/k.json" | jq length)" = 3 ]
  [ "$(dc "$W/k.json")" = "$(dc "$W/c.json")" ]
  # the slices policy and its binding, the chart's; the username is the ServiceAccount the
  # DaemonSet runs as
  vap() { jq -c -s '[.[] | select(.kind | test("^ValidatingAdmissionPolicy")) | {kind, name: .metadata.name, spec}] | sort_by(.kind)' "$1"; }
  [ "$(vap "$W/k.json" | jq length)" = 2 ]
  [ "$(vap "$W/k.json")" = "$(vap "$W/c.json")" ]
  sa=$(jq -r 'select(.kind == "DaemonSet") | "system:serviceaccount:\(.metadata.namespace):\(.spec.template.spec.serviceAccountName)"' "$W/k.json")
  [ "$(jq -r 'select(.kind == "ValidatingAdmissionPolicy") | .spec.matchConditions[0].expression' "$W/k.json")" = "request.userInfo.username == \"$sa\"" ]
  [ "$(jq -r 'select(.kind == "ClusterRoleBinding") | .subjects[0] | "system:serviceaccount:\(.namespace):\(.name)"' "$W/k.json")" = "$sa" ]
  # the DaemonSet as the chart's in DRA mode: token in the plugin container only, NODE_NAME,
  # the kubelet's directories, the DRA options; both containers read the component's classes
  jq -s -e '.[] | select(.kind == "DaemonSet") | .spec.template.spec |
    .automountServiceAccountToken == false and
    ((.containers[0].volumeMounts | map(.name) | index("sa-token")) != null) and
    ((.initContainers[0].volumeMounts | map(.name) | index("sa-token")) == null) and
    (.containers[0].env == [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]) and
    ([.volumes[] | select(.hostPath) | .hostPath.path] | index("/var/lib/kubelet/plugins_registry") != null and index("/var/lib/kubelet/plugins") != null)' "$W/k.json" >/dev/null
  a=$(jq -r 'select(.kind == "DaemonSet") | .spec.template.spec.containers[0].args[]' "$W/k.json")
  for o in --classes=/etc/nodeprobe-devices/classes.yaml --dra-driver=nodeprobe.io \
    --plugins-registry=/var/lib/kubelet/plugins_registry --dra-plugins-dir=/var/lib/kubelet/plugins; do
    grep -qx -- "$o" <<<"$a" || { echo "no $o in $a" >&2; return 1; }
  done
  # the classes file is the component's: every class DRA, and the binary takes it with the
  # base's presets
  jq -r 'select(.kind == "ConfigMap" and (.metadata.name | startswith("nodeprobe-devices-dra"))) | .data["classes.yaml"]' "$W/k.json" | head -c -1 >"$W/classes.yaml"
  cmp "$W/classes.yaml" k8s/devices/components/dra/classes.yaml
  [ "$(grep -c '^spec: {.*api: dra}$' "$W/classes.yaml")" = 3 ]
  mkdir "$W/dev" "$W/sys"
  "$BUILD/nodeprobe-devices" --list --domain=nodeprobe.io --preset=kvm --preset=fuse --classes "$W/classes.yaml" --dev-root "$W/dev" --sys-root "$W/sys"
}

@test "check-manifests: DeviceClasses, claims, pods' claims and admission policies are held to the API's fields" {
  "$T/render" k8s/devices/with-dra >"$W/ok.json"
  python3 "$T/k8s_schema.py" <"$W/ok.json"
  # bad FILTER EXPECTED: the render changed by FILTER gives a problem containing EXPECTED
  bad() {
    jq -c "$1" "$W/ok.json" >"$W/bad.json"
    run python3 "$T/k8s_schema.py" <"$W/bad.json"
    [ "$status" -eq 1 ] && [[ $output == *"$2"* ]] || { echo "$1: want '$2', got $status: $output" >&2; return 1; }
    run "$T/check-manifests" --role nodeprobe-devices-dra="$T/rbac-devices-dra.txt" <"$W/bad.json"
    [ "$status" -eq 1 ] && [[ $output == *"$2"* ]] || { echo "check-manifests: $1: want '$2'" >&2; return 1; }
  }
  dc='if .kind == "DeviceClass" and .metadata.name == "vm.nodeprobe.io" then'
  bad "$dc .spec.selector = .spec.selectors else . end" 'spec.selector: unknown field'
  bad "$dc .spec.selectors[0].cel.expression = \"\" else . end" 'cel.expression: empty'
  bad "$dc .spec.selectors[0].cel.expression = (\"x\" * 10241) else . end" '10241 characters, at most 10240'
  bad "$dc .spec.extendedResourceName = \"vm\" else . end" 'no extended resource name'
  bad "$dc .spec.selectors = [.spec.selectors[0].cel] else . end" 'selectors[0].expression: unknown field'
  bad "$dc .metadata.name = \"VM_\" else . end" 'metadata.name: no DNS subdomain'
  bad "$dc .apiVersion = \"resource.k8s.io/v1beta1\" else . end" 'want resource.k8s.io/v1'
  vp='if .kind == "ValidatingAdmissionPolicy" then'
  bad "$vp .spec.validations[0] = {message: \"x\"} else . end" 'validations[0].expression: required'
  bad "$vp .spec.failurePolicy = \"Deny\" else . end" 'failurePolicy: want Fail or Ignore'
  bad "$vp .spec.variables[1].name = .spec.variables[0].name else . end" 'spec.variables: names repeat'
  bad "$vp del(.spec.matchConstraints) else . end" 'spec.matchConstraints: required'
  bad 'if .kind == "ValidatingAdmissionPolicyBinding" then .spec.validationActions = ["Deny", "Warn"] else . end' 'validationActions'
  bad 'if .kind == "ValidatingAdmissionPolicyBinding" then .spec.policyName = "other" else . end' "no ValidatingAdmissionPolicy 'other'"
  # claims and pods: README's shapes
  printf '%s\n' '{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
    "spec": {"spec": {"devices": {"requests": [{"name": "GPU", "deviceClassName": "gpu.nodeprobe.io"}]}}}}' \
    '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"resourceClaims": [{"name": "g"}],
    "containers": [{"name": "c", "resources": {"claims": [{"name": "h"}]}}]}}' >"$W/claims.json"
  run python3 "$T/k8s_schema.py" <"$W/claims.json"
  [ "$status" -eq 1 ]
  [[ $output == *"requests[0].deviceClassName: unknown field"* ]]
  [[ $output == *"'GPU' is no DNS label"* ]]
  [[ $output == *"exactly one of exactly, firstAvailable"* ]]
  [[ $output == *"claim 'h' is not in spec.resourceClaims"* ]]
  [[ $output == *"exactly one of resourceClaimName, resourceClaimTemplateName"* ]]
}
