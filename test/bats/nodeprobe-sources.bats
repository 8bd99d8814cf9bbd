#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe's kernel, system, cpu and usb sources on real captures (test/fixtures/host,
# os-release, usb), through NodeFeatureRules written as for NFD.

load helpers

setup() {
  np_scratch
}

teardown() {
  rm -rf "$T"
}

@test "system.osrelease: Talos and Raspberry Pi OS, by an NFD rule" {
  cat > "$T/r.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: os}
spec:
  rules:
    - name: talos
      labels: {example.com/os: "@system.osrelease.ID", example.com/talos: "@system.osrelease.VERSION_ID"}
      matchFeatures:
        - feature: system.osrelease
          matchExpressions:
            ID: {op: In, value: ["talos"]}
    - name: rpi
      labels: {example.com/os: "@system.osrelease.ID", example.com/major: "@system.osrelease.VERSION_ID.major"}
      matchFeatures:
        - feature: system.osrelease
          matchExpressions:
            ID_LIKE: {op: In, value: ["debian"]}
            VERSION_ID.major: {op: Ge, value: ["11"]}
Y
  run np_dry --os-release "$FIX/os-release/talos-v1.9.5" -r "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = $'example.com/os=talos\nexample.com/talos=v1.9.5' ]
  run np_dry --os-release "$FIX/os-release/raspbian-11-bullseye" -r "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = $'example.com/major=11\nexample.com/os=raspbian' ]
  # no file: no feature, no labels, not an error
  run np_dry --os-release "$T/none" -r "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
}

@test "--os-release on a terminal or a FIFO is bad input at once (never a blocked read)" {
  cat > "$T/r.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: os}
spec:
  rules:
    - name: any
      labels: {example.com/os: "true"}
      matchFeatures:
        - feature: system.osrelease
Y
  [ -c /dev/ptmx ] || skip "no /dev/ptmx here"
  # /dev/ptmx opens a new terminal that nobody writes to; timeout only turns a regression (a
  # read blocked forever) into a failure: exit 124 is not 3
  run_expect_fail 3 timeout 60 "$BUILD/nodeprobe" --sysfs "$T/sys" --proc "$T/proc" \
    --modules-dir "$T/modules" --features-dir "$T/fd" --no-builtin-rules --dry-run \
    --os-release /dev/ptmx -r "$T/r.yaml"
  [ "$output" = "nodeprobe: error: /dev/ptmx: Resource temporarily unavailable" ]
  mkfifo "$T/os-release"
  run_expect_fail 3 timeout 60 "$BUILD/nodeprobe" --sysfs "$T/sys" --proc "$T/proc" \
    --modules-dir "$T/modules" --features-dir "$T/fd" --no-builtin-rules --dry-run \
    --os-release "$T/os-release" -r "$T/r.yaml"
  [ "$output" = "nodeprobe: error: $T/os-release: not a regular file" ]
}

@test "kernel.version and kernel.config from the real x86 capture" {
  cat > "$T/r.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: kernel}
spec:
  rules:
    - name: new-kernel
      labels: {example.com/kernel: "@kernel.version.full"}
      matchFeatures:
        - feature: kernel.version
          matchExpressions:
            major: {op: Ge, value: ["6"]}
            minor: {op: Gt, value: ["15"]}
    - name: hz
      labels: {example.com/hz: "@kernel.config.HZ", example.com/idle: "@kernel.config.NO_HZ_IDLE"}
      matchFeatures:
        - feature: kernel.config
          matchExpressions:
            NO_HZ_IDLE: {op: In, value: ["y"]}
            X86_SGX: {op: DoesNotExist}
Y
  run np_dry --proc "$FIX/host/firecracker-x86/proc" --boot "$T/boot" -r "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = $'example.com/hz=250\nexample.com/idle=y\nexample.com/kernel=6.18.44-fc-v769' ]
  # the same config as <boot>/config-RELEASE when there is no config.gz
  mkdir -p "$T/p/sys/kernel" "$T/boot"
  cp "$FIX/host/firecracker-x86/proc/sys/kernel/osrelease" "$T/p/sys/kernel/"
  gzip -dc "$FIX/host/firecracker-x86/proc/config.gz" > "$T/boot/config-6.18.44-fc-v769"
  run np_dry --proc "$T/p" --boot "$T/boot" -r "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = $'example.com/hz=250\nexample.com/idle=y\nexample.com/kernel=6.18.44-fc-v769' ]
  # a corrupt config.gz is bad input: exit 3 naming it
  head -c 100 "$FIX/host/firecracker-x86/proc/config.gz" > "$T/p/config.gz"
  run np_dry --proc "$T/p" --boot "$T/boot" -r "$T/r.yaml"
  [ "$status" -eq 3 ]
  [[ $output == *"$T/p/config.gz: "* ]]
}

