/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_load: NodeFeatureRule files (YAML, libyaml) into rules, and their memory. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "goregex/goregex.h"
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

static void matcher_free(struct matcher *m)
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

static void kv_free(struct kv *kv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(kv[i].k);
		free(kv[i].v);
	}
	free(kv);
}

static void rule_free(struct rule *r)
{
	size_t i;

	kv_free(r->labels, r->nlabels);
	kv_free(r->vars, r->nvars);
	matcher_free(&r->mf);
	for (i = 0; i < r->nany; i++)
		matcher_free(&r->any[i]);
	free(r->any);
	free(r->name);
	free(r->where);
	free(r->object);
	free(r->skip);
}

struct rules *rules_new(void)
{
	return calloc(1, sizeof(struct rules));
}

void rules_free(struct rules *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		rule_free(&r->r[i]);
	free(r->r);
	rules_cache_free(&r->cache);
	free(r);
}

size_t rules_count(const struct rules *r)
{
	return r->n;
}

/*
 * Grow *arr (of *n elements of size sz) by one zeroed element; NULL on ENOMEM.
 * The room is the next power of two of *n, so it is reallocated only when *n
 * is 0 or a power of two: appending n elements copies O(n) bytes, not O(n^2)
 * (a 150,000-node template took minutes under ASan, whose realloc always
 * copies). Arrays passed here are grown by this function only.
 */
void *rules_grow(void *arr_p, size_t *n, size_t sz)
{
	void **arr = arr_p;
	char *na = *arr;
	size_t room;

	if ((*n & (*n - 1)) == 0) {
		room = *n ? *n * 2 : 1;
		if (room > SIZE_MAX / sz)
			return NULL;
		na = realloc(*arr, room * sz);
		if (!na)
			return NULL;
		*arr = na;
	}
	memset(na + *n * sz, 0, sz);
	return na + (*n)++ * sz;
}

/* ------------------------------------------------------------------ YAML */

struct ctx {
	struct ydoc *y;	      /* current document (pkg/ydoc: limits, lookups, messages) */
	const char *file;     /* name for messages */
	struct log_err *err;  /* where errors go */
	struct rcache *cache; /* where patterns and templates are compiled, once each */
};

static int at(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int at(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ydoc_fail(c->y, n, "%s", msg);
	return -EINVAL;
}

yaml_node_t *rules_node(struct ctx *c, int i)
{
	return ydoc_node(c->y, i);
}

static bool visit(struct ctx *c)
{
	return ydoc_visit(c->y);
}

static bool is_null(const yaml_node_t *n)
{
	return ydoc_is_null(n);
}

static const char *kind_name(const yaml_node_t *n)
{
	return ydoc_kind(n);
}

static const char *key_of(struct ctx *c, const yaml_node_pair_t *p)
{
	return (const char *)rules_node(c, p->key)->data.scalar.value;
}

/*
 * A string as the CRD's "type: string" takes it (borrowed): a scalar that
 * Kubernetes does not read as null, a boolean or a number (quote "true").
 */
static int want_string(struct ctx *c, const yaml_node_t *n, const char *what, const char **out)
{
	const char *t = ydoc_scalar_type(n);

	*out = "";
	if (n->type != YAML_SCALAR_NODE)
		return at(c, n, "%s must be a string, not %s", what, kind_name(n));
	if (t)
		return at(c, n, "%s must be a string, not %s%s%s%s", what, t, *t == 'n' ? "" : " '",
			  *t == 'n' ? "" : (const char *)n->data.scalar.value,
			  *t == 'n' ? "" : "' (quote it)");
	*out = (const char *)n->data.scalar.value;
	return 0;
}

/* Only the keys in allowed (NULL-terminated) in mapping n: NFD's CRD has no other field. */
static int only_fields(struct ctx *c, const yaml_node_t *n, const char *const *allowed,
		       const char *what)
{
	yaml_node_pair_t *p;
	size_t i;

	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		for (i = 0; allowed[i]; i++)
			if (!strcmp(key_of(c, p), allowed[i]))
				break;
		if (!allowed[i])
			return at(c, rules_node(c, p->key), "unknown field '%s' in %s",
				  key_of(c, p), what);
	}
	return 0;
}

