/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules: NFD NodeFeatureRule files (YAML, libyaml) evaluated against raw features into labels. */
#include "goregex/goregex.h"
#include "rules/rules.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "feature/feature.h"
#include "label/label.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

#define RULES_FILE_MAX	     (1u << 20) /* bytes per rules file */
#define RULES_NODE_BUDGET    10000000 /* YAML nodes and key comparisons per document (alias bombs) */
#define RULES_TEMPLATE_OUT   (1u << 20) /* bytes a template may expand to */
#define RULES_TEMPLATE_DEPTH 16		/* nested ranges */
#define RULES_RULE_LABELS    4096 /* labels one rule may produce (a features.d file holds 64 KiB) */
#define NFD_PREFIX	     "feature.node.kubernetes.io/"

enum op {
	OP_IN,
	OP_NOTIN,
	OP_INREGEXP,
	OP_EXISTS,
	OP_DOESNOTEXIST,
	OP_GT,
	OP_LT,
	OP_GTLT,
	OP_ISTRUE,
	OP_ISFALSE,
};

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
    {"Ge", -1, 0},
    {"Le", -1, 0},
    {"GeLe", -1, 0},
    {"Any", -1, 0},
};

struct expr {
	char *key;	     /* attribute/flag name; NULL for matchName */
	enum op op;	     /* operator */
	char **val;	     /* values */
	size_t nval;	     /* number of values */
	struct goregex **re; /* InRegexp: compiled values (pkg/goregex) */
	long long num[2];    /* Gt/Lt/GtLt: parsed values */
};

struct term {
	char *feature;	   /* "pci.device" */
	struct expr *ex;   /* matchExpressions */
	size_t nex;	   /* number of expressions */
	bool has_ex;	   /* matchExpressions given (possibly empty) */
	struct expr *name; /* matchName, or NULL */
};

struct matcher {
	struct term *t; /* AND over these */
	size_t n;	/* number of terms */
};

/* labelsTemplate subset, parsed. */
enum tkind { T_TEXT, T_FIELD, T_LEN, T_INDEX, T_RANGE };

struct tnode {
	enum tkind kind;    /* what this node prints */
	char *s;	    /* T_TEXT: text; T_FIELD/T_INDEX: attribute */
	char *feature;	    /* T_LEN/T_INDEX/T_RANGE: "dom.feat" */
	long index;	    /* T_INDEX: element index */
	struct tnode *body; /* T_RANGE: body nodes */
	size_t nbody;	    /* T_RANGE: number of body nodes */
};

struct tmpl {
	struct tnode *n; /* top-level nodes */
	size_t nn;	 /* number of nodes */
};

struct kv {
	char *k, *v; /* label key and value */
};

struct rule {
	char *name;	     /* rule name */
	char *where;	     /* "file:line:col" of the rule */
	struct kv *labels;   /* static labels */
	size_t nlabels;	     /* number of static labels */
	struct tmpl *tmpl;   /* labelsTemplate, or NULL */
	struct tmpl *count;  /* countLabelsTemplate (extension), or NULL */
	struct matcher mf;   /* matchFeatures */
	struct matcher *any; /* matchAny elements */
	size_t nany;	     /* number of matchAny elements */
	char *skip;	     /* why the rule is skipped, or NULL */
};

struct rules {
	struct rule *r; /* rules in load order */
	size_t n, cap;	/* used, allocated */
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

static void tmpl_free(struct tmpl *t)
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
	tmpl_free(r->tmpl);
	tmpl_free(r->count);
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
static void *grow(void *arr_p, size_t *n, size_t sz)
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
	return !strcmp(feature, "pci.device") || !strcmp(feature, "kernel.loadedmodule") ||
	       !strcmp(feature, "kernel.enabledmodule") || !strncmp(feature, "dt.", 3);
}

/* ------------------------------------------------------------- templates */

/* Parse "{{ ... }}" text into nodes. Returns 0, -EINVAL with *why (static) set, -ENOMEM. */
struct tparse {
	const char *p;	 /* cursor */
	const char *why; /* unsupported construct, for the warning */
	char what[160];	 /* detail */
};

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

/* ".dom.feat" -> "dom.feat" (exactly two identifiers). NULL if not that form. */
static char *feature_ref(const char *s, size_t n)
{
	size_t i, dots = 0;

	if (n < 4 || s[0] != '.')
		return NULL;
	for (i = 1; i < n; i++) {
		if (s[i] == '.')
			dots++;
		else if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return NULL;
	}
	if (dots != 1 || s[1] == '.' || s[n - 1] == '.')
		return NULL;
	return dupn(s + 1, n - 1);
}

