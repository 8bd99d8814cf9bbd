/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_apply: configure executes a plan (mirror_plan.c): stage, back up, clear, install, with
 * the journal undoing a failure. Calls plan, restore, journal, base. */
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

#include "fsutil/fsutil.h"
#include "log/log.h"
#include "strbuf/strbuf.h"
#include "toml/toml.h"
#include "mirror/mirror_internal.h"

/*
 * What --prepend-existing copies from path: a regular file or a symlink to one
 * as a file (Spegel copies the content too); a directory (not through a
 * symlink) and anything else are not copied. Fills *st (the target's) and
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

static int fsync_dir(const char *path, struct log_err *err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

	if (fd < 0 || fsync(fd) < 0)
		r = log_err_set(err, -errno, "%s: cannot sync: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return r;
}

/*
 * mkdir path with the permission bits of like (a directory the user made), or
 * 0755, made with that mode at once (no window with another mode a kill could
 * leave); one already there is left as it is. Noted in j when made.
 */
static int mkdir_like(const char *path, const char *like, struct mirror_journal *j,
		      struct log_err *err)
{
	struct stat st;
	mode_t mode = like && lstat(like, &st) == 0 ? st.st_mode & 07777 : 0755, mask;
	int e;

	if (lstat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return 0;
		return log_err_set(err, -ENOTDIR, "%s: not a directory", path);
	}
	mask = umask(0);
	e = mkdir(path, mode) < 0 ? errno : 0;
	umask(mask);
	if (e)
		return log_err_set(err, -e, "%s: cannot create directory: %s", path, strerror(e));
	if (j && mirror_journal_mkdir(j, path, err) < 0) {
		rmdir(path);
		return -ENOMEM;
	}
	/* mkdir leaves out the set-id and sticky bits */
	if ((mode & 07000) && chmod(path, mode) < 0)
		return log_err_set(err, -errno, "%s: %s", path, strerror(errno));
	log_info("created %s", path);
	return 0;
}

/*
 * STAGING and its directory dir; like (not NULL: the user's directory in
 * _backup, which the cleanup merge brings back into this one) gives dir's
 * mode and owner, so the directory put in place is the user's again.
 */
static int stage_dir(const char *st_dir, const char *dir, const char *like, struct log_err *err)
{
	struct stat st;
	int r = fs_mkdir_if_missing(st_dir, err);

	if (r < 0)
		return r;
	if (!like || lstat(like, &st) < 0 || !S_ISDIR(st.st_mode))
		return fs_mkdir_if_missing(dir, err);
	r = mkdir_like(dir, like, NULL, err);
	if (r < 0 || lchown(dir, st.st_uid, st.st_gid) == 0)
		return r;
	if (errno != EPERM)
		return log_err_set(err, -errno, "%s: cannot give it the owner of %s: %s", dir, like,
				   strerror(errno));
	log_warn("%s: not allowed to give it the owner of %s (uid %u): kept ours", dir, like,
		 (unsigned)st.st_uid);
	return 0;
}

/*
 * Every directory the moves after staging need, made before anything moves (a
 * full inode table then fails here, with nothing changed): on the first run
 * BACKING_UP and BACKING_UP/<dir> for each registry directory we write that
 * exists, later _backup/<dir> for each whose hosts.toml is the user's; each of
 * the mode of base/<dir>.
 */
static int stage_backup_dirs(const char *base, const struct mirror_want *w, size_t nw, bool first,
			     struct mirror_journal *jl, struct log_err *err)
{
	char to[PATH_MAX], p[PATH_MAX], like[PATH_MAX];
	size_t i;
	int r;

	if (fs_path_join(to, sizeof(to), base, first ? BACKING_UP : MIRROR_BACKUP_DIR, err) < 0)
		return -ENAMETOOLONG;
	r = first ? mkdir_like(to, NULL, jl, err) : 0;
	for (i = 0; r == 0 && i < nw; i++) {
		if (w[i].fresh || (!first && !w[i].user_hosts))
			continue;
		if (fs_path_join(p, sizeof(p), to, w[i].dir, err) < 0 ||
		    fs_path_join(like, sizeof(like), base, w[i].dir, err) < 0)
			return -ENAMETOOLONG;
		r = mkdir_like(p, like, jl, err);
	}
	return r;
}

