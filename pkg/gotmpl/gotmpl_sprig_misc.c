/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_sprig_misc: Sprig v3's encodings, JSON, reflection, paths, flow control; the refused. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>

#include "base64/base64.h"
#include "gotmpl/gotmpl_internal.h"

/* ---- encodings and digests ---- */

GT_FN(f_b64enc)
{
	char *out;

	(void)ac;
	if (GT_SN(0) > GT_STR_MAX / 2)
		return -E2BIG;
	out = gotmpl_alloc(c->a, BASE64_ENCODED_LEN(GT_SN(0)) + 1);
	if (!out)
		return -ENOMEM;
	base64_encode(GT_S(0), GT_SN(0), out);
	GT_RES(gotmpl_str(c->a, out, strlen(out)));
}

GT_FN(f_b64dec)
{
	unsigned char *out = gotmpl_alloc(c->a, GT_SN(0) / 4 * 3 + 1);
	long n, bad;

	(void)ac;
	if (!out)
		return -ENOMEM;
	n = base64_decode_go(GT_S(0), GT_SN(0), out, &bad);
	if (bad >= 0) { /* Sprig returns the error's text as the result */
		char msg[64];

		snprintf(msg, sizeof(msg), "illegal base64 data at input byte %ld", bad);
		GT_RES(gotmpl_cstr(c->a, msg));
	}
	GT_RES(gotmpl_str(c->a, (char *)out, (size_t)n));
}

static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

GT_FN(f_b32enc)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	const unsigned char *s = (const unsigned char *)GT_S(0);
	int rc = 0;

	(void)ac;
	for (size_t i = 0; i < GT_SN(0) && !rc; i += 5) {
		unsigned char b[5] = {0};
		size_t n = GT_SN(0) - i < 5 ? GT_SN(0) - i : 5, chars = (n * 8 + 4) / 5;
		uint64_t v = 0;

		memcpy(b, s + i, n);
		for (int k = 0; k < 5; k++)
			v = (v << 8) | b[k];
		for (size_t k = 0; k < 8 && !rc; k++)
			rc = sb_addch(&sb, k < chars ? b32[(v >> (35 - 5 * k)) & 31] : '=');
	}
	return gotmpl_done(c, &sb, rc, res);
}

GT_FN(f_b32dec)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	uint64_t acc = 0;
	int bits = 0, rc = 0;
	size_t n = GT_SN(0);

	(void)ac;
	while (n && GT_S(0)[n - 1] == '=')
		n--;
	for (size_t i = 0; i < n && !rc; i++) {
		const char *p = GT_S(0)[i] ? strchr(b32, GT_S(0)[i]) : NULL;

		if (!p || GT_SN(0) % 8) {
			char msg[64];

			sb_free(&sb);
			snprintf(msg, sizeof(msg), "illegal base32 data at input byte %zu",
				 p ? (size_t)GT_SN(0) - GT_SN(0) % 8 : i);
			GT_RES(gotmpl_cstr(c->a, msg));
		}
		acc = (acc << 5) | (uint64_t)(p - b32);
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			rc = sb_addch(&sb, (char)((acc >> bits) & 0xFF));
		}
	}
	return gotmpl_done(c, &sb, rc, res);
}

GT_FN(f_adler32sum)
{
	char buf[16];

	(void)ac;
	snprintf(buf, sizeof(buf), "%u", libdeflate_adler32(1, GT_S(0), GT_SN(0)));
	GT_RES(gotmpl_cstr(c->a, buf));
}

/* ---- JSON (Go's encoding/json) ---- */

