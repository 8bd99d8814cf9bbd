#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench, nodeprobe-reload, on test/fake-apiserver loaded from bench-load.json (20,500 Secrets,
# 500 of them 500 KB Helm releases; 15,000 ConfigMaps; 2,000 Deployments; 500 CronJobs and 200
# Argo Rollouts where the fake server serves those kinds), nodeprobe-reload with DEFAULT settings:
#   - sync: CPU seconds and wall time of the initial LIST, rollouts at start-up (0 expected)
#   - change -> PATCH latency p50/p99 over isolated changes, from the fake server's own clock (the
#     control API's write time vs the PATCH's arrival in its request log); target p99 < 50 ms
#   - storm: 20 changes to one ConfigMap in ~2 s -> rollouts (target <= 3, the last carrying the
#     last hash); LISTs per change (target 0); API requests per change
#   - peak RSS (target < 32 MB); also with --secret-field-selector '' (every Helm release Secret,
#     250 MB, streamed through the hash), and at 2x and 5x the object counts: bytes per tracked
#     object, the marginal cost (target < 300)
#   - big lists (issue 17 #4): 10 Deployments, each with its own 247 KB
#     configmap.reloader.stakater.com/reload annotation (21,500 patterns), beside a Deployment with
#     a small list: peak RSS (target < 32 MB; 322.7 MB measured before the lists had a budget, the
#     issue reported 324 MB), the ten refused with a ReloadSkipped Event each, the small one still
#     rolled
#   - full budget (review of issue 17 #4): 320 Deployments in 16 namespaces, each with its own
#     list of 4 patterns like [ab]*a[ab]{12} (a lazy DFA that grows with every name matched), 16
#     MiB of them kept, the rest refused; 40 ConfigMaps per namespace with random 253-byte names,
#     every list matched against each at start (--mode once): peak RSS (target < 48 MB, the chart's
#     limit 64Mi), lists kept and refused
#   - csi (issue 21): the load at 1x with --enable-csi-integration plus 50 Deployments mounting a
#     SecretProviderClass each and 1,000 SecretProviderClassPodStatus objects (20 pods each):
#     rotations (a status's version changes) -> GET of the SecretProviderClass and PATCH with Reloader's hash, LISTs per rotation
#     (target 0), peak RSS (target < 32 MB), and the first rotation's requests as logged
# Changes are spaced 0.25 s: isolated for the default rate limit (5 rollouts/s, burst 20).
# Env: RELOAD_BENCH_CHANGES (default 200), RELOAD_BENCH_SCALES (default "2 5"),
# RELOAD_BENCH_SCENARIOS (default "big-lists full-budget csi load": which parts run; "load" is all
# of the above but the lists and csi), RELOAD_BENCH_ROTATIONS (default 100, csi).
set -euo pipefail
: "${NP_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${BUILD:=$NP_ROOT/build}"
source "$NP_ROOT/test/fake-apiserver/fake.bash"

WORK=$(mktemp -d /tmp/np-bench-reload.XXXXXX)
cleanup() {
  fake_stop
  rm -rf "$WORK"
}
trap cleanup EXIT

SCENARIOS=" ${RELOAD_BENCH_SCENARIOS:-big-lists full-budget csi load} "
# call(method, path, body): the fake server's control API (argv[1]), for the scenarios below
cat >"$WORK/bench_api.py" <<'EOF'
import json, sys, urllib.request


def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(sys.argv[1] + path, data=data, method=method)
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())
EOF

if [[ $SCENARIOS == *" big-lists "* ]]; then
  FAKE_DIR="$WORK/fake-lists" fake_start --body-log-max 4096
  fake_kubeconfig "$WORK/kubeconfig"
  /usr/bin/python3 - "$FAKE_CTL" "$BUILD/nodeprobe-reload" "$WORK" <<'EOF'
import os, subprocess, sys, time

