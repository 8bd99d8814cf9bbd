/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fromJson's decoder: yajl's streaming parser (the lexing, the grammar) with Go's
 * encoding/json semantics for an interface{} (decode.go) in its callbacks: objects are maps
 * (a repeated key: the last wins), arrays lists, numbers float64 (strconv.ParseFloat: out of
 * range is an error), invalid UTF-8 and lone or unpaired surrogates U+FFFD. yajl's own
 * string decoding does not do the last (it writes '?' for a high surrogate alone, CESU bytes
 * for a low one, a wrong rune for an unpaired pair, and rejects invalid UTF-8 unless told not
 * to validate), so strings are decoded here from their raw text, which yajl has checked.
 * Nesting deeper than GT_JSON_DEPTH is an error (Go's scanner stops at 10000, with the same
 * words). Syntax errors: Go's scanner, ported below (j_check), runs first, as in Go.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "gotmpl/gotmpl_internal.h"
#include "strbuf/strbuf.h"

#define GT_JSON_DEPTH 2048

struct jctx {
	struct gotmpl_fctx *c;
	yajl_handle h;
	const char *s; /* the input */
	size_t n;
	int rc;		/* why a callback stopped the parse (c->msg set for -EINVAL) */
	size_t end;	/* where the last complete top-level value ended */
	int depth, cap; /* open containers, room in lv */
	struct {
		struct gotmpl_val *open; /* an open container */
		struct gotmpl_val *key;	 /* a map's pending key (a string value) */
		int map;		 /* open is a map */
	} * lv;
	struct gotmpl_val *result; /* the top-level value */
};

static int hex4(const char *p)
{
	char b[5] = {p[0], p[1], p[2], p[3], 0};

	return (int)strtol(b, NULL, 16);
}

/*
 * The string token that ends at the parser's position (just past its closing quote) as Go
 * decodes it: escapes, surrogate pairs, U+FFFD for a lone surrogate and each bad byte.
 */
static struct gotmpl_val *decode_str(struct jctx *j)
{
	size_t e = yajl_get_bytes_consumed(j->h) - 1, b = e, k;
	struct strbuf sb;
	uint32_t u, lo;
	const char *p, *end;
	int r = 0;

	/* the opening quote: the first one back not escaped (an even run of backslashes) */
	for (;;) {
		b--;
		if (j->s[b] != '"')
			continue;
		for (k = b; k > 0 && j->s[k - 1] == '\\'; k--)
			;
		if ((b - k) % 2 == 0)
			break;
	}
	p = j->s + b + 1;
	end = j->s + e;
	sb_init(&sb, GT_STR_MAX);
	while (!r && p < end) {
		if ((unsigned char)*p >= 0x80) {
			p += gotmpl_utf8(p, (size_t)(end - p), &u);
			r = gotmpl_put_utf8(&sb, u);
			continue;
		}
		if (*p != '\\') {
			r = sb_addch(&sb, *p++);
			continue;
		}
		p++;
		if (*p != 'u') {
			r = sb_addch(&sb, *p == 'b'   ? '\b'
					  : *p == 'f' ? '\f'
					  : *p == 'n' ? '\n'
					  : *p == 'r' ? '\r'
					  : *p == 't' ? '\t'
						      : *p); /* '"', '\\', '/' */
			p++;
			continue;
		}
		u = (uint32_t)hex4(p + 1);
		p += 5;
		if (u >= 0xd800 && u < 0xdc00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
		    (lo = (uint32_t)hex4(p + 2)) >= 0xdc00 && lo < 0xe000) {
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
			p += 6;
		} else if (u >= 0xd800 && u < 0xe000) {
			u = 0xfffd;
		}
		r = gotmpl_put_utf8(&sb, u);
	}
	if (r) {
		sb_free(&sb);
		j->rc = r;
		return NULL;
	}
	return gotmpl_take(j->c, &sb);
}

/* Place v in the open container (or as the result). 1 to go on, 0 to stop yajl (j->rc). */
static int put(struct jctx *j, struct gotmpl_val *v)
{
	struct gotmpl_val *m;
	int r;

	if (!v)
		return j->rc = j->rc ? j->rc : -ENOMEM, 0;
	r = gotmpl_work(j->c->a, 1);
	if (!r && j->depth == 0) {
		j->result = v;
		j->end = yajl_get_bytes_consumed(j->h);
	} else if (!r && j->lv[j->depth - 1].key) {
		m = j->lv[j->depth - 1].key;
		r = gotmpl_map_put(j->c->a, j->lv[j->depth - 1].open, m->u.s.p, m->u.s.n, v);
		j->lv[j->depth - 1].key = NULL;
	} else if (!r) {
		r = gotmpl_alist_push(j->c->a, j->lv[j->depth - 1].open, v);
	}
	j->rc = r;
	return r == 0;
}