static int json_str(struct strbuf *sb, const char *s, size_t n, int html)
{
	int rc = sb_addch(sb, '"');

	for (size_t i = 0; i < n && !rc;) {
		unsigned char ch = (unsigned char)s[i];
		uint32_t r;
		int l;

		if (ch < 0x80) {
			i++;
			if (ch == '"' || ch == '\\')
				rc = sb_addch(sb, '\\') ?: sb_addch(sb, (char)ch);
			else if (ch == '\n')
				rc = sb_add(sb, "\\n");
			else if (ch == '\r')
				rc = sb_add(sb, "\\r");
			else if (ch == '\t')
				rc = sb_add(sb, "\\t");
			else if (ch == '\b')
				rc = sb_add(sb, "\\b");
			else if (ch == '\f')
				rc = sb_add(sb, "\\f");
			else if (ch < 0x20 || (html && (ch == '<' || ch == '>' || ch == '&')))
				rc = sb_addf(sb, "\\u00%02x", ch);
			else
				rc = sb_addch(sb, (char)ch);
			continue;
		}
		l = gotmpl_utf8(s + i, n - i, &r);
		if (r == 0xFFFD && l == 1)
			rc = sb_add(sb, "\\ufffd");
		else if (r == 0x2028 || r == 0x2029)
			rc = sb_addf(sb, "\\u%04x", r);
		else
			rc = sb_addn(sb, s + i, (size_t)l);
		i += (size_t)l;
	}
	return rc ?: sb_addch(sb, '"');
}

static int indent_to(struct strbuf *sb, int pretty, int depth)
{
	int rc = 0;

	if (!pretty)
		return 0;
	rc = sb_addch(sb, '\n');
	for (int i = 0; i < depth && !rc; i++)
		rc = sb_add(sb, "  ");
	return rc;
}

/* json.Marshal (pretty: MarshalIndent "", "  "): 0, -EINVAL for NaN/Inf, or a strbuf error. */
static int json_enc(struct strbuf *sb, const struct gotmpl_val *v, int html, int pretty, int depth)
{
	int rc = 0;
	size_t i;

	if (depth > 200)
		return -EINVAL;
	switch (v->kind) {
	case GOTMPL_NIL:
		return sb_add(sb, "null");
	case GOTMPL_BOOL:
		return sb_add(sb, v->u.b ? "true" : "false");
	case GOTMPL_INT:
		return sb_addf(sb, gotmpl_bigu(v) ? "%llu" : "%lld", (long long)v->u.i);
	case GOTMPL_FLOAT: {
		double a = fabs(v->u.f);
		size_t at = sb->len;

		if (!isfinite(v->u.f))
			return -EINVAL;
		rc =
		    gotmpl_fmt_float(sb, v->u.f, a != 0 && (a < 1e-6 || a >= 1e21) ? 'e' : 'f', -1);
		if (!rc && sb->len - at >= 4 && sb->buf[sb->len - 4] == 'e' &&
		    sb->buf[sb->len - 3] == '-' && sb->buf[sb->len - 2] == '0') {
			sb->buf[sb->len - 2] = sb->buf[sb->len - 1];
			sb_truncate(sb, sb->len - 1);
		}
		return rc;
	}
	case GOTMPL_STRING:
		return json_str(sb, v->u.s.p, v->u.s.n, html);
	case GOTMPL_LIST:
		if (v->sub == GT_BYTES) { /* encoding/json: a []byte is a base64 string */
			struct strbuf t = STRBUF_INIT(GT_STR_MAX);
			char *o;

			rc = gotmpl_bytes_text(&t, v)
				 ?: sb_reserve(sb, BASE64_ENCODED_LEN(t.len) + 2);
			o = rc ? NULL : sb->buf + sb->len;
			if (o) {
				o[0] = '"';
				sb_setlen(sb, sb->len + 1 +
						  base64_encode(t.buf ? t.buf : "", t.len, o + 1));
				rc = sb_addch(sb, '"');
			}
			sb_free(&t);
			return rc;
		}
		if (!v->u.l.n)
			return sb_add(sb, "[]");
		rc = sb_addch(sb, '[');
		for (i = 0; i < v->u.l.n && !rc; i++)
			rc = (i ? sb_addch(sb, ',') : 0) ?: indent_to(sb, pretty, depth + 1)
				 ?: json_enc(sb, v->u.l.v[i], html, pretty, depth + 1);
		return rc ?: indent_to(sb, pretty, depth) ?: sb_addch(sb, ']');
	case GOTMPL_MAP:
		if (!v->u.m.n)
			return sb_add(sb, "{}");
		rc = sb_addch(sb, '{');
		for (i = 0; i < v->u.m.n && !rc; i++)
			rc = (i ? sb_addch(sb, ',') : 0) ?: indent_to(sb, pretty, depth + 1)
				 ?: json_str(sb, v->u.m.e[i].k, v->u.m.e[i].klen, html)
				 ?: sb_add(sb, pretty ? ": " : ":")
				 ?: json_enc(sb, v->u.m.e[i].v, html, pretty, depth + 1);
		return rc ?: indent_to(sb, pretty, depth) ?: sb_addch(sb, '}');
	case GT_OBJ: { /* its MarshalJSON: json.Marshal(v.String()) (semver's version.go) */
		struct strbuf s = STRBUF_INIT(GT_STR_MAX);

		rc = gotmpl_fmt_v(&s, v) ?: json_str(sb, s.buf ? s.buf : "", s.len, html);
		sb_free(&s);
		return rc;
	}
	}
	return 0;
}

