#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The first ten minutes (issue 29): make run installs only the build's packages and ends with a
# picture of what nodeprobe saw; make test's runner prints each suite's time and keeps a failed
# suite's output together.

load helpers

setup() {
  W=$BATS_TEST_TMPDIR
  # install-deps' view of a machine with nothing installed, as a user: it names what it would
  # install and stops (exit 1) before any apt call
  mkdir -p "$W/bin"
  printf '#!/bin/sh\nexit 1\n' >"$W/bin/dpkg-query"
  printf '#!/bin/sh\n[ "$1" = -u ] && { echo 1000; exit 0; }\nexec /usr/bin/id "$@"\n' >"$W/bin/id"
  chmod +x "$W/bin/dpkg-query" "$W/bin/id"
}

# would_install ARGS...: the packages install-deps ARGS names on an empty machine, one a line
would_install() {
  run env PATH="$W/bin:$PATH" "$NP_ROOT/scripts/install-deps" "$@"
  [ "$status" -eq 1 ]
  sed -n 's/^install-deps: error: need root to install: //p' <<<"$output" | tr ' ' '\n'
}

@test "install-deps --run names nodeprobe's libraries, --build the hooks' too; without either the tests' peers too" {
  would_install --run >"$W/run"
  would_install --build >"$W/build"
  would_install >"$W/all"
  for p in gcc g++ make libfdt-dev libpci-dev libre2-dev libyajl-dev nettle-dev libdeflate-dev; do
    grep -qx "$p" "$W/run" || { echo "--run lacks $p" >&2; return 1; }
  done
  for p in libcurl4-openssl-dev libjansson-dev libmicrohttpd-dev libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler; do
    ! grep -qx "$p" "$W/run" || { echo "--run names $p" >&2; return 1; }
  done
  [ -z "$(comm -23 <(sort "$W/run") <(sort "$W/build"))" ]
  for p in gcc g++ make libfdt-dev libpci-dev libcurl4-openssl-dev libre2-dev protobuf-c-compiler; do
    grep -qx "$p" "$W/build" || { echo "--build lacks $p" >&2; return 1; }
  done
  for p in bats containerd docker-registry prometheus golang-go clang skopeo; do
    ! grep -qx "$p" "$W/build" || { echo "--build names $p" >&2; return 1; }
    grep -qx "$p" "$W/all" || { echo "the full set lacks $p" >&2; return 1; }
  done
  # every build package is in the full set
  [ -z "$(comm -23 <(sort "$W/build") <(sort "$W/all"))" ]
  run "$NP_ROOT/scripts/install-deps" --tests
  [ "$status" -eq 2 ]
  [[ $output == *"unknown argument '--tests'"* ]]
}

@test "make run uses install-deps --run, make deps-build --build, make test the full set" {
  run make -C "$NP_ROOT" -n --no-print-directory run BUILD="$BUILD"
  grep -qx 'scripts/install-deps --run' <<<"$output"
  run make -C "$NP_ROOT" -n --no-print-directory deps-build BUILD="$BUILD"
  grep -qx 'scripts/install-deps --build' <<<"$output"
  run make -C "$NP_ROOT" -n --no-print-directory test BUILD="$BUILD"
  grep -qx 'scripts/install-deps' <<<"$output"
}

@test "nodeprobe links none of the hooks' libraries and builds without protoc-c" {
  # its own archive, objects and libraries: no -lcurl, -ljansson, -lmicrohttpd, -lnghttp2,
  # -lprotobuf-c on its link line, and no generated (protoc-c) file among what it needs
  local b=$BATS_TEST_TMPDIR/b
  run make -C "$NP_ROOT" -n --no-print-directory BUILD="$b" "$b/nodeprobe"
  [ "$status" -eq 0 ]
  link=$(grep -E -- "-o $b/nodeprobe " <<<"$output")
  [ -n "$link" ]
  for l in -lcurl -ljansson -lmicrohttpd -lnghttp2 -lprotobuf-c; do
    ! grep -qw -- "$l" <<<"$link" || { echo "nodeprobe links $l" >&2; return 1; }
  done
  grep -q -- '-lpci' <<<"$link"
  ! grep -q 'protoc-c\|pb-c' <<<"$output" || false
  ! grep -qE "pkg/(reload|kube|mirror|dra|toml)/" <<<"$output" || false
}

