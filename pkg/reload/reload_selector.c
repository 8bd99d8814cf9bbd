/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_selector: Reloader's label-selector flags (legacy key:value forms) as real selectors. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reload/reload.h"
#include "strbuf/strbuf.h"

/*
 * One entry as Reloader translates it (stakater/Reloader v1.4.21, pkg/common/common.go, read
 * through the library; see reloader.md §9.7): "k:*" -> "k", "k:v" -> "k=v" (parts after a
 * second ':' dropped), and an entry whose second '='-separated part is "*" -> "k"; anything
 * else passes through.
 */
static int translate(struct strbuf *sb, const char *e)
{
	const char *colon = strchr(e, ':'), *eq = strchr(e, '=');
	size_t klen;

	if (colon) {
		const char *v = colon + 1, *vend = strchr(v, ':');
		size_t vlen = vend ? (size_t)(vend - v) : strlen(v);

		klen = (size_t)(colon - e);
		if (vlen == 1 && *v == '*')
			return sb_addf(sb, "%.*s", (int)klen, e);
		if (eq && eq < colon) {
			/* "k=*:x": the '='-rule below sees the original entry */
			const char *v2 = eq + 1, *v2end = strchr(v2, '=');
			size_t v2len = v2end ? (size_t)(v2end - v2) : strlen(v2);

			if (v2len == 1 && *v2 == '*')
				return sb_addf(sb, "%.*s", (int)(eq - e), e);
		}
		return sb_addf(sb, "%.*s=%.*s", (int)klen, e, (int)vlen, v);
	}
	if (eq) {
		const char *v = eq + 1, *vend = strchr(v, '=');
		size_t vlen = vend ? (size_t)(vend - v) : strlen(v);

		if (vlen == 1 && *v == '*')
			return sb_addf(sb, "%.*s", (int)(eq - e), e);
	}
	return sb_add(sb, e);
}

/* A label name or value character run: [A-Za-z0-9._-]; returns its length. */
static size_t word(const char *s)
{
	size_t n = 0;

	while (isalnum((unsigned char)s[n]) || s[n] == '-' || s[n] == '_' || s[n] == '.' ||
	       s[n] == '/')
		n++;
	return n;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/*
 * A label value or a qualified name's name part (apimachinery pkg/util/validation):
 * at most 63 of [A-Za-z0-9._-], beginning and ending alphanumeric; a value may be empty.
 */
static int valid_name(const char *s, size_t n, int empty_ok)
{
	size_t i;

	if (!n)
		return empty_ok;
	if (n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return 0;
	return 1;
}

/* A label key: [DNS-1123 subdomain prefix '/'] name (validation.IsQualifiedName). */
static int valid_key(const char *s, size_t n)
{
	const char *slash = memchr(s, '/', n);
	size_t i, plen;

	if (!slash)
		return valid_name(s, n, 0);
	plen = (size_t)(slash - s);
	if (!plen || plen > 253 || !isalnum((unsigned char)s[0]) ||
	    !isalnum((unsigned char)s[plen - 1]))
		return 0;
	for (i = 0; i < plen; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-' ||
		      s[i] == '.'))
			return 0;
	return valid_name(slash + 1, n - plen - 1, 0);
}

/*
 * Check sel as the API server's labels.Parse does (k8s.io/apimachinery/pkg/labels/selector.go):
 * the grammar, each key and value, and an integer for '>' and '<'. 0 or -EINVAL with err.
 */
static int check(const char *sel, struct log_err *err)
{
	const char *p = sel;

	for (;;) {
		size_t n;

		p = skip_ws(p);
		if (!*p)
			return 0;
		if (*p == '!')
			p = skip_ws(p + 1);
		n = word(p);
		if (!n || !valid_key(p, n))
			return log_err_set(err, -EINVAL, "'%s': expected a label key at '%s'", sel,
					   p);
		p = skip_ws(p + n);
		if (p[0] == '=' || (p[0] == '!' && p[1] == '=') || p[0] == '>' || p[0] == '<') {
			int num = p[0] == '>' || p[0] == '<';
			size_t i;

			p += num || (p[0] != '!' && p[1] != '=') ? 1 : 2;
			p = skip_ws(p);
			n = word(p);
			for (i = 0; num && i < n; i++)
				if (!isdigit((unsigned char)p[i]))
					n = 0;
			if (!valid_name(p, n, !num))
				return log_err_set(err, -EINVAL, "'%s': bad label value at '%s'",
						   sel, p);
			p = skip_ws(p + n);
		} else if (!strncmp(p, "in", 2) || !strncmp(p, "notin", 5)) {
			p = skip_ws(p + (p[0] == 'i' ? 2 : 5));
			if (*p != '(')
				return log_err_set(err, -EINVAL, "'%s': expected '(' at '%s'", sel,
						   p);
			do {
				p = skip_ws(p + 1);
				n = word(p);
				if (!valid_name(p, n, 1))
					return log_err_set(err, -EINVAL,
							   "'%s': bad label value at '%s'", sel, p);
				p = skip_ws(p + n);
			} while (*p == ',');
			if (*p != ')')
				return log_err_set(err, -EINVAL, "'%s': expected ')' at '%s'", sel,
						   p);
			p = skip_ws(p + 1);
		}
		if (!*p)
			return 0;
		if (*p != ',')
			return log_err_set(err, -EINVAL, "'%s': unexpected '%s'", sel, p);
		p++;
	}
}

int reload_selector(char **out, const char *const *entries, size_t n, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(64 * 1024);
	size_t i;
	int r = 0;

	*out = NULL;
	for (i = 0; i < n && !r; i++) {
		if (i)
			r = sb_add(&sb, ",");
		if (!r)
			r = translate(&sb, entries[i]);
	}
	if (r < 0) {
		sb_free(&sb);
		return log_err_set(err, r, "selector too long");
	}
	r = check(sb.buf ? sb.buf : "", err);
	if (r < 0) {
		sb_free(&sb);
		return r;
	}
	*out = sb_take(&sb);
	if (!*out)
		*out = strdup("");
	return *out ? 0 : log_err_set(err, -ENOMEM, "out of memory");
}
