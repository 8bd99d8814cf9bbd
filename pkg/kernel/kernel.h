/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kernel: loaded and built-in kernel modules as NFD's kernel.loadedmodule / kernel.enabledmodule.
 */
#ifndef NP_KERNEL_H
#define NP_KERNEL_H

struct feat_set;
struct log_err;

#define KERNEL_LOADED  "kernel.loadedmodule"  /* flags: modules in /proc/modules */
#define KERNEL_ENABLED "kernel.enabledmodule" /* flags: loaded + modules.builtin */

/*
 * Add NFD's module features to fs, with NFD's names exactly
 * (source/kernel/modules.go):
 *   kernel.loadedmodule:  the first field of each non-empty line of
 *                         <proc>/modules (the kernel writes '_', e.g. vfio_pci);
 *   kernel.enabledmodule: those, plus the base name without ".ko" of each
 *                         "*.ko" line of <modules_dir>/modules.builtin, kept as
 *                         written there (e.g. "vfio-pci": NFD does not turn '-'
 *                         into '_', which is why Intel's rules test both forms).
 * proc or modules_dir may be NULL (skipped). A missing file is logged at info
 * and gives no elements, not an error; each feature is created only when its
 * file was read. Any other read failure returns -errno with err naming the
 * file. Returns 0, -ENOMEM or -errno.
 */
int kernel_scan_modules(const char *proc, const char *modules_dir, struct feat_set *fs,
			struct log_err *err);

/*
 * Record that driver is bound to a device: its code is running, from a loaded
 * module or built in. The name, with '-' turned into '_' as the kernel names
 * modules ("virtio-pci" -> "virtio_pci"), is added to both kernel.loadedmodule
 * and kernel.enabledmodule, so a rule's "module loaded" also holds for the
 * device's bound driver. Names that are not module names after that (empty,
 * longer than 55 bytes, characters other than [A-Za-z0-9_]) are ignored and
 * return 0. Returns 1 if added, 0 if ignored, -ENOMEM.
 */
int kernel_add_bound_driver(struct feat_set *fs, const char *driver);

#endif
