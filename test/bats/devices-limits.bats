#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-devices under pressure (issue 19 review): a class over the kubelet's device limit, a
# read-only CDI directory, ... -- the plugin keeps serving, with a warning naming what it dropped.
load helpers

setup() {
  T=$(mktemp -d)
  mkdir -p "$T/dev" "$T/sys" "$T/kl" "$T/cdi"
  D="$BUILD/nodeprobe-devices"
  FK=$NP_ROOT/test/kubelet/fake-kubelet.py
  export FAKE_KUBELET_GEN=$T/gen
}

teardown() {
  stop_plugin
  umount "$T/cdi" 2>/dev/null || true
  rm -rf "$T"
}

need_grpc() {
  /usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null || skip "python3-grpcio/grpc-tools absent"
}

# start_plugin ARGS...: the test kubelet, then the plugin (log in $T/plugin.log), registered.
start_plugin() {
  /usr/bin/python3 "$FK" serve "$T/kl" & KUBELET=$!
  wait_for test -S "$T/kl/kubelet.sock"
  "$@" --dev-root "$T/dev" --sys-root "$T/sys" --plugin-directory "$T/kl" 2> "$T/plugin.log" & PLUGIN=$!
  run /usr/bin/python3 "$FK" wait-reg "$T/kl" 1
  [ "$status" -eq 0 ]
}

# ids SOCK: the number of IDs in the plugin's current ListAndWatch list.
ids() {
  /usr/bin/python3 "$FK" watch "$1" 1 10 | grep -o '"ID"' | wc -l
}

# ids_are SOCK N: it is N.
ids_are() {
  [ "$(ids "$1")" -eq "$2" ]
}

SERIAL1000='{"name": "serial", "groups": [{"count": 1000, "paths": [{"path": "/dev/ttyUSB*"}]}]}'

@test "devices-limits: a 5th device of count 1000 (over 4096 IDs) is left out with a warning; still serving" {
  need_grpc
  for i in 0 1 2 3; do mknode "$T/dev/ttyUSB$i"; done
  start_plugin "$D" --device "$SERIAL1000" --cdi-dir "$T/cdi"
  S="$T/kl/nodeprobe-squat.ai_serial.sock"
  [ "$(ids "$S")" -eq 4000 ]
  mknode "$T/dev/ttyUSB4"
  wait_for grep -q 'more than 4096 device IDs; serving the first 4 devices (4000 IDs)' "$T/plugin.log"
  sleep 0.3
  cat "$T/plugin.log" >&2
  kill -0 "$PLUGIN"
  [ "$(ids "$S")" -eq 4000 ]
  run /usr/bin/python3 "$FK" call "$S" GetDevicePluginOptions
  [ "$status" -eq 0 ]
  [[ "$output" != *'"code"'* ]]
  # --list says the same, exit 0
  run "$D" --list --device "$SERIAL1000" --dev-root "$T/dev" --sys-root "$T/sys"
  [ "$status" -eq 0 ]
  [ "$(grep -c '^squat.ai/serial ' <<<"$output")" -eq 4 ]
}

@test "devices-limits: a read-only CDI directory is a warning per class; Allocate still answers" {
  need_grpc
  [ "$(id -u)" = 0 ] || skip "a read-only bind mount needs root"
  unshare -m true 2>/dev/null || skip "unshare -m refused here"
  mknode "$T/dev/ttyUSB0"
  start_plugin unshare -m sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"' \
    "$T/cdi" "$D" --preset serial --cdi-dir "$T/cdi"
  S="$T/kl/nodeprobe-squat.ai_serial.sock"
  [ "$(ids "$S")" -eq 1 ]
  mknode "$T/dev/ttyUSB1"
  wait_for ids_are "$S" 2
  cat "$T/plugin.log" >&2
  kill -0 "$PLUGIN"
  grep -q "nodeprobe.io-serial.json.*Read-only file system; its CDI spec is not updated" "$T/plugin.log"
  run /usr/bin/python3 "$FK" call "$S" Allocate '{"container_requests": [{"devices_ids": ["ttyUSB1-0"]}]}'
  [[ "$output" == *'"host_path": "/dev/ttyUSB1"'* ]]
  [ ! -e "$T/cdi/nodeprobe.io-serial.json" ]
}

