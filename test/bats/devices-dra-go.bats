#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-devices' DRA plugin (issue 28) against a kubelet on grpc-go, the library kubelets are
# built with: test/kubelet/go-kubelet's dra-* commands (built into $BUILD/go-kubelet by
# test/kubelet/build-go-kubelet from Debian's packages), whose stubs come from upstream's
# api.proto files (test/kubelet/upstream), not from pkg/dra's: a field number, package or service
# name we get wrong fails here, where the Python peer (devices-dra.bats) shares our mistake.
# Claims come from test/fake-apiserver (dra.bash). Skipped, with the reason, without Go.
load helpers
load dra

setup_file() {
  dra_setup_file
  go_kubelet_build
}

# cdi_holds FILE ANSWER: every CDI id of ANSWER's devices (kind=name) is a device of spec FILE.
cdi_holds() {
  local kind id ids
  kind=$(jq -r .kind "$1")
  ids=$(jq -r '[.claims[].devices[]?.cdi_device_ids[]] | .[]' <<<"$2")
  [ -n "$ids" ]
  for id in $ids; do
    [ "${id%%=*}" = "$kind" ] || return 1
    jq -e --arg n "${id#*=}" 'any(.devices[]; .name == $n)' "$1" >/dev/null || return 1
  done
}

C1='{"namespace":"default","uid":"uid-1","name":"c1"}'
C2='{"namespace":"default","uid":"uid-2","name":"c2"}'

@test "devices-dra (grpc-go): registers with the plugin watcher's dial, GetInfo and NotifyRegistrationStatus" {
  go_kubelet
  plugin_start
  run "$GK" dra-register "$T/reg"
  echo "$output" >&2
  [ "$status" -eq 0 ]
  registered_ok "$output"
  [ "$(jq -r .registration_socket <<<"$output")" = "$T/reg/nodeprobe.io-reg.sock" ]
  [ "$(jq -r .error <<<"$output")" = "" ]
  dra_wait grep -q 'registered with the kubelet' "$T/plugin.log"
  # the kubelet's refusal reaches the plugin, and a next registration is taken
  run "$GK" dra-register "$T/reg" "driver name taken"
  [ "$status" -eq 0 ]
  dra_wait grep -q 'the kubelet refused nodeprobe.io: driver name taken' "$T/plugin.log"
  run "$GK" dra-register "$T/reg"
  [ "$status" -eq 0 ]
  # an empty request succeeds in both versions (the example driver's liveness probe sends one)
  for v in v1 v1beta1; do
    run "$GK" dra-prepare "$EP" "$v" '[]'
    [ "$output" = '{}' ]
    run "$GK" dra-unprepare "$EP" "$v" '[]'
    [ "$output" = '{}' ]
  done
}

@test "devices-dra (grpc-go): Prepare in v1 and v1beta1 answers the CDI ids of the spec it wrote; Unprepare removes it" {
  go_kubelet
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0),$(res other gpu.example.com node1 gpu-0)]"
  claim c2 uid-2 "[$(res ser nodeprobe.io node1 serial-ttyusb1)]"
  plugin_start
  F1="$T/cdi/nodeprobe.io-claim_uid-1.json" F2="$T/cdi/nodeprobe.io-claim_uid-2.json"
  for v in v1 v1beta1; do
    run "$GK" dra-prepare "$EP" "$v" "[$C1,$C2]"
    echo "$v: $output" >&2
    [ "$status" -eq 0 ]
    [ "$output" = '{"claims":{"uid-1":{"devices":[{"cdi_device_ids":["nodeprobe.io/claim=uid-1-serial-ttyusb0"],"device_name":"serial-ttyusb0","pool_name":"node1","request_names":["ser"]}]},"uid-2":{"devices":[{"cdi_device_ids":["nodeprobe.io/claim=uid-2-serial-ttyusb1"],"device_name":"serial-ttyusb1","pool_name":"node1","request_names":["ser"]}]}}}' ]
    cdi_holds "$F1" "$(jq '{claims: {a: .claims["uid-1"]}}' <<<"$output")"
    cdi_holds "$F2" "$(jq '{claims: {a: .claims["uid-2"]}}' <<<"$output")"
    jq -e '.devices[0].containerEdits.deviceNodes == [{"path":"/dev/ttyUSB0","hostPath":"/dev/ttyUSB0"}]' "$F1"
    # asked again (a kubelet restart): the same answer
    run "$GK" dra-prepare "$EP" "$v" "[$C1]"
    [[ "$output" == *'"cdi_device_ids":["nodeprobe.io/claim=uid-1-serial-ttyusb0"]'* ]]
    run "$GK" dra-unprepare "$EP" "$v" "[$C1,$C2]"
    [ "$output" = '{"claims":{"uid-1":{},"uid-2":{}}}' ]
    [ ! -e "$F1" ]
    [ ! -e "$F2" ]
    [ "$(jq '.claims | length' "$T/plugins/nodeprobe.io/checkpoint.json")" = 0 ]
    # unprepared again: success
    run "$GK" dra-unprepare "$EP" "$v" "[$C1]"
    [ "$output" = '{"claims":{"uid-1":{}}}' ]
  done
}

