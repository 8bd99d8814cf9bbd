/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_fmt: Go's fmt.Sprint and fmt.Sprintf over template values, and helpers functions share. */
#include <ctype.h>
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
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

struct gotmpl_val *gotmpl_take(struct gotmpl_fctx *c, struct strbuf *sb)
{
	struct gotmpl_val *v = gotmpl_str(c->a, sb->buf, sb->len);

	sb_free(sb);
	return v;
}

/* ---- Unicode classes the string functions share ---- */

int gotmpl_uspace(uint32_t r)
{
	return r == ' ' || (r >= '\t' && r <= '\r') || r == 0x85 || r == 0xA0 || r == 0x1680 ||
	       (r >= 0x2000 && r <= 0x200A) || r == 0x2028 || r == 0x2029 || r == 0x202F ||
	       r == 0x205F || r == 0x3000;
}

int gotmpl_isupper(uint32_t r)
{
	return (r >= 'A' && r <= 'Z') || (r >= 0xC0 && r <= 0xDE && r != 0xD7);
}

int gotmpl_islower(uint32_t r)
{
	return (r >= 'a' && r <= 'z') || (r >= 0xDF && r <= 0xFF && r != 0xF7);
}

uint32_t gotmpl_toupper(uint32_t r)
{
	if ((r >= 'a' && r <= 'z') || (r >= 0xE0 && r <= 0xFE && r != 0xF7))
		return r - 32;
	return r == 0xFF ? 0x178 : r;
}

