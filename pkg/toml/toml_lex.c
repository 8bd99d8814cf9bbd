/* SPDX-License-Identifier: GPL-2.0-or-later */
/* toml_lex: TOML 1.0 tokens: positions and errors, strings, keys, numbers and dates. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "toml/toml_internal.h"

int toml_col_of(const struct parser *ps, const char *at)
{
	return (int)(at - ps->line_start) + 1;
}

__attribute__((format(printf, 4, 0))) static int vfail(struct parser *ps, int line, int col,
						       const char *fmt, va_list ap)
{
	char msg[256];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	return log_err_set(ps->err, -EINVAL, "%s:%d:%d: %s", ps->name, line, col, msg);
}

/* Fail with "<name>:<line>:<col>: <what>" at byte at of the current line. */
__attribute__((format(printf, 3, 4))) int toml_fail_at(struct parser *ps, const char *at,
						       const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vfail(ps, ps->line, toml_col_of(ps, at), fmt, ap);
	va_end(ap);
	return r;
}

/* Same at an explicit position (a key seen earlier). */
__attribute__((format(printf, 4, 5))) int toml_fail_pos(struct parser *ps, int line, int col,
							const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vfail(ps, line, col, fmt, ap);
	va_end(ap);
	return r;
}

int toml_oom(struct parser *ps)
{
	return log_err_set(ps->err, -ENOMEM, "%s: out of memory", ps->name);
}

/* ---- lexing helpers ---- */

bool toml_at_end(const struct parser *ps)
{
	return ps->p >= ps->end;
}

int toml_peek(const struct parser *ps, size_t off)
{
	return ps->p + off < ps->end ? (unsigned char)ps->p[off] : -1;
}

void toml_skip_ws(struct parser *ps)
{
	while (!toml_at_end(ps) && (*ps->p == ' ' || *ps->p == '\t'))
		ps->p++;
}

/* At a newline (LF or CRLF)? A lone CR is an error reported by the caller. */
int toml_newline_len(const struct parser *ps)
{
	if (toml_peek(ps, 0) == '\n')
		return 1;
	if (toml_peek(ps, 0) == '\r' && toml_peek(ps, 1) == '\n')
		return 2;
	return 0;
}

void toml_take_newline(struct parser *ps, int n)
{
	ps->p += n;
	ps->line++;
	ps->line_start = ps->p;
}

/* A control character TOML forbids in comments and strings (tab is allowed). */
static bool is_bad_ctl(int c)
{
	return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f;
}

static int skip_comment(struct parser *ps)
{
	if (toml_peek(ps, 0) != '#')
		return 0;
	while (!toml_at_end(ps) && *ps->p != '\n') {
		if (*ps->p == '\r' && toml_peek(ps, 1) == '\n')
			break;
		if (is_bad_ctl((unsigned char)*ps->p))
			return toml_fail_at(ps, ps->p, "control character 0x%02x in comment",
					    (unsigned char)*ps->p);
		ps->p++;
	}
	return 0;
}

/* Skip white space, newlines and comments (inside arrays). */
int toml_skip_ws_nl(struct parser *ps)
{
	int n, r;

	for (;;) {
		toml_skip_ws(ps);
		r = skip_comment(ps);
		if (r < 0)
			return r;
		n = toml_newline_len(ps);
		if (n) {
			toml_take_newline(ps, n);
			continue;
		}
		if (toml_peek(ps, 0) == '\r')
			return toml_fail_at(ps, ps->p, "carriage return not followed by a newline");
		return 0;
	}
}

/* After a key/value or header: white space, optional comment, then newline or end. */
int toml_end_of_line(struct parser *ps)
{
	int n, r;

	toml_skip_ws(ps);
	r = skip_comment(ps);
	if (r < 0)
		return r;
	if (toml_at_end(ps))
		return 0;
	n = toml_newline_len(ps);
	if (!n) {
		if (toml_peek(ps, 0) == '\r')
			return toml_fail_at(ps, ps->p, "carriage return not followed by a newline");
		return toml_fail_at(ps, ps->p, "expected the end of the line, found '%c'", *ps->p);
	}
	toml_take_newline(ps, n);
	return 0;
}

