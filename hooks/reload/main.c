/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nodeprobe-reload: roll workloads when the ConfigMaps and Secrets they use change
 * (Reloader-compatible). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "goconv/goconv.h"
#include "kube/kube.h"
#include "reload/reload.h"

enum {
	EXIT_PARTIAL = 3, /* once: some rollouts failed */
	O_KUBECONFIG = 256,
	O_CONTEXT,
	O_SA_DIR,
	O_MODE,
	O_IGNORE_NS,
	O_LABELSEL,
	O_FIELDSEL,
	O_STRATEGY,
	O_AUTO_ALL,
	/* Reloader's kinds and annotation flags (reload-kinds) */
	O_IGNORED_TYPES,
	O_ARGO,
	O_ON_CREATE,
	O_ON_DELETE,
	O_ANN_FIRST, /* O_ANN_FIRST + enum reload_ann_name: the annotation-name flags */
	O_ANN_LAST = O_ANN_FIRST + RELOAD_ANN_NNAMES - 1,
	O_WINDOW,
	O_MIN_INTERVAL,
	O_RATE,
	O_BURST,
	/* rollouts at once, HA */
	O_SETTLE,
	O_HA,
	O_LEASE_NAME,
	O_LEASE_NS,
	O_LEASE_DURATION,
	O_RENEW_DEADLINE,
	O_RETRY_PERIOD,
	O_LISTEN,
	O_NO_EVENTS,
	O_PAGE,
	O_WATCH_TIMEOUT,
	O_RETRIES,
};

