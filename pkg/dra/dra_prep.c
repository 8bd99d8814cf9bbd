// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dra_prep: NodePrepareResources / NodeUnprepareResources for a node-local driver
 * (../shared/reference/dra.md sections 1, 6 and 7): read each claim from the API server
 * (GET /apis/resource.k8s.io/v1/namespaces/<ns>/resourceclaims/<name>), check its UID and
 * allocation, keep the results of our driver, write one CDI spec per claim
 * (<cdi_dir>/<driver>-claim_<uid>.json, kind <driver>/claim, devices <uid>-<device>) and
 * answer its CDI ids; the prepared claims are kept in <state_dir>/checkpoint.json.
 *
 * Order of a Prepare call: every claim's CDI spec, then one checkpoint write, then the answer.
 * A run killed between the two leaves a spec the checkpoint does not hold: dra_prep_new removes
 * it, and the kubelet (which got no answer) prepares the claim again. A repeated Prepare answers
 * from the checkpoint, with the same ids; Unprepare of a claim we do not know is success.
 * Everything here but dra_prep_new runs on dra_srv's worker thread (a dra_prep is its alone).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dra/dra_internal.h"
#include "fsutil/fsutil.h"
#include "kube/kube.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const struct kube_resource claims_res = {"/apis/resource.k8s.io/v1", "resourceclaims",
						"ResourceClaim"};

