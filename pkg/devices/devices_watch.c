/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_watch: hotplug as inotify events on the dev root (devtmpfs reports the nodes the
 * kernel adds and removes), its subdirectories included; no polling. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "devices/devices_internal.h"
#include "fsutil/fsutil.h"
#include "log/log.h"

/* Nodes and directories that come and go; not IN_ATTRIB (udev's chmod of a node we already saw). */
#define MASK  (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF)
#define DEPTH 3 /* /dev/bus/usb/001, /dev/serial/by-id */

/* Subtrees of /dev that hold no device a class hands out, and change all the time (every
 * terminal, every POSIX shm segment or queue): not watched. */
static const char *const skip[] = {"pts", "shm", "mqueue", "hugepages", NULL};

struct devices_watch {
	int fd;		/* inotify */
	size_t watches; /* added, at most DEVICES_WATCH_MAX */
	char *root;
};

/* Watch dir and its subdirectories down to depth (not following links). */
static void add_tree(struct devices_watch *w, const char *dir, int depth)
{
	char **names = NULL, sub[PATH_MAX];
	size_t n = 0, i;

	if (w->watches >= DEVICES_WATCH_MAX) {
		log_warn("%s: not watched: more than %d directories under %s", dir,
			 DEVICES_WATCH_MAX, w->root);
		return;
	}
	if (inotify_add_watch(w->fd, dir, MASK | IN_ONLYDIR | IN_DONT_FOLLOW) < 0)
		return;
	w->watches++;
	if (depth >= DEPTH || fs_list_dir(dir, &names, &n, NULL) < 0)
		return;
	for (i = 0; i < n; i++) {
		bool skipped = false;

		for (size_t k = 0; depth == 0 && skip[k]; k++)
			skipped |= !strcmp(names[i], skip[k]);
		if (skipped || names[i][0] == '.' ||
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", dir, names[i]) >= sizeof(sub))
			continue;
		if (fs_is_dir(sub))
			add_tree(w, sub, depth + 1);
	}
	fs_names_free(names, n);
}

int devices_watch_new(const char *dev_root, struct devices_watch **out, struct log_err *err)
{
	struct devices_watch *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w || !(w->root = strdup(dev_root))) {
		free(w);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		int e = errno;

		devices_watch_free(w);
		return log_err_set(err, -e, "inotify: %s", strerror(e));
	}
	add_tree(w, dev_root, 0);
	if (!w->watches) {
		devices_watch_free(w);
		return log_err_set(err, -ENOENT, "%s: cannot watch (not a directory?)", dev_root);
	}
	*out = w;
	return 0;
}

int devices_watch_fd(const struct devices_watch *w)
{
	return w->fd;
}

int devices_watch_drain(struct devices_watch *w)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	int due = 0;
	bool new_dir = false;

	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof(buf));
		char *p;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return due;
		if (n <= 0)
			return n < 0 ? -errno : due;
		for (p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;

			due = 1;
			if (e->mask & IN_Q_OVERFLOW)
				log_info("%s: inotify queue overflowed; rescanning", w->root);
			if (e->mask & (IN_Q_OVERFLOW | IN_ISDIR))
				new_dir |= !(e->mask & (IN_DELETE | IN_MOVED_FROM));
			p += sizeof(*e) + e->len;
		}
		if (new_dir) {
			new_dir = false;
			/* new directories (/dev/bus/usb/003, /dev/serial/by-id) get a watch;
			 * re-adding an existing one only sets its mask again */
			w->watches = 0;
			add_tree(w, w->root, 0);
		}
	}
}

void devices_watch_free(struct devices_watch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w->root);
	free(w);
}
