/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_sprig_num: Sprig v3's defaults, conversions, string lists and arithmetic. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

/* ---- defaults ---- */

GT_FN(f_default)
{
	(void)c;
	*res = ac < 2 || !gotmpl_truth(av[1]) ? av[0] : av[1];
	return 0;
}

GT_FN(f_empty)
{
	(void)ac;
	GT_RES(gotmpl_bool(c->a, !gotmpl_truth(av[0])));
}

GT_FN(f_coalesce)
{
	(void)c;
	*res = GT_NIL;
	for (int i = 0; i < ac; i++)
		if (gotmpl_truth(av[i])) {
			*res = av[i];
			break;
		}
	return 0;
}

GT_FN(f_all)
{
	int t = 1;

	for (int i = 0; i < ac; i++)
		t = t && gotmpl_truth(av[i]);
	GT_RES(gotmpl_bool(c->a, t));
}

GT_FN(f_any)
{
	int t = 0;

	for (int i = 0; i < ac; i++)
		t = t || gotmpl_truth(av[i]);
	GT_RES(gotmpl_bool(c->a, t));
}

GT_FN(f_ternary)
{
	(void)c;
	(void)ac;
	*res = av[2]->u.b ? av[0] : av[1];
	return 0;
}

/* ---- conversions ---- */

/* Sprig's strslice: a list's non-nil elements as strings; anything else a one-element list. */
static struct gotmpl_val *strslice(struct gotmpl_fctx *c, const struct gotmpl_val *v)
{
	struct gotmpl_val *r;

	if (v->kind == GOTMPL_LIST && v->sub == GT_STRS)
		return (struct gotmpl_val *)v;
	r = gotmpl_list(c->a, v->kind == GOTMPL_LIST ? v->u.l.n : 1, GT_STRS);
	if (!r)
		return NULL;
	if (v->kind != GOTMPL_LIST) {
		if (v->kind != GOTMPL_NIL && !(r->u.l.v[r->u.l.n++] = gotmpl_tostring(c, v)))
			return NULL;
		return r;
	}
	for (size_t i = 0; i < v->u.l.n; i++)
		if (v->u.l.v[i]->kind != GOTMPL_NIL &&
		    !(r->u.l.v[r->u.l.n++] = gotmpl_tostring(c, v->u.l.v[i])))
			return NULL;
	return r;
}

GT_FN(f_tostrings)
{
	(void)ac;
	GT_RES(strslice(c, av[0]));
}

GT_FN(f_tostring)
{
	(void)ac;
	GT_RES(gotmpl_tostring(c, av[0]));
}

GT_FN(f_join)
{
	struct gotmpl_val *l = strslice(c, av[1]);
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	int rc = 0;

	(void)ac;
	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < l->u.l.n && !rc; i++)
		rc = (i ? sb_addn(&sb, av[0]->u.s.p, av[0]->u.s.n) : 0)
			 ?: sb_addn(&sb, l->u.l.v[i]->u.s.p, l->u.l.v[i]->u.s.n);
	if (rc) {
		sb_free(&sb);
		return rc;
	}
	GT_RES(gotmpl_take(c, &sb));
}

static int cmp_vals(const void *a, const void *b)
{
	return gotmpl_strcmp(*(struct gotmpl_val *const *)a, *(struct gotmpl_val *const *)b);
}

GT_FN(f_sortalpha)
{
	struct gotmpl_val *l;

	(void)ac;
	if (av[0]->kind != GOTMPL_LIST) {
		struct gotmpl_val *s = gotmpl_tostring(c, av[0]);

		l = s ? gotmpl_list(c->a, 1, GT_STRS) : NULL;
		if (!l)
			return -ENOMEM;
		l->u.l.v[l->u.l.n++] = s;
		*res = l;
		return 0;
	}
	l = strslice(c, av[0]);
	if (!l)
		return -ENOMEM;
	{
		struct gotmpl_val *copy = gotmpl_list(c->a, l->u.l.n, GT_STRS);

		if (!copy)
			return -ENOMEM;
		if (l->u.l.n)
			memcpy(copy->u.l.v, l->u.l.v, l->u.l.n * sizeof(*l->u.l.v));
		copy->u.l.n = l->u.l.n;
		l = copy;
	}
	{ /* qsort's compares: each byte is read at most once a level, log2(n) levels */
		size_t bytes = 0, levels = 1;

		for (size_t i = 0; i < l->u.l.n; i++)
			bytes += l->u.l.v[i]->u.s.n;
		while (((size_t)1 << levels) < l->u.l.n)
			levels++;
		if (gotmpl_work(c->a, bytes * levels))
			return -ELOOP;
	}
	qsort(l->u.l.v, l->u.l.n, sizeof(*l->u.l.v), cmp_vals);
	*res = l;
	return 0;
}

