/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fsutil: atomic publish of files other daemons read, safe path components, mkdir -p. */
#include "fsutil/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log/log.h"

bool fs_name_is_safe(const char *name)
{
	const unsigned char *p;
	size_t n;

	if (!name)
		return false;
	n = strlen(name);
	if (n == 0 || n > 255 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (p = (const unsigned char *)name; *p; p++)
		if (*p == '/' || *p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* 1 if fd's file holds exactly data, 0 if not, -errno on read error. */
static int same_content(int fd, const void *data, size_t len)
{
	const char *want = data;
	char buf[8192];
	size_t off = 0;
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return off == len;
		if ((size_t)n > len - off || memcmp(buf, want + off, (size_t)n) != 0)
			return 0;
		off += (size_t)n;
	}
}

static int unchanged(int dfd, const char *name, const void *data, size_t len, mode_t mode)
{
	struct stat st;
	int fd, r;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 07777) != mode ||
	    (size_t)st.st_size != len) {
		close(fd);
		return 0;
	}
	r = same_content(fd, data, len);
	close(fd);
	return r > 0;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fs_publish(const char *dir, const char *name, const void *data, size_t len, mode_t mode,
	       struct log_err *err)
{
	char tmp[PATH_MAX];
	int dfd = -1, fd = -1, r;

	if (!fs_name_is_safe(name))
		return log_err_set(err, -EINVAL, "%s: unsafe file name '%s'", dir, name);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		r = -errno;
		log_err_set(err, r, "%s: %s", dir, strerror(-r));
		goto out;
	}
	if (unchanged(dfd, name, data, len, mode)) {
		r = 0;
		goto out;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >= sizeof(tmp)) {
		r = log_err_set(err, -ENAMETOOLONG, "%s/%s: path too long", dir, name);
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		log_err_set(err, r, "%s/%s: cannot create temporary file: %s", dir, name,
			    strerror(-r));
		goto out;
	}
	r = write_all(fd, data, len);
	if (r == 0 && fchmod(fd, mode) < 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	fd = -1;
	if (r == 0 && renameat(AT_FDCWD, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		log_err_set(err, r, "%s/%s: %s", dir, name, strerror(-r));
		goto out;
	}
	fsync(dfd);
	r = 1;
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return r;
}

/* mkdir one directory; one it creates gets exactly mode, whatever the umask. */
static int mkdir_mode(const char *path, mode_t mode)
{
	if (mkdir(path, mode) < 0)
		return errno == EEXIST ? 0 : -errno;
	return chmod(path, mode) < 0 ? -errno : 0;
}

int fs_mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);
	char *p;
	int r;

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		r = mkdir_mode(buf, mode);
		if (r < 0)
			return r;
		*p = '/';
	}
	r = mkdir_mode(buf, mode);
	if (r < 0)
		return r;
	return fs_is_dir(buf) ? 0 : -ENOTDIR;
}

bool fs_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int fs_publish_clean(const char *dir, const char *name, long max_age)
{
	size_t nlen = strlen(name);
	DIR *d = opendir(dir);
	struct dirent *de;
	time_t now = time(NULL);
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		const char *e = de->d_name;
		struct stat st;

		/* ".<name>." and exactly six more characters */
		if (e[0] != '.' || strncmp(e + 1, name, nlen) || e[nlen + 1] != '.' ||
		    strlen(e + nlen + 2) != 6)
			continue;
		if (fstatat(dirfd(d), e, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid() || now - st.st_mtime <= max_age)
			continue;
		if (unlinkat(dirfd(d), e, 0) == 0) {
			log_info("%s/%s: removed a temp file a killed run left", dir, e);
			n++;
		}
	}
	closedir(d);
	return n;
}

/* ---- trees (pkg/mirror's _backup/ and restores) ---- */

