/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_journal: what configure changed after staging, undone in reverse when a later step fails
 * (below apply). Calls base. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil/fsutil.h"
#include "log/log.h"
#include "mirror/mirror_internal.h"

int mirror_open_dir(const char *path, struct log_err *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	/* O_DIRECTORY with O_NOFOLLOW: a link to a directory is ENOTDIR */
	if (errno == ELOOP || (errno == ENOTDIR && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)))
		return mirror_refuse_link(path, ", not a directory: refused, never followed", err);
	if (errno == ENOTDIR)
		return log_err_set(err, -ENOTDIR, "%s is not a directory: refused", path);
	return log_err_set(err, -errno, "%s: %s", path, strerror(errno));
}

/*
 * The journal's index of the directory fd is open on: one descriptor of its
 * own per directory (a dup), so an undo acts in that very directory even when
 * its path now leads elsewhere. -errno with err.
 */
static int dir_index(struct mirror_journal *j, int fd, const char *path, struct log_err *err)
{
	struct mirror_jdir *v;
	struct stat st;
	size_t i;
	int d;

	if (fstat(fd, &st) < 0)
		return log_err_set(err, -errno, "%s: %s", path, strerror(errno));
	for (i = 0; i < j->ndirs; i++)
		if (j->dirs[i].dev == st.st_dev && j->dirs[i].ino == st.st_ino)
			return (int)i;
	v = realloc(j->dirs, (j->ndirs + 1) * sizeof(*v));
	if (!v)
		return log_err_set(err, -ENOMEM, "out of memory");
	j->dirs = v;
	d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (d < 0)
		return log_err_set(err, -errno, "%s: %s", path, strerror(errno));
	v[j->ndirs].fd = d;
	v[j->ndirs].dev = st.st_dev;
	v[j->ndirs].ino = st.st_ino;
	return (int)j->ndirs++;
}

/* dir_index of path's parent, opened never through a link; *name = path's last component. */
static int parent_index(struct mirror_journal *j, const char *path, const char **name,
			struct log_err *err)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, r;

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return log_err_set(err, -EINVAL, "%s: not a path below a directory", path);
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	*name = slash + 1;
	fd = mirror_open_dir(slash == path ? "/" : dir, err);
	if (fd < 0)
		return fd;
	r = dir_index(j, fd, dir, err);
	close(fd);
	return r;
}

