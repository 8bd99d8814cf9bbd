#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# hotplug-usb.sh T D FK: run under `unshare -m` as root. A tmpfs dev root with real character
# nodes (mknod), a sysfs tree with USB devices and their interfaces; the test kubelet watches a
# DeviceClass (matchFeatures on usb.device) while a second stick comes and the first one goes.
# Prints the ListAndWatch messages, then the Allocate answer; exit 77 when mknod is refused.
set -eu
T=$1 D=$2 FK=$3
mkdir -p "$T/dev" "$T/sys/bus/usb/devices" "$T/kl" "$T/cdi"
mount -t tmpfs devtmp "$T/dev"
mknod "$T/dev/ttyUSB0" c 188 0 2>/dev/null || exit 77
stick() { # stick NAME SERIAL TTY
  local d="$T/sys/bus/usb/devices/$1"
  mkdir -p "$d/$1:1.0/$3"
  echo 10c4 > "$d/idVendor"; echo ea60 > "$d/idProduct"; echo "$2" > "$d/serial"
  echo 00 > "$d/bDeviceClass"; echo 1 > "$d/busnum"; echo 5 > "$d/devnum"
  echo ff > "$d/$1:1.0/bInterfaceClass"
}
stick 1-1 ZB0001 ttyUSB0
mkdir -p "$T/dev/serial/by-id"
ln -s ../../ttyUSB0 "$T/dev/serial/by-id/usb-Silicon_Labs_ZB0001-if00-port0"
cat > "$T/classes.yaml" <<'YAML'
apiVersion: nodeprobe.io/v1alpha1
kind: DeviceClass
metadata: {name: zigbee}
spec:
  resource: nodeprobe.io/zigbee
  matchFeatures:
  - feature: usb.device
    matchExpressions:
      vendor: {op: In, value: ["10c4"]}
      device: {op: In, value: ["ea60"]}
YAML
/usr/bin/python3 "$FK" serve "$T/kl" & K=$!
trap 'kill $K $P 2>/dev/null; wait; umount "$T/dev"' EXIT
for i in $(seq 50); do [ -S "$T/kl/kubelet.sock" ] && break; sleep 0.1; done
"$D" --classes "$T/classes.yaml" --dev-root "$T/dev" --sys-root "$T/sys" --cdi-dir "$T/cdi" \
  --plugin-directory "$T/kl" 2> "$T/plugin.log" & P=$!
/usr/bin/python3 "$FK" wait-reg "$T/kl" 1 > /dev/null
S="$T/kl/nodeprobe-nodeprobe.io_zigbee.sock"
/usr/bin/python3 "$FK" watch "$S" 3 10 > "$T/watch.out" & W=$!
for i in $(seq 50); do [ -s "$T/watch.out" ] && break; sleep 0.1; done
stick 1-2 ZB0002 ttyUSB1            # the kernel makes the sysfs device, then the node
mknod "$T/dev/ttyUSB1" c 188 1
sleep 0.5
rm "$T/dev/ttyUSB0"; rm -r "$T/sys/bus/usb/devices/1-1"
wait $W
cat "$T/watch.out"
/usr/bin/python3 "$FK" call "$S" Allocate '{"container_requests": [{"devices_ids": ["ttyUSB1-0"]}]}'
echo
cat "$T/cdi/nodeprobe.io-zigbee.json"
kill -TERM $P; wait $P
[ ! -e "$S" ] && echo "socket removed"