GT_FN(f_atoi)
{
	const char *s = av[0]->u.s.p;
	char *end;
	long long v;

	(void)ac;
	errno = 0;
	v = strtoll(s, &end, 10);
	/* strconv.Atoi: digits after an optional sign; out of range is clamped (its ErrRange
	 * ignored by Sprig), as strtoll clamps */
	if (!av[0]->u.s.n || end != s + av[0]->u.s.n || (errno && errno != ERANGE) ||
	    !(s[0] == '+' || s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) ||
	    ((s[0] == '+' || s[0] == '-') && !(s[1] >= '0' && s[1] <= '9')))
		v = 0;
	GT_RES(gotmpl_int(c->a, v, GT_PLAIN));
}

GT_FN(f_int)
{
	(void)ac;
	GT_RES(gotmpl_int(c->a, gotmpl_toint64(av[0]), GT_PLAIN));
}

GT_FN(f_int64)
{
	(void)ac;
	GT_RES(gotmpl_int(c->a, gotmpl_toint64(av[0]), GT_INT64));
}

GT_FN(f_float64)
{
	(void)ac;
	GT_RES(gotmpl_float(c->a, gotmpl_tofloat64(av[0])));
}

GT_FN(f_todecimal)
{
	struct gotmpl_val *s = gotmpl_tostring(c, av[0]);
	char *end;
	long long v;

	(void)ac;
	if (!s)
		return -ENOMEM;
	errno = 0;
	v = strtoll(s->u.s.p, &end, 8);
	if (!s->u.s.n || *end || errno || s->u.s.p[0] == ' ')
		v = 0;
	GT_RES(gotmpl_int(c->a, v, GT_INT64));
}

/* split / splitn: Go's strings.SplitN(s, sep, n) as a list of strings. */
static struct gotmpl_val *split_n(struct gotmpl_fctx *c, const struct gotmpl_val *s,
				  const struct gotmpl_val *sep, int64_t n)
{
	struct gotmpl_val *l = gotmpl_list(c->a, 0, GT_STRS);
	size_t i = 0;

	if (!l || n == 0)
		return l;
	if (sep->u.s.n == 0) { /* one element per rune */
		uint32_t r;

		while (i < s->u.s.n) {
			int len = (n > 0 && (int64_t)l->u.l.n == n - 1)
				      ? (int)(s->u.s.n - i)
				      : gotmpl_utf8(s->u.s.p + i, s->u.s.n - i, &r);

			if (gotmpl_alist_push(c->a, l, gotmpl_str(c->a, s->u.s.p + i, (size_t)len)))
				return NULL;
			i += (size_t)len;
		}
		return l;
	}
	for (;;) {
		const char *m = (n > 0 && (int64_t)l->u.l.n == n - 1)
				    ? NULL
				    : memmem(s->u.s.p + i, s->u.s.n - i, sep->u.s.p, sep->u.s.n);
		size_t end = m ? (size_t)(m - s->u.s.p) : s->u.s.n;
		struct gotmpl_val *part = gotmpl_str(c->a, s->u.s.p + i, end - i);

		if (!part || gotmpl_alist_push(c->a, l, part))
			return NULL;
		if (!m)
			return l;
		i = end + sep->u.s.n;
	}
}

static int as_parts(struct gotmpl_fctx *c, struct gotmpl_val *l, struct gotmpl_val **res)
{
	struct gotmpl_val *m = l ? gotmpl_map(c->a, GT_STRS) : NULL;
	char k[32];

	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < l->u.l.n; i++) {
		int n = snprintf(k, sizeof(k), "_%zu", i);

		if (gotmpl_map_put(c->a, m, k, (size_t)n, l->u.l.v[i]))
			return -ENOMEM;
	}
	*res = m;
	return 0;
}

