/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nodeprobe-devices: a kubelet device plugin handing the devices of device classes to pods. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "devices/devices.h"
#include "dra.h"
#include "listen/listen.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

enum {
	OPT_PLUGIN_DIR = 256,
	OPT_LISTEN,
	OPT_LOG_LEVEL,
	OPT_DEV_ROOT,
	OPT_SYS_ROOT,
	OPT_CDI_DIR,
	OPT_CDI,
	OPT_LIST,
	OPT_API,
	OPT_DRA_DRIVER,
	OPT_REGISTRY,
	OPT_DRA_DIR,
	OPT_NODE_NAME,
	OPT_KUBECONFIG,
	OPT_DRA_RESYNC,
	OPT_DRA_SWEEP,
	OPT_DRA_API_TIMEOUT,
};

static const struct cli_opt opts[] = {
    /* --device --domain --preset --classes --shared-dev-num --allocation-policy */
    DEVICES_CLI_OPTS,
    {"plugin-directory", 0, "DIR", "the kubelet's device-plugins directory", OPT_PLUGIN_DIR},
    {"listen", 0, "ADDR", "serve /health and /metrics on HOST:PORT or :PORT (none)", OPT_LISTEN},
    {"log-level", 0, "LEVEL", "all, debug, info, warn, error or none (info)", OPT_LOG_LEVEL},
    {"dev-root", 0, "DIR", "where the host's /dev is seen (/dev)", OPT_DEV_ROOT},
    {"sys-root", 0, "DIR", "where the host's /sys is seen (/sys)", OPT_SYS_ROOT},
    {"cdi-dir", 0, "DIR", "where CDI specs are written (/var/run/cdi)", OPT_CDI_DIR},
    {"cdi", 0, "[=BOOL]", "answer Allocate with CDI names and write specs (true)", OPT_CDI},
    {"list", 0, NULL, "scan once, print each class's devices, exit", OPT_LIST},
    {"api", 0, "API", "device-plugin or dra, for classes that say none (device-plugin)", OPT_API},
    {"dra-driver", 0, "NAME", "DRA driver name, CDI vendor of claims (nodeprobe.io)",
     OPT_DRA_DRIVER},
    {"plugins-registry", 0, "DIR", "the kubelet's plugin registry (DRA)", OPT_REGISTRY},
    {"dra-plugins-dir", 0, "DIR", "the kubelet's plugins directory (DRA)", OPT_DRA_DIR},
    {"node-name", 0, "NAME", "this node (DRA pool); default $NODE_NAME", OPT_NODE_NAME},
    {"kubeconfig", 0, "FILE", "API server for DRA claims (default in-cluster)", OPT_KUBECONFIG},
    {"dra-resync", 0, "SECONDS", "check our ResourceSlices every SECONDS (10)", OPT_DRA_RESYNC},
    {"dra-sweep", 0, "SECONDS", "unprepare claims gone from the API every SECONDS (300)",
     OPT_DRA_SWEEP},
    {"dra-api-timeout", 0, "SECONDS", "one API server request's time, each of 3 tries (5)",
     OPT_DRA_API_TIMEOUT},
    {NULL, 0, NULL, NULL, 0},
};

static const struct cli_refused refused[] = {
    {"config", "squat's config file is not read; give its devices as --device or --classes"},
    {NULL, NULL},
};

static const struct cli_spec spec = {
    .prog = "nodeprobe-devices",
    .synopsis = "[OPTIONS]",
    .description = "Serve device classes to the kubelet as device plugins (one resource each),\n"
		   "answer Allocate with device nodes, mounts and CDI names, follow hotplug.",
    .opts = opts,
    .epilog = "Exit status: 0 stopped by SIGTERM/SIGINT (or --list done), 1 failure,\n"
	      "2 usage error or bad class definition.\n",
    .refused = refused,
};

struct args {
	struct devices_opts o;
	int level; /* -1: none */
	bool list;
};

