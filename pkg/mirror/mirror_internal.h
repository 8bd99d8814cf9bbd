/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_internal: helpers shared by the files of pkg/mirror, not exported. */
#ifndef NP_MIRROR_INTERNAL_H
#define NP_MIRROR_INTERNAL_H

#include <stdbool.h>

#include "mirror/mirror.h"

#define HOSTS_TOML "hosts.toml"
/*
 * Widest mode of a file we write: a stricter mode of the user's file is kept
 * (a hosts.toml may hold credentials in a header table, a directory a client
 * key), never group/other write, execute or set-id bits.
 */
#define MODE_MAX 0644
/* Our in-progress backup and restore directories (dot names: never a registry). */
#define BACKING_UP ".nodeprobe-backup"
#define RESTORING  ".nodeprobe-restore"

/* Whether registry r is Spegel's wildcard ("_default"); mirror_render.c. */
bool mirror_is_wildcard(const char *r);

/* Largest hosts.toml or certificate file read. */
#define MIRROR_MAX_FILE (1u << 20)

/* How long configure, cleanup or a repair waits for another one on the same path. */
#define MIRROR_LOCK_MS 30000

/*
 * Lock config_path (an flock on the directory) against the other writers of
 * pkg/mirror; mirror_apply.c. Returns a handle for mirror_unlock (also when
 * the path does not exist yet), or -ETIMEDOUT / -errno with err.
 */
int mirror_lock(const char *config_path, struct log_err *err);
void mirror_unlock(int lock);

/* configure (mirror_apply.c): what mirror_run does for MIRROR_CONFIGURE, unlocked. */
int mirror_configure(const struct mirror_opts *o, struct log_err *err);

/* watch (mirror_watch.c): what mirror_run does for MIRROR_WATCH. */
int mirror_watch_run(const struct mirror_opts *o, struct log_err *err);

/* Check run over the whole config path (check.c). */
int mirror_check_run(const struct mirror_opts *o, struct log_err *err);

/*
 * Check one hosts.toml text as containerd version version (NULL = unknown:
 * report what any containerd would reject). dir is the file's directory (for
 * relative ca/client paths); file is used in findings. Returns MIRROR_CLEAN,
 * MIRROR_WARNINGS or MIRROR_ERRORS.
 */
int mirror_check_hosts(const char *data, size_t len, const char *file, const char *dir,
		       const char *version, mirror_report_fn report, void *report_data);

#endif
