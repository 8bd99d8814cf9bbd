/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe_remove: nodeprobe --remove, delete the features.d file nodeprobe wrote, and nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil/fsutil.h"
#include "label/label.h"
#include "log/log.h"
#include "probe/probe.h"

#define REMOVE_MAX_FILE 65536 /* nodeprobe never writes more (NFD's feature file limit) */
#define REMOVE_MAX_KEY	317   /* 253 prefix + '/' + 63 name */
#define REMOVE_MAX_VAL	63

/*
 * The file carries no marker: a '#' comment is read as a label by NFD before v0.14 (comments
 * came with NFD PR #1294). It is recognised by the exact shape probe_run gives it instead:
 * "key=value\n" lines, each a valid label, keys strictly increasing (label_set's order), no
 * blank line, comment or NUL. Returns NULL if ours, else why not.
 */
static const char *not_ours_why(const char *buf, size_t len)
{
	char key[REMOVE_MAX_KEY + 1], val[REMOVE_MAX_VAL + 1], prev[REMOVE_MAX_KEY + 1] = "";
	size_t off = 0;

	if (memchr(buf, '\0', len))
		return "it holds a NUL byte";
	while (off < len) {
		const char *line = buf + off, *nl = memchr(line, '\n', len - off), *eq;
		size_t n, kn;

		if (!nl)
			return "its last line has no newline";
		n = (size_t)(nl - line);
		eq = memchr(line, '=', n);
		if (!eq)
			return "a line is no key=value label (a comment, a blank line, a bare key)";
		kn = (size_t)(eq - line);
		if (kn > REMOVE_MAX_KEY || n - kn - 1 > REMOVE_MAX_VAL)
			return "a label is longer than Kubernetes allows";
		memcpy(key, line, kn);
		key[kn] = '\0';
		memcpy(val, eq + 1, n - kn - 1);
		val[n - kn - 1] = '\0';
		if (!label_key_valid(key) || !label_value_valid(val))
			return "a line is no valid Kubernetes label";
		if (prev[0] && strcmp(prev, key) >= 0)
			return "its labels are not sorted by key, as nodeprobe writes them";
		memcpy(prev, key, kn + 1);
		off += n + 1;
	}
	return NULL;
}

/* Read fd (a regular file of st.st_size bytes, at most REMOVE_MAX_FILE) into buf; 0 or -errno. */
static int read_all(int fd, char *buf, size_t size)
{
	size_t off = 0;

	while (off < size) {
		ssize_t n = read(fd, buf + off, size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* shrank while read: changed under us */
		off += (size_t)n;
	}
	return 0;
}

/* ours: 0 if the open file fd is nodeprobe's, -PROBE_EXIT_FOREIGN or -PROBE_EXIT_OUTPUT. */
static int check_ours(int fd, const struct stat *st, const char *dir, const char *name,
		      struct log_err *err)
{
	const char *why = NULL;
	char *buf;
	int r;

	if (!S_ISREG(st->st_mode))
		why = "not a regular file";
	else if (st->st_uid != geteuid())
		why = "owned by another user";
	else if ((st->st_mode & 07777) != 0644)
		why = "its mode is not 0644";
	else if (st->st_size > REMOVE_MAX_FILE)
		why = "larger than nodeprobe ever writes (64 KiB)";
	if (why)
		goto foreign;
	buf = malloc((size_t)st->st_size + 1);
	if (!buf)
		return log_err_set(err, -ENOMEM, "out of memory");
	r = read_all(fd, buf, (size_t)st->st_size);
	if (r < 0) {
		free(buf);
		return log_err_set(err, -PROBE_EXIT_OUTPUT, "%s/%s: %s", dir, name, strerror(-r));
	}
	why = not_ours_why(buf, (size_t)st->st_size);
	free(buf);
	if (!why)
		return 0;
foreign:
	return log_err_set(
	    err, -PROBE_EXIT_FOREIGN,
	    "%s/%s: not nodeprobe's file (%s): left alone; delete it by hand if it is "
	    "stale",
	    dir, name, why);
}

int probe_remove(const struct probe_opts *in, struct log_err *err)
{
	struct probe_opts opts = *in;
	struct stat st, now;
	int dfd, fd = -1, r;

	probe_opts_defaults(&opts);
	dfd = open(opts.features_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 && errno == ENOENT) {
		log_info("%s: no such directory: nothing to remove", opts.features_dir);
		return 0;
	}
	if (dfd < 0)
		return log_err_set(err, -PROBE_EXIT_OUTPUT, "%s: %s", opts.features_dir,
				   strerror(errno));
	/* O_NOFOLLOW: a symlink, wherever it points, is not ours; O_NONBLOCK: a FIFO never hangs */
	fd = openat(dfd, opts.output_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		log_info("%s/%s: absent: nothing to remove", opts.features_dir, opts.output_name);
		r = 0;
		goto clean;
	}
	if (fd < 0 && errno == ELOOP) {
		r = log_err_set(
		    err, -PROBE_EXIT_FOREIGN,
		    "%s/%s: a symbolic link, not nodeprobe's file: left alone, not followed",
		    opts.features_dir, opts.output_name);
		goto out;
	}
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = log_err_set(err, -PROBE_EXIT_OUTPUT, "%s/%s: %s", opts.features_dir,
				opts.output_name, strerror(errno));
		goto out;
	}
	r = check_ours(fd, &st, opts.features_dir, opts.output_name, err);
	if (r < 0)
		goto out;
	/* the name must still be the file checked (a concurrent run renames a new one over it) */
	if (fstatat(dfd, opts.output_name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
	    now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
		r = log_err_set(err, -PROBE_EXIT_OUTPUT,
				"%s/%s: replaced while being checked: run --remove again",
				opts.features_dir, opts.output_name);
		goto out;
	}
	if (unlinkat(dfd, opts.output_name, 0) < 0 || fsync(dfd) < 0) {
		r = log_err_set(err, -PROBE_EXIT_OUTPUT, "%s/%s: cannot remove: %s",
				opts.features_dir, opts.output_name, strerror(errno));
		goto out;
	}
	log_info("%s/%s: removed", opts.features_dir, opts.output_name);
	r = 0;
clean:
	/* the dot-temp files of a killed run are ours too; no run writes while we remove */
	fs_publish_clean(opts.features_dir, opts.output_name, -1);
out:
	if (fd >= 0)
		close(fd);
	close(dfd);
	return r;
}