static int cb_null(void *ctx)
{
	return put(ctx, GT_NIL);
}

static int cb_bool(void *ctx, int b)
{
	struct jctx *j = ctx;

	return put(j, gotmpl_bool(j->c->a, b));
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	struct jctx *j = ctx;
	char buf[64], *cp = n < sizeof(buf) ? buf : gotmpl_alloc(j->c->a, n + 1);
	double f;

	if (!cp)
		return put(j, NULL);
	memcpy(cp, s, n);
	cp[n] = '\0';
	errno = 0;
	f = strtod(cp, NULL);
	if (errno == ERANGE && (f > 1 || f < -1)) {
		j->rc = gotmpl_fail(
		    j->c, "json: cannot unmarshal number %s into Go value of type float64", cp);
		return 0;
	}
	return put(j, gotmpl_float(j->c->a, f));
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	(void)s;
	(void)n;
	return put(ctx, decode_str(ctx));
}

static int cb_key(void *ctx, const unsigned char *s, size_t n)
{
	struct jctx *j = ctx;

	(void)s;
	(void)n;
	j->lv[j->depth - 1].key = decode_str(j);
	return j->lv[j->depth - 1].key != NULL;
}

static int open_one(struct jctx *j, struct gotmpl_val *v, int map)
{
	void *p;

	if (j->depth >= GT_JSON_DEPTH) {
		j->rc = gotmpl_fail(j->c, "exceeded max depth");
		return 0;
	}
	if (j->depth == j->cap) {
		p = realloc(j->lv, (size_t)(j->cap ? 2 * j->cap : 16) * sizeof(*j->lv));
		if (!p)
			v = NULL;
		else
			j->lv = p, j->cap = j->cap ? 2 * j->cap : 16;
	}
	if (!v)
		return put(j, NULL);
	j->lv[j->depth].key = NULL;
	j->lv[j->depth].map = map;
	j->lv[j->depth++].open = v;
	return 1;
}

static int cb_start_map(void *ctx)
{
	struct jctx *j = ctx;

	return open_one(j, gotmpl_map(j->c->a, GT_PLAIN), 1);
}

static int cb_start_array(void *ctx)
{
	struct jctx *j = ctx;

	return open_one(j, gotmpl_list(j->c->a, 0, GT_PLAIN), 0);
}

static int cb_end(void *ctx)
{
	struct jctx *j = ctx;

	j->depth--;
	return put(j, j->lv[j->depth].open);
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_bool,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_key,
    .yajl_end_map = cb_end,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end,
};

/*
 * Go's json.Unmarshal runs its scanner over the whole input before it decodes (checkValid in
 * encoding/json decode.go), so its syntax errors come first and name the byte where its state
 * machine (scanner.go) stopped: "invalid character 'x' <context>", or at the end "unexpected
 * end of JSON input" (after feeding the scanner one space: "nul" stops "in literal null").
 * The same machine here, with a depth bound of GT_JSON_DEPTH instead of Go's 10000.
 */
enum jstate {
	J_VALUE_OR_EMPTY, /* after '[' */
	J_VALUE,
	J_KEY_OR_EMPTY, /* after '{' */
	J_KEY,
	J_END_VALUE,
	J_END_TOP,
	J_STR,
	J_ESC,
	J_ESC_U, /* u: hex digits seen */
	J_NEG,
	J_INT, /* 1-9 and digits */
	J_ZERO,
	J_DOT,
	J_FRAC,
	J_EXP,
	J_EXP_SIGN,
	J_EXP_DIGITS,
	J_LIT, /* lit: the literal, u: bytes matched */
};

struct jscan {
	enum jstate st;
	const char *lit;
	int u, depth, end_top;
	unsigned char ps[GT_JSON_DEPTH + 1]; /* per open container: 'k' key, 'v' value, 'a' array */
	char err[96];
};

