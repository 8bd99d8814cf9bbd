/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_fmt: Go's fmt.Sprint over template values, conversions, and helpers functions share. */
#include <ctype.h>
#include <locale.h>
#include <pthread.h>
#include <wctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

int gotmpl_fail(struct gotmpl_fctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, GOTMPL_ERR_MAX, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

struct gotmpl_val *gotmpl_take(struct gotmpl_fctx *c, struct strbuf *sb)
{
	struct gotmpl_val *v = gotmpl_str(c->a, sb->buf, sb->len);

	sb_free(sb);
	return v;
}

int gotmpl_printed(struct gotmpl_fctx *c, struct strbuf *sb, int rc, unsigned per_byte,
		   struct gotmpl_val **res)
{
	if (rc == -E2BIG && sb->max < GT_STR_MAX) /* the budget's cap, not the string limit */
		rc = gotmpl_work(c->a, (sb->max + 1) * per_byte);
	if (rc) {
		sb_free(sb);
		return rc;
	}
	if (gotmpl_work(c->a, sb->len * per_byte)) {
		sb_free(sb);
		return -ELOOP;
	}
	GT_RES(gotmpl_take(c, sb));
}

/* ---- Unicode classes the string functions share ---- */

int gotmpl_uspace(uint32_t r)
{
	return r == ' ' || (r >= '\t' && r <= '\r') || r == 0x85 || r == 0xA0 || r == 0x1680 ||
	       (r >= 0x2000 && r <= 0x200A) || r == 0x2028 || r == 0x2029 || r == 0x202F ||
	       r == 0x205F || r == 0x3000;
}

/*
 * Unicode case beyond ASCII, as Go's unicode.IsUpper, IsLower, ToUpper, ToLower (simple case
 * mappings): glibc's tables through the C.UTF-8 locale (built into glibc 2.35 and later; made
 * once, never changed, so executions may share it). Without it, Latin-1 only.
 */
static locale_t utf8_loc;

static void make_utf8_locale(void)
{
	utf8_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static locale_t utf8_locale(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, make_utf8_locale);
	return utf8_loc;
}

int gotmpl_istitle(uint32_t r)
{
	return r == 0x1C5 || r == 0x1C8 || r == 0x1CB || r == 0x1F2 ||
	       (r >= 0x1F88 && r <= 0x1F8F) || (r >= 0x1F98 && r <= 0x1F9F) ||
	       (r >= 0x1FA8 && r <= 0x1FAF) || r == 0x1FBC || r == 0x1FCC || r == 0x1FFC;
}

int gotmpl_isupper(uint32_t r)
{
	locale_t l = r < 0x80 ? (locale_t)0 : utf8_locale();

	if (gotmpl_istitle(r)) /* Lt is not Lu */
		return 0;
	if (l)
		return iswupper_l((wint_t)r, l) && towlower_l((wint_t)r, l) != (wint_t)r;
	return (r >= 'A' && r <= 'Z') || (r >= 0xC0 && r <= 0xDE && r != 0xD7);
}

int gotmpl_islower(uint32_t r)
{
	locale_t l = r < 0x80 ? (locale_t)0 : utf8_locale();

	if (l)
		return iswlower_l((wint_t)r, l) && (towupper_l((wint_t)r, l) != (wint_t)r ||
						    r == 0xDF || (r >= 0x250 && r <= 0x2AF));
	return (r >= 'a' && r <= 'z') || (r >= 0xDF && r <= 0xFF && r != 0xF7);
}

uint32_t gotmpl_toupper(uint32_t r)
{
	locale_t l = r < 0x80 ? (locale_t)0 : utf8_locale();

	if (l)
		return (uint32_t)towupper_l((wint_t)r, l);
	if ((r >= 'a' && r <= 'z') || (r >= 0xE0 && r <= 0xFE && r != 0xF7))
		return r - 32;
	return r == 0xFF ? 0x178 : r;
}

uint32_t gotmpl_tolower(uint32_t r)
{
	locale_t l = r < 0x80 ? (locale_t)0 : utf8_locale();

	if (l)
		return (uint32_t)towlower_l((wint_t)r, l);
	if ((r >= 'A' && r <= 'Z') || (r >= 0xC0 && r <= 0xDE && r != 0xD7))
		return r + 32;
	return r;
}

uint32_t gotmpl_totitle(uint32_t r)
{
	if ((r >= 0x1C4 && r <= 0x1CC) ||
	    (r >= 0x1F1 && r <= 0x1F3)) /* the digraphs: Dž, Lj, Nj, Dz */
		return r <= 0x1C6 ? 0x1C5 : r <= 0x1C9 ? 0x1C8 : r <= 0x1CC ? 0x1CB : 0x1F2;
	if ((r >= 0x10D0 && r <= 0x10FA) || (r >= 0x10FD && r <= 0x10FF)) /* Georgian: itself */
		return r;
	return gotmpl_toupper(r);
}

int gotmpl_done(struct gotmpl_fctx *c, struct strbuf *sb, int rc, struct gotmpl_val **res)
{
	if (rc) {
		sb_free(sb);
		return rc;
	}
	*res = gotmpl_take(c, sb);
	return *res ? 0 : -ENOMEM;
}

struct gotmpl_val *gotmpl_bytes(struct gotmpl_arena *a, const char *s, size_t n)
{
	struct gotmpl_val *l = gotmpl_list(a, n, GT_BYTES);

	for (size_t i = 0; l && i < n; i++)
		if (!(l->u.l.v[l->u.l.n++] = gotmpl_int(a, (unsigned char)s[i], GT_UINT8)))
			return NULL;
	return l;
}

int gotmpl_bytes_text(struct strbuf *sb, const struct gotmpl_val *b)
{
	int rc = 0;

	for (size_t i = 0; i < b->u.l.n && !rc; i++)
		rc = sb_addch(sb, (char)b->u.l.v[i]->u.i);
	return rc;
}

struct gotmpl_val *gotmpl_tostring(struct gotmpl_fctx *c, const struct gotmpl_val *v)
{
	/* %v of a list is about 20 ns a byte: 4 units (with the 1 its bytes in the arena cost) */
	struct strbuf sb = STRBUF_INIT(gotmpl_room(c->a, GT_PRINT_UNITS));
	int rc;

	if (v->kind == GOTMPL_STRING)
		return (struct gotmpl_val *)v;
	/* Sprig's strval: a []byte is its text */
	rc = v->kind == GOTMPL_LIST && v->sub == GT_BYTES ? gotmpl_bytes_text(&sb, v)
							  : gotmpl_fmt_v(&sb, v);
	if (rc == -E2BIG && sb.max < GT_STR_MAX) { /* what the budget could pay */
		gotmpl_work(c->a, (sb.max + 1) * GT_PRINT_UNITS);
		sb_free(&sb);
		return NULL;
	}
	if (rc) { /* past GT_STR_MAX or GT_VAL_DEPTH_MAX: a limit, not memory */
		c->a->over = 1;
		sb_free(&sb);
		return NULL;
	}
	if (gotmpl_work(c->a, sb.len * (GT_PRINT_UNITS - 1))) {
		sb_free(&sb);
		return NULL;
	}
	return gotmpl_take(c, &sb);
}

/* cast's trimZeroDecimal: "10.00" is "10"; the length to parse. */
static size_t trim_zero_decimal(const char *s, size_t n)
{
	int zero = 0;

	for (size_t i = n; i > 0; i--) {
		if (s[i - 1] == '.' && zero)
			return i - 1;
		if (s[i - 1] == '0')
			zero = 1;
		else if (s[i - 1] != '.')
			return n;
	}
	return n;
}

/* strconv's underscoreOK: underscores only between digits, or after a base prefix. */
static int underscore_ok(const char *s, size_t n)
{
	char saw = '^';
	size_t i = 0;
	int hex = 0;

	if (n && (s[0] == '-' || s[0] == '+'))
		s++, n--;
	if (n >= 2 && s[0] == '0' && strchr("bBoOxX", s[1])) {
		i = 2;
		saw = '0';
		hex = (s[1] | 0x20) == 'x';
	}
	for (; i < n; i++) {
		char ch = s[i];

		if ((ch >= '0' && ch <= '9') || (hex && (ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')) {
			saw = '0';
			continue;
		}
		if (ch == '_') {
			if (saw != '0')
				return 0;
			saw = '_';
			continue;
		}
		if (saw == '_')
			return 0;
		saw = '!';
	}
	return saw != '_';
}

/* strconv.ParseInt(s[0..n), 0, 64): 0, or -1 for bad syntax or out of range. */
static int parse_int0(const char *s, size_t n, int64_t *out)
{
	int us_ok = memchr(s, '_', n) && underscore_ok(s, n);
	uint64_t v = 0, lim;
	unsigned base = 10;
	size_t i = 0, digits = 0;
	int neg = 0;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	if (i + 1 < n && s[i] == '0') {
		char x = (char)(s[i + 1] | 0x20);

		base = x == 'x' ? 16 : x == 'o' ? 8 : x == 'b' ? 2 : 8;
		i += x == 'x' || x == 'o' || x == 'b' ? 2 : 1;
		digits = base == 8 && !(x == 'o');
	}
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		char ch = s[i];
		unsigned d = ch >= '0' && ch <= '9' ? (unsigned)(ch - '0')
			     : (ch | 0x20) >= 'a' && (ch | 0x20) <= 'f'
				 ? (unsigned)((ch | 0x20) - 'a' + 10)
				 : 99;

		if (ch == '_' && us_ok)
			continue;
		if (d >= base || v > (lim - d) / base)
			return -1;
		v = v * base + d;
		digits++;
	}
	if (!digits)
		return -1;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int64_t gotmpl_toint64(const struct gotmpl_val *v)
{
	switch (v->kind) {
	case GOTMPL_INT:
		return v->u.i;
	case GOTMPL_FLOAT:
		/* Go's int64(f) on amd64: NaN and what is out of range give the most negative */
		if (!(v->u.f >= -9223372036854775808.0 && v->u.f < 9223372036854775808.0))
			return INT64_MIN;
		return (int64_t)v->u.f;
	case GOTMPL_BOOL:
		return v->u.b;
	case GOTMPL_STRING: { /* cast.ToInt64: ParseInt(trimZeroDecimal(s), 0, 64), 0 on error */
		int64_t r;

		return parse_int0(v->u.s.p, trim_zero_decimal(v->u.s.p, v->u.s.n), &r) ? 0 : r;
	}
	}
	return 0;
}

double gotmpl_tofloat64(const struct gotmpl_val *v)
{
	char *end;
	double d;

	switch (v->kind) {
	case GOTMPL_INT:
		return gotmpl_bigu(v) ? (double)(uint64_t)v->u.i : (double)v->u.i;
	case GOTMPL_FLOAT:
		return v->u.f;
	case GOTMPL_BOOL:
		return v->u.b;
	case GOTMPL_STRING: /* strconv.ParseFloat: no spaces, hex only with a p exponent */
		if (!v->u.s.n || isspace((unsigned char)v->u.s.p[0]) ||
		    (strcasestr(v->u.s.p, "0x") && !strpbrk(v->u.s.p, "pP")))
			return 0;
		if (memchr(v->u.s.p, '_', v->u.s.n)) { /* Go's digit separators, where allowed */
			char buf[64];
			size_t k = 0;

			if (!underscore_ok(v->u.s.p, v->u.s.n) || v->u.s.n >= sizeof(buf))
				return 0;
			for (size_t i = 0; i < v->u.s.n; i++)
				if (v->u.s.p[i] != '_')
					buf[k++] = v->u.s.p[i];
			buf[k] = 0;
			d = strtod(buf, &end);
			return *end || (isinf(d) && !strpbrk(buf, "iI")) ? 0 : d;
		}
		d = strtod(v->u.s.p, &end);
		/* cast.ToFloat64: ParseFloat's error (syntax, or out of range: "1e400") gives 0 */
		return *end || (isinf(d) && !strpbrk(v->u.s.p, "iI")) ? 0 : d;
	}
	return 0;
}

int gotmpl_sprint(struct strbuf *sb, struct gotmpl_val **argv, int argc, int ln)
{
	int rc = 0;

	for (int i = 0; i < argc && !rc; i++) {
		int str = argv[i]->kind == GOTMPL_STRING;

		if (i > 0 && (ln || (!str && argv[i - 1]->kind != GOTMPL_STRING)))
			rc = sb_addch(sb, ' ');
		rc = rc ?: gotmpl_fmt_v(sb, argv[i]);
	}
	if (ln && !rc)
		rc = sb_addch(sb, '\n');
	return rc;
}
