#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# NFD's CRD schema (test/crd, NFD v0.19.0): the built-in rules are NodeFeatureRules it accepts, and
# nodeprobe's loader refuses what it refuses.
load helpers

CRD="$NP_ROOT/test/crd/nfd-api-crds.yaml"
VALIDATE="$NP_ROOT/test/crd/crd-validate"

setup() {
  T=$(mktemp -d)
  mkdir -p "$T/sys/bus" "$T/proc" "$T/fd"
  NP=("$BUILD/nodeprobe" --dry-run --no-builtin-rules --sysfs "$T/sys" --proc "$T/proc"
      --modules-dir "$T/modules" --features-dir "$T/fd")
}

teardown() {
  rm -rf "$T"
}

@test "every cmd/nodeprobe/rules.d/*.yaml passes NFD's CRD schema (nodefeaturerules, v0.19.0)" {
  files=("$NP_ROOT"/cmd/nodeprobe/rules.d/*.yaml)
  [ "${#files[@]}" -ge 4 ]
  run "$VALIDATE" "$CRD" "${files[@]}"
  [ "$status" -eq 0 ] || { echo "$output" >&2; false; }
}

@test "the NFD documentation examples file is a valid NodeFeatureRule too" {
  run "$VALIDATE" "$CRD" "$NP_ROOT/test/data/rules/nfd-doc-examples.yaml"
  [ "$status" -eq 0 ] || { echo "$output" >&2; false; }
}

@test "the validator refuses what kube-apiserver refuses (countLabelsTemplate, a LabelCountRule)" {
  cat > "$T/old.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata:
  name: old
spec:
  rules:
    - name: count
      countLabelsTemplate: "x"
Y
  run "$VALIDATE" "$CRD" "$T/old.yaml"
  [ "$status" -eq 1 ]
  [[ "$output" == *"spec.rules.0: Additional properties are not allowed ('countLabelsTemplate' was unexpected)"* ]]
  run "$VALIDATE" "$CRD" "$NP_ROOT"/cmd/nodeprobe/counts.d/*.yaml
  [ "$status" -eq 1 ]
  [[ "$output" == *"not a NodeFeatureRule of nfd.k8s-sigs.io/v1alpha1"* ]]
}

# bad_doc NAME BODY: a NodeFeatureRule document named NAME whose spec.rules is BODY.
bad_doc() {
  printf 'apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata:\n  name: %s\nspec:\n  rules:\n%s\n' "$1" "$2"
}

@test "what NFD's schema refuses, nodeprobe refuses: exit 3 with file:line:column" {
  local i=0 body
  local -a bodies=(
    '    - name: x
      countLabelsTemplate: "a"'
    '    - name: x
      labels: {a.io/x: true}'
    '    - name: x
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            vendor: {op: In, values: ["8086"]}'
    '    - name: x
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            vendor: {op: Any}'
    '    - name: x
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            vendor: {op: In, value: [8086]}'
    '    - name: x
      matchFeatures:
        - matchExpressions: {vendor: {op: Exists}}'
    '    - labels: {a.io/x: "1"}'
    '    - name: x
      taints: [{key: a.io/t}]'
    '    - name: x
      matchAny:
        - feature: pci.device'
    '    - name: x
      vars: {a: 5}'
  )
  for body in "${bodies[@]}"; do
    i=$((i + 1))
    bad_doc "bad$i" "$body" > "$T/bad$i.yaml"
    run "$VALIDATE" "$CRD" "$T/bad$i.yaml"
    [ "$status" -eq 1 ] || { echo "schema accepted bad$i: $body" >&2; false; }
    run_expect_fail 3 "${NP[@]}" --rules "$T/bad$i.yaml"
    [[ "$output" == "nodeprobe: error: $T/bad$i.yaml:"[0-9]*:[0-9]*": "* ]] ||
      { echo "bad$i: $output" >&2; false; }
  done
  # a name kube-apiserver refuses
  bad_doc Upper '    - name: x' > "$T/upper.yaml"
  run "$VALIDATE" "$CRD" "$T/upper.yaml"
  [ "$status" -eq 1 ]
  run_expect_fail 3 "${NP[@]}" --rules "$T/upper.yaml"
}

@test "what NFD's schema accepts, nodeprobe loads: a bad value fails its rule, not the run" {
  bad_doc ok '    - name: no-value
      labels: {a.io/no-value: "1"}
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            vendor: {op: In}
    - name: version
      labels: {a.io/version: "1"}
      matchFeatures:
        - feature: kernel.version
          matchExpressions:
            full: {op: Gt, value: ["5.15.0"], type: version}
    - name: shown
      labels: {a.io/shown: "1"}
      annotations: {a.io/note: "x"}
      taints: [{key: a.io/t, effect: NoSchedule}]' > "$T/ok.yaml"
  run "$VALIDATE" "$CRD" "$T/ok.yaml"
  [ "$status" -eq 0 ] || { echo "$output" >&2; false; }
  run "${NP[@]}" --rules "$T/ok.yaml"
  [ "$status" -eq 0 ]
  [[ "$output" == *"a.io/shown=1"* ]]
  [[ "$output" == *"rule 'shown': 'annotations' ignored"* ]]
  [[ "$output" == *"rule 'shown': 'taints' ignored"* ]]
}
