/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/dt: blob and live-tree loading, labels, features, on real fixtures. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libfdt.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dt/dt.h"
#include "dt/dt_internal.h"
#include "feature/feature.h"
#include "harness.h"
#include "label/label.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

#define RPI4B_DTB  "dtb/arm64/broadcom/bcm2711-rpi-4-b.dtb"
#define NANO_DTB   "dtb/arm64/nvidia/tegra210-p3450-0000.dtb"
#define ZCU102_DTB "dtb/arm64/xilinx/zynqmp-zcu102-rev1.0.dtb"

/* ---- helpers ---- */

static struct strbuf warnings = STRBUF_INIT(1 << 16);

static void capture(void *data, enum log_level lvl, const char *msg)
{
	(void)data;
	if (lvl <= LOG_LVL_WARN) {
		sb_add(&warnings, msg);
		sb_addch(&warnings, '\n');
	}
}

static void capture_start(void)
{
	sb_reset(&warnings);
	log_set_fn(capture, NULL, LOG_LVL_WARN);
}

/* Labels of a loaded blob as "key=value\n" lines (static buffer). */
static const char *labels_of(const struct dt_blob *b, const char *const *names, size_t n)
{
	static struct strbuf out = STRBUF_INIT(1 << 20);
	struct label_set *ls = label_set_new();
	struct log_err err = {0};
	int r;

	sb_reset(&out);
	r = dt_labels(b->fdt, names, n, ls, &err);
	if (r < 0)
		sb_addf(&out, "error %d: %s\n", r, err.msg);
	else
		label_set_format(ls, &out);
	label_set_free(ls);
	return out.buf;
}

/* A string property: the bytes of s including its NUL. */
static void put_str(const char *dir, const char *rel, const char *s)
{
	harness_put(dir, rel, s, strlen(s) + 1);
}

static size_t read_all(const char *path, struct strbuf *sb)
{
	sb_reset(sb);
	if (sb_read_file(sb, path) < 0) {
		perror(path);
		exit(2);
	}
	return sb->len;
}

/* ---- blob loading ---- */

TEST(blob_rpi4b_labels)
{
	struct dt_blob b;
	struct log_err err = {0};

	REQUIRE_INT(dt_load_file(harness_fixture(RPI4B_DTB), &b, &err), 0);
	/* Root: raspberrypi,4-model-b brcm,bcm2711; /cpus/cpu@0..3 arm,cortex-a72;
	 * /gpu brcm,bcm2711-vc5 (okay); /scb/gpu@7ec00000 brcm,2711-v3d (no status). */
	CHECK_STR(labels_of(&b, NULL, 0), "beta.devicetree.org/arm-cortex-a72=4\n"
					  "beta.devicetree.org/brcm-2711-v3d=1\n"
					  "beta.devicetree.org/brcm-bcm2711=1\n"
					  "beta.devicetree.org/brcm-bcm2711-vc5=1\n"
					  "beta.devicetree.org/raspberrypi-4-model-b=1\n");
	dt_blob_free(&b);
	CHECK(b.fdt == NULL);
}

TEST(blob_zcu102_xlnx_becomes_xilinx)
{
	struct dt_blob b;
	struct log_err err = {0};

	REQUIRE_INT(dt_load_file(harness_fixture(ZCU102_DTB), &b, &err), 0);
	CHECK_STR(labels_of(&b, NULL, 0), "beta.devicetree.org/arm-cortex-a53=4\n"
					  "beta.devicetree.org/xilinx-zynqmp=1\n"
					  "beta.devicetree.org/xilinx-zynqmp-zcu102=1\n"
					  "beta.devicetree.org/xilinx-zynqmp-zcu102-rev1.0=1\n");
	dt_blob_free(&b);
}

TEST(blob_missing_file_is_error_naming_it)
{
	struct dt_blob b;
	struct log_err err = {0};

	CHECK_INT(dt_load_file("/nonexistent/fdt", &b, &err), -ENOENT);
	CHECK(strstr(err.msg, "/nonexistent/fdt") != NULL);
	CHECK(b.fdt == NULL);
}

/* Write the first len bytes of the rpi4b blob, with byte at flip (if >= 0) xor 0xff. */
static const char *mangled(const char *dir, size_t len, long flip)
{
	static char path[256];
	struct strbuf sb = STRBUF_INIT(DT_BLOB_MAX);
	size_t n = read_all(harness_fixture(RPI4B_DTB), &sb);

	if (len > n)
		len = n;
	if (flip >= 0)
		sb.buf[flip] ^= (char)0xff;
	snprintf(path, sizeof(path), "%s/bad.dtb", dir);
	harness_put(dir, "bad.dtb", sb.buf, len);
	sb_free(&sb);
	return path;
}