int dra_prep_new(const struct dra_prep_opts *o, struct dra_prep **out, struct log_err *err)
{
	struct dra_prep *p = calloc(1, sizeof(*p));
	int rc;

	*out = NULL;
	if (!p)
		return log_err_set(err, -ENOMEM, "out of memory");
	p->o = *o;
	p->driver = strdup(o->driver);
	p->pool = strdup(o->pool);
	p->state_dir = strdup(o->state_dir);
	p->cdi_dir = strdup(o->cdi_dir);
	if (!p->driver || !p->pool || !p->state_dir || !p->cdi_dir) {
		dra_prep_free(p);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	rc = fs_mkdir_p(p->state_dir, 0750);
	if (rc < 0 && !fs_is_dir(p->state_dir)) {
		dra_prep_free(p);
		return log_err_set(err, rc, "%s: cannot create directory: %s", o->state_dir,
				   strerror(-rc));
	}
	if (dst_name_rule(o->pool, 253, true)) {
		rc = log_err_set(err, -EINVAL, "node name '%s' (the DRA pool): %s", o->pool,
				 dst_name_rule(o->pool, 253, true));
		dra_prep_free(p);
		return rc;
	}
	rc = dst_load(p, err);
	if (rc < 0) {
		dra_prep_free(p);
		return rc;
	}
	dst_clean_temps(p, -1); /* before us nobody writes here: any age */
	dst_clean_orphans(p);
	*out = p;
	return 0;
}

void dra_prep_free(struct dra_prep *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		dst_claim_free(p->c[i]);
	free(p->c);
	free(p->driver);
	free(p->pool);
	free(p->state_dir);
	free(p->cdi_dir);
	free(p);
}

size_t dra_prep_count(const struct dra_prep *p)
{
	return p->n;
}

/* GET the claim: 0 with *obj, or -errno with msg (the claim's error). 404: -ENOENT. */
static int get_claim(struct dra_prep *p, const char *ns, const char *name, json_t **obj, char *msg,
		     size_t cap)
{
	struct strbuf url = STRBUF_INIT(8192), body = STRBUF_INIT(DRA_CLAIM_BYTES_MAX);
	struct log_err e = {0};
	json_error_t je;
	int st;

	*obj = NULL;
	if (!p->o.kube) {
		snprintf(msg, cap, "no API server configured: cannot read claim %s/%s", ns, name);
		return -ENOTCONN;
	}
	st = kube_url(&url, kube_client_server(p->o.kube), &claims_res, ns, name, NULL);
	if (st == 0)
		st = kube_request(p->o.kube, "GET", url.buf, NULL, NULL, &body, &e);
	sb_free(&url);
	if (st != 200) {
		if (st < 0)
			snprintf(msg, cap, "claim %s/%s: %.160s", ns, name, e.msg);
		else
			snprintf(msg, cap, "claim %s/%s: the API server answered %d", ns, name, st);
		sb_free(&body);
		return st == 404 ? -ENOENT : st < 0 ? st : -EIO;
	}
	*obj = json_loadb(body.buf, body.len, 0, &je);
	sb_free(&body);
	if (!*obj) {
		snprintf(msg, cap, "claim %s/%s: not JSON: %s", ns, name, je.text);
		return -EINVAL;
	}
	return 0;
}

/* Is device prepared for a claim other than uid, not for admin access? Its holder's UID. */
static const char *held_by(const struct dra_prep *p, const char *uid, const char *device)
{
	for (size_t i = 0; i < p->n; i++) {
		if (!strcmp(p->c[i]->uid, uid))
			continue;
		for (size_t k = 0; k < p->c[i]->n; k++)
			if (!p->c[i]->d[k].admin && !strcmp(p->c[i]->d[k].device, device))
				return p->c[i]->uid;
	}
	return NULL;
}

/* The claim's CDI spec as JSON (malloc'd). */
static char *spec_json(const struct dra_prep *p, const struct pclaim *c)
{
	char kind[300], *s;
	json_t *root;

	snprintf(kind, sizeof(kind), "%s/%s", p->driver, DRA_CDI_CLASS);
	root = json_pack("{s:s,s:s,s:[]}", "cdiVersion", DRA_CDI_VERSION, "kind", kind, "devices");
	if (!root)
		return NULL;
	for (size_t k = 0; k < c->n; k++) {
		const struct dra_node *nodes;
		size_t nn = 0;
		json_t *dn = json_array();
		char name[512];

		if (p->o.lookup(p->o.ctx, c->d[k].device, &nodes, &nn) < 0)
			nn = 0;
		for (size_t j = 0; j < nn; j++)
			json_array_append_new(dn, json_pack("{s:s,s:s}", "path", nodes[j].container,
							    "hostPath", nodes[j].host));
		snprintf(name, sizeof(name), "%s-%s", c->uid, c->d[k].device);
		json_array_append_new(
		    json_object_get(root, "devices"),
		    json_pack("{s:s,s:{s:o}}", "name", name, "containerEdits", "deviceNodes", dn));
	}
	s = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(root);
	return s;
}

static int add_dev(struct pclaim *c, const char *request, const char *pool, const char *device,
		   bool admin, const char *driver)
{
	struct pdev *d = &c->d[c->n];
	const char *slash = strchr(request, '/');
	size_t l = strlen(driver) + strlen(DRA_CDI_CLASS) + strlen(c->uid) + strlen(device) + 4;

	/* containers name only the main request: "main/sub" is "main" (K dynamic-resource-
	 * allocation kubeletplugin/draplugin.go stripSubrequestNames) */
	d->request = slash ? strndup(request, (size_t)(slash - request)) : strdup(request);
	d->pool = strdup(pool);
	d->device = strdup(device);
	d->cdi = malloc(l);
	d->admin = admin;
	c->n++;
	if (!d->request || !d->pool || !d->device || !d->cdi)
		return -ENOMEM;
	snprintf(d->cdi, l, "%s/%s=%s-%s", driver, DRA_CDI_CLASS, c->uid, device);
	return 0;
}

/* The rule a result's request name ("main" or "main/sub") breaks, or NULL (as the API's). */
static const char *request_rule(const char *req)
{
	const char *slash = strchr(req, '/');
	char main_req[64];

	if (slash && (size_t)(slash - req) < sizeof(main_req)) {
		memcpy(main_req, req, (size_t)(slash - req));
		main_req[slash - req] = '\0';
		return dst_name_rule(main_req, 63, false);
	}
	return dst_name_rule(req, 63, false);
}

/* Our results of the claim object into a new pclaim; a refusal is -errno with msg. */
static int take_results(struct dra_prep *p, const struct dra_claim *cl, json_t *obj,
			struct pclaim **out, char *msg, size_t cap)
{
	const char *uid =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
	json_t *alloc = json_object_get(json_object_get(obj, "status"), "allocation");
	json_t *res = json_object_get(json_object_get(alloc, "devices"), "results"), *r;
	struct pclaim *c;
	size_t i, n = 0;

	*out = NULL;
	if (!uid || strcmp(uid, cl->uid)) {
		snprintf(msg, cap, "claim %s/%s: its UID is %s, not %s (it got replaced)", cl->ns,
			 cl->name, uid ? uid : "absent", cl->uid);
		return -ESTALE;
	}
	if (!json_is_object(alloc)) {
		snprintf(msg, cap, "claim %s/%s: not allocated", cl->ns, cl->name);
		return -EINVAL;
	}
	json_array_foreach(res, i, r) n +=
	    !strcmp(json_string_value(json_object_get(r, "driver")) ?: "", p->driver);
	if (n > DRA_RESULTS_MAX) {
		snprintf(msg, cap, "claim %s/%s: %zu devices of %s, limit %d", cl->ns, cl->name, n,
			 p->driver, DRA_RESULTS_MAX);
		return -E2BIG;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->d = calloc(n + 1, sizeof(*c->d))) || !(c->uid = strdup(cl->uid)) ||
	    !(c->ns = strdup(cl->ns)) || !(c->name = strdup(cl->name))) {
		dst_claim_free(c);
		snprintf(msg, cap, "out of memory");
		return -ENOMEM;
	}
	json_array_foreach(res, i, r)
	{
		const char *drv = json_string_value(json_object_get(r, "driver")) ?: "";
		const char *pool = json_string_value(json_object_get(r, "pool")) ?: "";
		const char *dev = json_string_value(json_object_get(r, "device")) ?: "";
		const char *req = json_string_value(json_object_get(r, "request")) ?: "";
		bool admin = json_is_true(json_object_get(r, "adminAccess"));
		const struct dra_node *nodes;
		const char *holder;
		size_t nn;
		int rc = 0;

		if (strcmp(drv, p->driver))
			continue; /* another driver's device: that driver prepares it */
		if (json_object_get(r, "shareID") ||
		    json_object_size(json_object_get(r, "consumedCapacity"))) {
			snprintf(msg, cap,
				 "claim %s/%s: device %s: consumable capacity (shareID) is not "
				 "offered by this driver",
				 cl->ns, cl->name, dev);
			rc = -ENOTSUP;
		} else if (strcmp(pool, p->pool)) {
			snprintf(msg, cap,
				 "claim %s/%s: device %s of pool '%s': not ours (pool '%s')",
				 cl->ns, cl->name, dev, pool, p->pool);
			rc = -EXDEV;
		} else if (p->o.lookup(p->o.ctx, dev, &nodes, &nn) < 0) {
			snprintf(msg, cap, "claim %s/%s: device %s: not on this node (any more)",
				 cl->ns, cl->name, dev);
			rc = -ENOENT;
		} else if (!admin && (holder = held_by(p, cl->uid, dev))) {
			snprintf(msg, cap,
				 "claim %s/%s: device %s is prepared for claim %s already", cl->ns,
				 cl->name, dev, holder);
			rc = -EBUSY;
		} else if (request_rule(req)) {
			snprintf(msg, cap, "claim %s/%s: device %s: request '%.64s': %s", cl->ns,
				 cl->name, dev, req, request_rule(req));
			rc = -EINVAL;
		} else if (add_dev(c, req, pool, dev, admin, p->driver) < 0) {
			snprintf(msg, cap, "out of memory");
			rc = -ENOMEM;
		}
		if (rc < 0) {
			dst_claim_free(c);
			return rc;
		}
	}
	*out = c;
	return 0;
}

