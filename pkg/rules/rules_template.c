/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_template: the Go-template subset of labelsTemplate, parsed and expanded. */
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
	t = rules_grow(out, nout, sizeof(**out));
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
	/* ".dom.feat | len": Go's pipeline form of "len .dom.feat" */
	if (n > 6 && a[0] == '.' && !memcmp(a + n - 3, "len", 3)) {
		const char *bar = memchr(a, '|', n);
		size_t fl = bar ? (size_t)(bar - a) : 0;

		while (fl > 0 && isspace((unsigned char)a[fl - 1]))
			fl--;
		if (bar && fl) {
			const char *p = bar + 1;

			while (isspace((unsigned char)*p))
				p++;
			if (p == a + n - 3) {
				t->kind = T_LEN;
				t->feature = feature_ref(a, fl);
				if (t->feature)
					return 0;
			}
		}
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
	/* inside a range, 'index . "key"': a key that is no identifier ("iommu_group/type") */
	if (depth > 0 && n > 10 && !memcmp(a, "index . \"", 9) && a[n - 1] == '"' &&
	    !memchr(a + 9, '"', n - 10) && !memchr(a + 9, '\\', n - 10)) {
		t->kind = T_FIELD;
		t->s = dupn(a + 9, n - 10);
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
			struct tnode *t = rules_grow(out, nout, sizeof(**out));

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

/* Parse src; NULL with *why/what set if unsupported, NULL + ENOMEM flag otherwise. */
int rules_tmpl_parse(const char *src, struct tmpl **out, char *why, size_t whylen)
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
		rules_tmpl_free(t);
		return r;
	}
	*out = t;
	return 0;
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

/*
 * A feature value printed by a template: a line break in it (a driver link
 * named "i915\nevil=1") becomes VALUE_BREAK, so that the output line holding
 * it is skipped with a warning instead of turning into extra label lines.
 */
#define VALUE_BREAK '\x1f'

static int add_value(struct strbuf *out, const char *v)
{
	int r = 0;

	for (; *v && r == 0; v++)
		r = sb_addch(out, *v == '\n' || *v == '\r' ? VALUE_BREAK : *v);
	return r;
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
			r = add_value(out, v);
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
			r = add_value(out, v);
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

int rules_cand_put(struct cand *c, const char *k, size_t klen, const char *v, size_t vlen)
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
	kv = rules_grow(&c->kv, &c->n, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	kv->k = dupn(k, klen);
	kv->v = dupn(v, vlen);
	return kv->k && kv->v ? 0 : -ENOMEM;
}

void rules_cand_free(struct cand *c)
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
static int run_template(const struct rule *rl, const struct tmpl *t, const char *what, bool count,
			const struct matched *m, struct cand *c)
{
	struct strbuf out = STRBUF_INIT(RULES_TEMPLATE_OUT);
	char why[200] = "";
	const char *p;
	int r = texec(t->n, t->nn, m, NULL, &out, why, sizeof(why));

	if (r == -ENOMEM)
		goto out;
	if (r < 0) {
		log_warn("%s: rule '%s' not applied: %s: %s", rl->where, rl->name, what, why);
		goto out;
	}
	for (p = out.buf; *p;) {
		const char *nl = strchr(p, '\n'), *line = p, *eq;
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		p += n + (nl ? 1 : 0);
		trim(&line, &n);
		if (!n)
			continue;
		if (memchr(line, VALUE_BREAK, n)) {
			log_warn("%s: rule '%s': %s line '%.*s' skipped: a value holds a newline",
				 rl->where, rl->name, what, (int)(n > 100 ? 100 : n), line);
			continue;
		}
		if (count) {
			char num[24];
			size_t i, have = 0;

			for (i = 0; i < c->n; i++)
				if (strlen(c->kv[i].k) == n && !memcmp(c->kv[i].k, line, n))
					have = strtoul(c->kv[i].v, NULL, 10);
			snprintf(num, sizeof(num), "%zu", have + 1);
			r = rules_cand_put(c, line, n, num, strlen(num));
		} else {
			eq = memchr(line, '=', n);
			if (!eq) {
				log_warn(
				    "%s: rule '%s' not applied: %s line '%.*s' is not key=value",
				    rl->where, rl->name, what, (int)(n > 100 ? 100 : n), line);
				r = -EINVAL;
				goto out;
			}
			r = rules_cand_put(c, line, (size_t)(eq - line), eq + 1,
					   n - (size_t)(eq - line) - 1);
		}
		if (r == -E2BIG)
			log_warn(
			    "%s: rule '%s' not applied: %s gives more than %d entries (nodeprobe's limit)",
			    rl->where, rl->name, what, RULES_RULE_LABELS);
		if (r < 0)
			goto out;
	}
out:
	sb_free(&out);
	return r;
}

/* Templates for one matched matcher. <0 only for ENOMEM; a template error voids the rule. */
int rules_templates(const struct rule *rl, const struct matched *m, struct cand *labels,
		    struct cand *vars, bool *failed)
{
	int r = 0;

	if (rl->tmpl)
		r = run_template(rl, rl->tmpl, "labelsTemplate", false, m, labels);
	if (r == 0 && rl->vtmpl)
		r = run_template(rl, rl->vtmpl, "varsTemplate", false, m, vars);
	if (r == 0 && rl->count)
		r = run_template(rl, rl->count, "countLabelsTemplate", true, m, labels);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		*failed = true;
	return 0;
}