static bool is_ident(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

static int tparse_nodes(struct tparse *tp, struct tnode **out, size_t *nout, int depth,
			bool *ended);

/* One action's words (between the delimiters, trimmed). */
static int tparse_action(struct tparse *tp, const char *a, size_t n, struct tnode **out,
			 size_t *nout, int depth, bool *ended)
{
	struct tnode *t;

	if (n == 3 && !memcmp(a, "end", 3)) {
		if (depth == 0) {
			tp->why = "'end' without 'range'";
			return -EINVAL;
		}
		*ended = true;
		return 0;
	}
	t = grow(out, nout, sizeof(**out));
	if (!t)
		return -ENOMEM;
	if (n > 6 && !memcmp(a, "range", 5) && isspace((unsigned char)a[5])) {
		size_t off = 6;
		bool body_ended = false;
		int r;

		while (off < n && isspace((unsigned char)a[off]))
			off++;
		t->kind = T_RANGE;
		t->feature = feature_ref(a + off, n - off);
		if (!t->feature)
			goto unsupported;
		if (depth >= RULES_TEMPLATE_DEPTH) {
			tp->why = "ranges nested too deep";
			return -EINVAL;
		}
		r = tparse_nodes(tp, &t->body, &t->nbody, depth + 1, &body_ended);
		if (r < 0)
			return r;
		if (!body_ended) {
			tp->why = "'range' without 'end'";
			return -EINVAL;
		}
		return 0;
	}
	if (n > 4 && !memcmp(a, "len", 3) && isspace((unsigned char)a[3])) {
		size_t off = 4;

		while (off < n && isspace((unsigned char)a[off]))
			off++;
		t->kind = T_LEN;
		t->feature = feature_ref(a + off, n - off);
		if (!t->feature)
			goto unsupported;
		return 0;
	}
	if (n > 7 && !memcmp(a, "(index ", 7)) {
		const char *close = memchr(a, ')', n), *sp;
		char *end;

		if (!close || close[1] != '.' || !is_ident(close + 2, (size_t)(a + n - close - 2)))
			goto unsupported;
		sp = memchr(a + 7, ' ', (size_t)(close - a - 7));
		if (!sp)
			goto unsupported;
		t->kind = T_INDEX;
		t->feature = feature_ref(a + 7, (size_t)(sp - a - 7));
		errno = 0;
		t->index = strtol(sp + 1, &end, 10);
		if (!t->feature || end != close || errno || t->index < 0)
			goto unsupported;
		t->s = dupn(close + 2, (size_t)(a + n - close - 2));
		return t->s ? 0 : -ENOMEM;
	}
	if (depth > 0 && n > 1 && a[0] == '.' && is_ident(a + 1, n - 1)) {
		t->kind = T_FIELD;
		t->s = dupn(a + 1, n - 1);
		return t->s ? 0 : -ENOMEM;
	}
unsupported:
	tp->why = "unsupported template action";
	snprintf(tp->what, sizeof(tp->what), "%.*s", (int)(n > 100 ? 100 : n), a);
	return -EINVAL;
}

static int tparse_nodes(struct tparse *tp, struct tnode **out, size_t *nout, int depth, bool *ended)
{
	while (*tp->p) {
		const char *open = strstr(tp->p, "{{"), *close, *a, *b;
		size_t tlen = open ? (size_t)(open - tp->p) : strlen(tp->p);
		int r;

		if (open && open[2] == '-' && isspace((unsigned char)open[3]))
			while (tlen > 0 && isspace((unsigned char)tp->p[tlen - 1]))
				tlen--;
		if (tlen) {
			struct tnode *t = grow(out, nout, sizeof(**out));

			if (!t)
				return -ENOMEM;
			t->kind = T_TEXT;
			t->s = dupn(tp->p, tlen);
			if (!t->s)
				return -ENOMEM;
		}
		if (!open) {
			tp->p += strlen(tp->p);
			break;
		}
		close = strstr(open + 2, "}}");
		if (!close) {
			tp->why = "unclosed action";
			return -EINVAL;
		}
		a = open + 2;
		b = close;
		if (*a == '-' && isspace((unsigned char)a[1]))
			a++;
		if (b - 1 > a && b[-1] == '-' && isspace((unsigned char)b[-2]))
			b--;
		while (a < b && isspace((unsigned char)*a))
			a++;
		while (b > a && isspace((unsigned char)b[-1]))
			b--;
		tp->p = close + 2;
		if (close > open + 3 && close[-1] == '-' && isspace((unsigned char)close[-2]))
			while (isspace((unsigned char)*tp->p))
				tp->p++;
		r = tparse_action(tp, a, (size_t)(b - a), out, nout, depth, ended);
		if (r < 0 || *ended)
			return r;
	}
	return 0;
}

/* Parse src; NULL with *why/what set if unsupported, NULL + ENOMEM flag otherwise. */
static int tmpl_parse(const char *src, struct tmpl **out, char *why, size_t whylen)
{
	struct tparse tp = {.p = src};
	struct tmpl *t = calloc(1, sizeof(*t));
	bool ended = false;
	int r;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	r = tparse_nodes(&tp, &t->n, &t->nn, 0, &ended);
	if (r < 0) {
		if (r == -EINVAL)
			snprintf(why, whylen, "%s%s%s%s", tp.why, tp.what[0] ? " '{{ " : "",
				 tp.what, tp.what[0] ? " }}'" : "");
		tmpl_free(t);
		return r;
	}
	*out = t;
	return 0;
}

/* ------------------------------------------------------------------ YAML */

struct ctx {
	const char *file;     /* name for messages */
	yaml_document_t *doc; /* current document */
	struct log_err *err;  /* where errors go */
	long budget;	      /* nodes left to visit */
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
	return log_err_set(c->err, -EINVAL, "%s:%zu:%zu: %s", c->file, n->start_mark.line + 1,
			   n->start_mark.column + 1, msg);
}

static yaml_node_t *node(struct ctx *c, int i)
{
	return yaml_document_get_node(c->doc, i);
}

static bool visit(struct ctx *c)
{
	return --c->budget >= 0;
}

static bool is_null(const yaml_node_t *n)
{
	const char *v;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	v = (const char *)n->data.scalar.value;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

static const char *kind_name(const yaml_node_t *n)
{
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	return is_null(n) ? "null" : "a string";
}

/* A scalar that is not null, as a string (borrowed). */
static int want_string(struct ctx *c, const yaml_node_t *n, const char *what, const char **out)
{
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

static int map_check(struct ctx *c, const yaml_node_t *m);

/* A mapping with string keys, each once. */
static int want_map(struct ctx *c, const yaml_node_t *n, const char *what)
{
	int rc = want_type(c, n, YAML_MAPPING_NODE, what);

	return rc < 0 ? rc : map_check(c, n);
}

/* Mapping iteration with duplicate-key detection. */
static int map_check(struct ctx *c, const yaml_node_t *m)
{
	yaml_node_pair_t *p, *q;

	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(c, p->key);

		if (!visit(c))
			return at(c, m, "document too complex");
		if (k->type != YAML_SCALAR_NODE)
			return at(c, k, "mapping key must be a string, not %s", kind_name(k));
		for (q = m->data.mapping.pairs.start; q < p; q++)
			if (visit(c) && !strcmp((const char *)node(c, q->key)->data.scalar.value,
						(const char *)k->data.scalar.value))
				return at(c, k, "duplicate key '%s'", k->data.scalar.value);
		if (c->budget < 0)
			return at(c, m, "document too complex");
	}
	return 0;
}

static const char *key_of(struct ctx *c, const yaml_node_pair_t *p)
{
	return (const char *)node(c, p->key)->data.scalar.value;
}

/* The value of key in mapping m, or NULL. */
static yaml_node_t *map_get(struct ctx *c, const yaml_node_t *m, const char *key)
{
	yaml_node_pair_t *p;

	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++)
		if (!strcmp(key_of(c, p), key))
			return node(c, p->value);
	return NULL;
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
static bool atoi_go(const char *s, long long *out)
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

	rc = want_map(c, n, "match expression");
	if (rc < 0)
		return rc;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++)
		if (strcmp(key_of(c, p), "op") && strcmp(key_of(c, p), "value") &&
		    strcmp(key_of(c, p), "type"))
			return at(c, node(c, p->key), "unknown field '%s' in match expression",
				  key_of(c, p));
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
	}
	vn = map_get(c, n, "value");
	if (vn && !is_null(vn)) {
		rc = want_type(c, vn, YAML_SEQUENCE_NODE, "value");
		if (rc < 0)
			return rc;
		for (it = vn->data.sequence.items.start; it < vn->data.sequence.items.top; it++) {
			yaml_node_t *v = node(c, *it);
			const char *s;
			char **nv;

			if (!visit(c))
				return at(c, vn, "document too complex");
			if (v->type != YAML_SCALAR_NODE)
				return at(c, v, "value must be a list of strings, not of %s",
					  kind_name(v));
			s = (const char *)v->data.scalar.value;
			nv = grow(&e->val, &e->nval, sizeof(char *));
			if (nv)
				*nv = strdup(s);
			if (!nv || !*nv)
				return log_err_set(c->err, -ENOMEM, "out of memory");
		}
	}
	if (ops[k].op < 0)
		return 0;
	want = ops[k].nvalues;
	if (want == 0 && e->nval)
		return at(c, vn, "op %s takes no value", opname);
	if (want < 0 && !e->nval)
		return at(c, vn ? vn : n, "op %s needs at least one value", opname);
	if (want > 0 && e->nval != (size_t)want)
		return at(c, vn ? vn : n, "op %s needs exactly %d value%s", opname, want,
			  want > 1 ? "s" : "");
	if (e->op == OP_GT || e->op == OP_LT || e->op == OP_GTLT) {
		for (i = 0; i < e->nval; i++)
			if (!atoi_go(e->val[i], &e->num[i]))
				return at(c, node(c, vn->data.sequence.items.start[i]),
					  "op %s: '%s' is not an integer", opname, e->val[i]);
		if (e->op == OP_GTLT && e->num[0] >= e->num[1])
			return at(c, vn, "op GtLt: the first value must be less than the second");
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
				return at(c, node(c, vn->data.sequence.items.start[i]),
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
		yaml_node_t *tn = node(c, *it), *fn, *en, *nn;
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
				return at(c, node(c, p->key),
					  "unknown field '%s' in matchFeatures item", key_of(c, p));
		t = grow(&m->t, &m->n, sizeof(*t));
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
				struct expr *e = grow(&t->ex, &t->nex, sizeof(*e));

				if (e)
					e->key = strdup(key_of(c, p));
				if (!e || !e->key)
					return log_err_set(c->err, -ENOMEM, "out of memory");
				rc = parse_expr(c, r, node(c, p->value), e);
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
		yaml_node_t *v = node(c, p->value);
		struct kv *kv;

		if (v->type != YAML_SCALAR_NODE)
			return at(c, v, "label value must be a string, not %s", kind_name(v));
		kv = grow(&r->labels, &r->nlabels, sizeof(*kv));
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
	rc = tmpl_parse(s, out, why, sizeof(why));
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
		yaml_node_t *val = node(c, p->value);

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
				yaml_node_t *e = node(c, *it), *mf;
				struct matcher *m;

				if (!visit(c))
					return at(c, val, "document too complex");
				rc = want_map(c, e, "matchAny item");
				if (rc < 0)
					return rc;
				for (yaml_node_pair_t *q = e->data.mapping.pairs.start;
				     q < e->data.mapping.pairs.top; q++)
					if (strcmp(key_of(c, q), "matchFeatures"))
						return at(c, node(c, q->key),
							  "unknown field '%s' in matchAny item",
							  key_of(c, q));
				m = grow(&r->any, &r->nany, sizeof(*m));
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
				return at(c, node(c, p->key), "unknown field '%s' in rule '%s'", k,
					  r->name);
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
	yaml_node_t *root = yaml_document_get_root_node(c->doc), *v, *spec, *list;
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

		rc = parse_rule(c, node(c, *it), &r);
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

int rules_load_buffer(struct rules *rs, const char *name, const char *buf, size_t len,
		      struct log_err *err)
{
	struct rules tmp = {0};
	yaml_parser_t parser;
	yaml_document_t doc;
	struct ctx c = {.file = name, .doc = &doc, .err = err};
	int rc = 0;
	size_t i;

	if (!yaml_parser_initialize(&parser))
		return log_err_set(err, -ENOMEM, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	for (;;) {
		bool end;

		if (!yaml_parser_load(&parser, &doc)) {
			rc = log_err_set(
			    err, -EINVAL, "%s:%zu:%zu: %s%s%s", name, parser.problem_mark.line + 1,
			    parser.problem_mark.column + 1,
			    parser.problem ? parser.problem : "YAML error",
			    parser.context ? " " : "", parser.context ? parser.context : "");
			break;
		}
		end = !yaml_document_get_root_node(&doc);
		c.budget = RULES_NODE_BUDGET;
		if (!end)
			rc = parse_doc(&c, &tmp);
		yaml_document_delete(&doc);
		if (end || rc < 0)
			break;
	}
	yaml_parser_delete(&parser);
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

/* ------------------------------------------------------------ evaluation */

/* One matched element: an instance, or a flag/attribute element. */
struct elem {
	const struct feat *inst; /* instance, or NULL */
	const char *name;	 /* flag/attribute name */
	const char *value;	 /* attribute value; NULL for a flag (NFD: no Value key) */
};

static int elem_cmp(const void *a, const void *b)
{
	return strcmp(((const struct elem *)a)->name, ((const struct elem *)b)->name);
}

/* Elements matched per feature name, for templates (NFD's matchedFeatures). */
struct mgroup {
	const char *feature; /* borrowed from the rule */
	struct elem *e;	     /* matched elements */
	size_t n;	     /* number */
};

struct matched {
	struct mgroup *g; /* groups */
	size_t n;	  /* number of groups */
};

static void matched_free(struct matched *m)
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
	g = grow(&m->g, &m->n, sizeof(*g));
	if (g)
		g->feature = feature;
	return g;
}

static int matched_add(struct mgroup *g, const struct feat *inst, const char *name,
		       const char *value)
{
	struct elem *e = grow(&g->e, &g->n, sizeof(*e));

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
		if (!atoi_go(value, &v)) {
			log_warn("not a number '%s' for op %s", value,
				 e->op == OP_GT	  ? "Gt"
				 : e->op == OP_LT ? "Lt"
						  : "GtLt");
			return -EDOM;
		}
		if (e->op == OP_GT)
			return v > e->num[0];
		if (e->op == OP_LT)
			return v < e->num[0];
		return v > e->num[0] && v < e->num[1];
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
static int eval_matcher(const struct matcher *m, const struct feat_set *fs, struct matched *out)
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

/* ------------------------------------------------------ template output */

static const struct mgroup *mgroup_find(const struct matched *m, const char *feature)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->g[i].feature, feature))
			return &m->g[i];
	return NULL;
}

/* Field of a matched element (NFD's MatchedElement map), or NULL if it has no such key. */
static const char *elem_field(const struct elem *e, const char *field)
{
	if (e->inst)
		return feat_lookup(e->inst, field);
	if (!strcmp(field, "Name"))
		return e->name;
	if (!strcmp(field, "Value"))
		return e->value;
	return NULL;
}

/* NFD runs templates with missingkey=error: a missing key fails the template. */
static int no_key(char *why, size_t whylen, const char *key)
{
	snprintf(why, whylen, "map has no entry for key \"%s\"", key);
	return -EINVAL;
}

static int texec(const struct tnode *n, size_t nn, const struct matched *m, const struct elem *dot,
		 struct strbuf *out, char *why, size_t whylen)
{
	size_t i, j;
	int r = 0;

	for (i = 0; i < nn && r == 0; i++) {
		const struct mgroup *g = NULL;
		const char *v;

		if (n[i].kind == T_LEN || n[i].kind == T_INDEX || n[i].kind == T_RANGE) {
			g = mgroup_find(m, n[i].feature);
			if (!g)
				return no_key(why, whylen, n[i].feature);
		}
		switch (n[i].kind) {
		case T_TEXT:
			r = sb_add(out, n[i].s);
			break;
		case T_FIELD:
			v = elem_field(dot, n[i].s);
			if (!v)
				return no_key(why, whylen, n[i].s);
			r = sb_add(out, v);
			break;
		case T_LEN:
			r = sb_addf(out, "%zu", g->n);
			break;
		case T_INDEX:
			if ((size_t)n[i].index >= g->n) {
				snprintf(why, whylen, "index %ld out of range for .%s", n[i].index,
					 n[i].feature);
				return -EINVAL;
			}
			v = elem_field(&g->e[n[i].index], n[i].s);
			if (!v)
				return no_key(why, whylen, n[i].s);
			r = sb_add(out, v);
			break;
		case T_RANGE:
			for (j = 0; j < g->n && r == 0; j++)
				r = texec(n[i].body, n[i].nbody, m, &g->e[j], out, why, whylen);
			break;
		}
	}
	if (r == -E2BIG)
		snprintf(why, whylen, "output longer than %u bytes", RULES_TEMPLATE_OUT);
	return r;
}

/* A label candidate of one rule evaluation. */
struct cand {
	struct kv *kv; /* key/value pairs, later ones replace earlier */
	size_t n;      /* number */
};

static int cand_put(struct cand *c, const char *k, size_t klen, const char *v, size_t vlen)
{
	struct kv *kv = NULL;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strlen(c->kv[i].k) == klen && !memcmp(c->kv[i].k, k, klen))
			kv = &c->kv[i];
	if (kv) {
		char *nv = dupn(v, vlen);

		if (!nv)
			return -ENOMEM;
		free(kv->v);
		kv->v = nv;
		return 0;
	}
	if (c->n >= RULES_RULE_LABELS)
		return -E2BIG;
	kv = grow(&c->kv, &c->n, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	kv->k = dupn(k, klen);
	kv->v = dupn(v, vlen);
	return kv->k && kv->v ? 0 : -ENOMEM;
}

static void cand_free(struct cand *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->kv[i].k);
		free(c->kv[i].v);
	}
	free(c->kv);
}

