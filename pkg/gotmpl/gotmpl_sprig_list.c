/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_sprig_list: Sprig v3's list and dict functions (list.go, dict.go). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

#define NILDEREF "runtime error: invalid memory address or nil pointer dereference"

static int is_list(const struct gotmpl_val *v)
{
	return v->kind == GOTMPL_LIST;
}

/* Sprig's errors name reflect kinds; nil has none (Go panics on a nil Type). */
static int kind_fail(struct gotmpl_fctx *c, const char *what, const struct gotmpl_val *v)
{
	if (v->kind == GOTMPL_NIL)
		return gotmpl_fail(c, NILDEREF);
	return gotmpl_fail(c, what, gotmpl_kindname(v));
}

/* Refuse to change what the caller built (the engine's arena values only). */
static int mutable_map(struct gotmpl_fctx *c, const struct gotmpl_val *m)
{
	if (m->kind == GOTMPL_NIL)
		return gotmpl_fail(c, "assignment to entry in nil map");
	if (!m->arena)
		return gotmpl_fail(
		    c, "cannot change the template's input data (only dicts the template made)");
	return 0;
}

static struct gotmpl_val *copy_list(struct gotmpl_fctx *c, const struct gotmpl_val *l, size_t from,
				    size_t to, size_t extra)
{
	struct gotmpl_val *r = gotmpl_list(c->a, to - from + extra, GT_PLAIN);

	if (!r)
		return NULL;
	for (size_t i = from; i < to; i++)
		r->u.l.v[r->u.l.n++] = l->u.l.v[i];
	return r;
}

/* ---- lists ---- */

GT_FN(f_list)
{
	struct gotmpl_val *l = gotmpl_list(c->a, (size_t)ac, GT_PLAIN);

	if (!l)
		return -ENOMEM;
	for (int i = 0; i < ac; i++)
		l->u.l.v[l->u.l.n++] = av[i];
	*res = l;
	return 0;
}

GT_FN(f_push)
{
	(void)ac;
	if (!is_list(av[0]))
		return kind_fail(c, "Cannot push on type %s", av[0]);
	*res = copy_list(c, av[0], 0, av[0]->u.l.n, 1);
	if (!*res)
		return -ENOMEM;
	(*res)->u.l.v[(*res)->u.l.n++] = av[1];
	return 0;
}

GT_FN(f_prepend)
{
	struct gotmpl_val *r;

	(void)ac;
	if (!is_list(av[0]))
		return kind_fail(c, "Cannot prepend on type %s", av[0]);
	r = gotmpl_list(c->a, av[0]->u.l.n + 1, GT_PLAIN);
	if (!r)
		return -ENOMEM;
	r->u.l.v[r->u.l.n++] = av[1];
	for (size_t i = 0; i < av[0]->u.l.n; i++)
		r->u.l.v[r->u.l.n++] = av[0]->u.l.v[i];
	*res = r;
	return 0;
}

GT_FN(f_first)
{
	(void)ac;
	if (!is_list(av[0]))
		return kind_fail(c, "Cannot find first on type %s", av[0]);
	*res = av[0]->u.l.n ? av[0]->u.l.v[0] : GT_NIL;
	return 0;
}

GT_FN(f_last)
{
	(void)ac;
	if (!is_list(av[0]))
		return kind_fail(c, "Cannot find last on type %s", av[0]);
	*res = av[0]->u.l.n ? av[0]->u.l.v[av[0]->u.l.n - 1] : GT_NIL;
	return 0;
}

GT_FN(f_rest)
{
	(void)ac;
	if (!is_list(av[0]))
		return kind_fail(c, "Cannot find rest on type %s", av[0]);
	if (!av[0]->u.l.n) /* Sprig's test: an empty list prints [] */
		GT_RES(gotmpl_list(c->a, 0, GT_PLAIN));
	GT_RES(copy_list(c, av[0], 1, av[0]->u.l.n, 0));
}

