/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_in.h: the input stage (reload_list.c, reload_sync.c, reload_csi.c, reload_nsel.c):
 * LIST and WATCH streams into the tables. Includes only the base vocabulary (reload_internal.h). */
#ifndef NP_RELOAD_IN_H
#define NP_RELOAD_IN_H

#include "reload/reload_internal.h"

/*
 * What input tells the stages above it. The run loop (reload_run.c) sets c->in.on; input calls no
 * file above it, and a NULL c->in.on (or hook) is not called (tests that drive input alone).
 */
struct reload_in_hooks {
	/* A ConfigMap or Secret changed, was created (--reload-on-create) or deleted (tombstone).
	 */
	void (*changed)(struct ctl *c, const struct cfg_ent *ce);
	/* Workloads (re-listed) or a namespace (newly selected, re-listed) to reconcile again. */
	void (*relisted)(struct ctl *c);
	/* Workload we, read again from the API, is about to be replaced by nw. */
	void (*replacing)(struct ctl *c, struct wl_ent *we, const struct reload_workload *nw);
	/* Workload we was (re)read and replaced. */
	void (*read)(struct ctl *c, struct wl_ent *we);
	/* Queue a Warning Event with reason (a static string) and msg on we (refused lists). */
	void (*event)(struct ctl *c, const struct wl_ent *we, const char *reason, const char *msg);
};

/* Call hook h of c->in.on with the arguments that follow, when set. */
#define RELOAD_IN_TELL(c, h, ...)                                                                  \
	do {                                                                                       \
		if ((c)->in.on && (c)->in.on->h)                                                   \
			(c)->in.on->h(__VA_ARGS__);                                                \
	} while (0)

void reload_apply_workload(struct ctl *c, int cls, const char *evtype, json_t *obj);

void reload_process_deferred(struct ctl *c);

int reload_list_stream(struct ctl *c, struct rs *s, struct log_err *err);

/* One paged LIST (reload_list.c): what is listed, where its items go, the caller's hooks. */
struct reload_list {
	const struct kube_resource *res;      /* the resource listed */
	const char *ns;			      /* its namespace; NULL or "": all */
	struct kube_query q;		      /* selectors; limit and continue are set per page */
	enum kube_item_mode mode;	      /* how items reach ops */
	const struct kube_stream_ops *ops;    /* item callbacks, given ctx (borrowed) */
	void *ctx;			      /* for ops, status and restart */
	int (*status)(void *ctx, int status); /* sees each status first; 1 ends the LIST; or NULL */
	void (*restart)(void *ctx); /* the LIST starts over (410): forget what it saw; or NULL */
	char *rv;		    /* RV_MAX bytes: set to each page's resourceVersion */
};

/*
 * LIST l->res page by page (c->o->page_size items a page; c->url holds the
 * page's URL), items streamed to l->ops. l->status (NULL: none) sees every
 * page's HTTP status first and ends the LIST with success by returning 1. A 410
 * after the first page (the continue token expired) starts over from the first
 * page, at most LIST_RESTARTS times, after l->restart. Returns the number of
 * restarts (0 or more), or with err set: KUBE_EAUTH (401/403), KUBE_EHTTP (any
 * other status; a continue token that repeats; a token still there after
 * LIST_MAX_PAGES pages, or c->in.list_max_pages when set), or the client's or
 * ops' negative code.
 */
int reload_list_pages(struct ctl *c, const struct reload_list *l, struct log_err *err);

int reload_start_watch(struct ctl *c, struct rs *s, struct log_err *err);

void reload_restart_watches(struct ctl *c);
/* A failed watch's jittered back-off in ms: 0.2 s doubling with each consecutive failure
 * (s->fails), up to 12.8 s. */
long long reload_watch_backoff_ms(const struct rs *s);
/* How long the current watch may stay unanswered before it is given up (held: longer). */
long long reload_watch_open_ms(const struct rs *s);
/*
 * Note the watches whose answer arrived since the last call (logged at -v with the
 * resourceVersion they start from; the watch gauges; ready once each has been open), and
 * start again a watch whose answer has not come within WATCH_OPEN_MS.
 */
void reload_watches_check(struct ctl *c);

/* --reload-on-delete: keep ce as a tombstone with Reloader's delete hash and roll what it selects.
 */
void reload_tombstone(struct ctl *c, struct cfg_ent *ce);
/* Free the tombstones once no rollout is pending. */
void reload_tombs_sweep(struct ctl *c);

/* --namespace-selector: LIST the selected Namespaces (0 when none set), then watch them. */
int reload_nsel_start(struct ctl *c, struct log_err *err);
int reload_nsel_watch(struct ctl *c, struct log_err *err);
/* Restart the Namespace watch when due. */
void reload_nsel_tick(struct ctl *c);
/* Whether ns is selected (always 1 without --namespace-selector). */
int reload_nsel_selected(const struct ctl *c, const char *ns);
void reload_nsel_free(struct ctl *c);

#endif
