#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe's command line and its features.d file: atomic, idempotent, never half-written.

load helpers

NUC="$FIX/pci/linuxhw-intel-nuc12-alderlake"

setup() {
  T=$(mktemp -d)
  mkdir -p "$T/proc" "$T/modules" "$T/fd" "$T/bus"
  NP=("$BUILD/nodeprobe" --sysfs "$NUC" --proc "$T/proc" --modules-dir "$T/modules" --features-dir "$T/fd")
}

teardown() {
  chmod -R u+w "$T" 2>/dev/null
  rm -rf "$T"
}

@test "--help and the man page list the same options" {
  check_help_matches_man "$BUILD/nodeprobe" cmd/nodeprobe/nodeprobe.8
}

@test "-V prints the version" {
  run "$BUILD/nodeprobe" -V
  [ "$status" -eq 0 ]
  [[ "$output" =~ ^nodeprobe\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "--help and -V only print: nothing is scanned or written" {
  for opt in --help -h -V --version; do
    run "${NP[@]}" "$opt"
    [ "$status" -eq 0 ]
    [ ! -e "$T/fd/nodeprobe" ] || { echo "$opt wrote the features file" >&2; return 1; }
  done
  run "${NP[@]}" --fdt "$T/none.dtb" -V     # no scan: a missing blob is not even opened
  [ "$status" -eq 0 ]
  [ "$output" = "nodeprobe 0.1.0" ] || [[ "$output" =~ ^nodeprobe\ [0-9.]+$ ]]
}

@test "an unknown option is a usage error (exit 2) naming it" {
  run_expect_fail 2 "$BUILD/nodeprobe" --bogus
  [[ "${lines[0]}" == "nodeprobe: error: unknown option '--bogus'" ]]
}

@test "a missing option argument is a usage error naming the option as written, in every binary" {
  run_expect_fail 2 "$BUILD/nodeprobe" --sysfs
  [ "${lines[0]}" = "nodeprobe: error: missing argument to option '--sysfs'" ]
  run_expect_fail 2 "$BUILD/nodeprobe" --sys
  [ "${lines[0]}" = "nodeprobe: error: missing argument to option '--sysfs'" ]
  run_expect_fail 2 "$BUILD/nodeprobe" -r
  [ "${lines[0]}" = "nodeprobe: error: missing argument to option '-r'" ]
  run_expect_fail 2 "$BUILD/nodeprobe-reload" --context
  [ "${lines[0]}" = "nodeprobe-reload: error: missing argument to option '--context'" ]
  run_expect_fail 2 "$BUILD/nodeprobe-mirror" --config-path
  [ "${lines[0]}" = "nodeprobe-mirror: error: missing argument to option '--config-path'" ]
  run_expect_fail 2 "$BUILD/nodeprobe-reload" --bogus=1
  [ "${lines[0]}" = "nodeprobe-reload: error: unknown option '--bogus'" ]
  run_expect_fail 2 "$BUILD/nodeprobe" -dQ
  [ "${lines[0]}" = "nodeprobe: error: unknown option '-Q'" ]
}

@test "an option after a NODE-NAME is a usage error, not a node name (nothing written)" {
  run_expect_fail 2 "${NP[@]}" timer --dry-run
  [[ "${lines[0]}" == "nodeprobe: error: option '--dry-run' after NODE-NAME 'timer': options come first" ]]
  [ ! -e "$T/fd/nodeprobe" ]
  # After "--" everything is a node name, as getopt has it.
  run "${NP[@]}" --dry-run -- timer
  [ "$status" -eq 0 ]
  [ ! -e "$T/fd/nodeprobe" ]
}

@test "the file equals --dry-run output, mode 0644, sorted, no comments" {
  run "${NP[@]}" --dry-run
  [ "$status" -eq 0 ]
  [ -n "$output" ]
  dry=$output
  [ ! -e "$T/fd/nodeprobe" ]            # dry run writes nothing
  run "${NP[@]}"
  [ "$status" -eq 0 ]
  [ "$(cat "$T/fd/nodeprobe")" = "$dry" ]
  [ "$(stat -c %a "$T/fd/nodeprobe")" = 644 ]
  diff -u <(sort "$T/fd/nodeprobe") "$T/fd/nodeprobe"
  ! grep -q '^#' "$T/fd/nodeprobe" || false
  [ "$(ls -A "$T/fd")" = nodeprobe ]     # no temp file left behind
}

@test "an unchanged file is not rewritten" {
  "${NP[@]}"
  ino=$(stat -c %i "$T/fd/nodeprobe")
  touch -d @1000000000 "$T/fd/nodeprobe"
  "${NP[@]}"
  [ "$(stat -c %i "$T/fd/nodeprobe")" = "$ino" ]
  [ "$(stat -c %Y "$T/fd/nodeprobe")" = 1000000000 ]
}

@test "stale labels clear: a run that finds nothing writes an empty file" {
  printf 'old.example.com/x=true\n' > "$T/fd/nodeprobe"
  mkdir -p "$T/empty/bus"
  run "$BUILD/nodeprobe" --sysfs "$T/empty" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/fd" --no-builtin-rules
  [ "$status" -eq 0 ]
  [ -f "$T/fd/nodeprobe" ]
  [ ! -s "$T/fd/nodeprobe" ]
}

@test "a --sysfs or --proc root that is not there is bad input, not an empty machine (old file kept)" {
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  run_expect_fail 3 "$BUILD/nodeprobe" --sysfs "$T/no-such-sys" --proc "$T/proc" \
    --modules-dir "$T/modules" --features-dir "$T/fd"
  [ "$output" = "nodeprobe: error: --sysfs $T/no-such-sys: No such file or directory" ]
  run_expect_fail 3 "$BUILD/nodeprobe" --sysfs "$NUC" --proc "$T/fd/nodeprobe" \
    --modules-dir "$T/modules" --features-dir "$T/fd"
  [ "$output" = "nodeprobe: error: --proc $T/fd/nodeprobe: not a directory" ]
  [ "$(cat "$T/fd/nodeprobe")" = "keep.example.com/x=true" ]
}

@test "a --sysfs that is a directory but not a sysfs (a wrong hostPath such as /) is bad input" {
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  mkdir -p "$T/root/etc" "$T/root/usr"
  run_expect_fail 3 "$BUILD/nodeprobe" --sysfs "$T/root" --proc "$T/proc" \
    --modules-dir "$T/modules" --features-dir "$T/fd"
  [ "$output" = "nodeprobe: error: --sysfs $T/root: not a sysfs (no bus/ or firmware/ in it)" ]
  [ "$(cat "$T/fd/nodeprobe")" = "keep.example.com/x=true" ]
  mkdir "$T/root/firmware"
  run "$BUILD/nodeprobe" --dry-run --sysfs "$T/root" --proc "$T/proc" --modules-dir "$T/modules"
  [ "$status" -eq 0 ]
}

@test "the features dir is created when missing" {
  run "$BUILD/nodeprobe" --sysfs "$NUC" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/new/features.d"
  [ "$status" -eq 0 ]
  [ -f "$T/new/features.d/nodeprobe" ]
}

# rules_of_size N LAST: a rule with N-1 labels of 64 bytes ("x.example.com/kNNNNN=<42 v>\n") and
# one whose value has LAST characters, so the features file is 64*(N-1) + 22 + LAST bytes.
rules_of_size() {
  printf 'apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata: {name: big}\nspec:\n  rules:\n'
  printf '    - name: big\n      labels:\n'
  awk -v n="$1" -v last="$2" 'BEGIN {
    v = sprintf("%042d", 0); gsub(/0/, "v", v)
    for (i = 0; i < n - 1; i++) printf "        \"x.example.com/k%05d\": \"%s\"\n", i, v
    w = sprintf("%0" last "d", 0); gsub(/0/, "w", w)
    printf "        \"x.example.com/k%05d\": \"%s\"\n", n - 1, w }'
}

@test "the file may be exactly 65536 bytes (NFD's limit); one byte more is exit 3, old file kept" {
  mkdir -p "$T/empty/bus"
  NPE=("$BUILD/nodeprobe" --sysfs "$T/empty" --proc "$T/proc" --modules-dir "$T/modules"
       --features-dir "$T/fd" --no-builtin-rules)
  rules_of_size 1024 42 > "$T/max.yaml"
  run "${NPE[@]}" -r "$T/max.yaml"
  [ "$status" -eq 0 ]
  [ "$(stat -c %s "$T/fd/nodeprobe")" -eq 65536 ]
  [ "$(wc -l < "$T/fd/nodeprobe")" -eq 1024 ]
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  rules_of_size 1024 43 > "$T/over.yaml"
  run_expect_fail 3 "${NPE[@]}" -r "$T/over.yaml"
  [ "$output" = "nodeprobe: error: 1024 labels exceed NFD's feature file limit of 65536 bytes" ]
  [ "$(cat "$T/fd/nodeprobe")" = "keep.example.com/x=true" ]
  [ "$(ls -A "$T/fd")" = nodeprobe ]
}

@test "under umask 077 the file is still 0644 and a created features dir 0755 (nfd-worker runs as 65534)" {
  run bash -c 'umask 077; exec "$@"' _ "$BUILD/nodeprobe" --sysfs "$NUC" --proc "$T/proc" \
    --modules-dir "$T/modules" --features-dir "$T/new/features.d"
  [ "$status" -eq 0 ]
  [ "$(stat -c %a "$T/new/features.d/nodeprobe")" = 644 ]
  [ "$(stat -c %a "$T/new/features.d")" = 755 ]
  [ "$(stat -c %a "$T/new")" = 755 ]
}

@test "a malformed rules file: exit 3, file:line:col, previous file untouched" {
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  printf 'apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nspec:\n  rules: [\n' > "$T/bad.yaml"
  run_expect_fail 3 "${NP[@]}" --rules "$T/bad.yaml"
  [[ "$output" == "nodeprobe: error: $T/bad.yaml:"[0-9]*:[0-9]*": "* ]]
  [ "$(cat "$T/fd/nodeprobe")" = "keep.example.com/x=true" ]
}

@test "messages stay on one line: control characters from the input are escaped" {
  printf 'apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata: {name: nl}\nspec:\n  rules:\n    - name: "a\\tb"\n      "bad\\nfield": 1\n' > "$T/nl.yaml"
  run_expect_fail 3 "${NP[@]}" --rules "$T/nl.yaml"
  [ "${#lines[@]}" -eq 1 ]
  [ "${lines[0]}" = "nodeprobe: error: $T/nl.yaml:7:7: unknown field 'bad\\nfield' in rule 'a\\tb'" ]
}

@test "a corrupt devicetree blob: exit 3 naming the file, previous file untouched" {
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  head -c 200 "$FIX/dtb/arm64/broadcom/bcm2711-rpi-4-b.dtb" > "$T/trunc.dtb"
  run_expect_fail 3 "${NP[@]}" --fdt "$T/trunc.dtb"
  [[ "$output" == "nodeprobe: error: $T/trunc.dtb"* ]]
  [ "$(cat "$T/fd/nodeprobe")" = "keep.example.com/x=true" ]
}

@test "an unwritable features dir: exit 4" {
  touch "$T/file"
  run_expect_fail 4 "$BUILD/nodeprobe" --sysfs "$NUC" --proc "$T/proc" \
    --modules-dir "$T/modules" --features-dir "$T/file/features.d"
  [[ "$output" == "nodeprobe: error: $T/file/features.d: "* ]]
}

@test "a full disk: exit 4, previous file untouched, no temp file left" {
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  # RLIMIT_FSIZE 0 makes every write fail with EFBIG, as a full disk fails with ENOSPC.
  run bash -c 'trap "" XFSZ; ulimit -f 0; exec "$@"' _ "${NP[@]}"
  [ "$status" -eq 4 ]
  [[ "$output" == "nodeprobe: error: $T/fd/nodeprobe: "* ]]
  [ "$(cat "$T/fd/nodeprobe")" = "keep.example.com/x=true" ]
  [ "$(ls -A "$T/fd")" = nodeprobe ]
}

@test "README's -extra-label-ns list (NFD < v0.13) names every namespace nodeprobe writes" {
  list=$(grep -oE -- '-extra-label-ns=[a-z0-9.,-]+' README.md | head -1 | cut -d= -f2)
  [ -n "$list" ]
  {
    for d in "$FIX"/pci/*/; do
      "$BUILD/nodeprobe" --dry-run --sysfs "$d" --proc "$T/proc" --modules-dir "$T/modules"
    done
    "$BUILD/nodeprobe" --dry-run --sysfs "$T" --proc "$T/proc" --modules-dir "$T/modules" \
      --fdt "$FIX/dtb/arm64/broadcom/bcm2711-rpi-4-b.dtb"
  } > "$T/all" 2>/dev/null
  grep -q '^beta\.devicetree\.org/' "$T/all"
  grep -q '^nvidia\.com/' "$T/all"
  # Allowed by every NFD release: feature.node.kubernetes.io and its sub-namespaces.
  for ns in $(cut -d/ -f1 "$T/all" | sort -u | grep -vE '^(.*\.)?feature\.node\.kubernetes\.io$'); do
    [[ ",$list," == *",$ns,"* ]] || { echo "README misses $ns in -extra-label-ns=$list" >&2; return 1; }
  done
}

@test "the version lives in the Makefile: --version, built man pages and k8s image tags all carry it" {
  v=$(sed -n 's/^VERSION *:= *//p' "$NP_ROOT/Makefile")
  [ -n "$v" ]
  for b in nodeprobe nodeprobe-mirror nodeprobe-reload; do
    run "$BUILD/$b" --version
    [ "$status" -eq 0 ]
    [[ $output == *" $v"* ]] || { echo "$b --version: $output" >&2; return 1; }
    grep -q "^\.TH [A-Z-]* 8 \"[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]\" \"nodeprobe $v\"" "$BUILD/man/$b.8"
    run grep -l '@VERSION@\|@DATE@' "$BUILD/man/$b.8"
    [ "$status" -eq 1 ]
  done
  # no other version is written anywhere but as the image tag of this version
  run grep -rnoE 'nodeprobe:[0-9]+\.[0-9]+\.[0-9]+|newTag: "[0-9.]+"|tag: v[0-9.]+' "$NP_ROOT/k8s"
  [ "$status" -eq 0 ]
  # (upstream charts pinned in k8s/flux/spegel carry their own versions)
  bad=$(grep -vE "(nodeprobe:|newTag: \"|tag: v)$v\"?\$" <<<"$output" | grep -v '/k8s/flux/spegel/' || true)
  [ -z "$bad" ] || { echo "other versions: $bad" >&2; return 1; }
  # The chart's version and appVersion, and the chart tag Flux pulls.
  grep -qx "version: $v" "$NP_ROOT/k8s/chart/nodeprobe/Chart.yaml"
  grep -qx "appVersion: \"$v\"" "$NP_ROOT/k8s/chart/nodeprobe/Chart.yaml"
  grep -qx "    tag: $v" "$NP_ROOT/k8s/flux/nodeprobe/ocirepository.yaml"
}

@test "a verbose dry run ends with how many labels and where they would be written, also for none" {
  run "$BUILD/nodeprobe" --dry-run -v --sysfs "$T" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/fd"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "nodeprobe: 0 labels (dry run; would be written to $T/fd/nodeprobe)" ]
  [ ! -e "$T/fd/nodeprobe" ]
  out=$("$BUILD/nodeprobe" --dry-run -v --sysfs "$NUC" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/fd" 2>"$T/err")
  [ "$(wc -l <<<"$out")" -eq 3 ]
  [ "$(tail -1 "$T/err")" = "nodeprobe: 3 labels (dry run; would be written to $T/fd/nodeprobe)" ]
}

@test "a dot-temp file a killed run left (ours, older than a minute) is removed by the next run" {
  old="$T/fd/.nodeprobe.Ab3xYz" young="$T/fd/.nodeprobe.Qw9rTy"
  printf 'half' > "$old"; touch -d '2 minutes ago' "$old"
  printf 'busy' > "$young"
  printf 'x' > "$T/fd/.nodeprobe.toolong1"; touch -d '2 minutes ago' "$T/fd/.nodeprobe.toolong1"
  printf 'x' > "$T/fd/.other.Ab3xYz"; touch -d '2 minutes ago' "$T/fd/.other.Ab3xYz"
  ln -s /etc/hostname "$T/fd/.nodeprobe.L1nk00"
  run "${NP[@]}" --sysfs "$NUC" --features-dir "$T/fd"
  [ "$status" -eq 0 ]
  [ ! -e "$old" ]
  [ -e "$young" ]
  [ -e "$T/fd/.nodeprobe.toolong1" ]
  [ -e "$T/fd/.other.Ab3xYz" ]
  [ -L "$T/fd/.nodeprobe.L1nk00" ]
  [ -s "$T/fd/nodeprobe" ]
}

@test "--remove deletes the file nodeprobe wrote, and a second run is a no-op (exit 0)" {
  "${NP[@]}"
  [ -s "$T/fd/nodeprobe" ]
  printf 'other.example.com/x=true\n' >"$T/fd/other"
  : >"$T/fd/.nodeprobe.AbC123"                          # a killed run's dot-temp file
  run "$BUILD/nodeprobe" --features-dir "$T/fd" --remove -v
  [ "$status" -eq 0 ]
  [[ $output == *"$T/fd/nodeprobe: removed"* ]]
  [ "$(ls -A "$T/fd")" = other ]                         # only ours went; other files stay
  [ "$(cat "$T/fd/other")" = other.example.com/x=true ]
  run "$BUILD/nodeprobe" --features-dir "$T/fd" --remove
  [ "$status" -eq 0 ]
  [ "$output" = "" ]
  run "$BUILD/nodeprobe" --features-dir "$T/none/features.d" --remove
  [ "$status" -eq 0 ]
  [ ! -e "$T/none" ]                                     # nothing created either
  # an empty file (a run that found no labels) is ours too
  mkdir -p "$T/empty/bus"
  "$BUILD/nodeprobe" --sysfs "$T/empty" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/fd" --no-builtin-rules
  [ -f "$T/fd/nodeprobe" ] && [ ! -s "$T/fd/nodeprobe" ]
  "$BUILD/nodeprobe" --features-dir "$T/fd" --remove
  [ ! -e "$T/fd/nodeprobe" ]
}

@test "--remove refuses a file that is not nodeprobe's and leaves it as it was (exit 5)" {
  local c
  for c in '# hand-written\nexample.com/x=true\n' 'example.com/x=true\n\n' 'example.com/b=1\nexample.com/a=1\n' \
    'not a label\n' 'example.com/x=true' 'example.com/x=a b\n' 'x=1\0\n'; do
    printf "$c" >"$T/fd/nodeprobe"
    chmod 644 "$T/fd/nodeprobe"
    cp "$T/fd/nodeprobe" "$T/before"
    run "$BUILD/nodeprobe" --features-dir "$T/fd" --remove
    { [ "$status" -eq 5 ] && [[ $output == "nodeprobe: error: $T/fd/nodeprobe: not nodeprobe's file ("*"): left alone; delete it by hand if it is stale" ]]; } ||
      { echo "content '$c': $status $output" >&2; return 1; }
    cmp "$T/before" "$T/fd/nodeprobe"
  done
  printf 'example.com/x=true\n' >"$T/fd/nodeprobe"
  chmod 600 "$T/fd/nodeprobe"                            # nodeprobe writes 0644
  run "$BUILD/nodeprobe" --features-dir "$T/fd" --remove
  [ "$status" -eq 5 ]
  [[ $output == *"(its mode is not 0644)"* ]]
  rm "$T/fd/nodeprobe"
  mkdir "$T/fd/nodeprobe"                                # not a regular file
  run "$BUILD/nodeprobe" --features-dir "$T/fd" --remove
  [ "$status" -eq 5 ]
  [ -d "$T/fd/nodeprobe" ]
}

@test "--remove never follows a symlink out of the features dir" {
  mkdir "$T/outside"
  printf 'example.com/x=true\n' >"$T/outside/nodeprobe"  # looks like ours, but elsewhere
  chmod 644 "$T/outside/nodeprobe"
  ln -s ../outside/nodeprobe "$T/fd/nodeprobe"
  run "$BUILD/nodeprobe" --features-dir "$T/fd" --remove
  [ "$status" -eq 5 ]
  [ "$output" = "nodeprobe: error: $T/fd/nodeprobe: a symbolic link, not nodeprobe's file: left alone, not followed" ]
  [ -L "$T/fd/nodeprobe" ]
  [ "$(cat "$T/outside/nodeprobe")" = example.com/x=true ]
  # a dangling link too
  rm "$T/fd/nodeprobe"
  ln -s /nonexistent "$T/fd/nodeprobe"
  run "$BUILD/nodeprobe" --features-dir "$T/fd" --remove
  [ "$status" -eq 5 ]
}

@test "--remove scans nothing: --dry-run or a NODE-NAME with it is a usage error" {
  "${NP[@]}"
  run "$BUILD/nodeprobe" --features-dir "$T/fd" --remove --dry-run
  [ "$status" -eq 2 ]
  [[ $output == *"--remove scans nothing"* ]]
  run "$BUILD/nodeprobe" --features-dir "$T/fd" --remove timer
  [ "$status" -eq 2 ]
  [ -s "$T/fd/nodeprobe" ]
  # it reads no sysfs: a missing --sysfs root is not an error here
  run "$BUILD/nodeprobe" --sysfs "$T/nonexistent" --features-dir "$T/fd" --remove
  [ "$status" -eq 0 ]
  [ ! -e "$T/fd/nodeprobe" ]
}
