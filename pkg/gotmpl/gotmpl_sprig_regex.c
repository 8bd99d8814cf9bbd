/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_sprig_regex: Sprig v3's regular-expression functions (regex.go) over pkg/goregex. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goregex/goregex.h"
#include "gotmpl/gotmpl_internal.h"

/* ---- regular expressions (Go's regexp through pkg/goregex) ---- */

/*
 * Charge a regexp av[0] run over av[1] (every function here has them so): its compile, 64 units a
 * pattern byte, before it; its match, after it, a unit per subject byte and instruction of its
 * program (at least a pattern byte's): RE2's NFA, which it falls back on for captures or when its
 * DFA's cache thrashes, steps every instruction at every byte, as Go's regexp does (measured: a
 * 6 KiB pattern over 1 MiB with captures ran 56 s, 9 ns a unit). The program, not the pattern:
 * "a{1000}" forty times is 280 bytes and 40000 instructions (21 s over 200 KB charged by bytes).
 */
static int charge(struct gotmpl_fctx *c, const struct goregex *re, struct gotmpl_val **av)
{
	size_t insts = goregex_size(re);

	return gotmpl_work(c->a, (insts > av[0]->u.s.n ? insts : av[0]->u.s.n) * av[1]->u.s.n);
}

/*
 * Charge, then compile av[0]. Sprig's must* functions return regexp.Compile's error (Go's syntax
 * error: "error parsing regexp: CODE: `ARG`"); the others call regexp.MustCompile, whose panic
 * prefixes "regexp: Compile(" + the pattern (backquoted when it can be, else quoted) + "): ".
 */
static int compile_as(struct gotmpl_fctx *c, struct gotmpl_val **av, struct goregex **re, int must)
{
	const struct gotmpl_val *pat = av[0];
	char why[200];
	int rc = gotmpl_work(c->a, 64 * pat->u.s.n);
	struct strbuf q = STRBUF_INIT(GOTMPL_ERR_MAX);
	int bq = 1;

	if (rc)
		return rc;
	rc = goregex_compile(pat->u.s.p, GOREGEX_CAPTURE | GOREGEX_GOERR, re, why, sizeof(why));
	if (rc == -ENOMEM)
		return rc;
	if (!rc) {
		if (!charge(c, *re, av))
			return 0;
		goregex_free(*re);
		*re = NULL;
		return -ELOOP;
	}
	if (must)
		return gotmpl_fail(c, "%s", why);
	for (size_t i = 0; i < pat->u.s.n && bq; i++) { /* strconv.CanBackquote */
		unsigned char ch = (unsigned char)pat->u.s.p[i];

		bq = ch != '`' && ch != 0x7F && (ch >= ' ' || ch == '\t');
	}
	if (bq)
		rc = sb_addch(&q, '`') ?: sb_addn(&q, pat->u.s.p, pat->u.s.n) ?: sb_addch(&q, '`');
	else
		rc = gotmpl_quote(&q, pat->u.s.p, pat->u.s.n, '"');
	rc = gotmpl_fail(c, "regexp: Compile(%s): %s", q.buf ? q.buf : "", why);
	sb_free(&q);
	return rc;
}

GT_FN(f_regexmatch)
{
	struct goregex *re;
	int m;

	(void)ac;
	if (gotmpl_work(c->a, 64 * GT_SN(0)))
		return -ELOOP;
	if (goregex_compile(GT_S(0), 0, &re, NULL, 0))
		GT_RES(gotmpl_bool(c->a, 0)); /* Sprig ignores the error */
	if (charge(c, re, av)) {
		goregex_free(re);
		return -ELOOP;
	}
	m = goregex_match(re, GT_S(1), GT_SN(1));
	goregex_free(re);
	GT_RES(gotmpl_bool(c->a, m == 1));
}

GT_FN(f_mustregexmatch)
{
	struct goregex *re;
	int m, rc = compile_as(c, av, &re, 1);

	(void)ac;
	if (rc)
		return rc;
	m = goregex_match(re, GT_S(1), GT_SN(1));
	goregex_free(re);
	GT_RES(gotmpl_bool(c->a, m == 1));
}

GT_FN(f_regexquotemeta)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	int rc = 0;

	(void)ac;
	for (size_t i = 0; i < GT_SN(0) && !rc; i++)
		rc = (strchr("\\.+*?()|[]{}^$", GT_S(0)[i]) && GT_S(0)[i] ? sb_addch(&sb, '\\') : 0)
			 ?: sb_addch(&sb, GT_S(0)[i]);
	return gotmpl_done(c, &sb, rc, res);
}

/* Go's allMatches: each match from pos on (at most n when n >= 0), no empty match right after one.
 */
struct matches {
	long m[20];
};

