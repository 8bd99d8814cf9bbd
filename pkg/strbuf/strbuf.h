/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strbuf: the one growable string buffer, always NUL-terminated, with a size cap. */
#ifndef NP_STRBUF_H
#define NP_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A string buffer. buf is never NULL after STRBUF_INIT (it points at a shared
 * empty string until the first append) and is always NUL-terminated. max caps
 * len (not counting the NUL): every append that would pass it fails with
 * -E2BIG and leaves the contents unchanged. Callers read buf and len; they
 * never write the fields.
 */
struct strbuf {
	char *buf;  /* contents, NUL-terminated; owned unless it is the shared "" */
	size_t len; /* bytes used, excluding the NUL */
	size_t cap; /* bytes allocated (0 while buf is the shared "") */
	size_t max; /* cap on len; appends past it fail with -E2BIG */
};

extern char sb_empty_[1];
#define STRBUF_INIT(maxlen)                                                                        \
	{                                                                                          \
		sb_empty_, 0, 0, (maxlen)                                                          \
	}

/* Initialise sb as STRBUF_INIT(max) would. */
void sb_init(struct strbuf *sb, size_t max);

/*
 * Append n bytes (may contain NULs). Returns 0, -ENOMEM or -E2BIG; on failure
 * sb is unchanged.
 */
int sb_addn(struct strbuf *sb, const void *data, size_t n);
/*
 * Make room for n more bytes (and the NUL) without adding any: for writing
 * into buf + len directly, then sb_setlen. Returns 0, -ENOMEM or -E2BIG (n
 * more would pass the cap); sb is unchanged on failure.
 */
int sb_reserve(struct strbuf *sb, size_t n);
/* Set len (at most what sb_reserve made room for) and write the NUL after it. */
void sb_setlen(struct strbuf *sb, size_t len);
/* Append a NUL-terminated string. Same returns as sb_addn. */
int sb_add(struct strbuf *sb, const char *s);
/* Append one byte. Same returns as sb_addn. */
int sb_addch(struct strbuf *sb, char c);
/* Append printf-formatted text. Same returns as sb_addn, or -EINVAL on a bad format. */
int sb_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/*
 * Append s as a JSON string literal, quotes included, escaping as RFC 8259
 * requires. Same returns as sb_addn.
 */
int sb_add_json_str(struct strbuf *sb, const char *s);

/* Drop the contents but keep the allocation and the cap. */
void sb_reset(struct strbuf *sb);
/* Shorten to len bytes (no-op if already shorter). */
void sb_truncate(struct strbuf *sb, size_t len);
/* Remove trailing ASCII white space. */
void sb_rtrim(struct strbuf *sb);

/*
 * Take ownership of the contents: returns a malloc'd NUL-terminated string
 * (never NULL unless out of memory) the caller frees with free(); sb is reset
 * to empty. Returns NULL only on -ENOMEM.
 */
char *sb_take(struct strbuf *sb);
/* Free the contents; sb is left empty and reusable. */
void sb_free(struct strbuf *sb);

/*
 * Read the whole file at path into sb (appending), at most sb->max bytes in
 * all. Only regular files and character devices are read: a FIFO or socket is
 * -EINVAL and a directory -EISDIR, without waiting (a FIFO is opened
 * non-blocking); a character device is read non-blocking, so one with nothing
 * to read yet (a tty) is -EAGAIN, never a wait. Returns the number of bytes
 * read, -E2BIG if the file is longer than the cap allows (sb unchanged), or
 * -errno from open/read.
 */
int sb_read_file(struct strbuf *sb, const char *path);
/* Same, relative to directory fd dirfd (as openat). */
int sb_read_fileat(struct strbuf *sb, int dirfd, const char *path);

#endif