/*
 * Write every new file into STAGING/<dir>/ (fs_publish: written, fsynced,
 * renamed) before anything of the user's moves: hosts.toml where w->write,
 * and with --prepend-existing the files of _backup/<dir>/ that are not in
 * <dir>/ (a _backup Spegel made holds them; Spegel copies them back).
 */
static int stage(const char *base, const struct mirror_want *w, size_t nw, bool first,
		 struct mirror_journal *jl, struct log_err *err)
{
	char st_dir[PATH_MAX], dir[PATH_MAX], src[PATH_MAX], a[PATH_MAX], b[PATH_MAX], **names;
	size_t i, j, n;
	struct stat sst;
	int r = 0;

	if (fs_path_join(st_dir, sizeof(st_dir), base, STAGING, err) < 0)
		return -ENAMETOOLONG;
	r = stage_backup_dirs(base, w, nw, first, jl, err);
	for (i = 0; r == 0 && i < nw; i++) {
		if (fs_path_join(dir, sizeof(dir), st_dir, w[i].dir, err) < 0 ||
		    (size_t)snprintf(src, sizeof(src), "%s/%s/%s", base, MIRROR_BACKUP_DIR,
				     w[i].dir) >= sizeof(src))
			return log_err_set(err, -ENAMETOOLONG, "%s/%s: path too long", base,
					   w[i].dir);
		if (w[i].write) {
			r = stage_dir(st_dir, dir, w[i].fresh ? src : NULL, err);
			if (r == 0)
				r = fs_publish(dir, HOSTS_TOML, w[i].hosts.buf, w[i].hosts.len,
					       w[i].mode, err);
			r = r < 0 ? r : 0;
		}
		if (r < 0 || !w[i].copy_backup)
			continue;
		r = mirror_list_bounded(src, &names, &n, err);
		if (r == -ENOENT) {
			log_err_clear(err);
			r = 0; /* no _backup/<dir>: nothing to copy back */
			continue;
		}
		if (r < 0)
			break;
		for (j = 0; r >= 0 && j < n; j++) {
			struct strbuf data = STRBUF_INIT(MIRROR_MAX_FILE * 16);

			if (!strcmp(names[j], HOSTS_TOML) ||
			    fs_path_join(a, sizeof(a), src, names[j], NULL) < 0 ||
			    (size_t)snprintf(b, sizeof(b), "%s/%s/%s", base, w[i].dir, names[j]) >=
				sizeof(b) ||
			    lstat(b, &sst) == 0)
				continue; /* the user's own file in place wins */
			if (copy_kind(a, &sst) != S_IFREG) {
				log_warn("%s: not a regular file, not copied", a);
				continue;
			}
			r = sb_read_file(&data, a);
			if (r < 0)
				mirror_read_error(err, a, r, MIRROR_MAX_FILE * 16);
			else
				r = 0; /* sb_read_file returns the bytes read */
			if (r == 0)
				r = stage_dir(st_dir, dir, w[i].fresh ? src : NULL, err);
			if (r == 0)
				r = fs_publish(dir, names[j], data.buf, data.len,
					       sst.st_mode & MODE_MAX, err);
			r = r < 0 ? r : 0;
			sb_free(&data);
		}
		fs_names_free(names, n);
	}
	return r < 0 ? r : 0;
}

/*
 * Put base/<name>/hosts.toml into to/<name>/ (which staging made): a second
 * name (link), so base/<name> is never without one until install renames ours
 * over it; a directory of that name moves.
 */
static int move_hosts(const char *base, const char *to, const char *name, struct mirror_journal *jl,
		      struct log_err *err)
{
	char from[PATH_MAX], dst[PATH_MAX];
	struct stat st, sd;
	int fd, dfd, r = 0;

