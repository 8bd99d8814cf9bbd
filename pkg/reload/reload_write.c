/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_write: one rollout written, in the shape the kinds table (reload_kinds.c) gives the kind:
 * apps/v1 by strategic merge PATCH (the env vars of deleted objects removed first by JSON patch),
 * CronJobs by a Job from the jobTemplate, Jobs deleted and created again, Argo Rollouts by
 * restartAt or the template. Act stage: consults the gates (leadership, pause), never input's
 * streams; reads back through reload_apply_workload. */
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

#define JOB_CREATE_RETRIES 5 /* POST after DELETE answered 409 AlreadyExists: 0.1 s, 0.2 s, ... */
#define JOB_RECREATE_MS	   10000 /* a deleted Job whose create failed is tried again after this */

/* ---- requests ---- */

static int get_object(struct ctl *c, const struct kube_resource *res, const char *ns,
		      const char *name, json_t **out, struct log_err *err)
{
	int r;

	*out = NULL;
	sb_reset(&c->url);
	kube_url(&c->url, kube_client_server(c->cl), res, ns, name, NULL);
	c->resp.max = OBJ_MAX;
	r = kube_request(c->cl, "GET", c->url.buf, NULL, NULL, &c->resp, err);
	if (r == 404)
		return -ENOENT;
	if (r != 200)
		return r < 0 ? r : log_err_set(err, -EIO, "GET %s: HTTP %d", c->url.buf, r);
	*out = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
	if (!*out)
		return log_err_set(err, -EIO, "GET %s: not JSON", c->url.buf);
	return 0;
}

/*
 * Send body (a JSON document) with method to res/ns[/name] and query q (the field manager;
 * NULL for DELETE); the answer is in c->resp.
 */
static int send_json(struct ctl *c, const char *method, const struct kube_resource *res,
		     const char *ns, const char *name, const char *ctype, const char *body,
		     const struct kube_query *q, struct log_err *err)
{
	sb_reset(&c->url);
	kube_url(&c->url, kube_client_server(c->cl), res, ns, name, q);
	c->resp.max = OBJ_MAX;
	return kube_request(c->cl, method, c->url.buf, ctype, body, &c->resp, err);
}

static int dump_to(struct strbuf *sb, json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	int r;

	if (!s)
		return -ENOMEM;
	sb_reset(sb);
	r = sb_add(sb, s);
	free(s);
	return r;
}

/* A copy of object m with its keys sorted (Go encodes map[string]string so). */
static json_t *sorted_copy(json_t *m)
{
	json_t *out = json_object();
	const char **keys;
	const char *k;
	json_t *v;
	size_t n = json_object_size(m), i = 0, a, b;

	keys = calloc(n ? n : 1, sizeof(*keys));
	if (!out || !keys) {
		json_decref(out);
		free(keys);
		return NULL;
	}
	json_object_foreach(m, k, v) keys[i++] = k;
	for (a = 1; a < n; a++)
		for (b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
			const char *x = keys[b];

			keys[b] = keys[b - 1];
			keys[b - 1] = x;
		}
	for (i = 0; i < n; i++)
		json_object_set(out, keys[i], json_object_get(m, keys[i]));
	free(keys);
	return out;
}

/* Does pod template got carry every STAKATER_* value and the last-reloaded-from that sent has? */
static int marks_match(json_t *sent, json_t *got)
{
	const char *lr = json_string_value(
	    json_object_get(json_object_get(json_object_get(sent, "metadata"), "annotations"),
			    RELOAD_LAST_RELOADED_FROM));
	json_t *sc, *e;
	size_t i, j;
	int marks = 0;

	if (lr) {
		const char *glr = json_string_value(json_object_get(
		    json_object_get(json_object_get(got, "metadata"), "annotations"),
		    RELOAD_LAST_RELOADED_FROM));

		if (!glr || strcmp(lr, glr) != 0)
			return 0;
		marks++;
	}
	json_array_foreach(json_object_get(json_object_get(sent, "spec"), "containers"), i, sc)
	{
		const char *cn = json_string_value(json_object_get(sc, "name"));
		json_t *gc =
		    cn ? reload_template_container(
			     json_object_get(json_object_get(got, "spec"), "containers"), cn)
		       : NULL;

		json_array_foreach(json_object_get(sc, "env"), j, e)
		{
			const char *n = json_string_value(json_object_get(e, "name"));
			const char *v = json_string_value(json_object_get(e, "value"));
			json_t *ge;
			size_t k;
			int found = 0;

			if (!n || !v || strncmp(n, "STAKATER_", 9) != 0)
				continue;
			json_array_foreach(json_object_get(gc, "env"), k, ge)
			{
				const char *gn = json_string_value(json_object_get(ge, "name"));
				const char *gv = json_string_value(json_object_get(ge, "value"));

				if (gn && gv && strcmp(gn, n) == 0 && strcmp(gv, v) == 0)
					found = 1;
			}
			if (!found)
				return 0;
			marks++;
		}
	}
	return marks > 0;
}

