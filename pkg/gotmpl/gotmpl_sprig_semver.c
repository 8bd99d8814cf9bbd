/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gotmpl_sprig_semver: Sprig v3's semver and semverCompare (semver.go), which call
 * Masterminds/semver v3, the v3.4 line NFD v0.19 builds with (its go.mod: v3.4.0; v3.5.0 in other
 * builds; both files read through a code index that gave no commit; CHANGELOG 3.4.0 #267, #269):
 * NewVersion (version.go with CoerceNewVersion true: coerceNewVersion's loose regular expression,
 * "1" and "1.2" coerced, leading zeros in the numbers kept, validatePrerelease/validateMetadata,
 * lowercase errors, "%w" of strconv's error) and NewConstraint/Check (constraints.go with
 * containsPre and IncludePrerelease: its regular expressions, hyphen ranges rewritten as
 * ">= A, <= B " (trailing space), "," and space AND, "||" OR, x, X and * wildcards, and
 * Check's rule that a prerelease version is considered only by an AND group in which some
 * constraint names a prerelease; "constraint parser error"). The regular expressions are Go's,
 * run by RE2 (pkg/goregex), so what matches is what matches in Go.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "goregex/goregex.h"
#include "gotmpl/gotmpl_internal.h"
#include "strbuf/strbuf.h"

/* version.go's semVerRegex and constraints.go's cvRegex and operators */
#define SV_RE                                                                                      \
	"v?([0-9]+)(\\.[0-9]+)?(\\.[0-9]+)?(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?"             \
	"(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?"
#define CV_RE                                                                                      \
	"v?([0-9|x|X|\\*]+)(\\.[0-9|x|X|\\*]+)?(\\.[0-9|x|X|\\*]+)?"                               \
	"(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?"
/* cvRegex with its groups not captured (the same matches; goregex_find returns 10 groups) */
#define CV_NC                                                                                      \
	"v?(?:[0-9|x|X|\\*]+)(?:\\.[0-9|x|X|\\*]+)?(?:\\.[0-9|x|X|\\*]+)?"                         \
	"(?:-(?:[0-9A-Za-z\\-]+(?:\\.[0-9A-Za-z\\-]+)*))?(?:\\+(?:[0-9A-Za-z\\-]+(?:\\.[0-9A-Za-z\\-]+)*))?"
#define OPS_RE "=||!=|>|<|>=|=>|<=|=<|~|~>|\\^"

enum { RE_VERSION, RE_CONSTRAINT, RE_RANGE, RE_FIND, RE_VALID, RE_N };

static const char *const patterns[RE_N] = {
    "^" SV_RE "$",
    "^\\s*(" OPS_RE ")\\s*(" CV_RE ")\\s*$",
    "\\s*(" CV_NC ")\\s+-\\s+(" CV_NC ")\\s*",
    "(" OPS_RE ")\\s*(" CV_NC ")",
    "^(\\s*(" OPS_RE ")\\s*(" CV_RE ")\\s*)((?:\\s+|,\\s*)(" OPS_RE ")\\s*(" CV_RE ")\\s*)*$",
};

#define NM 10 /* groups kept (goregex_find's most) */

enum op { OP_TILDE_OR_EQ, OP_NE, OP_GT, OP_LT, OP_GE, OP_LE, OP_TILDE, OP_CARET };

struct con {
	enum op op;
	struct gotmpl_sv v;
	int dirty, minor_dirty, patch_dirty;
};

struct svctx {
	struct gotmpl_fctx *c;
	struct goregex *re[RE_N];
};

static int compile(struct svctx *x, int which)
{
	char why[128];
	int r;

	if (x->re[which])
		return 0;
	/* a compile is charged 128 units a pattern byte (measured: RE2 compiles these
	 * in about 1 ns a unit; a call of semver "1.2.3" ran 18 us charged its 5 bytes) */
	if (gotmpl_work(x->c->a, 128 * strlen(patterns[which])))
		return -ELOOP;
	r = goregex_compile(patterns[which], GOREGEX_CAPTURE, &x->re[which], why, sizeof(why));
	return r == -EINVAL ? gotmpl_fail(x->c, "semver: %s", why) : r;
}

static void release(struct svctx *x)
{
	int i;

	for (i = 0; i < RE_N; i++)
		goregex_free(x->re[i]);
}

/* Group g of match m in s: its bytes and length ("" for a group that did not take part). */
static const char *grp(const char *s, const long *m, int g, size_t *n)
{
	if (m[2 * g] < 0) {
		*n = 0;
		return "";
	}
	*n = (size_t)(m[2 * g + 1] - m[2 * g]);
	return s + m[2 * g];
}

/* NewVersion(s[0..n)) = coerceNewVersion: 0, or -EINVAL with semver's words. */
static int new_version(struct svctx *x, const char *s, size_t n, struct gotmpl_sv *v)
{
	long m[2 * NM];
	const char *p, *why = NULL;
	size_t k;
	uint64_t *seg[3] = {&v->maj, &v->min, &v->pat};
	int r = compile(x, RE_VERSION), g;

	if (r)
		return r;
	if (!goregex_find(x->re[RE_VERSION], s, n, 0, m, 10))
		return gotmpl_fail(x->c, "invalid semantic version");
	for (g = 1; g <= 3; g++) {
		p = grp(s, m, g, &k);
		*seg[g - 1] = 0;
		if (g > 1 && k)
			p++, k--;
		if ((g == 1 || k) && gotmpl_sv_parse_uint(p, k, seg[g - 1]))
			return gotmpl_fail(x->c,
					   "error parsing version segment: strconv.ParseUint: "
					   "parsing \"%.*s\": value out of range",
					   (int)k, p);
	}
	v->pre = grp(s, m, 5, &v->npre);
	v->meta = grp(s, m, 8, &v->nmeta);
	if (v->npre)
		why = gotmpl_sv_invalid(v->pre, v->npre, 1);
	if (!why && v->nmeta)
		why = gotmpl_sv_invalid(v->meta, v->nmeta, 0);
	return why ? gotmpl_fail(x->c, "%s", why) : 0;
}

static int is_x(const char *s, size_t n)
{
	return n == 1 && (*s == 'x' || *s == 'X' || *s == '*');
}

/* parseConstraint(s[0..n)) */
static int parse_constraint(struct svctx *x, const char *s, size_t n, struct con *c)
{
	static const struct {
		const char *s;
		enum op op;
	} ops[] = {{"", OP_TILDE_OR_EQ}, {"=", OP_TILDE_OR_EQ}, {"!=", OP_NE},	  {">", OP_GT},
		   {"<", OP_LT},	 {">=", OP_GE},		{"=>", OP_GE},	  {"<=", OP_LE},
		   {"=<", OP_LE},	 {"~", OP_TILDE},	{"~>", OP_TILDE}, {"^", OP_CARET}};
	long m[2 * NM];
	const char *op, *ver, *maj, *mnr, *pat, *pre;
	size_t nop, nver, nmaj, nmnr, npat, npre, i;
	char *buf;
	int r = compile(x, RE_CONSTRAINT);

	if (r)
		return r;
	if (!goregex_find(x->re[RE_CONSTRAINT], s, n, 0, m, 7))
		return gotmpl_fail(x->c, "improper constraint: %.*s", (int)n, s);
	op = grp(s, m, 1, &nop);
	ver = grp(s, m, 2, &nver);
	maj = grp(s, m, 3, &nmaj);
	mnr = grp(s, m, 4, &nmnr);
	pat = grp(s, m, 5, &npat);
	pre = grp(s, m, 6, &npre);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strlen(ops[i].s) == nop && memcmp(ops[i].s, op, nop) == 0)
			c->op = ops[i].op;
	c->dirty = c->minor_dirty = c->patch_dirty = 0;
	buf = gotmpl_alloc(x->c->a, nmaj + nmnr + npre + 8);
	if (!buf)
		return -ENOMEM;
	if (is_x(maj, nmaj) || nmaj == 0) {
		c->dirty = 1;
		nver = (size_t)sprintf(buf, "0.0.0%.*s", (int)npre, pre);
		ver = buf;
	} else if ((nmnr && is_x(mnr + 1, nmnr - 1)) || nmnr == 0) {
		c->dirty = c->minor_dirty = 1;
		nver = (size_t)sprintf(buf, "%.*s.0.0%.*s", (int)nmaj, maj, (int)npre, pre);
		ver = buf;
	} else if ((npat && is_x(pat + 1, npat - 1)) || npat == 0) {
		c->dirty = c->patch_dirty = 1;
		nver = (size_t)sprintf(buf, "%.*s%.*s.0%.*s", (int)nmaj, maj, (int)nmnr, mnr,
				       (int)npre, pre);
		ver = buf;
	}
	r = new_version(x, ver, nver, &c->v);
	return r == -EINVAL ? gotmpl_fail(x->c, "constraint parser error") : r;
}

