/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_sprig_str: Sprig v3's string and regular-expression functions (strings.go, regex.go). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

/* strings.Map of fn over s (strings.ToUpper, ToLower): a byte of no UTF-8 becomes U+FFFD. */
static int map_runes(struct gotmpl_fctx *c, const char *s, size_t n, uint32_t (*fn)(uint32_t),
		     struct gotmpl_val **res)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	int rc = 0;
	uint32_t r;

	for (size_t i = 0; i < n && !rc;) {
		int l = gotmpl_utf8(s + i, n - i, &r);

		rc = gotmpl_put_utf8(&sb, (r == 0xFFFD && l == 1) ? r : fn(r));
		i += (size_t)l;
	}
	return gotmpl_done(c, &sb, rc, res);
}

GT_FN(f_upper)
{
	(void)ac;
	return map_runes(c, GT_S(0), GT_SN(0), gotmpl_toupper, res);
}

GT_FN(f_lower)
{
	(void)ac;
	return map_runes(c, GT_S(0), GT_SN(0), gotmpl_tolower, res);
}

/* goutils' SwapCase: upper and title to lower; lower to title after a space, else upper. */
GT_FN(f_swapcase)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	int rc = 0, space = 1;
	uint32_t r;

	(void)ac;
	for (size_t i = 0; i < GT_SN(0) && !rc;) {
		int l = gotmpl_utf8(GT_S(0) + i, GT_SN(0) - i, &r);

		if (gotmpl_isupper(r) || gotmpl_istitle(r)) {
			r = gotmpl_tolower(r);
			space = 0;
		} else if (gotmpl_islower(r)) {
			r = space ? gotmpl_totitle(r) : gotmpl_toupper(r);
			space = 0;
		} else {
			space = gotmpl_uspace(r);
		}
		rc = gotmpl_put_utf8(&sb, r);
		i += (size_t)l;
	}
	return gotmpl_done(c, &sb, rc, res);
}

/* strings.Title: the first letter after a separator upper-cased. */
GT_FN(f_title)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	uint32_t r, prev = ' ';
	int rc = 0;

	(void)ac;
	for (size_t i = 0; i < GT_SN(0) && !rc;) {
		int l = gotmpl_utf8(GT_S(0) + i, GT_SN(0) - i, &r);
		int sep = prev < 0x80 ? !(gotmpl_isupper(prev) || gotmpl_islower(prev) ||
					  (prev >= '0' && prev <= '9') || prev == '_')
				      : gotmpl_uspace(prev);

		rc = gotmpl_put_utf8(&sb, sep ? gotmpl_totitle(r) : r); /* strings.Map: U+FFFD */
		prev = r;
		i += (size_t)l;
	}
	return gotmpl_done(c, &sb, rc, res);
}

/* goutils' Initials: a byte-wise walk (each byte taken as a Latin-1 rune, as goutils does),
 * keeping each word's first letter. */
static int word_walk(struct gotmpl_fctx *c, struct gotmpl_val **av, int initials,
		     struct gotmpl_val **res)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	int rc = 0, first = 1;

	for (size_t i = 0; i < GT_SN(0) && !rc; i++) {
		unsigned char b = (unsigned char)GT_S(0)[i];

		if (gotmpl_uspace(b)) {
			first = 1;
			rc = initials ? 0 : sb_addch(&sb, (char)b);
		} else if (first) {
			first = 0;
			rc = gotmpl_put_utf8(&sb, initials ? b : gotmpl_tolower(b));
		} else if (!initials) {
			rc = sb_addch(&sb, (char)b);
		}
	}
	return gotmpl_done(c, &sb, rc, res);
}

/* goutils' Uncapitalize: over runes ([]rune(str): a byte of no UTF-8 is U+FFFD), each word's
 * first lowered (words split at unicode.IsSpace). */
GT_FN(f_untitle)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	int rc = 0, first = 1;
	uint32_t r;

	(void)ac;
	for (size_t i = 0; i < GT_SN(0) && !rc;) {
		int l = gotmpl_utf8(GT_S(0) + i, GT_SN(0) - i, &r);

		if (gotmpl_uspace(r)) {
			first = 1;
		} else if (first) {
			first = 0;
			r = gotmpl_tolower(r);
		}
		rc = gotmpl_put_utf8(&sb, r);
		i += (size_t)l;
	}
	return gotmpl_done(c, &sb, rc, res);
}