static void trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

/* Expand a template into candidates: "key=value" lines, or (count) keys counted. */
static int run_template(const struct rule *rl, const struct tmpl *t, bool count,
			const struct matched *m, struct cand *c)
{
	struct strbuf out = STRBUF_INIT(RULES_TEMPLATE_OUT);
	char why[200] = "";
	const char *p;
	int r = texec(t->n, t->nn, m, NULL, &out, why, sizeof(why));

	if (r == -ENOMEM)
		goto out;
	if (r < 0) {
		log_warn("%s: rule '%s': template: %s", rl->where, rl->name, why);
		goto out;
	}
	for (p = out.buf; *p;) {
		const char *nl = strchr(p, '\n'), *line = p, *eq;
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		p += n + (nl ? 1 : 0);
		trim(&line, &n);
		if (!n)
			continue;
		if (count) {
			char num[24];
			size_t i, have = 0;

			for (i = 0; i < c->n; i++)
				if (strlen(c->kv[i].k) == n && !memcmp(c->kv[i].k, line, n))
					have = strtoul(c->kv[i].v, NULL, 10);
			snprintf(num, sizeof(num), "%zu", have + 1);
			r = cand_put(c, line, n, num, strlen(num));
		} else {
			eq = memchr(line, '=', n);
			if (!eq) {
				log_warn("%s: rule '%s': template line '%.*s' is not key=value",
					 rl->where, rl->name, (int)(n > 100 ? 100 : n), line);
				r = -EINVAL;
				goto out;
			}
			r = cand_put(c, line, (size_t)(eq - line), eq + 1,
				     n - (size_t)(eq - line) - 1);
		}
		if (r == -E2BIG)
			log_warn("%s: rule '%s': template gives more than %d labels", rl->where,
				 rl->name, RULES_RULE_LABELS);
		if (r < 0)
			goto out;
	}
out:
	sb_free(&out);
	return r;
}

