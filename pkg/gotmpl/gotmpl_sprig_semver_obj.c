/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gotmpl_sprig_semver_obj: the value Sprig's semver returns, Masterminds/semver v3's *Version,
 * with its methods as text/template calls them (version.go of the v3.4 line, the one with
 * CoerceNewVersion; NFD v0.19's go.mod pins semver v3.4.0 under sprig v3.3.0). Receivers as
 * there: String, Major, Minor, Patch, Prerelease, Metadata, IncPatch, IncMinor, IncMajor,
 * SetPrerelease, SetMetadata (and MarshalJSON, MarshalText, Value) take a Version, so a
 * Version value (what IncMajor returns) has them; Original, LessThan, LessThanEqual,
 * GreaterThan, GreaterThanEqual, Equal, Compare (and UnmarshalJSON, UnmarshalText, Scan)
 * take a *Version, so only the pointer semver returns has them (text/template's evalField
 * takes the address of addressable values only, and a method's result is not one).
 */
#include <errno.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"
#include "strbuf/strbuf.h"

struct svobj {
	struct gotmpl_sv v;
	const char *orig; /* original: what NewVersion was given, or what Inc and Set made */
	size_t norig;
};

int gotmpl_sv_parse_uint(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

static int cmp_u(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* Go's string comparison of a[0..na) and b[0..nb). */
static int cmp_bytes(const char *a, size_t na, const char *b, size_t nb)
{
	int d = memcmp(a, b, na < nb ? na : nb);

	return d ? (d < 0 ? -1 : 1) : cmp_u(na, nb);
}

/* comparePrePart */
static int cmp_part(const char *s, size_t ns, const char *o, size_t no)
{
	uint64_t si = 0, oi = 0;
	int sn, on;

	if (ns == no && memcmp(s, o, ns) == 0)
		return 0;
	if (ns == 0)
		return -1;
	if (no == 0)
		return 1;
	sn = gotmpl_sv_parse_uint(s, ns, &si) == 0;
	on = gotmpl_sv_parse_uint(o, no, &oi) == 0;
	if (!sn && !on)
		return cmp_bytes(s, ns, o, no) > 0 ? 1 : -1;
	if (!on)
		return -1; /* o is a string, s a number */
	if (!sn)
		return 1;
	return si > oi ? 1 : -1;
}

int gotmpl_sv_cmp_pre(const char *s, size_t ns, const char *o, size_t no)
{
	size_t i = 0, j = 0, ie, je;
	int d;

	for (;;) {
		for (ie = i; ie < ns && s[ie] != '.'; ie++)
			;
		for (je = j; je < no && o[je] != '.'; je++)
			;
		d = cmp_part(i < ns ? s + i : "", i < ns ? ie - i : 0, j < no ? o + j : "",
			     j < no ? je - j : 0);
		if (d)
			return d;
		if (ie >= ns && je >= no)
			return 0;
		i = ie + 1;
		j = je + 1;
	}
}

int gotmpl_sv_compare(const struct gotmpl_sv *v, const struct gotmpl_sv *o)
{
	int d = cmp_u(v->maj, o->maj);

	if (!d)
		d = cmp_u(v->min, o->min);
	if (!d)
		d = cmp_u(v->pat, o->pat);
	if (d)
		return d;
	if (!v->npre && !o->npre)
		return 0;
	if (!v->npre)
		return 1;
	if (!o->npre)
		return -1;
	return gotmpl_sv_cmp_pre(v->pre, v->npre, o->pre, o->npre);
}

/* Version.String */
static int sv_str(struct strbuf *sb, const void *p)
{
	const struct gotmpl_sv *v = &((const struct svobj *)p)->v;
	int r = sb_addf(sb, "%llu.%llu.%llu", (unsigned long long)v->maj,
			(unsigned long long)v->min, (unsigned long long)v->pat);

	if (!r && v->npre)
		r = sb_addch(sb, '-') ?: sb_addn(sb, v->pre, v->npre);
	if (!r && v->nmeta)
		r = sb_addch(sb, '+') ?: sb_addn(sb, v->meta, v->nmeta);
	return r;
}

static int same_s(const char *a, size_t na, const char *b, size_t nb)
{
	return na == nb && memcmp(a, b, na) == 0;
}

/* reflect.DeepEqual of two Versions: every field, original too */
static int sv_same(const void *pa, const void *pb)
{
	const struct svobj *a = pa, *b = pb;

	return a->v.maj == b->v.maj && a->v.min == b->v.min && a->v.pat == b->v.pat &&
	       same_s(a->v.pre, a->v.npre, b->v.pre, b->v.npre) &&
	       same_s(a->v.meta, a->v.nmeta, b->v.meta, b->v.nmeta) &&
	       same_s(a->orig, a->norig, b->orig, b->norig);
}

static const struct gotmpl_otype sv_ptr, sv_val;

static const struct svobj *self(const struct gotmpl_val *recv)
{
	return recv->u.o.p;
}

static struct gotmpl_val *wrap(struct gotmpl_arena *a, const struct svobj *o,
			       const struct gotmpl_otype *t)
{
	struct gotmpl_val *v = gotmpl_alloc(a, sizeof(*v));

	if (!v)
		return NULL;
	v->kind = GT_OBJ;
	v->arena = 1;
	v->u.o.t = t;
	v->u.o.p = o;
	return v;
}

struct gotmpl_val *gotmpl_sv_new(struct gotmpl_arena *a, const struct gotmpl_sv *v,
				 const char *orig, size_t norig)
{
	struct svobj *o = gotmpl_alloc(a, sizeof(*o));

	if (!o)
		return NULL;
	o->v = *v;
	o->v.pre = gotmpl_strdup(a, v->pre, v->npre);
	o->v.meta = gotmpl_strdup(a, v->meta, v->nmeta);
	o->orig = gotmpl_strdup(a, orig, norig);
	o->norig = norig;
	if (!o->v.pre || !o->v.meta || !o->orig)
		return NULL;
	return wrap(a, o, &sv_ptr);
}

struct gotmpl_val *gotmpl_obj_zero(struct gotmpl_arena *a, const struct gotmpl_val *v)
{
	struct svobj *o = gotmpl_alloc(a, sizeof(*o));

	if (!o)
		return NULL;
	memset(o, 0, sizeof(*o));
	o->v.pre = o->v.meta = o->orig = "";
	return wrap(a, o, v->u.o.t);
}

/* ---- the methods ---- */

#define SV_M(name)                                                                                 \
	static int name(struct gotmpl_fctx *c, const struct gotmpl_val *recv,                      \
			struct gotmpl_val **av, struct gotmpl_val **res)

SV_M(m_string)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);

	(void)av;
	return gotmpl_done(c, &sb, sv_str(&sb, self(recv)), res);
}

/* MarshalJSON (json.Marshal of String(): no byte of it needs escaping) and MarshalText: a []byte */
static int marshal(struct gotmpl_fctx *c, const struct gotmpl_val *recv, int json,
		   struct gotmpl_val **res)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	int rc = (json ? sb_addch(&sb, '"') : 0) ?: sv_str(&sb, self(recv));

	rc = rc ?: (json ? sb_addch(&sb, '"') : 0);
	*res = rc ? NULL : gotmpl_bytes(c->a, sb.buf ? sb.buf : "", sb.len);
	sb_free(&sb);
	return rc ? (rc == -ENOMEM ? -ENOMEM : -E2BIG) : *res ? 0 : -ENOMEM;
}

SV_M(m_marshaljson)
{
	(void)av;
	return marshal(c, recv, 1, res);
}

SV_M(m_marshaltext)
{
	(void)av;
	return marshal(c, recv, 0, res);
}

SV_M(m_original)
{
	(void)av;
	GT_RES(gotmpl_str(c->a, self(recv)->orig, self(recv)->norig));
}

/* A uint64 result (Major, Minor, Patch): its bits, as GT_UINT64 holds them. */
static int uint_res(struct gotmpl_fctx *c, uint64_t u, struct gotmpl_val **res)
{
	GT_RES(gotmpl_int(c->a, (int64_t)u, GT_UINT64));
}

SV_M(m_major)
{
	(void)av;
	return uint_res(c, self(recv)->v.maj, res);
}

SV_M(m_minor)
{
	(void)av;
	return uint_res(c, self(recv)->v.min, res);
}

SV_M(m_patch)
{
	(void)av;
	return uint_res(c, self(recv)->v.pat, res);
}

SV_M(m_prerelease)
{
	(void)av;
	GT_RES(gotmpl_str(c->a, self(recv)->v.pre, self(recv)->v.npre));
}

SV_M(m_metadata)
{
	(void)av;
	GT_RES(gotmpl_str(c->a, self(recv)->v.meta, self(recv)->v.nmeta));
}

/* vNext's original: originalVPrefix() + vNext.String(); the result is a Version value. */
static int next(struct gotmpl_fctx *c, const struct svobj *from, struct svobj *n,
		struct gotmpl_val **res)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	int r = from->norig && from->orig[0] == 'v' ? sb_addch(&sb, 'v') : 0;

	r = r ?: sv_str(&sb, n);
	if (r) {
		sb_free(&sb);
		return r == -ENOMEM ? -ENOMEM : -E2BIG;
	}
	n->norig = sb.len;
	n->orig = gotmpl_strdup(c->a, sb.buf ? sb.buf : "", sb.len);
	sb_free(&sb);
	if (!n->orig)
		return -ENOMEM;
	GT_RES(wrap(c->a, n, &sv_val));
}

