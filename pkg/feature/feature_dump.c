/* SPDX-License-Identifier: GPL-2.0-or-later */
/* feature: a feature set as NFD's NodeFeature object (spec.features), in YAML or JSON. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "feature/feature.h"
#include "strbuf/strbuf.h"

/*
 * The layout is NFD's api/nfd/v1alpha1 types.go (NodeFeatureSpec.Features):
 *   flags:      <name>: {elements: {<elem>: {}}}           (FlagFeatureSet, map of Nil)
 *   attributes: <name>: {elements: {<key>: <value>}}       (AttributeFeatureSet)
 *   instances:  <name>: {elements: [{attributes: {...}}]}  (InstanceFeatureSet)
 * Map keys sorted, as Go's encoders write maps; instances in the order the source made them.
 */

/* One output: YAML (block style) or JSON (two-space indent). */
struct dump {
	struct strbuf *out;
	enum feat_dump_format fmt;
	int r; /* first error */
};

/* YAML 1.1 words a plain scalar would be read as (bool, null): quoted. */
static bool yaml_reserved(const char *s)
{
	static const char *const words[] = {"y",    "n",     "yes",  "no", "on", "off",
					    "true", "false", "null", "~",  NULL};

	for (size_t i = 0; words[i]; i++)
		if (strcasecmp(s, words[i]) == 0)
			return true;
	return false;
}

/*
 * A YAML scalar is written plain only when it cannot be read as anything but
 * this string: a letter, '_' or '/' first, then letters, digits and "_./-"
 * only, and not a bool/null word. Everything else (numbers, "0300", "",
 * spaces, ':' ...) is double-quoted with JSON's escapes, which YAML reads.
 */
static bool yaml_plain(const char *s)
{
	const char *p = s;

	if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || *p == '/'))
		return false;
	for (; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("_./-", *p)))
			return false;
	}
	return !yaml_reserved(s);
}

static void put(struct dump *d, const char *s)
{
	if (d->r == 0)
		d->r = sb_add(d->out, s);
}

static void put_indent(struct dump *d, int depth)
{
	for (int i = 0; i < depth && d->r == 0; i++)
		d->r = sb_add(d->out, "  ");
}

static void put_str(struct dump *d, const char *s)
{
	if (d->r)
		return;
	d->r = d->fmt == FEAT_DUMP_YAML && yaml_plain(s) ? sb_add(d->out, s)
							 : sb_add_json_str(d->out, s);
}

/*
 * Open key at depth: YAML "key:" then a newline (a nested block follows) or a
 * space (a scalar follows, or "{}"/"[]"); JSON "key": after a comma when not
 * the first member.
 */
static void put_key(struct dump *d, int depth, const char *key, bool first, bool nested)
{
	if (d->fmt == FEAT_DUMP_JSON)
		put(d, first ? "\n" : ",\n");
	put_indent(d, depth);
	put_str(d, key);
	put(d, d->fmt == FEAT_DUMP_JSON ? ": " : nested ? ":\n" : ": ");
}

/* JSON: open a map or list ("{" / "["); YAML: nothing (the block's indent says it). */
static void open_block(struct dump *d, char c)
{
	if (d->fmt == FEAT_DUMP_JSON)
		put(d, c == '{' ? "{" : "[");
}

/* JSON: close it at depth, "{}" / "[]" when empty; YAML: "{}" / "[]" when empty. */
static void close_block(struct dump *d, int depth, char c, bool empty)
{
	if (d->fmt == FEAT_DUMP_JSON) {
		if (!empty) {
			put(d, "\n");
			put_indent(d, depth);
		}
		put(d, c == '{' ? "}" : "]");
		return;
	}
	if (empty)
		put(d, c == '{' ? "{}\n" : "[]\n");
}

/* The "elements" map of flags or attributes (or an instance's "attributes") at depth. */
static void put_elems(struct dump *d, int depth, const struct feat *f, bool flags)
{
	size_t n = feat_nelems(f);

	if (d->fmt == FEAT_DUMP_YAML && n == 0) {
		put(d, "{}\n");
		return;
	}
	open_block(d, '{');
	for (size_t i = 0; i < n; i++) {
		const char *name, *value;

		feat_elem_at(f, i, &name, &value);
		put_key(d, depth, name, i == 0, false);
		if (flags)
			put(d, "{}");
		else
			put_str(d, value);
		if (d->fmt == FEAT_DUMP_YAML)
			put(d, "\n");
	}
	close_block(d, depth - 1, '{', n == 0);
}

/* An instances feature's "elements" list at depth. */
static void put_instances(struct dump *d, int depth, const struct feat *f)
{
	size_t n = feat_ninstances(f);

	if (d->fmt == FEAT_DUMP_YAML && n == 0) {
		put(d, "[]\n");
		return;
	}
	open_block(d, '[');
	for (size_t i = 0; i < n; i++) {
		const struct feat *inst = feat_instance_at(f, i);

		if (d->fmt == FEAT_DUMP_JSON) {
			put(d, i ? ",\n" : "\n");
			put_indent(d, depth);
			put(d, "{\n");
			put_indent(d, depth + 1);
			put(d, "\"attributes\": ");
			put_elems(d, depth + 2, inst, false);
			put(d, "\n");
			put_indent(d, depth);
			put(d, "}");
			continue;
		}
		/* YAML: "- attributes:" then the map two deeper, as kubectl writes it */
		put_indent(d, depth - 1);
		put(d, "- attributes:");
		put(d, feat_nelems(inst) ? "\n" : " ");
		put_elems(d, depth + 1, inst, false);
	}
	close_block(d, depth - 1, '[', n == 0);
}

