#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-devices' CDI specs read by a real CDI consumer (issue 26 section 4): the CDI reference
# library (Debian's golang-github-container-orchestrated-devices-container-device-interface-dev,
# 0.5.2, with golang-go; scripts/install-deps installs both) through test/devices/cdi-consumer.go,
# built here in GOPATH mode (GO111MODULE=off, nothing fetched). The plugin serves classes to the
# test kubelet; every CDI name its Allocate answers hand out is resolved by the library and
# applied to an OCI spec, which must hold exactly the device nodes and mounts the class names.
load helpers

GOSRC=/usr/share/gocode/src/github.com/container-orchestrated-devices/container-device-interface

setup_file() {
  # Missing Go or the CDI library is a failure, not a skip: install-deps installs them.
  command -v go >/dev/null || { echo "go absent: run scripts/install-deps" >&2; return 1; }
  [ -d "$GOSRC/pkg/cdi" ] || { echo "$GOSRC absent: run scripts/install-deps" >&2; return 1; }
  local out="$BUILD/test/devices" gp
  mkdir -p "$out"
  if [ ! -x "$out/cdi-consumer" ] || [ "$NP_ROOT/test/devices/cdi-consumer.go" -nt "$out/cdi-consumer" ]; then
    gp=$(mktemp -d)
    mkdir -p "$gp/src/cdi-consumer"
    cp "$NP_ROOT/test/devices/cdi-consumer.go" "$gp/src/cdi-consumer/main.go"
    GO111MODULE=off GOPATH="$gp:/usr/share/gocode" GOCACHE="$out/gocache" GOFLAGS= \
      go build -o "$out/cdi-consumer.tmp" cdi-consumer >&2 || { rm -rf "$gp"; return 1; }
    mv "$out/cdi-consumer.tmp" "$out/cdi-consumer"
    rm -rf "$gp"
  fi
}

setup() {
  T=$(mktemp -d)
  mkdir -p "$T/dev/serial/by-id" "$T/dev/snd/by-path" "$T/sys/class/tty" "$T/kl" "$T/cdi"
  D="$BUILD/nodeprobe-devices"
  CC="$BUILD/test/devices/cdi-consumer"
  FK=$NP_ROOT/test/kubelet/fake-kubelet.py
  export FAKE_KUBELET_GEN=$T/gen
}

teardown() {
  stop_plugin
  rm -rf "$T"
}

# node PATH MAJOR MINOR: a character node (distinct numbers: the OCI spec names nodes by them).
node() {
  mknod "$T/dev/$1" c "$2" "$3" 2>/dev/null || skip "mknod refused (device nodes need root)"
}

# consumer ARGS...: the CDI consumer with the dev root bind-mounted on /dev, as a runtime on the
# host sees it (the library reads each deviceNode's type and major:minor from its hostPath).
consumer() {
  unshare -m sh -c 'mount --bind "$0" /dev && exec "$@"' "$T/dev" "$CC" "$@"
}