@test "make run ends with what nodeprobe saw, the labels, and with none a real machine's from the fixtures" {
  [ "$(id -u)" -eq 0 ] || skip "make run installs packages: root"
  run make -C "$NP_ROOT" --no-print-directory run BUILD="$BUILD"
  echo "$output" >&2
  [ "$status" -eq 0 ]
  grep -qx 'What nodeprobe saw (source: features; --features prints them all):' <<<"$output"
  grep -qE '^  pci +[0-9]+ features?: [0-9]+ PCI devices?' <<<"$output"
  grep -qE '^  kernel +[0-9]+ features?: version ' <<<"$output"
  grep -qE '^  system +[0-9]+ features?: os-release ' <<<"$output"
  if grep -q '^0 labels: no rule matched what this machine has' <<<"$output"; then
    grep -qx '  beta.devicetree.org/raspberrypi-4-model-b=1' <<<"$output"
    grep -qx '  intel.feature.node.kubernetes.io/gpu=true' <<<"$output"
  else
    grep -qE '^[0-9]+ labels?$' <<<"$output"
  fi
}

@test "run-tests: each suite's line with its time and CPU, a failed suite's output in one block, the five slowest, the summary last" {
  run env NP_HARNESS_SELFTEST=1 JOBS=3 ONLY='^test_(harness|base64|strbuf|label)$' "$NP_ROOT/scripts/run-tests"
  [ "$status" -eq 1 ]
  echo "$output" >&2
  grep -qE '^unit test_base64: [0-9]+ passed \([0-9]+\.[0-9] s, [0-9]+\.[0-9] s CPU\)$' <<<"$output"
  grep -qE '^unit test_strbuf: [0-9]+ passed \([0-9]+\.[0-9] s, [0-9]+\.[0-9] s CPU\)$' <<<"$output"
  # the failed suite: its header, then its own FAIL/SKIP lines with no other suite's between
  block=$(sed -n '/^--- test_harness (/,/^\(unit\|bats\|slowest\)/p' <<<"$output")
  [ "$(grep -c '^FAIL: ' <<<"$block")" -eq 2 ]
  [ "$(grep -c '^SKIP: ' <<<"$block")" -eq 1 ]
  grep -qE '^slowest: (test_[a-z0-9]+ [0-9]+\.[0-9] s(, )?){4}$' <<<"$output"
  grep -qE '^most CPU: (test_[a-z0-9]+ [0-9]+\.[0-9] s(, )?){4}$' <<<"$output"
  grep -qE '^wall time: [0-9]+ s for 4 suites, 3 at a time \(the suites. times add up to [0-9]+ s, their CPU to [0-9]+ s\)$' <<<"$output"
  [ "${lines[-2]}" = "failed: test_harness" ]
  [[ ${lines[-1]} =~ ^[0-9]+\ passed,\ 2\ failed,\ 1\ skipped$ ]]
}

@test "test/suite-weights names every suite once, and nothing else" {
  cd "$NP_ROOT"
  diff <({ for b in test/bats/*.bats; do basename "$b"; done
           for u in test/unit/test_*.c; do basename "$u" .c; done; } | sort) \
    <(grep -v '^#' test/suite-weights | awk '{ print $2 }' | sort)
  # each line is "seconds name"
  [ "$(grep -v '^#' test/suite-weights | grep -cvE '^[0-9]+ [a-z0-9_.-]+$')" -eq 0 ]
}
