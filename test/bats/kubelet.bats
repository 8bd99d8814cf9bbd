#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# pkg/kubelet on the wire: test/tools/kubelet-demo (fake devices over pkg/kubelet) driven by
# test/kubelet/fake-kubelet.py, a kubelet on Debian's python3-grpcio (real gRPC), and by
# test/kubelet/go-kubelet, one on grpc-go (the library kubelets are built with; built into
# $BUILD/go-kubelet by test/kubelet/build-go-kubelet). Waits are bounded polls, never timing
# assertions.
load helpers

FK="$NP_ROOT/test/kubelet/fake-kubelet.py"

setup_file() {
  /usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null ||
    return 0 # each test skips with the reason
  export FAKE_KUBELET_GEN="$BATS_FILE_TMPDIR/gen"
  /usr/bin/python3 "$FK" gen
  go_kubelet_build # the grpc-go peer; its tests skip with the reason (go_kubelet)
}

setup() {
  /usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null ||
    skip "Debian's python3-grpcio and python3-grpc-tools are needed (scripts/install-deps)"
  D=$(mktemp -d "$BATS_TMPDIR/np-kubelet.XXXXXX")
  KPID= DPID=
  FOO="$D/demo-example.com_foo.sock"
  BAR="$D/demo-nodeprobe.io_bar.sock"
}