# watched_inodes PID: the inodes (hex, as fdinfo gives them) of every inotify watch PID holds.
watched_inodes() {
  grep -h '^inotify wd:' /proc/"$1"/fdinfo/* 2>/dev/null | sed 's/.* ino:\([0-9a-f]*\) .*/\1/'
}

# wait_long CMD...: as wait_for, for up to 60 s: a give-up bound for a loaded machine, not a
# timing assertion.
wait_long() {
  local i
  for i in $(seq 600); do "$@" && return 0; sleep 0.1; done
  return 1
}

# No timing: /dev/pts is checked in the plugin's own inotify watches (/proc/PID/fdinfo), and the
# burst is made while the plugin is stopped (SIGSTOP), so all 1000 events are queued before it
# reads one: drained together, they must be exactly one rescan.
@test "devices-limits: a burst of 1000 nodes is one rescan; /dev/pts is not watched" {
  need_grpc
  mkdir -p "$T/dev/pts" "$T/dev/snd"
  start_plugin "$D" --preset serial --cdi=false -vv
  S="$T/kl/nodeprobe-squat.ai_serial.sock"
  wait_for grep -q 'squat.ai/serial: ' "$T/plugin.log" # after the watches are set up
  w=$(watched_inodes "$PLUGIN")
  echo "watched: $(echo $w)" >&2
  grep -qx "$(printf %x "$(stat -c %i "$T/dev")")" <<< "$w"
  grep -qx "$(printf %x "$(stat -c %i "$T/dev/snd")")" <<< "$w"
  run grep -qx "$(printf %x "$(stat -c %i "$T/dev/pts")")" <<< "$w"
  [ "$status" -eq 1 ]
  [ "$(grep -c 'hotplug: rescan' "$T/plugin.log")" -eq 0 ]
  kill -STOP "$PLUGIN"
  /usr/bin/python3 -c 'import os, sys
for i in range(1, 1001): os.mknod(f"{sys.argv[1]}/ttyUSB{i}", 0o20666, os.makedev(1, 3))' "$T/dev" \
    || { kill -CONT "$PLUGIN"; skip "mknod refused"; }
  kill -CONT "$PLUGIN"
  wait_long ids_are "$S" 1000
  cat "$T/plugin.log" >&2
  [ "$(grep -c 'hotplug: rescan' "$T/plugin.log")" -eq 1 ]
}

@test "devices-limits: a foreign nodeprobe.io-<class>.json is left untouched, named in a warning; no CDI names for it" {
  need_grpc
  mknode "$T/dev/ttyUSB0"
  printf '{"cdiVersion": "0.6.0", "kind": "nodeprobe.io/serial", "devices": [{"name": "theirs", "containerEdits": {}}]}\n' > "$T/cdi/nodeprobe.io-serial.json"
  cp "$T/cdi/nodeprobe.io-serial.json" "$T/theirs.json"
  start_plugin "$D" --preset serial --preset fuse --cdi-dir "$T/cdi"
  S="$T/kl/nodeprobe-squat.ai_serial.sock"
  wait_for grep -q "$T/cdi/nodeprobe.io-serial.json: not a spec nodeprobe-devices wrote" "$T/plugin.log"
  cat "$T/plugin.log" >&2
  grep -q 'left untouched; Allocate answers without CDI names for this class' "$T/plugin.log"
  cmp "$T/cdi/nodeprobe.io-serial.json" "$T/theirs.json"
  run /usr/bin/python3 "$FK" call "$S" Allocate '{"container_requests": [{"devices_ids": ["ttyUSB0-0"]}]}'
  [[ "$output" == *'"host_path": "/dev/ttyUSB0"'* ]]
  [[ "$output" != *cdi_devices* ]]
  kill -0 "$PLUGIN"
}

