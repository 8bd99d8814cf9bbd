#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench, nodeprobe-devices in DRA mode (issue 28): one api: dra class (serial, 10 character
# nodes made with mknod on a temp dev root; root), claims and ResourceSlices on test/fake-apiserver
# (Python, HTTPS on 127.0.0.1), no kubelet (the C client dials <plugins>/<driver>/dra.sock):
#   - NodePrepareResources and NodeUnprepareResources (v1) p50/p99/max over $NP_DRA_BENCH_N
#     (default 300) rounds of one claim, from test/tools/dra-bench (a C client on pkg/kubelet's
#     client side): each prepare GETs the claim from the fake, writes its CDI spec and the
#     checkpoint (each fsync'd), unprepare removes both; target p99 < 5 ms. Twice: the CDI specs
#     on tmpfs (/dev/shm, as /var/run/cdi is on a node) with the checkpoint on tmpfs too (the
#     plugin's and the fake's time), then with the checkpoint on $TMPDIR's disk (as
#     /var/lib/kubelet/plugins on a node: the fsyncs' time added)
#   - the same claim GET alone, from dra-bench through the same client code (pkg/kube) in each
#     round before the prepare: the fake API server's part of a prepare, measured in the same
#     moments (a 2-core machine shared by others has bursts), so the plugin's own part is the
#     difference
#   - hotplug: a ttyUSB node made, 5 times: time from just before the mknod to the slice write's
#     arrival at the fake (its request log's time; the new generation is then checked); target 1 s
#   - peak RSS (VmHWM) of the plugin over all of the above (target < 6 MB), its RSS once the
#     first slices are published (before any claim), and at the end anonymous / file-backed, and
#     by mapping (/proc/PID/smaps: each library's resident pages, of them those it wrote: its
#     relocations and data, counted as anonymous by the kernel)
#   - what the 6 MB are measured against: the same plugin with the class as a device plugin (no
#     API client: libcurl is not loaded), its peak RSS 2 s after start; and test/tools/tls-floor,
#     one verified TLS GET to the fake through OpenSSL alone (libssl loaded in a process that had
#     nothing else), its RSS at each stage: the floor under any libcurl-on-OpenSSL client
# Also the previous build (NP_BENCH_PREV, default HEAD~1, "none" to leave it out) on the same
# run, as ratios. Prints, asserts nothing.
set -euo pipefail
cd "${NP_ROOT:-$(dirname "$0")/../..}"
export NP_ROOT=$PWD
BUILD=${BUILD:-$PWD/build}
DB=$BUILD/test/tools/dra-bench
N=${NP_DRA_BENCH_N:-300}
TF=$BUILD/test/tools/tls-floor
[ -x "$DB" ] || make --no-print-directory BUILD="$BUILD" "$DB" >/dev/null
[ -x "$TF" ] || make --no-print-directory BUILD="$BUILD" "$TF" >/dev/null
[ "$(id -u)" = 0 ] || { echo "dra: skipped: mknod needs root"; exit 0; }
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || { echo "dra: skipped: no tmpfs on /dev/shm"; exit 0; }
tmp=$(mktemp -d) shm=$(mktemp -d /dev/shm/np-dra-bench.XXXXXX)
dp=
trap '[ -z "$dp" ] || kill "$dp" 2>/dev/null; fake_stop; wait; rm -rf "$tmp" "$shm"' EXIT
source test/fake-apiserver/fake.bash
export FAKE_DIR=$tmp/fake FAKE_CERTS=$tmp/certs
fake_start
fake_kubeconfig "$tmp/kubeconfig"
fake_put '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
  "metadata":{"name":"bench","namespace":"default","uid":"uid-bench"},
  "spec":{"devices":{"requests":[{"name":"ser","exactly":{"deviceClassName":"serial.nodeprobe.io"}}]}},
  "status":{"allocation":{"devices":{"results":[{"request":"ser","driver":"nodeprobe.io","pool":"node1","device":"serial-ttyusb0"}]}}}}'
