#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-devices' DRA worker (issue 28): everything that talks to the API server (claims,
# slices, the sweep) runs on one worker thread, so a held or slow API server blocks nothing of
# the loop; calls queued, deadlines, a kubelet gone meanwhile; the request counted before it is
# unpacked; the checkpoint checked on load; dot-temps, the periodic sweep and slice resync.
load helpers
load dra

# held N: wait (30 s at most) until the fake API server holds N requests (a "hold" fault)
held() {
  local i
  for i in $(seq 300); do
    [ "$(fake_ctl GET /faults | jq '[.items[].held] | add')" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$PLUGIN/status"; }

@test "devices-dra: a Prepare waiting on the API server blocks nothing: GetInfo, a device plugin, /health answer; then the Prepare" {
  FK=(/usr/bin/python3 "$NP_ROOT/test/kubelet/fake-kubelet.py")
  export FAKE_KUBELET_GEN=$BATS_FILE_TMPDIR/fkgen
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  # the claim GET may wait a minute (not 5 s): the checks below must find the Prepare still
  # waiting, however slow this machine is
  plugin_start --listen "127.0.0.1:$PORT" --dra-api-timeout 60
  S="$T/kl/nodeprobe-squat.ai_kvm.sock"
  dra_wait test -S "$S"
  # the claim's GET is held by the API server until we release it
  fake_ctl POST /faults '{"method":"GET","path":"resourceclaims/c1$","action":"hold","count":-1}' >/dev/null
  "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]' > "$T/prep.out" & PREP=$!
  held 1
  # the kubelet's plugin watcher: GetInfo within 1 s, NotifyRegistrationStatus
  run "${DK[@]}" register "$T/reg" 5
  echo "register: $output" >&2
  [ "$status" -eq 0 ]
  [ "$(jq -r .name <<<"$output")" = nodeprobe.io ]
  # a device-plugin class: ListAndWatch and Allocate
  run "${FK[@]}" watch "$S" 1 10
  echo "watch: $output" >&2
  [[ "$output" == *'"ID": "kvm-0"'* ]]
  run "${FK[@]}" call "$S" Allocate '{"container_requests": [{"devices_ids": ["kvm-0"]}]}'
  echo "allocate: $output" >&2
  [[ "$output" == *'"host_path": "/dev/kvm"'* ]]
  # /health
  run curl -sS --max-time 5 "http://127.0.0.1:$PORT/health"
  [ "$status" -eq 0 ]
  # all that while the Prepare still waits
  kill -0 "$PREP"
  [ ! -s "$T/prep.out" ]
  fake_ctl POST /release >/dev/null
  wait "$PREP"
  cat "$T/prep.out" >&2
  [ "$(cat "$T/prep.out")" = '{"claims": {"uid-1": {"devices": [{"cdi_device_ids": ["nodeprobe.io/claim=uid-1-serial-ttyusb0"], "device_name": "serial-ttyusb0", "pool_name": "node1", "request_names": ["ser"]}]}}}' ]
  [ -e "$T/cdi/nodeprobe.io-claim_uid-1.json" ]
}

@test "devices-dra: a kubelet gone before its Prepare's turn: the call is skipped, its answer dropped, the plugin lives" {
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  claim c2 uid-2 "[$(res ser nodeprobe.io node1 serial-ttyusb1)]"
  plugin_start --log-level debug
  fake_ctl POST /faults '{"method":"GET","path":"resourceclaims/c1$","action":"hold","count":-1}' >/dev/null
  "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]' > "$T/p1.out" & P1=$!
  held 1
  "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-2","name":"c2"}]' > "$T/p2.out" & P2=$!
  dra_wait grep -q 'NodePrepareResources of 1 claims handed to the worker (2 calls waiting)' "$T/plugin.log"
  # both kubelets go: the first while its claim is read, the second before its turn
  kill -9 "$P1" "$P2"; wait "$P1" "$P2" || true
  fake_ctl POST /release >/dev/null
  dra_wait grep -q 'the kubelet went before the answer: dropped' "$T/plugin.log"
  kill -0 "$PLUGIN"
  # c2 was never read; c1 was prepared (the kubelet asks again and gets the same ids)
  [ "$(fake_ctl GET '/requests?path=resourceclaims/c2&count=1' | jq .count)" = 0 ]
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  [ "$(jq -c '.claims["uid-1"].devices[0].cdi_device_ids' <<<"$output")" = '["nodeprobe.io/claim=uid-1-serial-ttyusb0"]' ]
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-2","name":"c2"}]'
  [ "$(jq -c '.claims["uid-2"].devices[0].cdi_device_ids' <<<"$output")" = '["nodeprobe.io/claim=uid-2-serial-ttyusb1"]' ]
}

