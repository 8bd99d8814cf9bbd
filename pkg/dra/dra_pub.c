// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dra_pub: our pool's ResourceSlices (resource.k8s.io/v1) through pkg/kube, as
 * ../shared/reference/dra.md section 4 says a node-local driver writes them: spec.driver, nodeName
 * and pool {name: node, generation, resourceSliceCount}, at most 128 devices a slice, at least one
 * slice (an empty pool is not "no pool"), every slice of a changed pool written with the next
 * generation, nothing written when the API server already holds what we would write; owned by
 * their Node (metadata.ownerReferences, as kubernetes
 * staging/src/k8s.io/dynamic-resource-allocation/resourceslice/resourceslicecontroller.go does),
 * so deleting the Node deletes them. The devices' JSON is dra_slice.c's.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/dra_internal.h"
#include "kube/kube.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

/*
 * Our pool's slices as one LIST answer. The LIST is not paged (no limit, no continue): at most
 * DRA_POOL_DEVICES (4096) devices in slices of DRA_SLICE_DEVICES (128) are 32 slices, one
 * answer well under this cap; and a LIST without limit or resourceVersion is the API's "Most
 * Recent" read (kubernetes/website content/en/docs/reference/using-api/api-concepts.md, "The
 * ResourceVersion Parameter": consistent, a quorum read), with no continue token to expire.
 */
#define LIST_MAX (64u << 20)
#define TRIES	 3 /* syncs after a 409 */

static const struct kube_resource slices_res = {"/apis/resource.k8s.io/v1", "resourceslices",
						"ResourceSlice"};
static const struct kube_resource nodes_res = {"/api/v1", "nodes", "Node"};

struct dra_pub {
	struct kube_client *kube;
	char *driver, *node;
	json_t *owner;		  /* [{apiVersion v1, kind Node, name, uid, controller}], or NULL */
	bool owner_asked;	  /* the Node GET is done (owner set, or refused: none this run) */
	struct dra_warned warned; /* dra_slice_build's warnings so far */
};

int dra_pub_new(struct kube_client *kube, const char *driver, const char *node,
		struct dra_pub **out, struct log_err *err)
{
	struct dra_pub *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p || !(p->driver = strdup(driver)) || !(p->node = strdup(node))) {
		dra_pub_free(p);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	p->kube = kube;
	*out = p;
	return 0;
}

void dra_pub_free(struct dra_pub *p)
{
	if (!p)
		return;
	free(p->driver);
	free(p->node);
	json_decref(p->owner);
	dra_warned_free(&p->warned);
	free(p);
}

/* The error code of an HTTP status >= 300: -EAGAIN (409), -ESTALE (410), else -EIO. */
static int code_of(int st)
{
	if (st == 409)
		return -EAGAIN;
	return st == 410 ? -ESTALE : -EIO;
}

/* One request; 0 with *obj (NULL for no JSON body) or the HTTP status / -errno with err. */
static int call(struct dra_pub *p, const struct kube_resource *res, const char *method,
		const char *name, const struct kube_query *q, json_t *body, json_t **obj,
		struct log_err *err)
{
	struct strbuf url = STRBUF_INIT(8192), resp = STRBUF_INIT(LIST_MAX);
	char *b = body ? json_dumps(body, JSON_COMPACT) : NULL;
	int st;

	if (obj)
		*obj = NULL;
	st = kube_url(&url, kube_client_server(p->kube), res, NULL, name, q);
	if (st == 0 && body && !b)
		st = -ENOMEM;
	if (st == 0)
		st = kube_request(p->kube, method, url.buf, b ? "application/json" : NULL, b, &resp,
				  err);
	free(b);
	if (st >= 200 && st < 300 && obj)
		*obj = json_loadb(resp.buf, resp.len, 0, NULL);
	if (st >= 300)
		log_err_set(err, code_of(st), "%s %s%s%s: HTTP %d: %.120s", method, res->plural,
			    name ? "/" : "", name ? name : "", st, resp.buf);
	sb_free(&url);
	sb_free(&resp);
	return st >= 200 && st < 300 ? 0 : st;
}

/*
 * Our pool's slices: items of the LIST, or NULL with err: -ESTALE on a 410, -ENOTSUP on a 404
 * (resource.k8s.io/v1 not served: a served collection's LIST is never 404; kube-apiserver answers
 * a path no API group serves with its last delegate, staging/src/k8s.io/apiserver/pkg/util/
 * notfoundhandler/not_found_handler.go ServeHTTP: http.NotFound).
 */