cat >"$tmp/classes.yaml" <<'YAML'
apiVersion: nodeprobe.io/v1alpha1
kind: DeviceClass
metadata: {name: serial}
spec: {preset: serial, api: dra}
YAML

. test/bench/prev-build.bash
prev_build nodeprobe-devices

# next_seq: the fake's request log sequence number for the next request
next_seq() { fake_ctl GET '/requests?count=1' | jq .next; }
gen() {
  fake_api GET '/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3Dnode1' |
    jq '[.items[].spec.pool.generation] | max // 0'
}

# run NAME BINARY STATE: start the plugin on a fresh dev root, its checkpoint under STATE (a
# directory), CDI specs on tmpfs; its figures into $tmp/NAME.fig (key=value lines).
run() {
  local name=$1 bin=$2 d=$tmp/run-$1 w lat pub=() t0 rss rss0 g sl map
  local plugins=$3/plugins-$1 cdi=$shm/cdi-$1
  mkdir -p "$d/dev" "$d/sys" "$d/reg" "$plugins" "$cdi" "$d/kl"
  for i in $(seq 0 9); do mknod "$d/dev/ttyUSB$i" c 1 3; done
  for sl in $(fake_api GET /apis/resource.k8s.io/v1/resourceslices | jq -r '.items[].metadata.name'); do
    fake_api DELETE "/apis/resource.k8s.io/v1/resourceslices/$sl" >/dev/null
  done
  "$bin" --classes "$tmp/classes.yaml" --dev-root "$d/dev" --sys-root "$d/sys" --cdi-dir "$cdi" \
    --plugin-directory "$d/kl" --plugins-registry "$d/reg" --dra-plugins-dir "$plugins" \
    --node-name node1 --kubeconfig "$tmp/kubeconfig" --log-level warn 2>"$d/plugin.log" &
  dp=$!
  for _ in $(seq 100); do [ -S "$plugins/nodeprobe.io/dra.sock" ] && break; sleep 0.1; done
  for _ in $(seq 100); do [ "$(gen)" -ge 1 ] && break; sleep 0.1; done
  rss0=$(awk '/^VmRSS:/ { print $2 }' "/proc/$dp/status")
  lat=$("$DB" "$plugins/nodeprobe.io/dra.sock" "$N" default bench uid-bench "$tmp/kubeconfig")
  for i in 1 2 3 4 5; do
    w=$(next_seq) g=$(gen)
    t0=$EPOCHREALTIME
    mknod "$d/dev/ttyUSB1$i" c 1 3
    # the first slice write after the mknod: its arrival time at the fake
    pub+=("$(fake_ctl GET "/requests?since=$w&method=POST|PUT&path=resourceslices&wait=10" |
      jq --arg t0 "$t0" '.items[0].time // empty | (. - ($t0 | tonumber)) * 1000')")
    [ "$(gen)" -gt "$g" ] || pub[-1]="no-new-generation"
  done
  rss=$(awk '/^VmHWM:/ { h = $2 } /^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 } END { print h, a, f }' "/proc/$dp/status")
  map=$(smaps_by_name "/proc/$dp/smaps")
  kill -TERM "$dp"; wait "$dp" || true; dp=
  {
    echo "$lat" | sed -n 's/^\(prepare\|unprepare\)_calls=[0-9]* p50_ms=\([^ ]*\) p99_ms=\([^ ]*\) max_ms=\([^ ]*\)$/\1_p50=\2\n\1_p99=\3\n\1_max=\4/p'
    echo "$lat" | sed -n 's/^claim_get_calls=[0-9]* p50_ms=\([^ ]*\) p99_ms=\([^ ]*\) max_ms=\([^ ]*\)$/get_p50=\1\nget_p99=\2\nget_max=\3/p'
    echo "publish=${pub[*]}"
    echo "rss=${rss%% *}"
    echo "rss_split=${rss#* }"
    echo "rss0=$rss0"
    echo "map=$map"
    echo "$lat" | sed -n 's/^claim /claim=/p'
  } >"$tmp/$name.fig"
}