@test "devices-dra: a call past its grpc-timeout: DEADLINE_EXCEEDED, its claims not begun are not read" {
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  claim c2 uid-2 "[$(res ser nodeprobe.io node1 serial-ttyusb1)]"
  plugin_start --log-level debug
  fake_ctl POST /faults '{"method":"GET","path":"resourceclaims/c1$","action":"hold","count":-1}' >/dev/null
  DRA_KUBELET_TIMEOUT=3 "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"},{"namespace":"default","uid":"uid-2","name":"c2"}]' > "$T/p.out" & P=$!
  held 1
  wait "$P"
  cat "$T/p.out" >&2
  [ "$(jq -r .code "$T/p.out")" = DEADLINE_EXCEEDED ]
  fake_ctl POST /release >/dev/null
  # the call's work ends (its answer dropped) without reading c2
  dra_wait grep -q 'the kubelet went before the answer: dropped' "$T/plugin.log"
  [ "$(fake_ctl GET '/requests?path=resourceclaims/c2&count=1' | jq .count)" = 0 ]
  # the plugin goes on: c2 now, from a kubelet that waits
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-2","name":"c2"}]'
  [ "$(jq -r '.claims["uid-2"].devices[0].device_name' <<<"$output")" = serial-ttyusb1 ]
}

@test "devices-dra: 2,000,000 empty claims in one 4 MB request: refused by count before any is unpacked" {
  # under ASan (make check) freed memory is held in a 256 MB quarantine, which would count here:
  # 8 MB keeps some use-after-free detection
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
  plugin_start
  before=$(hwm_kb)
  run "${DK[@]}" flood "$EP" 2000000
  echo "$output" >&2
  [[ "$output" == *'"code": "RESOURCE_EXHAUSTED"'* ]]
  [[ "$output" == *'2000000 claims in one call: limit 4096'* ]]
  after=$(hwm_kb)
  echo "peak RSS ${before} kB -> ${after} kB" >&2
  # the request's own bytes (4 MB, held by the HTTP/2 layer), not a Claim per entry (~130 MB)
  [ "$((after - before))" -lt 40000 ]
}

# ckpt JSON: a checkpoint of driver nodeprobe.io holding JSON as its claims
ckpt() {
  mkdir -p "$T/plugins/nodeprobe.io"
  printf '{"kind":"NodeprobeDRACheckpoint","version":1,"driver":"nodeprobe.io","claims":%s}' "$1" > "$T/plugins/nodeprobe.io/checkpoint.json"
}

@test "devices-dra: a hostile checkpoint is refused by name, nothing of it trusted or removed" {
  echo keep > "$T/victim.json"
  cp "$T/victim.json" "$T/cdi/nodeprobe.io-claim_uid-1.json"
  good='{"uid":"uid-1","namespace":"default","name":"c1","devices":[{"request":"ser","pool":"node1","device":"serial-ttyusb0","cdi":"nodeprobe.io/claim=uid-1-serial-ttyusb0"}]}'
  start_refused() { # start_refused MESSAGE: the plugin exits 1 naming the checkpoint and MESSAGE
    run "$D" "${DA[@]}" --node-name node1
    echo "$output" >&2
    [ "$status" -eq 1 ]
    [[ "$output" == *"$T/plugins/nodeprobe.io/checkpoint.json: $1"* ]]
    [ "$(cat "$T/victim.json")" = keep ]
    [ -e "$T/cdi/nodeprobe.io-claim_uid-1.json" ]
    [ ! -e "$T/reg/nodeprobe.io-reg.sock" ]
  }
  ckpt "[$(jq -c '.uid = "../../victim"' <<<"$good")]"
  start_refused "claims[0].uid: '../../victim': want 1 to 36 letters, digits or '-'"
  ckpt "[$good,$(jq -c '.devices[0].cdi = "nodeprobe.io/claim=../victim"' <<<"$good" | jq -c '.uid = "uid-2"')]"
  start_refused "claims[1].devices[0].cdi: want 'nodeprobe.io/claim=uid-2-serial-ttyusb0'"
  ckpt "[$(jq -c '.namespace = "a/b"' <<<"$good")]"
  start_refused "claims[0].namespace: 'a/b': want lower-case letters, digits and '-' (a DNS label)"
  ckpt "[$(jq -c '.devices[0].device = "../x"' <<<"$good")]"
  start_refused "claims[0].devices[0].device: '../x': want lower-case letters, digits and '-' (a DNS label)"
  ckpt "[$good,$good]"
  start_refused "claims[1].uid: 'uid-1' twice"
  printf '{"kind":"NodeprobeDRACheckpoint","version":1,"driver":"gpu.example.com","claims":[]}' > "$T/plugins/nodeprobe.io/checkpoint.json"
  start_refused "not a checkpoint of driver nodeprobe.io: want kind NodeprobeDRACheckpoint, version 1 and our driver"
  truncate -s 65M "$T/plugins/nodeprobe.io/checkpoint.json"
  start_refused "over 67108864 bytes: not a checkpoint of ours"
  # a sound one is taken
  ckpt "[$good]"
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  plugin_start
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  echo "$output" >&2
  [ "$(jq -c '.claims["uid-1"].devices[0].cdi_device_ids' <<<"$output")" = '["nodeprobe.io/claim=uid-1-serial-ttyusb0"]' ]
}