GT_FN(f_initial)
{
	(void)ac;
	if (!is_list(av[0]))
		return kind_fail(c, "Cannot find initial on type %s", av[0]);
	if (!av[0]->u.l.n)
		GT_RES(gotmpl_list(c->a, 0, GT_PLAIN));
	GT_RES(copy_list(c, av[0], 0, av[0]->u.l.n - 1, 0));
}

GT_FN(f_reverse)
{
	struct gotmpl_val *r;

	(void)ac;
	if (!is_list(av[0]))
		return kind_fail(c, "Cannot find reverse on type %s", av[0]);
	r = gotmpl_list(c->a, av[0]->u.l.n, GT_PLAIN);
	if (!r)
		return -ENOMEM;
	for (size_t i = av[0]->u.l.n; i-- > 0;)
		r->u.l.v[r->u.l.n++] = av[0]->u.l.v[i];
	*res = r;
	return 0;
}

/* 1 when v is in l (reflect.DeepEqual), 0 when not, -ELOOP (the work budget, or too deep). */
static int in_list(struct gotmpl_fctx *c, const struct gotmpl_val *l, const struct gotmpl_val *v)
{
	for (size_t i = 0; i < l->u.l.n; i++) {
		int eq = gotmpl_deep_equal(c->a, l->u.l.v[i], v);

		if (eq)
			return eq;
	}
	return 0;
}

GT_FN(f_uniq)
{
	struct gotmpl_val *r;

	(void)ac;
	if (!is_list(av[0]))
		return kind_fail(c, "Cannot find uniq on type %s", av[0]);
	r = gotmpl_list(c->a, av[0]->u.l.n, GT_PLAIN);
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < av[0]->u.l.n; i++) {
		int in = in_list(c, r, av[0]->u.l.v[i]);

		if (in < 0)
			return in;
		if (!in)
			r->u.l.v[r->u.l.n++] = av[0]->u.l.v[i];
	}
	*res = r;
	return 0;
}

GT_FN(f_compact)
{
	struct gotmpl_val *r;

	(void)ac;
	if (!is_list(av[0]))
		return kind_fail(c, "Cannot compact on type %s", av[0]);
	r = gotmpl_list(c->a, av[0]->u.l.n, GT_PLAIN);
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < av[0]->u.l.n; i++)
		if (gotmpl_truth(av[0]->u.l.v[i]))
			r->u.l.v[r->u.l.n++] = av[0]->u.l.v[i];
	*res = r;
	return 0;
}

GT_FN(f_without)
{
	struct gotmpl_val *r, omit = {.kind = GOTMPL_LIST, .arena = 1};

	if (!is_list(av[0]))
		return kind_fail(c, "Cannot find without on type %s", av[0]);
	omit.u.l.v = av + 1;
	omit.u.l.n = (size_t)ac - 1;
	r = gotmpl_list(c->a, av[0]->u.l.n, GT_PLAIN);
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < av[0]->u.l.n; i++) {
		int in = in_list(c, &omit, av[0]->u.l.v[i]);

		if (in < 0)
			return in;
		if (!in)
			r->u.l.v[r->u.l.n++] = av[0]->u.l.v[i];
	}
	*res = r;
	return 0;
}

GT_FN(f_has)
{
	int in;

	(void)ac;
	if (av[1]->kind == GOTMPL_NIL)
		GT_RES(gotmpl_bool(c->a, 0));
	if (!is_list(av[1]))
		return kind_fail(c, "Cannot find has on type %s", av[1]);
	in = in_list(c, av[1], av[0]);
	if (in < 0)
		return in;
	GT_RES(gotmpl_bool(c->a, in));
}

GT_FN(f_slice)
{
	int64_t n, start = 0, end;
	struct gotmpl_val *r;

	if (!is_list(av[0]))
		return kind_fail(c, "list should be type of slice or array but %s", av[0]);
	n = (int64_t)av[0]->u.l.n;
	if (!n) {
		*res = GT_NIL;
		return 0;
	}
	end = n;
	if (ac > 1)
		start = gotmpl_toint64(av[1]);
	if (ac > 2)
		end = gotmpl_toint64(av[2]);
	if (start < 0 || end > n || start > end)
		return gotmpl_fail(c, "reflect.Value.Slice: slice index out of bounds");
	r = copy_list(c, av[0], (size_t)start, (size_t)end, 0);
	if (!r)
		return -ENOMEM;
	r->sub = av[0]->sub;
	*res = r;
	return 0;
}

