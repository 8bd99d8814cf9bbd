/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_sprig_url: Sprig v3's urlParse and urlJoin, over Go's net/url Parse and URL.String. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

/*
 * Masterminds/sprig url.go (urlParse, urlJoin, dictGetOrEmpty) over golang/go
 * src/net/url/url.go (Parse, parse, getScheme, parseAuthority, parseHost,
 * validOptionalPort, validUserinfo, unescape, escape, shouldEscape,
 * URL.String, URL.Hostname, Userinfo.String). Sprig panics on a parse error;
 * text/template turns that into "error calling urlParse: ...".
 */

enum umode { U_PATH, U_HOST, U_USER, U_FRAGMENT };

/* A piece of the input: bytes s[0..n). */
struct span {
	const char *s;
	size_t n;
};

/* What url.Parse makes (decoded where Go decodes). */
struct url {
	struct strbuf scheme, opaque, user, pass, host, path, query, fragment;
	int has_user, has_pass;
};

static int ishex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int unhex(char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static int should_escape(unsigned char c, enum umode m)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return 0;
	if (m == U_HOST && c && strchr("!$&'()*+,;=:[]<>\"", c))
		return 0;
	if (c == '-' || c == '_' || c == '.' || c == '~')
		return 0;
	if (c && strchr("$&+,/:;=?@", c)) {
		if (m == U_PATH)
			return c == '?';
		if (m == U_USER)
			return c == '@' || c == '/' || c == '?' || c == ':';
		if (m == U_FRAGMENT)
			return 0;
	}
	if (m == U_FRAGMENT && (c == '!' || c == '(' || c == ')' || c == '*'))
		return 0;
	return 1;
}

/* Go's escape(s, mode) appended to sb. */
static int escape(struct strbuf *sb, const char *s, size_t n, enum umode m)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;
	int r = 0;

	for (i = 0; i < n && r == 0; i++) {
		unsigned char c = (unsigned char)s[i];

		if (should_escape(c, m))
			r = sb_addf(sb, "%%%c%c", hex[c >> 4], hex[c & 15]);
		else
			r = sb_addch(sb, (char)c);
	}
	return r;
}

/* strconv.Quote of s[0..n) into a message. */
static void quoted(char *dst, size_t cap, const char *s, size_t n)
{
	struct strbuf q = STRBUF_INIT(512);

	if (gotmpl_quote(&q, s, n > 200 ? 200 : n, '"') == 0)
		snprintf(dst, cap, "%s", q.buf);
	else
		snprintf(dst, cap, "\"\"");
	sb_free(&q);
}

/* Go's unescape(s, mode) into sb: 0, or -EINVAL with Go's message in why. */
static int unescape(struct strbuf *sb, struct span in, enum umode m, char *why, size_t wl)
{
	const char *s = in.s;
	size_t i, n = in.n;
	char q[256];
	int r = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '%') {
			if (i + 2 >= n || !ishex(s[i + 1]) || !ishex(s[i + 2])) {
				quoted(q, sizeof(q), s + i, n - i > 3 ? 3 : n - i);
				snprintf(why, wl, "invalid URL escape %s", q);
				return -EINVAL;
			}
			if (m == U_HOST && unhex(s[i + 1]) < 8 && memcmp(s + i, "%25", 3)) {
				quoted(q, sizeof(q), s + i, 3);
				snprintf(why, wl, "invalid URL escape %s", q);
				return -EINVAL;
			}
			i += 2;
		} else if (m == U_HOST && (unsigned char)s[i] < 0x80 &&
			   should_escape((unsigned char)s[i], m)) {
			quoted(q, sizeof(q), s + i, 1);
			snprintf(why, wl, "invalid character %s in host name", q);
			return -EINVAL;
		}
	}
	for (i = 0; i < n && r == 0; i++) {
		if (s[i] == '%') {
			r = sb_addch(sb, (char)(unhex(s[i + 1]) << 4 | unhex(s[i + 2])));
			i += 2;
		} else {
			r = sb_addch(sb, s[i]);
		}
	}
	return r < 0 ? -ENOMEM : 0;
}

static const char *find(struct span s, char c)
{
	return s.n ? memchr(s.s, c, s.n) : NULL;
}

static const char *find_last(struct span s, char c)
{
	size_t i;

	for (i = s.n; i > 0; i--)
		if (s.s[i - 1] == c)
			return s.s + i - 1;
	return NULL;
}

static int valid_optional_port(struct span p)
{
	size_t i;

	if (!p.n)
		return 1;
	if (p.s[0] != ':')
		return 0;
	for (i = 1; i < p.n; i++)
		if (p.s[i] < '0' || p.s[i] > '9')
			return 0;
	return 1;
}