@test "devices-dra: dot-temp files a kill -9 left are removed, at start and by the periodic sweep; others stay" {
  mkdir -p "$T/plugins/nodeprobe.io"
  ours=("$T/cdi/.nodeprobe.io-claim_uid-1.json.Ab12Cd" "$T/plugins/nodeprobe.io/.checkpoint.json.Xy12Zw")
  others=("$T/cdi/.other-claim_uid-1.json.Ab12Cd" "$T/cdi/.nodeprobe.io-claim_uid-1.json.tmp"
    "$T/cdi/.nodeprobe.io-claim_a_b.json.Ab12Cd" "$T/plugins/nodeprobe.io/.checkpoint.json.x")
  touch "${ours[@]}" "${others[@]}"
  plugin_start --dra-sweep 1
  for f in "${ours[@]}"; do [ ! -e "$f" ]; done
  for f in "${others[@]}"; do [ -e "$f" ]; done
  grep -q 'removed a temp file a killed run left' "$T/plugin.log"
  # while running: only one older than a minute goes (a younger one may be a write going on)
  touch -d '2 minutes ago' "${ours[0]}"
  touch "${ours[1]}"
  dra_wait test ! -e "${ours[0]}"
  [ -e "${ours[1]}" ]
  for f in "${others[@]}"; do [ -e "$f" ]; done
}

@test "devices-dra: the stale-claim sweep runs periodically: a claim deleted in the API is unprepared" {
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  claim c2 uid-2 "[$(res ser nodeprobe.io node1 serial-ttyusb1)]"
  plugin_start --dra-sweep 1
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"},{"namespace":"default","uid":"uid-2","name":"c2"}]'
  [ -e "$T/cdi/nodeprobe.io-claim_uid-2.json" ]
  fake_api DELETE /apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c2 >/dev/null
  dra_wait grep -q 'claim default/c2 (uid-2) is gone' "$T/plugin.log"
  [ ! -e "$T/cdi/nodeprobe.io-claim_uid-2.json" ]
  [ -e "$T/cdi/nodeprobe.io-claim_uid-1.json" ]
  [ "$(jq -c '[.claims[].uid]' "$T/plugins/nodeprobe.io/checkpoint.json")" = '["uid-1"]' ]
}

@test "devices-dra: slices come back after the kubelet re-registers us (its start wiped them), and by the periodic resync" {
  plugin_start --dra-resync 3600
  dra_wait slices_are '[{"gen":1,"count":1,"pool":"node1","n":2}]'
  wipe() {
    local n
    for n in $(fake_api GET /apis/resource.k8s.io/v1/resourceslices | jq -r '.items[].metadata.name'); do
      fake_api DELETE "/apis/resource.k8s.io/v1/resourceslices/$n" >/dev/null
    done
  }
  wipe
  slices_are '[]'
  run "${DK[@]}" register "$T/reg" 5
  [ "$status" -eq 0 ]
  dra_wait slices_are '[{"gen":1,"count":1,"pool":"node1","n":2}]'
  kill "$PLUGIN"; wait "$PLUGIN"; PLUGIN=
  # every second: one deleted by someone else comes back; nothing written while unchanged
  plugin_start --dra-resync 1
  dra_wait slices_are '[{"gen":1,"count":1,"pool":"node1","n":2}]'
  w=$(writes)
  wipe
  dra_wait slices_are '[{"gen":1,"count":1,"pool":"node1","n":2}]'
  [ "$(writes)" -gt "$((w + 1))" ]   # our DELETE, then the plugin's POST
  w=$(writes)
  lists=$(fake_ctl GET '/requests?method=GET&path=resourceslices&count=1' | jq .count)
  fake_wait_requests "method=GET&path=resourceslices&min=$((lists + 2))" "$((lists + 2))" >/dev/null
  [ "$(writes)" = "$w" ]
}