/* constraint.check, without its reasons (Check ignores them); pre: the AND group names one */
static int check(const struct con *c, const struct gotmpl_sv *v, int pre)
{
	const struct gotmpl_sv *k = &c->v;
	int d = gotmpl_sv_compare(v, k);

	if (v->npre && !pre)
		return 0; /* a prerelease only if the group names one (containsPre) */
	switch (c->op) {
	case OP_NE:
		if (c->dirty) {
			if (k->maj != v->maj)
				return 1;
			if (k->min != v->min && !c->minor_dirty)
				return 1;
			if (c->minor_dirty)
				return 0;
			if (k->pat != v->pat && !c->patch_dirty)
				return 1;
			if (c->patch_dirty)
				return (v->npre || k->npre) &&
				       gotmpl_sv_cmp_pre(v->pre, v->npre, k->pre, k->npre) != 0;
		}
		return d != 0;
	case OP_GT:
		if (!c->dirty || (v->maj == k->maj && !c->minor_dirty && !c->patch_dirty))
			return d > 0;
		if (v->maj != k->maj)
			return v->maj > k->maj;
		return c->minor_dirty ? 0 : v->min > k->min;
	case OP_LT:
		return d < 0;
	case OP_GE:
		return d >= 0;
	case OP_LE:
		if (!c->dirty)
			return d <= 0;
		if (v->maj > k->maj)
			return 0;
		return !(v->maj == k->maj && v->min > k->min && !c->minor_dirty);
	case OP_TILDE_OR_EQ:
		if (!c->dirty)
			return d == 0;
		__attribute__((fallthrough)); /* a wildcard is ~ */
	case OP_TILDE:
		if (d < 0)
			return 0;
		if (!k->maj && !k->min && !k->pat && !c->minor_dirty && !c->patch_dirty)
			return 1;
		return v->maj == k->maj && (v->min == k->min || c->minor_dirty);
	case OP_CARET:
		if (d < 0)
			return 0;
		if (k->maj > 0 || c->minor_dirty)
			return v->maj == k->maj;
		if (v->maj > 0)
			return 0;
		if (k->min > 0 || c->patch_dirty)
			return v->min == k->min;
		if (v->min > 0)
			return 0;
		return k->pat == v->pat;
	}
	return 0;
}