@test "devices-cdi: the CDI library loads every spec, resolves every CDI name Allocate hands out, and the OCI spec holds exactly the class's nodes and mounts" {
  /usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null || skip "python3-grpcio/grpc-tools absent"
  unshare -m true 2>/dev/null || skip "unshare -m refused here"
  node ttyUSB0 188 0; node ttyUSB1 188 1; node kvm 10 232
  node snd/controlC0 116 2; node snd/pcmC0D0c 116 3; node 'weird-' 1 7
  ln -s ../../ttyUSB1 "$T/dev/serial/by-id/usb-FTDI_FT232R-if00-port0"
  ln -s ../../../kl "$T/dev/serial/by-id/usb-evil" # out of the dev root: never handed out
  /usr/bin/python3 "$FK" serve "$T/kl" & KUBELET=$!
  wait_for test -S "$T/kl/kubelet.sock"
  "$D" --preset serial --preset kvm --domain nodeprobe.io \
    --device '{"name": "audio", "groups": [{"paths": [{"path": "/dev/snd"}]}]}' \
    --device '{"name": "byid", "groups": [{"paths": [{"path": "/dev/serial/by-id/*"}, {"path": "/sys/class/tty", "type": "Mount", "readOnly": true}]}]}' \
    --device '{"name": "odd", "groups": [{"paths": [{"path": "/dev/weird*"}]}]}' \
    --device '{"name": "9p.usb", "groups": [{"paths": [{"path": "/dev/ttyUSB0"}]}]}' \
    --dev-root "$T/dev" --sys-root "$T/sys" --cdi-dir "$T/cdi" --plugin-directory "$T/kl" \
    2> "$T/plugin.log" & PLUGIN=$!
  run /usr/bin/python3 "$FK" wait-reg "$T/kl" 6
  [ "$status" -eq 0 ]
  : > "$T/names"
  for r in serial kvm audio byid odd 9p.usb; do
    S="$T/kl/nodeprobe-nodeprobe.io_$r.sock"
    ids=$(/usr/bin/python3 "$FK" watch "$S" 1 10 | grep -o '"ID": "[^"]*"' | cut -d'"' -f4 |
          sed 's/.*/"&"/' | paste -sd, -)
    run /usr/bin/python3 "$FK" call "$S" Allocate "{\"container_requests\": [{\"devices_ids\": [$ids]}]}"
    echo "--- $r: $output" >&2
    [[ "$output" != *'"code"'* ]]
    grep -o '"cdi_devices": \[[^]]*\]' <<<"$output" | grep -o 'nodeprobe.io/[^"]*' >> "$T/names"
  done
  cat "$T/plugin.log" >&2
  for f in "$T"/cdi/*.json; do echo "--- $f" >&2; cat "$f" >&2; done
  # every spec loads, and the names it defines are exactly those handed out
  run consumer "$T/cdi"
  echo "--- the library's devices: $output" >&2
  [ "$status" -eq 0 ]
  diff -u <(sort "$T/names") <(printf '%s\n' "$output" | sort)
  # each name resolves; the OCI spec holds exactly its nodes (by major:minor) and mounts
  expect() { # NAME LINE...
    local n=$1; shift
    run consumer "$T/cdi" "$n"
    echo "--- $n: $status $output" >&2
    [ "$status" -eq 0 ]
    diff -u <(printf '%s\n' "$@") <(printf '%s\n' "$output")
  }
  expect nodeprobe.io/serial=ttyUSB0 "device /dev/ttyUSB0 c 188:0 rw"
  expect nodeprobe.io/serial=ttyUSB1 "device /dev/ttyUSB1 c 188:1 rw"
  expect nodeprobe.io/kvm=kvm "device /dev/kvm c 10:232 rw"
  expect nodeprobe.io/audio=snd "device /dev/snd/controlC0 c 116:2 mrw" "device /dev/snd/pcmC0D0c c 116:3 mrw"
  expect nodeprobe.io/byid=usb-FTDI_FT232R-if00-port0 \
    "device /dev/serial/by-id/usb-FTDI_FT232R-if00-port0 c 188:1 mrw" \
    "mount /sys/class/tty /sys/class/tty bind ro,nosuid,nodev,rbind"
  expect nodeprobe.io/odd=weird "device /dev/weird- c 1:7 mrw"
  # a class name that is no CDI class before CDI 0.6.0 (a leading digit, a dot) gets one
  expect nodeprobe.io/c9p_usb=ttyUSB0 "device /dev/ttyUSB0 c 188:0 mrw"
  [ "$(wc -l < "$T/names")" -eq 7 ]
}

@test "devices-cdi: two classes with one CDI class exit 2 naming both (unless --cdi=false)" {
  node kvm 10 232
  run "$D" --device 'a.b,/dev/kvm' --device 'a_b,/dev/kvm' --dev-root "$T/dev" --sys-root "$T/sys" \
    --cdi-dir "$T/cdi" --plugin-directory "$T/kl"
  [ "$status" -eq 2 ]
  [ "$output" = "nodeprobe-devices: error: classes 'a.b' and 'a_b' have one CDI class, 'a_b': rename one" ]
  [ -z "$(find "$T/kl" "$T/cdi" -mindepth 1)" ]
}