/* NFD's getDynamicValue: "@dom.feat.element" from an attributes feature. */
static const char *dynamic_value(const struct feat_set *fs, const char *v, char *why, size_t n)
{
	char feature[256];
	const char *dot1 = strchr(v + 1, '.'), *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
	const struct feat *f;
	const char *val;

	if (!dot2 || (size_t)(dot2 - v - 1) >= sizeof(feature)) {
		snprintf(why, n, "value %s is not in the form of '@domain.feature.element'", v);
		return NULL;
	}
	snprintf(feature, sizeof(feature), "%.*s", (int)(dot2 - v - 1), v + 1);
	f = feat_get(fs, feature);
	if (!f || feat_kind(f) != FEAT_ATTRS) {
		snprintf(why, n, "feature %s not found", feature);
		return NULL;
	}
	val = feat_lookup(f, dot2 + 1);
	if (!val)
		snprintf(why, n, "element %s not found on feature %s", dot2 + 1, feature);
	return val;
}

/* NFD denies kubernetes.io and *.kubernetes.io except feature.node/profile.node. */
static bool ns_denied(const char *key)
{
	const char *slash = strchr(key, '/');
	size_t n = slash ? (size_t)(slash - key) : 0;
	static const char *const ok[] = {"feature.node.kubernetes.io",
					 "profile.node.kubernetes.io"};
	size_t i;

	if (!slash)
		return false;
	for (i = 0; i < 2; i++) {
		size_t m = strlen(ok[i]);

		if (n == m && !memcmp(key, ok[i], m))
			return false;
		if (n > m && key[n - m - 1] == '.' && !memcmp(key + n - m, ok[i], m))
			return false;
	}
	if (n == 13 && !memcmp(key, "kubernetes.io", 13))
		return true;
	return n > 14 && !memcmp(key + n - 14, ".kubernetes.io", 14);
}