static int parse_host(struct url *u, struct span h, char *why, size_t wl)
{
	const char *c;
	char q[256];

	if (h.n && h.s[0] == '[') {
		c = find_last(h, ']');
		if (!c) {
			snprintf(why, wl, "missing ']' in host");
			return -EINVAL;
		}
	} else {
		c = find_last(h, ':');
	}
	if (c) {
		struct span port = {c + (h.s[0] == '[' ? 1 : 0), (size_t)(h.s + h.n - c)};

		if (h.s[0] == '[')
			port.n--;
		if (!valid_optional_port(port)) {
			quoted(q, sizeof(q), port.s, port.n);
			snprintf(why, wl, "invalid port %s after host", q);
			return -EINVAL;
		}
	}
	return unescape(&u->host, h, U_HOST, why, wl);
}

static int valid_userinfo(struct span s)
{
	size_t i;

	for (i = 0; i < s.n; i++) {
		unsigned char c = (unsigned char)s.s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
			continue;
		if (!c || !strchr("-._:~!$&'()*+,;=%@", c))
			return 0;
	}
	return 1;
}

static int parse_authority(struct url *u, struct span a, char *why, size_t wl)
{
	const char *at = find_last(a, '@'), *colon;
	struct span ui, h = a;
	int r;

	if (at)
		h = (struct span){at + 1, (size_t)(a.s + a.n - at - 1)};
	r = parse_host(u, h, why, wl);
	if (r < 0 || !at)
		return r;
	ui = (struct span){a.s, (size_t)(at - a.s)};
	if (!valid_userinfo(ui)) {
		snprintf(why, wl, "net/url: invalid userinfo");
		return -EINVAL;
	}
	u->has_user = 1;
	colon = find(ui, ':');
	if (!colon)
		return unescape(&u->user, ui, U_USER, why, wl);
	u->has_pass = 1;
	r = unescape(&u->user, (struct span){ui.s, (size_t)(colon - ui.s)}, U_USER, why, wl);
	if (r == 0)
		r = unescape(&u->pass, (struct span){colon + 1, (size_t)(ui.s + ui.n - colon - 1)},
			     U_USER, why, wl);
	return r;
}

/* Go's getScheme: 0 with *scheme (maybe empty) and *rest, or -EINVAL. */
static int get_scheme(struct span raw, struct span *scheme, struct span *rest, char *why, size_t wl)
{
	size_t i;

	*scheme = (struct span){raw.s, 0};
	*rest = raw;
	for (i = 0; i < raw.n; i++) {
		char c = raw.s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
			continue;
		if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
			if (i == 0)
				return 0;
			continue;
		}
		if (c == ':') {
			if (i == 0) {
				snprintf(why, wl, "missing protocol scheme");
				return -EINVAL;
			}
			*scheme = (struct span){raw.s, i};
			*rest = (struct span){raw.s + i + 1, raw.n - i - 1};
		}
		return 0;
	}
	return 0;
}

/* Go's url.parse(raw, false) into u: 0, -EINVAL (why), -ENOMEM. */
static int parse(struct url *u, struct span raw, char *why, size_t wl)
{
	struct span scheme, rest;
	const char *q, *slash;
	size_t i, nq = 0;
	int r;

	for (i = 0; i < raw.n; i++)
		if ((unsigned char)raw.s[i] < 0x20 || raw.s[i] == 0x7f) {
			snprintf(why, wl, "net/url: invalid control character in URL");
			return -EINVAL;
		}
	if (raw.n == 1 && raw.s[0] == '*')
		return sb_addch(&u->path, '*') < 0 ? -ENOMEM : 0;
	r = get_scheme(raw, &scheme, &rest, why, wl);
	if (r < 0)
		return r;
	for (i = 0; i < scheme.n && r == 0; i++)
		r = sb_addch(
		    &u->scheme,
		    (char)(scheme.s[i] | (scheme.s[i] >= 'A' && scheme.s[i] <= 'Z' ? 0x20 : 0)));
	for (i = 0; i < rest.n; i++)
		nq += rest.s[i] == '?';
	if (rest.n && rest.s[rest.n - 1] == '?' && nq == 1) {
		rest.n--; /* ForceQuery: no RawQuery */
	} else if ((q = find(rest, '?')) != NULL) {
		r = sb_addn(&u->query, q + 1, (size_t)(rest.s + rest.n - q - 1));
		rest.n = (size_t)(q - rest.s);
	}
	if (r < 0)
		return -ENOMEM;
	if (!rest.n || rest.s[0] != '/') {
		struct span seg = rest;

		if (u->scheme.len)
			return sb_addn(&u->opaque, rest.s, rest.n) < 0 ? -ENOMEM : 0;
		slash = find(rest, '/');
		if (slash)
			seg.n = (size_t)(slash - rest.s);
		if (find(seg, ':')) {
			snprintf(why, wl, "first path segment in URL cannot contain colon");
			return -EINVAL;
		}
	}
	if ((u->scheme.len || rest.n < 3 || memcmp(rest.s, "///", 3)) && rest.n >= 2 &&
	    !memcmp(rest.s, "//", 2)) {
		struct span a = {rest.s + 2, rest.n - 2};

		slash = find(a, '/');
		rest = (struct span){rest.s + rest.n, 0};
		if (slash) {
			rest = (struct span){slash, (size_t)(a.s + a.n - slash)};
			a.n = (size_t)(slash - a.s);
		}
		r = parse_authority(u, a, why, wl);
		if (r < 0)
			return r;
	}
	return unescape(&u->path, rest, U_PATH, why, wl);
}

