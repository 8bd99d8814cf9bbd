/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_eval: rules evaluated in nfd-master's order against raw features into labels. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goregex/goregex.h"
#include "rules/rules_internal.h"

/*
 * Semantics: NFD's pkg/apis/nfd/nodefeaturerule (expression.go, rule.go) and
 * pkg/nfd-master/nfd-master.go (order, rule.matched, "@" values), as read for
 * ../shared/reference/nfd.md §10.5-10.7 (NFD 76e6cc8, the same in v0.19.0).
 */

/* ------------------------------------------------------------- versions */

static int ver_cmp(const struct ver *a, const struct ver *b)
{
	int i;

	for (i = 0; i < 3; i++)
		if (a->v[i] != b->v[i])
			return a->v[i] < b->v[i] ? -1 : 1;
	return 0;
}

/* ------------------------------------------------------------ expressions */

static int fail(char *why, size_t whylen, const char *fmt, const char *a)
{
	snprintf(why, whylen, fmt, a);
	return -EINVAL;
}

/*
 * NFD's evaluateMatchExpression: 1 match, 0 not, -EINVAL with why when NFD
 * returns an error (the rule then gives nothing). valid: the element exists;
 * value: its value, NULL for a flag (then only Exists/DoesNotExist can hold,
 * and no other check is made, as NFD).
 */
static int eval_op(const struct expr *e, bool valid, const char *value, char *why, size_t whylen)
{
	long long v;
	struct ver ver;
	int c0, c1;
	size_t i;

	if (e->op == OP_EXISTS || e->op == OP_DOESNOTEXIST) {
		if (e->bad)
			return fail(why, whylen, "%s", e->bad);
		return e->op == OP_EXISTS ? valid : !valid;
	}
	if (!valid || !value)
		return 0;
	if (e->bad)
		return fail(why, whylen, "%s", e->bad);
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
	case OP_ISTRUE:
		return !strcmp(value, "true");
	case OP_ISFALSE:
		return !strcmp(value, "false");
	default:
		break;
	}
	/* the six numeric ops: Go's strconv.Atoi, or versions; Ge, Le, GeLe inclusive */
	if (e->version) {
		if (!rules_version_parse(value, &ver))
			return fail(why, whylen, "not a version '%.100s'", value);
		c0 = ver_cmp(&ver, &e->ver[0]);
		c1 = e->nval > 1 ? ver_cmp(&ver, &e->ver[1]) : 0;
	} else {
		if (!rules_atoi_go(value, &v))
			return fail(why, whylen, "not a number '%.100s'", value);
		c0 = v < e->num[0] ? -1 : v > e->num[0];
		c1 = e->nval > 1 ? (v < e->num[1] ? -1 : v > e->num[1]) : 0;
	}
	switch (e->op) {
	case OP_GT:
		return c0 > 0;
	case OP_GE:
		return c0 >= 0;
	case OP_LT:
		return c0 < 0;
	case OP_LE:
		return c0 <= 0;
	case OP_GTLT:
		return c0 > 0 && c1 < 0;
	default: /* OP_GELE */
		return c0 >= 0 && c1 <= 0;
	}
}

/* ------------------------------------------------------- matched elements */

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

/* All expressions against one attribute map (an instance). */
static int eval_values(const struct term *t, const struct feat *f, char *why, size_t whylen)
{
	size_t i;

	for (i = 0; i < t->nex; i++) {
		const char *v = feat_lookup(f, t->ex[i].key);
		int r = eval_op(&t->ex[i], v != NULL, v, why, whylen);

		if (r <= 0)
			return r;
	}
	return 1;
}

/*
 * matchExpressions, as NFD's MatchMulti: flags and attributes of the name as
 * a union (an expression holds if it holds on either; DoesNotExist needs the
 * name absent from both), instances apart (one instance matching them all).
 */