static int emit(const struct rule *rl, const struct feat_set *fs, const struct cand *c,
		struct label_set *out, int *count)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		struct log_err e = {0};
		char key[512], why[300];
		const char *v = c->kv[i].v;
		int r;

		snprintf(key, sizeof(key), "%s%s", strchr(c->kv[i].k, '/') ? "" : NFD_PREFIX,
			 c->kv[i].k);
		if (v[0] == '@') {
			v = dynamic_value(fs, v, why, sizeof(why));
			if (!v) {
				log_warn("%s: rule '%s': label '%s' skipped: %s", rl->where,
					 rl->name, key, why);
				continue;
			}
		}
		if (ns_denied(key)) {
			log_warn("%s: rule '%s': label '%s' skipped: namespace not allowed by NFD",
				 rl->where, rl->name, key);
			continue;
		}
		r = label_set_put(out, key, v, &e);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			log_warn("%s: rule '%s': label skipped: %s", rl->where, rl->name, e.msg);
			continue;
		}
		(*count)++;
	}
	return 0;
}

/* Templates for one matched matcher. <0 only for ENOMEM; a template error voids the rule. */
static int templates(const struct rule *rl, const struct matched *m, struct cand *c, bool *failed)
{
	int r = 0;

	if (rl->tmpl)
		r = run_template(rl, rl->tmpl, false, m, c);
	if (r == 0 && rl->count)
		r = run_template(rl, rl->count, true, m, c);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		*failed = true;
	return 0;
}

