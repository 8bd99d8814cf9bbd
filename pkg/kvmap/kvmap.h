/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kvmap: a small map of owned strings kept sorted by key (byte order), for labels and features. */
#ifndef NP_KVMAP_H
#define NP_KVMAP_H

#include <stddef.h>

struct kvmap_ent {
	char *key;   /* owned */
	char *value; /* owned */
};

/* Callers read n and v[i]; they never write the fields. Zero-initialised is empty. */
struct kvmap {
	struct kvmap_ent *v; /* sorted by key, unique keys */
	size_t n;	     /* entries used */
	size_t cap;	     /* entries allocated */
};

#define KVMAP_INIT                                                                                 \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/* Index of key, or -(insertion point) - 1 when absent. */
long kvmap_find(const struct kvmap *m, const char *key);
/* The value for key (borrowed, valid until m changes), or NULL. */
const char *kvmap_get(const struct kvmap *m, const char *key);
/* Set key to value (both copied), replacing. Returns 0 or -ENOMEM (m unchanged). */
int kvmap_set(struct kvmap *m, const char *key, const char *value);
/* Remove key. Returns 1 if removed, 0 if absent. */
int kvmap_del(struct kvmap *m, const char *key);
/* Free every entry; m is left empty and reusable. */
void kvmap_free(struct kvmap *m);

#endif