/*
 * After a Job create whose answer was lost (connection broken, 5xx): was it created? One LIST of
 * the namespace's Jobs (bounded) for a manual Job of this CronJob whose pod template carries what
 * we set (the CronJob's own Jobs never do). Returns 1 with *name set (owned), or 0.
 */
static int cronjob_job_created(struct ctl *c, struct wl_ent *we, const char *uid, json_t *tmpl,
			       char **name)
{
	struct log_err err = {0};
	json_t *list, *item;
	size_t i;
	int r;

	*name = NULL;
	sb_reset(&c->url);
	kube_url(&c->url, kube_client_server(c->cl), &reload_res_jobs, we->e.ns, NULL, NULL);
	c->resp.max = OBJ_MAX;
	r = kube_request(c->cl, "GET", c->url.buf, NULL, NULL, &c->resp, &err);
	list = r == 200 ? json_loadb(c->resp.buf, c->resp.len, 0, NULL) : NULL;
	sb_reset(&c->resp);
	json_array_foreach(json_object_get(list, "items"), i, item)
	{
		json_t *md = json_object_get(item, "metadata"), *o;
		const char *inst = json_string_value(json_object_get(
		    json_object_get(md, "annotations"), "cronjob.kubernetes.io/instantiate"));
		size_t k;
		int owned = 0;

		json_array_foreach(json_object_get(md, "ownerReferences"), k, o)
		{
			const char *ou = json_string_value(json_object_get(o, "uid"));

			owned |= ou && uid && strcmp(ou, uid) == 0;
		}
		if (!owned || !inst || strcmp(inst, "manual") != 0 ||
		    !marks_match(tmpl, json_object_get(json_object_get(item, "spec"), "template")))
			continue;
		*name = strdup(json_string_value(json_object_get(md, "name")) ?: "?");
		break;
	}
	json_decref(list);
	return *name != NULL;
}

/*
 * CronJob: POST a Job made from the mutated jobTemplate (CreateJobFromCronjob): generateName
 * "<cronjob>-", the template's labels, annotations "cronjob.kubernetes.io/instantiate": "manual"
 * overlaid by the template's, one controller ownerReference. The CronJob is never written.
 */
