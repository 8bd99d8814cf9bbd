/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_sprig_case: Sprig's snakecase, kebabcase and camelcase (huandu/xstrings' word splitter).
 */
#include <errno.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

/*
 * xstrings (the version with ToPascalCase, which Sprig v3.3's camelcase is)
 * splits a string into words: runs of connectors (space, '-', '_'), of
 * punctuation, of upper-case letters (the last one starting the next word
 * when lower-case follows: "HTTPServer" is "HTTP" "Server"), of lower-case
 * letters after at most one upper-case one, of digits, and of anything else.
 * Unicode classes are approximated outside ASCII and Latin-1.
 */
enum word { W_INVALID, W_NUMBER, W_UPPER, W_ALPHA, W_CONNECTOR, W_PUNCT, W_OTHER };

static int is_connector(uint32_t r)
{
	return r == '-' || r == '_' || gotmpl_uspace(r);
}

/* unicode.IsPunct (category P) */
static int is_punct(uint32_t r)
{
	if (r < 0x80)
		return r && strchr("!\"#%&'()*,-./:;?@[\\]_{}", (int)r) != NULL;
	return r == 0xA1 || r == 0xA7 || r == 0xAB || r == 0xB6 || r == 0xB7 || r == 0xBB ||
	       r == 0xBF || (r >= 0x2010 && r <= 0x2027) || (r >= 0x2030 && r <= 0x205E) ||
	       (r >= 0x3001 && r <= 0x3003) || (r >= 0x3008 && r <= 0x3011);
}

/* unicode.IsNumber */
static int is_number(uint32_t r)
{
	return (r >= '0' && r <= '9') || r == 0xB2 || r == 0xB3 || r == 0xB9 ||
	       (r >= 0xBC && r <= 0xBE);
}

/* a letter: ASCII and Latin-1 ones; beyond Latin-1 whatever is not space or punctuation */
static int is_alpha(uint32_t r)
{
	if (r < 0x80)
		return (r | 0x20) >= 'a' && (r | 0x20) <= 'z';
	if (r < 0x100)
		return r == 0xAA || r == 0xB5 || r == 0xBA || (r >= 0xC0 && r != 0xD7 && r != 0xF7);
	return !gotmpl_uspace(r) && !is_punct(r);
}

/* The next valid rune of s[0..n) in *r (prev when there is none): the bytes up to its end. */
static size_t next_valid(const char *s, size_t n, uint32_t prev, uint32_t *r)
{
	size_t size = 0;

	while (size < n) {
		uint32_t x;

		size += (size_t)gotmpl_utf8(s + size, n - size, &x);
		if (x != 0xFFFD) {
			*r = x;
			return size;
		}
	}
	*r = prev;
	return size;
}

/* The bytes s[off..n) still of the class cls (given the last rune r). */
static size_t run(const char *s, size_t n, size_t off, uint32_t r, int (*cls)(uint32_t),
		  int stop_upper)
{
	while (off < n) {
		size_t size = next_valid(s + off, n - off, r, &r);

		if (!cls(r) || (stop_upper && gotmpl_isupper(r)))
			break;
		off += size;
	}
	return off;
}

static int not_other(uint32_t r)
{
	return !(is_connector(r) || is_alpha(r) || is_number(r) || is_punct(r));
}

/* The next word of s[0..n): its class in *wt, its length returned. */
static size_t next_word(const char *s, size_t n, int *wt)
{
	size_t off, size, before;
	uint32_t r;

	*wt = W_INVALID;
	if (!n)
		return 0;
	off = next_valid(s, n, 0xFFFD, &r);
	if (r == 0xFFFD)
		return off;
	if (is_connector(r)) {
		*wt = W_CONNECTOR;
		return run(s, n, off, r, is_connector, 0);
	}
	if (is_punct(r)) {
		*wt = W_PUNCT;
		return run(s, n, off, r, is_punct, 0);
	}
	if (gotmpl_isupper(r)) {
		*wt = W_UPPER;
		if (off >= n)
			return off;
		size = next_valid(s + off, n - off, r, &r);
		if (is_alpha(r) && !gotmpl_isupper(r))
			return run(s, n, off + size, r, is_alpha, 1);
		if (!gotmpl_isupper(r))
			return off;
		/* upper-case run: a lower-case letter after it takes the run's last letter */
		off += size;
		before = size;
		while (off < n) {
			size = next_valid(s + off, n - off, r, &r);
			if (!gotmpl_isupper(r))
				break;
			before = size;
			off += size;
		}
		if (off < n && is_alpha(r))
			off -= before;
		return off;
	}
	if (is_alpha(r)) {
		*wt = W_ALPHA;
		return run(s, n, off, r, is_alpha, 1);
	}
	if (is_number(r)) {
		*wt = W_NUMBER;
		return run(s, n, off, r, is_number, 0);
	}
	*wt = W_OTHER;
	return run(s, n, off, r, not_other, 0);
}

/* A word in lower case, connectors as conn (only upper-case and connector words change). */
static int lower(struct strbuf *sb, int wt, const char *w, size_t n, char conn)
{
	int rc = 0;

	if (wt != W_UPPER && wt != W_CONNECTOR)
		return sb_addn(sb, w, n);
	for (size_t i = 0; i < n && !rc;) {
		uint32_t r;

		i += (size_t)gotmpl_utf8(w + i, n - i, &r);
		rc = is_connector(r)
			 ? sb_addch(sb, conn)
			 : gotmpl_put_utf8(sb, gotmpl_istitle(r) ? r : gotmpl_tolower(r));
	}
	return rc;
}

