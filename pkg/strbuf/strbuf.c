/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strbuf: the one growable string buffer, always NUL-terminated, with a size cap. */
#include "strbuf/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char sb_empty_[1];

void sb_init(struct strbuf *sb, size_t max)
{
	sb->buf = sb_empty_;
	sb->len = 0;
	sb->cap = 0;
	sb->max = max;
}

static int sb_grow(struct strbuf *sb, size_t extra)
{
	size_t need, ncap;
	char *nbuf;

	if (extra > sb->max || sb->len > sb->max - extra)
		return -E2BIG;
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return 0;
	ncap = sb->cap ? sb->cap : 64;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	if (sb->cap == 0) {
		nbuf = malloc(ncap);
		if (!nbuf)
			return -ENOMEM;
		nbuf[0] = '\0';
	} else {
		nbuf = realloc(sb->buf, ncap);
		if (!nbuf)
			return -ENOMEM;
	}
	sb->buf = nbuf;
	sb->cap = ncap;
	return 0;
}

int sb_reserve(struct strbuf *sb, size_t n)
{
	return sb_grow(sb, n);
}

void sb_setlen(struct strbuf *sb, size_t len)
{
	sb->len = len;
	if (sb->cap)
		sb->buf[len] = '\0';
}

int sb_addn(struct strbuf *sb, const void *data, size_t n)
{
	int r = sb_grow(sb, n);

	if (r < 0)
		return r;
	if (n)
		memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	if (sb->cap)
		sb->buf[sb->len] = '\0';
	return 0;
}

int sb_add(struct strbuf *sb, const char *s)
{
	return sb_addn(sb, s, strlen(s));
}

int sb_addch(struct strbuf *sb, char c)
{
	return sb_addn(sb, &c, 1);
}

int sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n, r;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return -EINVAL;
	r = sb_grow(sb, (size_t)n);
	if (r < 0)
		return r;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
	return 0;
}

int sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = sb_vaddf(sb, fmt, ap);
	va_end(ap);
	return r;
}

int sb_add_json_str(struct strbuf *sb, const char *s)
{
	size_t start = sb->len;
	const unsigned char *p;
	int r = sb_addch(sb, '"');

	for (p = (const unsigned char *)s; r == 0 && *p; p++) {
		switch (*p) {
		case '"':
			r = sb_add(sb, "\\\"");
			break;
		case '\\':
			r = sb_add(sb, "\\\\");
			break;
		case '\n':
			r = sb_add(sb, "\\n");
			break;
		case '\r':
			r = sb_add(sb, "\\r");
			break;
		case '\t':
			r = sb_add(sb, "\\t");
			break;
		case '\b':
			r = sb_add(sb, "\\b");
			break;
		case '\f':
			r = sb_add(sb, "\\f");
			break;
		default:
			if (*p < 0x20)
				r = sb_addf(sb, "\\u%04x", *p);
			else
				r = sb_addch(sb, (char)*p);
		}
	}
	if (r == 0)
		r = sb_addch(sb, '"');
	if (r < 0)
		sb_truncate(sb, start);
	return r;
}

void sb_reset(struct strbuf *sb)
{
	sb_truncate(sb, 0);
}

void sb_truncate(struct strbuf *sb, size_t len)
{
	if (len >= sb->len)
		return;
	sb->len = len;
	if (sb->cap)
		sb->buf[len] = '\0';
}

void sb_rtrim(struct strbuf *sb)
{
	size_t n = sb->len;

	while (n > 0 && (sb->buf[n - 1] == ' ' || sb->buf[n - 1] == '\t' ||
			 sb->buf[n - 1] == '\n' || sb->buf[n - 1] == '\r'))
		n--;
	sb_truncate(sb, n);
}

char *sb_take(struct strbuf *sb)
{
	char *s;

	if (sb->cap == 0) {
		s = strdup("");
		return s;
	}
	s = sb->buf;
	sb->buf = sb_empty_;
	sb->len = 0;
	sb->cap = 0;
	return s;
}

void sb_free(struct strbuf *sb)
{
	if (sb->cap)
		free(sb->buf);
	sb->buf = sb_empty_;
	sb->len = 0;
	sb->cap = 0;
}

int sb_read_fileat(struct strbuf *sb, int dirfd, const char *path)
{
	size_t start = sb->len;
	char chunk[4096];
	struct stat st;
	ssize_t n;
	int fd, r = 0;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below. O_NOCTTY:
	 * a terminal read as a file never becomes our controlling terminal. */
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		close(fd);
		return r;
	}
	/* O_NONBLOCK kept: a character device with nothing to read (a tty, /dev/kmsg at its end)
	 * gives -EAGAIN instead of a read blocked forever; regular files ignore the flag */
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		r = sb_addn(sb, chunk, (size_t)n);
		if (r < 0)
			break;
	}
	close(fd);
	if (r < 0) {
		sb_truncate(sb, start);
		return r;
	}
	return (int)(sb->len - start > INT32_MAX ? INT32_MAX : sb->len - start);
}

int sb_read_file(struct strbuf *sb, const char *path)
{
	return sb_read_fileat(sb, AT_FDCWD, path);
}
