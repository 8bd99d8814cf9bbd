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
 * words). Errors: Go's words for what yajl reports as a parse error and for the end of the
 * input; yajl's words ("json: " and its lexical reason) for a bad token, since yajl does not
 * say which byte it stopped at.
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

/* yajl's parse errors and Go's words for the same place (encoding/json scanner.go). */
static const struct {
	const char *yajl, *go;
} parse_errors[] = {
    {"unallowed token at this point", "looking for beginning of value"},
    {"invalid object key", "looking for beginning of object key string"},
    {"must be separated by a colon", "after object key"},
    {"inside map, I expect", "after object key:value pair"},
    {"after array element", "after array element"},
};

/* Go's "invalid character 'x' <what>". */
static int bad_char(struct jctx *j, size_t at, const char *what)
{
	unsigned char ch = at < j->n ? (unsigned char)j->s[at] : 0;

	if (ch >= 0x20 && ch < 0x7f && ch != '\'')
		return gotmpl_fail(j->c, "invalid character '%c' %s", ch, what);
	return gotmpl_fail(j->c, "invalid character '\\x%02x' %s", ch, what);
}

/*
 * Go's words for a byte at s[at] that starts no token, from the byte before it and what is
 * open (Go's scanner states; yajl's lexer rejects the byte before its parser looks).
 */
static const char *context_at(struct jctx *j, size_t at)
{
	int map = j->depth > 0 && j->lv[j->depth - 1].map;

	while (at > 0 && strchr(" \t\r\n", j->s[at - 1]))
		at--;
	if (at == 0 || j->s[at - 1] == '[' || j->s[at - 1] == ':' || (j->s[at - 1] == ',' && !map))
		return "looking for beginning of value";
	if (j->s[at - 1] == '{' || j->s[at - 1] == ',')
		return "looking for beginning of object key string";
	if (j->depth == 0)
		return "after top-level value";
	if (map)
		return j->lv[j->depth - 1].key ? "after object key" : "after object key:value pair";
	return "after array element";
}

/*
 * Go's "invalid character 'x' in literal true (expecting 'r')" for yajl's bad literal near
 * s[at] (yajl's offset is at or before the token's start): the literal's first byte found,
 * its bytes compared with the word's; input that ends while they match is Go's scanner eof,
 * "unexpected end of JSON input" ("nul", "[tr").
 */
static int bad_literal(struct jctx *j, size_t at)
{
	size_t b = at < j->n ? at : j->n, i;
	const char *word;
	char what[48];

	while (b > 0 && j->s[b - 1] >= 'a' && j->s[b - 1] <= 'z')
		b--;
	while (b < j->n && !strchr("tfn", j->s[b]))
		b++;
	if (b >= j->n)
		return gotmpl_fail(j->c, "json: invalid literal");
	word = j->s[b] == 't' ? "true" : j->s[b] == 'f' ? "false" : "null";
	for (i = 1; word[i] && b + i < j->n && j->s[b + i] == word[i]; i++)
		;
	if (!word[i])
		return gotmpl_fail(j->c, "json: invalid literal");
	if (b + i >= j->n)
		return gotmpl_fail(j->c, "unexpected end of JSON input");
	snprintf(what, sizeof(what), "in literal %s (expecting '%c')", word, word[i]);
	return bad_char(j, b + i, what);
}

/* The error of a parse yajl stopped (j->rc when a callback did). */
static int yajl_error(struct jctx *j)
{
	char *e = (char *)yajl_get_error(j->h, 0, NULL, 0), *nl;
	size_t at = yajl_get_bytes_consumed(j->h), i;
	int r;

	if (!e)
		return -ENOMEM;
	nl = strchr(e, '\n');
	if (nl)
		*nl = '\0';
	if (strstr(e, "premature EOF")) {
		r = gotmpl_fail(j->c, "unexpected end of JSON input");
	} else if (strstr(e, "trailing garbage")) {
		for (at = j->end; at < j->n && strchr(" \t\r\n", j->s[at]); at++)
			;
		r = bad_char(j, at, "after top-level value");
	} else {
		r = gotmpl_fail(j->c, "json: %s", strncmp(e, "lexical error: ", 15) ? e : e + 15);
		if (strstr(e, "invalid char in json text") && at > 0 && at <= j->n)
			r = bad_char(j, at - 1, context_at(j, at - 1));
		if (strstr(e, "invalid string in json text"))
			r = bad_literal(j, at);
		for (i = 0; i < sizeof(parse_errors) / sizeof(parse_errors[0]); i++)
			if (strstr(e, parse_errors[i].yajl) && at > 0)
				r = bad_char(j, at - 1, parse_errors[i].go);
	}
	yajl_free_error(j->h, (unsigned char *)e);
	return r;
}

int gotmpl_json_decode(struct gotmpl_fctx *c, const char *s, size_t n, struct gotmpl_val **res)
{
	struct jctx j = {.c = c, .s = s, .n = n};
	yajl_status st;
	int r;

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
	else
		r = yajl_error(&j);
	yajl_free(j.h);
	free(j.lv);
	*res = r ? NULL : j.result;
	return r;
}