/* Check UTF-8; report the first bad byte with its position. */
int toml_check_utf8(struct parser *ps)
{
	const unsigned char *s = (const unsigned char *)ps->p, *e = (const unsigned char *)ps->end;
	const char *ls = ps->p;
	int line = 1;

	while (s < e) {
		unsigned c = *s;
		size_t n, i;
		uint32_t cp;

		if (c == '\n') {
			line++;
			ls = (const char *)s + 1;
		}
		if (c < 0x80) {
			s++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			n = 1;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			n = 2;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			n = 3;
			cp = c & 0x07;
		} else {
			goto bad;
		}
		if ((size_t)(e - s) <= n)
			goto bad;
		for (i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				goto bad;
			cp = (cp << 6) | (s[i] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			goto bad;
		s += n + 1;
	}
	return 0;
bad:
	return toml_fail_pos(ps, line, (int)((const char *)s - ls) + 1, "invalid UTF-8");
}

/* ---- strings ---- */

static int add_utf8(struct strbuf *sb, uint32_t cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return sb_addn(sb, b, n);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* An escape after the backslash at ps->p[-1]; appends to sb. */
static int parse_escape(struct parser *ps, struct strbuf *sb)
{
	const char *at = ps->p - 1;
	int c = toml_peek(ps, 0), n = 0, i, h;
	uint32_t cp = 0;
	char out;

	switch (c) {
	case 'b':
		out = '\b';
		break;
	case 't':
		out = '\t';
		break;
	case 'n':
		out = '\n';
		break;
	case 'f':
		out = '\f';
		break;
	case 'r':
		out = '\r';
		break;
	case '"':
		out = '"';
		break;
	case '\\':
		out = '\\';
		break;
	case 'u':
		n = 4;
		break;
	case 'U':
		n = 8;
		break;
	default:
		if (c < 0x20 || c >= 0x7f)
			return toml_fail_at(ps, at, "invalid escape sequence");
		return toml_fail_at(ps, at, "invalid escape sequence '\\%c'", c);
	}
	ps->p++;
	if (n == 0)
		return sb_addch(sb, out) < 0 ? toml_oom(ps) : 0;
	for (i = 0; i < n; i++) {
		h = hexval(toml_peek(ps, 0));
		if (h < 0)
			return toml_fail_at(ps, at, "\\%c needs %d hex digits", c, n);
		cp = cp * 16 + (uint32_t)h;
		ps->p++;
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return toml_fail_at(ps, at, "\\%c%0*X is not a Unicode scalar value", c, n, cp);
	return add_utf8(sb, cp) < 0 ? toml_oom(ps) : 0;
}

/*
 * Parse a string starting at ps->p (a quote). multi-line forms only when
 * allow_ml. Appends the decoded text to sb.
 */
int toml_parse_string(struct parser *ps, struct strbuf *sb, bool allow_ml)
{
	const char *start = ps->p;
	char q = *ps->p;
	bool ml = toml_peek(ps, 1) == q && toml_peek(ps, 2) == q;
	int r, n;

	if (ml && !allow_ml)
		return toml_fail_at(ps, start, "multi-line string not allowed here");
	ps->p += ml ? 3 : 1;
	if (ml) {
		n = toml_newline_len(ps); /* a newline right after the opening is trimmed */
		if (n)
			toml_take_newline(ps, n);
	}
	for (;;) {
		int c = toml_peek(ps, 0);

		if (c < 0)
			return toml_fail_at(ps, start, "unclosed string");
		if (c == q) {
			if (!ml) {
				ps->p++;
				return 0;
			}
			if (toml_peek(ps, 1) == q && toml_peek(ps, 2) == q) {
				/* up to two more quotes belong to the content */
				int extra = 0;

				while (extra < 2 && toml_peek(ps, 3 + (size_t)extra) == q)
					extra++;
				if (sb_addn(sb, ps->p, (size_t)extra) < 0)
					return toml_oom(ps);
				ps->p += 3 + extra;
				return 0;
			}
			if (sb_addch(sb, q) < 0)
				return toml_oom(ps);
			ps->p++;
			continue;
		}
		n = toml_newline_len(ps);
		if (n) {
			if (!ml)
				return toml_fail_at(ps, start, "unclosed string");
			if (sb_addn(sb, ps->p, (size_t)n) < 0)
				return toml_oom(ps);
			toml_take_newline(ps, n);
			continue;
		}
		if (c == '\\' && q == '"') {
			if (ml) {
				/* line-ending backslash: trim white space and newlines */
				const char *save = ps->p;

				ps->p++;
				toml_skip_ws(ps);
				n = toml_newline_len(ps);
				if (n) {
					while ((n = toml_newline_len(ps)) ||
					       toml_peek(ps, 0) == ' ' ||
					       toml_peek(ps, 0) == '\t') {
						if (n)
							toml_take_newline(ps, n);
						else
							ps->p++;
					}
					continue;
				}
				ps->p = save;
			}
			ps->p++;
			r = parse_escape(ps, sb);
			if (r < 0)
				return r;
			continue;
		}
		if (is_bad_ctl(c))
			return toml_fail_at(ps, ps->p, "control character 0x%02x in string", c);
		if (sb_addch(sb, (char)c) < 0)
			return toml_oom(ps);
		ps->p++;
	}
}

/* ---- keys ---- */

bool toml_is_bare(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

void toml_key_free(struct key *k)
{
	int i;

	for (i = 0; i < k->n; i++)
		free(k->part[i]);
	k->n = 0;
}

int toml_parse_key(struct parser *ps, struct key *k)
{
	struct strbuf sb = STRBUF_INIT(1 << 20);
	int r = 0;

	k->n = 0;
	for (;;) {
		const char *at = ps->p;
		int c = toml_peek(ps, 0);

		if (k->n == TOML_MAX_KEY_PARTS) {
			r = toml_fail_at(ps, at, "key has more than %d parts", TOML_MAX_KEY_PARTS);
			goto out;
		}
		sb_reset(&sb);
		if (c == '"' || c == '\'') {
			r = toml_parse_string(ps, &sb, false);
			if (r < 0)
				goto out;
			if (memchr(sb.buf, '\0', sb.len)) {
				r = toml_fail_at(ps, at, "key contains a NUL character");
				goto out;
			}
		} else if (toml_is_bare(c)) {
			while (toml_is_bare(toml_peek(ps, 0)))
				ps->p++;
			if (sb_addn(&sb, at, (size_t)(ps->p - at)) < 0) {
				r = toml_oom(ps);
				goto out;
			}
		} else if (c < 0 || c == '\n' || c == '\r') {
			r = toml_fail_at(ps, at, "expected a key");
			goto out;
		} else {
			r = toml_fail_at(ps, at, "invalid character '%c' in key", c);
			goto out;
		}
		k->part[k->n] = sb_take(&sb);
		if (!k->part[k->n]) {
			r = toml_oom(ps);
			goto out;
		}
		k->line[k->n] = ps->line;
		k->col[k->n] = toml_col_of(ps, at);
		k->n++;
		toml_skip_ws(ps);
		if (toml_peek(ps, 0) != '.')
			break;
		ps->p++;
		toml_skip_ws(ps);
	}
out:
	sb_free(&sb);
	if (r < 0)
		toml_key_free(k);
	return r;
}

/* ---- numbers and dates ---- */

bool toml_isdig(int c)
{
	return c >= '0' && c <= '9';
}

/* n digits at s? */
bool toml_digits(const char *s, const char *e, int n)
{
	int i;

	if (e - s < n)
		return false;
	for (i = 0; i < n; i++)
		if (!toml_isdig(s[i]))
			return false;
	return true;
}

static int num2(const char *s)
{
	return (s[0] - '0') * 10 + (s[1] - '0');
}

/* HH:MM:SS(.frac)? at s; returns bytes used or -1. */
static int scan_time(const char *s, const char *e)
{
	const char *p = s;

	if (!toml_digits(p, e, 2) || p + 2 >= e || p[2] != ':' || !toml_digits(p + 3, e, 2) ||
	    p + 5 >= e || p[5] != ':' || !toml_digits(p + 6, e, 2))
		return -1;
	if (num2(p) > 23 || num2(p + 3) > 59 || num2(p + 6) > 60)
		return -1;
	p += 8;
	if (p < e && *p == '.') {
		p++;
		if (p >= e || !toml_isdig(*p))
			return -1;
		while (p < e && toml_isdig(*p))
			p++;
	}
	return (int)(p - s);
}

/* Is [s,e) a TOML date-time, local date-time, local date or local time? */
bool toml_is_datetime(const char *s, const char *e)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	const char *p = s;
	int t, y, m, d;

	if (toml_digits(p, e, 2) && p + 2 < e && p[2] == ':')
		return scan_time(p, e) == e - p;
	if (!toml_digits(p, e, 4) || p + 4 >= e || p[4] != '-' || !toml_digits(p + 5, e, 2) ||
	    p + 7 >= e || p[7] != '-' || !toml_digits(p + 8, e, 2))
		return false;
	y = (p[0] - '0') * 1000 + (p[1] - '0') * 100 + num2(p + 2);
	m = num2(p + 5);
	d = num2(p + 8);
	if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return false;
	if (m == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return false;
	p += 10;
	if (p == e)
		return true;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return false;
	p++;
	t = scan_time(p, e);
	if (t < 0)
		return false;
	p += t;
	if (p == e)
		return true;
	if ((*p == 'Z' || *p == 'z') && p + 1 == e)
		return true;
	if (*p != '+' && *p != '-')
		return false;
	p++;
	return e - p == 5 && toml_digits(p, e, 2) && p[2] == ':' && toml_digits(p + 3, e, 2) &&
	       num2(p) <= 23 && num2(p + 3) <= 59;
}

/* Digits of the given base with single underscores between digits; copies digits to out. */
static bool scan_digits(const char **pp, const char *e, int base, struct strbuf *out)
{
	const char *p = *pp;
	bool need = true;

	for (; p < e; p++) {
		int h = hexval((unsigned char)*p);

		if (*p == '_') {
			if (need)
				return false;
			need = true;
			continue;
		}
		if (h < 0 || h >= base)
			break;
		if (sb_addch(out, *p) < 0)
			return false;
		need = false;
	}
	if (need)
		return false;
	*pp = p;
	return true;
}

int toml_parse_number(struct parser *ps, const char *s, const char *e, struct toml_value *v)
{
	struct strbuf sb = STRBUF_INIT((size_t)(e - s) + 1);
	const char *p = s;
	int r = 0, base = 10;
	bool isfloat = false;
	char *endp;

	if ((e - p == 3 || e - p == 4) &&
	    (!strncmp(e - 3, "inf", 3) || !strncmp(e - 3, "nan", 3)) &&
	    (e - p == 3 || *p == '+' || *p == '-')) {
		v->type = TOML_FLOAT;
		v->f = e[-3] == 'i' ? (*p == '-' ? -INFINITY : INFINITY) : NAN;
		goto out;
	}
	if (p < e && (*p == '+' || *p == '-')) {
		if (sb_addch(&sb, *p) < 0)
			goto nomem;
		p++;
	}
	if (p + 1 < e && p[0] == '0' && (p[1] == 'x' || p[1] == 'o' || p[1] == 'b')) {
		if (p != s) {
			r = toml_fail_at(ps, s,
					 "a sign is not allowed on hex, octal or binary numbers");
			goto out;
		}
		base = p[1] == 'x' ? 16 : p[1] == 'o' ? 8 : 2;
		p += 2;
		if (!scan_digits(&p, e, base, &sb) || p != e)
			goto bad;
	} else {
		if (p >= e || !toml_isdig(*p))
			goto bad;
		if (*p == '0' && p + 1 < e && (toml_isdig(p[1]) || p[1] == '_')) {
			r = toml_fail_at(ps, s, "leading zeros are not allowed in '%.*s'",
					 (int)(e - s), s);
			goto out;
		}
		if (!scan_digits(&p, e, 10, &sb))
			goto bad;
		if (p < e && *p == '.') {
			isfloat = true;
			if (sb_addch(&sb, '.') < 0)
				goto nomem;
			p++;
			if (!scan_digits(&p, e, 10, &sb))
				goto bad;
		}
		if (p < e && (*p == 'e' || *p == 'E')) {
			isfloat = true;
			if (sb_addch(&sb, 'e') < 0)
				goto nomem;
			p++;
			if (p < e && (*p == '+' || *p == '-')) {
				if (sb_addch(&sb, *p) < 0)
					goto nomem;
				p++;
			}
			if (!scan_digits(&p, e, 10, &sb))
				goto bad;
		}
		if (p != e)
			goto bad;
	}
	errno = 0;
	if (isfloat) {
		v->type = TOML_FLOAT;
		v->f = strtod(sb.buf, &endp);
		if (errno == ERANGE && isinf(v->f)) {
			r = toml_fail_at(ps, s, "float '%.*s' out of range", (int)(e - s), s);
			goto out;
		}
	} else {
		v->type = TOML_INT;
		if (base != 10) {
			unsigned long long u = strtoull(sb.buf, &endp, base);

			if (errno == ERANGE || u > (unsigned long long)LLONG_MAX) {
				r = toml_fail_at(ps, s, "integer '%.*s' out of range", (int)(e - s),
						 s);
				goto out;
			}
			v->i = (long long)u;
		} else {
			v->i = strtoll(sb.buf, &endp, 10);
			if (errno == ERANGE) {
				r = toml_fail_at(ps, s, "integer '%.*s' out of range", (int)(e - s),
						 s);
				goto out;
			}
		}
	}
	goto out;
bad:
	r = toml_fail_at(ps, s, "invalid value '%.*s'", (int)(e - s), s);
	goto out;
nomem:
	r = toml_oom(ps);
out:
	sb_free(&sb);
	return r;
}
