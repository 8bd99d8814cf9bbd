/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_lex: a template source as Go's text/template/parse lexer tokenises it (lex.go). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

struct lexer {
	const char *src;
	size_t len, pos;
	int line;
	int paren; /* open parentheses in the action */
	struct gotmpl_lexed *out;
};

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int is_alnum(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (unsigned char)c >= 0x80;
}

static int count_lines(const char *s, size_t n)
{
	int l = 0;

	for (size_t i = 0; i < n; i++)
		l += s[i] == '\n';
	return l;
}

static int emit(struct lexer *l, enum gotmpl_tok type, size_t start, size_t end)
{
	struct gotmpl_lexed *o = l->out;
	struct gotmpl_token *t;

	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 64;
		struct gotmpl_token *n = realloc(o->t, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		o->t = n;
		o->cap = cap;
	}
	t = &o->t[o->n++];
	t->type = type;
	t->pos = start;
	t->line = l->line;
	t->s = l->src + start;
	t->n = end - start;
	l->line += count_lines(l->src + start, end - start);
	return 0;
}

static int lex_error(struct lexer *l, const char *msg)
{
	snprintf(l->out->err, sizeof(l->out->err), "%s", msg);
	l->out->errline = l->line;
	return -EINVAL;
}

/* " -}}" or "}}" at p: the length of the delimiter and *trim, or 0. */
static size_t right_delim(const struct lexer *l, size_t p, int *trim)
{
	const char *s = l->src + p;
	size_t left = l->len - p;

	*trim = 0;
	if (left >= 4 && is_space(s[0]) && s[1] == '-' && s[2] == '}' && s[3] == '}') {
		*trim = 1;
		return 4;
	}
	if (left >= 2 && s[0] == '}' && s[1] == '}')
		return 2;
	return 0;
}

static const struct {
	const char *word;
	enum gotmpl_tok type;
} keywords[] = {
    {"block", T_BLOCK},
    {"break", T_BREAK},
    {"continue", T_CONTINUE},
    {"define", T_DEFINE},
    {"else", T_ELSE},
    {"end", T_END},
    {"if", T_IF},
    {"range", T_RANGE},
    {"nil", T_NIL},
    {"template", T_TEMPLATE},
    {"with", T_WITH},
    {"true", T_BOOL},
    {"false", T_BOOL},
};

static enum gotmpl_tok word_type(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strlen(keywords[i].word) == n && memcmp(keywords[i].word, s, n) == 0)
			return keywords[i].type;
	return T_IDENT;
}

/* After a word, number or variable: what may follow without a space. */
static int at_terminator(const struct lexer *l)
{
	int trim;
	char c;

	if (l->pos >= l->len)
		return 1;
	c = l->src[l->pos];
	/* Go's atTerminator: no '=' ("$x=1" is "bad character U+003D '='") */
	if (is_space(c) || c == '.' || c == ',' || c == '|' || c == ':' || c == ')' || c == '(')
		return 1;
	return right_delim(l, l->pos, &trim) > 0;
}

/* A word, number or variable ran into a character that may not follow it. */
static int bad_char(struct lexer *l)
{
	char m[64];

	snprintf(m, sizeof(m), "bad character U+%04X '%c'", (unsigned char)l->src[l->pos],
		 l->src[l->pos]);
	return lex_error(l, m);
}

static void skip_digits(struct lexer *l, const char *set)
{
	while (l->pos < l->len && (strchr(set, l->src[l->pos]) && l->src[l->pos]))
		l->pos++;
}

static int accept(struct lexer *l, const char *set)
{
	if (l->pos < l->len && l->src[l->pos] && strchr(set, l->src[l->pos])) {
		l->pos++;
		return 1;
	}
	return 0;
}

/* Go's scanNumber: sign, base prefix, digits, fraction, exponent, an imaginary 'i'; 0 when an
   alphanumeric character follows (consumed, one rune, for the error's text). */
