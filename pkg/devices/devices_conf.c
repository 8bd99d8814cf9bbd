/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_conf: device classes from squat's --device values, presets and classes files. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/devices_internal.h"
#include "kubelet/kubelet.h"
#include "log/log.h"
#include "rules/rules.h"
#include "strbuf/strbuf.h"
#include "ydoc/ydoc.h"

/*
 * squat/generic-device-plugin's format (deviceplugin/generic.go, path.go, usb.go; README's
 * Usage): {name, groups: [{paths: [{path, mountPath, permissions, readOnly, type, limit}],
 * usb: [{vendor, product, serial}], count}]}; count and limit default to 1, type to Device,
 * permissions of a Device to "mrw". "usbs" is taken as "usb".
 */

static void group_free(struct dgroup *g)
{
	size_t i;

	for (i = 0; i < g->np; i++) {
		free(g->p[i].path);
		free(g->p[i].mount_path);
	}
	free(g->p);
	for (i = 0; i < g->nu; i++)
		free(g->u[i].serial);
	free(g->u);
	rules_select_free(g->sel);
}

static void class_free(struct dclass *c)
{
	size_t i;

	for (i = 0; i < c->ng; i++)
		group_free(&c->g[i]);
	free(c->g);
	free(c->name);
	free(c->resource);
}

struct devices_classes *devices_classes_new(void)
{
	return calloc(1, sizeof(struct devices_classes));
}

void devices_classes_free(struct devices_classes *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++)
		class_free(&c->c[i]);
	free(c->c);
	free(c);
}

size_t devices_classes_count(const struct devices_classes *c)
{
	return c->n;
}

const char *devices_class_name(const struct devices_classes *c, size_t i)
{
	return c->c[i].name;
}

const char *devices_class_resource(const struct devices_classes *c, size_t i)
{
	return c->c[i].resource;
}

enum devices_policy devices_class_policy(const struct devices_classes *c, size_t i)
{
	return c->c[i].policy;
}

int devices_policy_parse(const char *s, enum devices_policy *p)
{
	static const char *const names[] = {"none", "balanced", "packed"};
	size_t i;

	for (i = 0; i < 3; i++) {
		if (!strcmp(s, names[i])) {
			*p = (enum devices_policy)i;
			return 0;
		}
	}
	return -EINVAL;
}

static void *grow(void *arr_p, size_t *n, size_t sz)
{
	void **arr = arr_p;
	char *a = realloc(*arr, (*n + 1) * sz);

	if (!a)
		return NULL;
	memset(a + *n * sz, 0, sz);
	*arr = a;
	return a + (*n)++ * sz;
}

/* A class name: a DNS label (it is a resource name and a CDI class). */
static bool name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

static struct dclass *class_add(struct devices_classes *c, const char *name, const char *resource,
				const char *domain, struct log_err *err)
{
	struct dclass *k;
	char res[320];
	size_t i;

	if (!name_ok(name)) {
		log_err_set(
		    err, -EINVAL,
		    "class name '%s': want 1-63 letters, digits, '-', '_', '.' (a DNS label)",
		    name);
		return NULL;
	}
	if (!resource) {
		const char *why;

		snprintf(res, sizeof(res), "%s/%s", domain, name);
		why = strlen(domain) > 253 ? "the domain is longer than 253 characters"
					   : kubelet_resource_why(res);
		if (why) {
			log_err_set(err, -EINVAL, "--domain '%s' with class '%s': %s", domain, name,
				    why);
			return NULL;
		}
		resource = res;
	}
	for (i = 0; i < c->n; i++) {
		if (!strcmp(c->c[i].name, name) || !strcmp(c->c[i].resource, resource)) {
			log_err_set(err, -EINVAL, "class '%s' (%s) given twice", name, resource);
			return NULL;
		}
	}
	if (c->n >= DEVICES_CLASSES_MAX) {
		log_err_set(err, -E2BIG, "more than %d classes", DEVICES_CLASSES_MAX);
		return NULL;
	}
	k = grow(&c->c, &c->n, sizeof(*k));
	if (k) {
		k->name = strdup(name);
		k->resource = strdup(resource);
	}
	if (!k || !k->name || !k->resource) {
		log_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	return k;
}

/* ------------------------------------------------------------ values */

static int want_text(struct ydoc *y, const yaml_node_t *n, const char *what, const char **out)
{
	*out = ydoc_scalar(n);
	if (!*out)
		return ydoc_fail(y, n, "%s: want a string, not %s", what, ydoc_kind(n));
	return 0;
}

static int want_uint(struct ydoc *y, const yaml_node_t *n, const char *what, unsigned max,
		     unsigned *out)
{
	const char *s = ydoc_scalar(n);
	char *end;
	unsigned long v;

	if (!s || !isdigit((unsigned char)s[0]))
		return ydoc_fail(y, n, "%s: want a whole number", what);
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end || errno || v > max)
		return ydoc_fail(y, n, "%s: want a whole number up to %u, not '%s'", what, max, s);
	*out = v ? (unsigned)v : 1; /* squat: 0 or unset is 1 */
	return 0;
}

