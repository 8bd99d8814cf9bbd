#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe --features: the raw features as NFD's NodeFeature object holds them, checked against
# the rules engine itself (what matchFeatures sees), and --summary, make run's picture.

load helpers

H="$FIX/host/firecracker-x86"
NUC="$FIX/pci/linuxhw-intel-nuc12-alderlake"
RPI4="$FIX/dtb/arm64/broadcom/bcm2711-rpi-4-b.dtb"
EXP="$BATS_TEST_DIRNAME/expected"

setup() {
  np_scratch
  export NODE_NAME=fixture-node
}

teardown() {
  rm -rf "$T"
}

# np_fc ARGS...: nodeprobe on the captured Firecracker x86 host (every path a fixture's)
np_fc() {
  "$BUILD/nodeprobe" --sysfs "$H/sys" --proc "$H/proc" --cpuid "$H/cpuid.txt" \
    --os-release "$H/etc/os-release" --boot "$T/boot" --modules-dir "$T/modules" \
    --features-dir "$T/fd" --no-builtin-rules "$@"
}

# oracle DUMP.json OUT.yaml: NodeFeatureRules that hold only if the rules engine sees exactly
# the dumped features: per flags/attributes feature one rule matching every element (Exists /
# In [value]) and one matching any element name NOT in the dump (must not fire); per instance
# one rule matching all its attributes; per instances feature one for an unlisted attribute
# name. (A devicetree's own labels are left out.) Labels: example.com/<ok|extra>-<n>; the expected labels go to OUT.yaml.want.
oracle() {
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import json, sys
dump = json.load(open(sys.argv[1]))["spec"]["features"]
rules, want, n = [], [], 0
# the element names of one feature name across its kinds: x86 cpu.cpuid is flags plus the
# attribute AVX10_VERSION, and a term matches on either part (NFD)
every = {}
for kind in ("flags", "attributes"):
    for name, f in dump[kind].items():
        every.setdefault(name, set()).update(f["elements"])
def rule(label, terms):
    rules.append({"name": label, "labels": {"example.com/" + label: "true"}, "matchFeatures": terms})
for kind in ("flags", "attributes", "instances"):
    for name, f in sorted(dump[kind].items()):
        n += 1
        if kind == "instances":
            names = sorted({k for i in f["elements"] for k in i["attributes"]})
            for j, inst in enumerate(f["elements"]):
                exprs = {k: {"op": "In", "value": [v]} for k, v in inst["attributes"].items()}
                rule("ok-%d-%d" % (n, j), [{"feature": name, "matchExpressions": exprs}] if exprs else [{"feature": name}])
                want.append("example.com/ok-%d-%d=true" % (n, j))
            if not f["elements"]:
                rule("ok-%d" % n, [{"feature": name}])
                want.append("example.com/ok-%d=true" % n)
        else:
            names = sorted(every[name])
            exprs = {k: ({"op": "Exists"} if kind == "flags" else {"op": "In", "value": [v]})
                     for k, v in f["elements"].items()}
            rule("ok-%d" % n, [{"feature": name, "matchExpressions": exprs}] if exprs else [{"feature": name}])
            want.append("example.com/ok-%d=true" % n)
        rule("extra-%d" % n, [{"feature": name, "matchName": {"op": "NotIn", "value": names + ["-never-"]}}])
doc = {"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeatureRule",
       "metadata": {"name": "oracle"}, "spec": {"rules": rules}}
open(sys.argv[2], "w").write(json.dumps(doc, indent=1) + "\n")
# nodeprobe sorts labels by key
open(sys.argv[2] + ".want", "w").write("\n".join(sorted(want, key=lambda l: l.split("=")[0])) + "\n")
EOF
}

# agree ARGS...: --features -o json with ARGS, then the oracle's rules through a dry run with
# the same ARGS: exactly the expected labels (every dumped element seen, none more).
agree() {
  "$@" --features -o json >"$T/dump.json"
  [ "$(jq '[.spec.features[] | length] | add' "$T/dump.json")" -gt 0 ]
  oracle "$T/dump.json" "$T/oracle.yaml"
  "$@" --dry-run -r "$T/oracle.yaml" | grep '^example\.com/' >"$T/labels"
  diff -u "$T/oracle.yaml.want" "$T/labels" >&2
}

@test "--help and the man page list the same options (--features, --output, --summary)" {
  check_help_matches_man "$BUILD/nodeprobe" "$NP_ROOT/cmd/nodeprobe/nodeprobe.8"
  "$BUILD/nodeprobe" --help | grep -q -- '--features\[=NAME,...\]'
  "$BUILD/nodeprobe" --help | grep -q -- '--summary'
}

@test "--features: the Firecracker host's cpu, kernel, memory, network, storage, system, usb features as a NodeFeature (YAML)" {
  run_expect "$EXP/features-firecracker.yaml" np_fc \
    --features=cpu,kernel.version,kernel.selinux,kernel.kvm,memory,network,storage,system,usb
}

@test "--features -o json: the NUC 12's pci.device instances, the same object in JSON" {
  run_expect "$EXP/features-nuc12-pci.json" "$BUILD/nodeprobe" --sysfs "$NUC" --proc "$T/proc" \
    --modules-dir "$T/modules" --no-builtin-rules --features=pci.device -o json
}

