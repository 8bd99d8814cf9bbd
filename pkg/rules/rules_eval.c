/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_eval: matchFeatures/matchAny evaluated against raw features into labels. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "goregex/goregex.h"
#include "rules/rules_internal.h"

/* ------------------------------------------------------------ evaluation */

static int elem_cmp(const void *a, const void *b)
{
	return strcmp(((const struct elem *)a)->name, ((const struct elem *)b)->name);
}

void rules_matched_free(struct matched *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->g[i].e);
	free(m->g);
	m->g = NULL;
	m->n = 0;
}

static struct mgroup *matched_group(struct matched *m, const char *feature)
{
	size_t i;
	struct mgroup *g;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->g[i].feature, feature))
			return &m->g[i];
	g = rules_grow(&m->g, &m->n, sizeof(*g));
	if (g)
		g->feature = feature;
	return g;
}

static int matched_add(struct mgroup *g, const struct feat *inst, const char *name,
		       const char *value)
{
	struct elem *e = rules_grow(&g->e, &g->n, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->inst = inst;
	e->name = name;
	e->value = value;
	return 0;
}

/*
 * NFD's evaluateMatchExpression: 1 match, 0 not, -EDOM a value that is not a
 * number for Gt/Lt/GtLt (the rule then fails, as NFD's error does).
 */
static int eval_op(const struct expr *e, bool valid, const char *value)
{
	long long v;
	size_t i;

	switch (e->op) {
	case OP_EXISTS:
		return valid;
	case OP_DOESNOTEXIST:
		return !valid;
	default:
		break;
	}
	if (!valid || !value)
		return 0;
	switch (e->op) {
	case OP_IN:
		for (i = 0; i < e->nval; i++)
			if (!strcmp(value, e->val[i]))
				return 1;
		return 0;
	case OP_NOTIN:
		for (i = 0; i < e->nval; i++)
			if (!strcmp(value, e->val[i]))
				return 0;
		return 1;
	case OP_INREGEXP:
		for (i = 0; i < e->nval; i++)
			if (goregex_match(e->re[i], value, strlen(value)) == 1)
				return 1;
		return 0;
	case OP_GT:
	case OP_LT:
	case OP_GTLT:
	case OP_GE:
	case OP_LE:
	case OP_GELE:
		/* NFD's pkg/apis/nfd/nodefeaturerule/expression.go: integers, inclusive for
		 * Ge/Le/GeLe */
		if (!rules_atoi_go(value, &v)) {
			log_warn("not a number '%s' for a numeric op", value);
			return -EDOM;
		}
		switch (e->op) {
		case OP_GT:
			return v > e->num[0];
		case OP_LT:
			return v < e->num[0];
		case OP_GE:
			return v >= e->num[0];
		case OP_LE:
			return v <= e->num[0];
		case OP_GELE:
			return v >= e->num[0] && v <= e->num[1];
		default:
			return v > e->num[0] && v < e->num[1];
		}
	case OP_ISTRUE:
		return !strcmp(value, "true");
	case OP_ISFALSE:
		return !strcmp(value, "false");
	default:
		return 0;
	}
}

/* All expressions against one attribute map (an instance or an attributes feature). */
static int eval_values(const struct term *t, const struct feat *f)
{
	size_t i;

	for (i = 0; i < t->nex; i++) {
		const char *v = feat_lookup(f, t->ex[i].key);
		int r = eval_op(&t->ex[i], v != NULL, v);

		if (r <= 0)
			return r;
	}
	return 1;
}

/* One term; adds matched elements to g. 1 match, 0 not, <0 error. */
static int eval_term(const struct term *t, const struct feat *f, struct mgroup *g)
{
	bool match = true;
	size_t i, j;
	int r;

	if (!f)
		return 0;
	if (t->has_ex) {
		if (feat_kind(f) == FEAT_INSTANCES) {
			match = false;
			for (i = 0; i < feat_ninstances(f); i++) {
				const struct feat *in = feat_instance_at(f, i);

				r = eval_values(t, in);
				if (r < 0)
					return r;
				if (r) {
					match = true;
					if (matched_add(g, in, NULL, NULL) < 0)
						return -ENOMEM;
				}
			}
		} else {
			bool flags = feat_kind(f) == FEAT_FLAGS;
			size_t first = g->n;

			for (i = 0; i < t->nex && match; i++) {
				const char *v = feat_lookup(f, t->ex[i].key);

				r = eval_op(&t->ex[i], v != NULL, flags ? NULL : v);
				if (r < 0)
					return r;
				match = r > 0;
				/* NFD: a flag element has no Value, an attribute one always */
				if (match && matched_add(g, NULL, t->ex[i].key,
							 flags ? NULL : (v ? v : "")) < 0)
					return -ENOMEM;
			}
			/* NFD's MatchMulti sorts these elements by name */
			if (match && g->n - first > 1)
				qsort(g->e + first, g->n - first, sizeof(*g->e), elem_cmp);
		}
	}
	if (match && t->name) {
		bool any = false;

		if (feat_kind(f) == FEAT_INSTANCES) {
			for (i = 0; i < feat_ninstances(f); i++) {
				const struct feat *in = feat_instance_at(f, i);
				bool hit = false;

				for (j = 0; j < feat_nelems(in) && !hit; j++) {
					const char *n, *v;

					feat_elem_at(in, j, &n, &v);
					r = eval_op(t->name, true, n);
					if (r < 0)
						return r;
					hit = r > 0;
				}
				if (hit && matched_add(g, in, NULL, NULL) < 0)
					return -ENOMEM;
				any = any || hit;
			}
		} else {
			for (j = 0; j < feat_nelems(f); j++) {
				const char *n, *v;

				feat_elem_at(f, j, &n, &v);
				r = eval_op(t->name, true, n);
				if (r < 0)
					return r;
				if (r > 0 && matched_add(g, NULL, n,
							 feat_kind(f) == FEAT_FLAGS ? NULL : v) < 0)
					return -ENOMEM;
				any = any || r > 0;
			}
		}
		match = any;
	}
	return match;
}

/* AND over a matcher's terms. */
int rules_eval_matcher(const struct matcher *m, const struct feat_set *fs, struct matched *out)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		struct mgroup *g = matched_group(out, m->t[i].feature);
		int r;

		if (!g)
			return -ENOMEM;
		r = eval_term(&m->t[i], feat_get(fs, m->t[i].feature), g);
		if (r <= 0)
			return r;
	}
	return 1;
}
