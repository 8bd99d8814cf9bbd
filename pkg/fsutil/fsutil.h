/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fsutil: atomic publish of files other daemons read, safe path components, mkdir -p. */
#ifndef NP_FSUTIL_H
#define NP_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct log_err;

/*
 * Publish data as dir/name atomically, kmod tmpfile_publish-style: if dir/name
 * already is a regular file with exactly this content and mode, nothing is
 * written. Otherwise the data goes to a dot-temp file ".<name>.XXXXXX" in dir,
 * is fchmod'ed to mode, fsynced, renamed over dir/name, and dir is fsynced. On
 * any failure the temp file is removed and dir/name is untouched.
 * name must pass fs_name_is_safe(). Returns 1 if written, 0 if unchanged,
 * -EINVAL for an unsafe name, or -errno (ENOSPC, EACCES, ...) with err filled
 * as "<dir>/<name>: <reason>".
 */
int fs_publish(const char *dir, const char *name, const void *data, size_t len, mode_t mode,
	       struct log_err *err);

/*
 * True if name can be used as one path component: not empty, not "." or "..",
 * no '/', no control characters, at most 255 bytes.
 */
bool fs_name_is_safe(const char *name);

/*
 * mkdir -p path. The directories it creates get exactly mode (not masked by the
 * umask: readers such as nfd-worker run as another user). Returns 0 or -errno.
 */
int fs_mkdir_p(const char *path, mode_t mode);

/* True if path exists and is a directory (follows symlinks). */
bool fs_is_dir(const char *path);

#endif
