/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_path: a host path handed to a container (a DeviceSpec, a Mount, a CDI deviceNode or
 * mount), resolved under its root (the dev or sys root) one component at a time, following
 * symbolic links only while they stay inside that root; what the resolved path is. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/devices_internal.h"

#define LINKS_MAX 40 /* symbolic links followed in one path, as the kernel's MAXSYMLINKS */

/* Is c (n bytes) "." or ".."? */
static bool dot_name(const char *c, size_t n)
{
	return (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.');
}

bool dpath_has_dots(const char *p)
{
	while (*p) {
		size_t n = strcspn(p, "/");

		if (dot_name(p, n))
			return true;
		p += n;
		p += *p == '/';
	}
	return false;
}

bool dpath_host_ok(const char *p)
{
	bool dev = !strncmp(p, "/dev", 4), sys = !strncmp(p, "/sys", 4);

	return (dev || sys) && (p[4] == '/' || !p[4]) && !dpath_has_dots(p);
}

/* Which root host belongs to: its "/dev" or "/sys" prefix and the directory we see it at. */
static const char *root_of(const struct devices_roots *r, const char *host)
{
	if (!strncmp(host, "/dev", 4) && (host[4] == '/' || !host[4]))
		return r && r->dev ? r->dev : "/dev";
	if (!strncmp(host, "/sys", 4) && (host[4] == '/' || !host[4]))
		return r && r->sys ? r->sys : "/sys";
	return NULL;
}

int dpath_rooted(const struct devices_roots *r, const char *host, char *out, size_t size)
{
	const char *root = root_of(r, host);

	if ((size_t)snprintf(out, size, "%s%s", root ? root : host, root ? host + 4 : "") >= size)
		return -ENAMETOOLONG;
	return 0;
}

int dpath_unrooted(const struct devices_roots *r, const char *seen, char *out, size_t size)
{
	static const char *const host[2] = {"/dev", "/sys"};

	for (int i = 0; i < 2; i++) {
		const char *root = root_of(r, host[i]);
		size_t n = strlen(root);

		if (!strncmp(seen, root, n) && (seen[n] == '/' || !seen[n]))
			return (size_t)snprintf(out, size, "%s%s", host[i], seen + n) < size
				   ? 0
				   : -ENAMETOOLONG;
	}
	return (size_t)snprintf(out, size, "%s", seen) < size ? 0 : -ENAMETOOLONG;
}

/*
 * The walk: todo is what is left to resolve, done the resolved part (relative to the root, ""
 * the root itself). A ".." takes one component off done and never goes above the root; a link's
 * target replaces its component: a relative one from done, an absolute one from the root when it
 * names the same tree ("/dev/..." in the dev root), anything else leads out. A directory anyone
 * may write (/dev/shm, /dev/mqueue) is not gone through (-EPERM): any local user could put a link
 * to another node (/dev/sda) in place of its entry between this walk and the runtime's open.
 */
static int walk(int rootfd, const char *prefix, const char *rest, char *done, size_t size)
{
	char todo[DPATH_LEN * 2], cand[DPATH_LEN], tgt[DPATH_LEN];
	struct stat st;
	int links = 0;
	size_t n;

	done[0] = 0;
	if ((size_t)snprintf(todo, sizeof(todo), "%s", rest) >= sizeof(todo))
		return -ENAMETOOLONG;
	for (char *t = todo;;) {
		while (*t == '/')
			t++;
		if (!*t)
			return 0;
		n = strcspn(t, "/");
		if (n == 1 && t[0] == '.') {
			t += n;
			continue;
		}
		if (dot_name(t, n)) { /* ".." */
			char *slash = strrchr(done, '/');

			if (!done[0])
				return -EXDEV;
			*(slash ? slash : done) = 0;
			t += n;
			continue;
		}
		if ((size_t)snprintf(cand, sizeof(cand), "%s%s%.*s", done, done[0] ? "/" : "",
				     (int)n, t) >= sizeof(cand))
			return -ENAMETOOLONG;
		t += n;
		while (*t == '/')
			t++;
		if (fstatat(rootfd, cand, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		if (S_ISLNK(st.st_mode)) {
			ssize_t len = readlinkat(rootfd, cand, tgt, sizeof(tgt) - 1);
			const char *from = tgt;

			if (++links > LINKS_MAX)
				return -ELOOP;
			if (len <= 0)
				return len < 0 ? -errno : -ENOENT;
			tgt[len] = 0;
			if (tgt[0] == '/') { /* "/dev/x" in the dev root: from the root */
				if (strncmp(tgt, prefix, 4) || (tgt[4] != '/' && tgt[4]))
					return -EXDEV;
				from = tgt + 4;
				done[0] = 0;
			}
			if ((size_t)snprintf(cand, sizeof(cand), "%s/%s", from, t) >= sizeof(cand))
				return -ENAMETOOLONG;
			snprintf(todo, sizeof(todo), "%s", cand);
			t = todo;
			continue;
		}
		if (*t && !S_ISDIR(st.st_mode))
			return -ENOTDIR;
		if (*t && (st.st_mode & S_IWOTH)) /* /dev/shm: anyone could swap what is in it */
			return -EPERM;
		if ((size_t)snprintf(done, size, "%s", cand) >= size)
			return -ENAMETOOLONG;
	}
}

int dpath_resolve(const struct devices_roots *r, const char *host, char *out, size_t size,
		  struct stat *st)
{
	const char *root = root_of(r, host);
	char done[DPATH_LEN];
	int fd, rc;

	if (!root || dpath_has_dots(host))
		return -EINVAL;
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = walk(fd, host, host + 4, done, sizeof(done));
	if (rc == 0 && fstatat(fd, done[0] ? done : ".", st, AT_SYMLINK_NOFOLLOW) < 0)
		rc = -errno;
	close(fd);
	if (rc == 0 &&
	    (size_t)snprintf(out, size, "%.4s%s%s", host, done[0] ? "/" : "", done) >= size)
		rc = -ENAMETOOLONG;
	return rc;
}

/* What a path of mode m is, for a message. */
static const char *kind_of(mode_t m)
{
	return S_ISREG(m)    ? "a regular file"
	       : S_ISDIR(m)  ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a device node";
}

int dpath_check(const struct devices_roots *r, const char *host, enum dpath_want want, char *out,
		size_t size, struct devices_node *node, const char **why)
{
	struct stat st;
	int rc = dpath_resolve(r, host, out, size, &st);

	*why = rc == -EXDEV	     ? "leads out of its root (a symbolic link or '..')"
	       : rc == -ELOOP	     ? "too many symbolic links"
	       : rc == -ENAMETOOLONG ? "path too long"
	       : rc == -EINVAL	     ? "a '.' or '..' component"
	       : rc == -EPERM ? "through a directory anyone may write (its entry could be swapped "
				"for a link after this check)"
			      : "cannot be resolved";
	if (rc < 0)
		return rc;
	if (node) {
		node->type = (unsigned)(st.st_mode & S_IFMT);
		node->rdev = (unsigned long)st.st_rdev;
	}
	if (want == DPATH_MOUNT || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		return 0;
	if (want == DPATH_DEVICE_OR_DIR && S_ISDIR(st.st_mode))
		return DPATH_IS_DIR;
	*why = kind_of(st.st_mode);
	return -ENODEV;
}
