/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_pause: deployment.reloader.stakater.com/pause-period and paused-at as Reloader keeps them,
 * with the resume timers rebuilt from paused-at when nodeprobe-reload starts. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "goconv/goconv.h"
#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_gate.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

/*
 * Reloader v1.4.21 internal/pkg/handler/pause_deployment.go and upgrade.go (read, not copied;
 * ../shared/reference/reloader.md §3.5, §9.4): when a reload is written to a Deployment whose
 * metadata carries the pause-period annotation (a Go duration), the Deployment is first paused
 * with {"metadata":{"annotations":{"<paused-at>":"<RFC3339 now>"}},"spec":{"paused":true}} unless
 * it is paused already; the reload PATCH then lands on the paused Deployment, and when the period
 * has passed since paused-at it is resumed with {"metadata":{"annotations":{"<paused-at>":null}},
 * "spec":{"paused":false}}: one rollout with everything that changed meanwhile. A Deployment
 * paused without paused-at (by someone else) is left alone. Reloader keeps its timers in memory
 * only; we rebuild them from paused-at whenever a Deployment is read, so a restart resumes on time.
 */

#define RESUME_RETRY_MS 10000 /* a failed resume PATCH is tried again after this */

static long long mono_ms(void)
{
	return reload_now_ms();
}

static void arm(struct ctl *c, struct wl_ent *we, long long at)
{
	if (!we->resume_ms)
		c->gate.npause++;
	we->resume_ms = at > 0 ? at : 1;
}

static void disarm(struct ctl *c, struct wl_ent *we)
{
	if (we->resume_ms)
		c->gate.npause--;
	we->resume_ms = 0;
}

/* RFC 3339 ("2026-11-25T08:00:00Z", fractions and offsets allowed) to Unix seconds; -1 if bad. */
static long long parse_rfc3339(const char *s)
{
	struct tm tm;
	const char *p;
	long long t;

	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -1;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	t = (long long)timegm(&tm);
	if ((*p == 'Z' || *p == 'z') && !p[1])
		return t;
	if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
		int h = (p[1] - '0') * 10 + (p[2] - '0'), m = (p[4] - '0') * 10 + (p[5] - '0');
		long long off = (long long)h * 3600 + m * 60;

		return *p == '+' ? t - off : t + off;
	}
	return -1;
}

/* The pause period in ms, or -1 when the annotation does not parse as a Go duration. */
static long long period_ms(const struct reload_workload *w)
{
	int64_t ns;

	if (!w->pause_period || goconv_parse_duration(w->pause_period, &ns) < 0)
		return -1;
	return ns <= 0 ? 0 : (long long)(ns / 1000000);
}

static int send_pause(struct ctl *c, struct wl_ent *we, const char *paused_at, struct log_err *err)
{
	struct kube_query q = {.field_manager = "nodeprobe-reload"};
	int r;

	sb_reset(&c->body);
	r = sb_add(&c->body, "{\"metadata\":{\"annotations\":{");
	r = r ? r : sb_add_json_str(&c->body, reload_ann_name(RELOAD_ANN_PAUSED_AT));
	r = r ? r : sb_addch(&c->body, ':');
	if (paused_at)
		r = r ? r : sb_add_json_str(&c->body, paused_at);
	else
		r = r ? r : sb_add(&c->body, "null");
	r = r ? r : sb_addf(&c->body, "}},\"spec\":{\"paused\":%s}}", paused_at ? "true" : "false");
	if (r < 0)
		return log_err_set(err, r, "out of memory");
	sb_reset(&c->url);
	kube_url(&c->url, kube_client_server(c->cl), reload_cls_res[we->e.cls], we->e.ns,
		 we->e.name, &q);
	c->resp.max = OBJ_MAX;
	return kube_request(c->cl, "PATCH", c->url.buf, "application/strategic-merge-patch+json",
			    c->body.buf, &c->resp, err);
}

/*
 * Resume we now (its period is over). apply: refresh the table entry from the answer; else (a
 * reload's triggers borrow from we->w) only paused and paused-at are updated.
 */
static void resume(struct ctl *c, struct wl_ent *we, int apply)
{
	struct log_err err = {0};
	int r;

	disarm(c, we);
	if (!we->w.paused || !we->w.paused_at || !*we->w.paused_at)
		return; /* resumed by someone else meanwhile */
	r = send_pause(c, we, NULL, &err);
	if (r == 200) {
		json_t *obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);

		log_info("Deployment %s/%s: resumed, its pause-period %s since %s is over",
			 we->e.ns, we->e.name,
			 we->w.pause_period ? we->w.pause_period : "(removed)", we->w.paused_at);
		if (obj && apply) {
			reload_apply_workload(c, we->e.cls, "MODIFIED", obj);
		} else {
			we->w.paused = 0;
			free(we->w.paused_at);
			we->w.paused_at = NULL;
		}
		json_decref(obj);
		return;
	}
	if (r == 404)
		return; /* deleted: the watch removes it */
	log_error("Deployment %s/%s: resuming after pause-period failed (%s); retrying in %d s",
		  we->e.ns, we->e.name, r < 0 ? err.msg : "HTTP error", RESUME_RETRY_MS / 1000);
	arm(c, we, mono_ms() + RESUME_RETRY_MS);
}

