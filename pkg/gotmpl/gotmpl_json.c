/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fromJson's decoder: RFC 8259 text into the value Go's json.Unmarshal gives an interface{}
 * (encoding/json decode.go): objects are maps (a repeated key: the last wins), arrays lists,
 * numbers float64 (strconv.ParseFloat: out of range is an error), invalid UTF-8 and lone
 * surrogates U+FFFD. Written here rather than over a JSON library so nodeprobe loads none.
 * Nesting deeper than GT_JSON_DEPTH is an error (Go's scanner stops at 10000; jansson, which
 * this replaces, at 2048).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"
#include "strbuf/strbuf.h"

#define GT_JSON_DEPTH 2048

struct jdec {
	struct gotmpl_fctx *c;
	const char *s, *end;
};

static void skip_ws(struct jdec *d)
{
	while (d->s < d->end && (*d->s == ' ' || *d->s == '\t' || *d->s == '\n' || *d->s == '\r'))
		d->s++;
}

/* Go's "invalid character 'x' <what>", or "unexpected end of JSON input" at the end. */
static int bad(struct jdec *d, const char *what)
{
	unsigned char ch;

	if (d->s >= d->end)
		return gotmpl_fail(d->c, "unexpected end of JSON input");
	ch = (unsigned char)*d->s;
	if (ch >= 0x20 && ch < 0x7f && ch != '\'')
		return gotmpl_fail(d->c, "invalid character '%c' %s", ch, what);
	return gotmpl_fail(d->c, "invalid character '\\x%02x' %s", ch, what);
}

