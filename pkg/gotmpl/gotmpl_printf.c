/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_printf: Go's fmt.Sprintf over template values (print.go doPrintf, format.go). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

/* ---- Sprintf: Go's fmt (print.go doPrintf, printArg, printValue, badVerb; format.go) ---- */

struct spec {
	int minus, plus, sharp, space, zero; /* the flags */
	int plusv, sharpv;		     /* %+v, %#v */
	int wid, prec, widp, precp;	     /* width and precision, and whether given */
	uint32_t verb;
};

/* writePadding: n bytes of '0' (the zero flag) or ' '. */
static int padding(struct strbuf *sb, const struct spec *f, long n)
{
	int rc = 0;

	if (n <= 0)
		return 0;
	if (!f->zero)
		return sb_addf(sb, "%*s", (int)n, "");
	while (n-- > 0 && !rc)
		rc = sb_addch(sb, '0');
	return rc;
}

/* fmt.pad: s padded to the width, counted in runes. */
static int pad(struct strbuf *sb, const struct spec *f, const char *s, size_t n)
{
	long runes = 0;

	if (!f->widp || f->wid == 0)
		return sb_addn(sb, s, n);
	for (size_t i = 0; i < n; i++)
		runes += ((unsigned char)s[i] & 0xC0) != 0x80;
	if (f->minus)
		return sb_addn(sb, s, n) ?: padding(sb, f, f->wid - runes);
	return padding(sb, f, f->wid - runes) ?: sb_addn(sb, s, n);
}

/* pad with the zero flag off (Go's integers, Inf, NaN, runes). */
static int pad_nozero(struct strbuf *sb, const struct spec *f, const char *s, size_t n)
{
	struct spec g = *f;

	g.zero = 0;
	return pad(sb, &g, s, n);
}

/* truncateString: the first prec runes. */
static size_t trunc_runes(const struct spec *f, const char *s, size_t n)
{
	size_t i = 0;
	uint32_t r;

	if (!f->precp)
		return n;
	for (int k = 0; k < f->prec && i < n; k++)
		i += (size_t)gotmpl_utf8(s + i, n - i, &r);
	return i;
}

/* strconv.CanBackquote */
static int can_backquote(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint32_t r;
		int l = gotmpl_utf8(s + i, n - i, &r);

		if (l > 1 && r == 0xFEFF)
			return 0;
		if (l == 1 && (r == 0xFFFD || (r < ' ' && r != '\t') || r == '`' || r == 0x7F))
			return 0;
		i += (size_t)l;
	}
	return 1;
}

/* strconv.Quote (ascii 0) or QuoteToASCII (ascii 1) of s[0..n) with quote q. */
static int quote(struct strbuf *sb, const char *s, size_t n, char q, int ascii)
{
	int rc;

	if (!ascii)
		return gotmpl_quote(sb, s, n, q);
	rc = sb_addch(sb, q);
	for (size_t i = 0; i < n && !rc;) {
		uint32_t r;
		int l = gotmpl_utf8(s + i, n - i, &r);

		if (r < 0x80 || l == 1) { /* as Quote does; its quotes dropped */
			struct strbuf one = STRBUF_INIT(16);

			rc = gotmpl_quote(&one, s + i, 1, q)
				 ?: sb_addn(sb, one.buf + 1, one.len - 2);
			sb_free(&one);
		} else {
			rc = sb_addf(sb, r < 0x10000 ? "\\u%04x" : "\\U%08x", r);
		}
		i += (size_t)l;
	}
	return rc ?: sb_addch(sb, q);
}

static int fmt_value(struct strbuf *sb, struct spec *f, const struct gotmpl_val *v, int depth);

/* badVerb: %!verb(type=value), the value printed with %v under the same flags. */
static int bad_verb(struct strbuf *sb, struct spec *f, const struct gotmpl_val *v)
{
	struct spec g = *f;
	int rc = sb_add(sb, "%!") ?: gotmpl_put_utf8(sb, f->verb) ?: sb_addch(sb, '(');

	if (v->kind == GOTMPL_NIL)
		return rc ?: sb_add(sb, "<nil>)");
	g.verb = 'v';
	return rc ?: sb_addf(sb, "%s=", gotmpl_typename(v)) ?: fmt_value(sb, &g, v, 0)
			      ?: sb_addch(sb, ')');
}