@test "devices-dra (grpc-go): the kubelet's sequence: register, then one connection for v1 and v1beta1" {
  go_kubelet
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  plugin_start
  run "$GK" dra-kubelet "$T/reg" "[$C1]"
  echo "$output" >&2
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq 5 ]
  [[ "${lines[0]}" == 'register {'* ]]
  registered_ok "${lines[0]#register }"
  prep='{"claims":{"uid-1":{"devices":[{"cdi_device_ids":["nodeprobe.io/claim=uid-1-serial-ttyusb0"],"device_name":"serial-ttyusb0","pool_name":"node1","request_names":["ser"]}]}}}'
  [ "${lines[1]}" = "v1 NodePrepareResources $prep" ]
  [ "${lines[2]}" = 'v1 NodeUnprepareResources {"claims":{"uid-1":{}}}' ]
  [ "${lines[3]}" = "v1beta1 NodePrepareResources $prep" ]
  [ "${lines[4]}" = 'v1beta1 NodeUnprepareResources {"claims":{"uid-1":{}}}' ]
  [ ! -e "$T/cdi/nodeprobe.io-claim_uid-1.json" ]
}

@test "devices-dra (grpc-go): another driver's claim, an unknown claim and another pool's device each get their own answer" {
  go_kubelet
  claim good uid-g "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  claim gpu uid-o "[$(res gpu gpu.example.com node1 gpu-0)]"
  claim pool uid-p "[$(res ser nodeprobe.io node2 serial-ttyusb1)]"
  plugin_start
  for v in v1 v1beta1; do
    run "$GK" dra-prepare "$EP" "$v" '[{"namespace":"default","uid":"uid-g","name":"good"},
      {"namespace":"default","uid":"uid-o","name":"gpu"},{"namespace":"default","uid":"uid-u","name":"unknown"},
      {"namespace":"default","uid":"uid-p","name":"pool"}]'
    echo "$v: $output" >&2
    [ "$(jq '.claims | length' <<<"$output")" = 4 ]
    [ "$(jq -c '.claims["uid-g"].devices[0].cdi_device_ids' <<<"$output")" = '["nodeprobe.io/claim=uid-g-serial-ttyusb0"]' ]
    [ "$(jq -r '.claims["uid-g"].error // ""' <<<"$output")" = "" ]
    # all of it another driver's: nothing for us to prepare, no error, no spec (man page)
    [ "$(jq -c '.claims["uid-o"]' <<<"$output")" = '{}' ]
    [[ "$(jq -r '.claims["uid-u"].error' <<<"$output")" == *"claim default/unknown"*"answered 404"* ]]
    [[ "$(jq -r '.claims["uid-p"].error' <<<"$output")" == *"pool 'node2': not ours"* ]]
    [ "$(jq '.claims["uid-u"].devices | length' <<<"$output")" = 0 ]
    [ -e "$T/cdi/nodeprobe.io-claim_uid-g.json" ]
    [ "$(ls "$T/cdi" | grep -c claim_)" = 1 ]
    run "$GK" dra-unprepare "$EP" "$v" '[{"namespace":"default","uid":"uid-g","name":"good"},
      {"namespace":"default","uid":"uid-u","name":"unknown"}]'
    [ "$output" = '{"claims":{"uid-g":{},"uid-u":{}}}' ]
    [ ! -e "$T/cdi/nodeprobe.io-claim_uid-g.json" ]
  done
}