static int scan_number(struct lexer *l)
{
	const char *digits = "0123456789_";
	uint32_t r;

	accept(l, "+-");
	if (accept(l, "0")) {
		if (accept(l, "xX"))
			digits = "0123456789abcdefABCDEF_";
		else if (accept(l, "oO"))
			digits = "01234567_";
		else if (accept(l, "bB"))
			digits = "01_";
	}
	skip_digits(l, digits);
	if (accept(l, "."))
		skip_digits(l, digits);
	if (strlen(digits) == 10 + 1 && accept(l, "eE")) {
		accept(l, "+-");
		skip_digits(l, "0123456789_");
	}
	if (strlen(digits) == 16 + 6 + 1 && accept(l, "pP")) {
		accept(l, "+-");
		skip_digits(l, "0123456789_");
	}
	accept(l, "i");
	if (l->pos < l->len && is_alnum(l->src[l->pos])) {
		int n = gotmpl_utf8(l->src + l->pos, l->len - l->pos, &r);

		l->pos += n > 0 ? (size_t)n : 1;
		return 0;
	}
	return 1;
}

/* Go's lexNumber: a number, or a complex constant "1+2i" (no spaces, ending in 'i'). */
static int lex_number(struct lexer *l)
{
	size_t start = l->pos;
	int ok = scan_number(l);

	if (ok && l->pos < l->len && (l->src[l->pos] == '+' || l->src[l->pos] == '-'))
		ok = scan_number(l) && l->src[l->pos - 1] == 'i';
	if (!ok) {
		char m[sizeof(l->out->err)];

		snprintf(m, sizeof(m), "bad number syntax: \"%.*s\"",
			 (int)(l->pos - start > 150 ? 150 : l->pos - start), l->src + start);
		return lex_error(l, m);
	}
	return emit(l, T_NUMBER, start, l->pos);
}

/* A quoted string, raw string or character constant starting at l->pos. */
static int lex_quote(struct lexer *l, char q)
{
	size_t start = l->pos++;

	while (l->pos < l->len) {
		char c = l->src[l->pos++];

		if (c == q)
			return emit(l,
				    q == '"'   ? T_STRING
				    : q == '`' ? T_RAWSTRING
					       : T_CHAR,
				    start, l->pos);
		if (c == '\\' && q != '`') {
			if (l->pos < l->len && l->src[l->pos] != '\n') {
				l->pos++;
				continue;
			}
			break;
		}
		if (c == '\n' && q != '`')
			break;
	}
	return lex_error(l, q == '"'   ? "unterminated quoted string"
			    : q == '`' ? "unterminated raw quoted string"
				       : "unterminated character constant");
}

/* Inside {{ }}: tokens up to and including the right delimiter. */
static int lex_action(struct lexer *l, int *trim_after)
{
	int start_line = l->line;

	int rc = 0, trim;
	size_t n, start;

	while (!rc) {
		if (l->pos >= l->len) {
			if (l->line != start_line)
				l->out->errstart = start_line;
			return lex_error(l, "unclosed action");
		}
		n = right_delim(l, l->pos, &trim);
		if (n) {
			if (l->paren)
				return lex_error(l, "unclosed left paren");
			*trim_after = trim;
			return emit(l, T_RDELIM, l->pos, l->pos + n) ?: (l->pos += n, 0);
		}
		start = l->pos;
		char c = l->src[l->pos];

		if (is_space(c)) {
			while (l->pos < l->len && is_space(l->src[l->pos])) {
				if (right_delim(l, l->pos, &trim) && trim)
					break;
				l->pos++;
			}
			rc = emit(l, T_SPACE, start, l->pos);
			continue;
		}
		if (c == '=') {
			l->pos++;
			rc = emit(l, T_ASSIGN, start, l->pos);
		} else if (c == ':') {
			if (l->pos + 1 >= l->len || l->src[l->pos + 1] != '=')
				return lex_error(l, "expected :=");
			l->pos += 2;
			rc = emit(l, T_DECLARE, start, l->pos);
		} else if (c == '|') {
			l->pos++;
			rc = emit(l, T_PIPE, start, l->pos);
		} else if (c == ',') {
			l->pos++;
			rc = emit(l, T_COMMA, start, l->pos);
		} else if (c == '"' || c == '`' || c == '\'') {
			rc = lex_quote(l, c);
		} else if (c == '$' || c == '.') {
			/* Go: a '.' before a digit, or at the end of the input, starts a number */
			if (c == '.' && (l->pos + 1 >= l->len || (l->src[l->pos + 1] >= '0' &&
								  l->src[l->pos + 1] <= '9'))) {
				rc = lex_number(l);
				continue;
			}
			l->pos++;
			while (l->pos < l->len && is_alnum(l->src[l->pos]))
				l->pos++;
			if (!at_terminator(l))
				return bad_char(l);
			rc = emit(l,
				  c == '$'		? T_VAR
				  : l->pos - start == 1 ? T_DOT
							: T_FIELD,
				  start, l->pos);
		} else if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
			rc = lex_number(l);
		} else if (is_alnum(c)) {
			while (l->pos < l->len && is_alnum(l->src[l->pos]))
				l->pos++;
			if (!at_terminator(l))
				return bad_char(l);
			rc = emit(l, word_type(l->src + start, l->pos - start), start, l->pos);
		} else if (c == '(') {
			l->pos++;
			l->paren++;
			rc = emit(l, T_LPAREN, start, l->pos);
		} else if (c == ')') {
			if (!l->paren)
				return lex_error(l, "unexpected right paren");
			l->pos++;
			l->paren--;
			rc = emit(l, T_RPAREN, start, l->pos);
		} else {
			char m[64];
			uint32_t r;

			gotmpl_utf8(l->src + l->pos, l->len - l->pos, &r);
			if (r >= 0x20 && r < 0x7F) { /* Go's itemChar: the parser names its place */
				l->pos++;
				return emit(l, T_OTHER, start, l->pos);
			}
			if (gotmpl_isprint(r))
				snprintf(
				    m, sizeof(m), "unrecognized character in action: U+%04X '%.*s'",
				    (unsigned)r, gotmpl_utf8(l->src + l->pos, l->len - l->pos, &r),
				    l->src + l->pos);
			else
				snprintf(m, sizeof(m), "unrecognized character in action: U+%04X",
					 (unsigned)r);
			return lex_error(l, m);
		}
	}
	return rc;
}

