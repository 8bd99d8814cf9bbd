// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kubelet_sock: a plugin's unix socket, as the kubelet's peers expect it (K pkg/kubelet/
 * pluginmanager/pluginwatcher/README.md; K staging/src/k8s.io/dynamic-resource-allocation/
 * kubeletplugin/endpoint.go): a stale file of ours replaced, one somebody serves refused, mode
 * KSRV_SOCK_MODE before listen, and removed at the end only while it is still the one we bound.
 * Shared by kubelet_srv (device plugins) and pkg/dra (DRA plugins).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "kubelet/kubelet_internal.h"
#include "log/log.h"

int ksock_listen(const char *path, int *lfd, dev_t *dev, ino_t *ino, struct log_err *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return log_err_set(err, -ENAMETOOLONG, "%s: longer than a socket path may be",
				   path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (*lfd >= 0)
		close(*lfd);
	*lfd = -1;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return log_err_set(err, -EEXIST, "%s: exists and is no socket", path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(fd);
			return log_err_set(err, -EADDRINUSE, "%s: another process serves it", path);
		}
		if (fd >= 0)
			close(fd);
		unlink(path); /* a stale socket of ours (same name): nobody listens */
	}
	/* The kubelet (root) is the only peer: KSRV_SOCK_MODE before listen, so no one else
	 * ever connects. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, KSRV_SOCK_MODE) < 0 || listen(fd, 16) < 0 || stat(path, &st) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return log_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	*lfd = fd;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

bool ksock_ours(const char *path, int lfd, dev_t dev, ino_t ino)
{
	struct stat st;

	return lfd >= 0 && stat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}
