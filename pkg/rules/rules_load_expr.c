/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_load_expr: the first stage of loading: YAML values checked against NFD's CRD (strings,
 * mappings, lists, fields), and matchFeatures terms with their matchExpressions and matchName. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ydoc/ydoc.h"
#include "rules/rules_internal.h"

/* The op enum of NFD's CRD (nodefeaturerules.nfd.k8s-sigs.io, v0.19.0): any other op is not a
 * NodeFeatureRule. */
static const struct {
	const char *name;
	enum op op;
	int nvalues; /* required count; -1 at least one; 0 none */
} ops[] = {
    {"In", OP_IN, -1},
    {"NotIn", OP_NOTIN, -1},
    {"InRegexp", OP_INREGEXP, -1},
    {"Exists", OP_EXISTS, 0},
    {"DoesNotExist", OP_DOESNOTEXIST, 0},
    {"Gt", OP_GT, 1},
    {"Ge", OP_GE, 1},
    {"Lt", OP_LT, 1},
    {"Le", OP_LE, 1},
    {"GtLt", OP_GTLT, 2},
    {"GeLe", OP_GELE, 2},
    {"IsTrue", OP_ISTRUE, 0},
    {"IsFalse", OP_ISFALSE, 0},
};

/* ---------------------------------------------------------------- memory */

static void expr_free(struct expr *e)
{
	size_t i;

	free(e->key);
	for (i = 0; i < e->nval; i++)
		free(e->val[i]); /* e->re[i] are the cache's (struct rules.cache) */
	free(e->val);
	free(e->re);
	free(e->bad);
}

void rules_matcher_free(struct matcher *m)
{
	size_t i, j;

	for (i = 0; i < m->n; i++) {
		for (j = 0; j < m->t[i].nex; j++)
			expr_free(&m->t[i].ex[j]);
		free(m->t[i].ex);
		if (m->t[i].name) {
			expr_free(m->t[i].name);
			free(m->t[i].name);
		}
		free(m->t[i].feature);
		free(m->t[i].tkey);
	}
	free(m->t);
}

/* ------------------------------------------------------------------ YAML */

static const char *kind_name(const yaml_node_t *n)
{
	return ydoc_kind(n);
}

/*
 * A string as the CRD's "type: string" takes it (borrowed): a scalar that
 * Kubernetes does not read as null, a boolean or a number (quote "true").
 */
bool rules_is_string(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE && !ydoc_scalar_type(n);
}

int rules_want_string(struct ctx *c, const yaml_node_t *n, const char *what, const char **out)
{
	const char *t = ydoc_scalar_type(n);

	*out = "";
	if (n->type != YAML_SCALAR_NODE)
		return rules_at(c, n, "%s must be a string, not %s", what, kind_name(n));
	if (t)
		return rules_at(c, n, "%s must be a string, not %s%s%s%s", what, t,
				*t == 'n' ? "" : " '",
				*t == 'n' ? "" : (const char *)n->data.scalar.value,
				*t == 'n' ? "" : "' (quote it)");
	*out = (const char *)n->data.scalar.value;
	return 0;
}

int rules_over(struct ctx *c, const yaml_node_t *n, const char *what, const char *why)
{
	if (!c->skip_rule)
		return rules_at(c, n, "%s", why);
	if (!c->over[0])
		snprintf(c->over, sizeof(c->over), "%s: %s", what, why);
	return 0;
}

/* The first pair of mapping n whose key is not in allowed (NULL-terminated), or NULL. */
static const yaml_node_pair_t *other_field(struct ctx *c, const yaml_node_t *n,
					   const char *const *allowed)
{
	const yaml_node_pair_t *p;
	size_t i;

	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		for (i = 0; allowed[i]; i++)
			if (!strcmp(rules_key_of(c, p), allowed[i]))
				break;
		if (!allowed[i])
			return p;
	}
	return NULL;
}

bool rules_fields_known(struct ctx *c, const yaml_node_t *n, const char *const *allowed)
{
	return !other_field(c, n, allowed);
}

/* Only the keys in allowed (NULL-terminated) in mapping n: NFD's CRD has no other field. */
int rules_only_fields(struct ctx *c, const yaml_node_t *n, const char *const *allowed,
		      const char *what)
{
	const yaml_node_pair_t *p = other_field(c, n, allowed);

	if (p)
		return rules_at(c, rules_node(c, p->key), "unknown field '%s' in %s",
				rules_key_of(c, p), what);
	return 0;
}