	if (fs_path_join(from, sizeof(from), base, name, err) < 0 ||
	    fs_path_join(dst, sizeof(dst), to, name, err) < 0)
		return -ENAMETOOLONG;
	/* the directories as they are now, never through a link (checked before staging) */
	fd = mirror_open_dir(from, err);
	if (fd < 0)
		return fd;
	dfd = mirror_open_dir(dst, err);
	if (dfd < 0 || fstatat(fd, HOSTS_TOML, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		r = dfd < 0 ? dfd : 0; /* else nothing to move */
	} else if (S_ISDIR(st.st_mode)) {
		r = mirror_jrenameat(jl, fd, from, dfd, dst, HOSTS_TOML, err);
	} else if (fstatat(dfd, HOSTS_TOML, &sd, AT_SYMLINK_NOFOLLOW) < 0 ||
		   sd.st_ino != st.st_ino || sd.st_dev != st.st_dev) {
		r = mirror_jlinkat(jl, fd, from, dfd, dst, HOSTS_TOML, HOSTS_TOML, err);
	} /* else linked by a run that was killed */
	if (dfd >= 0)
		close(dfd);
	close(fd);
	return r;
}

static const struct mirror_want *wanted(const struct mirror_want *w, size_t nw, const char *name)
{
	size_t i;

	for (i = 0; i < nw; i++)
		if (!strcmp(w[i].dir, name))
			return &w[i];
	return NULL;
}

/*
 * Move base/<name> into to/. What a killed run left at to/<name> goes back
 * into the user's directory first, so the directory that moves is the user's
 * own (its mode and owner), never ours.
 */
static int move_entry(const char *base, const char *to, const char *name, struct mirror_journal *jl,
		      struct log_err *err)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct stat st, sa;
	int r;

	if (fs_path_join(a, sizeof(a), base, name, err) < 0 ||
	    fs_path_join(b, sizeof(b), to, name, err) < 0)
		return -ENAMETOOLONG;
	if (lstat(b, &st) < 0)
		return mirror_jmove(jl, base, to, name, err);
	if (S_ISDIR(st.st_mode) && lstat(a, &sa) == 0 && S_ISDIR(sa.st_mode)) {
		r = mirror_merge(b, a, err);
		if (r == 0 && rmdir(b) < 0)
			r = log_err_set(err, -errno, "%s: %s", b, strerror(errno));
		return r < 0 ? r : mirror_jmove(jl, base, to, name, err);
	}
	r = mirror_merge(a, b, err);
	if (r == 0 && rmdir(a) < 0)
		r = log_err_set(err, -errno, "%s: %s", a, strerror(errno));
	return r;
}

/*
 * First run only (no _backup yet): move the user's entries into _backup, via
 * BACKING_UP so an interrupted run resumes instead of losing files. Of a
 * registry directory we write only its hosts.toml moves (in a directory of the
 * same mode); the user's other files there stay in place. On failure what
 * moved is moved back.
 */