/* Go's url.Parse: the fragment cut first. */
static int url_parse(struct url *u, const char *s, size_t n, char *why, size_t wl)
{
	struct span raw = {s, n};
	const char *hash = find(raw, '#');
	char inner[300];
	char q[256];
	int r;

	if (hash)
		raw.n = (size_t)(hash - s);
	r = parse(u, raw, inner, sizeof(inner));
	if (r == 0 && hash) {
		r = unescape(&u->fragment, (struct span){hash + 1, (size_t)(s + n - hash - 1)},
			     U_FRAGMENT, inner, sizeof(inner));
		raw.n = n; /* Go names the whole input for a bad fragment */
	}
	if (r == -EINVAL) { /* *url.Error: Op "parse", the URL it parsed, the error */
		quoted(q, sizeof(q), s, raw.n);
		snprintf(why, wl, "parse %.200s: %.180s", q, inner);
	}
	return r;
}

static void url_free(struct url *u)
{
	sb_free(&u->scheme);
	sb_free(&u->opaque);
	sb_free(&u->user);
	sb_free(&u->pass);
	sb_free(&u->host);
	sb_free(&u->path);
	sb_free(&u->query);
	sb_free(&u->fragment);
}

static void url_init(struct url *u)
{
	memset(u, 0, sizeof(*u));
	sb_init(&u->scheme, GT_STR_MAX);
	sb_init(&u->opaque, GT_STR_MAX);
	sb_init(&u->user, GT_STR_MAX);
	sb_init(&u->pass, GT_STR_MAX);
	sb_init(&u->host, GT_STR_MAX);
	sb_init(&u->path, GT_STR_MAX);
	sb_init(&u->query, GT_STR_MAX);
	sb_init(&u->fragment, GT_STR_MAX);
}

/* Userinfo.String(). */
static int userinfo(struct strbuf *sb, const struct url *u)
{
	int r = escape(sb, u->user.buf, u->user.len, U_USER);

	if (r == 0 && u->has_pass) {
		r = sb_addch(sb, ':');
		if (r == 0)
			r = escape(sb, u->pass.buf, u->pass.len, U_USER);
	}
	return r;
}

static int put(struct gotmpl_fctx *c, struct gotmpl_val *m, const char *k, const char *s, size_t n)
{
	return gotmpl_map_put(c->a, m, k, strlen(k), gotmpl_str(c->a, s, n));
}

GT_FN(f_urlparse)
{
	struct gotmpl_val *m = gotmpl_map(c->a, GT_PLAIN);
	struct strbuf ui = STRBUF_INIT(GT_STR_MAX);
	char why[400];
	struct url u;
	const char *h, *colon;
	size_t hn;
	int r;

	(void)ac;
	if (!m)
		return -ENOMEM;
	url_init(&u);
	r = url_parse(&u, GT_S(0), GT_SN(0), why, sizeof(why));
	if (r == -EINVAL) {
		r = gotmpl_fail(c, "unable to parse url: %s", why);
		goto out;
	}
	/* Hostname(): the host without a valid :port, and without IPv6 brackets */
	h = u.host.buf;
	hn = u.host.len;
	colon = hn ? memrchr(h, ':', hn) : NULL;
	if (colon && valid_optional_port((struct span){colon, (size_t)(h + hn - colon)}))
		hn = (size_t)(colon - h);
	if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') {
		h++;
		hn -= 2;
	}
	if (r == 0 && u.has_user)
		r = userinfo(&ui, &u) < 0 ? -ENOMEM : 0;
	if (r == 0)
		r = put(c, m, "scheme", u.scheme.buf, u.scheme.len);
	if (r == 0)
		r = put(c, m, "host", u.host.buf, u.host.len);
	if (r == 0)
		r = put(c, m, "hostname", h, hn);
	if (r == 0)
		r = put(c, m, "path", u.path.buf, u.path.len);
	if (r == 0)
		r = put(c, m, "query", u.query.buf, u.query.len);
	if (r == 0)
		r = put(c, m, "opaque", u.opaque.buf, u.opaque.len);
	if (r == 0)
		r = put(c, m, "fragment", u.fragment.buf, u.fragment.len);
	if (r == 0)
		r = put(c, m, "userinfo", ui.buf, ui.len);
	if (r == 0)
		*res = m;