GT_FN(f_concat)
{
	struct gotmpl_val *r = gotmpl_list(c->a, 0, GT_PLAIN);

	if (!r)
		return -ENOMEM;
	for (int i = 0; i < ac; i++) {
		if (!is_list(av[i]))
			return av[i]->kind == GOTMPL_NIL
				   ? gotmpl_fail(c, NILDEREF)
				   : gotmpl_fail(c, "Cannot concat type %s as list",
						 gotmpl_kindname(av[i]));
		for (size_t k = 0; k < av[i]->u.l.n; k++)
			if (gotmpl_alist_push(c->a, r, av[i]->u.l.v[k]))
				return -ENOMEM;
	}
	*res = r;
	return 0;
}

GT_FN(f_chunk)
{
	int64_t size = av[0]->u.i;
	struct gotmpl_val *r, *l = av[1];

	(void)ac;
	if (!is_list(l))
		return kind_fail(c, "Cannot chunk type %s", l);
	if (size <= 0)
		return gotmpl_fail(c, "runtime error: integer divide by zero");
	r = gotmpl_list(c->a, 0, GT_PLAIN);
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < l->u.l.n; i += (size_t)size) {
		size_t to = i + (size_t)size < l->u.l.n ? i + (size_t)size : l->u.l.n;

		if (gotmpl_alist_push(c->a, r, copy_list(c, l, i, to, 0)))
			return -ENOMEM;
	}
	*res = r;
	return 0;
}

/* ---- dicts ---- */

GT_FN(f_dict)
{
	struct gotmpl_val *m = gotmpl_map(c->a, GT_PLAIN);

	if (!m)
		return -ENOMEM;
	for (int i = 0; i < ac; i += 2) {
		struct gotmpl_val *k = gotmpl_tostring(c, av[i]);

		if (!k || gotmpl_map_put(c->a, m, k->u.s.p, k->u.s.n,
					 i + 1 < ac ? av[i + 1] : gotmpl_str(c->a, "", 0)))
			return -ENOMEM;
	}
	*res = m;
	return 0;
}

GT_FN(f_get)
{
	long i =
	    av[0]->kind == GOTMPL_MAP ? gotmpl_map_find(av[0], av[1]->u.s.p, av[1]->u.s.n) : -1;

	(void)ac;
	if (i >= 0) {
		*res = av[0]->u.m.e[i].v;
		return 0;
	}
	GT_RES(gotmpl_str(c->a, "", 0));
}

GT_FN(f_set)
{
	int rc = mutable_map(c, av[0]);

	(void)ac;
	if (rc)
		return rc;
	if (gotmpl_map_put(c->a, av[0], av[1]->u.s.p, av[1]->u.s.n, av[2]))
		return -ENOMEM;
	*res = av[0];
	return 0;
}

GT_FN(f_unset)
{
	long i;

	(void)ac;
	if (av[0]->kind == GOTMPL_NIL) {
		*res = av[0];
		return 0;
	}
	i = gotmpl_map_find(av[0], av[1]->u.s.p, av[1]->u.s.n);
	if (i >= 0) {
		struct gotmpl_val *m = av[0];
		int rc = mutable_map(c, m);

		if (rc)
			return rc;
		memmove(m->u.m.e + i, m->u.m.e + i + 1,
			(m->u.m.n - (size_t)i - 1) * sizeof(*m->u.m.e));
		m->u.m.n--;
	}
	*res = av[0];
	return 0;
}

GT_FN(f_haskey)
{
	(void)ac;
	GT_RES(gotmpl_bool(c->a, av[0]->kind == GOTMPL_MAP &&
				     gotmpl_map_find(av[0], av[1]->u.s.p, av[1]->u.s.n) >= 0));
}

