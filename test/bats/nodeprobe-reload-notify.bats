#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-reload against slow peers (test/fake-apiserver/slow-peer): an alert sink that never
# answers does not hold rollouts back, a sink's endless answer is cut at the body cap,
# --webhook-url schemes are checked at start, and a slowloris flood neither keeps /healthz
# down nor holds its connections past the request-head deadline. Every wait is a bounded poll;
# latencies are printed (bats shows them with --verbose-run / on failure), never asserted.

load helpers
source "$NP_ROOT/test/fake-apiserver/fake.bash"

BIN="$BUILD/nodeprobe-reload"
PEER="$NP_ROOT/test/fake-apiserver/slow-peer"

setup() {
  PIDS=()
  reload_fake_setup
}

teardown() {
  local p
  for p in "${PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  fake_stop
}

# peer MODE [ARGS]: start slow-peer MODE; its port in PEER_PORT, its log in PEER_LOG.
peer() {
  local mode=$1 i
  shift
  PEER_LOG="$BATS_TEST_TMPDIR/$mode.log"
  : >"$PEER_LOG"
  "$PEER" "$mode" --ready-file "$BATS_TEST_TMPDIR/$mode.ready" --log "$PEER_LOG" "$@" 3>&- &
  PIDS+=($!)
  for i in $(seq 200); do [ -f "$BATS_TEST_TMPDIR/$mode.ready" ] && break; sleep 0.05; done
  PEER_PORT=$(sed -n 's/^PORT=//p' "$BATS_TEST_TMPDIR/$mode.ready")
  [ -n "$PEER_PORT" ]
}
start() {
  "$BIN" --kubeconfig "$KC" --no-events --coalesce-window 0 --min-interval 0 "$@" >"$RL_LOG" 2>&1 3>&- &
  RL_PID=$!
  PIDS+=($RL_PID)
  fake_wait_watchers 5
}
now_ms() { date +%s%3N; }

@test "a sink that never answers: every rollout goes out at once, the alerts wait on their own thread" {
  peer hang
  for i in $(seq 8); do fake_cm "c$i" '{"v":"0"}'; fake_deploy "d$i" "c$i"; done
  ALERT_ON_RELOAD=true ALERT_SINK=webhook ALERT_WEBHOOK_URL="http://127.0.0.1:$PEER_PORT/x" \
    start -v --listen "127.0.0.1:0"
  t0=$(now_ms)
  for i in $(seq 8); do fake_cm "c$i" '{"v":"1"}'; done
  # each alert used to block the rollouts behind it for its 10 s timeout (8 x 10 s);
  # 40 s is only the bound that keeps a broken build from hanging the suite
  fake_ctl GET '/requests?method=PATCH&min=8&wait=40' >/dev/null
  n=$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)
  echo "# 8 changes -> $n PATCHes in $(($(now_ms) - t0)) ms with the sink hanging" >&3
  [ "$n" -eq 8 ]
  # the alerts were sent (the sink holds the first one), not dropped
  for i in $(seq 100); do grep -q accept "$PEER_LOG" && break; sleep 0.1; done
  grep -q accept "$PEER_LOG"
  # SIGTERM abandons the POST in flight at once and names what was not sent, in one line:
  # the queued ones are not taken (each used to fail and be logged on its own)
  kill "$RL_PID"
  wait "$RL_PID"
  grep "not sent" "$RL_LOG" >&3
  grep -q "stopping: 8 alerts or webhooks not sent" "$RL_LOG"
  ! grep -q "Error sending alert" "$RL_LOG" || false
  # libmicrohttpd's logger is its first option: no warning about it
  ! grep -q "is not the first option" "$RL_LOG" || false
}

@test "a sink's endless answer is read up to the body cap, then the transfer is cut" {
  peer huge --bytes $((1 << 30))
  fake_cm c1 '{"v":"0"}'
  fake_deploy d1 c1
  ALERT_ON_RELOAD=true ALERT_SINK=webhook ALERT_WEBHOOK_URL="http://127.0.0.1:$PEER_PORT/x" \
    start --listen ''
  fake_cm c1 '{"v":"1"}'
  fake_wait_requests 'method=PATCH' >/dev/null
  for i in $(seq 300); do [ -s "$PEER_LOG" ] && break; sleep 0.1; done
  taken=$(head -1 "$PEER_LOG")
  echo "# the sink wrote $taken of 1 GiB before the client closed" >&3
  # 64 KiB are read; what the sockets' buffers took on loopback is a few MiB at most
  [ "$taken" -lt $((64 << 20)) ]
  ! grep -q "Error sending alert" "$RL_LOG" || false
}

