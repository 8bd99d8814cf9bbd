#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 20: the features NFD v0.19's sources make, as nodeprobe makes them (existence of empty
# features, PCI IOMMU attributes, kernel modules, the cpu/kernel/memory/network/storage/system
# sources), through NodeFeatureRules written as for NFD.

load helpers

setup() {
  T=$(mktemp -d)
  mkdir -p "$T/proc" "$T/modules" "$T/fd" "$T/sys/bus"
}

teardown() {
  rm -rf "$T"
}

# np ARGS...: dry run, no built-in rules, an empty sysfs and proc unless ARGS say otherwise.
np() {
  "$BUILD/nodeprobe" --sysfs "$T/sys" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/fd" --no-builtin-rules --dry-run "$@"
}

# rule NAME FEATURE: a rule file labelling example.com/NAME=true when FEATURE exists (a bare term)
rule() {
  printf '%s\n' 'apiVersion: nfd.k8s-sigs.io/v1alpha1' 'kind: NodeFeatureRule' \
    "metadata: {name: $1}" 'spec:' '  rules:' "    - name: $1" \
    "      labels: {example.com/$1: \"true\"}" '      matchFeatures:' "        - feature: $2" \
    > "$T/$1.yaml"
}

@test "usb.device exists without USB, pci.device with an empty bus/pci/devices (NFD)" {
  rule usb usb.device
  rule pci pci.device
  run np -r "$T/usb.yaml" -r "$T/pci.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/usb=true" ]
  mkdir -p "$T/sys/bus/pci/devices" "$T/sys/bus/usb/devices"
  run np -r "$T/usb.yaml" -r "$T/pci.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = $'example.com/pci=true\nexample.com/usb=true' ]
}