GT_FN(f_initials)
{
	(void)ac;
	return word_walk(c, av, 1, res);
}

GT_FN(f_nospace)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	size_t kept = 0;
	int rc = 0;

	(void)ac;
	for (size_t i = 0; i < GT_SN(0) && !rc; i++) {
		unsigned char b = (unsigned char)GT_S(0)[i];

		if (!gotmpl_uspace(b)) {
			rc = gotmpl_put_utf8(&sb, b);
			kept++;
		}
	}
	if (!rc && kept == GT_SN(0)) {
		sb_free(&sb);
		*res = av[0];
		return 0;
	}
	return gotmpl_done(c, &sb, rc, res);
}

/* Is rune r in the cutset set[0..n)? With set NULL: is it unicode.IsSpace? */
static int cut(const char *set, size_t n, uint32_t r)
{
	uint32_t x;

	if (!set)
		return gotmpl_uspace(r);
	for (size_t i = 0; i < n;) {
		int l = gotmpl_utf8(set + i, n - i, &x);

		if (x == r)
			return 1;
		i += (size_t)l;
	}
	return 0;
}

/* strings.Trim(s, set) (strings.TrimSpace with set NULL) as *res. */
static int trim_set(struct gotmpl_fctx *c, const struct gotmpl_val *v, const char *set, size_t n,
		    struct gotmpl_val **res)
{
	const char *s = v->u.s.p;
	size_t b = 0, e = v->u.s.n;
	uint32_t r;

	while (b < e) {
		int l = gotmpl_utf8(s + b, e - b, &r);

		/* a rune looked up in the cutset, as Go's trimLeftUnicode does */
		if (gotmpl_work(c->a, n))
			return -ELOOP;
		if (!cut(set, n, r))
			break;
		b += (size_t)l;
	}
	while (e > b) {
		size_t k = e - 1;

		if (gotmpl_work(c->a, n))
			return -ELOOP;

		while (k > b && ((unsigned char)s[k] & 0xC0) == 0x80)
			k--;
		gotmpl_utf8(s + k, e - k, &r);
		if (!cut(set, n, r))
			break;
		e = k;
	}
	GT_RES(gotmpl_str(c->a, s + b, e - b));
}

GT_FN(f_trim)
{
	(void)ac;
	return trim_set(c, av[0], NULL, 0, res);
}

/* strings.Trim(av[1], av[0]) */
GT_FN(f_trimall)
{
	(void)ac;
	return trim_set(c, av[1], GT_S(0), GT_SN(0), res);
}

GT_FN(f_trimprefix)
{
	(void)ac;
	if (GT_SN(1) >= GT_SN(0) && memcmp(GT_S(1), GT_S(0), GT_SN(0)) == 0)
		GT_RES(gotmpl_str(c->a, GT_S(1) + GT_SN(0), GT_SN(1) - GT_SN(0)));
	*res = av[1];
	return 0;
}

GT_FN(f_trimsuffix)
{
	(void)ac;
	if (GT_SN(1) >= GT_SN(0) && memcmp(GT_S(1) + GT_SN(1) - GT_SN(0), GT_S(0), GT_SN(0)) == 0)
		GT_RES(gotmpl_str(c->a, GT_S(1), GT_SN(1) - GT_SN(0)));
	*res = av[1];
	return 0;
}

static const char *find(const char *h, size_t hn, const char *n, size_t nn)
{
	if (nn == 0)
		return h;
	return memmem(h, hn, n, nn);
}

GT_FN(f_contains)
{
	(void)ac;
	GT_RES(gotmpl_bool(c->a, find(GT_S(1), GT_SN(1), GT_S(0), GT_SN(0)) != NULL));
}

GT_FN(f_hasprefix)
{
	(void)ac;
	GT_RES(gotmpl_bool(c->a, GT_SN(1) >= GT_SN(0) && memcmp(GT_S(1), GT_S(0), GT_SN(0)) == 0));
}

