/* SPDX-License-Identifier: GPL-2.0-or-later */
/* toml: a strict TOML 1.0 reader (the subset containerd's files use, and the rest of the grammar).
 */
#include "toml/toml.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/log.h"
#include "strbuf/strbuf.h"

#define TOML_MAX_DEPTH	   64
#define TOML_MAX_KEY_PARTS 64

struct parser {
	const char *p, *end;	/* cursor and end of input */
	const char *line_start; /* first byte of the current line */
	int line;		/* current line, 1-based */
	const char *name;	/* for messages */
	struct log_err *err;	/* filled on error */
	struct toml_value *root;
	struct toml_value *cur; /* table that key/value lines go into */
	int depth;		/* array / inline table nesting */
};

/* A key as written: its decoded parts and where each part starts. */
struct key {
	char *part[TOML_MAX_KEY_PARTS];
	int line[TOML_MAX_KEY_PARTS], col[TOML_MAX_KEY_PARTS];
	int n;
};

static int col_of(const struct parser *ps, const char *at)
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
__attribute__((format(printf, 3, 4))) static int fail_at(struct parser *ps, const char *at,
							 const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vfail(ps, ps->line, col_of(ps, at), fmt, ap);
	va_end(ap);
	return r;
}

/* Same at an explicit position (a key seen earlier). */
__attribute__((format(printf, 4, 5))) static int fail_pos(struct parser *ps, int line, int col,
							  const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vfail(ps, line, col, fmt, ap);
	va_end(ap);
	return r;
}

static int oom(struct parser *ps)
{
	return log_err_set(ps->err, -ENOMEM, "%s: out of memory", ps->name);
}

/* ---- values ---- */

static struct toml_value *new_value(enum toml_type type, int line, int col)
{
	struct toml_value *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->type = type;
	v->line = line;
	v->col = col;
	return v;
}

void toml_free(struct toml_value *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++) {
		toml_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->key_line);
	free(v->key_col);
	free(v->str);
	free(v);
}

/*
 * Make room for one more item. Capacity is implicit: 4, then doubled whenever
 * n reaches a power of two.
 */
static int grow(struct toml_value *v, bool keyed)
{
	size_t cap;
	void *p;

	if (v->n == 0)
		cap = 4;
	else if (v->n >= 4 && (v->n & (v->n - 1)) == 0)
		cap = v->n * 2;
	else
		return 0;
	p = realloc(v->items, cap * sizeof(*v->items));
	if (!p)
		return -ENOMEM;
	v->items = p;
	if (!keyed)
		return 0;
	p = realloc(v->keys, cap * sizeof(*v->keys));
	if (!p)
		return -ENOMEM;
	v->keys = p;
	p = realloc(v->key_line, cap * sizeof(*v->key_line));
	if (!p)
		return -ENOMEM;
	v->key_line = p;
	p = realloc(v->key_col, cap * sizeof(*v->key_col));
	if (!p)
		return -ENOMEM;
	v->key_col = p;
	return 0;
}

/* Add item to array a (takes item). */
static int array_push(struct toml_value *a, struct toml_value *item)
{
	if (grow(a, false) < 0)
		return -ENOMEM;
	a->items[a->n++] = item;
	return 0;
}

/* Add key = item to table t (takes item, copies key). */
static int table_put(struct toml_value *t, const char *key, int line, int col,
		     struct toml_value *item)
{
	char *k = strdup(key);

	if (!k || grow(t, true) < 0) {
		free(k);
		return -ENOMEM;
	}
	t->keys[t->n] = k;
	t->key_line[t->n] = line;
	t->key_col[t->n] = col;
	t->items[t->n++] = item;
	return 0;
}

int toml_index(const struct toml_value *t, const char *key)
{
	size_t i;

	if (!t || t->type != TOML_TABLE)
		return -1;
	for (i = 0; i < t->n; i++)
		if (strcmp(t->keys[i], key) == 0)
			return (int)i;
	return -1;
}

const struct toml_value *toml_get(const struct toml_value *t, const char *key)
{
	int i = toml_index(t, key);

	return i < 0 ? NULL : t->items[i];
}