static const struct cli_opt opts[] = {
    {"kubeconfig", 0, "FILE", "kubeconfig to use (default: in-cluster service account)",
     O_KUBECONFIG},
    {"context", 0, "NAME", "kubeconfig context (default: current-context)", O_CONTEXT},
    {"serviceaccount-dir", 0, "DIR", "in-cluster token, ca.crt and namespace directory", O_SA_DIR},
    {"mode", 0, "MODE", "watch (default, run until SIGTERM) or once (reconcile and exit)", O_MODE},
    {"namespace", 'n', "NS", "only this namespace (repeatable; default: all)", 'n'},
    {"ignore-namespace", 0, "NS", "skip this namespace (repeatable)", O_IGNORE_NS},
    {"resource-label-selector", 0, "SEL", "server-side label selector for ConfigMaps and Secrets",
     O_LABELSEL},
    {"secret-field-selector", 0, "SEL",
     "server-side field selector for Secrets (default: type!=helm.sh/release.v1; '' for none)",
     O_FIELDSEL},
    {"reload-strategy", 0, "S", "env-vars (default) or annotations", O_STRATEGY},
    {"auto-reload-all", 0, NULL, "treat workloads without auto annotations as auto: \"true\"",
     O_AUTO_ALL},
    {"ignored-workload-types", 0, "LIST", "do not reload these kinds: jobs, cronjobs (as Reloader)",
     O_IGNORED_TYPES},
    {"is-Argo-Rollouts", 0, "BOOL", "true: also reload Argo Rollouts (default false)", O_ARGO},
    {"reload-on-create", 0, "BOOL", "true: a ConfigMap or Secret created while watching rolls",
     O_ON_CREATE},
    {"reload-on-delete", 0, "BOOL", "true: a deleted ConfigMap or Secret rolls (removes the var)",
     O_ON_DELETE},
    {"auto-annotation", 0, "KEY", "instead of reloader.stakater.com/auto",
     O_ANN_FIRST + RELOAD_ANN_AUTO},
    {"configmap-auto-annotation", 0, "KEY", "instead of configmap.reloader.stakater.com/auto",
     O_ANN_FIRST + RELOAD_ANN_CM_AUTO},
    {"secret-auto-annotation", 0, "KEY", "instead of secret.reloader.stakater.com/auto",
     O_ANN_FIRST + RELOAD_ANN_SEC_AUTO},
    {"configmap-annotation", 0, "KEY", "instead of configmap.reloader.stakater.com/reload",
     O_ANN_FIRST + RELOAD_ANN_CM_RELOAD},
    {"secret-annotation", 0, "KEY", "instead of secret.reloader.stakater.com/reload",
     O_ANN_FIRST + RELOAD_ANN_SEC_RELOAD},
    {"auto-search-annotation", 0, "KEY", "instead of reloader.stakater.com/search",
     O_ANN_FIRST + RELOAD_ANN_SEARCH},
    {"search-match-annotation", 0, "KEY", "instead of reloader.stakater.com/match",
     O_ANN_FIRST + RELOAD_ANN_MATCH},
    {"ignore-annotation", 0, "KEY", "instead of reloader.stakater.com/ignore",
     O_ANN_FIRST + RELOAD_ANN_IGNORE},
    {"pause-deployment-annotation", 0, "KEY",
     "instead of deployment.reloader.stakater.com/pause-period",
     O_ANN_FIRST + RELOAD_ANN_PAUSE_PERIOD},
    {"pause-deployment-time-annotation", 0, "KEY",
     "instead of deployment.reloader.stakater.com/paused-at", O_ANN_FIRST + RELOAD_ANN_PAUSED_AT},
    {"coalesce-window", 0, "DUR", "changes within this window become one rollout (default 1s)",
     O_WINDOW},
    {"min-interval", 0, "DUR", "minimum time between two rollouts of a workload (default 10s)",
     O_MIN_INTERVAL},
    {"max-rollouts-per-second", 0, "N", "global rollout rate limit, 0 for none (default 5)",
     O_RATE},
    {"burst", 0, "N", "rollouts allowed at once above the rate (default 20)", O_BURST},
    {"settle", 0, "DUR", "a change rolls this long after it arrives (default 10ms)", O_SETTLE},
    {"enable-ha", 0, "[=BOOL]", "leader election: only the Lease holder rolls (Reloader's flag)",
     O_HA},
    {"leader-elect-resource-name", 0, "NAME", "the Lease (default stakater-reloader-lock)",
     O_LEASE_NAME},
    {"leader-elect-resource-namespace", 0, "NS",
     "the Lease's namespace (default $POD_NAMESPACE, else the service account's)", O_LEASE_NS},
    {"leader-elect-lease-duration", 0, "DUR", "how long a standby waits (default 15s)",
     O_LEASE_DURATION},
    {"leader-elect-renew-deadline", 0, "DUR", "how long the leader tries to renew (default 10s)",
     O_RENEW_DEADLINE},
    {"leader-elect-retry-period", 0, "DUR", "time between tries (default 2s)", O_RETRY_PERIOD},
    {"listen", 0, "ADDR",
     "serve /healthz, /readyz, /metrics on [HOST]:PORT ('' for off; default :9090)", O_LISTEN},
    {"no-events", 0, NULL, "do not post Kubernetes Events", O_NO_EVENTS},
    {"page-size", 0, "N", "LIST page size (default 500)", O_PAGE},
    {"watch-timeout", 0, "DUR", "server-side watch timeout (default 30m)", O_WATCH_TIMEOUT},
    {"retries", 0, "N", "attempts per API request on 429, 5xx and broken connections (default 5)",
     O_RETRIES},
    {NULL, 0, NULL, NULL, 0},
};

static const struct cli_spec spec = {
    .prog = "nodeprobe-reload",
    .synopsis = "[OPTIONS]",
    .description = "Roll Deployments, StatefulSets, DaemonSets, CronJobs, Jobs and Argo Rollouts\n"
		   "when the ConfigMaps and Secrets they use change, honouring stakater\n"
		   "Reloader's annotations.",
    .opts = opts,
    .epilog = "Exit status: 0 success, 1 failure (configuration, TLS, API), 2 usage,\n"
	      "3 (once) some rollouts failed.\n",
};

struct args {
	struct reload_opts o;
	const char *ns[64];
	size_t nns;
	const char *ign[64];
	size_t nign;
};

/* A Go duration ("500ms", "2s", "1m30s"; pkg/goconv) or a bare number of seconds, into ms. */
static long parse_duration(const char *s)
{
	int64_t ns;
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end != s && !*end && !errno && v >= 0 && v <= 1e9 && isdigit((unsigned char)*s))
		return (long)(v * 1000);
	if (goconv_parse_duration(s, &ns) < 0 || ns < 0 || ns / 1000000 > (int64_t)1e12)
		return -1;
	return (long)(ns / 1000000);
}

