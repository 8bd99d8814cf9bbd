#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 20: the features NFD v0.19's sources make, as nodeprobe makes them (existence of empty
# features, PCI IOMMU attributes, kernel modules, the cpu/kernel/memory/network/storage/system
# sources), through NodeFeatureRules written as for NFD.

load helpers

setup() {
  np_scratch
}

teardown() {
  rm -rf "$T"
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
  run np_dry -r "$T/usb.yaml" -r "$T/pci.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/usb=true" ]
  mkdir -p "$T/sys/bus/pci/devices" "$T/sys/bus/usb/devices"
  run np_dry -r "$T/usb.yaml" -r "$T/pci.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = $'example.com/pci=true\nexample.com/usb=true' ]
}

# dump FEATURE...: a rule file whose labelsTemplate prints every element of each attribute
# FEATURE as "<short>.<name>=<value>" (short: the feature's name after its domain)
dump() {
  {
    printf '%s\n' 'apiVersion: nfd.k8s-sigs.io/v1alpha1' 'kind: NodeFeatureRule' \
      'metadata: {name: dump}' 'spec:' '  rules:'
    for f in "$@"; do
      printf '%s\n' "    - name: $f" '      labelsTemplate: |' \
        "        {{ range .$f }}example.com/${f#*.}.{{ .Name }}={{ .Value }}" \
        '        {{ end }}' '      matchFeatures:' "        - feature: $f" \
        '          matchName: {op: Exists}'
    done
  } > "$T/dump.yaml"
}

@test "cpu.topology, memory.*, kernel.selinux/kvm from the x86 machine's capture (NFD's formats)" {
  dump cpu.topology memory.numa memory.swap memory.hugepages kernel.selinux kernel.kvm
  run np_dry --sysfs "$FIX/host/firecracker-x86/sys" --proc "$FIX/host/firecracker-x86/proc" -r "$T/dump.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/hugepages.enabled=false
example.com/hugepages.hugepages-1Gi=0
example.com/hugepages.hugepages-2Mi=0
example.com/kvm.enabled=true
example.com/numa.is_numa=false
example.com/numa.node_count=1
example.com/selinux.enabled=false
example.com/swap.enabled=false
example.com/topology.hardware_multithreading=false
example.com/topology.socket_count=1" ]
}

@test "network.device/virtual and storage.block instances from the x86 machine's capture" {
  cat > "$T/r.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: dev}
spec:
  rules:
    - name: net
      labelsTemplate: |
        {{ range .network.device }}example.com/dev.{{ .name }}={{ .operstate }}.{{ .speed }}.{{ .mtu }}
        {{ end }}{{ range .network.virtual }}example.com/virt.{{ .name }}={{ .operstate }}.{{ .mtu }}
        {{ end }}
      matchFeatures:
        - feature: network.device
          matchExpressions: {name: {op: Exists}}
        - feature: network.virtual
          matchExpressions: {speed: {op: DoesNotExist}}
    - name: disk
      labelsTemplate: |
        {{ range .storage.block }}example.com/disk.{{ .name }}={{ .zoned }}
        {{ end }}
      matchFeatures:
        - feature: storage.block
          matchExpressions: {rotational: {op: In, value: ["1"]}}
Y
  run np_dry --sysfs "$FIX/host/firecracker-x86/sys" -r "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/dev.eth0=up.-1.1400
example.com/disk.vda=none
example.com/virt.ifb0=down.1500
example.com/virt.ifb1=down.1500
example.com/virt.lo=unknown.65536" ]
}