/* A whole number of seconds from 1 to a day. */
static int seconds(const char *arg, const char *opt, int *out, char *msg, int msglen)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > 86400) {
		snprintf(msg, (size_t)msglen, "%s '%s': want whole seconds from 1 to 86400", opt,
			 arg);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int on_opt(void *ctx, int id, const char *arg, char *msg, int msglen)
{
	static const char *const levels[] = {"none", "error", "warn", "info", "debug", "all"};
	struct args *a = ctx;
	int b;
	size_t i;

	if (id >= DEVICES_OPT_DEVICE) /* the class options nodeprobe shares */
		return devices_opt(&a->o, id, arg, msg, msglen);
	switch (id) {
	case OPT_PLUGIN_DIR:
		a->o.plugin_dir = arg;
		return 0;
	case OPT_LISTEN:
		if (arg[0] && listen_check(arg, false, msg, msglen) < 0)
			return -1;
		a->o.listen = arg[0] ? arg : NULL;
		return 0;
	case OPT_LOG_LEVEL:
		for (i = 0; i < 6 && strcmp(levels[i], arg); i++)
			;
		if (i == 6) {
			snprintf(msg, (size_t)msglen,
				 "--log-level '%s': want all, debug, info, warn, error or none",
				 arg);
			return -1;
		}
		a->level = (int)i - 1;
		return 0;
	case OPT_DEV_ROOT:
		a->o.roots.dev = arg;
		return 0;
	case OPT_SYS_ROOT:
		a->o.roots.sys = arg;
		return 0;
	case OPT_CDI_DIR:
		a->o.cdi_dir = arg;
		return 0;
	case OPT_CDI:
		b = arg ? cli_parse_bool(arg) : 1;
		if (b < 0) {
			snprintf(msg, (size_t)msglen, "--cdi '%s': want true or false", arg);
			return -1;
		}
		a->o.no_cdi = !b;
		return 0;
	case OPT_LIST:
		a->list = true;
		return 0;
	case OPT_API:
		if (devices_api_parse(arg, &a->o.api) < 0) {
			snprintf(msg, (size_t)msglen, "--api '%s': want device-plugin or dra", arg);
			return -1;
		}
		return 0;
	case OPT_DRA_DRIVER:
		a->o.dra_driver = arg;
		return 0;
	case OPT_REGISTRY:
		a->o.registry_dir = arg;
		return 0;
	case OPT_DRA_DIR:
		a->o.dra_dir = arg;
		return 0;
	case OPT_NODE_NAME:
		a->o.node_name = arg;
		return 0;
	case OPT_KUBECONFIG:
		a->o.kubeconfig = arg;
		return 0;
	case OPT_DRA_RESYNC:
	case OPT_DRA_SWEEP:
		return seconds(arg, id == OPT_DRA_RESYNC ? "--dra-resync" : "--dra-sweep",
			       id == OPT_DRA_RESYNC ? &a->o.dra_resync_s : &a->o.dra_sweep_s, msg,
			       msglen);
	case OPT_DRA_API_TIMEOUT:
		return seconds(arg, "--dra-api-timeout", &a->o.dra_api_timeout_s, msg, msglen);
	}
	return -1;
}

int main(int argc, char **argv)
{
	static struct args a = {.level = 2}; /* static: reachable at any early exit */
	struct log_err err = {0};
	int verbose = 0, first, r;

	first = cli_parse(&spec, argc, argv, on_opt, &a, &verbose);
	if (first <= 0)
		return -first;
	cli_log_init(spec.prog, a.level < 0 ? -1 : verbose > a.level - 1 ? verbose : a.level - 1);
	if (first < argc) {
		cli_error("unexpected argument '%s' (see --help)", argv[first]);
		return CLI_EXIT_USAGE;
	}
	if (a.list) {
		struct strbuf sb = STRBUF_INIT(1 << 24);

		r = devices_list(&a.o, &sb, &err);
		if (r >= 0)
			fputs(sb.buf ? sb.buf : "", stdout);
		sb_free(&sb);
	} else {
		a.o.dra = &devices_dra_side;
		r = devices_run(&a.o, &err);
	}
	devices_opts_free(&a.o);
	if (r < 0) {
		cli_error("%s", err.msg[0] ? err.msg : strerror(-r));
		return r == -EINVAL ? DEVICES_EXIT_USAGE : DEVICES_EXIT_ERROR;
	}
	return DEVICES_EXIT_OK;
}
