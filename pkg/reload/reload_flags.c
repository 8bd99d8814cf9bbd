/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_flags: Reloader's command line (its flags, by name and meaning, and the environment it
 * reads) translated into struct reload_opts. The table is cli's shape without cli (a pkg/ module
 * does not include cli/cli.h): hooks/reload/main.c copies it into its struct cli_opt table. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "goconv/goconv.h"
#include "kube/kube.h"
#include "listen/listen.h"
#include "reload/reload.h"

enum {
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
	/* Reloader's names (reload-surface) */
	O_NAMESPACES,
	O_NS_TO_IGNORE,
	O_NS_SELECTOR,
	O_RES_TO_IGNORE,
	O_SYNC_AFTER_RESTART,
	O_LOG_FORMAT,
	O_LOG_LEVEL,
	O_WEBHOOK_URL,
	O_CSI,
};

const struct reload_flag reload_flags[] = {
    {"kubeconfig", 0, "FILE",
     "kubeconfig to use (default: $KUBECONFIG, in-cluster, ~/.kube/config)", O_KUBECONFIG},
    {"context", 0, "NAME", "kubeconfig context (default: current-context)", O_CONTEXT},
    {"serviceaccount-dir", 0, "DIR", "in-cluster token, ca.crt and namespace directory", O_SA_DIR},
    {"mode", 0, "MODE", "watch (default, run until SIGTERM) or once (reconcile and exit)", O_MODE},
    {"namespace", 'n', "NS", "only this namespace (repeatable; default: all)", 'n'},
    {"ignore-namespace", 0, "NS", "skip this namespace (repeatable)", O_IGNORE_NS},
    {"resource-label-selector", 0, "SEL",
     "server-side label selector for ConfigMaps, Secrets and SecretProviderClassPodStatuses "
     "(repeatable; Reloader's k:v forms)",
     O_LABELSEL},
    {"secret-field-selector", 0, "SEL",
     "server-side field selector for Secrets (default: type!=helm.sh/release.v1; '' for none)",
     O_FIELDSEL},
    {"reload-strategy", 0, "S", "env-vars (default) or annotations", O_STRATEGY},
    {"auto-reload-all", 0, "[=BOOL]", "treat workloads without auto annotations as auto: \"true\"",
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
    /* Reloader's names for them (its PR #1206, after v1.4.21) */
    {"leader-election-lease-duration", 0, "DUR", "= --leader-elect-lease-duration (Reloader's)",
     O_LEASE_DURATION},
    {"leader-election-renew-deadline", 0, "DUR", "= --leader-elect-renew-deadline (Reloader's)",
     O_RENEW_DEADLINE},
    {"leader-election-retry-period", 0, "DUR", "= --leader-elect-retry-period (Reloader's)",
     O_RETRY_PERIOD},
    {"listen", 0, "ADDR",
     "serve /healthz, /readyz, /metrics on [HOST]:PORT ('' for off; default :9090)", O_LISTEN},
    {"no-events", 0, NULL, "do not post Kubernetes Events", O_NO_EVENTS},
    {"page-size", 0, "N", "LIST page size (default 500)", O_PAGE},
    {"watch-timeout", 0, "DUR", "server-side watch timeout (default 30m)", O_WATCH_TIMEOUT},
    {"retries", 0, "N", "attempts per API request on 429, 5xx and broken connections (default 5)",
     O_RETRIES},
    /* Reloader's own flag names (stakater/Reloader v1.4.21, internal/pkg/util/util.go
     * ConfigureReloaderFlags; test/fixtures/reloader/flags-v1.4.21.txt) */
    {"namespaces", 0, "LIST", "only these namespaces (comma list; same as -n)", O_NAMESPACES},
    {"namespaces-to-ignore", 0, "LIST", "skip these namespaces (comma list)", O_NS_TO_IGNORE},
    {"namespace-selector", 0, "SEL",
     "only namespaces whose labels match (watched; Reloader's forms)", O_NS_SELECTOR},
    {"resources-to-ignore", 0, "KIND", "configmaps or secrets: do not watch that kind",
     O_RES_TO_IGNORE},
    {"sync-after-restart", 0, "[=BOOL]", "accepted: changes made while stopped are always rolled",
     O_SYNC_AFTER_RESTART},
    {"log-format", 0, "FMT", "json: one JSON object a line; '' (default): text", O_LOG_FORMAT},
    {"log-level", 0, "LEVEL", "trace, debug, info (default), warning, error, fatal, panic",
     O_LOG_LEVEL},
    {"webhook-url", 0, "URL", "POST Reloader's webhook payload instead of rolling workloads",
     O_WEBHOOK_URL},
    {"enable-csi-integration", 0, "[=BOOL]",
     "also reload on SecretProviderClass rotations (Secrets Store CSI)", O_CSI},
    {NULL, 0, NULL, NULL, 0},
};

/* Reloader flags refused by name (exit 2): the two nodeprobe-reload.8 lists as not supported. */
const struct reload_refused_flag reload_refused_flags[] = {
    {"enable-pprof", "not supported (no Go runtime to profile)"},
    {"pprof-addr", "not supported (no Go runtime to profile)"},
    {NULL, NULL},
};

/* Split a comma list (Reloader's string-slice flags) and add its items to list. */
static int add_list(struct reload_args *a, const char **list, size_t *n, const char *arg,
		    const char *opt, char *msg, int msglen)
{
	char *copy, *tok, *save = NULL;

	if (a->nowned >= sizeof(a->owned) / sizeof(a->owned[0]) || !(copy = strdup(arg))) {
		snprintf(msg, (size_t)msglen, "--%s: too many values", opt);
		return -1;
	}
	a->owned[a->nowned++] = copy;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		if (!*tok)
			continue;
		if (*n >= 63) {
			snprintf(msg, (size_t)msglen, "--%s: too many values (max 63)", opt);
			return -1;
		}
		list[(*n)++] = tok;
	}
	return 0;
}

