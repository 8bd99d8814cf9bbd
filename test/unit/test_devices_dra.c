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
#include "devices/devices_internal.h"
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
		if (a[i].type == DEVICES_ATTR_INT)
			sb_addf(out, " %s=%lld", a[i].id, a[i].num);
		else if (a[i].type == DEVICES_ATTR_BOOL)
			sb_addf(out, " %s=%s", a[i].id, a[i].num ? "true" : "false");
		else
			sb_addf(out, " %s=%s\"%s\"", a[i].id,
				a[i].type == DEVICES_ATTR_VERSION ? "v" : "", a[i].str);
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

/* ---- pool names */

TEST(names_are_dns_labels_cut_with_a_hash)
{
	char a[64], b[64], c[64];
	const char *id = "usb-Silicon_Labs_CP2102N_USB_to_UART_Bridge_Controller_3a2b-if00-port0";

	CHECK_INT(devices_dra_name("serial", "ttyUSB0", a, sizeof(a)), 0);
	CHECK_STR(a, "serial-ttyusb0");
	CHECK_INT(devices_dra_name("my_class", "1-4:1.0", a, sizeof(a)), 0);
	CHECK_STR(a, "my-class-1-4-1-0");
	/* two long names sharing their first 63 characters: both cut, each its own hash */
	CHECK_INT(devices_dra_name("serial", id, a, sizeof(a)), 0);
	CHECK_INT(devices_dra_name(
		      "serial",
		      "usb-Silicon_Labs_CP2102N_USB_to_UART_Bridge_Controller_3a2b-if01-port0", b,
		      sizeof(b)),
		  0);
	CHECK_INT(strlen(a), 63);
	CHECK_INT(strlen(b), 63);
	CHECK(strcmp(a, b) != 0);
	CHECK(!strncmp(a, "serial-usb-silicon-labs-cp2102n-usb-to-uart-bridge-", 52 - 1));
	/* the same device, the same name (restarts): a pure function of class and device */
	CHECK_INT(devices_dra_name("serial", id, c, sizeof(c)), 0);
	CHECK_STR(a, c);
	for (const char *p = a; *p; p++)
		CHECK((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-');
	CHECK(a[62] != '-' && a[0] != '-');
	CHECK_INT(devices_dra_name("serial", "ttyUSB0", a, 32), -EINVAL);
}

/* A scan of devices named n[0..count). */
static struct devices_found *scan(struct devices_dev *d, char **n, size_t count)
{
	static struct devices_found f[4];
	static size_t used;

	for (size_t i = 0; i < count; i++)
		d[i] = (struct devices_dev){.name = n[i]};
	f[used] = (struct devices_found){.d = d, .n = count};
	return &f[used++];
}

TEST(names_that_collide_are_all_hashed_the_others_stay)
{
	char c0[] = "serial", c1[] = "Serial_x", c2[] = "serial-x";
	struct dclass cls[] = {{.name = c0}, {.name = c1}, {.name = c2}};
	struct devices_classes c = {cls, 3};
	char n0[] = "ttyUSB0", n1[] = "ttyusb0", n2[] = "ttyACM0", n3[] = "a", n4[] = "a";
	char *s0[] = {n0, n1, n2}, *s1[] = {n3}, *s2[] = {n4};
	struct devices_dev d0[3], d1[1], d2[1];
	const struct devices_found *f[3] = {scan(d0, s0, 3), scan(d1, s1, 1), scan(d2, s2, 1)};
	char(*names)[DRA_NAME_MAX + 1], one[64];
	size_t n;

	REQUIRE_INT(devices_dra_names(&c, f, &names, &n), 0);
	REQUIRE_INT(n, 5);
	/* ttyUSB0 and ttyusb0 (one lower-cased name): both hashed, different; ttyACM0 unchanged */
	CHECK(!strncmp(names[0], "serial-ttyusb0-", 15) && strlen(names[0]) == 15 + 10);
	CHECK(!strncmp(names[1], "serial-ttyusb0-", 15) && strlen(names[1]) == 15 + 10);
	CHECK(strcmp(names[0], names[1]) != 0);
	CHECK_STR(names[2], "serial-ttyacm0");
	/* class Serial_x device a and class serial-x device a: "serial-x-a" twice */
	CHECK(!strncmp(names[3], "serial-x-a-", 11) && strlen(names[3]) == 21);
	CHECK(strcmp(names[3], names[4]) != 0);
	/* find answers by these names */
	CHECK(devices_dra_find(&c, f, names[1]) == &d0[1]);
	CHECK(devices_dra_find(&c, f, names[4]) == &d2[0]);
	CHECK(devices_dra_find(&c, f, "serial-ttyusb0") == NULL);
	/* without the collision (ttyusb0 unplugged), ttyUSB0 is plain again; ttyACM0 kept its name
	 */
	d0[1] = d0[2];
	((struct devices_found *)f[0])->n = 2;
	free(names);
	REQUIRE_INT(devices_dra_names(&c, f, &names, &n), 0);
	CHECK_STR(names[0], "serial-ttyusb0");
	CHECK_STR(names[1], "serial-ttyacm0");
	CHECK_INT(devices_dra_name("serial", "ttyACM0", one, sizeof(one)), 0);
	CHECK_STR(one, names[1]);
	free(names);
}
