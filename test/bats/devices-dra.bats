#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-devices as a DRA kubelet plugin (issue 28): registration through the plugin
# registry, NodePrepareResources / NodeUnprepareResources in v1 and v1beta1 from the test
# kubelet (test/kubelet/dra-kubelet.py, Debian's python3-grpcio), claims read from
# test/fake-apiserver, claim CDI specs and the checkpoint; hostile claims and restarts.
load helpers
load dra

@test "devices-dra: registers through the plugin registry; both DRA versions answer" {
  plugin_start
  run "${DK[@]}" register "$T/reg" 5
  echo "$output" >&2
  [ "$status" -eq 0 ]
  registered_ok "$output"
  # both sockets mode 0600 (made so before listen, whatever the umask): only the kubelet (root)
  [ "$(stat -c %a "$EP")" = 600 ]
  [ "$(stat -c %a "$T/reg/nodeprobe.io-reg.sock")" = 600 ]
  dra_wait grep -q 'registered with the kubelet' "$T/plugin.log"
  # a DRA class talks to the API server: libcurl is loaded now (pkg/kube/kube_curl.c)
  grep -q 'libcurl\.so\.4' "/proc/$PLUGIN/maps"
  # an empty request succeeds (the example driver's liveness probe sends one), both versions
  for v in v1 v1beta1; do
    run "${DK[@]}" prepare "$EP" "$v" '[]'
    [ "$output" = '{}' ]
    run "${DK[@]}" unprepare "$EP" "$v" '[]'
    [ "$output" = '{}' ]
  done
  # a refusal is logged; a kubelet restart registers again from the same socket
  run "${DK[@]}" register "$T/reg" 5 --refuse "driver name taken"
  dra_wait grep -q 'the kubelet refused nodeprobe.io: driver name taken' "$T/plugin.log"
  run "${DK[@]}" register "$T/reg" 5
  [ "$status" -eq 0 ]
  # our registration socket removed: made again (the kubelet's watcher sees it anew)
  rm "$T/reg/nodeprobe.io-reg.sock"
  dra_wait test -S "$T/reg/nodeprobe.io-reg.sock"
  run "${DK[@]}" register "$T/reg" 5
  [ "$status" -eq 0 ]
  # the device-plugin class is still a device plugin, the DRA class is not
  [ -S "$T/kl/nodeprobe-squat.ai_kvm.sock" ]
  [ ! -e "$T/kl/nodeprobe-squat.ai_serial.sock" ]
  # SIGTERM: both our sockets go
  kill "$PLUGIN"; wait "$PLUGIN"; PLUGIN=
  [ ! -e "$T/reg/nodeprobe.io-reg.sock" ]
  [ ! -e "$EP" ]
}

@test "devices-dra: prepare writes the claim's CDI spec and answers its ids; repeat and unprepare" {
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0),$(res other gpu.example.com node1 gpu-0)]"
  plugin_start
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  echo "$output" >&2
  [ "$output" = '{"claims": {"uid-1": {"devices": [{"cdi_device_ids": ["nodeprobe.io/claim=uid-1-serial-ttyusb0"], "device_name": "serial-ttyusb0", "pool_name": "node1", "request_names": ["ser"]}]}}}' ]
  F="$T/cdi/nodeprobe.io-claim_uid-1.json"
  cat "$F" >&2
  /usr/bin/python3 - "$F" "$NP_ROOT/test/devices/cdi-spec.schema.json" <<'PY'
import json, sys
import jsonschema
spec = json.load(open(sys.argv[1]))
jsonschema.validate(spec, json.load(open(sys.argv[2])))
assert spec["kind"] == "nodeprobe.io/claim", spec
assert spec["cdiVersion"] == "0.5.0", spec
dev = spec["devices"][0]
assert dev["name"] == "uid-1-serial-ttyusb0", dev
assert dev["containerEdits"]["deviceNodes"] == [{"path": "/dev/ttyUSB0", "hostPath": "/dev/ttyUSB0"}], dev
PY
  # the same answer again, from v1beta1, without a second spec or claim read
  before=$(fake_ctl GET '/requests?path=resourceclaims/c1' | jq .count)
  run "${DK[@]}" prepare "$EP" v1beta1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  [[ "$output" == *'"cdi_device_ids": ["nodeprobe.io/claim=uid-1-serial-ttyusb0"]'* ]]
  [ "$(fake_ctl GET '/requests?path=resourceclaims/c1' | jq .count)" = "$before" ]
  [ "$(jq '.claims | length' "$T/plugins/nodeprobe.io/checkpoint.json")" = 1 ]
  # a restart keeps it: the same ids from the checkpoint
  kill "$PLUGIN"; wait "$PLUGIN"; plugin_start
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  [[ "$output" == *'"cdi_device_ids": ["nodeprobe.io/claim=uid-1-serial-ttyusb0"]'* ]]
  # unprepare removes the spec; again is success
  run "${DK[@]}" unprepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  [ "$output" = '{"claims": {"uid-1": {}}}' ]
  [ ! -e "$F" ]
  [ "$(jq '.claims | length' "$T/plugins/nodeprobe.io/checkpoint.json")" = 0 ]
  run "${DK[@]}" unprepare "$EP" v1beta1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  [ "$output" = '{"claims": {"uid-1": {}}}' ]
}