teardown() {
  [ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
  [ -n "$KPID" ] && kill "$KPID" 2>/dev/null && wait "$KPID" 2>/dev/null
  rm -rf "$D"
}

fk() { /usr/bin/python3 "$FK" "$@"; }

# kubelet_up: start the fake kubelet in $D and wait for its socket.
kubelet_up() {
  /usr/bin/python3 "$FK" serve "$D" "$@" 2>>"$D/kubelet.log" 3>&- &
  KPID=$!
  for _ in $(seq 100); do [ -S "$D/kubelet.sock" ] && return 0; sleep 0.1; done
  echo "fake kubelet did not start" >&2
  return 1
}

kubelet_down() {
  kill "$KPID" && wait "$KPID" || true
  KPID=
}

demo_up() {
  "$BUILD/test/tools/kubelet-demo" "$D" example.com/foo,3 nodeprobe.io/bar,1 2>>"$D/demo.log" 3>&- &
  DPID=$!
}

# hostile_bg MODE SECONDS WORD: a served demo and kubelet, then fake-kubelet's hostile MODE in the
# background ($H), its output in $D/hostile, until it prints WORD.
hostile_bg() {
  kubelet_up
  demo_up
  fk wait-reg "$D" 2
  /usr/bin/python3 "$FK" hostile "$FOO" "$1" "$2" >"$D/hostile" 3>&- &
  H=$!
  wait_for grep -q "$3" "$D/hostile"
}

# count_ge FILE REGEX N: FILE has at least N lines matching REGEX (for wait_for).
count_ge() { [ "$(grep -cE "$2" "$1" 2>/dev/null)" -ge "$3" ] 2>/dev/null; }

# wait_for CMD...: poll CMD for up to 30 s (a loaded machine, a sanitizer build).
wait_for() {
  for _ in $(seq 300); do "$@" && return 0; sleep 0.1; done
  echo "timed out waiting for: $*" >&2
  return 1
}

@test "kubelet: each resource registers once on its own socket, with version and options" {
  kubelet_up
  demo_up
  fk wait-reg "$D" 2
  [ -S "$FOO" ] && [ -S "$BAR" ]
  diff -u - <(sort "$D/registrations.jsonl") <<'EOF2'
{"endpoint": "demo-example.com_foo.sock", "options": {"get_preferred_allocation_available": true}, "resource_name": "example.com/foo", "version": "v1beta1"}
{"endpoint": "demo-nodeprobe.io_bar.sock", "options": {"get_preferred_allocation_available": true}, "resource_name": "nodeprobe.io/bar", "version": "v1beta1"}
EOF2
}

@test "kubelet: ListAndWatch sends the list, then the full list again when a device's health changes" {
  kubelet_up
  demo_up
  fk wait-reg "$D" 2
  /usr/bin/python3 "$FK" watch "$FOO" 2 >"$D/watch" 3>&- &
  local w=$!
  wait_for grep -q . "$D/watch"
  kill -USR1 "$DPID"
  wait "$w"
  diff -u - "$D/watch" <<'EOF2'
{"devices": [{"ID": "foo-0", "health": "Healthy"}, {"ID": "foo-1", "health": "Healthy", "topology": {"nodes": [{"ID": "1"}]}}, {"ID": "foo-2", "health": "Healthy"}]}
{"devices": [{"ID": "foo-0", "health": "Unhealthy"}, {"ID": "foo-1", "health": "Healthy", "topology": {"nodes": [{"ID": "1"}]}}, {"ID": "foo-2", "health": "Healthy"}]}
EOF2
}

@test "kubelet: Allocate answers specs, mounts, envs, annotations and CDI names (field 5); unknown ID is NOT_FOUND" {
  kubelet_up
  demo_up
  fk wait-reg "$D" 2
  run fk call "$FOO" Allocate '{"container_requests":[{"devices_ids":["foo-0","foo-2"]},{"devices_ids":["foo-1"]}]}'
  [ "$status" -eq 0 ]
  diff -u - <(jq -S . <<<"$output") <<'EOF2'
{
  "container_responses": [
    {
      "annotations": {
        "demo.nodeprobe.io/foo-0": "example.com/foo",
        "demo.nodeprobe.io/foo-2": "example.com/foo"
      },
      "cdi_devices": [
        {
          "name": "nodeprobe.io/demo=foo-0"
        },
        {
          "name": "nodeprobe.io/demo=foo-2"
        }
      ],
      "devices": [
        {
          "container_path": "/dev/foo-0",
          "host_path": "/dev/null",
          "permissions": "rw"
        },
        {
          "container_path": "/dev/foo-2",
          "host_path": "/dev/null",
          "permissions": "rw"
        }
      ],
      "envs": {
        "DEMO_0": "foo-0",
        "DEMO_1": "foo-2"
      },
      "mounts": [
        {
          "container_path": "/mnt/foo-0",
          "host_path": "/tmp",
          "read_only": true
        },
        {
          "container_path": "/mnt/foo-2",
          "host_path": "/tmp",
          "read_only": true
        }
      ]
    },
    {
      "annotations": {
        "demo.nodeprobe.io/foo-1": "example.com/foo"
      },
      "cdi_devices": [
        {
          "name": "nodeprobe.io/demo=foo-1"
        }
      ],
      "devices": [
        {
          "container_path": "/dev/foo-1",
          "host_path": "/dev/null",
          "permissions": "rw"
        }
      ],
      "envs": {
        "DEMO_0": "foo-1"
      },
      "mounts": [
        {
          "container_path": "/mnt/foo-1",
          "host_path": "/tmp",
          "read_only": true
        }
      ]
    }
  ]
}
EOF2
  run fk call "$FOO" Allocate '{"container_requests":[{"devices_ids":["bar-0"]}]}'
  [ "$output" = '{"code": "NOT_FOUND", "details": "unknown device '\''bar-0'\''"}' ]
}

@test "kubelet: GetPreferredAllocation, GetDevicePluginOptions, PreStartContainer" {
  kubelet_up
  demo_up
  fk wait-reg "$D" 2
  run fk call "$FOO" GetPreferredAllocation '{"container_requests":[{"available_deviceIDs":["foo-0","foo-1","foo-2"],"must_include_deviceIDs":["foo-2"],"allocation_size":2}]}'
  [ "$output" = '{"container_responses": [{"deviceIDs": ["foo-2", "foo-0"]}]}' ]
  run fk call "$FOO" GetPreferredAllocation '{"container_requests":[{"available_deviceIDs":["foo-0"],"allocation_size":2}]}'
  [ "$(jq -r .code <<<"$output")" = INVALID_ARGUMENT ]
  run fk call "$BAR" GetDevicePluginOptions
  [ "$output" = '{"get_preferred_allocation_available": true}' ]
  run fk call "$BAR" PreStartContainer '{"devices_ids":["bar-0"]}'
  [ "$output" = '{}' ]
}

@test "kubelet: a kubelet restart (every socket removed, kubelet.sock re-created) registers again" {
  kubelet_up
  demo_up
  fk wait-reg "$D" 2
  kubelet_down
  rm -f "$D"/*.sock
  kubelet_up
  fk wait-reg "$D" 4
  [ "$(tail -n2 "$D/registrations.jsonl" | jq -r .resource_name | sort | tr '\n' ' ')" = "example.com/foo nodeprobe.io/bar " ]
  wait_for test -S "$FOO"
  run fk call "$FOO" GetDevicePluginOptions
  [ "$output" = '{"get_preferred_allocation_available": true}' ]
  # Only kubelet.sock re-created (our sockets stay): registers again too.
  kubelet_down
  kubelet_up
  fk wait-reg "$D" 6
}

@test "kubelet: a refused registration (resource held by another plugin) is retried, never fatal" {
  kubelet_up --refuse example.com/foo
  demo_up
  fk wait-reg "$D" 2
  wait_for grep -q 'Register example.com/foo (endpoint demo-example.com_foo.sock): gRPC status 2: resource example.com/foo is already registered; retrying in 1 s' "$D/demo.log"
  kill -0 "$DPID"
  kubelet_down
  kubelet_up
  wait_for grep -q 'registered example.com/foo' "$D/demo.log"
  [ "$(grep -c '"refused"' "$D/registrations.jsonl")" -ge 1 ]
}

@test "kubelet: SIGTERM removes our sockets and only ours" {
  kubelet_up
  demo_up
  fk wait-reg "$D" 2
  : >"$D/other.sock"
  kill -TERM "$DPID"
  wait "$DPID"
  DPID=
  [ ! -e "$FOO" ] && [ ! -e "$BAR" ]
  [ -S "$D/kubelet.sock" ] && [ -f "$D/other.sock" ]
}

@test "kubelet: hostile peers (garbage, a 5 MiB message, a client that never reads) do not stop the loop" {
  kubelet_up
  demo_up
  fk wait-reg "$D" 2
  run fk hostile "$FOO" garbage
  [ "$output" = closed ]
  run fk hostile "$FOO" oversized
  [ "$output" = '{"code": "RESOURCE_EXHAUSTED", "details": "request message larger than 4194304 bytes"}' ]
  /usr/bin/python3 "$FK" hostile "$FOO" noread 30 >"$D/noread" 3>&- &
  local h=$!
  wait_for grep -q holding "$D/noread"
  run fk call "$FOO" GetDevicePluginOptions
  kill "$h"
  wait "$h" || true
  [ "$output" = '{"get_preferred_allocation_available": true}' ]
  kill -0 "$DPID"
}

@test "kubelet: idle connections past the limit (32) evict the one idle longest; the kubelet is still served" {
  kubelet_up
  demo_up
  fk wait-reg "$D" 2
  fk watch "$FOO" 2 >"$D/watch" 3>&- &
  local w=$!
  wait_for grep -q . "$D/watch"
  /usr/bin/python3 "$FK" hostile "$FOO" hold 30 >"$D/hold" 3>&- &
  local h=$!
  wait_for grep -q holding "$D/hold"
  run fk call "$FOO" GetDevicePluginOptions
  [ "$output" = '{"get_preferred_allocation_available": true}' ]
  wait_for grep -q '32 connections: closing the one idle longest' "$D/demo.log"
  # The ListAndWatch stream was not evicted: it still gets the update.
  kill -USR1 "$DPID"
  wait "$w"
  kill "$h"
  wait "$h" || true
  [ "$(tail -n1 "$D/watch" | jq -r '.devices[0].health')" = Unhealthy ]
}

@test "kubelet: a full table evicts the connection idle longest, not the lowest slot; a newer one survives" {
  kubelet_up
  demo_up
  fk wait-reg "$D" 2
  # A (first slot) then B; I/O on A; then more until one of them is closed
  run fk hostile "$FOO" evict
  echo "$output" >&2
  [[ "$output" == "closed B after "*"; A open" ]]
  wait_for grep -q '32 connections: closing the one idle longest' "$D/demo.log"
  run fk call "$FOO" GetDevicePluginOptions
  [ "$output" = '{"get_preferred_allocation_available": true}' ]
}

@test "kubelet: a request trickled a byte at a time is reset 10 s after its HEADERS; others are served meanwhile" {
  hostile_bg trickle 20 trickling
  run fk call "$FOO" GetDevicePluginOptions
  [ "$output" = '{"get_preferred_allocation_available": true}' ]
  wait "$H"
  cat "$D/hostile" >&2
  grep -qE '^reset after (9|10|11) s \(code 8\)$' "$D/hostile"
  grep -q 'a request not complete after 10 s: reset' "$D/demo.log"
  kill -0 "$DPID"
}

# Kubelet v1.25 dials with the socket's path as grpc-go's target, so its :authority is that path:
# before, every call was reset (RST_STREAM PROTOCOL_ERROR) by libnghttp2's :authority check.
@test "kubelet (grpc-go): kubelet 1.25's dial (:authority = the socket's path) and today's (localhost) get every RPC answered" {
  go_kubelet
  kubelet_up
  demo_up
  fk wait-reg "$D" 2
  for dial in 1.25 current; do
    run "$GK" --dial "$dial" all "$FOO" foo-1,foo-2
    echo "--dial $dial: $output" >&2
    [ "$status" -eq 0 ]
    diff -u - <(echo "$output") <<'EOF2'
GetDevicePluginOptions {"get_preferred_allocation_available":true}
ListAndWatch {"devices":[{"ID":"foo-0","health":"Healthy"},{"ID":"foo-1","health":"Healthy","topology":{"nodes":[{"ID":"1"}]}},{"ID":"foo-2","health":"Healthy"}]}
GetPreferredAllocation {"container_responses":[{"deviceIDs":["foo-1"]}]}
Allocate {"container_responses":[{"annotations":{"demo.nodeprobe.io/foo-1":"example.com/foo","demo.nodeprobe.io/foo-2":"example.com/foo"},"cdi_devices":[{"name":"nodeprobe.io/demo=foo-1"},{"name":"nodeprobe.io/demo=foo-2"}],"devices":[{"container_path":"/dev/foo-1","host_path":"/dev/null","permissions":"rw"},{"container_path":"/dev/foo-2","host_path":"/dev/null","permissions":"rw"}],"envs":{"DEMO_0":"foo-1","DEMO_1":"foo-2"},"mounts":[{"container_path":"/mnt/foo-1","host_path":"/tmp","read_only":true},{"container_path":"/mnt/foo-2","host_path":"/tmp","read_only":true}]}]}
PreStartContainer {}
EOF2
  done
  run "$GK" call "$FOO" Allocate '{"container_requests":[{"devices_ids":["bar-0"]}]}'
  [ "$output" = '{"code":"NotFound","details":"unknown device '\''bar-0'\''"}' ]
}

@test "kubelet (grpc-go): registers with a grpc-go kubelet.sock, which dials back as kubelet 1.25 and gets options and the list" {
  go_kubelet
  "$GK" serve "$D" 2>>"$D/kubelet.log" 3>&- &
  KPID=$!
  wait_for test -S "$D/kubelet.sock"
  demo_up
  wait_for count_ge "$D/lists.jsonl" '"devices"' 2
  diff -u - <(sort "$D/registrations.jsonl") <<'EOF2'
{"endpoint":"demo-example.com_foo.sock","options":{"get_preferred_allocation_available":true},"resource_name":"example.com/foo","version":"v1beta1"}
{"endpoint":"demo-nodeprobe.io_bar.sock","options":{"get_preferred_allocation_available":true},"resource_name":"nodeprobe.io/bar","version":"v1beta1"}
EOF2
  diff -u - <(sort "$D/lists.jsonl") <<'EOF2'
{"devices":1,"resource":"nodeprobe.io/bar"}
{"devices":3,"resource":"example.com/foo"}
EOF2
  # A health change reaches the kubelet's open ListAndWatch.
  kill -USR1 "$DPID"
  wait_for count_ge "$D/lists.jsonl" '"devices":[0-9]+,"resource":"example.com/foo"' 2
}

@test "kubelet: plugin sockets are 0600 whatever the umask (only the kubelet, root, connects)" {
  kubelet_up
  (umask 000 && exec "$BUILD/test/tools/kubelet-demo" "$D" example.com/foo,3 2>>"$D/demo.log" 3>&-) &
  DPID=$!
  fk wait-reg "$D" 1
  [ "$(stat -c '%a %U' "$FOO")" = "600 $(id -un)" ]
}

@test "kubelet: 40 ListAndWatch streams nobody reads do not lock the kubelet out: its Allocate and a restarted kubelet's ListAndWatch are served" {
  go_kubelet
  hostile_bg watchers 60 holding
  cat "$D/hostile" >&2
  # Before: a full table of streams refused every new connection, the kubelet's too.
  run fk call "$FOO" Allocate '{"container_requests":[{"devices_ids":["foo-0"]}]}'
  [ "$(jq -r '.container_responses[0].envs.DEMO_0' <<<"$output")" = foo-0 ]
  run "$GK" --dial 1.25 call "$FOO" Allocate '{"container_requests":[{"devices_ids":["foo-1"]}]}'
  [ "$(jq -r '.container_responses[0].envs.DEMO_0' <<<"$output")" = foo-1 ]
  grep -q '32 connections: closing the one whose ListAndWatch began last' "$D/demo.log"
  # The kubelet restarts (a grpc-go one now): it registers, dials back, its ListAndWatch is served.
  kubelet_down
  "$GK" serve "$D" 2>>"$D/kubelet.log" 3>&- &
  KPID=$!
  wait_for count_ge "$D/lists.jsonl" '"devices"' 2 || { cat "$D/lists.jsonl" "$D/kubelet.log" "$D/demo.log" >&2; false; }
  kill -USR1 "$DPID"
  wait_for count_ge "$D/lists.jsonl" '"devices":[0-9]+,"resource":"example.com/foo"' 2
  kill "$H"
  wait "$H" || true
}

@test "kubelet: with every slot a peer's stream, a new connection before its first stream is closed only after those streams" {
  hostile_bg watchers 60 holding
  # A, B (new, no stream yet, as a kubelet's between its connect and ListAndWatch), I/O on A,
  # then more connections until A or B is closed. Before: B went for the very next connection
  # (the only one without a stream), so a kubelet registering two resources at once closed its
  # own first connection; now the peer's 30 streams go first.
  run fk hostile "$FOO" evict
  echo "$output" >&2
  [[ "$output" =~ ^closed\ B\ after\ ([0-9]+)\ more\;\ A\ open$ ]]
  [ "${BASH_REMATCH[1]}" -ge 20 ]
  kill "$H"
  wait "$H" || true
}

@test "kubelet: a restarted kubelet's ListAndWatch, the newest stream, outlives new streams of a peer holding the others" {
  go_kubelet
  hostile_bg watchers 60 holding
  kubelet_down
  "$GK" serve "$D" 2>>"$D/kubelet.log" 3>&- &
  KPID=$!
  wait_for count_ge "$D/lists.jsonl" '"devices":[0-9]+,"resource":"example.com/foo"' 1
  # More streams come after the kubelet's: before, the first of them closed the kubelet's
  # (every connection streaming, the newest stream went).
  /usr/bin/python3 "$FK" hostile "$FOO" watchers 60 >"$D/hostile2" 3>&- &
  local h2=$!
  wait_for grep -q holding "$D/hostile2"
  kill -USR1 "$DPID"
  wait_for count_ge "$D/lists.jsonl" '"devices":[0-9]+,"resource":"example.com/foo"' 2 ||
    { cat "$D/lists.jsonl" "$D/kubelet.log" >&2; false; }
  kill "$H" "$h2"
  wait "$H" "$h2" || true
}

@test "kubelet: a connection that sends nothing is closed 10 s after it connected" {
  kubelet_up
  demo_up
  fk wait-reg "$D" 2
  run fk hostile "$FOO" silent 20
  [ "$output" = closed ]
  grep -q 'example.com/foo: a connection without a request after 10 s: closed' "$D/demo.log"
}