/* fmt.fmtInteger, and %c, %q, %U of an integer (u is the value's bits; neg when signed < 0). */
static int fmt_int(struct strbuf *sb, const struct spec *f, int64_t i, int isunsigned)
{
	char buf[160];
	uint64_t u = (uint64_t)i, base = 10;
	int neg = i < 0 && !isunsigned, k = (int)sizeof(buf), prec = 0, rc;
	const char *digits = "0123456789abcdefx";
	struct strbuf t = STRBUF_INIT(1u << 21);

	switch (f->verb) {
	case 'c':
	case 'q': {
		uint32_t r = u > 0x10FFFF ? 0xFFFD : (uint32_t)u;

		if (r >= 0xD800 && r <= 0xDFFF)
			r = 0xFFFD;
		rc = gotmpl_put_utf8(&t, r);
		if (!rc && f->verb == 'q') {
			struct strbuf q = STRBUF_INIT(64);

			rc = quote(&q, t.buf, t.len, '\'', f->plus);
			sb_reset(&t);
			rc = rc ?: sb_addn(&t, q.buf, q.len);
			sb_free(&q);
		}
		rc = rc ?: pad_nozero(sb, f, t.buf, t.len);
		sb_free(&t);
		return rc;
	}
	case 'U': {
		int p = f->precp && f->prec > 4 ? f->prec : 4;

		rc = sb_addf(&t, "U+%0*llX", p > 100000 ? 100000 : p, (unsigned long long)u);
		if (!rc && f->sharp && u <= 0x10FFFF && gotmpl_isprint((uint32_t)u))
			rc = sb_add(&t, " '") ?: gotmpl_put_utf8(&t, (uint32_t)u) ?: sb_addch(&t, '\'');
		rc = rc ?: pad_nozero(sb, f, t.buf, t.len);
		sb_free(&t);
		return rc;
	}
	case 'x':
		base = 16;
		break;
	case 'X':
		base = 16;
		digits = "0123456789ABCDEFX";
		break;
	case 'o':
	case 'O':
		base = 8;
		break;
	case 'b':
		base = 2;
		break;
	}
	if (neg)
		u = 0 - u;
	if (f->precp) {
		prec = f->prec;
		if (prec == 0 && u == 0) {
			struct spec g = *f;

			g.zero = 0;
			return padding(sb, &g, g.widp ? g.wid : 0);
		}
	} else if (f->zero && f->widp) {
		prec = f->wid;
		if (neg || f->plus || f->space)
			prec--;
	}
	/* the digits right to left into t (prec may be up to 10^6) */
	do {
		buf[--k] = digits[u % base];
		u /= base;
	} while (u);
	rc = 0;
	for (int z = prec - ((int)sizeof(buf) - k); z > 0 && !rc; z--)
		rc = sb_addch(&t, '0');
	rc = rc ?: sb_addn(&t, buf + k, sizeof(buf) - (size_t)k);
	if (!rc) { /* the prefixes, built in front */
		char pre[8];
		int np = 0;

		if (neg)
			pre[np++] = '-';
		else if (f->plus)
			pre[np++] = '+';
		else if (f->space)
			pre[np++] = ' ';
		if (f->sharp && base == 2)
			pre[np++] = '0', pre[np++] = 'b';
		if (f->sharp && base == 16)
			pre[np++] = '0', pre[np++] = digits[16];
		if (f->verb == 'O')
			pre[np++] = '0', pre[np++] = 'o';
		if (f->sharp && base == 8 && t.buf[0] != '0')
			pre[np++] = '0';
		if (np) {
			struct strbuf w = STRBUF_INIT(1u << 21);

			rc = sb_addn(&w, pre, (size_t)np) ?: sb_addn(&w, t.buf, t.len);
			sb_free(&t);
			t = w;
		}
	}
	rc = rc ?: pad_nozero(sb, f, t.buf, t.len);
	sb_free(&t);
	return rc;
}