GT_FN(f_split)
{
	(void)ac;
	return as_parts(c, split_n(c, av[1], av[0], -1), res);
}

GT_FN(f_splitn)
{
	(void)ac;
	return as_parts(c, split_n(c, av[2], av[0], av[1]->u.i), res);
}

GT_FN(f_splitlist)
{
	(void)ac;
	GT_RES(split_n(c, av[1], av[0], -1));
}

/* ---- numbers ---- */

static struct gotmpl_val *until_step(struct gotmpl_fctx *c, int64_t start, int64_t stop,
				     int64_t step)
{
	struct gotmpl_val *l = gotmpl_list(c->a, 0, GT_INTS); /* Sprig's untilStep: a []int */

	if (!l)
		return NULL;
	if (stop < start) {
		if (step >= 0)
			return l;
		for (int64_t i = start; i > stop; i += step)
			if (gotmpl_alist_push(c->a, l, gotmpl_int(c->a, i, GT_PLAIN)))
				return NULL;
		return l;
	}
	if (step <= 0)
		return l;
	for (int64_t i = start; i < stop; i += step)
		if (gotmpl_alist_push(c->a, l, gotmpl_int(c->a, i, GT_PLAIN)))
			return NULL;
	return l;
}

GT_FN(f_until)
{
	(void)ac;
	GT_RES(until_step(c, 0, av[0]->u.i, av[0]->u.i < 0 ? -1 : 1));
}

GT_FN(f_untilstep)
{
	(void)ac;
	GT_RES(until_step(c, av[0]->u.i, av[1]->u.i, av[2]->u.i));
}

GT_FN(f_seq)
{
	int64_t start = 1, end, step = 1, inc = 1;
	struct gotmpl_val *l;
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	int rc = 0;

	switch (ac) {
	case 1:
		end = av[0]->u.i;
		inc = end < start ? -1 : 1;
		step = inc;
		break;
	case 2:
		start = av[0]->u.i;
		end = av[1]->u.i;
		step = inc = end < start ? -1 : 1;
		break;
	case 3:
		start = av[0]->u.i;
		step = av[1]->u.i;
		end = av[2]->u.i;
		if (end < start) {
			inc = -1;
			if (step > 0)
				GT_RES(gotmpl_str(c->a, "", 0));
		}
		break;
	default:
		GT_RES(gotmpl_str(c->a, "", 0));
	}
	l = until_step(c, start, end + inc, step);
	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < l->u.l.n && !rc; i++)
		rc = sb_addf(&sb, i ? " %lld" : "%lld", (long long)l->u.l.v[i]->u.i);
	if (rc) {
		sb_free(&sb);
		return rc;
	}
	GT_RES(gotmpl_take(c, &sb));
}

GT_FN(f_add1)
{
	(void)ac;
	GT_RES(gotmpl_int(c->a, (int64_t)((uint64_t)gotmpl_toint64(av[0]) + 1), GT_INT64));
}

GT_FN(f_add)
{
	uint64_t s = 0;

	for (int i = 0; i < ac; i++)
		s += (uint64_t)gotmpl_toint64(av[i]);
	GT_RES(gotmpl_int(c->a, (int64_t)s, GT_INT64));
}

GT_FN(f_sub)
{
	(void)ac;
	GT_RES(gotmpl_int(
	    c->a, (int64_t)((uint64_t)gotmpl_toint64(av[0]) - (uint64_t)gotmpl_toint64(av[1])),
	    GT_INT64));
}

GT_FN(f_mul)
{
	uint64_t s = (uint64_t)gotmpl_toint64(av[0]);

	for (int i = 1; i < ac; i++)
		s *= (uint64_t)gotmpl_toint64(av[i]);
	GT_RES(gotmpl_int(c->a, (int64_t)s, GT_INT64));
}

