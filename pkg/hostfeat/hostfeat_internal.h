/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostfeat_internal: bounded reads shared by the hostfeat files (hostfeat_read.c). */
#ifndef NP_HOSTFEAT_INTERNAL_H
#define NP_HOSTFEAT_INTERNAL_H

#include <stddef.h>

struct feat;
struct feat_set;
struct log_err;

/* A read attribute: HOSTFEAT_FILE_MAX bytes and a NUL. */
struct hf_buf {
	char s[4097];
	size_t len;
};

/*
 * Read dir/rel (rel may hold '/') into b, at most HOSTFEAT_FILE_MAX bytes, never
 * blocking (O_NONBLOCK, regular files only). 1 read, 0 cannot be read (NFD
 * leaves such an attribute out).
 */
int hf_read(const char *dir, const char *rel, struct hf_buf *b);

/* Go's strings.TrimSpace on b in place (ASCII white space); returns b->s. */
char *hf_trim(struct hf_buf *b);

/* hf_read then hf_trim: the value, or NULL. */
const char *hf_value(const char *dir, const char *rel, struct hf_buf *b);

#define HF_ABSENT     1 /* hf_list: dir is not there (ENOENT: Go's os.IsNotExist) */
#define HF_UNREADABLE 2 /* hf_list: any other error, or more than HOSTFEAT_DIR_MAX entries */

/*
 * The entries of dir (sorted by name, as Go's os.ReadDir): 0 with *names, *n (free with
 * fs_names_free). Reads at most HOSTFEAT_DIR_MAX + 1 names: more is HF_UNREADABLE with a
 * warning (NFD lists everything; we bound it and leave the feature out). HF_ABSENT when dir
 * is not there (ENOENT only: a path through a regular file, ENOTDIR, is HF_UNREADABLE, as
 * Go's os.IsNotExist), HF_UNREADABLE (debug line) on any other error; nothing allocated then.
 * -ENOMEM with err filled.
 */
int hf_list(const char *dir, char ***names, size_t *n, struct log_err *err);

/* Set key to dir/rel's trimmed value in instance inst when readable. 0 or -ENOMEM. */
int hf_inst_attr(struct feat *inst, const char *key, const char *dir, const char *rel);

/* Set key to dir/rel's trimmed value in attributes feature when readable. 1 set, 0 not, -ENOMEM. */
int hf_attr(struct feat_set *fs, const char *feature, const char *key, const char *dir,
	    const char *rel);

#endif