static int cronjob_rollout(struct ctl *c, struct wl_ent *we, const struct reload_trigger *t,
			   size_t n, long long now, const struct kube_query *q, struct log_err *err)
{
	json_t *cj = NULL, *jt, *spec = NULL, *job = NULL, *md, *anns, *tanns, *v, *labels;
	const char *k, *uid;
	int r;

	r = get_object(c, &reload_res_cronjobs, we->e.ns, we->e.name, &cj, err);
	if (r < 0)
		return r;
	jt = json_object_get(json_object_get(cj, "spec"), "jobTemplate");
	spec = json_deep_copy(json_object_get(jt, "spec"));
	uid = json_string_value(json_object_get(json_object_get(cj, "metadata"), "uid"));
	if (!spec) {
		r = log_err_set(err, -EINVAL, "CronJob %s/%s has no spec.jobTemplate.spec",
				we->e.ns, we->e.name);
		goto out;
	}
	r = reload_template_apply(json_object_get(spec, "template"), c->o->strategy, we->e.ns, t, n,
				  now);
	if (r <= 0) /* env-vars delete of a variable the template never had: nothing */
		goto out;
	anns = json_object();
	tanns = json_object_get(json_object_get(jt, "metadata"), "annotations");
	if (!anns) {
		r = -ENOMEM;
		goto out;
	}
	json_object_set_new(anns, "cronjob.kubernetes.io/instantiate", json_string("manual"));
	json_object_foreach(tanns, k, v) json_object_set(anns, k, v);
	md = json_object();
	job = json_object();
	if (!md || !job) {
		json_decref(md);
		json_decref(anns);
		r = -ENOMEM;
		goto out;
	}
	json_object_set_new(job, "kind", json_string("Job"));
	json_object_set_new(job, "apiVersion", json_string("batch/v1"));
	json_object_set_new(job, "metadata", md);
	{
		struct strbuf gn = STRBUF_INIT(1024);

		sb_add(&gn, we->e.name);
		sb_addch(&gn, '-');
		json_object_set_new(md, "generateName", json_string(gn.buf));
		sb_free(&gn);
	}
	json_object_set_new(md, "namespace", json_string(we->e.ns));
	labels = json_object_get(json_object_get(jt, "metadata"), "labels");
	if (json_object_size(labels))
		json_object_set_new(md, "labels", sorted_copy(labels));
	json_object_set_new(md, "annotations", sorted_copy(anns));
	json_decref(anns);
	json_object_set_new(md, "ownerReferences",
			    json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion", "batch/v1",
				      "kind", "CronJob", "name", we->e.name, "uid", uid ? uid : "",
				      "controller", 1, "blockOwnerDeletion", 1));
	json_object_set(job, "spec", spec);
	r = dump_to(&c->body, job);
	if (r < 0)
		goto out;
	r = send_json(c, "POST", &reload_res_jobs, we->e.ns, NULL, "application/json", c->body.buf,
		      q, err);
	if (r == 201 || r == 200) {
		json_t *created = json_loadb(c->resp.buf, c->resp.len, 0, NULL);

		log_info(
		    "CronJob %s/%s: created Job %s/%s", we->e.ns, we->e.name, we->e.ns,
		    json_string_value(json_object_get(json_object_get(created, "metadata"), "name"))
			?: "?");
		json_decref(created);
		sb_reset(&c->resp); /* the answer is a Job, not this CronJob */
		r = 200;
	} else if (r == KUBE_ECONN || r >= 500) {
		/* the server may have created it: a retry must not run the Job twice */
		char *name = NULL;

		if (cronjob_job_created(c, we, uid, json_object_get(spec, "template"), &name)) {
			log_info("CronJob %s/%s: created Job %s/%s (its answer was lost)", we->e.ns,
				 we->e.name, we->e.ns, name);
			r = 200;
		}
		free(name);
	}
out:
	json_decref(job);
	json_decref(spec);
	json_decref(cj);
	return r;
}

/* POST the Job in c->body; a 409 AlreadyExists (the old Job not gone yet) is tried again. */
static int job_post(struct ctl *c, struct wl_ent *we, const struct kube_query *q,
		    struct log_err *err)
{
	int r, attempt;

	for (attempt = 0;; attempt++) {
		r = send_json(c, "POST", &reload_res_jobs, we->e.ns, NULL, "application/json",
			      c->body.buf, q, err);
		if (r != 409 || attempt + 1 >= JOB_CREATE_RETRIES)
			return r;
		{
			struct timespec ts = {0, (100L << attempt) * 1000000L};

			nanosleep(&ts, NULL);
		}
	}
}

/* Keep job (taken) to create again later: we deleted its predecessor. */
static void job_keep(struct ctl *c, struct wl_ent *we, json_t *job)
{
	if (we->recreate)
		json_decref(we->recreate);
	else
		c->act.nrecreate++;
	we->recreate = job;
	we->recreate_ms = reload_now_ms() + JOB_RECREATE_MS;
}

/* After a 409 on a later create: is a live Job of that name there (someone created it)? */
static int job_taken(struct ctl *c, struct wl_ent *we)
{
	struct log_err err = {0};
	json_t *cur = NULL;
	int taken;

	if (get_object(c, &reload_res_jobs, we->e.ns, we->e.name, &cur, &err) < 0)
		return 0;
	taken = !json_object_get(json_object_get(cur, "metadata"), "deletionTimestamp");
	json_decref(cur);
	return taken;
}

/*
 * After a DELETE whose answer was lost (connection broken, 5xx): is the Job of uid gone or
 * going? 1 when the GET answers 404 or shows it with a deletionTimestamp.
 */