GT_FN(f_pluck)
{
	struct gotmpl_val *r = gotmpl_list(c->a, (size_t)ac, GT_PLAIN);

	if (!r)
		return -ENOMEM;
	for (int i = 1; i < ac; i++) {
		long k = av[i]->kind == GOTMPL_MAP
			     ? gotmpl_map_find(av[i], av[0]->u.s.p, av[0]->u.s.n)
			     : -1;

		if (k >= 0)
			r->u.l.v[r->u.l.n++] = av[i]->u.m.e[k].v;
	}
	*res = r;
	return 0;
}

/* keys: every dict's keys; Go's map order is random, ours is each dict's sorted order. */
GT_FN(f_keys)
{
	struct gotmpl_val *r = gotmpl_list(c->a, 0, GT_STRS);

	if (!r)
		return -ENOMEM;
	for (int i = 0; i < ac; i++)
		for (size_t k = 0; av[i]->kind == GOTMPL_MAP && k < av[i]->u.m.n; k++)
			if (gotmpl_alist_push(
				c->a, r, gotmpl_str(c->a, av[i]->u.m.e[k].k, av[i]->u.m.e[k].klen)))
				return -ENOMEM;
	*res = r;
	return 0;
}

GT_FN(f_values)
{
	struct gotmpl_val *r;

	(void)ac;
	r = gotmpl_list(c->a, av[0]->kind == GOTMPL_MAP ? av[0]->u.m.n : 0, GT_PLAIN);
	if (!r)
		return -ENOMEM;
	for (size_t k = 0; av[0]->kind == GOTMPL_MAP && k < av[0]->u.m.n; k++)
		r->u.l.v[r->u.l.n++] = av[0]->u.m.e[k].v;
	*res = r;
	return 0;
}

static int pick_omit(struct gotmpl_fctx *c, struct gotmpl_val **av, int ac, int pick,
		     struct gotmpl_val **res)
{
	struct gotmpl_val *r = gotmpl_map(c->a, GT_PLAIN);

	if (!r)
		return -ENOMEM;
	for (size_t k = 0; av[0]->kind == GOTMPL_MAP && k < av[0]->u.m.n; k++) {
		int listed = 0;

		if (gotmpl_work(c->a, (size_t)ac))
			return -ELOOP;
		for (int i = 1; i < ac; i++)
			listed |= av[i]->u.s.n == av[0]->u.m.e[k].klen &&
				  memcmp(av[i]->u.s.p, av[0]->u.m.e[k].k, av[i]->u.s.n) == 0;
		if (listed == pick && gotmpl_map_put(c->a, r, av[0]->u.m.e[k].k,
						     av[0]->u.m.e[k].klen, av[0]->u.m.e[k].v))
			return -ENOMEM;
	}
	*res = r;
	return 0;
}

GT_FN(f_pick)
{
	return pick_omit(c, av, ac, 1, res);
}

GT_FN(f_omit)
{
	return pick_omit(c, av, ac, 0, res);
}

/* mergo's deep merge of src into dst (a map the template made). */
static int merge_into(struct gotmpl_fctx *c, struct gotmpl_val *dst, const struct gotmpl_val *src,
		      int overwrite, int depth)
{
	if (depth > 32)
		return gotmpl_fail(c, "merge: maps nested deeper than 32");
	for (size_t k = 0; k < src->u.m.n; k++) {
		const struct gotmpl_kv *e = &src->u.m.e[k];
		long i = gotmpl_map_find(dst, e->k, e->klen);
		struct gotmpl_val *d = i >= 0 ? dst->u.m.e[i].v : NULL;

		/* maps sharing sub-maps: each entry walked is work (a lookup: 16, its key) */
		if (gotmpl_work(c->a, 16 + e->klen))
			return -ELOOP;

		if (d && d->kind == GOTMPL_MAP && e->v->kind == GOTMPL_MAP) {
			int rc = mutable_map(c, d) ?: merge_into(c, d, e->v, overwrite, depth + 1);

			if (rc)
				return rc;
			continue;
		}
		if (!d || !gotmpl_truth(d) || (overwrite && gotmpl_truth(e->v))) {
			int rc = gotmpl_map_put(c->a, dst, e->k, e->klen, e->v);

			if (rc)
				return rc;
		}
	}
	return 0;
}

