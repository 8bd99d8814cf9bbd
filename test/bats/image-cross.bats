#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The ARM images' binaries: built for their machine, with the target's loader and libraries
# (test/bats/image.bash).
load helpers
load image

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