static int job_deleted(struct ctl *c, struct wl_ent *we, const char *uid)
{
	struct log_err err = {0};
	json_t *cur = NULL, *md;
	const char *u;
	int r = get_object(c, &reload_res_jobs, we->e.ns, we->e.name, &cur, &err);

	if (r == -ENOENT)
		return 1;
	md = json_object_get(cur, "metadata");
	u = json_string_value(json_object_get(md, "uid"));
	r = r == 0 && u && uid && strcmp(u, uid) == 0 && json_object_get(md, "deletionTimestamp");
	json_decref(cur);
	return r;
}

/*
 * Job: DELETE it (propagationPolicy Background) and POST the mutated copy without
 * resourceVersion, uid, creationTimestamp, status, spec.selector and the controller-uid /
 * job-name pod labels (ReCreateJobFromjob). Unlike Reloader, the DELETE is conditional on the uid
 * we read, managedFields are left out, and a copy whose create failed (409 AlreadyExists while
 * the old Job goes, a quota, an admission webhook, server errors) is kept and created again
 * later (reload_jobs_due) instead of losing the Job.
 */
#define JOB_FENCE_MIN_MS 1000 /* of the Lease left for a Job's DELETE and POST (--enable-ha) */

static int job_rollout(struct ctl *c, struct wl_ent *we, const struct reload_trigger *t, size_t n,
		       long long now, const struct kube_query *q, struct log_err *err)
{
	static const char *const pod_labels[] = {"controller-uid",
						 "batch.kubernetes.io/controller-uid", "job-name",
						 "batch.kubernetes.io/job-name"};
	json_t *job = NULL, *md, *spec, *tl;
	struct strbuf del = STRBUF_INIT(4096);
	const char *uid;
	char *olduid = NULL;
	size_t i;
	long long left;
	long old;
	int r, again = we->recreate != NULL, deleting = 0;

	if (again) { /* deleted already: create the kept copy, with the latest triggers */
		job = we->recreate;
		we->recreate = NULL;
		c->act.nrecreate--;
		r = reload_template_apply(json_object_get(json_object_get(job, "spec"), "template"),
					  c->o->strategy, we->e.ns, t, n, now);
		r = r < 0 ? r : dump_to(&c->body, job);
		if (r < 0) {
			job_keep(c, we, job);
			job = NULL;
			goto out;
		}
		goto create;
	}
	r = get_object(c, &reload_res_jobs, we->e.ns, we->e.name, &job, err);
	if (r < 0)
		goto out;
	md = json_object_get(job, "metadata");
	spec = json_object_get(job, "spec");
	r = reload_template_apply(json_object_get(spec, "template"), c->o->strategy, we->e.ns, t, n,
				  now);
	if (r <= 0)
		goto out;
	uid = json_string_value(json_object_get(md, "uid"));
	r = sb_add(&del, "{\"propagationPolicy\":\"Background\"");
	if (uid) {
		r = r ? r : sb_add(&del, ",\"preconditions\":{\"uid\":");
		r = r ? r : sb_add_json_str(&del, uid);
		r = r ? r : sb_addch(&del, '}');
	}
	r = r ? r : sb_addch(&del, '}');
	if (r < 0)
		goto out;
	olduid = uid ? strdup(uid) : NULL; /* uid goes with the metadata below */
	json_object_del(md, "resourceVersion");
	json_object_del(md, "uid");
	json_object_del(md, "creationTimestamp");
	json_object_del(md, "managedFields");
	json_object_del(job, "status");
	/*
	 * A manualSelector Job keeps the selector and labels its owner chose (Reloader strips them
	 * too, and the POST then fails validation).
	 */
	if (!json_is_true(json_object_get(spec, "manualSelector"))) {
		json_object_del(spec, "selector");
		tl = json_object_get(json_object_get(json_object_get(spec, "template"), "metadata"),
				     "labels");
		for (i = 0; i < sizeof(pod_labels) / sizeof(pod_labels[0]); i++)
			json_object_del(tl, pod_labels[i]);
		if (tl && !json_object_size(tl)) /* Go leaves an emptied map out (omitempty) */
			json_object_del(
			    json_object_get(json_object_get(spec, "template"), "metadata"),
			    "labels");
	}
	r = dump_to(&c->body, job);
	if (r < 0)
		goto out;
	/*
	 * The DELETE and its POST both end while the Lease is ours (--enable-ha): with less than
	 * JOB_FENCE_MIN_MS left the Job is not touched (it stays pending, for whoever leads); the
	 * DELETE gets half of what is left, the POST completing it the rest, sent even past the
	 * renew deadline (reload_ha_completing). Else a DELETE answered late left its copy in our
	 * memory only, and the next leader found no Job to roll.
	 */
	left = reload_ha_write_left(c);
	if (left >= 0 && left < JOB_FENCE_MIN_MS) {
		r = log_err_set(err, KUBE_EFENCED,
				"Job %s/%s: not deleted: %lld ms of the Lease left for its DELETE "
				"and POST, %d needed",
				we->e.ns, we->e.name, left, JOB_FENCE_MIN_MS);
		goto out;
	}
	old = left >= 0 ? kube_client_set_timeout(c->cl, (long)(left / 2)) : 0;
	r = send_json(c, "DELETE", &reload_res_jobs, we->e.ns, we->e.name, "application/json",
		      del.buf, NULL, err);
	if (left >= 0)
		kube_client_set_timeout(c->cl, old);
	deleting = 1;
	if (r == 404) {
		r = -ENOENT;
		goto out;
	}
	if ((r == KUBE_ECONN || r >= 500) && job_deleted(c, we, olduid))
		r = 200; /* its answer was lost, the Job is gone: create it again */
	if (r != 200 && r != 202)
		goto out; /* 409: another Job of that name now; the caller re-reads */
create:
	reload_ha_completing(c, deleting);
	r = job_post(c, we, q, err);
	reload_ha_completing(c, 0);
	if (r == 201 || r == 200) {
		if (again)
			log_info("Job %s/%s: created again", we->e.ns, we->e.name);
		r = 200;
	} else if (r == 409 && again && job_taken(c, we)) {
		log_warn("Job %s/%s: created again by someone else meanwhile; ours dropped",
			 we->e.ns, we->e.name);
		r = -EEXIST;
	} else {
		/* not its definition: a pod template may hold literal credentials */
		log_error("Job %s/%s was deleted and could not be created again: %s%s", we->e.ns,
			  we->e.name, r < 0 ? err->msg : "HTTP error",
			  c->o->once ? "" : "; trying again");
		job_keep(c, we, job);
		job = NULL;
		if (r == 409 || r == 404)
			r = -EEXIST; /* never "re-read" (404: gone) a Job we still have to create */
	}
out:
	free(olduid);
	sb_free(&del);
	json_decref(job);
	return r;
}