# NFD v0.19's network source (source/network/network.go): a device's sriov_numvfs and
# sriov_totalvfs come from <iface>/device/, mtu from <iface> (devices and virtual ones alike);
# NFD's built-in network-sriov.capable/configured rules (Gt 0) label from them.
@test "network.device: mtu, device/sriov_numvfs and sriov_totalvfs of an SR-IOV interface (written here)" {
  mkdir -p "$T/sys/class/net/ens1f0/device" "$T/sys/class/net/ens1f1/device" "$T/sys/class/net/br0"
  printf 'up\n' > "$T/sys/class/net/ens1f0/operstate"
  printf '25000\n' > "$T/sys/class/net/ens1f0/speed"
  printf '9000\n' > "$T/sys/class/net/ens1f0/mtu"
  printf '4\n' > "$T/sys/class/net/ens1f0/device/sriov_numvfs"
  printf '64\n' > "$T/sys/class/net/ens1f0/device/sriov_totalvfs"
  printf '0\n' > "$T/sys/class/net/ens1f1/device/sriov_numvfs"
  printf '8\n' > "$T/sys/class/net/ens1f1/device/sriov_totalvfs"
  printf '1500\n' > "$T/sys/class/net/br0/mtu"
  printf '7\n' > "$T/sys/class/net/br0/sriov_numvfs" # not under device/: not read
  cat > "$T/r.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: sriov}
spec:
  rules:
    - name: dev
      labelsTemplate: |
        {{ range .network.device }}example.com/dev.{{ .name }}=m{{ index . "mtu" }}n{{ index . "sriov_numvfs" }}t{{ index . "sriov_totalvfs" }}
        {{ end }}{{ range .network.virtual }}example.com/virt.{{ .name }}=m{{ .mtu }}n{{ index . "sriov_numvfs" }}x
        {{ end }}
      matchFeatures:
        - feature: network.device
          matchExpressions: {sriov_totalvfs: {op: Gt, value: ["0"]}}
        - feature: network.virtual
          matchExpressions: {name: {op: In, value: [br0]}}
    - name: configured
      labels: {example.com/sriov-configured: "true"}
      matchFeatures:
        - feature: network.device
          matchExpressions: {sriov_numvfs: {op: Gt, value: ["0"]}, mtu: {op: In, value: ["9000"]}}
Y
  run np_dry -r "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/dev.ens1f0=m9000n4t64
example.com/dev.ens1f1=mn0t8
example.com/sriov-configured=true
example.com/virt.br0=m1500nx" ]
}

@test "cpu.security: SGX from cpuid, TDX and SEV from sysfs, as NFD; Intel's SGX rule labels" {
  # the x86 machine's cpuid dump with SGX set (leaf 7 EBX bit 2) and two EPC sections in leaf
  # 0x12 (subleaves 2 and 3: 94 MiB + 8 MiB), a test input made from the real dump
  sed -e '/^   0x00000007 0x00:/s/ebx=0xf1bf2ffb/ebx=0xf1bf2fff/' -e '/^   0x00000012 0x0[23]:/d' \
    "$FIX/host/firecracker-x86/cpuid.txt" > "$T/cpuid.txt"
  printf '   0x00000012 0x%02x: eax=0x00000001 ebx=0x00000000 ecx=0x%08x edx=0x00000000\n' \
    2 0x05e00000 3 0x00800000 >> "$T/cpuid.txt"
  grep -q 'ebx=0xf1bf2fff' "$T/cpuid.txt"
  mkdir -p "$T/sys/module/kvm_intel/parameters" "$T/sys/module/kvm_amd/parameters" "$T/sys/fs/cgroup"
  printf 'Y\n' > "$T/sys/module/kvm_intel/parameters/tdx"
  printf 'Y\n' > "$T/sys/module/kvm_amd/parameters/sev"
  printf '1\n' > "$T/sys/module/kvm_amd/parameters/sev_es"
  printf 'N\n' > "$T/sys/module/kvm_amd/parameters/sev_snp"
  printf 'sev 509\nsev_es 10\ntdx 63\n' > "$T/sys/fs/cgroup/misc.capacity"
  dump cpu.security
  run np_dry --cpuid "$T/cpuid.txt" -r "$T/dump.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/security.sev.asids=509
example.com/security.sev.enabled=true
example.com/security.sev.encrypted_state_ids=10
example.com/security.sev.es.enabled=true
example.com/security.sgx.enabled=true
example.com/security.sgx.epc=106954752
example.com/security.tdx.enabled=true
example.com/security.tdx.total_keys=63" ]
  # Intel's device plugin rule (intel-device-plugins-for-kubernetes, deployments/nfd/overlays/
  # node-feature-rules: intel.sgx), less its kernel.config term and extendedResources
  cat > "$T/sgx.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: intel-dp-devices}
spec:
  rules:
    - name: intel.sgx
      labels:
        intel.feature.node.kubernetes.io/sgx: "true"
        example.com/epc: "@cpu.security.sgx.epc"
      matchFeatures:
        - feature: cpu.cpuid
          matchExpressions:
            SGX: {op: Exists}
        - feature: cpu.security
          matchExpressions:
            sgx.enabled: {op: IsTrue}
Y
  run np_dry --cpuid "$T/cpuid.txt" -r "$T/sgx.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = $'example.com/epc=106954752\nintel.feature.node.kubernetes.io/sgx=true' ]
  # the real dump (no SGX) and no kvm parameters: cpu.security exists, empty
  rm -rf "$T/sys/module" "$T/sys/fs"
  run np_dry --cpuid "$FIX/host/firecracker-x86/cpuid.txt" -r "$T/dump.yaml" -r "$T/sgx.yaml"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
}

