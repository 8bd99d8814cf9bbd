#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The container image: built without a daemon (scripts/build-image), its file list, its
# reproducibility, and an end-to-end run through a registry, containerd and runc
# (test/e2e/image.sh). Needs root for the end-to-end part, as CI has.
load helpers

setup() {
  cd "$NP_ROOT"
  W=$(mktemp -d)
}

teardown() {
  rm -rf "$W"
}

# All four binaries must exist for the image; no silent partial image.
need_all_binaries() {
  local missing=()
  [ -f cmd/nodeprobe/main.c ] || missing+=(nodeprobe)
  [ -f hooks/mirror/main.c ] || missing+=(nodeprobe-mirror)
  [ -f hooks/reload/main.c ] || missing+=(nodeprobe-reload)
  [ -f hooks/devices/main.c ] || missing+=(nodeprobe-devices)
  [ ${#missing[@]} -eq 0 ] || { echo "image needs all four binaries; not in this tree: ${missing[*]}" >&2; return 1; }
}

@test "image-rootfs refuses to build an image without all four binaries" {
  need_all_binaries
  # the sources only: build directories are not copied (another suite may be writing into
  # one, e.g. cross.bats's $BUILD/cross, while make test runs suites side by side)
  mkdir "$W/tree"
  tar -C "$NP_ROOT" --exclude=./.git --exclude='./build*' -cf - . | tar -C "$W/tree" -xf -
  rm -rf "$W/tree/hooks/reload"
  run "$W/tree/scripts/image-rootfs" "$W/out"
  [ "$status" -eq 1 ]
  [[ $output == *"binaries not built"*"nodeprobe-reload"* ]]
}

@test "image files: the binaries, exactly the libraries ldd lists, CA bundle, non-root user" {
  need_all_binaries
  scripts/image-rootfs "$W/r" >/dev/null
  local f=$W/r/files.txt
  for b in nodeprobe nodeprobe-mirror nodeprobe-reload nodeprobe-devices; do
    grep -q "^-rwxr-xr-x [0-9]* app/usr/bin/$b\$" "$f"
  done
  # The library set is ldd's, for the four binaries together, nothing more or less.
  for b in "$W"/r/app/usr/bin/*; do ldd "$b"; done |
    awk '$2 == "=>" { print $1 } $1 ~ /^\// { print $1 }' | xargs -n1 basename | sort -u >"$W/ldd"
  grep -oE 'runtime/usr/lib(64)?/[^ ]*$' "$f" | grep -v '/$' | xargs -n1 basename | grep '\.so' | sort -u >"$W/image"
  diff -u "$W/ldd" "$W/image"
  # The readelf walk used for cross builds (arm64) finds the same set.
  NP_IMAGE_LIBS=readelf scripts/image-rootfs "$W/r2" >/dev/null
  diff -u "$W/r/libs.txt" "$W/r2/libs.txt"
  grep -q ' runtime/etc/ssl/certs/ca-certificates.crt$' "$f"
  grep -qx 'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' "$W/r/runtime/etc/passwd"
  grep -qx 'nogroup:x:65534:' "$W/r/runtime/etc/group"
  # No man pages, headers, shells or package data.
  run grep -E 'share/man|/include/|bin/sh$|var/lib/dpkg' "$f"
  [ "$status" -eq 1 ]
  # Binaries are stripped.
  for b in "$W"/r/app/usr/bin/*; do
    run sh -c "readelf -S '$b' | grep -c debug_info"
    [ "$output" = 0 ]
  done
}

# cross_or_skip: skip when this machine cannot build the ARM images (scripts/install-deps, as
# root, sets them up: make test runs it, so CI always has them).
cross_or_skip() {
  local a t
  for a in arm64 armhf; do
    t=$([ "$a" = arm64 ] && echo aarch64-linux-gnu || echo arm-linux-gnueabihf)
    command -v "$t-g++" >/dev/null || skip "no $t-g++: crossbuild-essential-$a not installed (scripts/install-deps as root)"
    [ -f "${NP_CROSS_ROOT:-/opt/nodeprobe-cross}/$a/.nodeprobe-packages" ] ||
      skip "no :$a sysroot in ${NP_CROSS_ROOT:-/opt/nodeprobe-cross} (scripts/install-deps as root)"
  done
}

# manifest_of LAYOUT TAG: the image manifest (or index) file tagged TAG in an OCI layout.
manifest_of() {
  echo "$1/blobs/sha256/$(jq -r --arg t "$2" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest[7:]' "$1/index.json")"
}

@test "build-image: same tree, same digests (fixed times), same layers from elsewhere and not as root; user 65534, entrypoint, two layers" {
  need_all_binaries
  local arch
  arch=$(dpkg --print-architecture)
  IMAGE_DIR=$W/a scripts/build-image "$arch" >/dev/null
  IMAGE_DIR=$W/b scripts/build-image "$arch" >/dev/null
  diff <(cat "$W/a/oci/index.json") <(cat "$W/b/oci/index.json")
  local v m cfg
  v=$(sed -n 's/^VERSION *:= *//p' Makefile)
  m=$(manifest_of "$W/a/oci" "$v-$arch")
  [ "$(jq '.layers | length' "$m")" -eq 2 ]
  # The same sources elsewhere (as the Dockerfile's /src), built by a user who is not root:
  # the same layers (no build path in the binaries; files root-owned either way).
  chmod 0755 "$W"
  mkdir "$W/elsewhere"
  tar -C "$NP_ROOT" --exclude=./.git --exclude='./build*' -cf - . |
    tar -C "$W/elsewhere" -xf -
  local epoch nonroot=()
  epoch=$(jq -r '.created' "$W/a/oci/blobs/sha256/$(jq -r '.config.digest[7:]' "$m")")
  if [ "$(id -u)" -eq 0 ]; then
    chown -R 65534:65534 "$W/elsewhere"
    nonroot=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$W/elsewhere")
  fi
  (cd "$W/elsewhere" && "${nonroot[@]}" env SOURCE_DATE_EPOCH="$(date -u -d "$epoch" +%s)" scripts/build-image "$arch" >/dev/null)
  diff <(jq -c .layers "$m") <(jq -c .layers "$(manifest_of "$W/elsewhere/build/image/oci" "$v-$arch")")
  cfg=$W/a/oci/blobs/sha256/$(jq -r '.config.digest[7:]' "$m")
  jq -e --arg a "$arch" '.architecture == $a and .os == "linux" and .config.User == "65534:65534"
        and .config.Entrypoint == ["/usr/bin/nodeprobe"] and .config.Env == ["PATH=/usr/bin"]' "$cfg"
  # Tag <version> is an index whose only platform is the one built.
  jq -e --arg a "$arch" '.mediaType == "application/vnd.oci.image.index.v1+json" and ([.manifests[].platform.architecture] == [$a])' "$(manifest_of "$W/a/oci" "$v")"
  # The Dockerfile builds the same: same file-list script, same user, entrypoint and PATH.
  grep -qx 'RUN scripts/image-rootfs /out' Dockerfile
  grep -qx 'USER 65534:65534' Dockerfile
  grep -qx 'ENTRYPOINT \["/usr/bin/nodeprobe"\]' Dockerfile
  grep -qx 'ENV PATH=/usr/bin' Dockerfile
  [ "$(grep -c '^COPY --from=build /out/' Dockerfile)" -eq 2 ]
}

@test "build-image with no argument: one index over linux/amd64, linux/arm64 and linux/arm/v7, each under 15 MiB, the layers reproducible elsewhere and not as root" {
  need_all_binaries
  cross_or_skip
  IMAGE_DIR=$W/a scripts/build-image >"$W/out"
  local v a m cfg want
  v=$(sed -n 's/^VERSION *:= *//p' Makefile)
  # The index (as a registry client reads it) lists the three platforms.
  skopeo inspect --raw "oci:$W/a/oci:$v" >"$W/index.json"
  jq -e '.mediaType == "application/vnd.oci.image.index.v1+json"' "$W/index.json"
  diff -u <(printf '%s\n' linux/amd64 linux/arm/v7 linux/arm64) \
    <(jq -r '.manifests[].platform | [.os, .architecture, .variant // empty] | join("/")' "$W/index.json")
  for a in amd64 arm64 armhf; do
    m=$(manifest_of "$W/a/oci" "$v-$a")
    jq -e --arg d "sha256:${m##*/}" '[.manifests[].digest] | index($d) != null' "$W/index.json"
    cfg=$W/a/oci/blobs/sha256/$(jq -r '.config.digest[7:]' "$m")
    want=$([ "$a" = armhf ] && echo arm || echo "$a")
    jq -e --arg a "$want" '.architecture == $a and .os == "linux" and .config.User == "65534:65534"
          and .config.Entrypoint == ["/usr/bin/nodeprobe"]' "$cfg"
    [ "$(jq '.layers | length' "$m")" -eq 2 ]
    [ "$(jq '[.layers[].size] | add' "$m")" -lt $((15 * 1024 * 1024)) ]
    grep -q "oci:$v-$a: [0-9]* bytes compressed" "$W/out"
  done
  # The same sources elsewhere, built afresh by a user who is not root: the same layers on
  # every architecture (no build path in the ARM binaries either).
  chmod 0755 "$W"
  mkdir "$W/elsewhere"
  tar -C "$NP_ROOT" --exclude=./.git --exclude='./build*' -cf - . |
    tar -C "$W/elsewhere" -xf -
  local nonroot=()
  if [ "$(id -u)" -eq 0 ]; then
    chown -R 65534:65534 "$W/elsewhere"
    nonroot=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$W/elsewhere")
  fi
  (cd "$W/elsewhere" && "${nonroot[@]}" env SOURCE_DATE_EPOCH="$(git -C "$NP_ROOT" log -1 --format=%ct)" scripts/build-image >/dev/null)
  for a in amd64 arm64 armhf; do
    diff <(jq -c .layers "$(manifest_of "$W/a/oci" "$v-$a")") \
      <(jq -c .layers "$(manifest_of "$W/elsewhere/build/image/oci" "$v-$a")")
  done
}

@test "cross builds: ARM binaries for their machine, loader and every library from the target, RE2 and libstdc++ linked in" {
  need_all_binaries
  cross_or_skip
  local a machine loader lib f
  for a in arm64 armhf; do
    scripts/image-rootfs "$W/$a" "$a" >/dev/null
    machine=$([ "$a" = arm64 ] && echo AArch64 || echo ARM)
    loader=$([ "$a" = arm64 ] && echo /lib/ld-linux-aarch64.so.1 || echo /lib/ld-linux-armhf.so.3)
    for f in "$W/$a"/app/usr/bin/*; do
      readelf -h "$f" | grep -q "Machine: *$machine" || { echo "$f is not $machine" >&2; return 1; }
      readelf -l "$f" | grep -q "Requesting program interpreter: $loader]"
      # RE2 and the C++ runtime are static (Makefile RE2_LIBS), as in the native build.
      run sh -c "readelf -d '$f' | grep NEEDED | grep -E 'libre2|libstdc'"
      [ "$status" -eq 1 ] || { echo "$f: $output" >&2; return 1; }
    done
    [ -x "$W/$a/runtime/usr$loader" ]
    # Every shared library in the image is the target's (none of this machine's).
    while read -r lib; do
      readelf -h "$W/$a/runtime/usr${lib#/usr}" | grep -q "Machine: *$machine" || { echo "$lib is not $machine" >&2; return 1; }
    done <"$W/$a/libs.txt"
    grep -q 'libcurl.so.4$' "$W/$a/libs.txt"
    grep -q 'libpci.so.3$' "$W/$a/libs.txt"
    # what the binaries dlopen: libcrypto.so.3 (nodeprobe's derivePassword, for scrypt),
    # libmicrohttpd.so.12 (nodeprobe-devices --listen) and libcurl.so.4 (nodeprobe-devices' DRA
    # classes, pkg/kube/kube_curl.c; checked above) come in with nodeprobe-reload's libraries
    grep -q 'libcrypto.so.3$' "$W/$a/libs.txt"
    grep -q 'libmicrohttpd.so.12$' "$W/$a/libs.txt"
    # libfdt, libyaml and libdeflate are linked in (Makefile STATIC_C), as natively (libnettle
    # is too, but GnuTLS under libmicrohttpd, which nodeprobe-reload loads, brings its .so)
    run grep -E 'lib(fdt|yaml|deflate)' "$W/$a/libs.txt"
    [ "$status" -eq 1 ] || { echo "$a: $output" >&2; return 1; }
    # 32-bit: large-file interfaces (readdir on a 64-bit inode file system, test/e2e/qemu.sh).
    if [ "$a" = armhf ]; then
      readelf --dyn-syms -W "$W/$a/app/usr/bin/nodeprobe" >"$W/syms"
      grep -q ' readdir64@' "$W/syms"
      run grep -E ' (readdir|stat|fstat|fstatat)@' "$W/syms"
      [ "$status" -eq 1 ]
    fi
  done
}

@test "qemu-user: the arm64 and armhf images print byte for byte what amd64 prints (board fixtures, PCI machines, ../shared sweep)" {
  need_all_binaries
  cross_or_skip
  command -v qemu-aarch64-static >/dev/null && command -v qemu-arm-static >/dev/null ||
    skip "qemu-user-static not installed (scripts/install-deps as root)"
  run test/e2e/qemu.sh
  printf '%s\n' "$output" >"$BUILD/qemu-e2e.log"
  [ "$status" -eq 0 ] || { echo "$output" | tail -40 >&2; return 1; }
  [[ ${lines[-1]} == "qemu e2e: ok: "*" cases, arm64 armhf identical to amd64" ]]
  # The three boards, each as blob and live tree, were compared.
  for b in bcm2711-rpi-4-b tegra210-p3450-0000 am335x-boneblack; do
    grep -q "same: .*$b.dtb (blob) " <<<"$output"
    grep -q "same: .*$b.dtb (live tree) " <<<"$output"
  done
  if [ -d "$SHARED/fixtures" ]; then
    grep -q '^== the sweep of ' <<<"$output"
    echo "# swept $(grep -c 'same: shared ' <<<"$output") blobs and PCI machines of ../shared/fixtures under qemu" >&3
  fi
}

@test "image e2e: pushed to docker-registry, pulled by containerd, run by runc as 65534" {
  need_all_binaries
  [ "$(id -u)" -eq 0 ] || skip "needs root (network namespace, containerd)"
  run test/e2e/image.sh
  printf '%s\n' "$output" >"$BUILD/image-e2e.log"
  [ "$status" -eq 0 ] || { echo "$output" | tail -40 >&2; return 1; }
  [ "${lines[-1]}" = "image e2e: ok" ]
  # Processes: nothing of this run left running (another run's e2e may be going on beside it).
  dir=$(sed -n 's/^e2e dir: //p' <<<"$output")
  [[ $dir == /tmp/np-image-e2e.* ]]
  run pgrep -f "$dir"
  [ "$status" -eq 1 ]
}

@test "Dockerfile: the build stage installs every build library the binaries need (nodeprobe-devices' too)" {
  # the -dev packages and tools install-deps installs for building (not the test-only ones)
  local p
  for p in libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler nettle-dev libmicrohttpd-dev \
           libjansson-dev libyaml-dev libcurl4-openssl-dev libfdt-dev libpci-dev; do
    grep -qw -- "$p" scripts/install-deps
    sed -n '/^FROM .* AS build/,/^FROM /p' Dockerfile | grep -qw -- "$p" ||
      { echo "Dockerfile's build stage lacks $p" >&2; return 1; }
  done
  grep -qx 'BINS=(nodeprobe nodeprobe-mirror nodeprobe-reload nodeprobe-devices)' scripts/image-rootfs
}