static int divmod(struct gotmpl_fctx *c, struct gotmpl_val **av, int mod, struct gotmpl_val **res)
{
	int64_t a = gotmpl_toint64(av[0]), b = gotmpl_toint64(av[1]);

	if (b == 0)
		return gotmpl_fail(c, "runtime error: integer divide by zero");
	if (b == -1)
		GT_RES(gotmpl_int(c->a, mod ? 0 : (int64_t)(0 - (uint64_t)a), GT_INT64));
	GT_RES(gotmpl_int(c->a, mod ? a % b : a / b, GT_INT64));
}

GT_FN(f_div)
{
	(void)ac;
	return divmod(c, av, 0, res);
}

GT_FN(f_mod)
{
	(void)ac;
	return divmod(c, av, 1, res);
}

GT_FN(f_max)
{
	int64_t m = gotmpl_toint64(av[0]);

	for (int i = 1; i < ac; i++)
		if (gotmpl_toint64(av[i]) > m)
			m = gotmpl_toint64(av[i]);
	GT_RES(gotmpl_int(c->a, m, GT_INT64));
}

GT_FN(f_min)
{
	int64_t m = gotmpl_toint64(av[0]);

	for (int i = 1; i < ac; i++)
		if (gotmpl_toint64(av[i]) < m)
			m = gotmpl_toint64(av[i]);
	GT_RES(gotmpl_int(c->a, m, GT_INT64));
}

/*
 * Go's math.Max and math.Min (special cases: an infinity of the winning sign wins, then NaN, then
 * +0 over -0 for Max, -0 over +0 for Min), written here as libm's fmax/fmin ignore a NaN and
 * nodeprobe then loads no libm.
 */
static double go_max(double x, double y)
{
	if (isinf(x) && x > 0)
		return x;
	if (isinf(y) && y > 0)
		return y;
	if (isnan(x) || isnan(y))
		return NAN;
	if (x == 0 && x == y)
		return signbit(x) ? y : x;
	return x > y ? x : y;
}

static double go_min(double x, double y)
{
	if (isinf(x) && x < 0)
		return x;
	if (isinf(y) && y < 0)
		return y;
	if (isnan(x) || isnan(y))
		return NAN;
	if (x == 0 && x == y)
		return signbit(x) ? x : y;
	return x < y ? x : y;
}

/* 10^p correctly rounded (as glibc's pow gives it): exact products up to 1e22, else strtod. */
static double pow10i(int64_t p)
{
	char buf[32];
	double r = 1;

	if (p >= 0 && p <= 22) {
		while (p--)
			r *= 10;
		return r;
	}
	snprintf(buf, sizeof(buf), "1e%lld", (long long)(p < -400 ? -400 : p > 400 ? 400 : p));
	return strtod(buf, NULL);
}

GT_FN(f_maxf)
{
	double m = gotmpl_tofloat64(av[0]);

	for (int i = 1; i < ac; i++)
		m = go_max(m, gotmpl_tofloat64(av[i]));
	GT_RES(gotmpl_float(c->a, m));
}

GT_FN(f_minf)
{
	double m = gotmpl_tofloat64(av[0]);

	for (int i = 1; i < ac; i++)
		m = go_min(m, gotmpl_tofloat64(av[i]));
	GT_RES(gotmpl_float(c->a, m));
}

GT_FN(f_ceil)
{
	(void)ac;
	GT_RES(gotmpl_float(c->a, ceil(gotmpl_tofloat64(av[0]))));
}

GT_FN(f_floor)
{
	(void)ac;
	GT_RES(gotmpl_float(c->a, floor(gotmpl_tofloat64(av[0]))));
}

GT_FN(f_round)
{
	double on = ac > 2 ? av[2]->u.f : 0.5, pow10 = pow10i(av[1]->u.i);
	double d = pow10 * gotmpl_tofloat64(av[0]), r;

	/* math.Modf's fractional part; an infinity's is 0 (floor and ceil agree on it anyway) */
	r = (isinf(d) ? 0 : d - trunc(d)) >= on ? ceil(d) : floor(d);
	GT_RES(gotmpl_float(c->a, r / pow10));
}