@test "system.name is NODE_NAME, system.dmiid the trimmed DMI files; both absent-safe" {
  mkdir -p "$T/sys/devices/virtual/dmi/id"
  printf 'QEMU\n' > "$T/sys/devices/virtual/dmi/id/sys_vendor"
  printf 'Standard_PC_Q35\n' > "$T/sys/devices/virtual/dmi/id/product_name"
  printf '  1\n' > "$T/sys/devices/virtual/dmi/id/chassis_type"
  dump system.name system.dmiid
  NODE_NAME=worker-1 run np_dry -r "$T/dump.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/dmiid.chassis_type=1
example.com/dmiid.product_name=Standard_PC_Q35
example.com/dmiid.sys_vendor=QEMU
example.com/name.nodename=worker-1" ]
  rm -rf "$T/sys/devices"
  rule dmi system.dmiid
  NODE_NAME=worker-1 run np_dry -r "$T/dmi.yaml"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
}

@test "the new sources run only when a rule reads them" {
  rule pci pci.device
  run np_dry -vv -r "$T/pci.yaml"
  [ "$status" -eq 0 ]
  for s in cpusecurity cputopology system memory storage network ksys cpucstate cpupstate cpurdt \
    cpusst cpucoprocessor; do
    grep -q "source $s: skipped" <<<"$output" || { echo "$s ran" >&2; return 1; }
  done
  rule mem memory.numa
  run np_dry -vv -r "$T/mem.yaml"
  ! grep -q "source memory: skipped" <<<"$output" || false
  grep -q "source network: skipped" <<<"$output"
}

@test "cpu.cstate/pstate/rdt/sst/coprocessor exist on the x86 machine's capture, empty as in NFD" {
  # that machine: cpuidle driver "none", no intel_pstate, an empty cpufreq/, no RDT bits in
  # cpuid leaf 7, no cpufreq/base_frequency: NFD makes each feature with no element
  for f in cstate pstate rdt sst coprocessor; do rule $f cpu.$f; done
  run np_dry --sysfs "$FIX/host/firecracker-x86/sys" --cpuid "$FIX/host/firecracker-x86/cpuid.txt" \
    -r "$T/cstate.yaml" -r "$T/pstate.yaml" -r "$T/rdt.yaml" -r "$T/sst.yaml" -r "$T/coprocessor.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/coprocessor=true
example.com/cstate=true
example.com/pstate=true
example.com/rdt=true
example.com/sst=true" ]
  dump cpu.cstate cpu.pstate cpu.rdt cpu.sst cpu.coprocessor
  run np_dry --sysfs "$FIX/host/firecracker-x86/sys" --cpuid "$FIX/host/firecracker-x86/cpuid.txt" \
    -r "$T/dump.yaml"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  # no <sysfs>/devices/system/cpu: cstate_amd64.go's error, so no cpu.cstate; the rest stay
  run np_dry --cpuid "$FIX/host/firecracker-x86/cpuid.txt" -r "$T/cstate.yaml" -r "$T/pstate.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/pstate=true" ]
}

