#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dra-kubelet: a test kubelet for pkg/dra, on Debian's python3-grpcio (real gRPC).

Plays the kubelet's side of ../shared/reference/dra.md sections 2 and 3: the plugin watcher's
registration (GetInfo within 1 s, validate, NotifyRegistrationStatus) and the DRAPlugin calls
in v1 and v1beta1. Stubs are generated at run time from pkg/dra/{dra,pluginregistration}
{,.grpc}.proto into $DRA_KUBELET_GEN (default a temp dir). Commands (JSON on stdout):
  gen                                  only generate the stubs
  register REGDIR [TIMEOUT] [--refuse MSG]
                                       wait for a *-reg.sock under REGDIR (subdirs too, dot
                                       names skipped, as the kubelet's watcher), GetInfo,
                                       check it, pick the first supported version the plugin
                                       lists, NotifyRegistrationStatus (refused with MSG)
  prepare ENDPOINT VERSION CLAIMS      NodePrepareResources; VERSION v1 or v1beta1; CLAIMS a
                                       JSON list of {namespace, uid, name}; prints the answer
                                       or {"code": NAME, "details": ...}
  unprepare ENDPOINT VERSION CLAIMS    NodeUnprepareResources, the same way
  many ENDPOINT VERSION N NS PREFIX    one NodePrepareResources of N claims PREFIX-<i>; prints
                                       {"answered": n, "errors": n, "first_error": ...}
  flood ENDPOINT N                     one NodePrepareResources of N empty claims, 2 bytes
                                       each on the wire (N = 2,000,000: a 4 MB message), as
                                       raw bytes; prints the answer's size or the gRPC error
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "..", "..", "pkg", "dra")
SUPPORTED = ["v1.DRAPlugin", "v1beta1.DRAPlugin"]  # what kubelet 1.34 takes (dra.md section 2)
PKG = {"v1": "k8s.io.kubelet.pkg.apis.dra.v1", "v1beta1": "k8s.io.kubelet.pkg.apis.dra.v1beta1"}


def stubs():
    gen = os.environ.get("DRA_KUBELET_GEN") or tempfile.mkdtemp(prefix="dra-kubelet-")
    if not os.path.exists(os.path.join(gen, "registration_services_pb2_grpc.py")):
        os.makedirs(gen, exist_ok=True)
        for base in ("dra", "pluginregistration"):
            shutil.copy(os.path.join(PROTO_DIR, base + ".proto"), gen)
        # module names without dots: x.grpc.proto -> x_services.proto
        shutil.copy(os.path.join(PROTO_DIR, "dra.grpc.proto"),
                    os.path.join(gen, "dra_services.proto"))
        shutil.copy(os.path.join(PROTO_DIR, "pluginregistration.grpc.proto"),
                    os.path.join(gen, "registration_services.proto"))
        subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", gen,
                        "--python_out=" + gen, "--grpc_python_out=" + gen, "dra.proto",
                        "pluginregistration.proto", "dra_services.proto",
                        "registration_services.proto"], check=True)
    sys.path.insert(0, gen)
    import dra_pb2
    import dra_services_pb2_grpc
    import pluginregistration_pb2
    import registration_services_pb2_grpc
    return dra_pb2, dra_services_pb2_grpc, pluginregistration_pb2, registration_services_pb2_grpc


dra, drag, reg, regg = stubs()
import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402


def todict(msg):
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def out(d):
    print(json.dumps(d, sort_keys=True), flush=True)


def find_reg(regdir, timeout):
    end = time.time() + timeout
    while time.time() < end:
        for root, dirs, files in os.walk(regdir):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for f in sorted(files):
                p = os.path.join(root, f)
                if f.startswith(".") or not f.endswith("-reg.sock"):
                    continue
                import stat
                if stat.S_ISSOCK(os.lstat(p).st_mode):
                    return p
        time.sleep(0.05)
    raise SystemExit(f"dra-kubelet: no *-reg.sock under {regdir} after {timeout} s")


