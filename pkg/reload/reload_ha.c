/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_ha: leader election on a coordination.k8s.io/v1 Lease with client-go's semantics; the
 * standby keeps its tables and pending changes, the leader alone rolls. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_decide.h"
#include "reload/reload_gate.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

/*
 * client-go's tools/leaderelection (leaderelection.go, resourcelock/leaselock.go), which
 * Reloader's internal/pkg/leadership uses with ReleaseOnCancel:
 * - tryAcquireOrRenew: GET the Lease (404: create it, holding it). A record that differs from
 *   the one observed last restarts the local clock (observedTime): the holder's timestamps are
 *   never compared with ours. Held by someone else and observedTime + leaseDurationSeconds
 *   still ahead: give up for now. Else PUT the Lease as read (its resourceVersion makes a
 *   concurrent writer's PUT fail with 409) with us as holder: acquireTime and leaseTransitions
 *   kept when renewing, acquireTime now and leaseTransitions + 1 when taking over.
 * - acquire: retried every RetryPeriod, jittered by up to 1.2 x RetryPeriod.
 * - renew: every RetryPeriod; failing for RenewDeadline loses the lease.
 * - release (ReleaseOnCancel): PUT holderIdentity "", leaseDurationSeconds 1,
 *   acquireTime = renewTime = now, leaseTransitions unchanged.
 */

#define JITTER_PERMILLE 1200 /* client-go's JitterFactor 1.2 */

static const struct kube_resource lease_res = {"/apis/coordination.k8s.io/v1", "leases", "Lease"};

struct reload_ha {
	char *ns, *name, *id;	  /* the Lease and who we are; owned */
	json_t *lease;		  /* the Lease as last read or written (PUT from it) */
	char *observed;		  /* its spec as compact JSON, to notice a change */
	char *holder;		  /* observed holderIdentity, "" for none; owned */
	long long observed_ms;	  /* when the record last changed (our clock) */
	long long duration_s;	  /* observed leaseDurationSeconds */
	long long transitions;	  /* observed leaseTransitions */
	int leader;		  /* we hold the lease */
	int verifying;		  /* a takeover re-reads pending workloads */
	long long next_ms;	  /* next try */
	long long renewed_ms;	  /* start of the last successful try */
	long long renew_start_ms; /* first failed renew of this round, 0: none */
	int lease_write;	  /* a request on the Lease itself: not fenced */
	int completing;		  /* a write completing one made (a Job's POST after its DELETE) */
	char reported[256];	  /* the leader last logged */
	char *owner;	   /* $NODEPROBE_RELOAD_LEASE_OWNER: our Deployment's name, or NULL */
	json_t *owner_ref; /* its ownerReferences entry once read (uid), or NULL */
	int owner_warned;  /* the Deployment cannot be read (403, 404, no uid): said once */
	int owner_tries;   /* reads that failed otherwise (said once; tried again) */
};

/* A MicroTime: RFC 3339 in UTC with microseconds, as metav1.MicroTime encodes. */
static void micro_now(char buf[40])
{
	struct timespec ts;
	struct tm tm;
	char s[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, 40, "%.20s.%06dZ", s, (int)(ts.tv_nsec / 1000) % 1000000);
}

/* A LeaseSpec in Go's field order (coordination/v1 types.go). */
static json_t *spec_new(const char *holder, long long duration_s, const char *acquire,
			const char *renew, long long transitions)
{
	json_t *s = json_object();

	if (!s)
		return NULL;
	if (json_object_set_new(s, "holderIdentity", json_string(holder)) < 0 ||
	    json_object_set_new(s, "leaseDurationSeconds", json_integer(duration_s)) < 0 ||
	    json_object_set_new(s, "acquireTime", json_string(acquire)) < 0 ||
	    json_object_set_new(s, "renewTime", json_string(renew)) < 0 ||
	    json_object_set_new(s, "leaseTransitions", json_integer(transitions)) < 0) {
		json_decref(s);
		return NULL;
	}
	return s;
}

/* One Lease request, without the client's retries: the election's own loop retries. */
static int lease_request(struct ctl *c, const char *method, const char *name, const char *body,
			 struct log_err *err)
{
	long old;
	int r;