static int want_perms(struct ydoc *y, const yaml_node_t *n, char out[4])
{
	const char *s;
	size_t i;
	int r = want_text(y, n, "permissions", &s);

	if (r < 0)
		return r;
	memset(out, 0, 4);
	for (i = 0; s[i]; i++) {
		char *at = strchr("rwm", s[i]);

		if (!at || !s[i])
			return ydoc_fail(y, n, "permissions '%s': want letters of \"rwm\"", s);
		if (!strchr(out, s[i]))
			out[strlen(out)] = s[i];
	}
	if (!out[0])
		return ydoc_fail(y, n, "permissions: empty");
	return 0;
}

static int want_bool(struct ydoc *y, const yaml_node_t *n, const char *what, bool *out)
{
	const char *s = ydoc_scalar(n);

	if (s && (!strcmp(s, "true") || !strcmp(s, "false"))) {
		*out = s[0] == 't';
		return 0;
	}
	return ydoc_fail(y, n, "%s: want true or false", what);
}

/* Each key of mapping m is one of allowed: else -EINVAL naming it. */
static int only_keys(struct ydoc *y, const yaml_node_t *m, const char *const *allowed,
		     const char *what)
{
	const yaml_node_pair_t *p;
	int r;

	if (!m || m->type != YAML_MAPPING_NODE)
		return ydoc_fail(y, m, "%s: want a mapping, not %s", what, ydoc_kind(m));
	r = ydoc_check_map(y, m);
	if (r < 0)
		return r;
	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *k = ydoc_scalar(ydoc_node(y, p->key));
		size_t i;

		for (i = 0; allowed[i] && strcmp(allowed[i], k); i++)
			;
		if (!allowed[i])
			return ydoc_fail(y, ydoc_node(y, p->key), "%s: unknown field '%s'", what,
					 k);
	}
	return 0;
}

static int want_seq(struct ydoc *y, const yaml_node_t *n, const char *what, size_t max)
{
	size_t len;

	if (!n || n->type != YAML_SEQUENCE_NODE)
		return ydoc_fail(y, n, "%s: want a list, not %s", what, ydoc_kind(n));
	len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (len > max)
		return ydoc_fail(y, n, "%s: more than %zu entries", what, max);
	return (int)len;
}

/* ------------------------------------------------------------ squat's groups */

static int parse_path(struct ydoc *y, const yaml_node_t *n, struct dpath *p)
{
	static const char *const keys[] = {"path", "mountPath", "permissions", "readOnly",
					   "type", "limit",	NULL};
	const yaml_node_t *v;
	const char *s;
	int r = only_keys(y, n, keys, "path");

	if (r < 0)
		return r;
	strcpy(p->perms, "mrw");
	p->limit = 1;
	v = ydoc_get(y, n, "path");
	if (!v)
		return ydoc_fail(y, n, "path: 'path' is required");
	if ((r = want_text(y, v, "path", &s)) < 0)
		return r;
	if (!dpath_host_ok(s))
		return ydoc_fail(y, v, "path '%s': %s", s, DPATH_WANT);
	p->path = strdup(s);
	if ((v = ydoc_get(y, n, "mountPath")) && !ydoc_is_null(v)) {
		if ((r = want_text(y, v, "mountPath", &s)) < 0)
			return r;
		if (s[0] && s[0] != '/')
			return ydoc_fail(y, v, "mountPath '%s': want an absolute path", s);
		p->mount_path = s[0] ? strdup(s) : NULL;
	}
	if ((v = ydoc_get(y, n, "permissions")) && (r = want_perms(y, v, p->perms)) < 0)
		return r;
	if ((v = ydoc_get(y, n, "readOnly")) &&
	    (r = want_bool(y, v, "readOnly", &p->read_only)) < 0)
		return r;
	if ((v = ydoc_get(y, n, "limit")) &&
	    (r = want_uint(y, v, "limit", DEVICES_COUNT_MAX, &p->limit)) < 0)
		return r;
	if ((v = ydoc_get(y, n, "type"))) {
		if ((r = want_text(y, v, "type", &s)) < 0)
			return r;
		if (strcmp(s, "Device") && strcmp(s, "Mount") && s[0])
			return ydoc_fail(y, v, "type '%s': want Device or Mount", s);
		p->mount = !strcmp(s, "Mount");
	}
	return p->path ? 0 : log_err_set(y->err, -ENOMEM, "out of memory");
}

