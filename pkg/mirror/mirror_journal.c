/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_journal: what configure changed after staging, undone in reverse when a later step fails.
 */
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
#include "mirror/mirror_internal.h"

static int add(struct mirror_journal *j, enum mirror_jkind kind, const char *from, const char *to,
	       struct log_err *err)
{
	struct mirror_jstep *v = realloc(j->v, (j->n + 1) * sizeof(*v));

	if (!v)
		return log_err_set(err, -ENOMEM, "out of memory");
	j->v = v;
	v[j->n].kind = kind;
	v[j->n].from = strdup(from);
	v[j->n].to = to ? strdup(to) : NULL;
	if (!v[j->n].from || (to && !v[j->n].to)) {
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

void mirror_journal_free(struct mirror_journal *j)
{
	size_t i;

	for (i = 0; i < j->n; i++) {
		free(j->v[i].from);
		free(j->v[i].to);
	}
	free(j->v);
	memset(j, 0, sizeof(*j));
}

int mirror_journal_mkdir(struct mirror_journal *j, const char *path, struct log_err *err)
{
	return add(j, MIRROR_J_MKDIR, path, NULL, err);
}

int mirror_jrename(struct mirror_journal *j, const char *a, const char *b, struct log_err *err)
{
	int r = add(j, MIRROR_J_RENAME, a, b, err);

	if (r == 0 && rename(a, b) < 0) {
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

int mirror_jrenameat(struct mirror_journal *j, int fd1, const char *dir1, int fd2, const char *dir2,
		     const char *name, struct log_err *err)
{
	char a[PATH_MAX], b[PATH_MAX];
	int r;

	if (fs_path_join(a, sizeof(a), dir1, name, err) < 0 ||
	    fs_path_join(b, sizeof(b), dir2, name, err) < 0)
		return -ENAMETOOLONG;
	r = add(j, MIRROR_J_RENAME, a, b, err);
	if (r == 0 && renameat(fd1, name, fd2, name) < 0) {
		r = log_err_set(err, -errno, "cannot move %s to %s: %s", a, b, strerror(errno));
		drop_last(j);
	}
	if (r == 0)
		log_info("moved %s to %s", a, b);
	return r;
}

int mirror_jlinkat(struct mirror_journal *j, int fd, const char *dir, const char *name,
		   const char *to, struct log_err *err)
{
	char a[PATH_MAX];
	int r;

	if (fs_path_join(a, sizeof(a), dir, name, err) < 0)
		return -ENAMETOOLONG;
	r = add(j, MIRROR_J_LINK, a, to, err);
	if (r == 0 && linkat(fd, name, AT_FDCWD, to, 0) < 0) {
		r = log_err_set(err, -errno, "cannot link %s to %s: %s", a, to, strerror(errno));
		drop_last(j);
	}
	return r;
}

/* Undo one step; 0 or -errno (logged). */
static int undo(const struct mirror_jstep *s)
{
	struct stat sa, sb;

	switch (s->kind) {
	case MIRROR_J_RENAME:
		if (rename(s->to, s->from) == 0)
			return 0;
		log_error("cannot move %s back to %s: %s", s->to, s->from, strerror(errno));
		return -errno;
	case MIRROR_J_LINK:
		/* the original name still there: the second name goes; else it comes back */
		if (lstat(s->from, &sa) == 0 && lstat(s->to, &sb) == 0 && sa.st_ino == sb.st_ino &&
		    sa.st_dev == sb.st_dev) {
			if (unlink(s->to) == 0)
				return 0;
		} else if (rename(s->to, s->from) == 0) {
			return 0;
		}
		log_error("cannot put %s back as %s: %s", s->to, s->from, strerror(errno));
		return -errno;
	case MIRROR_J_MKDIR:
		if (rmdir(s->from) == 0 || errno == ENOENT || errno == ENOTEMPTY)
			return 0;
		log_error("cannot remove %s: %s", s->from, strerror(errno));
		return -errno;
	}
	return 0;
}

int mirror_journal_undo(const struct mirror_journal *j)
{
	size_t i;
	int r = 0, e;

	for (i = j->n; i-- > 0;) {
		e = undo(&j->v[i]);
		r = r ? r : e;
	}
	return r;
}
