/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_inputs: what configure reads before it writes: basic-auth files, ${VAR} in targets. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>

#include "base64/base64.h"
#include "fsutil/fsutil.h"
#include "log/log.h"
#include "strbuf/strbuf.h"
#include "mirror/mirror_internal.h"

/* Append the content of dir/name to sb; a missing file is empty. */
static int read_secret(const char *dir, const char *name, struct strbuf *sb, char *path,
		       struct log_err *err)
{
	int r = fs_path_join(path, PATH_MAX, dir, name, err);

	if (r == 0)
		r = sb_read_file(sb, path);
	if (r == -ENOENT)
		return 0;
	if (r < 0 && r != -ENAMETOOLONG)
		mirror_read_error(err, path, r, 4096);
	return r < 0 ? r : 0;
}

/*
 * Spegel's LoadUserinfo + UserinfoHeaderValue: "Basic base64(user:pass)" from
 * the bytes of <dir>/username and <dir>/password, untrimmed (Spegel's registry
 * compares the same raw bytes); *out stays NULL when both are missing or empty.
 */
int mirror_basic_auth(const char *dir, char **out, struct log_err *err)
{
	struct strbuf user = STRBUF_INIT(4096), pass = STRBUF_INIT(4096), up = STRBUF_INIT(8200);
	char path[PATH_MAX];
	char *b64 = NULL;
	int r;

	*out = NULL;
	r = read_secret(dir, "username", &user, path, err);
	if (r == 0 && memchr(user.buf, ':', user.len))
		r = log_err_set(err, -EINVAL,
				"%s: a user name with ':' cannot be sent in basic auth", path);
	if (r == 0)
		r = read_secret(dir, "password", &pass, path, err);
	if (r < 0 || (user.len == 0 && pass.len == 0)) {
		if (r == 0)
			log_debug("%s: no username or password, no basic auth", dir);
		goto out;
	}
	if (sb_addn(&up, user.buf, user.len) < 0 || sb_addch(&up, ':') < 0 ||
	    sb_addn(&up, pass.buf, pass.len) < 0) {
		r = log_err_set(err, -E2BIG,
				"%s: username and password over 8 KiB together: shorten them", dir);
		goto out;
	}
	b64 = malloc(BASE64_ENCODED_LEN(up.len) + 1 + 6);
	if (!b64) {
		r = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	memcpy(b64, "Basic ", 6);
	base64_encode(up.buf, up.len, b64 + 6);
	*out = b64;
	r = 0;
out:
	/* the credentials never leave this function except as the header value */
	if (up.len)
		memset(up.buf, 0, up.len);
	if (pass.len)
		memset(pass.buf, 0, pass.len);
	sb_free(&user);
	sb_free(&pass);
	sb_free(&up);
	return r;
}

/* Expand ${NAME} references from the environment into out. */
static int expand_env(const char *in, char **out, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(4096);
	const char *p = in;
	int r = 0;

	while (r == 0 && *p) {
		const char *end;
		char name[128];
		const char *val;

		if (p[0] != '$' || p[1] != '{') {
			r = sb_addch(&sb, *p++);
			continue;
		}
		end = strchr(p + 2, '}');
		if (!end || end == p + 2 || (size_t)(end - p - 2) >= sizeof(name)) {
			r = log_err_set(err, -EINVAL, "mirror target '%s': bad ${...} reference",
					in);
			break;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(end - p - 2), p + 2);
		val = getenv(name);
		if (!val || !*val) {
			r = log_err_set(err, -EINVAL,
					"mirror target '%s': environment variable %s is not set",
					in, name);
			break;
		}
		{
			/* an IPv6 address as the URL's host is written [addr] (RFC 3986 3.2.2) */
			unsigned char a6[16];
			bool host = sb.len >= 3 && !memcmp(sb.buf + sb.len - 3, "://", 3);

			if (host && inet_pton(AF_INET6, val, a6) == 1)
				r = sb_addf(&sb, "[%s]", val);
			else
				r = sb_add(&sb, val);
		}
		p = end + 1;
	}
	if (r == 0 && !(*out = sb_take(&sb)))
		r = -ENOMEM;
	if (r == -ENOMEM || r == -E2BIG)
		log_err_set(err, r, "'%s': %s", in, strerror(-r));
	sb_free(&sb);
	return r;
}

int mirror_expand_targets(const struct mirror_list *in, struct mirror_list *out,
			  struct log_err *err)
{
	size_t i, j;
	int r = 0;

	for (i = 0; r == 0 && i < in->n; i++) {
		char *t = NULL;

		r = expand_env(in->v[i], &t, err);
		if (r == 0 && (r = mirror_list_add(out, t)) < 0)
			log_err_set(err, r, "out of memory");
		free(t);
		/* two identical [host] tables: containerd refuses the whole file */
		for (j = 0; r == 0 && j < i; j++)
			if (!strcasecmp(out->v[j], out->v[i]))
				r = log_err_set(
				    err, -EINVAL,
				    "mirror target '%s' given twice: containerd would refuse the file (duplicate [host] table)",
				    out->v[i]);
	}
	return r;
}