static int backup(const char *base, const struct mirror_want *w, size_t nw,
		  const struct mirror_list *managed, struct mirror_journal *jl, struct log_err *err)
{
	char bak[PATH_MAX], tmp[PATH_MAX], p[PATH_MAX], **names;
	struct stat st;
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
	r = mirror_list_bounded(base, &names, &n, err);
	for (i = 0; r == 0 && i < n; i++) {
		if (mirror_is_work_name(names[i]) || mirror_listed(managed, names[i]))
			continue;
		if (fs_path_join(p, sizeof(p), base, names[i], err) < 0) {
			r = -ENAMETOOLONG;
			break;
		}
		if (wanted(w, nw, names[i]) && lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			r = move_hosts(base, tmp, names[i], jl, err);
		else
			r = move_entry(base, tmp, names[i], jl, err);
	}
	fs_names_free(names, n);
	if (r == 0)
		r = mirror_jrename(jl, tmp, bak, err);
	if (r == 0) {
		log_info("backed up %s into %s", base, bak);
		return fsync_dir(base, err);
	}
	return r; /* the caller undoes what moved */
}

/*
 * Spegel's clearConfig, without ever losing a user file (later runs; the first
 * is backup), in two steps. wanted (before install, undone on a failure): the
 * user's hosts.toml of a registry we write moves into _backup. Not wanted
 * (after install, finished by the next run when it fails): another entry loses
 * what configure wrote in it (mirror_drop_ours), and what is left of it moves
 * into _backup, a directory there of that name merged in (mirror_back_up_rest; an
 * empty or partial _backup, left by a stray mkdir or an interrupted older
 * Spegel, is completed instead of trusted); a non-directory of that name there
 * leaves it in place. _backup, our work directories and the distro's managed
 * ones are left alone.
 */
static int clear_config(const char *base, const struct mirror_want *w, size_t nw,
			const struct mirror_list *managed, bool wanted_step,
			struct mirror_journal *jl, struct log_err *err)
{
	char bak[PATH_MAX], **names = NULL, p[PATH_MAX];
	const struct mirror_want *wi;
	size_t n = 0, i;
	struct stat st;
	int r;

	if (fs_path_join(bak, sizeof(bak), base, MIRROR_BACKUP_DIR, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	r = mirror_list_bounded(base, &names, &n, err);
	for (i = 0; r == 0 && i < n; i++) {
		const char *name = names[i];

		if (!strcmp(name, MIRROR_BACKUP_DIR) || mirror_is_work_name(name) ||
		    mirror_listed(managed, name))
			continue;
		wi = wanted(w, nw, name);
		if (wi && wanted_step && wi->user_hosts) {
			log_warn("%s/%s/%s was not in %s: moved there, not deleted", base, name,
				 HOSTS_TOML, MIRROR_BACKUP_DIR);
			r = move_hosts(base, bak, name, jl, err);
		}
		if (wi || wanted_step)
			continue;
		if ((size_t)snprintf(p, sizeof(p), "%s/%s/%s", bak, name, HOSTS_TOML) >=
		    sizeof(p)) {
			r = log_err_set(err, -ENAMETOOLONG, "%s/%s: path too long", bak, name);
			continue;
		}
		r = lstat(p, &st) == 0 ? mirror_back_up_rest(base, bak, name, err) : 0;
		if (r != 0) {
			r = r < 0 ? r : 0;
			continue;
		}
		r = mirror_drop_ours(base, bak, name, false, err);
		if (r < 0 || fs_path_join(p, sizeof(p), base, name, err) < 0 || lstat(p, &st) < 0)
			continue;
		if (fs_path_join(p, sizeof(p), bak, name, err) < 0) {
			r = -ENAMETOOLONG;
		} else if (lstat(p, &st) < 0) {
			log_warn("%s/%s was not in %s: moved there, not deleted", base, name,
				 MIRROR_BACKUP_DIR);
			r = fs_move_entry(base, bak, name, err);
		} else if (S_ISDIR(st.st_mode)) {
			r = mirror_back_up_rest(base, bak, name, err);
			r = r < 0 ? r : 0;
		}
	}
	fs_names_free(names, n);
	return r;
}

/*
 * Rename what stage wrote into the registry directories: STAGING/<dir> as a
 * whole when base/<dir> did not exist, else its entries one by one.
 */
static int install(const char *base, const struct mirror_want *w, size_t nw,
		   struct mirror_journal *jl, struct log_err *err)
{
	char from[PATH_MAX], dst[PATH_MAX], st_dir[PATH_MAX], keep[64], **names = NULL;
	struct stat st;
	size_t i, j, n = 0;
	int r = 0, sfd, dfd, kfd;

	if (fs_path_join(st_dir, sizeof(st_dir), base, STAGING, err) < 0)
		return -ENAMETOOLONG;
	kfd = mirror_open_dir(st_dir, err);
	if (kfd == -ENOENT) {
		log_err_clear(err);
		return 0; /* nothing staged */
	}
	if (kfd < 0)
		return kfd;
	for (i = 0; r == 0 && i < nw; i++) {
		if (fs_path_join(from, sizeof(from), st_dir, w[i].dir, err) < 0 ||
		    fs_path_join(dst, sizeof(dst), base, w[i].dir, err) < 0) {
			r = -ENAMETOOLONG;
			break;
		}
		if (lstat(from, &st) < 0 || !S_ISDIR(st.st_mode))
			continue; /* nothing new for it */
		if (w[i].fresh) {
			r = mirror_jrename(jl, from, dst, err);
			if (r == 0)
				log_info("wrote %s/%s", dst, HOSTS_TOML);
			if (r == 0)
				r = fsync_dir(base, err);
			continue;
		}
		/* into the directory as it is now, never through a link */
		sfd = mirror_open_dir(from, err);
		dfd = sfd < 0 ? sfd : mirror_open_dir(dst, err);
		r = dfd < 0 ? dfd : fs_list_dir(from, &names, &n, err);
		for (j = 0; r == 0 && j < n; j++) {
			/* what is replaced keeps a name in STAGING until the end, for an undo */
			snprintf(keep, sizeof(keep), ".old-%zu-%zu", i, j);
			r = mirror_jreplaceat(jl, sfd, from, dfd, dst, names[j], kfd, st_dir, keep,
					      err);
			if (r == 0)
				log_info("%s %s/%s",
					 strcmp(names[j], HOSTS_TOML) ? "copied" : "wrote", dst,
					 names[j]);
		}
		if (dfd >= 0 && r == 0 && fsync(dfd) < 0)
			r = log_err_set(err, -errno, "%s: cannot sync: %s", dst, strerror(errno));
		fs_names_free(names, n);
		names = NULL;
		n = 0;
		if (sfd >= 0)
			close(sfd);
		if (dfd >= 0)
			close(dfd);
	}
	close(kfd);
	return r;
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

/*
 * err = why configure failed at r, with what became of the tree: undone (the
 * old tree) or not; a full disk (ENOSPC, EDQUOT) worded as one on every path.
 */
static int fail_msg(const char *base, int r, const char *tree, struct log_err *err)
{
	char why[sizeof(err->msg)];

	if (!err)
		return r;
	snprintf(why, sizeof(why), "%s", err->code ? err->msg : strerror(-r));
	if (r == -ENOSPC || r == -EDQUOT)
		return log_err_set(
		    err, r,
		    "%s: the file system is full (%s, %s): %s; free some space there and run configure again",
		    base, r == -ENOSPC ? "ENOSPC" : "EDQUOT", why, tree);
	return log_err_set(err, r, "%s: %s", why, tree);
}

/* Undo a configure that failed after staging: the old tree back, STAGING removed. */
static int roll_back(const char *base, const struct mirror_journal *jl, bool first)
{
	char tmp[PATH_MAX];
	int r = mirror_journal_undo(jl);

	/* what a killed first run had moved goes back too */
	if (r == 0 && first && fs_path_join(tmp, sizeof(tmp), base, BACKING_UP, NULL) == 0 &&
	    fs_is_dir(tmp)) {
		r = mirror_merge(tmp, base, NULL);
		if (r == 0 && rmdir(tmp) < 0)
			r = -errno;
	}
	if (fs_remove_tree(base, STAGING, NULL) < 0 && r == 0)
		r = -EIO;
	return r;
}

int mirror_apply_plan(struct mirror_plan *p, struct log_err *err)
{
	const char *base = p->base;
	struct mirror_journal jl = {0};
	const struct mirror_want *w;
	char bak[PATH_MAX];
	size_t nw;
	bool first;
	int r;

	r = fs_mkdir_p(base, 0755);
	if (r < 0) {
		log_err_set(err, r, "%s: cannot create directory: %s", base, strerror(-r));
		goto out;
	}
	/* what a killed run left: finished or removed, never taken for the user's */
	r = mirror_recover(base, err);
	if (r == 0)
		r = mirror_finish_restore(base, &p->managed, err);
	if (r == 0)
		r = mirror_plan_classify(p, err);
	if (r < 0)
		goto out;
	w = p->w;
	nw = p->nw;
	first = p->first;
	/*
	 * no temp file is ever removed from a registry directory: ours are all in
	 * STAGING (mirror_recover removes it whole); a ".hosts.toml.XXXXXX" there
	 * may be the user's, and an older version's stray one is left alone
	 */
	/*
	 * every new file written and fsynced, every directory made, before the
	 * first of the user's moves; a failure from there to the last install
	 * is undone in reverse
	 */
	r = stage(base, w, nw, first, &jl, err);
	if (r == 0)
		r = backup(base, w, nw, &p->managed, &jl, err);
	if (r == 0 && !first)
		r = clear_config(base, w, nw, &p->managed, true, &jl, err);
	if (r == 0)
		r = install(base, w, nw, &jl, err);
	if (r < 0) {
		fail_msg(
		    base, r,
		    roll_back(base, &jl, first) == 0
			? "nothing was changed"
			: "it could not all be undone (see above); the next configure or cleanup finishes it",
		    err);
		goto out;
	}
	if (!first)
		r = clear_config(base, w, nw, &p->managed, false, NULL, err);
	if (r < 0) {
		fail_msg(
		    base, r,
		    "the new files are in place, the old entries not all moved into " MIRROR_BACKUP_DIR
		    "; the next configure finishes it",
		    err);
		goto out;
	}
	if (fs_path_join(bak, sizeof(bak), base, STAGING, err) == 0 && fs_is_dir(bak)) {
		r = fs_remove_tree(base, STAGING, err);
		if (r == 0)
			r = fsync_dir(base, err);
		if (r < 0)
			fail_msg(base, r,
				 "the new files are in place; the next configure removes " STAGING,
				 err);
	}
out:
	mirror_journal_free(&jl);
	return r;
}

int mirror_configure(const struct mirror_opts *o, bool ours_in_place, struct log_err *err)
{
	struct mirror_plan plan;
	int r = mirror_plan_build(o, ours_in_place, &plan, err);

	if (r == 0)
		r = mirror_apply_plan(&plan, err);
	mirror_plan_free(&plan);
	return r;
}