void reload_jobs_due(struct ctl *c)
{
	struct kube_query q = {.field_manager = "nodeprobe-reload"};
	long long now = reload_now_ms();
	size_t i;
	struct ent *e;

	if (!c->act.nrecreate || !reload_ha_acting(c))
		return; /* a standby creates nothing: the copies wait for us to lead again */
	for (i = 0; i < c->wl.nb; i++) {
		for (e = c->wl.b[i]; e; e = e->next) {
			struct wl_ent *we = (struct wl_ent *)e;
			struct log_err err = {0};
			json_t *obj;

			/* a pending rollout creates it itself, with its triggers */
			if (!we->recreate || we->pending || we->recreate_ms > now)
				continue;
			if (job_rollout(c, we, NULL, 0, (long long)time(NULL), &q, &err) != 200)
				continue;
			obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
			if (obj) /* the new Job replaces the deleted one in place */
				reload_apply_workload(c, we->e.cls, "MODIFIED", obj);
			json_decref(obj);
		}
	}
}

/*
 * Rollout: restart sets spec.restartAt with Reloader's exact merge patch; otherwise the pod
 * template changes as a Deployment's would, sent as a merge patch (custom resources take no
 * strategic merge patch): annotations as the Deployment body, env-vars as the whole containers
 * list read just before, guarded by the resourceVersion (Reloader PUTs the whole Rollout).
 */
