/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_devices_dra: pkg/devices' DRA side: the attributes of devices_dra_attrs on every PCI
 * function and USB device of test/fixtures (compared with test/unit/expected/devices_dra_attrs.txt;
 * NP_UPDATE_EXPECTED=1 writes it), and the pool's device names (devices_dra_names).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/devices.h"
#include "strbuf/strbuf.h"

#include "harness.h"

#define EXPECTED "test/unit/expected/devices_dra_attrs.txt"

/* The attributes of the device whose sysfs directory is dir (its node: /dev/null, 1:3). */
static void attrs_of(struct strbuf *out, const char *label, const char *dir, const char *sys)
{
	char link[4096], real[PATH_MAX];
	char null[] = "/dev/null", name[] = "null";
	struct devices_node node = {.host = null, .container = null};
	struct devices_dev d = {.name = name, .nodes = &node, .n_nodes = 1};
	struct devices_roots roots = {.dev = "/dev", .sys = sys};
	struct devices_attr a[DEVICES_ATTRS_MAX];
	size_t n;

	if (!realpath(dir, real))
		return;
	snprintf(link, sizeof(link), "%s/dev/char/1:3", sys);
	unlink(link);
	if (symlink(real, link) < 0) {
		perror(link);
		exit(2);
	}
	n = devices_dra_attrs(&roots, "cls", &d, a, DEVICES_ATTRS_MAX);
	sb_addf(out, "%s:", label);
	for (size_t i = 0; i < n; i++) {
		if (a[i].is_num)
			sb_addf(out, " %s=%lld", a[i].id, a[i].num);
		else if (0)
			sb_addf(out, " %s=%s", a[i].id, a[i].num ? "true" : "false");
		else
			sb_addf(out, " %s%s\"%s\"", a[i].id, "=", a[i].str);
	}
	sb_addch(out, '\n');
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every entry of dir (sorted), each given to attrs_of as kind/tree/entry. */
static void walk(struct strbuf *out, const char *kind, const char *tree, const char *sub,
		 const char *sys)
{
	char dir[1024], path[2048], label[1024];
	char *names[512];
	size_t n = 0;
	struct dirent *e;
	DIR *dp;

	snprintf(dir, sizeof(dir), "test/fixtures/%s/%s/%s", kind, tree, sub);
	dp = opendir(dir);
	if (!dp)
		return;
	while ((e = readdir(dp)) && n < 512)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	closedir(dp);
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		snprintf(label, sizeof(label), "%s/%s %s", kind, tree, names[i]);
		attrs_of(out, label, path, sys);
		free(names[i]);
	}
}

static void trees(struct strbuf *out, const char *kind, const char *sub, const char *sys)
{
	char dir[256], *names[64];
	size_t n = 0;
	struct dirent *e;
	DIR *dp;

	snprintf(dir, sizeof(dir), "test/fixtures/%s", kind);
	dp = opendir(dir);
	if (!dp)
		return;
	while ((e = readdir(dp)) && n < 64) {
		char p[1024];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s/%s", dir, e->d_name, sub);
		if (e->d_name[0] != '.' && stat(p, &st) == 0 && S_ISDIR(st.st_mode))
			names[n++] = strdup(e->d_name);
	}
	closedir(dp);
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		walk(out, kind, names[i], sub, sys);
		free(names[i]);
	}
}

TEST(attrs_of_the_fixtures)
{
	struct strbuf out = STRBUF_INIT(1 << 22), want = STRBUF_INIT(1 << 22);
	const char *top = harness_tmpdir();
	char sys[256];
	FILE *f;

	snprintf(sys, sizeof(sys), "%s/sys", top);
	harness_put_str(top, "sys/dev/char/.keep", "");
	trees(&out, "pci", "bus/pci/devices", sys);
	trees(&out, "usb", "bus/usb/devices", sys);
	REQUIRE(out.len > 0);
	if (getenv("NP_UPDATE_EXPECTED")) {
		f = fopen(EXPECTED, "w");
		REQUIRE(f && fwrite(out.buf, 1, out.len, f) == out.len && fclose(f) == 0);
	}
	REQUIRE(sb_read_file(&want, EXPECTED) >= 0);
	if (strcmp(out.buf, want.buf)) {
		harness_put_str(sys, "got.txt", out.buf);
		fprintf(stderr, "  attributes differ from %s: diff -u %s %s/got.txt\n", EXPECTED,
			EXPECTED, sys);
	}
	CHECK(!strcmp(out.buf, want.buf));
	sb_free(&out);
	sb_free(&want);
}
