/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_template: labelsTemplate, varsTemplate, countLabelsTemplate run through pkg/gotmpl. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl.h"
#include "rules/rules_internal.h"

/*
 * As nfd-master v0.19 (kubernetes-sigs/node-feature-discovery
 * pkg/apis/nfd/nodefeaturerule/rule.go: executeTemplate, matchedFeatures;
 * pkg/apis/nfd/template/template.go: NewHelper, ExpandMap): the template runs
 * over the matched features of one matcher, a map domain -> feature -> list of
 * MatchedElement (map[string]string: a flag {Name}, an attribute {Name,
 * Value}, an instance its attributes), domain and feature being the term's
 * feature as written, split at its first dot. The output is split at "\n",
 * each line TrimSpace'd, blank ones skipped, the rest split at the first "="
 * (a line without one fails the template).
 */

/* ------------------------------------------------------------- parsing */

int rules_tmpl_parse(const char *src, struct gotmpl **out, char *why, size_t whylen)
{
	struct gotmpl_err err = {{0}};
	int r = gotmpl_parse("", src, strlen(src), out, &err);

	/* NFD: "failed to parse template: invalid template: %w"; running out of memory (or of the
	 * parse tree's budget) fails this template's rules too, never the whole run (issue 27) */
	if (r == -ENOMEM)
		snprintf(why, whylen, "failed to parse template: %s", err.msg);
	else if (r < 0)
		snprintf(why, whylen, "failed to parse template: invalid template: %s", err.msg);
	return r < 0 ? -EINVAL : 0;
}

/* ---------------------------------------------------------------- data */

/*
 * A feature value for the template: as read, but a line feed in it (a driver link named
 * "i915\nevil=1") becomes VALUE_BREAK, so that the output line printing it is skipped with a
 * warning instead of adding label lines (nodeprobe's one departure from NFD here; 0x1f is in
 * no valid label, so no label is lost). A CR stays: the line's TrimSpace takes a trailing one,
 * as NFD's does (a CRLF kernel config).
 */
#define VALUE_BREAK '\x1f'

static struct gotmpl_val *value_val(const char *v, bool *broke)
{
	struct gotmpl_val *g;
	char *c, *p;

	if (!strchr(v, '\n'))
		return gotmpl_val_str(v);
	c = strdup(v);
	if (!c)
		return NULL;
	*broke = true;
	for (p = c; (p = strchr(p, '\n')) != NULL;)
		*p = VALUE_BREAK;
	g = gotmpl_val_str(c);
	free(c);
	return g;
}

/* One matched element as NFD's MatchedElement (a map[string]string): it, or NULL (ENOMEM). */
static struct gotmpl_val *elem_val(const struct elem *e, bool *broke)
{
	struct gotmpl_val *m = gotmpl_val_map(1);
	size_t i, n;
	int r = 0;

	if (!m)
		return NULL;
	if (e->inst) {
		n = feat_nelems(e->inst);
		for (i = 0; i < n && r == 0; i++) {
			const char *k, *v;

			feat_elem_at(e->inst, i, &k, &v);
			r = gotmpl_map_set(m, k, value_val(v, broke));
		}
	} else {
		r = gotmpl_map_set(m, "Name", value_val(e->name, broke));
		if (r == 0 && e->value)
			r = gotmpl_map_set(m, "Value", value_val(e->value, broke));
	}
	if (r < 0) {
		gotmpl_val_free(m);
		return NULL;
	}
	return m;
}

/* The length of feature's domain: up to its first dot (NFD's strings.SplitN(f, ".", 2)). */
static size_t dom_len(const char *feature)
{
	const char *dot = strchr(feature, '.');

	return dot ? (size_t)(dot - feature) : strlen(feature);
}

/* g's elements as a list into dom under its feature name (the part after the first dot). */
static int put_group(struct gotmpl_val *dom, const struct mgroup *g, bool *broke)
{
	struct gotmpl_val *list = gotmpl_val_list(0);
	const char *dot = strchr(g->feature, '.');
	size_t i;
	int r = list ? 0 : -ENOMEM;

	for (i = 0; i < g->n && r == 0; i++) {
		struct gotmpl_val *e = elem_val(&g->e[i], broke);

		r = e ? gotmpl_list_push(list, e) : -ENOMEM;
	}
	if (r < 0) {
		gotmpl_val_free(list);
		return r;
	}
	return gotmpl_map_set(dom, dot ? dot + 1 : "", list);
}

/*
 * NFD's matchedFeatures for m: *out owned (gotmpl_val_free); *broke set when a value's line
 * feed became VALUE_BREAK. A feature name without a dot is,
 * as in NFD, its lower-cased name as domain with an empty feature name; rules_load lower-cases
 * nothing, so the name is taken as written (NFD's CRD validation refuses such names anyway).
 */