static int rollout_rollout(struct ctl *c, struct wl_ent *we, const struct reload_trigger *t,
			   size_t n, long long now, const struct kube_query *q, struct log_err *err)
{
	json_t *ro = NULL, *patch = NULL;
	const char *rv;
	int r;

	if (reload_rollout_restart(&we->w)) {
		char ts[32];
		time_t secs = (time_t)now;
		struct tm tm;

		gmtime_r(&secs, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		sb_reset(&c->body);
		r = sb_addf(&c->body, "{\"spec\": {\"restartAt\": \"%s\"}}", ts);
		if (r < 0)
			return r;
		return send_json(c, "PATCH", &reload_res_rollouts, we->e.ns, we->e.name,
				 "application/merge-patch+json", c->body.buf, q, err);
	}
	if (c->o->strategy == RELOAD_ANNOTATIONS) {
		sb_reset(&c->body);
		r = reload_patch_body(&c->body, c->o->strategy, we->e.ns, t, n, now);
		if (r < 0)
			return r;
		return send_json(c, "PATCH", &reload_res_rollouts, we->e.ns, we->e.name,
				 "application/merge-patch+json", c->body.buf, q, err);
	}
	r = get_object(c, &reload_res_rollouts, we->e.ns, we->e.name, &ro, err);
	if (r < 0)
		return r;
	rv = json_string_value(json_object_get(json_object_get(ro, "metadata"), "resourceVersion"));
	r = reload_template_apply(json_object_get(json_object_get(ro, "spec"), "template"),
				  c->o->strategy, we->e.ns, t, n, now);
	if (r <= 0)
		goto out;
	patch = json_pack(
	    "{s:{s:s}, s:{s:{s:{s:O}}}}", "metadata", "resourceVersion", rv ? rv : "", "spec",
	    "template", "spec", "containers",
	    json_object_get(
		json_object_get(json_object_get(json_object_get(ro, "spec"), "template"), "spec"),
		"containers"));
	r = patch ? dump_to(&c->body, patch) : -ENOMEM;
	if (r == 0)
		r = send_json(c, "PATCH", &reload_res_rollouts, we->e.ns, we->e.name,
			      "application/merge-patch+json", c->body.buf, q, err);
out:
	json_decref(patch);
	json_decref(ro);
	return r;
}

/* apps/v1: the env vars of deleted objects go first, by JSON patch; then the usual SMP. */
static int apps_rollout(struct ctl *c, struct wl_ent *we, const struct reload_trigger *t, size_t n,
			long long now, const struct kube_query *q, struct log_err *err)
{
	struct reload_trigger *rest = NULL;
	size_t i, k = 0, ndel = 0;
	int r;

	for (i = 0; i < n; i++)
		ndel += t[i].deleted != 0;
	if (ndel && c->o->strategy == RELOAD_ENV_VARS) {
		sb_reset(&c->body);
		r = reload_delete_patch(&c->body, &we->w, t, n);
		if (r < 0)
			return r;
		if (r > 0) {
			r = send_json(c, "PATCH", reload_cls_res[we->e.cls], we->e.ns, we->e.name,
				      "application/json-patch+json", c->body.buf, q, err);
			if (r == 422)
				r = 409; /* a test failed: our indices are stale, re-read */
			if (r != 200)
				return r;
		}
		if (ndel == n)
			return r > 0 ? 200 : 0;
		rest = calloc(n, sizeof(*rest));
		if (!rest)
			return -ENOMEM;
		for (i = 0; i < n; i++)
			if (!t[i].deleted)
				rest[k++] = t[i];
		t = rest;
		n = k;
	}
	sb_reset(&c->body);
	r = reload_patch_body(&c->body, c->o->strategy, we->e.ns, t, n, now);
	if (r == 0)
		r = send_json(c, "PATCH", reload_cls_res[we->e.cls], we->e.ns, we->e.name,
			      "application/strategic-merge-patch+json", c->body.buf, q, err);
	free(rest);
	return r;
}

int reload_write(struct ctl *c, struct wl_ent *we, const struct reload_trigger *t, size_t n,
		 int attempt, long long now, const struct kube_query *q, struct log_err *err)
{
	const struct reload_kind_info *k;
	int r;

	if ((unsigned int)we->w.kind >= RELOAD_NKINDS)
		return -EINVAL;
	k = &reload_kinds[we->w.kind];
	if (k->pausable && attempt == 0) {
		r = reload_pause_before(c, we, err);
		if (r < 0)
			return r;
	}
	switch (k->shape) {
	case RELOAD_SHAPE_JOB_FROM_TEMPLATE:
		return cronjob_rollout(c, we, t, n, now, q, err);
	case RELOAD_SHAPE_RECREATE:
		return job_rollout(c, we, t, n, now, q, err);
	case RELOAD_SHAPE_MERGE:
		return rollout_rollout(c, we, t, n, now, q, err);
	default:
		return apps_rollout(c, we, t, n, now, q, err);
	}
}