#define JSON_UNITS 16 /* json_enc's work a byte: up to 60 ns (a number via sb_addf), measured */

static int to_json(struct gotmpl_fctx *c, const struct gotmpl_val *v, int html, int pretty,
		   int must, struct gotmpl_val **res)
{
	struct strbuf sb = STRBUF_INIT(gotmpl_room(c->a, JSON_UNITS));
	int rc = json_enc(&sb, v, html, pretty, 0);

	if (rc == -EINVAL) {
		sb_free(&sb);
		if (must)
			return gotmpl_fail(c, "json: unsupported value");
		GT_RES(gotmpl_str(c->a, "", 0));
	}
	return gotmpl_printed(c, &sb, rc, JSON_UNITS, res);
}

GT_FN(f_tojson)
{
	(void)ac;
	return to_json(c, av[0], 1, 0, 0, res);
}

GT_FN(f_musttojson)
{
	(void)ac;
	return to_json(c, av[0], 1, 0, 1, res);
}

GT_FN(f_toprettyjson)
{
	(void)ac;
	return to_json(c, av[0], 1, 1, 0, res);
}

GT_FN(f_musttoprettyjson)
{
	(void)ac;
	return to_json(c, av[0], 1, 1, 1, res);
}

GT_FN(f_torawjson)
{
	(void)ac;
	return to_json(c, av[0], 0, 0, 0, res);
}

GT_FN(f_musttorawjson)
{
	(void)ac;
	return to_json(c, av[0], 0, 0, 1, res);
}

/* Sprig's fromJson / mustFromJson: json.Unmarshal into interface{} (gotmpl_fromjson.c). */
static int from_json(struct gotmpl_fctx *c, struct gotmpl_val **av, int must,
		     struct gotmpl_val **res)
{
	int r = gotmpl_json_decode(c, GT_S(0), GT_SN(0), res);

	if (r == -EINVAL && !must) {
		c->msg[0] = '\0';
		*res = GT_NIL;
		return 0;
	}
	return r;
}

GT_FN(f_fromjson)
{
	(void)ac;
	return from_json(c, av, 0, res);
}

GT_FN(f_mustfromjson)
{
	(void)ac;
	return from_json(c, av, 1, res);
}

/* ---- reflection ---- */

GT_FN(f_typeof)
{
	(void)ac;
	GT_RES(gotmpl_cstr(c->a, gotmpl_typename(av[0])));
}

GT_FN(f_typeis)
{
	(void)ac;
	GT_RES(gotmpl_bool(c->a, strcmp(GT_S(0), gotmpl_typename(av[1])) == 0));
}

GT_FN(f_typeislike)
{
	const char *t = gotmpl_typename(av[1]);

	(void)ac;
	GT_RES(gotmpl_bool(c->a, strcmp(GT_S(0), t) == 0 ||
				     (t[0] == '*' && strcmp(GT_S(0), t + 1) == 0)));
}

GT_FN(f_kindof)
{
	(void)ac;
	GT_RES(gotmpl_cstr(c->a, gotmpl_kindname(av[0])));
}

GT_FN(f_kindis)
{
	(void)ac;
	GT_RES(gotmpl_bool(c->a, strcmp(GT_S(0), gotmpl_kindname(av[1])) == 0));
}

GT_FN(f_deepequal)
{
	int eq = gotmpl_deep_equal(c->a, av[0], av[1]);

	(void)ac;
	if (eq < 0)
		return eq;
	GT_RES(gotmpl_bool(c->a, eq));
}

