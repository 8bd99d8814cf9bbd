# SPDX-License-Identifier: GPL-2.0-or-later
# Shared bats helpers. Tests run from the repo root; binaries are in $BUILD.
: "${NP_ROOT:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${BUILD:=$NP_ROOT/build}"
: "${SHARED:=${NP_SHARED:-$NP_ROOT/../shared}}"
# The fixtures every clone has (test/fixtures/README.md), and the wider set kept beside a
# CI checkout in ../shared/fixtures: sweeps over it skip when it is absent.
FIX="$NP_ROOT/test/fixtures"
SHARED_FIX="$SHARED/fixtures"

# shared_fix_or_skip: skip the calling test when ../shared/fixtures is absent (a plain clone).
shared_fix_or_skip() {
  [ -d "$SHARED_FIX" ] || skip "../shared/fixtures absent: the wider sweep needs it"
}

# np_scratch: T, a scratch directory with an empty proc, modules dir, features dir and sysfs
# (the nodeprobe source tests' setup; their teardown removes $T).
np_scratch() {
  T=$(mktemp -d)
  mkdir -p "$T/proc" "$T/modules" "$T/fd" "$T/sys/bus"
}

# np_dry ARGS...: nodeprobe dry run on np_scratch's T, no built-in rules, its empty sysfs and
# proc unless ARGS say otherwise.
np_dry() {
  "$BUILD/nodeprobe" --sysfs "$T/sys" --proc "$T/proc" --modules-dir "$T/modules" \
    --features-dir "$T/fd" --no-builtin-rules --dry-run "$@"
}

# run_expect EXPECTED_FILE CMD...: run CMD, require exit 0 and stdout == file (diff -u on mismatch).
run_expect() {
  local expected=$1; shift
  run "$@"
  if [ "$status" -ne 0 ]; then
    echo "exit $status: $output" >&2
    return 1
  fi
  diff -u "$expected" <(printf '%s\n' "$output") >&2
}

# run_expect_fail CODE CMD...: run CMD, require exit CODE.
run_expect_fail() {
  local code=$1; shift
  run "$@"
  if [ "$status" -ne "$code" ]; then
    echo "expected exit $code, got $status: $output" >&2
    return 1
  fi
}

# Long options named in --help and in a man page must be the same set.
check_help_matches_man() {
  local bin=$1 man=$2
  diff -u <("$bin" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u) \
          <(sed -n 's/\\-/-/g; /^\.\(TP\|B\|BR\|IP\)/,+1p' "$man" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u) >&2
}

# mknode PATH...: character device nodes (1:3, /dev/null's) for nodeprobe-devices' dev roots: a
# class offers only character and block nodes. Skips the test where mknod is refused (not root).
mknode() {
  local p
  for p in "$@"; do
    mknod "$p" c 1 3 2>/dev/null || skip "mknod $p refused (device nodes need root)"
  done
}

# wait_for CMD...: retry CMD for up to 5 s (a socket, a registration, a log line).
wait_for() {
  local i
  for i in $(seq 50); do "$@" && return 0; sleep 0.1; done
  return 1
}

# stop_plugin: the devices suites' teardown: the plugin and the test kubelet they started.
stop_plugin() {
  [ -n "${PLUGIN:-}" ] && kill "$PLUGIN" 2>/dev/null; [ -n "${KUBELET:-}" ] && kill "$KUBELET" 2>/dev/null
  wait 2>/dev/null || true
}

# go_kubelet_build: build test/kubelet/go-kubelet (grpc-go) into $BUILD/go-kubelet, from
# setup_file; when Debian's Go packages are absent (exit 77) the reason is kept for go_kubelet,
# in this suite's own files (suites build side by side; a binary left by an earlier build is not
# used when this one could not build).
go_kubelet_build() {
  local rc=0
  "$NP_ROOT/test/kubelet/build-go-kubelet" "$BUILD/go-kubelet" 2>"$BATS_FILE_TMPDIR/go-kubelet.why" || rc=$?
  echo "$rc" >"$BATS_FILE_TMPDIR/go-kubelet.rc"
  [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]
}

# go_kubelet: skip unless the grpc-go peer was built (saying why not); sets GK, its path.
go_kubelet() {
  [ "$(cat "$BATS_FILE_TMPDIR/go-kubelet.rc" 2>/dev/null)" = 0 ] && [ -x "$BUILD/go-kubelet/go-kubelet" ] ||
    skip "no grpc-go peer: $(tail -n1 "$BATS_FILE_TMPDIR/go-kubelet.why" 2>/dev/null) (scripts/install-deps)"
  GK="$BUILD/go-kubelet/go-kubelet"
}
