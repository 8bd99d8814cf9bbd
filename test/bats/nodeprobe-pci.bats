#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe on the PCI fixture machines: built-in rules, module gating, user rules, bad sysfs.
# Expected labels: test/data/pci-labels/<machine>.labels, derived by hand from
# test/fixtures/pci/oracle.tsv and cmd/nodeprobe/rules.d (see the README there).

load helpers

PCI="$FIX/pci"
EXP="$NP_ROOT/test/data/pci-labels"

setup() {
  T=$(mktemp -d)
  mkdir -p "$T/proc" "$T/modules" "$T/fd"
}

teardown() {
  rm -rf "$T"
}

# np MACHINE [ARGS...]: dry run on a fixture machine, no loaded or built-in modules.
np() {
  local m=$1; shift
  "$BUILD/nodeprobe" --sysfs "$PCI/$m" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/fd" "$@"
}

@test "Alder Lake NUC: Intel GPU labels (i915 bound)" {
  run_expect "$EXP/linuxhw-intel-nuc12-alderlake.labels" np linuxhw-intel-nuc12-alderlake --dry-run
}

@test "NVIDIA machines: the GPU operator's presence labels" {
  run_expect "$EXP/pciutils-cap-exp-lnkcap2.labels" np pciutils-cap-exp-lnkcap2 --dry-run
  run_expect "$EXP/pciutils-tree-asus-p6t6.labels" np pciutils-tree-asus-p6t6 --dry-run
}

@test "AMD machine: pci-0300_1002.present, not the operator's amd-gpu (Fiji is not in its list)" {
  run_expect "$EXP/pciutils-cap-rebar.labels" np pciutils-cap-rebar --dry-run
}

@test "no bound driver, no module: device-id labels but not Intel's driver-gated gpu label" {
  run_expect "$EXP/pciutils-tree-fujitsu-p8010.labels" np pciutils-tree-fujitsu-p8010 --dry-run
  ! grep -q '^intel.feature.node.kubernetes.io/gpu=' <<<"$output" || false
}

@test "a built-in i915 (modules.builtin) gives the gated label to the same machine" {
  printf 'kernel/drivers/gpu/drm/i915/i915.ko\n' > "$T/modules/modules.builtin"
  run np pciutils-tree-fujitsu-p8010 --dry-run
  [ "$status" -eq 0 ]
  grep -qx 'intel.feature.node.kubernetes.io/gpu=true' <<<"$output"
}