int rules_want_type(struct ctx *c, const yaml_node_t *n, yaml_node_type_t t, const char *what)
{
	if (n->type != t)
		return rules_at(c, n, "%s must be %s, not %s", what,
				t == YAML_MAPPING_NODE ? "a mapping" : "a list", kind_name(n));
	return 0;
}

/* A mapping with string keys, each once. */
int rules_want_map(struct ctx *c, const yaml_node_t *n, const char *what)
{
	int rc = rules_want_type(c, n, YAML_MAPPING_NODE, what);

	if (rc == 0 && ydoc_check_map(c->y, n) < 0)
		rc = -EINVAL;
	return rc;
}

/* ------------------------------------------------------ matchExpressions */

/* Set e->bad: what NFD reports when it evaluates this expression (expression.go). */
static int expr_check(struct ctx *c, const yaml_node_t *n, struct expr *e, const char *opname,
		      const char *type)
{
	char bad[300] = "";
	size_t k, i;
	bool numeric = e->op == OP_GT || e->op == OP_GE || e->op == OP_LT || e->op == OP_LE ||
		       e->op == OP_GTLT || e->op == OP_GELE;

	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (ops[k].op == e->op)
			break;
	if (ops[k].nvalues == 0 && e->nval)
		snprintf(bad, sizeof(bad), "op %s takes no value", opname);
	else if (ops[k].nvalues < 0 && !e->nval)
		snprintf(bad, sizeof(bad), "op %s needs at least one value", opname);
	else if (ops[k].nvalues > 0 && e->nval != (size_t)ops[k].nvalues)
		snprintf(bad, sizeof(bad), "op %s needs exactly %d value%s", opname, ops[k].nvalues,
			 ops[k].nvalues > 1 ? "s" : "");
	else if (numeric && type[0] && !e->version)
		snprintf(bad, sizeof(bad), "op %s: unknown type '%.100s'", opname, type);
	for (i = 0; numeric && !bad[0] && i < e->nval; i++) {
		if (e->version && !rules_version_parse(e->val[i], &e->ver[i]))
			snprintf(bad, sizeof(bad), "op %s: '%.100s' is not a version", opname,
				 e->val[i]);
		else if (!e->version && !rules_atoi_go(e->val[i], &e->num[i]))
			snprintf(bad, sizeof(bad), "op %s: '%.100s' is not an integer", opname,
				 e->val[i]);
	}
	/* NFD refuses an untyped range whose ends are not in order */
	if (!bad[0] && !e->version && (e->op == OP_GTLT || e->op == OP_GELE) &&
	    e->num[0] >= e->num[1])
		snprintf(bad, sizeof(bad), "op %s: the first value must be less than the second",
			 opname);
	/* a rule already over a limit of all the rules is skipped: compile nothing more */
	if (!bad[0] && e->op == OP_INREGEXP && !c->over[0]) {
		/* each distinct pattern compiled once, however many rules (or aliases) use it */
		e->re = calloc(e->nval, sizeof(*e->re));
		if (!e->re)
			return log_err_set(c->err, -ENOMEM, "out of memory");
		for (i = 0; i < e->nval && !bad[0]; i++) {
			char why[300], what[160], esc[104];
			int x = rules_regex(c->cache, e->val[i], &e->re[i], why, sizeof(why));

			if (x == -ENOMEM)
				return log_err_set(c->err, -ENOMEM, "out of memory");
			if (x == -ENOSPC) { /* a limit of all the rules: why says which */
				rules_escape(esc, sizeof(esc), e->val[i]);
				snprintf(what, sizeof(what), "InRegexp value '%s'", esc);
				x = rules_over(c, n, what, why);
				if (x < 0)
					return x;
				break;
			}
			if (x < 0)
				snprintf(bad, sizeof(bad),
					 "invalid regular expression '%.100s': %.160s", e->val[i],
					 why);
		}
	}
	if (bad[0]) {
		e->bad = strdup(bad);
		if (!e->bad)
			return log_err_set(c->err, -ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * {op: X, value: [..], type: T}: the CRD's MatchExpression. Only its shape is
 * a file error; the values an op cannot use fail the rule when NFD would
 * (when the expression is evaluated on an element that is there).
 */
static int parse_expr(struct ctx *c, const yaml_node_t *n, struct expr *e)
{
	static const char *const fields[] = {"op", "value", "type", NULL};
	yaml_node_t *opn, *vn, *tn;
	yaml_node_item_t *it;
	const char *opname, *type = "";
	size_t k;
	int rc;

	rc = rules_want_map(c, n, "match expression");
	if (rc == 0)
		rc = rules_only_fields(c, n, fields, "match expression");
	if (rc < 0)
		return rc;
	opn = rules_map_get(c, n, "op");
	if (!opn || rules_is_null(opn))
		return rules_at(c, n, "match expression without 'op'");
	rc = rules_want_string(c, opn, "op", &opname);
	if (rc < 0)
		return rc;
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (!strcmp(ops[k].name, opname))
			break;
	if (k == sizeof(ops) / sizeof(ops[0]))
		return rules_at(c, opn, "unknown op '%s'", opname);
	e->op = ops[k].op;
	tn = rules_map_get(c, n, "type");
	if (tn && !rules_is_null(tn)) {
		rc = rules_want_string(c, tn, "type", &type);
		if (rc < 0)
			return rc;
		e->version = !strcmp(type, "version");
	}
	vn = rules_map_get(c, n, "value");
	if (vn && !rules_is_null(vn)) {
		rc = rules_want_type(c, vn, YAML_SEQUENCE_NODE, "value");
		if (rc < 0)
			return rc;
		for (it = vn->data.sequence.items.start; it < vn->data.sequence.items.top; it++) {
			const char *s;
			char **nv;

			if (!rules_visit(c))
				return ydoc_too_complex(c->y, vn);
			rc = rules_want_string(c, rules_node(c, *it), "value item", &s);
			if (rc < 0)
				return rc;
			nv = rules_grow(&e->val, &e->nval, sizeof(char *));
			if (nv)
				*nv = strdup(s);
			if (!nv || !*nv)
				return log_err_set(c->err, -ENOMEM, "out of memory");
		}
	}
	return expr_check(c, n, e, opname, type);
}

/* [{feature, matchExpressions, matchName}, ...] */
int rules_parse_matcher(struct ctx *c, const yaml_node_t *n, struct matcher *m)
{
	static const char *const fields[] = {"feature", "matchExpressions", "matchName", NULL};
	yaml_node_item_t *it;
	int rc;

	if (rules_is_null(n))
		return 0;
	rc = rules_want_type(c, n, YAML_SEQUENCE_NODE, "matchFeatures");
	if (rc < 0)
		return rc;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *tn = rules_node(c, *it), *fn, *en, *nn;
		yaml_node_pair_t *p;
		struct term *t;
		const char *f;

		if (!rules_visit(c))
			return ydoc_too_complex(c->y, n);
		rc = rules_want_map(c, tn, "matchFeatures item");
		if (rc == 0)
			rc = rules_only_fields(c, tn, fields, "matchFeatures item");
		if (rc < 0)
			return rc;
		t = rules_grow(&m->t, &m->n, sizeof(*t));
		if (!t)
			return log_err_set(c->err, -ENOMEM, "out of memory");
		fn = rules_map_get(c, tn, "feature");
		if (!fn || rules_is_null(fn))
			return rules_at(c, tn, "matchFeatures item without 'feature'");
		rc = rules_want_string(c, fn, "feature", &f);
		if (rc < 0)
			return rc;
		t->feature = strdup(f);
		t->tkey = strdup(f);
		if (!t->feature || !t->tkey)
			return log_err_set(c->err, -ENOMEM, "out of memory");
		for (char *s = t->feature; *s; s++) /* NFD lowercases the feature name */
			*s = (char)tolower((unsigned char)*s);
		en = rules_map_get(c, tn, "matchExpressions");
		if (en && !rules_is_null(en)) {
			rc = rules_want_map(c, en, "matchExpressions");
			if (rc < 0)
				return rc;
			for (p = en->data.mapping.pairs.start; p < en->data.mapping.pairs.top;
			     p++) {
				struct expr *e;

				if (rules_is_null(rules_node(c, p->value)))
					continue; /* a null is pruned, as Kubernetes does */
				e = rules_grow(&t->ex, &t->nex, sizeof(*e));
				if (e)
					e->key = strdup(rules_key_of(c, p));
				if (!e || !e->key)
					return log_err_set(c->err, -ENOMEM, "out of memory");
				rc = parse_expr(c, rules_node(c, p->value), e);
				if (rc < 0)
					return rc;
			}
			t->has_ex = true;
		}
		nn = rules_map_get(c, tn, "matchName");
		if (nn && !rules_is_null(nn)) {
			t->name = calloc(1, sizeof(*t->name));
			if (!t->name)
				return log_err_set(c->err, -ENOMEM, "out of memory");
			rc = parse_expr(c, nn, t->name);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}