/* rewriteRange: each "A - B" as ">= A, <= B " (the first occurrence of its text, as Go). */
static int rewrite_range(struct svctx *x, const char *s, size_t n, struct strbuf *out)
{
	long m[2 * NM];
	size_t pos = 0, nl, n1, n11;
	const char *a, *b, *hit;
	struct strbuf tmp;
	int r = compile(x, RE_RANGE);

	if (!r)
		r = sb_addn(out, s, n);
	while (!r && pos < n && goregex_find(x->re[RE_RANGE], s, n, pos, m, 3)) {
		a = grp(s, m, 1, &n1);
		b = grp(s, m, 2, &n11);
		nl = (size_t)(m[1] - m[0]);
		hit = memmem(out->buf, out->len, s + m[0], nl);
		pos = (size_t)m[1] > pos ? (size_t)m[1] : pos + 1;
		if (!hit)
			continue;
		sb_init(&tmp, GT_STR_MAX);
		r = sb_addn(&tmp, out->buf, (size_t)(hit - out->buf));
		if (!r)
			r = sb_addf(&tmp, ">= %.*s, <= %.*s ", (int)n1, a, (int)n11, b);
		if (!r)
			r = sb_addn(&tmp, hit + nl, out->len - (size_t)(hit - out->buf) - nl);
		sb_free(out);
		*out = tmp;
	}
	return r;
}

