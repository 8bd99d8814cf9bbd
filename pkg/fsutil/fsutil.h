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
 * Remove the temp files fs_publish left in dir for name when a run was killed
 * before its rename: regular files ".<name>.XXXXXX" (six characters, as
 * mkstemp makes them) owned by this user and last modified more than max_age
 * seconds ago (a younger one may belong to a run still writing). Nothing else
 * is touched, symlinks are not followed. Returns how many were removed, or
 * -errno when dir cannot be read.
 */
int fs_publish_clean(const char *dir, const char *name, long max_age);

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

/*
 * rm -rf dir/name, never following a symlink (a link is removed, not its
 * target). A missing name is success. Returns 0 or -errno with err
 * "<dir>/<name>: cannot remove: <reason>"; logs what it removed (info).
 */
int fs_remove_tree(const char *dir, const char *name, struct log_err *err);

/*
 * The entry names of dir except "." and "..", sorted (alphasort), in a new
 * array *names of *n strings: free with fs_names_free. Returns 0 or -errno
 * with err "<dir>: <reason>".
 */
int fs_list_dir(const char *dir, char ***names, size_t *n, struct log_err *err);

/* Free an array from fs_list_dir (NULL allowed). */
void fs_names_free(char **names, size_t n);

/* "<a>/<b>" into out (size bytes): 0, or -ENAMETOOLONG with err "<a>/<b>: path too long". */
int fs_path_join(char *out, size_t size, const char *a, const char *b, struct log_err *err);

/* rename from_dir/name to to_dir/name: 0 or -errno with err naming both paths. */
int fs_move_entry(const char *from_dir, const char *to_dir, const char *name, struct log_err *err);

/* Move every entry of from into to (fs_move_entry each, in sorted order): 0 or the first error. */
int fs_move_all(const char *from, const char *to, struct log_err *err);

/*
 * mkdir path with mode 0755 whatever the umask, unless it already is a
 * directory: 0, or -errno with err "<path>: cannot create directory: <reason>".
 */
int fs_mkdir_if_missing(const char *path, struct log_err *err);

/*
 * Take an exclusive flock(2) on directory path, so that processes changing
 * the same tree take turns; waits at most timeout_ms. Returns the descriptor
 * holding the lock (close it to release), -ENOENT when path does not exist
 * (nothing to serialise yet), -ETIMEDOUT with err "<path>: locked by another
 * process for <n> s", or -errno with err.
 */
int fs_lock_dir(const char *path, int timeout_ms, struct log_err *err);

#endif