# http_up: the plugin with --listen on a free loopback port (no kubelet needed for /health).
http_up() {
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$D" --preset kvm --dev-root "$T/dev" --sys-root "$T/sys" --cdi-dir "$T/cdi" \
    --plugin-directory "$T/kl" --listen "127.0.0.1:$PORT" 2>"$T/plugin.log" & PLUGIN=$!
  wait_for curl -sf -o /dev/null "http://127.0.0.1:$PORT/health"
}

# hold MODE N SECONDS: N connections to the plugin's --listen port, held SECONDS (printing
# "holding" once all are open): idle (nothing sent), slow (a request head, one byte a second).
hold() {
  python3 - "$PORT" "$@" <<'PY' &
import socket, sys, time
port, mode, n, secs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4096
held = []
for _ in range(n):
    try:
        held.append(socket.create_connection(("127.0.0.1", port)))
    except OSError:
        pass
print("holding %d" % len(held), flush=True)
t0 = time.time()
while time.time() - t0 < secs:
    for i in range(len(held)):
        if mode == "slow" and held[i]:
            try:
                held[i].send(head[int(time.time() - t0):][:1])
            except OSError:
                held[i] = None
    time.sleep(1)
PY
  HOLD=$!
}

@test "devices-limits: /health answers while 20 clients trickle their request heads a byte a second" {
  http_up
  hold slow 20 60 >"$T/hold"
  wait_for grep -q holding "$T/hold"
  sleep 1
  # Before: the 16 slots were held for as long as each byte came within the 10 s idle timeout.
  run curl -sS --max-time 10 "http://127.0.0.1:$PORT/health"
  kill "$HOLD"
  echo "$output" >&2
  [ "$status" -eq 0 ] && [ "$output" = ok ]
}

@test "devices-limits: /health answers while a burst of 40 silent connections is held, and once it is gone" {
  http_up
  hold idle 40 8 >"$T/hold"
  wait_for grep -q holding "$T/hold"
  # Before: the 16 slots stayed held until the 10 s idle timeout; now the oldest silent ones go.
  run curl -sS --max-time 5 "http://127.0.0.1:$PORT/health"
  echo "$output" >&2
  [ "$status" -eq 0 ] && [ "$output" = ok ]
  wait "$HOLD"
  run curl -sS --max-time 10 "http://127.0.0.1:$PORT/health"
  echo "$output" >&2
  [ "$status" -eq 0 ] && [ "$output" = ok ]
  run curl -sS --max-time 10 "http://127.0.0.1:$PORT/metrics"
  [ "$status" -eq 0 ]
}

# trickle FIRST SLOW: connect to --listen, send FIRST at once, then SLOW a byte a second (both
# with Python escapes: \r\n); print "closed" when the plugin closes the connection, or "open
# after 20 s".
trickle() {
  python3 - "$PORT" "$1" "$2" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
first, slow = (a.encode().decode("unicode_escape").encode("latin-1") for a in sys.argv[2:4])
s.sendall(first)
t0 = time.time()
while time.time() - t0 < 20:
    try:
        s.send(slow[int(time.time() - t0):][:1])
        s.settimeout(1)
        if not s.recv(4096):
            print("closed")
            sys.exit(0)
    except socket.timeout:
        pass
    except OSError:
        print("closed")
        sys.exit(0)
print("open after 20 s")
PY
}

@test "devices-limits: a request head trickled a byte a second is closed 5 s after the connection began" {
  http_up
  run trickle '' "GET /health HTTP/1.1\\r\\nHost: x\\r\\nX-Slow: $(printf 'a%.0s' {1..64})"
  # Before: each byte restarted the 10 s idle timeout, so the head could trickle for ever.
  [ "$output" = closed ]
  run curl -sS --max-time 10 "http://127.0.0.1:$PORT/health"
  [ "$output" = ok ]
}

@test "devices-limits: a request whose head is in but whose chunked body trickles is closed too" {
  http_up
  # The head at once, then a chunk extension a byte a second, never the chunk's data.
  run trickle 'POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n' "1;$(printf 'a%.0s' {1..64})"
  # Before: the head deadline ended with the head; each body byte restarted the 10 s idle timeout.
  [ "$output" = closed ]
  run curl -sS --max-time 10 "http://127.0.0.1:$PORT/health"
  [ "$output" = ok ]
}