static void answer(struct dra_result *r, const struct pclaim *c)
{
	r->devs = calloc(c->n + 1, sizeof(*r->devs));
	if (!r->devs) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		return;
	}
	r->n = c->n;
	for (size_t k = 0; k < c->n; k++)
		r->devs[k] = (struct dra_device){c->d[k].request, c->d[k].pool, c->d[k].device,
						 (const char *const *)&c->d[k].cdi, 1};
}

/*
 * Write claim c's spec (fs_publish leaves an unchanged file alone). A repeated Prepare calls it
 * too: after a node reboot the CDI dir (a tmpfs) is empty while the checkpoint survives.
 */
static int publish_spec(struct dra_prep *p, const struct pclaim *c, char *msg, size_t cap)
{
	struct log_err e = {0};
	char name[512], *spec;
	int rc;

	if (dst_spec_name(p, c->uid, name, sizeof(name)) < 0) {
		snprintf(msg, cap, "claim UID '%s': not usable in a file name", c->uid);
		return -EINVAL;
	}
	if (!c->n)
		return 0;
	spec = spec_json(p, c);
	rc = spec ? fs_publish(p->cdi_dir, name, spec, strlen(spec), 0644, &e) : -ENOMEM;
	free(spec);
	if (rc < 0)
		snprintf(msg, cap, "CDI spec: %.200s", e.msg[0] ? e.msg : strerror(-rc));
	return rc < 0 ? rc : 0;
}