/* A comment "/ * ... * /" right after the left delimiter: skip it, through the right delimiter. */
static int lex_comment(struct lexer *l, int *trim_after)
{
	const char *end = NULL;
	size_t n;
	int trim;

	for (size_t p = l->pos + 2; p + 1 < l->len; p++)
		if (l->src[p] == '*' && l->src[p + 1] == '/') {
			end = l->src + p;
			break;
		}
	if (!end)
		return lex_error(l, "unclosed comment");
	l->line += count_lines(l->src + l->pos, (size_t)(end - l->src) - l->pos);
	l->pos = (size_t)(end - l->src) + 2;
	n = right_delim(l, l->pos, &trim);
	if (!n)
		return lex_error(l, "comment ends before closing delimiter");
	l->pos += n;
	*trim_after = trim;
	return 0;
}

/* ---- constants: the values of string, character and number tokens ---- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* strconv.Unquote of a "..." or '...' token into sb; -1 on bad syntax. */
int gotmpl_unquote(const char *s, size_t n, struct strbuf *sb)
{
	char q = s[0];
	size_t i = 1;

	if (n < 2 || s[n - 1] != q)
		return -1;
	n--;
	while (i < n) {
		unsigned long v = 0;
		int digits = 0, base = 16;

		if (s[i] != '\\') {
			uint32_t r;
			int l;

			if (s[i] == q || s[i] == '\n')
				return -1;
			if ((unsigned char)s[i] < 0x80) {
				if (sb_addch(sb, s[i++]))
					return -1;
				continue;
			}
			/* strconv.UnquoteChar: a byte of no UTF-8 becomes U+FFFD */
			l = gotmpl_utf8(s + i, n - i, &r);
			if (l == 1 ? gotmpl_put_utf8(sb, 0xFFFD) : sb_addn(sb, s + i, (size_t)l))
				return -1;
			i += (size_t)l;
			continue;
		}
		if (++i >= n)
			return -1;
		switch (s[i++]) {
		case 'a':
			v = '\a';
			break;
		case 'b':
			v = '\b';
			break;
		case 'f':
			v = '\f';
			break;
		case 'n':
			v = '\n';
			break;
		case 'r':
			v = '\r';
			break;
		case 't':
			v = '\t';
			break;
		case 'v':
			v = '\v';
			break;
		case '\\':
			v = '\\';
			break;
		case '\'':
		case '"':
			if (s[i - 1] != q)
				return -1;
			v = (unsigned char)q;
			break;
		case 'x':
			digits = 2;
			break;
		case 'u':
			digits = 4;
			break;
		case 'U':
			digits = 8;
			break;
		case '0':
		case '1':
		case '2':
		case '3':
		case '4':
		case '5':
		case '6':
		case '7':
			digits = 2;
			base = 8;
			v = (unsigned long)(s[i - 1] - '0');
			break;
		default:
			return -1;
		}
		for (int d = 0; d < digits; d++) {
			int h = i < n ? hexval(s[i]) : -1;

			if (h < 0 || h >= base)
				return -1;
			v = v * (unsigned)base + (unsigned)h;
			i++;
		}
		if (base == 8 && v > 255)
			return -1;
		if (s[i - 1 - digits] == 'x' || base == 8) {
			if (sb_addch(sb, (char)v))
				return -1;
		} else if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) ||
			   gotmpl_put_utf8(sb, (uint32_t)v)) {
			return -1;
		}
	}
	return 0;
}

