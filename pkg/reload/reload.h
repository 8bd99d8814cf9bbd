/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload: Reloader-compatible rollouts of workloads when the ConfigMaps and Secrets they use
 * change: the controller's contract with its binary (hooks/reload). */
#ifndef NP_RELOAD_H
#define NP_RELOAD_H

#include <stddef.h>

#include "log/log.h"

/* How a workload is rolled. */
enum reload_strategy {
	RELOAD_ENV_VARS = 0,	/* STAKATER_<NAME>_CONFIGMAP|SECRET env var in the container */
	RELOAD_ANNOTATIONS = 1, /* reloader.stakater.com/last-reloaded-from on the pod template */
};

/* Reloader's annotation names that its flags can override (--auto-annotation, ...). */
enum reload_ann_name {
	RELOAD_ANN_AUTO = 0,	 /* --auto-annotation: reloader.stakater.com/auto */
	RELOAD_ANN_CM_AUTO,	 /* --configmap-auto-annotation */
	RELOAD_ANN_SEC_AUTO,	 /* --secret-auto-annotation */
	RELOAD_ANN_CM_RELOAD,	 /* --configmap-annotation */
	RELOAD_ANN_SEC_RELOAD,	 /* --secret-annotation */
	RELOAD_ANN_SEARCH,	 /* --auto-search-annotation */
	RELOAD_ANN_MATCH,	 /* --search-match-annotation */
	RELOAD_ANN_IGNORE,	 /* --ignore-annotation */
	RELOAD_ANN_PAUSE_PERIOD, /* --pause-deployment-annotation */
	RELOAD_ANN_PAUSED_AT,	 /* --pause-deployment-time-annotation */
	RELOAD_ANN_NNAMES,
};

/* Options for reload_run (filled by main from the command line). */
struct reload_opts {
	const char *kubeconfig;		   /* NULL: in-cluster */
	const char *context;		   /* kubeconfig context, NULL: current */
	const char *sa_dir;		   /* service-account directory for in-cluster */
	int once;			   /* 1: reconcile and exit */
	const char **namespaces;	   /* NULL-terminated, NULL/empty: all namespaces */
	const char **ignore_ns;		   /* NULL-terminated namespaces to skip */
	const char *label_selector;	   /* server-side selector for ConfigMaps and Secrets */
	const char *secret_field_selector; /* server-side fieldSelector for Secrets */
	enum reload_strategy strategy;

	/* Reloader's workload kinds and flags beyond Deployments (reload_kinds.c) */
	int ignore_cronjobs; /* --ignored-workload-types cronjobs */
	int ignore_jobs;     /* --ignored-workload-types jobs */
	int argo_rollouts;   /* --is-Argo-Rollouts true */
	int csi; /* --enable-csi-integration: SecretProviderClassPodStatuses (reload_csi.c) */
	int reload_on_create;			  /* --reload-on-create true */
	int reload_on_delete;			  /* --reload-on-delete true */
	const char *ann_names[RELOAD_ANN_NNAMES]; /* overrides; NULL: Reloader's default */

	int auto_all;	      /* --auto-reload-all */
	long window_ms;	      /* coalescing window */
	long min_interval_ms; /* per-workload minimum interval between rollouts */
	double max_rate;      /* global rollouts per second (token bucket) */
	int burst;	      /* token bucket size */

	/* Rollouts at once and HA (reload_ha.c). */
	long settle_ms;		     /* a change rolls this long after it arrives */
	int ha;			     /* --enable-ha: act only while holding the Lease */
	const char *lease_name;	     /* the Lease (default stakater-reloader-lock, Reloader's) */
	const char *lease_namespace; /* NULL: $POD_NAMESPACE, else the service account's */
	long lease_duration_ms;	     /* client-go's LeaseDuration (15 s) */
	long renew_deadline_ms;	     /* RenewDeadline (10 s) */
	long retry_period_ms;	     /* RetryPeriod (2 s) */

	const char *listen;   /* "host:port" or ":port" for /metrics, NULL: off */
	int events;	      /* 1: post Kubernetes Events */
	long page_size;	      /* LIST limit */
	long watch_timeout_s; /* server-side watch timeout */
	int retries;	      /* API retry budget */
	int retry_base_ms;    /* first backoff step */
	/* Reloader's deployment contract (reload-surface; hooks/reload/main.c fills these) */
	const char *namespace_selector; /* selector on Namespaces (translated), NULL: none */
	int ignore_cls[2];		/* --resources-to-ignore: [0] configmaps, [1] secrets */
	const char *webhook_url;	/* --webhook-url: POST instead of rolling, NULL: off */
	int metrics_by_namespace;	/* METRICS_COUNT_BY_NAMESPACE=enabled */
	struct reload_alert {		/* Reloader's ALERT_* environment */
		int on;			/* ALERT_ON_RELOAD=true */
		const char *url;	/* ALERT_WEBHOOK_URL (trimmed), NULL: unset */
		const char *sink;	/* ALERT_SINK (trimmed, lower case): slack, teams, gchat */
		const char *proxy;	/* ALERT_WEBHOOK_PROXY (trimmed), NULL/"": direct */
		const char *info;	/* ALERT_ADDITIONAL_INFO (trimmed), NULL: unset */
	} alert;
};