static void expect_corrupt(const char *path, const char *reason)
{
	struct dt_blob b = {(void *)1, 1};
	struct log_err err = {0};

	CHECK_INT(dt_load_file(path, &b, &err), -EINVAL);
	CHECK(b.fdt == NULL);
	if (!strstr(err.msg, path) || !strstr(err.msg, reason))
		HFAIL_("message \"%s\" does not name %s and %s", err.msg, path, reason);
}

TEST(blob_truncated_or_corrupt)
{
	const char *dir = harness_tmpdir();
	struct strbuf sb = STRBUF_INIT(DT_BLOB_MAX);
	size_t n = read_all(harness_fixture(RPI4B_DTB), &sb);
	uint32_t off_struct = fdt_off_dt_struct(sb.buf);

	expect_corrupt(mangled(dir, 0, -1), "FDT_ERR_TRUNCATED");
	expect_corrupt(mangled(dir, 20, -1), "FDT_ERR_TRUNCATED");
	expect_corrupt(mangled(dir, n / 2, -1), "FDT_ERR_TRUNCATED");
	expect_corrupt(mangled(dir, n - 1, -1), "FDT_ERR_TRUNCATED");
	expect_corrupt(mangled(dir, n, 0), "FDT_ERR_BADMAGIC");
	/* The first structure tag (FDT_BEGIN_NODE, big-endian 00 00 00 01) flipped. */
	expect_corrupt(mangled(dir, n, (long)off_struct + 3), "FDT_ERR_BADSTRUCTURE");
	/* The totalsize field's top byte: far past the file. */
	expect_corrupt(mangled(dir, n, 4), "FDT_ERR_TRUNCATED");
	/* The last byte of the structure block (the FDT_END tag). */
	expect_corrupt(mangled(dir, n, (long)(off_struct + fdt_size_dt_struct(sb.buf) - 1)),
		       "FDT_ERR_");
	/* The intact blob still loads from the same place. */
	{
		struct dt_blob b;

		CHECK_INT(dt_load_file(mangled(dir, n, -1), &b, NULL), 0);
		dt_blob_free(&b);
	}
	sb_free(&sb);
	harness_rm_tree(dir);
}

