// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dra_slice: our pool's ResourceSlices (resource.k8s.io/v1) through pkg/kube, as
 * ../shared/reference/dra.md section 4 says a node-local driver writes them: spec.driver, nodeName
 * and pool {name: node, generation, resourceSliceCount}, at most 128 devices a slice, at least one
 * slice (an empty pool is not "no pool"), every slice of a changed pool written with the next
 * generation, nothing written when the API server already holds what we would write.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/dra.h"
#include "kube/kube.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

#define LIST_MAX (64u << 20) /* our pool's slices as one LIST answer */
#define TRIES	 3	     /* syncs after a 409 */

static const struct kube_resource slices_res = {"/apis/resource.k8s.io/v1", "resourceslices",
						"ResourceSlice"};

struct dra_pub {
	struct kube_client *kube;
	char *driver, *node;
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
	free(p);
}

/* One request; 0 with *obj (NULL for no JSON body) or the HTTP status / -errno with err. */
static int call(struct dra_pub *p, const char *method, const char *name, const struct kube_query *q,
		json_t *body, json_t **obj, struct log_err *err)
{
	struct strbuf url = STRBUF_INIT(8192), resp = STRBUF_INIT(LIST_MAX);
	char *b = body ? json_dumps(body, JSON_COMPACT) : NULL;
	int st;

	if (obj)
		*obj = NULL;
	st = kube_url(&url, kube_client_server(p->kube), &slices_res, NULL, name, q);
	if (st == 0 && body && !b)
		st = -ENOMEM;
	if (st == 0)
		st = kube_request(p->kube, method, url.buf, b ? "application/json" : NULL, b, &resp,
				  err);
	free(b);
	if (st >= 200 && st < 300 && obj)
		*obj = json_loadb(resp.buf, resp.len, 0, NULL);
	if (st >= 300)
		log_err_set(err, st == 409 ? -EAGAIN : -EIO,
			    "%s resourceslices%s%s: HTTP %d: %.120s", method, name ? "/" : "",
			    name ? name : "", st, resp.buf);
	sb_free(&url);
	sb_free(&resp);
	return st >= 200 && st < 300 ? 0 : st;
}

/* Our pool's slices: items of the LIST, or NULL with err. */
static json_t *list(struct dra_pub *p, struct log_err *err)
{
	char sel[512];
	struct kube_query q = {.field_selector = sel};
	json_t *obj, *items;
	int st;

	snprintf(sel, sizeof(sel), "spec.driver=%s,spec.nodeName=%s", p->driver, p->node);
	st = call(p, "GET", NULL, &q, NULL, &obj, err);
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

/* The devices as the API takes them: over-limit attributes dropped (warned). */
static json_t *device_json(const struct dra_slice_dev *d)
{
	json_t *attrs = json_object(), *dev;
	size_t n = 0;

	for (size_t i = 0; i < d->n_attrs; i++) {
		const struct dra_attr *a = &d->attrs[i];

		if (n == DRA_DEVICE_ATTRS || strlen(a->id) > 32 ||
		    (a->str && strlen(a->str) > DRA_ATTR_VALUE_MAX)) {
			log_warn(
			    "dra: device %s: attribute %s not published (over the API's limits: "
			    "%d attributes, ids of 32, values of %d characters)",
			    d->name, a->id, DRA_DEVICE_ATTRS, DRA_ATTR_VALUE_MAX);
			continue;
		}
		json_object_set_new(attrs, a->id,
				    a->str ? json_pack("{s:s}", "string", a->str)
					   : json_pack("{s:I}", "int", (json_int_t)a->num));
		n++;
	}
	dev = json_pack("{s:s,s:o}", "name", d->name, "attributes", attrs);
	return dev;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct dra_slice_dev *)a)->name,
		      ((const struct dra_slice_dev *)b)->name);
}

static json_int_t gen_of(json_t *s)
{
	return json_integer_value(
	    json_object_get(json_object_get(json_object_get(s, "spec"), "pool"), "generation"));
}