@test "--webhook-url: only http and https with a host, refused at start (exit 2) without naming the URL" {
  # timeout: accepted by mistake, the controller would run on instead of failing
  run_expect_fail 2 timeout 10 "$BIN" --kubeconfig "$KC" --webhook-url 'ftp://h/secret-token'
  [[ $output == *"--webhook-url: the URL must start with http:// or https:// and name a host"* ]]
  [[ $output != *secret-token* ]]
  run_expect_fail 2 timeout 10 "$BIN" --kubeconfig "$KC" --webhook-url 'hooks.example/x'
  # an ALERT_* value longer than its buffer is refused, not cut
  ALERT_ADDITIONAL_INFO=$(head -c 3000 /dev/zero | tr '\0' x) run_expect_fail 2 timeout 10 "$BIN" --kubeconfig "$KC"
  [[ $output == *"ALERT_ADDITIONAL_INFO: 3000 bytes; at most 2047"* ]]
  # a scheme and no host
  for u in 'http://' 'https:///x' 'http://:80/x' 'http://?q' 'http://#f'; do
    run_expect_fail 2 timeout 10 "$BIN" --kubeconfig "$KC" --webhook-url "$u"
    [[ $output == *"--webhook-url: the URL must start with http:// or https:// and name a host"* ]]
  done
  [ "$(fake_ctl GET '/requests?count=1' | jq .count)" -eq 0 ]
}

@test "slowloris: /healthz answers while the table is full of trickling heads, which the head deadline closes" {
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # a descriptor limit of 600 makes the connection table 344 (600 less 256 for the client):
  # 400 slow connections fill it, as 4,300 fill the default one
  (ulimit -n 600 && exec "$BIN" --kubeconfig "$KC" --no-events --listen "127.0.0.1:$port" \
    >"$RL_LOG" 2>&1 3>&-) &
  RL_PID=$!
  PIDS+=($RL_PID)
  fake_wait_watchers 5
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null
  "$PEER" slowloris --port "$port" --conns 400 --seconds 15 \
    --ready-file "$BATS_TEST_TMPDIR/loris.ready" >"$BATS_TEST_TMPDIR/loris.out" 3>&- &
  LORIS=$!
  PIDS+=($LORIS)
  for i in $(seq 200); do [ -f "$BATS_TEST_TMPDIR/loris.ready" ] && break; sleep 0.05; done
  [ -f "$BATS_TEST_TMPDIR/loris.ready" ]
  # poll /healthz while the flood is on: it must answer before the flood ends
  ok=0
  t0=$(now_ms)
  while [ ! -f "$BATS_TEST_TMPDIR/loris.ready.end" ]; do
    # an answer counts only if the flood was still on when it came
    if curl -sf --max-time 2 "http://127.0.0.1:$port/healthz" >/dev/null &&
      [ ! -f "$BATS_TEST_TMPDIR/loris.ready.end" ]; then
      ok=1
      break
    fi
    sleep 0.2
  done
  echo "# /healthz answered after $(($(now_ms) - t0)) ms of the flood (ok=$ok)" >&3
  [ "$ok" -eq 1 ]
  curl -sf --max-time 2 "http://127.0.0.1:$port/live" >/dev/null
  curl -sf --max-time 2 "http://127.0.0.1:$port/metrics" | grep -q '^nodeprobe_reload_api_requests_total'
  wait "$LORIS"
  cat "$BATS_TEST_TMPDIR/loris.out" >&3
  # every trickling connection was closed by the server (deadline or room), none outlived it
  [ "$(jq .closedByServer "$BATS_TEST_TMPDIR/loris.out")" -eq 400 ]
}

@test "keep-alive: an idle kept-alive connection (a Prometheus scraper's) outlives the head deadline while the table has room" {
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  start --listen "127.0.0.1:$port"
  # one connection, two requests 7 s apart: past the 5 s head deadline, within the 10 s idle timeout
  run timeout 30 /usr/bin/python3 - "$port" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
def ask(path):
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            return "closed"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    n = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0])
    while len(body) < n:
        body += s.recv(4096)
    return head.split(b"\r\n")[0].decode()
print("first:", ask("/healthz"))
time.sleep(7)
print("second:", ask("/healthz"))
PY
  echo "# $output" >&3
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'first: HTTP/1.1 200 OK\nsecond: HTTP/1.1 200 OK')" ]
}
