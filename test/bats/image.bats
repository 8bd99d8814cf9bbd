#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The container image: built without a daemon (scripts/build-image), its file list and its
# reproducibility for this machine's architecture (test/bats/image.bash; the ARM images, the
# qemu comparison and the end-to-end run are the other image-*.bats suites).
load helpers
load image

@test "image-rootfs refuses to build an image without all four binaries" {
  need_all_binaries
  # the sources only: build directories are not copied (another suite may be writing into
  # one, e.g. cross-arm64.bats's $BUILD/cross, while make test runs suites side by side)
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
  # the same layers (no build path in the binaries; files root-owned either way). That build
  # takes a minute: image-multiarch.bats does it for every architecture, this one among them,
  # so here only when it skips (no ARM toolchain on this machine).
  if cross_missing >/dev/null; then
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
  fi
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
