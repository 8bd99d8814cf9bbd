/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_deepeq: reflect.DeepEqual of two values, linear in shared structure as Go's is. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

/*
 * reflect.DeepEqual's walk (golang/go src/reflect/deepequal.go, deepValueEqual: its visited
 * map of visit{a1, a2, typ} for the "hard" kinds): a list or map met again as the same pair
 * is equal (Go's visited map of "hard" kinds: Map, Slice, Interface, Pointer), and one compared
 * with itself is equal (its UnsafePointer shortcut), so a DAG of shared lists costs its pairs, not
 * its tree, and a cycle ends. Every node (4 units) and string byte compared is work on the
 * arena's budget.
 */
struct deq {
	struct gotmpl_arena *a;
	const struct gotmpl_val **seen; /* pairs, two slots each; NULL slots free */
	size_t cap;			/* pairs the table holds (a power of two, or 0) */
	size_t n;			/* pairs in it */
	int depth;			/* the walk's nesting (the C stack) */
};

#define DEQ_SEEN_MAX ((size_t)1 << 18) /* pairs remembered (4 MiB); past it, walked again */

/* Whether the pair (x, y) was met before; remembered when not. */
static int deq_seen(struct deq *d, const struct gotmpl_val *x, const struct gotmpl_val *y)
{
	const struct gotmpl_val *t;
	size_t h, i;

	if ((uintptr_t)x > (uintptr_t)y) { /* Go canonicalizes the order too */
		t = x;
		x = y;
		y = t;
	}
	if (d->n * 2 >= d->cap && d->cap < DEQ_SEEN_MAX) {
		size_t cap = d->cap ? 2 * d->cap : 64;
		const struct gotmpl_val **n = calloc(cap * 2, sizeof(*n));

		if (n) {
			for (i = 0; i < d->cap; i++) {
				if (!d->seen[2 * i])
					continue;
				h = (((uintptr_t)d->seen[2 * i] >> 4) * 31 +
				     ((uintptr_t)d->seen[2 * i + 1] >> 4)) &
				    (cap - 1);
				while (n[2 * h])
					h = (h + 1) & (cap - 1);
				n[2 * h] = d->seen[2 * i];
				n[2 * h + 1] = d->seen[2 * i + 1];
			}
			free(d->seen);
			d->seen = n;
			d->cap = cap;
		}
	}
	if (!d->cap || d->n * 4 >= d->cap * 3) /* full: walk it again rather than remember */
		return 0;
	h = (((uintptr_t)x >> 4) * 31 + ((uintptr_t)y >> 4)) & (d->cap - 1);
	for (; d->seen[2 * h]; h = (h + 1) & (d->cap - 1))
		if (d->seen[2 * h] == x && d->seen[2 * h + 1] == y)
			return 1;
	d->seen[2 * h] = x;
	d->seen[2 * h + 1] = y;
	d->n++;
	return 0;
}

/* 1 equal, 0 not, -ELOOP the work budget or the nesting limit passed. */
static int deq(struct deq *d, const struct gotmpl_val *a, const struct gotmpl_val *b)
{
	size_t i;
	int r = 1;

	if (gotmpl_work(d->a, 4)) /* a node: about 20 ns, as 4 bytes of the cheapest work */
		return -ELOOP;
	if (a->kind != b->kind || (a->sub != b->sub && a->kind != GOTMPL_STRING))
		return 0;
	switch (a->kind) {
	case GOTMPL_NIL:
		return 1;
	case GOTMPL_BOOL:
		return a->u.b == b->u.b;
	case GOTMPL_INT:
		return a->u.i == b->u.i;
	case GOTMPL_FLOAT:
		return a->u.f == b->u.f;
	case GOTMPL_STRING:
		if (a->u.s.n != b->u.s.n)
			return 0;
		if (gotmpl_work(d->a, a->u.s.n))
			return -ELOOP;
		return gotmpl_strcmp(a, b) == 0;
	case GT_OBJ: /* pointers: the same one, or deeply equal targets */
		return a->u.o.t == b->u.o.t &&
		       (a->u.o.p == b->u.o.p || a->u.o.t->same(a->u.o.p, b->u.o.p));
	}
	/* lists and maps */
	if ((a->kind == GOTMPL_LIST ? a->u.l.n != b->u.l.n : a->u.m.n != b->u.m.n))
		return 0;
	if (a == b || deq_seen(d, a, b))
		return 1;
	if (++d->depth > GT_VAL_DEPTH_MAX)
		return -ELOOP;
	for (i = 0; r == 1 && a->kind == GOTMPL_LIST && i < a->u.l.n; i++)
		r = deq(d, a->u.l.v[i], b->u.l.v[i]);
	for (i = 0; r == 1 && a->kind == GOTMPL_MAP && i < a->u.m.n; i++) {
		if (a->u.m.e[i].klen != b->u.m.e[i].klen ||
		    memcmp(a->u.m.e[i].k, b->u.m.e[i].k, a->u.m.e[i].klen))
			r = 0;
		else
			r = deq(d, a->u.m.e[i].v, b->u.m.e[i].v);
	}
	d->depth--;
	return r;
}

int gotmpl_deep_equal(struct gotmpl_arena *a, const struct gotmpl_val *x,
		      const struct gotmpl_val *y)
{
	struct deq d = {.a = a};
	int r = deq(&d, x, y);

	free(d.seen);
	return r;
}
