/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_devices_path: what a class hands a container stays inside the dev root (issue 26):
 * symbolic links out of it, ".." and "." by glob, a link swapped between offer and Allocate, files
 * that are not device nodes, CDI device names (device nodes made with mknod: root only). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "devices/devices.h"
#include "kubelet/kubelet.h"
#include "log/log.h"

#include "harness.h"

static char top[64], devr[300], sysr[300];
static struct devices_roots roots;

static void trees(void)
{
	snprintf(top, sizeof(top), "%s", harness_tmpdir());
	snprintf(devr, sizeof(devr), "%s/dev", top);
	snprintf(sysr, sizeof(sysr), "%s/sys", top);
	harness_put_str(top, "dev/serial/by-id/.keep", "");
	harness_put_str(top, "sys/.keep", "");
	harness_put_str(top, "secret", "not for pods");
	roots.dev = devr;
	roots.sys = sysr;
}

static void mk(const char *rel, unsigned minor)
{
	char p[400];

	snprintf(p, sizeof(p), "%s/dev/%s", top, rel);
	unlink(p);
	if (mknod(p, S_IFCHR | 0666, makedev(1, minor)) < 0)
		SKIP("mknod %s: %s (device nodes need root)", p, strerror(errno));
}

static void ln(const char *target, const char *rel)
{
	char p[400];

	snprintf(p, sizeof(p), "%s/dev/%s", top, rel);
	unlink(p);
	REQUIRE(symlink(target, p) == 0);
}

/* Class "x" of one squat path; its scan (n devices expected). */
static void one(struct devices_classes **c, const char *path, int n, struct devices_found *out)
{
	struct devices_found f = {0};
	struct log_err err = {0};
	char arg[400];
	int r;

	*c = devices_classes_new();
	snprintf(arg, sizeof(arg), "{name: x, groups: [{paths: [{path: '%s'}]}]}", path);
	REQUIRE_INT(devices_add_squat(*c, arg, NULL, &err), 0);
	r = devices_scan(*c, 0, &roots, &f, &err);
	if (r != n)
		fprintf(stderr, "  %s: %d devices (%s)\n", path, r, err.msg);
	CHECK_INT(r, n);
	*out = f;
}

/* Every host path f hands out, one per line. */
static void hosts(const struct devices_found *f, char *out, size_t size)
{
	out[0] = 0;
	for (size_t i = 0; i < f->n; i++)
		for (size_t j = 0; j < f->d[i].n_nodes; j++)
			snprintf(out + strlen(out), size - strlen(out), "%s\n",
				 f->d[i].nodes[j].host);
}

/* Links out of the root (absolute, or ".." above it) are never offered; inside it they are
 * followed to their target (squat's /dev/serial/by-id links). */
TEST(devices_path_links_out_of_root)
{
	struct devices_classes *c;
	struct devices_found f = {0};
	char h[4096];

	trees();
	mk("ttyUSB0", 3);
	ln("../secret", "ttyUSB1");	      /* .. above the dev root */
	ln("/etc/passwd", "ttyUSB2");	      /* absolute, elsewhere */
	ln("ttyUSB0", "ttyUSB3");	      /* inside: followed */
	ln("/dev/ttyUSB0", "ttyUSB4");	      /* absolute, naming the dev tree: inside */
	ln("serial/../../secret", "ttyUSB5"); /* in and out again */
	ln("../../ttyUSB0", "serial/by-id/usb-FTDI_X-if00-port0");
	ln("../../../secret", "serial/by-id/usb-evil");
	one(&c, "/dev/ttyUSB*", 3, &f);
	hosts(&f, h, sizeof(h));
	CHECK_STR(h, "/dev/ttyUSB0\n/dev/ttyUSB0\n/dev/ttyUSB0\n");
	REQUIRE_INT((int)f.n, 3);
	CHECK_STR(f.d[1].nodes[0].container, "/dev/ttyUSB3");
	devices_found_free(&f);
	devices_classes_free(c);
	one(&c, "/dev/serial/by-id/*", 1, &f);
	hosts(&f, h, sizeof(h));
	CHECK_STR(h, "/dev/ttyUSB0\n");
	REQUIRE_INT((int)f.n, 1);
	CHECK_STR(f.d[0].nodes[0].container, "/dev/serial/by-id/usb-FTDI_X-if00-port0");
	devices_found_free(&f);
	devices_classes_free(c);
}