static struct svobj *copy(struct gotmpl_fctx *c, const struct gotmpl_val *recv)
{
	struct svobj *n = gotmpl_alloc(c->a, sizeof(*n));

	if (n)
		*n = *self(recv);
	return n;
}

/* IncPatch, IncMinor, IncMajor: which 0, 1, 2 */
static int inc(struct gotmpl_fctx *c, const struct gotmpl_val *recv, int which,
	       struct gotmpl_val **res)
{
	struct svobj *n = copy(c, recv);

	if (!n)
		return -ENOMEM;
	if (which == 0 && !n->v.npre)
		n->v.pat++;
	if (which == 1) {
		n->v.pat = 0;
		n->v.min++;
	}
	if (which == 2) {
		n->v.pat = n->v.min = 0;
		n->v.maj++;
	}
	n->v.pre = n->v.meta = "";
	n->v.npre = n->v.nmeta = 0;
	return next(c, self(recv), n, res);
}

SV_M(m_incpatch)
{
	(void)av;
	return inc(c, recv, 0, res);
}

SV_M(m_incminor)
{
	(void)av;
	return inc(c, recv, 1, res);
}

SV_M(m_incmajor)
{
	(void)av;
	return inc(c, recv, 2, res);
}

const char *gotmpl_sv_invalid(const char *s, size_t n, int pre)
{
	static const char allowed[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789";
	size_t i = 0, j, k, digits;

	for (;; i = j + 1) {
		for (j = i; j < n && s[j] != '.'; j++)
			;
		if (j == i)
			return pre ? "invalid prerelease string" : "invalid metadata string";
		for (k = i, digits = 0; k < j; k++) {
			if (!memchr(allowed, s[k], sizeof(allowed) - 1))
				return pre ? "invalid prerelease string"
					   : "invalid metadata string";
			digits += s[k] >= '0' && s[k] <= '9';
		}
		if (pre && digits == j - i && j - i > 1 && s[i] == '0')
			return "version segment starts with 0";
		if (j >= n)
			return NULL;
	}
}

/* SetPrerelease, SetMetadata: (Version, error); an error stops the template. */
static int set(struct gotmpl_fctx *c, const struct gotmpl_val *recv, const struct gotmpl_val *s,
	       int pre, struct gotmpl_val **res)
{
	const char *why = s->u.s.n ? gotmpl_sv_invalid(s->u.s.p, s->u.s.n, pre) : NULL;
	struct svobj *n;

	if (why)
		return gotmpl_fail(c, "%s", why);
	n = copy(c, recv);
	if (!n)
		return -ENOMEM;
	if (pre) {
		n->v.pre = s->u.s.p;
		n->v.npre = s->u.s.n;
	} else {
		n->v.meta = s->u.s.p;
		n->v.nmeta = s->u.s.n;
	}
	return next(c, self(recv), n, res);
}

SV_M(m_setprerelease)
{
	return set(c, recv, av[0], 1, res);
}

SV_M(m_setmetadata)
{
	return set(c, recv, av[0], 0, res);
}

/* Compare o (a *Version or nil): -1, 0, 1, or -EINVAL (Go's nil dereference, recovered). */
static int cmp_arg(struct gotmpl_fctx *c, const struct gotmpl_val *recv, const struct gotmpl_val *o)
{
	if (o->kind == GOTMPL_NIL)
		return gotmpl_fail(c, "runtime error: invalid memory address or nil pointer "
				      "dereference");
	return gotmpl_sv_compare(&self(recv)->v, &self(o)->v);
}

/* LessThan, LessThanEqual, GreaterThan, GreaterThanEqual, Compare */
#define SV_CMP(name, expr)                                                                         \
	SV_M(name)                                                                                 \
	{                                                                                          \
		int d = cmp_arg(c, recv, av[0]);                                                   \
                                                                                                   \
		if (d == -EINVAL)                                                                  \
			return d;                                                                  \
		GT_RES(expr);                                                                      \
	}
SV_CMP(m_lessthan, gotmpl_bool(c->a, d < 0))
SV_CMP(m_lessthanequal, gotmpl_bool(c->a, d <= 0))
SV_CMP(m_greaterthan, gotmpl_bool(c->a, d > 0))
SV_CMP(m_greaterthanequal, gotmpl_bool(c->a, d >= 0))
SV_CMP(m_compare, gotmpl_int(c->a, d, GT_PLAIN))

/* Equal: the same pointer, or neither nil and Compare 0 */
SV_M(m_equal)
{
	if (av[0]->kind == GOTMPL_NIL)
		GT_RES(gotmpl_bool(c->a, 0));
	GT_RES(gotmpl_bool(c->a, av[0]->u.o.p == recv->u.o.p ||
				     gotmpl_sv_compare(&self(recv)->v, &self(av[0])->v) == 0));
}

/* The methods of Version; NULL sig: one nodeprobe refuses (Go encodings, or they change it). */
#define SV_COMMON                                                                                  \
	{"IncMajor", "", m_incmajor}, {"IncMinor", "", m_incminor}, {"IncPatch", "", m_incpatch},  \
	    {"Major", "", m_major}, {"MarshalJSON", "", m_marshaljson},                            \
	    {"MarshalText", "", m_marshaltext}, {"Metadata", "", m_metadata},                      \
	    {"Minor", "", m_minor}, {"Patch", "", m_patch}, {"Prerelease", "", m_prerelease},      \
	    {"SetMetadata", "s", m_setmetadata}, {"SetPrerelease", "s", m_setprerelease},          \
	    {"String", "", m_string},                                                              \
	{                                                                                          \
		"Value", "", m_string                                                              \
	}

static const struct gotmpl_method val_methods[] = {SV_COMMON, {NULL, NULL, NULL}};

static const struct gotmpl_method ptr_methods[] = {
    SV_COMMON,
    {"Compare", "V", m_compare},
    {"Equal", "V", m_equal},
    {"GreaterThan", "V", m_greaterthan},
    {"GreaterThanEqual", "V", m_greaterthanequal},
    {"LessThan", "V", m_lessthan},
    {"LessThanEqual", "V", m_lessthanequal},
    {"Original", "", m_original},
    {"Scan", NULL, NULL},
    {"UnmarshalJSON", NULL, NULL},
    {"UnmarshalText", NULL, NULL},
    {NULL, NULL, NULL},
};

static const char *const sv_fields[] = {"major",    "minor",	"patch", "pre",
					"metadata", "original", NULL};

static const struct gotmpl_otype sv_ptr = {"*semver.Version", "ptr",  ptr_methods,
					   sv_fields,	      sv_str, sv_same};
static const struct gotmpl_otype sv_val = {"semver.Version", "struct", val_methods,
					   sv_fields,	     sv_str,   sv_same};

/* ---- what the engine asks of any object ---- */

const struct gotmpl_method *gotmpl_obj_method(const struct gotmpl_val *recv, const char *name)
{
	for (const struct gotmpl_method *m = recv->u.o.t->methods; m->name; m++)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

int gotmpl_obj_field(const struct gotmpl_val *recv, const char *name)
{
	for (const char *const *f = recv->u.o.t->fields; *f; f++)
		if (strcmp(*f, name) == 0)
			return 1;
	return 0;
}
