# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe: hand-written GNU make, in the spirit of pciutils' and dtc's.
#
# Layout picked up by wildcard, so a new module or binary needs no edit here:
#   pkg/<mod>/*.c            -> $(BUILD)/libnodeprobe.a
#   cmd/<name>/*.c           -> $(BUILD)/<name>
#   hooks/<name>/*.c         -> $(BUILD)/nodeprobe-<name>
#   test/unit/test_<mod>.c   -> $(BUILD)/test/unit/test_<mod>
#   test/fuzz/fuzz_<what>.c  -> $(BUILD)/fuzz/fuzz_<what>   (make fuzz, clang)
#   pkg/<mod>/<x>.proto      -> $(BUILD)/gen/pkg/<mod>/<x>.pb-c.[ch] (protoc-c, on the build
#                               machine) -> libnodeprobe.a; included as "<mod>/<x>.pb-c.h"

VERSION    := 0.1.0
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
DESTDIR    ?=
BUILD      ?= build
# Cross builds: CROSS_COMPILE=<triplet>- and SYSROOT=<the target's libraries and headers>, e.g.
#   make CROSS_COMPILE=aarch64-linux-gnu- SYSROOT=/opt/nodeprobe-cross/arm64 BUILD=build/arm64
# (scripts/install-deps makes the sysroots; `make cross` builds every ARM target).
CROSS_COMPILE ?=
SYSROOT    ?=
CC         := $(CROSS_COMPILE)$(if $(filter default,$(origin CC)),gcc,$(CC))$(if $(SYSROOT), --sysroot=$(SYSROOT))
# The target's .pc files, never the build machine's (their -I/usr/include/x86_64-linux-gnu).
PKG_CONFIG := $(if $(CROSS_COMPILE),PKG_CONFIG_SYSROOT_DIR=$(SYSROOT) PKG_CONFIG_LIBDIR=$(SYSROOT)/usr/lib/$(CROSS_COMPILE:-=)/pkgconfig:$(SYSROOT)/usr/share/pkgconfig )pkg-config
AR         := $(CROSS_COMPILE)ar

CFLAGS     ?= -O2 -g
WARN       := -Wall -Wextra -Wshadow -Wwrite-strings -Wmissing-prototypes \
              -Wstrict-prototypes -Wformat=2 -Wno-format-nonliteral
ifeq ($(CI),true)
WARN       += -Werror
endif
SAN_FLAGS  := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ifeq ($(SAN),1)
CFLAGS     += $(SAN_FLAGS) -O1
LDFLAGS    += $(SAN_FLAGS)
endif
# _FILE_OFFSET_BITS=64: 64-bit off_t, ino_t and stat on 32-bit targets (armhf), where readdir and
# stat fail with EOVERFLOW on a file system with 64-bit inode numbers; no effect on 64-bit ones.
# None of the libraries' APIs we call takes an off_t.
CPPFLAGS   += -std=c17 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -DNP_VERSION='"$(VERSION)"' \
              -DNP_DATADIR='"$(DATADIR)/nodeprobe"' -Ipkg \
              $(shell $(PKG_CONFIG) --cflags libcurl jansson yaml-0.1 libpci libdeflate 2>/dev/null)
# --as-needed: each binary records only the shared libraries its objects use.
# RE2 and the C++ runtime it needs are linked statically: only what pkg/goregex uses is
# loaded, which saves nodeprobe-reload 1.3 MB of resident shared-library pages (and the image
# two libraries). Sanitizer builds keep them shared (the sanitizers replace operator new).
RE2_LIBS   := $(if $(filter 1,$(SAN)),-lre2 -lstdc++,-Wl,-Bstatic -lre2 -lstdc++ -Wl,-Bdynamic)
# libfdt, libyaml, libdeflate and libnettle (gotmpl's sha1sum/sha256sum) are linked in too, and
# libgcc (-static-libgcc: its unwinder, which the static C++ runtime needs): four libraries fewer
# for the loader to open and bind
# (each is BIND_NOW), 0.28 M of nodeprobe's 4.37 M instructions on the bench's every-source run
# and 0.3 MB less RSS (issue 20 perf). libyajl too (gotmpl's fromJson, reload's streams; Debian
# names its archive libyajl_s.a). libpci stays shared (Debian ships no libpci.a).
STATIC_C   := $(if $(filter 1,$(SAN)),-lfdt -lyaml -ldeflate -lnettle -lyajl,-Wl,-Bstatic -lfdt -lyaml -ldeflate -lnettle -l:libyajl_s.a -Wl,-Bdynamic)
LDFLAGS    += $(if $(filter 1,$(SAN)),,-static-libgcc)
# A binary that defines _gnutls_global_init_skip exports it, so that GnuTLS, loaded with libcurl's
# libraries, finds it and does not initialise itself (hooks/devices/dra.c says why); no effect on
# the binaries that do not define it.
LDFLAGS    += -Wl,--export-dynamic-symbol=_gnutls_global_init_skip
LDLIBS     += -Wl,--as-needed $(STATIC_C) -lpci -lcurl -ljansson \
              -lmicrohttpd -lcrypto -lnghttp2 -lprotobuf-c $(RE2_LIBS) -lm
