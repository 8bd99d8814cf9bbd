#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-mirror watch: files deleted, edited or re-synced away under a running watch come back
# with configure's bytes; SIGTERM and cleanup leave everything as it is. Waits are bounded polls,
# never timing assertions.
load helpers

setup() {
  BIN="$BUILD/nodeprobe-mirror"
  T=$(mktemp -d "$BATS_TMPDIR/np-watch.XXXXXX")
  C="$T/hosts"
  unset CONTAINERD_REGISTRY_CONFIG_PATH MIRRORED_REGISTRIES MIRROR_TARGETS RESOLVE_TAGS \
    PREPEND_EXISTING MIRROR_DIAL_TIMEOUT MIRROR_BASIC_AUTH_DIR NODEPROBE_MIRROR_CONFIG
  export NODE_IP=10.0.0.5
  ARGS=(--config-path "$C" -r https://docker.io -r ghcr.io -m 'http://${NODE_IP}:30020')
  WPID=
}

teardown() {
  [ -n "$WPID" ] && kill "$WPID" 2>/dev/null && wait "$WPID" 2>/dev/null
  rm -rf "$T"
}

# Path, mode and content hash of everything under $1.
contents() {
  (cd "$1" && find . -printf '%p %y %m\n' | sort && find . -type f -exec sha256sum {} + | sort)
}

# Path, inode and ctime of everything under $1 (ctime moves on any write).
inodes() {
  (cd "$1" && find . -printf '%p %i %C@\n' | sort)
}

# Poll (at most 20 s) until the command succeeds.
wait_for() {
  local i
  for ((i = 0; i < 200; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  echo "timed out waiting for: $*" >&2
  cat "$T/log" >&2
  return 1
}

# file_is FILE TEXT: FILE exists and holds TEXT (for wait_for: read again on each try).
file_is() {
  [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]
}

# Start a watch in the background and wait until it watches.
start_watch() {
  "$BIN" watch -v "${ARGS[@]}" "$@" >"$T/log" 2>&1 &
  WPID=$!
  wait_for grep -q "watching $C" "$T/log"
}

# What configure alone writes, for comparison.
reference() {
  mkdir -p "$T/ref"
  cp -a "$T/orig/." "$T/ref/" 2>/dev/null || true
  "$BIN" configure --config-path "$T/ref" -r https://docker.io -r ghcr.io \
    -m 'http://${NODE_IP}:30020'
}

# A user's config path before the first configure.
user_files() {
  mkdir -p "$T/orig/docker.io" "$T/orig/quay.io"
  printf "server = 'https://registry-1.docker.io'\n" >"$T/orig/docker.io/hosts.toml"
  printf "server = 'https://quay.io'\n" >"$T/orig/quay.io/hosts.toml"
  cp -a "$T/orig" "$C"
}

log_has() { grep -qF -- "$1" "$T/log"; }

# Remove a tree at once (rename it away): an rm -rf under load can be seen half done.
remove() { mv "$1" "$(mktemp -u "$T/gone.XXXXXX")"; }

# For wait_for, which must evaluate its condition anew each time.
same_contents() { [ "$(contents "$1")" = "$2" ]; }
mode_is() { [ "$(stat -c %a "$1")" = "$2" ]; }

@test "watch: a removed and an edited hosts.toml come back with configure's bytes, logged" {
  user_files
  reference
  start_watch
  [ "$(contents "$C")" = "$(contents "$T/ref")" ]
  remove "$C/docker.io"
  wait_for log_has "restoring $C/docker.io: removed"
  wait_for test -f "$C/docker.io/hosts.toml"
  echo "[host.'http://evil']" >"$C/ghcr.io/hosts.toml"
  wait_for cmp -s "$C/ghcr.io/hosts.toml" "$T/ref/ghcr.io/hosts.toml"
  # as a repair, or (edited while the last one was writing) as the write that undid it
  log_has "restoring $C/ghcr.io: changed (content)" || log_has "wrote $C/ghcr.io/hosts.toml"
  chmod 600 "$C/docker.io/hosts.toml"
  wait_for log_has "restoring $C/docker.io: changed (mode)"
  wait_for mode_is "$C/docker.io/hosts.toml" 644
  wait_for same_contents "$C" "$(contents "$T/ref")"
}

@test "watch: idempotent, an event that changes nothing of ours writes nothing" {
  user_files
  start_watch
  before=$(inodes "$C")
  # someone else's directory appears and goes: an event, nothing of ours changed
  mkdir "$C/other" && rmdir "$C/other"
  # a later repair proves the events above were handled before it
  remove "$C/ghcr.io"
  wait_for log_has "restoring $C/ghcr.io: removed"
  wait_for test -f "$C/ghcr.io/hosts.toml"
  # everything but the repaired directory and the config path itself is as it was
  grep -v -e ghcr.io -e '^\. ' <<<"$before" >"$T/a"
  inodes "$C" | grep -v -e ghcr.io -e '^\. ' >"$T/b"
  diff -u "$T/a" "$T/b"
  run grep -c "restoring" "$T/log"
  [ "$output" = 1 ]
}

@test "watch: a removed or edited _backup is restored from memory, unchanged" {
  user_files
  start_watch
  want=$(contents "$C")
  remove "$C/_backup"
  wait_for log_has "restoring $C/_backup: removed"
  wait_for same_contents "$C" "$want"
  echo changed >"$C/_backup/quay.io/hosts.toml"
  wait_for log_has "restoring $C/_backup: changed (content)"
  wait_for same_contents "$C" "$want"
  # cleanup still gives the user's files back exactly
  kill "$WPID" && wait "$WPID" || true
  WPID=
  "$BIN" cleanup --config-path "$C"
  [ "$(contents "$C")" = "$(contents "$T/orig")" ]
}

@test "watch: a user's file beside our hosts.toml, or added to _backup, is never deleted" {
  # issue 17: containerd's certs.d/<host>/ca.crt layout (docs/hosts.md) under a running watch
  user_files
  start_watch
  want_quay=$(cat "$C/_backup/quay.io/hosts.toml")
  echo ca >"$C/docker.io/ca.crt"
  echo mine >"$C/_backup/extra.txt"
  mkdir "$C/_backup/quay.io/sub" && echo key >"$C/_backup/quay.io/sub/client.key"
  # a later repair proves the events above were handled before it
  remove "$C/ghcr.io"
  wait_for log_has "restoring $C/ghcr.io: removed"
  wait_for test -f "$C/ghcr.io/hosts.toml"
  [ "$(cat "$C/docker.io/ca.crt")" = ca ]
  [ "$(cat "$C/_backup/extra.txt")" = mine ]
  [ "$(cat "$C/_backup/quay.io/sub/client.key")" = key ]
  ! log_has "restoring $C/docker.io" || false
  ! log_has "restoring $C/_backup" || false
  # what was backed up is still put back when changed; what was added stays
  echo changed >"$C/_backup/quay.io/hosts.toml"
  wait_for log_has "restoring $C/_backup: changed (content)"
  # (re-read on each try: "$(cat …)" as an argument would be read once, before the repair)
  wait_for file_is "$C/_backup/quay.io/hosts.toml" "$want_quay"
  [ "$(cat "$C/_backup/extra.txt")" = mine ]
  [ "$(cat "$C/docker.io/ca.crt")" = ca ]
  # and cleanup leaves the user's certificate where it is
  kill "$WPID" && wait "$WPID" || true
  WPID=
  "$BIN" cleanup --config-path "$C"
  [ "$(cat "$C/docker.io/ca.crt")" = ca ]
  [ "$(cat "$C/docker.io/hosts.toml")" = "server = 'https://registry-1.docker.io'" ]
  [ "$(cat "$C/extra.txt")" = mine ]
}

@test "watch: a removed config path is made again, _backup and ours as they were" {
  user_files
  start_watch
  want=$(contents "$C")
  remove "$C"
  wait_for log_has "restoring $C: removed"
  wait_for same_contents "$C" "$want"
  # cleanup still gives the user's files back exactly
  kill "$WPID" && wait "$WPID" || true
  WPID=
  "$BIN" cleanup --config-path "$C"
  [ "$(contents "$C")" = "$(contents "$T/orig")" ]
}

@test "watch: a Talos-style re-sync (every directory it did not write removed) is repaired" {
  user_files
  start_watch
  # talos@ad88231 cri_config.go syncHosts: write its own directories, RemoveAll the rest. The
  # watch is stopped meanwhile so that it sees the whole re-sync at once, not a part of it.
  kill -STOP "$WPID"
  mkdir "$C/registry.talos.dev"
  printf "server = 'https://registry.talos.dev'\n" >"$C/registry.talos.dev/hosts.toml"
  find "$C" -mindepth 1 -maxdepth 1 ! -name registry.talos.dev -exec rm -rf {} +
  kill -CONT "$WPID"
  wait_for log_has "_backup removed and 1 entry written by someone else"
  wait_for test -f "$C/ghcr.io/hosts.toml"
  wait_for test -f "$C/_backup/registry.talos.dev/hosts.toml"
  # ours as configure writes them on a node where Talos's file was the only one
  mkdir -p "$T/orig2/registry.talos.dev"
  cp "$C/_backup/registry.talos.dev/hosts.toml" "$T/orig2/registry.talos.dev/"
  "$BIN" configure --config-path "$T/orig2" -r https://docker.io -r ghcr.io \
    -m 'http://${NODE_IP}:30020'
  wait_for same_contents "$C" "$(contents "$T/orig2")"
}

@test "watch: killed between the renames of a _backup repair, configure or cleanup still restore the user's files" {
  user_files
  "$BIN" configure "${ARGS[@]}"
  # What a watch killed between its two renames leaves: the remembered _backup built in
  # .nodeprobe-watch, the changed one it replaces set aside as .nodeprobe-watch-old, no _backup.
  cp -a "$C/_backup" "$C/.nodeprobe-watch"
  echo changed >"$C/_backup/quay.io/hosts.toml"
  mv "$C/_backup" "$C/.nodeprobe-watch-old"
  cp -a "$C" "$T/crashed"
  # the pod's restart: configure (its init container), later the uninstall's cleanup
  "$BIN" configure "${ARGS[@]}"
  "$BIN" cleanup --config-path "$C"
  [ "$(contents "$C")" = "$(contents "$T/orig")" ]
  # or the uninstall straight away (the DaemonSet deleted before the pod came back)
  rm -rf "$C" && mv "$T/crashed" "$C"
  "$BIN" cleanup --config-path "$C"
  [ "$(contents "$C")" = "$(contents "$T/orig")" ]
}

@test "watch: SIGTERM exits 0 and touches nothing" {
  user_files
  start_watch
  before=$(inodes "$C")
  kill -TERM "$WPID"
  st=0
  wait "$WPID" || st=$?
  WPID=
  [ "$st" -eq 0 ]
  [ "$(inodes "$C")" = "$before" ]
  log_has "Terminated: exiting, $C left as it is"
}

@test "watch: cleanup under a running watch restores the user's files and the watch stays out" {
  user_files
  start_watch -v
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  wait_for log_has "cleanup is restoring _backup: not re-applying until restarted"
  [ "$(contents "$C")" = "$(contents "$T/orig")" ]
  # still running, and a further change to a directory it used to own is left alone
  kill -0 "$WPID"
  remove "$C/docker.io"
  wait_for log_has "events ignored: cleanup ran"
  ! log_has "restoring $C" || false
  [ ! -e "$C/docker.io" ]
}

@test "watch: something that rewrites in a loop gets a back-off and a warning" {
  user_files
  start_watch
  # a fighter that removes our directory whenever it is back, until the watch says so (12 at most)
  for ((n = 0; n < 12; n++)); do
    wait_for test -f "$C/docker.io/hosts.toml"
    log_has "repaired 5 times in" && break
    remove "$C/docker.io"
  done
  log_has "repaired 5 times in"
  log_has "next repair no sooner than 2 s"
  # after the back-off it still repairs
  remove "$C/docker.io"
  wait_for test -f "$C/docker.io/hosts.toml"
}

@test "watch: a bad registry fails before anything is written; usage errors exit 2" {
  run "$BIN" watch --config-path "$C" -r 'https://bad/path' -m http://10.0.0.5:30020
  [ "$status" -eq 1 ]
  [[ "$output" == *"bad/path"* ]]
  [ ! -e "$C" ]
  run "$BIN" watch --no-such-option
  [ "$status" -eq 2 ]
}

@test "the inotify watch limit is named as such, not taken for a full disk" {
  unshare -U -r sh -c 'echo 0 >/proc/sys/user/max_inotify_watches' 2>/dev/null ||
    skip "no user namespace with its own inotify limit here"
  # no watch at all: watch stops and says which limit
  run unshare -U -r sh -c 'echo 0 >/proc/sys/user/max_inotify_watches && exec "$@"' sh \
    "$BIN" watch "${ARGS[@]}"
  echo "$output"
  [ "$status" -eq 1 ]
  grep -q "inotify watch limit (fs.inotify.max_user_watches) is reached" <<<"$output"
  ! grep -q "file system is full" <<<"$output" || false
  # room for the config path only: watch runs and warns about the directories it cannot watch
  rm -rf "$C"
  unshare -U -r sh -c 'echo 1 >/proc/sys/user/max_inotify_watches && exec "$@"' sh \
    "$BIN" watch -v "${ARGS[@]}" >"$T/log" 2>&1 &
  WPID=$!
  wait_for grep -q "watching $C" "$T/log"
  grep -q "inotify watch limit (fs.inotify.max_user_watches) is reached: watching only 1 directories" "$T/log"
  ! grep -q "file system is full" "$T/log" || false
}