static json_t *list(struct dra_pub *p, struct log_err *err)
{
	char sel[512];
	struct kube_query q = {.field_selector = sel};
	json_t *obj, *items;
	int st;

	snprintf(sel, sizeof(sel), "spec.driver=%s,spec.nodeName=%s", p->driver, p->node);
	st = call(p, &slices_res, "GET", NULL, &q, NULL, &obj, err);
	if (st == 404)
		log_err_set(
		    err, -ENOTSUP,
		    "the API server does not serve resource.k8s.io/v1 (LIST resourceslices: HTTP 404): DRA needs a Kubernetes 1.34 or later API server, 1.32 and 1.33 are not supported");
	items = json_object_get(obj, "items");
	if (st != 0 || !json_is_array(items)) {
		if (st == 0)
			log_err_set(err, KUBE_EJSON, "LIST resourceslices: no items");
		json_decref(obj);
		return NULL;
	}
	json_incref(items);
	json_decref(obj);
	return items;
}

/*
 * The Node's uid as our slices' owner, asked once: 0 (p->owner set, or none when the GET is
 * refused with 403 or 404: one warning), or the error of any other failure (asked again at the
 * next sync).
 */
static int owner_of(struct dra_pub *p, struct log_err *err)
{
	json_t *node = NULL;
	const char *uid;
	int st;

	if (p->owner_asked)
		return 0;
	st = call(p, &nodes_res, "GET", p->node, NULL, NULL, &node, err);
	if (st == 403 || st == 404) {
		log_warn("dra: GET nodes/%s: HTTP %d: the ResourceSlices are published without an "
			 "ownerReference to their Node (deleting the Node leaves them): give the "
			 "ServiceAccount get on nodes",
			 p->node, st);
		log_err_clear(err);
		p->owner_asked = true;
		return 0;
	}
	if (st != 0)
		return st < 0 ? st : -EIO;
	uid = json_string_value(json_object_get(json_object_get(node, "metadata"), "uid"));
	if (!uid || !*uid) {
		json_decref(node);
		return log_err_set(err, KUBE_EJSON, "GET nodes/%s: no metadata.uid", p->node);
	}
	p->owner = json_pack("[{s:s,s:s,s:s,s:s,s:b}]", "apiVersion", "v1", "kind", "Node", "name",
			     p->node, "uid", uid, "controller", 1);
	json_decref(node);
	if (!p->owner)
		return log_err_set(err, -ENOMEM, "out of memory");
	p->owner_asked = true;
	return 0;
}

static json_int_t gen_of(json_t *s)
{
	return json_integer_value(
	    json_object_get(json_object_get(json_object_get(s, "spec"), "pool"), "generation"));
}

/* Do the existing slices hold exactly the chunks (any order), one generation, count right,
 * owned as we would own them? */
static bool up_to_date(json_t *items, json_t **chunk, size_t k, json_t *owner)
{
	json_int_t g = -1;
	size_t i, j;
	json_t *s;

	if (json_array_size(items) != k)
		return false;
	json_array_foreach(items, i, s)
	{
		json_t *pool = json_object_get(json_object_get(s, "spec"), "pool");
		json_t *refs = json_object_get(json_object_get(s, "metadata"), "ownerReferences");

		if ((g >= 0 && gen_of(s) != g) ||
		    json_integer_value(json_object_get(pool, "resourceSliceCount")) !=
			(json_int_t)k ||
		    (owner ? !json_equal(refs, owner) : json_array_size(refs) != 0))
			return false;
		g = gen_of(s);
	}
	for (j = 0; j < k; j++) {
		bool found = false;

		json_array_foreach(items, i, s) found |=
		    json_equal(json_object_get(json_object_get(s, "spec"), "devices"), chunk[j]);
		if (!found)
			return false;
	}
	return true;
}

/* A slice of devices (borrowed), replacing s_old (its name and resourceVersion) or new; NULL
 * when out of memory. */
