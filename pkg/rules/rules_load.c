/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_load: NodeFeatureRule files (YAML, libyaml) into rules, and their memory. */
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
#include "ydoc/ydoc.h"
#include "rules/rules_internal.h"

static const struct {
	const char *name;
	int op;	     /* enum op, or -1: NFD has it, we do not */
	int nvalues; /* required count; -1 at least one; 0 none */
} ops[] = {
    {"In", OP_IN, -1},
    {"NotIn", OP_NOTIN, -1},
    {"InRegexp", OP_INREGEXP, -1},
    {"Exists", OP_EXISTS, 0},
    {"DoesNotExist", OP_DOESNOTEXIST, 0},
    {"Gt", OP_GT, 1},
    {"Lt", OP_LT, 1},
    {"GtLt", OP_GTLT, 2},
    {"IsTrue", OP_ISTRUE, 0},
    {"IsFalse", OP_ISFALSE, 0},
    {"Ge", OP_GE, 1},
    {"Le", OP_LE, 1},
    {"GeLe", OP_GELE, 2},
    {"Any", -1, 0},
};
/* ---------------------------------------------------------------- memory */

static void expr_free(struct expr *e)
{
	size_t i;

	free(e->key);
	for (i = 0; i < e->nval; i++) {
		free(e->val[i]);
		if (e->re)
			goregex_free(e->re[i]);
	}
	free(e->val);
	free(e->re);
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
	}
	free(m->t);
}

static void tnodes_free(struct tnode *n, size_t nn)
{
	size_t i;

	for (i = 0; i < nn; i++) {
		free(n[i].s);
		free(n[i].feature);
		tnodes_free(n[i].body, n[i].nbody);
	}
	free(n);
}

void rules_tmpl_free(struct tmpl *t)
{
	if (!t)
		return;
	tnodes_free(t->n, t->nn);
	free(t);
}

static void rule_free(struct rule *r)
{
	size_t i;

	for (i = 0; i < r->nlabels; i++) {
		free(r->labels[i].k);
		free(r->labels[i].v);
	}
	free(r->labels);
	rules_tmpl_free(r->tmpl);
	rules_tmpl_free(r->count);
	matcher_free(&r->mf);
	for (i = 0; i < r->nany; i++)
		matcher_free(&r->any[i]);
	free(r->any);
	free(r->name);
	free(r->where);
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
	free(r);
}

size_t rules_count(const struct rules *r)
{
	return r->n;
}

/* Grow *arr (of *n elements of size sz) by one zeroed element; NULL on ENOMEM. */
void *rules_grow(void *arr_p, size_t *n, size_t sz)
{
	void **arr = arr_p;
	char *na = realloc(*arr, (*n + 1) * sz);

	if (!na)
		return NULL;
	memset(na + *n * sz, 0, sz);
	*arr = na;
	return na + (*n)++ * sz;
}

bool rules_feature_supported(const char *feature)
{
	/* the features of nodeprobe's sources (pkg/probe), with NFD's names */
	static const char *const known[] = {
	    "pci.device",     "kernel.loadedmodule", "kernel.enabledmodule",
	    "kernel.version", "kernel.config",	     "cpu.cpuid",
	    "cpu.model",      "system.osrelease",    "usb.device",
	};
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(feature, known[i]))
			return true;
	return !strncmp(feature, "dt.", 3);
}

/* ------------------------------------------------------------------ YAML */

