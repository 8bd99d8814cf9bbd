#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench, nodeprobe-reload as the chart runs it (issue 30, "the chart's defaults give the same
# latency in a CPU-limited run as outside one"): the command, arguments, env and resources of the
# reload Deployment are rendered from k8s/chart/nodeprobe with its default values by the pinned
# helm (never copied by hand), then run against test/fake-apiserver
#   - unlimited; in a cgroup whose CPU limit is the chart's resources.limits.cpu (cgroup v2
#     cpu.max, or v1 cpu.cfs_quota_us where the cpu controller is on v1: what the kubelet writes
#     for a container's limit, 100 ms periods), memory.max its limits.memory where writable
#     ("limit"); and the same with the weight the kubelet gives the container from
#     resources.requests.cpu ("limit + request": v1 cpu.shares = milliCPU * 1024 / 1000, at least
#     2, kubernetes pkg/kubelet/kuberuntime/helpers_linux.go milliCPUToShares; v2 cpu.weight =
#     1 + (shares - 2) * 9999 / 262142, runc libcontainer/cgroups ConvertCPUSharesToCgroupV2Value)
#     against the busy loops' default weight, a harsher contention than a node's cgroup tree;
#   - both while a CPU hog (one busy loop per core) loads every core;
#   - in its own network and mount namespaces, as a pod: --listen=:9090 binds there, the in-cluster
#     config comes from KUBERNETES_SERVICE_HOST/PORT and /var/run/secrets/kubernetes.io/
#     serviceaccount (a tmpfs over /run), and nothing else is in its environment.
# Each round starts nodeprobe-reload afresh on a small cluster (bench-load.json / 100) and changes
# one ConfigMap used by an annotated Deployment once after its LIST but before /readyz is 200
# ("before ready"), then 1 s, 3 s, 10 s and 30 s after the first 200; each change -> PATCH latency
# is measured on the fake server's own clock (the control API's write time vs the PATCH's arrival
# in its request log). Printed per phase: p50 and max over the rounds for each run, and the ratio
# to the unlimited run; also start -> /readyz 200 and the CPU time nodeprobe-reload used by then.
# Env: RELOAD_LAT_ROUNDS (default 3), RELOAD_LAT_PATCH_WAIT (s, default 120: a change not rolled
# by then fails the bench). Needs root (namespaces, cgroups); left out with a line otherwise.
set -euo pipefail
: "${NP_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${BUILD:=$NP_ROOT/build}"
export NP_ROOT BUILD

if [ -z "${NP_RELOADLAT_INNER:-}" ]; then
  if [ "$(id -u)" -ne 0 ] || ! unshare --mount --net true 2>/dev/null; then
    echo "reload latency: left out (needs root and unshare --mount --net for the pod's namespaces)"
    exit 0
  fi
  exec unshare --mount --net env NP_RELOADLAT_INNER=1 bash "$0" "$@"
fi

# ---- inside the namespaces ----
ip link set lo up
NP_TOOLS=${NP_TOOLS:-/usr/local/lib/nodeprobe-tools}
[ -d "$NP_TOOLS/bin" ] && PATH=$NP_TOOLS/bin:$PATH
command -v helm >/dev/null || { echo "reload latency: helm not found (scripts/install-deps installs it)" >&2; exit 1; }
source "$NP_ROOT/test/fake-apiserver/fake.bash"

