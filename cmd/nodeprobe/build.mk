# SPDX-License-Identifier: GPL-2.0-or-later
# cmd/nodeprobe/build.mk: the built-in rules (cmd/nodeprobe/rules.d/*.yaml, NodeFeatureRules,
# and cmd/nodeprobe/counts.d/*.yaml, nodeprobe's LabelCountRules) are data, embedded into
# libnodeprobe.a as rules_builtin[] (pkg/rules/rules.h) and installed to
# $(DATADIR)/nodeprobe/{rules.d,counts.d} for reading and copying. scripts/embed-yaml, built
# for the build machine (HOSTCC, also in cross builds), embeds each file's bytes and its
# documents as libyaml loads them, so no run parses them.
BUILTIN_NFR     := $(sort $(wildcard cmd/nodeprobe/rules.d/*.yaml))
BUILTIN_LCR     := $(sort $(wildcard cmd/nodeprobe/counts.d/*.yaml))
BUILTIN_RULES   := $(BUILTIN_NFR) $(BUILTIN_LCR)
BUILTIN_RULES_C := $(BUILD)/gen/builtin_rules.c
BUILTIN_RULES_O := $(BUILD)/gen/builtin_rules.o
PKG_OBJS        += $(BUILTIN_RULES_O)

HOSTCC          ?= gcc
EMBED_YAML      := $(BUILD)/host/embed-yaml

$(EMBED_YAML): scripts/embed-yaml.c
	@mkdir -p $(@D)
	$(Q)$(HOSTCC) -std=c17 -D_GNU_SOURCE -O1 $(WARN) -o $@ $< -lyaml

$(BUILTIN_RULES_C): $(BUILTIN_RULES) cmd/nodeprobe/build.mk $(EMBED_YAML)
	@mkdir -p $(@D)
	$(Q)$(EMBED_YAML) rules_builtin $(BUILTIN_RULES) > $@.tmp
	$(Q)mv $@.tmp $@

$(BUILTIN_RULES_O): $(BUILTIN_RULES_C) pkg/rules/rules.h
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c -o $@ $<

INSTALL_EXTRA   += install -d $(DESTDIR)$(DATADIR)/nodeprobe/rules.d $(DESTDIR)$(DATADIR)/nodeprobe/counts.d && \
                   install -m 0644 $(BUILTIN_NFR) $(DESTDIR)$(DATADIR)/nodeprobe/rules.d/ && \
                   install -m 0644 $(BUILTIN_LCR) $(DESTDIR)$(DATADIR)/nodeprobe/counts.d/;
UNINSTALL_EXTRA += rm -f $(foreach f,$(BUILTIN_NFR),$(DESTDIR)$(DATADIR)/nodeprobe/rules.d/$(notdir $(f))) \
                   $(foreach f,$(BUILTIN_LCR),$(DESTDIR)$(DATADIR)/nodeprobe/counts.d/$(notdir $(f))); \
                   rmdir $(DESTDIR)$(DATADIR)/nodeprobe/rules.d $(DESTDIR)$(DATADIR)/nodeprobe/counts.d $(DESTDIR)$(DATADIR)/nodeprobe 2>/dev/null || true;

# nodeprobe links its own archive of the modules it uses and their libraries only: no libcurl,
# libjansson, libmicrohttpd, libnghttp2 or libprotobuf-c, and none of its objects includes a
# header protoc-c generates, so building it alone (make run) needs scripts/install-deps --run's
# packages and compiles about half of pkg/. A new call into another module fails its link:
# add the module here (and its -dev package to install-deps' RUN_PACKAGES).
NODEPROBE_SRCS  := $(wildcard $(addsuffix /*.c,$(addprefix pkg/,base64 cli cpu dt feature fsutil \
                   goconv gotmpl hostfeat kernel kvmap label log osrelease pciscan probe rules \
                   strbuf usb ydoc))) pkg/goregex/goregex_re2.cc pkg/kubelet/kubelet_name.c \
                   $(addprefix pkg/devices/devices_,api.c conf.c index.c list.c opt.c path.c scan.c)
NODEPROBE_OBJS  := $(patsubst %.cc,$(BUILD)/%.o,$(NODEPROBE_SRCS:%.c=$(BUILD)/%.o)) $(BUILTIN_RULES_O)
BIN_LIB_nodeprobe := $(BUILD)/cmd/nodeprobe/libnodeprobe-cmd.a
BIN_LIBS        += $(BIN_LIB_nodeprobe)
BIN_NOGEN_OBJS  += $(NODEPROBE_OBJS)
BIN_LDLIBS_nodeprobe := -Wl,--as-needed $(STATIC_C) -lpci $(RE2_LIBS) -lm
$(BIN_LIB_nodeprobe): $(NODEPROBE_OBJS)
