/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_rollout: scheduling (coalescing, minimum interval, rate limit) and the rollouts: PATCH,
 * 409 retries, Events. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_act.h"
#include "reload/reload_decide.h"
#include "reload/reload_gate.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

/* ---- scheduling ---- */

/* Queue a rollout of we for object (type, name). */
void reload_schedule(struct ctl *c, struct wl_ent *we, enum reload_type type, const char *name)
{
	long long now = reload_now_ms(), due, hold;
	size_t i;
	struct trig *nt;

	we->trig_ms = now;
	for (i = 0; i < we->ntrig; i++)
		if (we->trig[i].type == type && strcmp(we->trig[i].name, name) == 0)
			return; /* already queued; the latest hash is read at rollout time */
	nt = realloc(we->trig, (we->ntrig + 1) * sizeof(*nt));
	if (!nt)
		return;
	we->trig = nt;
	nt[we->ntrig].type = type;
	nt[we->ntrig].name = strdup(name);
	if (!nt[we->ntrig].name)
		return;
	we->ntrig++;
	if (we->pending)
		return;
	we->pending = 1;
	we->first_ms = now;
	/*
	 * Leading edge: a workload we have not rolled within the coalescing window and the
	 * minimum interval rolls at once (after the settle time, which gathers the objects one
	 * apply writes together). Within them, changes wait for their end and go out as one
	 * more rollout, with the hashes current then.
	 */
	due = now + c->o->settle_ms;
	hold = c->o->window_ms > c->o->min_interval_ms ? c->o->window_ms : c->o->min_interval_ms;
	if (we->last_roll_ms && we->last_roll_ms + hold > due)
		due = we->last_roll_ms + hold;
	we->due_ms = due;
	we->pnext = c->act.pend;
	c->act.pend = we;
	if (!reload_ha_acting(c))
		log_debug("%s %s/%s: change queued; not leading", reload_kind_name(we->w.kind),
			  we->e.ns, we->e.name);
}

static void count_skip(struct ctl *c, enum reload_verdict v)
{
	switch (v) {
	case RELOAD_NO_IGNORED:
		METRIC_INC(c->m.skipped[SKIP_IGNORED]);
		break;
	case RELOAD_NO_EXCLUDED:
		METRIC_INC(c->m.skipped[SKIP_EXCLUDED]);
		break;
	case RELOAD_NO_NOT_USED:
		METRIC_INC(c->m.skipped[SKIP_NOT_USED]);
		break;
	default:
		break;
	}
}

/*
 * Act on reload_decide for one workload and one object: schedule the rollout, or count why not
 * (for a change only: a start or re-list counts nothing).
 */
static void consider(struct ctl *c, struct wl_ent *we, const struct cfg_ent *ce, int changed)
{
	enum reload_decision d;
	enum reload_verdict why = RELOAD_YES;

	if (c->o->webhook_url)
		return; /* --webhook-url: notify instead of rolling (reload_config_changed) */
	c->act.considered++;
	d = reload_decide(c, we, ce, changed, &why);
	if (d == RELOAD_DECIDE_ROLL) {
		reload_schedule(c, we, reload_cls_type(ce->e.cls), ce->e.name);
		return;
	}
	if (!changed)
		return;
	switch (d) {
	case RELOAD_DECIDE_NOT_SELECTED:
		METRIC_INC(c->m.not_selected);
		break;
	case RELOAD_DECIDE_SKIP:
		count_skip(c, why);
		break;
	case RELOAD_DECIDE_CURRENT:
		METRIC_INC(c->m.skipped[SKIP_CURRENT]);
		break;
	default:
		break;
	}
}

/* An object's data changed: every workload it selects is considered. */
void reload_config_changed(struct ctl *c, const struct cfg_ent *ce)
{
	struct reload_byname_rest rest;
	size_t i, n;

	if (c->o->webhook_url) {
		/* --enable-ha: the leader alone notifies */
		if (reload_nsel_selected(c, ce->e.ns) && reload_ha_acting(c))
			reload_notify_webhook(c, ce);
		return;
	}
	/*
	 * The workloads that name ce (or list regexes), not every workload of the namespace: a
	 * namespace's deletion (--reload-on-delete) is linear. What reload_decide would say of the
	 * others is counted as it would count them (reload_byname.c).
	 */
	n = reload_byname_query(c, ce, &rest);
	if (!reload_nsel_selected(c, ce->e.ns)) {
		METRIC_ADD(c->m.not_selected, n + rest.all);
		return;
	}
	for (i = 0; i < n; i++)
		consider(c, c->bn.cand[i], ce, 1);
	if (ce->ignore)
		METRIC_ADD(c->m.skipped[SKIP_IGNORED], rest.all);
	else
		METRIC_ADD(c->m.skipped[SKIP_NOT_USED], rest.unused);
}

