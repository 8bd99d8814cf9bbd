/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kernel: NFD's kernel.* features: modules, version (osrelease) and config (kconfig). */
#ifndef NP_KERNEL_H
#define NP_KERNEL_H

#include <stddef.h>

struct feat_set;
struct log_err;
struct strbuf;

#define KERNEL_LOADED  "kernel.loadedmodule"  /* flags: modules in /proc/modules */
#define KERNEL_ENABLED "kernel.enabledmodule" /* flags: loaded + modules.builtin */
#define KERNEL_VERSION "kernel.version"	      /* attributes: full, major, minor, revision */
#define KERNEL_CONFIG  "kernel.config"	      /* attributes: kconfig option -> value */

#define KERNEL_RELEASE_MAX   256	 /* bytes read of <proc>/sys/kernel/osrelease */
#define KERNEL_CONFIG_MAX    (16u << 20) /* a kernel config, decompressed (Debian's: 280 KiB) */
#define KERNEL_CONFIG_GZ_MAX (4u << 20)	 /* a config.gz file as read */

/*
 * Add NFD's module features to fs, with NFD's names exactly
 * (source/kernel/modules.go):
 *   kernel.loadedmodule:  the first field (Go's strings.Fields: leading blanks
 *                         skipped) of each line of <proc>/modules (the kernel
 *                         writes '_', e.g. vfio_pci);
 *   kernel.enabledmodule: only when modules.builtin was read (NFD v0.16+): every
 *                         kernel.loadedmodule element so far (bound drivers too),
 *                         plus the base name without ".ko" of each "*.ko" line
 *                         of <modules_dir>/modules.builtin, kept as written there
 *                         (e.g. "vfio-pci": NFD does not turn '-' into '_', which
 *                         is why Intel's rules test both forms).
 * proc or modules_dir may be NULL (skipped). A missing file is logged at info
 * and gives no elements, not an error; each feature is created when its file
 * was read, even if it is empty (as NFD: DoesNotExist then matches). Any other
 * read failure returns -errno with err naming the file. Returns 0, -ENOMEM or
 * -errno.
 */
int kernel_scan_modules(const char *proc, const char *modules_dir, struct feat_set *fs,
			struct log_err *err);

/*
 * Record that driver is bound to a device: its code is running, from a loaded
 * module or built in. The name, with '-' turned into '_' as the kernel names
 * modules ("virtio-pci" -> "virtio_pci"), is added to kernel.loadedmodule, and
 * to kernel.enabledmodule when that exists already (kernel_scan_modules copies
 * the loaded ones into it later), so a rule's "module loaded" also holds for the
 * device's bound driver. Names that are not module names after that (empty,
 * longer than 55 bytes, characters other than [A-Za-z0-9_]) are ignored and
 * return 0. Returns 1 if added, 0 if ignored, -ENOMEM.
 */
int kernel_add_bound_driver(struct feat_set *fs, const char *driver);

/*
 * kernel.version from one osrelease string (as <proc>/sys/kernel/osrelease
 * holds it), with NFD's parsing exactly (source/kernel/version.go): white
 * space trimmed; "full" = the string with every character outside
 * [-A-Za-z0-9_.] (a UTF-8 sequence or a stray byte counting as one) turned
 * into '_', then leading and trailing '-', '_', '.' removed; "major",
 * "minor", "revision" from ^(\d+)(\.(\d+))?(\.(\d+))?(-.*)?$ on full: all
 * three absent when it does not match, and a group that did not take part
 * PRESENT and EMPTY ("6.8" gives revision ""). "6.1.0+rpt-rpi-v8" gives full
 * "6.1.0_rpt-rpi-v8" and nothing else. Returns 0 or -ENOMEM.
 */
int kernel_parse_version(const char *osrelease, size_t len, struct feat_set *fs);

/*
 * Read <proc>/sys/kernel/osrelease (at most KERNEL_RELEASE_MAX bytes) and add
 * kernel.version (fs NULL: only the release). If release is not NULL, the
 * trimmed release string (as uname -r prints it) is copied there ("" when
 * unknown, too long for size, or holding a '/'). A missing file gives
 * no feature and returns 0 (logged); any other read error, or a file longer
 * than the bound, returns -errno/-E2BIG with err naming the file.
 */
int kernel_scan_version(const char *proc, struct feat_set *fs, char *release, size_t size,
			struct log_err *err);

/*
 * kernel.config from the text of a kernel config, as NFD's parseKconfig
 * (source/kernel/kconfig.go): lines split on '\n' only; a line counts when it
 * starts with "CONFIG_" and holds '='; the element is the text between
 * "CONFIG_" and the first '=', the value the rest with every leading and
 * trailing '"' removed and nothing else trimmed (=y -> "y", =m -> "m",
 * ="apparmor" -> "apparmor"). "# CONFIG_X is not set" gives nothing. A later
 * line wins. The feature is declared even when no line counts. Returns the
 * number of options or -ENOMEM.
 */
int kernel_parse_config(const char *text, size_t len, struct feat_set *fs);

/*
 * Decompress gzip data (one or more members, as Go's gzip.Reader reads them)
 * into out (appending, bounded by out->max). Returns 0, -E2BIG when the
 * result passes the cap, -EINVAL for data that is not gzip or is corrupt or
 * truncated, -ENOMEM.
 */
int kernel_gunzip(const void *data, size_t len, struct strbuf *out);

/*
 * Find and read the kernel config as NFD does, within our roots: the first of
 * <proc>/config.gz (gunzipped) and <boot>/config-<release> that exists (NFD
 * also searches /usr/src and /usr/lib trees, which a pod does not mount), and
 * add kernel.config. proc, boot or release may be NULL or "" (that candidate
 * is skipped). Nothing found: no feature, 0. A candidate that exists but
 * cannot be read, is corrupt, or passes the bounds: -errno with err naming
 * it. Returns 0 or the negative code.
 */
int kernel_scan_config(const char *proc, const char *boot, const char *release, struct feat_set *fs,
		       struct log_err *err);

#endif
