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

/*
 * The entries of dir (sorted, as Go's os.ReadDir): 0 with *names, *n; 1 when dir
 * cannot be listed (nothing allocated); -E2BIG over HOSTFEAT_DIR_MAX or -ENOMEM
 * with err filled.
 */
int hf_list(const char *dir, char ***names, size_t *n, struct log_err *err);

/* Set key to dir/rel's trimmed value in instance inst when readable. 0 or -ENOMEM. */
int hf_inst_attr(struct feat *inst, const char *key, const char *dir, const char *rel);

/* Set key to dir/rel's trimmed value in attributes feature when readable. 1 set, 0 not, -ENOMEM. */
int hf_attr(struct feat_set *fs, const char *feature, const char *key, const char *dir,
	    const char *rel);

#endif