/* Restart safety: roll we only for objects whose hash differs from what it records. */
static void reconcile_workload(struct ctl *c, struct wl_ent *we)
{
	size_t i;
	int t;

	for (i = 0; i < we->w.nrefs; i++) {
		struct cfg_ent *ce = (struct cfg_ent *)reload_tab_get(
		    &c->cfg, reload_type_cls(we->w.refs[i].type), we->w.ns, we->w.refs[i].name);

		if (ce && ce->hash[0])
			consider(c, we, ce, 0);
	}
	/* Named reload lists may select objects the pod spec does not use. */
	for (t = 0; t <= RELOAD_SPC; t++) {
		struct ent *e;

		if (!we->w.relist[0][t] && !we->w.relist[1][t])
			continue;
		for (i = 0; i < c->cfg.nb; i++) {
			for (e = c->cfg.b[i]; e; e = e->next) {
				if (e->cls != reload_type_cls((enum reload_type)t) ||
				    strcmp(e->ns, we->w.ns) != 0)
					continue;
				if (((struct cfg_ent *)e)->hash[0])
					consider(c, we, (struct cfg_ent *)e, 0);
			}
		}
	}
}

void reload_reconcile_all(struct ctl *c)
{
	size_t i;
	struct ent *e;

	log_debug("re-list: checking every workload against what it references");
	for (i = 0; i < c->wl.nb; i++)
		for (e = c->wl.b[i]; e; e = e->next)
			reconcile_workload(c, (struct wl_ent *)e);
}

/* ---- rollouts ---- */

static long long since_us(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)(t.tv_sec - t0->tv_sec) * 1000000 + (t.tv_nsec - t0->tv_nsec) / 1000;
}

static long long wall_now(void)
{
	return (long long)time(NULL);
}

/*
 * The Reloaded Event, in Reloader's wording (internal/pkg/handler/upgrade.go) naming the last
 * object the rollout was written for (c->act.ev_last); message (our log line) if there is none.
 */
static void post_event(struct ctl *c, const struct wl_ent *we, const char *message)
{
	const struct cfg_ent *last = c->act.ev_last;
	char msg[1024];

	if (last)
		snprintf(msg, sizeof(msg),
			 "Changes detected in '%s' of type '%s' in namespace '%s', Updated '%s' of "
			 "type '%s' in namespace '%s'",
			 last->e.name, reload_type_upper(reload_cls_type(last->e.cls)), last->e.ns,
			 we->e.name, reload_kind_name(we->w.kind), we->e.ns);
	reload_post_event(c, we, "Normal", "Reloaded", last ? msg : message);
	c->act.ev_last = NULL;
}

/* Re-read a workload after a 409. Returns 0, or -ENOENT when it is gone. */
static int reread(struct ctl *c, struct wl_ent *we)
{
	struct log_err err = {0};
	json_t *obj;
	int r;

	sb_reset(&c->url);
	kube_url(&c->url, kube_client_server(c->cl), reload_cls_res[we->e.cls], we->e.ns,
		 we->e.name, NULL);
	c->resp.max = OBJ_MAX;
	r = kube_request(c->cl, "GET", c->url.buf, NULL, NULL, &c->resp, &err);
	if (r == 404)
		return -ENOENT;
	if (r != 200)
		return r < 0 ? r : -EIO;
	obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
	if (!obj)
		return -EIO;
	reload_apply_workload(c, we->e.cls, "MODIFIED", obj);
	json_decref(obj);
	return 0;
}

/* Whether one of t[0..n-1] sets the env var o gives in container already. */
static int same_var(const struct reload_trigger *t, size_t n, const struct reload_object *o,
		    const char *container)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].type == o->type && t[i].container &&
		    strcmp(t[i].container, container) == 0 && reload_env_same(t[i].name, o->name))
			return 1;
	return 0;
}

/*
 * Roll we for its queued triggers (vals: room for each one's recorded value).
 * Returns 1 if patched, 0 if nothing to do, negative on failure. we may be
 * freed (-ENOENT).
 */