fig() { sed -n "s/^$2=//p" "$tmp/$1.fig"; }

# smaps_by_name SMAPS: "NAME:RSS:WRITTEN ..." (KiB), largest first: a file mapping by its file's
# name (all its mappings), WRITTEN its pages copied on write (smaps' Anonymous: relocations, data);
# the anonymous ones ([heap], thread arenas and stacks, [stack]) as "anonymous"
smaps_by_name() {
  awk '/^[0-9a-f]+-[0-9a-f]+ / { n = (NF >= 6 && $6 ~ /^\//) ? $6 : "anonymous"; sub(/.*\//, "", n); next }
    /^Rss:/ { r[n] += $2 } /^Anonymous:/ { w[n] += $2 }
    END { for (n in r) if (r[n]) print r[n], n ":" r[n] ":" w[n] }' "$1" | sort -rn | cut -d' ' -f2 | tr '\n' ' '
}

# device_plugin_rss BINARY: peak RSS (KiB) of the plugin serving the same class as a device
# plugin (no API client), 2 s after its start
device_plugin_rss() {
  local d=$tmp/run-dp h
  mkdir -p "$d/dev" "$d/sys" "$d/kl"
  for i in $(seq 0 9); do mknod "$d/dev/ttyUSB$i" c 1 3; done
  sed 's/api: dra/api: device-plugin/' "$tmp/classes.yaml" >"$d/classes.yaml"
  "$1" --classes "$d/classes.yaml" --dev-root "$d/dev" --sys-root "$d/sys" --cdi-dir "$d/kl" \
    --plugin-directory "$d/kl" --log-level error 2>"$d/plugin.log" &
  dp=$!
  sleep 2
  h=$(awk '/^VmHWM:/ { print $2 }' "/proc/$dp/status")
  kill -TERM "$dp"; wait "$dp" || true; dp=
  echo "$h"
}

# report NAME LABEL: one run's figures
report() {
  local n=$1
  awk -v l="$2" -v n="$N" -v pp="$(fig "$n" prepare_p50)" -v p9="$(fig "$n" prepare_p99)" \
    -v pm="$(fig "$n" prepare_max)" -v up="$(fig "$n" unprepare_p50)" -v u9="$(fig "$n" unprepare_p99)" \
    -v gp="$(fig "$n" get_p50)" -v g9="$(fig "$n" get_p99)" -v pub="$(fig "$n" publish)" \
    -v rss="$(fig "$n" rss)" -v rss0="$(fig "$n" rss0)" -v sp="$(fig "$n" rss_split)" \
    -v map="$(fig "$n" map)" 'BEGIN {
    printf "%-22s NodePrepareResources p50 %.2f ms p99 %.2f ms max %.2f ms over %d (target p99 < 5 ms); NodeUnprepareResources p50 %.2f ms p99 %.2f ms\n", l, pp, p9, pm, n, up, u9
    printf "%-22s   the claim GET alone (fake-apiserver: Python, TLS, kept connection) p50 %.2f ms p99 %.2f ms: %.0f%% of the prepare p50, the rest (plugin, CDI spec, checkpoint) %.2f ms\n", "", gp, g9, 100 * gp / pp, pp - gp
    m = split(pub, a, " "); mx = 0; s = 0; ok = 0
    for (i = 1; i <= m; i++) if (a[i] ~ /^[0-9.]+$/) { ok++; s += a[i]; if (a[i] > mx) mx = a[i] }
    if (ok == m && m > 0) printf "%-22s   hotplug to slice write (5 mknods): max %.1f ms mean %.1f ms (target < 1000 ms)\n", "", mx, s / m
    else printf "%-22s   hotplug to slice write: %s (not every hotplug published a new generation)\n", "", pub
    split(sp, r, " ")
    printf "%-22s   peak RSS (VmHWM) %d KiB (target < 6144); after the first slices, before any claim, %d KiB; at the end %d KiB anonymous, %d KiB file-backed (shared libraries: libcurl and its TLS chain)\n", "", rss, rss0, r[1], r[2]
    m = split(map, e, " "); line = ""; libs = 0; lw = 0; rest = 0; nrest = 0; anon = 0
    for (i = 1; i <= m; i++) {
      split(e[i], f, ":")
      if (f[1] == "anonymous") { anon = f[2]; continue }
      libs++; lw += f[3]
      if (libs <= 8) line = line sprintf("%s%s %d (%d written)", line == "" ? "" : ", ", f[1], f[2], f[3])
      else { rest += f[2]; nrest++ }
    }
    printf "%-22s   RSS at the end by mapping, KiB: %s; %d more files %d. The %d files%s pages written (relocations, data; anonymous to the kernel) %d; heap, thread arenas and stacks %d\n", "", line, nrest, rest, libs, "\047", lw, anon }'
}

