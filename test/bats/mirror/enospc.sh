#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run by nodeprobe-mirror-crash.bats inside `unshare -m`: a 512 KiB tmpfs, filled to 0..20 KiB
# free. configure must fail with a clear ENOSPC message and leave the tree byte for byte as it
# was, or succeed completely (also with the inode table full: an nr_inodes sweep); watch must name ENOSPC (not a fight) and repair once space is back.
# Usage: enospc.sh BIN TMPDIR. Exit 0 ok, 1 failed, 77 mount refused.
set -u
BIN=$1
M="$2/fs"
mkdir -p "$M"
mount -t tmpfs -o size=512k,mode=0755 tmpfs "$M" || exit 77
C="$M/certs.d"
ARGS=(--config-path "$C" -r docker.io -r ghcr.io -m http://10.0.0.5:30020)
export MIRROR_BASIC_AUTH_DIR="$M/no-secret"
fail() { echo "FAIL: $*"; exit 1; }
manifest() {
  (cd "$1" && find . -printf '%p %y %m %l\n' | sort &&
    find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}
avail() { df -B1 --output=avail "$M" | tail -1 | tr -d ' '; }
# fill NAME BYTES_FREE: a filler file leaving about that much free (page granularity)
fill() {
  rm -f "$M/filler"
  local a
  a=$(avail)
  if ((a > $1)); then
    fallocate -l $((a - $1)) "$M/filler" 2>/dev/null || head -c $((a - $1)) /dev/zero >"$M/filler" 2>/dev/null
  fi
}
# refused_unchanged DIR: the run that failed ($st, $out) said ENOSPC and left DIR as $before.
refused_unchanged() {
  [ "$st" -eq 1 ] || fail "exit $st"
  grep -q "the file system is full (ENOSPC" <<<"$out" || fail "no clear ENOSPC message"
  grep -q "nothing was changed" <<<"$out" || fail "message does not say nothing was changed"
  [ "$(manifest "$1")" = "$before" ] || { diff <(echo "$before") <(manifest "$1"); fail "tree changed"; }
}
user_tree() {
  rm -rf "$C"
  mkdir -p "$C/docker.io" "$C/quay.io"
  printf "server = 'https://registry-1.docker.io'\n" >"$C/docker.io/hosts.toml"
  printf 'CA' >"$C/docker.io/ca.crt"
  printf "server = 'https://quay.io'\n" >"$C/quay.io/hosts.toml"
}

failed=0
# the first configure (nothing backed up yet), then a later one that rewrites our files
for phase in first later; do
  for free in 0 4096 8192 12288 16384 20480; do
    rm -f "$M/filler"
    user_tree
    extra=()
    if [ "$phase" = later ]; then
      "$BIN" configure "${ARGS[@]}" >/dev/null 2>&1 || fail "setup configure"
      extra=(--dial-timeout 300ms)
    fi
    fill "$free"
    before=$(manifest "$C")
    out=$("$BIN" configure "${ARGS[@]}" "${extra[@]}" 2>&1)
    st=$?
    echo "$phase, $free bytes asked, $(avail) free: exit $st: $out"
    if [ "$st" -ne 0 ]; then
      failed=$((failed + 1))
      refused_unchanged "$C"
    else
      rm -f "$M/filler"
      "$BIN" check --config-path "$C" >/dev/null || fail "configure succeeded but check fails"
      [ -f "$C/ghcr.io/hosts.toml" ] && [ -f "$C/_backup/docker.io/hosts.toml" ] || fail "incomplete"
    fi
  done
done
echo "levels that failed: $failed"

# An inode table that runs out at every step of configure (a tmpfs with nr_inodes from too
# few for staging to enough): a first configure, and a later one that moves a new user's
# hosts.toml into _backup and makes a new registry directory. Each fails with the ENOSPC
# message and the tree exactly as it was, or succeeds completely.
I="$2/ino"
mkdir -p "$I"
ifailed=0
for phase in first later; do
  for ni in $(seq 8 40); do
    mount -t tmpfs -o size=4m,nr_inodes=$ni,mode=0755 tmpfs "$I" || exit 77
    IC="$I/certs.d"
    IARGS=(--config-path "$IC" -r ghcr.io -r docker.io -r quay.io -m http://10.0.0.5:30020)
    if ! (C=$IC && user_tree) 2>/dev/null; then
      umount "$I"
      continue # too few inodes for the user's tree itself
    fi
    if [ "$phase" = later ]; then
      if ! "$BIN" configure "${IARGS[@]}" >/dev/null 2>&1 ||
        ! mkdir "$IC/registry.k8s.io" 2>/dev/null ||
        ! printf "server = 'https://registry.k8s.io'\n" >"$IC/registry.k8s.io/hosts.toml" 2>/dev/null; then
        umount "$I"
        continue
      fi
      IARGS+=(-r registry.k8s.io -r mcr.microsoft.com)
    fi
    before=$(manifest "$IC")
    out=$("$BIN" configure "${IARGS[@]}" 2>&1)
    st=$?
    echo "inodes, $phase, nr_inodes=$ni: exit $st: $out"
    if [ "$st" -ne 0 ]; then
      ifailed=$((ifailed + 1))
      refused_unchanged "$IC"
    else
      for d in ghcr.io docker.io quay.io; do [ -f "$IC/$d/hosts.toml" ] || fail "$d incomplete"; done
      [ -f "$IC/_backup/docker.io/hosts.toml" ] && [ -f "$IC/docker.io/ca.crt" ] || fail "backup incomplete"
      if [ "$phase" = later ]; then
        [ -f "$IC/_backup/registry.k8s.io/hosts.toml" ] && [ -f "$IC/mcr.microsoft.com/hosts.toml" ] ||
          fail "later: incomplete"
      fi
      "$BIN" check --config-path "$IC" >/dev/null || fail "configure succeeded but check fails"
      [ ! -e "$IC/.nodeprobe-stage" ] || fail "stage left"
    fi
    umount "$I"
  done
done
echo "inode levels that failed: $ifailed"

# watch: started with room, then the disk fills and our directory is removed
rm -f "$M/filler"
user_tree
"$BIN" watch -v "${ARGS[@]}" >"$M/../watch.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for ((i = 0; i < 200; i++)); do grep -q "watching $C" "$M/../watch.log" && break; sleep 0.1; done
fill 0
mv "$C/ghcr.io" "$M/gone"
for ((i = 0; i < 200; i++)); do grep -q "repair failed" "$M/../watch.log" && break; sleep 0.1; done
grep "repair failed" "$M/../watch.log" | head -2
grep -q "repair failed (ENOSPC: the file system is full)" "$M/../watch.log" || { cat "$M/../watch.log"; fail "watch did not name ENOSPC"; }
! grep -q "rewrites it in a loop" "$M/../watch.log" || fail "ENOSPC taken for a fight"
rm -f "$M/filler"
for ((i = 0; i < 300; i++)); do [ -f "$C/ghcr.io/hosts.toml" ] && break; sleep 0.1; done
[ -f "$C/ghcr.io/hosts.toml" ] || { cat "$M/../watch.log"; fail "not repaired once space was back"; }
echo "watch: ENOSPC named, repaired once space was back"
exit 0