static int rollout_with(struct ctl *c, struct wl_ent *we, struct reload_trigger *t,
			struct cfg_ent **src, char (*vals)[RELOAD_HASH_HEX])
{
	struct log_err err = {0};
	size_t i, n;
	int attempt, r = 0;
	struct kube_query q = {.field_manager = "nodeprobe-reload"};
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
		n = 0;
		for (i = 0; i < we->ntrig; i++) {
			struct cfg_ent *ce = (struct cfg_ent *)reload_tab_get(
			    &c->cfg, reload_type_cls(we->trig[i].type), we->e.ns, we->trig[i].name);
			struct reload_object o;
			const char *container, *rec, *want;
			size_t shared;

			if (!ce || !ce->hash[0])
				continue;
			reload_decide_object(ce, &o);
			if (reload_should(&we->w, &o, c->o->auto_all, &container) != RELOAD_YES)
				continue;
			rec = reload_records(we)
				  ? reload_recorded(&we->w, &o, container, c->o->strategy)
				  : NULL;
			if (ce->deleted && c->o->strategy == RELOAD_ENV_VARS && !rec)
				continue; /* --reload-on-delete: no variable to remove */
			want = reload_env_value(c, &we->w, ce, container, vals[n], &shared);
			if (reload_hash_current(rec, want, want == ce->hash ? ce->alt : NULL)) {
				METRIC_INC(c->m.skipped[SKIP_CURRENT]);
				continue;
			}
			if (c->o->strategy == RELOAD_ENV_VARS && !container) {
				METRIC_INC(c->m.skipped[SKIP_NO_CONTAINER]);
				continue;
			}
			if (shared > 1 && same_var(t, n, &o, container))
				continue; /* one value for all that share the variable: written once
					   */
			reload_collide_warn(c, we, ce, container, shared);
			t[n].type = o.type;
			t[n].name = ce->e.name;
			t[n].hash = want;
			t[n].container = container;
			t[n].deleted = ce->deleted;
			src[n] = ce;
			n++;
		}
		if (n == 0)
			return 0;
		c->act.ev_last = src[n - 1]; /* named by the Reloaded Event */
		/* the write of each kind: reload_kinds.c (pause-period: reload_pause.c) */
		r = reload_write(c, we, t, n, attempt, wall_now(), &q, &err);
		if (r == 0 || r == -ENOENT || r == KUBE_EFENCED)
			return r;
		if (r == 409 && attempt + 1 < CONFLICT_RETRIES) {
			log_info("%s %s/%s: conflict, re-reading (attempt %d)",
				 reload_kind_name(we->w.kind), we->e.ns, we->e.name, attempt + 1);
			r = reread(c, we);
			if (r < 0)
				return r;
			continue;
		}
		break;
	}
	reload_metrics_rolled(&c->m, we->e.cls - CLS_DEP, we->e.ns, r != 200, since_us(&t0),
			      we->pending ? (reload_now_ms() - we->first_ms) * 1000 : -1);
	if (r != 200) {
		log_error("%s %s/%s: rollout failed: %s", reload_kind_name(we->w.kind), we->e.ns,
			  we->e.name,
			  r < 0	     ? err.msg
			  : r == 409 ? "conflict persisted"
				     : "HTTP error");
		if (r > 0)
			log_error("%s %s/%s: HTTP %d: %.300s", reload_kind_name(we->w.kind),
				  we->e.ns, we->e.name, r, c->resp.buf);
		reload_fail_event(c, we, r, &err);
		return r < 0 ? r : -EIO;
	}
	{
		/* The answer is the patched object: our record of it, without waiting for the
		 * watch. */
		json_t *obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
		char msg[1024];
		struct cfg_ent *last = src[n - 1];

		snprintf(msg, sizeof(msg), "rolled %s %s/%s for %s %s/%s hash %.8s%s (%s)",
			 reload_kind_name(we->w.kind), we->e.ns, we->e.name,
			 reload_type_name(reload_cls_type(last->e.cls)), last->e.ns, last->e.name,
			 last->hash, n > 1 ? " and more" : "",
			 c->o->strategy == RELOAD_ENV_VARS ? "env-vars" : "annotations");
		char wl[NAME_MAX_ * 2 + 32], tr[NAME_MAX_ * 2 + 32], hp[9];
		struct log_field f[3] = {{"workload", wl}, {"trigger", tr}, {"hash", hp}};

		snprintf(wl, sizeof(wl), "%s/%s/%s", reload_kind_name(we->w.kind), we->e.ns,
			 we->e.name);
		snprintf(tr, sizeof(tr), "%s/%s/%s", reload_type_name(reload_cls_type(last->e.cls)),
			 last->e.ns, last->e.name);
		snprintf(hp, sizeof(hp), "%.8s", last->hash);
		log_fields(LOG_LVL_INFO, f, 3, "%s", msg);
		if (c->o->events)
			post_event(c, we, msg + 7);
		reload_notify_alert(c, last->e.name,
				    reload_type_upper(reload_cls_type(last->e.cls)), we->e.ns,
				    we->e.name, reload_kind_name(we->w.kind));
		if (obj)
			reload_apply_workload(c, we->e.cls, "MODIFIED", obj);
		json_decref(obj);
	}
	return 1;
}

