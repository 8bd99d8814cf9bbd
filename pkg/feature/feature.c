/* SPDX-License-Identifier: GPL-2.0-or-later */
/* feature: NFD's raw feature model (flags, attributes, instances) that sources fill and rules read.
 */
#include "feature/feature.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvmap/kvmap.h"

/* A deferred fill (feat_defer), shared by the features it makes. */
struct feat_fill {
	int (*fill)(void *arg, struct feat_set *fs); /* adds the elements */
	void *arg;				     /* fill's argument */
	void (*release)(void *arg);		     /* frees arg, or NULL */
	struct feat_set *fs;			     /* the set fill adds to */
	size_t refs;				     /* features still pointing here */
};

struct feat {
	char *name;		 /* owned; "" for an instance */
	struct feat_fill *defer; /* elements not made yet, or NULL */
	enum feat_kind kind;	 /* fixed at creation */
	struct kvmap e;		 /* elements: name -> value ("" for flags), sorted */
	struct feat **inst;	 /* FEAT_INSTANCES: owned instances */
	size_t ninst, icap;	 /* used, allocated */
};

struct feat_set {
	struct feat **f; /* owned, creation order */
	size_t n, cap;	 /* used, allocated */
	int error;	 /* first error of a deferred fill, or 0 */
};

/* Drop f's reference to its deferred fill; the last one releases the argument. */
static void fill_put(struct feat *f)
{
	struct feat_fill *d = f->defer;

	f->defer = NULL;
	if (!d || --d->refs)
		return;
	if (d->release)
		d->release(d->arg);
	free(d);
}

/* Make f's deferred elements (and those of every feature sharing the fill), once. */
static void fill_now(const struct feat *cf)
{
	struct feat *f = (struct feat *)(uintptr_t)cf; /* every feat is allocated mutable */
	struct feat_fill *d = f->defer;
	struct feat_set *fs;
	size_t i;
	int r;

	if (!d)
		return;
	fs = d->fs;
	/* detach first: fill's own reads (and adds) must not come back here */
	d->refs++;
	for (i = 0; i < fs->n; i++)
		if (fs->f[i]->defer == d)
			fill_put(fs->f[i]);
	r = d->fill(d->arg, fs);
	if (r < 0 && !fs->error)
		fs->error = r;
	f->defer = d;
	fill_put(f);
}

static void feat_free(struct feat *f)
{
	size_t i;

	if (!f)
		return;
	fill_put(f);
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

int feat_defer(struct feat_set *fs, const char *const *features, size_t n,
	       int (*fill)(void *arg, struct feat_set *fs), void *arg, void (*release)(void *arg))
{
	struct feat_fill *d;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct feat *f = feat_get(fs, features[i]);

		if (!f || f->defer)
			return -EINVAL;
	}
	d = n ? calloc(1, sizeof(*d)) : NULL;
	if (!d) {
		if (release)
			release(arg);
		return n ? -ENOMEM : 0;
	}
	d->fill = fill;
	d->arg = arg;
	d->release = release;
	d->fs = fs;
	for (i = 0; i < n; i++) {
		size_t j;

		/* every kind declared under the name (x86 cpu.cpuid: flags and attributes) */
		for (j = 0; j < fs->n; j++) {
			struct feat *f = fs->f[j];

			if (strcmp(f->name, features[i]) != 0 || f->defer == d)
				continue; /* a name given twice counts once */
			f->defer = d;
			d->refs++;
		}
	}
	return 0;
}

bool feat_deferred(const struct feat_set *fs, const char *feature)
{
	const struct feat *f = feat_get(fs, feature);

	return f && f->defer;
}

int feat_set_error(const struct feat_set *fs)
{
	return fs->error;
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
	fill_now(f);
	return f->e.n;
}

void feat_elem_at(const struct feat *f, size_t i, const char **name, const char **value)
{
	fill_now(f);
	*name = f->e.v[i].key;
	*value = f->e.v[i].value;
}

const char *feat_lookup(const struct feat *f, const char *name)
{
	fill_now(f);
	return kvmap_get(&f->e, name);
}

size_t feat_ninstances(const struct feat *f)
{
	fill_now(f);
	return f->ninst;
}

const struct feat *feat_instance_at(const struct feat *f, size_t i)
{
	return f->inst[i];
}