# ratio A B: this build's run A against the previous build's run B
ratio() {
  awk -v l="$3" -v a="$(fig "$1" prepare_p50)" -v b="$(fig "$2" prepare_p50)" -v c="$(fig "$1" prepare_p99)" \
    -v d="$(fig "$2" prepare_p99)" -v e="$(fig "$1" rss)" -v f="$(fig "$2" rss)" \
    -v g="$(fig "$1" publish)" -v h="$(fig "$2" publish)" 'function mean(s,  a, m, i, t) {
      m = split(s, a, " "); for (i = 1; i <= m; i++) { if (a[i] !~ /^[0-9.]+$/) return -1; t += a[i] }
      return m ? t / m : -1 }
    BEGIN {
      printf "%-22s this build / previous: prepare p50 %.2fx, p99 %.2fx; peak RSS %.2fx", l, a / b, c / d, e / f
      if (mean(g) > 0 && mean(h) > 0) printf "; slice publish (mean) %.2fx", mean(g) / mean(h)
      printf "\n" }'
}

echo "checkpoint on tmpfs (/dev/shm) or on disk ($(stat -f -c %T "$tmp") under ${TMPDIR:-/tmp}); CDI specs on tmpfs"
run this-tmpfs "$BUILD/nodeprobe-devices" "$shm"
run this-disk "$BUILD/nodeprobe-devices" "$tmp"
echo "$(fig this-tmpfs claim)" | sed 's/^/answer: claim /'
report this-tmpfs "this, tmpfs"
report this-disk "this, disk"
echo "what the peak RSS is measured against:"
printf '%-22s   the same plugin, its class a device plugin (no API client: libcurl not loaded): peak RSS %d KiB\n' "" "$(device_plugin_rss "$BUILD/nodeprobe-devices")"
"$TF" 127.0.0.1 "$FAKE_PORT" "$FAKE_CA" | awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[$1, kv[1]] = kv[2] } }
  END { printf "%-22s   OpenSSL alone (test/tools/tls-floor: libssl loaded into a process of %d KiB, one verified TLS GET to the fake): peak RSS %d KiB, +%d KiB: loading %d, OPENSSL_init_ssl %d, context and CA %d, handshake and GET %d; at the end %d KiB anonymous, %d file-backed\n", "",
    v["start", "hwm"], v["request", "hwm"], v["request", "hwm"] - v["start", "hwm"], v["loaded", "hwm"] - v["start", "hwm"],
    v["init", "hwm"] - v["loaded", "hwm"], v["context", "hwm"] - v["init", "hwm"], v["request", "hwm"] - v["context", "hwm"], v["request", "anon"], v["request", "file"] }'
if [ -n "$prev" ]; then
  if run prev-tmpfs "$prev" "$shm" && run prev-disk "$prev" "$tmp"; then
    report prev-tmpfs "previous, tmpfs"
    report prev-disk "previous, disk"
    ratio this-tmpfs prev-tmpfs "ratios, tmpfs"
    ratio this-disk prev-disk "ratios, disk"
  else
    echo "previous build ($prev_rev): cannot run this bench (left out)"
  fi
fi