/* Note a step (paths a, b for messages; directories d1, d2 by index). 0 or -ENOMEM. */
static int add(struct mirror_journal *j, enum mirror_jkind kind, int d1, const char *a, int d2,
	       const char *b, struct log_err *err)
{
	struct mirror_jstep *v = realloc(j->v, (j->n + 1) * sizeof(*v));

	if (!v)
		return log_err_set(err, -ENOMEM, "out of memory");
	j->v = v;
	v[j->n].kind = kind;
	v[j->n].d1 = d1;
	v[j->n].d2 = d2;
	v[j->n].from = strdup(a);
	v[j->n].to = b ? strdup(b) : NULL;
	if (!v[j->n].from || (b && !v[j->n].to)) {
		free(v[j->n].from);
		free(v[j->n].to);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	j->n++;
	return 0;
}

/* Forget the last step (its change failed). */
static void drop_last(struct mirror_journal *j)
{
	j->n--;
	free(j->v[j->n].from);
	free(j->v[j->n].to);
}

/* The last component of a path the journal holds. */
static const char *base_name(const char *path)
{
	return strrchr(path, '/') + 1;
}

void mirror_journal_free(struct mirror_journal *j)
{
	size_t i;

	for (i = 0; i < j->n; i++) {
		free(j->v[i].from);
		free(j->v[i].to);
	}
	for (i = 0; i < j->ndirs; i++)
		close(j->dirs[i].fd);
	free(j->v);
	free(j->dirs);
	memset(j, 0, sizeof(*j));
}

int mirror_journal_mkdir(struct mirror_journal *j, const char *path, struct log_err *err)
{
	const char *name;
	int d = parent_index(j, path, &name, err);

	return d < 0 ? d : add(j, MIRROR_J_MKDIR, d, path, 0, NULL, err);
}

int mirror_jrename(struct mirror_journal *j, const char *a, const char *b, struct log_err *err)
{
	const char *na, *nb;
	int d1 = parent_index(j, a, &na, err), d2 = d1 < 0 ? d1 : parent_index(j, b, &nb, err);
	int r = d2 < 0 ? d2 : add(j, MIRROR_J_RENAME, d1, a, d2, b, err);

	if (r == 0 && renameat(j->dirs[d1].fd, na, j->dirs[d2].fd, nb) < 0) {
		r = log_err_set(err, -errno, "cannot move %s to %s: %s", a, b, strerror(errno));
		drop_last(j);
	}
	return r;
}

int mirror_jmove(struct mirror_journal *j, const char *from_dir, const char *to_dir,
		 const char *name, struct log_err *err)
{
	char a[PATH_MAX], b[PATH_MAX];
	int r;

	if (fs_path_join(a, sizeof(a), from_dir, name, err) < 0 ||
	    fs_path_join(b, sizeof(b), to_dir, name, err) < 0)
		return -ENAMETOOLONG;
	r = mirror_jrename(j, a, b, err);
	if (r == 0)
		log_info("moved %s to %s", a, b);
	return r;
}

/* Note kind for dir1/name1 (in fd1) and dir2/name2 (in fd2); the paths in a and b. */
static int add_at(struct mirror_journal *j, enum mirror_jkind kind, int fd1, const char *dir1,
		  const char *name1, int fd2, const char *dir2, const char *name2, char *a, char *b,
		  struct log_err *err)
{
	int d1, d2;

	if (fs_path_join(a, PATH_MAX, dir1, name1, err) < 0 ||
	    fs_path_join(b, PATH_MAX, dir2, name2, err) < 0)
		return -ENAMETOOLONG;
	d1 = dir_index(j, fd1, dir1, err);
	d2 = d1 < 0 ? d1 : dir_index(j, fd2, dir2, err);
	return d2 < 0 ? d2 : add(j, kind, d1, a, d2, b, err);
}

int mirror_jrenameat(struct mirror_journal *j, int fd1, const char *dir1, int fd2, const char *dir2,
		     const char *name, struct log_err *err)
{
	char a[PATH_MAX], b[PATH_MAX];
	int r = add_at(j, MIRROR_J_RENAME, fd1, dir1, name, fd2, dir2, name, a, b, err);

	if (r == 0 && renameat(fd1, name, fd2, name) < 0) {
		r = log_err_set(err, -errno, "cannot move %s to %s: %s", a, b, strerror(errno));
		drop_last(j);
	}
	if (r == 0)
		log_info("moved %s to %s", a, b);
	return r;
}

int mirror_jlinkat(struct mirror_journal *j, int fd1, const char *dir1, int fd2, const char *dir2,
		   const char *name, const char *to, struct log_err *err)
{
	char a[PATH_MAX], b[PATH_MAX];
	int r = add_at(j, MIRROR_J_LINK, fd1, dir1, name, fd2, dir2, to, a, b, err);

	if (r == 0 && linkat(fd1, name, fd2, to, 0) < 0) {
		r = log_err_set(err, -errno, "cannot link %s to %s: %s", a, b, strerror(errno));
		drop_last(j);
	}
	return r;
}

int mirror_jreplaceat(struct mirror_journal *j, int sfd, const char *sdir, int dfd,
		      const char *ddir, const char *name, int kfd, const char *kdir,
		      const char *keep, struct log_err *err)
{
	struct stat st;
	bool linked = false;
	int r = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) {
		r = mirror_jlinkat(j, dfd, ddir, kfd, kdir, name, keep, err);
		linked = r == 0;
	}
	if (r == 0)
		r = mirror_jrenameat(j, sfd, sdir, dfd, ddir, name, err);
	if (r == 0 && linked) {
		/* one step: its undo renames the old file over ours, never a moment without one */
		drop_last(j);
		j->v[j->n - 1].kind = MIRROR_J_REPLACE;
	}
	return r;
}

/* Undo one step; 0 or -errno (logged). */
static int undo(const struct mirror_journal *j, const struct mirror_jstep *s)
{
	int d1 = j->dirs[s->d1].fd, d2 = s->to ? j->dirs[s->d2].fd : -1, e;
	const char *n1 = base_name(s->from), *n2 = s->to ? base_name(s->to) : NULL;
	struct stat sa, sb;

	switch (s->kind) {
	case MIRROR_J_RENAME:
	case MIRROR_J_REPLACE:
		if (renameat(d2, n2, d1, n1) == 0)
			return 0;
		break;
	case MIRROR_J_LINK:
		/* the original name still there: the second name goes; else it comes back */
		if (fstatat(d1, n1, &sa, AT_SYMLINK_NOFOLLOW) == 0 &&
		    fstatat(d2, n2, &sb, AT_SYMLINK_NOFOLLOW) == 0 && sa.st_ino == sb.st_ino &&
		    sa.st_dev == sb.st_dev) {
			if (unlinkat(d2, n2, 0) == 0)
				return 0;
		} else if (renameat(d2, n2, d1, n1) == 0) {
			return 0;
		}
		break;
	case MIRROR_J_MKDIR:
		if (unlinkat(d1, n1, AT_REMOVEDIR) == 0 || errno == ENOENT || errno == ENOTEMPTY ||
		    errno == EEXIST)
			return 0;
		e = errno;
		log_error("cannot remove %s: %s", s->from, strerror(e));
		return -e;
	}
	e = errno;
	log_error("cannot move %s back to %s: %s", s->to, s->from, strerror(e));
	return -e;
}

int mirror_journal_undo(const struct mirror_journal *j)
{
	size_t i;
	int r = 0, e;

	for (i = j->n; i-- > 0;) {
		e = undo(j, &j->v[i]);
		r = r ? r : e;
	}
	return r;
}
