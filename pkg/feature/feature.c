/* SPDX-License-Identifier: GPL-2.0-or-later */
/* feature: NFD's raw feature model (flags, attributes, instances) that sources fill and rules read.
 */
#include "feature/feature.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kvmap/kvmap.h"

struct feat {
	char *name;	     /* owned; "" for an instance */
	enum feat_kind kind; /* fixed at creation */
	struct kvmap e;	     /* elements: name -> value ("" for flags), sorted */
	struct feat **inst;  /* FEAT_INSTANCES: owned instances */
	size_t ninst, icap;  /* used, allocated */
};

struct feat_set {
	struct feat **f; /* owned, creation order */
	size_t n, cap;	 /* used, allocated */
};

static void feat_free(struct feat *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->ninst; i++)
		feat_free(f->inst[i]);
	kvmap_free(&f->e);
	free(f->inst);
	free(f->name);
	free(f);
}

static struct feat *feat_new(const char *name, enum feat_kind kind)
{
	struct feat *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->name = strdup(name);
	if (!f->name) {
		free(f);
		return NULL;
	}
	f->kind = kind;
	return f;
}

struct feat_set *feat_set_new(void)
{
	return calloc(1, sizeof(struct feat_set));
}

void feat_set_free(struct feat_set *fs)
{
	size_t i;

	if (!fs)
		return;
	for (i = 0; i < fs->n; i++)
		feat_free(fs->f[i]);
	free(fs->f);
	free(fs);
}

const struct feat *feat_get(const struct feat_set *fs, const char *feature)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		if (strcmp(fs->f[i]->name, feature) == 0)
			return fs->f[i];
	return NULL;
}

const struct feat *feat_get_kind(const struct feat_set *fs, const char *feature,
				 enum feat_kind kind)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		if (fs->f[i]->kind == kind && strcmp(fs->f[i]->name, feature) == 0)
			return fs->f[i];
	return NULL;
}

/* Find or create feature of kind; NULL with *r set on failure. */
static struct feat *get_or_add(struct feat_set *fs, const char *feature, enum feat_kind kind,
			       int *r)
{
	struct feat *f = (struct feat *)feat_get_kind(fs, feature, kind);

	if (f)
		return f;
	if (fs->n == fs->cap) {
		size_t ncap = fs->cap ? fs->cap * 2 : 8;
		struct feat **nf = realloc(fs->f, ncap * sizeof(*nf));

		if (!nf) {
			*r = -ENOMEM;
			return NULL;
		}
		fs->f = nf;
		fs->cap = ncap;
	}
	f = feat_new(feature, kind);
	if (!f) {
		*r = -ENOMEM;
		return NULL;
	}
	fs->f[fs->n++] = f;
	return f;
}

int feat_declare(struct feat_set *fs, const char *feature, enum feat_kind kind)
{
	int r = 0;

	return get_or_add(fs, feature, kind, &r) ? 0 : r;
}

int feat_flag_add(struct feat_set *fs, const char *feature, const char *name)
{
	int r = 0;
	struct feat *f = get_or_add(fs, feature, FEAT_FLAGS, &r);

	return f ? kvmap_set(&f->e, name, "") : r;
}

int feat_attr_set(struct feat_set *fs, const char *feature, const char *key, const char *value)
{
	int r = 0;
	struct feat *f = get_or_add(fs, feature, FEAT_ATTRS, &r);

	return f ? kvmap_set(&f->e, key, value) : r;
}

struct feat *feat_instance_add(struct feat_set *fs, const char *feature)
{
	int r = 0;
	struct feat *f = get_or_add(fs, feature, FEAT_INSTANCES, &r);
	struct feat *inst;

	if (!f)
		return NULL;
	if (f->ninst == f->icap) {
		size_t ncap = f->icap ? f->icap * 2 : 8;
		struct feat **ni = realloc(f->inst, ncap * sizeof(*ni));

		if (!ni)
			return NULL;
		f->inst = ni;
		f->icap = ncap;
	}
	inst = feat_new("", FEAT_ATTRS);
	if (!inst)
		return NULL;
	f->inst[f->ninst++] = inst;
	return inst;
}

int feat_instance_set(struct feat *inst, const char *key, const char *value)
{
	return kvmap_set(&inst->e, key, value);
}

size_t feat_set_count(const struct feat_set *fs)
{
	return fs->n;
}

const struct feat *feat_set_at(const struct feat_set *fs, size_t i)
{
	return fs->f[i];
}

const char *feat_name(const struct feat *f)
{
	return f->name;
}

enum feat_kind feat_kind(const struct feat *f)
{
	return f->kind;
}

size_t feat_nelems(const struct feat *f)
{
	return f->e.n;
}

void feat_elem_at(const struct feat *f, size_t i, const char **name, const char **value)
{
	*name = f->e.v[i].key;
	*value = f->e.v[i].value;
}

const char *feat_lookup(const struct feat *f, const char *name)
{
	return kvmap_get(&f->e, name);
}

size_t feat_ninstances(const struct feat *f)
{
	return f->ninst;
}

const struct feat *feat_instance_at(const struct feat *f, size_t i)
{
	return f->inst[i];
}