/*
 * A copy of v, or NULL: out of the memory budget (which also bounds the walk: every node copied
 * is allocated, however the lists share sub-lists) or too deep. A *semver.Version (or a
 * semver.Version) becomes a zero one of its type, as copystructure v1.2.0 (Sprig's deepCopy, the
 * same version in NFD v0.19's go.mod and Debian) copies a struct: exported fields only, and
 * Version has none, so its copy prints 0.0.0.
 */
static struct gotmpl_val *deep_copy(struct gotmpl_fctx *c, const struct gotmpl_val *v, int depth)
{
	struct gotmpl_val *r;

	if (depth > GT_VAL_DEPTH_MAX) { /* a limit met (a dict holding itself), not memory */
		c->a->over = 1;
		return NULL;
	}
	switch (v->kind) {
	case GOTMPL_LIST:
		r = gotmpl_list(c->a, v->u.l.n, v->sub);
		for (size_t i = 0; r && i < v->u.l.n; i++)
			if (!(r->u.l.v[r->u.l.n++] = deep_copy(c, v->u.l.v[i], depth + 1)))
				return NULL;
		return r;
	case GOTMPL_MAP:
		r = gotmpl_map(c->a, v->sub);
		for (size_t i = 0; r && i < v->u.m.n; i++) {
			struct gotmpl_val *e = deep_copy(c, v->u.m.e[i].v, depth + 1);

			if (!e || gotmpl_map_put(c->a, r, v->u.m.e[i].k, v->u.m.e[i].klen, e))
				return NULL;
		}
		return r;
	case GT_OBJ:
		return gotmpl_obj_zero(c->a, v);
	default:
		return (struct gotmpl_val *)v;
	}
}

GT_FN(f_deepcopy)
{
	(void)ac;
	if (av[0]->kind == GOTMPL_NIL)
		return gotmpl_fail(c, "deepCopy error: copy: cannot copy nil");
	*res = deep_copy(c, av[0], 0);
	return *res ? 0 : -ENOMEM;
}

/* ---- paths (Go's path; filepath is the same on Linux) ---- */

/* path.Clean of s into sb. */
static int path_clean(struct strbuf *sb, const char *s, size_t n)
{
	int rooted = n && s[0] == '/', rc = 0;
	size_t start = sb->len, dotdot, r = 0;

	if (n == 0)
		return sb_addch(sb, '.');
	if (rooted) {
		rc = sb_addch(sb, '/');
		r = 1;
	}
	dotdot = sb->len;
	while (r < n && !rc) {
		if (s[r] == '/') {
			r++;
		} else if (s[r] == '.' && (r + 1 == n || s[r + 1] == '/')) {
			r++;
		} else if (s[r] == '.' && s[r + 1] == '.' && (r + 2 == n || s[r + 2] == '/')) {
			r += 2;
			if (sb->len > dotdot) {
				size_t w = sb->len - 1;

				while (w > dotdot && sb->buf[w] != '/')
					w--;
				sb_truncate(sb, w);
			} else if (!rooted) {
				rc = (sb->len > start ? sb_addch(sb, '/') : 0) ?: sb_add(sb, "..");
				dotdot = sb->len;
			}
		} else {
			if ((rooted && sb->len != start + 1) || (!rooted && sb->len != start))
				rc = sb_addch(sb, '/');
			while (r < n && s[r] != '/' && !rc)
				rc = sb_addch(sb, s[r++]);
		}
	}
	if (!rc && sb->len == start)
		rc = sb_addch(sb, '.');
	return rc;
}

GT_FN(f_clean)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);

	(void)ac;
	return gotmpl_done(c, &sb, path_clean(&sb, GT_S(0), GT_SN(0)), res);
}

GT_FN(f_base)
{
	size_t n = GT_SN(0), b;

	(void)ac;
	if (n == 0)
		GT_RES(gotmpl_str(c->a, ".", 1));
	while (n > 0 && GT_S(0)[n - 1] == '/')
		n--;
	if (n == 0)
		GT_RES(gotmpl_str(c->a, "/", 1));
	for (b = n; b > 0 && GT_S(0)[b - 1] != '/'; b--)
		;
	GT_RES(gotmpl_str(c->a, GT_S(0) + b, n - b));
}

