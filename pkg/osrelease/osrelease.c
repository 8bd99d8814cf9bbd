/* SPDX-License-Identifier: GPL-2.0-or-later */
/* osrelease: the host's os-release file as NFD's system.osrelease feature. */
#include "osrelease/osrelease.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "feature/feature.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

static bool word_char(unsigned char c)
{
	return isalnum(c) || c == '_';
}

static int set(struct feat_set *fs, const char *key, const char *v, size_t n, struct strbuf *tmp)
{
	sb_reset(tmp);
	if (sb_addn(tmp, v, n) < 0)
		return -ENOMEM;
	return feat_attr_set(fs, OSRELEASE_FEATURE, key, tmp->buf) < 0 ? -ENOMEM : 0;
}

/* VERSION_ID.major/.minor from ^(\d+)(\.(\d+))?(\..*)?$ (Go RE2, leftmost-first). */
static int version_parts(struct feat_set *fs, const char *v, struct strbuf *tmp)
{
	size_t a = 0, b = 0;

	while (isdigit((unsigned char)v[a]))
		a++;
	if (a == 0 || (v[a] != '\0' && v[a] != '.'))
		return 0;
	if (v[a] == '.') {
		while (isdigit((unsigned char)v[a + 1 + b]))
			b++;
		/* the minor group holds only when what follows it can be (\..*)?$ */
		if (b && v[a + 1 + b] != '\0' && v[a + 1 + b] != '.')
			b = 0;
	}
	if (set(fs, "VERSION_ID.major", v, a, tmp) < 0)
		return -ENOMEM;
	if (b && set(fs, "VERSION_ID.minor", v + a + 1, b, tmp) < 0)
		return -ENOMEM;
	return 0;
}

int osrelease_parse(const char *text, size_t len, struct feat_set *fs)
{
	const char *p = text, *end = text + len;
	struct strbuf key = STRBUF_INIT(OSRELEASE_MAX), tmp = STRBUF_INIT(OSRELEASE_MAX);
	const struct feat *f;
	const char *vid;
	int count = 0, r = 0;

	if (feat_declare(fs, OSRELEASE_FEATURE, FEAT_ATTRS) < 0)
		return -ENOMEM;
	while (p < end && r == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line = p, *eol = nl ? nl : end, *k = line, *v, *ve;

		p = eol + 1;
		if (eol > line && eol[-1] == '\r') /* bufio.ScanLines drops one trailing CR */
			eol--;
		while (k < eol && word_char((unsigned char)*k))
			k++;
		/* ^\w+=.+ : a key, '=', and at least one more byte on the line */
		if (k == line || k == eol || *k != '=' || k + 1 == eol)
			continue;
		v = k + 1;
		ve = eol;
		while (v < ve && (*v == '"' || *v == '\''))
			v++;
		while (ve > v && (ve[-1] == '"' || ve[-1] == '\''))
			ve--;
		sb_reset(&key);
		r = sb_addn(&key, line, (size_t)(k - line)) < 0
			? -ENOMEM
			: set(fs, key.buf, v, (size_t)(ve - v), &tmp);
		if (r == 0)
			count++;
	}
	f = feat_get(fs, OSRELEASE_FEATURE);
	vid = f ? feat_lookup(f, "VERSION_ID") : NULL;
	if (r == 0 && vid) {
		/* copied: setting the parts may move the feature's storage */
		sb_reset(&key);
		r = sb_add(&key, vid) < 0 ? -ENOMEM : version_parts(fs, key.buf, &tmp);
	}
	sb_free(&key);
	sb_free(&tmp);
	return r < 0 ? r : count;
}

int osrelease_scan(const char *path, struct feat_set *fs, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(OSRELEASE_MAX);
	int r = sb_read_file(&sb, path);

	if (r == -ENOENT) {
		log_info("%s: not found, no system.osrelease", path);
		r = 0;
		goto out;
	}
	if (r < 0) {
		r = log_err_set(err, r, "%s: %s", path,
				r == -E2BIG    ? "longer than 65536 bytes"
				: r == -EINVAL ? "not a regular file"
					       : strerror(-r));
		goto out;
	}
	r = osrelease_parse(sb.buf, sb.len, fs);
	if (r < 0) {
		r = log_err_set(err, r, "out of memory");
		goto out;
	}
	log_info("%s: %d os-release keys", path, r);
	r = 0;
out:
	sb_free(&sb);
	return r;
}