/* strconv's %b and %x/%X of a float64 (fmtB, fmtX). */
static int float_bx(struct strbuf *sb, double d, char fmt, int prec)
{
	uint64_t bits, mant;
	int exp, neg;

	memcpy(&bits, &d, sizeof(bits));
	neg = (int)(bits >> 63);
	exp = (int)((bits >> 52) & 0x7FF);
	mant = bits & ((1ull << 52) - 1);
	if (exp == 0)
		exp++;
	else
		mant |= 1ull << 52;
	exp -= 1023;
	if (fmt == 'b')
		return sb_addf(sb, "%s%llup%c%d", neg ? "-" : "", (unsigned long long)mant,
			       exp - 52 < 0 ? '-' : '+', abs(exp - 52));
	if (mant == 0)
		exp = 0;
	mant <<= 60 - 52;
	while (mant != 0 && !(mant & (1ull << 60))) {
		mant <<= 1;
		exp--;
	}
	if (prec >= 0 && prec < 15) {
		unsigned shift = (unsigned)prec * 4;
		uint64_t extra = (mant << shift) & ((1ull << 60) - 1);

		mant >>= 60 - shift;
		if ((extra | (mant & 1)) > (1ull << 59))
			mant++;
		mant <<= 60 - shift;
		if (mant & (1ull << 61)) {
			mant >>= 1;
			exp++;
		}
	}
	const char *hex = fmt == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	int rc = sb_addf(sb, "%s0%c%c", neg ? "-" : "", fmt, (char)('0' + ((mant >> 60) & 1)));

	mant <<= 4;
	if (prec < 0 && mant != 0) {
		rc = rc ?: sb_addch(sb, '.');
		while (mant != 0 && !rc) {
			rc = sb_addch(sb, hex[(mant >> 60) & 15]);
			mant <<= 4;
		}
	} else if (prec > 0) {
		rc = rc ?: sb_addch(sb, '.');
		for (int i = 0; i < prec && !rc; i++) {
			rc = sb_addch(sb, hex[(mant >> 60) & 15]);
			mant <<= 4;
		}
	}
	return rc ?: sb_addf(sb, "%c%c%02d", fmt == 'X' ? 'P' : 'p', exp < 0 ? '-' : '+', abs(exp));
}

/* pp.fmtFloat and fmt.fmtFloat: verb, with its default precision. */
static int fmt_float(struct strbuf *sb, const struct spec *f, double d)
{
	char verb = (char)(f->verb == 'v' ? 'g' : f->verb);
	int prec = strchr("feEF", verb) ? 6 : -1, rc = 0;
	struct strbuf t = STRBUF_INIT(1u << 21);
	char *num;
	size_t n;

	if (f->precp)
		prec = f->prec;
	rc = sb_addch(&t, '+');
	if (!rc && signbit(d) && !isnan(d))
		t.buf[0] = '-', d = -d;
	if (rc)
		goto out;
	if (isinf(d) || isnan(d))
		rc = sb_add(&t, isinf(d) ? "Inf" : "NaN");
	else if (verb == 'x' || verb == 'X' || verb == 'b')
		rc = float_bx(&t, d, verb, prec);
	else
		rc = gotmpl_fmt_float(&t, d, verb == 'F' ? 'f' : verb, prec);
	if (rc)
		goto out;
	if (f->space && t.buf[0] == '+' && !f->plus)
		t.buf[0] = ' ';
	num = t.buf;
	n = t.len;
	if (num[1] == 'I' || num[1] == 'N') {
		if (num[1] == 'N' && !f->space && !f->plus)
			num++, n--;
		rc = pad_nozero(sb, f, num, n);
		goto out;
	}
	if (f->sharp && verb != 'b') { /* a decimal point always; %g's trailing zeros kept */
		int digits = 0, point = 0, nonzero = 0;
		size_t tail = n, i;
		struct strbuf w = STRBUF_INIT(1u << 21);

		if (strchr("vgGx", verb))
			digits = prec == -1 ? 6 : prec;
		for (i = 1; i < n; i++) {
			char c = num[i];

			if (c == '.') {
				point = 1;
			} else if (c == 'p' || c == 'P' ||
				   ((c == 'e' || c == 'E') && verb != 'x' && verb != 'X')) {
				tail = i;
				break;
			} else {
				nonzero |= c != '0';
				if (nonzero)
					digits--;
			}
		}
		rc = sb_addn(&w, num, tail);
		if (!point) {
			if (tail == 2 && num[1] == '0')
				digits--;
			rc = rc ?: sb_addch(&w, '.');
		}
		while (digits-- > 0 && !rc)
			rc = sb_addch(&w, '0');
		rc = rc ?: sb_addn(&w, num + tail, n - tail);
		sb_free(&t);
		t = w;
		num = t.buf;
		n = t.len;
		if (rc)
			goto out;
	}
	if (f->plus || num[0] != '+') {
		if (f->zero && f->widp && f->wid > (int)n) {
			rc = sb_addch(sb, num[0]) ?: padding(sb, f, f->wid - (long)n)
						  ?: sb_addn(sb, num + 1, n - 1);
			goto out;
		}
		rc = pad(sb, f, num, n);
		goto out;
	}
	rc = pad(sb, f, num + 1, n - 1);
out:
	sb_free(&t);
	return rc;
}