/* A glob never matches "." or "..", whatever the pattern: ".*", "[.][.]", "\.\.". */
TEST(devices_path_glob_dots)
{
	static const char *const pats[] = {"/dev/.*",	  "/dev/.?",   "/dev/[.][.]",
					   "/dev/\\.\\.", "/dev/*/.*", NULL};
	struct devices_classes *c;
	struct devices_found f = {0};
	char h[4096];

	trees();
	mk(".hidden", 3);
	mk("serial/by-id/.x", 3);
	for (size_t i = 0; pats[i]; i++) {
		one(&c, pats[i], i == 0 ? 1 : 0, &f);
		hosts(&f, h, sizeof(h));
		CHECK(strstr(h, "/.\n") == NULL && strstr(h, "/..") == NULL);
		if (i == 0)
			CHECK_STR(h, "/dev/.hidden\n");
		devices_found_free(&f);
		devices_classes_free(c);
	}
	/* ".." in a class path itself is refused when it is given */
	c = devices_classes_new();
	{
		struct log_err err = {0};

		CHECK_INT(devices_add_squat(c, "x,/dev/ttyUSB0/..", NULL, &err), -EINVAL);
		CHECK_INT(devices_add_squat(c, "{name: y, groups: [{paths: [{path: /dev/./x}]}]}",
					    NULL, &err),
			  -EINVAL);
		CHECK(strstr(err.msg, "'/dev/./x'") != NULL);
	}
	devices_classes_free(c);
}

/* Only character and block nodes: a regular file, FIFO, socket or directory is not a device. */
TEST(devices_path_only_device_nodes)
{
	struct devices_classes *c;
	struct devices_found f = {0};
	char p[400], h[4096];

	trees();
	mk("ttyUSB0", 3);
	harness_put_str(top, "dev/ttyUSB1", "a file");
	snprintf(p, sizeof(p), "%s/dev/ttyUSB2", top);
	REQUIRE(mkfifo(p, 0600) == 0);
	snprintf(p, sizeof(p), "%s/dev/ttyUSB3", top);
	REQUIRE(mkdir(p, 0700) == 0);
	harness_put_str(top, "dev/ttyUSB3/inside", "");
	snprintf(p, sizeof(p), "%s/dev/ttyUSB4", top);
	if (mknod(p, S_IFBLK | 0600, makedev(7, 0)) < 0)
		SKIP("mknod: %s", strerror(errno));
	one(&c, "/dev/ttyUSB*", 2, &f);
	hosts(&f, h, sizeof(h));
	CHECK_STR(h, "/dev/ttyUSB0\n/dev/ttyUSB4\n");
	devices_found_free(&f);
	devices_classes_free(c);
}

/* Resolved again at Allocate: a node swapped for a link (out of the root or to another node),
 * or for another device, after it was offered is refused, naming it. */
TEST(devices_path_swapped_before_allocate)
{
	struct devices_classes *c;
	struct devices_found f = {0};
	struct kubelet_alloc a;
	struct log_err err = {0};
	const char *ids[1];

	trees();
	mk("ttyUSB0", 3);
	mk("ttyUSB1", 5);
	ln("../../ttyUSB0", "serial/by-id/usb-X");
	one(&c, "/dev/serial/by-id/*", 1, &f);
	REQUIRE_INT((int)f.n, 1);
	ids[0] = f.d[0].ids[0];
	REQUIRE_INT(devices_allocate(&f, "x", true, ids, 1, &a, &err), 0);
	CHECK_STR(a.specs[0].host_path, "/dev/ttyUSB0");
	devices_alloc_free(&a);
	ln("../secret", "ttyUSB0"); /* the target itself now leads out */
	CHECK(devices_allocate(&f, "x", true, ids, 1, &a, &err) < 0);
	CHECK(strstr(err.msg, "/dev/ttyUSB0") != NULL);
	ln("ttyUSB1", "ttyUSB0"); /* a link to another node inside */
	CHECK(devices_allocate(&f, "x", true, ids, 1, &a, &err) < 0);
	CHECK(strstr(err.msg, "/dev/ttyUSB0") != NULL);
	mk("ttyUSB0", 8); /* another device at the same path */
	CHECK(devices_allocate(&f, "x", true, ids, 1, &a, &err) < 0);
	CHECK(strstr(err.msg, "/dev/ttyUSB0") != NULL);
	mk("ttyUSB0", 3); /* itself again */
	CHECK_INT(devices_allocate(&f, "x", true, ids, 1, &a, &err), 0);
	devices_alloc_free(&a);
	devices_found_free(&f);
	devices_classes_free(c);
}