@test "--features: YAML and JSON are the same object; the whole host (kernel.config too) parses" {
  np_fc --features >"$T/a.yaml"
  np_fc --features --output=json >"$T/a.json"
  /usr/bin/python3 -c 'import json, sys, yaml
a = yaml.safe_load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a == b, "differ"
assert a["kind"] == "NodeFeature" and a["metadata"]["name"] == "fixture-node"
assert a["metadata"]["labels"]["nfd.node.kubernetes.io/node-name"] == "fixture-node"
f = a["spec"]["features"]
assert set(f) == {"flags", "attributes", "instances"}
assert f["attributes"]["kernel.config"]["elements"]["64BIT"] == "y"
assert f["flags"]["cpu.cpuid"]["elements"]["AVX2"] == {}
assert all(isinstance(v, str) for v in f["attributes"]["kernel.config"]["elements"].values())' \
    "$T/a.yaml" "$T/a.json"
}

@test "--features is a valid NodeFeature by NFD's own CRD (v0.19.0 schema, kube-apiserver's checks): three machines" {
  np_fc --features >"$T/fc.yaml"
  "$BUILD/nodeprobe" --sysfs "$NUC" --proc "$T/proc" --modules-dir "$T/modules" --features >"$T/nuc.yaml"
  "$BUILD/nodeprobe" --sysfs "$FIX/usb/homelab" --fdt "$RPI4" --proc "$T/proc" \
    --modules-dir "$T/modules" --features -o json >"$T/rpi.json"
  run "$NP_ROOT/test/crd/crd-validate" --kind NodeFeature "$NP_ROOT/test/crd/nfd-api-crds.yaml" \
    "$T/fc.yaml" "$T/nuc.yaml" "$T/rpi.json"
  echo "$output" >&2
  [ "$status" -eq 0 ]
  # and the check can fail: an attributes feature's elements as a list
  sed 's/elements: {}/elements: []/' "$T/fc.yaml" >"$T/bad.yaml"
  run "$NP_ROOT/test/crd/crd-validate" --kind NodeFeature "$NP_ROOT/test/crd/nfd-api-crds.yaml" "$T/bad.yaml"
  [ "$status" -eq 1 ]
  [[ $output == *"spec.features.attributes.cpu.cstate.elements: [] is not of type 'object'"* ]]
}

@test "--features agrees with the rules engine, element by element: the Firecracker host, every feature" {
  agree np_fc
}

@test "--features agrees with the rules engine: the NUC 12's PCI tree" {
  agree "$BUILD/nodeprobe" --sysfs "$NUC" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/fd" --no-builtin-rules
}

@test "--features agrees with the rules engine: the Raspberry Pi 4 blob (dt.*) and a USB tree" {
  agree "$BUILD/nodeprobe" --sysfs "$FIX/usb/homelab" --fdt "$RPI4" --proc "$T/proc" \
    --modules-dir "$T/modules" --features-dir "$T/fd" --no-builtin-rules
}

@test "the oracle fails when the dump and the engine differ (a value changed, an element dropped)" {
  np_fc --features -o json >"$T/dump.json"
  jq '.spec.features.attributes["cpu.model"].elements.family += "0"' "$T/dump.json" >"$T/changed.json"
  oracle "$T/changed.json" "$T/o1.yaml"
  run np_fc --dry-run -r "$T/o1.yaml"
  ! diff -q "$T/o1.yaml.want" <(printf '%s\n' "$output") >/dev/null || false
  jq 'del(.spec.features.flags["cpu.cpuid"].elements.AVX2)' "$T/dump.json" >"$T/dropped.json"
  oracle "$T/dropped.json" "$T/o2.yaml"
  run np_fc --dry-run -r "$T/o2.yaml"
  grep -q '^example.com/extra-' <<<"$output"
}

@test "--features=NAME: only those; a bare domain names all of it; an unknown name is a warning" {
  run np_fc --features=kernel.version,system
  [ "$status" -eq 0 ]
  [ "$(grep -cE '^      [a-z]+\.[a-z]+:$' <<<"$output")" -eq 3 ] # kernel.version system.name system.osrelease
  run np_fc --features=kernel.versio -o json
  [ "$status" -eq 0 ]
  [[ $output == *"nodeprobe: warning: --features: no source made 'kernel.versio' on this machine"* ]]
  run np_fc --features=pci.device,
  [ "$status" -eq 2 ]
  [[ $output == *"--features: an empty name"* ]]
}

@test "--output without --features, a format other than yaml/json, and --remove --features are usage errors" {
  run np_fc -o json
  [ "$status" -eq 2 ]
  [[ $output == *"--output is the format of --features"* ]]
  run np_fc --features -o xml
  [ "$status" -eq 2 ]
  [[ $output == *"--output 'xml': want yaml or json"* ]]
  run "$BUILD/nodeprobe" --features-dir "$T/fd" --remove --features
  [ "$status" -eq 2 ]
}

@test "--features writes no file and reads no rule's labels, but a bad rules file is still exit 3" {
  np_fc --features=kernel.version >/dev/null
  [ ! -e "$T/fd/nodeprobe" ]
  printf 'apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nspec: [\n' >"$T/bad.yaml"
  run np_fc --features -r "$T/bad.yaml"
  [ "$status" -eq 3 ]
}

@test "--summary: per source its features and examples; 0 labels says why" {
  run_expect "$EXP/summary-firecracker.txt" np_fc --dry-run --summary
}

@test "--summary with labels: the NUC 12's GPU, its PCI ids, the label count" {
  run "$BUILD/nodeprobe" --sysfs "$NUC" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/fd" --os-release "$H/etc/os-release" --dry-run --summary
  [ "$status" -eq 0 ]
  grep -qx 'intel.feature.node.kubernetes.io/gpu=true' <<<"$output"
  grep -qx '  pci      1 feature: 25 PCI devices, e.g. 8086:4621 (class 0600), 8086:46a6 (class 0300), 8086:464d (class 0604), ...' <<<"$output"
  [ "${lines[-1]}" = "3 labels" ]
}
