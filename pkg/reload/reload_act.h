/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_act.h: the act stage: rollouts scheduled and run (reload_rollout.c), written
 * (reload_write.c), Events (reload_events.c), alerts and webhooks (reload_notify.c). */
#ifndef NP_RELOAD_ACT_H
#define NP_RELOAD_ACT_H

#include "reload/reload_internal.h"

void reload_schedule(struct ctl *c, struct wl_ent *we, enum reload_type type, const char *name);

void reload_config_changed(struct ctl *c, const struct cfg_ent *ce);

void reload_reconcile_all(struct ctl *c);

int reload_rollout(struct ctl *c, struct wl_ent *we);

/*
 * Write a rollout of we for triggers t[0..n-1] (attempt: 0 first, then after
 * each re-read): apps/v1 kinds by PATCH (a Deployment with pause-period is
 * paused first), CronJobs by POSTing a Job, Jobs by DELETE and POST, Rollouts
 * by merge PATCH. Returns 200 when written (c->resp then holds the updated
 * workload, or is empty), 0 when nothing had to change, another HTTP status
 * (409: re-read and retry), or a negative code with err set (-ENOENT: gone).
 */
int reload_write(struct ctl *c, struct wl_ent *we, const struct reload_trigger *t, size_t n,
		 int attempt, long long now, const struct kube_query *q, struct log_err *err);

/*
 * POST a core/v1 Event on workload we: type "Normal"/"Warning", reason
 * ("Reloaded", "ReloadFail", "ReloadSkipped") and message. Logs a warning when
 * the API refuses it.
 */
void reload_post_event(struct ctl *c, const struct wl_ent *we, const char *type, const char *reason,
		       const char *message);
/*
 * Post Reloader's ReloadFail Event for a write that ended with r (an HTTP
 * status, the answer's Status in c->resp; or a negative code, err).
 */
void reload_fail_event(struct ctl *c, const struct wl_ent *we, int r, const struct log_err *err);
/*
 * Warn once when we uses what nodeprobe-reload does not support, and queue a
 * ReloadSkipped Event (posted by reload_events_flush: no request from inside a
 * LIST or watch callback).
 */
void reload_check_unsupported(struct ctl *c, struct wl_ent *we);
/*
 * Warn msg and queue it as a Warning Event with reason (a static string) on we,
 * posted by reload_events_flush.
 */
void reload_queue_event(struct ctl *c, const struct wl_ent *we, const char *reason,
			const char *msg);

/* Warn once per workload (and queue an Event) that shared > 1 objects share ce's env var. */
void reload_collide_warn(struct ctl *c, struct wl_ent *we, const struct cfg_ent *ce,
			 const char *container, size_t shared);
/* Post the queued Events (their workloads looked up again; gone ones dropped). */
void reload_events_flush(struct ctl *c);
/* Free the queue without posting. */
void reload_events_free(struct ctl *c);

/*
 * Create again every Job that was deleted for a rollout but whose create the API refused
 * (quota, admission, errors), once its retry time has come; a Job is never given up while we run.
 */
void reload_jobs_due(struct ctl *c);

void reload_process_due(struct ctl *c, int force);

long long reload_next_wakeup(const struct ctl *c);

#define RELOAD_NOTIFY_QUEUE_MAX 256 /* alerts/webhooks waiting; a full queue drops its oldest */
#define RELOAD_NOTIFY_BODY_MAX	(64 * 1024) /* bytes of a sink's answer read, the rest cut */
#define RELOAD_ALERT_MSG_MAX	(16 * 1024) /* an alert's text, ALERT_ADDITIONAL_INFO included */
#define RELOAD_NOTIFY_DRAIN_MS	30000	    /* once mode: the queue's drain at exit, at most */

/*
 * Start the thread that sends alerts and webhooks (only when ALERT_ON_RELOAD or --webhook-url
 * is set; c->act.nq stays NULL otherwise). Returns 0 or a negative code with err set.
 */
int reload_notify_start(struct ctl *c, struct log_err *err);
/*
 * Stop it: drain sends what is queued first (once mode; RELOAD_NOTIFY_DRAIN_MS at most), else the
 * POST in flight is abandoned. What was not sent is logged in one line.
 */
void reload_notify_stop(struct ctl *c, int drain);
/* Queue the alert for a successful rollout when ALERT_ON_RELOAD=true (errors are logged). */
void reload_notify_alert(struct ctl *c, const char *obj, const char *type, const char *ns,
			 const char *workload, const char *kind);
/* --webhook-url: queue POST {"webhook":"update successful"} for a changed object. */
void reload_notify_webhook(struct ctl *c, const struct cfg_ent *ce);

#endif