@test "devices-dra: each bad claim fails alone: other pool, gone device, replaced, deleted, taken, shared" {
  claim good uid-g "[$(res ser nodeprobe.io node1 serial-ttyusb1)]"
  claim pool uid-p "[$(res ser nodeprobe.io node2 serial-ttyusb0)]"
  claim gone uid-x "[$(res ser nodeprobe.io node1 serial-ttyusb9)]"
  claim repl uid-new "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  claim taken uid-t "[$(res ser nodeprobe.io node1 serial-ttyusb1)]"
  claim share uid-sh '[{"request":"ser","driver":"nodeprobe.io","pool":"node1","device":"serial-ttyusb0","shareID":"0b7f5d2c-7f2a-4a39-9e43-3c1e9f0f1a11"}]'
  plugin_start
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-g","name":"good"},
    {"namespace":"default","uid":"uid-p","name":"pool"},{"namespace":"default","uid":"uid-x","name":"gone"},
    {"namespace":"default","uid":"uid-old","name":"repl"},{"namespace":"default","uid":"uid-d","name":"deleted"},
    {"namespace":"default","uid":"uid-t","name":"taken"},{"namespace":"default","uid":"uid-sh","name":"share"}]'
  echo "$output" | jq . >&2
  [ "$(jq -r '.claims["uid-g"].devices[0].device_name' <<<"$output")" = serial-ttyusb1 ]
  [[ "$(jq -r '.claims["uid-p"].error' <<<"$output")" == *"pool 'node2': not ours"* ]]
  [[ "$(jq -r '.claims["uid-x"].error' <<<"$output")" == *"serial-ttyusb9: not on this node"* ]]
  [[ "$(jq -r '.claims["uid-old"].error' <<<"$output")" == *"got replaced"* ]]
  [[ "$(jq -r '.claims["uid-d"].error' <<<"$output")" == *"answered 404"* ]]
  [[ "$(jq -r '.claims["uid-t"].error' <<<"$output")" == *"prepared for claim uid-g already"* ]]
  [[ "$(jq -r '.claims["uid-sh"].error' <<<"$output")" == *"consumable capacity (shareID) is not offered"* ]]
  ls "$T/cdi" >&2
  [ "$(ls "$T/cdi" | grep -c claim_)" = 1 ]
}

@test "devices-dra: 1,000 claims in one call are all answered, one checkpoint write" {
  /usr/bin/python3 - "$T/claims.json" <<'PY'
import json, sys
items = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
          "metadata": {"name": f"m-{i}", "namespace": "default", "uid": f"m-{i}"},
          "spec": {}, "status": {"allocation": {"devices": {"results": [
              {"request": "r", "driver": "gpu.example.com", "pool": "node1", "device": f"d{i}"}]}}}}
         for i in range(1000)]
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(sys.argv[1], "w"))
PY
  curl -sS --fail-with-body -X POST --data-binary "@$T/claims.json" "$FAKE_CTL/objects" >/dev/null
  plugin_start
  run "${DK[@]}" many "$EP" v1 1000 default m
  echo "$output" >&2
  [ "$output" = '{"answered": 1000, "errors": 0, "first_error": ""}' ]
  [ "$(jq '.claims | length' "$T/plugins/nodeprobe.io/checkpoint.json")" = 1000 ]
  # over the limit: refused as a whole, by name
  run "${DK[@]}" many "$EP" v1 4097 default m
  [[ "$output" == *'"code": "RESOURCE_EXHAUSTED"'* ]]
  [[ "$output" == *'4097 claims in one call: limit 4096'* ]]
}

@test "devices-dra: killed between CDI write and checkpoint, deleted while down: cleaned at start" {
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  claim c2 uid-2 "[$(res ser nodeprobe.io node1 serial-ttyusb1)]"
  plugin_start
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"},{"namespace":"default","uid":"uid-2","name":"c2"}]'
  [ "$(ls "$T/cdi" | grep -c claim_)" = 2 ]
  kill -9 "$PLUGIN"; wait "$PLUGIN" || true; PLUGIN=
  # what a run killed after the spec, before the checkpoint leaves; and c2 deleted meanwhile
  echo '{"cdiVersion":"0.5.0","kind":"nodeprobe.io/claim","devices":[]}' > "$T/cdi/nodeprobe.io-claim_uid-9.json"
  echo '{"foreign":true}' > "$T/cdi/other-claim_uid-9.json"
  fake_api DELETE /apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c2 >/dev/null
  plugin_start
  dra_wait grep -q 'claim default/c2 (uid-2) is gone' "$T/plugin.log"
  ls "$T/cdi" >&2
  [ ! -e "$T/cdi/nodeprobe.io-claim_uid-9.json" ]
  [ ! -e "$T/cdi/nodeprobe.io-claim_uid-2.json" ]
  [ -e "$T/cdi/nodeprobe.io-claim_uid-1.json" ]
  [ -e "$T/cdi/other-claim_uid-9.json" ]
  [ "$(jq -c '[.claims[].uid]' "$T/plugins/nodeprobe.io/checkpoint.json")" = '["uid-1"]' ]
}

@test "devices-dra: API server down while preparing: the claim fails, the call answers" {
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  plugin_start
  fake_stop
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  echo "$output" >&2
  [[ "$(jq -r '.claims["uid-1"].error' <<<"$output")" == *"claim default/c1:"* ]]
  [ ! -e "$T/cdi/nodeprobe.io-claim_uid-1.json" ]
}

@test "devices-dra: refused by name: shares in a DRA class, bad api values, no node name" {
  run "$D" --preset serial --api dra --dev-root "$T/dev" --sys-root "$T/sys" --shared-dev-num 2 \
    --preset intel-gpu --node-name n --kubeconfig "$T/kubeconfig" --plugin-directory "$T/kl" \
    --cdi-dir "$T/cdi"
  echo "$output" >&2
  [ "$status" -eq 2 ]
  [[ "$output" == *"class i915: api: dra with count 2"* ]]
  cat > "$T/c2.yaml" <<'YAML'
apiVersion: nodeprobe.io/v1alpha1
kind: DeviceClass
metadata: {name: kvm}
spec: {preset: kvm, count: 4, api: dra}
YAML
  run "$D" --classes "$T/c2.yaml" --dev-root "$T/dev" --sys-root "$T/sys" --node-name n \
    --kubeconfig "$T/kubeconfig" --plugin-directory "$T/kl"
  [ "$status" -eq 2 ]
  [[ "$output" == *"class kvm: api: dra with count 4: shares are a device-plugin scheme"* ]]
  sed -i 's/api: dra/api: csi/' "$T/c2.yaml"
  run "$D" --classes "$T/c2.yaml" --list --dev-root "$T/dev" --sys-root "$T/sys"
  [ "$status" -eq 2 ]
  [[ "$output" == *"c2.yaml:4:"*"api 'csi': want device-plugin or dra"* ]]
  run "$D" --preset kvm --api bogus
  [ "$status" -eq 2 ]
  [[ "$output" == *"--api 'bogus': want device-plugin or dra"* ]]
  run env -u NODE_NAME "$D" --preset serial --api dra --dev-root "$T/dev" --kubeconfig "$T/kubeconfig" \
    --cdi-dir "$T/cdi"
  [ "$status" -eq 2 ]
  [[ "$output" == *"api: dra needs the node's name (its pool): --node-name or \$NODE_NAME"* ]]
  run "$D" "${DA[@]}" --node-name Node_1
  [ "$status" -eq 2 ]
  [[ "$output" == *"node name 'Node_1' (the DRA pool): want lower-case letters, digits, '-' and '.' (a DNS subdomain)"* ]]
  for o in --dra-resync --dra-sweep; do
    run "$D" --preset kvm "$o" 0
    [ "$status" -eq 2 ]
    [[ "$output" == *"$o '0': want whole seconds from 1 to 86400"* ]]
  done
}

