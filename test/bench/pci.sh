#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe (PCI scan + built-in rules, dry run) against `lspci -n` on the same fixture tree,
# in the same run; then nodeprobe's peak RSS. Targets: at most 1.5x lspci -n, under 4 MB.
set -euo pipefail
: "${BUILD:=$PWD/build}"
SHARED=${SHARED:-${NP_SHARED:-../shared}}
bin=$BUILD/nodeprobe
if [ ! -x "$bin" ]; then
  echo "pci bench: $bin not built"; exit 1
fi
machine=${PCI_BENCH_MACHINE:-linuxhw-mlx-cx4lx}   # the largest tree: 174 devices
sysfs=$SHARED/fixtures/pci/$machine
proc=$(mktemp -d)
trap 'rm -rf "$proc"' EXIT
np="$bin --sysfs $sysfs --proc $proc --dry-run"
ls="lspci -n -A linux-sysfs -O sysfs.path=$sysfs/bus/pci"
$np >/dev/null
$ls >/dev/null
echo "fixture: $machine ($(ls "$sysfs/bus/pci/devices" | wc -l) devices)"
json=$(mktemp)
hyperfine -N -w 20 -r 300 --export-json "$json" "$np" "$ls" >/dev/null 2>&1
python3_bin=/usr/bin/python3
"$python3_bin" - "$json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
np, ls = r[0]["median"], r[1]["median"]
print(f"nodeprobe median {np*1e3:.2f} ms, lspci -n median {ls*1e3:.2f} ms, ratio {np/ls:.2f}x (target <= 1.5x)")
PY
rm -f "$json"
rss=$(/usr/bin/time -f %M $np 2>&1 >/dev/null | tail -1)
echo "nodeprobe peak RSS ${rss} KiB (target < 4096 KiB)"