static long parse_count(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < 0 || v > max)
		return -1;
	return v;
}

/*
 * Reloader's --ignored-workload-types (jobs, cronjobs; comma list, repeatable) and its string
 * flags --is-Argo-Rollouts, --reload-on-create, --reload-on-delete, which it enables only for
 * exactly "true" (internal/pkg/cmd/reloader.go). A value Reloader would silently take as false
 * ("True", "1", "yes") or an unknown type is refused here rather than ignored.
 */
static int kinds_opt(struct reload_opts *o, int id, const char *arg, char *msg, int msglen)
{
	const char *p = arg, *e;

	if (id != O_IGNORED_TYPES) {
		static const char *const names[] = {"is-Argo-Rollouts", "reload-on-create",
						    "reload-on-delete"};
		int *dst = id == O_ARGO	       ? &o->argo_rollouts
			   : id == O_ON_CREATE ? &o->reload_on_create
					       : &o->reload_on_delete;

		if (strcmp(arg, "true") != 0 && strcmp(arg, "false") != 0) {
			snprintf(msg, (size_t)msglen,
				 "--%s: '%s' is not true or false (Reloader enables it only for "
				 "exactly 'true')",
				 names[id - O_ARGO], arg);
			return -1;
		}
		*dst = strcmp(arg, "true") == 0;
		return 0;
	}
	for (;;) {
		size_t n;

		e = strchr(p, ',');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n == 4 && strncmp(p, "jobs", 4) == 0) {
			o->ignore_jobs = 1;
		} else if (n == 8 && strncmp(p, "cronjobs", 8) == 0) {
			o->ignore_cronjobs = 1;
		} else if (n) {
			snprintf(msg, (size_t)msglen,
				 "--ignored-workload-types: '%.*s' is not jobs or cronjobs", (int)n,
				 p);
			return -1;
		}
		if (!e)
			return 0;
		p = e + 1;
	}
}

