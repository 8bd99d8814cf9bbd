/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_events: the core/v1 Events posted on workloads (Reloaded, ReloadFail, ReloadSkipped) and
 * the warning for what Reloader supports and nodeprobe-reload does not. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_act.h"
#include "reload/reload_gate.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

void reload_post_event(struct ctl *c, const struct wl_ent *we, const char *type, const char *reason,
		       const char *message)
{
	struct strbuf b = STRBUF_INIT(16 * 1024), n = STRBUF_INIT(1024);
	struct log_err err = {0};
	char ts[32], evname[64];
	struct timespec now;
	struct tm tm;
	int r;

	if (!c->o->events)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* client-go's recorder names an Event "<object>.<hex nanoseconds>" */
	snprintf(evname, sizeof(evname), ".%llx%09ld", (long long)now.tv_sec, now.tv_nsec);
	r = sb_add(&n, we->e.name);
	r = r ? r : sb_add(&n, evname);
	r = r ? r : sb_add(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":");
	r = r ? r : sb_add_json_str(&b, n.buf);
	r = r ? r : sb_add(&b, ",\"namespace\":");
	r = r ? r : sb_add_json_str(&b, we->e.ns);
	r = r ? r
	      : sb_addf(&b, "},\"involvedObject\":{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"name\":",
			reload_kinds[we->w.kind].api_version, reload_kind_name(we->w.kind));
	r = r ? r : sb_add_json_str(&b, we->e.name);
	r = r ? r : sb_add(&b, ",\"namespace\":");
	r = r ? r : sb_add_json_str(&b, we->e.ns);
	if (we->w.uid) { /* kubectl describe selects a workload's Events by it */
		r = r ? r : sb_add(&b, ",\"uid\":");
		r = r ? r : sb_add_json_str(&b, we->w.uid);
	}
	r = r ? r : sb_add(&b, "},\"reason\":");
	r = r ? r : sb_add_json_str(&b, reason);
	r = r ? r : sb_add(&b, ",\"message\":");
	r = r ? r : sb_add_json_str(&b, message);
	r = r ? r
	      : sb_addf(&b,
			",\"type\":\"%s\",\"source\":{\"component\":\"nodeprobe-reload\"},"
			"\"reportingComponent\":\"nodeprobe-reload\",\"firstTimestamp\":\"%s\","
			"\"lastTimestamp\":\"%s\",\"count\":1}",
			type, ts, ts);
	if (r < 0)
		goto out;
	sb_reset(&c->url);
	kube_url(&c->url, kube_client_server(c->cl), &kube_events, we->e.ns, NULL, NULL);
	c->resp.max = SMALL_MAX;
	r = kube_request(c->cl, "POST", c->url.buf, "application/json", b.buf, &c->resp, &err);
	if (r != 201 && r != 200)
		log_warn("event %s for %s %s/%s not recorded: %s", reason,
			 reload_kind_name(we->w.kind), we->e.ns, we->e.name,
			 r < 0 ? err.msg : "HTTP error");
out:
	sb_free(&n);
	sb_free(&b);
}

/*
 * Reloader's ReloadFail Event (internal/pkg/handler/upgrade.go, reloader.md §9.10): "Update for
 * '<workload>' of type '<Kind>' in namespace '<ns>' failed with error <err>", err being the API's
 * Status message (as client-go's error prints) or the transport error.
 */
void reload_fail_event(struct ctl *c, const struct wl_ent *we, int r, const struct log_err *err)
{
	char msg[1024], why[512];
	json_t *st = r > 0 ? json_loadb(c->resp.buf, c->resp.len, 0, NULL) : NULL;
	const char *m = json_string_value(json_object_get(st, "message"));

	if (r < 0)
		snprintf(why, sizeof(why), "%s", err->msg[0] ? err->msg : strerror(-r));
	else if (m)
		snprintf(why, sizeof(why), "%s", m);
	else
		snprintf(why, sizeof(why), "HTTP %d", r);
	json_decref(st);
	snprintf(msg, sizeof(msg),
		 "Update for '%s' of type '%s' in namespace '%s' failed with error %s", we->e.name,
		 reload_kind_name(we->w.kind), we->e.ns, why);
	reload_post_event(c, we, "Warning", "ReloadFail", msg);
}

