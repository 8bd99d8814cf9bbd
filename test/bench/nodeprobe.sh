#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe against `lspci -n` on the same PCI fixture tree, in the same run:
# time ratio (hyperfine medians: on a shared machine the means follow the scheduler) and peak RSS of each (/usr/bin/time). Twice per machine: the
# default run (built-in rules), and with every source enabled: a rule reading each feature
# (kernel.version/config from a real config.gz, cpu.* from this CPU's cpuid, os-release, a
# USB bus beside the PCI bus, the x86 machine's sysfs capture for cpu.security/topology,
# cpu.cstate/pstate/rdt/sst/coprocessor,
# system, memory, network, storage and kernel.selinux). Also against the previous build: the tree of NP_BENCH_PREV
# (default HEAD~1; "none" to leave it out), built in a scratch directory (git archive, so the
# repository is not touched), timed in the same hyperfine run on the same command.
set -euo pipefail
cd "${NP_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-$PWD/build}
SHARED=${SHARED:-$PWD/../shared}
# The 174-device Mellanox server is only in ../shared; test/fixtures has the other two.
machines=(linuxhw-qat-c62x linuxhw-intel-nuc12-alderlake)
[ -d "$SHARED/fixtures/pci/linuxhw-mlx-cx4lx" ] && machines=(linuxhw-mlx-cx4lx "${machines[@]}")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/proc" "$tmp/modules" "$tmp/fd"
cp -r test/fixtures/host/firecracker-x86/proc "$tmp/allproc"
cat > "$tmp/all.yaml" <<'Y'
apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: every-source}
spec:
  rules:
    - name: all
      labels: {bench.example.com/all: "true"}
      matchFeatures:
        - feature: kernel.version
        - feature: kernel.config
        - feature: cpu.cpuid
        - feature: cpu.model
        - feature: system.osrelease
        - feature: usb.device
    # NFD's other node-local sources (issue 20), on the x86 machine's sysfs capture
    - name: hostfeat
      labels: {bench.example.com/hostfeat: "true"}
      matchFeatures:
        - feature: cpu.security
        - feature: cpu.topology
          matchName: {op: Exists}
        - feature: cpu.cstate
        - feature: cpu.pstate
        - feature: cpu.rdt
        - feature: cpu.sst
        - feature: cpu.coprocessor
        - feature: system.name
        - feature: kernel.selinux
        - feature: memory.numa
          matchName: {op: Exists}
        - feature: network.device
          matchExpressions: {name: {op: Exists}}
        - feature: storage.block
          matchExpressions: {name: {op: Exists}}
    # read (so scanned) but absent on that machine: a Firecracker VM has no DMI tables
    - name: dmiid
      labels: {bench.example.com/dmiid: "true"}
      matchFeatures:
        - feature: system.dmiid
Y

# The previous build: same flags, its own tree; a revision without some flag the command uses
# is named and left out.
. test/bench/prev-build.bash
prev_build nodeprobe