static int on_opt(void *ctx, int id, const char *arg, char *msg, int msglen)
{
	struct args *a = ctx;
	struct reload_opts *o = &a->o;
	long v;
	char *end;

	switch (id) {
	case O_HA:
		v = arg ? goconv_parse_bool(arg) : 1;
		if (v < 0) {
			snprintf(msg, (size_t)msglen, "--enable-ha: '%s' is not a boolean", arg);
			return -1;
		}
		o->ha = (int)v;
		return 0;
	case O_LEASE_NAME:
	case O_LEASE_NS:
		if (!*arg) {
			snprintf(msg, (size_t)msglen, "--leader-elect-resource-%s: empty",
				 id == O_LEASE_NAME ? "name" : "namespace");
			return -1;
		}
		if (id == O_LEASE_NAME)
			o->lease_name = arg;
		else
			o->lease_namespace = arg;
		return 0;
	case O_SETTLE:
	case O_LEASE_DURATION:
	case O_RENEW_DEADLINE:
	case O_RETRY_PERIOD:
		v = parse_duration(arg);
		if (v < 0 || (id != O_SETTLE && v < 1)) {
			snprintf(msg, (size_t)msglen, "bad duration '%s' (e.g. 500ms, 2s, 5m)",
				 arg);
			return -1;
		}
		if (id == O_SETTLE)
			o->settle_ms = v;
		else if (id == O_LEASE_DURATION)
			o->lease_duration_ms = v;
		else if (id == O_RENEW_DEADLINE)
			o->renew_deadline_ms = v;
		else
			o->retry_period_ms = v;
		return 0;
	case O_KUBECONFIG:
		o->kubeconfig = arg;
		return 0;
	case O_CONTEXT:
		o->context = arg;
		return 0;
	case O_SA_DIR:
		o->sa_dir = arg;
		return 0;
	case O_MODE:
		if (strcmp(arg, "watch") == 0 || strcmp(arg, "once") == 0) {
			o->once = strcmp(arg, "once") == 0;
			return 0;
		}
		snprintf(msg, (size_t)msglen, "--mode: '%s' is not watch or once", arg);
		return -1;
	case 'n':
	case O_IGNORE_NS:
		if (!*arg) {
			snprintf(msg, (size_t)msglen, "--%s: empty namespace",
				 id == 'n' ? "namespace" : "ignore-namespace");
			return -1;
		}
		if ((id == 'n' ? a->nns : a->nign) >= 63) {
			snprintf(msg, (size_t)msglen, "too many namespaces (max 63)");
			return -1;
		}
		if (id == 'n')
			a->ns[a->nns++] = arg;
		else
			a->ign[a->nign++] = arg;
		return 0;
	case O_LABELSEL:
		o->label_selector = arg;
		return 0;
	case O_FIELDSEL:
		o->secret_field_selector = arg;
		return 0;
	case O_STRATEGY:
		if (strcmp(arg, "env-vars") == 0)
			o->strategy = RELOAD_ENV_VARS;
		else if (strcmp(arg, "annotations") == 0)
			o->strategy = RELOAD_ANNOTATIONS;
		else {
			snprintf(msg, (size_t)msglen,
				 "--reload-strategy: '%s' is not env-vars or annotations", arg);
			return -1;
		}
		return 0;
	case O_AUTO_ALL:
		o->auto_all = 1;
		return 0;
	case O_WINDOW:
	case O_MIN_INTERVAL:
	case O_WATCH_TIMEOUT:
		v = parse_duration(arg);
		if (v < 0) {
			snprintf(msg, (size_t)msglen, "bad duration '%s' (e.g. 500ms, 2s, 5m)",
				 arg);
			return -1;
		}
		if (id == O_WINDOW)
			o->window_ms = v;
		else if (id == O_MIN_INTERVAL)
			o->min_interval_ms = v;
		else
			o->watch_timeout_s = v / 1000 > 0 ? v / 1000 : 1;
		return 0;
	case O_RATE:
		o->max_rate = strtod(arg, &end);
		if (end == arg || *end || o->max_rate < 0) {
			snprintf(msg, (size_t)msglen, "--max-rollouts-per-second: bad number '%s'",
				 arg);
			return -1;
		}
		return 0;
	case O_BURST:
	case O_PAGE:
	case O_RETRIES:
		v = parse_count(arg, 100000);
		if (v < 1) {
			snprintf(msg, (size_t)msglen, "bad count '%s' (1 to 100000)", arg);
			return -1;
		}
		if (id == O_BURST)
			o->burst = (int)v;
		else if (id == O_PAGE)
			o->page_size = v;
		else
			o->retries = (int)v;
		return 0;
	case O_LISTEN:
		o->listen = *arg ? arg : NULL;
		return 0;
	case O_NO_EVENTS:
		o->events = 0;
		return 0;
	case O_IGNORED_TYPES:
	case O_ARGO:
	case O_ON_CREATE:
	case O_ON_DELETE:
		return kinds_opt(o, id, arg, msg, msglen);
	}
	if (id >= O_ANN_FIRST && id < O_ANN_FIRST + RELOAD_ANN_NNAMES) {
		if (!*arg) {
			snprintf(msg, (size_t)msglen, "empty annotation name");
			return -1;
		}
		o->ann_names[id - O_ANN_FIRST] = arg;
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct args a;
	struct log_err err = {0};
	int verbose = 0, r;

	memset(&a, 0, sizeof(a));
	reload_opts_init(&a.o);
	a.o.listen = ":9090";
	r = cli_parse(&spec, argc, argv, on_opt, &a, &verbose);
	if (r <= 0)
		return -r;
	if (r < argc) {
		cli_error("unexpected argument '%s'", argv[r]);
		return CLI_EXIT_USAGE;
	}
	a.o.namespaces = a.nns ? a.ns : NULL;
	a.o.ignore_ns = a.nign ? a.ign : NULL;
	/* A controller reports each rollout: info is on by default, -v adds debug. */
	cli_log_init(spec.prog, verbose + 1);
	r = reload_run(&a.o, &err);
	if (r == RELOAD_EPARTIAL) {
		cli_error("%s", err.msg);
		return EXIT_PARTIAL;
	}
	if (r < 0) {
		cli_error("%s", err.msg[0] ? err.msg : strerror(-r));
		return CLI_EXIT_FAILURE;
	}
	return CLI_EXIT_OK;
}