/* pp.fmtString */
static int fmt_str(struct strbuf *sb, const struct spec *f, const char *s, size_t n)
{
	struct strbuf t = STRBUF_INIT(GT_STR_MAX);
	int rc = 0;

	switch (f->verb) {
	case 'v':
		if (!f->sharpv)
			return pad(sb, f, s, trunc_runes(f, s, n));
		__attribute__((fallthrough)); /* %#v is %q */
	case 'q':
		n = trunc_runes(f, s, n);
		if (f->sharp && can_backquote(s, n))
			rc = sb_addch(&t, '`') ?: sb_addn(&t, s, n) ?: sb_addch(&t, '`');
		else
			rc = quote(&t, s, n, '"', f->plus);
		break;
	case 's':
		return pad(sb, f, s, trunc_runes(f, s, n));
	case 'x':
	case 'X':
		if (f->precp && (size_t)f->prec < n)
			n = (size_t)f->prec;
		if (n == 0)
			return f->widp ? padding(sb, f, f->wid) : 0;
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
		return -EAGAIN; /* a bad verb */
	}
	rc = rc ?: pad(sb, f, t.buf, t.len);
	sb_free(&t);
	return rc;
}

/* printValue of a list or map (Go's reflection path): each element with the verb. */
static int fmt_compound(struct strbuf *sb, struct spec *f, const struct gotmpl_val *v, int depth)
{
	int rc = 0, map = v->kind == GOTMPL_MAP;
	size_t i, n = map ? v->u.m.n : v->u.l.n;

	if (depth > 50)
		return sb_add(sb, map ? "map[...]" : "[...]");
	if (f->sharpv)
		rc = sb_add(sb, gotmpl_typename(v)) ?: sb_addch(sb, '{');
	else
		rc = sb_add(sb, map ? "map[" : "[");
	for (i = 0; i < n && !rc; i++) {
		const struct gotmpl_val *e = map ? v->u.m.e[i].v : v->u.l.v[i];

		if (i)
			rc = sb_add(sb, f->sharpv ? ", " : " ");
		if (!rc && map) {
			struct gotmpl_val key = {.kind = GOTMPL_STRING};

			key.u.s.p = (char *)v->u.m.e[i].k;
			key.u.s.n = v->u.m.e[i].klen;
			rc = fmt_value(sb, f, &key, depth + 1) ?: sb_addch(sb, ':');
		}
		if (rc)
			break;
		if (e->kind ==
		    GOTMPL_NIL) /* an interface holding nil: printValue's Interface case */
			rc = sb_add(sb, f->sharpv ? "interface {}(nil)" : "<nil>");
		else
			rc = fmt_value(sb, f, e, depth + 1);
	}
	return rc ?: sb_addch(sb, f->sharpv ? '}' : ']');
}

