/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dtb2fs: unflatten a devicetree blob into a directory as the kernel shows /proc/device-tree. */
#include <errno.h>
#include <fcntl.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Usage: dtb2fs BLOB DIR. DIR must not exist; it becomes the root node. Each node
 * is a directory named as libfdt names it ("cpu@0"), each property a file with
 * its raw bytes, plus the "name" file the kernel adds to every node that has no
 * "name" property (the node name up to '@', NUL-terminated; "" for the root).
 * Test fixtures are made with it at test time instead of committing thousands of
 * files (test/fixtures/README.md). Exit 0 ok, 1 error, 2 usage.
 */

#define MAX_BLOB  (16u << 20)
#define MAX_DEPTH 64

static int put_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, data, len) == (ssize_t)len;
	if (close(fd) != 0 || !ok)
		return -1;
	return 0;
}

static int unflatten(const void *fdt, int node, const char *dir, int depth)
{
	char path[4096];
	const char *name;
	int prop, child, has_name = 0;

	if (depth > MAX_DEPTH) {
		fprintf(stderr, "dtb2fs: %s: nested deeper than %d\n", dir, MAX_DEPTH);
		return -1;
	}
	if (mkdir(dir, 0755) != 0) {
		fprintf(stderr, "dtb2fs: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	fdt_for_each_property_offset(prop, fdt, node)
	{
		int len;
		const void *val = fdt_getprop_by_offset(fdt, prop, &name, &len);

		if (!val || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
			fprintf(stderr, "dtb2fs: %s: bad property\n", dir);
			return -1;
		}
		has_name |= !strcmp(name, "name");
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (put_file(path, val, (size_t)len) != 0) {
			fprintf(stderr, "dtb2fs: %s: %s\n", path, strerror(errno));
			return -1;
		}
	}
	if (!has_name) {
		const char *full = node ? fdt_get_name(fdt, node, NULL) : "";
		size_t n = strcspn(full, "@");
		char buf[256];

		snprintf(buf, sizeof(buf), "%.*s", (int)n, full);
		snprintf(path, sizeof(path), "%s/name", dir);
		if (put_file(path, buf, strlen(buf) + 1) != 0) {
			fprintf(stderr, "dtb2fs: %s: %s\n", path, strerror(errno));
			return -1;
		}
	}
	fdt_for_each_subnode(child, fdt, node)
	{
		name = fdt_get_name(fdt, child, NULL);
		if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") ||
		    !strcmp(name, "..")) {
			fprintf(stderr, "dtb2fs: %s: bad node name\n", dir);
			return -1;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (unflatten(fdt, child, path, depth + 1) != 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char blob[MAX_BLOB];
	FILE *fp;
	size_t n;
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: dtb2fs BLOB DIR\n");
		return 2;
	}
	fp = fopen(argv[1], "rb");
	if (!fp) {
		fprintf(stderr, "dtb2fs: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	n = fread(blob, 1, sizeof(blob), fp);
	fclose(fp);
	r = fdt_check_full(blob, n);
	if (r != 0) {
		fprintf(stderr, "dtb2fs: %s: %s\n", argv[1], fdt_strerror(r));
		return 1;
	}
	return unflatten(blob, 0, argv[2], 0) == 0 ? 0 : 1;
}