/* Parse a number token as Go's parse.newNumber (ints, floats, chars; complex constants refused). */
int gotmpl_number(const struct gotmpl_token *t, struct gotmpl_node *n, char *msg, size_t msglen)
{
	char buf[128], *end;
	size_t k = 0;
	int neg = 0, base = 10;
	const char *s;

	n->raw = t->s;
	n->rawlen = t->n;
	if (t->type == T_CHAR) {
		struct strbuf sb = STRBUF_INIT(16);
		uint32_t r;
		int l;

		/* strconv.UnquoteChar's error ('' or a bad escape) is "invalid syntax" */
		if (t->n < 3 || t->s[1] == '\'' ||
		    (t->s[1] == '\\' && !strchr("abfnrtv\\'\"xuU01234567", t->s[2]))) {
			snprintf(msg, msglen, "invalid syntax");
			return -1;
		}
		if (gotmpl_unquote(t->s, t->n, &sb) || sb.len == 0) {
			sb_free(&sb);
			snprintf(msg, msglen, "malformed character constant: %.*s", (int)t->n,
				 t->s);
			return -1;
		}
		l = gotmpl_utf8(sb.buf, sb.len, &r);
		if ((size_t)l != sb.len && !(sb.len == 1)) {
			sb_free(&sb);
			snprintf(msg, msglen, "malformed character constant: %.*s", (int)t->n,
				 t->s);
			return -1;
		}
		if (sb.len == 1)
			r = (unsigned char)sb.buf[0];
		sb_free(&sb);
		n->is_int = n->is_float = n->is_uint = 1;
		n->ival = r;
		n->uval = r;
		n->fval = r;
		return 0;
	}
	for (size_t i = 0; i < t->n && k + 1 < sizeof(buf); i++)
		if (t->s[i] != '_')
			buf[k++] = t->s[i];
	buf[k] = '\0';
	if (k > 1 && buf[k - 1] == 'i') { /* Go's imaginary and complex constants */
		int cplx = 0; /* a sign past the first that no exponent letter precedes: "1+2i" */

		for (size_t i = 1; i < k; i++)
			cplx |= (buf[i] == '+' || buf[i] == '-') && !strchr("eEpP", buf[i - 1]);

		buf[k - 1] = '\0';
		errno = 0;
		strtod(buf, &end);
		if (cplx || (!*end && !(strpbrk(buf, "xX") && !strpbrk(buf, "pP")))) {
			snprintf(msg, msglen,
				 "complex constant \"%.*s\": nodeprobe has no complex numbers",
				 (int)t->n, t->s);
			return -1;
		}
		buf[k - 1] = 'i';
	}
	s = buf;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (s[0] == '0' && (s[1] | 0x20) == 'x')
		base = 16, s += 2;
	else if (s[0] == '0' && (s[1] | 0x20) == 'b')
		base = 2, s += 2;
	else if (s[0] == '0' && (s[1] | 0x20) == 'o')
		base = 8, s += 2;
	else if (s[0] == '0' && s[1])
		base = 8, s += 1;
	if (*s && *s != '+' && *s != '-') {
		unsigned long long u;

		errno = 0;
		u = strtoull(s, &end, base);
		if (!*end && !errno) {
			/* ParseUint takes no sign; ParseInt's 0 makes "-0" and "+0" unsigned too */
			n->is_uint = buf[0] != '+' && buf[0] != '-' ? 1 : u == 0;
			n->uval = n->is_uint ? u : 0;
			if (u <= INT64_MAX || (neg && u == (unsigned long long)INT64_MAX + 1)) {
				n->is_int = n->is_float = 1;
				n->ival = neg ? (int64_t)(0 - u) : (int64_t)u;
				n->fval = (double)n->ival;
				return 0;
			}
			if (n->is_uint) { /* past int64: a uint64 and a float */
				n->is_float = 1;
				n->fval = (double)u;
				return 0;
			}
		}
	}
	errno = 0;
	n->fval = strtod(buf, &end);
	if (!*end && buf[0] && !(base == 8 && strchr(buf, 'p'))) {
		if (isinf(n->fval)) {
			snprintf(msg, msglen, "illegal number syntax: \"%.*s\"", (int)t->n, t->s);
			return -1;
		}
		/* an integer ParseInt/ParseUint refused (too large, or "08"): Go's "integer
		   overflow"; a hex mantissa without its p exponent does not parse as a float in Go
		 */
		if (!strpbrk(buf, ".eEpP") && base != 16) {
			snprintf(msg, msglen, "integer overflow: \"%.*s\"", (int)t->n, t->s);
			return -1;
		}
		if (base == 16 && !strpbrk(buf, "pP")) {
			snprintf(msg, msglen, "illegal number syntax: \"%.*s\"", (int)t->n, t->s);
			return -1;
		}
		n->is_float = 1;
		/* Go: float64(int64(f)) == f, float64(uint64(f)) == f */
		if (n->fval == trunc(n->fval) && n->fval >= -9223372036854775808.0 &&
		    n->fval < 9223372036854775808.0) {
			n->is_int = 1;
			n->ival = (int64_t)n->fval;
		}
		if (n->fval == trunc(n->fval) && n->fval >= 0 && n->fval < 18446744073709551616.0) {
			n->is_uint = 1;
			n->uval = (uint64_t)n->fval;
		}
		return 0;
	}
	snprintf(msg, msglen, "illegal number syntax: \"%.*s\"", (int)t->n, t->s);
	return -1;
}

