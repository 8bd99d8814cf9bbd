/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_internal: counters shared between the controller and its HTTP endpoint. */
#ifndef NP_RELOAD_INTERNAL_H
#define NP_RELOAD_INTERNAL_H

#include "kube/kube.h"
#include "reload/reload.h"

/* Resource classes the controller lists and watches. */
enum { CLS_CM = 0, CLS_SEC, CLS_DEP, CLS_STS, CLS_DS, NCLS };

/* Skip reasons counted in nodeprobe_reload_skipped_total. */
enum {
	SKIP_CURRENT = 0,  /* the workload already carries the hash */
	SKIP_IGNORED,	   /* reloader.stakater.com/ignore on the object */
	SKIP_EXCLUDED,	   /* the workload's exclude list */
	SKIP_NOT_USED,	   /* selected by auto/search but not used by a container */
	SKIP_NO_CONTAINER, /* env-vars needs a container, the workload has none */
	SKIP_UNCHANGED,	   /* an update that did not change the data */
	NSKIP,
};

/* Counters; updated by the controller thread, read by the HTTP thread (relaxed atomics). */
struct reload_metrics {
	unsigned long reloads[RELOAD_NKINDS][2]; /* [kind][0 success, 1 failure] */
	unsigned long skipped[NSKIP];
	unsigned long watch_restarts[NCLS];
	unsigned long objects[NCLS];  /* gauge: objects tracked */
	int ready;		      /* initial sync done, watches running */
	const struct kube_client *cl; /* for API request counts by code */
};

/* Start /healthz, /readyz, /metrics on listen ("[host]:port"). Returns a handle or NULL + err. */
void *reload_http_start(const char *listen, struct reload_metrics *m, struct log_err *err);
/* Stop it (NULL allowed). */
void reload_http_stop(void *h);

#define METRIC_INC(x)	 __atomic_add_fetch(&(x), 1, __ATOMIC_RELAXED)
#define METRIC_SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define METRIC_GET(x)	 __atomic_load_n(&(x), __ATOMIC_RELAXED)

#endif
