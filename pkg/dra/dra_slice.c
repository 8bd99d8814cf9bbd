// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dra_slice: our pool's devices as the ResourceSlice API takes them (resource.k8s.io/v1 Device,
 * ../shared/reference/dra.md section 4), the pure stage before dra_pub.c writes them. Names and
 * attributes are checked as the API server validates them (kubernetes
 * pkg/apis/resource/validation/validation.go: validateDevice, validateDeviceAttribute,
 * validateQualifiedName, validateCIdentifier, the semver regular expression; limits from
 * staging/src/k8s.io/api/resource/v1/types.go), so one bad value never gets the whole slice
 * refused: what the API would refuse is left out with one warning naming device and attribute,
 * never cut to fit (a cut value is one a CEL selector could wrongly match).
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/dra_internal.h"
#include "log/log.h"

#define DRA_ID_MAX 32 /* an attribute's identifier (DeviceMaxIDLength) */

/* ---- what the API takes */

/* A C identifier of 1..32 characters (validateCIdentifier). */
static bool c_ident(const char *s, size_t n)
{
	if (n == 0 || n > DRA_ID_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* A QualifiedName: an identifier, or <domain>/<identifier> (the domain a driver name). */
static bool qualified(const char *id)
{
	const char *slash = strchr(id, '/');
	char dom[64];

	if (!slash)
		return c_ident(id, strlen(id));
	if ((size_t)(slash - id) >= sizeof(dom) || strchr(slash + 1, '/'))
		return false;
	memcpy(dom, id, (size_t)(slash - id));
	dom[slash - id] = 0;
	return dra_driver_ok(dom) && c_ident(slash + 1, strlen(slash + 1));
}

bool dra_device_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* Well-formed UTF-8 (JSON strings are; jansson refuses anything else). */
static bool utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t k = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : 3;
		unsigned cp = k == 0 ? *p : k == 1 ? *p & 0x1fu : k == 2 ? *p & 0x0fu : *p & 0x07u;

		if (*p >= 0x80 && ((*p & 0xc0) == 0x80 || *p > 0xf4))
			return false;
		for (size_t i = 1; i <= k; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i] & 0x3fu);
		}
		if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		p += k + 1;
	}
	return true;
}

/* s[0..n) is one dot-separated semver identifier: numeric ones without a leading zero. */
static bool semver_ident(const char *s, size_t n, bool numeric_only, bool build)
{
	bool digits = true;

	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool d = s[i] >= '0' && s[i] <= '9';

		if (!d &&
		    !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '-'))
			return false;
		digits &= d;
	}
	if (numeric_only && !digits)
		return false;
	return build || !digits || n == 1 || s[0] != '0';
}

/* Each dot-separated identifier of s[0..n) (count: how many there must be, 0: any). */
static bool semver_part(const char *s, size_t n, size_t count, bool numeric_only, bool build)
{
	size_t seen = 0, at = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (!semver_ident(s + at, i - at, numeric_only, build))
			return false;
		seen++;
		at = i + 1;
	}
	return count == 0 || seen == count;
}

/* A version as semver.org 2.0.0 writes it (the API's regular expression), at most 64 bytes. */
static bool semver(const char *v)
{
	size_t n = strlen(v), core, pre;
	const char *plus = strchr(v, '+'), *dash;

	if (n > DRA_ATTR_VALUE_MAX)
		return false;
	core = plus ? (size_t)(plus - v) : n;
	dash = memchr(v, '-', core);
	pre = dash ? (size_t)(dash - v) : core;
	return semver_part(v, pre, 3, true, false) &&
	       (!dash || semver_part(dash + 1, core - pre - 1, 0, false, false)) &&
	       (!plus || semver_part(plus + 1, n - core - 1, 0, false, true));
}

/* ---- one warning per device and attribute */

void dra_warned_free(struct dra_warned *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->keys[i]);
	free(w->keys);
	memset(w, 0, sizeof(*w));
}

/* Warn (fmt) unless device/attr was warned about before. */
static void __attribute__((format(printf, 4, 5)))
warn_once(struct dra_warned *w, const char *device, const char *attr, const char *fmt, ...)
{
	char key[256], msg[512];
	char **keys;
	va_list ap;

	snprintf(key, sizeof(key), "%s/%s", device, attr ? attr : "");
	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(w->keys[i], key))
			return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (w->n == DRA_WARNED_MAX) {
		if (!w->full)
			log_warn("dra: %s (and no further slice warnings: %d shown)", msg,
				 DRA_WARNED_MAX);
		w->full = true;
		return;
	}
	keys = realloc(w->keys, (w->n + 1) * sizeof(*keys));
	if (keys)
		w->keys = keys;
	if (keys && (keys[w->n] = strdup(key)))
		w->n++;
	log_warn("dra: %s", msg);
}

/* ---- the devices as JSON */

