/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nodeprobe-mirror: containerd hosts.toml for a Spegel mirror: configure, cleanup, check, watch. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "log/log.h"
#include "mirror/mirror.h"

enum {
	OPT_CONFIG = 'c',
	OPT_REGISTRY = 'r',
	OPT_TARGET = 'm',
	OPT_CONFIG_PATH = 256,
	OPT_RESOLVE,
	OPT_PREPEND,
	OPT_DIAL,
	OPT_AUTH,
	OPT_CTRD_CONFIG,
	OPT_CTRD_VERSION,
};

static const struct cli_opt opts[] = {
    {"config", 'c', "FILE", "read options from a YAML file (below environment and flags)",
     OPT_CONFIG},
    {"config-path", 0, "DIR", "containerd's registry config_path (/etc/containerd/certs.d)",
     OPT_CONFIG_PATH},
    {"registry", 'r', "URL", "registry to mirror, repeatable; none or '*' = _default",
     OPT_REGISTRY},
    {"mirror-target", 'm', "URL", "mirror URL, repeatable, in order; ${VAR} expanded", OPT_TARGET},
    {"resolve-tags", 0, "BOOL", "let mirrors resolve tags (true)", OPT_RESOLVE},
    {"prepend-existing", 0, NULL, "keep the existing [host] entries after the mirrors",
     OPT_PREPEND},
    {"dial-timeout", 0, "DURATION", "write dial_timeout per mirror (e.g. 200ms)", OPT_DIAL},
    {"basic-auth-dir", 0, "DIR", "add basic auth from DIR/username and DIR/password", OPT_AUTH},
    {"containerd-config", 0, "FILE", "check: also check containerd's config.toml", OPT_CTRD_CONFIG},
    {"containerd-version", 0, "X.Y.Z", "check: judge as this containerd version", OPT_CTRD_VERSION},
    {NULL, 0, NULL, NULL, 0},
};

static const struct cli_spec spec = {
    .prog = "nodeprobe-mirror",
    .synopsis = "configure|cleanup|check|watch [OPTIONS]",
    .description =
	"Write, remove, check or keep in place (watch) containerd's\n<config-path>/<registry>/hosts.toml files so that pulls go through a Spegel\nmirror first and fall back upstream.",
    .opts = opts,
    .epilog =
	"Exit status: 0 success, 1 failure or check found errors, 2 usage error,\n3 check found warnings only.\n",
};

static int set_str(char **dst, const char *arg)
{
	free(*dst);
	*dst = strdup(arg);
	return *dst ? 0 : -1;
}

static int on_opt(void *ctx, int id, const char *arg, char *msg, int msglen)
{
	struct mirror_opts *o = ctx;
	int b;

	switch (id) {
	case OPT_CONFIG:
		return set_str(&o->config_file, arg);
	case OPT_CONFIG_PATH:
		return set_str(&o->config_path, arg);
	case OPT_REGISTRY:
		return mirror_list_add(&o->registries, arg);
	case OPT_TARGET:
		return mirror_list_add(&o->targets, arg);
	case OPT_RESOLVE:
		b = cli_parse_bool(arg);
		if (b < 0) {
			snprintf(msg, (size_t)msglen, "--resolve-tags: '%s' is not true or false",
				 arg);
			return -1;
		}
		o->resolve_tags = b;
		return 0;
	case OPT_PREPEND:
		o->prepend_existing = 1;
		return 0;
	case OPT_DIAL:
		if (mirror_dial_timeout_problem(arg)) {
			snprintf(msg, (size_t)msglen, "--dial-timeout: '%s' %s", arg,
				 mirror_dial_timeout_problem(arg));
			return -1;
		}
		return set_str(&o->dial_timeout, arg);
	case OPT_AUTH:
		return set_str(&o->basic_auth_dir, arg);
	case OPT_CTRD_CONFIG:
		return set_str(&o->containerd_config, arg);
	case OPT_CTRD_VERSION:
		return set_str(&o->containerd_version, arg);
	}
	return -1;
}

static void print_finding(void *data, const struct mirror_finding *f)
{
	const char *sev = f->sev == MIRROR_ERROR ? "error" : "warning";

	(void)data;
	if (f->line > 0)
		printf("%s:%d:%d: %s: %s\n", f->file, f->line, f->col, sev, f->msg);
	else
		printf("%s: %s: %s\n", f->file, sev, f->msg);
}

int main(int argc, char **argv)
{
	static const char *const cmds[] = {"configure", "cleanup", "check", "watch"};
	struct mirror_opts o;
	struct log_err err = {0};
	const char *cmd = NULL;
	int verbose = 0, first, shift = 0, r;
	size_t i;

	mirror_opts_init(&o);
	/* "configure --flags" as well as "--flags configure" */
	if (argc > 1 && argv[1][0] != '-') {
		cmd = argv[1];
		shift = 1;
	}
	first = cli_parse(&spec, argc - shift, argv + shift, on_opt, &o, &verbose);
	if (first <= 0) { /* help or version printed (0), or a usage error */
		mirror_opts_free(&o);
		return -first;
	}
	first += shift;
	if (!cmd && first < argc) {
		/* "--flags configure --more-flags": parse what follows the command too */
		cmd = argv[first];
		r = cli_parse(&spec, argc - first, argv + first, on_opt, &o, &verbose);
		if (r <= 0) {
			mirror_opts_free(&o);
			return -r;
		}
		first += r;
	}
	cli_log_init(spec.prog, verbose);
	if (!cmd || first < argc) {
		cli_error(cmd ? "unexpected argument '%s'"
			      : "missing command (configure, cleanup, check or watch)",
			  cmd ? argv[first] : "");
		fprintf(stderr, "Try '%s --help' for more information.\n", spec.prog);
		mirror_opts_free(&o);
		return CLI_EXIT_USAGE;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmd, cmds[i]))
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0])) {
		cli_error("unknown command '%s' (configure, cleanup, check or watch)", cmd);
		mirror_opts_free(&o);
		return CLI_EXIT_USAGE;
	}
	o.cmd = (enum mirror_cmd)i;
	o.report = print_finding;
	r = mirror_opts_resolve(&o, &err);
	if (r == 0)
		r = mirror_run(&o, &err);
	mirror_opts_free(&o);
	if (r < 0) {
		cli_error("%s", err.msg[0] ? err.msg : strerror(-r));
		return CLI_EXIT_FAILURE;
	}
	if (r == MIRROR_ERRORS)
		return CLI_EXIT_FAILURE;
	return r == MIRROR_WARNINGS ? 3 : CLI_EXIT_OK;
}
