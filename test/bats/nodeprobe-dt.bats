#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe's devicetree source on every real fixture: blobs (--fdt) and live trees (--sysfs).

load helpers

EXP="$NP_ROOT/test/bats/expected"
DTB="$FIX/dtb"

# Unflattened tree -> the blob it was made from (fixtures/README.md).
declare -gA TREE_BLOB=(
  [rpi4b]=arm64/broadcom/bcm2711-rpi-4-b.dtb
  [jetson-nano-p3450]=arm64/nvidia/tegra210-p3450-0000.dtb
  [beaglebone-black]=armhf/ti/am335x-boneblack.dtb
  [qemu-virt-aarch64]=qemu/virt-aarch64.dtb
)

setup() {
  T=$(mktemp -d)
  mkdir -p "$T/sys/bus" "$T/proc" "$T/modules" "$T/fd"
  # Nothing but the devicetree: empty sysfs, procfs and modules dir.
  NP=("$BUILD/nodeprobe" --dry-run --no-builtin-rules --proc "$T/proc" --modules-dir "$T/modules")
}

teardown() {
  rm -rf "$T"
}

# A sysfs root whose firmware/devicetree/base is the live form of board $1's blob, made by
# test/tools/dtb2fs as the kernel shows it (a symlink, like /proc/device-tree).
sysfs_for() {
  local s="$T/sys-$1"
  mkdir -p "$s/firmware/devicetree"
  [ -d "$T/tree-$1" ] || "$BUILD/test/tools/dtb2fs" "$DTB/${TREE_BLOB[$1]}" "$T/tree-$1" >&2
  ln -s "$T/tree-$1" "$s/firmware/devicetree/base"
  echo "$s"
}

# sweep_blobs ROOT: every blob under ROOT/dtb is labelled and its root compatible labels match
# the fdtget oracle ROOT/dtb-compatible.tsv, which lists every blob there. Sets n.
sweep_blobs() {
  local root=$1 rel compat model c name
  n=0
  while IFS=$'\t' read -r rel compat model; do
    run "${NP[@]}" --sysfs "$T/sys" --fdt "$root/dtb/$rel"
    [ "$status" -eq 0 ] || { echo "$rel: exit $status: $output" >&2; return 1; }
    grep -q '^beta\.devicetree\.org/[^=]*=[1-9]' <<<"$output" || { echo "$rel: no label" >&2; return 1; }
    IFS=';' read -ra cs <<<"$compat"
    for c in "${cs[@]}"; do
      name=$(sed 's/^xlnx,/xilinx,/; s/,/-/g' <<<"$c")
      grep -qxE "beta\.devicetree\.org/${name//./\\.}=[1-9][0-9]*" <<<"$output" ||
        { echo "$rel ($model): no label for root compatible $c in:" >&2; echo "$output" >&2; return 1; }
    done
    n=$((n + 1))
  done <"$root/dtb-compatible.tsv"
  # The oracle lists every blob there is.
  [ "$n" -eq "$(find "$root/dtb" -name '*.dtb' | wc -l)" ]
}

@test "rpi4b blob: exact labels" {
  run_expect "$EXP/dt-rpi4b.txt" "${NP[@]}" --sysfs "$T/sys" --fdt "$DTB/arm64/broadcom/bcm2711-rpi-4-b.dtb"
}

@test "jetson nano blob with -n timer: /timer and /timer@60005000 both count" {
  run_expect "$EXP/dt-jetson-nano-timer.txt" "${NP[@]}" --sysfs "$T/sys" -n timer \
    --fdt "$DTB/arm64/nvidia/tegra210-p3450-0000.dtb"
}

@test "zcu102 blob: vendor xlnx becomes xilinx" {
  run_expect "$EXP/dt-zcu102.txt" "${NP[@]}" --sysfs "$T/sys" --fdt "$DTB/arm64/xilinx/zynqmp-zcu102-rev1.0.dtb"
}

@test "node names as positional arguments work like -n" {
  run_expect "$EXP/dt-jetson-nano-timer.txt" "${NP[@]}" --sysfs "$T/sys" \
    --fdt "$DTB/arm64/nvidia/tegra210-p3450-0000.dtb" timer
}

@test "every fixture blob is labelled, and its root compatible labels match the fdtget oracle" {
  sweep_blobs "$FIX"
  [ "$n" -ge 5 ]
}

@test "every blob of ../shared/fixtures (Debian's kernels) matches the fdtget oracle" {
  shared_fix_or_skip
  sweep_blobs "$SHARED_FIX"
  [ "$n" -ge 19 ]
  echo "# swept $n blobs of ../shared/fixtures" >&3
}

@test "dtb2fs makes exactly the kernel-form trees kept in ../shared/fixtures/devicetree" {
  shared_fix_or_skip
  local b n=0
  for b in "${!TREE_BLOB[@]}"; do
    "$BUILD/test/tools/dtb2fs" "$DTB/${TREE_BLOB[$b]}" "$T/tree-$b"
    diff -r "$SHARED_FIX/devicetree/$b" "$T/tree-$b" >&2
    n=$((n + 1))
  done
  [ "$n" -eq "$(find "$SHARED_FIX/devicetree" -mindepth 1 -maxdepth 1 -type d | wc -l)" ]
}