static int eval_exprs(const struct term *t, const struct parts *p, struct mgroup *g, char *why,
		      size_t whylen)
{
	bool match = p->f || p->a; /* an empty set holds on flags/attributes */
	size_t first = g->n, i;
	int r;

	for (i = 0; i < t->nex && match; i++) {
		const struct expr *x = &t->ex[i];
		const char *v;
		int mk = 0, mv = 0;

		if (p->f) {
			v = feat_lookup(p->f, x->key);
			mk = eval_op(x, v != NULL, NULL, why, whylen); /* a flag has no value */
			if (mk < 0)
				return mk;
			if (mk && matched_add(g, NULL, x->key, NULL) < 0)
				return -ENOMEM;
			if (!mk && x->op == OP_DOESNOTEXIST)
				match = false;
		}
		if (p->a && match) {
			v = feat_lookup(p->a, x->key);
			mv = eval_op(x, v != NULL, v, why, whylen);
			if (mv < 0)
				return mv;
			if (mv && matched_add(g, NULL, x->key, v ? v : "") < 0)
				return -ENOMEM;
			if (!mv && x->op == OP_DOESNOTEXIST)
				match = false;
		}
		if (!mk && !mv)
			match = false;
	}
	if (!match)
		g->n = first; /* NFD drops them when the term fails */
	else if (g->n - first > 1)
		qsort(g->e + first, g->n - first, sizeof(*g->e), elem_cmp); /* sorted by name */
	for (i = 0; p->i && i < feat_ninstances(p->i); i++) {
		const struct feat *in = feat_instance_at(p->i, i);

		r = eval_values(t, in, why, whylen);
		if (r < 0)
			return r;
		if (r) {
			match = true;
			if (matched_add(g, in, NULL, NULL) < 0)
				return -ENOMEM;
		}
	}
	return match;
}

/* matchName, as NFD's MatchNamesMulti: every flag and attribute name, each instance's names. */
static int eval_names(const struct term *t, const struct parts *p, struct mgroup *g, char *why,
		      size_t whylen)
{
	const struct feat *fa[2] = {p->f, p->a};
	size_t first = g->n, i, j, k;
	int r;

	for (k = 0; k < 2; k++) {
		for (j = 0; fa[k] && j < feat_nelems(fa[k]); j++) {
			const char *n, *v;

			feat_elem_at(fa[k], j, &n, &v);
			r = eval_op(t->name, true, n, why, whylen);
			if (r < 0)
				return r;
			if (r > 0 && matched_add(g, NULL, n, k ? v : NULL) < 0)
				return -ENOMEM;
		}
	}
	if (g->n - first > 1)
		qsort(g->e + first, g->n - first, sizeof(*g->e), elem_cmp);
	for (i = 0; p->i && i < feat_ninstances(p->i); i++) {
		const struct feat *in = feat_instance_at(p->i, i);
		bool hit = false;

		for (j = 0; j < feat_nelems(in); j++) {
			const char *n, *v;

			feat_elem_at(in, j, &n, &v);
			r = eval_op(t->name, true, n, why, whylen);
			if (r < 0)
				return r;
			hit = hit || r > 0;
		}
		if (hit && matched_add(g, in, NULL, NULL) < 0)
			return -ENOMEM;
	}
	return g->n > first;
}

/* One term; adds matched elements to g. 1 match, 0 not, <0 error. */
static int eval_term(const struct term *t, const struct parts *p, struct mgroup *g, char *why,
		     size_t whylen)
{
	int r = 1;

	if (!p->f && !p->a && !p->i)
		return 0; /* NFD: "feature not available" */
	if (t->has_ex)
		r = eval_exprs(t, p, g, why, whylen);
	if (r > 0 && t->name)
		r = eval_names(t, p, g, why, whylen);
	return r;
}