static int all_matches(struct gotmpl_fctx *c, struct goregex *re, const char *s, size_t len,
		       int64_t n, int nm, struct matches **out, size_t *count)
{
	size_t pos = 0, cap = 0;
	long prev_end = -1;
	struct matches *v = NULL;

	*count = 0;
	while ((n < 0 || (int64_t)*count < n) && pos <= len) {
		struct matches mm;
		int accept = 1;

		if (!goregex_find(re, s, len, pos, mm.m, nm))
			break;
		if ((size_t)mm.m[1] == pos) {
			uint32_t r;

			if (mm.m[0] == prev_end)
				accept = 0;
			pos += pos < len ? (size_t)gotmpl_utf8(s + pos, len - pos, &r) : 1;
		} else {
			pos = (size_t)mm.m[1];
		}
		prev_end = mm.m[1];
		if (!accept)
			continue;
		if (*count == cap) {
			cap = cap ? 2 * cap : 16;
			struct matches *nv = gotmpl_alloc(c->a, cap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			if (*count)
				memcpy(nv, v, *count * sizeof(*nv));
			v = nv;
		}
		v[(*count)++] = mm;
	}
	*out = v;
	return 0;
}

static int f_regexfindall_as(struct gotmpl_fctx *c, struct gotmpl_val **av, int ac,
			     struct gotmpl_val **res, int must)
{
	struct goregex *re;
	struct matches *m;
	size_t n;
	int rc = compile_as(c, av, &re, must);

	(void)ac;
	if (rc)
		return rc;
	rc = all_matches(c, re, GT_S(1), GT_SN(1), av[2]->u.i, 1, &m, &n);
	goregex_free(re);
	if (rc)
		return rc;
	*res = gotmpl_list(c->a, n, GT_STRS);
	if (!*res)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct gotmpl_val *s =
		    gotmpl_str(c->a, GT_S(1) + m[i].m[0], (size_t)(m[i].m[1] - m[i].m[0]));

		if (!s)
			return -ENOMEM;
		(*res)->u.l.v[(*res)->u.l.n++] = s;
	}
	if (n == 0) /* Go's FindAllString gives nil: printed "[]" */
		(*res)->sub = GT_STRS;
	return 0;
}

GT_FN(f_regexfindall)
{
	return f_regexfindall_as(c, av, ac, res, 0);
}

GT_FN(f_regexfindall_must)
{
	return f_regexfindall_as(c, av, ac, res, 1);
}

static int f_regexfind_as(struct gotmpl_fctx *c, struct gotmpl_val **av, int ac,
			  struct gotmpl_val **res, int must)
{
	struct goregex *re;
	long m[2];
	int rc = compile_as(c, av, &re, must), found;

	(void)ac;
	if (rc)
		return rc;
	found = goregex_find(re, GT_S(1), GT_SN(1), 0, m, 1);
	goregex_free(re);
	if (!found)
		GT_RES(gotmpl_str(c->a, "", 0));
	GT_RES(gotmpl_str(c->a, GT_S(1) + m[0], (size_t)(m[1] - m[0])));
}

GT_FN(f_regexfind)
{
	return f_regexfind_as(c, av, ac, res, 0);
}

GT_FN(f_regexfind_must)
{
	return f_regexfind_as(c, av, ac, res, 1);
}

/* regexp.Expand of template t for match m into sb. */
static int expand(struct strbuf *sb, struct goregex *re, const char *t, size_t tn, const char *s,
		  const long *m, int ng)
{
	int rc = 0;

	for (size_t i = 0; i < tn && !rc; i++) {
		size_t b, e, nb;
		int brace = 0, idx = -1, num = 1;

		if (t[i] != '$') {
			rc = sb_addch(sb, t[i]);
			continue;
		}
		if (i + 1 < tn && t[i + 1] == '$') {
			rc = sb_addch(sb, '$');
			i++;
			continue;
		}
		b = i + 1;
		if (b < tn && t[b] == '{')
			brace = 1, b++;
		for (e = b;
		     e < tn && (t[e] == '_' || (t[e] >= '0' && t[e] <= '9') ||
				(t[e] >= 'a' && t[e] <= 'z') || (t[e] >= 'A' && t[e] <= 'Z'));
		     e++)
			;
		nb = e;
		if (e == b || (brace && (e >= tn || t[e] != '}'))) {
			rc = sb_addch(sb, '$'); /* malformed: a plain '$' */
			continue;
		}
		for (size_t k = b; k < e; k++)
			num = num && t[k] >= '0' && t[k] <= '9';
		if (num) {
			long v = 0;

			for (size_t k = b; k < e && v < 1000; k++)
				v = v * 10 + (t[k] - '0');
			idx = v < 1000 ? (int)v : -1;
		} else {
			idx = goregex_group_index(re, t + b, e - b);
		}
		if (idx >= 0 && idx < ng && m[2 * idx] >= 0)
			rc = sb_addn(sb, s + m[2 * idx], (size_t)(m[2 * idx + 1] - m[2 * idx]));
		i = brace ? nb : nb - 1;
	}
	return rc;
}

static int replace_all(struct gotmpl_fctx *c, struct gotmpl_val **av, int literal, int must,
		       struct gotmpl_val **res)
{
	struct strbuf sb = STRBUF_INIT(gotmpl_room(c->a, GT_PRINT_UNITS));
	struct goregex *re;
	const char *s = GT_S(1);
	size_t len = GT_SN(1), search = 0, last = 0;
	int rc = compile_as(c, av, &re, must), ng;