ctl, binary, work = sys.argv[1:4]
sys.path.insert(0, work)

from bench_api import call


def deployment(name, ann):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default", "annotations": ann},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "x"}]}}}}


call("POST", "/objects", {"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "cfg", "namespace": "default"}, "data": {"k": "0"}})
size = 0
for i in range(10):
    # 21,500 patterns of 10 bytes, ", " and "," taking turns: 247 KB, different in each Deployment
    text = "".join(f"d{i}c{j:05d}.*" + (", " if j % 2 else ",") for j in range(21500)).rstrip(", ")
    size = len(text)
    call("POST", "/objects", deployment(f"big{i}", {"configmap.reloader.stakater.com/reload": text}))
call("POST", "/objects", deployment("small", {"configmap.reloader.stakater.com/reload": "cfg"}))
log = open(os.path.join(work, "lists.log"), "w")
p = subprocess.Popen([binary, "--kubeconfig", os.path.join(work, "kubeconfig"), "--listen", ""],
                     stdout=log, stderr=subprocess.STDOUT)
call("GET", "/watchers?min=5&wait=120")
s = call("GET", "/requests?count=1")["next"]
call("POST", "/objects", {"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "cfg", "namespace": "default"}, "data": {"k": "1"}})
rolled = call("GET", f"/requests?since={s}&method=PATCH&path=/deployments/small$&min=1&wait=30")["count"]
events = call("GET", "/requests?method=POST&path=/events$&min=11&wait=30")["items"]
skipped = sum(1 for r in events if '"ReloadSkipped"' in r.get("body", ""))
hwm = [int(l.split()[1]) for l in open(f"/proc/{p.pid}/status") if l.startswith("VmHWM:")][0]
p.terminate()
p.wait()
print(f"big lists: 10 Deployments x {size / 1000:.0f} KB reload annotation (21,500 patterns each): "
      f"peak RSS {hwm / 1024:.1f} MB (target < 32 MB); ReloadSkipped Events: {skipped} (10 expected); "
      f"the Deployment with a small list rolled: {'yes' if rolled else 'NO'}")
EOF
  fake_stop
fi
if [[ $SCENARIOS == *" full-budget "* ]]; then
  FAKE_DIR="$WORK/fake-budget" fake_start --body-log-max 4096
  fake_kubeconfig "$WORK/kubeconfig"
  /usr/bin/python3 - "$FAKE_CTL" "$BUILD/nodeprobe-reload" "$WORK" <<'EOF'
import os, random, subprocess, sys, time

ctl, binary, work = sys.argv[1:4]
sys.path.insert(0, work)

from bench_api import call


random.seed(1)
for n in range(16):
    ns = f"team{n:02d}"
    for i in range(20):
        k = n * 20 + i
        pats = f"[ab]*a[ab]{{12}}, [ab]*b[ab]{{12}}{k}, [ab]*a[ab]{{11}}b{k}, [ab]*ab[ab]{{12}}{k}"
        call("POST", "/objects", {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": f"w{i}", "namespace": ns,
                          "annotations": {"configmap.reloader.stakater.com/reload": pats}},
             "spec": {"selector": {"matchLabels": {"app": "w"}},
                      "template": {"metadata": {"labels": {"app": "w"}},
                                   "spec": {"containers": [{"name": "app", "image": "x"}]}}}})
    for j in range(40):
        name = "".join(random.choice("ab") for _ in range(253))
        call("POST", "/objects", {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": name, "namespace": ns}, "data": {"k": "0"}})
t = time.monotonic()
out = subprocess.run(["/usr/bin/time", "-f", "%M", binary, "--kubeconfig",
                      os.path.join(work, "kubeconfig"), "--mode", "once", "--no-events"],
                     capture_output=True, text=True)
secs = time.monotonic() - t
err = out.stderr.strip().splitlines()
hwm = int(err[-1])
refused = sum(1 for l in err if "the list is ignored" in l)
print(f"full budget: 320 lists of 4 [ab]*a[ab]{{12}}-like patterns in 16 namespaces, 640 random "
      f"253-byte names matched: peak RSS {hwm / 1024:.1f} MB (target < 48 MB); "
      f"{320 - refused} lists kept, {refused} refused; {secs:.1f} s; exit {out.returncode}")
EOF
  fake_stop
fi
if [[ $SCENARIOS == *" csi "* ]]; then
  FAKE_DIR="$WORK/fake-csi" fake_start --history 20000 --log-max 100000 --body-log-max 4096
  fake_kubeconfig "$WORK/kubeconfig"
  /usr/bin/python3 - "$FAKE_CTL" "$BUILD/nodeprobe-reload" "$WORK" \
    "$NP_ROOT/test/fake-apiserver/bench-load.json" "${RELOAD_BENCH_ROTATIONS:-100}" <<'EOF'
import hashlib, json, os, subprocess, sys, time

ctl, binary, work, load_file, nrot = sys.argv[1:6]
nrot = int(nrot)
sys.path.insert(0, work)

from bench_api import call

SPCPS = {"apiVersion": "secrets-store.csi.x-k8s.io/v1", "kind": "SecretProviderClassPodStatus"}


def status(i, version):
    # the status of pod i (SecretProviderClass spc<i % 50>, mounted by Deployment csi<i % 50>)
    spc = f"spc{i % 50}"
    return {**SPCPS, "metadata": {"name": f"pod{i}-csi-{spc}", "namespace": "csi"},
            "status": {"podName": f"pod{i}", "secretProviderClassName": spc, "mounted": True,
                       "objects": [{"id": "secret/db-pass", "version": version},
                                   {"id": "secret/api-key", "version": "7"}]}}


def reloader_hash(st):
    pairs = [f"{o['id']}={o['version']}" for o in st["status"]["objects"]]
    pairs.append("SecretProviderClassName=" + st["status"]["secretProviderClassName"])
    return hashlib.sha1(";".join(sorted(pairs)).encode()).hexdigest()


t0 = time.time()
for t in json.load(open(load_file)):
    call("POST", "/generate", {"template": t["template"], "count": t["count"]})
call("POST", "/crds", {"resource": "argoproj.io/v1alpha1/rollouts"})
call("POST", "/crds", {"resource": "secrets-store.csi.x-k8s.io/v1/secretproviderclasspodstatuses"})
call("POST", "/crds", {"resource": "secrets-store.csi.x-k8s.io/v1/secretproviderclasses"})
call("POST", "/generate", {"count": 50, "template": {
    "apiVersion": "secrets-store.csi.x-k8s.io/v1", "kind": "SecretProviderClass",
    "metadata": {"name": "spc{i}", "namespace": "csi"},
    "spec": {"provider": "vault", "parameters": {
        "roleName": "app{i}", "objects": "- objectName: db-pass\n  secretPath: secret/db-pass\n"}}}})
# 50 SecretProviderClasses, 50 Deployments each mounting its own spc<j> through a CSI volume, and
# 1,000 statuses (20 pods per SecretProviderClass), each status about 600 bytes as the driver
# writes them
call("POST", "/generate", {"count": 50, "template": {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "csi{i}", "namespace": "csi",
                 "annotations": {"secretproviderclass.reloader.stakater.com/auto": "true"}},
    "spec": {"selector": {"matchLabels": {"app": "csi{i}"}},
             "template": {"metadata": {"labels": {"app": "csi{i}"}}, "spec": {
                 "containers": [{"name": "app", "image": "x", "volumeMounts": [
                     {"name": "secrets", "mountPath": "/mnt/secrets", "readOnly": True}]}],
                 "volumes": [{"name": "secrets", "csi": {
                     "driver": "secrets-store.csi.k8s.io", "readOnly": True,
                     "volumeAttributes": {"secretProviderClass": "spc{i}"}}}]}}}}})
call("POST", "/generate", {"count": 1000, "template": {
    **SPCPS, "metadata": {"name": "pod{i}-csi-spc{i%50}", "namespace": "csi",
                          "labels": {"secrets-store.csi.k8s.io/pod-name": "pod{i}"}},
    "status": {"podName": "pod{i}", "secretProviderClassName": "spc{i%50}", "mounted": True,
               "targetPath": "/var/lib/kubelet/pods/pod{i}/volumes/kubernetes.io~csi/secrets/mount",
               "objects": [{"id": "secret/db-pass", "version": "1"},
                           {"id": "secret/api-key", "version": "7"}]}}})
call("POST", "/compact")
print("csi: bench-load.json + 50 CSI Deployments + 1,000 SecretProviderClassPodStatus objects "
      "loaded in %.1f s" % (time.time() - t0))
log = open(os.path.join(work, "csi.log"), "w")
p = subprocess.Popen([binary, "--kubeconfig", os.path.join(work, "kubeconfig"), "--listen", "",
                      "--is-Argo-Rollouts=true", "--enable-csi-integration"],
                     stdout=log, stderr=subprocess.STDOUT)
for _ in range(3000):
    if "synced:" in open(log.name).read():
        break
    time.sleep(0.02)
call("GET", "/watchers?min=9&wait=60")
first = call("GET", "/requests?count=1")["next"]
lat = []
for k in range(nrot):
    i = k % 50  # pod i of Deployment csi<i>: each rotation is a new version of its secret
    st = status(i, str(2 + k // 50))
    s = call("GET", "/requests?count=1")["next"]
    w = call("POST", "/objects", st)
    got = call("GET", f"/requests?since={s}&method=PATCH&path=/deployments/csi{i}$&min=1&wait=10")
    if not got["items"] or reloader_hash(st) not in got["items"][0]["body"]:
        sys.exit(f"csi: no PATCH of csi{i} with Reloader's hash within 10 s")
    lat.append((got["items"][0]["time"] - w["time"]) * 1000.0)
    if k == 0:  # the PATCH, then its Event (the SecretProviderClass comes from its watch)
        rot = call("GET", f"/requests?since={s}&watch=0&min=2&wait=10")["items"]
    time.sleep(0.25)
reqs = call("GET", f"/requests?since={first}&watch=0")["items"]
gets = [r for r in reqs if r["method"] == "GET"]
# a LIST names a collection; a GET of a SecretProviderClass (none expected: it is watched) a name
lists = sum(1 for r in gets if not r["path"].split("/")[-2] == "secretproviderclasses")
spc_gets = len(gets) - lists
api = sum(1 for r in reqs if r["path"].startswith("/api"))
hwm = [int(l.split()[1]) for l in open(f"/proc/{p.pid}/status") if l.startswith("VmHWM:")][0]
p.terminate()
p.wait()
lat.sort()
synced = [l for l in open(log.name) if "synced:" in l][0].strip()
print(f"csi: synced {synced.split('synced: ', 1)[1]}")
print("csi: %d rotations (one status's version each, 0.25 s apart): change -> PATCH p50 %.1f ms, "
      "p99 %.1f ms; per change %.2f API requests (%.2f GET of the SecretProviderClass), %.2f LIST "
      "(target 0); peak RSS %.1f MB (target < 32 MB)"
      % (nrot, lat[len(lat) // 2], lat[min(len(lat) - 1, int(0.99 * len(lat)))], api / nrot,
         spc_gets / nrot, lists / nrot, hwm / 1024))
print("csi: the first rotation's requests, from the fake API server's log:")
for r in rot:
    print(f"  {r['method']} {r['path']}{'?' + r['query'] if r.get('query') else ''} -> {r['status']}")
EOF
  fake_stop
fi
[[ $SCENARIOS == *" load "* ]] || exit 0

FAKE_DIR="$WORK/fake" fake_start --history 20000 --log-max 100000 --body-log-max 4096
fake_kubeconfig "$WORK/kubeconfig"

/usr/bin/python3 - "$FAKE_CTL" "$BUILD/nodeprobe-reload" "$WORK" \
  "$NP_ROOT/test/fake-apiserver/bench-load.json" "${RELOAD_BENCH_CHANGES:-200}" \
  "${RELOAD_BENCH_SCALES:-2 5}" <<'EOF'
import hashlib, json, os, subprocess, sys, time, urllib.error, urllib.request

ctl, binary, work, load_file, nchanges, scales = sys.argv[1:7]
nchanges, scales = int(nchanges), [int(x) for x in scales.split()]
kubeconfig = os.path.join(work, "kubeconfig")
templates = json.load(open(load_file))
tick = os.sysconf("SC_CLK_TCK")


def call(method, path, body=None, timeout=600):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(ctl + path, data=data, method=method)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


served = set()


def load(scale, prev):
    """Bring every kind to scale x its count (objects prev x .. scale x - 1 are added)."""
    t0 = time.time()
    for t in templates:
        kind = t["template"]["kind"]
        try:
            call("POST", "/generate", {"template": t["template"], "count": t["count"] * (scale - prev),
                                       "start": t["count"] * prev})
            served.add(kind)
        except urllib.error.HTTPError:
            if scale == 1:
                print(f"  {kind}: not served by the fake API server yet; left out")
    call("POST", "/compact")
    return time.time() - t0


def proc_cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick


def hwm(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def start(extra=()):
    log = open(os.path.join(work, "reload.log"), "w")
    since = call("GET", "/requests?count=1")["next"]
    t0 = time.time()
    p = subprocess.Popen([binary, "--kubeconfig", kubeconfig, "--listen", "", *kinds_args, *extra],
                         stdout=log, stderr=subprocess.STDOUT, pass_fds=())
    # synced and watching: its "synced:" line, then every watch open
    for _ in range(3000):
        if "synced:" in open(log.name).read():
            break
        if p.poll() is not None:
            sys.exit("nodeprobe-reload exited: " + open(log.name).read())
        time.sleep(0.02)
    call("GET", "/watchers?min=5&wait=60")
    wall = time.time() - t0
    synced = [l for l in open(log.name) if "synced:" in l][0].strip()
    return p, since, wall, synced


def stop(p):
    p.terminate()
    p.wait()


def objects(synced):
    # "synced: N ConfigMaps, N Secrets, N workloads"
    return sum(int(w) for w in synced.split() if w.isdigit())


def reloader_hash(data):
    return hashlib.sha1(";".join(sorted(f"{k}={v}" for k, v in data.items())).encode()).hexdigest()


def cm(i, data):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"cm{i}", "namespace": f"bench{i % 20}", "labels": {"app": f"app{i}"}},
            "data": data}


# Argo Rollouts: the fake server serves them once their CRD is installed, nodeprobe-reload
# watches them with Reloader's --is-Argo-Rollouts (where the binary has them).
try:
    call("POST", "/crds", {"resource": "argoproj.io/v1alpha1/rollouts"})
except urllib.error.HTTPError:
    pass
kinds_args = []
if "is-Argo-Rollouts" in subprocess.run([binary, "--help"], capture_output=True, text=True).stdout:
    kinds_args = ["--is-Argo-Rollouts=true"]
print("loading bench-load.json into the fake API server (20 namespaces)...")
print("  %.1f s for %s" % (load(1, 0), ", ".join(sorted(served))))

# ---- 1x, default settings ----
p, since, wall, synced = start()
cpu = proc_cpu(p.pid)
n1 = objects(synced)
startup = call("GET", f"/requests?since={since}&method=PATCH|POST&path=/(deployments|statefulsets|daemonsets|jobs|rollouts)/&count=1")["count"]
print(f"sync (default settings{' and ' + ' '.join(kinds_args) if kinds_args else ''}; Helm release "
      f"Secrets excluded server-side): {cpu:.2f} s CPU, "
      f"{wall:.1f} s wall; {synced.split(': ', 1)[1]}; rollouts at start-up: {startup}")

# isolated changes to Deployments 1000.. (no CronJob or Rollout shares their ConfigMaps)
first = call("GET", "/requests?count=1")["next"]
lat = []
for k in range(nchanges):
    i = 1000 + k % 1000
    s = call("GET", "/requests?count=1")["next"]
    w = call("POST", "/objects", cm(i, {"app.conf": f"changed {k}", "LOG_LEVEL": "debug"}))
    got = call("GET", f"/requests?since={s}&method=PATCH&path=/deployments/app{i}$&min=1&wait=10")
    if not got["items"]:
        sys.exit(f"no PATCH of app{i} within 10 s")
    lat.append((got["items"][0]["time"] - w["time"]) * 1000.0)
    time.sleep(0.25)
reqs = call("GET", f"/requests?since={first}&watch=0")["items"]
lists = sum(1 for r in reqs if r["method"] == "GET" and r["path"].split("/")[-1] in
            ("configmaps", "secrets", "deployments", "statefulsets", "daemonsets", "cronjobs", "jobs", "rollouts"))
api = sum(1 for r in reqs if r["path"].startswith("/api"))
lat.sort()
q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))]
print("change -> PATCH over %d isolated changes (default settings): p50 %.1f ms, p99 %.1f ms, max %.1f ms "
      "(target p99 < 50 ms)" % (len(lat), q(0.50), q(0.99), lat[-1]))
print("per change: %.2f API requests (the PATCH and its Event), %.2f LIST (target 0)"
      % (api / nchanges, lists / nchanges))

# storm: 20 changes to one ConfigMap in ~2 s
i = 1999
s = call("GET", "/requests?count=1")["next"]
for k in range(1, 21):
    last = {"app.conf": f"storm {k}", "LOG_LEVEL": "info"}
    call("POST", "/objects", cm(i, last))
    time.sleep(0.1)
want = reloader_hash(last)
deadline = time.time() + 30
while True:
    got = call("GET", f"/requests?since={s}&method=PATCH&path=/deployments/app{i}$")["items"]
    if got and want in got[-1]["body"]:
        break
    if time.time() > deadline:
        sys.exit("storm: no PATCH with the last hash within 30 s")
    time.sleep(0.2)
print(f"storm of 20 changes in ~2 s (default settings): {len(got)} rollouts (target <= 3), the last "
      f"carrying the last hash, {got[-1]['time'] - got[0]['time']:.1f} s after the first")
rss1 = hwm(p.pid)
stop(p)
print("peak RSS: %.1f MB (target < 32 MB)" % (rss1 / 1048576))

# ---- worst case: every Helm release Secret listed and hashed ----
p, _, wall, synced = start(["--secret-field-selector", ""])
print("with --secret-field-selector '' (250 MB of Helm release Secrets streamed through the hash): "
      "sync %.2f s CPU, %.1f s wall, peak RSS %.1f MB" % (proc_cpu(p.pid), wall, hwm(p.pid) / 1048576))
stop(p)

# ---- 2x, 5x the object counts ----
prev, base = 1, (n1, rss1)
for sc in scales:
    t = load(sc, prev)
    prev = sc
    p, _, wall, synced = start()
    n, rss = objects(synced), hwm(p.pid)
    stop(p)
    print("%dx (%d objects tracked, loaded in %.0f s): sync %.1f s wall, peak RSS %.1f MB (%.2fx of 1x); "
          "%.0f bytes per tracked object beyond 1x (target < 300)"
          % (sc, n, t, wall, rss / 1048576, rss / rss1, (rss - base[0 + 1]) / max(1, n - base[0])))
EOF