/* When a Deployment paused at paused-at is due (monotonic ms). */
static long long due_of(const struct wl_ent *we)
{
	long long at = parse_rfc3339(we->w.paused_at), per = period_ms(&we->w), left;

	if (at < 0 || per < 0)
		return mono_ms(); /* Reloader resumes at once when paused-at does not parse */
	left = per - ((long long)time(NULL) - at) * 1000;
	return mono_ms() + (left > 0 ? left : 0);
}

int reload_pause_before(struct ctl *c, struct wl_ent *we, struct log_err *err)
{
	char ts[32];
	time_t now;
	struct tm tm;
	long long per;
	int r;

	if (we->w.kind != RELOAD_DEPLOYMENT || !we->w.pause_period)
		return 0;
	per = period_ms(&we->w);
	if (per < 0) /* Reloader returns the error before writing the reload */
		return log_err_set(err, -EINVAL,
				   "annotation %s: '%.100s' is not a duration (e.g. 5m)",
				   reload_ann_name(RELOAD_ANN_PAUSE_PERIOD), we->w.pause_period);
	if (we->w.paused) {
		if (!we->w.paused_at || !*we->w.paused_at)
			return 0; /* paused by someone else: left alone */
		if (!we->resume_ms)
			arm(c, we, due_of(we));
		if (we->resume_ms <= mono_ms())
			resume(c, we, 0); /* the period is over: this reload rolls at once */
		return 0;
	}
	if (c->o->once) {
		log_warn(
		    "Deployment %s/%s: pause-period is not applied in once mode (nothing would "
		    "resume it)",
		    we->e.ns, we->e.name);
		return 0;
	}
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	r = send_pause(c, we, ts, err);
	if (r != 200)
		return r < 0 ? r
			     : log_err_set(err, KUBE_EHTTP,
					   "pausing for pause-period: HTTP %d: %.300s", r,
					   c->resp.buf);
	/* The reload's triggers borrow from we->w: update the two fields, not the whole entry. */
	free(we->w.paused_at);
	we->w.paused_at = strdup(ts);
	we->w.paused = 1;
	arm(c, we, mono_ms() + per);
	log_info("Deployment %s/%s: paused for its pause-period %s", we->e.ns, we->e.name,
		 we->w.pause_period);
	return 0;
}

void reload_pause_seen(struct ctl *c, struct wl_ent *we)
{
	if (we->w.kind != RELOAD_DEPLOYMENT)
		return;
	if (!we->w.paused || !we->w.paused_at || !*we->w.paused_at) {
		disarm(c, we);
		return;
	}
	if (we->resume_ms)
		return;
	if (period_ms(&we->w) < 0)
		log_warn("Deployment %s/%s: paused at %s with %s '%s': resuming now", we->e.ns,
			 we->e.name, we->w.paused_at, reload_ann_name(RELOAD_ANN_PAUSE_PERIOD),
			 we->w.pause_period ? we->w.pause_period : "(absent)");
	arm(c, we, due_of(we));
	log_info("Deployment %s/%s: paused at %s by pause-period; resuming in %lld s", we->e.ns,
		 we->e.name, we->w.paused_at, (we->resume_ms - mono_ms() + 999) / 1000);
}

void reload_pause_due(struct ctl *c)
{
	long long now = mono_ms();
	struct wl_ent **due = NULL;
	size_t i, n = 0, cap = 0;
	struct ent *e;

	if (!c->gate.npause || !reload_ha_acting(c))
		return; /* --enable-ha: only the leader resumes */
	for (i = 0; i < c->wl.nb; i++) {
		for (e = c->wl.b[i]; e; e = e->next) {
			struct wl_ent *we = (struct wl_ent *)e;

			if (!we->resume_ms || we->resume_ms > now)
				continue;
			if (n == cap) {
				struct wl_ent **nd;

				cap = cap ? cap * 2 : 16;
				nd = realloc(due, cap * sizeof(*nd));
				if (!nd)
					goto out;
				due = nd;
			}
			due[n++] = we;
		}
	}
	for (i = 0; i < n; i++)
		resume(c, due[i], 1);
out:
	free(due);
}

long long reload_pause_next(const struct ctl *c, long long t)
{
	size_t i;
	struct ent *e;

	if (!c->gate.npause)
		return t;
	for (i = 0; i < c->wl.nb; i++)
		for (e = c->wl.b[i]; e; e = e->next) {
			const struct wl_ent *we = (const struct wl_ent *)e;

			if (we->resume_ms && we->resume_ms < t)
				t = we->resume_ms;
		}
	return t;
}