GT_FN(f_hassuffix)
{
	(void)ac;
	GT_RES(gotmpl_bool(c->a, GT_SN(1) >= GT_SN(0) && memcmp(GT_S(1) + GT_SN(1) - GT_SN(0),
								GT_S(0), GT_SN(0)) == 0));
}

GT_FN(f_repeat)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	int rc = 0;

	(void)ac;
	if (av[0]->u.i < 0)
		return gotmpl_fail(c, "strings: negative Repeat count");
	if (GT_SN(1) && (uint64_t)av[0]->u.i > GT_STR_MAX / GT_SN(1))
		return -E2BIG;
	for (int64_t i = 0; i < av[0]->u.i && !rc; i++)
		rc = sb_addn(&sb, GT_S(1), GT_SN(1));
	return gotmpl_done(c, &sb, rc, res);
}

GT_FN(f_substr)
{
	int64_t start = av[0]->u.i, end = av[1]->u.i, n = (int64_t)GT_SN(2);

	(void)ac;
	if (start < 0) {
		if (end < 0 || end > n)
			return gotmpl_fail(
			    c, "runtime error: slice bounds out of range [:%lld] with length %lld",
			    (long long)end, (long long)n);
		GT_RES(gotmpl_str(c->a, GT_S(2), (size_t)end));
	}
	if (end < 0 || end > n) {
		if (start > n)
			return gotmpl_fail(c,
					   "runtime error: slice bounds out of range [%lld:%lld]",
					   (long long)start, (long long)n);
		GT_RES(gotmpl_str(c->a, GT_S(2) + start, (size_t)(n - start)));
	}
	if (start > end)
		return gotmpl_fail(c, "runtime error: slice bounds out of range [%lld:%lld]",
				   (long long)start, (long long)end);
	GT_RES(gotmpl_str(c->a, GT_S(2) + start, (size_t)(end - start)));
}

GT_FN(f_trunc)
{
	int64_t k = av[0]->u.i, n = (int64_t)GT_SN(1);

	(void)ac;
	if (k < 0 && n + k > 0)
		GT_RES(gotmpl_str(c->a, GT_S(1) + n + k, (size_t)-k));
	if (k >= 0 && n > k)
		GT_RES(gotmpl_str(c->a, GT_S(1), (size_t)k));
	*res = av[1];
	return 0;
}

/* goutils.AbbreviateFull(s, offset, width) */
static int abbreviate(struct gotmpl_fctx *c, const char *s, int64_t n, int64_t off, int64_t w,
		      struct gotmpl_val **res)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	int rc;

	if (n == 0 || w < 4 || n <= w) {
		GT_RES(gotmpl_str(c->a, s, (size_t)n));
	}
	if (off > n)
		off = n;
	if (n - off < w - 3)
		off = n - (w - 3);
	if (off <= 4) {
		rc = sb_addn(&sb, s, (size_t)(w - 3)) ?: sb_add(&sb, "...");
		return gotmpl_done(c, &sb, rc, res);
	}
	if (w < 7)
		GT_RES(gotmpl_str(c->a, s, (size_t)n));
	if (off + w - 3 < n) {
		struct gotmpl_val *inner;

		rc = abbreviate(c, s + off, n - off, 0, w - 3, &inner);
		if (rc)
			return rc;
		rc = sb_add(&sb, "...") ?: sb_addn(&sb, inner->u.s.p, inner->u.s.n);
		return gotmpl_done(c, &sb, rc, res);
	}
	rc = sb_add(&sb, "...") ?: sb_addn(&sb, s + n - (w - 3), (size_t)(w - 3));
	return gotmpl_done(c, &sb, rc, res);
}

GT_FN(f_abbrev)
{
	(void)ac;
	return abbreviate(c, GT_S(1), (int64_t)GT_SN(1), 0, av[0]->u.i, res);
}

GT_FN(f_abbrevboth)
{
	int64_t l = av[0]->u.i, r = av[1]->u.i;

	(void)ac;
	if (r < 4 || (l > 0 && r < 7)) {
		*res = av[2];
		return 0;
	}
	return abbreviate(c, GT_S(2), (int64_t)GT_SN(2), l, r, res);
}