const char *toml_type_name(enum toml_type type)
{
	static const char *const names[] = {"string",	"integer", "float", "boolean",
					    "datetime", "array",   "table"};

	return (unsigned)type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

/* ---- lexing helpers ---- */

static bool at_end(const struct parser *ps)
{
	return ps->p >= ps->end;
}

static int peek(const struct parser *ps, size_t off)
{
	return ps->p + off < ps->end ? (unsigned char)ps->p[off] : -1;
}

static void skip_ws(struct parser *ps)
{
	while (!at_end(ps) && (*ps->p == ' ' || *ps->p == '\t'))
		ps->p++;
}

/* At a newline (LF or CRLF)? A lone CR is an error reported by the caller. */
static int newline_len(const struct parser *ps)
{
	if (peek(ps, 0) == '\n')
		return 1;
	if (peek(ps, 0) == '\r' && peek(ps, 1) == '\n')
		return 2;
	return 0;
}

static void take_newline(struct parser *ps, int n)
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
	if (peek(ps, 0) != '#')
		return 0;
	while (!at_end(ps) && *ps->p != '\n') {
		if (*ps->p == '\r' && peek(ps, 1) == '\n')
			break;
		if (is_bad_ctl((unsigned char)*ps->p))
			return fail_at(ps, ps->p, "control character 0x%02x in comment",
				       (unsigned char)*ps->p);
		ps->p++;
	}
	return 0;
}

/* Skip white space, newlines and comments (inside arrays). */
static int skip_ws_nl(struct parser *ps)
{
	int n, r;

	for (;;) {
		skip_ws(ps);
		r = skip_comment(ps);
		if (r < 0)
			return r;
		n = newline_len(ps);
		if (n) {
			take_newline(ps, n);
			continue;
		}
		if (peek(ps, 0) == '\r')
			return fail_at(ps, ps->p, "carriage return not followed by a newline");
		return 0;
	}
}

/* After a key/value or header: white space, optional comment, then newline or end. */
static int end_of_line(struct parser *ps)
{
	int n, r;

	skip_ws(ps);
	r = skip_comment(ps);
	if (r < 0)
		return r;
	if (at_end(ps))
		return 0;
	n = newline_len(ps);
	if (!n) {
		if (peek(ps, 0) == '\r')
			return fail_at(ps, ps->p, "carriage return not followed by a newline");
		return fail_at(ps, ps->p, "expected the end of the line, found '%c'", *ps->p);
	}
	take_newline(ps, n);
	return 0;
}

/* Check UTF-8; report the first bad byte with its position. */
static int check_utf8(struct parser *ps)
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
	return fail_pos(ps, line, (int)((const char *)s - ls) + 1, "invalid UTF-8");
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
	int c = peek(ps, 0), n = 0, i, h;
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
			return fail_at(ps, at, "invalid escape sequence");
		return fail_at(ps, at, "invalid escape sequence '\\%c'", c);
	}
	ps->p++;
	if (n == 0)
		return sb_addch(sb, out) < 0 ? oom(ps) : 0;
	for (i = 0; i < n; i++) {
		h = hexval(peek(ps, 0));
		if (h < 0)
			return fail_at(ps, at, "\\%c needs %d hex digits", c, n);
		cp = cp * 16 + (uint32_t)h;
		ps->p++;
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return fail_at(ps, at, "\\%c%0*X is not a Unicode scalar value", c, n, cp);
	return add_utf8(sb, cp) < 0 ? oom(ps) : 0;
}

/*
 * Parse a string starting at ps->p (a quote). multi-line forms only when
 * allow_ml. Appends the decoded text to sb.
 */
