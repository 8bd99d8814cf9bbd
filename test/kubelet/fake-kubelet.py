#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""fake-kubelet: a test kubelet for pkg/kubelet, on Debian's python3-grpcio (real gRPC).

Stubs are generated at run time from pkg/kubelet/deviceplugin{,.grpc}.proto with grpc_tools
into $FAKE_KUBELET_GEN (made if absent; default a temp dir). Commands (JSON on stdout):
  gen                             only generate the stubs (into $FAKE_KUBELET_GEN)
  serve DIR [--refuse RESOURCE]   serve Registration on DIR/kubelet.sock; append each
                                  RegisterRequest as a JSON line to DIR/registrations.jsonl
                                  (refused ones too, with "refused": true); until SIGTERM
  wait-reg DIR N [TIMEOUT]        wait until N registrations were recorded; print the last
  watch SOCK COUNT [TIMEOUT] [--times]
                                  ListAndWatch: print COUNT messages, one JSON line each
                                  (--times: each line begins with its arrival, epoch seconds)
  call SOCK METHOD [JSON]         a unary DevicePlugin call; print the answer, or
                                  {"code": NAME, "details": ...} for a gRPC error
  bench SOCK N IDS                N Allocate calls of IDS (comma-separated); print p50/p99 ms
  hostile SOCK MODE [SECONDS]     a bad peer: garbage (random bytes; print how it ended),
                                  oversized (an Allocate of 5 MiB; print the gRPC code),
                                  noread (HTTP/2 by hand: many Allocate calls, never reads;
                                  print "holding" and hold the connection SECONDS),
                                  hold (40 idle connections, more than the plugin keeps;
                                  print "holding" and hold them SECONDS),
                                  evict (A, then B, then I/O on A, then more connections
                                  until the plugin closes A or B: print which),
                                  trickle (an Allocate whose body comes a byte every 0.5 s
                                  and never ends: print when the plugin resets it, at most
                                  SECONDS),
                                  watchers (40 connections, each opening a ListAndWatch it
                                  never reads, more than the plugin keeps; print how many
                                  the plugin closed and hold the rest SECONDS),
                                  silent (connect, send nothing: print "closed" when the
                                  plugin closes it, or "open" after SECONDS)
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent import futures

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "..", "..", "pkg", "kubelet")


def stubs():
    gen = os.environ.get("FAKE_KUBELET_GEN") or tempfile.mkdtemp(prefix="fake-kubelet-")
    if not os.path.exists(os.path.join(gen, "deviceplugin_services_pb2_grpc.py")):
        os.makedirs(gen, exist_ok=True)
        shutil.copy(os.path.join(PROTO_DIR, "deviceplugin.proto"), gen)
        # A module name without dots: deviceplugin.grpc.proto -> deviceplugin_services.proto.
        shutil.copy(os.path.join(PROTO_DIR, "deviceplugin.grpc.proto"),
                    os.path.join(gen, "deviceplugin_services.proto"))
        subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", gen,
                        "--python_out=" + gen, "--grpc_python_out=" + gen,
                        "deviceplugin.proto", "deviceplugin_services.proto"], check=True)
    sys.path.insert(0, gen)
    import deviceplugin_pb2 as pb
    import deviceplugin_services_pb2_grpc as pbg
    return pb, pbg


pb, pbg = stubs()
import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402


def js(msg):
    return json.dumps(json_format.MessageToDict(msg, preserving_proto_field_name=True),
                      sort_keys=True)


class Registration(pbg.RegistrationServicer):
    def __init__(self, log, refuse):
        self.log, self.refuse = log, refuse

    def Register(self, req, ctx):
        d = json_format.MessageToDict(req, preserving_proto_field_name=True)
        refused = req.resource_name in self.refuse
        if refused:
            d["refused"] = True
        with open(self.log, "a") as f:
            f.write(json.dumps(d, sort_keys=True) + "\n")
        if refused:
            ctx.abort(grpc.StatusCode.UNKNOWN,
                      "resource %s is already registered" % req.resource_name)
        return pb.Empty()


def serve(argv):
    d = argv[0]
    refuse = set(argv[argv.index("--refuse") + 1].split(",")) if "--refuse" in argv else set()
    sock = os.path.join(d, "kubelet.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pbg.add_RegistrationServicer_to_server(
        Registration(os.path.join(d, "registrations.jsonl"), refuse), server)
    server.add_insecure_port("unix:" + os.path.abspath(sock))
    server.start()
    done = []
    signal.signal(signal.SIGTERM, lambda *a: done.append(1))
    while not done:
        time.sleep(0.05)
    server.stop(0)
    if os.path.exists(sock):
        os.unlink(sock)