bool rules_parts(const struct evalfs *e, const char *feature, struct parts *p)
{
	const struct feat_set *fs = strcmp(feature, "rule.matched") ? e->fs : e->back;

	memset(p, 0, sizeof(*p));
	if (!fs)
		return false;
	p->f = feat_get_kind(fs, feature, FEAT_FLAGS);
	p->a = feat_get_kind(fs, feature, FEAT_ATTRS);
	p->i = feat_get_kind(fs, feature, FEAT_INSTANCES);
	return p->f || p->a || p->i;
}

int rules_eval_matcher(const struct matcher *m, const struct evalfs *e, struct matched *out,
		       char *why, size_t whylen)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		struct mgroup *g = matched_group(out, m->t[i].tkey);
		struct parts p;
		int r;

		if (!g)
			return -ENOMEM;
		rules_parts(e, m->t[i].feature, &p);
		r = eval_term(&m->t[i], &p, g, why, whylen);
		if (r <= 0)
			return r;
	}
	return 1;
}

/* ------------------------------------------------------------- outputs */

/* A label of the final map: the later rule's value wins (nfd-master). */
struct pend {
	char *key;	       /* with NFD's prefix */
	char *val;	       /* as the rule gave it ("@..." resolved at the end) */
	const struct rule *rl; /* the rule that set it last */
};

struct out {
	struct pend *p; /* labels, in first-set order */
	size_t n;	/* number */
};

static int out_put(struct out *o, const struct rule *rl, const char *k, const char *v)
{
	char key[512];
	struct pend *p = NULL;
	char *nv;
	size_t i;

	/* unprefixed keys get feature.node.kubernetes.io/ (nfd-master's addNsToMapKeys) */
	snprintf(key, sizeof(key), "%s%s", strchr(k, '/') ? "" : NFD_PREFIX, k);
	for (i = 0; i < o->n && !p; i++)
		if (!strcmp(o->p[i].key, key))
			p = &o->p[i];
	nv = strdup(v);
	if (!nv)
		return -ENOMEM;
	if (!p) {
		p = rules_grow(&o->p, &o->n, sizeof(*p));
		if (p)
			p->key = strdup(key);
		if (!p || !p->key) {
			free(nv);
			return -ENOMEM;
		}
	}
	free(p->val);
	p->val = nv;
	p->rl = rl;
	return 0;
}

static void out_free(struct out *o)
{
	size_t i;

	for (i = 0; i < o->n; i++) {
		free(o->p[i].key);
		free(o->p[i].val);
	}
	free(o->p);
}