GT_FN(f_dir)
{
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX);
	size_t b = GT_SN(0);

	(void)ac;
	while (b > 0 && GT_S(0)[b - 1] != '/')
		b--;
	return gotmpl_done(c, &sb, path_clean(&sb, GT_S(0), b), res);
}

GT_FN(f_ext)
{
	(void)ac;
	for (size_t i = GT_SN(0); i-- > 0 && GT_S(0)[i] != '/';)
		if (GT_S(0)[i] == '.')
			GT_RES(gotmpl_str(c->a, GT_S(0) + i, GT_SN(0) - i));
	GT_RES(gotmpl_str(c->a, "", 0));
}

GT_FN(f_isabs)
{
	(void)ac;
	GT_RES(gotmpl_bool(c->a, GT_SN(0) && GT_S(0)[0] == '/'));
}

/* ---- flow control and the rest ---- */

GT_FN(f_fail)
{
	(void)res;
	(void)ac;
	/* errors.New(msg): the whole of it, up to GOTMPL_ERR_MAX */
	return gotmpl_fail(c, "%.*s", (int)(GT_SN(0) > GOTMPL_ERR_MAX ? GOTMPL_ERR_MAX : GT_SN(0)),
			   GT_S(0));
}

GT_FN(f_hello)
{
	(void)av;
	(void)ac;
	GT_RES(gotmpl_cstr(c->a, "Hello!"));
}

/* Go's time.Duration.String of n nanoseconds. */
static int duration_str(struct strbuf *sb, int64_t ns)
{
	uint64_t u = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	char neg = ns < 0 ? '-' : 0;
	int rc = neg ? sb_addch(sb, '-') : 0;

	if (u < 1000000000ull) { /* under a second: ns, µs or ms with a fraction */
		const char *unit = "ns";
		uint64_t div = 1;
		char frac[16] = "";

		if (u == 0)
			return sb_add(sb, "0s");
		if (u >= 1000000)
			unit = "ms", div = 1000000;
		else if (u >= 1000)
			unit = "\xC2\xB5s", div = 1000;
		if (div > 1 && u % div) {
			int w = div == 1000 ? 3 : 6, k;

			snprintf(frac, sizeof(frac), ".%0*llu", w, (unsigned long long)(u % div));
			for (k = (int)strlen(frac); frac[k - 1] == '0'; k--)
				frac[k - 1] = '\0';
		}
		return rc ?: sb_addf(sb, "%llu%s%s", (unsigned long long)(u / div), frac, unit);
	}
	{
		uint64_t s = u / 1000000000ull, f = u % 1000000000ull;
		char frac[16] = "";

		if (f) {
			int k;

			snprintf(frac, sizeof(frac), ".%09llu", (unsigned long long)f);
			for (k = (int)strlen(frac); frac[k - 1] == '0'; k--)
				frac[k - 1] = '\0';
		}
		if (s >= 3600)
			rc = rc ?: sb_addf(sb, "%lluh", (unsigned long long)(s / 3600));
		if (s >= 60)
			rc = rc ?: sb_addf(sb, "%llum", (unsigned long long)(s / 60 % 60));
		return rc ?: sb_addf(sb, "%llu%ss", (unsigned long long)(s % 60), frac);
	}
}

GT_FN(f_duration)
{
	struct strbuf sb = STRBUF_INIT(64);
	int64_t secs;

	(void)ac;
	if (av[0]->kind == GOTMPL_STRING) { /* strconv.ParseInt(v, 10, 64), 0 on error */
		char *end;

		errno = 0;
		secs = strtoll(GT_S(0), &end, 10);
		if (*end || errno || !GT_SN(0) || GT_S(0)[0] == ' ')
			secs = 0;
	} else {
		secs = gotmpl_toint64(av[0]);
	}
	if (secs > INT64_MAX / 1000000000 || secs < INT64_MIN / 1000000000)
		secs = (int64_t)((uint64_t)secs * 1000000000ull) / 1000000000; /* Go wraps */
	return gotmpl_done(c, &sb, duration_str(&sb, (int64_t)((uint64_t)secs * 1000000000ull)),
			   res);
}