static bool wanted(const char *name, const char *const *names, size_t n)
{
	size_t len;

	if (n == 0)
		return true;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(name, names[i]) == 0)
			return true;
		/* a bare domain ("pci") names all its features ("pci.device") */
		len = strlen(names[i]);
		if (!strchr(names[i], '.') && strncmp(name, names[i], len) == 0 && name[len] == '.')
			return true;
	}
	return false;
}

static int cmp_feat(const void *a, const void *b)
{
	return strcmp(feat_name(*(const struct feat *const *)a),
		      feat_name(*(const struct feat *const *)b));
}

static const char *const kind_key[] = {"flags", "attributes", "instances"};

int feat_set_dump(const struct feat_set *fs, const char *node, const char *const *names,
		  size_t nnames, enum feat_dump_format fmt, struct strbuf *out)
{
	struct dump d = {.out = out, .fmt = fmt};
	size_t n = feat_set_count(fs), m;
	const struct feat **sorted = calloc(n ? n : 1, sizeof(*sorted));
	/* Go's encoders: a struct's fields in order (NodeFeatureSpec: features, then the
	 * kinds in types.go's order flags, attributes, instances) */
	static const enum feat_kind order[] = {FEAT_FLAGS, FEAT_ATTRS, FEAT_INSTANCES};

	if (!sorted)
		return -ENOMEM;
	if (fmt == FEAT_DUMP_JSON)
		put(&d, "{");
	put_key(&d, 1 - (fmt == FEAT_DUMP_YAML), "apiVersion", true, false);
	put_str(&d, "nfd.k8s-sigs.io/v1alpha1");
	if (fmt == FEAT_DUMP_YAML)
		put(&d, "\n");
	put_key(&d, fmt == FEAT_DUMP_JSON, "kind", false, false);
	put_str(&d, "NodeFeature");
	if (fmt == FEAT_DUMP_YAML)
		put(&d, "\n");
	/* metadata: nfd-worker names its object after the node and labels it with the node */
	put_key(&d, fmt == FEAT_DUMP_JSON, "metadata", false, true);
	open_block(&d, '{');
	put_key(&d, 1 + (fmt == FEAT_DUMP_JSON), "labels", true, true);
	open_block(&d, '{');
	put_key(&d, 2 + (fmt == FEAT_DUMP_JSON), "nfd.node.kubernetes.io/node-name", true, false);
	put_str(&d, node);
	if (fmt == FEAT_DUMP_YAML)
		put(&d, "\n");
	close_block(&d, 2, '{', false);
	put_key(&d, 1 + (fmt == FEAT_DUMP_JSON), "name", false, false);
	put_str(&d, node);
	if (fmt == FEAT_DUMP_YAML)
		put(&d, "\n");
	close_block(&d, 1, '{', false);
	put_key(&d, fmt == FEAT_DUMP_JSON, "spec", false, true);
	open_block(&d, '{');
	put_key(&d, 1 + (fmt == FEAT_DUMP_JSON), "features", true, true);
	open_block(&d, '{');
	for (size_t k = 0; k < 3; k++) {
		int depth = 2 + (fmt == FEAT_DUMP_JSON);

		m = 0;
		for (size_t i = 0; i < n; i++) {
			const struct feat *f = feat_set_at(fs, i);

			if (feat_kind(f) == order[k] && wanted(feat_name(f), names, nnames))
				sorted[m++] = f;
		}
		qsort(sorted, m, sizeof(*sorted), cmp_feat);
		put_key(&d, depth, kind_key[order[k]], k == 0, m > 0);
		if (m == 0) {
			put(&d, "{}");
			if (fmt == FEAT_DUMP_YAML)
				put(&d, "\n");
			continue;
		}
		open_block(&d, '{');
		for (size_t i = 0; i < m; i++) {
			put_key(&d, depth + 1, feat_name(sorted[i]), i == 0, true);
			open_block(&d, '{');
			put_key(&d, depth + 2, "elements", true,
				order[k] == FEAT_INSTANCES ? feat_ninstances(sorted[i]) > 0
							   : feat_nelems(sorted[i]) > 0);
			if (order[k] == FEAT_INSTANCES)
				put_instances(&d, depth + 3, sorted[i]);
			else
				put_elems(&d, depth + 3, sorted[i], order[k] == FEAT_FLAGS);
			close_block(&d, depth + 1, '{', false);
		}
		close_block(&d, depth, '{', false);
	}
	close_block(&d, 2, '{', false);
	close_block(&d, 1, '{', false);
	if (fmt == FEAT_DUMP_JSON)
		put(&d, "\n}\n");
	free(sorted);
	return d.r;
}
