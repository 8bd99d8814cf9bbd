/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kernel_config: the kernel config (<proc>/config.gz via libdeflate, <boot>/config-RELEASE) as
 * kernel.config.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#include "feature/feature.h"
#include "kernel/kernel.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

#define CONFIG_NAME_MAX 4096 /* longer option names are skipped (real ones are < 64) */

/*
 * The next option line of [*p, end) as NFD's parseKconfig counts them (see
 * kernel_parse_config): its name (without "CONFIG_") and value with every
 * leading and trailing '"' removed. Returns false at the end.
 */
static bool next_option(const char **p, const char *end, const char **name, size_t *nlen,
			const char **val, size_t *vlen)
{
	while (*p < end) {
		const char *l = *p, *nl = memchr(l, '\n', (size_t)(end - l));
		const char *eol = nl ? nl : end, *eq, *v, *ve;

		*p = eol + 1;
		if ((size_t)(eol - l) <= 7 || memcmp(l, "CONFIG_", 7))
			continue;
		eq = memchr(l, '=', (size_t)(eol - l));
		if (!eq || (size_t)(eq - l - 7) >= CONFIG_NAME_MAX)
			continue;
		/* strings.Trim(value, `"`) */
		v = eq + 1;
		ve = eol;
		while (v < ve && *v == '"')
			v++;
		while (ve > v && ve[-1] == '"')
			ve--;
		*name = l + 7;
		*nlen = (size_t)(eq - l - 7);
		*val = v;
		*vlen = (size_t)(ve - v);
		return true;
	}
	return false;
}

/* Options in text, as kernel_parse_config would count them. */
static int count_options(const char *text, size_t len)
{
	const char *p = text, *n, *v;
	size_t nl, vl;
	int count = 0;

	while (next_option(&p, text + len, &n, &nl, &v, &vl))
		count++;
	return count;
}

int kernel_parse_config(const char *text, size_t len, struct feat_set *fs)
{
	const char *p = text, *n, *v;
	char name[CONFIG_NAME_MAX];
	struct strbuf val = STRBUF_INIT(KERNEL_CONFIG_MAX);
	size_t nl, vl;
	int count = 0, r = 0;

	if (feat_declare(fs, KERNEL_CONFIG, FEAT_ATTRS) < 0)
		return -ENOMEM;
	while (next_option(&p, text + len, &n, &nl, &v, &vl)) {
		memcpy(name, n, nl);
		name[nl] = '\0';
		sb_reset(&val);
		/* a NUL in the file ends the value, as the feature model keeps C strings */
		r = sb_addn(&val, v, vl);
		if (r == 0)
			r = feat_attr_set(fs, KERNEL_CONFIG, name, val.buf);
		if (r < 0)
			break;
		count++;
	}
	sb_free(&val);
	return r < 0 ? -ENOMEM : count;
}

/*
 * A gzip member's optional header CRC (FHCRC: the low 16 bits of the CRC-32 of the header
 * bytes before it, RFC 1952 2.3.1), which Go's gzip.Reader checks (compress/gzip readHeader:
 * ErrHeader) and libdeflate skips. False only when it is there and wrong; a header too short
 * to hold it is left to libdeflate, which reports it.
 */
static bool header_crc_ok(const unsigned char *p, size_t n)
{
	size_t i = 10;

	if (n < 10 || p[0] != 0x1f || p[1] != 0x8b || !(p[3] & 0x02))
		return true;
	if (p[3] & 0x04) { /* FEXTRA: XLEN, then that many bytes */
		if (n < 12)
			return true;
		i += 2 + ((size_t)p[10] | (size_t)p[11] << 8);
	}
	for (unsigned f = 0x08; f <= 0x10; f <<= 1) /* FNAME, FCOMMENT: NUL-terminated */
		if (p[3] & f) {
			while (i < n && p[i])
				i++;
			i++;
		}
	if (i > n || n - i < 2)
		return true;
	return (libdeflate_crc32(0, p, i) & 0xffff) == ((unsigned)p[i] | (unsigned)p[i + 1] << 8);
}

/*
 * libdeflate, not zlib: a whole-buffer decompressor (the file is read whole anyway) with a
 * table-driven decoder and a folded CRC-32, about 0.7 M instructions where zlib's inflate took
 * 1.9 M on the 100 KB config of test/fixtures/host/firecracker-x86 (callgrind).
 * The output is written in place; its size is not known before decompressing, so the room
 * given starts at the last member's ISIZE (the gzip trailer's size mod 2^32, exact for the
 * one member a kernel writes) and doubles, up to the cap, when it is too small.
 */
int kernel_gunzip(const void *data, size_t len, struct strbuf *out)
{
	const unsigned char *in = data;
	struct libdeflate_decompressor *dz;
	size_t start = out->len, off = 0, hint;
	int r = 0;

	hint = len >= 4 ? (size_t)in[len - 4] | (size_t)in[len - 3] << 8 |
			      (size_t)in[len - 2] << 16 | (size_t)in[len - 1] << 24
			: 0;
	hint = hint < 4096 ? 4096 : hint;
	dz = libdeflate_alloc_decompressor();
	if (!dz)
		return -ENOMEM;
	do { /* each member (Go's gzip.Reader reads every one) */
		size_t left = out->max - out->len, room = hint, used = 0, got = 0;
		enum libdeflate_result dr = LIBDEFLATE_BAD_DATA;

		if (!header_crc_ok(in + off, len - off)) {
			r = -EINVAL;
			break;
		}
		for (;;) {
			if (room > left)
				room = left;
			r = sb_reserve(out, room);
			if (r < 0)
				break;
			dr = libdeflate_gzip_decompress_ex(dz, in + off, len - off,
							   out->buf + out->len, room, &used, &got);
			if (dr != LIBDEFLATE_INSUFFICIENT_SPACE)
				break;
			if (room == left) {
				r = -E2BIG;
				break;
			}
			room = room > left / 2 ? left : room * 2;
		}
		if (r < 0)
			break;
		if (dr != LIBDEFLATE_SUCCESS) {
			r = -EINVAL; /* not gzip, corrupt, a bad CRC or size, or truncated */
			break;
		}
		sb_setlen(out, out->len + got);
		off += used;
	} while (off < len);
	libdeflate_free_decompressor(dz);
	if (r < 0)
		sb_truncate(out, start);
	return r;
}