/* goutils.WrapCustom */
static int wrap(struct gotmpl_fctx *c, const char *s, size_t n, int64_t w, const char *nl,
		size_t nll, int longwords, struct gotmpl_val **res)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	size_t off = 0;
	int rc = 0;

	if (!nll)
		nl = "\n", nll = 1;
	if (w < 1)
		w = 1;
	while (!rc && (int64_t)(n - off) > w) {
		size_t end = off + (size_t)w + 1, at;
		const char *sp;

		if (s[off] == ' ') {
			off++;
			continue;
		}
		sp = NULL;
		for (size_t k = end; k-- > off;)
			if (s[k] == ' ') {
				sp = s + k;
				break;
			}
		if (sp) {
			at = (size_t)(sp - s);
			rc = sb_addn(&sb, s + off, at - off) ?: sb_addn(&sb, nl, nll);
			off = at + 1;
		} else if (longwords) {
			rc = sb_addn(&sb, s + off, (size_t)w) ?: sb_addn(&sb, nl, nll);
			off += (size_t)w;
		} else {
			const char *nsp = memchr(s + off + w, ' ', n - off - (size_t)w);

			if (!nsp) {
				rc = sb_addn(&sb, s + off, n - off);
				off = n;
			} else {
				at = (size_t)(nsp - s);
				rc = sb_addn(&sb, s + off, at - off) ?: sb_addn(&sb, nl, nll);
				off = at + 1;
			}
		}
	}
	rc = rc ?: sb_addn(&sb, s + off, n - off);
	return gotmpl_done(c, &sb, rc, res);
}

GT_FN(f_wrap)
{
	(void)ac;
	if (!GT_SN(1))
		GT_RES(gotmpl_str(c->a, "", 0));
	return wrap(c, GT_S(1), GT_SN(1), av[0]->u.i, "\n", 1, 0, res);
}

GT_FN(f_wrapwith)
{
	(void)ac;
	if (!GT_SN(2))
		GT_RES(gotmpl_str(c->a, "", 0));
	return wrap(c, GT_S(2), GT_SN(2), av[0]->u.i, GT_S(1), GT_SN(1), 1, res);
}

/* quote / squote: each non-nil argument's string, quoted, joined by spaces. */
static int quote_all(struct gotmpl_fctx *c, struct gotmpl_val **av, int ac, char q,
		     struct gotmpl_val **res)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	int rc = 0, first = 1;

	for (int i = 0; i < ac && !rc; i++) {
		struct gotmpl_val *s;

		if (av[i]->kind == GOTMPL_NIL)
			continue;
		s = gotmpl_tostring(c, av[i]);
		if (!s) {
			sb_free(&sb);
			return -ENOMEM;
		}
		rc = first ? 0 : sb_addch(&sb, ' ');
		first = 0;
		if (q == '"')
			rc = rc ?: gotmpl_quote(&sb, s->u.s.p, s->u.s.n, '"');
		else if (av[i]->kind == GOTMPL_LIST &&
			 av[i]->sub == GT_BYTES) /* "'%v'", not strval */
			rc = rc ?: sb_addch(&sb, '\'') ?: gotmpl_fmt_v(&sb, av[i]) ?: sb_addch(&sb, '\'');
		else
			rc = rc ?: sb_addch(&sb, '\'') ?: sb_addn(&sb, s->u.s.p, s->u.s.n)
				       ?: sb_addch(&sb, '\'');
	}
	return gotmpl_done(c, &sb, rc, res);
}

GT_FN(f_quote)
{
	return quote_all(c, av, ac, '"', res);
}

GT_FN(f_squote)
{
	return quote_all(c, av, ac, '\'', res);
}

GT_FN(f_cat)
{
	struct strbuf sb = STRBUF_INIT(gotmpl_room(c->a, GT_PRINT_UNITS));
	int rc = 0, first = 1;

	for (int i = 0; i < ac && !rc; i++) {
		if (av[i]->kind == GOTMPL_NIL)
			continue;
		rc = (first ? 0 : sb_addch(&sb, ' ')) ?: gotmpl_fmt_v(&sb, av[i]);
		first = 0;
	}
	return gotmpl_printed(c, &sb, rc, GT_PRINT_UNITS, res);
}