static int merge(struct gotmpl_fctx *c, struct gotmpl_val **av, int ac, int overwrite,
		 struct gotmpl_val **res)
{
	int rc = mutable_map(c, av[0]);

	for (int i = 1; i < ac && !rc; i++)
		if (av[i]->kind == GOTMPL_MAP)
			rc = merge_into(c, av[0], av[i], overwrite, 0);
	if (rc)
		return rc;
	*res = av[0];
	return 0;
}

GT_FN(f_merge)
{
	return merge(c, av, ac, 0, res);
}

GT_FN(f_mergeoverwrite)
{
	return merge(c, av, ac, 1, res);
}

GT_FN(f_dig)
{
	const struct gotmpl_val *d;

	if (ac < 3)
		return gotmpl_fail(c, "dig needs at least three arguments");
	d = av[ac - 1];
	for (int i = 0; i < ac - 2; i++) {
		long k;

		if (d->kind != GOTMPL_MAP || d->sub != GT_PLAIN)
			return gotmpl_fail(
			    c,
			    "interface conversion: interface {} is %s, not map[string]interface {}",
			    gotmpl_typename(d));
		if (av[i]->kind != GOTMPL_STRING)
			return gotmpl_fail(c,
					   "interface conversion: interface {} is %s, not string",
					   gotmpl_typename(av[i]));
		k = gotmpl_map_find(d, av[i]->u.s.p, av[i]->u.s.n);
		if (k < 0) {
			*res = av[ac - 2];
			return 0;
		}
		d = d->u.m.e[k].v;
	}
	*res = (struct gotmpl_val *)d;
	return 0;
}

const struct gotmpl_func gotmpl_sprig_list_funcs[] = {
    {"append", f_push, "aa", 0},
    {"chunk", f_chunk, "ia", 0},
    {"compact", f_compact, "a", 0},
    {"concat", f_concat, "*a", 0},
    {"dict", f_dict, "*a", 0},
    {"dig", f_dig, "*a", 0},
    {"first", f_first, "a", 0},
    {"get", f_get, "ms", 0},
    {"has", f_has, "aa", 0},
    {"hasKey", f_haskey, "ms", 0},
    {"initial", f_initial, "a", 0},
    {"keys", f_keys, "*m", 0},
    {"last", f_last, "a", 0},
    {"list", f_list, "*a", 0},
    {"merge", f_merge, "m*m", 0},
    {"mergeOverwrite", f_mergeoverwrite, "m*m", 0},
    {"mustAppend", f_push, "aa", 0},
    {"mustChunk", f_chunk, "ia", 0},
    {"mustCompact", f_compact, "a", 0},
    {"mustFirst", f_first, "a", 0},
    {"mustHas", f_has, "aa", 0},
    {"mustInitial", f_initial, "a", 0},
    {"mustLast", f_last, "a", 0},
    {"mustMerge", f_merge, "m*m", 0},
    {"mustMergeOverwrite", f_mergeoverwrite, "m*m", 0},
    {"mustPrepend", f_prepend, "aa", 0},
    {"mustPush", f_push, "aa", 0},
    {"mustRest", f_rest, "a", 0},
    {"mustReverse", f_reverse, "a", 0},
    {"mustSlice", f_slice, "a*a", 0},
    {"mustUniq", f_uniq, "a", 0},
    {"mustWithout", f_without, "a*a", 0},
    {"omit", f_omit, "m*s", 0},
    {"pick", f_pick, "m*s", 0},
    {"pluck", f_pluck, "s*m", 0},
    {"prepend", f_prepend, "aa", 0},
    {"push", f_push, "aa", 0},
    {"rest", f_rest, "a", 0},
    {"reverse", f_reverse, "a", 0},
    {"set", f_set, "msa", 0},
    {"slice", f_slice, "a*a", 0},
    {"tuple", f_list, "*a", 0},
    {"uniq", f_uniq, "a", 0},
    {"unset", f_unset, "ms", 0},
    {"values", f_values, "m", 0},
    {"without", f_without, "a*a", 0},
    {NULL, NULL, NULL, 0},
};
