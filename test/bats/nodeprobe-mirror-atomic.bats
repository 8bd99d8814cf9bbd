#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 17, second review: --prepend-existing copies back, cleanup recognises its copies, only our
# temp files are removed, a conflict in cleanup changes nothing, a resumed first configure keeps
# the user's directory modes, and a full inode table leaves the old tree.
load helpers

setup() {
  BIN="$BUILD/nodeprobe-mirror"
  T=$(mktemp -d "$BATS_TMPDIR/np-atomic.XXXXXX")
  C="$T/certs.d"
  unset CONTAINERD_REGISTRY_CONFIG_PATH MIRRORED_REGISTRIES MIRROR_TARGETS RESOLVE_TAGS \
    PREPEND_EXISTING MIRROR_DIAL_TIMEOUT MIRROR_BASIC_AUTH_DIR NODEPROBE_MIRROR_CONFIG NODE_IP
  export MIRROR_BASIC_AUTH_DIR="$T/no-secret"
  M=(-m http://10.0.0.5:30020)
}

teardown() {
  rm -rf "$T"
}

manifest() {
  (cd "$1" && find . -printf '%p %y %m %l\n' | sort &&
    find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# The LD_PRELOAD shim (test/bats/mirror/inject.c) into $T/inject.so; a SAN=1 binary accepts it
# after its own runtime.
build_shim() {
  command -v cc >/dev/null || skip "no C compiler for the LD_PRELOAD shim"
  cc -shared -fPIC -o "$T/inject.so" "$BATS_TEST_DIRNAME/mirror/inject.c" -ldl || skip "shim not built"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
}

# quay.io with a certificate its hosts.toml names
quay_tree() {
  mkdir -p "$C/quay.io"
  printf "server = 'https://quay.io'\n[host.'https://m.corp']\nca = 'ca.crt'\n" >"$C/quay.io/hosts.toml"
  printf 'CA' >"$C/quay.io/ca.crt"
}

@test "--prepend-existing copies the files of _backup/<dir> back beside the new hosts.toml" {
  quay_tree
  # a first configure without quay.io moves the whole directory into _backup
  "$BIN" configure --config-path "$C" -r docker.io "${M[@]}"
  [ ! -e "$C/quay.io" ] && [ -f "$C/_backup/quay.io/ca.crt" ]
  run "$BIN" configure --config-path "$C" -r docker.io -r quay.io "${M[@]}" --prepend-existing
  echo "$output"
  [ "$status" -eq 0 ]
  grep -q "ca = 'ca.crt'" "$C/quay.io/hosts.toml"
  [ "$(cat "$C/quay.io/ca.crt")" = CA ]
}

# The user's tree of the injection sweep: registry directories with files beside hosts.toml
# (one 0700), another registry's directory and a loose file.
inj_tree() {
  rm -rf "$C"
  mkdir -p "$C/docker.io" "$C/quay.io" "$C/reg.example"
  printf "server = 'https://registry-1.docker.io'\n[host.'https://m.corp']\nca = 'ca.crt'\n" >"$C/docker.io/hosts.toml"
  printf 'CA' >"$C/docker.io/ca.crt"
  printf 'K' >"$C/docker.io/client.key"
  chmod 600 "$C/docker.io/client.key"
  printf "server = 'https://quay.io'\n" >"$C/quay.io/hosts.toml"
  chmod 700 "$C/quay.io"
  printf "server = 'https://reg.example'\n" >"$C/reg.example/hosts.toml"
  printf 'x' >"$C/reg.example/ca.crt"
  printf 'loose' >"$C/loose"
}

@test "ENOSPC at each call of configure that changes a file: the tree as it was, and the next run recovers" {
  build_shim
  A=(--config-path "$C" -r docker.io -r ghcr.io -r quay.io "${M[@]}")
  fails=0
  for scen in first later; do
    for ((n = 1; n <= 60; n++)); do
      inj_tree
      if [ "$scen" = later ]; then
        # a later run: quay.io and ghcr.io new, ghcr.io with a user's hosts.toml to move
        "$BIN" configure --config-path "$C" -r docker.io -r reg.example "${M[@]}" 2>/dev/null
        mkdir "$C/ghcr.io"
        printf "server = 'https://ghcr.io'\n" >"$C/ghcr.io/hosts.toml"
      fi
      before=$(manifest "$C")
      st=0
      out=$(INJ_AT=$n INJ_MODE=enospc INJ_STICKY=1 LD_PRELOAD="$T/inject.so" "$BIN" configure "${A[@]}" 2>&1) || st=$?
      if [ "$st" -ne 0 ] && grep -q "the new files are in place" <<<"$out"; then
        # the last sync, after the new tree was in place: said so
        fails=$((fails + 1))
        grep -q "the file system is full (ENOSPC" <<<"$out" || { echo "$scen, call $n: $out"; false; }
      elif [ "$st" -ne 0 ]; then
        fails=$((fails + 1))
        [ "$(manifest "$C")" = "$before" ] ||
          { echo "$scen, call $n: $out"; diff <(echo "$before") <(manifest "$C"); false; }
        grep -q "the file system is full (ENOSPC" <<<"$out" || { echo "$scen, call $n: $out"; false; }
        grep -q "nothing was changed" <<<"$out" || { echo "$scen, call $n: $out"; false; }
      fi
      "$BIN" configure "${A[@]}" 2>/dev/null || { echo "$scen, call $n: rerun failed"; false; }
      [ -f "$C/ghcr.io/hosts.toml" ] && [ -f "$C/_backup/docker.io/hosts.toml" ]
      "$BIN" cleanup --config-path "$C" 2>/dev/null || { echo "$scen, call $n: cleanup failed"; false; }
    done
  done
  echo "# $fails of 120 injected runs failed" >&3
  ((fails > 0))
}

@test "cleanup takes back what --prepend-existing copied: a 0664 certificate, a symlinked one, a 2 MiB one" {
  quay_tree
  chmod 664 "$C/quay.io/ca.crt"
  printf 'CLIENT' >"$C/quay.io/real.cert"
  ln -s real.cert "$C/quay.io/client.cert"
  head -c $((2 << 20)) /dev/urandom >"$C/quay.io/bundle.pem"
  orig=$(manifest "$C")
  "$BIN" configure --config-path "$C" -r docker.io "${M[@]}"
  run "$BIN" configure --config-path "$C" -r docker.io -r quay.io "${M[@]}" --prepend-existing
  [ "$status" -eq 0 ]
  # the copies: modes at most 0644, the symlink as its target's bytes
  [ "$(stat -c %a "$C/quay.io/ca.crt")" = 644 ] && [ ! -L "$C/quay.io/client.cert" ]
  cmp "$C/quay.io/bundle.pem" "$C/_backup/quay.io/bundle.pem"
  run "$BIN" cleanup --config-path "$C"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(manifest "$C")" = "$orig" ]
}

@test "cleanup by this version after a configure --prepend-existing by an older one (\$OLD_BIN)" {
  [ -n "${OLD_BIN:-}" ] && [ -x "$OLD_BIN" ] || skip "OLD_BIN (an older nodeprobe-mirror) not given"
  quay_tree
  chmod 664 "$C/quay.io/ca.crt"
  ln -s ca.crt "$C/quay.io/ca-link.crt"
  orig=$(manifest "$C")
  "$OLD_BIN" configure --config-path "$C" -r docker.io -r quay.io "${M[@]}" --prepend-existing
  run "$BIN" cleanup --config-path "$C"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(manifest "$C")" = "$orig" ]
}

@test "a file named like our temp files is never removed: not in a directory configure writes, not by cleanup" {
  # the review's repro: a root-owned, 2 hours old .hosts.toml.backup of the user's in docker.io
  mkdir -p "$C/docker.io"
  echo "server = 'https://registry-1.docker.io'" >"$C/docker.io/hosts.toml"
  echo notes >"$C/docker.io/.hosts.toml.backup"
  touch -d '-2 hours' "$C/docker.io/.hosts.toml.backup"
  orig=$(manifest "$C")
  "$BIN" configure --config-path "$C" -r docker.io "${M[@]}"
  [ "$(cat "$C/docker.io/.hosts.toml.backup")" = notes ]
  "$BIN" configure --config-path "$C" -r docker.io "${M[@]}" --dial-timeout 300ms
  [ "$(cat "$C/docker.io/.hosts.toml.backup")" = notes ]
  "$BIN" cleanup --config-path "$C"
  [ "$(manifest "$C")" = "$orig" ]
}

@test "a file named like our temp files in a directory we do not write moves into _backup, never removed; never by a cleanup with nothing to clean" {
  mkdir -p "$C/reg.example" "$C/docker.io"
  printf "server = 'https://reg.example'\n" >"$C/reg.example/hosts.toml"
  printf "server = 'https://registry-1.docker.io'\n" >"$C/docker.io/hosts.toml"
  printf 'mine' >"$C/reg.example/.hosts.toml.Ab12Cd"
  printf 'mine' >"$C/docker.io/.hosts.toml.Ab12Cd"
  touch -d '-1 hour' "$C/reg.example/.hosts.toml.Ab12Cd" "$C/docker.io/.hosts.toml.Ab12Cd"
  orig=$(manifest "$C")
  # never configured: cleanup does nothing
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  [ "$(manifest "$C")" = "$orig" ]
  # reg.example is not written: it moves into _backup whole, and stays so on the next run
  "$BIN" configure --config-path "$C" -r ghcr.io "${M[@]}"
  "$BIN" configure --config-path "$C" -r ghcr.io "${M[@]}"
  [ -f "$C/_backup/reg.example/.hosts.toml.Ab12Cd" ] && [ -f "$C/_backup/docker.io/.hosts.toml.Ab12Cd" ]
  "$BIN" cleanup --config-path "$C"
  [ "$(manifest "$C")" = "$orig" ]
}

@test "cleanup with conflicts reports every one and changes nothing" {
  mkdir -p "$C/docker.io" "$C/reg.example"
  printf "server = 'https://registry-1.docker.io'\n" >"$C/docker.io/hosts.toml"
  printf "server = 'https://reg.example'\n" >"$C/reg.example/hosts.toml"
  printf 'CA' >"$C/reg.example/ca.crt"
  printf 'loose' >"$C/loose"
  orig=$(manifest "$C")
  "$BIN" configure --config-path "$C" -r docker.io "${M[@]}"
  # two entries of _backup whose places are taken by other files since
  mkdir "$C/reg.example"
  printf 'OTHER' >"$C/reg.example/ca.crt"
  printf 'other' >"$C/loose"
  before=$(manifest "$C")
  run "$BIN" cleanup --config-path "$C"
  echo "$output"
  [ "$status" -eq 1 ]
  grep -q "cannot put $C/_backup/reg.example/ca.crt back" <<<"$output"
  grep -q "cannot put $C/_backup/loose back" <<<"$output"
  grep -q "2 entries of _backup cannot be put back (listed above): nothing was changed" <<<"$output"
  [ "$(manifest "$C")" = "$before" ]
  rm -r "$C/reg.example" "$C/loose"
  run "$BIN" cleanup --config-path "$C"
  [ "$status" -eq 0 ]
  [ "$(manifest "$C")" = "$orig" ]
}

@test "a first configure killed after making .nodeprobe-backup/<dir>, resumed with other registries: the user's directory keeps its mode" {
  mkdir -p "$C/docker.io"
  chmod 750 "$C/docker.io"
  printf "server = 'https://registry-1.docker.io'\n" >"$C/docker.io/hosts.toml"
  printf 'CA' >"$C/docker.io/ca.crt"
  orig=$(manifest "$C")
  # what a kill leaves once staging made the directories (here with another mode)
  mkdir -m 700 -p "$C/.nodeprobe-backup/docker.io"
  "$BIN" configure --config-path "$C" -r quay.io "${M[@]}"
  [ "$(stat -c %a "$C/_backup/docker.io")" = 750 ]
  "$BIN" cleanup --config-path "$C"
  [ "$(manifest "$C")" = "$orig" ]
}

@test "killed at each call that changes a file, configure and cleanup never leave a registry directory without hosts.toml" {
  build_shim
  A=(--config-path "$C" -r docker.io -r ghcr.io -r quay.io "${M[@]}")
  inj_tree
  orig=$(manifest "$C")
  kills=0
  for cmd in configure cleanup; do
    for ((n = 1; n <= 60; n++)); do
      inj_tree
      [ "$cmd" = configure ] || "$BIN" configure "${A[@]}" 2>/dev/null
      if [ "$cmd" = configure ]; then
        INJ_AT=$n LD_PRELOAD="$T/inject.so" "$BIN" configure "${A[@]}" 2>/dev/null && st=0 || st=$?
      else
        INJ_AT=$n LD_PRELOAD="$T/inject.so" "$BIN" cleanup --config-path "$C" 2>/dev/null && st=0 || st=$?
      fi
      ((st == 137)) && kills=$((kills + 1))
      for d in docker.io quay.io; do
        [ -f "$C/$d/hosts.toml" ] || { echo "$cmd killed at call $n: no $d/hosts.toml"; ls -la "$C" "$C/$d"; false; }
      done
      "$BIN" configure "${A[@]}" 2>/dev/null || { echo "$cmd, call $n: configure after it failed"; false; }
      "$BIN" cleanup --config-path "$C" 2>/dev/null || { echo "$cmd, call $n: cleanup after it failed"; false; }
      [ "$(manifest "$C")" = "$orig" ] || { echo "$cmd, call $n:"; diff <(echo "$orig") <(manifest "$C"); false; }
    done
  done
  echo "# $kills of 120 runs killed" >&3
  ((kills > 0))
}

@test "a registry directory swapped for a symbolic link after the checks is never written through" {
  build_shim
  mkdir -p "$C/docker.io" "$T/outside" "$T/other"
  printf "server = 'https://registry-1.docker.io'\n" >"$C/docker.io/hosts.toml"
  printf 'CA' >"$C/docker.io/ca.crt"
  printf 'OUTSIDE' >"$T/other/hosts.toml"
  "$BIN" configure --config-path "$C" -r docker.io "${M[@]}"
  # a later run rewrites docker.io's hosts.toml and moves the user's new quay.io one; once it
  # stages, both directories become symbolic links to directories outside the config path
  mkdir "$C/quay.io"
  printf "server = 'https://quay.io'\n" >"$C/quay.io/hosts.toml"
  swap="mv '$C/docker.io' '$T/docker.io.real' && ln -s '$T/outside' '$C/docker.io' &&
    mv '$C/quay.io' '$T/quay.io.real' && ln -s '$T/other' '$C/quay.io'"
  run env INJ_MATCH="mkdir $C/.nodeprobe-stage" INJ_CMD="$swap" LD_PRELOAD="$T/inject.so" \
    "$BIN" configure --config-path "$C" -r docker.io -r quay.io "${M[@]}" --dial-timeout 300ms
  echo "$output"
  [ -L "$C/docker.io" ] && [ -L "$C/quay.io" ]
  [ "$status" -eq 1 ]
  grep -q "symbolic link" <<<"$output"
  [ -z "$(ls -A "$T/outside")" ]
  [ ! -e "$C/_backup/quay.io/hosts.toml" ]
}

# The number of the first call in $T/trace (INJ_TRACE) whose description holds the string $1.
call_of() {
  grep -m1 -F -- "$1" "$T/trace" | cut -d' ' -f1
}

@test "an undo never follows a registry directory swapped for a symbolic link meanwhile" {
  build_shim
  mkdir -p "$C/docker.io" "$C/quay.io" "$T/outside"
  printf "server = 'https://registry-1.docker.io'\n" >"$C/docker.io/hosts.toml"
  printf "server = 'https://quay.io'\n" >"$C/quay.io/hosts.toml"
  printf 'OUTSIDE' >"$T/outside/hosts.toml"
  "$BIN" configure --config-path "$C" -r docker.io -r quay.io "${M[@]}"
  cp -a "$C" "$T/base"
  A=(--config-path "$C" -r docker.io -r quay.io "${M[@]}" --dial-timeout 300ms)
  INJ_TRACE=1 INJ_LOG="$T/trace" LD_PRELOAD="$T/inject.so" "$BIN" configure "${A[@]}"
  n=$(call_of .old-1-0)
  [ -n "$n" ]
  rm -rf "$C" && cp -a "$T/base" "$C"
  # once docker.io holds our new file, it becomes a link to outside; quay.io's install then fails
  run env INJ_MATCH=.old-1-0 INJ_CMD="mv '$C/docker.io' '$T/real' && ln -s '$T/outside' '$C/docker.io'" \
    INJ_AT="$n" INJ_MODE=enospc INJ_STICKY=1 LD_PRELOAD="$T/inject.so" "$BIN" configure "${A[@]}"
  echo "$output"
  [ "$status" -ne 0 ] && [ -L "$C/docker.io" ]
  [ "$(ls -A "$T/outside")" = hosts.toml ] && [ "$(cat "$T/outside/hosts.toml")" = OUTSIDE ]
  # the undo acted in the directory itself: it holds its old hosts.toml again
  cmp "$T/real/hosts.toml" "$T/base/docker.io/hosts.toml"
  cmp "$C/quay.io/hosts.toml" "$T/base/quay.io/hosts.toml"
}

@test "killed while undoing an install, a registry directory still holds a hosts.toml" {
  build_shim
  mkdir -p "$C/docker.io" "$C/quay.io"
  printf "server = 'https://registry-1.docker.io'\n" >"$C/docker.io/hosts.toml"
  printf "server = 'https://quay.io'\n" >"$C/quay.io/hosts.toml"
  orig=$(manifest "$C")
  "$BIN" configure --config-path "$C" -r docker.io -r quay.io "${M[@]}"
  cp -a "$C" "$T/base"
  A=(--config-path "$C" -r docker.io -r quay.io "${M[@]}" --dial-timeout 300ms)
  INJ_TRACE=1 INJ_LOG="$T/trace" LD_PRELOAD="$T/inject.so" "$BIN" configure "${A[@]}"
  # install's fsync of docker.io, right after our hosts.toml replaced the old one there
  n=$(awk '/^[0-9]+ renameat hosts.toml -> hosts.toml/ { r = 1; next } r && / fsync$/ { print $1; exit }' "$T/trace")
  [ -n "$n" ]
  for k in 1 2 3 4; do
    rm -rf "$C" && cp -a "$T/base" "$C"
    st=0
    INJ_AT="$n" INJ_MODE=enospc INJ_STICKY=1 INJ_KILL2=$((n + k)) LD_PRELOAD="$T/inject.so" \
      "$BIN" configure "${A[@]}" 2>/dev/null || st=$?
    echo "# ENOSPC at call $n, killed at $((n + k)): status $st" >&3
    for d in docker.io quay.io; do
      [ -f "$C/$d/hosts.toml" ] || { echo "killed at $((n + k)): no $d/hosts.toml"; ls -la "$C/$d" "$C/.nodeprobe-stage"; false; }
    done
    "$BIN" configure "${A[@]}"
    "$BIN" cleanup --config-path "$C"
    [ "$(manifest "$C")" = "$orig" ]
  done
}

# manifest with each entry's owner and group
manifest_owners() {
  (cd "$1" && find . -printf '%p %y %m %U %G %l\n' | sort &&
    find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

@test "a registry directory that went whole into _backup and was configured later comes back with its mode and owner" {
  [ "$(id -u)" -eq 0 ] || skip "needs root to give quay.io another owner"
  mkdir -p "$C/docker.io" "$C/quay.io"
  printf "server = 'https://registry-1.docker.io'\n" >"$C/docker.io/hosts.toml"
  printf "server = 'https://quay.io'\n" >"$C/quay.io/hosts.toml"
  printf 'CA' >"$C/quay.io/ca.crt"
  chmod 700 "$C/quay.io"
  chown -R 1000:1000 "$C/quay.io"
  orig=$(manifest_owners "$C")
  "$BIN" configure --config-path "$C" -r docker.io "${M[@]}"
  [ ! -e "$C/quay.io" ]
  "$BIN" configure --config-path "$C" -r docker.io -r quay.io "${M[@]}"
  [ "$(stat -c '%a %u %g' "$C/quay.io")" = "700 1000 1000" ]
  "$BIN" cleanup --config-path "$C"
  diff <(echo "$orig") <(manifest_owners "$C")
}

@test "a registry dropped on a later run moves into _backup whole, as on a first run without it" {
  mkdir -p "$C/docker.io" "$C/reg.example"
  printf "server = 'https://registry-1.docker.io'\n" >"$C/docker.io/hosts.toml"
  printf "server = 'https://reg.example'\n" >"$C/reg.example/hosts.toml"
  printf 'x' >"$C/reg.example/ca.crt"
  chmod 750 "$C/reg.example"
  orig=$(manifest "$C")
  # what a first run without reg.example gives
  "$BIN" configure --config-path "$C" -r docker.io "${M[@]}"
  once=$(manifest "$C")
  "$BIN" cleanup --config-path "$C"
  [ "$(manifest "$C")" = "$orig" ]
  "$BIN" configure --config-path "$C" -r docker.io -r reg.example "${M[@]}"
  run "$BIN" configure --config-path "$C" -r docker.io "${M[@]}"
  echo "$output"
  [ "$status" -eq 0 ]
  [ ! -e "$C/reg.example" ]
  diff <(echo "$once") <(manifest "$C")
  "$BIN" cleanup --config-path "$C"
  [ "$(manifest "$C")" = "$orig" ]
}

# sweep2 scenarios: the tree before the run ($1: later, prepend, cleanup), and the run itself
sweep_prep() {
  inj_tree
  case $1 in
  later)
    "$BIN" configure --config-path "$C" -r docker.io -r reg.example "${M[@]}" 2>/dev/null
    mkdir "$C/ghcr.io"
    printf "server = 'https://ghcr.io'\n" >"$C/ghcr.io/hosts.toml"
    ;;
  prepend) "$BIN" configure --config-path "$C" -r docker.io "${M[@]}" 2>/dev/null ;;
  cleanup) "$BIN" configure --config-path "$C" -r docker.io -r ghcr.io -r quay.io "${M[@]}" 2>/dev/null ;;
  esac
}
sweep_run() {
  local scen=$1
  shift
  case $scen in
  later) "$@" "$BIN" configure --config-path "$C" -r docker.io -r ghcr.io -r quay.io "${M[@]}" ;;
  prepend) "$@" "$BIN" configure --config-path "$C" -r docker.io -r quay.io "${M[@]}" --prepend-existing ;;
  cleanup) "$@" "$BIN" cleanup --config-path "$C" ;;
  esac
}

