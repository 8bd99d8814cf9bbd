/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kernel_config: the kernel config (<proc>/config.gz via zlib, <boot>/config-RELEASE) as
 * kernel.config.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "feature/feature.h"
#include "kernel/kernel.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

#define CONFIG_NAME_MAX 4096 /* longer option names are skipped (real ones are < 64) */

int kernel_parse_config(const char *text, size_t len, struct feat_set *fs)
{
	const char *p = text, *end = text + len;
	char name[CONFIG_NAME_MAX];
	struct strbuf val = STRBUF_INIT(KERNEL_CONFIG_MAX);
	int count = 0, r = 0;

	if (feat_declare(fs, KERNEL_CONFIG, FEAT_ATTRS) < 0)
		return -ENOMEM;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *eq, *v, *ve;

		if ((size_t)(eol - p) > 7 && !memcmp(p, "CONFIG_", 7) &&
		    (eq = memchr(p, '=', (size_t)(eol - p))) != NULL &&
		    (size_t)(eq - p - 7) < sizeof(name)) {
			memcpy(name, p + 7, (size_t)(eq - p - 7));
			name[eq - p - 7] = '\0';
			/* strings.Trim(value, `"`) */
			v = eq + 1;
			ve = eol;
			while (v < ve && *v == '"')
				v++;
			while (ve > v && ve[-1] == '"')
				ve--;
			sb_reset(&val);
			/* a NUL in the file ends the value, as the feature model keeps C strings */
			r = sb_addn(&val, v, (size_t)(ve - v));
			if (r == 0)
				r = feat_attr_set(fs, KERNEL_CONFIG, name, val.buf);
			if (r < 0)
				break;
			count++;
		}
		p = eol + 1;
	}
	sb_free(&val);
	return r < 0 ? -ENOMEM : count;
}

int kernel_gunzip(const void *data, size_t len, struct strbuf *out)
{
	unsigned char chunk[16384];
	size_t start = out->len;
	z_stream z;
	int zr, r = 0;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) /* 16: gzip wrapper only */
		return -ENOMEM;
	z.next_in = (unsigned char *)(uintptr_t)data;
	z.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
	if (len > UINT32_MAX) {
		r = -E2BIG;
		goto out;
	}
	for (;;) {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END) {
			r = zr == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
			break;
		}
		r = sb_addn(out, chunk, sizeof(chunk) - z.avail_out);
		if (r < 0)
			break;
		if (zr == Z_STREAM_END) {
			if (z.avail_in == 0)
				break;
			/* another gzip member follows (Go's reader reads them all) */
			if (inflateReset(&z) != Z_OK) {
				r = -EINVAL;
				break;
			}
			continue;
		}
		if (z.avail_in == 0 && z.avail_out != 0) {
			r = -EINVAL; /* truncated: input used up before the end of the stream */
			break;
		}
	}
out:
	inflateEnd(&z);
	if (r < 0)
		sb_truncate(out, start);
	return r;
}

static const char *why(int r)
{
	switch (r) {
	case -E2BIG:
		return "larger than the bound";
	case -EINVAL:
		return "not a regular file, or not valid gzip data";
	default:
		return strerror(-r);
	}
}

/* Read one candidate: 1 read and parsed, 0 missing, <0 error with err set. */
static int try_config(const char *path, int gz, struct feat_set *fs, struct log_err *err)
{
	struct strbuf raw = STRBUF_INIT(gz ? KERNEL_CONFIG_GZ_MAX : KERNEL_CONFIG_MAX);
	struct strbuf text = STRBUF_INIT(KERNEL_CONFIG_MAX);
	int r = sb_read_file(&raw, path);

	if (r == -ENOENT || r == -ENOTDIR) {
		r = 0;
		goto out;
	}
	if (r >= 0 && gz)
		r = kernel_gunzip(raw.buf, raw.len, &text);
	if (r < 0) {
		r = log_err_set(err, r, "%s: %s", path, why(r));
		goto out;
	}
	r = gz ? kernel_parse_config(text.buf, text.len, fs)
	       : kernel_parse_config(raw.buf, raw.len, fs);
	if (r < 0) {
		r = log_err_set(err, r, "out of memory");
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