static int build_data(const struct matched *m, struct gotmpl_val **out, bool *broke)
{
	struct gotmpl_val *top = gotmpl_val_map(0);
	size_t i, j;
	int r = top ? 0 : -ENOMEM;

	for (i = 0; i < m->n && r == 0; i++) {
		size_t dl = dom_len(m->g[i].feature);
		struct gotmpl_val *dom;
		char *name;
		bool seen = false;

		for (j = 0; j < i && !seen; j++)
			seen = dom_len(m->g[j].feature) == dl &&
			       !memcmp(m->g[j].feature, m->g[i].feature, dl);
		if (seen) /* its domain was filled with the first group of it */
			continue;
		dom = gotmpl_val_map(0);
		for (j = i; j < m->n && dom && r == 0; j++)
			if (dom_len(m->g[j].feature) == dl &&
			    !memcmp(m->g[j].feature, m->g[i].feature, dl))
				r = put_group(dom, &m->g[j], broke);
		name = strndup(m->g[i].feature, dl);
		if (!dom || !name || r < 0) {
			gotmpl_val_free(dom);
			free(name);
			r = -ENOMEM;
			break;
		}
		r = gotmpl_map_set(top, name, dom);
		free(name);
	}
	if (r < 0) {
		gotmpl_val_free(top);
		return r;
	}
	*out = top;
	return 0;
}

/* -------------------------------------------------------------- output */

int rules_cand_put(struct cand *c, const char *k, size_t klen, const char *v, size_t vlen)
{
	struct kv *kv = NULL;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strlen(c->kv[i].k) == klen && !memcmp(c->kv[i].k, k, klen))
			kv = &c->kv[i];
	if (kv) {
		char *nv = strndup(v, vlen);

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
	kv->k = strndup(k, klen);
	kv->v = strndup(v, vlen);
	return kv->k && kv->v ? 0 : -ENOMEM;
}

/* Drop c's entry of key k (klen bytes), if any. */
static void cand_drop(struct cand *c, const char *k, size_t klen)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strlen(c->kv[i].k) == klen && !memcmp(c->kv[i].k, k, klen)) {
			free(c->kv[i].k);
			free(c->kv[i].v);
			memmove(&c->kv[i], &c->kv[i + 1], (c->n - i - 1) * sizeof(c->kv[0]));
			c->n--;
			return;
		}
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

/* The bytes of a Unicode White_Space character (Go's unicode.IsSpace) at s (n bytes), else 0. */
static size_t space_at(const unsigned char *s, size_t n)
{
	unsigned cp;

	if (n && (*s == ' ' || (*s >= '\t' && *s <= '\r')))
		return 1;
	if (n >= 2 && s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0))
		return 2;
	if (n < 3 || (s[0] != 0xe1 && s[0] != 0xe2 && s[0] != 0xe3))
		return 0;
	cp = ((s[0] & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) | (s[2] & 0x3fu);
	if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
		return 0;
	return cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
		       cp == 0x202f || cp == 0x205f || cp == 0x3000
		   ? 3
		   : 0;
}

/* The bytes of a White_Space character ending at s + n, else 0. */
static size_t space_before(const unsigned char *s, size_t n)
{
	size_t k;

	for (k = 1; k <= 3 && k <= n; k++)
		if (space_at(s + n - k, k) == k)
			return k;
	return 0;
}

/* Go's strings.TrimSpace on *s (n bytes). */
static void trim_space(const char **s, size_t *n)
{
	size_t k;

	while ((k = space_at((const unsigned char *)*s, *n)) != 0) {
		*s += k;
		*n -= k;
	}
	while ((k = space_before((const unsigned char *)*s, *n)) != 0)
		*n -= k;
}

/*
 * The bytes of a valid UTF-8 sequence of a printable character at s (n bytes) past ASCII, else 0
 * (C1 controls, U+2028/U+2029, overlongs, surrogates and bytes past U+10FFFF are not).
 */
static size_t utf8_print(const unsigned char *s, size_t n)
{
	size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2, i;
	unsigned cp = s[0] & (0x3fu >> (len - 1));

	if (s[0] < 0xc2 || s[0] > 0xf4 || n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3fu);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0xa0 || cp == 0x2028 || cp == 0x2029)
		return 0;
	return len;
}

/*
 * s (n bytes) quoted for a log line, at most its first 100 bytes (then "..."): control bytes
 * (a CR of a CRLF file, a 0x1f), DEL and every byte of no printable UTF-8 character as \xNN
 * or Go's %q escape, never raw (an invalid UTF-8 byte would reach the log as it is).
 */
static void quote(char *dst, size_t cap, const char *s, size_t n)
{
	static const char esc[] = "\aa\bb\ff\nn\rr\tt\vv\\\\\"\"";
	size_t o = 0, i, k;

	dst[o++] = '"';
	for (i = 0; i < n && i < 100 && o + 6 < cap; i++) {
		unsigned char ch = (unsigned char)s[i];
		const char *e = ch ? memchr(esc, ch, sizeof(esc) - 1) : NULL;

		if (e && (e - esc) % 2 == 0) {
			dst[o++] = '\\';
			dst[o++] = e[1];
		} else if (ch >= 0x80 &&
			   (k = utf8_print((const unsigned char *)s + i, n - i)) != 0) {
			memcpy(dst + o, s + i, k);
			o += k;
			i += k - 1;
		} else if (ch < 0x20 || ch >= 0x7f) {
			o += (size_t)snprintf(dst + o, cap - o, "\\x%02x", ch);
		} else {
			dst[o++] = (char)ch;
		}
	}
	if (i < n && o + 4 < cap)
		o += (size_t)snprintf(dst + o, cap - o, "...");
	dst[o++] = '"';
	dst[o] = '\0';
}