/* NFD's getDynamicValue: "@dom.feat.element" from an attributes feature. */
static const char *dynamic_value(const struct evalfs *e, const char *v, char *why, size_t n)
{
	char feature[256];
	const char *dot1 = strchr(v + 1, '.'), *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
	struct parts p;
	const char *val;

	if (!dot2 || (size_t)(dot2 - v - 1) >= sizeof(feature)) {
		snprintf(why, n, "value %s is not in the form of '@domain.feature.element'", v);
		return NULL;
	}
	snprintf(feature, sizeof(feature), "%.*s", (int)(dot2 - v - 1), v + 1);
	rules_parts(e, feature, &p);
	if (!p.a) {
		snprintf(why, n, "feature %s not found", feature);
		return NULL;
	}
	val = feat_lookup(p.a, dot2 + 1);
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

/* The final map into out: "@" values resolved now, after every rule (nfd-master). */
static int emit(const struct out *o, const struct evalfs *e, struct label_set *out)
{
	int count = 0;
	size_t i;

	for (i = 0; i < o->n; i++) {
		const struct rule *rl = o->p[i].rl;
		struct log_err err = {0};
		const char *v = o->p[i].val;
		char why[300], msg[sizeof(err.msg) * 4];
		int r;

		if (v[0] == '@') {
			v = dynamic_value(e, v, why, sizeof(why));
			if (!v) {
				log_warn("%s: rule '%s': label '%s' skipped: %s", rl->where,
					 rl->name, o->p[i].key, why);
				continue;
			}
		}
		if (ns_denied(o->p[i].key)) {
			log_warn("%s: rule '%s': label '%s' skipped: namespace not allowed by NFD",
				 rl->where, rl->name, o->p[i].key);
			continue;
		}
		r = label_set_put(out, o->p[i].key, v, &err);
		if (r == -ENOMEM)
			return r;
		if (r < 0) { /* the value may come from the host: its control bytes escaped */
			rules_escape(msg, sizeof(msg), err.msg);
			log_warn("%s: rule '%s': label skipped: %s", rl->where, rl->name, msg);
			continue;
		}
		count++;
	}
	return count;
}

/* ------------------------------------------------------------------ rules */

bool rules_feature_supported(const char *feature)
{
	/* the features of nodeprobe's sources (pkg/probe), with NFD's names */
	static const char *const known[] = {
	    "pci.device",
	    "kernel.loadedmodule",
	    "kernel.enabledmodule",
	    "kernel.version",
	    "kernel.config",
	    "cpu.cpuid",
	    "cpu.model",
	    "system.osrelease",
	    "usb.device",
	    "rule.matched",
	    /* pkg/hostfeat (issue 20) */
	    "cpu.security",
	    "cpu.topology",
	    "cpu.cstate",
	    "cpu.pstate",
	    "cpu.rdt",
	    "cpu.sst",
	    "cpu.coprocessor",
	    "system.name",
	    "system.dmiid",
	    "kernel.selinux",
	    "kernel.kvm",
	    "memory.numa",
	    "memory.swap",
	    "memory.nv",
	    "memory.hugepages",
	    "network.device",
	    "network.virtual",
	    "storage.block",
	};
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(feature, known[i]))
			return true;
	return !strncmp(feature, "dt.", 3);
}

static const char *unsupported_in(const struct matcher *m, const struct evalfs *e)
{
	struct parts p;
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!rules_feature_supported(m->t[i].feature) &&
		    !rules_parts(e, m->t[i].feature, &p))
			return m->t[i].feature;
	return NULL;
}

/*
 * A feature that no source of ours makes and that this scan does not hold:
 * its name, else NULL, for the warning when the rule does not match. (Its
 * terms are evaluated as NFD's: no match.)
 */
static const char *unsupported(const struct rule *rl, const struct evalfs *e)
{
	const char *f = unsupported_in(&rl->mf, e);
	size_t i;

	for (i = 0; !f && i < rl->nany; i++)
		f = unsupported_in(&rl->any[i], e);
	return f;
}

/* rule.matched: this rule's labels (as written), then its vars (nfd-master). */
static int backref(struct evalfs *e, const struct cand *labels, const struct cand *vars)
{
	size_t i;
	int r;

	if (!e->back) {
		e->back = feat_set_new();
		if (!e->back)
			return -ENOMEM;
	}
	r = feat_declare(e->back, "rule.matched", FEAT_ATTRS);
	for (i = 0; r == 0 && labels && i < labels->n; i++)
		r = feat_attr_set(e->back, "rule.matched", labels->kv[i].k, labels->kv[i].v);
	for (i = 0; r == 0 && vars && i < vars->n; i++)
		r = feat_attr_set(e->back, "rule.matched", vars->kv[i].k, vars->kv[i].v);
	return r;
}

