#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe's devicetree source against `dtc -I fs` / `fdtget` on the same fixture, in the
# same run: reading an unflattened tree and a blob, time ratio (hyperfine means), peak RSS.
set -euo pipefail
cd "${NP_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-$PWD/build}
FIX=$PWD/test/fixtures
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/proc" "$tmp/modules" "$tmp/empty/bus"
np_base="$BUILD/nodeprobe --dry-run --no-builtin-rules --proc $tmp/proc --modules-dir $tmp/modules"

bench() { # name baseline-cmd nodeprobe-cmd
  hyperfine -N --warmup 5 --runs 50 --export-json "$tmp/h.json" "$2" "$3" >/dev/null 2>&1
  read -r tb tn < <(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(r[0]["mean"], r[1]["mean"])' "$tmp/h.json")
  rss=$(/usr/bin/time -f %M $3 2>&1 >/dev/null | tail -1)
  awk -v m="$1" -v tb="$tb" -v tn="$tn" -v rn="$rss" -v b="${2%% *}" 'BEGIN {
    printf "%-34s %s %.2f ms  nodeprobe %.2f ms  ratio %.2fx  nodeprobe peak RSS %d KiB\n", m, b, tb*1000, tn*1000, tn/tb, rn }'
}

for t in rpi4b:arm64/broadcom/bcm2711-rpi-4-b jetson-nano-p3450:arm64/nvidia/tegra210-p3450-0000; do
  s="$tmp/sys-${t%%:*}"; mkdir -p "$s/firmware/devicetree"
  "$BUILD/test/tools/dtb2fs" "$FIX/dtb/${t#*:}.dtb" "$s/firmware/devicetree/base"
  bench "tree ${t%%:*}" "dtc -q -I fs -O dtb -o /dev/null $s/firmware/devicetree/base" "$np_base --sysfs $s"
done
blob="$FIX/dtb/arm64/broadcom/bcm2711-rpi-4-b.dtb"
bench "blob bcm2711-rpi-4-b" "fdtget $blob / compatible" "$np_base --sysfs $tmp/empty --fdt $blob"
