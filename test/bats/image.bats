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

# All three binaries must exist for the image; no silent partial image.
need_all_binaries() {
  local missing=()
  [ -f cmd/nodeprobe/main.c ] || missing+=(nodeprobe)
  [ -f hooks/mirror/main.c ] || missing+=(nodeprobe-mirror)
  [ -f hooks/reload/main.c ] || missing+=(nodeprobe-reload)
  [ ${#missing[@]} -eq 0 ] || { echo "image needs all three binaries; not in this tree: ${missing[*]}" >&2; return 1; }
}

@test "image-rootfs refuses to build an image without all three binaries" {
  need_all_binaries
  cp -a . "$W/tree"
  rm -rf "$W/tree/hooks/reload" "$W/tree"/build* "$W/tree/.git"
  run "$W/tree/scripts/image-rootfs" "$W/out"
  [ "$status" -eq 1 ]
  [[ $output == *"binaries not built"*"nodeprobe-reload"* ]]
}

@test "image files: the binaries, exactly the libraries ldd lists, CA bundle, non-root user" {
  need_all_binaries
  scripts/image-rootfs "$W/r" >/dev/null
  local f=$W/r/files.txt
  for b in nodeprobe nodeprobe-mirror nodeprobe-reload; do
    grep -q "^-rwxr-xr-x [0-9]* app/usr/bin/$b\$" "$f"
  done
  # The library set is ldd's, for the three binaries together, nothing more or less.
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
  IMAGE_DIR=$W/a scripts/build-image >/dev/null
  IMAGE_DIR=$W/b scripts/build-image >/dev/null
  diff <(cat "$W/a/oci/index.json") <(cat "$W/b/oci/index.json")
  local v arch m cfg
  v=$(sed -n 's/^VERSION *:= *//p' Makefile)
  arch=$(dpkg --print-architecture)
  m=$(jq -r --arg t "$v-$arch" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest[7:]' "$W/a/oci/index.json")
  [ "$(jq '.layers | length' "$W/a/oci/blobs/sha256/$m")" -eq 2 ]
  # The same sources elsewhere (as the Dockerfile's /src), built by a user who is not root:
  # the same layers (no build path in the binaries; files root-owned either way).
  chmod 0755 "$W"
  mkdir "$W/elsewhere"
  tar -C "$NP_ROOT" --exclude=./.git --exclude=./build --exclude=./build-san --exclude=./build-fuzz -cf - . |
    tar -C "$W/elsewhere" -xf -
  local epoch nonroot=()
  epoch=$(jq -r '.created' "$W/a/oci/blobs/sha256/$(jq -r '.config.digest[7:]' "$W/a/oci/blobs/sha256/$m")")
  if [ "$(id -u)" -eq 0 ]; then
    chown -R 65534:65534 "$W/elsewhere"
    nonroot=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$W/elsewhere")
  fi
  (cd "$W/elsewhere" && "${nonroot[@]}" env SOURCE_DATE_EPOCH="$(date -u -d "$epoch" +%s)" scripts/build-image >/dev/null)
  local m2
  m2=$(jq -r --arg t "$v-$arch" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest[7:]' "$W/elsewhere/build/image/oci/index.json")
  diff <(jq -c .layers "$W/a/oci/blobs/sha256/$m") <(jq -c .layers "$W/elsewhere/build/image/oci/blobs/sha256/$m2")
  cfg=$W/a/oci/blobs/sha256/$(jq -r '.config.digest[7:]' "$W/a/oci/blobs/sha256/$m")
  jq -e --arg a "$arch" '.architecture == $a and .os == "linux" and .config.User == "65534:65534"
        and .config.Entrypoint == ["/usr/bin/nodeprobe"] and .config.Env == ["PATH=/usr/bin"]' "$cfg"
  # Tag <version> is an index whose only platform is this one.
  m=$(jq -r --arg t "$v" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest[7:]' "$W/a/oci/index.json")
  jq -e --arg a "$arch" '.mediaType == "application/vnd.oci.image.index.v1+json" and ([.manifests[].platform.architecture] == [$a])' "$W/a/oci/blobs/sha256/$m"
  # The Dockerfile builds the same: same file-list script, same user, entrypoint and PATH.
  grep -qx 'RUN scripts/image-rootfs /out' Dockerfile
  grep -qx 'USER 65534:65534' Dockerfile
  grep -qx 'ENTRYPOINT \["/usr/bin/nodeprobe"\]' Dockerfile
  grep -qx 'ENV PATH=/usr/bin' Dockerfile
  [ "$(grep -c '^COPY --from=build /out/' Dockerfile)" -eq 2 ]
}

@test "image e2e: pushed to docker-registry, pulled by containerd, run by runc as 65534" {
  need_all_binaries
  [ "$(id -u)" -eq 0 ] || skip "needs root (network namespace, containerd)"
  run test/e2e/image.sh
  printf '%s\n' "$output" >"$BUILD/image-e2e.log"
  [ "$status" -eq 0 ] || { echo "$output" | tail -40 >&2; return 1; }
  [ "${lines[-1]}" = "image e2e: ok" ]
  # Processes: nothing of ours left running.
  run pgrep -f '/tmp/np-image-e2e\.'
  [ "$status" -eq 1 ]
}