@test "usb.device: a Coral USB TPU and a Zigbee stick get NFD's usb labels from a vendor/device rule" {
  # the labels NFD's usb source gives them by default (class_vendor_device, class of the
  # interface as the device class is 00), made here by rules matching vendor and device
  cat > "$T/r.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: usb}
spec:
  rules:
    - name: coral
      labels: {feature.node.kubernetes.io/usb-ff_1a6e_089a.present: "true", example.com/tpu: "coral"}
      matchFeatures:
        - feature: usb.device
          matchExpressions:
            vendor: {op: In, value: ["1a6e", "18d1"]}
            device: {op: In, value: ["089a", "9302"]}
    - name: zigbee
      labels: {feature.node.kubernetes.io/usb-ff_10c4_ea60.present: "true", example.com/radio: "zigbee"}
      matchFeatures:
        - feature: usb.device
          matchExpressions:
            vendor: {op: In, value: ["10c4"]}
            device: {op: In, value: ["ea60"]}
            class: {op: In, value: ["ff"]}
    - name: no-such-stick
      labels: {example.com/zwave: "true"}
      matchFeatures:
        - feature: usb.device
          matchExpressions:
            vendor: {op: In, value: ["0658"]}
Y
  run "$BUILD/nodeprobe" --sysfs "$FIX/usb/homelab" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/fd" --no-builtin-rules --dry-run -r "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf '%s\n' example.com/radio=zigbee example.com/tpu=coral \
    feature.node.kubernetes.io/usb-ff_10c4_ea60.present=true \
    feature.node.kubernetes.io/usb-ff_1a6e_089a.present=true)" ]
}

@test "cpu.cpuid and cpu.model from the x86 machine's cpuid dump (--cpuid)" {
  cat > "$T/r.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: cpu}
spec:
  rules:
    - name: avx512
      labels: {example.com/avx512: "true", example.com/cpu-id: "@cpu.model.id"}
      matchFeatures:
        - feature: cpu.cpuid
          matchExpressions:
            AVX512F: {op: Exists}
            AMXTILE: {op: Exists}
            X86_64_V4: {op: Exists}
        - feature: cpu.model
          matchExpressions:
            vendor_id: {op: In, value: ["Intel"]}
            family: {op: In, value: ["6"]}
            hypervisor: {op: In, value: ["kvm"]}
    - name: sgx-cpu
      labels: {example.com/sgx: "true"}
      matchFeatures:
        - feature: cpu.cpuid
          matchExpressions:
            SGX: {op: Exists}
            SGXLC: {op: Exists}
Y
  run np_dry --cpuid "$FIX/host/firecracker-x86/cpuid.txt" -r "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = $'example.com/avx512=true\nexample.com/cpu-id=167' ]
  run np_dry --cpuid "$T/none" -r "$T/r.yaml"
  [ "$status" -eq 3 ]
  [[ $output == *"--cpuid $T/none: No such file or directory"* ]]
  printf 'not a dump\n' > "$T/bad"
  run np_dry --cpuid "$T/bad" -r "$T/r.yaml"
  [ "$status" -eq 3 ]
  # over the cap: the file, the cap and what it caps (it said "larger than the bound")
  head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' '#' > "$T/big"
  run np_dry --cpuid "$T/big" -r "$T/r.yaml"
  [ "$status" -eq 3 ]
  [[ $output == *"$T/big: larger than the 1 MiB limit for a cpuid dump"* ]]
}

@test "a PCI devices/ entry libpci cannot parse: exit 3 naming it, nothing leaked (make check)" {
  cp -r "$FIX/pci/pciutils-cap-rebar" "$T/m"
  mkdir "$T/m/bus/pci/devices/junk"
  run "$BUILD/nodeprobe" --sysfs "$T/m" --proc "$T/proc" --modules-dir "$T/modules" --features-dir "$T/fd"
  [ "$status" -eq 3 ]
  [ "$output" = "nodeprobe: error: $T/m/bus/pci/devices/junk: not a PCI device address (domain:bus:device.function)" ]
  [ ! -e "$T/fd/nodeprobe" ]
}

@test "a source no rule reads is not run: a corrupt config.gz matters only to kernel.config rules" {
  mkdir -p "$T/p/sys/kernel"
  printf '6.1.0-50-amd64\n' > "$T/p/sys/kernel/osrelease"
  printf 'not gzip' > "$T/p/config.gz"
  cat > "$T/v.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: v}
spec:
  rules:
    - name: v
      labels: {example.com/major: "@kernel.version.major"}
      matchFeatures:
        - feature: kernel.version
Y
  cat > "$T/c.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: c}
spec:
  rules:
    - name: c
      labels: {example.com/c: "true"}
      matchFeatures:
        - feature: Kernel.Config
Y
  run np_dry --proc "$T/p" -r "$T/v.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/major=6" ]
  # the term's feature is compared lower-cased, as NFD does
  run np_dry --proc "$T/p" -r "$T/c.yaml"
  [ "$status" -eq 3 ]
  [[ $output == *"$T/p/config.gz: not valid gzip data (corrupt or truncated)" ]]
}

@test "kernel.version full with a type: version Gt rule (NFD's common rule) on two real kernels" {
  cat > "$T/r.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: kver}
spec:
  rules:
    - name: newer-than-5.15
      labels: {example.com/kernel-gt-5.15: "true"}
      matchFeatures:
        - feature: kernel.version
          matchExpressions:
            full: {op: Gt, value: ["5.15.0"], type: version}
Y
  run np_dry --proc "$FIX/host/firecracker-x86/proc" -r "$T/r.yaml"
  [ "$status" -eq 0 ]
  if [[ $output == *"'type: version' is not supported"* ]]; then
    skip "the rule language has no 'type: version' yet (the rules-lang work of issue 10)"
  fi
  [ "$output" = "example.com/kernel-gt-5.15=true" ]
  # the Raspberry Pi 3's 4.9.41-v7 (its '+' trimmed) is older
  run np_dry --proc "$FIX/host/rpi3-armv7/proc" -r "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
}