uint32_t gotmpl_tolower(uint32_t r)
{
	if ((r >= 'A' && r <= 'Z') || (r >= 0xC0 && r <= 0xDE && r != 0xD7))
		return r + 32;
	return r;
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

struct gotmpl_val *gotmpl_tostring(struct gotmpl_fctx *c, const struct gotmpl_val *v)
{
	/* %v of a list is about 20 ns a byte: 4 units (with the 1 its bytes in the arena cost) */
	struct strbuf sb = STRBUF_INIT(gotmpl_room(c->a, GT_PRINT_UNITS));
	int rc;

	if (v->kind == GOTMPL_STRING)
		return (struct gotmpl_val *)v;
	rc = gotmpl_fmt_v(&sb, v);
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

/* strconv.ParseInt(s[0..n), 0, 64): 0, or -1 for bad syntax or out of range. */
static int parse_int0(const char *s, size_t n, int64_t *out)
{
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

		if (ch == '_' && base != 10)
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
		return (double)v->u.i;
	case GOTMPL_FLOAT:
		return v->u.f;
	case GOTMPL_BOOL:
		return v->u.b;
	case GOTMPL_STRING: /* strconv.ParseFloat: no spaces, hex only with a p exponent */
		if (!v->u.s.n || isspace((unsigned char)v->u.s.p[0]) ||
		    (strcasestr(v->u.s.p, "0x") && !strpbrk(v->u.s.p, "pP")))
			return 0;
		d = strtod(v->u.s.p, &end);
		return *end ? 0 : d;
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

/* ---- Sprintf ---- */

struct spec {
	int minus, plus, sharp, space, zero;
	int width, prec; /* -1 when absent */
	char verb;
};

/* s padded to the width (runes), numeric: zeros go after the sign. */
static int pad(struct strbuf *sb, const struct spec *f, const char *s, size_t n, int numeric)
{
	size_t runes = 0;
	int rc = 0, w;

	for (size_t i = 0; i < n; i++)
		runes += ((unsigned char)s[i] & 0xC0) != 0x80;
	w = f->width > (int)runes ? f->width - (int)runes : 0;
	if (f->minus)
		return sb_addn(sb, s, n) ?: (w ? sb_addf(sb, "%*s", w, "") : 0);
	if (f->zero && w) {
		if (numeric && n && (s[0] == '-' || s[0] == '+' || s[0] == ' ')) {
			rc = sb_addch(sb, s[0]);
			s++, n--;
		}
		while (w-- && !rc)
			rc = sb_addch(sb, '0');
		return rc ?: sb_addn(sb, s, n);
	}
	return (w ? sb_addf(sb, "%*s", w, "") : 0) ?: sb_addn(sb, s, n);
}

static int bad_verb(struct strbuf *sb, char verb, const struct gotmpl_val *v)
{
	if (v->kind == GOTMPL_NIL)
		return sb_addf(sb, "%%!%c(<nil>)", verb);
	return sb_addf(sb, "%%!%c(%s=", verb, gotmpl_typename(v)) ?: gotmpl_fmt_v(sb, v) ?: sb_addch(sb, ')');
}

static int fmt_int(struct strbuf *sb, const struct spec *f, int64_t i)
{
	char buf[96], digits[80];
	const char *pre = "";
	unsigned long long u = i < 0 ? 0ull - (unsigned long long)i : (unsigned long long)i;
	int base = 10, n = 0, k = 0, upper = 0;
	struct strbuf t = STRBUF_INIT(4096);
	int rc;

	switch (f->verb) {
	case 'c':
		rc = gotmpl_put_utf8(&t, (uint32_t)(i < 0 || i > 0x10FFFF ? 0xFFFD : i));
		goto out;
	case 'q':
		rc = gotmpl_put_utf8(&t, (uint32_t)(i < 0 || i > 0x10FFFF ? 0xFFFD : i));
		if (!rc) {
			struct strbuf q = STRBUF_INIT(64);

			rc = gotmpl_quote(&q, t.buf, t.len, '\'');
			sb_reset(&t);
			rc = rc ?: sb_addn(&t, q.buf, q.len);
			sb_free(&q);
		}
		goto out;
	case 'U':
		rc = sb_addf(&t, "U+%04llX", u);
		if (!rc && f->sharp) {
			rc = sb_add(&t, " '") ?: gotmpl_put_utf8(&t, (uint32_t)i) ?: sb_addch(&t, '\'');
		}
		goto out;
	case 'x':
		base = 16;
		pre = f->sharp ? "0x" : "";
		break;
	case 'X':
		base = 16;
		upper = 1;
		pre = f->sharp ? "0X" : "";
		break;
	case 'o':
		base = 8;
		pre = f->sharp ? "0" : "";
		break;
	case 'O':
		base = 8;
		pre = "0o";
		break;
	case 'b':
		base = 2;
		break;
	}
	do {
		int d = (int)(u % (unsigned)base);

		digits[n++] = (char)(d < 10 ? '0' + d : (upper ? 'A' : 'a') + d - 10);
		u /= (unsigned)base;
	} while (u);
	if (f->prec == 0 && i == 0)
		n = 0;
	while (f->prec > n && n < 70)
		digits[n++] = '0';
	if (i < 0)
		buf[k++] = '-';
	else if (f->plus)
		buf[k++] = '+';
	else if (f->space)
		buf[k++] = ' ';
	k += snprintf(buf + k, sizeof(buf) - (size_t)k, "%s", pre);
	while (n)
		buf[k++] = digits[--n];
	rc = sb_addn(&t, buf, (size_t)k);
	if (!rc) {
		struct spec g = *f;

		g.zero = f->zero && f->prec < 0;
		rc = pad(sb, &g, t.buf, t.len, 1);
	}
	sb_free(&t);
	return rc;
out:
	rc = rc ?: pad(sb, f, t.buf, t.len, 0);
	sb_free(&t);
	return rc;
}

static int fmt_float(struct strbuf *sb, const struct spec *f, double d)
{
	struct strbuf t = STRBUF_INIT(4096);
	char verb = f->verb == 'v' ? 'g' : f->verb == 'F' ? 'f' : f->verb;
	int prec = f->prec, rc = 0;

	if (prec < 0 && (verb == 'e' || verb == 'E' || verb == 'f'))
		prec = 6;
	if (f->plus && !signbit(d))
		rc = sb_addch(&t, '+');
	else if (f->space && !signbit(d))
		rc = sb_addch(&t, ' ');
	rc = rc ?: gotmpl_fmt_float(&t, d, verb, prec);
	rc = rc ?: pad(sb, f, t.buf, t.len, !isinf(d) && !isnan(d));
	sb_free(&t);
	return rc;
}

static int fmt_str(struct strbuf *sb, const struct spec *f, const char *s, size_t n)
{
	struct strbuf t = STRBUF_INIT(GT_STR_MAX);
	int rc = 0;

	if (f->prec >= 0 && f->verb != 'x' && f->verb != 'X') { /* precision counts runes */
		size_t i = 0;
		uint32_t r;

		for (int k = 0; k < f->prec && i < n; k++)
			i += (size_t)gotmpl_utf8(s + i, n - i, &r);
		n = i;
	}
	switch (f->verb) {
	case 'q':
		if (f->sharp && !memchr(s, '`', n) && !memchr(s, '\n', n))
			rc = sb_addch(&t, '`') ?: sb_addn(&t, s, n) ?: sb_addch(&t, '`');
		else
			rc = gotmpl_quote(&t, s, n, '"');
		break;
	case 'x':
	case 'X':
		if (f->prec >= 0 && (size_t)f->prec < n)
			n = (size_t)f->prec;
		for (size_t i = 0; i < n && !rc; i++) {
			if (i && f->space)
				rc = sb_addch(&t, ' ');
			if ((i == 0 || f->space) && f->sharp)
				rc = rc ?: sb_add(&t, f->verb == 'x' ? "0x" : "0X");
			rc = rc
				 ?: sb_addf(&t, f->verb == 'x' ? "%02x" : "%02X",
					    (unsigned char)s[i]);
		}
		break;
	default:
		rc = sb_addn(&t, s, n);
	}
	rc = rc ?: pad(sb, f, t.buf, t.len, 0);
	sb_free(&t);
	return rc;
}

static int fmt_value(struct strbuf *sb, const struct spec *f, const struct gotmpl_val *v, int depth)
{
	int rc = 0;
	size_t i;
	struct spec plain = *f;

	if (f->verb == 'T') {
		return fmt_str(sb, f, gotmpl_typename(v), strlen(gotmpl_typename(v)));
	}
	if (f->verb == 'v' && f->sharp && v->kind == GOTMPL_STRING) {
		plain.verb = 'q';
		plain.sharp = 0;
		return fmt_str(sb, &plain, v->u.s.p, v->u.s.n);
	}
	switch (v->kind) {
	case GOTMPL_NIL:
		if (f->verb == 'v')
			return pad(sb, f, "<nil>", 5, 0);
		return bad_verb(sb, f->verb, v);
	case GOTMPL_BOOL:
		if (f->verb == 'v' || f->verb == 't')
			return pad(sb, f, v->u.b ? "true" : "false", v->u.b ? 4 : 5, 0);
		return bad_verb(sb, f->verb, v);
	case GOTMPL_INT:
		if (f->verb == 'v') {
			plain.verb = 'd';
			return fmt_int(sb, &plain, v->u.i);
		}
		if (strchr("bcdoOqxXU", f->verb))
			return fmt_int(sb, f, v->u.i);
		return bad_verb(sb, f->verb, v);
	case GOTMPL_FLOAT:
		if (strchr("veEfFgG", f->verb))
			return fmt_float(sb, f, v->u.f);
		return bad_verb(sb, f->verb, v);
	case GOTMPL_STRING:
		if (strchr("vsqxX", f->verb))
			return fmt_str(sb, f, v->u.s.p, v->u.s.n);
		return bad_verb(sb, f->verb, v);
	case GOTMPL_LIST:
		if (depth > 50)
			return sb_add(sb, "[...]");
		rc = sb_addch(sb, '[');
		for (i = 0; i < v->u.l.n && !rc; i++)
			rc =
			    (i ? sb_addch(sb, ' ') : 0) ?: fmt_value(sb, f, v->u.l.v[i], depth + 1);
		return rc ?: sb_addch(sb, ']');
	case GOTMPL_MAP:
		if (depth > 50)
			return sb_add(sb, "map[...]");
		rc = sb_add(sb, "map[");
		for (i = 0; i < v->u.m.n && !rc; i++) {
			rc = (i ? sb_addch(sb, ' ') : 0)
				 ?: fmt_str(sb, f, v->u.m.e[i].k, v->u.m.e[i].klen) ?: sb_addch(sb, ':')
				 ?: fmt_value(sb, f, v->u.m.e[i].v, depth + 1);
		}
		return rc ?: sb_addch(sb, ']');
	case GT_OBJ: { /* fmt's handleMethods: a Stringer for v, s, x, X, q (not %#v) */
		struct strbuf s = STRBUF_INIT(GT_STR_MAX);

		if ((f->sharp && f->verb == 'v') || !strchr("vsqxX", f->verb))
			return -ENOTSUP;
		rc = gotmpl_fmt_v(&s, v) ?: fmt_str(sb, f, s.buf ? s.buf : "", s.len);
		sb_free(&s);
		return rc;
	}
	}
	return 0;
}

/* An int argument for a '*' width or precision. */
static int star_arg(struct gotmpl_val **argv, int argc, int *ai, int *out)
{
	if (*ai >= argc || argv[*ai]->kind != GOTMPL_INT || argv[*ai]->u.i > 1000000 ||
	    argv[*ai]->u.i < -1000000) {
		(*ai)++;
		return -1;
	}
	*out = (int)argv[(*ai)++]->u.i;
	return 0;
}

int gotmpl_sprintf(struct gotmpl_fctx *c, struct strbuf *sb, const char *fmt, size_t flen,
		   struct gotmpl_val **argv, int argc)
{
	int ai = 0, rc = 0;
	size_t i = 0;

	while (i < flen && !rc) {
		struct spec f = {.width = -1, .prec = -1};
		size_t start = i;

		while (i < flen && fmt[i] != '%')
			i++;
		if (i > start)
			rc = sb_addn(sb, fmt + start, i - start);
		if (i >= flen || rc)
			break;
		i++; /* '%' */
		for (; i < flen; i++) {
			if (fmt[i] == '-')
				f.minus = 1, f.zero = 0;
			else if (fmt[i] == '+')
				f.plus = 1;
			else if (fmt[i] == '#')
				f.sharp = 1;
			else if (fmt[i] == ' ')
				f.space = 1;
			else if (fmt[i] == '0')
				f.zero = !f.minus;
			else
				break;
		}
		if (i < flen && fmt[i] == '*') {
			i++;
			if (star_arg(argv, argc, &ai, &f.width)) {
				rc = sb_add(sb, "%!(BADWIDTH)");
				continue;
			}
			if (f.width < 0)
				f.minus = 1, f.width = -f.width, f.zero = 0;
		} else {
			while (i < flen && fmt[i] >= '0' && fmt[i] <= '9' && f.width < 100000)
				f.width = (f.width < 0 ? 0 : f.width * 10) + fmt[i++] - '0';
		}
		if (i < flen && fmt[i] == '.') {
			i++;
			if (i < flen && fmt[i] == '*') {
				i++;
				if (star_arg(argv, argc, &ai, &f.prec) || f.prec < 0) {
					rc = sb_add(sb, "%!(BADPREC)");
					continue;
				}
			} else {
				f.prec = 0;
				while (i < flen && fmt[i] >= '0' && fmt[i] <= '9' &&
				       f.prec < 100000)
					f.prec = f.prec * 10 + fmt[i++] - '0';
			}
		}
		if (i >= flen) {
			rc = sb_add(sb, "%!(NOVERB)");
			break;
		}
		f.verb = fmt[i++];
		if (f.verb == '%') {
			rc = sb_addch(sb, '%');
			continue;
		}
		if ((unsigned char)f.verb >= 0x80 || f.verb == '[') {
			rc = sb_addf(sb, "%%!%c(BADINDEX)", f.verb);
			continue;
		}
		if (ai >= argc) {
			rc = sb_addf(sb, "%%!%c(MISSING)", f.verb);
			continue;
		}
		if (!strchr("vTtbcdoOqxXUeEfFgGs", f.verb)) {
			rc = bad_verb(sb, f.verb, argv[ai++]);
			continue;
		}
		rc = fmt_value(sb, &f, argv[ai++], 0);
		if (rc == -ENOTSUP)
			return gotmpl_fail(c,
					   "%%%s%c of %s: nodeprobe prints it only with %%v, %%s, "
					   "%%q, %%x or %%X (Go would print its fields or address)",
					   f.sharp ? "#" : "", f.verb,
					   gotmpl_typename(argv[ai - 1]));
	}
	if (!rc && ai < argc) {
		rc = sb_add(sb, "%!(EXTRA ");
		for (; ai < argc && !rc; ai++) {
			if (argv[ai]->kind == GOTMPL_NIL)
				rc = sb_add(sb, "<nil>");
			else
				rc = sb_addf(sb, "%s=", gotmpl_typename(argv[ai]))
					 ?: gotmpl_fmt_v(sb, argv[ai]);
			if (ai + 1 < argc)
				rc = rc ?: sb_add(sb, ", ");
		}
		rc = rc ?: sb_addch(sb, ')');
	}
	return rc;
}