TEST(blob_over_cap_is_e2big)
{
	const char *dir = harness_tmpdir();
	char path[256];
	struct dt_blob b;
	struct log_err err = {0};
	int fd;

	snprintf(path, sizeof(path), "%s/huge.dtb", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	REQUIRE(fd >= 0);
	REQUIRE(ftruncate(fd, DT_BLOB_MAX + 1) == 0);
	close(fd);
	CHECK_INT(dt_load_file(path, &b, &err), -E2BIG);
	CHECK(strstr(err.msg, path) != NULL);
	harness_rm_tree(dir);
	/* A file whose size stat cannot tell: the read itself stops at the cap. */
	CHECK_INT(dt_load_file("/dev/zero", &b, &err), -E2BIG);
	CHECK(strstr(err.msg, "/dev/zero: larger than") != NULL);
}

/* A blob with an empty root, as newer kernels make on x86 (/ { };). */
TEST(blob_empty_root_is_no_devicetree)
{
	_Alignas(8) char buf[256]; /* libfdt wants an 8-byte aligned blob (armhf stacks are 4) */
	struct log_err err = {0};

	REQUIRE_INT(fdt_create(buf, sizeof(buf)), 0);
	REQUIRE_INT(fdt_finish_reservemap(buf), 0);
	REQUIRE_INT(fdt_begin_node(buf, ""), 0);
	REQUIRE_INT(fdt_end_node(buf), 0);
	REQUIRE_INT(fdt_finish(buf), 0);
	CHECK_INT(dt_check(buf, sizeof(buf), &err), DT_NONE);
	/* A root compatible that is not NUL-terminated is bad input, not "none". */
	REQUIRE_INT(fdt_open_into(buf, buf, sizeof(buf)), 0);
	REQUIRE_INT(fdt_setprop(buf, 0, "compatible", "abc", 3), 0);
	CHECK_INT(dt_check(buf, sizeof(buf), &err), -EINVAL);
	REQUIRE_INT(fdt_setprop(buf, 0, "compatible", "", 0), 0);
	CHECK_INT(dt_check(buf, sizeof(buf), &err), DT_NONE);
	REQUIRE_INT(fdt_setprop_string(buf, 0, "compatible", "acme,board"), 0);
	CHECK_INT(dt_check(buf, sizeof(buf), &err), 0);
}

/* ---- live tree -> blob ---- */

static const struct {
	const char *tree, *dtb;
} boards[] = {
    {"rpi4b", RPI4B_DTB},
    {"jetson-nano-p3450", NANO_DTB},
    {"beaglebone-black", "dtb/armhf/ti/am335x-boneblack.dtb"},
    {"qemu-virt-aarch64", "dtb/qemu/virt-aarch64.dtb"},
};

/*
 * The live tree of a fixture blob, as the kernel would show it: made under dir by
 * test/tools/dtb2fs (in $BUILD, default build/), instead of committing thousands
 * of files. Static buffer, valid until the next call.
 */
static const char *tree_of(const char *dir, const char *dtb)
{
	static char path[1024];
	char cmd[16384];
	const char *build = getenv("BUILD");

	snprintf(path, sizeof(path), "%s/tree-%ld", dir, random());
	snprintf(cmd, sizeof(cmd), "'%s/test/tools/dtb2fs' '%s' '%s'", build ? build : "build",
		 harness_fixture(dtb), path);
	if (system(cmd) != 0) {
		fprintf(stderr, "%s failed\n", cmd);
		exit(2);
	}
	return path;
}

/* Canonical text of every node path and property of a blob, in sorted order per node. */
static void dump_node(const void *fdt, int node, struct strbuf *out, struct strbuf *path)
{
	const char *names[512];
	int n = 0, off, i, j, sub;
	size_t plen = path->len;

	fdt_for_each_property_offset(off, fdt, node)
	{
		const char *name;
		int len;

		fdt_getprop_by_offset(fdt, off, &name, &len);
		if (n < 512)
			names[n++] = name;
	}
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			const char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		int len;
		const unsigned char *v = fdt_getprop(fdt, node, names[i], &len);

		sb_addf(out, "%s:%s=", path->buf, names[i]);
		for (j = 0; j < len; j++)
			sb_addf(out, "%02x", v[j]);
		sb_addch(out, '\n');
	}
	fdt_for_each_subnode(sub, fdt, node)
	{
		sb_addch(path, '/');
		sb_add(path, fdt_get_name(fdt, sub, NULL));
		dump_node(fdt, sub, out, path);
		sb_truncate(path, plen);
	}
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort the lines of sb in place (node order in a blob is the writer's choice). */
static void sort_lines(struct strbuf *sb)
{
	size_t n = 0, i, cap = 1 << 16;
	char **v = malloc(cap * sizeof(*v)), *save = NULL, *l;
	struct strbuf out = STRBUF_INIT(1 << 24);

	for (l = strtok_r(sb->buf, "\n", &save); l && n < cap; l = strtok_r(NULL, "\n", &save))
		v[n++] = l;
	qsort(v, n, sizeof(*v), cmp_line);
	for (i = 0; i < n; i++) {
		sb_add(&out, v[i]);
		sb_addch(&out, '\n');
	}
	sb_reset(sb);
	sb_addn(sb, out.buf, out.len);
	sb_free(&out);
	free(v);
}

TEST(tree_equals_blob_for_every_board)
{
	static const char *const timer[] = {"timer", "i2c", "usb"};
	struct strbuf a = STRBUF_INIT(1 << 24), bb = STRBUF_INIT(1 << 24), p = STRBUF_INIT(4096);
	size_t i;

	const char *dir = harness_tmpdir();

	for (i = 0; i < sizeof(boards) / sizeof(boards[0]); i++) {
		struct dt_blob t, b;
		struct log_err err = {0};
		char la[8192];

		REQUIRE_INT(dt_load_tree(tree_of(dir, boards[i].dtb), &t, &err), 0);
		REQUIRE_INT(dt_load_file(harness_fixture(boards[i].dtb), &b, &err), 0);
		snprintf(la, sizeof(la), "%s", labels_of(&t, timer, 3));
		CHECK_STR(la, labels_of(&b, timer, 3));
		CHECK(strlen(la) > 0 && !strstr(la, "error"));
		/* Same properties and values node by node: the kernel's "name" files are gone. */
		sb_reset(&a);
		sb_reset(&bb);
		dump_node(t.fdt, 0, &a, &p);
		dump_node(b.fdt, 0, &bb, &p);
		sort_lines(&a);
		sort_lines(&bb);
		CHECK(a.len > 1000);
		if (a.len != bb.len || memcmp(a.buf, bb.buf, a.len) != 0)
			HFAIL_("%s: tree and blob contents differ", boards[i].tree);
		CHECK(strstr(a.buf, ":name=") == NULL);
		dt_blob_free(&t);
		dt_blob_free(&b);
	}
	sb_free(&a);
	sb_free(&bb);
	sb_free(&p);
	harness_rm_tree(dir);
}

/* dtb2fs is faithful: its trees read exactly as the kernel-form trees kept in ../shared. */
TEST(dtb2fs_tree_equals_shared_tree)
{
	struct strbuf a = STRBUF_INIT(1 << 24), bb = STRBUF_INIT(1 << 24), p = STRBUF_INIT(4096);
	const char *dir = harness_tmpdir();
	size_t i;

	for (i = 0; i < sizeof(boards) / sizeof(boards[0]); i++) {
		struct dt_blob t, s;
		struct log_err err = {0};
		char shared[4096];

		snprintf(shared, sizeof(shared), "%s%s", SHARED_OR_SKIP("fixtures/devicetree/"),
			 boards[i].tree);
		REQUIRE_INT(dt_load_tree(tree_of(dir, boards[i].dtb), &t, &err), 0);
		REQUIRE_INT(dt_load_tree(shared, &s, &err), 0);
		sb_reset(&a);
		sb_reset(&bb);
		dump_node(t.fdt, 0, &a, &p);
		dump_node(s.fdt, 0, &bb, &p);
		CHECK(a.len > 1000);
		if (a.len != bb.len || memcmp(a.buf, bb.buf, a.len) != 0)
			HFAIL_("%s: dtb2fs tree and %s differ", boards[i].dtb, shared);
		dt_blob_free(&t);
		dt_blob_free(&s);
	}
	sb_free(&a);
	sb_free(&bb);
	sb_free(&p);
	harness_rm_tree(dir);
}

TEST(tree_missing_is_no_devicetree)
{
	struct dt_blob b;

	CHECK_INT(dt_load_tree("/nonexistent/firmware/devicetree/base", &b, NULL), DT_NONE);
	CHECK(b.fdt == NULL);
}

TEST(tree_empty_root_is_no_devicetree)
{
	const char *dir = harness_tmpdir();
	struct dt_blob b;

	/* An empty directory, then the x86 empty root: just the kernel's name file. */
	CHECK_INT(dt_load_tree(dir, &b, NULL), DT_NONE);
	harness_put(dir, "name", "", 1);
	CHECK_INT(dt_load_tree(dir, &b, NULL), DT_NONE);
	put_str(dir, "model", "no compatible here");
	put_str(dir, "cpus/cpu@0/compatible", "arm,cortex-a53");
	CHECK_INT(dt_load_tree(dir, &b, NULL), DT_NONE);
	put_str(dir, "compatible", "acme,board");
	REQUIRE_INT(dt_load_tree(dir, &b, NULL), 0);
	CHECK_STR(labels_of(&b, NULL, 0), "beta.devicetree.org/acme-board=1\n"
					  "beta.devicetree.org/arm-cortex-a53=1\n");
	dt_blob_free(&b);
	harness_rm_tree(dir);
}

TEST(tree_name_property_kept_when_not_the_node_name)
{
	const char *dir = harness_tmpdir();
	struct dt_blob b;
	const char *v;
	int len, off;

	put_str(dir, "compatible", "acme,board");
	harness_put(dir, "name", "", 1);
	put_str(dir, "soc@1000/name", "soc");
	put_str(dir, "odd/name", "other");
	REQUIRE_INT(dt_load_tree(dir, &b, NULL), 0);
	CHECK(fdt_getprop(b.fdt, 0, "name", &len) == NULL);
	off = fdt_subnode_offset(b.fdt, 0, "soc@1000");
	REQUIRE(off >= 0);
	CHECK(fdt_getprop(b.fdt, off, "name", &len) == NULL);
	off = fdt_subnode_offset(b.fdt, 0, "odd");
	REQUIRE(off >= 0);
	v = fdt_getprop(b.fdt, off, "name", &len);
	CHECK(v && len == 6 && strcmp(v, "other") == 0);
	dt_blob_free(&b);
	harness_rm_tree(dir);
}

TEST(tree_errors_name_the_path)
{
	const char *dir = harness_tmpdir();
	char path[512], big[4096];
	struct dt_blob b;
	struct log_err err = {0};
	int fd, i;

	/* Not a directory. */
	put_str(dir, "file", "x");
	snprintf(path, sizeof(path), "%s/file", dir);
	CHECK_INT(dt_load_tree(path, &b, &err), -ENOTDIR);
	CHECK(strstr(err.msg, path) != NULL);
	harness_rm_tree(dir);

	/* A property over DT_PROP_MAX. */
	dir = harness_tmpdir();
	put_str(dir, "compatible", "acme,board");
	put_str(dir, "soc/blob", "");
	snprintf(path, sizeof(path), "%s/soc/blob", dir);
	fd = open(path, O_WRONLY);
	REQUIRE(fd >= 0);
	memset(big, 'x', sizeof(big));
	for (i = 0; i <= (int)(DT_PROP_MAX / sizeof(big)); i++)
		REQUIRE(write(fd, big, sizeof(big)) == (ssize_t)sizeof(big));
	close(fd);
	CHECK_INT(dt_load_tree(dir, &b, &err), -E2BIG);
	CHECK(strstr(err.msg, path) != NULL);
	harness_rm_tree(dir);

	/* Nested deeper than DT_DEPTH_MAX. */
	dir = harness_tmpdir();
	put_str(dir, "compatible", "acme,board");
	snprintf(path, sizeof(path), "%s", dir);
	for (i = 0; i <= DT_DEPTH_MAX; i++) {
		strcat(path, "/n");
		REQUIRE(mkdir(path, 0755) == 0);
	}
	CHECK_INT(dt_load_tree(dir, &b, &err), -ELOOP);
	CHECK(strstr(err.msg, path) != NULL);
	/* One level less is fine. */
	REQUIRE(rmdir(path) == 0);
	CHECK_INT(dt_load_tree(dir, &b, &err), 0);
	dt_blob_free(&b);
	harness_rm_tree(dir);
}

/*
 * Load dir in a child that cannot read mode-0 files: as root it drops to
 * nobody (65534). Returns the loader's result; *msg gets err.msg.
 */
static int load_unprivileged(const char *dir, char *msg, size_t msgsz)
{
	int pfd[2], status;
	pid_t pid;
	ssize_t n;

	if (pipe(pfd) < 0)
		return -999;
	pid = fork();
	if (pid == 0) {
		struct log_err err = {0};
		struct dt_blob b;
		int r;

		close(pfd[0]);
		if (geteuid() == 0 &&
		    (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		     setresuid(65534, 65534, 65534) < 0))
			_exit(99);
		r = dt_load_tree(dir, &b, &err);
		if (r == 0)
			snprintf(err.msg, sizeof(err.msg), "%s", labels_of(&b, NULL, 0));
		if (write(pfd[1], err.msg, strlen(err.msg)) < 0)
			_exit(98);
		_exit(r < 0 ? 100 - r : r);
	}
	close(pfd[1]);
	n = read(pfd[0], msg, msgsz - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -999;
	status = WEXITSTATUS(status);
	return status >= 100 ? -(status - 100) : status == 99 ? -998 : status;
}

TEST(tree_unreadable_file_or_directory_is_an_error)
{
	const char *tmp = harness_tmpdir();
	char dir[256], path[512], msg[1024];

	snprintf(dir, sizeof(dir), "%s", tmp);
	REQUIRE(chmod(dir, 0755) == 0); /* nobody must reach the tree */
	put_str(dir, "compatible", "acme,board");
	put_str(dir, "cpus/cpu@0/compatible", "arm,cortex-a53");
	put_str(dir, "cpus/cpu@0/secret", "x");
	snprintf(path, sizeof(path), "%s/cpus/cpu@0/secret", dir);
	REQUIRE(chmod(path, 0) == 0);
	CHECK_INT(load_unprivileged(dir, msg, sizeof(msg)), -EACCES);
	CHECK(strstr(msg, path) != NULL);
	/* The kernel's root-only security-* properties are skipped instead. */
	snprintf(msg, sizeof(msg), "%s/cpus/cpu@0/security-key", dir);
	REQUIRE(rename(path, msg) == 0);
	CHECK_INT(load_unprivileged(dir, msg, sizeof(msg)), 0);
	CHECK_STR(msg, "beta.devicetree.org/acme-board=1\n"
		       "beta.devicetree.org/arm-cortex-a53=1\n");
	/* An unreadable node directory. */
	snprintf(path, sizeof(path), "%s/cpus", dir);
	REQUIRE(chmod(path, 0) == 0);
	CHECK_INT(load_unprivileged(dir, msg, sizeof(msg)), -EACCES);
	CHECK(strstr(msg, path) != NULL);
	chmod(path, 0755);
	harness_rm_tree(dir);
}

TEST(tree_symlinks_are_not_followed)
{
	const char *dir = harness_tmpdir();
	char tree[256], outside[256], link[300];
	struct dt_blob b;

	snprintf(tree, sizeof(tree), "%s/tree", dir);
	snprintf(outside, sizeof(outside), "%s/outside", dir);
	put_str(dir, "tree/compatible", "acme,board");
	put_str(dir, "outside/gpu/compatible", "evil,gpu");
	put_str(dir, "outside/compatible", "evil,prop");
	snprintf(link, sizeof(link), "%s/gpu", tree);
	REQUIRE(symlink("../outside/gpu", link) == 0);
	snprintf(link, sizeof(link), "%s/cpus", tree);
	REQUIRE(symlink(outside, link) == 0);
	capture_start();
	REQUIRE_INT(dt_load_tree(tree, &b, NULL), 0);
	CHECK_STR(labels_of(&b, NULL, 0), "beta.devicetree.org/acme-board=1\n");
	CHECK(strstr(warnings.buf, "/tree/gpu: not a regular file or directory") != NULL);
	log_set_fn(NULL, NULL, LOG_LVL_ERROR);
	dt_blob_free(&b);
	/* The tree root itself may be a symlink (/proc/device-tree is one). */
	snprintf(link, sizeof(link), "%s/base", dir);
	REQUIRE(symlink("tree", link) == 0);
	REQUIRE_INT(dt_load_tree(link, &b, NULL), 0);
	dt_blob_free(&b);
	harness_rm_tree(dir);
}

/* ---- labels ---- */

TEST(status_is_honoured)
{
	const char *dir = harness_tmpdir();
	static const char *const extra[] = {"npu", ""};
	struct dt_blob b;

	put_str(dir, "compatible", "acme,board");
	put_str(dir, "cpus/cpu@0/compatible", "arm,cortex-a53");
	put_str(dir, "cpus/cpu@0/status", "okay");
	put_str(dir, "cpus/cpu@1/compatible", "arm,cortex-a53");
	put_str(dir, "cpus/cpu@1/status", "disabled");
	put_str(dir, "cpus/cpu@2/compatible", "arm,cortex-a53");
	put_str(dir, "cpus/cpu@3/compatible", "arm,cortex-a53");
	put_str(dir, "cpus/cpu@3/status", "ok");
	put_str(dir, "cpus/cpu@4/compatible", "arm,cortex-a53");
	put_str(dir, "cpus/cpu@4/status", "fail");
	put_str(dir, "cpus/cpu@5/compatible", "arm,cortex-a53");
	put_str(dir, "cpus/cpu@5/status", "reserved");
	put_str(dir, "gpu@1/compatible", "acme,gpu");
	put_str(dir, "gpu@1/status", "okay");
	/* A disabled parent hides its children. */
	put_str(dir, "soc/status", "disabled");
	put_str(dir, "soc/gpu@2/compatible", "acme,hidden-gpu");
	put_str(dir, "soc/npu@3/compatible", "acme,hidden-npu");
	put_str(dir, "npu@4/compatible", "acme,npu");
	put_str(dir, "7@1/compatible", "acme,digits"); /* an empty -n name would select it */
	REQUIRE_INT(dt_load_tree(dir, &b, NULL), 0);
	CHECK_STR(labels_of(&b, extra, 2), "beta.devicetree.org/acme-board=1\n"
					   "beta.devicetree.org/acme-gpu=1\n"
					   "beta.devicetree.org/acme-npu=1\n"
					   "beta.devicetree.org/arm-cortex-a53=3\n");
	dt_blob_free(&b);
	harness_rm_tree(dir);
}

TEST(label_name_normalisation)
{
	char out[64], s[80];

	CHECK_INT(dt_label_name("raspberrypi,4-model-b", out, sizeof(out)), 21);
	CHECK_STR(out, "raspberrypi-4-model-b");
	dt_label_name("xlnx,zynqmp-zcu102-rev1.0", out, sizeof(out));
	CHECK_STR(out, "xilinx-zynqmp-zcu102-rev1.0");
	dt_label_name("xlnx,zynq-7000", out, sizeof(out));
	CHECK_STR(out, "xilinx-zynq-7000"); /* the adaptant tool's own test case */
	dt_label_name("xlnx", out, sizeof(out));
	CHECK_STR(out, "xlnx"); /* no comma: no vendor, unchanged */
	dt_label_name("xlnxx,a", out, sizeof(out));
	CHECK_STR(out, "xlnxx-a");
	dt_label_name("simple-bus", out, sizeof(out));
	CHECK_STR(out, "simple-bus");
	dt_label_name("a,b,c", out, sizeof(out));
	CHECK_STR(out, "a-b-c"); /* the adaptant tool drops ",c" */
	dt_label_name("vendor,Model+X 2", out, sizeof(out));
	CHECK_STR(out, "vendor-Model_X_2");
	dt_label_name("caf\xc3\xa9,x", out, sizeof(out));
	CHECK_STR(out, "caf__-x");
	dt_label_name(",lead", out, sizeof(out));
	CHECK_STR(out, "lead");
	dt_label_name("trail,", out, sizeof(out));
	CHECK_STR(out, "trail");
	dt_label_name("_x_", out, sizeof(out));
	CHECK_STR(out, "x");
	CHECK_INT(dt_label_name("", out, sizeof(out)), -EINVAL);
	CHECK_INT(dt_label_name(",-_.", out, sizeof(out)), -EINVAL);
	memset(s, 'a', 63);
	strcpy(s + 63, ",,");
	CHECK_INT(dt_label_name(s, out, sizeof(out)), 63);
	CHECK(
	    label_key_valid_prefixed("beta.devicetree.org/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				     "aaaaaaaaaaaaaaaaaaaaaa"));
	s[63] = 'b';
	s[64] = '\0';
	CHECK_INT(dt_label_name(s, out, sizeof(out)), -EINVAL);
	/* xlnx grows by two: a 62-character xlnx string no longer fits. */
	memset(s, 'a', 62);
	memcpy(s, "xlnx,", 5);
	s[62] = '\0';
	CHECK_INT(dt_label_name(s, out, sizeof(out)), -EINVAL);
	s[60] = '\0';
	CHECK_INT(dt_label_name(s, out, sizeof(out)), 62);
	CHECK_INT(dt_label_name("abc", out, 3), -EINVAL); /* does not fit the caller's buffer */
}

TEST(invalid_labels_skipped_with_warning)
{
	const char *dir = harness_tmpdir();
	char longc[100];
	struct dt_blob b;

	memset(longc, 'x', 70);
	memcpy(longc, "acme,", 5);
	longc[70] = '\0';
	put_str(dir, "compatible", "acme,board");
	put_str(dir, "cpus/cpu@0/compatible", longc);
	harness_put(dir, "cpus/cpu@1/compatible", "arm,a\0\0arm,b",
		    13); /* an empty string inside */
	harness_put(dir, "gpu/compatible", "acme,unterminated", 17);
	REQUIRE_INT(dt_load_tree(dir, &b, NULL), 0);
	capture_start();
	CHECK_STR(labels_of(&b, NULL, 0), "beta.devicetree.org/acme-board=1\n"
					  "beta.devicetree.org/arm-a=1\n"
					  "beta.devicetree.org/arm-b=1\n");
	log_set_fn(NULL, NULL, LOG_LVL_ERROR);
	CHECK(strstr(warnings.buf, longc) != NULL);
	CHECK(strstr(warnings.buf, "/cpus/cpu@0") != NULL);
	CHECK(strstr(warnings.buf, "/cpus/cpu@1: compatible \"\"") != NULL);
	CHECK(strstr(warnings.buf, "/gpu: compatible is not a list of strings") != NULL);
	dt_blob_free(&b);
	harness_rm_tree(dir);
}

TEST(name_matching_is_literal)
{
	CHECK(dt_name_matches("cpu", "cpu"));
	CHECK(dt_name_matches("cpu@0", "cpu"));
	CHECK(dt_name_matches("cpu12@100", "cpu"));
	CHECK(dt_name_matches("cpu@", "cpu"));
	CHECK(!dt_name_matches("cpus", "cpu"));
	CHECK(!dt_name_matches("cpu-map", "cpu"));
	CHECK(!dt_name_matches("cpux@0", "cpu"));
	CHECK(!dt_name_matches("cp", "cpu"));
	CHECK(!dt_name_matches("gpu0", "gpu")); /* digits need an @ after them */
	CHECK(dt_name_matches("timer", "timer"));
	CHECK(dt_name_matches("timer@60005000", "timer"));
	CHECK(dt_name_matches("timer@60005000", "timer@60005000"));
	/* Regex metacharacters are plain text. */
	CHECK(!dt_name_matches("cpu@0", "c.u"));
	CHECK(!dt_name_matches("cpu@0", "cpu|gpu"));
	CHECK(dt_name_matches("c.u@1", "c.u"));
	CHECK(!dt_name_matches("gpu@0", "(gpu"));
}

TEST(nano_timer_siblings_and_dedup)
{
	/* -n timer selects both /timer (arm,armv8-timer) and /timer@60005000
	 * (nvidia,tegra210-timer); naming a node twice does not count it twice. */
	static const char *const names[] = {"timer", "cpu", "timer", "no-such-node", "c.u", ""};
	struct dt_blob b;

	REQUIRE_INT(dt_load_file(harness_fixture(NANO_DTB), &b, NULL), 0);
	CHECK_STR(labels_of(&b, names, 6), "beta.devicetree.org/arm-armv8-timer=1\n"
					   "beta.devicetree.org/arm-cortex-a57=4\n"
					   "beta.devicetree.org/nvidia-gm20b=1\n"
					   "beta.devicetree.org/nvidia-p3450-0000=1\n"
					   "beta.devicetree.org/nvidia-tegra210=1\n"
					   "beta.devicetree.org/nvidia-tegra210-timer=1\n");
	/* -n i2c: 6 i2c@... controllers with two strings each, 2 disabled; plus
	 * /host1x@50000000/i2c@546c0000 (nvidia,tegra210-i2c-vi, okay). */
	{
		static const char *const i2c[] = {"i2c"};
		const char *l = labels_of(&b, i2c, 1);

		CHECK(strstr(l, "beta.devicetree.org/nvidia-tegra210-i2c=3\n") != NULL);
		CHECK(strstr(l, "beta.devicetree.org/nvidia-tegra124-i2c=3\n") != NULL);
		CHECK(strstr(l, "beta.devicetree.org/nvidia-tegra210-i2c-vi=1\n") != NULL);
	}
	dt_blob_free(&b);
}

/* ---- features ---- */

TEST(features_rpi4b)
{
	struct feat_set *fs = feat_set_new();
	const struct feat *f, *inst;
	struct dt_blob b;
	size_t i, n;
	int seen_v3d = 0;

	REQUIRE(fs);
	REQUIRE_INT(dt_load_file(harness_fixture(RPI4B_DTB), &b, NULL), 0);
	REQUIRE_INT(dt_features(b.fdt, fs, NULL), 0);
	f = feat_get(fs, "dt.root");
	REQUIRE(f && feat_kind(f) == FEAT_ATTRS);
	CHECK_STR(feat_lookup(f, "compatible"), "raspberrypi,4-model-b");
	CHECK_STR(feat_lookup(f, "model"), "Raspberry Pi 4 Model B");
	CHECK(feat_lookup(f, "serial-number") == NULL);
	f = feat_get(fs, "dt.compatible");
	REQUIRE(f && feat_kind(f) == FEAT_FLAGS);
	CHECK_INT(feat_nelems(f), 2);
	CHECK(feat_lookup(f, "raspberrypi,4-model-b") && feat_lookup(f, "brcm,bcm2711"));
	f = feat_get(fs, "dt.node");
	REQUIRE(f && feat_kind(f) == FEAT_INSTANCES);
	n = feat_ninstances(f);
	CHECK(n > 50);
	for (i = 0; i < n; i++) {
		const char *path;

		inst = feat_instance_at(f, i);
		path = feat_lookup(inst, "path");
		REQUIRE(path && feat_lookup(inst, "compatible") && feat_lookup(inst, "name"));
		if (strcmp(path, "/scb/gpu@7ec00000") == 0) {
			seen_v3d++;
			CHECK_STR(feat_lookup(inst, "name"), "gpu@7ec00000");
			CHECK_STR(feat_lookup(inst, "compatible"), "brcm,2711-v3d");
			CHECK_STR(feat_lookup(inst, "compatibles"), "brcm,2711-v3d");
		}
		if (strcmp(path, "/soc/serial@7e201000") == 0) /* uart0, two strings, okay */
			CHECK_STR(feat_lookup(inst, "compatibles"), "arm,pl011 arm,primecell");
		/* /soc/spi@7e204000 is status = "disabled" in bcm2711.dtsi */
		CHECK(strcmp(path, "/soc/spi@7e204000") != 0);
	}
	CHECK_INT(seen_v3d, 1);
	dt_blob_free(&b);
	feat_set_free(fs);
}

/* ---- every fixture ---- */

static int n_dtb_files;

static int count_dtb(const char *p, const struct stat *st, int type, struct FTW *f)
{
	size_t n = strlen(p);

	(void)st;
	(void)f;
	if (type == FTW_F && n > 4 && strcmp(p + n - 4, ".dtb") == 0)
		n_dtb_files++;
	return 0;
}

/* "vendor,model" as k8s-dt-node-labeller names it; all fixture strings are plain. */
static void oracle_name(const char *c, char *out, size_t outsz)
{
	size_t i;

	if (strncmp(c, "xlnx,", 5) == 0)
		snprintf(out, outsz, "xilinx-%s", c + 5);
	else
		snprintf(out, outsz, "%s", c);
	for (i = 0; out[i]; i++)
		if (out[i] == ',')
			out[i] = '-';
}

/*
 * Every blob under root/dtb is labelled with its root compatible strings, as the
 * fdtget oracle root/dtb-compatible.tsv lists them, and the oracle covers every
 * blob there. Returns the number of blobs checked.
 */
static int sweep_blobs(const char *root)
{
	struct strbuf tsv = STRBUF_INIT(1 << 20);
	char *line, *save = NULL, path[4096], key[256];
	int rows = 0;

	snprintf(path, sizeof(path), "%s/dtb-compatible.tsv", root);
	read_all(path, &tsv);
	for (line = strtok_r(tsv.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *rel = line, *compat = strchr(line, '\t'), *c, *csave = NULL;
		struct label_set *ls = label_set_new();
		struct dt_blob b;
		struct log_err err = {0};

		if (!compat || !ls) {
			HFAIL_("%s: bad oracle line", path);
			label_set_free(ls);
			break;
		}
		*compat++ = '\0';
		*strchr(compat, '\t') = '\0';
		snprintf(path, sizeof(path), "%s/dtb/%s", root, rel);
		rows++;
		if (dt_load_file(path, &b, &err) != 0) {
			HFAIL_("%s: %s", rel, err.msg);
			label_set_free(ls);
			continue;
		}
		CHECK(dt_labels(b.fdt, NULL, 0, ls, &err) >= 1);
		for (c = strtok_r(compat, ";", &csave); c; c = strtok_r(NULL, ";", &csave)) {
			char name[128];
			const char *v;

			oracle_name(c, name, sizeof(name));
			snprintf(key, sizeof(key), "beta.devicetree.org/%s", name);
			v = label_set_get(ls, key);
			if (!v || atoi(v) < 1)
				HFAIL_("%s: no label %s for root compatible %s", rel, key, c);
		}
		dt_blob_free(&b);
		label_set_free(ls);
	}
	snprintf(path, sizeof(path), "%s/dtb", root);
	n_dtb_files = 0;
	nftw(path, count_dtb, 16, FTW_PHYS);
	CHECK_INT(rows, n_dtb_files); /* the oracle covers every blob */
	sb_free(&tsv);
	return rows;
}

TEST(every_fixture_blob_agrees_with_fdtget_oracle)
{
	CHECK(sweep_blobs("test/fixtures") >= 5);
}

/* The wider sweep: every blob of Debian's kernels in ../shared/fixtures. */
TEST(every_shared_blob_agrees_with_fdtget_oracle)
{
	int n = sweep_blobs(SHARED_OR_SKIP("fixtures"));

	CHECK(n >= 19);
	fprintf(stderr, "  swept %d blobs of ../shared/fixtures\n", n);
}
