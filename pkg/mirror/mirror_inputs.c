/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_inputs: what configure reads before it writes: basic-auth files, ${VAR} in targets, the
 * user's backed-up hosts. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <arpa/inet.h>

#include "base64/base64.h"
#include "fsutil/fsutil.h"
#include "log/log.h"
#include "strbuf/strbuf.h"
#include "toml/toml.h"
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

/*
 * Where the user's <dir>/hosts.toml is before or after the backup: in _backup
 * once it exists; before the first backup (or while one or a restore was
 * interrupted) where it will be moved from.
 */
static int backup_source(const char *base, const char *dir, char *path, size_t size,
			 struct log_err *err)
{
	static const char *const homes[] = {"/" MIRROR_BACKUP_DIR, "/" RESTORING, "/" BACKING_UP,
					    ""};
	struct stat st;
	size_t i;

	for (i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		if ((size_t)snprintf(path, size, "%s%s", base, homes[i]) >= size)
			return log_err_set(
			    err, -ENAMETOOLONG,
			    "%s: path too long (over %d bytes): use a shorter config path", base,
			    PATH_MAX - 1);
		if (i == 0 && fs_is_dir(path))
			break; /* once _backup exists, it is the only source */
		if ((size_t)snprintf(path, size, "%s%s/%s", base, homes[i], dir) >= size)
			return log_err_set(
			    err, -ENAMETOOLONG,
			    "%s: path too long (over %d bytes): use a shorter config path", base,
			    PATH_MAX - 1);
		if (lstat(path, &st) == 0)
			break;
	}
	if (i == sizeof(homes) / sizeof(homes[0]))
		i = 0;
	if ((size_t)snprintf(path, size, "%s%s/%s", base, homes[i], dir) >= size)
		return log_err_set(err, -ENAMETOOLONG,
				   "%s: path too long (over %d bytes): use a shorter config path",
				   base, PATH_MAX - 1);
	if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
		return log_err_set(
		    err, -ELOOP,
		    "%s is not a real directory: refused, never followed, nothing was changed; replace it with a directory and run configure again",
		    path);
	if ((size_t)snprintf(path, size, "%s%s/%s/%s", base, homes[i], dir, HOSTS_TOML) >= size)
		return log_err_set(err, -ENAMETOOLONG,
				   "%s: path too long (over %d bytes): use a shorter config path",
				   base, PATH_MAX - 1);
	return 0;
}

/*
 * Spegel's existingHosts: the [host.'…'] tables of _backup/<dir>/hosts.toml,
 * re-serialised into out; out NULL reads only the file's mode (existingHostsMode).
 */
int mirror_existing_hosts(const char *base, const char *dir, struct strbuf *out, mode_t *mode,
			  struct log_err *err)
{
	struct strbuf text = STRBUF_INIT(MIRROR_MAX_FILE);
	struct toml_value *root = NULL;
	const struct toml_value *host;
	char path[PATH_MAX];
	struct stat st;
	size_t i, j, *order = NULL, n = 0;
	int r;

	r = backup_source(base, dir, path, sizeof(path), err);
	if (r < 0)
		return r;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0
				       : log_err_set(err, -errno, "%s: %s", path, strerror(errno));
	*mode = st.st_mode & MODE_MAX;
	if (!out)
		return 0; /* only the mode is wanted */
	r = sb_read_file(&text, path);
	if (r < 0) {
		mirror_read_error(err, path, r, MIRROR_MAX_FILE);
		goto out;
	}
	r = toml_parse(text.buf, text.len, path, &root, err);
	if (r < 0)
		goto out;
	host = toml_get(root, "host");
	if (!host || host->type != TOML_TABLE || host->n == 0)
		goto out;
	/* Spegel lists the [host.X] headers in file order */
	order = calloc(host->n, sizeof(*order));
	if (!order) {
		r = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < host->n; i++) {
		const struct toml_value *h = host->items[i];

		if (h->type != TOML_TABLE || h->origin != TOML_HEADER)
			continue;
		for (j = n; j > 0 && host->items[order[j - 1]]->line > h->line; j--)
			order[j] = order[j - 1];
		order[j] = i;
		n++;
	}
	for (i = 0; r == 0 && i < n; i++) {
		struct strbuf name = STRBUF_INIT(4096);

		r = sb_add(&name, "host.");
		if (r == 0)
			r = toml_write_key(&name, host->keys[order[i]]);
		if (r == 0 && out->len)
			r = sb_addch(out, '\n');
		if (r == 0)
			r = toml_write_table(out, name.buf, host->items[order[i]]);
		sb_free(&name);
	}
	sb_rtrim(out);
	if (r < 0)
		log_err_set(err, r, "%s: %s", path, strerror(-r));
out:
	free(order);
	toml_free(root);
	sb_free(&text);
	return r < 0 ? r : 0;
}
