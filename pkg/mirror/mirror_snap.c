/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_snap: snapshots of the trees watch keeps (our hosts.toml, _backup), compared and put back.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil/fsutil.h"
#include "log/log.h"
#include "strbuf/strbuf.h"
#include "mirror/mirror_internal.h"

/*
 * Bounds: what one snapshot of a tree we own may hold (a hosts.toml dir holds a
 * few files; _backup holds the user's config path).
 */
#define SNAP_MAX_NODES 1024
#define SNAP_MAX_BYTES (16u << 20)
#define SNAP_MAX_DEPTH 8

void mirror_snap_free(struct snap *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].rel);
		free(s->v[i].data);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int snap_add(struct snap *s, const char *rel, const struct stat *st, char *data, size_t len,
		    struct log_err *err)
{
	struct snap_node *v;

	if (s->n >= SNAP_MAX_NODES || s->bytes + len > SNAP_MAX_BYTES) {
		free(data);
		return log_err_set(
		    err, -E2BIG,
		    "%s: more than %u entries or %u MiB to keep in memory: watch cannot guard it; move what is not registry configuration out of the config path",
		    rel, SNAP_MAX_NODES, SNAP_MAX_BYTES >> 20);
	}
	v = realloc(s->v, (s->n + 1) * sizeof(*v));
	if (!v) {
		free(data);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	s->v = v;
	v[s->n].rel = strdup(rel);
	if (!v[s->n].rel) {
		free(data);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	v[s->n].type = st->st_mode & S_IFMT;
	v[s->n].mode = st->st_mode & 07777;
	v[s->n].data = data;
	v[s->n].len = len;
	s->bytes += len;
	s->n++;
	return 0;
}

/*
 * Read base/rel (never following a link) and, for a directory, what it holds;
 * hosts_only: of the top directory only its hosts.toml (a registry directory
 * of ours, where the user's other files stay beside it and are not ours).
 */
static int snap_read(struct snap *s, const char *base, const char *rel, int depth, bool hosts_only,
		     struct log_err *err)
{
	char path[PATH_MAX], child[PATH_MAX], **names = NULL;
	struct strbuf sb;
	struct stat st;
	size_t n = 0, i;
	ssize_t l;
	int r;

	if (fs_path_join(path, sizeof(path), base, rel, err) < 0)
		return -ENAMETOOLONG;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0
				       : log_err_set(err, -errno, "%s: %s", path, strerror(errno));
	if (depth == 0)
		s->present = true;
	if (S_ISLNK(st.st_mode)) {
		char *target = malloc(PATH_MAX);

		if (!target)
			return log_err_set(err, -ENOMEM, "out of memory");
		l = readlink(path, target, PATH_MAX - 1);
		if (l < 0) {
			free(target);
			return log_err_set(err, -errno, "%s: %s", path, strerror(errno));
		}
		target[l] = '\0';
		return snap_add(s, rel, &st, target, (size_t)l, err);
	}
	if (S_ISREG(st.st_mode)) {
		sb_init(&sb, MIRROR_MAX_FILE);
		r = sb_read_file(&sb, path);
		if (r < 0) {
			sb_free(&sb);
			return log_err_set(err, r, "%s: %s", path,
					   r == -E2BIG ? "file too large" : strerror(-r));
		}
		l = (ssize_t)sb.len;
		return snap_add(s, rel, &st, sb_take(&sb), (size_t)l, err);
	}
	if (!S_ISDIR(st.st_mode))
		return 0; /* a device or FIFO is nothing we write or restore */
	if (depth >= SNAP_MAX_DEPTH)
		return log_err_set(
		    err, -E2BIG,
		    "%s: deeper than %d directories: watch cannot guard it; flatten it or move it out of the config path",
		    path, SNAP_MAX_DEPTH);
	r = snap_add(s, rel, &st, NULL, 0, err);
	if (r == 0)
		r = fs_list_dir(path, &names, &n, err);
	for (i = 0; r == 0 && i < n; i++) {
		if (hosts_only && strcmp(names[i], HOSTS_TOML) != 0)
			continue;
		r = fs_path_join(child, sizeof(child), rel, names[i], err);
		if (r == 0)
			r = snap_read(s, base, child, depth + 1, false, err);
	}
	fs_names_free(names, n);
	return r;
}

int mirror_snap_take(struct snap *s, const char *base, const char *name, struct log_err *err)
{
	int r;

	mirror_snap_free(s);
	r = snap_read(s, base, name, 0, strcmp(name, MIRROR_BACKUP_DIR) != 0, err);
	if (r < 0)
		mirror_snap_free(s);
	return r;
}

/* The node of s named rel, or NULL; *hint is where the search starts and goes on. */
static const struct snap_node *snap_find(const struct snap *s, const char *rel, size_t *hint)
{
	size_t k, i;

	for (k = 0; k < s->n; k++) {
		i = (*hint + k) % s->n;
		if (!strcmp(s->v[i].rel, rel)) {
			*hint = i + 1;
			return &s->v[i];
		}
	}
	return NULL;
}

/* How node b (NULL: absent) differs from the kept node a, in words ("" when equal). */
static const char *node_diff(const struct snap_node *a, const struct snap_node *b)
{
	if (!b)
		return "changed (entries removed)";
	if (a->type != b->type)
		return "changed (entries replaced)";
	if (a->mode != b->mode)
		return "changed (mode)";
	if (a->len != b->len || (a->len && memcmp(a->data, b->data, a->len) != 0))
		return "changed (content)";
	return "";
}

/*
 * What of the kept snapshot is missing or different now, in words ("" when
 * all is there). Entries that appeared beside the kept ones are someone
 * else's: not a difference, never removed.
 */
const char *mirror_snap_diff(const struct snap *kept, const struct snap *now)
{
	const char *why;
	size_t i, hint = 0;

	if (kept->present && !now->present)
		return "removed";
	for (i = 0; i < kept->n; i++) {
		why = node_diff(&kept->v[i], snap_find(now, kept->v[i].rel, &hint));
		if (*why)
			return why;
	}
	return "";
}

/* Make node nd at path: a directory, a symbolic link or a file (fs_publish, fsynced). */
static int node_make(const struct snap_node *nd, char *path, struct log_err *err)
{
	char *slash;
	int r;

	if (nd->type == S_IFDIR) {
		if (mkdir(path, 0700) < 0 || chmod(path, nd->mode) < 0)
			return log_err_set(err, -errno, "%s: %s", path, strerror(errno));
		return 0;
	}
	if (nd->type == S_IFLNK) {
		if (symlink(nd->data, path) < 0)
			return log_err_set(err, -errno, "%s: %s", path, strerror(errno));
		return 0;
	}
	slash = strrchr(path, '/');
	*slash = '\0';
	r = fs_publish(path, slash + 1, nd->data, nd->len, nd->mode, err);
	*slash = '/';
	return r < 0 ? r : 0;
}

/*
 * Write snapshot s (of base/<name>, which is gone) back as base/<name>: built
 * in WATCH_BUILD, renamed to WATCH_TMP once complete (a killed repair is then
 * finished by configure or cleanup, mirror_recover), then into place, so a
 * reader sees no tree or the whole one. Nothing is removed on the way.
 */
int mirror_snap_restore(const struct snap *s, const char *base, struct log_err *err)
{
	char path[PATH_MAX], build[PATH_MAX], tmp[PATH_MAX], dst[PATH_MAX];
	const char *root;
	size_t rootlen, i;
	int r;

	if (!s->present || s->n == 0)
		return 0;
	root = s->v[0].rel;
	rootlen = strlen(root);
	if (fs_path_join(build, sizeof(build), base, WATCH_BUILD, err) < 0 ||
	    fs_path_join(tmp, sizeof(tmp), base, WATCH_TMP, err) < 0 ||
	    fs_path_join(dst, sizeof(dst), base, root, err) < 0)
		return -ENAMETOOLONG;
	r = fs_remove_tree(base, WATCH_BUILD, err);
	if (r == 0)
		r = fs_remove_tree(base, WATCH_TMP, err);
	for (i = 0; r == 0 && i < s->n; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s%s", build, s->v[i].rel + rootlen) >=
		    sizeof(path))
			return log_err_set(err, -ENAMETOOLONG, "%s: path too long", s->v[i].rel);
		r = node_make(&s->v[i], path, err);
	}
	if (r == 0 && rename(build, tmp) < 0)
		r = log_err_set(err, -errno, "cannot rename %s to %s: %s", build, tmp,
				strerror(errno));
	if (r == 0 && rename(tmp, dst) < 0)
		r = log_err_set(err, -errno, "cannot rename %s to %s: %s", tmp, dst,
				strerror(errno));
	if (r < 0)
		fs_remove_tree(base, WATCH_BUILD, NULL);
	return r;
}

/*
 * Put back in base what of snapshot s is missing or changed: a file through a
 * temp file in WATCH_BUILD renamed into place, a directory or link made. What
 * someone added is left; what stands where a kept entry of another kind was
 * is left too, with a warning (it is not ours to remove).
 */
int mirror_snap_fill(const struct snap *s, const struct snap *now, const char *base,
		     struct log_err *err)
{
	char path[PATH_MAX], build[PATH_MAX], tmp[PATH_MAX];
	const struct snap_node *b;
	size_t i, hint = 0;
	int r;