/* Go's strconv.ParseBool for an optional "=VALUE" (pflag bool flags); NULL means true. */
static int opt_bool(const char *arg, const char *opt, char *msg, int msglen)
{
	int v = arg ? goconv_parse_bool(arg) : 1;

	if (v < 0)
		snprintf(msg, (size_t)msglen, "--%s: '%s' is not a boolean", opt, arg);
	return v;
}

/* logrus level names (Reloader's --log-level) to ours; -1 if unknown. */
static int log_level_of(const char *s)
{
	if (!strcmp(s, "trace") || !strcmp(s, "debug"))
		return LOG_LVL_DEBUG;
	if (!strcmp(s, "info"))
		return LOG_LVL_INFO;
	if (!strcmp(s, "warn") || !strcmp(s, "warning"))
		return LOG_LVL_WARN;
	if (!strcmp(s, "error") || !strcmp(s, "fatal") || !strcmp(s, "panic"))
		return LOG_LVL_ERROR;
	return -1;
}

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

int reload_args_set(void *ctx, int id, const char *arg, char *msg, int msglen)
{
	struct reload_args *a = ctx;
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
	case O_NS_SELECTOR:
		return add_list(a, a->sel[id == O_NS_SELECTOR], &a->nsel[id == O_NS_SELECTOR], arg,
				id == O_LABELSEL ? "resource-label-selector" : "namespace-selector",
				msg, msglen);
	case O_NAMESPACES:
		return add_list(a, a->ns, &a->nns, arg, "namespaces", msg, msglen);
	case O_NS_TO_IGNORE:
		return add_list(a, a->ign, &a->nign, arg, "namespaces-to-ignore", msg, msglen);
	case O_RES_TO_IGNORE: {
		const char *list[64];
		size_t n = 0, i;

		if (add_list(a, list, &n, arg, "resources-to-ignore", msg, msglen) < 0)
			return -1;
		for (i = 0; i < n; i++) {
			if (strcasecmp(list[i], "configmaps") == 0)
				o->ignore_cls[0] = 1;
			else if (strcasecmp(list[i], "secrets") == 0)
				o->ignore_cls[1] = 1;
			else {
				snprintf(msg, (size_t)msglen,
					 "--resources-to-ignore: '%s' is not configmaps or secrets",
					 list[i]);
				return -1;
			}
		}
		if (o->ignore_cls[0] && o->ignore_cls[1]) {
			snprintf(msg, (size_t)msglen,
				 "--resources-to-ignore: configmaps or secrets, not both");
			return -1;
		}
		return 0;
	}
	case O_SYNC_AFTER_RESTART:
		return opt_bool(arg, "sync-after-restart", msg, msglen) < 0 ? -1 : 0;
	case O_LOG_FORMAT:
		if (strcmp(arg, "json") == 0 || !*arg) {
			a->log_json = *arg != '\0';
			return 0;
		}
		snprintf(msg, (size_t)msglen, "--log-format: '%s' is not json or ''", arg);
		return -1;
	case O_LOG_LEVEL:
		a->log_level = log_level_of(arg);
		if (a->log_level >= 0)
			return 0;
		snprintf(msg, (size_t)msglen,
			 "--log-level: '%s' is not trace, debug, info, warning, error, fatal or "
			 "panic",
			 arg);
		return -1;
	case O_WEBHOOK_URL:
		/* checked at start: an unusable scheme would fail every POST, silently but for logs
		 */
		if (*arg && !reload_notify_url_ok(arg)) {
			snprintf(msg, (size_t)msglen,
				 "--webhook-url: the URL must start with http:// or https:// "
				 "and name a host");
			return -1;
		}
		o->webhook_url = *arg ? arg : NULL;
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
		o->auto_all = opt_bool(arg, "auto-reload-all", msg, msglen);
		return o->auto_all < 0 ? -1 : 0;
	case O_CSI: /* a pflag BoolVar, as --auto-reload-all */
		o->csi = opt_bool(arg, "enable-csi-integration", msg, msglen);
		return o->csi < 0 ? -1 : 0;
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
		/* checked here, as nodeprobe-devices does: a bad value is a usage error (exit 2) */
		if (*arg && listen_check(arg, true, msg, msglen) < 0)
			return -1;
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

/* getenv, trimmed of spaces (Go's strings.TrimSpace) into buf; NULL when unset. */
static const char *env_trim(const char *name, char *buf, size_t len, int lower)
{
	const char *v = getenv(name);
	size_t n;

	if (!v)
		return NULL;
	while (isspace((unsigned char)*v))
		v++;
	snprintf(buf, len, "%s", v);
	n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	for (; lower && n; n--)
		buf[n - 1] = (char)tolower((unsigned char)buf[n - 1]);
	return buf;
}

/*
 * Reloader's environment (reloader.md §9.7, §9.8): ALERT_*, METRICS_COUNT_BY_NAMESPACE and
 * KUBERNETES_NAMESPACE (one namespace when no --namespace/--namespaces is given).
 */
int reload_args_env(struct reload_args *a, struct log_err *err)
{
	static const char *const names[] = {"ALERT_WEBHOOK_URL", "ALERT_SINK",
					    "ALERT_WEBHOOK_PROXY", "ALERT_ADDITIONAL_INFO"};
	struct reload_opts *o = &a->o;
	char(*bufs)[RELOAD_ENV_MAX] = a->envbuf;
	const char *v = getenv("ALERT_ON_RELOAD");
	size_t i;

	/* a longer value was cut at the buffer, silently: refused, naming the limit */
	for (i = 0; i < 4; i++) {
		v = getenv(names[i]);
		if (v && strlen(v) >= sizeof(bufs[i])) {
			snprintf(err->msg, sizeof(err->msg), "%s: %zu bytes; at most %zu", names[i],
				 strlen(v), sizeof(bufs[i]) - 1);
			return -EINVAL;
		}
	}
	v = getenv("ALERT_ON_RELOAD");

	o->alert.on = v && strcmp(v, "true") == 0;
	o->alert.url = env_trim("ALERT_WEBHOOK_URL", bufs[0], sizeof(bufs[0]), 0);
	o->alert.sink = env_trim("ALERT_SINK", bufs[1], sizeof(bufs[1]), 1);
	o->alert.proxy = env_trim("ALERT_WEBHOOK_PROXY", bufs[2], sizeof(bufs[2]), 0);
	o->alert.info = env_trim("ALERT_ADDITIONAL_INFO", bufs[3], sizeof(bufs[3]), 0);
	v = getenv("METRICS_COUNT_BY_NAMESPACE");
	o->metrics_by_namespace = v && strcmp(v, "enabled") == 0;
	v = getenv("KUBERNETES_NAMESPACE");
	if (!a->nns && v && *v)
		a->ns[a->nns++] = v;
	return 0;
}

void reload_args_init(struct reload_args *a)
{
	memset(a, 0, sizeof(*a));
	a->log_level = -1;
	reload_opts_init(&a->o);
	a->o.listen = ":9090";
}

int reload_args_finish(struct reload_args *a, struct log_err *err)
{
	struct log_err e = {0};
	int i;

	for (i = 0; i < 2; i++) {
		if (!a->nsel[i])
			continue;
		if (reload_selector(&a->selector[i], a->sel[i], a->nsel[i], &e) < 0) {
			/* the parser's whole message; the binary prefixes a->bad_flag */
			a->bad_flag = i ? "namespace-selector" : "resource-label-selector";
			*err = e;
			return -EINVAL;
		}
	}
	a->o.label_selector = a->selector[0];
	a->o.namespace_selector = a->selector[1];
	a->o.namespaces = a->nns ? a->ns : NULL;
	a->o.ignore_ns = a->nign ? a->ign : NULL;
	return 0;
}

void reload_args_free(struct reload_args *a)
{
	free(a->selector[0]);
	free(a->selector[1]);
	a->selector[0] = a->selector[1] = NULL;
	while (a->nowned)
		free(a->owned[--a->nowned]);
}
