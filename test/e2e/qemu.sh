#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The ARM images print what the amd64 image prints: each ARCH's image tree (scripts/image-rootfs:
# the stripped binaries and exactly the shared libraries the image ships) runs under Debian's
# qemu-user-static, called by name with -L the image's runtime tree (no binfmt_misc needed),
# on the board fixtures: Raspberry Pi 4, Jetson Nano (its blob with its PCI bus) and
# BeagleBone Black, each as a blob (--fdt) and as the live tree the kernel shows, with the
# built-in rules and with test/e2e/qemu-rules.yaml (Go regexes: RE2, linked statically);
# every PCI machine of test/fixtures; a truncated blob (exit 3 and its message); the other
# binaries' --version and --help, and nodeprobe-mirror configure's files. With ../shared/fixtures
# present, every blob and PCI machine there too. Each case's stdout, exit status and stderr
# must be byte for byte the amd64 ones.
#   test/e2e/qemu.sh [ARCH...]        ARCH: arm64, armhf (default both)
# Env: IMAGE_DIR: take the trees IMAGE_DIR/rootfs-<arch> that scripts/build-image left (built
# here when missing); default: build them in a scratch directory. BUILD: build dir with
# test/tools/dtb2fs (made when missing). SHARED: the ../shared directory.
# Exit 0 and last line "qemu e2e: ok ..." when every case matches; 1 on the first difference
# (shown with diff -u); 77 when a tool is missing (named; scripts/install-deps installs them).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-$ROOT/build}
SHARED=${SHARED:-${NP_SHARED:-$ROOT/../shared}}
FIX=$ROOT/test/fixtures
[ $# -gt 0 ] || set -- arm64 armhf

die() { echo "qemu e2e: error: $*" >&2; exit 1; }
missing() { echo "qemu e2e: missing: $* (scripts/install-deps)" >&2; exit 77; }
declare -A QEMU=([arm64]=qemu-aarch64-static [armhf]=qemu-arm-static)
for a in "$@"; do
  [ -n "${QEMU[$a]:-}" ] || die "unsupported architecture '$a' (arm64, armhf)"
  command -v "${QEMU[$a]}" >/dev/null || missing "${QEMU[$a]} (qemu-user-static)"
  command -v "$([ "$a" = arm64 ] && echo aarch64-linux-gnu || echo arm-linux-gnueabihf)-gcc" >/dev/null ||
    missing "crossbuild-essential-$a"
  [ -f "${NP_CROSS_ROOT:-/opt/nodeprobe-cross}/$a/.nodeprobe-packages" ] ||
    missing "the :$a sysroot ${NP_CROSS_ROOT:-/opt/nodeprobe-cross}/$a"
done

W=$(mktemp -d /tmp/np-qemu-e2e.XXXXXX)
trap 'rm -rf "$W"' EXIT
DIR=${IMAGE_DIR:-$W/image}
NATIVE=$(dpkg --print-architecture)
for a in "$NATIVE" "$@"; do
  [ -x "$DIR/rootfs-$a/app/usr/bin/nodeprobe" ] && continue
  echo "== scripts/image-rootfs $DIR/rootfs-$a $a"
  scripts/image-rootfs "$DIR/rootfs-$a" "$a"
done
[ -x "$BUILD/test/tools/dtb2fs" ] || make --no-print-directory BUILD="$BUILD" "$BUILD/test/tools/dtb2fs" >/dev/null

# run_arch ARCH BIN ARGS...: BIN of ARCH's image, natively or under qemu with the image's libraries.
run_arch() {
  local a=$1 bin=$2; shift 2
  local t=$DIR/rootfs-$a
  if [ "$a" = "$NATIVE" ]; then
    "$t/app/usr/bin/$bin" "$@"
  else
    "${QEMU[$a]}" -L "$t/runtime" "$t/app/usr/bin/$bin" "$@"
  fi
}

# Nothing of this machine leaks in: empty procfs and modules dir, sysfs roots from fixtures.
mkdir -p "$W/sys/bus" "$W/proc" "$W/modules"
NP=(--dry-run --proc "$W/proc" --modules-dir "$W/modules")
n=0
# same NAME BIN ARGS...: stdout, exit status and stderr of BIN ARGS on every ARCH are the native's.
same() {
  local name=$1 a rc; shift
  for a in "$NATIVE" "${ARCHS[@]}"; do
    rc=0
    run_arch "$a" "$@" >"$W/out.$a" 2>"$W/err.$a" || rc=$?
    { cat "$W/out.$a"; echo "exit $rc"; echo "--- stderr"; cat "$W/err.$a"; } >"$W/got.$a"
    [ "$a" = "$NATIVE" ] && continue
    diff -u --label "$NATIVE: $name" --label "$a: $name" "$W/got.$NATIVE" "$W/got.$a" ||
      die "$a differs from $NATIVE on: $name"
  done
  n=$((n + 1))
  printf '  same: %-58s exit %s, %s lines\n' "$name" "$rc" "$(wc -l <"$W/out.$NATIVE")"
}
ARCHS=("$@")

# A sysfs root whose firmware/devicetree/base is the live form of a blob (test/tools/dtb2fs).
tree_of() {
  local s=$W/tree-$(basename "$1" .dtb)
  [ -d "$s" ] || { mkdir -p "$s/bus" "$s/firmware/devicetree"; "$BUILD/test/tools/dtb2fs" "$1" "$s/firmware/devicetree/base"; }
  echo "$s"
}

echo "== nodeprobe on the board fixtures (${ARCHS[*]} under qemu-user, against $NATIVE)"
RULES=test/e2e/qemu-rules.yaml
RPI=$FIX/dtb/arm64/broadcom/bcm2711-rpi-4-b.dtb
NANO=$FIX/dtb/arm64/nvidia/tegra210-p3450-0000.dtb
BONE=$FIX/dtb/armhf/ti/am335x-boneblack.dtb
for b in "$RPI" "$NANO" "$BONE"; do
  name=${b#"$FIX"/dtb/}
  same "$name (blob)" nodeprobe "${NP[@]}" --sysfs "$W/sys" --fdt "$b"
  same "$name (live tree)" nodeprobe "${NP[@]}" --sysfs "$(tree_of "$b")"
  same "$name (blob, rules, -n timer -n i2c -n usb)" nodeprobe "${NP[@]}" --sysfs "$W/sys" --fdt "$b" \
    -r "$RULES" -n timer -n i2c -n usb
done
same "jetson nano: blob + its PCI bus (linuxhw)" nodeprobe "${NP[@]}" \
  --sysfs "$FIX/pci/linuxhw-jetson-nano-devkit" --fdt "$NANO" -r "$RULES"
head -c 2000 "$RPI" >"$W/truncated.dtb"
same "truncated blob (bad input)" nodeprobe "${NP[@]}" --sysfs "$W/sys" --fdt "$W/truncated.dtb"
same "rules on a tree with no devicetree" nodeprobe "${NP[@]}" --sysfs "$W/sys" -r "$RULES"

echo "== nodeprobe on every PCI machine of test/fixtures (built-in rules)"
for m in "$FIX"/pci/*/; do
  same "pci/$(basename "$m")" nodeprobe "${NP[@]}" --sysfs "$m"
done

echo "== the other binaries"
for b in nodeprobe nodeprobe-mirror nodeprobe-reload; do
  same "$b --version" "$b" --version
  same "$b --help" "$b" --help
done
margs=(--registry https://docker.io --registry https://gitea.example.internal:3000
       --mirror-target http://10.0.0.5:29999 --resolve-tags=true --dial-timeout=200ms)
for a in "$NATIVE" "${ARCHS[@]}"; do
  mkdir "$W/certs.d-$a"
  run_arch "$a" nodeprobe-mirror configure --config-path "$W/certs.d-$a" "${margs[@]}" 2>"$W/mirror-err.$a"
done
for a in "${ARCHS[@]}"; do
  diff -ru "$W/certs.d-$NATIVE" "$W/certs.d-$a" || die "$a: nodeprobe-mirror configure wrote other files"
  diff -u "$W/mirror-err.$NATIVE" "$W/mirror-err.$a" || die "$a: nodeprobe-mirror configure said other things"
done
n=$((n + 1))
echo "  same: nodeprobe-mirror configure: $(find "$W/certs.d-$NATIVE" -type f | wc -l) files"

if [ -d "$SHARED/fixtures" ]; then
  echo "== the sweep of $SHARED/fixtures"
  while IFS= read -r b; do
    same "shared ${b#"$SHARED"/fixtures/}" nodeprobe "${NP[@]}" --sysfs "$W/sys" --fdt "$b"
  done < <(find "$SHARED/fixtures/dtb" -name '*.dtb' | LC_ALL=C sort)
  for m in "$SHARED"/fixtures/pci/*-*/; do
    [ -d "$m/bus/pci/devices" ] || continue
    same "shared pci/$(basename "$m")" nodeprobe "${NP[@]}" --sysfs "$m"
  done
else
  echo "== $SHARED/fixtures absent: its sweep skipped"
fi
echo "qemu e2e: ok: $n cases, ${ARCHS[*]} identical to $NATIVE"