def wait_reg(argv):
    d, n = argv[0], int(argv[1])
    deadline = time.time() + (float(argv[2]) if len(argv) > 2 else 10)
    path = os.path.join(d, "registrations.jsonl")
    while True:
        lines = open(path).read().splitlines() if os.path.exists(path) else []
        if len(lines) >= n:
            print(lines[n - 1])
            return 0
        if time.time() > deadline:
            print("wait-reg: %d registrations of %d after the timeout" % (len(lines), n),
                  file=sys.stderr)
            return 1
        time.sleep(0.05)


def channel(sock):
    return grpc.insecure_channel("unix:" + os.path.abspath(sock))


def watch(argv):
    times = "--times" in argv
    argv = [a for a in argv if a != "--times"]
    sock, count = argv[0], int(argv[1])
    timeout = float(argv[2]) if len(argv) > 2 else 10
    stub = pbg.DevicePluginStub(channel(sock))
    n = 0
    try:
        for m in stub.ListAndWatch(pb.Empty(), timeout=timeout):
            print(("%.6f " % time.time() if times else "") + js(m), flush=True)
            n += 1
            if n >= count:
                return 0
    except grpc.RpcError as e:
        print("watch: %s: %s" % (e.code().name, e.details()), file=sys.stderr)
    return 1


REQ = {
    "GetDevicePluginOptions": pb.Empty,
    "Allocate": pb.AllocateRequest,
    "GetPreferredAllocation": pb.PreferredAllocationRequest,
    "PreStartContainer": pb.PreStartContainerRequest,
}


def call(argv):
    sock, method = argv[0], argv[1]
    req = json_format.Parse(argv[2] if len(argv) > 2 else "{}", REQ[method]())
    stub = pbg.DevicePluginStub(channel(sock))
    try:
        print(js(getattr(stub, method)(req, timeout=10)))
    except grpc.RpcError as e:
        print(json.dumps({"code": e.code().name, "details": e.details()}, sort_keys=True))
    return 0