@test "devices-dra: no libcurl on the node: device-plugin classes work, a DRA class fails at start naming it" {
  # libcurl is loaded (pkg/kube/kube_curl.c) for a DRA class only; here it is made unloadable
  # (/dev/null mounted over it in a private mount namespace)
  unshare -m true 2>/dev/null || skip "no mount namespace (unshare -m)"
  local lib
  lib=$(readlink -f "$(ldconfig -p | awk '$1 == "libcurl.so.4" { print $NF; exit }')")
  [ -f "$lib" ]
  nocurl() { unshare -m sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$lib" "$@"; }
  run nocurl "$D" --preset kvm --list --dev-root "$T/dev" --sys-root "$T/sys"
  echo "$output" >&2
  [ "$status" -eq 0 ]
  [[ "$output" == "squat.ai/kvm kvm /dev/kvm:/dev/kvm:rw ids=10 kvm-0" ]]
  run nocurl "$D" --classes "$T/classes.yaml" --dev-root "$T/dev" --sys-root "$T/sys" \
    --cdi-dir "$T/cdi" --plugin-directory "$T/kl" --plugins-registry "$T/reg" \
    --dra-plugins-dir "$T/plugins" --node-name node1 --kubeconfig "$T/kubeconfig"
  echo "$output" >&2
  [ "$status" -eq 1 ]
  [[ "$output" == *"error: the Kubernetes API client needs libcurl.so.4: "*"libcurl.so.4"* ]]
  [ ! -e "$T/reg/nodeprobe.io-reg.sock" ]
}

@test "devices-dra: GnuTLS, loaded with libcurl's libraries, does not initialise itself; the API client's TLS works" {
  # hooks/devices/dra.c _gnutls_global_init_skip: 0.8 MB of peak RSS (make bench). GnuTLS's
  # initialisation logs to stderr with GNUTLS_DEBUG_LEVEL set (gnutls_global_init).
  GNUTLS_DEBUG_LEVEL=2 plugin_start
  # the slices are published over TLS (OpenSSL, the kubeconfig's CA verified)
  # (a function: dra_wait retries its command, and an argument "$(slices)" is read only once)
  published() { [ "$(slices)" != '[]' ]; }
  dra_wait published
  grep -q 'libgnutls\.so' "/proc/$PLUGIN/maps" || skip "this libcurl does not load GnuTLS"
  run grep -c 'gnutls\[' "$T/plugin.log"
  [ "$output" = 0 ]
}

@test "devices-dra: nodeprobe labels <resource>.count for DRA classes too" {
  mkdir -p "$T/proc" "$T/sys/bus"
  run "$BUILD/nodeprobe" --dry-run --no-builtin-rules --sysfs "$T/sys" --proc "$T/proc" \
    --os-release /dev/null --device-classes "$T/classes.yaml" --dev-root "$T/dev"
  echo "$output" >&2
  [ "$status" -eq 0 ]
  diff -u - <(printf '%s\n' "$output") <<'OUT'
squat.ai/kvm.count=1
squat.ai/serial.count=2
OUT
}

# slices: the ResourceSlices of our pool as the API server holds them (sorted by name)

@test "devices-dra: ResourceSlices: attributes from sysfs, hotplug bumps the generation, no write when unchanged, 409" {
  [ "$(id -u)" = 0 ] || skip "mknod needs root"
  rm "$T/dev/ttyUSB0"
  mknod "$T/dev/ttyUSB0" c 188 0 2>/dev/null || skip "mknod refused here"
  # sysfs: ttyUSB0 under the USB device 1-4 (a CP210x) of the PCI function 0000:00:14.0
  U="$T/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4"
  mkdir -p "$U/1-4:1.0/ttyUSB0/tty/ttyUSB0" "$T/sys/dev/char" "$T/sys/kernel/iommu_groups/7" "$T/sys/bus/pci/drivers/xhci_hcd"
  ln -s "../../devices/pci0000:00/0000:00:14.0/usb1/1-4/1-4:1.0/ttyUSB0/tty/ttyUSB0" "$T/sys/dev/char/188:0"
  P="$T/sys/devices/pci0000:00/0000:00:14.0"
  echo 0x8086 > "$P/vendor"; echo 0xa36d > "$P/device"; echo 0x0c0330 > "$P/class"
  echo 0x1028 > "$P/subsystem_vendor"; echo 0x0869 > "$P/subsystem_device"; echo 0 > "$P/numa_node"
  ln -s ../../../kernel/iommu_groups/7 "$P/iommu_group"; ln -s ../../../bus/pci/drivers/xhci_hcd "$P/driver"
  echo 10c4 > "$U/idVendor"; echo ea60 > "$U/idProduct"; echo 0001 > "$U/serial"; echo 0100 > "$U/bcdDevice"
  plugin_start
  dra_wait slices_are '[{"gen":1,"count":1,"pool":"node1","n":2}]'
  fake_api GET /apis/resource.k8s.io/v1/resourceslices | jq '.items[0].spec' > "$T/spec.json"
  cat "$T/spec.json" >&2
  [ "$(jq -r .driver "$T/spec.json")" = nodeprobe.io ]
  [ "$(jq -r .nodeName "$T/spec.json")" = node1 ]
  [ "$(jq -c '.devices[0]' "$T/spec.json")" = '{"name":"serial-ttyusb0","attributes":{"class":{"string":"serial"},"devPath":{"string":"/dev/ttyUSB0"},"major":{"int":188},"minor":{"int":0},"usbVendorID":{"string":"10c4"},"usbProductID":{"string":"ea60"},"usbSerial":{"string":"0001"},"usbBcdDevice":{"string":"0100"},"usbBusPath":{"string":"1-4"},"pciVendorID":{"string":"8086"},"pciDeviceID":{"string":"a36d"},"pciClass":{"string":"0c0330"},"pciSubsystemVendorID":{"string":"1028"},"pciSubsystemDeviceID":{"string":"0869"},"pciAddress":{"string":"0000:00:14.0"},"pciDriver":{"string":"xhci_hcd"},"numaNode":{"int":0},"iommuGroup":{"int":7},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:00"}}}' ]
  [ "$(jq -c '.devices[1]' "$T/spec.json")" = '{"name":"serial-ttyusb1","attributes":{"class":{"string":"serial"},"devPath":{"string":"/dev/ttyUSB1"},"major":{"int":1},"minor":{"int":3}}}' ]
  # a hotplug that changes nothing of ours: a LIST, no write
  w=$(writes)
  lists=$(fake_ctl GET '/requests?method=GET&path=resourceslices&count=1' | jq .count)
  : > "$T/dev/video0"
  fake_wait_requests "method=GET&path=resourceslices&min=$((lists + 1))" "$((lists + 1))" >/dev/null
  [ "$(writes)" = "$w" ]
  # ttyUSB2 comes: generation 2, three devices
  mknode "$T/dev/ttyUSB2"
  dra_wait slices_are '[{"gen":2,"count":1,"pool":"node1","n":3}]'
  # a 409 on the update (someone changed the slice): listed again, written
  fake_ctl POST /faults '{"method":"PUT","path":"resourceslices","code":409}' >/dev/null
  rm "$T/dev/ttyUSB2"
  dra_wait slices_are '[{"gen":3,"count":1,"pool":"node1","n":2}]'
  [ "$(fake_ctl GET /faults | jq '.[0].hits // .items[0].hits // 1')" != 0 ]
  grep -q 'a slice changed under us (409)' "$T/plugin.log"
  # the kubelet wipes the node's slices at its start: made again at the next scan
  fake_api DELETE "/apis/resource.k8s.io/v1/resourceslices/$(fake_api GET /apis/resource.k8s.io/v1/resourceslices | jq -r '.items[0].metadata.name')" >/dev/null
  : > "$T/dev/video1"
  dra_wait slices_are '[{"gen":1,"count":1,"pool":"node1","n":2}]'
}

# ctl_slices: slices() through the control port, which no fault touches and the request log
# does not record (the log then holds the plugin's requests only)
ctl_slices() {
  fake_ctl GET '/objects?apiVersion=resource.k8s.io/v1&kind=ResourceSlice' |
    jq -c '[.items[] | {gen: .spec.pool.generation, count: .spec.pool.resourceSliceCount, pool: .spec.pool.name, n: (.spec.devices | length)}]'
}
ctl_slices_are() { [ "$(ctl_slices)" = "$1" ]; }

# wipe_slices: delete our slices behind the plugin's back (as the kubelet does at its start); no
# scan follows, so the next pass is a --dra-resync one
wipe_slices() {
  local n
  for n in $(fake_ctl GET '/objects?apiVersion=resource.k8s.io/v1&kind=ResourceSlice' | jq -r '.items[].metadata.name'); do
    fake_ctl DELETE "/objects?apiVersion=resource.k8s.io/v1&kind=ResourceSlice&name=$n" >/dev/null
  done
}

# slice_log: the plugin's resourceslices requests since the log was cleared, one line each:
# METHOD STATUS continue/resourceVersion-in-the-query TIME, from the first 410 on (a pass may
# come between clearing the log and arming the fault)
slice_log() {
  fake_ctl GET '/requests?path=resourceslices' |
    jq -r '.items[] | "\(.method) \(.status) \(.params | has("continue") or has("resourceVersion")) \(.time)"' |
    sed -n '/^GET 410 /,$p'
}

# gone_pass N: N 410s armed on the LIST (the log cleared first: whenever a pass comes, its 410s
# are in it), our slices wiped, and waited for until they are back
gone_pass() {
  fake_ctl DELETE /requests >/dev/null
  fake_ctl POST /faults "{\"method\":\"GET\",\"path\":\"/resourceslices\$\",\"code\":410,\"count\":$1}" >/dev/null
  wipe_slices
  dra_wait ctl_slices_are '[{"gen":1,"count":1,"pool":"node1","n":2}]'
  slice_log >&2
  cat "$T/plugin.log" >&2
}

# gap I J: the seconds between slice_log's records I and J
gap() { slice_log | awk -v i="$1" -v j="$2" 'NR == i { a = $4 } NR == j { print $4 - a }'; }

@test "devices-dra: ResourceSlices: a 410 on the LIST lists again from scratch at once, one line; a second 410 waits for the next pass" {
  plugin_start --dra-resync 2
  dra_wait ctl_slices_are '[{"gen":1,"count":1,"pool":"node1","n":2}]'
  # one 410 (the API server's "your view is stale"): the pass lists again at once and writes
  gone_pass 1
  [ "$(slice_log | head -2 | cut -d' ' -f1-3 | tr '\n' ,)" = 'GET 410 false,GET 200 false,' ]
  slice_log | grep -q '^POST 201 false '
  # the fake's log: the LIST again within the pass (the next pass is 2 s later)
  awk -v g="$(gap 1 2)" 'BEGIN { exit !(g < 1) }'
  [ "$(grep -c '410 Gone (our view is stale): listing again from scratch' "$T/plugin.log")" = 1 ]
  [ "$(grep -c 'HTTP 410' "$T/plugin.log")" = 0 ]
  # a 410 again on that LIST: one warning, and the next pass (2 s on) lists and writes
  gone_pass 2
  [ "$(slice_log | head -4 | cut -d' ' -f1-3 | tr '\n' ,)" = 'GET 410 false,GET 410 false,GET 200 false,POST 201 false,' ]
  awk -v g="$(gap 2 3)" 'BEGIN { exit !(g >= 1) }'
  [ "$(grep -c '410 Gone (our view is stale): listing again from scratch' "$T/plugin.log")" = 2 ]
  [ "$(grep -c 'dra: ResourceSlices: GET resourceslices: HTTP 410: .*; again in 2 s' "$T/plugin.log")" = 1 ]
}

@test "devices-dra: an API server without resource.k8s.io/v1 (before 1.34): one line naming it and the versions, no more; slices once it is served" {
  # a claim prepared while it was served
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  plugin_start
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  [[ "$output" == *'"cdi_device_ids": ["nodeprobe.io/claim=uid-1-serial-ttyusb0"]'* ]]
  kill "$PLUGIN"; wait "$PLUGIN"; PLUGIN=
  : > "$T/plugin.log"
  # kube-apiserver 1.32/1.33: no resource.k8s.io/v1 (its notfoundhandler answers 404)
  fake_ctl POST /faults '{"path":"^/apis/resource.k8s.io/v1/","code":404,"count":-1,"message":"the server could not find the requested resource"}' >/dev/null
  fake_ctl DELETE /requests >/dev/null
  plugin_start --dra-resync 1 --dra-sweep 1
  fake_wait_requests 'method=GET&path=resourceslices' 4 >/dev/null
  cat "$T/plugin.log" >&2
  # the sweep waits: a claim's 404 there says nothing about the claim
  [ "$(fake_ctl GET '/requests?path=resourceclaims&count=1' | jq .count)" = 0 ]
  [ -e "$T/cdi/nodeprobe.io-claim_uid-1.json" ]
  [ "$(jq -c '[.claims[].uid]' "$T/plugins/nodeprobe.io/checkpoint.json")" = '["uid-1"]' ]
  [ "$(grep -c 'resource.k8s.io/v1' "$T/plugin.log")" = 1 ]
  grep 'resource.k8s.io/v1' "$T/plugin.log" | grep 'does not serve resource.k8s.io/v1' | grep '1.34 or later' | grep -q '1.32 and 1.33 are not supported'
  [ "$(grep -c 'dra: ResourceSlices:' "$T/plugin.log")" = 0 ]
  # not a spin: one LIST a pass (2 s: about 2 more)
  n=$(fake_ctl GET '/requests?method=GET&path=resourceslices&count=1' | jq .count)
  sleep 2
  m=$(fake_ctl GET '/requests?method=GET&path=resourceslices&count=1' | jq .count)
  [ "$((m - n))" -le 4 ]
  # the API server upgraded: published at the next pass, said once
  fake_ctl DELETE /faults >/dev/null
  dra_wait ctl_slices_are '[{"gen":1,"count":1,"pool":"node1","n":2}]'
  dra_wait grep -q 'the API server serves resource.k8s.io/v1 now' "$T/plugin.log"
  [ "$(grep -c 'does not serve resource.k8s.io/v1' "$T/plugin.log")" = 1 ]
  # then the sweep runs, and keeps the claim the API server has
  fake_wait_requests 'method=GET&path=resourceclaims/c1' >/dev/null
  [ "$(jq -c '[.claims[].uid]' "$T/plugins/nodeprobe.io/checkpoint.json")" = '["uid-1"]' ]
}

@test "devices-dra: ResourceSlices: 300 devices are 3 slices of 128 at most, one generation" {
  for i in $(seq 2 299); do mknode "$T/dev/ttyUSB$i"; done
  plugin_start
  gens() { [ "$(slices | jq -c '[.[] | [.gen, .count]] | unique')" = '[[1,3]]' ]; }
  dra_wait gens
  slices >&2
  [ "$(slices | jq -c '[.[].n] | sort')" = '[44,128,128]' ]
  # every device once
  [ "$(fake_api GET /apis/resource.k8s.io/v1/resourceslices | jq '[.items[].spec.devices[].name] | unique | length')" = 300 ]
}

@test "devices-dra: API server slow for one claim: that claim fails after the timeout, the other is prepared" {
  claim slow uid-s "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  claim fast uid-f "[$(res ser nodeprobe.io node1 serial-ttyusb1)]"
  plugin_start
  fake_ctl POST /faults '{"method":"GET","path":"resourceclaims/slow$","action":"delay","seconds":7,"count":-1}' >/dev/null
  run "${DK[@]}" prepare "$EP" v1beta1 '[{"namespace":"default","uid":"uid-s","name":"slow"},{"namespace":"default","uid":"uid-f","name":"fast"}]'
  echo "$output" >&2
  [[ "$(jq -r '.claims["uid-s"].error' <<<"$output")" == *"claim default/slow:"* ]]
  [ "$(jq -r '.claims["uid-f"].devices[0].device_name' <<<"$output")" = serial-ttyusb1 ]
  [ ! -e "$T/cdi/nodeprobe.io-claim_uid-s.json" ]
}

@test "devices-dra: a checkpoint that cannot be written: the claim's spec is taken back, the claim fails" {
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  plugin_start
  mkdir -p "$T/plugins/nodeprobe.io/checkpoint.json"   # a directory: the rename fails
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  echo "$output" >&2
  [[ "$(jq -r '.claims["uid-1"].error' <<<"$output")" == *"checkpoint: "* ]]
  [ ! -e "$T/cdi/nodeprobe.io-claim_uid-1.json" ]
  rmdir "$T/plugins/nodeprobe.io/checkpoint.json"
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  [ "$(jq -r '.claims["uid-1"].devices[0].device_name' <<<"$output")" = serial-ttyusb0 ]
  [ -e "$T/cdi/nodeprobe.io-claim_uid-1.json" ]
}

@test "devices-dra: after a reboot (CDI dir emptied, checkpoint kept) a repeated prepare writes the spec again" {
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  plugin_start
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  F="$T/cdi/nodeprobe.io-claim_uid-1.json"
  [ -e "$F" ]
  cp "$F" "$T/spec.before"
  kill "$PLUGIN"; wait "$PLUGIN"; PLUGIN=
  rm -f "$T"/cdi/*   # /var/run/cdi is a tmpfs; the checkpoint under the plugins dir survives
  plugin_start
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  echo "$output" >&2
  [ "$(jq -c '.claims["uid-1"].devices[0].cdi_device_ids' <<<"$output")" = '["nodeprobe.io/claim=uid-1-serial-ttyusb0"]' ]
  [ -e "$F" ]
  cmp "$F" "$T/spec.before"
}

@test "devices-dra: a file named like a claim spec that we did not write is never deleted; claim_ classes refused" {
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  # a device-plugin class claim_x's spec, a spec of another kind, a spec naming other devices,
  # a symlink: none ours
  echo '{"cdiVersion":"0.5.0","kind":"nodeprobe.io/claim_x","devices":[{"name":"a","containerEdits":{}}]}' > "$T/cdi/nodeprobe.io-claim_x.json"
  echo '{"cdiVersion":"0.5.0","kind":"nodeprobe.io/claim","devices":[{"name":"uid-9x-a"}]}' > "$T/cdi/nodeprobe.io-claim_uid-9.json"
  echo '{"cdiVersion":"0.5.0","kind":"nodeprobe.io/claim","devices":[]}' > "$T/target.json"
  ln -s "$T/target.json" "$T/cdi/nodeprobe.io-claim_uid-8.json"
  echo '{"cdiVersion":"0.5.0","kind":"nodeprobe.io/claim","devices":[{"name":"uid-7-serial-ttyusb0"}]}' > "$T/cdi/nodeprobe.io-claim_uid-7.json"
  plugin_start   # the start-up cleanup is done before the registration socket is there
  ls -l "$T/cdi" >&2
  [ -e "$T/cdi/nodeprobe.io-claim_x.json" ]
  grep -q 'nodeprobe.io-claim_x.json: named like a claim spec but not ours' "$T/plugin.log"
  [ -e "$T/cdi/nodeprobe.io-claim_uid-9.json" ]
  [ -L "$T/cdi/nodeprobe.io-claim_uid-8.json" ]
  [ ! -e "$T/cdi/nodeprobe.io-claim_uid-7.json" ]   # ours, no checkpoint: removed
  # Unprepare of a claim we do not know leaves a foreign file of its name alone
  run "${DK[@]}" unprepare "$EP" v1 '[{"namespace":"default","uid":"x","name":"c9"},{"namespace":"default","uid":"uid-9","name":"c9"}]'
  echo "$output" >&2
  [ "$output" = '{"claims": {"uid-9": {}, "x": {}}}' ]
  [ -e "$T/cdi/nodeprobe.io-claim_x.json" ]
  [ -e "$T/cdi/nodeprobe.io-claim_uid-9.json" ]
  kill "$PLUGIN"; wait "$PLUGIN"; PLUGIN=
  # a device-plugin class whose CDI class begins with claim_ beside a DRA class: refused
  cat >> "$T/classes.yaml" <<'YAML'
---
apiVersion: nodeprobe.io/v1alpha1
kind: DeviceClass
metadata: {name: claim_x}
spec: {preset: kvm}
YAML
  run "$D" "${DA[@]}" --node-name node1
  echo "$output" >&2
  [ "$status" -eq 2 ]
  [[ "$output" == *"class claim_x: CDI class 'claim_x' begins with 'claim_'"* ]]
}

@test "devices-dra: an unprepare whose checkpoint cannot be written fails; the spec and entry stay" {
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  plugin_start
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  F="$T/cdi/nodeprobe.io-claim_uid-1.json"
  [ -e "$F" ]
  CP="$T/plugins/nodeprobe.io/checkpoint.json"
  mv "$CP" "$T/cp.saved"; mkdir "$CP"   # a directory: the rename fails
  run "${DK[@]}" unprepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  echo "$output" >&2
  [[ "$(jq -r '.claims["uid-1"].error' <<<"$output")" == *"not unprepared: checkpoint: "* ]]
  [ -e "$F" ]
  rmdir "$CP"; mv "$T/cp.saved" "$CP"
  # the kubelet asks again: now it is unprepared
  run "${DK[@]}" unprepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  [ "$output" = '{"claims": {"uid-1": {}}}' ]
  [ ! -e "$F" ]
  [ "$(jq '.claims | length' "$CP")" = 0 ]
}

@test "devices-dra: claim UIDs not usable in a file name or CDI id fail; a driver name must begin with a letter" {
  plugin_start
  for u in 'a_b' '../x' "$(printf 'a%.0s' $(seq 37))" 'a.b'; do
    run "${DK[@]}" prepare "$EP" v1 "[{\"namespace\":\"default\",\"uid\":\"$u\",\"name\":\"c1\"}]"
    echo "$output" >&2
    [[ "$(jq -r --arg u "$u" '.claims[$u].error' <<<"$output")" == *"want 1 to 36 letters, digits or '-'"* ]]
    run "${DK[@]}" unprepare "$EP" v1 "[{\"namespace\":\"default\",\"uid\":\"$u\",\"name\":\"c1\"}]"
    [[ "$(jq -r --arg u "$u" '.claims[$u].error' <<<"$output")" == *"want 1 to 36 letters, digits or '-'"* ]]
  done
  [ -z "$(ls "$T/cdi" | grep claim_)" ]
  kill "$PLUGIN"; wait "$PLUGIN"; PLUGIN=
  run "$D" "${DA[@]}" --node-name node1 --dra-driver 9p.example.com
  echo "$output" >&2
  [ "$status" -eq 2 ]
  [[ "$output" == *"--dra-driver '9p.example.com': not a DNS subdomain of at most 63 characters beginning with a letter"* ]]
}

@test "devices-dra: README's claims name only attributes we publish, and each picks a device of the fixture node" {
  [ "$(id -u)" = 0 ] || skip "mknod needs root"
  command -v kubectl >/dev/null || skip "kubectl absent: components/dra is not rendered"
  rm -f "$T/dev/ttyUSB0" "$T/dev/ttyUSB1" "$T/dev/kvm"
  mkdir -p "$T/dev/dri" "$T/sys/dev/char" "$T/sys/bus/pci/drivers/i915" "$T/sys/bus/pci/drivers/xhci_hcd" "$T/sys/class/drm"
  mknod "$T/dev/dri/card0" c 226 0 && mknod "$T/dev/dri/renderD128" c 226 128 &&
    mknod "$T/dev/ttyUSB0" c 188 0 && mknod "$T/dev/ttyUSB1" c 188 1 && mknod "$T/dev/kvm" c 10 232 ||
    skip "mknod refused here"
  # an Intel iGPU (8086:46a6, VGA 030000, i915) at 0000:00:02.0: card0 and renderD128
  G="$T/sys/devices/pci0000:00/0000:00:02.0"
  mkdir -p "$G/drm/card0" "$G/drm/renderD128"
  echo 0x8086 > "$G/vendor"; echo 0x46a6 > "$G/device"; echo 0x030000 > "$G/class"
  ln -s ../../../bus/pci/drivers/i915 "$G/driver"; ln -s ../../../0000:00:02.0 "$G/drm/card0/device"
  ln -s ../../devices/pci0000:00/0000:00:02.0/drm/card0 "$T/sys/class/drm/card0"
  ln -s ../../devices/pci0000:00/0000:00:02.0/drm/card0 "$T/sys/dev/char/226:0"
  # a CP210x stick (10c4:ea60) on USB 1-4 of the xHCI controller 0000:00:14.0
  U="$T/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4"
  mkdir -p "$U/1-4:1.0/ttyUSB0/tty/ttyUSB0"
  echo 0x8086 > "$U/../../vendor"; echo 0x0c0330 > "$U/../../class"
  echo 10c4 > "$U/idVendor"; echo ea60 > "$U/idProduct"; echo 0001 > "$U/serial"
  ln -s ../../devices/pci0000:00/0000:00:14.0/usb1/1-4/1-4:1.0/ttyUSB0/tty/ttyUSB0 "$T/sys/dev/char/188:0"
  # and ttyUSB1, with nothing in sysfs: a serial device without USB attributes
  # the classes components/dra ships, served as it serves them
  cp "$NP_ROOT/k8s/devices/components/dra/classes.yaml" "$T/classes.yaml"
  plugin_start
  dra_wait slices_are '[{"gen":1,"count":1,"pool":"node1","n":4}]'
  fake_api GET /apis/resource.k8s.io/v1/resourceslices >"$T/slices.json"
  [ "$(jq -r '[.items[].spec.devices[].name] | sort | join(" ")' "$T/slices.json")" = "gpu-card0 serial-ttyusb0 serial-ttyusb1 vm-kvm" ]
  "$NP_ROOT/test/k8s/render" "$NP_ROOT/k8s/devices/with-dra" >"$T/shipped.json"
  "$NP_ROOT/test/k8s/readme-claims" "$NP_ROOT/README.md" "$T/slices.json" "$T/shipped.json"
  # and kubectl takes them (kinds and scopes from discovery)
  "$NP_ROOT/test/k8s/readme-claims" --dump "$NP_ROOT/README.md" >"$T/readme.json"
  [ "$(fake_dry_run "$T/readme.json" | sort | tr '\n' ' ')" = "pod/jellyfin pod/vm-test pod/zigbee2mqtt resourceclaim.resource.k8s.io/zigbee-stick resourceclaimtemplate.resource.k8s.io/intel-igpu resourceclaimtemplate.resource.k8s.io/kvm " ]
  # the check has teeth: an attribute we do not publish, a value no device has, an unguarded
  # attribute a device lacks, a class nobody ships
  sed -n '/^#### Claims (DRA)/,/^#### Deployment (DRA)/p' "$NP_ROOT/README.md" >"$T/claims.md"
  t() {
    sed "$1" "$T/claims.md" >"$T/bad.md"
    run "$NP_ROOT/test/k8s/readme-claims" "$T/bad.md" "$T/slices.json" "$T/shipped.json"
    [ "$status" -eq 1 ] && [[ $output == *"$2"* ]] || { echo "$1: want '$2', got $status: $output" >&2; return 1; }
  }
  t 's/?pciDriver/?pciKernelDriver/' 'attribute pciKernelDriver: not published'
  t 's/"i915"/"xe"/' 'picks no published device of class gpu'
  t 's/?usbVendorID.orValue("")/usbVendorID/' 'usbVendorID: unguarded'
  t 's/vm.nodeprobe.io/kvm.nodeprobe.io/' 'deviceClassName kvm.nodeprobe.io: not a shipped DeviceClass'
  t 's/claims: \[{name: stick}\]/claims: [{name: zigbee}]/' "claim 'zigbee' is not in spec.resourceClaims"
}

@test "devices-dra: ResourceSlices are owned by their Node; a forbidden Node GET publishes without the owner, one warning" {
  fake_put '{"apiVersion":"v1","kind":"Node","metadata":{"name":"node1","uid":"0b7f5d2c-node-1"}}'
  plugin_start
  dra_wait slices_are '[{"gen":1,"count":1,"pool":"node1","n":2}]'
  [ "$(fake_api GET /apis/resource.k8s.io/v1/resourceslices | jq -c '.items[0].metadata.ownerReferences')" = \
    '[{"apiVersion":"v1","kind":"Node","name":"node1","uid":"0b7f5d2c-node-1","controller":true}]' ]
  # the Node is read once a run, not at every sync
  : > "$T/dev/video0"
  lists=$(fake_ctl GET '/requests?method=GET&path=resourceslices&count=1' | jq .count)
  rm "$T/dev/video0"
  fake_wait_requests "method=GET&path=resourceslices&min=$((lists + 1))" "$((lists + 1))" >/dev/null
  [ "$(fake_ctl GET '/requests?method=GET&path=nodes/node1&count=1' | jq .count)" = 1 ]
  # no get on nodes (403): written again without the owner, warned once over several syncs
  kill "$PLUGIN"; wait "$PLUGIN"; PLUGIN=
  fake_ctl POST /faults '{"method":"GET","path":"nodes/node1","code":403,"count":-1}' >/dev/null
  plugin_start
  dra_wait slices_are '[{"gen":2,"count":1,"pool":"node1","n":2}]'
  [ "$(fake_api GET /apis/resource.k8s.io/v1/resourceslices | jq -c '.items[0].metadata.ownerReferences')" = null ]
  lists=$(fake_ctl GET '/requests?method=GET&path=resourceslices&count=1' | jq .count)
  : > "$T/dev/video0"
  fake_wait_requests "method=GET&path=resourceslices&min=$((lists + 1))" "$((lists + 1))" >/dev/null
  cat "$T/plugin.log" >&2
  [ "$(grep -c 'GET nodes/node1: HTTP 403: the ResourceSlices are published without an ownerReference' "$T/plugin.log")" = 1 ]
  slices_are '[{"gen":2,"count":1,"pool":"node1","n":2}]'
}

@test "devices-dra: a serial number over the API's 64 bytes is left out, never cut, one warning; a long by-id name gets a hashed pool name" {
  rm "$T/dev/ttyUSB0"
  mknod "$T/dev/ttyUSB0" c 188 0 2>/dev/null || skip "mknod refused here"
  U="$T/sys/devices/pci0000:00/0000:00:14.0/usb1/1-4"
  mkdir -p "$U/1-4:1.0/ttyUSB0/tty/ttyUSB0" "$T/sys/dev/char"
  ln -s "../../devices/pci0000:00/0000:00:14.0/usb1/1-4/1-4:1.0/ttyUSB0/tty/ttyUSB0" "$T/sys/dev/char/188:0"
  echo 10c4 > "$U/idVendor"; echo ea60 > "$U/idProduct"
  printf 'A%.0s' $(seq 70) > "$U/serial"; echo >> "$U/serial"
  plugin_start
  dra_wait slices_are '[{"gen":1,"count":1,"pool":"node1","n":2}]'
  fake_api GET /apis/resource.k8s.io/v1/resourceslices | jq -c '.items[0].spec.devices[0]' > "$T/dev0.json"
  cat "$T/dev0.json" >&2
  [ "$(jq -r .name "$T/dev0.json")" = serial-ttyusb0 ]
  [ "$(jq -c '.attributes.usbVendorID' "$T/dev0.json")" = '{"string":"10c4"}' ]
  [ "$(jq -c '.attributes | has("usbSerial")' "$T/dev0.json")" = false ]
  # another sync (a hotplug): still left out, no second warning
  lists=$(fake_ctl GET '/requests?method=GET&path=resourceslices&count=1' | jq .count)
  : > "$T/dev/video0"
  fake_wait_requests "method=GET&path=resourceslices&min=$((lists + 1))" "$((lists + 1))" >/dev/null
  [ "$(grep -c "device serial-ttyusb0: attribute usbSerial left out: longer than the API's 64 bytes" "$T/plugin.log")" = 1 ]
  # a class over a device named longer than a DNS label: cut, with its hash; claims find it
  kill "$PLUGIN"; wait "$PLUGIN"; PLUGIN=
  cat > "$T/classes.yaml" <<'YAML'
apiVersion: nodeprobe.io/v1alpha1
kind: DeviceClass
metadata: {name: sticks}
spec: {api: dra, groups: [{paths: [{path: "/dev/serial/by-id/*"}]}]}
YAML
  mkdir -p "$T/dev/serial/by-id"
  mknode "$T/dev/serial/by-id/usb-Silicon_Labs_CP2102N_USB_to_UART_Bridge_Controller_3a2b-if00-port0" \
    "$T/dev/serial/by-id/usb-Silicon_Labs_CP2102N_USB_to_UART_Bridge_Controller_3a2b-if01-port0"
  fake_api DELETE "/apis/resource.k8s.io/v1/resourceslices/$(fake_api GET /apis/resource.k8s.io/v1/resourceslices | jq -r '.items[0].metadata.name')" >/dev/null
  plugin_start
  names() { fake_api GET /apis/resource.k8s.io/v1/resourceslices | jq -r '[.items[].spec.devices[].name] | sort | .[]'; }
  two() { [ "$(names | wc -l)" = 2 ]; } # a function: dra_wait retries it, names read each time
  dra_wait two
  names >&2
  for n in $(names); do
    [ "${#n}" = 63 ]
    [[ "$n" =~ ^sticks-usb-silicon-labs-cp2102n-usb-to-uart-bridge-c-[0-9a-f]{10}$ ]]
  done
  [ "$(names | sort -u | wc -l)" = 2 ]
  n=$(names | head -1)
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 "$n")]"
  run "${DK[@]}" prepare "$EP" v1 '[{"namespace":"default","uid":"uid-1","name":"c1"}]'
  echo "$output" >&2
  [ "$(jq -r '.claims["uid-1"].devices[0].device_name' <<<"$output")" = "$n" ]
}

@test "devices-dra: dra-bench (make bench's C client) checks every answer and prints its figures" {
  claim c1 uid-1 "[$(res ser nodeprobe.io node1 serial-ttyusb0)]"
  plugin_start
  DB=$BUILD/test/tools/dra-bench
  run "$DB" "$EP" 3 default c1 uid-1 "$T/kubeconfig"
  echo "$output" >&2
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "claim default/c1 (uid-1): request ser pool node1 device serial-ttyusb0 cdi nodeprobe.io/claim=uid-1-serial-ttyusb0" ]
  [[ "${lines[1]}" =~ ^prepare_calls=3\ p50_ms=[0-9]+\.[0-9]{3}\ p99_ms=[0-9]+\.[0-9]{3}\ max_ms=[0-9]+\.[0-9]{3}$ ]]
  [[ "${lines[2]}" =~ ^unprepare_calls=3\ p50_ms=[0-9.]+\ p99_ms=[0-9.]+\ max_ms=[0-9.]+$ ]]
  [[ "${lines[3]}" =~ ^claim_get_calls=3\ p50_ms=[0-9.]+\ p99_ms=[0-9.]+\ max_ms=[0-9.]+$ ]]
  [ "${#lines[@]}" -eq 4 ]
  # every round unprepared its claim: each prepare read it (warm-up + 3), nothing left behind
  [ "$(fake_ctl GET '/requests?path=resourceclaims/c1$&count=1' | jq .count)" = 8 ]
  [ "$(jq '.claims | length' "$T/plugins/nodeprobe.io/checkpoint.json")" = 0 ]
  [ -z "$(ls "$T/cdi" | grep claim_)" ]
  # a wrong answer fails by name: a claim the plugin cannot prepare (another pool)
  claim c2 uid-2 "[$(res ser nodeprobe.io node2 serial-ttyusb0)]"
  run "$DB" "$EP" 2 default c2 uid-2
  echo "$output" >&2
  [ "$status" -eq 1 ]
  [[ "$output" == *"dra-bench: NodePrepareResources: claim uid-2: error: "*"pool 'node2': not ours"* ]]
  run "$DB" "$EP" 0 default c1 uid-1
  [ "$status" -eq 2 ]
  [[ "$output" == "usage: dra-bench SOCK N NAMESPACE NAME UID [KUBECONFIG]" ]]
}


@test "devices-dra: tls-floor (make bench's OpenSSL floor) verifies the fake's certificate and prints each stage's RSS" {
  TF=$BUILD/test/tools/tls-floor
  run "$TF" 127.0.0.1 "$FAKE_PORT" "$FAKE_CA"
  echo "$output" >&2
  [ "$status" -eq 0 ]
  [ "$(cut -d' ' -f1 <<<"$output" | tr '\n' ' ')" = "start loaded init context request " ]
  for l in "${lines[@]}"; do [[ "$l" =~ ^[a-z]+\ hwm=[0-9]+\ anon=[0-9]+\ file=[0-9]+$ ]]; done
  # a CA that did not sign the fake's certificate fails the request
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=other -days 1 \
    -keyout "$T/other.key" -out "$T/other.crt" 2>/dev/null
  run "$TF" 127.0.0.1 "$FAKE_PORT" "$T/other.crt"
  [ "$status" -eq 1 ]
  [[ "$output" == *"tls-floor: TLS handshake or certificate verification failed"* ]]
  run "$TF" 127.0.0.1 0 "$FAKE_CA"
  [ "$status" -eq 2 ]
  [ "$output" = "usage: tls-floor IPV4 PORT CAFILE" ]
}