/* Why the API would refuse a (NULL: it takes it). */
static const char *refused(const struct dra_attr *a)
{
	if (!a->id || !qualified(a->id))
		return "not a C identifier of at most 32 characters, or <domain>/<identifier>";
	if (a->type != DRA_ATTR_STRING && a->type != DRA_ATTR_VERSION)
		return a->type == DRA_ATTR_INT || a->type == DRA_ATTR_BOOL ? NULL : "no type";
	if (!a->str)
		return "no value";
	if (strlen(a->str) > DRA_ATTR_VALUE_MAX)
		return "longer than the API's 64 bytes";
	if (!utf8(a->str))
		return "not UTF-8";
	if (a->type == DRA_ATTR_VERSION && !semver(a->str))
		return "not a semantic version (semver.org 2.0.0)";
	return NULL;
}

static json_t *value_json(const struct dra_attr *a)
{
	switch (a->type) {
	case DRA_ATTR_INT:
		return json_pack("{s:I}", "int", (json_int_t)a->num);
	case DRA_ATTR_BOOL:
		return json_pack("{s:b}", "bool", a->num != 0);
	case DRA_ATTR_VERSION:
		return json_pack("{s:s}", "version", a->str);
	case DRA_ATTR_STRING:
	default:
		return json_pack("{s:s}", "string", a->str);
	}
}

/* d as a Device: 0 with *out, 1 when d is left out (warned), -ENOMEM (nothing in *out). */
static int device_json(const struct dra_slice_dev *d, struct dra_warned *w, json_t **out)
{
	json_t *attrs = json_object(), *dev = NULL;
	size_t n = 0;

	*out = NULL;
	if (!attrs)
		return -ENOMEM;
	for (size_t i = 0; i < d->n_attrs; i++) {
		const struct dra_attr *a = &d->attrs[i];
		const char *why = refused(a);
		json_t *v;

		if (!why && json_object_get(attrs, a->id))
			why = "given twice";
		if (!why && n == DRA_DEVICE_ATTRS)
			why = "over the API's 32 attributes a device";
		if (why) {
			warn_once(w, d->name, a->id ? a->id : "?",
				  "device %s: attribute %.100s left out: %s", d->name,
				  a->id ? a->id : "(none)", why);
			continue;
		}
		v = value_json(a);
		if (!v || json_object_set_new(attrs, a->id, v) < 0)
			goto nomem; /* set_new took v */
		n++;
	}
	dev = json_pack("{s:s,s:o}", "name", d->name, "attributes", attrs); /* takes attrs */
	if (!dev)
		return -ENOMEM;
	*out = dev;
	return 0;
nomem:
	json_decref(attrs);
	return -ENOMEM;
}

static int by_name(const void *a, const void *b)
{
	const char *x = ((const struct dra_slice_dev *)a)->name,
		   *y = ((const struct dra_slice_dev *)b)->name;

	return strcmp(x ? x : "", y ? y : "");
}

void dra_chunks_free(json_t **chunk, size_t k)
{
	for (size_t i = 0; chunk && i < k; i++)
		json_decref(chunk[i]);
	free(chunk);
}

int dra_slice_build(const struct dra_slice_dev *d, size_t n, struct dra_warned *w, json_t ***out,
		    size_t *out_k, struct log_err *err)
{
	struct dra_slice_dev *sorted = NULL;
	json_t **chunk = NULL;
	size_t k = 0, at = 0;
	int rc = -ENOMEM;

	*out = NULL;
	*out_k = 0;
	if (n > DRA_POOL_DEVICES) {
		warn_once(w, "", NULL, "%zu devices: only the first %d are published", n,
			  DRA_POOL_DEVICES);
		n = DRA_POOL_DEVICES;
	}
	sorted = malloc((n + 1) * sizeof(*sorted));
	if (!sorted)
		goto out;
	if (n)
		memcpy(sorted, d, n * sizeof(*d));
	qsort(sorted, n, sizeof(*sorted), by_name);
	chunk = calloc(n / DRA_SLICE_DEVICES + 1, sizeof(*chunk));
	if (!chunk || !(chunk[k++] = json_array()))
		goto out;
	for (size_t i = 0; i < n; i++) {
		json_t *dev;
		int r;

		const char *name = sorted[i].name ? sorted[i].name : "";

		if (!dra_device_name_ok(name) ||
		    (i && sorted[i - 1].name && !strcmp(name, sorted[i - 1].name))) {
			warn_once(w, name, NULL, "device '%.100s' left out: %s", name,
				  dra_device_name_ok(name)
				      ? "its name is given twice"
				      : "not a DNS label (at most 63 of a-z, 0-9, '-')");
			continue;
		}
		r = device_json(&sorted[i], w, &dev);
		if (r < 0)
			goto out;
		if (at == DRA_SLICE_DEVICES) {
			if (!(chunk[k] = json_array())) {
				json_decref(dev);
				goto out;
			}
			k++;
			at = 0;
		}
		if (json_array_append_new(chunk[k - 1], dev) < 0) /* takes dev */
			goto out;
		at++;
	}
	rc = 0;
	*out = chunk;
	*out_k = k;
	chunk = NULL;
out:
	dra_chunks_free(chunk, k);
	free(sorted);
	if (rc < 0)
		log_err_set(err, rc, "out of memory building the slices (nothing published)");
	return rc;
}
