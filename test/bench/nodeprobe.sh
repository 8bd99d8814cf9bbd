#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe against `lspci -n` on the same PCI fixture tree, in the same run:
# time ratio (hyperfine means) and peak RSS of each (/usr/bin/time).
set -euo pipefail
cd "${NP_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-$PWD/build}
SHARED=${SHARED:-$PWD/../shared}
# The 174-device Mellanox server is only in ../shared; test/fixtures has the other two.
machines=(linuxhw-qat-c62x linuxhw-intel-nuc12-alderlake)
[ -d "$SHARED/fixtures/pci/linuxhw-mlx-cx4lx" ] && machines=(linuxhw-mlx-cx4lx "${machines[@]}")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/proc" "$tmp/modules" "$tmp/fd"

for m in "${machines[@]}"; do
  tree="$PWD/test/fixtures/pci/$m"
  [ -d "$tree" ] || tree="$SHARED/fixtures/pci/$m"
  np="$BUILD/nodeprobe --sysfs $tree --proc $tmp/proc --modules-dir $tmp/modules --features-dir $tmp/fd"
  ls="lspci -n -A linux-sysfs -O sysfs.path=$tree/bus/pci"
  ndev=$(ls "$tree/bus/pci/devices" | wc -l)
  hyperfine -N --warmup 5 --runs 50 --export-json "$tmp/h.json" "$ls" "$np" >/dev/null 2>&1
  read -r tl tn < <(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(r[0]["mean"], r[1]["mean"])' "$tmp/h.json")
  rss_np=$(/usr/bin/time -f %M $np 2>&1 >/dev/null | tail -1)
  rss_ls=$(/usr/bin/time -f %M $ls 2>&1 >/dev/null | tail -1)
  awk -v m="$m" -v n="$ndev" -v tl="$tl" -v tn="$tn" -v rn="$rss_np" -v rl="$rss_ls" 'BEGIN {
    printf "%-32s %3d devices  lspci -n %.2f ms  nodeprobe %.2f ms  ratio %.2fx (target <= 1.5x)\n", m, n, tl*1000, tn*1000, tn/tl
    printf "%-32s peak RSS: nodeprobe %d KiB (target < 4096), lspci -n %d KiB\n", "", rn, rl }'
done
