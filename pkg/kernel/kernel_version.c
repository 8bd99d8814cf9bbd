/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kernel_version: <proc>/sys/kernel/osrelease as NFD's kernel.version (full, major, minor,
 * revision).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feature/feature.h"
#include "kernel/kernel.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

static bool label_char(unsigned char c)
{
	return isalnum(c) || c == '-' || c == '_' || c == '.';
}

/*
 * Length of the UTF-8 sequence at s (at most n bytes) as Go's regexp steps
 * over it: a valid sequence is one rune, any other byte a rune of its own.
 */
static size_t rune_len(const unsigned char *s, size_t n)
{
	size_t want, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		want = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		want = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		want = 4;
	else
		return 1;
	if (n < want)
		return 1;
	for (i = 1; i < want; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 1;
	/* overlong 3-byte, surrogates, overlong 4-byte and > U+10FFFF are invalid in Go */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 1;
	return want;
}

/* Digits at s; returns how many. */
static size_t digits(const char *s)
{
	size_t n = 0;

	while (isdigit((unsigned char)s[n]))
		n++;
	return n;
}

static int set_part(struct feat_set *fs, const char *key, const char *s, size_t n)
{
	char buf[KERNEL_RELEASE_MAX + 1];

	memcpy(buf, s, n);
	buf[n] = '\0';
	return feat_attr_set(fs, KERNEL_VERSION, key, buf);
}

int kernel_parse_version(const char *osrelease, size_t len, struct feat_set *fs)
{
	char full[KERNEL_RELEASE_MAX + 1];
	const char *p;
	size_t i = 0, n = 0, a, b = 0, c = 0;
	const char *pb = NULL, *pc = NULL;

	/* strings.TrimSpace (ASCII white space; osrelease is the kernel's ASCII) */
	while (len && isspace((unsigned char)osrelease[0])) {
		osrelease++;
		len--;
	}
	while (len && isspace((unsigned char)osrelease[len - 1]))
		len--;
	while (i < len && n < KERNEL_RELEASE_MAX) {
		unsigned char ch = (unsigned char)osrelease[i];

		if (label_char(ch)) {
			full[n++] = (char)ch;
			i++;
		} else {
			full[n++] = '_';
			i += rune_len((const unsigned char *)osrelease + i, len - i);
		}
	}
	full[n] = '\0';
	/* strings.Trim(full, "-_.") */
	p = full;
	while (*p == '-' || *p == '_' || *p == '.')
		p++;
	while (n > (size_t)(p - full) && strchr("-_.", full[n - 1]))
		full[--n] = '\0';
	if (feat_attr_set(fs, KERNEL_VERSION, "full", p) < 0)
		return -ENOMEM;
	/* ^(\d+)(\.(\d+))?(\.(\d+))?(-.*)?$ */
	a = digits(p);
	if (a == 0)
		return 0;
	i = a;
	if (p[i] == '.' && (b = digits(p + i + 1)) > 0) {
		pb = p + i + 1;
		i += 1 + b;
		if (p[i] == '.' && (c = digits(p + i + 1)) > 0) {
			pc = p + i + 1;
			i += 1 + c;
		}
	}
	if (p[i] != '\0' && p[i] != '-')
		return 0;
	if (set_part(fs, "major", p, a) < 0 || set_part(fs, "minor", pb ? pb : "", b) < 0 ||
	    set_part(fs, "revision", pc ? pc : "", c) < 0)
		return -ENOMEM;
	return 0;
}

int kernel_scan_version(const char *proc, struct feat_set *fs, char *release, size_t size,
			struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(KERNEL_RELEASE_MAX);
	char path[4096];
	const char *s;
	size_t n;
	int r;

	if (release && size)
		release[0] = '\0';
	snprintf(path, sizeof(path), "%s/sys/kernel/osrelease", proc);
	r = sb_read_file(&sb, path);
	if (r == -ENOENT) {
		log_info("%s: not found, no kernel.version", path);
		r = 0;
		goto out;
	}
	if (r < 0) {
		r = log_err_set(err, r, "%s: %s", path,
				r == -E2BIG    ? "longer than 256 bytes"
				: r == -EINVAL ? "not a regular file"
					       : strerror(-r));
		goto out;
	}
	r = fs ? kernel_parse_version(sb.buf, sb.len, fs) : 0;
	if (r < 0) {
		r = log_err_set(err, r, "out of memory");
		goto out;
	}
	s = sb.buf;
	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (release && size && n < size && !memchr(s, '/', n)) {
		memcpy(release, s, n);
		release[n] = '\0';
	}
out:
	sb_free(&sb);
	return r;
}