for m in "${machines[@]}"; do
  tree="$PWD/test/fixtures/pci/$m"
  [ -d "$tree" ] || tree="$SHARED/fixtures/pci/$m"
  # every source: the same PCI bus, a USB bus beside it, the real procfs capture
  all="$tmp/all-$m"; mkdir -p "$all/bus"; ln -s "$tree/bus/pci" "$all/bus/pci"
  cp -r test/fixtures/usb/homelab/bus/usb "$all/bus/usb"
  for d in block class devices fs kernel bus/cpu bus/node; do
    ln -s "$PWD/test/fixtures/host/firecracker-x86/sys/$d" "$all/$d"
  done
  ls="lspci -n -A linux-sysfs -O sysfs.path=$tree/bus/pci"
  ndev=$(ls "$tree/bus/pci/devices" | wc -l)
  for mode in default all; do
    if [ $mode = default ]; then
      np="$BUILD/nodeprobe --sysfs $tree --proc $tmp/proc --modules-dir $tmp/modules --features-dir $tmp/fd"
    else
      np="$BUILD/nodeprobe --sysfs $all --proc $tmp/allproc --boot $tmp/allproc --modules-dir $tmp/modules --features-dir $tmp/fd --os-release test/fixtures/os-release/talos-v1.9.5 -r $tmp/all.yaml"
      $np --dry-run | grep -q '^bench.example.com/all=true$' || { echo "bench: every-source rule did not match"; exit 1; }
      $np --dry-run | grep -q '^bench.example.com/hostfeat=true$' || { echo "bench: hostfeat rule did not match"; exit 1; }
    fi
    cmds=("$ls" "$np")
    npp=${np/#"$BUILD"\/nodeprobe/$prev}
    if [ -n "$prev" ] && $npp --dry-run >/dev/null 2>&1; then
      cmds+=("$npp")
    else
      npp=
    fi
    # Five rounds of 30 runs each, every command in each round, the commands' order turning
    # round by round: on a shared machine the speed drifts over seconds, and one long run of
    # each command in turn charges the drift to whichever ran in the slow stretch. Each
    # figure is the median over the rounds of that round's median (the ratio: of the rounds'
    # ratios).
    for r in 1 2 3 4 5; do
      rot=("${cmds[@]:$(( (r - 1) % ${#cmds[@]} ))}" "${cmds[@]:0:$(( (r - 1) % ${#cmds[@]} ))}")
      hyperfine -N --warmup 3 --runs 30 --export-json "$tmp/h$r.json" "${rot[@]}" >/dev/null 2>&1
    done
    read -r tl tn tp _ < <(/usr/bin/python3 - "$tmp" "${cmds[@]}" <<'PY'
import json, statistics, sys
tmp, cmds = sys.argv[1], sys.argv[2:]
rounds = []
for r in range(1, 6):
    med = {x["command"]: x["median"] for x in json.load(open(f"{tmp}/h{r}.json"))["results"]}
    rounds.append([med[c] for c in cmds])
col = lambda i: statistics.median(x[i] for x in rounds)
tl, tn = col(0), col(1)
# the ratio figures: median of the rounds' ratios, scaled back onto lspci's median
rn = statistics.median(x[1] / x[0] for x in rounds)
out = [tl, rn * tl]
if len(cmds) > 2:
    out.append(rn * tl / statistics.median(x[1] / x[2] for x in rounds))
print(*out, 0)
PY
)
    rss_np=$(/usr/bin/time -f %M $np 2>&1 >/dev/null | tail -1)
    rss_ls=$(/usr/bin/time -f %M $ls 2>&1 >/dev/null | tail -1)
    rss_pp=0
    [ -n "$npp" ] && rss_pp=$(/usr/bin/time -f %M $npp 2>&1 >/dev/null | tail -1)
    awk -v m="$m" -v n="$ndev" -v tl="$tl" -v tn="$tn" -v tp="$tp" -v rn="$rss_np" -v rl="$rss_ls" -v rp="$rss_pp" -v mode="$mode" -v pv="${prev:+$prev_rev}" -v pok="${npp:+1}" 'BEGIN {
      printf "%-32s %3d devices  %-7s lspci -n %.2f ms  nodeprobe %.2f ms  ratio %.2fx (target <= 1.0x)\n", m, n, mode, tl*1000, tn*1000, tn/tl
      if (pok) printf "%-32s previous build (%s) %.2f ms: this build %.2fx of it\n", "", pv, tp*1000, tn/tp
      else if (pv != "") printf "%-32s previous build (%s): cannot run this command (left out)\n", "", pv
      printf "%-32s peak RSS: nodeprobe %d KiB (target < 4096), lspci -n %d KiB%s\n", "", rn, rl, pok ? sprintf(", previous build %d KiB", rp) : "" }'
  done
done
