/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nodeprobe-reload: roll workloads when the ConfigMaps and Secrets they use change
 * (Reloader-compatible). Reloader's flags and their meaning are pkg/reload's (reload_flags.c):
 * this parses them into struct reload_args and calls reload_run. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "reload/reload.h"

enum {
	EXIT_PARTIAL = 3, /* once: some rollouts failed */
};

#define NFLAGS_MAX 96 /* room for reload_flags; more is a build-time mistake, caught at start */

static struct cli_opt opts[NFLAGS_MAX + 1];
static struct cli_refused refused[8];

static const struct cli_spec spec = {
    .prog = "nodeprobe-reload",
    .synopsis = "[OPTIONS]",
    .description = "Roll Deployments, StatefulSets, DaemonSets, CronJobs, Jobs and Argo Rollouts\n"
		   "when the ConfigMaps and Secrets they use change, honouring stakater\n"
		   "Reloader's annotations.",
    .opts = opts,
    .epilog = "Exit status: 0 success, 1 failure (configuration, TLS, API), 2 usage,\n"
	      "3 (once) some rollouts failed.\n",
    .refused = refused,
};

/* pkg/reload's flag tables into cli's (the same fields). Returns 0, or -1 when they do not fit. */
static int tables(void)
{
	size_t i;

	for (i = 0; reload_flags[i].lng; i++) {
		if (i >= NFLAGS_MAX)
			return -1;
		opts[i] =
		    (struct cli_opt){reload_flags[i].lng, reload_flags[i].shrt, reload_flags[i].arg,
				     reload_flags[i].help, reload_flags[i].id};
	}
	for (i = 0; reload_refused_flags[i].lng; i++) {
		if (i + 1 >= sizeof(refused) / sizeof(refused[0]))
			return -1;
		refused[i] =
		    (struct cli_refused){reload_refused_flags[i].lng, reload_refused_flags[i].why};
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct reload_args a;
	struct log_err err = {0};
	int verbose = 0, r, level;

	if (tables() < 0) {
		cli_error("internal error: too many flags");
		return CLI_EXIT_FAILURE;
	}
	reload_args_init(&a);
	r = cli_parse(&spec, argc, argv, reload_args_set, &a, &verbose);
	if (r <= 0)
		goto done_r;
	if (r < argc) {
		cli_error("unexpected argument '%s'", argv[r]);
		r = -CLI_EXIT_USAGE;
		goto done_r;
	}
	if (reload_args_env(&a, &err) < 0) {
		cli_error("%s", err.msg);
		r = -CLI_EXIT_USAGE;
		goto done_r;
	}
	if (reload_args_finish(&a, &err) < 0) {
		cli_error("--%s: %s", a.bad_flag, err.msg);
		fprintf(stderr, "Try '%s --help' for more information.\n", spec.prog);
		r = -CLI_EXIT_USAGE;
		goto done_r;
	}
	memset(&err, 0, sizeof(err));
	/* A controller reports each rollout: info is on by default, -v adds debug. */
	level = a.log_level >= 0 ? a.log_level : LOG_LVL_INFO;
	if (verbose)
		level = LOG_LVL_DEBUG;
	if (a.log_json)
		cli_log_init_json(spec.prog, (enum log_level)level);
	else
		cli_log_init(spec.prog, level - 1);
	r = reload_run(&a.o, &err);
	if (r < 0 && !err.msg[0])
		snprintf(err.msg, sizeof(err.msg), "%s", strerror(-r));
	if (r < 0 && a.log_json) /* every line a JSON object, the last one too */
		log_error("%s", err.msg);
	else if (r < 0)
		cli_error("%s", err.msg);
	if (r == RELOAD_EPARTIAL) {
		r = EXIT_PARTIAL;
	} else if (r < 0) {
		r = CLI_EXIT_FAILURE;
	} else {
		r = CLI_EXIT_OK;
	}
	goto done;
done_r:
	r = -r;
done:
	reload_args_free(&a);
	return r;
}