@test "cpu.cstate and cpu.pstate: intel_idle and intel_pstate as NFD's cstate/pstate_amd64.go" {
  c="$T/sys/devices/system/cpu"
  mkdir -p "$c/cpuidle" "$c/intel_pstate" "$c/cpufreq/policy0" "$c/cpufreq/policy1" \
    "$c/cpufreq/policy2" "$T/sys/module/intel_idle/parameters"
  printf 'intel_idle\n' > "$c/cpuidle/current_driver"
  printf '9\n' > "$T/sys/module/intel_idle/parameters/max_cstate"
  printf 'active\n' > "$c/intel_pstate/status"
  printf '0\n' > "$c/intel_pstate/no_turbo"
  printf '1\n' > "$c/cpufreq/boost"
  printf '0\n' > "$c/cpufreq/policy0/affected_cpus"
  printf 'performance\n' > "$c/cpufreq/policy0/scaling_governor"
  printf '1\n' > "$c/cpufreq/policy1/affected_cpus"
  printf 'performance\n' > "$c/cpufreq/policy1/scaling_governor"
  printf '\n' > "$c/cpufreq/policy2/affected_cpus" # no cpus: its governor is not compared
  printf 'powersave\n' > "$c/cpufreq/policy2/scaling_governor"
  dump cpu.cstate cpu.pstate
  run np_dry -r "$T/dump.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/cstate.enabled=true
example.com/pstate.scaling_governor=performance
example.com/pstate.status=active
example.com/pstate.turbo=true" ]
  printf '0\n' > "$T/sys/module/intel_idle/parameters/max_cstate"
  printf '2\n' > "$c/cpufreq/policy2/affected_cpus" # now two governors differ: none reported
  printf '1\n' > "$c/intel_pstate/no_turbo"
  run np_dry -r "$T/dump.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/cstate.enabled=false
example.com/pstate.status=active
example.com/pstate.turbo=false" ]
  # passive: no governor looked at; a max_cstate Go's Atoi refuses: no cpu.cstate at all
  printf 'passive\n' > "$c/intel_pstate/status"
  printf '0\n' > "$c/cpufreq/policy2/affected_cpus"
  printf ' 1x\n' > "$T/sys/module/intel_idle/parameters/max_cstate"
  rule cstate cpu.cstate
  run np_dry -r "$T/dump.yaml" -r "$T/cstate.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/pstate.status=passive
example.com/pstate.turbo=false" ]
  # status "off", another idle driver: both features exist and are empty
  printf 'off\n' > "$c/intel_pstate/status"
  printf 'acpi_idle\n' > "$c/cpuidle/current_driver"
  run np_dry -r "$T/dump.yaml" -r "$T/cstate.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/cstate=true" ]
}

@test "cpu.rdt and cpu.sst from cpuid leaves 7, 0xf, 0x10, 0x16 and sysfs, as NFD" {
  # the x86 machine's dump with RDT-M and RDT-A (leaf 7 EBX bits 12, 15), L3 monitoring with
  # occupancy and both bandwidths (0xf), L3 CAT and MBA (0x10 EBX bits 1, 3), and a 2300 MHz
  # nominal base frequency (0x16 EAX): a test input made from the real dump
  sed -e '/^   0x00000007 0x00:/s/ebx=0xf1bf2ffb/ebx=0xf1bfbffb/' \
    -e '/^   0x0000000f /d' -e '/^   0x00000010 /d' -e '/^   0x00000016 /d' \
    "$FIX/host/firecracker-x86/cpuid.txt" > "$T/cpuid.txt"
  grep -q 'ebx=0xf1bfbffb' "$T/cpuid.txt"
  printf '   0x%08x 0x%02x: eax=0x%08x ebx=0x%08x ecx=0x00000000 edx=0x%08x\n' \
    0xf 0 0 0 2 0xf 1 0 0 7 0x10 0 0 0xa 0 0x16 0 0x8fc 0 0 >> "$T/cpuid.txt"
  mkdir -p "$T/sys/fs/resctrl/info/L3" "$T/sys/bus/cpu/devices/cpu0/cpufreq" \
    "$T/sys/bus/cpu/devices/cpu1/cpufreq" "$T/sys/bus/cpu/devices/cpu2"
  printf '16\n' > "$T/sys/fs/resctrl/info/L3/num_closids"
  printf '2300000\n' > "$T/sys/bus/cpu/devices/cpu0/cpufreq/base_frequency"
  printf '2700000\n' > "$T/sys/bus/cpu/devices/cpu1/cpufreq/base_frequency"
  dump cpu.rdt cpu.sst
  run np_dry --cpuid "$T/cpuid.txt" -r "$T/dump.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/rdt.RDTCMT=true
example.com/rdt.RDTL3CA=true
example.com/rdt.RDTL3CA_NUM_CLOSID=15
example.com/rdt.RDTMBA=true
example.com/rdt.RDTMBM=true
example.com/rdt.RDTMON=true
example.com/sst.bf.enabled=true" ]
  # 2300999 kHz / 1000 is not above 2300 MHz; no resctrl: no RDTL3CA_NUM_CLOSID
  printf '2300999\n' > "$T/sys/bus/cpu/devices/cpu1/cpufreq/base_frequency"
  rm -rf "$T/sys/fs"
  run np_dry --cpuid "$T/cpuid.txt" -r "$T/dump.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/rdt.RDTCMT=true
example.com/rdt.RDTL3CA=true
example.com/rdt.RDTMBA=true
example.com/rdt.RDTMBM=true
example.com/rdt.RDTMON=true" ]
}