struct ctx {
	struct ydoc *y;	     /* current document (pkg/ydoc: limits, lookups, messages) */
	const char *file;    /* name for messages */
	struct log_err *err; /* where errors go */
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

/* A scalar that is not null, as a string (borrowed). */
static int want_string(struct ctx *c, const yaml_node_t *n, const char *what, const char **out)
{
	*out = "";
	if (n->type != YAML_SCALAR_NODE || is_null(n))
		return at(c, n, "%s must be a string, not %s", what, kind_name(n));
	*out = (const char *)n->data.scalar.value;
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

static const char *key_of(struct ctx *c, const yaml_node_pair_t *p)
{
	return (const char *)rules_node(c, p->key)->data.scalar.value;
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

/* {op: X, value: [..], type: T} */
static int parse_expr(struct ctx *c, struct rule *r, const yaml_node_t *n, struct expr *e)
{
	yaml_node_t *opn, *vn, *tn;
	yaml_node_item_t *it;
	const char *opname, *t;
	size_t i, k;
	int rc, want = 0;
	bool typed = false;

	rc = want_map(c, n, "match expression");
	if (rc < 0)
		return rc;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++)
		if (strcmp(key_of(c, p), "op") && strcmp(key_of(c, p), "value") &&
		    strcmp(key_of(c, p), "type"))
			return at(c, rules_node(c, p->key),
				  "unknown field '%s' in match expression", key_of(c, p));
	opn = map_get(c, n, "op");
	if (!opn)
		return at(c, n, "match expression without 'op'");
	rc = want_string(c, opn, "op", &opname);
	if (rc < 0)
		return rc;
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (!strcmp(ops[k].name, opname))
			break;
	if (k == sizeof(ops) / sizeof(ops[0]))
		return at(c, opn, "unknown op '%s'", opname);
	if (ops[k].op < 0)
		skip_rule(r, "op '%s' is not supported", opname);
	e->op = ops[k].op < 0 ? OP_IN : (enum op)ops[k].op;
	tn = map_get(c, n, "type");
	if (tn && !is_null(tn)) {
		rc = want_string(c, tn, "type", &t);
		if (rc < 0)
			return rc;
		skip_rule(r, "'type: %s' is not supported", t);
		typed = true; /* its values are not integers: not checked as such */
	}
	vn = map_get(c, n, "value");
	if (vn && !is_null(vn)) {
		rc = want_type(c, vn, YAML_SEQUENCE_NODE, "value");
		if (rc < 0)
			return rc;
		for (it = vn->data.sequence.items.start; it < vn->data.sequence.items.top; it++) {
			yaml_node_t *v = rules_node(c, *it);
			const char *s;
			char **nv;

			if (!visit(c))
				return at(c, vn, "document too complex");
			if (v->type != YAML_SCALAR_NODE)
				return at(c, v, "value must be a list of strings, not of %s",
					  kind_name(v));
			s = (const char *)v->data.scalar.value;
			nv = rules_grow(&e->val, &e->nval, sizeof(char *));
			if (nv)
				*nv = strdup(s);
			if (!nv || !*nv)
				return log_err_set(c->err, -ENOMEM, "out of memory");
		}
	}
	if (ops[k].op < 0 || typed)
		return 0;
	want = ops[k].nvalues;
	if (want == 0 && e->nval)
		return at(c, vn, "op %s takes no value", opname);
	if (want < 0 && !e->nval)
		return at(c, vn ? vn : n, "op %s needs at least one value", opname);
	if (want > 0 && e->nval != (size_t)want)
		return at(c, vn ? vn : n, "op %s needs exactly %d value%s", opname, want,
			  want > 1 ? "s" : "");
	if (e->op == OP_GT || e->op == OP_LT || e->op == OP_GTLT || e->op == OP_GE ||
	    e->op == OP_LE || e->op == OP_GELE) {
		for (i = 0; i < e->nval; i++)
			if (!rules_atoi_go(e->val[i], &e->num[i]))
				return at(c, rules_node(c, vn->data.sequence.items.start[i]),
					  "op %s: '%s' is not an integer", opname, e->val[i]);
		/* NFD refuses a range whose ends are not in order, for both range ops */
		if ((e->op == OP_GTLT || e->op == OP_GELE) && e->num[0] >= e->num[1])
			return at(c, vn, "op %s: the first value must be less than the second",
				  opname);
	}
	if (e->op == OP_INREGEXP) {
		/* Go's regexp (NFD's), unanchored as regexp.MatchString; see pkg/goregex. */
		e->re = calloc(e->nval, sizeof(*e->re));
		if (!e->re)
			return log_err_set(c->err, -ENOMEM, "out of memory");
		for (i = 0; i < e->nval; i++) {
			char why[160];
			int x = goregex_compile(e->val[i], 0, &e->re[i], why, sizeof(why));

			if (x == -ENOMEM)
				return log_err_set(c->err, -ENOMEM, "out of memory");
			if (x < 0)
				return at(c, rules_node(c, vn->data.sequence.items.start[i]),
					  "invalid regular expression '%.200s': %s", e->val[i],
					  x == -E2BIG ? "too long" : why);
		}
	}
	return 0;
}

/* [{feature, matchExpressions, matchName}, ...] */
static int parse_matcher(struct ctx *c, struct rule *r, const yaml_node_t *n, struct matcher *m)
{
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
			return at(c, n, "document too complex");
		rc = want_map(c, tn, "matchFeatures item");
		if (rc < 0)
			return rc;
		for (p = tn->data.mapping.pairs.start; p < tn->data.mapping.pairs.top; p++)
			if (strcmp(key_of(c, p), "feature") &&
			    strcmp(key_of(c, p), "matchExpressions") &&
			    strcmp(key_of(c, p), "matchName"))
				return at(c, rules_node(c, p->key),
					  "unknown field '%s' in matchFeatures item", key_of(c, p));
		t = rules_grow(&m->t, &m->n, sizeof(*t));
		if (!t)
			return log_err_set(c->err, -ENOMEM, "out of memory");
		fn = map_get(c, tn, "feature");
		if (!fn)
			return at(c, tn, "matchFeatures item without 'feature'");
		rc = want_string(c, fn, "feature", &f);
		if (rc < 0)
			return rc;
		t->feature = strdup(f);
		if (!t->feature)
			return log_err_set(c->err, -ENOMEM, "out of memory");
		for (char *s = t->feature; *s; s++) /* NFD lowercases the feature name */
			*s = (char)tolower((unsigned char)*s);
		if (!rules_feature_supported(t->feature))
			skip_rule(r, "feature '%s' is not supported", t->feature);
		en = map_get(c, tn, "matchExpressions");
		if (en && !is_null(en)) {
			rc = want_map(c, en, "matchExpressions");
			if (rc < 0)
				return rc;
			for (p = en->data.mapping.pairs.start; p < en->data.mapping.pairs.top;
			     p++) {
				struct expr *e = rules_grow(&t->ex, &t->nex, sizeof(*e));

				if (e)
					e->key = strdup(key_of(c, p));
				if (!e || !e->key)
					return log_err_set(c->err, -ENOMEM, "out of memory");
				rc = parse_expr(c, r, rules_node(c, p->value), e);
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
			rc = parse_expr(c, r, nn, t->name);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static int parse_labels(struct ctx *c, struct rule *r, const yaml_node_t *n)
{
	yaml_node_pair_t *p;
	int rc;

	if (is_null(n))
		return 0;
	rc = want_map(c, n, "labels");
	if (rc < 0)
		return rc;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *v = rules_node(c, p->value);
		struct kv *kv;

		if (v->type != YAML_SCALAR_NODE)
			return at(c, v, "label value must be a string, not %s", kind_name(v));
		kv = rules_grow(&r->labels, &r->nlabels, sizeof(*kv));
		if (!kv)
			return log_err_set(c->err, -ENOMEM, "out of memory");
		kv->k = strdup(key_of(c, p));
		kv->v = strdup(is_null(v) ? "" : (const char *)v->data.scalar.value);
		if (!kv->k || !kv->v)
			return log_err_set(c->err, -ENOMEM, "out of memory");
	}
	return 0;
}

static int parse_template(struct ctx *c, struct rule *r, const yaml_node_t *n, const char *what,
			  struct tmpl **out)
{
	const char *s;
	char why[300];
	int rc;

	if (is_null(n))
		return 0;
	rc = want_string(c, n, what, &s);
	if (rc < 0)
		return rc;
	rc = rules_tmpl_parse(s, out, why, sizeof(why));
	if (rc == -ENOMEM)
		return log_err_set(c->err, rc, "out of memory");
	if (rc < 0)
		skip_rule(r, "%s: %s", what, why);
	return 0;
}

static int parse_rule(struct ctx *c, const yaml_node_t *n, struct rule *r)
{
	static const char *const ignored[] = {"annotations", "extendedResources", "taints", "vars",
					      "varsTemplate"};
	yaml_node_pair_t *p;
	yaml_node_t *v;
	const char *name;
	char where[300];
	int rc;
	size_t i;

	rc = want_map(c, n, "rule");
	if (rc < 0)
		return rc;
	snprintf(where, sizeof(where), "%s:%zu:%zu", c->file, n->start_mark.line + 1,
		 n->start_mark.column + 1);
	r->where = strdup(where);
	v = map_get(c, n, "name");
	if (!v)
		return at(c, n, "rule without 'name'");
	rc = want_string(c, v, "name", &name);
	if (rc < 0)
		return rc;
	r->name = strdup(name);
	if (!r->where || !r->name)
		return log_err_set(c->err, -ENOMEM, "out of memory");
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *k = key_of(c, p);
		yaml_node_t *val = rules_node(c, p->value);

		if (!strcmp(k, "name"))
			continue;
		if (!strcmp(k, "labels")) {
			rc = parse_labels(c, r, val);
		} else if (!strcmp(k, "labelsTemplate")) {
			rc = parse_template(c, r, val, "labelsTemplate", &r->tmpl);
		} else if (!strcmp(k, "countLabelsTemplate")) {
			rc = parse_template(c, r, val, "countLabelsTemplate", &r->count);
		} else if (!strcmp(k, "matchFeatures")) {
			rc = parse_matcher(c, r, val, &r->mf);
		} else if (!strcmp(k, "matchAny")) {
			yaml_node_item_t *it;

			if (is_null(val))
				continue;
			rc = want_type(c, val, YAML_SEQUENCE_NODE, "matchAny");
			if (rc < 0)
				return rc;
			for (it = val->data.sequence.items.start; it < val->data.sequence.items.top;
			     it++) {
				yaml_node_t *e = rules_node(c, *it), *mf;
				struct matcher *m;

				if (!visit(c))
					return at(c, val, "document too complex");
				rc = want_map(c, e, "matchAny item");
				if (rc < 0)
					return rc;
				for (yaml_node_pair_t *q = e->data.mapping.pairs.start;
				     q < e->data.mapping.pairs.top; q++)
					if (strcmp(key_of(c, q), "matchFeatures"))
						return at(c, rules_node(c, q->key),
							  "unknown field '%s' in matchAny item",
							  key_of(c, q));
				m = rules_grow(&r->any, &r->nany, sizeof(*m));
				if (!m)
					return log_err_set(c->err, -ENOMEM, "out of memory");
				mf = map_get(c, e, "matchFeatures");
				if (!mf)
					return at(c, e, "matchAny item without 'matchFeatures'");
				rc = parse_matcher(c, r, mf, m);
				if (rc < 0)
					return rc;
			}
			rc = 0;
		} else {
			for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
				if (!strcmp(k, ignored[i]))
					break;
			if (i == sizeof(ignored) / sizeof(ignored[0]))
				return at(c, rules_node(c, p->key),
					  "unknown field '%s' in rule '%s'", k, r->name);
			if (!is_null(val))
				log_warn(
				    "%s: rule '%s': '%s' ignored: nodeprobe writes labels only",
				    r->where, r->name, k);
			rc = 0;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
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

/* One document into tmp (a scratch rule list). 0, or error. */
static int parse_doc(struct ctx *c, struct rules *tmp)
{
	yaml_node_t *root = ydoc_root(c->y), *v, *spec, *list;
	yaml_node_item_t *it;
	const char *s;
	int rc;

	if (!root || is_null(root))
		return 0;
	rc = want_map(c, root, "document");
	if (rc < 0)
		return rc;
	v = map_get(c, root, "apiVersion");
	if (!v)
		return at(c, root, "document without 'apiVersion'");
	rc = want_string(c, v, "apiVersion", &s);
	if (rc < 0)
		return rc;
	if (strcmp(s, "nfd.k8s-sigs.io/v1alpha1")) {
		log_warn(
		    "%s:%zu:%zu: apiVersion '%s' is not nfd.k8s-sigs.io/v1alpha1, document skipped",
		    c->file, v->start_mark.line + 1, v->start_mark.column + 1, s);
		return 0;
	}
	v = map_get(c, root, "kind");
	if (!v)
		return at(c, root, "document without 'kind'");
	rc = want_string(c, v, "kind", &s);
	if (rc < 0)
		return rc;
	if (strcmp(s, "NodeFeatureRule")) {
		log_warn("%s:%zu:%zu: kind '%s' is not NodeFeatureRule, document skipped", c->file,
			 v->start_mark.line + 1, v->start_mark.column + 1, s);
		return 0;
	}
	spec = map_get(c, root, "spec");
	if (!spec)
		return at(c, root, "NodeFeatureRule without 'spec'");
	rc = want_map(c, spec, "spec");
	if (rc < 0)
		return rc;
	list = map_get(c, spec, "rules");
	if (!list)
		return at(c, spec, "spec without 'rules'");
	rc = want_type(c, list, YAML_SEQUENCE_NODE, "spec.rules");
	if (rc < 0)
		return rc;
	for (it = list->data.sequence.items.start; it < list->data.sequence.items.top; it++) {
		struct rule r = {0};

		rc = parse_rule(c, rules_node(c, *it), &r);
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

/* rules_load_buffer; trusted: YAML compiled into the binary (ydoc_stream_open_trusted) */
static int load_buffer(struct rules *rs, const char *name, const char *buf, size_t len,
		       bool trusted, struct log_err *err)
{
	struct rules tmp = {0};
	struct ydoc_stream st;
	struct ydoc y;
	struct ctx c = {.y = &y, .file = name, .err = err};
	int rc;
	size_t i;

	rc = trusted ? ydoc_stream_open_trusted(&st, name, buf, len, err)
		     : ydoc_stream_open(&st, name, buf, len, err);
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
		for (i = 0; i < tmp.n; i++)
			rule_free(&tmp.r[i]);
		free(tmp.r);
		return rc;
	}
	for (i = 0; i < tmp.n; i++) {
		if (tmp.r[i].skip)
			log_warn("%s: rule '%s' skipped: %s", tmp.r[i].where, tmp.r[i].name,
				 tmp.r[i].skip);
		if (add_rule(rs, &tmp.r[i]) < 0) {
			for (; i < tmp.n; i++)
				rule_free(&tmp.r[i]);
			free(tmp.r);
			return log_err_set(err, -ENOMEM, "out of memory");
		}
	}
	free(tmp.r);
	return (int)tmp.n;
}

int rules_load_buffer(struct rules *rs, const char *name, const char *buf, size_t len,
		      struct log_err *err)
{
	return load_buffer(rs, name, buf, len, false, err);
}

int rules_load_trusted(struct rules *rs, const char *name, const char *buf, size_t len,
		       struct log_err *err)
{
	return load_buffer(rs, name, buf, len, true, err);
}

static int load_file(struct rules *rs, const char *path, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(RULES_FILE_MAX);
	int r = sb_read_file(&sb, path);

	if (r == -E2BIG)
		r = log_err_set(err, r, "%s: larger than %u bytes", path, RULES_FILE_MAX);
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