def register(regdir, timeout, refuse):
    sock = find_reg(regdir, timeout)
    ch = grpc.insecure_channel("unix://" + sock)
    grpc.channel_ready_future(ch).result(timeout=10)  # the kubelet's blocking dial, 10 s
    stub = regg.RegistrationStub(ch)
    info = stub.GetInfo(reg.InfoRequest(), timeout=1)
    err = ""
    if info.type != "DRAPlugin":
        err = f"type {info.type!r}: not DRAPlugin"
    chosen = next((v for v in info.supported_versions if v in SUPPORTED), None)
    if not err and not chosen:
        err = f"none of {list(info.supported_versions)} supported"
    if refuse:
        err = refuse
    stub.NotifyRegistrationStatus(reg.RegistrationStatus(plugin_registered=not err,
                                                         error=err), timeout=5)
    d = todict(info)
    d.update({"registration_socket": sock, "chosen": chosen, "error": err})
    out(d)
    return 0 if not err or refuse else 1


def call(endpoint, version, method, claims):
    ch = grpc.insecure_channel("unix://" + endpoint)
    req_t = dra.NodePrepareResourcesRequest if method == "NodePrepareResources" \
        else dra.NodeUnprepareResourcesRequest
    resp_t = dra.NodePrepareResourcesResponse if method == "NodePrepareResources" \
        else dra.NodeUnprepareResourcesResponse
    req = req_t(claims=[dra.Claim(**c) for c in claims])
    if version == "v1":  # the generated stub: the service as dra.grpc.proto names it
        fn = getattr(drag.DRAPluginStub(ch), method)
    else:  # v1beta1: the same messages under its own path (byte-identical api.proto)
        fn = ch.unary_unary(f"/{PKG[version]}.DRAPlugin/{method}",
                            request_serializer=req_t.SerializeToString,
                            response_deserializer=resp_t.FromString)
    try:
        # the kubelet's defaultClientCallTimeout; $DRA_KUBELET_TIMEOUT: another
        return fn(req, timeout=float(os.environ.get("DRA_KUBELET_TIMEOUT", "45")))
    except grpc.RpcError as e:
        return {"code": e.code().name, "details": e.details()}


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    cmd = argv[0]
    if cmd == "gen":
        return 0
    if cmd == "register":
        refuse = None
        if "--refuse" in argv:
            i = argv.index("--refuse")
            refuse = argv[i + 1]
            argv = argv[:i] + argv[i + 2:]
        return register(argv[1], float(argv[2]) if len(argv) > 2 else 10, refuse)
    if cmd in ("prepare", "unprepare"):
        method = "NodePrepareResources" if cmd == "prepare" else "NodeUnprepareResources"
        r = call(argv[1], argv[2], method, json.loads(argv[3]))
        out(r if isinstance(r, dict) else todict(r))
        return 0
    if cmd == "many":
        n, ns, prefix = int(argv[3]), argv[4], argv[5]
        claims = [{"namespace": ns, "uid": f"{prefix}-{i}", "name": f"{prefix}-{i}"}
                  for i in range(n)]
        r = call(argv[1], argv[2], "NodePrepareResources", claims)
        if isinstance(r, dict):
            out(r)
            return 0
        errs = [v.error for v in r.claims.values() if v.error]
        out({"answered": len(r.claims), "errors": len(errs),
             "first_error": errs[0] if errs else ""})
        return 0
    if cmd == "flood":
        ch = grpc.insecure_channel("unix://" + argv[1],
                                   options=[("grpc.max_send_message_length", -1)])
        fn = ch.unary_unary(f"/{PKG['v1']}.DRAPlugin/NodePrepareResources",
                            request_serializer=lambda b: b,
                            response_deserializer=lambda b: b)
        try:
            out({"bytes": len(fn(b"\x0a\x00" * int(argv[2]), timeout=45))})
        except grpc.RpcError as e:
            out({"code": e.code().name, "details": e.details()})
        return 0
    print(f"dra-kubelet: unknown command {cmd!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