@test "sweep: killed at each call of a later run and a --prepend-existing run, killed while undoing, ENOSPC in cleanup: never a registry directory without hosts.toml, and configure + cleanup give back the tree" {
  build_shim
  runs=0
  for what in later:kill prepend:kill later:undo cleanup:enospc; do
    scen=${what%%:*} how=${what#*:}
    inj_tree
    [ "$scen" != later ] || { mkdir "$C/ghcr.io"; printf "server = 'https://ghcr.io'\n" >"$C/ghcr.io/hosts.toml"; }
    orig=$(manifest "$C")
    sweep_prep "$scen"
    rm -f "$T/trace"
    sweep_run "$scen" env INJ_TRACE=1 INJ_LOG="$T/trace" LD_PRELOAD="$T/inject.so" >/dev/null 2>&1
    N=$(wc -l <"$T/trace")
    for ((n = 1; n <= N; n++)); do
      sweep_prep "$scen"
      case $how in
      kill) inj=(INJ_AT=$n) ;;
      undo) inj=(INJ_AT=$n INJ_MODE=enospc INJ_STICKY=1 INJ_KILL2=$((n + 2))) ;;
      enospc) inj=(INJ_AT=$n INJ_MODE=enospc INJ_STICKY=1) ;;
      esac
      st=0
      sweep_run "$scen" env "${inj[@]}" LD_PRELOAD="$T/inject.so" >/dev/null 2>&1 || st=$?
      runs=$((runs + 1))
      for d in docker.io quay.io ghcr.io reg.example; do
        [ ! -d "$C/$d" ] || [ -f "$C/$d/hosts.toml" ] ||
          { echo "$what, call $n (status $st): no $d/hosts.toml"; ls -la "$C" "$C/$d"; false; }
      done
      if [ "$scen" != cleanup ]; then
        sweep_run "$scen" env >/dev/null 2>&1 || { echo "$what, call $n: the rerun failed"; false; }
      fi
      "$BIN" cleanup --config-path "$C" 2>/dev/null || { echo "$what, call $n: cleanup failed"; false; }
      [ "$(manifest "$C")" = "$orig" ] || { echo "$what, call $n:"; diff <(echo "$orig") <(manifest "$C"); false; }
    done
  done
  echo "# $runs injected runs" >&3
}