int gotmpl_lex(const char *src, size_t len, struct gotmpl_lexed *out)
{
	struct lexer l = {.src = src, .len = len, .line = 1, .out = out};
	int rc = 0, trim_after = 0;

	memset(out, 0, sizeof(*out));
	while (!rc && l.pos < len) {
		const char *d = memmem(src + l.pos, len - l.pos, "{{", 2);
		size_t tstart = l.pos, tend = d ? (size_t)(d - src) : len;
		int ltrim = 0;

		if (trim_after)
			while (tstart < tend && is_space(src[tstart]))
				tstart++;
		if (d && tend + 3 < len && src[tend + 2] == '-' && is_space(src[tend + 3]))
			ltrim = 1;
		l.line += count_lines(src + l.pos, tstart - l.pos);
		l.pos = tstart;
		{
			size_t e = tend;

			if (ltrim)
				while (e > tstart && is_space(src[e - 1]))
					e--;
			if (e > tstart)
				rc = emit(&l, T_TEXT, tstart, e);
			l.line += count_lines(src + e, tend - e);
		}
		l.pos = tend;
		trim_after = 0;
		if (rc || !d)
			break;
		/* the action */
		size_t after = tend + 2 + (ltrim ? 2 : 0);

		if (after + 1 < len && src[after] == '/' && src[after + 1] == '*') {
			l.pos = after;
			rc = lex_comment(&l, &trim_after);
			continue;
		}
		rc = emit(&l, T_LDELIM, tend, after);
		l.pos = after;
		l.paren = 0;
		rc = rc ?: lex_action(&l, &trim_after);
	}
	if (rc != -ENOMEM) { /* the parser stops at an EOF, reporting out->err if set */
		int rc2 = emit(&l, T_EOF, len, len);

		rc = rc ?: rc2;
	}
	return rc;
}

void gotmpl_lex_free(struct gotmpl_lexed *l)
{
	free(l->t);
	l->t = NULL;
	l->n = l->cap = 0;
}
