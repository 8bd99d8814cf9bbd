# SPDX-License-Identifier: GPL-2.0-or-later
# The DRA suites' set-up (devices-dra.bats, devices-dra-worker.bats, devices-dra-go.bats): the fake
# API server, the test kubelet, one serial DRA class and one kvm device-plugin class, and small
# helpers.
source "$NP_ROOT/test/fake-apiserver/fake.bash"

# dra_wait CMD...: retry CMD for up to 30 s (a socket, a log line; a sanitizer build on a loaded
# machine is slow, and waiting longer costs nothing when it comes).
dra_wait() {
  local i
  for i in $(seq 300); do "$@" && return 0; sleep 0.1; done
  return 1
}

# dra_setup_file: the certificates and the Python kubelet's stubs, once a file (setup_file).
dra_setup_file() {
  export FAKE_CERTS=$BATS_FILE_TMPDIR/certs
  fake_certs "$FAKE_CERTS" >/dev/null
  export DRA_KUBELET_GEN=$BATS_FILE_TMPDIR/gen
  /usr/bin/python3 "$NP_ROOT/test/kubelet/dra-kubelet.py" gen || true
}

setup_file() { dra_setup_file; }

setup() {
  /usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null || skip "python3-grpcio/grpc-tools absent"
  T=$BATS_TEST_TMPDIR
  mkdir -p "$T/dev" "$T/sys" "$T/kl" "$T/reg" "$T/plugins" "$T/cdi"
  mknode "$T/dev/ttyUSB0" "$T/dev/ttyUSB1" "$T/dev/kvm" # char nodes: a class offers nothing else
  cat > "$T/classes.yaml" <<'YAML'
apiVersion: nodeprobe.io/v1alpha1
kind: DeviceClass
metadata: {name: serial}
spec: {preset: serial, api: dra}
---
apiVersion: nodeprobe.io/v1alpha1
kind: DeviceClass
metadata: {name: kvm}
spec: {preset: kvm, count: 1}
YAML
  D="$BUILD/nodeprobe-devices"
  # the plugin's roots and API server, every test alike (--node-name is each run's)
  DA=(--classes "$T/classes.yaml" --dev-root "$T/dev" --sys-root "$T/sys" --cdi-dir "$T/cdi"
    --plugin-directory "$T/kl" --plugins-registry "$T/reg" --dra-plugins-dir "$T/plugins"
    --kubeconfig "$T/kubeconfig")
  DK=(/usr/bin/python3 "$NP_ROOT/test/kubelet/dra-kubelet.py")
  EP="$T/plugins/nodeprobe.io/dra.sock"
  PLUGIN=
  fake_start
  fake_kubeconfig "$T/kubeconfig"
}

teardown() {
  [ -n "${PLUGIN:-}" ] && kill "$PLUGIN" 2>/dev/null && wait "$PLUGIN" 2>/dev/null
  fake_stop
}

plugin_start() {
  "$D" "${DA[@]}" --node-name node1 "$@" 2>> "$T/plugin.log" & PLUGIN=$!
  dra_wait test -S "$T/reg/nodeprobe.io-reg.sock"
}

# claim NAME UID RESULTS-JSON: a ResourceClaim in namespace default, allocated with RESULTS
claim() {
  fake_put "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",
    \"metadata\":{\"name\":\"$1\",\"namespace\":\"default\",\"uid\":\"$2\"},
    \"spec\":{\"devices\":{\"requests\":[{\"name\":\"ser\",\"exactly\":{\"deviceClassName\":\"serial.nodeprobe.io\"}}]}},
    \"status\":{\"allocation\":{\"devices\":{\"results\":$3}}}}"
}

res() { # res REQUEST DRIVER POOL DEVICE
  printf '{"request":"%s","driver":"%s","pool":"%s","device":"%s"}' "$1" "$2" "$3" "$4"
}

slices() {
  fake_api GET '/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.driver%3Dnodeprobe.io%2Cspec.nodeName%3Dnode1' |
    jq -c '[.items[] | {gen: .spec.pool.generation, count: .spec.pool.resourceSliceCount, pool: .spec.pool.name, n: (.spec.devices | length)}]'
}

slices_are() { [ "$(slices)" = "$1" ]; }

writes() { fake_ctl GET '/requests?method=POST|PUT|DELETE&path=resourceslices&count=1' | jq .count; }

# registered_ok JSON: a test kubelet's registration answer (dra-kubelet.py's or go-kubelet's) is
# ours: DRAPlugin nodeprobe.io at $EP, both versions, v1 first and so chosen.
registered_ok() {
  jq -e --arg ep "$EP" '.type == "DRAPlugin" and .name == "nodeprobe.io" and .endpoint == $ep and
    .supported_versions == ["v1.DRAPlugin", "v1beta1.DRAPlugin"] and .chosen == "v1.DRAPlugin"' <<<"$1"
}
