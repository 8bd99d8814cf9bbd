/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dt: load a devicetree (blob or live directory tree) through libfdt; labels and raw features. */
#ifndef NP_DT_H
#define NP_DT_H

#include <stdbool.h>
#include <stddef.h>

struct feat_set;
struct label_set;
struct log_err;

#define DT_BLOB_MAX	(16u << 20) /* a blob, read or built, is at most 16 MiB */
#define DT_PROP_MAX	(1u << 20)  /* one property file of a live tree: at most 1 MiB */
#define DT_DEPTH_MAX	32	    /* nodes nest at most this deep (root = 0) */
#define DT_LABEL_PREFIX "beta.devicetree.org/"

/* Success value of the loaders when there is no devicetree to scan (not an error). */
#define DT_NONE 1

/* A validated flattened devicetree in memory. */
struct dt_blob {
	void *fdt;   /* owned, malloc'd; passed fdt_check_full; NULL when empty */
	size_t size; /* bytes valid at fdt (>= fdt_totalsize) */
};

/*
 * Read the blob file path (e.g. /sys/firmware/fdt), at most DT_BLOB_MAX bytes,
 * and validate it with fdt_check_full before anything else reads it.
 * Returns 0 with *out filled (free with dt_blob_free), DT_NONE when the root
 * has no "compatible" (out empty), or a negative code with err set to
 * "<path>: <reason>": -errno from open/read, -E2BIG past the cap, -EINVAL for
 * a truncated or corrupt blob (the reason is libfdt's fdt_strerror).
 */
int dt_load_file(const char *path, struct dt_blob *out, struct log_err *err);

/*
 * Build a blob from a live tree such as <sysfs>/firmware/devicetree/base: one
 * directory per node, one regular file per property holding its raw bytes.
 * The kernel's synthetic "name" property is dropped when it equals the node
 * name up to '@' (as dtc -I fs does), so a board's tree and its blob scan
 * alike. Entries are sorted by name; symlinks inside the tree are skipped,
 * never followed (dir itself may be a symlink). An unreadable "security-*"
 * property (the kernel makes those root-only) is skipped; any other unreadable
 * file or directory is an error. Validated with fdt_check_full.
 * Returns 0 with *out filled, DT_NONE when dir does not exist or its root has
 * no "compatible", or a negative code with err naming the path: -errno for an
 * unreadable directory or file, -E2BIG when a property passes DT_PROP_MAX or
 * the blob DT_BLOB_MAX, -ELOOP when nodes nest deeper than DT_DEPTH_MAX,
 * -EINVAL when libfdt rejects a name or the result.
 */
int dt_load_tree(const char *dir, struct dt_blob *out, struct log_err *err);

/*
 * Check buf (size bytes, 8-byte aligned) with fdt_check_full and tell whether
 * it is a devicetree to scan. Returns 0, DT_NONE (no root "compatible"), or
 * -EINVAL with err set to libfdt's reason. Borrowed buf.
 */
int dt_check(const void *buf, size_t size, struct log_err *err);

/* Free b's blob; b is left empty. NULL-safe. */
void dt_blob_free(struct dt_blob *b);

/*
 * Add the k8s-dt-node-labeller labels DT_LABEL_PREFIX<name>=<count> to ls:
 * the compatible strings of the root, of every node selected by "cpu", "gpu"
 * or one of names[0..n_names) (dt_name_matches, anywhere in the tree; empty
 * names select nothing), each
 * node counted once; count = occurrences of the label name. Nodes whose
 * "status" (or an ancestor's) is present and not "okay"/"ok" are left out.
 * A string that cannot become a valid label is skipped with log_warn naming
 * it. fdt must have passed dt_check. Returns the number of labels added, or
 * -ENOMEM.
 */
int dt_labels(const void *fdt, const char *const *names, size_t n_names, struct label_set *ls,
	      struct log_err *err);

/*
 * Add raw features for rules (NFD model) to fs:
 *   dt.root       attributes: compatible (most specific root string), model,
 *                 chassis-type (when present); never serial-number
 *   dt.compatible flags: every root compatible string
 *   dt.node       instances, one per enabled node with a compatible: name
 *                 ("gpu@7ec00000"), path, compatible (most specific),
 *                 compatibles (all, space-separated)
 * fdt must have passed dt_check. Returns 0 or -ENOMEM.
 */
int dt_features(const void *fdt, struct feat_set *fs, struct log_err *err);

#endif
