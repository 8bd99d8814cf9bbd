/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_apply: configure and cleanup of a containerd config path: _backup/, atomic writes,
 * restore. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base64/base64.h"
#include "fsutil/fsutil.h"
#include "log/log.h"
#include "strbuf/strbuf.h"
#include "toml/toml.h"
#include "mirror/mirror_internal.h"

/*
 * name in base, if present, must be a real directory (never a symbolic link,
 * which could lead out of the config path) owned by us. Returns 1 when it is,
 * 0 when absent, -errno with err when it may not be used: nothing is moved.
 */
static int own_dir(const char *base, const char *name, struct log_err *err)
{
	char p[PATH_MAX], to[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (fs_path_join(p, sizeof(p), base, name, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	if (lstat(p, &st) < 0)
		return errno == ENOENT ? 0 : log_err_set(err, -errno, "%s: %s", p, strerror(errno));
	if (S_ISLNK(st.st_mode)) {
		n = readlink(p, to, sizeof(to) - 1);
		to[n < 0 ? 0 : n] = '\0';
		return log_err_set(
		    err, -ELOOP,
		    "%s is a symbolic link (to %s): refused, it could lead out of the config path; nothing was moved",
		    p, to);
	}
	if (!S_ISDIR(st.st_mode))
		return log_err_set(err, -ENOTDIR,
				   "%s is not a directory: refused, nothing was moved", p);
	if (st.st_uid != geteuid())
		return log_err_set(
		    err, -EPERM,
		    "%s is owned by uid %u, not by us (uid %u): refused, nothing was moved", p,
		    (unsigned)st.st_uid, (unsigned)geteuid());
	return 1;
}

/* Our three directories in base must each be absent or a real directory we own. */
static int own_dirs(const char *base, struct log_err *err)
{
	static const char *const names[] = {MIRROR_BACKUP_DIR, RESTORING, BACKING_UP};
	size_t i;
	int r;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		r = own_dir(base, names[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Finish an interrupted cleanup: the entries still in RESTORING go back to
 * base, then RESTORING is removed.
 */
static int finish_restore(const char *base, struct log_err *err)
{
	char rest[PATH_MAX];
	int r;

	if (fs_path_join(rest, sizeof(rest), base, RESTORING, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	if (!fs_is_dir(rest))
		return 0;
	r = fs_move_all(rest, base, err);
	if (r == 0 && rmdir(rest) < 0)
		r = log_err_set(err, -errno, "%s: %s", rest, strerror(errno));
	return r;
}

/*
 * A watch killed between the two renames of a _backup repair left no _backup,
 * the remembered one complete in WATCH_TMP and the one it replaced in
 * WATCH_OLD: finish that repair, so that a backup does not take our own files
 * for the user's, and cleanup finds _backup.
 */
static int finish_watch_repair(const char *base, struct log_err *err)
{
	char bak[PATH_MAX], tmp[PATH_MAX], old[PATH_MAX];
	struct stat st;

	if (fs_path_join(bak, sizeof(bak), base, MIRROR_BACKUP_DIR, err) < 0 ||
	    fs_path_join(tmp, sizeof(tmp), base, WATCH_TMP, err) < 0 ||
	    fs_path_join(old, sizeof(old), base, WATCH_OLD, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	if (lstat(bak, &st) == 0 || lstat(old, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    lstat(tmp, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (rename(tmp, bak) < 0)
		return log_err_set(err, -errno, "cannot rename %s to %s: %s", tmp, bak,
				   strerror(errno));
	log_info("%s: finished an interrupted repair of %s", base, MIRROR_BACKUP_DIR);
	return fs_remove_tree(base, WATCH_OLD, err);
}

/*
 * First run only (no _backup yet): move everything in base into _backup, via
 * BACKING_UP so an interrupted run resumes instead of losing files.
 */
static bool listed(const struct mirror_list *l, const char *name)
{
	size_t i;

	for (i = 0; l && i < l->n; i++)
		if (!strcmp(l->v[i], name))
			return true;
	return false;
}

static int backup(const char *base, const struct mirror_list *managed, struct log_err *err)
{
	char bak[PATH_MAX], tmp[PATH_MAX];
	char **names;
	size_t n, i;
	int r;

	if (fs_path_join(bak, sizeof(bak), base, MIRROR_BACKUP_DIR, err) < 0 ||
	    fs_path_join(tmp, sizeof(tmp), base, BACKING_UP, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	if (fs_is_dir(bak))
		return 0;
	r = fs_mkdir_if_missing(tmp, err);
	if (r < 0)
		return r;
	r = fs_list_dir(base, &names, &n, err);
	for (i = 0; r == 0 && i < n; i++)
		if (strcmp(names[i], BACKING_UP) != 0 && !listed(managed, names[i]))
			r = fs_move_entry(base, tmp, names[i], err);
	fs_names_free(names, n);
	if (r == 0 && rename(tmp, bak) < 0)
		r = log_err_set(err, -errno, "cannot rename %s to %s: %s", tmp, bak,
				strerror(errno));
	if (r == 0)
		log_info("backed up %s into %s", base, bak);
	return r;
}

/* ---- configure ---- */

struct want {
	char dir[256];	     /* directory name under config_path */
	struct strbuf hosts; /* hosts.toml content */
	mode_t mode;	     /* hosts.toml mode */
	bool copy_backup;    /* prepend: copy _backup/<dir>/ files too */
};

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
static int basic_auth(const char *dir, char **out, struct log_err *err)
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
		r = log_err_set(err, -E2BIG, "%s: credentials too long", dir);
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
			return log_err_set(err, -ENAMETOOLONG, "%s: path too long", base);
		if (i == 0 && fs_is_dir(path))
			break; /* once _backup exists, it is the only source */
		if ((size_t)snprintf(path, size, "%s%s/%s", base, homes[i], dir) >= size)
			return log_err_set(err, -ENAMETOOLONG, "%s: path too long", base);
		if (lstat(path, &st) == 0)
			break;
	}
	if (i == sizeof(homes) / sizeof(homes[0]))
		i = 0;
	if ((size_t)snprintf(path, size, "%s%s/%s", base, homes[i], dir) >= size)
		return log_err_set(err, -ENAMETOOLONG, "%s: path too long", base);
	if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
		return log_err_set(err, -ELOOP,
				   "%s is not a real directory: refused, never followed", path);
	if ((size_t)snprintf(path, size, "%s%s/%s/%s", base, homes[i], dir, HOSTS_TOML) >= size)
		return log_err_set(err, -ENAMETOOLONG, "%s: path too long", base);
	return 0;
}

/*
 * Spegel's existingHosts: the [host.'…'] tables of _backup/<dir>/hosts.toml,
 * re-serialised into out; out NULL reads only the file's mode (existingHostsMode).
 */
static int existing_hosts(const char *base, const char *dir, struct strbuf *out, mode_t *mode,
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

/*
 * What sync_dir copies from path: a directory (not through a symlink) as a
 * directory, a regular file or a symlink to one as a file (Spegel copies the
 * content too), anything else not at all. Fills *st (the target's) and
 * returns S_IFDIR, S_IFREG or 0.
 */
static mode_t copy_kind(const char *path, struct stat *st)
{
	struct stat lst;

	if (lstat(path, &lst) < 0 || stat(path, st) < 0)
		return 0;
	if (S_ISDIR(lst.st_mode))
		return S_IFDIR;
	return S_ISREG(st->st_mode) ? S_IFREG : 0;
}

/*
 * Make directory dst hold exactly: hosts (if not NULL) as hosts.toml, plus (if
 * src is not NULL) copies of src's files other than hosts.toml, recursively.
 * Everything else in dst is removed. Nothing is written when it already matches.
 */
static int sync_dir(const char *dst, const char *src, const struct strbuf *hosts, mode_t mode,
		    struct log_err *err)
{
	char **names = NULL;
	size_t n = 0, i;
	char a[PATH_MAX], b[PATH_MAX];
	struct stat sst, dstt;
	mode_t kind;
	int r;

	if (lstat(dst, &dstt) == 0 && !S_ISDIR(dstt.st_mode)) {
		if (unlink(dst) < 0)
			return log_err_set(err, -errno, "%s: %s", dst, strerror(errno));
	}
	r = fs_mkdir_if_missing(dst, err);
	if (r < 0)
		return r;
	r = fs_list_dir(dst, &names, &n, err);
	for (i = 0; r == 0 && i < n; i++) {
		bool keep = false;

		if (hosts && !strcmp(names[i], HOSTS_TOML)) {
			keep = true;
		} else if (src && strcmp(names[i], HOSTS_TOML) != 0) {
			r = fs_path_join(a, sizeof(a), src, names[i], err);
			if (r == 0)
				r = fs_path_join(b, sizeof(b), dst, names[i], err);
			if (r == 0 && lstat(b, &dstt) == 0 &&
			    copy_kind(a, &sst) == (dstt.st_mode & S_IFMT))
				keep = true;
		}
		if (r == 0 && !keep)
			r = fs_remove_tree(dst, names[i], err);
	}
	fs_names_free(names, n);
	if (r < 0)
		return r;
	if (hosts) {
		r = fs_publish(dst, HOSTS_TOML, hosts->buf, hosts->len, mode, err);
		if (r < 0)
			return r;
		if (r == 1)
			log_info("wrote %s/%s", dst, HOSTS_TOML);
	}
	if (!src)
		return 0;
	r = fs_list_dir(src, &names, &n, err);
	for (i = 0; r == 0 && i < n; i++) {
		if (!strcmp(names[i], HOSTS_TOML))
			continue;
		r = fs_path_join(a, sizeof(a), src, names[i], err);
		if (r == 0)
			r = fs_path_join(b, sizeof(b), dst, names[i], err);
		if (r < 0)
			break;
		kind = copy_kind(a, &sst);
		if (kind == S_IFDIR) {
			r = sync_dir(b, a, NULL, 0, err);
		} else if (kind == S_IFREG) {
			struct strbuf data = STRBUF_INIT(MIRROR_MAX_FILE * 16);

			r = sb_read_file(&data, a);
			if (r < 0)
				mirror_read_error(err, a, r, MIRROR_MAX_FILE * 16);
			else
				r = fs_publish(dst, names[i], data.buf, data.len,
					       sst.st_mode & MODE_MAX, err);
			if (r == 1)
				log_info("copied %s to %s", a, b);
			if (r > 0)
				r = 0;
			sb_free(&data);
		} else {
			log_warn("%s: not a regular file or directory, not copied", a);
		}
	}
	fs_names_free(names, n);
	return r < 0 ? r : 0;
}

static void wants_free(struct want *w, size_t n)
{
	size_t i;

	for (i = 0; w && i < n; i++)
		sb_free(&w[i].hosts);
	free(w);
}

/*
 * Whether <base>/<name> is a directory holding only a hosts.toml in the shape
 * Spegel's template (and configure) writes: an optional server line, then
 * [host.'…'] tables of capabilities, dial_timeout and an Authorization header,
 * no trailing newline. Such a directory was written by a configure (ours or
 * Spegel's) and may be replaced; anything else is the user's.
 */
static bool looks_generated(const char *base, const char *name)
{
	static const char *const heads[] = {
	    "server = '",	"[host.'",	     "capabilities = ['pull'",
	    "dial_timeout = '", "Authorization = '", ""};
	struct strbuf text = STRBUF_INIT(1 << 16);
	char dir[PATH_MAX], file[PATH_MAX], **names = NULL;
	size_t n = 0, i;
	bool yes = false, host = false;
	const char *line, *nl;
	struct stat st;

	if (fs_path_join(dir, sizeof(dir), base, name, NULL) < 0 || lstat(dir, &st) < 0 ||
	    !S_ISDIR(st.st_mode) || fs_list_dir(dir, &names, &n, NULL) < 0)
		return false;
	if (n != 1 || strcmp(names[0], HOSTS_TOML) != 0)
		goto out;
	if (fs_path_join(file, sizeof(file), dir, HOSTS_TOML, NULL) < 0 || lstat(file, &st) < 0 ||
	    !S_ISREG(st.st_mode) || sb_read_file(&text, file) < 0 || text.len == 0 ||
	    text.buf[text.len - 1] == '\n')
		goto out;
	yes = true;
	for (line = text.buf; yes && line < text.buf + text.len; line = nl + 1) {
		size_t len;

		nl = memchr(line, '\n', (size_t)(text.buf + text.len - line));
		if (!nl)
			nl = text.buf + text.len;
		len = (size_t)(nl - line);
		for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
			if (len >= strlen(heads[i]) && !strncmp(line, heads[i], strlen(heads[i])))
				break;
		if (i == sizeof(heads) / sizeof(heads[0]) || (i == 0 && line != text.buf) ||
		    (i == 5 && len != 0) || (len && line[len - 1] != '\'' && line[len - 1] != ']'))
			yes = false;
		host |= i == 1;
	}
	yes = yes && host;
out:
	fs_names_free(names, n);
	sb_free(&text);
	return yes;
}

/*
 * Spegel's clearConfig, without ever losing a user file: an entry of base other
 * than _backup, our dot directories and the distro's managed ones goes away
 * only when _backup holds its original or it is one a configure wrote; else it
 * moves into _backup (an empty or partial _backup, left by a stray mkdir or an
 * interrupted older Spegel, is completed instead of trusted). Entries in keep
 * are rewritten by the caller, so only the moving applies to them.
 */
static int clear_config(const char *base, const struct want *w, size_t nw,
			const struct mirror_list *managed, bool ours_in_place, struct log_err *err)
{
	char bak[PATH_MAX], **names = NULL, p[PATH_MAX];
	size_t n = 0, i, j;
	struct stat st;
	int r;

	if (fs_path_join(bak, sizeof(bak), base, MIRROR_BACKUP_DIR, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	r = fs_list_dir(base, &names, &n, err);
	for (i = 0; r == 0 && i < n; i++) {
		const char *name = names[i];
		bool keep = false, saved;

		if (!strcmp(name, MIRROR_BACKUP_DIR) || !strcmp(name, RESTORING) ||
		    !strcmp(name, BACKING_UP) || listed(managed, name))
			continue;
		for (j = 0; j < nw && !keep; j++)
			keep = !strcmp(name, w[j].dir);
		r = fs_path_join(p, sizeof(p), bak, name, err);
		if (r < 0)
			break;
		saved = lstat(p, &st) == 0;
		if (!saved && !(keep && ours_in_place) && !looks_generated(base, name)) {
			log_warn("%s/%s was not in %s: moved there, not deleted", base, name,
				 MIRROR_BACKUP_DIR);
			r = fs_move_entry(base, bak, name, err);
		} else if (!keep) {
			r = fs_remove_tree(base, name, err);
		}
	}
	fs_names_free(names, n);
	return r;
}

int mirror_configure_ex(const struct mirror_opts *o, bool ours_in_place, struct log_err *err)
{
	const char *base = o->config_path;
	struct mirror_list targets = {0}, managed = {0};
	struct want *w = NULL;
	size_t nw = 0, i, j;
	char *auth = NULL, bak[PATH_MAX], src[PATH_MAX], dst[PATH_MAX];
	int wildcards = 0, r = 0;

	/* everything is validated before the first change on disk */
	if (access(base, F_OK) == 0 && !fs_is_dir(base))
		return log_err_set(err, -ENOTDIR, "config path %s: not a directory", base);
	r = own_dirs(base, err);
	if (r == 0)
		r = mirror_expand_targets(&o->targets, &targets, err);
	for (i = 0; r == 0 && i < targets.n; i++)
		if (strchr(targets.v[i], ']'))
			log_warn(
			    "mirror target '%s': containerd 1.x cannot read a [host] key with ']' (IPv6) and will ignore the whole file",
			    targets.v[i]);
	if (r == 0 && o->basic_auth_dir)
		r = basic_auth(o->basic_auth_dir, &auth, err);
	if (r == 0)
		r = mirror_distro_managed(o, &managed, err);
	if (r < 0)
		goto out;
	nw = o->registries.n ? o->registries.n : 1;
	w = calloc(nw, sizeof(*w));
	if (!w) {
		r = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = j = 0; i < nw; i++) {
		const char *reg = o->registries.n ? o->registries.v[i] : "_default";
		struct strbuf existing = STRBUF_INIT(MIRROR_MAX_FILE);
		struct want *wi = &w[j];
		size_t k;

		sb_init(&wi->hosts, MIRROR_MAX_FILE);
		wi->mode = 0644;
		wildcards += mirror_is_wildcard(reg);
		if (wildcards > 1) {
			r = log_err_set(err, -EINVAL,
					"registries contain two wildcards (_default or *)");
			goto out;
		}
		r = mirror_registry_dir(reg, wi->dir, sizeof(wi->dir), err);
		for (k = 0; r == 0 && k < j; k++)
			if (!strcmp(w[k].dir, wi->dir))
				r = log_err_set(err, -EINVAL, "registry '%s' given twice", reg);
		if (r == 0 && listed(&managed, wi->dir)) {
			/* k3s/RKE2 rewrite it from registries.yaml at their next start */
			log_warn(
			    "%s: managed by %s's registries.yaml: not written (add the mirror there)",
			    wi->dir, o->distro == MIRROR_DISTRO_RKE2 ? "rke2" : "k3s");
			sb_free(&wi->hosts);
			continue;
		}
		if (r == 0)
			r = mirror_render(&wi->hosts, reg, &targets, o->resolve_tags != 0,
					  o->dial_timeout, auth, err);
		if (r == 0)
			r = existing_hosts(base, wi->dir,
					   o->prepend_existing == 1 ? &existing : NULL, &wi->mode,
					   err);
		if (r == 0 && o->prepend_existing == 1 && existing.len) {
			wi->copy_backup = true;
			if (sb_add(&wi->hosts, "\n\n") < 0 ||
			    sb_addn(&wi->hosts, existing.buf, existing.len) < 0)
				r = log_err_set(err, -E2BIG, "%s: hosts.toml too large", wi->dir);
			else
				log_info("%s: keeping the existing hosts after the mirrors",
					 wi->dir);
		}
		sb_free(&existing);
		j++;
		if (r < 0)
			goto out;
	}
	nw = j;

	r = fs_mkdir_p(base, 0755);
	if (r < 0) {
		log_err_set(err, r, "%s: cannot create directory: %s", base, strerror(-r));
		goto out;
	}
	r = finish_watch_repair(base, err);
	if (r == 0)
		r = finish_restore(base, err);
	if (r == 0)
		r = backup(base, &managed, err);
	if (r == 0)
		r = clear_config(base, w, nw, &managed, ours_in_place, err);
	if (r < 0)
		goto out;
	if (fs_path_join(bak, sizeof(bak), base, MIRROR_BACKUP_DIR, err) < 0) {
		r = err ? err->code : -ENAMETOOLONG;
		goto out;
	}
	for (i = 0; r == 0 && i < nw; i++) {
		r = fs_path_join(dst, sizeof(dst), base, w[i].dir, err);
		if (r == 0)
			r = fs_path_join(src, sizeof(src), bak, w[i].dir, err);
		if (r == 0)
			r = sync_dir(dst, w[i].copy_backup ? src : NULL, &w[i].hosts, w[i].mode,
				     err);
	}
out:
	wants_free(w, nw);
	mirror_list_free(&targets);
	mirror_list_free(&managed);
	free(auth);
	return r;
}

/* ---- cleanup ---- */

static int cleanup(const struct mirror_opts *o, struct log_err *err)
{
	const char *base = o->config_path;
	char bak[PATH_MAX], rest[PATH_MAX], tmp[PATH_MAX], **names = NULL;
	struct mirror_list managed = {0};
	size_t n = 0, i;
	int r;

	if (fs_path_join(bak, sizeof(bak), base, MIRROR_BACKUP_DIR, err) < 0 ||
	    fs_path_join(rest, sizeof(rest), base, RESTORING, err) < 0 ||
	    fs_path_join(tmp, sizeof(tmp), base, BACKING_UP, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	r = own_dirs(base, err);
	if (r == 0)
		r = finish_watch_repair(base, err);
	if (r < 0)
		return r;
	if (!fs_is_dir(bak) && fs_is_dir(tmp)) {
		/* a first configure stopped while backing up: nothing was written yet */
		r = fs_move_all(tmp, base, err);
		if (r == 0 && rmdir(tmp) < 0)
			r = log_err_set(err, -errno, "%s: %s", tmp, strerror(errno));
		if (r < 0)
			return r;
	}
	if (!fs_is_dir(bak)) {
		if (fs_is_dir(rest))
			return finish_restore(base, err);
		log_info("%s: no %s, nothing to clean up", base, MIRROR_BACKUP_DIR);
		return 0;
	}
	r = mirror_distro_managed(o, &managed, err);
	if (r == 0)
		r = fs_list_dir(base, &names, &n, err);
	for (i = 0; r == 0 && i < n; i++)
		if (strcmp(names[i], MIRROR_BACKUP_DIR) != 0 && !listed(&managed, names[i]))
			r = fs_remove_tree(base, names[i], err);
	fs_names_free(names, n);
	mirror_list_free(&managed);
	if (r < 0)
		return r;
	/* from here on a rerun must not delete anything: restore through RESTORING */
	if (rename(bak, rest) < 0)
		return log_err_set(err, -errno, "cannot rename %s to %s: %s", bak, rest,
				   strerror(errno));
	return finish_restore(base, err);
}

int mirror_configure(const struct mirror_opts *o, struct log_err *err)
{
	return mirror_configure_ex(o, false, err);
}

/*
 * configure and cleanup of one config path, and each repair of a watch on it,
 * take turns: a cleanup (an uninstall) beside a running watch must not meet a
 * repair half way.
 */
int mirror_lock(const char *config_path, struct log_err *err)
{
	int fd = fs_lock_dir(config_path, MIRROR_LOCK_MS, err);

	if (fd == -ENOENT || fd == -ENOTDIR) {
		/* nothing there yet to serialise; a file is reported by what runs next */
		log_err_clear(err);
		return INT_MAX;
	}
	return fd;
}

void mirror_unlock(int fd)
{
	if (fd >= 0 && fd != INT_MAX)
		close(fd);
}

int mirror_run(struct mirror_opts *o, struct log_err *err)
{
	int lock, r;

	switch (o->cmd) {
	case MIRROR_CONFIGURE:
	case MIRROR_CLEANUP:
		lock = mirror_lock(o->config_path, err);
		if (lock < 0)
			return lock;
		r = o->cmd == MIRROR_CONFIGURE ? mirror_configure(o, err) : cleanup(o, err);
		mirror_unlock(lock);
		return r;
	case MIRROR_CHECK:
		return mirror_check_run(o, err);
	case MIRROR_WATCH:
		return mirror_watch_run(o, err);
	case MIRROR_TALOS_CONFIG:
		return mirror_talos_config(o, err);
	}
	return log_err_set(err, -EINVAL, "unknown command");
}