int reload_rollout(struct ctl *c, struct wl_ent *we)
{
	size_t n = we->ntrig ? we->ntrig : 1;
	struct reload_trigger *t = calloc(n, sizeof(*t));
	struct cfg_ent **src = calloc(n, sizeof(*src));
	char(*vals)[RELOAD_HASH_HEX] = calloc(n, sizeof(*vals));
	int r = t && src && vals ? rollout_with(c, we, t, src, vals) : -ENOMEM;

	free(t);
	free(src);
	free(vals);
	return r;
}

static int take_token(struct ctl *c, long long now)
{
	if (c->o->max_rate <= 0)
		return 1;
	c->act.tokens += (double)(now - c->act.tok_ms) * c->o->max_rate / 1000.0;
	if (c->act.tokens > c->o->burst)
		c->act.tokens = c->o->burst;
	c->act.tok_ms = now;
	if (c->act.tokens < 1.0)
		return 0;
	c->act.tokens -= 1.0;
	return 1;
}

/* Run every rollout that is due (all of them when force). */
void reload_process_due(struct ctl *c, int force)
{
	long long now = reload_now_ms();
	struct wl_ent *we, *nx;

	if (!reload_ha_acting(c))
		return; /* a standby keeps its pending changes for a takeover */
	for (we = c->act.pend; we; we = nx) {
		int cls, r;

		nx = we->pnext;
		if (!force && we->due_ms > now)
			continue;
		if (!take_token(c, now)) {
			if (force) {
				long long wait = (long long)(1000.0 / c->o->max_rate) + 1;
				struct timespec ts = {wait / 1000, (wait % 1000) * 1000000L};

				nanosleep(&ts, NULL);
				now = reload_now_ms();
				take_token(c, now);
			} else {
				we->due_ms = now + (long long)(1000.0 / c->o->max_rate) + 1;
				continue;
			}
		}
		cls = we->e.cls;
		r = reload_rollout(c, we);
		if (r == KUBE_EFENCED) {
			/* the Lease's renew deadline passed: it stays pending, for whoever leads */
			log_info("%s %s/%s: not rolled: the Lease is not held (renewal overdue)",
				 reload_kind_name(we->w.kind), we->e.ns, we->e.name);
			break;
		}
		if (r == -ENOENT) {
			/* deleted meanwhile */
			reload_tab_del(&c->wl, &we->e);
			reload_wl_free(c, we);
			METRIC_SET(c->m.objects[cls], c->m.objects[cls] - 1);
			nx = c->act.pend;
			continue;
		}
		if (r != 0)
			METRIC_INC(c->m.reloads[cls - CLS_DEP][r < 0]);
		if (r < 0 && !force && we->fails < ROLLOUT_RETRIES) {
			/* keep the triggers, try again later (the latest hash is read then) */
			we->due_ms = reload_now_ms() + (1000LL << we->fails);
			log_warn("%s %s/%s: retrying the rollout in %lld ms",
				 reload_kind_name(we->w.kind), we->e.ns, we->e.name,
				 1000LL << we->fails);
			we->fails++;
			nx = we->pnext;
			continue;
		}
		if (r < 0)
			c->act.failures++;
		we->fails = 0;
		we->last_roll_ms = r > 0 ? reload_now_ms() : we->last_roll_ms;
		reload_pend_remove(c, we);
		nx = c->act.pend; /* the list changed: start over (each entry is done once) */
	}
}

long long reload_next_wakeup(const struct ctl *c)
{
	long long t = reload_now_ms() + 500;
	const struct wl_ent *we;
	size_t i;

	for (we = reload_ha_acting(c) ? c->act.pend : NULL; we; we = we->pnext)
		if (we->due_ms < t)
			t = we->due_ms;
	if (reload_ha_next(c) < t)
		t = reload_ha_next(c);
	for (i = 0; i < c->in.nrs; i++)
		if (!c->in.rs[i].w && c->in.rs[i].restart_ms && c->in.rs[i].restart_ms < t)
			t = c->in.rs[i].restart_ms;
	return reload_ha_acting(c) ? reload_pause_next(c, t) : t; /* a standby resumes nothing */
}