/* One output line (trimmed, not blank) into c: 0, -EINVAL (warned), -E2BIG, -ENOMEM. */
static int put_line(const struct rule *rl, const char *what, bool count, bool broke,
		    const char *line, size_t n, struct cand *c)
{
	const char *eq = memchr(line, '=', n);
	char q[420];
	size_t i, have = 0;

	if (broke && memchr(line, VALUE_BREAK, n)) {
		quote(q, sizeof(q), line, n);
		log_warn("%s: rule '%s': %s line %s skipped: a value holds a newline", rl->where,
			 rl->name, what, q);
		return 0;
	}
	if (count) {
		char num[24];

		for (i = 0; i < c->n; i++)
			if (strlen(c->kv[i].k) == n && !memcmp(c->kv[i].k, line, n))
				have = strtoul(c->kv[i].v, NULL, 10);
		snprintf(num, sizeof(num), "%zu", have + 1);
		return rules_cand_put(c, line, n, num, strlen(num));
	}
	if (!eq) {
		quote(q, sizeof(q), line, n);
		log_warn(
		    "%s: rule '%s' not applied: %s: failed to expand template: missing value in "
		    "expanded template line %s, (format must be '<key>=<value>')",
		    rl->where, rl->name, what, q);
		return -EINVAL;
	}
	if (memchr(line, '\0', n)) {
		/* NFD sets the key (overwriting an earlier line's), then its label validation drops
		 * it: the key ends up absent, so an earlier entry of it goes too */
		quote(q, sizeof(q), line, n);
		log_warn("%s: rule '%s': %s line %s skipped: it holds a NUL byte", rl->where,
			 rl->name, what, q);
		cand_drop(c, line, (size_t)(eq - line));
		return 0;
	}
	return rules_cand_put(c, line, (size_t)(eq - line), eq + 1, n - (size_t)(eq - line) - 1);
}

/* One template over m into c (count: LabelCountRule's counting). 0; -EINVAL/-E2BIG (warned:
 * the rule fails, also when the template ran out of memory); -ENOMEM (storing its output). */
static int run_template(const struct rule *rl, const struct rtmpl *t, const char *what, bool count,
			const struct gotmpl_val *data, bool broke, struct cand *c)
{
	struct strbuf out = STRBUF_INIT(RULES_TEMPLATE_OUT);
	struct gotmpl_err err = {{0}};
	char msg[sizeof(err.msg) * 4 + 8];
	const char *p, *end;
	int r;

	if (t->bad) {
		rules_escape(msg, sizeof(msg), t->bad);
		log_warn("%s: rule '%s' not applied: %s: %s", rl->where, rl->name, what, msg);
		return -EINVAL;
	}
	/* whatever a template runs out of (memory too) is its rule's failure, never the run's */
	r = gotmpl_exec(t->t, data, &out, &err);
	if (r < 0) {
		if (r == -E2BIG && !err.msg[0])
			snprintf(err.msg, sizeof(err.msg), "output longer than %u bytes",
				 RULES_TEMPLATE_OUT);
		rules_escape(msg, sizeof(msg), err.msg);
		log_warn("%s: rule '%s' not applied: %s: failed to expand template: %s", rl->where,
			 rl->name, what, msg);
		r = -EINVAL;
		goto out;
	}
	for (p = out.buf, end = out.buf + out.len; p < end && r == 0;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *line = p;
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		p += n + (nl ? 1 : 0);
		trim_space(&line, &n);
		if (n)
			r = put_line(rl, what, count, broke, line, n, c);
	}
	if (r == -E2BIG)
		log_warn(
		    "%s: rule '%s' not applied: %s gives more than %d entries (nodeprobe's limit)",
		    rl->where, rl->name, what, RULES_RULE_LABELS);
out:
	sb_free(&out);
	return r;
}

int rules_templates(const struct rule *rl, const struct matched *m, struct cand *labels,
		    struct cand *vars, bool *failed)
{
	struct gotmpl_val *data = NULL;
	bool broke = false;
	int r = build_data(m, &data, &broke);

	if (r == 0 && rl->tmpl.set)
		r = run_template(rl, &rl->tmpl, "labelsTemplate", false, data, broke, labels);
	if (r == 0 && rl->vtmpl.set)
		r = run_template(rl, &rl->vtmpl, "varsTemplate", false, data, broke, vars);
	if (r == 0 && rl->count.set)
		r = run_template(rl, &rl->count, "countLabelsTemplate", true, data, broke, labels);
	gotmpl_val_free(data);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		*failed = true;
	return 0;
}