static int indent(struct gotmpl_fctx *c, int64_t n, const char *s, size_t len, int nl,
		  struct gotmpl_val **res)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX), pad = STRBUF_INIT(GT_STR_MAX);
	int rc = 0;

	if (n < 0)
		return gotmpl_fail(c, "strings: negative Repeat count");
	for (int64_t i = 0; i < n && !rc; i++)
		rc = sb_addch(&pad, ' ');
	rc = rc ?: (nl ? sb_addch(&sb, '\n') : 0) ?: sb_addn(&sb, pad.buf, pad.len);
	for (size_t i = 0; i < len && !rc; i++)
		rc = sb_addch(&sb, s[i]) ?: (s[i] == '\n' ? sb_addn(&sb, pad.buf, pad.len) : 0);
	sb_free(&pad);
	return gotmpl_done(c, &sb, rc, res);
}

GT_FN(f_indent)
{
	(void)ac;
	return indent(c, av[0]->u.i, GT_S(1), GT_SN(1), 0, res);
}

GT_FN(f_nindent)
{
	(void)ac;
	return indent(c, av[0]->u.i, GT_S(1), GT_SN(1), 1, res);
}

/* strings.Replace(s, old, new, -1) */
static int replace(struct gotmpl_fctx *c, const char *s, size_t n, const char *old, size_t on,
		   const char *rep, size_t rn, struct gotmpl_val **res)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	size_t i = 0;
	int rc = 0;

	if (on == 0) { /* before every rune and at the end */
		uint32_t r;

		while (i < n && !rc) {
			int l = gotmpl_utf8(s + i, n - i, &r);

			rc = sb_addn(&sb, rep, rn) ?: sb_addn(&sb, s + i, (size_t)l);
			i += (size_t)l;
		}
		rc = rc ?: sb_addn(&sb, rep, rn);
		return gotmpl_done(c, &sb, rc, res);
	}
	while (!rc && i <= n) {
		const char *m = memmem(s + i, n - i, old, on);

		if (!m) {
			rc = sb_addn(&sb, s + i, n - i);
			break;
		}
		rc = sb_addn(&sb, s + i, (size_t)(m - s) - i) ?: sb_addn(&sb, rep, rn);
		i = (size_t)(m - s) + on;
	}
	return gotmpl_done(c, &sb, rc, res);
}

GT_FN(f_replace)
{
	(void)ac;
	return replace(c, GT_S(2), GT_SN(2), GT_S(0), GT_SN(0), GT_S(1), GT_SN(1), res);
}

GT_FN(f_plural)
{
	(void)c;
	(void)ac;
	*res = av[2]->u.i == 1 ? av[0] : av[1];
	return 0;
}

const struct gotmpl_func gotmpl_sprig_str_funcs[] = {
    {"abbrev", f_abbrev, "is", 0},
    {"abbrevboth", f_abbrevboth, "iis", 0},
    {"cat", f_cat, "*a", 0},
    {"contains", f_contains, "ss", 0},
    {"hasPrefix", f_hasprefix, "ss", 0},
    {"hasSuffix", f_hassuffix, "ss", 0},
    {"indent", f_indent, "is", 0},
    {"initials", f_initials, "s", 0},
    {"lower", f_lower, "s", 0},
    {"nindent", f_nindent, "is", 0},
    {"nospace", f_nospace, "s", 0},
    {"plural", f_plural, "ssi", 0},
    {"quote", f_quote, "*a", 0},
    {"repeat", f_repeat, "is", 0},
    {"replace", f_replace, "sss", 0},
    {"squote", f_squote, "*a", 0},
    {"substr", f_substr, "iis", 0},
    {"swapcase", f_swapcase, "s", 0},
    {"title", f_title, "s", 0},
    {"trim", f_trim, "s", 0},
    {"trimAll", f_trimall, "ss", 0},
    {"trimall", f_trimall, "ss", 0},
    {"trimPrefix", f_trimprefix, "ss", 0},
    {"trimSuffix", f_trimsuffix, "ss", 0},
    {"trunc", f_trunc, "is", 0},
    {"untitle", f_untitle, "s", 0},
    {"upper", f_upper, "s", 0},
    {"wrap", f_wrap, "is", 0},
    {"wrapWith", f_wrapwith, "iss", 0},
    {NULL, NULL, NULL, 0},
};