static json_t *slice_json(struct dra_pub *p, json_t *s_old, json_t *devices, json_int_t gen,
			  size_t k)
{
	json_t *md = json_object(), *omd = json_object_get(s_old, "metadata");
	char gn[512];
	bool ok = md != NULL;

	if (ok && s_old) {
		ok = json_object_set(md, "name", json_object_get(omd, "name")) == 0 &&
		     json_object_set(md, "resourceVersion",
				     json_object_get(omd, "resourceVersion")) == 0;
	} else if (ok) {
		snprintf(gn, sizeof(gn), "%s-%s-", p->node, p->driver);
		ok = json_object_set_new(md, "generateName", json_string(gn)) == 0;
	}
	if (ok && p->owner)
		ok = json_object_set(md, "ownerReferences", p->owner) == 0;
	if (!ok) {
		json_decref(md);
		return NULL;
	}
	return json_pack("{s:s,s:s,s:o,s:{s:s,s:s,s:{s:s,s:I,s:I},s:O}}", "apiVersion",
			 "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", md, "spec",
			 "driver", p->driver, "nodeName", p->node, "pool", "name", p->node,
			 "generation", gen, "resourceSliceCount", (json_int_t)k, "devices",
			 devices);
}

/* One pass: 0.. writes, -EAGAIN on a 409, -ESTALE on a 410, other errors with err. */
static int sync_once(struct dra_pub *p, json_t **chunk, size_t k, struct log_err *err)
{
	json_t *items = list(p, err), *s, **body = NULL;
	json_int_t gen = 0;
	size_t i, writes = 0;
	int st = 0;

	if (!items)
		return err && err->code ? err->code : -EIO;
	if (up_to_date(items, chunk, k, p->owner)) {
		json_decref(items);
		return 0;
	}
	json_array_foreach(items, i, s) if (gen_of(s) > gen) gen = gen_of(s);
	gen++;
	/* every body first: out of memory half-way writes nothing */
	body = calloc(k, sizeof(*body));
	for (i = 0; body && i < k; i++)
		if (!(body[i] = slice_json(p, json_array_get(items, i), chunk[i], gen, k)))
			break;
	if (!body || i < k) {
		st = log_err_set(err, -ENOMEM, "out of memory building the slices");
		goto out;
	}
	for (i = 0; i < k && st == 0; i++, writes++) {
		json_t *old = json_array_get(items, i);
		const char *name = old ? json_string_value(json_object_get(
					     json_object_get(old, "metadata"), "name"))
				       : NULL;

		st = call(p, &slices_res, old ? "PUT" : "POST", name, NULL, body[i], NULL, err);
	}
	for (i = k; i < json_array_size(items) && st == 0; i++, writes++) {
		const char *name = json_string_value(
		    json_object_get(json_object_get(json_array_get(items, i), "metadata"), "name"));

		st = call(p, &slices_res, "DELETE", name, NULL, NULL, NULL, err);
		if (st == 404)
			st = 0;
	}
out:
	for (i = 0; body && i < k; i++)
		json_decref(body[i]);
	free(body);
	json_decref(items);
	if (st != 0)
		return st < 0 ? st : code_of(st);
	log_info("dra: pool %s of %s: generation %lld, %zu slices", p->node, p->driver,
		 (long long)gen, k);
	return (int)writes;
}

int dra_pub_sync(struct dra_pub *p, const struct dra_slice_dev *d, size_t n, struct log_err *err)
{
	json_t **chunk = NULL;
	size_t k = 0;
	int rc, conflicts = 0, gone = 0;

	log_err_clear(err);
	rc = dra_slice_build(d, n, &p->warned, &chunk, &k, err);
	if (rc == 0)
		rc = owner_of(p, err);
	/*
	 * A 410 (Gone, reason Expired) says the view we listed is stale: list again from scratch
	 * at once, with neither continue nor resourceVersion, as client-go's pager falls back to
	 * a full list on an expired continue token (staging/src/k8s.io/client-go/tools/pager/
	 * pager.go ListPager.List) and as api-concepts.md says ("Clients must be able to tolerate
	 * 410 (Gone) responses"; "the client will need to start from the beginning"). Once a
	 * pass: a second 410 is an error like any other, and the caller's next pass tries again.
	 */
	while (rc == 0) {
		log_err_clear(err);
		rc = sync_once(p, chunk, k, err);
		if (rc == -EAGAIN && ++conflicts < TRIES)
			log_info("dra: a slice changed under us (409): listing again");
		else if (rc == -ESTALE && ++gone == 1)
			log_info(
			    "dra: ResourceSlices: 410 Gone (our view is stale): listing again from scratch");
		else
			break;
		rc = 0;
	}
	dra_chunks_free(chunk, k);
	return rc;
}
