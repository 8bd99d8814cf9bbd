/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nodeprobe-mirror: containerd hosts.toml for a Spegel mirror: configure, cleanup, check, watch. */
#include <errno.h>
#include <limits.h>
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
	OPT_DISTRO,
	OPT_DISTRO_VERSION,
	OPT_HOST_ROOT,
	OPT_PROBE,
	OPT_IMAGE,
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
    {"prepend-existing", 0, "[=BOOL]", "keep the existing [host] entries after the mirrors",
     OPT_PREPEND},
    {"dial-timeout", 0, "DURATION", "dial_timeout per mirror (200ms; 0 leaves it out)", OPT_DIAL},
    {"basic-auth-dir", 0, "DIR",
     "basic auth from DIR/username, DIR/password (/etc/secrets/basic-auth)", OPT_AUTH},
    {"distro", 0, "NAME", "kubeadm, talos, k3s, rke2, k0s, microk8s, kind or auto", OPT_DISTRO},
    {"distro-version", 0, "X.Y", "the distribution's version (check's fixes)", OPT_DISTRO_VERSION},
    {"host-root", 0, "DIR", "where the host's / is mounted, for --distro paths (/)", OPT_HOST_ROOT},
    {"containerd-config", 0, "FILE", "check: also check containerd's config.toml", OPT_CTRD_CONFIG},
    {"containerd-version", 0, "X.Y.Z", "check: judge as this containerd version", OPT_CTRD_VERSION},
    {"probe", 0, NULL, "check: GET /v2/ of every mirror (is it answering?)", OPT_PROBE},
    {"image", 0, "REF", "check: can the mirror resolve REF (implies --probe)", OPT_IMAGE},
    {NULL, 0, NULL, NULL, 0},
};

static const struct cli_spec spec = {
    .prog = "nodeprobe-mirror",
    .synopsis = "configure|cleanup|check|watch|talos-config [OPTIONS]",
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
	case OPT_PREPEND: /* Spegel's chart writes --prepend-existing=false */
		b = arg ? cli_parse_bool(arg) : 1;
		if (b < 0) {
			snprintf(msg, (size_t)msglen,
				 "--prepend-existing: '%s' is not true or false", arg);
			return -1;
		}
		o->prepend_existing = b;
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
	case OPT_DISTRO:
		b = mirror_distro_parse(arg);
		if (b < 0) {
			snprintf(
			    msg, (size_t)msglen,
			    "--distro: '%s' is not kubeadm, talos, k3s, rke2, k0s, microk8s, kind or auto",
			    arg);
			return -1;
		}
		o->distro = (enum mirror_distro)b;
		return 0;
	case OPT_DISTRO_VERSION:
		return set_str(&o->distro_version, arg);
	case OPT_HOST_ROOT:
		return set_str(&o->host_root, arg);
	case OPT_PROBE:
		o->probe = true;
		return 0;
	case OPT_IMAGE:
		o->probe = true;
		return set_str(&o->image, arg);
	}
	return -1;
}

static void print_finding(void *data, const struct mirror_finding *f)
{
	static const char *const sevs[] = {"warning", "error", "ok"};
	const char *sev = sevs[f->sev], *p;

	(void)data;
	if (f->line > 0)
		printf("%s:%d:%d: %s: %s\n", f->file, f->line, f->col, sev, f->msg);
	else
		printf("%s: %s: %s\n", f->file, sev, f->msg);
	/* the fix, indented under its finding, one line each */
	for (p = f->fix; p && *p;) {
		size_t n = strcspn(p, "\n");

		printf("  %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

static void print_text(void *data, const char *text)
{
	(void)data;
	fputs(text, stdout);
}

static int run(int argc, char **argv)
{
	struct mirror_opts o;
	struct log_err err = {0};
	const char *cmd = NULL;
	int verbose = 0, first, shift = 0, r;

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
		cli_error(
		    cmd ? "unexpected argument '%s'"
			: "missing command (configure, cleanup, check, watch or talos-config)",
		    cmd ? argv[first] : "");
		fprintf(stderr, "Try '%s --help' for more information.\n", spec.prog);
		mirror_opts_free(&o);
		return CLI_EXIT_USAGE;
	}
	r = mirror_cmd_parse(cmd);
	if (r < 0) {
		cli_error("unknown command '%s' (configure, cleanup, check, watch or talos-config)",
			  cmd);
		mirror_opts_free(&o);
		return CLI_EXIT_USAGE;
	}
	o.cmd = (enum mirror_cmd)r;
	o.report = print_finding;
	o.output = print_text;
	r = mirror_exec(&o, &err);
	mirror_opts_free(&o);
	if (r < 0) {
		cli_error("%s", err.msg[0] ? err.msg : strerror(-r));
		return CLI_EXIT_FAILURE;
	}
	if (r == MIRROR_ERRORS)
		return CLI_EXIT_FAILURE;
	return r == MIRROR_WARNINGS ? 3 : CLI_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct mirror_list args = {0};
	char **v;
	int r;

	/* Spegel's `configuration` flags (go-arg lists, bare bools) as ours */
	if (mirror_spegel_args(argc, argv, &args) < 0 || args.n > INT_MAX - 1 ||
	    !(v = realloc(args.v, (args.n + 1) * sizeof(*v)))) {
		cli_error("out of memory");
		mirror_list_free(&args);
		return CLI_EXIT_FAILURE;
	}
	args.v = v;
	v[args.n] = NULL;
	r = run((int)args.n, v);
	mirror_list_free(&args);
	return r;
}
