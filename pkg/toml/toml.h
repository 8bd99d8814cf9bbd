/* SPDX-License-Identifier: GPL-2.0-or-later */
/* toml: a strict TOML 1.0 reader (the subset containerd's files use, and the rest of the grammar).
 */
#ifndef NP_TOML_H
#define NP_TOML_H

#include <stdbool.h>
#include <stddef.h>

struct log_err;
struct strbuf;

enum toml_type {
	TOML_STRING,
	TOML_INT,
	TOML_FLOAT,
	TOML_BOOL,
	TOML_DATETIME,
	TOML_ARRAY,
	TOML_TABLE,
};

/* How a table came to exist; TOML forbids redefining some of them. */
enum toml_origin {
	TOML_ROOT,	 /* the document */
	TOML_HEADER,	 /* [a.b] header */
	TOML_IMPLICIT,	 /* a parent created by [a.b] or [[a.b]], may still get a header */
	TOML_DOTTED,	 /* created by a dotted key a.b = 1 */
	TOML_INLINE,	 /* { ... }, closed once written */
	TOML_ARRAY_ELEM, /* one [[a]] element */
};

/*
 * A parsed value. Read-only for callers; the whole tree is owned by the root
 * and freed by toml_free(root).
 */
struct toml_value {
	enum toml_type type;	   /* which member below is meaningful */
	int line, col;		   /* 1-based position where the value (or table header) starts */
	char *str;		   /* STRING: decoded text; DATETIME, FLOAT, INT: the source text */
	size_t len;		   /* STRING: bytes in str (may contain NUL from \u0000) */
	long long i;		   /* INT */
	double f;		   /* FLOAT */
	bool b;			   /* BOOL */
	enum toml_origin origin;   /* TABLE: how it was created; ARRAY: TOML_HEADER for [[a]] */
	size_t n;		   /* ARRAY, TABLE: number of items */
	struct toml_value **items; /* ARRAY, TABLE: the items, in document order */
	char **keys;		   /* TABLE: key of items[i] (decoded, NUL-terminated) */
	int *key_line, *key_col;   /* TABLE: where keys[i] was written */
};

/*
 * Parse len bytes of TOML 1.0. name is used in error messages. On success
 * *out is the root table (free with toml_free). On a syntax or semantic error
 * (duplicate key, redefined table, bad escape, out-of-range number, ...)
 * returns -EINVAL with err = "<name>:<line>:<col>: <what>" and *out = NULL;
 * -ENOMEM when out of memory. A leading UTF-8 BOM is skipped; the text must be
 * valid UTF-8. Nesting deeper than 64 levels is refused.
 */
int toml_parse(const char *data, size_t len, const char *name, struct toml_value **out,
	       struct log_err *err);

/* Free a tree returned by toml_parse (NULL is fine). */
void toml_free(struct toml_value *root);

/* The value stored under key in table t, or NULL (also when t is not a table). Borrowed. */
const struct toml_value *toml_get(const struct toml_value *t, const char *key);

/* Index of key in table t, or -1. */
int toml_index(const struct toml_value *t, const char *key);

/* "string", "integer", "float", "boolean", "datetime", "array", "table". */
const char *toml_type_name(enum toml_type type);

/*
 * Append key to sb as go-toml v2 writes it: bare when it is [A-Za-z0-9_-]+,
 * otherwise single-quoted when possible, else double-quoted with escapes.
 * Returns 0 or the sb_add error.
 */
int toml_write_key(struct strbuf *sb, const char *key);

/*
 * Append a scalar or array value in go-toml v2's style ('literal' strings when
 * possible, arrays as [a, b]). Tables inside arrays are written inline.
 * Returns 0 or the sb_add error.
 */
int toml_write_value(struct strbuf *sb, const struct toml_value *v);

/*
 * Append table t as go-toml v2 marshals a map: header "[<path>]" (path already
 * written in TOML key syntax, e.g. "host.'http://x'"), then its non-table keys
 * sorted by name, then each sub-table sorted by name, separated by blank lines.
 * Returns 0 or the sb_add error.
 */
int toml_write_table(struct strbuf *sb, const char *path, const struct toml_value *t);

#endif