/* Prepare one claim not in the checkpoint: its spec written, the claim appended to p->c. */
static int prepare_one(struct dra_prep *p, const struct dra_claim *cl, struct dra_result *r)
{
	struct pclaim *c = NULL, **g;
	json_t *obj = NULL;
	int rc = get_claim(p, cl->ns, cl->name, &obj, r->err, sizeof(r->err));

	if (rc == 0)
		rc = take_results(p, cl, obj, &c, r->err, sizeof(r->err));
	json_decref(obj);
	if (rc < 0)
		return rc;
	rc = publish_spec(p, c, r->err, sizeof(r->err));
	if (rc < 0) {
		dst_claim_free(c);
		return rc;
	}
	g = realloc(p->c, (p->n + 1) * sizeof(*p->c));
	if (!g) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		dst_claim_free(c);
		return -ENOMEM;
	}
	p->c = g;
	p->c[p->n++] = c;
	return 0;
}

/* Remove claim i: its spec, then the entry. */
static void drop(struct dra_prep *p, size_t i)
{
	dst_unlink(p, p->c[i]->uid);
	dst_claim_free(p->c[i]);
	memmove(&p->c[i], &p->c[i + 1], (p->n - i - 1) * sizeof(*p->c));
	p->n--;
}

/* Can claim c be prepared (and checkpointed: load_claim takes it back)? r->err says why not. */
static bool claim_ok(const struct dra_claim *c, struct dra_result *r)
{
	const char *why = dst_name_rule(c->ns, 63, false);

	if (!dra_uid_ok(c->uid))
		snprintf(r->err, sizeof(r->err),
			 "claim %.64s/%.64s: UID '%.64s': want 1 to 36 letters, digits or '-'",
			 c->ns, c->name, c->uid);
	else if (why)
		snprintf(r->err, sizeof(r->err), "claim %.64s/%.64s: namespace: %s", c->ns, c->name,
			 why);
	else if ((why = dst_name_rule(c->name, 253, true)))
		snprintf(r->err, sizeof(r->err), "claim %.64s/%.64s: name: %s", c->ns, c->name,
			 why);
	if (r->err[0])
		log_warn("dra: %s", r->err);
	return !r->err[0];
}

int dra_prep_prepare(void *ctx, const struct dra_claim *cl, size_t n, long long deadline,
		     struct dra_result *r, struct log_err *err)
{
	struct dra_prep *p = ctx;
	long long end = mono_ms() + DRA_PREPARE_BUDGET_MS;
	size_t before = p->n, added;
	int rc;

	/* claims not begun a second before the caller stops waiting are left for its retry */
	if (deadline >= 0 && deadline - 1000 < end)
		end = deadline - 1000;
	for (size_t i = 0; i < n; i++) {
		long at = dst_find(p, cl[i].uid);

		if (!claim_ok(&cl[i], &r[i]))
			continue;
		if (at >= 0 && publish_spec(p, p->c[at], r[i].err, sizeof(r[i].err)) < 0) {
			log_warn("dra: %s", r[i].err); /* the kubelet asks again */
			continue;
		}
		if (at < 0 && mono_ms() > end) {
			snprintf(r[i].err, sizeof(r[i].err),
				 "claim %s/%s: not prepared: the API server was too slow for "
				 "this call's claims (%d s at most); the kubelet asks again",
				 cl[i].ns, cl[i].name, DRA_PREPARE_BUDGET_MS / 1000);
			continue;
		}
		if (at < 0 && p->n >= DRA_PREPARED_MAX) {
			snprintf(r[i].err, sizeof(r[i].err),
				 "claim %s/%s: not prepared: %d claims are prepared on this node, "
				 "the limit",
				 cl[i].ns, cl[i].name, DRA_PREPARED_MAX);
			log_warn("dra: %s", r[i].err);
			continue;
		}
		if (at < 0 && prepare_one(p, &cl[i], &r[i]) < 0) {
			log_warn("dra: %s", r[i].err);
			continue;
		}
		answer(&r[i], p->c[at < 0 ? (long)p->n - 1 : at]);
	}
	added = p->n - before;
	if (!added)
		return 0;
	rc = dst_write(p, err);
	if (rc < 0) { /* none of this call's new claims is prepared: take them back */
		for (size_t i = 0; i < n; i++) {
			long at = dst_find(p, cl[i].uid);

			if (at >= (long)before) {
				free(r[i].devs);
				r[i].devs = NULL;
				r[i].n = 0;
				snprintf(r[i].err, sizeof(r[i].err), "checkpoint: %.200s",
					 err->msg);
			}
		}
		while (p->n > before)
			drop(p, p->n - 1);
		log_err_clear(err);
	}
	return 0;
}