	if (fs_path_join(build, sizeof(build), base, WATCH_BUILD, err) < 0)
		return -ENAMETOOLONG;
	r = fs_remove_tree(base, WATCH_BUILD, err);
	if (r == 0)
		r = fs_mkdir_if_missing(build, err);
	for (i = 0; r == 0 && i < s->n; i++) {
		const struct snap_node *a = &s->v[i];

		b = snap_find(now, a->rel, &hint);
		if (!*node_diff(a, b))
			continue;
		if (fs_path_join(path, sizeof(path), base, a->rel, err) < 0)
			return -ENAMETOOLONG;
		if (b && (b->type != a->type || a->type == S_IFLNK)) {
			log_warn("%s: not what was backed up, and not ours to remove: left alone",
				 path);
			continue;
		}
		if (b && a->type == S_IFDIR) {
			if (chmod(path, a->mode) < 0)
				r = log_err_set(err, -errno, "%s: %s", path, strerror(errno));
			continue;
		}
		if (a->type != S_IFREG) {
			r = node_make(a, path, err);
			continue;
		}
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%zu", build, i) >= sizeof(tmp))
			return log_err_set(err, -ENAMETOOLONG, "%s: path too long", build);
		r = node_make(a, tmp, err);
		if (r == 0 && rename(tmp, path) < 0)
			r = log_err_set(err, -errno, "cannot rename %s to %s: %s", tmp, path,
					strerror(errno));
	}
	if (r == 0)
		r = fs_remove_tree(base, WATCH_BUILD, err);
	return r;
}