WORK=$(mktemp -d /tmp/np-bench-reloadlat.XXXXXX)
CGS=()
cleanup() {
  local c
  fake_stop
  for c in "${CGS[@]}"; do rmdir "$c" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

helm template nodeprobe "$NP_ROOT/k8s/chart/nodeprobe" -n nodeprobe >"$WORK/render.yaml"

# the cgroups: CPU (v2 cpu.max, else v1 cpu) and memory (v2 memory.max, else v1 memory), created
# here, limits written by the Python part from the render
d=np-bench-reloadlat-$$
if [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control &&
  mkdir "/sys/fs/cgroup/$d" 2>/dev/null; then
  CGS+=("/sys/fs/cgroup/$d")
  CG_CPU="v2:/sys/fs/cgroup/$d" CG_MEM="v2:/sys/fs/cgroup/$d"
  grep -qw memory /sys/fs/cgroup/cgroup.subtree_control || CG_MEM=
else
  CG_CPU= CG_MEM=
  if [ -w /sys/fs/cgroup/cpu ] && mkdir "/sys/fs/cgroup/cpu/$d" 2>/dev/null; then
    CGS+=("/sys/fs/cgroup/cpu/$d")
    CG_CPU="v1:/sys/fs/cgroup/cpu/$d"
  fi
  if [ -w /sys/fs/cgroup/memory ] && mkdir "/sys/fs/cgroup/memory/$d" 2>/dev/null; then
    CGS+=("/sys/fs/cgroup/memory/$d")
    CG_MEM="v1:/sys/fs/cgroup/memory/$d"
  fi
fi
[ -n "$CG_CPU" ] || { echo "reload latency: left out (no writable cgroup cpu controller)"; exit 0; }

FAKE_DIR="$WORK/fake" fake_start --body-log-max 4096
# the pod's service account volume, in this mount namespace only
mount -t tmpfs -o mode=0755 np-bench-run /run
SA=/var/run/secrets/kubernetes.io/serviceaccount
mkdir -p "$SA"
cp "$FAKE_CA" "$SA/ca.crt"
printf '%s' "$FAKE_TOKEN" >"$SA/token"
printf nodeprobe >"$SA/namespace"

/usr/bin/python3 - "$FAKE_CTL" "$FAKE_PORT" "$BUILD/nodeprobe-reload" "$WORK" "$CG_CPU" "$CG_MEM" \
  "$NP_ROOT/test/fake-apiserver/bench-load.json" "${RELOAD_LAT_ROUNDS:-3}" \
  "${RELOAD_LAT_PATCH_WAIT:-120}" <<'EOF'
import json, os, signal, subprocess, sys, threading, time, urllib.request
import yaml

ctl, api_port, binary, work, cg_cpu, cg_mem, load_file, rounds, patch_wait = sys.argv[1:10]
rounds, patch_wait = int(rounds), float(patch_wait)


def call(method, path, body=None, timeout=120):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(ctl + path, data=data, method=method)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


# ---- the chart's reload container, from the render ----
dep = [d for d in yaml.safe_load_all(open(os.path.join(work, "render.yaml")))
       if d and d.get("kind") == "Deployment" and
       any(c["name"] == "reload" for c in d["spec"]["template"]["spec"]["containers"])]
if len(dep) != 1:
    sys.exit(f"reload latency: {len(dep)} reload Deployments in the chart's default render")
c = [c for c in dep[0]["spec"]["template"]["spec"]["containers"] if c["name"] == "reload"][0]
if c["command"] != ["/usr/bin/nodeprobe-reload"]:
    sys.exit(f"reload latency: the chart runs {c['command']}, not /usr/bin/nodeprobe-reload")
args = c.get("args", [])
env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": api_port}
for e in c.get("env", []):
    if "value" not in e:
        sys.exit(f"reload latency: env {e['name']} is not a plain value in the default render")
    env[e["name"]] = e["value"]
limits, requests = c["resources"]["limits"], c["resources"].get("requests", {})


def millicpu(q):
    # Kubernetes quantities: "200m", "0.5", "1"
    q = str(q)
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def mem_bytes(q):
    q, units = str(q), {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "k": 1000, "M": 10**6, "G": 10**9}
    for u, m in units.items():
        if q.endswith(u):
            return int(q[:-len(u)]) * m
    return int(q)


quota = millicpu(limits["cpu"]) * 100  # per 100 ms period
shares = max(2, millicpu(requests.get("cpu", "0")) * 1024 // 1000)
ver, cgdir = cg_cpu.split(":", 1)
if ver == "v2":
    open(os.path.join(cgdir, "cpu.max"), "w").write(f"{quota} 100000")
else:
    open(os.path.join(cgdir, "cpu.cfs_period_us"), "w").write("100000")
    open(os.path.join(cgdir, "cpu.cfs_quota_us"), "w").write(str(quota))
cgroups, mem_note = [cgdir], "memory limit not applied (no writable memory controller)"
if cg_mem and "memory" in limits:
    mver, mdir = cg_mem.split(":", 1)
    open(os.path.join(mdir, "memory.max" if mver == "v2" else "memory.limit_in_bytes"), "w").write(
        str(mem_bytes(limits["memory"])))
    if mdir != cgdir:
        cgroups.append(mdir)
    mem_note = f"memory {limits['memory']} ({mver} {'memory.max' if mver == 'v2' else 'memory.limit_in_bytes'})"
print(f"chart defaults (helm template): {' '.join(c['command'] + args)}; env "
      f"{' '.join(k + '=' + v for k, v in env.items())}; resources.limits cpu {limits['cpu']} "
      f"({ver} {'cpu.max' if ver == 'v2' else 'cpu.cfs_quota_us'} {quota} per 100000 us), {mem_note}")

# ---- a small cluster: bench-load.json / 100 ----
for t in json.load(open(load_file)):
    try:
        call("POST", "/generate", {"template": t["template"], "count": max(1, t["count"] // 100)})
    except urllib.error.HTTPError:
        pass  # a kind the fake serves only with its CRD (Rollouts): not in the chart's defaults
call("POST", "/compact")
port = next(a.split(":")[-1] for a in args if a.startswith("--listen="))
readyz = f"http://127.0.0.1:{port}/readyz"
# app<i> uses cm<i>; bench-load's CronJobs job0..job4 share cm0..cm4, so the phases use 10..14
PHASES = [("before ready", None, 10), ("1 s", 1, 11), ("3 s", 3, 12), ("10 s", 10, 13), ("30 s", 30, 14)]


def status(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


def change(i, k):
    s = call("GET", "/requests?count=1")["next"]
    w = call("POST", "/objects", {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": f"cm{i}", "namespace": f"bench{i % 20}",
                                               "labels": {"app": f"app{i}"}},
                                  "data": {"app.conf": f"change {k}", "LOG_LEVEL": "info"}})
    got = call("GET", f"/requests?since={s}&method=PATCH&path=/deployments/app{i}$&min=1&wait=1")
    t_end = time.time() + patch_wait
    while not got["items"] and time.time() < t_end:
        got = call("GET", f"/requests?since={s}&method=PATCH&path=/deployments/app{i}$&min=1&wait=10")
    if not got["items"]:
        sys.exit(f"reload latency: no PATCH of app{i} within {patch_wait:.0f} s of its ConfigMap's change")
    return (got["items"][0]["time"] - w["time"]) * 1000.0


def weigh(heavy):
    # "limit + request": the request's weight; otherwise the default (1024, v2 100)
    if ver == "v2":
        w = 1 + (shares - 2) * 9999 // 262142 if heavy else 100
        open(os.path.join(cgdir, "cpu.weight"), "w").write(str(w))
    else:
        open(os.path.join(cgdir, "cpu.shares"), "w").write(str(shares if heavy else 1024))


def one_round(limited, k):
    call("GET", "/watchers?max=0&wait=30")
    since = call("GET", "/requests?count=1")["next"]

    def into_cgroup():
        for d in cgroups:
            open(os.path.join(d, "cgroup.procs"), "w").write(str(os.getpid()))

    log = open(os.path.join(work, f"reload-{'limited' if limited else 'unlimited'}-{k}.log"), "w")
    t0 = time.time()
    p = subprocess.Popen(c["command"] + args, executable=binary, env=env, stdout=log, stderr=subprocess.STDOUT,
                         preexec_fn=into_cgroup if limited else None)
    ready = {}

    def poll():
        # /readyz every 50 ms (the kubelet's probe every 10 s would blur the start); each costs
        # nodeprobe-reload about 0.12 ms of CPU
        while p.poll() is None and "t" not in ready:
            if status(readyz) == 200:
                ready["t"] = time.time()
                f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
                ready["cpu"] = (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
            else:
                time.sleep(0.05)

    th = threading.Thread(target=poll)
    th.start()
    lat = {}
    # "before ready": once the ConfigMaps LIST has been answered, while /readyz is not 200
    call("GET", f"/requests?since={since}&method=GET&path=/configmaps$&watch=0&min=1&wait=60")
    if "t" not in ready and status(readyz) != 200:
        lat["before ready"] = change(PHASES[0][2], k)
    th.join(timeout=120)
    if "t" not in ready:
        p.kill()
        sys.exit("reload latency: /readyz not 200 within 120 s: " + open(log.name).read()[-2000:])
    for name, after, i in PHASES[1:]:
        time.sleep(max(0.0, ready["t"] + after - time.time()))
        lat[name] = change(i, k)
    p.send_signal(signal.SIGTERM)
    p.wait()
    return ready["t"] - t0, lat, ready["cpu"]


def run(limited, base):
    hogs = [subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"]) for _ in range(os.cpu_count() or 1)]
    try:
        res = [one_round(limited, base + k) for k in range(rounds)]
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    return res


def q50(v):
    v = sorted(v)
    return v[(len(v) - 1) // 2]


RUNS = [("unlimited", False, False), ("limit " + str(limits["cpu"]), True, False),
        (f"+ request {requests.get('cpu', '0')}", True, True)]
out = []
for n, (name, limited, heavy) in enumerate(RUNS):
    weigh(heavy)
    out.append(run(limited, 1000 * n))
weigh(False)
rows = [("start -> /readyz 200", [[r[0] * 1000 for r in o] for o in out]),
        ("  its CPU time (user+sys)", [[r[2] * 1000 for r in o] for o in out])]
for name, _, _ in PHASES:
    rows.append((f"change {name} -> PATCH", [[r[1][name] for r in o if name in r[1]] for o in out]))
print(f"{rounds} rounds each, {os.cpu_count()} busy loops on {os.cpu_count()} cores; ms, p50 / max "
      f"(ratio to unlimited p50 / max):")
print(f"  {'':28}" + "".join(f"{name:>38}" if n else f"{name:>19}" for n, (name, _, _) in enumerate(RUNS)))
for name, cols in rows:
    if not all(cols):
        print(f"  {name:28} {' / '.join(str(len(c)) for c in cols)} samples (the others came after /readyz was 200)")
        continue
    u = cols[0]
    line = f"  {name:28} {q50(u):8.1f} / {max(u):8.1f}"
    for l in cols[1:]:
        line += f" {q50(l):8.1f} / {max(l):8.1f} ({q50(l) / q50(u):5.2f} / {max(l) / max(u):5.2f})"
    print(line)
EOF