	if (rc)
		return rc;
	ng = 1 + goregex_groups(re);
	if (ng > 10)
		ng = 10;
	while (!rc && search <= len) {
		long m[20];
		uint32_t r;
		size_t w;

		if (!goregex_find(re, s, len, search, m, ng))
			break;
		rc = sb_addn(&sb, s + last, (size_t)m[0] - last);
		if (!rc && ((size_t)m[1] > last || m[0] == 0))
			rc = literal ? sb_addn(&sb, GT_S(2), GT_SN(2))
				     : expand(&sb, re, GT_S(2), GT_SN(2), s, m, ng);
		last = (size_t)m[1];
		w = search < len ? (size_t)gotmpl_utf8(s + search, len - search, &r) : 1;
		if (search + w > (size_t)m[1])
			search += w;
		else if (search + 1 > (size_t)m[1])
			search++;
		else
			search = (size_t)m[1];
	}
	goregex_free(re);
	rc = rc ?: sb_addn(&sb, s + last, len - last);
	return gotmpl_printed(c, &sb, rc, GT_PRINT_UNITS, res);
}

GT_FN(f_regexreplaceall)
{
	(void)ac;
	return replace_all(c, av, 0, 0, res);
}

GT_FN(f_regexreplaceallliteral)
{
	(void)ac;
	return replace_all(c, av, 1, 0, res);
}

GT_FN(f_regexreplaceall_must)
{
	(void)ac;
	return replace_all(c, av, 0, 1, res);
}

GT_FN(f_regexreplaceallliteral_must)
{
	(void)ac;
	return replace_all(c, av, 1, 1, res);
}

static int f_regexsplit_as(struct gotmpl_fctx *c, struct gotmpl_val **av, int ac,
			   struct gotmpl_val **res, int must)
{
	struct goregex *re;
	struct matches *m = NULL;
	size_t n = 0, beg = 0, end = 0;
	int64_t lim = av[2]->u.i;
	struct gotmpl_val *l;
	int rc;

	(void)ac;
	rc = compile_as(c, av, &re, must); /* compiled first, as Sprig's regexSplit */
	if (rc)
		return rc;
	if (lim == 0) { /* Go returns nil */
		goregex_free(re);
		GT_RES(gotmpl_list(c->a, 0, GT_STRS));
	}
	l = gotmpl_list(c->a, 0, GT_STRS);
	if (!l) {
		goregex_free(re);
		return -ENOMEM;
	}
	if (GT_SN(0) > 0 && GT_SN(1) == 0) {
		goregex_free(re);
		if (gotmpl_alist_push(c->a, l, gotmpl_str(c->a, "", 0)))
			return -ENOMEM;
		*res = l;
		return 0;
	}
	rc = all_matches(c, re, GT_S(1), GT_SN(1), lim, 1, &m, &n);
	goregex_free(re);
	for (size_t i = 0; i < n && !rc; i++) {
		if (lim > 0 && (int64_t)l->u.l.n == lim - 1)
			break;
		end = (size_t)m[i].m[0];
		if (m[i].m[1] != 0)
			rc = gotmpl_alist_push(c->a, l, gotmpl_str(c->a, GT_S(1) + beg, end - beg));
		beg = (size_t)m[i].m[1];
	}
	if (!rc && end != GT_SN(1))
		rc = gotmpl_alist_push(c->a, l, gotmpl_str(c->a, GT_S(1) + beg, GT_SN(1) - beg));
	for (size_t i = 0; !rc && i < l->u.l.n; i++)
		if (!l->u.l.v[i])
			rc = -ENOMEM;
	*res = l;
	return rc;
}

GT_FN(f_regexsplit)
{
	return f_regexsplit_as(c, av, ac, res, 0);
}

GT_FN(f_regexsplit_must)
{
	return f_regexsplit_as(c, av, ac, res, 1);
}

const struct gotmpl_func gotmpl_sprig_regex_funcs[] = {
    {"mustRegexFind", f_regexfind_must, "ss", 0},
    {"mustRegexFindAll", f_regexfindall_must, "ssi", 0},
    {"mustRegexMatch", f_mustregexmatch, "ss", 0},
    {"mustRegexReplaceAll", f_regexreplaceall_must, "sss", 0},
    {"mustRegexReplaceAllLiteral", f_regexreplaceallliteral_must, "sss", 0},
    {"mustRegexSplit", f_regexsplit_must, "ssi", 0},
    {"regexFind", f_regexfind, "ss", 0},
    {"regexFindAll", f_regexfindall, "ssi", 0},
    {"regexMatch", f_regexmatch, "ss", 0},
    {"regexQuoteMeta", f_regexquotemeta, "s", 0},
    {"regexReplaceAll", f_regexreplaceall, "sss", 0},
    {"regexReplaceAllLiteral", f_regexreplaceallliteral, "sss", 0},
    {"regexSplit", f_regexsplit, "ssi", 0},
    {NULL, NULL, NULL, 0},
};