struct words {
	const char *p; /* the rest of the string */
	size_t left;
	int wt;	       /* the current word's class */
	const char *w; /* the current word */
	size_t wn;
};

static void next(struct words *ws)
{
	ws->w = ws->p;
	ws->wn = next_word(ws->p, ws->left, &ws->wt);
	ws->p += ws->wn;
	ws->left -= ws->wn;
}

static int is_alnum_word(int wt)
{
	return wt == W_ALPHA || wt == W_NUMBER;
}

/* xstrings' camelCaseToLowerCase: words lower-cased, joined by conn where a word boundary is. */
static int to_lower_case(struct strbuf *sb, const char *s, size_t n, char conn)
{
	struct words ws = {.p = s, .left = n};
	int rc = 0;

	next(&ws);
	while (ws.left > 0 && !rc) {
		int prev = ws.wt;
		const char *last = ws.w;
		size_t lastn = ws.wn;

		if (ws.wt != W_CONNECTOR)
			rc = lower(sb, ws.wt, ws.w, ws.wn, conn);
		next(&ws);
		if (prev == W_NUMBER) {
			while (!rc && is_alnum_word(ws.wt)) {
				rc = lower(sb, ws.wt, ws.w, ws.wn, conn);
				next(&ws);
			}
			if (!rc && ws.wt != W_INVALID && ws.wt != W_PUNCT && ws.wt != W_CONNECTOR)
				rc = sb_addch(sb, conn);
		} else if (prev == W_CONNECTOR) {
			rc = rc ?: lower(sb, prev, last, lastn, conn);
		} else if (prev != W_PUNCT && !rc) {
			if (ws.wt != W_NUMBER) {
				if (ws.wt != W_CONNECTOR && ws.wt != W_PUNCT)
					rc = sb_addch(sb, conn);
				continue;
			}
			if (!ws.left)
				continue;
			last = ws.w; /* a number: part of this word unless lower case follows it */
			lastn = ws.wn;
			next(&ws);
			if (ws.wt != W_ALPHA) {
				rc = lower(sb, W_NUMBER, last, lastn, conn);
				if (!rc && ws.wt != W_CONNECTOR && ws.wt != W_PUNCT)
					rc = sb_addch(sb, conn);
				continue;
			}
			rc = sb_addch(sb, conn) ?: lower(sb, W_NUMBER, last, lastn, conn);
			while (!rc && is_alnum_word(ws.wt)) {
				rc = lower(sb, ws.wt, ws.w, ws.wn, conn);
				next(&ws);
			}
			if (!rc && ws.wt != W_INVALID && ws.wt != W_CONNECTOR && ws.wt != W_PUNCT)
				rc = sb_addch(sb, conn);
		}
	}
	return rc ?: lower(sb, ws.wt, ws.w, ws.wn, conn);
}

GT_FN(f_snakecase)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);

	(void)ac;
	return gotmpl_done(c, &sb, to_lower_case(&sb, GT_S(0), GT_SN(0), '_'), res);
}

GT_FN(f_kebabcase)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);

	(void)ac;
	return gotmpl_done(c, &sb, to_lower_case(&sb, GT_S(0), GT_SN(0), '-'), res);
}

/* xstrings.ToPascalCase: connectors dropped, each word capitalised, upper-case runs lowered. */
GT_FN(f_camelcase)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	const char *s = GT_S(0);
	size_t n = GT_SN(0), i = 0;
	uint32_t r0 = 0, r1;
	int rc = 0, first_upper = 0, size = 0;

	(void)ac;
	while (i < n && !rc) { /* leading connectors are kept */
		size = gotmpl_utf8(s + i, n - i, &r0);
		i += (size_t)size;
		if (!is_connector(r0)) {
			first_upper = gotmpl_isupper(r0);
			r0 = gotmpl_toupper(r0);
			break;
		}
		rc = gotmpl_put_utf8(&sb, r0);
	}
	if (i >= n) { /* xstrings writes the last rune once more here, connector or not */
		rc = rc ?: (size ? gotmpl_put_utf8(&sb, r0) : 0);
		return gotmpl_done(c, &sb, rc, res);
	}
	while (i < n && !rc) {
		r1 = r0;
		i += (size_t)gotmpl_utf8(s + i, n - i, &r0);
		if (is_connector(r0) && is_connector(r1)) {
			rc = gotmpl_put_utf8(&sb, r1);
			continue;
		}
		if (is_connector(r1)) {
			first_upper = gotmpl_isupper(r0);
			r0 = gotmpl_toupper(r0);
			continue;
		}
		if (first_upper) {
			if (gotmpl_isupper(r0))
				r0 = gotmpl_tolower(r0);
			else
				first_upper = 0;
		}
		rc = gotmpl_put_utf8(&sb, r1);
	}
	rc = rc ?: gotmpl_put_utf8(&sb, r0);
	return gotmpl_done(c, &sb, rc, res);
}

const struct gotmpl_func gotmpl_sprig_case_funcs[] = {
    {"camelcase", f_camelcase, "s", 0},
    {"kebabcase", f_kebabcase, "s", 0},
    {"snakecase", f_snakecase, "s", 0},
    {NULL, NULL, NULL, 0},
};
