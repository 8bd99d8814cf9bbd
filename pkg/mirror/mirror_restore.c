/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_restore: cleanup, the merge that puts _backup back, and the recovery of what a killed
 * configure, cleanup or watch left. Calls plan, distro, base. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil/fsutil.h"
#include "log/log.h"
#include "strbuf/strbuf.h"
#include "mirror/mirror_internal.h"

/* Deepest directory mirror_merge walks into (a registry directory holds a few files). */
#define MERGE_MAX_DEPTH 16

int mirror_list_bounded(const char *dir, char ***names, size_t *n, struct log_err *err)
{
	int r = fs_list_dir(dir, names, n, err);

	if (r == 0 && *n > MIRROR_MAX_ENTRIES) {
		fs_names_free(*names, *n);
		*names = NULL;
		*n = 0;
		r = log_err_set(
		    err, -E2BIG,
		    "%s: more than %d entries: refused, nothing was changed; move what is not registry configuration out of it",
		    dir, MIRROR_MAX_ENTRIES);
	}
	return r;
}

/* Whether files a and b (opened as they are) hold the same bytes, read in blocks. */
static bool same_bytes(const char *a, const char *b, off_t size)
{
	char x[8192], y[8192];
	int fa = open(a, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK),
	    fb = open(b, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
	bool same = fa >= 0 && fb >= 0;
	off_t done = 0;

	while (same && done < size) {
		size_t want = size - done < (off_t)sizeof(x) ? (size_t)(size - done) : sizeof(x);

		same = read(fa, x, want) == (ssize_t)want && read(fb, y, want) == (ssize_t)want &&
		       !memcmp(x, y, want);
		done += (off_t)want;
	}
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

/*
 * Whether b may be replaced by a in a merge: regular files with the same mode
 * and bytes; with copies (cleanup), also when b is the copy configure's
 * --prepend-existing made of a (a regular file or a symlink to one: the same
 * bytes, mode that of the source at most MODE_MAX). Compared in blocks, at
 * most the 16 MiB a copy may hold.
 */
static bool same_file(const char *a, const char *b, const struct stat *sa, const struct stat *sb,
		      bool copies)
{
	struct stat t;

	if (!S_ISREG(sb->st_mode) || sb->st_size > (off_t)MIRROR_MAX_FILE * 16)
		return false;
	if (S_ISREG(sa->st_mode) && sa->st_size == sb->st_size &&
	    (sa->st_mode & 07777) == (sb->st_mode & 07777))
		return same_bytes(a, b, sb->st_size);
	return copies && stat(a, &t) == 0 && S_ISREG(t.st_mode) && t.st_size == sb->st_size &&
	       (t.st_mode & MODE_MAX) == (sb->st_mode & 07777) && same_bytes(a, b, sb->st_size);
}

/*
 * How a merge goes. restore (cleanup putting _backup back; the distro's
 * managed names): a copy --prepend-existing made is replaced like an
 * identical file, and at depth 1, in a directory not managed, a regular
 * hosts.toml (ours: cleanup kept it so the directory is never without one) is
 * replaced by the user's. bad (a dry run, changing nothing): each conflict is
 * logged and counted there instead of stopping the merge.
 */
struct merge_how {
	const struct mirror_list *restore;
	size_t *bad;
};

static int merge(const char *from, const char *to, int depth, const struct merge_how *how,
		 bool hosts_ours, struct log_err *err)
{
	char a[PATH_MAX], b[PATH_MAX], **names = NULL;
	const bool dry = how->bad != NULL;
	struct stat sa, sb;
	size_t n = 0, i;
	int r;

	if (depth > MERGE_MAX_DEPTH)
		return log_err_set(
		    err, -E2BIG,
		    "%s: deeper than %d directories: not merged into %s; move it by hand and run again",
		    from, MERGE_MAX_DEPTH, to);
	r = mirror_list_bounded(from, &names, &n, err);
	for (i = 0; r == 0 && i < n; i++) {
		r = fs_path_join(a, sizeof(a), from, names[i], err);
		if (r == 0)
			r = fs_path_join(b, sizeof(b), to, names[i], err);
		if (r < 0)
			break;
		if (lstat(b, &sb) < 0) {
			if (errno != ENOENT)
				r = log_err_set(err, -errno, "%s: %s", b, strerror(errno));
			else if (!dry)
				r = fs_move_entry(from, to, names[i], err);
			continue;
		}
		if (lstat(a, &sa) < 0) {
			r = log_err_set(err, -errno, "%s: %s", a, strerror(errno));
			break;
		}
		if (!S_ISDIR(sa.st_mode) && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev) {
			/* two names of one file (configure links the user's hosts.toml into
			 * its backup): rename would do nothing, the second name goes */
			if (!dry && unlink(a) < 0)
				r = log_err_set(err, -errno, "%s: cannot remove: %s", a,
						strerror(errno));
		} else if (S_ISDIR(sa.st_mode) && S_ISDIR(sb.st_mode)) {
			r = merge(a, b, depth + 1, how,
				  how->restore && depth == 0 &&
				      !mirror_listed(how->restore, names[i]),
				  err);
			if (r == 0 && !dry && rmdir(a) < 0)
				r = log_err_set(err, -errno, "%s: %s", a, strerror(errno));
		} else if ((hosts_ours && depth == 1 && !strcmp(names[i], HOSTS_TOML) &&
			    S_ISREG(sb.st_mode)) ||
			   same_file(a, b, &sa, &sb, how->restore != NULL)) {
			r = dry ? 0 : fs_move_entry(from, to, names[i], err);
		} else if (dry) {
			log_error(
			    "cannot put %s back: %s is in its place and differs; keep the one "
			    "you want at %s and remove the other",
			    a, b, b);
			(*how->bad)++;
		} else {
			r = log_err_set(
			    err, -EEXIST,
			    "cannot put %s back: %s is in its place and differs; keep the one you want at %s, remove the other, and run cleanup again",
			    a, b, b);
		}
	}
	fs_names_free(names, n);
	return r;
}

int mirror_merge(const char *from, const char *to, struct log_err *err)
{
	const struct merge_how how = {NULL, NULL};

	return merge(from, to, 0, &how, false, err);
}

/* mirror_merge of a registry directory's backup into it, a regular hosts.toml there renamed over.
 */
static int merge_over_ours(const char *from, const char *to, struct log_err *err)
{
	const struct merge_how how = {NULL, NULL};

	return merge(from, to, 1, &how, true, err);
}

/* Whether base/name is a directory holding nothing but a hosts.toml (ours: it is removed). */
static bool holds_only_hosts(const char *base, const char *name)
{
	char p[PATH_MAX], **names = NULL;
	size_t n = 0;
	bool only;

	only = fs_path_join(p, sizeof(p), base, name, NULL) == 0 &&
	       fs_list_dir(p, &names, &n, NULL) == 0 && n <= 1 &&
	       (n == 0 || !strcmp(names[0], HOSTS_TOML));
	fs_names_free(names, n);
	return only;
}

/*
 * A registry directory no longer written, its user's hosts.toml in bak/name: as on a first run,
 * bak/name goes back into it (the user's hosts.toml renamed over ours), then it moves into bak
 * whole (its mode and owner); renames only, so a killed run is finished by the next one.
 */
int mirror_back_up_rest(const char *base, const char *bak, const char *name, struct log_err *err)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct stat st;
	int r;

	if (fs_path_join(a, sizeof(a), base, name, err) < 0 ||
	    fs_path_join(b, sizeof(b), bak, name, err) < 0)
		return -ENAMETOOLONG;
	if (lstat(a, &st) < 0 || !S_ISDIR(st.st_mode) || holds_only_hosts(base, name))
		return 0; /* not a directory, or ours alone: mirror_drop_ours removes it */
	r = merge_over_ours(b, a, err);
	if (r == 0 && rmdir(b) < 0)
		r = log_err_set(err, -errno, "%s: %s", b, strerror(errno));
	if (r == 0)
		r = fs_move_entry(base, bak, name, err);
	if (r < 0)
		return r;
	log_info("moved what is left of %s into %s", a, bak);
	return 1;
}

int mirror_finish_restore(const char *base, const struct mirror_list *managed, struct log_err *err)
{
	const struct merge_how how = {managed, NULL};
	char rest[PATH_MAX];
	int r;

	if (fs_path_join(rest, sizeof(rest), base, RESTORING, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	if (!fs_is_dir(rest))
		return 0;
	r = merge(rest, base, 0, &how, false, err);
	if (r == 0 && rmdir(rest) < 0)
		r = log_err_set(err, -errno, "%s: %s", rest, strerror(errno));
	return r;
}

/*
 * watch's _backup repair: WATCH_TMP is complete (renamed from WATCH_BUILD
 * when it was), so with no _backup it becomes _backup; beside a _backup it is
 * stale. WATCH_OLD, what older versions set aside, goes once _backup is there.
 */
static int finish_watch_repair(const char *base, struct log_err *err)
{
	char bak[PATH_MAX], tmp[PATH_MAX];
	struct stat st;
	int r = 0;

	if (fs_path_join(bak, sizeof(bak), base, MIRROR_BACKUP_DIR, err) < 0 ||
	    fs_path_join(tmp, sizeof(tmp), base, WATCH_TMP, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	if (lstat(tmp, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (lstat(bak, &st) < 0 && errno == ENOENT) {
			if (rename(tmp, bak) < 0)
				return log_err_set(err, -errno, "cannot rename %s to %s: %s", tmp,
						   bak, strerror(errno));
			log_info("%s: finished an interrupted repair of %s", base,
				 MIRROR_BACKUP_DIR);
		} else {
			r = fs_remove_tree(base, WATCH_TMP, err);
		}
	}
	if (r == 0 && lstat(bak, &st) == 0)
		r = fs_remove_tree(base, WATCH_OLD, err);
	return r;
}

int mirror_recover(const char *base, struct log_err *err)
{
	int r = finish_watch_repair(base, err);

	if (r == 0)
		r = fs_remove_tree(base, STAGING, err);
	if (r == 0)
		r = fs_remove_tree(base, WATCH_BUILD, err);
	return r;
}

/* A directory of the user's that configure wrote into is in _backup too, and comes back from there.
 */
int mirror_drop_ours(const char *base, const char *bak, const char *name, bool keep_dir,
		     struct log_err *err)
{
	char p[PATH_MAX], file[PATH_MAX], saved_dir[PATH_MAX], saved[PATH_MAX];
	struct stat st, dst, sv;

	if (fs_path_join(p, sizeof(p), base, name, err) < 0 ||
	    fs_path_join(file, sizeof(file), p, HOSTS_TOML, err) < 0 ||
	    fs_path_join(saved_dir, sizeof(saved_dir), bak, name, err) < 0 ||
	    fs_path_join(saved, sizeof(saved), saved_dir, HOSTS_TOML, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	if (lstat(p, &dst) < 0 || !S_ISDIR(dst.st_mode)) {
		log_debug("%s: not a directory of ours, left alone", p);
		return 0;
	}
	if (lstat(file, &st) == 0 && S_ISREG(st.st_mode) && keep_dir && lstat(saved, &sv) == 0) {
		/* cleanup: the merge renames the user's over it, never a moment without one */
	} else if (lstat(file, &st) == 0 && S_ISREG(st.st_mode) &&
		   (mirror_hosts_generated(file) || lstat(saved, &sv) == 0)) {
		if (unlink(file) < 0)
			return log_err_set(err, -errno, "%s: cannot remove: %s", file,
					   strerror(errno));
		log_info("removed %s", file);
	}
	/* the user's own directory, kept in place by configure: the merge fills it again */
	if (keep_dir && lstat(saved_dir, &st) == 0 && S_ISDIR(st.st_mode) &&
	    (st.st_mode & 07777) == (dst.st_mode & 07777))
		return 0;
	if (rmdir(p) == 0)
		log_info("removed %s", p);
	else if (errno != ENOTEMPTY && errno != EEXIST)
		return log_err_set(err, -errno, "%s: cannot remove: %s", p, strerror(errno));
	return 0;
}

int mirror_cleanup(const struct mirror_opts *o, struct log_err *err)
{
	const char *base = o->config_path;
	char bak[PATH_MAX], rest[PATH_MAX], tmp[PATH_MAX], **names = NULL;
	struct mirror_list managed = {0};
	size_t n = 0, i, bad = 0;
	struct merge_how how;
	int r;

	if (fs_path_join(bak, sizeof(bak), base, MIRROR_BACKUP_DIR, err) < 0 ||
	    fs_path_join(rest, sizeof(rest), base, RESTORING, err) < 0 ||
	    fs_path_join(tmp, sizeof(tmp), base, BACKING_UP, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	r = mirror_own_dirs(base, err);
	if (r == 0)
		r = mirror_distro_managed(o, &managed, err);
	if (r == 0 && fs_is_dir(base))
		r = mirror_recover(base, err);
	if (r == 0 && !fs_is_dir(bak) && fs_is_dir(tmp)) {
		/* a first configure stopped while backing up: nothing of ours was written yet */
		r = mirror_merge(tmp, base, err);
		if (r == 0 && rmdir(tmp) < 0)
			r = log_err_set(err, -errno, "%s: %s", tmp, strerror(errno));
	}
	if (r < 0)
		goto out;
	if (!fs_is_dir(bak)) {
		if (fs_is_dir(rest))
			r = mirror_finish_restore(base, &managed, err);
		else
			log_info("%s: no %s, nothing to clean up", base, MIRROR_BACKUP_DIR);
		goto out;
	}
	/* every conflict of the merge found (and reported) before anything is removed */
	how.restore = &managed;
	how.bad = &bad;
	r = merge(bak, base, 0, &how, false, err);
	if (r == 0 && bad)
		r = log_err_set(
		    err, -EEXIST,
		    "%s: %zu %s of %s cannot be put back (listed above): nothing was changed; keep the one you want of each, remove the other, and run cleanup again",
		    base, bad, bad == 1 ? "entry" : "entries", MIRROR_BACKUP_DIR);
	if (r == 0)
		r = mirror_list_bounded(base, &names, &n, err);
	for (i = 0; r == 0 && i < n; i++)
		if (strcmp(names[i], MIRROR_BACKUP_DIR) != 0 && !mirror_is_work_name(names[i]) &&
		    !mirror_listed(&managed, names[i]))
			r = mirror_drop_ours(base, bak, names[i], true, err);
	fs_names_free(names, n);
	if (r < 0)
		goto out;
	/* from here on a rerun must not delete anything: restore through RESTORING */
	if (rename(bak, rest) < 0) {
		r = log_err_set(err, -errno, "cannot rename %s to %s: %s", bak, rest,
				strerror(errno));
		goto out;
	}
	r = mirror_finish_restore(base, &managed, err);
out:
	mirror_list_free(&managed);
	return r;
}