@test "every fixture tree is labelled and gives exactly its blob's output" {
  for b in "${!TREE_BLOB[@]}"; do
    run "${NP[@]}" --sysfs "$(sysfs_for "$b")" -n timer -n i2c -n usb
    [ "$status" -eq 0 ] || { echo "$b: exit $status: $output" >&2; return 1; }
    tree_out=$output
    grep -q '^beta\.devicetree\.org/' <<<"$tree_out"
    run "${NP[@]}" --sysfs "$T/sys" --fdt "$DTB/${TREE_BLOB[$b]}" -n timer -n i2c -n usb
    [ "$status" -eq 0 ]
    diff -u <(echo "$output") <(echo "$tree_out") >&2
  done
}

@test "rpi4b tree: exact labels" {
  run_expect "$EXP/dt-rpi4b.txt" "${NP[@]}" --sysfs "$(sysfs_for rpi4b)"
}

@test "no devicetree (no tree, or an empty root) is not an error and gives no labels" {
  run "${NP[@]}" --sysfs "$T/sys"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  mkdir -p "$T/sys/firmware/devicetree/base"
  printf '\0' >"$T/sys/firmware/devicetree/base/name"
  run "${NP[@]}" --sysfs "$T/sys"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
}

@test "a truncated blob: exit 3, one line naming the file and libfdt's reason, old file untouched" {
  head -c 5000 "$DTB/arm64/broadcom/bcm2711-rpi-4-b.dtb" >"$T/bad.dtb"
  echo "previous=1" >"$T/fd/nodeprobe"
  run "$BUILD/nodeprobe" --no-builtin-rules --proc "$T/proc" --modules-dir "$T/modules" \
    --sysfs "$T/sys" --features-dir "$T/fd" --fdt "$T/bad.dtb"
  [ "$status" -eq 3 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "${lines[0]}" == "nodeprobe: error: "*"$T/bad.dtb"*FDT_ERR_TRUNCATED* ]]
  [ "$(cat "$T/fd/nodeprobe")" = "previous=1" ]
  [ "$(ls -A "$T/fd")" = nodeprobe ]
}

@test "a corrupt blob (bad magic) and a missing blob are bad input" {
  { printf 'XXXX'; tail -c +5 "$DTB/arm64/broadcom/bcm2711-rpi-4-b.dtb"; } >"$T/bad.dtb"
  run_expect_fail 3 "${NP[@]}" --sysfs "$T/sys" --fdt "$T/bad.dtb"
  [[ "$output" == *"$T/bad.dtb"*FDT_ERR_BADMAGIC* ]]
  run_expect_fail 3 "${NP[@]}" --sysfs "$T/sys" --fdt "$T/none.dtb"
  [[ "$output" == *"$T/none.dtb"* ]]
}

@test "disabled nodes do not count; an unlabellable compatible is skipped with a warning" {
  cat >"$T/x.dts" <<'EOF'
/dts-v1/;
/ {
	compatible = "acme,board,rev-b", "acme,board";
	cpus {
		cpu@0 { compatible = "arm,cortex-a53"; };
		cpu@1 { compatible = "arm,cortex-a53"; status = "disabled"; };
		cpu@2 { compatible = "arm,cortex-a53"; status = "okay"; };
	};
	gpu@1 { compatible = "acme,gpu-with-a-name-that-is-far-too-long-to-be-a-kubernetes-label"; };
};
EOF
  dtc -I dts -O dtb -o "$T/x.dtb" "$T/x.dts"
  run "${NP[@]}" --sysfs "$T/sys" --fdt "$T/x.dtb"
  [ "$status" -eq 0 ]
  grep -qx 'beta.devicetree.org/acme-board=1' <<<"$output"
  grep -qx 'beta.devicetree.org/acme-board-rev-b=1' <<<"$output"
  grep -qx 'beta.devicetree.org/arm-cortex-a53=2' <<<"$output"
  [[ "$output" == *"/gpu@1"*"far-too-long"*"skipped"* ]]
  ! grep -q 'gpu-with' <<<"$(grep '^beta' <<<"$output")" || false
}

@test "dt.root, dt.compatible and dt.node features drive NodeFeatureRules" {
  cat >"$T/r.yaml" <<'EOF2'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: dt}
spec:
  rules:
    - name: soc
      labels: {"example.com/soc": "bcm2711"}
      matchFeatures:
        - feature: dt.compatible
          matchExpressions:
            "brcm,bcm2711": {op: Exists}
    - name: v3d
      labels: {"example.com/v3d": "true"}
      matchFeatures:
        - feature: dt.node
          matchExpressions:
            compatible: {op: In, value: ["brcm,2711-v3d"]}
            path: {op: InRegexp, value: ["^/scb/"]}
    - name: model
      labels: {"example.com/rpi": "true"}
      matchFeatures:
        - feature: dt.root
          matchExpressions:
            model: {op: InRegexp, value: ["^Raspberry Pi 4 "]}
            compatible: {op: In, value: ["raspberrypi,4-model-b"]}
    - name: disabled-spi
      labels: {"example.com/spi": "true"}
      matchFeatures:
        - feature: dt.node
          matchExpressions:
            path: {op: In, value: ["/soc/spi@7e204000"]}
    - name: no-serial
      labels: {"example.com/serial": "true"}
      matchFeatures:
        - feature: dt.root
          matchExpressions:
            serial-number: {op: Exists}
EOF2
  run "${NP[@]}" --sysfs "$(sysfs_for rpi4b)" -r "$T/r.yaml"
  [ "$status" -eq 0 ]
  diff -u <(printf '%s\n' example.com/rpi=true example.com/soc=bcm2711 example.com/v3d=true) \
          <(grep '^example\.com/' <<<"$output")
}