static int hex4(const char *p, uint32_t *out)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char ch = p[i];

		v <<= 4;
		if (ch >= '0' && ch <= '9')
			v |= (uint32_t)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			v |= (uint32_t)(ch - 'a' + 10);
		else if (ch >= 'A' && ch <= 'F')
			v |= (uint32_t)(ch - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* A string at d->s (its opening quote) into sb. 0, -EINVAL (c->msg set) or a strbuf error. */
static int str(struct jdec *d, struct strbuf *sb)
{
	static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
	int r = 0;

	d->s++;
	while (!r) {
		const char *p;
		uint32_t u, lo;

		if (d->s >= d->end)
			return bad(d, "");
		if (*d->s == '"') {
			d->s++;
			return 0;
		}
		if ((unsigned char)*d->s < 0x20)
			return bad(d, "in string literal");
		if ((unsigned char)*d->s >= 0x80) {
			int n = gotmpl_utf8(d->s, (size_t)(d->end - d->s), &u);

			r = gotmpl_put_utf8(sb, u);
			d->s += n;
			continue;
		}
		if (*d->s != '\\') {
			r = sb_addch(sb, *d->s++);
			continue;
		}
		if (++d->s >= d->end)
			return bad(d, "");
		if (*d->s != 'u') {
			p = strchr(esc_in, *d->s);
			if (!p || !*d->s)
				return bad(d, "in string escape code");
			r = sb_addch(sb, esc_out[p - esc_in]);
			d->s++;
			continue;
		}
		if (d->end - d->s < 5 || hex4(d->s + 1, &u) < 0) {
			for (d->s++;
			     d->s < d->end && strchr("0123456789abcdefABCDEF", *d->s) && *d->s;)
				d->s++;
			return bad(d, "in \\u hexadecimal character escape");
		}
		d->s += 5;
		if (u >= 0xd800 && u < 0xdc00) {
			/* a pair makes one rune; a high surrogate alone is U+FFFD (Go's unquote) */
			if (d->end - d->s >= 6 && d->s[0] == '\\' && d->s[1] == 'u' &&
			    hex4(d->s + 2, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				d->s += 6;
			} else {
				u = 0xfffd;
			}
		} else if (u >= 0xdc00 && u < 0xe000) {
			u = 0xfffd;
		}
		r = gotmpl_put_utf8(sb, u);
	}
	return r;
}

/* A number as Go's scanner accepts it, as float64. */
static int num(struct jdec *d, struct gotmpl_val **res)
{
	const char *p = d->s, *e = d->end;
	char buf[64], *cp;
	size_t n;
	double f;

	if (p < e && *p == '-')
		p++;
	if (p < e && *p == '0')
		p++;
	else if (p < e && *p >= '1' && *p <= '9')
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	else
		return d->s = p, bad(d, "in numeric literal");
	if (p < e && *p == '.') {
		if (++p >= e || *p < '0' || *p > '9')
			return d->s = p, bad(d, "after decimal point in numeric literal");
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		if (++p < e && (*p == '+' || *p == '-'))
			p++;
		if (p >= e || *p < '0' || *p > '9')
			return d->s = p, bad(d, "in exponent of numeric literal");
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	n = (size_t)(p - d->s);
	cp = n < sizeof(buf) ? buf : gotmpl_alloc(d->c->a, n + 1);
	if (!cp)
		return -ENOMEM;
	memcpy(cp, d->s, n);
	cp[n] = '\0';
	errno = 0;
	f = strtod(cp, NULL);
	if (errno == ERANGE && (f > 1 || f < -1))
		return gotmpl_fail(
		    d->c, "json: cannot unmarshal number %s into Go value of type float64", cp);
	d->s = p;
	*res = gotmpl_float(d->c->a, f);
	return *res ? 0 : -ENOMEM;
}

static int value(struct jdec *d, int depth, struct gotmpl_val **res);

/*
 * After an element of the object or array v: 1 on a ',' (another follows), 0 on its closing
 * byte (*res = v), else Go's error naming what came after.
 */
static int next(struct jdec *d, char close, struct gotmpl_val *v, struct gotmpl_val **res,
		const char *what)
{
	skip_ws(d);
	if (d->s < d->end && (*d->s == ',' || *d->s == close)) {
		*res = v;
		return *d->s++ == ',';
	}
	return bad(d, what);
}

static int object(struct jdec *d, int depth, struct gotmpl_val **res)
{
	struct gotmpl_val *m = gotmpl_map(d->c->a, GT_PLAIN), *v;
	struct strbuf key;
	int r;

	if (!m)
		return -ENOMEM;
	d->s++;
	skip_ws(d);
	if (d->s < d->end && *d->s == '}') {
		d->s++;
		*res = m;
		return 0;
	}
	for (;;) {
		skip_ws(d);
		if (d->s >= d->end || *d->s != '"')
			return bad(d, "looking for beginning of object key string");
		sb_init(&key, GT_STR_MAX);
		r = str(d, &key);
		skip_ws(d);
		if (!r && (d->s >= d->end || *d->s != ':'))
			r = bad(d, "after object key");
		if (!r) {
			d->s++;
			r = value(d, depth + 1, &v);
		}
		if (!r)
			r = gotmpl_map_put(d->c->a, m, key.buf ? key.buf : "", key.len, v);
		sb_free(&key);
		if (!r)
			r = next(d, '}', m, res, "after object key:value pair");
		if (r <= 0)
			return r;
	}
}

static int array(struct jdec *d, int depth, struct gotmpl_val **res)
{
	struct gotmpl_val *l = gotmpl_list(d->c->a, 0, GT_PLAIN), *v;
	int r;

	if (!l)
		return -ENOMEM;
	d->s++;
	skip_ws(d);
	if (d->s < d->end && *d->s == ']') {
		d->s++;
		*res = l;
		return 0;
	}
	for (;;) {
		r = value(d, depth + 1, &v);
		if (!r)
			r = gotmpl_alist_push(d->c->a, l, v);
		if (!r)
			r = next(d, ']', l, res, "after array element");
		if (r <= 0)
			return r;
	}
}

static int literal(struct jdec *d, const char *word, struct gotmpl_val *v, struct gotmpl_val **res)
{
	size_t i, n = strlen(word);
	char what[48];

	for (i = 1; i < n; i++)
		if (d->s + i >= d->end || d->s[i] != word[i]) {
			snprintf(what, sizeof(what), "in literal %s (expecting '%c')", word,
				 word[i]);
			d->s += i;
			return bad(d, what);
		}
	d->s += n;
	*res = v;
	return v ? 0 : -ENOMEM;
}

static int value(struct jdec *d, int depth, struct gotmpl_val **res)
{
	struct strbuf sb;
	int r;

	if (depth > GT_JSON_DEPTH)
		return gotmpl_fail(d->c, "exceeded max depth");
	r = gotmpl_work(d->c->a, 1);
	if (r)
		return r;
	skip_ws(d);
	if (d->s >= d->end)
		return bad(d, "");
	switch (*d->s) {
	case '{':
		return object(d, depth, res);
	case '[':
		return array(d, depth, res);
	case '"':
		sb_init(&sb, GT_STR_MAX);
		r = str(d, &sb);
		if (r) {
			sb_free(&sb);
			return r;
		}
		*res = gotmpl_take(d->c, &sb);
		return *res ? 0 : -ENOMEM;
	case 't':
		return literal(d, "true", gotmpl_bool(d->c->a, 1), res);
	case 'f':
		return literal(d, "false", gotmpl_bool(d->c->a, 0), res);
	case 'n':
		return literal(d, "null", GT_NIL, res);
	default:
		if (*d->s == '-' || (*d->s >= '0' && *d->s <= '9'))
			return num(d, res);
		return bad(d, "looking for beginning of value");
	}
}

int gotmpl_json_decode(struct gotmpl_fctx *c, const char *s, size_t n, struct gotmpl_val **res)
{
	struct jdec d = {c, s, s + n};
	int r = value(&d, 0, res);

	if (r)
		return r;
	skip_ws(&d);
	if (d.s < d.end)
		return bad(&d, "after top-level value");
	return 0;
}