/* NFD's Execute() for one rule, then nfd-master's merge. <0 only for ENOMEM. */
static int eval_rule(const struct rule *rl, struct evalfs *e, struct out *o)
{
	struct cand labels = {0}, vars = {0};
	struct matched m = {0};
	bool failed = false, any = false, matched = false;
	bool tmpl = rl->tmpl.set || rl->vtmpl.set || rl->count.set;
	const char *f = unsupported(rl, e);
	char why[300] = "";
	size_t i;
	int r = 0, pass;

	for (i = 0; i < rl->nany; i++) {
		r = rules_eval_matcher(&rl->any[i], e, &m, why, sizeof(why));
		if (r > 0) {
			any = true;
			if (!tmpl) {
				rules_matched_free(&m);
				break;
			}
			r = rules_templates(rl, &m, &labels, &vars, &failed);
		}
		rules_matched_free(&m);
		if (r < 0 || failed)
			goto out;
	}
	if (rl->nany && !any)
		goto done;
	if (rl->mf.n) {
		r = rules_eval_matcher(&rl->mf, e, &m, why, sizeof(why));
		if (r == 0)
			goto done;
		if (r < 0)
			goto out;
		r = rules_templates(rl, &m, &labels, &vars, &failed);
		if (r < 0 || failed)
			goto out;
	}
	for (i = 0; i < rl->nlabels && r >= 0; i++)
		r = rules_cand_put(&labels, rl->labels[i].k, strlen(rl->labels[i].k),
				   rl->labels[i].v, strlen(rl->labels[i].v));
	for (i = 0; i < rl->nvars && r >= 0; i++)
		r = rules_cand_put(&vars, rl->vars[i].k, strlen(rl->vars[i].k), rl->vars[i].v,
				   strlen(rl->vars[i].v));
	if (r < 0)
		goto out;
	matched = true;
	log_debug("%s: rule '%s' matched", rl->where, rl->name);
	/* in one rule's output a prefixed key wins over the same unprefixed one */
	for (pass = 0; pass < 2 && r >= 0; pass++)
		for (i = 0; i < labels.n && r >= 0; i++)
			if ((strchr(labels.kv[i].k, '/') != NULL) == (pass == 1))
				r = out_put(o, rl, labels.kv[i].k, labels.kv[i].v);
	if (r < 0)
		goto out;
done:
	/*
	 * NFD: a term on a feature the node lacks is "no match" (rule.go, "feature not available"),
	 * so a matchAny branch naming one fails alone and another branch may still label. A
	 * feature no source of ours makes is named when the rule gives nothing, as the likely why.
	 */
	if (f && !matched)
		log_warn("%s: rule '%s' did not match: nodeprobe makes no feature '%s' (its terms "
			 "never match, as in NFD on a node without it)",
			 rl->where, rl->name, f);
	r = backref(e, matched ? &labels : NULL, matched ? &vars : NULL);
out:
	if (r == -EINVAL)
		log_warn("%s: rule '%s' not applied: %s", rl->where, rl->name, why);
	if (r == -E2BIG)
		log_warn("%s: rule '%s' not applied: more than %d labels (nodeprobe's limit)",
			 rl->where, rl->name, RULES_RULE_LABELS);
	rules_matched_free(&m);
	rules_cand_free(&labels);
	rules_cand_free(&vars);
	return r == -ENOMEM ? r : 0;
}

/* nfd-master: objects sorted by metadata.name (Go byte order), rules in list order. */
static int rule_order(const void *a, const void *b)
{
	const struct rule *x = *(const struct rule *const *)a, *y = *(const struct rule *const *)b;
	int c = strcmp(x->object, y->object);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int rules_eval(const struct rules *rs, const struct feat_set *fs, struct label_set *out,
	       struct log_err *err)
{
	struct evalfs e = {.fs = fs};
	struct out o = {0};
	const struct rule **order = NULL;
	size_t i, n = 0;
	int r = 0;

	if (rs->n) {
		order = malloc(rs->n * sizeof(*order));
		if (!order)
			return log_err_set(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < rs->n; i++)
		order[n++] = &rs->r[i];
	if (n > 1)
		qsort(order, n, sizeof(*order), rule_order);
	for (i = 0; i < n && r >= 0; i++)
		r = eval_rule(order[i], &e, &o);
	if (r >= 0)
		r = emit(&o, &e, out);
	free(order);
	out_free(&o);
	feat_set_free(e.back);
	return r < 0 ? log_err_set(err, -ENOMEM, "out of memory") : r;
}