# sweep_machines PCI_DIR: every machine under PCI_DIR is scanned and its features file matches
# the expectation (none where there is no .labels file). Sets n.
sweep_machines() {
  local d m
  n=0
  for d in "$1"/*/bus; do
    m=$(basename "$(dirname "$d")")
    rm -f "$T/fd/nodeprobe"
    "$BUILD/nodeprobe" --sysfs "$1/$m" --proc "$T/proc" --modules-dir "$T/modules" \
      --features-dir "$T/fd" || { echo "$m: exit $?" >&2; return 1; }
    if [ -f "$EXP/$m.labels" ]; then
      diff -u "$EXP/$m.labels" "$T/fd/nodeprobe" >&2
    else
      [ ! -s "$T/fd/nodeprobe" ] || { echo "$m: unexpected labels" >&2; cat "$T/fd/nodeprobe" >&2; return 1; }
    fi
    n=$((n + 1))
  done
}

@test "every PCI fixture machine is scanned; the features file matches the expectation" {
  sweep_machines "$PCI"
  [ "$n" -ge 9 ]
  # Every machine with an expectation is among the clone's fixtures.
  for e in "$EXP"/*.labels; do
    [ -d "$PCI/$(basename "$e" .labels)" ] || { echo "no fixture for $e" >&2; return 1; }
  done
}

@test "every PCI machine of ../shared/fixtures is scanned; the features file matches the expectation" {
  shared_fix_or_skip
  sweep_machines "$SHARED_FIX/pci"
  [ "$n" -ge 40 ]
  echo "# swept $n PCI machines of ../shared/fixtures" >&3
}

@test "QAT needs intel_qat and vfio-pci loaded: the c6xx driver alone is not enough" {
  run np linuxhw-qat-c62x --dry-run
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  printf 'intel_qat 335872 1 qat_c62x, Live 0x0\nqat_c62x 16384 0 - Live 0x0\n' > "$T/proc/modules"
  run np linuxhw-qat-c62x --dry-run
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  printf 'kernel/drivers/vfio/pci/vfio-pci.ko\n' > "$T/modules/modules.builtin"
  run np linuxhw-qat-c62x --dry-run
  [ "$status" -eq 0 ]
  [ "$output" = "intel.feature.node.kubernetes.io/qat=true" ]
}

@test "DSA: 0b25 bound to idxd" {
  run_expect "$EXP/pciutils-pri-pasid.labels" np pciutils-pri-pasid --dry-run
}

@test "--no-builtin-rules: no labels from PCI alone" {
  run np linuxhw-intel-nuc12-alderlake --dry-run --no-builtin-rules
  [ "$status" -eq 0 ]
  [ -z "$output" ]
}

@test "a user rule on pci.device with a template; a feature nodeprobe does not make is no match" {
  cat > "$T/r.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: user}
spec:
  rules:
    - name: nvme
      labels: {example.com/nvme: "true"}
      labelsTemplate: |
        {{ range .pci.device }}example.com/nvme-{{ .vendor }}-{{ .device }}={{ .driver }}
        {{ end }}
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            class: {op: In, value: ["0108"]}
            driver: {op: Exists}
    - name: cpu
      labels: {example.com/local: "true"}
      matchFeatures:
        - feature: local.label
          matchExpressions: {sgx.enabled: {op: IsTrue}}
Y
  out=$(np linuxhw-intel-nuc12-alderlake --dry-run --no-builtin-rules --rules "$T/r.yaml" 2>"$T/err")
  [ "$out" = $'example.com/nvme=true\nexample.com/nvme-1d97-5216=nvme' ]
  [ "$(cat "$T/err")" = "nodeprobe: warning: $T/r.yaml:16:7: rule 'cpu' did not match: nodeprobe makes no feature 'local.label' (its terms never match, as in NFD on a node without it)" ]
}

@test "an unknown op: exit 3 with file:line:column, previous file untouched" {
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  printf '%s\n' 'apiVersion: nfd.k8s-sigs.io/v1alpha1' 'kind: NodeFeatureRule' 'metadata: {name: bad}' 'spec:' '  rules:' \
    '    - name: x' '      matchFeatures:' '        - feature: pci.device' \
    '          matchExpressions:' '            vendor: {op: Inn, value: ["8086"]}' > "$T/bad.yaml"
  run_expect_fail 3 np linuxhw-intel-nuc12-alderlake --rules "$T/bad.yaml"
  [ "$output" = "nodeprobe: error: $T/bad.yaml:10:26: unknown op 'Inn'" ]
  [ "$(cat "$T/fd/nodeprobe")" = "keep.example.com/x=true" ]
}

@test "a garbage sysfs attribute: exit 3 naming it, previous file untouched" {
  mkdir -p "$T/sys/bus/pci"
  cp -r "$PCI/linuxhw-intel-nuc12-alderlake/bus/pci/devices" "$T/sys/bus/pci/"
  chmod -R u+w "$T/sys"
  printf '0xzz86\n' > "$T/sys/bus/pci/devices/0000:00:02.0/vendor"
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  run_expect_fail 3 "$BUILD/nodeprobe" --sysfs "$T/sys" --proc "$T/proc" \
    --modules-dir "$T/modules" --features-dir "$T/fd"
  [ "$output" = "nodeprobe: error: $T/sys/bus/pci/devices/0000:00:02.0/vendor: not a 4-digit hex value" ]
  [ "$(cat "$T/fd/nodeprobe")" = "keep.example.com/x=true" ]
}

@test "an unreadable devices directory: exit 3, caught before libpci, no crash" {
  mkdir -p "$T/sys/bus/pci"
  printf 'not a directory\n' > "$T/sys/bus/pci/devices"
  run_expect_fail 3 "$BUILD/nodeprobe" --sysfs "$T/sys" --proc "$T/proc" \
    --modules-dir "$T/modules" --features-dir "$T/fd"
  [ "$output" = "nodeprobe: error: $T/sys/bus/pci/devices: Not a directory" ]
  [ ! -e "$T/fd/nodeprobe" ]
}

@test "every Arc A-series id of Intel's current rules gets gpu.intel.com/family=A_Series" {
  mkdir -p "$T/sys/bus/pci"
  cp -r "$PCI/linuxhw-intel-nuc12-alderlake/bus/pci/devices" "$T/sys/bus/pci/"
  chmod -R u+w "$T/sys"
  # the five ids added from intel-device-plugins-for-kubernetes c339e6ed, and one of the first list
  for id in 56a2 56ba 56bb 56bc 56bd 56a0; do
    printf '0x%s\n' "$id" > "$T/sys/bus/pci/devices/0000:00:02.0/device"
    run "$BUILD/nodeprobe" --dry-run --sysfs "$T/sys" --proc "$T/proc" --modules-dir "$T/modules"
    [ "$status" -eq 0 ]
    grep -qx 'gpu.intel.com/family=A_Series' <<<"$output" || { echo "$id: $output" >&2; return 1; }
  done
  printf '0x46a6\n' > "$T/sys/bus/pci/devices/0000:00:02.0/device"
  run "$BUILD/nodeprobe" --dry-run --sysfs "$T/sys" --proc "$T/proc" --modules-dir "$T/modules"
  run grep -c 'family=' <<<"$output"
  [ "$output" = 0 ]
}

@test "a driver link named 'i915<newline>evil=1' printed by a labelsTemplate adds no label line" {
  mkdir -p "$T/sys/bus/pci"
  cp -r "$PCI/linuxhw-intel-nuc12-alderlake/bus/pci/devices" "$T/sys/bus/pci/"
  chmod -R u+w "$T/sys"
  rm -f "$T/sys/bus/pci/devices/0000:00:02.0/driver"
  ln -s "../../drivers/i915"$'\n'"evil=1" "$T/sys/bus/pci/devices/0000:00:02.0/driver"
  cat > "$T/r.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: drv}
spec:
  rules:
    - name: drv
      labelsTemplate: |
        {{ range .pci.device }}example.com/drv-{{ .device }}={{ .driver }}
        {{ end }}
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            class: {op: In, value: ["0300"]}
            driver: {op: Exists}
Y
  run "$BUILD/nodeprobe" --dry-run --no-builtin-rules --sysfs "$T/sys" --proc "$T/proc" \
    --modules-dir "$T/modules" --rules "$T/r.yaml"
  [ "$status" -eq 0 ]
  run grep -c 'evil' <<<"$(grep -v 'warning' <<<"$output")"
  [ "$output" = 0 ]
  run "$BUILD/nodeprobe" --dry-run --no-builtin-rules --sysfs "$T/sys" --proc "$T/proc" \
    --modules-dir "$T/modules" --rules "$T/r.yaml"
  [[ $output == *"rule 'drv': labelsTemplate line \"example.com/drv-46a6=i915\\x1fevil=1\" skipped: a value holds a newline"* ]]
  [[ $output != *$'\x1f'* ]] # escaped, never the raw byte (issue 20, 7)
}

@test "a FIFO as a PCI attribute or as --fdt is bad input at once (never a blocked read)" {
  mkdir -p "$T/sys/bus/pci"
  cp -r "$PCI/linuxhw-intel-nuc12-alderlake/bus/pci/devices" "$T/sys/bus/pci/"
  chmod -R u+w "$T/sys"
  rm "$T/sys/bus/pci/devices/0000:00:02.0/class"
  mkfifo "$T/sys/bus/pci/devices/0000:00:02.0/class"
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  # timeout only turns a regression (a read blocked forever) into a failure; exit 124 is not 3
  run_expect_fail 3 timeout 60 "$BUILD/nodeprobe" --sysfs "$T/sys" --proc "$T/proc" \
    --modules-dir "$T/modules" --features-dir "$T/fd"
  [ "$output" = "nodeprobe: error: $T/sys/bus/pci/devices/0000:00:02.0/class: not a regular file" ]
  mkfifo "$T/f.dtb"
  run_expect_fail 3 timeout 60 "$BUILD/nodeprobe" --sysfs "$T/sys" --proc "$T/proc" \
    --modules-dir "$T/modules" --features-dir "$T/fd" --fdt "$T/f.dtb"
  [ "$output" = "nodeprobe: error: $T/f.dtb: not a regular file" ]
  [ "$(cat "$T/fd/nodeprobe")" = "keep.example.com/x=true" ]
}
