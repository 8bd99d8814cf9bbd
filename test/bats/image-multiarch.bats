#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# build-image with no argument: the one index over amd64, arm64 and armhf, reproducible from
# elsewhere and not as root (test/bats/image.bash).
load helpers
load image

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