/* rm -rf dfd/name (does not follow symlinks). */
static int remove_tree_at(int dfd, const char *name)
{
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	if (unlinkat(dfd, name, 0) == 0)
		return 0;
	if (errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		r = remove_tree_at(dirfd(d), de->d_name);
	}
	closedir(d);
	if (r == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}

int fs_remove_tree(const char *dir, const char *name, struct log_err *err)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;
	struct stat st;
	bool existed;

	if (dfd < 0)
		return log_err_set(err, -errno, "%s: %s", dir, strerror(errno));
	existed = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	r = remove_tree_at(dfd, name);
	close(dfd);
	if (r < 0)
		return log_err_set(err, r, "%s/%s: cannot remove: %s", dir, name, strerror(-r));
	if (existed)
		log_info("removed %s/%s", dir, name);
	return 0;
}

/* Sorted entry names of dir except "." and ".."; *names freed with fs_names_free. */
int fs_list_dir(const char *dir, char ***names, size_t *n, struct log_err *err)
{
	struct dirent **ents = NULL;
	int i, cnt = scandir(dir, &ents, NULL, alphasort), k = 0;

	*names = NULL;
	*n = 0;
	if (cnt < 0)
		return log_err_set(err, -errno, "%s: %s", dir, strerror(errno));
	*names = calloc((size_t)cnt + 1, sizeof(char *));
	for (i = 0; i < cnt; i++) {
		if (*names && strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, ".."))
			(*names)[k++] = strdup(ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	if (!*names)
		return log_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < k; i++)
		if (!(*names)[i])
			return log_err_set(err, -ENOMEM, "out of memory");
	*n = (size_t)k;
	return 0;
}

void fs_names_free(char **names, size_t n)
{
	size_t i;

	for (i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

int fs_path_join(char *out, size_t size, const char *a, const char *b, struct log_err *err)
{
	if ((size_t)snprintf(out, size, "%s/%s", a, b) >= size)
		return log_err_set(err, -ENAMETOOLONG, "%s/%s: path too long", a, b);
	return 0;
}

int fs_move_entry(const char *from_dir, const char *to_dir, const char *name, struct log_err *err)
{
	char a[PATH_MAX], b[PATH_MAX];

	if (fs_path_join(a, sizeof(a), from_dir, name, err) < 0 ||
	    fs_path_join(b, sizeof(b), to_dir, name, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	if (rename(a, b) < 0)
		return log_err_set(err, -errno, "cannot move %s to %s: %s", a, b, strerror(errno));
	log_info("moved %s to %s", a, b);
	return 0;
}

/* Move every entry of from into to (both in base). */
int fs_move_all(const char *from, const char *to, struct log_err *err)
{
	char **names;
	size_t n, i;
	int r = fs_list_dir(from, &names, &n, err);

	for (i = 0; r == 0 && i < n; i++)
		r = fs_move_entry(from, to, names[i], err);
	fs_names_free(names, n);
	return r;
}

int fs_mkdir_if_missing(const char *path, struct log_err *err)
{
	if (mkdir(path, 0755) == 0) {
		chmod(path, 0755); /* whatever the umask */
		log_info("created %s", path);
		return 0;
	}
	if (errno == EEXIST && fs_is_dir(path))
		return 0;
	return log_err_set(err, -errno, "%s: cannot create directory: %s", path, strerror(errno));
}

int fs_lock_dir(const char *path, int timeout_ms, struct log_err *err)
{
	const struct timespec step = {.tv_sec = 0, .tv_nsec = 50 * 1000000L};
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), waited;

	if (fd < 0)
		return errno == ENOENT ? -ENOENT
				       : log_err_set(err, -errno, "%s: %s", path, strerror(errno));
	for (waited = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; waited += 50) {
		if (errno != EWOULDBLOCK || waited >= timeout_ms) {
			int e = errno == EWOULDBLOCK ? ETIMEDOUT : errno;

			close(fd);
			if (e == ETIMEDOUT)
				return log_err_set(err, -e,
						   "%s: locked by another process for %d s", path,
						   timeout_ms / 1000);
			return log_err_set(err, -e, "%s: cannot lock: %s", path, strerror(e));
		}
		nanosleep(&step, NULL);
	}
	return fd;
}
