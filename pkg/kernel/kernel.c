/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kernel: loaded and built-in kernel modules as NFD's kernel.loadedmodule / kernel.enabledmodule.
 */
#include "kernel/kernel.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "feature/feature.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

#define KERNEL_FILE_MAX	   (16u << 20) /* modules.builtin is ~100 KiB; /proc/modules less */
#define KERNEL_MODNAME_MAX 55	       /* MODULE_NAME_LEN - 1 on 64-bit kernels */

/* Read path whole; 1 read, 0 missing, <0 error with err filled. */
static int read_whole(const char *path, struct strbuf *sb, struct log_err *err)
{
	int r = sb_read_file(sb, path);

	if (r == -ENOENT) {
		log_info("%s: not found, no module features from it", path);
		return 0;
	}
	if (r == -E2BIG) /* sb_read_file's code for "past the cap", not E2BIG's strerror */
		return log_err_set(err, r, "%s: larger than the %u MiB limit for a module list",
				   path, KERNEL_FILE_MAX >> 20);
	if (r < 0)
		return log_err_set(err, r, "%s: %s", path,
				   r == -EINVAL ? "not a regular file" : strerror(-r));
	return 1;
}

/*
 * /proc/modules: "name size refs deps state addr" per line; the name is the first field as Go's
 * strings.Fields splits it (NFD's getLoadedModules): leading blanks skipped, ended by any white
 * space (a CR too). A line of blanks only, on which NFD's index panics, gives nothing.
 */
static int parse_loaded(char *buf, struct feat_set *fs)
{
	char *line, *save = NULL;

	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n;

		while (isspace((unsigned char)*line))
			line++;
		for (n = 0; line[n] && !isspace((unsigned char)line[n]); n++)
			;
		if (n == 0)
			continue;
		line[n] = '\0';
		if (feat_flag_add(fs, KERNEL_LOADED, line) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* kernel.enabledmodule gets every loaded module (NFD: loaded + built-in, made together). */
static int enable_loaded(struct feat_set *fs)
{
	const struct feat *l = feat_get_kind(fs, KERNEL_LOADED, FEAT_FLAGS);
	size_t i;

	for (i = 0; l && i < feat_nelems(l); i++) {
		const char *name, *value;

		feat_elem_at(l, i, &name, &value);
		if (feat_flag_add(fs, KERNEL_ENABLED, name) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* modules.builtin: "kernel/drivers/vfio/pci/vfio-pci.ko" per line. */
static int parse_builtin(char *buf, struct feat_set *fs)
{
	char *line, *save = NULL;

	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end, *base;
		size_t n;

		while (isspace((unsigned char)*line))
			line++;
		n = strlen(line);
		while (n && isspace((unsigned char)line[n - 1]))
			line[--n] = '\0';
		if (n < 3 || strcmp(line + n - 3, ".ko") != 0)
			continue;
		end = line + n - 3;
		*end = '\0';
		base = strrchr(line, '/');
		base = base ? base + 1 : line;
		if (*base && feat_flag_add(fs, KERNEL_ENABLED, base) < 0)
			return -ENOMEM;
	}
	return 0;
}

int kernel_scan_modules(const char *proc, const char *modules_dir, struct feat_set *fs,
			struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(KERNEL_FILE_MAX);
	char path[4096];
	int r = 0;

	if (proc) {
		snprintf(path, sizeof(path), "%s/modules", proc);
		r = read_whole(path, &sb, err);
		if (r > 0 && feat_declare(fs, KERNEL_LOADED, FEAT_FLAGS) < 0)
			r = -ENOMEM;
		if (r > 0)
			r = parse_loaded(sb.buf, fs);
		if (r < 0)
			goto out;
		sb_reset(&sb);
	}
	if (modules_dir) {
		snprintf(path, sizeof(path), "%s/modules.builtin", modules_dir);
		r = read_whole(path, &sb, err);
		/* NFD v0.16+: enabledmodule only when modules.builtin was read (source/kernel) */
		if (r > 0 &&
		    (feat_declare(fs, KERNEL_ENABLED, FEAT_FLAGS) < 0 || enable_loaded(fs) < 0))
			r = -ENOMEM;
		if (r > 0)
			r = parse_builtin(sb.buf, fs);
		if (r < 0)
			goto out;
	}
	r = 0;
out:
	if (r == -ENOMEM)
		log_err_set(err, r, "out of memory");
	sb_free(&sb);
	return r;
}

int kernel_add_bound_driver(struct feat_set *fs, const char *driver)
{
	char name[KERNEL_MODNAME_MAX + 1];
	size_t i, n = strlen(driver);

	if (n == 0 || n > KERNEL_MODNAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = driver[i] == '-' ? '_' : driver[i];

		if (!isalnum((unsigned char)c) && c != '_')
			return 0;
		name[i] = c;
	}
	name[n] = '\0';
	if (feat_flag_add(fs, KERNEL_LOADED, name) < 0)
		return -ENOMEM;
	/* enabled only where modules.builtin made the feature (else kernel_scan_modules copies) */
	if (feat_get_kind(fs, KERNEL_ENABLED, FEAT_FLAGS) &&
	    feat_flag_add(fs, KERNEL_ENABLED, name) < 0)
		return -ENOMEM;
	return 1;
}