def bench(argv):
    sock, n, ids = argv[0], int(argv[1]), argv[2].split(",")
    stub = pbg.DevicePluginStub(channel(sock))
    req = pb.AllocateRequest(container_requests=[pb.ContainerAllocateRequest(devices_ids=ids)])
    stub.Allocate(req, timeout=10)  # connect once before measuring
    t = []
    for _ in range(n):
        t0 = time.perf_counter()
        stub.Allocate(req, timeout=10)
        t.append((time.perf_counter() - t0) * 1000)
    t.sort()
    print("allocate_calls=%d p50_ms=%.3f p99_ms=%.3f max_ms=%.3f" %
          (n, t[n // 2], t[min(n - 1, (n * 99) // 100)], t[-1]))
    return 0


def frame(typ, flags, sid, payload):
    return len(payload).to_bytes(3, "big") + bytes([typ, flags]) + sid.to_bytes(4, "big") + payload


def hpack_literal(name, value):
    # Literal header field without indexing, new name (RFC 7541 6.2.2), lengths < 127.
    return bytes([0, len(name)]) + name + bytes([len(value)]) + value


def closed(c):
    """Has the plugin closed c? (drains what it sent)"""
    try:
        while True:
            if not c.recv(65536):
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def evict(sock):
    """Connect A, then B, then some I/O on A (B is now the one idle longest), then more
    connections one at a time until the plugin closes A or B; print which."""
    def conn():
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(sock)
        c.setblocking(False)
        time.sleep(0.02)
        return c
    a, b = conn(), conn()
    time.sleep(0.05)
    a.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b""))
    time.sleep(0.05)
    more = []
    for _ in range(64):
        more.append(conn())
        time.sleep(0.03)
        ca, cb = closed(a), closed(b)
        if ca or cb:
            other = "A" if cb and not ca else "B" if ca and not cb else None
            print("closed %s after %d more; %s" % ("A and B" if ca and cb else "A" if ca else "B",
                                                   len(more), other + " open" if other else "none open"))
            return 0
    print("none closed")
    return 0


def trickle(sock, limit):
    """HEADERS of an Allocate, then one body byte every 0.5 s, never the end; print when the
    plugin reset the stream (RST_STREAM), or "not reset" after LIMIT seconds."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    hdrs = b"".join(hpack_literal(n, v) for n, v in [
        (b":method", b"POST"), (b":scheme", b"http"), (b":authority", b"x"),
        (b":path", b"/v1beta1.DevicePlugin/Allocate"),
        (b"content-type", b"application/grpc"), (b"te", b"trailers")])
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"") + frame(1, 4, 1, hdrs))
    print("trickling", flush=True)
    s.settimeout(0.5)
    t0, buf = time.time(), b""
    while time.time() - t0 < limit:
        try:
            s.sendall(frame(0, 0, 1, b"\0"))
            data = s.recv(65536)
            if not data:
                print("closed after %.1f s" % (time.time() - t0))
                return 0
            buf += data
        except socket.timeout:
            pass
        except OSError as e:
            print("error after %.1f s: %s" % (time.time() - t0, e))
            return 0
        while len(buf) >= 9:
            n = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + n:
                break
            typ, sid = buf[3], int.from_bytes(buf[5:9], "big") & 0x7fffffff
            if typ == 3 and sid == 1:
                code = int.from_bytes(buf[9:13], "big")
                print("reset after %.0f s (code %d)" % (time.time() - t0, code))
                return 0
            buf = buf[9 + n:]
        time.sleep(0.5)
    print("not reset after %.0f s" % limit)
    return 0


def watchers(sock, hold):
    """40 connections, each with a ListAndWatch stream it never reads (HTTP/2 by hand)."""
    hdrs = b"".join(hpack_literal(n, v) for n, v in [
        (b":method", b"POST"), (b":scheme", b"http"), (b":authority", b"x"),
        (b":path", b"/v1beta1.DevicePlugin/ListAndWatch"),
        (b"content-type", b"application/grpc"), (b"te", b"trailers")])
    held = []
    for _ in range(40):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(sock)
        c.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"") +
                  frame(1, 4, 1, hdrs) + frame(0, 1, 1, b"\0\0\0\0\0"))
        c.setblocking(False)
        held.append(c)
        time.sleep(0.02)  # each stream begins after the one before
    time.sleep(0.2)
    print("holding; the plugin closed %d" % sum(closed(c) for c in held), flush=True)
    time.sleep(hold)
    return 0


def silent(sock, limit):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    s.settimeout(limit)
    try:
        while s.recv(4096):
            pass
        print("closed")
    except socket.timeout:
        print("open")
    except OSError:
        print("closed")
    return 0


def hostile(argv):
    sock, mode = argv[0], argv[1]
    hold = float(argv[2]) if len(argv) > 2 else 5
    if mode == "oversized":
        ids = ["x" * 1000] * 5300  # ~5.3 MB: over the 4 MiB limit
        req = pb.AllocateRequest(container_requests=[pb.ContainerAllocateRequest(devices_ids=ids)])
        ch = grpc.insecure_channel("unix:" + os.path.abspath(sock),
                                   options=[("grpc.max_send_message_length", -1)])
        try:
            pbg.DevicePluginStub(ch).Allocate(req, timeout=10)
            print("OK")
        except grpc.RpcError as e:
            print(json.dumps({"code": e.code().name, "details": e.details()}, sort_keys=True))
        return 0
    if mode == "hold":
        held = []
        for _ in range(40):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(sock)
            held.append(c)
        print("holding %d connections" % len(held), flush=True)
        time.sleep(hold)
        return 0
    if mode == "evict":
        return evict(sock)
    if mode == "trickle":
        return trickle(sock, hold)
    if mode == "watchers":
        return watchers(sock, hold)
    if mode == "silent":
        return silent(sock, hold)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    if mode == "garbage":
        s.sendall(os.urandom(4096))
        s.settimeout(5)
        try:
            while s.recv(4096):
                pass
            print("closed")
        except OSError as e:
            print("error: %s" % e)
        return 0
    # noread: a huge window so the server may send all it has, then requests, no reads.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    out += frame(4, 0, 0, (4).to_bytes(2, "big") + (2**31 - 1).to_bytes(4, "big"))
    out += frame(8, 0, 0, (2**31 - 1 - 65535).to_bytes(4, "big"))
    hdrs = b"".join(hpack_literal(n, v) for n, v in [
        (b":method", b"POST"), (b":scheme", b"http"), (b":authority", b"x"),
        (b":path", b"/v1beta1.DevicePlugin/GetDevicePluginOptions"),
        (b"content-type", b"application/grpc"), (b"te", b"trailers")])
    s.settimeout(0.5)
    sent = 0
    try:
        s.sendall(out)
        for i in range(2000):
            sid = 1 + 2 * i
            s.sendall(frame(1, 4, sid, hdrs) + frame(0, 1, sid, b"\0\0\0\0\0"))
            sent += 1
    except OSError:
        pass
    print("holding after %d requests" % sent, flush=True)
    time.sleep(hold)
    s.close()
    return 0


def main():
    cmds = {"serve": serve, "wait-reg": wait_reg, "watch": watch, "call": call, "bench": bench,
            "hostile": hostile, "gen": lambda argv: 0}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[sys.argv[1]](sys.argv[2:]) or 0


if __name__ == "__main__":
    sys.exit(main())
