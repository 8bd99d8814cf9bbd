/* SPDX-License-Identifier: GPL-2.0-or-later */
/* label: Kubernetes label key/value validation and a sorted set of labels. */
#ifndef NP_LABEL_H
#define NP_LABEL_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;
struct log_err;

#define LABEL_PREFIX_MAX 253 /* DNS-1123 subdomain */
#define LABEL_NAME_MAX	 63
#define LABEL_VALUE_MAX	 63

/*
 * True if key is a valid qualified label key (k8s IsQualifiedName): an
 * optional DNS-1123 subdomain prefix of at most 253 characters and "/", then a
 * name of 1-63 characters matching ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
 */
bool label_key_valid(const char *key);
/* True if key has a prefix (contains '/') and is valid. */
bool label_key_valid_prefixed(const char *key);
/* True if value is a valid label value: empty, or a valid name of at most 63 characters. */
bool label_value_valid(const char *value);

/* A set of labels kept sorted by key; a key appears once. */
struct label_set;

/* New empty set, or NULL when out of memory. Free with label_set_free(). */
struct label_set *label_set_new(void);
void label_set_free(struct label_set *ls);

/*
 * Set key=value (copied), replacing any earlier value. Both must be valid (key
 * with a prefix); otherwise returns -EINVAL with err naming the key and what is
 * wrong, and the set is unchanged. Returns 0 or -ENOMEM.
 */
int label_set_put(struct label_set *ls, const char *key, const char *value, struct log_err *err);
/* The value for key (borrowed, valid until the set changes), or NULL. */
const char *label_set_get(const struct label_set *ls, const char *key);
/* Remove key if present. Returns 1 if removed, 0 if absent. */
int label_set_del(struct label_set *ls, const char *key);
/* Number of labels. */
size_t label_set_count(const struct label_set *ls);
/* The i-th key and value in sorted order (borrowed). i < count. */
void label_set_at(const struct label_set *ls, size_t i, const char **key, const char **value);

/*
 * Append "key=value\n" for every label, sorted by key (byte order), to out.
 * Returns 0, or what sb_add returns (-E2BIG when out's cap is reached).
 */
int label_set_format(const struct label_set *ls, struct strbuf *out);

#endif