/*
 * One "||" branch s[0..n): 1 when every constraint in it admits v, 0 when not, or an error;
 * *pre says whether prereleases are considered. v NULL: only parse it (1 or an error) and set
 * *pre to whether some constraint in it names a prerelease (NewConstraint's containsPre).
 */
static int check_and(struct svctx *x, const char *s, size_t n, const struct gotmpl_sv *v, int *pre)
{
	long m[2 * NM];
	size_t pos = 0;
	struct con c;
	int r = compile(x, RE_VALID), ok = 1, any = 0;

	if (!r)
		r = compile(x, RE_FIND);
	if (r)
		return r;
	if (!goregex_match(x->re[RE_VALID], s, n))
		return gotmpl_fail(x->c, "improper constraint: %.*s", (int)n, s);
	if (!v)
		*pre = 0;
	while (pos < n && goregex_find(x->re[RE_FIND], s, n, pos, m, 2)) {
		r = parse_constraint(x, s + m[0], (size_t)(m[1] - m[0]), &c);
		if (r)
			return r;
		ok = ok && (!v || check(&c, v, *pre));
		*pre |= !v && c.v.npre;
		any = 1;
		pos = (size_t)m[1] > pos ? (size_t)m[1] : pos + 1;
	}
	if (!any) {
		r = parse_constraint(x, s, n, &c);
		if (r)
			return r;
		ok = !v || check(&c, v, *pre);
		*pre |= !v && c.v.npre;
	}
	return ok;
}

/* NewConstraint(cs) then NewVersion(vs) then Check, as Sprig's semverCompare. */
static int semver_compare(struct svctx *x, const struct gotmpl_val *cs, const struct gotmpl_val *vs)
{
	struct strbuf sb;
	struct gotmpl_sv v;
	const char *p, *e, *bar;
	int r, ok = 0, any, pre;

	sb_init(&sb, GT_STR_MAX);
	r = rewrite_range(x, cs->u.s.p, cs->u.s.n, &sb);
	p = sb.buf ? sb.buf : "";
	e = p + sb.len;
	/* NewConstraint parses every branch before Check looks at the version */
	for (; !r; p = bar + 2) {
		bar = memmem(p, (size_t)(e - p), "||", 2);
		if (!bar)
			bar = e;
		any = check_and(x, p, (size_t)(bar - p), NULL, &pre);
		if (any < 0)
			r = any;
		if (bar == e)
			break;
	}
	if (!r)
		r = new_version(x, vs->u.s.p, vs->u.s.n, &v);
	for (p = sb.buf ? sb.buf : ""; !r && !ok; p = bar + 2) {
		bar = memmem(p, (size_t)(e - p), "||", 2);
		if (!bar)
			bar = e;
		ok = check_and(x, p, (size_t)(bar - p), NULL, &pre);
		if (ok >= 0)
			ok = check_and(x, p, (size_t)(bar - p), &v, &pre);
		if (ok < 0)
			r = ok;
		if (bar == e)
			break;
	}
	sb_free(&sb);
	return r ? r : ok;
}

GT_FN(f_semvercompare)
{
	struct svctx x = {.c = c};
	int r = semver_compare(&x, av[0], av[1]);

	(void)ac;
	release(&x);
	if (r < 0)
		return r;
	GT_RES(gotmpl_bool(c->a, r));
}

/* semver: NewVersion's *Version, an object with Version's methods (gotmpl_sprig_semver_obj.c). */
GT_FN(f_semver)
{
	struct svctx x = {.c = c};
	struct gotmpl_sv v;
	int r = new_version(&x, GT_S(0), GT_SN(0), &v);

	(void)ac;
	release(&x);
	if (r)
		return r;
	GT_RES(gotmpl_sv_new(c->a, &v, GT_S(0), GT_SN(0)));
}

const struct gotmpl_func gotmpl_sprig_semver_funcs[] = {
    {"semver", f_semver, "s", 0},
    {"semverCompare", f_semvercompare, "ss", 0},
    {NULL, NULL, NULL, 0},
};