static int parse_string(struct parser *ps, struct strbuf *sb, bool allow_ml)
{
	const char *start = ps->p;
	char q = *ps->p;
	bool ml = peek(ps, 1) == q && peek(ps, 2) == q;
	int r, n;

	if (ml && !allow_ml)
		return fail_at(ps, start, "multi-line string not allowed here");
	ps->p += ml ? 3 : 1;
	if (ml) {
		n = newline_len(ps); /* a newline right after the opening is trimmed */
		if (n)
			take_newline(ps, n);
	}
	for (;;) {
		int c = peek(ps, 0);

		if (c < 0)
			return fail_at(ps, start, "unclosed string");
		if (c == q) {
			if (!ml) {
				ps->p++;
				return 0;
			}
			if (peek(ps, 1) == q && peek(ps, 2) == q) {
				/* up to two more quotes belong to the content */
				int extra = 0;

				while (extra < 2 && peek(ps, 3 + (size_t)extra) == q)
					extra++;
				if (sb_addn(sb, ps->p, (size_t)extra) < 0)
					return oom(ps);
				ps->p += 3 + extra;
				return 0;
			}
			if (sb_addch(sb, q) < 0)
				return oom(ps);
			ps->p++;
			continue;
		}
		n = newline_len(ps);
		if (n) {
			if (!ml)
				return fail_at(ps, start, "unclosed string");
			if (sb_addn(sb, ps->p, (size_t)n) < 0)
				return oom(ps);
			take_newline(ps, n);
			continue;
		}
		if (c == '\\' && q == '"') {
			if (ml) {
				/* line-ending backslash: trim white space and newlines */
				const char *save = ps->p;

				ps->p++;
				skip_ws(ps);
				n = newline_len(ps);
				if (n) {
					while ((n = newline_len(ps)) || peek(ps, 0) == ' ' ||
					       peek(ps, 0) == '\t') {
						if (n)
							take_newline(ps, n);
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
			return fail_at(ps, ps->p, "control character 0x%02x in string", c);
		if (sb_addch(sb, (char)c) < 0)
			return oom(ps);
		ps->p++;
	}
}

/* ---- keys ---- */

static bool is_bare(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

static void key_free(struct key *k)
{
	int i;

	for (i = 0; i < k->n; i++)
		free(k->part[i]);
	k->n = 0;
}

static int parse_key(struct parser *ps, struct key *k)
{
	struct strbuf sb = STRBUF_INIT(1 << 20);
	int r = 0;

	k->n = 0;
	for (;;) {
		const char *at = ps->p;
		int c = peek(ps, 0);

		if (k->n == TOML_MAX_KEY_PARTS) {
			r = fail_at(ps, at, "key has more than %d parts", TOML_MAX_KEY_PARTS);
			goto out;
		}
		sb_reset(&sb);
		if (c == '"' || c == '\'') {
			r = parse_string(ps, &sb, false);
			if (r < 0)
				goto out;
			if (memchr(sb.buf, '\0', sb.len)) {
				r = fail_at(ps, at, "key contains a NUL character");
				goto out;
			}
		} else if (is_bare(c)) {
			while (is_bare(peek(ps, 0)))
				ps->p++;
			if (sb_addn(&sb, at, (size_t)(ps->p - at)) < 0) {
				r = oom(ps);
				goto out;
			}
		} else if (c < 0 || c == '\n' || c == '\r') {
			r = fail_at(ps, at, "expected a key");
			goto out;
		} else {
			r = fail_at(ps, at, "invalid character '%c' in key", c);
			goto out;
		}
		k->part[k->n] = sb_take(&sb);
		if (!k->part[k->n]) {
			r = oom(ps);
			goto out;
		}
		k->line[k->n] = ps->line;
		k->col[k->n] = col_of(ps, at);
		k->n++;
		skip_ws(ps);
		if (peek(ps, 0) != '.')
			break;
		ps->p++;
		skip_ws(ps);
	}
out:
	sb_free(&sb);
	if (r < 0)
		key_free(k);
	return r;
}

/* ---- numbers and dates ---- */

static bool isdig(int c)
{
	return c >= '0' && c <= '9';
}

/* n digits at s? */
static bool digits(const char *s, const char *e, int n)
{
	int i;

	if (e - s < n)
		return false;
	for (i = 0; i < n; i++)
		if (!isdig(s[i]))
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

	if (!digits(p, e, 2) || p + 2 >= e || p[2] != ':' || !digits(p + 3, e, 2) || p + 5 >= e ||
	    p[5] != ':' || !digits(p + 6, e, 2))
		return -1;
	if (num2(p) > 23 || num2(p + 3) > 59 || num2(p + 6) > 60)
		return -1;
	p += 8;
	if (p < e && *p == '.') {
		p++;
		if (p >= e || !isdig(*p))
			return -1;
		while (p < e && isdig(*p))
			p++;
	}
	return (int)(p - s);
}

/* Is [s,e) a TOML date-time, local date-time, local date or local time? */
static bool is_datetime(const char *s, const char *e)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	const char *p = s;
	int t, y, m, d;

	if (digits(p, e, 2) && p + 2 < e && p[2] == ':')
		return scan_time(p, e) == e - p;
	if (!digits(p, e, 4) || p + 4 >= e || p[4] != '-' || !digits(p + 5, e, 2) || p + 7 >= e ||
	    p[7] != '-' || !digits(p + 8, e, 2))
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
	return e - p == 5 && digits(p, e, 2) && p[2] == ':' && digits(p + 3, e, 2) &&
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

static int parse_number(struct parser *ps, const char *s, const char *e, struct toml_value *v)
{
	struct strbuf sb = STRBUF_INIT(256);
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
			r = fail_at(ps, s, "a sign is not allowed on hex, octal or binary numbers");
			goto out;
		}
		base = p[1] == 'x' ? 16 : p[1] == 'o' ? 8 : 2;
		p += 2;
		if (!scan_digits(&p, e, base, &sb) || p != e)
			goto bad;
	} else {
		if (p >= e || !isdig(*p))
			goto bad;
		if (*p == '0' && p + 1 < e && (isdig(p[1]) || p[1] == '_')) {
			r = fail_at(ps, s, "leading zeros are not allowed in '%.*s'", (int)(e - s),
				    s);
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
			r = fail_at(ps, s, "float '%.*s' out of range", (int)(e - s), s);
			goto out;
		}
	} else {
		v->type = TOML_INT;
		if (base != 10) {
			unsigned long long u = strtoull(sb.buf, &endp, base);

			if (errno == ERANGE || u > (unsigned long long)LLONG_MAX) {
				r = fail_at(ps, s, "integer '%.*s' out of range", (int)(e - s), s);
				goto out;
			}
			v->i = (long long)u;
		} else {
			v->i = strtoll(sb.buf, &endp, 10);
			if (errno == ERANGE) {
				r = fail_at(ps, s, "integer '%.*s' out of range", (int)(e - s), s);
				goto out;
			}
		}
	}
	goto out;
bad:
	r = fail_at(ps, s, "invalid value '%.*s'", (int)(e - s), s);
	goto out;
nomem:
	r = oom(ps);
out:
	sb_free(&sb);
	return r;
}

/* ---- values ---- */

static int parse_value(struct parser *ps, struct toml_value **out);
static int put_keyval(struct parser *ps, struct toml_value *t, enum toml_origin dotted_origin);

static int parse_array(struct parser *ps, struct toml_value *a)
{
	const char *open = ps->p;
	struct toml_value *item;
	int r;

	ps->p++;
	for (;;) {
		r = skip_ws_nl(ps);
		if (r < 0)
			return r;
		if (at_end(ps))
			return fail_at(ps, open, "unclosed array");
		if (*ps->p == ']') {
			ps->p++;
			return 0;
		}
		r = parse_value(ps, &item);
		if (r < 0)
			return r;
		if (array_push(a, item) < 0) {
			toml_free(item);
			return oom(ps);
		}
		r = skip_ws_nl(ps);
		if (r < 0)
			return r;
		if (peek(ps, 0) == ',') {
			ps->p++;
			continue;
		}
		if (peek(ps, 0) == ']') {
			ps->p++;
			return 0;
		}
		if (at_end(ps))
			return fail_at(ps, open, "unclosed array");
		return fail_at(ps, ps->p, "expected ',' or ']' in array, found '%c'", *ps->p);
	}
}

static int parse_inline_table(struct parser *ps, struct toml_value *t)
{
	const char *open = ps->p;
	int r;

	ps->p++;
	skip_ws(ps);
	if (peek(ps, 0) == '}') {
		ps->p++;
		return 0;
	}
	for (;;) {
		skip_ws(ps);
		r = put_keyval(ps, t, TOML_INLINE);
		if (r < 0)
			return r;
		skip_ws(ps);
		if (peek(ps, 0) == ',') {
			ps->p++;
			skip_ws(ps);
			if (peek(ps, 0) == '}')
				return fail_at(ps, ps->p, "trailing comma in inline table");
			continue;
		}
		if (peek(ps, 0) == '}') {
			ps->p++;
			return 0;
		}
		if (at_end(ps) || newline_len(ps))
			return fail_at(ps, open, "unclosed inline table");
		return fail_at(ps, ps->p, "expected ',' or '}' in inline table, found '%c'",
			       *ps->p);
	}
}

static bool is_word(int c)
{
	return is_bare(c) || c == '+' || c == '.' || c == ':';
}

static int parse_value(struct parser *ps, struct toml_value **out)
{
	const char *s = ps->p, *e;
	int c = peek(ps, 0), r = 0;
	struct toml_value *v;

	*out = NULL;
	v = new_value(TOML_STRING, ps->line, col_of(ps, s));
	if (!v)
		return oom(ps);
	if (c == '"' || c == '\'') {
		struct strbuf sb = STRBUF_INIT((size_t)(ps->end - ps->p) + 1);

		r = parse_string(ps, &sb, true);
		v->len = sb.len;
		v->str = r < 0 ? NULL : sb_take(&sb);
		sb_free(&sb);
		if (r == 0 && !v->str)
			r = oom(ps);
	} else if (c == '[' || c == '{') {
		if (ps->depth >= TOML_MAX_DEPTH) {
			r = fail_at(ps, s, "nested deeper than %d levels", TOML_MAX_DEPTH);
		} else {
			ps->depth++;
			if (c == '[') {
				v->type = TOML_ARRAY;
				r = parse_array(ps, v);
			} else {
				v->type = TOML_TABLE;
				v->origin = TOML_INLINE;
				r = parse_inline_table(ps, v);
			}
			ps->depth--;
		}
	} else if (c < 0 || c == '\n' || c == '\r' || c == '#') {
		r = fail_at(ps, s, "expected a value");
	} else {
		e = s;
		while (e < ps->end && is_word((unsigned char)*e))
			e++;
		/* "1979-05-27 07:32:00": a date, a space, then a time */
		if (e - s == 10 && e + 3 < ps->end && *e == ' ' && isdig(e[1]) && isdig(e[2]) &&
		    e[3] == ':') {
			e++;
			while (e < ps->end && is_word((unsigned char)*e))
				e++;
		}
		if (e == s) {
			r = fail_at(ps, s, "invalid value starting with '%c'", c);
		} else if ((e - s == 4 && !strncmp(s, "true", 4)) ||
			   (e - s == 5 && !strncmp(s, "false", 5))) {
			v->type = TOML_BOOL;
			v->b = *s == 't';
		} else if (is_datetime(s, e)) {
			v->type = TOML_DATETIME;
		} else {
			r = parse_number(ps, s, e, v);
		}
		if (r == 0 && v->type != TOML_BOOL) {
			v->str = strndup(s, (size_t)(e - s));
			v->len = (size_t)(e - s);
			if (!v->str)
				r = oom(ps);
		}
		ps->p = e;
	}
	if (r < 0) {
		toml_free(v);
		return r;
	}
	*out = v;
	return 0;
}

/*
 * Create a table or array under key part i of k in table t, with origin and
 * position (line, col). Returns it (owned by t), or NULL after reporting ENOMEM.
 */
static struct toml_value *add_child(struct parser *ps, struct toml_value *t, const struct key *k,
				    int i, enum toml_type type, enum toml_origin origin, int line,
				    int col)
{
	struct toml_value *sub = new_value(type, line, col);

	if (!sub || table_put(t, k->part[i], k->line[i], k->col[i], sub) < 0) {
		toml_free(sub);
		oom(ps);
		return NULL;
	}
	sub->origin = origin;
	return sub;
}

/* Describe what a key already holds, for "defined twice" messages. */
static const char *what(const struct toml_value *v)
{
	return v->type == TOML_TABLE ? "a table" : v->type == TOML_ARRAY ? "an array" : "a value";
}

/*
 * Walk the leading parts of a dotted key inside t, creating tables with
 * origin. Returns the table that gets the last part, or NULL after an error.
 */
static struct toml_value *walk_dotted(struct parser *ps, struct toml_value *t, struct key *k,
				      enum toml_origin origin, int *r)
{
	int i, idx;

	for (i = 0; i < k->n - 1; i++) {
		struct toml_value *sub;

		idx = toml_index(t, k->part[i]);
		if (idx < 0) {
			t = add_child(ps, t, k, i, TOML_TABLE, origin, k->line[i], k->col[i]);
			if (!t) {
				*r = -ENOMEM;
				return NULL;
			}
			continue;
		}
		sub = t->items[idx];
		if (sub->type != TOML_TABLE || sub->origin != origin) {
			*r = fail_pos(ps, k->line[i], k->col[i],
				      "key '%s' was already defined as %s at line %d", k->part[i],
				      what(sub), sub->line);
			return NULL;
		}
		t = sub;
	}
	return t;
}

/* key = value into table t; dotted parts create tables of origin dotted_origin. */
static int put_keyval(struct parser *ps, struct toml_value *t, enum toml_origin dotted_origin)
{
	struct toml_value *v = NULL;
	struct key k;
	int r, idx;

	r = parse_key(ps, &k);
	if (r < 0)
		return r;
	if (peek(ps, 0) != '=') {
		if (at_end(ps) || newline_len(ps))
			r = fail_at(ps, ps->p, "expected '=' after key '%s'", k.part[k.n - 1]);
		else
			r = fail_at(ps, ps->p, "expected '=' after key '%s', found '%c'",
				    k.part[k.n - 1], *ps->p);
		goto out;
	}
	ps->p++;
	skip_ws(ps);
	t = walk_dotted(ps, t, &k, dotted_origin, &r);
	if (!t)
		goto out;
	idx = toml_index(t, k.part[k.n - 1]);
	if (idx >= 0) {
		r = fail_pos(ps, k.line[k.n - 1], k.col[k.n - 1],
			     "key '%s' defined twice (first at line %d)", k.part[k.n - 1],
			     t->key_line[idx]);
		goto out;
	}
	r = parse_value(ps, &v);
	if (r < 0)
		goto out;
	if (table_put(t, k.part[k.n - 1], k.line[k.n - 1], k.col[k.n - 1], v) < 0) {
		toml_free(v);
		r = oom(ps);
	}
out:
	key_free(&k);
	return r;
}

/* [a.b] or [[a.b]] at ps->p. */
static int parse_header(struct parser *ps)
{
	const char *open = ps->p;
	bool aot = peek(ps, 1) == '[';
	struct toml_value *t = ps->root, *sub;
	struct key k;
	int r = 0, i, idx;

	ps->p += aot ? 2 : 1;
	skip_ws(ps);
	r = parse_key(ps, &k);
	if (r < 0)
		return r;
	if (peek(ps, 0) != ']' || (aot && peek(ps, 1) != ']')) {
		r = fail_at(ps, at_end(ps) ? open : ps->p, "unclosed table header");
		goto out;
	}
	ps->p += aot ? 2 : 1;
	for (i = 0; i < k.n - 1; i++) {
		idx = toml_index(t, k.part[i]);
		if (idx < 0) {
			t = add_child(ps, t, &k, i, TOML_TABLE, TOML_IMPLICIT, k.line[i], k.col[i]);
			if (!t) {
				r = -ENOMEM;
				goto out;
			}
			continue;
		}
		sub = t->items[idx];
		if (sub->type == TOML_ARRAY && sub->origin == TOML_HEADER && sub->n > 0) {
			t = sub->items[sub->n - 1];
			continue;
		}
		if (sub->type != TOML_TABLE || sub->origin == TOML_INLINE) {
			r = fail_pos(ps, k.line[i], k.col[i],
				     "key '%s' was already defined as %s at line %d", k.part[i],
				     what(sub), sub->line);
			goto out;
		}
		t = sub;
	}
	i = k.n - 1;
	idx = toml_index(t, k.part[i]);
	if (aot) {
		struct toml_value *elem = new_value(TOML_TABLE, k.line[0], col_of(ps, open));

		if (!elem) {
			r = oom(ps);
			goto out;
		}
		elem->origin = TOML_ARRAY_ELEM;
		if (idx < 0) {
			sub = add_child(ps, t, &k, i, TOML_ARRAY, TOML_HEADER, k.line[0],
					col_of(ps, open));
			if (!sub) {
				toml_free(elem);
				r = -ENOMEM;
				goto out;
			}
		} else {
			sub = t->items[idx];
			if (sub->type != TOML_ARRAY || sub->origin != TOML_HEADER) {
				toml_free(elem);
				r = fail_pos(ps, k.line[i], k.col[i],
					     "key '%s' was already defined as %s at line %d",
					     k.part[i], what(sub), sub->line);
				goto out;
			}
		}
		if (array_push(sub, elem) < 0) {
			toml_free(elem);
			r = oom(ps);
			goto out;
		}
		ps->cur = elem;
		goto out;
	}
	if (idx < 0) {
		sub = add_child(ps, t, &k, i, TOML_TABLE, TOML_HEADER, k.line[0], col_of(ps, open));
		if (!sub) {
			r = -ENOMEM;
			goto out;
		}
	} else {
		sub = t->items[idx];
		if (sub->type != TOML_TABLE || sub->origin != TOML_IMPLICIT) {
			struct strbuf name = STRBUF_INIT(200);
			const char *how = sub->type != TOML_TABLE      ? "as a value"
					  : sub->origin == TOML_HEADER ? "by a header"
					  : sub->origin == TOML_DOTTED ? "by dotted keys"
								       : "inline";

			for (i = 0; i < k.n; i++)
				if ((i && sb_addch(&name, '.') < 0) ||
				    toml_write_key(&name, k.part[i]) < 0)
					break;
			r = fail_pos(ps, k.line[0], col_of(ps, open),
				     "table [%s] defined twice (first %s at line %d)", name.buf,
				     how, sub->line);
			sb_free(&name);
			goto out;
		}
		sub->origin = TOML_HEADER;
		sub->line = k.line[0];
		sub->col = col_of(ps, open);
	}
	ps->cur = sub;
out:
	key_free(&k);
	return r;
}

int toml_parse(const char *data, size_t len, const char *name, struct toml_value **out,
	       struct log_err *err)
{
	struct parser ps = {0};
	int r;

	*out = NULL;
	ps.p = data;
	ps.end = data + len;
	ps.line_start = data;
	ps.line = 1;
	ps.name = name ? name : "<toml>";
	ps.err = err;
	if (len >= 3 && !memcmp(data, "\xef\xbb\xbf", 3)) {
		ps.p += 3;
		ps.line_start = ps.p;
	}
	r = check_utf8(&ps);
	if (r < 0)
		return r;
	ps.root = new_value(TOML_TABLE, 1, 1);
	if (!ps.root)
		return oom(&ps);
	ps.root->origin = TOML_ROOT;
	ps.cur = ps.root;
	for (;;) {
		int n;

		skip_ws(&ps);
		if (at_end(&ps))
			break;
		n = newline_len(&ps);
		if (n) {
			take_newline(&ps, n);
			continue;
		}
		if (*ps.p == '#') {
			r = end_of_line(&ps);
		} else if (*ps.p == '[') {
			r = parse_header(&ps);
			if (r == 0)
				r = end_of_line(&ps);
		} else if (*ps.p == '\r') {
			r = fail_at(&ps, ps.p, "carriage return not followed by a newline");
		} else {
			r = put_keyval(&ps, ps.cur, TOML_DOTTED);
			if (r == 0)
				r = end_of_line(&ps);
		}
		if (r < 0) {
			toml_free(ps.root);
			return r;
		}
	}
	*out = ps.root;
	return 0;
}

/* ---- writing, go-toml v2 style ---- */

static bool needs_basic(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\'' || c < 0x20 || c == 0x7f)
			return true;
	}
	return false;
}

static int write_basic(struct strbuf *sb, const char *s, size_t len)
{
	size_t i;
	int r = sb_addch(sb, '"');

	for (i = 0; r == 0 && i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			r = sb_addf(sb, "\\%c", c);
		else if (c == '\n')
			r = sb_add(sb, "\\n");
		else if (c == '\t')
			r = sb_add(sb, "\\t");
		else if (c == '\r')
			r = sb_add(sb, "\\r");
		else if (c < 0x20 || c == 0x7f)
			r = sb_addf(sb, "\\u%04X", c);
		else
			r = sb_addch(sb, (char)c);
	}
	return r ? r : sb_addch(sb, '"');
}

static int write_string(struct strbuf *sb, const char *s, size_t len)
{
	int r;

	if (needs_basic(s, len))
		return write_basic(sb, s, len);
	r = sb_addch(sb, '\'');
	if (r == 0)
		r = sb_addn(sb, s, len);
	return r ? r : sb_addch(sb, '\'');
}

int toml_write_key(struct strbuf *sb, const char *key)
{
	const char *p;

	for (p = key; *p && is_bare((unsigned char)*p); p++)
		;
	if (*key && !*p)
		return sb_add(sb, key);
	return write_string(sb, key, strlen(key));
}

static int write_inline_table(struct strbuf *sb, const struct toml_value *t)
{
	size_t i;
	int r = sb_addch(sb, '{');

	for (i = 0; r == 0 && i < t->n; i++) {
		r = sb_add(sb, i ? ", " : " ");
		if (r == 0)
			r = toml_write_key(sb, t->keys[i]);
		if (r == 0)
			r = sb_add(sb, " = ");
		if (r == 0)
			r = toml_write_value(sb, t->items[i]);
	}
	if (r == 0 && t->n)
		r = sb_addch(sb, ' ');
	return r ? r : sb_addch(sb, '}');
}

int toml_write_value(struct strbuf *sb, const struct toml_value *v)
{
	size_t i;
	int r = 0;

	switch (v->type) {
	case TOML_STRING:
		return write_string(sb, v->str, v->len);
	case TOML_INT:
		return sb_addf(sb, "%lld", v->i);
	case TOML_FLOAT:
		if (isnan(v->f))
			return sb_add(sb, "nan");
		if (isinf(v->f))
			return sb_add(sb, v->f < 0 ? "-inf" : "inf");
		if (v->f == floor(v->f) && fabs(v->f) < 1e15)
			return sb_addf(sb, "%.1f", v->f);
		return sb_addf(sb, "%.17g", v->f);
	case TOML_BOOL:
		return sb_add(sb, v->b ? "true" : "false");
	case TOML_DATETIME:
		return sb_add(sb, v->str);
	case TOML_ARRAY:
		r = sb_addch(sb, '[');
		for (i = 0; r == 0 && i < v->n; i++) {
			if (i)
				r = sb_add(sb, ", ");
			if (r == 0)
				r = toml_write_value(sb, v->items[i]);
		}
		return r ? r : sb_addch(sb, ']');
	case TOML_TABLE:
		return write_inline_table(sb, v);
	}
	return -EINVAL;
}

/* Indices of t's items sorted by key (insertion sort: tables here are small). */
static size_t *sorted_index(const struct toml_value *t)
{
	size_t *idx = malloc((t->n ? t->n : 1) * sizeof(*idx));
	size_t i, j;

	if (!idx)
		return NULL;
	for (i = 0; i < t->n; i++) {
		size_t v = i;

		for (j = i; j > 0 && strcmp(t->keys[idx[j - 1]], t->keys[v]) > 0; j--)
			idx[j] = idx[j - 1];
		idx[j] = v;
	}
	return idx;
}

int toml_write_table(struct strbuf *sb, const char *path, const struct toml_value *t)
{
	size_t *idx = sorted_index(t);
	size_t i;
	int r;

	if (!idx)
		return -ENOMEM;
	r = sb_addf(sb, "[%s]\n", path);
	for (i = 0; r == 0 && i < t->n; i++) {
		const struct toml_value *v = t->items[idx[i]];

		if (v->type == TOML_TABLE)
			continue;
		r = toml_write_key(sb, t->keys[idx[i]]);
		if (r == 0)
			r = sb_add(sb, " = ");
		if (r == 0)
			r = toml_write_value(sb, v);
		if (r == 0)
			r = sb_addch(sb, '\n');
	}
	for (i = 0; r == 0 && i < t->n; i++) {
		const struct toml_value *v = t->items[idx[i]];
		struct strbuf sub = STRBUF_INIT(sb->max);

		if (v->type != TOML_TABLE)
			continue;
		r = sb_addf(&sub, "%s.", path);
		if (r == 0)
			r = toml_write_key(&sub, t->keys[idx[i]]);
		if (r == 0)
			r = sb_addch(sb, '\n');
		if (r == 0)
			r = toml_write_table(sb, sub.buf, v);
		sb_free(&sub);
	}
	free(idx);
	return r;
}