/*
 * Sprig's execDecimalOp (numeric.go): each operand becomes shopspring/decimal's NewFromFloat
 * (the shortest decimal that reads back as the float64), the operation runs exactly in decimal
 * (Div rounds to DivisionPrecision, 16 places, half away from zero), and the result is the
 * float64 nearest to it (Float64, through big.Rat). Here a decimal is sign, a 128-bit
 * coefficient and a power of ten; an operation whose exact result does not fit 38 digits falls
 * back to binary arithmetic (a last-digit difference from Go at worst).
 */
#ifdef __SIZEOF_INT128__
typedef unsigned __int128 dec_coef;  /* 38 digits */
#define DEC_MAX ((dec_coef)1 << 126) /* leave room for one more decimal digit */
#else
/* 32-bit targets (armhf) have no 128-bit integer: 18 digits, enough for every operand (a float's
 * shortest decimal has at most 17) and for sums; a product or quotient past them falls back to
 * binary arithmetic, as any result past 38 digits does elsewhere. */
typedef unsigned long long dec_coef;
#define DEC_MAX ((dec_coef)1 << 62)
#endif

struct dec {
	int neg;
	dec_coef m; /* coefficient */
	int e;	    /* value = m * 10^e */
};

/* NewFromFloat: f's shortest decimal; -1 for NaN and the infinities (Sprig panics there). */
static int dec_from(double f, struct dec *d)
{
	struct strbuf sb = STRBUF_INIT(64);
	const char *p;
	int rc = 0, frac = -1;

	if (!isfinite(f))
		return -1;
	*d = (struct dec){.neg = signbit(f) != 0};
	if (f == 0)
		return 0;
	if (gotmpl_fmt_float(&sb, fabs(f), 'e', -1)) {
		sb_free(&sb);
		return -1;
	}
	for (p = sb.buf; *p && *p != 'e'; p++) { /* "d.ddde+XX" */
		if (*p == '.') {
			frac = 0;
		} else {
			d->m = d->m * 10 + (unsigned)(*p - '0');
			frac += frac >= 0;
		}
	}
	d->e = (*p == 'e' ? atoi(p + 1) : 0) - (frac > 0 ? frac : 0);
	sb_free(&sb);
	return rc;
}

/* m * 10^k, or -1 when it would not fit. */
static int dec_scale(dec_coef *m, int k)
{
	for (; k > 0; k--) {
		if (*m > DEC_MAX / 10)
			return -1;
		*m *= 10;
	}
	return 0;
}

/* The float64 nearest to d (strtod rounds correctly). */
static double dec_float(const struct dec *d)
{
	char buf[64], *p = buf + sizeof(buf) - 1;
	dec_coef m = d->m;

	*p = 0;
	do {
		*--p = (char)('0' + (int)(m % 10));
		m /= 10;
	} while (m);
	{
		char out[96];

		/* a decimal has no negative zero */
		snprintf(out, sizeof(out), "%s%se%d", d->neg && d->m ? "-" : "", p, d->e);
		return strtod(out, NULL);
	}
}

/* a op b exactly (division: rounded to 16 places); -1 when it does not fit. */
static int dec_op(struct dec *a, const struct dec *b, char op)
{
	dec_coef x = a->m, y = b->m;

	if (op == '*') {
		if (x && y > DEC_MAX / x)
			return -1;
		a->m = x * y;
		a->e += b->e;
		a->neg ^= b->neg;
		return 0;
	}
	if (op == '/') { /* round(x * 10^(a.e - b.e + 16) / y) * 10^-16 */
		int k = a->e - b->e + 16;
		dec_coef q, r;

		if (k >= 0 ? dec_scale(&x, k) : dec_scale(&y, -k))
			return -1;
		q = x / y;
		r = x % y;
		if (r >= y - r) /* half away from zero */
			q++;
		a->m = q;
		a->e = -16;
		a->neg ^= b->neg;
		return 0;
	}
	/* + and -: align the powers of ten */
	int e = a->e < b->e ? a->e : b->e, bneg = b->neg ^ (op == '-');

	if (dec_scale(&x, a->e - e) || dec_scale(&y, b->e - e))
		return -1;
	a->e = e;
	if (a->neg == bneg) {
		a->m = x + y;
	} else if (x >= y) {
		a->m = x - y;
	} else {
		a->m = y - x;
		a->neg = bneg;
	}
	return 0;
}