static int parse_hex16(struct ydoc *y, const yaml_node_t *n, const char *what, unsigned *out)
{
	const char *s = ydoc_scalar(n);
	char *end;
	unsigned long v;

	if (!s || !s[0] || !isxdigit((unsigned char)s[0]))
		return ydoc_fail(y, n, "%s: want a hex ID such as \"0403\"", what);
	v = strtoul(s, &end, 16);
	if (*end || v > 0xffff)
		return ydoc_fail(y, n, "%s '%s': want a hex ID up to ffff", what, s);
	*out = (unsigned)v;
	return 0;
}

static int parse_usb(struct ydoc *y, const yaml_node_t *n, struct dusb *u)
{
	static const char *const keys[] = {"vendor", "product", "serial", NULL};
	const yaml_node_t *v;
	const char *s;
	int r = only_keys(y, n, keys, "usb");

	if (r < 0)
		return r;
	if (!(v = ydoc_get(y, n, "vendor")) || (r = parse_hex16(y, v, "vendor", &u->vendor)) < 0)
		return v ? r : ydoc_fail(y, n, "usb: 'vendor' is required");
	if (!(v = ydoc_get(y, n, "product")) || (r = parse_hex16(y, v, "product", &u->product)) < 0)
		return v ? r : ydoc_fail(y, n, "usb: 'product' is required");
	if ((v = ydoc_get(y, n, "serial")) && !ydoc_is_null(v)) {
		if ((r = want_text(y, v, "serial", &s)) < 0)
			return r;
		if (s[0] && !(u->serial = strdup(s)))
			return log_err_set(y->err, -ENOMEM, "out of memory");
	}
	return 0;
}

