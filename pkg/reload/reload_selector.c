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

/* Check the Kubernetes label-selector grammar (labels.Parse); 0 or -EINVAL with err. */
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
		if (!n || n > 316)
			return log_err_set(err, -EINVAL, "'%s': expected a label key at '%s'", sel,
					   p);
		p = skip_ws(p + n);
		if (p[0] == '=' || (p[0] == '!' && p[1] == '=')) {
			p += p[0] == '!' || p[1] == '=' ? 2 : 1;
			p = skip_ws(p);
			p = skip_ws(p + word(p));
		} else if (!strncmp(p, "in", 2) || !strncmp(p, "notin", 5)) {
			p = skip_ws(p + (p[0] == 'i' ? 2 : 5));
			if (*p != '(')
				return log_err_set(err, -EINVAL, "'%s': expected '(' at '%s'", sel,
						   p);
			do {
				p = skip_ws(p + 1);
				p = skip_ws(p + word(p));
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