/*
 * Unprepare: the checkpoint without the claims is written first, then their specs go. A
 * checkpoint that cannot be written fails those claims (entries and specs kept: the kubelet
 * asks again); a claim we do not know is success, its spec removed if it is ours.
 */
int dra_prep_unprepare(void *ctx, const struct dra_claim *cl, size_t n, long long deadline,
		       struct dra_result *r, struct log_err *err)
{
	struct dra_prep *p = ctx;
	struct pclaim **all = p->c, **keep;
	size_t n_all = p->n, nk = 0;
	bool *gone = calloc(n_all + 1, sizeof(*gone));

	(void)deadline; /* local work only: no API call to bound */
	keep = calloc(n_all + 1, sizeof(*keep));
	if (!gone || !keep) {
		free(gone);
		free(keep);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		long at = dst_find(p, cl[i].uid);

		if (!dra_uid_ok(cl[i].uid))
			snprintf(r[i].err, sizeof(r[i].err),
				 "claim %s/%s: UID '%.64s': want 1 to 36 letters, digits or '-'",
				 cl[i].ns, cl[i].name, cl[i].uid);
		else if (at >= 0)
			gone[at] = true;
		else
			dst_unlink(p,
				   cl[i].uid); /* a spec without checkpoint (killed mid-prepare) */
	}
	for (size_t k = 0; k < n_all; k++)
		if (!gone[k])
			keep[nk++] = all[k];
	if (nk == n_all)
		goto out;
	p->c = keep;
	p->n = nk;
	if (dst_write(p, err) < 0) { /* nothing removed: the kubelet asks again */
		p->c = all;
		p->n = n_all;
		for (size_t i = 0; i < n; i++)
			if (dst_find(p, cl[i].uid) >= 0)
				snprintf(r[i].err, sizeof(r[i].err),
					 "claim %s/%s: not unprepared: checkpoint: %.180s",
					 cl[i].ns, cl[i].name, err->msg);
		log_warn("dra: %s", err->msg);
		log_err_clear(err);
		goto out;
	}
	for (size_t k = 0; k < n_all; k++)
		if (gone[k]) {
			dst_unlink(p, all[k]->uid);
			dst_claim_free(all[k]);
		}
out:
	free(p->c == keep ? all : keep); /* the array p->c does not use */
	free(gone);
	return 0;
}

void dra_prep_free_result(void *ctx, struct dra_result *r)
{
	(void)ctx;
	free(r->devs);
	r->devs = NULL;
}

int dra_prep_sweep(struct dra_prep *p, struct log_err *err)
{
	size_t gone = 0;

	dst_clean_temps(p, DRA_TEMP_AGE_S);
	for (size_t i = 0; i < p->n;) {
		json_t *obj = NULL;
		char msg[256];
		const struct pclaim *c = p->c[i];
		int rc = get_claim(p, c->ns, c->name, &obj, msg, sizeof(msg));
		const char *uid =
		    json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
		bool vanished = rc == -ENOENT || (rc == 0 && (!uid || strcmp(uid, c->uid)));

		json_decref(obj);
		if (rc < 0 && rc != -ENOENT)
			return log_err_set(err, rc, "dra: sweep: %s", msg);
		if (!vanished) {
			i++;
			continue;
		}
		log_info("dra: claim %s/%s (%s) is gone: unprepared", c->ns, c->name, c->uid);
		drop(p, i);
		gone++;
	}
	if (gone && dst_write(p, err) < 0)
		return -EIO;
	return (int)gone;
}