/* NFD's Execute() for one rule. */
static int eval_rule(const struct rule *rl, const struct feat_set *fs, struct label_set *out,
		     int *count)
{
	struct cand c = {0};
	struct matched m = {0};
	bool failed = false, any = false;
	size_t i;
	int r = 0;

	for (i = 0; i < rl->nany; i++) {
		r = eval_matcher(&rl->any[i], fs, &m);
		if (r < 0)
			goto out;
		if (r > 0) {
			any = true;
			if (!rl->tmpl && !rl->count) {
				matched_free(&m);
				break;
			}
			r = templates(rl, &m, &c, &failed);
			if (r < 0)
				goto out;
		}
		matched_free(&m);
	}
	if (rl->nany && !any)
		goto out;
	if (rl->mf.n) {
		r = eval_matcher(&rl->mf, fs, &m);
		if (r <= 0)
			goto out;
		r = templates(rl, &m, &c, &failed);
		if (r < 0)
			goto out;
	}
	if (failed)
		goto out;
	for (i = 0; i < rl->nlabels; i++) {
		r = cand_put(&c, rl->labels[i].k, strlen(rl->labels[i].k), rl->labels[i].v,
			     strlen(rl->labels[i].v));
		if (r < 0)
			goto out;
	}
	log_debug("%s: rule '%s' matched", rl->where, rl->name);
	r = emit(rl, fs, &c, out, count);
out:
	if (r == -EDOM) {
		log_warn("%s: rule '%s' not applied: a value is not a number", rl->where, rl->name);
		r = 0;
	}
	if (r == -E2BIG) {
		log_warn("%s: rule '%s' not applied: more than %d labels", rl->where, rl->name,
			 RULES_RULE_LABELS);
		r = 0;
	}
	matched_free(&m);
	cand_free(&c);
	return r < 0 ? r : 0;
}

int rules_eval(const struct rules *rs, const struct feat_set *fs, struct label_set *out,
	       struct log_err *err)
{
	int count = 0;
	size_t i;

	for (i = 0; i < rs->n; i++) {
		if (rs->r[i].skip)
			continue;
		if (eval_rule(&rs->r[i], fs, out, &count) < 0)
			return log_err_set(err, -ENOMEM, "out of memory");
	}
	return count;
}