static int floatop(struct gotmpl_fctx *c, double acc, struct gotmpl_val **av, int ac, char op,
		   struct gotmpl_val **res)
{
	struct dec d, x;
	int exact = dec_from(acc, &d) == 0;

	if (!exact && !isnan(acc) && !isinf(acc))
		return -ENOMEM;
	if (!exact)
		return gotmpl_fail(c, "Cannot create a Decimal from %s",
				   isnan(acc) ? "NaN"
				   : acc > 0  ? "+Inf"
					      : "-Inf");
	for (int i = 0; i < ac; i++) {
		double b = gotmpl_tofloat64(av[i]);

		if (dec_from(b, &x))
			return gotmpl_fail(c, "Cannot create a Decimal from %s",
					   isnan(b) ? "NaN"
					   : b > 0  ? "+Inf"
						    : "-Inf");
		if (op == '/' && x.m == 0)
			return gotmpl_fail(c, "decimal division by 0");
		if (exact && dec_op(&d, &x, op))
			exact = 0, acc = dec_float(&d);
		if (!exact)
			acc = op == '+'	  ? acc + b
			      : op == '-' ? acc - b
			      : op == '*' ? acc * b
					  : acc / b;
	}
	GT_RES(gotmpl_float(c->a, exact ? dec_float(&d) : acc));
}

GT_FN(f_add1f)
{
	(void)ac;
	return floatop(c, gotmpl_tofloat64(av[0]) + 1, av, 0, '+', res);
}

GT_FN(f_addf)
{
	return floatop(c, 0, av, ac, '+', res);
}

GT_FN(f_subf)
{
	return floatop(c, gotmpl_tofloat64(av[0]), av + 1, ac - 1, '-', res);
}

GT_FN(f_mulf)
{
	return floatop(c, gotmpl_tofloat64(av[0]), av + 1, ac - 1, '*', res);
}

GT_FN(f_divf)
{
	return floatop(c, gotmpl_tofloat64(av[0]), av + 1, ac - 1, '/', res);
}

const struct gotmpl_func gotmpl_sprig_num_funcs[] = {
    {"add", f_add, "*a", 0},
    {"add1", f_add1, "a", 0},
    {"add1f", f_add1f, "a", 0},
    {"addf", f_addf, "*a", 0},
    {"all", f_all, "*a", 0},
    {"any", f_any, "*a", 0},
    {"atoi", f_atoi, "s", 0},
    {"biggest", f_max, "a*a", 0},
    {"ceil", f_ceil, "a", 0},
    {"coalesce", f_coalesce, "*a", 0},
    {"default", f_default, "a*a", 0},
    {"div", f_div, "aa", 0},
    {"divf", f_divf, "a*a", 0},
    {"empty", f_empty, "a", 0},
    {"float64", f_float64, "a", 0},
    {"floor", f_floor, "a", 0},
    {"int", f_int, "a", 0},
    {"int64", f_int64, "a", 0},
    {"join", f_join, "sa", 0},
    {"max", f_max, "a*a", 0},
    {"maxf", f_maxf, "a*a", 0},
    {"min", f_min, "a*a", 0},
    {"minf", f_minf, "a*a", 0},
    {"mod", f_mod, "aa", 0},
    {"mul", f_mul, "a*a", 0},
    {"mulf", f_mulf, "a*a", 0},
    {"round", f_round, "ai*f", 0},
    {"seq", f_seq, "*i", 0},
    {"sortAlpha", f_sortalpha, "a", 0},
    {"split", f_split, "ss", 0},
    {"splitList", f_splitlist, "ss", 0},
    {"splitn", f_splitn, "sis", 0},
    {"sub", f_sub, "aa", 0},
    {"subf", f_subf, "a*a", 0},
    {"ternary", f_ternary, "aab", 0},
    {"toDecimal", f_todecimal, "a", 0},
    {"toString", f_tostring, "a", 0},
    {"toStrings", f_tostrings, "a", 0},
    {"until", f_until, "i", 0},
    {"untilStep", f_untilstep, "iii", 0},
    {NULL, NULL, NULL, 0},
};