	sb_reset(&c->url);
	if (kube_url(&c->url, kube_client_server(c->cl), &lease_res, c->gate.ha->ns, name, NULL) <
	    0)
		return -ENOMEM;
	c->resp.max = SMALL_MAX;
	/* bounded by the renew deadline, as client-go's renew context bounds each try */
	kube_client_set_retries(c->cl, 1, c->o->retry_base_ms);
	old = kube_client_set_timeout(c->cl, c->o->renew_deadline_ms);
	c->gate.ha->lease_write = 1;
	r = kube_request(c->cl, method, c->url.buf, body ? "application/json" : NULL, body,
			 &c->resp, err);
	c->gate.ha->lease_write = 0;
	kube_client_set_timeout(c->cl, old);
	kube_client_set_retries(c->cl, c->o->retries, c->o->retry_base_ms);
	return r;
}

/*
 * A CronJob (a Job is created, the CronJob never written) and a Rollout with
 * rollout-strategy restart (restartAt records no hash) show no record of a
 * rollout: a standby cannot see the leader roll them. It drops such a queued
 * change once it has seen the leader renew the Lease well after the change: the
 * leader, alive then, rolled it (within the window/minimum interval and the
 * settle time; the lease duration is the margin for its rate limit and retries).
 */
static void drop_handled(struct ctl *c, long long now)
{
	long long hold =
	    c->o->window_ms > c->o->min_interval_ms ? c->o->window_ms : c->o->min_interval_ms;
	struct wl_ent *we, *nx;

	for (we = c->act.pend; we; we = nx) {
		nx = we->pnext;
		if (reload_records(we) ||
		    now - we->trig_ms <= hold + c->o->settle_ms + c->o->lease_duration_ms)
			continue;
		log_debug("%s %s/%s: the leader was alive well after the change; not pending here",
			  reload_kind_name(we->w.kind), we->e.ns, we->e.name);
		reload_pend_remove(c, we);
	}
}

/*
 * Note the record of lease (a Lease object, owned by ha from now on), read or written just now:
 * a changed record is dated now, after its request returned (client-go's setObservedRecord), not
 * from before it: a slow GET must not age what it saw. Returns 1 when the record changed.
 */
