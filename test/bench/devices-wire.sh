#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pkg/kubelet on the wire: Allocate latency (p50/p99 of 1000 calls, 4 IDs each, from the test
# kubelet on python3-grpcio, one channel; the client's own time included) against
# test/tools/kubelet-demo serving 2 resources of 16 devices, and the demo's peak RSS over the run
# (registration, a ListAndWatch stream, the calls). Prints, asserts nothing.
set -euo pipefail
cd "${NP_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-$PWD/build}
FK=$PWD/test/kubelet/fake-kubelet.py
/usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null || { echo "devices-wire: skipped: no python3-grpcio/python3-grpc-tools"; exit 0; }
tmp=$(mktemp -d)
kp= dp=
trap '[ -n "$dp" ] && kill "$dp" 2>/dev/null; [ -n "$kp" ] && kill "$kp" 2>/dev/null; wait; rm -rf "$tmp"' EXIT
export FAKE_KUBELET_GEN=$tmp/gen
/usr/bin/python3 "$FK" serve "$tmp" 2>/dev/null &
kp=$!
for _ in $(seq 100); do [ -S "$tmp/kubelet.sock" ] && break; sleep 0.1; done
/usr/bin/time -f %M -o "$tmp/rss" "$BUILD/test/tools/kubelet-demo" "$tmp" example.com/foo,16 example.com/bar,16 2>/dev/null &
dp=$!
/usr/bin/python3 "$FK" wait-reg "$tmp" 2 >/dev/null
/usr/bin/python3 "$FK" watch "$tmp/demo-example.com_foo.sock" 1 >/dev/null
lat=$(/usr/bin/python3 "$FK" bench "$tmp/demo-example.com_foo.sock" 1000 foo-0,foo-1,foo-2,foo-3)
kill -TERM "$(pgrep -P "$dp")" # the demo, under /usr/bin/time
wait "$dp" || true
dp=
echo "devices-wire: $lat  kubelet-demo peak RSS $(tail -1 "$tmp/rss") KiB"