static int j_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int j_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* Go's quoteChar: the byte as a rune (Latin-1), strconv.Quote'd, in single quotes. */
static void j_quote(char *out, size_t n, unsigned char c)
{
	static const char esc[] = "\a\b\f\n\r\t\v", name[] = "abfnrtv";
	const char *e = c ? strchr(esc, c) : NULL;

	if (c == '\'')
		snprintf(out, n, "'\\''");
	else if (c == '\\')
		snprintf(out, n, "'\\\\'");
	else if (c >= 0x20 && c < 0x7f)
		snprintf(out, n, "'%c'", c);
	else if (e)
		snprintf(out, n, "'\\%c'", name[e - esc]);
	else if (c < 0x80)
		snprintf(out, n, "'\\x%02x'", c);
	else if (c < 0xa1 || c == 0xad) /* C1 controls, no-break space, soft hyphen */
		snprintf(out, n, "'\\u00%02x'", c);
	else
		snprintf(out, n, "'%c%c'", 0xc0 | (c >> 6), 0x80 | (c & 0x3f));
}

static int j_error(struct jscan *s, unsigned char c, const char *context)
{
	char q[16];

	j_quote(q, sizeof(q), c);
	snprintf(s->err, sizeof(s->err), "invalid character %s %s", q, context);
	return -1;
}

static int j_push(struct jscan *s, unsigned char c, unsigned char kind, enum jstate next)
{
	if (s->depth >= GT_JSON_DEPTH)
		return j_error(s, c, "exceeded max depth");
	s->ps[s->depth++] = kind;
	s->st = next;
	return 0;
}

static void j_pop(struct jscan *s)
{
	if (--s->depth == 0) {
		s->st = J_END_TOP;
		s->end_top = 1;
	} else {
		s->st = J_END_VALUE;
	}
}

/* One byte through the machine: 0, or -1 with s->err set. */
static int j_step(struct jscan *s, unsigned char c)
{
	for (;;) {
		switch (s->st) {
		case J_VALUE_OR_EMPTY:
			if (!j_space(c) && c == ']') {
				s->st = J_END_VALUE;
				continue;
			}
			/* fall through */
		case J_VALUE:
			if (j_space(c))
				return 0;
			if (c == '{')
				return j_push(s, c, 'k', J_KEY_OR_EMPTY);
			if (c == '[')
				return j_push(s, c, 'a', J_VALUE_OR_EMPTY);
			s->st = c == '"'     ? J_STR
				: c == '-'   ? J_NEG
				: c == '0'   ? J_ZERO
				: j_digit(c) ? J_INT
					     : J_LIT;
			if (s->st != J_LIT)
				return 0;
			s->lit = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" : NULL;
			s->u = 1;
			return s->lit ? 0 : j_error(s, c, "looking for beginning of value");
		case J_KEY_OR_EMPTY:
			if (!j_space(c) && c == '}') {
				s->ps[s->depth - 1] = 'v';
				s->st = J_END_VALUE;
				continue;
			}
			/* fall through */
		case J_KEY:
			if (j_space(c))
				return 0;
			if (c == '"') {
				s->st = J_STR;
				return 0;
			}
			return j_error(s, c, "looking for beginning of object key string");
		case J_END_VALUE:
			if (s->depth == 0) {
				s->st = J_END_TOP;
				s->end_top = 1;
				continue;
			}
			if (j_space(c))
				return 0;
			if (s->ps[s->depth - 1] == 'k') {
				if (c != ':')
					return j_error(s, c, "after object key");
				s->ps[s->depth - 1] = 'v';
				s->st = J_VALUE;
			} else if (s->ps[s->depth - 1] == 'v') {
				if (c != ',' && c != '}')
					return j_error(s, c, "after object key:value pair");
				if (c == '}')
					j_pop(s);
				else
					s->ps[s->depth - 1] = 'k', s->st = J_KEY;
			} else {
				if (c != ',' && c != ']')
					return j_error(s, c, "after array element");
				if (c == ']')
					j_pop(s);
				else
					s->st = J_VALUE;
			}
			return 0;
		case J_END_TOP:
			return j_space(c) ? 0 : j_error(s, c, "after top-level value");
		case J_STR:
			if (c == '"')
				s->st = J_END_VALUE;
			else if (c == '\\')
				s->st = J_ESC;
			else if (c < 0x20)
				return j_error(s, c, "in string literal");
			return 0;
		case J_ESC:
			if (c == 'u') {
				s->st = J_ESC_U;
				s->u = 0;
				return 0;
			}
			if (!c || !strchr("bfnrt\\/\"", c))
				return j_error(s, c, "in string escape code");
			s->st = J_STR;
			return 0;
		case J_ESC_U:
			if (!c || !strchr("0123456789abcdefABCDEF", c))
				return j_error(s, c, "in \\u hexadecimal character escape");
			if (++s->u == 4)
				s->st = J_STR;
			return 0;
		case J_NEG:
			if (!j_digit(c))
				return j_error(s, c, "in numeric literal");
			s->st = c == '0' ? J_ZERO : J_INT;
			return 0;
		case J_INT:
			if (j_digit(c))
				return 0;
			s->st = J_ZERO;
			continue;
		case J_ZERO:
			s->st = c == '.' ? J_DOT : c == 'e' || c == 'E' ? J_EXP : J_END_VALUE;
			if (s->st == J_END_VALUE)
				continue;
			return 0;
		case J_DOT: /* a digit must follow the '.', and the exponent's sign */
		case J_EXP_SIGN:
			if (!j_digit(c))
				return j_error(s, c,
					       s->st == J_DOT
						   ? "after decimal point in numeric literal"
						   : "in exponent of numeric literal");
			s->st = s->st == J_DOT ? J_FRAC : J_EXP_DIGITS;
			return 0;
		case J_FRAC:
		case J_EXP_DIGITS:
			if (j_digit(c))
				return 0;
			if (s->st == J_FRAC && (c == 'e' || c == 'E')) {
				s->st = J_EXP;
				return 0;
			}
			s->st = J_END_VALUE;
			continue;
		case J_EXP:
			s->st = J_EXP_SIGN;
			if (c == '+' || c == '-')
				return 0;
			continue;
		case J_LIT:
			if (c != (unsigned char)s->lit[s->u]) {
				char what[40];

				snprintf(what, sizeof(what), "in literal %s (expecting '%c')",
					 s->lit, s->lit[s->u]);
				return j_error(s, c, what);
			}
			if (!s->lit[++s->u])
				s->st = J_END_VALUE;
			return 0;
		}
		return 0;
	}
}

