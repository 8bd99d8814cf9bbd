#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench, nodeprobe-reload: load 20,000 Secrets (500 of them 500 KB Helm-release-like),
# 15,000 ConfigMaps and 2,000 Deployments into test/fake-apiserver; print nodeprobe-reload's peak
# RSS, change-to-PATCH latency p50/p99 over 1,000 isolated changes (coalescing window 0) and the
# API requests per change. Secrets are listed without the Helm field selector (the worst case:
# every byte of the 250 MB of release Secrets is streamed through the hash).
# Env: RELOAD_BENCH_CHANGES (default 1000).
set -euo pipefail
: "${NP_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${BUILD:=$NP_ROOT/build}"
CHANGES=${RELOAD_BENCH_CHANGES:-1000}
source "$NP_ROOT/test/fake-apiserver/fake.bash"

WORK=$(mktemp -d /tmp/np-bench-reload.XXXXXX)
RL_PID=
cleanup() {
  if [ -n "$RL_PID" ]; then
    kill "$RL_PID" 2>/dev/null || true
    wait "$RL_PID" 2>/dev/null || true
  fi
  fake_stop
  rm -rf "$WORK"
}
trap cleanup EXIT

FAKE_DIR="$WORK/fake" fake_start --history 100000 --log-max 50000 --body-log-max 4096
fake_kubeconfig "$WORK/kubeconfig"

gen() { fake_ctl POST /generate "$1" | jq -r '"\(.count) in \(.seconds)s"'; }
echo "loading objects into the fake API server (20 namespaces)..."
echo "  Secrets: $(gen '{"template":{"apiVersion":"v1","kind":"Secret","type":"Opaque","metadata":{"name":"secret-{i}","namespace":"ns{i%20}"},"data":{"password":"{blob:24}","username":"{blob:8}"}},"count":19500}')"
echo "  Helm release Secrets (500 KB): $(gen '{"template":{"apiVersion":"v1","kind":"Secret","type":"helm.sh/release.v1","metadata":{"name":"sh.helm.release.v1.app{i}.v1","namespace":"ns{i%20}"},"data":{"release":"{blob:375000}"}},"count":500}')"
echo "  ConfigMaps: $(gen '{"template":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-{i}","namespace":"ns{i%20}"},"data":{"app.yaml":"{blob:300}","level":"info"}},"count":15000}')"
echo "  Deployments: $(gen '{"template":{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"dep-{i}","namespace":"ns{i%20}","annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"dep-{i}"}},"template":{"metadata":{"labels":{"app":"dep-{i}"}},"spec":{"containers":[{"name":"app","image":"registry.example/app:1","envFrom":[{"configMapRef":{"name":"cm-{i}"}}],"env":[{"name":"DB_PASSWORD","valueFrom":{"secretKeyRef":{"name":"secret-{i}","key":"password"}}}]}]}}}},"count":2000}')"
fake_ctl POST /compact >/dev/null

"$BUILD/nodeprobe-reload" --kubeconfig "$WORK/kubeconfig" --listen '' --coalesce-window 0 \
  --min-interval 0 --max-rollouts-per-second 0 --secret-field-selector '' \
  >"$WORK/reload.log" 2>&1 3>&- &
RL_PID=$!
t0=$(date +%s.%N)
fake_ctl GET "/watchers?min=5&wait=60" >/dev/null
t1=$(date +%s.%N)
[ "$(fake_ctl GET /watchers | jq .count)" -ge 5 ] || { cat "$WORK/reload.log"; exit 1; }
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "initial sync (LIST of 37,000 objects, 250 MB of Secret data streamed): %.1f s\n", b - a }'
grep synced "$WORK/reload.log" || true

# 1,000 isolated changes: change cm-i, wait for the PATCH of dep-i, next.
/usr/bin/python3 - "$FAKE_CTL" "$CHANGES" <<'EOF'
import json, sys, time, urllib.request

ctl, n = sys.argv[1], int(sys.argv[2])

def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(ctl + path, data=data, method=method)
    with urllib.request.urlopen(req, timeout=70) as r:
        return json.loads(r.read())

start = call("GET", "/requests?count=1")["next"]
lat = []
for i in range(n):
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "cm-%d" % i, "namespace": "ns%d" % (i % 20)},
          "data": {"app.yaml": "changed-%d" % i, "level": "debug"}}
    since = call("GET", "/requests?count=1")["next"]
    t0 = time.time()
    call("POST", "/objects", cm)
    got = call("GET", "/requests?since=%d&method=PATCH&path=/dep-%d$&min=1&wait=10" % (since, i))
    if not got["items"]:
        sys.exit("no PATCH for dep-%d within 10 s" % i)
    lat.append((got["items"][0]["time"] - t0) * 1000.0)
    time.sleep(0.01)  # isolated: the Event POST that follows the PATCH is done too
reqs = call("GET", "/requests?since=%d&watch=0" % start)["items"]
by = {}
for r in reqs:
    if r["path"].startswith("/api") or r["path"].startswith("/apis"):
        verb = r["method"]
        if verb == "GET":
            verb = "GET" if r["path"].split("/")[-2] in ("configmaps", "secrets", "deployments") else "LIST"
        by[verb] = by.get(verb, 0) + 1
lat.sort()
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
print("change-to-PATCH latency over %d isolated changes: p50 %.1f ms, p99 %.1f ms, max %.1f ms"
      % (n, p(0.50), p(0.99), lat[-1]))
print("API requests per change: %.2f (%s); LIST per change: %.2f"
      % (sum(by.values()) / n, ", ".join("%s %d" % kv for kv in sorted(by.items())),
         by.get("LIST", 0) / n))
EOF

rss=$(awk '/VmHWM/ {print $2}' "/proc/$RL_PID/status")
awk -v k="$rss" 'BEGIN { printf "nodeprobe-reload peak RSS: %.1f MB (target < 32 MB)\n", k / 1024 }'
grep -c '^nodeprobe-reload: rolled' "$WORK/reload.log" | sed 's/^/rollouts logged: /'