/* printArg (depth 0) and printValue (elements) of v with f. */
static int fmt_value(struct strbuf *sb, struct spec *f, const struct gotmpl_val *v, int depth)
{
	int rc;

	if (v->kind == GOTMPL_NIL) {
		if (f->verb == 'v' || f->verb == 'T')
			return pad(sb, f, "<nil>", 5);
		return bad_verb(sb, f, v);
	}
	if (f->verb == 'T' && depth == 0) {
		struct spec g = *f;
		const char *tn = gotmpl_typename(v);

		g.verb = 's';
		return fmt_str(sb, &g, tn, strlen(tn));
	}
	if (f->verb == 'p' && depth == 0 && (v->kind == GOTMPL_LIST || v->kind == GOTMPL_MAP))
		return -ENOTSUP; /* Go prints its address */
	switch (v->kind) {
	case GOTMPL_BOOL:
		if (f->verb == 'v' || f->verb == 't')
			return pad(sb, f, v->u.b ? "true" : "false", v->u.b ? 4 : 5);
		break;
	case GOTMPL_INT:
		if (f->verb == 'v' || f->verb == 'd') {
			struct spec g = *f;

			g.verb = 'd';
			return fmt_int(sb, &g, v->u.i, gotmpl_bigu(v));
		}
		if (f->verb < 0x80 && strchr("bcoOqxXU", (int)f->verb))
			return fmt_int(sb, f, v->u.i, gotmpl_bigu(v));
		break;
	case GOTMPL_FLOAT:
		if (f->verb < 0x80 && strchr("vbgGxXfeEF", (int)f->verb))
			return fmt_float(sb, f, v->u.f);
		break;
	case GOTMPL_STRING:
		rc = fmt_str(sb, f, v->u.s.p, v->u.s.n);
		if (rc != -EAGAIN)
			return rc;
		break;
	case GOTMPL_LIST:
		if (v->sub == GT_BYTES && f->sharpv) { /* fmtBytes: []byte{0x22, 0x31} */
			struct spec g = *f;

			g.verb = 'x';
			g.sharp = 1;
			g.sharpv = 0;
			rc = sb_add(sb, "[]byte{");
			for (size_t i = 0; i < v->u.l.n && !rc; i++)
				rc = (i ? sb_add(sb, ", ") : 0)
					 ?: fmt_int(sb, &g, v->u.l.v[i]->u.i, 1);
			return rc ?: sb_addch(sb, '}');
		}
		if (v->sub == GT_BYTES && f->verb < 0x80 && strchr("sqxX", (int)f->verb)) {
			struct strbuf s =
			    STRBUF_INIT(GT_STR_MAX); /* fmtBytes: these print the text */

			rc = gotmpl_bytes_text(&s, v) ?: fmt_str(sb, f, s.buf ? s.buf : "", s.len);
			sb_free(&s);
			return rc;
		}
		return fmt_compound(sb, f, v, depth);
	case GOTMPL_MAP:
		return fmt_compound(sb, f, v, depth);
	case GT_OBJ: { /* fmt's handleMethods: a Stringer for v, s, x, X, q (not %#v) */
		struct strbuf s = STRBUF_INIT(GT_STR_MAX);
		struct spec g = *f;

		if (f->sharpv || f->verb >= 0x80 || !strchr("vsqxX", (int)f->verb))
			return -ENOTSUP;
		g.sharpv = 0;
		rc = gotmpl_fmt_v(&s, v) ?: fmt_str(sb, &g, s.buf ? s.buf : "", s.len);
		sb_free(&s);
		return rc;
	}
	}
	return bad_verb(sb, f, v);
}

/* intFromArg: argv[*ai] as a width or precision; -1 when it is no int or too large. */
static int star_arg(struct gotmpl_val **argv, int argc, int *ai, int *out)
{
	const struct gotmpl_val *v;

	if (*ai >= argc)
		return -1;
	v = argv[(*ai)++];
	if (v->kind != GOTMPL_INT || v->u.i > 1000000 || v->u.i < -1000000)
		return -1;
	*out = (int)v->u.i;
	return 0;
}

/* parsenum: digits at fmt[*i..flen); 0 none, 1 a number, -1 too large (*i = flen). */
static int parse_num(const char *fmt, size_t flen, size_t *i, int *out)
{
	int found = 0;
	long n = 0;

	for (; *i < flen && fmt[*i] >= '0' && fmt[*i] <= '9'; (*i)++) {
		if (n > 1000000) {
			*i = flen;
			*out = 0;
			return -1;
		}
		n = n * 10 + fmt[*i] - '0';
		found = 1;
	}
	*out = (int)n;
	return found;
}

/* argNumber: an explicit index "[n]" at fmt[*i]; *ai set when it names an argument, *good
 * cleared when it does not; returns whether it was well-formed (Go's found). */