/* Go's checkValid: 0, or -1 and the error in s->err. */
static int j_check(struct jscan *s, const char *p, size_t n)
{
	s->st = J_VALUE;
	s->depth = s->end_top = 0;
	for (size_t i = 0; i < n; i++)
		if (j_step(s, (unsigned char)p[i]))
			return -1;
	if (s->end_top)
		return 0;
	if (j_step(s, ' '))
		return -1;
	if (s->end_top)
		return 0;
	snprintf(s->err, sizeof(s->err), "unexpected end of JSON input");
	return -1;
}

/* yajl's error, in its words (after j_check passed, only if yajl's grammar were not Go's) */
static int yajl_get_error_msg(struct jctx *j)
{
	char *e = (char *)yajl_get_error(j->h, 0, NULL, 0), *nl;
	int r;

	if (!e)
		return -ENOMEM;
	nl = strchr(e, '\n');
	if (nl)
		*nl = '\0';
	r = gotmpl_fail(j->c, "json: %s", strncmp(e, "lexical error: ", 15) ? e : e + 15);
	yajl_free_error(j->h, (unsigned char *)e);
	return r;
}

int gotmpl_json_decode(struct gotmpl_fctx *c, const char *s, size_t n, struct gotmpl_val **res)
{
	struct jctx j = {.c = c, .s = s, .n = n};
	struct jscan *js;
	yajl_status st;
	int r;

	js = malloc(sizeof(*js));
	if (!js)
		return -ENOMEM;
	r = j_check(js, s, n) ? gotmpl_fail(c, "%s", js->err) : 0;
	free(js);
	if (r)
		return r;
	j.h = yajl_alloc(&callbacks, NULL, &j);
	if (!j.h)
		return -ENOMEM;
	/* UTF-8 is checked (and replaced) by decode_str, as Go does */
	yajl_config(j.h, yajl_dont_validate_strings, 1);
	st = yajl_parse(j.h, (const unsigned char *)s, n);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(j.h);
	if (st == yajl_status_ok)
		r = 0;
	else if (st == yajl_status_client_canceled && j.rc)
		r = j.rc;
	else /* not after j_check (yajl's grammar is Go's): its own words */
		r = yajl_get_error_msg(&j);
	yajl_free(j.h);
	free(j.lv);
	*res = r ? NULL : j.result;
	return r;
}