/* err for a candidate that could not be read (r from sb_read_file, at most max bytes). */
static int read_fail(struct log_err *err, const char *path, int r, size_t max)
{
	if (r == -E2BIG)
		return log_err_set(err, r, "%s: larger than the %zu MiB limit for a kernel config",
				   path, max >> 20);
	return log_err_set(err, r, "%s: %s", path,
			   r == -EINVAL ? "not a regular file" : strerror(-r));
}

/* err for a config.gz that did not decompress (r from kernel_gunzip of raw). */
static int gunzip_fail(struct log_err *err, const char *path, int r, const struct strbuf *raw)
{
	if (r == -E2BIG)
		return log_err_set(err, r,
				   "%s: larger than the %u MiB limit for a kernel config once "
				   "decompressed",
				   path, KERNEL_CONFIG_MAX >> 20);
	if (r != -EINVAL)
		return log_err_set(err, r, "%s: %s", path, strerror(-r));
	if (raw->len && (raw->buf[0] == '#' || !strncmp(raw->buf, "CONFIG_", 7)))
		return log_err_set(err, r,
				   "%s: plain text, not gzip data: this file must be "
				   "gzip-compressed, as the kernel writes it (a plain-text "
				   "config is read as <boot>/config-<release>)",
				   path);
	return log_err_set(err, r, "%s: not valid gzip data (corrupt or truncated)", path);
}

/* A config's text kept for a deferred parse (feat_defer). */
struct deferred {
	struct strbuf text; /* the whole config */
};

static int parse_deferred(void *arg, struct feat_set *fs)
{
	struct deferred *d = arg;

	return kernel_parse_config(d->text.buf, d->text.len, fs) < 0 ? -ENOMEM : 0;
}

static void free_deferred(void *arg)
{
	struct deferred *d = arg;

	sb_free(&d->text);
	free(d);
}

/*
 * Read one candidate: 1 read, 0 missing, <0 error with err set. The file is
 * read and gunzipped now (a bad one fails the run), but its options are
 * parsed only when a rule reads one (feat_defer): a rule that tests only that
 * kernel.config exists costs no parsing.
 */
static int try_config(const char *path, int gz, struct feat_set *fs, struct log_err *err)
{
	struct strbuf raw = STRBUF_INIT(gz ? KERNEL_CONFIG_GZ_MAX : KERNEL_CONFIG_MAX);
	struct strbuf text = STRBUF_INIT(KERNEL_CONFIG_MAX);
	static const char *const name[] = {KERNEL_CONFIG};
	struct deferred *d = NULL;
	int r = sb_read_file(&raw, path);

	if (r == -ENOENT || r == -ENOTDIR) {
		r = 0;
		goto out;
	}
	if (r < 0) {
		r = read_fail(err, path, r, raw.max);
		goto out;
	}
	if (gz)
		r = kernel_gunzip(raw.buf, raw.len, &text);
	if (r < 0) {
		r = gunzip_fail(err, path, r, &raw);
		goto out;
	}
	d = malloc(sizeof(*d));
	if (!d || feat_declare(fs, KERNEL_CONFIG, FEAT_ATTRS) < 0) {
		free(d);
		r = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	/* the text moves into d: the gunzipped one, or the file as read */
	d->text = gz ? text : raw;
	if (gz)
		sb_init(&text, KERNEL_CONFIG_MAX);
	else
		sb_init(&raw, KERNEL_CONFIG_MAX);
	/* the count is only for the -v line: not worth a pass over the text otherwise */
	r = log_get_level() >= LOG_LVL_INFO ? count_options(d->text.buf, d->text.len) : 0;
	if (feat_defer(fs, name, 1, parse_deferred, d, free_deferred) < 0) {
		/* -ENOMEM released d; -EINVAL (deferred already) cannot happen: one config per run
		 */
		r = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	log_info("%s: %d kernel config options", path, r);
	r = 1;
out:
	sb_free(&raw);
	sb_free(&text);
	return r;
}

int kernel_scan_config(const char *proc, const char *boot, const char *release, struct feat_set *fs,
		       struct log_err *err)
{
	char path[4096];
	int r;

	if (proc && *proc) {
		snprintf(path, sizeof(path), "%s/config.gz", proc);
		r = try_config(path, 1, fs, err);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	if (boot && *boot && release && *release) {
		snprintf(path, sizeof(path), "%s/config-%s", boot, release);
		r = try_config(path, 0, fs, err);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	log_info("no kernel config (%s/config.gz, %s/config-%s): no kernel.config",
		 proc ? proc : "-", boot ? boot : "-", release && *release ? release : "RELEASE");
	return 0;
}