# A binary may link an archive and libraries of its own (BIN_LIB_<name>, BIN_LDLIBS_<name>, set in
# its build.mk): nodeprobe links none of the API hooks' libraries, so `make run` (nodeprobe
# alone) needs neither their -dev packages nor protoc-c (scripts/install-deps --run).
lib_of      = $(or $(BIN_LIB_$(call bin_of,$(1))),$(LIB))
CXX        := $(CROSS_COMPILE)$(if $(filter default,$(origin CXX)),g++,$(CXX))$(if $(SYSROOT), --sysroot=$(SYSROOT))
CXXFLAGS   ?= $(CFLAGS)
CXXWARN    := -Wall -Wextra -Wshadow -Wformat=2 -Wno-format-nonliteral $(filter -Werror,$(WARN))

PKG_SRCS   := $(sort $(wildcard pkg/*/*.c))
# C++ only where a library has no C API (pkg/goregex over RE2): a shim exporting C.
PKG_CXX_SRCS := $(sort $(wildcard pkg/*/*.cc))
# Message code generated from a module's .proto (pkg/kubelet): protoc-c runs on the build
# machine (cross builds too: the generated C is portable), the objects join the library.
# <x>.grpc.proto holds services only, for gRPC peers in the tests (no C from it).
PROTOC_C   ?= protoc-c
PROTO_SRCS := $(sort $(filter-out %.grpc.proto,$(wildcard pkg/*/*.proto)))
PROTO_GEN_C := $(PROTO_SRCS:%.proto=$(BUILD)/gen/%.pb-c.c)
PROTO_GEN_H := $(PROTO_GEN_C:.c=.h)
CPPFLAGS   += -I$(BUILD)/gen/pkg
PKG_OBJS   := $(PKG_SRCS:%.c=$(BUILD)/%.o) $(PKG_CXX_SRCS:%.cc=$(BUILD)/%.o) $(PROTO_GEN_C:.c=.o)
LIB        := $(BUILD)/libnodeprobe.a

CMD_DIRS   := $(sort $(dir $(wildcard cmd/*/main.c)))
HOOK_DIRS  := $(sort $(dir $(wildcard hooks/*/main.c)))
bin_of      = $(if $(filter cmd/%,$(1)),$(notdir $(1:%/=%)),nodeprobe-$(notdir $(1:%/=%)))
BIN_DIRS   := $(CMD_DIRS) $(HOOK_DIRS)
BINS       := $(foreach d,$(BIN_DIRS),$(BUILD)/$(call bin_of,$(d)))
# Man pages: sources carry @VERSION@ and @DATE@ in their .TH line; the built pages in
# $(BUILD)/man get VERSION and the page's date (SOURCE_DATE_EPOCH, else its last commit, else
# today), so the version lives here only and a rebuild of the same tree gives the same bytes.
MAN_SRCS   := $(wildcard cmd/*/*.8 hooks/*/*.8)
MANPAGES   := $(addprefix $(BUILD)/man/,$(notdir $(MAN_SRCS)))
man_date    = $(shell d=$$(if [ -n "$$SOURCE_DATE_EPOCH" ]; then date -u -d "@$$SOURCE_DATE_EPOCH" +%F; \
                else git log -1 --format=%cs -- $(1) 2>/dev/null; fi); echo $${d:-$$(date -u +%F)})

UNIT_SRCS  := $(sort $(wildcard test/unit/test_*.c))
UNIT_BINS  := $(UNIT_SRCS:%.c=$(BUILD)/%)
TOOL_SRCS  := $(sort $(wildcard test/tools/*.c))
TOOL_BINS  := $(TOOL_SRCS:%.c=$(BUILD)/%)
FUZZ_SRCS  := $(sort $(wildcard test/fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 30
V          ?= 0
Q          := $(if $(filter 1,$(V)),,@)

-include $(wildcard cmd/*/build.mk hooks/*/build.mk)

.PHONY: all deps deps-build run test test-only check fuzz bench install uninstall clean format-check
.DEFAULT_GOAL := all
.SECONDARY:

all: $(BINS) $(UNIT_BINS) $(TOOL_BINS) $(MANPAGES)

define MAN_RULE
$(BUILD)/man/$(notdir $(1)): $(1) Makefile
	@mkdir -p $$(@D)
	$$(Q)sed -e 's/@VERSION@/$(VERSION)/g' -e "s/@DATE@/$$(call man_date,$(1))/g" $(1) > $$@.tmp
	$$(Q)mv $$@.tmp $$@
endef
$(foreach m,$(MAN_SRCS),$(eval $(call MAN_RULE,$(m))))

# Which command installs what: make run what building nodeprobe needs, make deps-build what
# building every binary needs; make test,
# check, fuzz, bench and cross everything (scripts/install-deps says which is which).
deps:
	@scripts/install-deps

deps-build:
	@scripts/install-deps --build

# An object's .d names it as make spells it ($@: BUILD=../out, build/) and both ways, relative
# and absolute: make test (scripts/run-tests) builds with an absolute BUILD, make and make cross
# with a relative one, and a .d written by one must make the other rebuild the object when a
# header changes (else a stale object, built against an older struct, is linked: it crashed the
# ARM nodeprobe once). make cannot name a path with a space: in such a tree, only $@.
space      :=
space      +=
DEPFLAGS    = -MMD -MP -MQ '$@' $(if $(findstring $(space),$(CURDIR)),,$(foreach t,$(filter-out \
              $@,$(sort $(abspath $@) $(patsubst $(CURDIR)/%,%,$(abspath $@)))),-MQ '$(t)'))

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) -c -o $@ $<

# Generated code: the .h and .c come from one protoc-c run; compiled without our warnings
# (protoc-c's style, not ours). Everything that may include a generated header waits for it.
$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: %.proto
	@mkdir -p $(@D)
	$(Q)$(PROTOC_C) --proto_path=$(<D) --c_out=$(@D) $<

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -w $(DEPFLAGS) -c -o $@ $<

$(filter-out $(BUILD)/gen/% $(BIN_NOGEN_OBJS),$(PKG_OBJS)) $(UNIT_BINS:=.o) $(TOOL_BINS:=.o): | $(PROTO_GEN_H)

$(BUILD)/%.o: %.cc
	@mkdir -p $(@D)
	$(Q)$(CXX) -std=c++17 -D_GNU_SOURCE -Ipkg $(CXXFLAGS) $(CXXWARN) $(DEPFLAGS) -c -o $@ $<

$(LIB): $(PKG_OBJS)
$(LIB) $(BIN_LIBS):
	@mkdir -p $(@D)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

define BIN_RULE
$(BUILD)/$(call bin_of,$(1)): $(patsubst %.c,$(BUILD)/%.o,$(wildcard $(1)*.c)) $(call lib_of,$(1))
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o,$$^) $(call lib_of,$(1)) $(or $(BIN_LDLIBS_$(call bin_of,$(1))),$$(LDLIBS))
endef
$(foreach d,$(BIN_DIRS),$(eval $(call BIN_RULE,$(d))))

# A unit test's own link flags: test_kube wraps yajl_parse, to count what yajl's lexer reads.
UNIT_LDFLAGS_test_kube := -Wl,--wrap=yajl_parse
$(BUILD)/test/unit/%: $(BUILD)/test/unit/%.o $(LIB)
	$(Q)$(CC) $(LDFLAGS) $(UNIT_LDFLAGS_$(notdir $*)) -o $@ $< $(LIB) $(LDLIBS)

# Test tools (test/tools/<x>.c -> $(BUILD)/test/tools/<x>): fixtures made at test time, and
# test providers over a module (kubelet-demo over pkg/kubelet).
$(BUILD)/test/tools/%: $(BUILD)/test/tools/%.o $(LIB)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# The first minute: install what nodeprobe alone needs, build it alone (its own modules, every
# core), run it on this machine without writing anything, print what it saw; with no label here,
# two real machines from the fixtures. scripts/measure-first-run times it from a fresh bookworm.
NPROC      := $(shell nproc 2>/dev/null || echo 1)
RUN_FIXTURES := "--fdt test/fixtures/dtb/arm64/broadcom/bcm2711-rpi-4-b.dtb|Raspberry Pi 4" \
                "--sysfs test/fixtures/pci/linuxhw-intel-nuc12-alderlake|Intel NUC 12 (Alder Lake GPU)"
run:
	@scripts/install-deps --run
	@$(MAKE) --no-print-directory -j$(NPROC) $(BUILD)/nodeprobe
	@echo '$$ $(BUILD)/nodeprobe --dry-run --summary'
	@out=$$($(BUILD)/nodeprobe --dry-run --summary) || exit $$?; printf '%s\n' "$$out"; \
	case $$out in *"0 labels: "*) ;; *) exit 0 ;; esac; \
	for f in $(RUN_FIXTURES); do \
	  echo "The labels of a real machine ($${f#*|}) from the fixtures:"; \
	  echo "$$ $(BUILD)/nodeprobe --dry-run $${f%|*}"; \
	  $(BUILD)/nodeprobe --dry-run $${f%|*} | sed 's/^/  /'; \
	done

# Everything: unit tests, then bats per binary; one summary line, non-zero on failure.
test: deps
	@$(MAKE) --no-print-directory format-check test-only

test-only: all
	@BUILD=$(abspath $(BUILD)) scripts/run-tests

# The same tests with AddressSanitizer and UndefinedBehaviorSanitizer.
check: deps
	@$(MAKE) --no-print-directory BUILD=build-san SAN=1 test-only

fuzz: deps
	@scripts/run-fuzz $(FUZZ_SECONDS) $(FUZZ_SRCS)

bench: deps all
	@BUILD=$(abspath $(BUILD)) scripts/bench

# What is installed and nothing else (not the unit tests and test tools that all builds too: the
# image builds, scripts/image-rootfs, install; a third of a build's CPU).
install: $(BINS) $(MANPAGES)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)/
	$(if $(MANPAGES),install -m 0644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man8/)
	$(INSTALL_EXTRA)

uninstall:
	rm -f $(foreach b,$(BINS),$(DESTDIR)$(BINDIR)/$(notdir $(b)))
	rm -f $(foreach m,$(MANPAGES),$(DESTDIR)$(MANDIR)/man8/$(notdir $(m)))
	$(UNINSTALL_EXTRA)

# The ARM binaries and unit tests, cross built with the toolchains and sysroots
# scripts/install-deps sets up, into $(BUILD)/cross/<arch>; run one without binfmt_misc with
#   qemu-aarch64-static -L $(CROSS_ROOT)/arm64 build/cross/arm64/nodeprobe --version
# (the images: scripts/build-image; make test runs test/e2e/qemu.sh, which compares them with
# amd64, and the unit tests under qemu: test/bats/cross-arm64.bats, cross-armhf.bats).
CROSS_ARCHS := arm64 armhf
# What make cross builds: bins (the binaries), units (the unit tests; test/bats/cross.bash
# builds only these); both by default.
CROSS_WHAT  := bins units
CROSS_ROOT ?= $(or $(NP_CROSS_ROOT),/opt/nodeprobe-cross)
cross_triplet = $(if $(filter arm64,$(1)),aarch64-linux-gnu,arm-linux-gnueabihf)
.PHONY: cross
cross: deps
	$(Q)$(foreach a,$(CROSS_ARCHS),$(MAKE) --no-print-directory BUILD=$(BUILD)/cross/$(a) \
	  CROSS_COMPILE=$(call cross_triplet,$(a))- SYSROOT=$(CROSS_ROOT)/$(a) \
	  $(addprefix $(BUILD)/cross/$(a)/,$(if $(filter bins,$(CROSS_WHAT)),$(notdir $(BINS))) \
	    $(if $(filter units,$(CROSS_WHAT)),$(UNIT_BINS:$(BUILD)/%=%))) && ) true
	@$(foreach a,$(CROSS_ARCHS),echo "cross $(a): $(if $(filter bins,$(CROSS_WHAT)),$(addprefix $(BUILD)/cross/$(a)/,$(notdir $(BINS))),unit tests only)";)

# .clang-format is checked in CI, as part of make test.
format-check:
	@clang-format --dry-run --Werror $(shell git ls-files '*.c' '*.h' '*.cc' 2>/dev/null || find cmd hooks pkg test -name '*.[ch]' -o -name '*.cc')

clean:
	rm -rf build build-san build-fuzz

-include $(PKG_OBJS:.o=.d) $(wildcard $(BUILD)/cmd/*/*.d $(BUILD)/hooks/*/*.d $(BUILD)/test/unit/*.d $(BUILD)/test/tools/*.d)