/*
 * Reloader's --namespace-selector / --resource-label-selector entries (each
 * flag value split on ','; Reloader v1.4.21 pkg/common/common.go) as one
 * Kubernetes label selector: "k:v" -> "k=v", "k:*" and "k=*" -> "k" (exists),
 * anything else as given; joined with ','. The result is checked against the
 * label-selector grammar. *out is owned by the caller (free). Returns 0 or
 * -EINVAL with err naming the bad part.
 */
int reload_selector(char **out, const char *const *entries, size_t n, struct log_err *err);

/*
 * Whether url is one --webhook-url accepts: http:// or https:// (scheme in any case) and a host
 * (user info aside). 1 or 0.
 */
int reload_notify_url_ok(const char *url);

/* Fill opts with the defaults. */
void reload_opts_init(struct reload_opts *opts);

/* Results of reload_run beyond 0 and -errno (out of the errno range, as pkg/kube's). */
enum {
	RELOAD_EPARTIAL = -5001, /* once: some rollouts failed */
};

/*
 * A static description of code, a result of reload_run: RELOAD_EPARTIAL,
 * pkg/kube's KUBE_E* codes, or -errno (strerror's words).
 */
const char *reload_strerror(int code);

/*
 * Run the controller until SIGTERM/SIGINT (watch) or after one pass (once).
 * Returns 0, RELOAD_EPARTIAL, or a negative code with err set (configuration,
 * TLS, authentication, API errors that outlast the retries at start).
 */
int reload_run(const struct reload_opts *opts, struct log_err *err);

/* ---- Reloader's command line (reload_flags.c) ---- */

/* One flag, as struct cli_opt (pkg/cli) has it; the table ends with a NULL lng. */
struct reload_flag {
	const char *lng;  /* long name without "--" */
	int shrt;	  /* short letter, or 0 */
	const char *arg;  /* argument name for --help, NULL for a flag, "[=BOOL]": optional */
	const char *help; /* one line for --help */
	int id;		  /* what reload_args_set receives */
};
/* A Reloader flag refused by name (exit 2); the table ends with a NULL lng. */
struct reload_refused_flag {
	const char *lng, *why;
};
extern const struct reload_flag reload_flags[];
extern const struct reload_refused_flag reload_refused_flags[];

#define RELOAD_ENV_MAX 2048 /* bytes of an ALERT_* variable, its NUL included */

/* The command line as it is parsed: the options and the storage they point into. */
struct reload_args {
	struct reload_opts o;
	const char *ns[64];
	size_t nns;
	const char *ign[64];
	size_t nign;
	const char *sel[2][64]; /* [0] --resource-label-selector, [1] --namespace-selector */
	size_t nsel[2];
	char *owned[128]; /* copies split from comma lists */
	size_t nowned;
	int log_json;	   /* --log-format json */
	int log_level;	   /* --log-level, -1: unset */
	char *selector[2]; /* the selectors translated (owned) */
	const char
	    *bad_flag; /* after reload_args_finish fails: the flag whose selector it refused */
	char envbuf[4][RELOAD_ENV_MAX]; /* ALERT_* values, trimmed */
};

/* Defaults: reload_opts_init, --listen :9090 (Reloader's metrics port), log level unset. */
void reload_args_init(struct reload_args *a);
/*
 * One flag (id from reload_flags, arg NULL for a flag without value), in cli_opt_fn's shape:
 * returns 0, or -1 with msg set ("--flag: why").
 */
int reload_args_set(void *ctx, int id, const char *arg, char *msg, int msglen);
/*
 * Reloader's environment: ALERT_*, METRICS_COUNT_BY_NAMESPACE, KUBERNETES_NAMESPACE (one
 * namespace when no --namespace/--namespaces was given). Returns 0, or -EINVAL with err set (a
 * value longer than RELOAD_ENV_MAX - 1 bytes).
 */
int reload_args_env(struct reload_args *a, struct log_err *err);
/*
 * After the flags and the environment: the selectors translated, the lists set in a->o. Returns
 * 0, or -EINVAL with err set to the selector parser's message and a->bad_flag naming the flag
 * ("namespace-selector"); the binary prints "--<flag>: <message>".
 */
int reload_args_finish(struct reload_args *a, struct log_err *err);
/* Free what a owns (a->o's lists and selectors point into it). */
void reload_args_free(struct reload_args *a);

#endif