/* Do the existing slices hold exactly the chunks (any order), one generation, count right? */
static bool up_to_date(json_t *items, json_t **chunk, size_t k)
{
	json_int_t g = -1;
	size_t i, j;
	json_t *s;

	if (json_array_size(items) != k)
		return false;
	json_array_foreach(items, i, s)
	{
		json_t *pool = json_object_get(json_object_get(s, "spec"), "pool");

		if ((g >= 0 && gen_of(s) != g) || json_integer_value(json_object_get(
						      pool, "resourceSliceCount")) != (json_int_t)k)
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

static json_t *slice_json(struct dra_pub *p, json_t *s_old, json_t *devices, json_int_t gen,
			  size_t k)
{
	json_t *md = json_object();
	char gn[512];

	if (s_old) {
		json_t *omd = json_object_get(s_old, "metadata");

		json_object_set(md, "name", json_object_get(omd, "name"));
		json_object_set(md, "resourceVersion", json_object_get(omd, "resourceVersion"));
	} else {
		snprintf(gn, sizeof(gn), "%s-%s-", p->node, p->driver);
		json_object_set_new(md, "generateName", json_string(gn));
	}
	return json_pack("{s:s,s:s,s:o,s:{s:s,s:s,s:{s:s,s:I,s:I},s:O}}", "apiVersion",
			 "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", md, "spec",
			 "driver", p->driver, "nodeName", p->node, "pool", "name", p->node,
			 "generation", gen, "resourceSliceCount", (json_int_t)k, "devices",
			 devices);
}

/* One pass: 0.. writes, -EAGAIN on a 409, other errors with err. */
static int sync_once(struct dra_pub *p, json_t **chunk, size_t k, struct log_err *err)
{
	json_t *items = list(p, err), *s;
	json_int_t gen = 0;
	size_t i, writes = 0;
	int st = 0;

	if (!items)
		return err && err->code ? err->code : -EIO;
	if (up_to_date(items, chunk, k)) {
		json_decref(items);
		return 0;
	}
	json_array_foreach(items, i, s) if (gen_of(s) > gen) gen = gen_of(s);
	gen++;
	for (i = 0; i < k && st == 0; i++, writes++) {
		json_t *old = json_array_get(items, i),
		       *body = slice_json(p, old, chunk[i], gen, k);
		const char *name = old ? json_string_value(json_object_get(
					     json_object_get(old, "metadata"), "name"))
				       : NULL;

		st = body ? call(p, old ? "PUT" : "POST", name, NULL, body, NULL, err) : -ENOMEM;
		json_decref(body);
	}
	for (i = k; i < json_array_size(items) && st == 0; i++, writes++) {
		const char *name = json_string_value(
		    json_object_get(json_object_get(json_array_get(items, i), "metadata"), "name"));

		st = call(p, "DELETE", name, NULL, NULL, NULL, err);
		if (st == 404)
			st = 0;
	}
	json_decref(items);
	if (st == 409)
		return -EAGAIN;
	if (st != 0)
		return st < 0 ? st : -EIO;
	log_info("dra: pool %s of %s: generation %lld, %zu slices", p->node, p->driver,
		 (long long)gen, k);
	return (int)writes;
}

int dra_pub_sync(struct dra_pub *p, const struct dra_slice_dev *d, size_t n, struct log_err *err)
{
	struct dra_slice_dev *sorted = NULL;
	size_t k, i;
	json_t **chunk;
	int rc = -ENOMEM;

	if (n > DRA_POOL_DEVICES) {
		log_warn("dra: %zu devices: only the first %d are published", n, DRA_POOL_DEVICES);
		n = DRA_POOL_DEVICES;
	}
	k = n ? (n + DRA_SLICE_DEVICES - 1) / DRA_SLICE_DEVICES : 1;
	chunk = calloc(k, sizeof(*chunk));
	sorted = malloc((n + 1) * sizeof(*sorted));
	if (!chunk || !sorted)
		goto out;
	if (n)
		memcpy(sorted, d, n * sizeof(*d));
	qsort(sorted, n, sizeof(*sorted), by_name);
	for (i = 0; i < k; i++)
		if (!(chunk[i] = json_array()))
			goto out;
	for (i = 0; i < n; i++)
		json_array_append_new(chunk[i / DRA_SLICE_DEVICES], device_json(&sorted[i]));
	for (int t = 0; t < TRIES; t++) {
		log_err_clear(err);
		rc = sync_once(p, chunk, k, err);
		if (rc != -EAGAIN)
			break;
		log_info("dra: a slice changed under us (409): listing again");
	}
out:
	for (i = 0; chunk && i < k; i++)
		json_decref(chunk[i]);
	free(chunk);
	free(sorted);
	if (rc == -ENOMEM && !(err && err->msg[0]))
		log_err_set(err, rc, "out of memory");
	return rc;
}