static int parse_group(struct ydoc *y, const yaml_node_t *n, struct dgroup *g)
{
	static const char *const keys[] = {"paths", "usb", "usbs", "count", NULL};
	const yaml_node_t *paths, *usb, *v;
	yaml_node_item_t *it;
	int r = only_keys(y, n, keys, "group");

	if (r < 0)
		return r;
	g->count = 1;
	if ((v = ydoc_get(y, n, "count")) &&
	    (r = want_uint(y, v, "count", DEVICES_COUNT_MAX, &g->count)) < 0)
		return r;
	paths = ydoc_get(y, n, "paths");
	usb = ydoc_get(y, n, "usb");
	if (!usb)
		usb = ydoc_get(y, n, "usbs");
	if (paths && ydoc_is_null(paths))
		paths = NULL;
	if (usb && ydoc_is_null(usb))
		usb = NULL;
	if (!!paths == !!usb) /* squat: "You cannot define both in the same group." */
		return ydoc_fail(y, n, "group: want either 'paths' or 'usb'");
	g->kind = paths ? G_PATHS : G_USB;
	r = want_seq(y, paths ? paths : usb, paths ? "paths" : "usb", DEVICES_PATHS_MAX);
	if (r < 0)
		return r;
	if (!r)
		return ydoc_fail(y, n, "group: '%s' is empty", paths ? "paths" : "usb");
	for (it = (paths ? paths : usb)->data.sequence.items.start;
	     it < (paths ? paths : usb)->data.sequence.items.top; it++) {
		if (paths) {
			struct dpath *p = grow(&g->p, &g->np, sizeof(*p));

			r = p ? parse_path(y, ydoc_node(y, *it), p) : -ENOMEM;
		} else {
			struct dusb *u = grow(&g->u, &g->nu, sizeof(*u));

			r = u ? parse_usb(y, ydoc_node(y, *it), u) : -ENOMEM;
		}
		if (r == -ENOMEM)
			log_err_set(y->err, r, "out of memory");
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_groups(struct ydoc *y, const yaml_node_t *n, struct dclass *k)
{
	yaml_node_item_t *it;
	int r = want_seq(y, n, "groups", DEVICES_GROUPS_MAX);

	if (r < 0)
		return r;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		struct dgroup *g = grow(&k->g, &k->ng, sizeof(*g));

		if (!g)
			return log_err_set(y->err, -ENOMEM, "out of memory");
		r = parse_group(y, ydoc_node(y, *it), g);
		if (r < 0)
			return r;
	}
	return 0;
}

/* One squat device spec (a mapping) into a new class. */
static int parse_squat(struct devices_classes *c, struct ydoc *y, const yaml_node_t *root,
		       const char *domain)
{
	static const char *const keys[] = {"name", "groups", "count", NULL};
	const yaml_node_t *v;
	struct dclass *k;
	const char *name;
	int r = only_keys(y, root, keys, "device");

	if (r < 0)
		return r;
	if (!(v = ydoc_get(y, root, "name")))
		return ydoc_fail(y, root, "device: 'name' is required");
	if ((r = want_text(y, v, "name", &name)) < 0)
		return r;
	if (ydoc_get(y, root, "count")) /* in squat's help text, but not in its DeviceSpec */
		log_warn(
		    "%s: device '%s': a top-level 'count' is ignored, as squat ignores it; set it "
		    "per group",
		    y->file, name);
	if (!(v = ydoc_get(y, root, "groups")))
		return ydoc_fail(y, root, "device '%s': 'groups' is required", name);
	k = class_add(c, name, NULL, domain, y->err);
	if (!k)
		return y->err ? y->err->code : -EINVAL;
	k->squat_ids = true;
	r = parse_groups(y, v, k);
	if (r < 0) {
		class_free(k);
		c->n--;
	}
	return r;
}

/* squat's older form: "<name>,<path>,<path>...", each path its own group. */
static int parse_comma(struct devices_classes *c, const char *arg, const char *domain,
		       struct log_err *err)
{
	char *dup = strdup(arg), *save = NULL, *tok, *name;
	struct dclass *k;
	int r = 0;

	if (!dup)
		return log_err_set(err, -ENOMEM, "out of memory");
	name = strtok_r(dup, ",", &save);
	k = name ? class_add(c, name, NULL, domain, err) : NULL;
	if (!k) {
		free(dup);
		return name ? err->code : log_err_set(err, -EINVAL, "empty");
	}
	k->squat_ids = true;
	while (!r && (tok = strtok_r(NULL, ",", &save))) {
		struct dgroup *g =
		    k->ng < DEVICES_GROUPS_MAX ? grow(&k->g, &k->ng, sizeof(*g)) : NULL;
		struct dpath *p = g ? grow(&g->p, &g->np, sizeof(*p)) : NULL;

		if (!dpath_host_ok(tok))
			r = log_err_set(err, -EINVAL, "path '%s': %s", tok, DPATH_WANT);
		else if (!p || !(p->path = strdup(tok)))
			r = log_err_set(err, -ENOMEM, "out of memory (or more than %d paths)",
					DEVICES_GROUPS_MAX);
		if (r)
			break;
		g->kind = G_PATHS;
		g->count = 1;
		strcpy(p->perms, "mrw");
		p->limit = 1;
	}
	if (!r && !k->ng)
		r = log_err_set(err, -EINVAL, "'%s': no path after the name", arg);
	if (r) {
		class_free(k);
		c->n--;
	}
	free(dup);
	return r;
}

int devices_add_squat(struct devices_classes *c, const char *arg, const char *domain,
		      struct log_err *err)
{
	const char *s = arg;
	struct ydoc y;
	int r;

	if (!domain)
		domain = DEVICES_DOMAIN_DEFAULT;
	if (strlen(arg) > DEVICES_ARG_MAX)
		return log_err_set(err, -E2BIG, "--device: more than %d bytes", DEVICES_ARG_MAX);
	while (isspace((unsigned char)*s))
		s++;
	if (*s != '{' && !strchr(s, '\n') && !strstr(s, ": ")) {
		r = parse_comma(c, s, domain, err);
		return r < 0 ? log_err_wrap(err, "--device '%s'", arg) : 0;
	}
	r = ydoc_load(&y, "--device", arg, strlen(arg), err);
	if (r < 0)
		return r;
	r = parse_squat(c, &y, ydoc_root(&y), domain);
	ydoc_free(&y);
	return r;
}

/* ------------------------------------------------------------ presets */

struct preset {
	const char *name;
	const char *squat; /* the class as a squat device spec, or NULL for a GPU class */
};

/* Shared nodes (kvm, tun, fuse, snd) get count 10, as squat's example fuse and audio groups. */
static const struct preset presets[] = {
    {"kvm", "{name: kvm, groups: [{count: 10, paths: [{path: /dev/kvm, permissions: rw}]}]}"},
    {"tun", "{name: tun, groups: [{count: 10, paths: [{path: /dev/net/tun, permissions: rw}]}]}"},
    {"fuse", "{name: fuse, groups: [{count: 10, paths: [{path: /dev/fuse, permissions: rw}]}]}"},
    {"serial", "{name: serial, groups: [{paths: [{path: '/dev/ttyUSB*', permissions: rw}]},"
	       " {paths: [{path: '/dev/ttyACM*', permissions: rw}]}]}"},
    {"video", "{name: video, groups: [{paths: [{path: '/dev/video*', permissions: rw}]}]}"},
    {"snd", "{name: snd, groups: [{count: 10, paths: [{path: /dev/snd, permissions: rw}]}]}"},
    {"dri", NULL},
    {"intel-gpu", NULL},
};

int devices_add_preset(struct devices_classes *c, const char *name, const char *domain,
		       const struct devices_preset_opts *o, struct log_err *err)
{
	const struct preset *p = NULL;
	struct dclass *k;
	struct dgroup *g;
	size_t i;
	int r;

	if (!domain)
		domain = DEVICES_DOMAIN_DEFAULT;
	for (i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (!strcmp(presets[i].name, name))
			p = &presets[i];
	if (!p)
		return log_err_set(err, -EINVAL,
				   "--preset '%s': want kvm, tun, fuse, serial, video, snd, dri or "
				   "intel-gpu",
				   name);
	if (p->squat) {
		r = devices_add_squat(c, p->squat, domain, err);
		if (r < 0)
			return r;
		c->c[c->n - 1].squat_ids = false;
		return 0;
	}
	/* Intel's plugin: resource gpu.intel.com/i915, shares card0-0..card0-(N-1) */
	k = class_add(c, !strcmp(name, "dri") ? "dri" : "i915",
		      !strcmp(name, "dri") ? NULL : "gpu.intel.com/i915", domain, err);
	if (!k)
		return err ? err->code : -EINVAL;
	g = grow(&k->g, &k->ng, sizeof(*g));
	if (!g)
		return log_err_set(err, -ENOMEM, "out of memory");
	g->kind = G_GPU;
	g->count = 1;
	strcpy(g->perms, "rw");
	if (strcmp(name, "dri")) {
		strcpy(g->gpu_vendor, "0x8086");
		g->count = o && o->shared_dev_num ? o->shared_dev_num : 1;
		if (g->count > DEVICES_COUNT_MAX)
			return log_err_set(err, -E2BIG, "--shared-dev-num %u: more than %d",
					   g->count, DEVICES_COUNT_MAX);
		k->policy = o ? o->policy : DEVICES_POLICY_NONE;
	}
	return 0;
}

/* ------------------------------------------------------------ classes files */

static int parse_select(struct ydoc *y, const yaml_node_t *mf, struct dgroup *g)
{
	const yaml_node_t *t;
	const char *f = NULL;
	yaml_node_item_t *it;
	int r = want_seq(y, mf, "matchFeatures", DEVICES_PATHS_MAX);

	if (r < 0)
		return r;
	for (it = mf->data.sequence.items.start; it < mf->data.sequence.items.top; it++) {
		t = ydoc_node(y, *it);
		t = t && t->type == YAML_MAPPING_NODE ? ydoc_get(y, t, "feature") : NULL;
		f = ydoc_scalar(t);
		if (f && (!strcmp(f, "usb.device") || !strcmp(f, "pci.device")))
			break;
		f = NULL;
	}
	if (!f)
		return ydoc_fail(y, mf, "matchFeatures: want a term on usb.device or pci.device");
	g->kind = !strcmp(f, "usb.device") ? G_SELECT_USB : G_SELECT_PCI;
	for (it = mf->data.sequence.items.start; it < mf->data.sequence.items.top; it++) {
		t = ydoc_node(y, *it);
		t = t && t->type == YAML_MAPPING_NODE ? ydoc_get(y, t, "feature") : NULL;
		if (ydoc_scalar(t) &&
		    !strcmp(ydoc_scalar(t), g->kind == G_SELECT_USB ? "pci.device" : "usb.device"))
			return ydoc_fail(y, t,
					 "matchFeatures: terms on both usb.device and "
					 "pci.device; one class selects one of them");
	}
	return rules_select_parse(y, mf, &g->sel, y->err);
}

/* A preset's class, built apart (the preset's own name must not clash), renamed to
 * metadata.name, its resource checked, then the duplicate check against c, at node at. */
static int preset_class(struct devices_classes *c, struct ydoc *y, const yaml_node_t *at,
			const char *preset, const char *name, const char *resource,
			const char *domain, const struct devices_preset_opts *po,
			const unsigned *count)
{
	struct devices_classes tmp = {0};
	struct dclass *k, *dst = NULL;
	char res[320];
	int r = devices_add_preset(&tmp, preset, domain, po, y->err);

	if (r < 0)
		return r == -ENOMEM ? r
				    : ydoc_fail(y, at, "%s", y->err ? y->err->msg : "bad preset");
	k = &tmp.c[0];
	for (size_t i = 0; count && i < k->ng; i++)
		k->g[i].count = *count; /* a class's count replaces the preset's */
	snprintf(res, sizeof(res), "%s/%s", domain, name);
	free(k->name);
	k->name = strdup(name);
	if (resource || strcmp(preset, "intel-gpu")) {
		free(k->resource);
		k->resource = strdup(resource ? resource : res);
	}
	if (!k->name || !k->resource)
		r = log_err_set(y->err, -ENOMEM, "out of memory");
	else if (kubelet_resource_why(k->resource))
		r = ydoc_fail(y, at, "resource '%s': %s", k->resource,
			      kubelet_resource_why(k->resource));
	for (size_t i = 0; r >= 0 && i < c->n; i++)
		if (!strcmp(c->c[i].name, k->name) || !strcmp(c->c[i].resource, k->resource))
			r = ydoc_fail(y, at, "class '%s' (%s) given twice", k->name, k->resource);
	if (r >= 0 && c->n >= DEVICES_CLASSES_MAX)
		r = ydoc_fail(y, at, "more than %d classes", DEVICES_CLASSES_MAX);
	if (r >= 0 && !(dst = grow(&c->c, &c->n, sizeof(*dst))))
		r = log_err_set(y->err, -ENOMEM, "out of memory");
	if (dst)
		*dst = *k; /* moved */
	else
		class_free(k);
	free(tmp.c);
	return r < 0 ? r : 0;
}

static int parse_class_doc(struct devices_classes *c, struct ydoc *y, const char *domain)
{
	static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", NULL};
	static const char *const spec_keys[] = {
	    "preset",	   "groups",	   "matchFeatures",    "resource", "count",
	    "permissions", "sharedDevNum", "allocationPolicy", "api",	   NULL};
	const yaml_node_t *root = ydoc_root(y), *v, *spec, *md;
	const char *s, *name, *resource = NULL;
	struct devices_preset_opts po = {0};
	struct dclass *k;
	unsigned count = 1;
	int r;

	if (!root)
		return 0;
	if ((r = only_keys(y, root, top, "document")) < 0)
		return r;
	if (!(v = ydoc_get(y, root, "apiVersion")) || !ydoc_scalar(v) ||
	    strcmp(ydoc_scalar(v), "nodeprobe.io/v1alpha1"))
		return ydoc_fail(y, root, "want apiVersion: nodeprobe.io/v1alpha1");
	if (!(v = ydoc_get(y, root, "kind")) || !ydoc_scalar(v) ||
	    strcmp(ydoc_scalar(v), "DeviceClass"))
		return ydoc_fail(y, root, "want kind: DeviceClass");
	md = ydoc_get(y, root, "metadata");
	v = md && md->type == YAML_MAPPING_NODE ? ydoc_get(y, md, "name") : NULL;
	if (!v || (r = want_text(y, v, "metadata.name", &name)) < 0)
		return v ? r : ydoc_fail(y, root, "metadata.name is required");
	spec = ydoc_get(y, root, "spec");
	if ((r = only_keys(y, spec, spec_keys, "spec")) < 0)
		return r;
	if ((v = ydoc_get(y, spec, "resource")) && (r = want_text(y, v, "resource", &resource)) < 0)
		return r;
	if ((v = ydoc_get(y, spec, "count")) &&
	    (r = want_uint(y, v, "count", DEVICES_COUNT_MAX, &count)) < 0)
		return r;
	if ((v = ydoc_get(y, spec, "sharedDevNum")) &&
	    (r = want_uint(y, v, "sharedDevNum", DEVICES_COUNT_MAX, &po.shared_dev_num)) < 0)
		return r;
	if ((v = ydoc_get(y, spec, "allocationPolicy"))) {
		if ((r = want_text(y, v, "allocationPolicy", &s)) < 0)
			return r;
		if (devices_policy_parse(s, &po.policy) < 0)
			return ydoc_fail(y, v,
					 "allocationPolicy '%s': want none, balanced or packed", s);
	}
	if (resource && kubelet_resource_why(resource))
		return ydoc_fail(y, ydoc_get(y, spec, "resource"), "resource '%s': %s", resource,
				 kubelet_resource_why(resource));
	if ((v = ydoc_get(y, spec, "preset"))) {
		if ((r = want_text(y, v, "preset", &s)) < 0)
			return r;
		if (!name_ok(name))
			return ydoc_fail(y, md, "metadata.name '%s': not a DNS label", name);
		return preset_class(c, y, v, s, name, resource, domain, &po,
				    ydoc_get(y, spec, "count") ? &count : NULL);
	}
	k = class_add(c, name, resource, domain, y->err);
	if (!k)
		return ydoc_fail(y, root, "%s", y->err ? y->err->msg : "bad class");
	k->policy = po.policy;
	if ((v = ydoc_get(y, spec, "groups"))) {
		k->squat_ids = true;
		r = parse_groups(y, v, k);
	} else if ((v = ydoc_get(y, spec, "matchFeatures"))) {
		struct dgroup *g = grow(&k->g, &k->ng, sizeof(*g));

		r = g ? parse_select(y, v, g) : log_err_set(y->err, -ENOMEM, "out of memory");
		if (g) {
			g->count = count;
			strcpy(g->perms, "rw");
			if ((v = ydoc_get(y, spec, "permissions")) && r >= 0)
				r = want_perms(y, v, g->perms);
		}
	} else {
		r = ydoc_fail(y, spec, "spec: want one of preset, groups, matchFeatures");
	}
	if (r < 0) {
		class_free(k);
		c->n--;
	}
	return r;
}

int devices_load_file(struct devices_classes *c, const char *path, const char *domain,
		      struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(DEVICES_FILE_MAX);
	struct ydoc_stream st;
	struct ydoc y;
	size_t before = c->n;
	int r;

	if (!domain)
		domain = DEVICES_DOMAIN_DEFAULT;
	r = sb_read_file(&sb, path);
	if (r < 0) {
		sb_free(&sb);
		return log_err_set(err, r, "%s: %s%s", path, strerror(-r),
				   r == -E2BIG ? " (more than 1 MiB)" : "");
	}
	r = ydoc_stream_open(&st, path, sb.buf, sb.len, err);
	if (r < 0) {
		sb_free(&sb);
		return r;
	}
	while ((r = ydoc_stream_next(&st, &y)) > 0) {
		r = devices_api_doc(c, &y, domain, parse_class_doc); /* + spec.api */
		ydoc_free(&y);
		if (r < 0)
			break;
	}
	ydoc_stream_close(&st);
	sb_free(&sb);
	return r < 0 ? r : (int)(c->n - before);
}