# NFD's detectHugePages: enabled is "true" when strconv.Atoi(nr_hugepages) > 0 for some size:
# "1-2" is no integer (C's strtoll read 1), "+3" is one (Go's Atoi takes a sign).
@test "memory.hugepages: enabled by Go's strconv.Atoi of nr_hugepages ('1-2' no, '+3' yes)" {
  H="$T/sys/kernel/mm/hugepages"
  mkdir -p "$H/hugepages-2048kB" "$H/hugepages-1048576kB"
  printf '1-2\n' > "$H/hugepages-2048kB/nr_hugepages"
  printf '0\n' > "$H/hugepages-1048576kB/nr_hugepages"
  dump memory.hugepages
  run np_dry -r "$T/dump.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/hugepages.enabled=false
example.com/hugepages.hugepages-1Gi=0
example.com/hugepages.hugepages-2Mi=1-2" ]
  printf '+3\n' > "$H/hugepages-1048576kB/nr_hugepages"
  run np_dry -r "$T/dump.yaml"
  [ "$status" -eq 0 ]
  grep -qx 'example.com/hugepages.enabled=true' <<<"$output"
}

# NFD's detectNv (os.IsNotExist) and detectHugePages (errors.Is(err, os.ErrNotExist)): only a
# missing directory (ENOENT) means none; a regular file in its place (ENOTDIR) is an error and
# the feature is not made.
@test "memory.nv, memory.hugepages: missing is empty/disabled, a regular file in place is absent" {
  rule nv memory.nv
  rule hp memory.hugepages
  dump memory.hugepages
  mkdir -p "$T/sys/bus/nd" "$T/sys/kernel/mm"
  run np_dry -r "$T/nv.yaml" -r "$T/hp.yaml" -r "$T/dump.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/hp=true
example.com/hugepages.enabled=false
example.com/nv=true" ]
  # present and empty (this VM's /sys/bus/nd/devices): no instance; make check's UBSan caught
  # qsort(NULL, 0) here
  mkdir "$T/sys/bus/nd/devices"
  run np_dry -r "$T/nv.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "example.com/nv=true" ]
  rmdir "$T/sys/bus/nd/devices"
  printf 'x\n' > "$T/sys/bus/nd/devices"
  printf 'x\n' > "$T/sys/kernel/mm/hugepages"
  run np_dry -r "$T/nv.yaml" -r "$T/hp.yaml" -r "$T/dump.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = "" ]
}

# A listed directory is read up to 65536 entries and one more: over that, the feature it makes is
# left out with a warning (NFD lists everything; nodeprobe bounds it), the run goes on.
@test "a directory over 65536 entries: its feature left out with a warning, exit 0" {
  rule numa memory.numa
  rule net network.virtual
  mkdir -p "$T/sys/bus/node/devices" "$T/sys/class/net/lo"
  (cd "$T/sys/bus/node/devices" && seq 1 65536 | xargs touch)
  run np_dry -r "$T/numa.yaml" -r "$T/net.yaml"
  [ "$status" -eq 0 ]
  [ "$output" = $'example.com/net=true\nexample.com/numa=true' ]
  touch "$T/sys/bus/node/devices/0"
  run np_dry -r "$T/numa.yaml" -r "$T/net.yaml"
  [ "$status" -eq 0 ]
  grep -q "bus/node/devices: more than 65536 entries, its feature left out" <<<"$output"
  [ "$(grep -v warning <<<"$output")" = "example.com/net=true" ]
}