static int arg_number(const char *fmt, size_t flen, size_t *i, int *ai, int argc, int *good,
		      int *reordered)
{
	const char *f = fmt + *i;
	size_t n = flen - *i, j, wid = 1;
	int ok = 0, idx = 0;

	if (*i >= flen || fmt[*i] != '[')
		return 0;
	*reordered = 1;
	if (n >= 3) {
		for (j = 1; j < n && f[j] != ']'; j++)
			;
		if (j < n) {
			size_t k = 1;
			int num;

			wid = j + 1;
			if (parse_num(f, j, &k, &num) == 1 && k == j) {
				ok = 1;
				idx = num - 1;
			}
		}
	}
	*i += wid;
	if (ok && idx >= 0 && idx < argc) {
		*ai = idx;
		return 1;
	}
	*good = 0;
	return ok;
}

int gotmpl_sprintf(struct gotmpl_fctx *c, struct strbuf *sb, const char *fmt, size_t flen,
		   struct gotmpl_val **argv, int argc)
{
	int ai = 0, rc = 0, reordered = 0;
	size_t i = 0;

	while (i < flen && !rc) {
		struct spec f = {0};
		size_t start = i;
		int good = 1, after;
		uint32_t verb;

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
		after = arg_number(fmt, flen, &i, &ai, argc, &good, &reordered);
		if (i < flen && fmt[i] == '*') {
			i++;
			f.widp = star_arg(argv, argc, &ai, &f.wid) == 0;
			if (!f.widp)
				f.wid = 0, rc = sb_add(sb, "%!(BADWIDTH)");
			if (f.wid < 0)
				f.minus = 1, f.wid = -f.wid, f.zero = 0;
			after = 0;
		} else {
			f.widp = parse_num(fmt, flen, &i, &f.wid) == 1;
			if (after && f.widp)
				good = 0;
		}
		if (i + 1 < flen && fmt[i] == '.') {
			i++;
			if (after)
				good = 0;
			after = arg_number(fmt, flen, &i, &ai, argc, &good, &reordered);
			if (i < flen && fmt[i] == '*') {
				i++;
				f.precp = star_arg(argv, argc, &ai, &f.prec) == 0;
				if (f.prec < 0)
					f.prec = 0, f.precp = 0;
				if (!f.precp)
					rc = rc ?: sb_add(sb, "%!(BADPREC)");
				after = 0;
			} else {
				f.precp = 1;
				if (parse_num(fmt, flen, &i, &f.prec) != 1)
					f.precp = 1, f.prec = 0;
			}
		}
		if (!after)
			after = arg_number(fmt, flen, &i, &ai, argc, &good, &reordered);
		if (rc)
			break;
		if (i >= flen) {
			rc = sb_add(sb, "%!(NOVERB)");
			break;
		}
		i += (size_t)gotmpl_utf8(fmt + i, flen - i, &verb);
		f.verb = verb;
		if (verb == '%') {
			rc = sb_addch(sb, '%');
			continue;
		}
		if (!good || ai >= argc) {
			rc = sb_add(sb, "%!") ?: gotmpl_put_utf8(sb, verb)
						  ?: sb_add(sb, good ? "(MISSING)" : "(BADINDEX)");
			continue;
		}
		if (verb == 'v') {
			f.sharpv = f.sharp, f.sharp = 0;
			f.plusv = f.plus, f.plus = 0;
		}
		rc = fmt_value(sb, &f, argv[ai++], 0);
		if (rc == -ENOTSUP)
			return gotmpl_fail(c,
					   "%%%s%c of %s: nodeprobe prints it only with %%v, %%s, "
					   "%%q, %%x or %%X (Go would print its fields or address)",
					   f.sharpv ? "#" : "", verb < 0x80 ? (char)verb : '?',
					   gotmpl_typename(argv[ai - 1]));
	}
	if (!rc && !reordered && ai < argc) {
		struct spec v = {.verb = 'v'};

		rc = sb_add(sb, "%!(EXTRA ");
		for (int k = ai; k < argc && !rc; k++) {
			if (k > ai)
				rc = sb_add(sb, ", ");
			if (argv[k]->kind == GOTMPL_NIL)
				rc = rc ?: sb_add(sb, "<nil>");
			else
				rc = rc ?: sb_addf(sb, "%s=", gotmpl_typename(argv[k]))
					      ?: fmt_value(sb, &v, argv[k], 0);
		}
		rc = rc ?: sb_addch(sb, ')');
	}
	return rc;
}