out:
	sb_free(&ui);
	url_free(&u);
	return r;
}

/* Sprig's dictGetOrEmpty: d[key] as a string, "" when absent; -EINVAL for another kind. */
static int dict_get(struct gotmpl_fctx *c, const struct gotmpl_val *d, const char *key,
		    struct span *out)
{
	long i = d->kind == GOTMPL_MAP ? gotmpl_map_find(d, key, strlen(key)) : -1;
	const struct gotmpl_val *v;

	*out = (struct span){"", 0};
	if (i < 0)
		return 0;
	v = d->u.m.e[i].v;
	if (v->kind != GOTMPL_STRING)
		return gotmpl_fail(c,
				   "unable to parse %s key, must be of type string, but %s found",
				   key, gotmpl_kindname(v));
	*out = (struct span){v->u.s.p, v->u.s.n};
	return 0;
}

GT_FN(f_urljoin)
{
	static const char *const keys[] = {"scheme", "host",	 "path",    "query",
					   "opaque", "fragment", "userinfo"};
	struct span f[7];
	struct strbuf sb = STRBUF_INIT(GT_STR_MAX), pathe = STRBUF_INIT(GT_STR_MAX);
	struct url u;
	char why[400];
	int r = 0, i;

	(void)ac;
	url_init(&u);
	for (i = 0; i < 7 && r == 0; i++)
		r = dict_get(c, av[0], keys[i], &f[i]);
	if (r < 0)
		goto out;
	if (f[6].n) { /* the userinfo as url.Parse reads it in "proto://%s@host" */
		struct strbuf t = STRBUF_INIT(GT_STR_MAX);

		r = sb_addf(&t, "proto://%.*s@host", (int)f[6].n, f[6].s) < 0 ? -ENOMEM : 0;
		if (r == 0)
			r = url_parse(&u, t.buf, t.len, why, sizeof(why));
		sb_free(&t);
		if (r == -EINVAL)
			r = gotmpl_fail(c, "unable to parse userinfo in dict: %s", why);
		if (r < 0)
			goto out;
	}
	/* URL.String() with RawPath and RawFragment empty, OmitHost and ForceQuery false */
	if (f[0].n)
		r |= sb_addn(&sb, f[0].s, f[0].n) | sb_addch(&sb, ':');
	if (f[4].n) {
		r |= sb_addn(&sb, f[4].s, f[4].n);
	} else {
		if (f[0].n || f[1].n || u.has_user) {
			if (f[1].n || f[2].n || u.has_user)
				r |= sb_add(&sb, "//");
			if (u.has_user)
				r |= userinfo(&sb, &u) | sb_addch(&sb, '@');
			r |= escape(&sb, f[1].s, f[1].n, U_HOST);
		}
		if (f[2].n == 1 && f[2].s[0] == '*')
			r |= sb_addch(&pathe, '*');
		else
			r |= escape(&pathe, f[2].s, f[2].n, U_PATH);
		if (pathe.len && pathe.buf[0] != '/' && f[1].n)
			r |= sb_addch(&sb, '/');
		if (sb.len == 0) {
			const char *sl = memchr(pathe.buf, '/', pathe.len);
			size_t segn = sl ? (size_t)(sl - pathe.buf) : pathe.len;

			if (memchr(pathe.buf, ':', segn))
				r |= sb_add(&sb, "./");
		}
		r |= sb_addn(&sb, pathe.buf, pathe.len);
	}
	if (f[3].n)
		r |= sb_addch(&sb, '?') | sb_addn(&sb, f[3].s, f[3].n);
	if (f[5].n)
		r |= sb_addch(&sb, '#') | escape(&sb, f[5].s, f[5].n, U_FRAGMENT);
	r = gotmpl_done(c, &sb, r ? -E2BIG : 0, res);
out:
	sb_free(&sb);
	sb_free(&pathe);
	url_free(&u);
	return r;
}

const struct gotmpl_func gotmpl_sprig_url_funcs[] = {
    {"urlJoin", f_urljoin, "m", 0},
    {"urlParse", f_urlparse, "s", 0},
    {NULL, NULL, NULL, 0},
};