static int observe(struct reload_ha *ha, json_t *lease)
{
	json_t *spec = json_object_get(lease, "spec");
	const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
	char *raw = json_dumps(spec ? spec : json_null(), JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(ha->lease);
	ha->lease = lease;
	if (raw && ha->observed && strcmp(raw, ha->observed) == 0) {
		free(raw);
		return 0;
	}
	free(ha->observed);
	ha->observed = raw;
	ha->observed_ms = reload_now_ms();
	free(ha->holder);
	ha->holder = strdup(holder ? holder : "");
	ha->duration_s = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
	ha->transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
	return 1;
}

static int is_holder(const struct reload_ha *ha)
{
	return ha->holder && strcmp(ha->holder, ha->id) == 0;
}

/*
 * Our Deployment as the Lease's owner, so that deleting it (helm uninstall, kubectl delete)
 * deletes the Lease too (the garbage collector; Helm removes the Role before the pods have
 * released it). The Deployment is named by $NODEPROBE_RELOAD_LEASE_OWNER (the chart sets it) and
 * must be in the Lease's namespace (an owner is never in another namespace); its uid is read once
 * with a GET. Returns the ownerReferences array to set (a new reference), or NULL: none.
 */
static json_t *owner_refs(struct ctl *c)
{
	struct reload_ha *ha = c->gate.ha;
	struct log_err err = {0};
	json_t *obj;
	const char *uid;
	long old;
	int r;

	if (!ha->owner)
		return NULL;
	if (!ha->owner_ref && !ha->owner_warned) {
		sb_reset(&c->url);
		kube_url(&c->url, kube_client_server(c->cl), &kube_deployments, ha->ns, ha->owner,
			 NULL);
		c->resp.max = OBJ_MAX;
		/* one try within the renew deadline, as lease_request: it runs inside a renewal;
		 * a failed read is tried again at the next one */
		kube_client_set_retries(c->cl, 1, c->o->retry_base_ms);
		old = kube_client_set_timeout(c->cl, c->o->renew_deadline_ms / 2);
		r = kube_request(c->cl, "GET", c->url.buf, NULL, NULL, &c->resp, &err);
		kube_client_set_timeout(c->cl, old);
		kube_client_set_retries(c->cl, c->o->retries, c->o->retry_base_ms);
		obj = r == 200 ? json_loadb(c->resp.buf, c->resp.len, 0, NULL) : NULL;
		uid = json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
		if (uid && *uid)
			ha->owner_ref =
			    json_pack("{s:s,s:s,s:s,s:s}", "apiVersion", "apps/v1", "kind",
				      "Deployment", "name", ha->owner, "uid", uid);
		json_decref(obj);
		if (!ha->owner_ref) {
			/* given up only when it cannot succeed: forbidden, absent, or no uid */
			int final = r == 403 || r == 404 || r == 200;

			if (final || !ha->owner_tries++)
				log_warn("Lease %s/%s: its owner, Deployment %s/%s, cannot be read "
					 "(%s): %s",
					 ha->ns, ha->name, ha->ns, ha->owner,
					 r < 0	    ? err.msg
					 : r == 200 ? "no uid"
						    : "HTTP error",
					 final ? "the Lease is not deleted with it"
					       : "trying again at the next renewal");
			ha->owner_warned = final;
		}
	}
	return ha->owner_ref ? json_pack("[O]", ha->owner_ref) : NULL;
}

/* A Lease (created by an older version, or by hand) without an owner gets ours when we write it. */
static void adopt(struct ctl *c, json_t *lease)
{
	json_t *meta = json_object_get(lease, "metadata"), *refs;

	if (!json_is_object(meta) || json_array_size(json_object_get(meta, "ownerReferences")))
		return;
	refs = owner_refs(c);
	if (refs)
		json_object_set_new(meta, "ownerReferences", refs);
}

/* client-go's tryAcquireOrRenew. Returns 1 when we hold the lease afterwards, else 0. */
static int try_acquire_or_renew(struct ctl *c)
{
	struct reload_ha *ha = c->gate.ha;
	struct log_err err = {0};
	long long now = reload_now_ms(), lease_s = c->o->lease_duration_ms / 1000;
	json_t *obj = NULL, *spec;
	char ts[40], *body;
	const char *acquire;
	int r, changed;

	micro_now(ts);
	if (lease_s < 1)
		lease_s = 1;
	r = lease_request(c, "GET", ha->name, NULL, &err);
	if (r == 404) {
		json_t *refs = owner_refs(c);

		obj = json_object();
		spec = spec_new(ha->id, lease_s, ts, ts, 0);
		if (!obj || !spec || json_object_set_new(obj, "kind", json_string("Lease")) < 0 ||
		    json_object_set_new(obj, "apiVersion", json_string("coordination.k8s.io/v1")) <
			0 ||
		    json_object_set_new(
			obj, "metadata",
			refs ? json_pack("{s:s,s:s,s:o}", "name", ha->name, "namespace", ha->ns,
					 "ownerReferences", refs)
			     : json_pack("{s:s,s:s}", "name", ha->name, "namespace", ha->ns)) < 0 ||
		    json_object_set_new(obj, "spec", spec) < 0) {
			json_decref(obj);
			return 0;
		}
		body = json_dumps(obj, JSON_COMPACT);
		json_decref(obj);
		r = body ? lease_request(c, "POST", NULL, body, &err) : -ENOMEM;
		free(body);
		if (r != 201 && r != 200) {
			log_warn("creating Lease %s/%s: %s", ha->ns, ha->name,
				 r < 0 ? err.msg : "HTTP error (another instance was first?)");
			return 0;
		}
		obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
		if (!obj)
			return 0;
		observe(ha, obj);
		return 1;
	}
	if (r != 200) {
		log_warn("reading Lease %s/%s: %s%.200s", ha->ns, ha->name,
			 r < 0 ? err.msg : "HTTP error: ", r < 0 ? "" : c->resp.buf);
		return 0;
	}
	obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
	if (!json_is_object(obj)) {
		json_decref(obj);
		log_warn("reading Lease %s/%s: not a JSON object", ha->ns, ha->name);
		return 0;
	}
	changed = observe(ha, obj);
	if (changed && *ha->holder && !is_holder(ha))
		drop_handled(c, now); /* the leader renewed: alive */
	if (*ha->holder && !is_holder(ha) && ha->observed_ms + ha->duration_s * 1000 > now)
		return 0; /* held by another and not expired by our clock */
	acquire =
	    json_string_value(json_object_get(json_object_get(ha->lease, "spec"), "acquireTime"));
	spec = spec_new(ha->id, lease_s, is_holder(ha) && acquire ? acquire : ts, ts,
			is_holder(ha) ? ha->transitions : ha->transitions + 1);
	if (!spec || json_object_set_new(ha->lease, "spec", spec) < 0)
		return 0;
	adopt(c, ha->lease);
	body = json_dumps(ha->lease, JSON_COMPACT);
	r = body ? lease_request(c, "PUT", ha->name, body, &err) : -ENOMEM;
	free(body);
	if (r != 200) {
		if (r == 409)
			log_info("Lease %s/%s: another instance wrote it first (409)", ha->ns,
				 ha->name);
		else
			log_warn("updating Lease %s/%s: %s", ha->ns, ha->name,
				 r < 0 ? err.msg : "HTTP error");
		return 0; /* the record observed stays the one read */
	}
	obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
	if (!obj)
		return 0;
	observe(ha, obj);
	return 1;
}

/* A standby names the leader it sees, once per change (client-go's OnNewLeader). */
static void report_leader(struct reload_ha *ha)
{
	const char *h = ha->holder ? ha->holder : "";

	if (strcmp(h, ha->reported) == 0 || is_holder(ha))
		return;
	snprintf(ha->reported, sizeof(ha->reported), "%s", h);
	if (*h)
		log_info("leader is %s (Lease %s/%s); standing by", h, ha->ns, ha->name);
}

void reload_ha_workload_seen(struct ctl *c, struct wl_ent *we, const struct reload_workload *nw)
{
	struct reload_ha *ha = c->gate.ha;
	size_t i, n = 0;

	if (!ha || !we->pending || (ha->leader && !ha->verifying) ||
	    !reload_records_differ(&we->w, nw))
		return;
	/*
	 * The leader rolled this workload. env-vars records each object: what it carries now
	 * is no longer ours to roll. annotations records the last object only: every change
	 * seen before this one went out with it.
	 */
	if (c->o->strategy == RELOAD_ENV_VARS) {
		for (i = 0; i < we->ntrig; i++) {
			if (reload_decide_still_stale(c, nw, &we->trig[i]))
				we->trig[n++] = we->trig[i];
			else
				free(we->trig[i].name);
		}
		we->ntrig = n;
	}
	if (c->o->strategy != RELOAD_ENV_VARS || n == 0) {
		log_debug("%s %s/%s: rolled by the leader; not pending here",
			  reload_kind_name(we->w.kind), we->e.ns, we->e.name);
		reload_pend_remove(c, we);
	}
}

/*
 * We just became the leader: re-read every workload with pending changes (the old leader
 * may have rolled it a moment ago, its watch event still on the way), then roll what is
 * still stale at once.
 */
static void takeover(struct ctl *c)
{
	struct reload_ha *ha = c->gate.ha;
	struct wl_ent *we, *nx;
	size_t n = 0, left = 0;

	ha->verifying = 1;
	for (we = c->act.pend; we; we = nx) {
		struct log_err err = {0};
		json_t *obj;
		int r;

		nx = we->pnext;
		n++;
		sb_reset(&c->url);
		kube_url(&c->url, kube_client_server(c->cl), reload_cls_res[we->e.cls], we->e.ns,
			 we->e.name, NULL);
		c->resp.max = OBJ_MAX;
		r = kube_request(c->cl, "GET", c->url.buf, NULL, NULL, &c->resp, &err);
		if (r == 404) {
			reload_pend_remove(c, we);
			continue;
		}
		if (r != 200)
			continue; /* roll on what the watch says */
		obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
		if (obj)
			reload_apply_workload(c, we->e.cls, "MODIFIED", obj);
		json_decref(obj);
	}
	ha->verifying = 0;
	for (we = c->act.pend; we; we = we->pnext) {
		we->due_ms = reload_now_ms();
		left++;
	}
	log_info("leading: %zu workloads had changes pending, %zu still to roll", n, left);
}

static long long jittered(const struct ctl *c)
{
	long long p = c->o->retry_period_ms;

	return p + random() % (p * JITTER_PERMILLE / 1000 + 1);
}

static void tick(struct ctl *c);

void reload_ha_tick(struct ctl *c)
{
	tick(c);
	if (c->gate.ha)
		METRIC_SET(c->m.leader, c->gate.ha->leader ? 2 : 1);
}

static void tick(struct ctl *c)
{
	struct reload_ha *ha = c->gate.ha;
	long long now = reload_now_ms();

	if (!ha || now < ha->next_ms)
		return;
	if (!ha->leader) {
		if (try_acquire_or_renew(c)) {
			ha->leader = 1;
			ha->renewed_ms = now;
			ha->renew_start_ms = 0;
			ha->reported[0] = '\0';
			log_info("acquired Lease %s/%s as %s; leading", ha->ns, ha->name, ha->id);
			takeover(c);
			ha->next_ms = reload_now_ms() + c->o->retry_period_ms;
		} else {
			report_leader(ha);
			ha->next_ms = reload_now_ms() + jittered(c);
		}
		return;
	}
	if (!ha->renew_start_ms)
		ha->renew_start_ms = now;
	if (try_acquire_or_renew(c)) {
		ha->renewed_ms = now;
		ha->renew_start_ms = 0;
		ha->next_ms = reload_now_ms() + c->o->retry_period_ms;
		return;
	}
	if (reload_now_ms() - ha->renew_start_ms >= c->o->renew_deadline_ms || !is_holder(ha)) {
		ha->leader = 0;
		ha->renew_start_ms = 0;
		log_error("lost Lease %s/%s (not renewed within %ld ms); standing by", ha->ns,
			  ha->name, c->o->renew_deadline_ms);
		report_leader(ha);
		ha->next_ms = reload_now_ms() + jittered(c);
		return;
	}
	ha->next_ms = reload_now_ms() + c->o->retry_period_ms;
	if (ha->next_ms > ha->renew_start_ms + c->o->renew_deadline_ms)
		ha->next_ms = ha->renew_start_ms + c->o->renew_deadline_ms;
}

/*
 * The write fence (kube_client_set_gate). A standby takes over a lease duration after it saw our
 * last renewal, which it saw after that renewal's request started (renewed_ms): the Lease is
 * ours until renewed_ms + the lease duration, less FENCE_MARGIN_MS for clock rates and the
 * network (end_ms). A write may be sent while we lead and the renew deadline from renewed_ms has
 * not passed (a write completing one already made, until end_ms); and every write, its retries
 * and their waits, must end by end_ms: the gate bounds the attempt to what is left.
 */
#define FENCE_MARGIN_MS 500

static long long end_ms(const struct ctl *c)
{
	return c->gate.ha->renewed_ms + c->o->lease_duration_ms - FENCE_MARGIN_MS;
}

static long fence(void *ctx, const char *method, const char *url, long after_ms)
{
	struct ctl *c = ctx;
	const struct reload_ha *ha = c->gate.ha;
	long long at, send_by;

	if (!ha || ha->lease_write)
		return 0;
	at = reload_now_ms() + after_ms;
	send_by = ha->completing ? end_ms(c) : ha->renewed_ms + c->o->renew_deadline_ms;
	if (send_by > end_ms(c))
		send_by = end_ms(c);
	if (ha->leader && at < send_by)
		return (long)(end_ms(c) - at);
	METRIC_INC(c->m.fenced);
	log_warn("%s %s: not sent: the Lease is not held or its renewal is overdue%s", method, url,
		 after_ms ? " by the end of the retry wait" : "");
	return -1;
}

long long reload_ha_write_left(const struct ctl *c)
{
	if (!c->gate.ha)
		return -1;
	return c->gate.ha->leader ? end_ms(c) - reload_now_ms() : 0;
}

void reload_ha_completing(struct ctl *c, int on)
{
	if (c->gate.ha)
		c->gate.ha->completing = on;
}

int reload_ha_acting(const struct ctl *c)
{
	const struct reload_ha *ha = c->gate.ha;

	if (!ha)
		return 1;
	return ha->leader && !ha->verifying &&
	       reload_now_ms() - ha->renewed_ms < c->o->renew_deadline_ms;
}

long long reload_ha_next(const struct ctl *c)
{
	return c->gate.ha ? c->gate.ha->next_ms : INT64_MAX;
}

void reload_ha_release(struct ctl *c)
{
	struct reload_ha *ha = c->gate.ha;
	struct log_err err = {0};
	json_t *spec;
	char ts[40], *body;
	int r;

	if (!ha || !ha->leader || !ha->lease || !is_holder(ha))
		return;
	micro_now(ts);
	spec = spec_new("", 1, ts, ts, ha->transitions);
	if (!spec || json_object_set_new(ha->lease, "spec", spec) < 0)
		return;
	body = json_dumps(ha->lease, JSON_COMPACT);
	r = body ? lease_request(c, "PUT", ha->name, body, &err) : -ENOMEM;
	free(body);
	ha->leader = 0;
	METRIC_SET(c->m.leader, 1);
	if (r == 200)
		log_info("released Lease %s/%s", ha->ns, ha->name);
	else
		log_warn("releasing Lease %s/%s: %s", ha->ns, ha->name,
			 r < 0 ? err.msg : "HTTP error");
}

int reload_ha_new(struct ctl *c, struct log_err *err)
{
	struct reload_ha *ha = calloc(1, sizeof(*ha));
	struct strbuf f = STRBUF_INIT(256), path = STRBUF_INIT(4096);
	const char *ns = c->o->lease_namespace, *pod = getenv("POD_NAME"), *owner;
	char host[256] = "";

	if (!ha)
		return log_err_set(err, -ENOMEM, "out of memory");
	c->gate.ha = ha;
	if (c->o->once)
		return log_err_set(err, -EINVAL, "--enable-ha needs --mode watch");
	/* The Lease stores whole seconds: a follower judges expiry by them (Reloader PR #1206). */
	if (c->o->lease_duration_ms % 1000 || c->o->lease_duration_ms < 1000 ||
	    c->o->lease_duration_ms / 1000 > INT32_MAX)
		return log_err_set(
		    err, -EINVAL,
		    "--leader-elect-lease-duration must be whole seconds, at least 1s "
		    "(the Lease stores seconds)");
	/* client-go's NewLeaderElector checks (leaderelection.go) */
	if (c->o->lease_duration_ms <= c->o->renew_deadline_ms ||
	    c->o->renew_deadline_ms <= c->o->retry_period_ms * 12 / 10)
		return log_err_set(err, -EINVAL,
				   "--leader-elect-lease-duration must exceed "
				   "--leader-elect-renew-deadline, which must exceed 1.2 x "
				   "--leader-elect-retry-period");
	if (!ns || !*ns)
		ns = getenv("POD_NAMESPACE");
	if ((!ns || !*ns) && c->o->sa_dir && sb_add(&path, c->o->sa_dir) == 0 &&
	    sb_add(&path, "/namespace") == 0 && sb_read_file(&f, path.buf) >= 0) {
		sb_rtrim(&f);
		ns = f.buf;
	}
	if (!ns || !*ns) {
		sb_free(&f);
		sb_free(&path);
		return log_err_set(
		    err, KUBE_ECONFIG,
		    "--enable-ha: the Lease's namespace is unknown: set POD_NAMESPACE "
		    "(downward API metadata.namespace) or "
		    "--leader-elect-resource-namespace");
	}
	ha->ns = strdup(ns);
	sb_free(&f);
	sb_free(&path);
	/* Reloader's identity is POD_NAME; client-go's components use hostname_<uuid>. */
	if (pod && *pod) {
		ha->id = strdup(pod);
	} else {
		char id[320];

		gethostname(host, sizeof(host) - 1);
		snprintf(id, sizeof(id), "%s_%08lx%08lx", host[0] ? host : "nodeprobe-reload",
			 (unsigned long)random() & 0xffffffffUL,
			 (unsigned long)random() & 0xffffffffUL);
		ha->id = strdup(id);
	}
	ha->name = strdup(c->o->lease_name ? c->o->lease_name : "stakater-reloader-lock");
	owner = getenv("NODEPROBE_RELOAD_LEASE_OWNER");
	if (owner && *owner && !(ha->owner = strdup(owner)))
		return log_err_set(err, -ENOMEM, "out of memory");
	if (!ha->ns || !ha->id || !ha->name)
		return log_err_set(err, -ENOMEM, "out of memory");
	kube_client_set_gate(c->cl, fence, c);
	log_info("HA: Lease %s/%s, identity %s", ha->ns, ha->name, ha->id);
	return 0;
}

void reload_ha_free(struct ctl *c)
{
	struct reload_ha *ha = c->gate.ha;

	if (!ha)
		return;
	if (c->cl)
		kube_client_set_gate(c->cl, NULL, NULL);
	json_decref(ha->lease);
	json_decref(ha->owner_ref);
	free(ha->owner);
	free(ha->observed);
	free(ha->holder);
	free(ha->ns);
	free(ha->name);
	free(ha->id);
	free(ha);
	c->gate.ha = NULL;
}