/* A queued Event: the workload by key, and what to post. */
struct evq {
	struct evq *next;
	int cls;
	const char *reason; /* static */
	char *ns, *name, *message;
};

void reload_queue_event(struct ctl *c, const struct wl_ent *we, const char *reason, const char *msg)
{
	struct evq *q, **tail;

	log_warn("%s", msg);
	if (!c->o->events)
		return;
	q = calloc(1, sizeof(*q));
	if (!q)
		return;
	q->cls = we->e.cls;
	q->reason = reason;
	q->ns = strdup(we->e.ns);
	q->name = strdup(we->e.name);
	q->message = strdup(msg);
	if (!q->ns || !q->name || !q->message) {
		free(q->ns);
		free(q->name);
		free(q->message);
		free(q);
		return;
	}
	for (tail = &c->act.evq; *tail; tail = &(*tail)->next)
		;
	*tail = q;
}

void reload_check_unsupported(struct ctl *c, struct wl_ent *we)
{
	char msg[1024];

	if (!we->w.spc || we->spc_warned || c->o->csi)
		return;
	we->spc_warned = 1;
	/*
	 * Reloader rolls workloads when a SecretProviderClass they mount through the Secrets
	 * Store CSI driver changes only with --enable-csi-integration (reload_csi.c); without
	 * it, never silently: a warning and an Event.
	 */
	snprintf(msg, sizeof(msg),
		 "Changes in SecretProviderClass '%.200s' will not reload '%.200s' of type '%s' in "
		 "namespace '%.200s': --enable-csi-integration is off",
		 we->w.spc, we->e.name, reload_kind_name(we->w.kind), we->e.ns);
	reload_queue_event(c, we, "ReloadSkipped", msg);
}

void reload_events_flush(struct ctl *c)
{
	while (c->act.evq) {
		struct evq *q = c->act.evq;
		const struct wl_ent *we =
		    (const struct wl_ent *)reload_tab_get(&c->wl, q->cls, q->ns, q->name);

		c->act.evq = q->next;
		if (we)
			reload_post_event(c, we, "Warning", q->reason, q->message);
		free(q->ns);
		free(q->name);
		free(q->message);
		free(q);
	}
}

void reload_events_free(struct ctl *c)
{
	while (c->act.evq) {
		struct evq *q = c->act.evq;

		c->act.evq = q->next;
		free(q->ns);
		free(q->name);
		free(q->message);
		free(q);
	}
}

void reload_collide_warn(struct ctl *c, struct wl_ent *we, const struct cfg_ent *ce,
			 const char *container, size_t shared)
{
	struct strbuf var = STRBUF_INIT(1024);
	char msg[1024];

	if (shared < 2 || we->collide_warned)
		return;
	we->collide_warned = 1;
	if (reload_env_name(&var, ce->e.name, reload_cls_type(ce->e.cls)) < 0) {
		sb_free(&var);
		return;
	}
	snprintf(msg, sizeof(msg),
		 "%s %.200s/%.200s: %zu %ss it reloads on map to env var %s in container "
		 "'%.200s' ('%.200s' among them): it holds one hash of all of them (SHA-1 of "
		 "name=hash, sorted by name); rename them to tell them apart",
		 reload_kind_name(we->w.kind), we->e.ns, we->e.name, shared,
		 reload_type_name(reload_cls_type(ce->e.cls)), var.buf, container, ce->e.name);
	reload_queue_event(c, we, "ReloadEnvCollision", msg);
	sb_free(&var);
}
