/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kvmap: a small map of owned strings kept sorted by key (byte order), for labels and features. */
#include "kvmap/kvmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

long kvmap_find(const struct kvmap *m, const char *key)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->v[mid].key, key);

		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

const char *kvmap_get(const struct kvmap *m, const char *key)
{
	long at = kvmap_find(m, key);

	return at >= 0 ? m->v[at].value : NULL;
}

int kvmap_set(struct kvmap *m, const char *key, const char *value)
{
	long at = kvmap_find(m, key);
	char *k = NULL, *v = strdup(value);
	size_t pos;

	if (!v)
		return -ENOMEM;
	if (at >= 0) {
		free(m->v[at].value);
		m->v[at].value = v;
		return 0;
	}
	k = strdup(key);
	if (!k)
		goto nomem;
	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 8;
		struct kvmap_ent *nv = realloc(m->v, ncap * sizeof(*nv));

		if (!nv)
			goto nomem;
		m->v = nv;
		m->cap = ncap;
	}
	pos = (size_t)(-at - 1);
	memmove(&m->v[pos + 1], &m->v[pos], (m->n - pos) * sizeof(*m->v));
	m->v[pos].key = k;
	m->v[pos].value = v;
	m->n++;
	return 0;
nomem:
	free(k);
	free(v);
	return -ENOMEM;
}

int kvmap_del(struct kvmap *m, const char *key)
{
	long at = kvmap_find(m, key);

	if (at < 0)
		return 0;
	free(m->v[at].key);
	free(m->v[at].value);
	memmove(&m->v[at], &m->v[at + 1], (m->n - (size_t)at - 1) * sizeof(*m->v));
	m->n--;
	return 1;
}

void kvmap_free(struct kvmap *m)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		free(m->v[i].key);
		free(m->v[i].value);
	}
	free(m->v);
	m->v = NULL;
	m->n = 0;
	m->cap = 0;
}