/* container-device-interface pkg/cdi ValidateDeviceName: a letter or digit first and last,
 * letters, digits, '_', '.', ':', '-' between. */
static bool cdi_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_.:-", s[i]))
			return false;
	return true;
}

/* CDI device names satisfy the CDI grammar and are unique in a class. */
TEST(devices_path_cdi_names)
{
	static const char *const nodes[] = {"dev-",  "dev_", "dev.", "dev@",  "dev",	"dev+x",
					    "dev=x", "-x-",  "_",    "dev_2", "dev:x:", NULL};
	struct devices_classes *c;
	struct devices_found f = {0};

	trees();
	for (size_t i = 0; nodes[i]; i++)
		mk(nodes[i], 3);
	one(&c, "/dev/*", 11, &f);
	for (size_t i = 0; i < f.n; i++) {
		if (!cdi_name_ok(f.d[i].name))
			fprintf(stderr, "  bad CDI name '%s'\n", f.d[i].name);
		CHECK(cdi_name_ok(f.d[i].name));
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(f.d[i].name, f.d[j].name) != 0);
	}
	devices_found_free(&f);
	devices_classes_free(c);
}

/* A Device path that is a directory gives every device node under it, as containerd's
 * DevicesFromPath does for the kubelet's DeviceSpec (squat hands it /dev/bus/usb as it is): its
 * subdirectories too, but not pts, shm, fd, mqueue, .lxc, .lxd-mounts, .udev, a "console", or a
 * symbolic link (containerd lstats: a link is no device; no loops). Before: the nodes one level
 * down only, so /dev/bus/usb was one device with no node at all. */
TEST(devices_path_dir_recursive)
{
	struct devices_classes *c;
	struct devices_found f = {0};
	char h[4096];

	trees();
	harness_put_str(top, "dev/bus/usb/001/.keep", "");
	harness_put_str(top, "dev/bus/usb/shm/.keep", "");
	mk("bus/usb/001/002", 3);
	mk("bus/usb/shm/x", 4);
	mk("bus/usb/console", 5);
	ln("..", "bus/usb/001/up");
	ln("001/002", "bus/usb/link");
	one(&c, "/dev/bus/usb", 1, &f);
	hosts(&f, h, sizeof(h));
	CHECK_STR(h, "/dev/bus/usb/001/002\n");
	REQUIRE_INT((int)f.n, 1);
	REQUIRE_INT((int)f.d[0].n_nodes, 1);
	CHECK_STR(f.d[0].nodes[0].container, "/dev/bus/usb/001/002");
	devices_found_free(&f);
	devices_classes_free(c);
}

/* A path through a directory anyone may write (/dev/shm, /dev/mqueue: mode 1777) is never offered:
 * any local user could swap its entry for a link to another node (/dev/sda) between our check and
 * the runtime's open. The directory itself may still be named (a Mount of /dev/shm). */
TEST(devices_path_world_writable_dir)
{
	struct devices_classes *c;
	struct devices_found f = {0};
	char p[400], h[4096];

	trees();
	snprintf(p, sizeof(p), "%s/dev/shm", top);
	REQUIRE(mkdir(p, 0755) == 0);
	REQUIRE(chmod(p, 01777) == 0);
	mk("shm/ttyUSB9", 3);
	one(&c, "/dev/shm/*", 0, &f);
	devices_found_free(&f);
	devices_classes_free(c);
	mk("ttyUSB0", 3);
	ln("shm/ttyUSB9", "ttyUSB1"); /* a link into it: the same */
	one(&c, "/dev/ttyUSB*", 1, &f);
	hosts(&f, h, sizeof(h));
	CHECK_STR(h, "/dev/ttyUSB0\n");
	devices_found_free(&f);
	devices_classes_free(c);
}