static int want_type(struct ctx *c, const yaml_node_t *n, yaml_node_type_t t, const char *what)
{
	if (n->type != t)
		return at(c, n, "%s must be %s, not %s", what,
			  t == YAML_MAPPING_NODE ? "a mapping" : "a list", kind_name(n));
	return 0;
}

/* A mapping with string keys, each once. */
static int want_map(struct ctx *c, const yaml_node_t *n, const char *what)
{
	int rc = want_type(c, n, YAML_MAPPING_NODE, what);

	if (rc == 0 && ydoc_check_map(c->y, n) < 0)
		rc = -EINVAL;
	return rc;
}

/* The value of key in mapping m (checked by want_map), or NULL. */
static yaml_node_t *map_get(struct ctx *c, const yaml_node_t *m, const char *key)
{
	return ydoc_get(c->y, m, key);
}

static void skip_rule(struct rule *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void skip_rule(struct rule *r, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	if (r->skip)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->skip = strdup(msg);
	if (!r->skip)
		r->skip = strdup("out of memory");
}

/* Go's strconv.Atoi: optional sign, decimal digits, no spaces. */
bool rules_atoi_go(const char *s, long long *out)
{
	char *end;

	if (!*s || (!isdigit((unsigned char)*s) && *s != '-' && *s != '+'))
		return false;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return !errno && !*end && end != s && isdigit((unsigned char)end[-1]);
}

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
	if (!bad[0] && e->op == OP_INREGEXP) {
		/* each distinct pattern compiled once, however many rules (or aliases) use it */
		e->re = calloc(e->nval, sizeof(*e->re));
		if (!e->re)
			return log_err_set(c->err, -ENOMEM, "out of memory");
		for (i = 0; i < e->nval && !bad[0]; i++) {
			char why[300];
			int x = rules_regex(c->cache, e->val[i], &e->re[i], why, sizeof(why));

			if (x == -ENOMEM)
				return log_err_set(c->err, -ENOMEM, "out of memory");
			if (x == -ENOSPC) /* a limit of all the rules: why says which */
				return at(c, n, "%s", why);
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

	rc = want_map(c, n, "match expression");
	if (rc == 0)
		rc = only_fields(c, n, fields, "match expression");
	if (rc < 0)
		return rc;
	opn = map_get(c, n, "op");
	if (!opn || is_null(opn))
		return at(c, n, "match expression without 'op'");
	rc = want_string(c, opn, "op", &opname);
	if (rc < 0)
		return rc;
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (!strcmp(ops[k].name, opname))
			break;
	if (k == sizeof(ops) / sizeof(ops[0]))
		return at(c, opn, "unknown op '%s'", opname);
	e->op = ops[k].op;
	tn = map_get(c, n, "type");
	if (tn && !is_null(tn)) {
		rc = want_string(c, tn, "type", &type);
		if (rc < 0)
			return rc;
		e->version = !strcmp(type, "version");
	}
	vn = map_get(c, n, "value");
	if (vn && !is_null(vn)) {
		rc = want_type(c, vn, YAML_SEQUENCE_NODE, "value");
		if (rc < 0)
			return rc;
		for (it = vn->data.sequence.items.start; it < vn->data.sequence.items.top; it++) {
			const char *s;
			char **nv;

			if (!visit(c))
				return ydoc_too_complex(c->y, vn);
			rc = want_string(c, rules_node(c, *it), "value item", &s);
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
static int parse_matcher(struct ctx *c, const yaml_node_t *n, struct matcher *m)
{
	static const char *const fields[] = {"feature", "matchExpressions", "matchName", NULL};
	yaml_node_item_t *it;
	int rc;

	if (is_null(n))
		return 0;
	rc = want_type(c, n, YAML_SEQUENCE_NODE, "matchFeatures");
	if (rc < 0)
		return rc;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *tn = rules_node(c, *it), *fn, *en, *nn;
		yaml_node_pair_t *p;
		struct term *t;
		const char *f;

		if (!visit(c))
			return ydoc_too_complex(c->y, n);
		rc = want_map(c, tn, "matchFeatures item");
		if (rc == 0)
			rc = only_fields(c, tn, fields, "matchFeatures item");
		if (rc < 0)
			return rc;
		t = rules_grow(&m->t, &m->n, sizeof(*t));
		if (!t)
			return log_err_set(c->err, -ENOMEM, "out of memory");
		fn = map_get(c, tn, "feature");
		if (!fn || is_null(fn))
			return at(c, tn, "matchFeatures item without 'feature'");
		rc = want_string(c, fn, "feature", &f);
		if (rc < 0)
			return rc;
		t->feature = strdup(f);
		t->tkey = strdup(f);
		if (!t->feature || !t->tkey)
			return log_err_set(c->err, -ENOMEM, "out of memory");
		for (char *s = t->feature; *s; s++) /* NFD lowercases the feature name */
			*s = (char)tolower((unsigned char)*s);
		en = map_get(c, tn, "matchExpressions");
		if (en && !is_null(en)) {
			rc = want_map(c, en, "matchExpressions");
			if (rc < 0)
				return rc;
			for (p = en->data.mapping.pairs.start; p < en->data.mapping.pairs.top;
			     p++) {
				struct expr *e;

				if (is_null(rules_node(c, p->value)))
					continue; /* a null is pruned, as Kubernetes does */
				e = rules_grow(&t->ex, &t->nex, sizeof(*e));
				if (e)
					e->key = strdup(key_of(c, p));
				if (!e || !e->key)
					return log_err_set(c->err, -ENOMEM, "out of memory");
				rc = parse_expr(c, rules_node(c, p->value), e);
				if (rc < 0)
					return rc;
			}
			t->has_ex = true;
		}
		nn = map_get(c, tn, "matchName");
		if (nn && !is_null(nn)) {
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

/* A map of string to string (labels, vars, annotations, extendedResources); nulls pruned. */
static int parse_strmap(struct ctx *c, const yaml_node_t *n, const char *what, struct kv **out,
			size_t *nout)
{
	yaml_node_pair_t *p;
	char w[80];
	int rc;

	if (is_null(n))
		return 0;
	rc = want_map(c, n, what);
	if (rc < 0)
		return rc;
	snprintf(w, sizeof(w), "%s value", what);
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *v = rules_node(c, p->value);
		const char *s;
		struct kv *kv;

		if (is_null(v))
			continue;
		rc = want_string(c, v, w, &s);
		if (rc < 0)
			return rc;
		kv = rules_grow(out, nout, sizeof(*kv));
		if (!kv)
			return log_err_set(c->err, -ENOMEM, "out of memory");
		kv->k = strdup(key_of(c, p));
		kv->v = strdup(s);
		if (!kv->k || !kv->v)
			return log_err_set(c->err, -ENOMEM, "out of memory");
	}
	return 0;
}

static int parse_template(struct ctx *c, struct rule *r, const yaml_node_t *n, const char *what,
			  const struct tmpl **out)
{
	const char *s;
	char why[300];
	int rc;

	if (is_null(n))
		return 0;
	rc = want_string(c, n, what, &s);
	if (rc < 0)
		return rc;
	if (!*s)
		return 0;				     /* NFD: an empty template is none */
	rc = rules_tmpl(c->cache, s, out, why, sizeof(why)); /* parsed once per distinct text */
	if (rc == -ENOMEM)
		return log_err_set(c->err, rc, "out of memory");
	if (rc < 0)
		skip_rule(r, "%s: %s", what, why);
	return 0;
}

/* RFC 3339 date-time, as the CRD's "format: date-time" (kube-openapi's strfmt). */
static bool date_time(const char *s)
{
	static const char form[] = "dddd-dd-ddTdd:dd:dd";
	size_t i;

	for (i = 0; form[i]; i++) {
		if (form[i] == 'd' ? !isdigit((unsigned char)s[i])
				   : (form[i] == 'T' ? (s[i] != 'T' && s[i] != 't' && s[i] != ' ')
						     : s[i] != form[i]))
			return false;
	}
	s += i;
	if (*s == '.') {
		if (!isdigit((unsigned char)*++s))
			return false;
		while (isdigit((unsigned char)*s))
			s++;
	}
	if (*s == 'Z' || *s == 'z')
		return !s[1];
	return (*s == '+' || *s == '-') && isdigit((unsigned char)s[1]) &&
	       isdigit((unsigned char)s[2]) && s[3] == ':' && isdigit((unsigned char)s[4]) &&
	       isdigit((unsigned char)s[5]) && !s[6];
}

/* taints: [{key, value, effect, timeAdded}], checked against the CRD. */
static int parse_taints(struct ctx *c, const yaml_node_t *n, size_t *count)
{
	static const char *const fields[] = {"key", "value", "effect", "timeAdded", NULL};
	yaml_node_item_t *it;
	int rc;

	if (is_null(n))
		return 0;
	rc = want_type(c, n, YAML_SEQUENCE_NODE, "taints");
	if (rc < 0)
		return rc;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *tn = rules_node(c, *it), *v;
		const char *s;
		size_t i;

		if (!visit(c))
			return ydoc_too_complex(c->y, n);
		rc = want_map(c, tn, "taint");
		if (rc == 0)
			rc = only_fields(c, tn, fields, "taint");
		for (i = 0; rc == 0 && fields[i]; i++) {
			v = map_get(c, tn, fields[i]);
			if ((!v || is_null(v)) && i != 0 && i != 2)
				continue;
			if (!v || is_null(v))
				return at(c, tn, "taint without '%s'", fields[i]);
			rc = want_string(c, v, fields[i], &s);
			if (rc == 0 && i == 3 && !date_time(s))
				return at(c, v, "timeAdded '%.100s' is not an RFC 3339 date-time",
					  s);
		}
		if (rc < 0)
			return rc;
		(*count)++;
	}
	return 0;
}

/*
 * One rule. NodeFeatureRule: the CRD's fields. LabelCountRule (nodeprobe's
 * own kind, counting): name, countLabelsTemplate, matchFeatures, matchAny.
 */
static int parse_rule(struct ctx *c, const yaml_node_t *n, struct rule *r, bool counting)
{
	static const char *const nfr[] = {
	    "name",   "labels", "labelsTemplate", "annotations",   "extendedResources",
	    "taints", "vars",	"varsTemplate",	  "matchFeatures", "matchAny",
	    NULL};
	static const char *const lcr[] = {"name", "countLabelsTemplate", "matchFeatures",
					  "matchAny", NULL};
	struct kv *ignored = NULL;
	size_t nignored = 0, ntaints = 0;
	yaml_node_pair_t *p;
	yaml_node_t *v;
	const char *name;
	char where[300], what[300];
	int rc;

	rc = want_map(c, n, "rule");
	if (rc < 0)
		return rc;
	snprintf(where, sizeof(where), "%s:%zu:%zu", c->file, n->start_mark.line + 1,
		 n->start_mark.column + 1);
	r->where = strdup(where);
	v = map_get(c, n, "name");
	if (!v || is_null(v))
		return at(c, n, "rule without 'name'");
	rc = want_string(c, v, "name", &name);
	if (rc < 0)
		return rc;
	r->name = strdup(name);
	if (!r->where || !r->name)
		return log_err_set(c->err, -ENOMEM, "out of memory");
	snprintf(what, sizeof(what), "rule '%.200s'", name);
	rc = only_fields(c, n, counting ? lcr : nfr, what);
	if (rc < 0)
		return rc;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top && rc == 0; p++) {
		const char *k = key_of(c, p);
		yaml_node_t *val = rules_node(c, p->value);
		size_t before = nignored + ntaints;

		if (!strcmp(k, "labels")) {
			rc = parse_strmap(c, val, "labels", &r->labels, &r->nlabels);
		} else if (!strcmp(k, "vars")) {
			rc = parse_strmap(c, val, "vars", &r->vars, &r->nvars);
		} else if (!strcmp(k, "annotations") || !strcmp(k, "extendedResources")) {
			rc = parse_strmap(c, val, k, &ignored, &nignored);
		} else if (!strcmp(k, "taints")) {
			rc = parse_taints(c, val, &ntaints);
		} else if (!strcmp(k, "labelsTemplate")) {
			rc = parse_template(c, r, val, k, &r->tmpl);
		} else if (!strcmp(k, "varsTemplate")) {
			rc = parse_template(c, r, val, k, &r->vtmpl);
		} else if (!strcmp(k, "countLabelsTemplate")) {
			rc = parse_template(c, r, val, k, &r->count);
		} else if (!strcmp(k, "matchFeatures")) {
			rc = parse_matcher(c, val, &r->mf);
		} else if (!strcmp(k, "matchAny") && !is_null(val)) {
			yaml_node_item_t *it;

			rc = want_type(c, val, YAML_SEQUENCE_NODE, "matchAny");
			for (it = val->data.sequence.items.start;
			     rc == 0 && it < val->data.sequence.items.top; it++) {
				static const char *const fields[] = {"matchFeatures", NULL};
				yaml_node_t *e = rules_node(c, *it), *mf;
				struct matcher *m;

				if (!visit(c))
					return ydoc_too_complex(c->y, val);
				rc = want_map(c, e, "matchAny item");
				if (rc == 0)
					rc = only_fields(c, e, fields, "matchAny item");
				if (rc < 0)
					break;
				m = rules_grow(&r->any, &r->nany, sizeof(*m));
				if (!m)
					return log_err_set(c->err, -ENOMEM, "out of memory");
				mf = map_get(c, e, "matchFeatures");
				if (!mf || is_null(mf))
					return at(c, e, "matchAny item without 'matchFeatures'");
				rc = parse_matcher(c, mf, m);
			}
		}
		/* a features.d file carries labels only: say so for what the rule would do */
		if (rc == 0 && nignored + ntaints > before)
			log_warn("%s: rule '%s': '%s' ignored: a features.d file carries labels "
				 "only (nfd-master applies it from a NodeFeatureRule object)",
				 r->where, r->name, k);
	}
	kv_free(ignored, nignored);
	if (rc == 0 && counting && !r->count && !r->skip)
		return at(c, n, "LabelCountRule rule '%s' without 'countLabelsTemplate'", r->name);
	return rc;
}

static int add_rule(struct rules *rs, struct rule *r)
{
	if (rs->n == rs->cap) {
		size_t ncap = rs->cap ? rs->cap * 2 : 16;
		struct rule *nr = realloc(rs->r, ncap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		rs->r = nr;
		rs->cap = ncap;
	}
	rs->r[rs->n++] = *r;
	return 0;
}

/* Drop the rules of object name (of the same kind) from rs; returns how many. */
static size_t drop_object(struct rules *rs, const char *name, bool counting)
{
	size_t i, j = 0, n = rs->n;

	for (i = 0; i < rs->n; i++) {
		if (!strcmp(rs->r[i].object, name) && rs->r[i].counting == counting) {
			rule_free(&rs->r[i]);
			continue;
		}
		rs->r[j++] = rs->r[i];
	}
	rs->n = j;
	return n - j;
}

/* Kubernetes' name of a custom resource: [a-z0-9]([-a-z0-9]*[a-z0-9])? labels joined by '.', <=
 * 253. */
static bool dns_subdomain(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 253)
		return false;
	for (i = 0; i < n; i++) {
		bool alnum = islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]);
		bool edge = i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.';

		if (!alnum && !(s[i] == '-' && !edge) && !(s[i] == '.' && !edge))
			return false;
	}
	return true;
}

/* metadata.name (Kubernetes requires it; nfd-master orders objects by it). */
static int parse_meta(struct ctx *c, const yaml_node_t *root, const char **name)
{
	yaml_node_t *m = map_get(c, root, "metadata"), *v;
	int rc;

	if (!m || is_null(m))
		return at(c, root, "object without 'metadata.name'");
	rc = want_map(c, m, "metadata");
	if (rc < 0)
		return rc;
	v = map_get(c, m, "name");
	if (!v || is_null(v))
		return at(c, m, "object without 'metadata.name'");
	rc = want_string(c, v, "metadata.name", name);
	if (rc == 0 && !dns_subdomain(*name))
		return at(c, v,
			  "metadata.name '%.100s' is not a DNS-1123 subdomain (lower case, "
			  "digits, '-' and '.')",
			  *name);
	return rc;
}

#define LCR_API "nodeprobe.io/v1alpha1"

/* One document into tmp (a scratch rule list). 0, or error. */
static int parse_doc_body(struct ctx *c, struct rules *tmp)
{
	static const char *const fields[] = {"apiVersion", "kind", "metadata", "spec", NULL};
	static const char *const spec_fields[] = {"rules", NULL};
	yaml_node_t *root = ydoc_root(c->y), *v, *k, *spec, *list;
	yaml_node_item_t *it;
	const char *api, *kind, *name;
	bool nfr, lcr;
	int rc;

	if (!root || is_null(root))
		return 0;
	rc = want_map(c, root, "document");
	if (rc < 0)
		return rc;
	v = map_get(c, root, "apiVersion");
	if (!v)
		return at(c, root, "document without 'apiVersion'");
	rc = want_string(c, v, "apiVersion", &api);
	if (rc < 0)
		return rc;
	k = map_get(c, root, "kind");
	if (!k)
		return at(c, root, "document without 'kind'");
	rc = want_string(c, k, "kind", &kind);
	if (rc < 0)
		return rc;
	nfr = !strcmp(api, "nfd.k8s-sigs.io/v1alpha1") && !strcmp(kind, "NodeFeatureRule");
	lcr = !strcmp(api, LCR_API) && !strcmp(kind, "LabelCountRule");
	if (!nfr && !lcr) {
		log_warn("%s:%zu:%zu: %s '%s' is not nfd.k8s-sigs.io/v1alpha1 NodeFeatureRule, "
			 "document skipped",
			 c->file, v->start_mark.line + 1, v->start_mark.column + 1,
			 strcmp(api, "nfd.k8s-sigs.io/v1alpha1") ? "apiVersion" : "kind",
			 strcmp(api, "nfd.k8s-sigs.io/v1alpha1") ? api : kind);
		return 0;
	}
	rc = only_fields(c, root, fields, kind);
	if (rc == 0)
		rc = parse_meta(c, root, &name);
	if (rc < 0)
		return rc;
	spec = map_get(c, root, "spec");
	if (!spec || is_null(spec))
		return at(c, root, "%s without 'spec'", kind);
	rc = want_map(c, spec, "spec");
	if (rc == 0)
		rc = only_fields(c, spec, spec_fields, "spec");
	if (rc < 0)
		return rc;
	list = map_get(c, spec, "rules");
	if (!list || is_null(list))
		return at(c, spec, "spec without 'rules'");
	rc = want_type(c, list, YAML_SEQUENCE_NODE, "spec.rules");
	if (rc < 0)
		return rc;
	/* a second object of the same name replaces the first, as a second kubectl apply */
	if (drop_object(tmp, name, lcr))
		log_warn("%s:%zu:%zu: %s '%s' replaces the earlier one of that name", c->file,
			 root->start_mark.line + 1, root->start_mark.column + 1, kind, name);
	for (it = list->data.sequence.items.start; it < list->data.sequence.items.top; it++) {
		struct rule r = {0};

		r.counting = lcr;
		r.object = strdup(name);
		rc = r.object ? parse_rule(c, rules_node(c, *it), &r, lcr)
			      : log_err_set(c->err, -ENOMEM, "out of memory");
		if (rc == 0)
			rc = add_rule(tmp, &r) < 0 ? log_err_set(c->err, -ENOMEM, "out of memory")
						   : 0;
		if (rc < 0) {
			rule_free(&r);
			return rc;
		}
	}
	return 0;
}

/*
 * parse_doc_body, and a document whose walking budget ran out is refused: a lookup past the
 * budget finds nothing, so what was read of it may lack fields it has.
 */
static int parse_doc(struct ctx *c, struct rules *tmp)
{
	int rc = parse_doc_body(c, tmp);

	if (rc != -ENOMEM && c->y->budget < 0) /* whatever failed past it, the budget says why */
		rc = ydoc_too_complex(c->y, ydoc_root(c->y));
	return rc;
}

/* Move the rules of one file (tmp, emptied) into rs: its objects replace same-named ones of
 * earlier files. Returns the count, or -ENOMEM (tmp freed either way). */
static int merge_file(struct rules *rs, const char *name, struct rules *tmp, struct log_err *err)
{
	size_t i, j;
	int n = (int)tmp->n;

	for (i = 0; i < tmp->n; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(tmp->r[j].object, tmp->r[i].object) &&
			    tmp->r[j].counting == tmp->r[i].counting)
				break;
		if (j == i && drop_object(rs, tmp->r[i].object, tmp->r[i].counting))
			log_warn("%s: %s '%s' replaces the one of that name loaded before", name,
				 tmp->r[i].counting ? "LabelCountRule" : "NodeFeatureRule",
				 tmp->r[i].object);
	}
	for (i = 0; i < tmp->n; i++) {
		if (tmp->r[i].skip)
			log_warn("%s: rule '%s' skipped: %s", tmp->r[i].where, tmp->r[i].name,
				 tmp->r[i].skip);
		tmp->r[i].seq = rs->seq++;
		if (add_rule(rs, &tmp->r[i]) < 0) {
			for (; i < tmp->n; i++)
				rule_free(&tmp->r[i]);
			n = log_err_set(err, -ENOMEM, "out of memory");
			break;
		}
	}
	free(tmp->r);
	memset(tmp, 0, sizeof(*tmp));
	return n;
}

static void drop_file(struct rules *tmp)
{
	size_t i;

	for (i = 0; i < tmp->n; i++)
		rule_free(&tmp->r[i]);
	free(tmp->r);
	memset(tmp, 0, sizeof(*tmp));
}

int rules_load_buffer(struct rules *rs, const char *name, const char *buf, size_t len,
		      struct log_err *err)
{
	struct rules tmp = {0};
	struct ydoc_stream st;
	struct ydoc y;
	struct ctx c = {.y = &y, .file = name, .err = err, .cache = &rs->cache};
	int rc;

	rc = ydoc_stream_open(&st, name, buf, len, err);
	if (rc < 0)
		return rc;
	while ((rc = ydoc_stream_next(&st, &y)) > 0) {
		rc = parse_doc(&c, &tmp);
		ydoc_free(&y);
		if (rc < 0)
			break;
	}
	ydoc_stream_close(&st);
	if (rc < 0) {
		drop_file(&tmp);
		return rc;
	}
	return merge_file(rs, name, &tmp, err);
}

int rules_load_docs(struct rules *rs, const char *name, const struct yaml_document_s *docs,
		    size_t ndocs, struct log_err *err)
{
	struct rules tmp = {0};
	struct ydoc y;
	struct ctx c = {.y = &y, .file = name, .err = err, .cache = &rs->cache};
	size_t i;
	int rc;

	for (i = 0; i < ndocs; i++) {
		ydoc_borrow(&y, name, &docs[i], err);
		rc = parse_doc(&c, &tmp);
		ydoc_free(&y);
		if (rc < 0) {
			drop_file(&tmp);
			return rc;
		}
	}
	return merge_file(rs, name, &tmp, err);
}

static int load_file(struct rules *rs, const char *path, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(RULES_FILE_MAX);
	int r = sb_read_file(&sb, path);

	if (r == -E2BIG)
		r = log_err_set(err, r,
				"%s: larger than the %u MiB limit for a rules file (split it)",
				path, RULES_FILE_MAX >> 20);
	else if (r < 0)
		r = log_err_set(err, r, "%s: %s", path, strerror(-r));
	else
		r = rules_load_buffer(rs, path, sb.buf, sb.len, err);
	sb_free(&sb);
	return r;
}

static int yaml_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	if (d->d_name[0] == '.')
		return 0;
	return (n > 5 && !strcmp(d->d_name + n - 5, ".yaml")) ||
	       (n > 4 && !strcmp(d->d_name + n - 4, ".yml"));
}

int rules_load_path(struct rules *rs, const char *path, struct log_err *err)
{
	struct dirent **ents = NULL;
	struct stat st;
	int n, i, total = 0, r = 0;

	if (stat(path, &st) < 0)
		return log_err_set(err, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return load_file(rs, path, err);
	n = scandir(path, &ents, yaml_name, alphasort);
	if (n < 0)
		return log_err_set(err, -errno, "%s: %s", path, strerror(errno));
	for (i = 0; i < n; i++) {
		char file[PATH_MAX];

		if (r >= 0) {
			snprintf(file, sizeof(file), "%s/%s", path, ents[i]->d_name);
			r = load_file(rs, file, err);
			if (r > 0)
				total += r;
		}
		free(ents[i]);
	}
	free(ents);
	return r < 0 ? r : total;
}