/* Refused: their results depend on the clock or randomness. */
#define REFUSED(n)                                                                                 \
	{                                                                                          \
		n, NULL, NULL, GT_F_REFUSED                                                        \
	}
/* The reasons the parse error gives for the refused names that have one. */
static const struct {
	const char *name, *why;
} whys[] = {
    {"asLabelValue", "not in NFD v0.19's template function map (only proposed, NFD PR #2038)"},
};

const char *gotmpl_func_why(const struct gotmpl_func *f)
{
	for (size_t i = 0; i < sizeof(whys) / sizeof(whys[0]); i++)
		if (strcmp(f->name, whys[i].name) == 0)
			return whys[i].why;
	return NULL;
}

const struct gotmpl_func gotmpl_sprig_misc_funcs[] = {
    {"adler32sum", f_adler32sum, "s", 0},
    {"b32dec", f_b32dec, "s", 0},
    {"b32enc", f_b32enc, "s", 0},
    {"b64dec", f_b64dec, "s", 0},
    {"b64enc", f_b64enc, "s", 0},
    {"base", f_base, "s", 0},
    {"clean", f_clean, "s", 0},
    {"deepCopy", f_deepcopy, "a", 0},
    {"deepEqual", f_deepequal, "aa", 0},
    {"dir", f_dir, "s", 0},
    {"duration", f_duration, "a", 0},
    {"ext", f_ext, "s", 0},
    {"fail", f_fail, "s", 0},
    {"fromJson", f_fromjson, "s", 0},
    {"hello", f_hello, "", 0},
    {"isAbs", f_isabs, "s", 0},
    {"kindIs", f_kindis, "sa", 0},
    {"kindOf", f_kindof, "a", 0},
    {"mustDeepCopy", f_deepcopy, "a", 0},
    {"mustFromJson", f_mustfromjson, "s", 0},
    {"mustToJson", f_musttojson, "a", 0},
    {"mustToPrettyJson", f_musttoprettyjson, "a", 0},
    {"mustToRawJson", f_musttorawjson, "a", 0},
    {"osBase", f_base, "s", 0},
    {"osClean", f_clean, "s", 0},
    {"osDir", f_dir, "s", 0},
    {"osExt", f_ext, "s", 0},
    {"osIsAbs", f_isabs, "s", 0},
    {"toJson", f_tojson, "a", 0},
    {"toPrettyJson", f_toprettyjson, "a", 0},
    {"toRawJson", f_torawjson, "a", 0},
    {"typeIs", f_typeis, "sa", 0},
    {"typeIsLike", f_typeislike, "sa", 0},
    {"typeOf", f_typeof, "a", 0},
    REFUSED("ago"),
    REFUSED("bcrypt"),
    REFUSED("buildCustomCert"),
    REFUSED("date"),
    REFUSED("dateInZone"),
    REFUSED("dateModify"),
    REFUSED("date_in_zone"),
    REFUSED("date_modify"),
    REFUSED("durationRound"),
    REFUSED("encryptAES"),
    REFUSED("genCA"),
    REFUSED("genCAWithKey"),
    REFUSED("genPrivateKey"),
    REFUSED("genSelfSignedCert"),
    REFUSED("genSelfSignedCertWithKey"),
    REFUSED("genSignedCert"),
    REFUSED("genSignedCertWithKey"),
    REFUSED("htmlDate"),
    REFUSED("htmlDateInZone"),
    REFUSED("htpasswd"),
    REFUSED("mustDateModify"),
    REFUSED("mustToDate"),
    REFUSED("must_date_modify"),
    REFUSED("now"),
    REFUSED("randAlpha"),
    REFUSED("randAlphaNum"),
    REFUSED("randAscii"),
    REFUSED("randBytes"),
    REFUSED("randInt"),
    REFUSED("randNumeric"),
    REFUSED("randSeededNumeric"),
    REFUSED("shuffle"),
    REFUSED("toDate"),
    REFUSED("unixEpoch"),
    REFUSED("uuidv4"),
    /* proposed for NFD's templates (kubernetes-sigs/node-feature-discovery PR #2038), not in
       v0.19: NFD would say "not defined", so does nodeprobe, saying why */
    {"asLabelValue", NULL, NULL, GT_F_NOT_NFD},
    {NULL, NULL, NULL, 0},
};
