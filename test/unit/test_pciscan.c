/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_pciscan: every PCI fixture machine scanned and compared with the independent oracle.tsv. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "feature/feature.h"
#include "log/log.h"
#include "pciscan/pciscan.h"
#include "harness.h"

/* One oracle row: machine, address, vendor, device, class (6), ssv, ssd, driver, vfs. */
struct row {
	char f[10][64];
};

static struct row *oracle_load(const char *pci, size_t *n)
{
	char line[1024];
	FILE *fp;
	struct row *rows = NULL;
	size_t cap = 0;

	*n = 0;
	snprintf(line, sizeof(line), "%s/oracle.tsv", pci);
	fp = fopen(line, "r");
	if (!fp)
		return NULL;
	if (!fgets(line, sizeof(line), fp)) /* header */
		goto out;
	while (fgets(line, sizeof(line), fp)) {
		char *p = line, *tab;
		int i;

		line[strcspn(line, "\n")] = '\0';
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			rows = realloc(rows, cap * sizeof(*rows));
		}
		memset(&rows[*n], 0, sizeof(rows[*n]));
		for (i = 0; i < 10 && p; i++) {
			tab = strchr(p, '\t');
			if (tab)
				*tab = '\0';
			snprintf(rows[*n].f[i], sizeof(rows[*n].f[i]), "%.63s", p);
			p = tab ? tab + 1 : NULL;
		}
		(*n)++;
	}
out:
	fclose(fp);
	return rows;
}

static int mkdir_p(const char *path)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	return system(cmd);
}

static int scan_machine(const char *pci, const char *machine, struct pciscan_list *l,
			struct log_err *err)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s/bus/pci", pci, machine);
	return pciscan_scan(path, l, err);
}

/* Every machine directory under pci is scanned, and every device agrees with its oracle.tsv. */
static size_t sweep_machines(const char *pci, size_t min_rows)
{
	size_t nrows = 0, i, machines = 0, checked = 0;
	struct row *rows = oracle_load(pci, &nrows);
	DIR *dir = opendir(pci);
	struct dirent *e;

	if (!rows || nrows < min_rows || !dir) {
		HFAIL_("%s: no oracle.tsv with %zu rows, or no directory", pci, min_rows);
		free(rows);
		if (dir)
			closedir(dir);
		return 0;
	}
	while ((e = readdir(dir))) {
		struct pciscan_list l;
		struct log_err err = {0};
		size_t expect = 0;
		int r;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "sources") || strchr(e->d_name, '.'))
			continue;
		machines++;
		r = scan_machine(pci, e->d_name, &l, &err);
		if (r < 0) {
			HFAIL_("%s: %s", e->d_name, err.msg);
			continue;
		}
		for (i = 0; i < nrows; i++) {
			const struct row *o = &rows[i];
			const struct pciscan_dev *d = NULL;
			char cls[5];
			size_t k;

			if (strcmp(o->f[0], e->d_name))
				continue;
			expect++;
			for (k = 0; k < l.n; k++)
				if (!strcmp(l.dev[k].addr, o->f[1]))
					d = &l.dev[k];
			if (!d) {
				HFAIL_("%s %s: not scanned", o->f[0], o->f[1]);
				continue;
			}
			snprintf(cls, sizeof(cls), "%.4s", o->f[4]);
			CHECK_STR(d->vendor, o->f[2]);
			CHECK_STR(d->device, o->f[3]);
			CHECK_STR(d->class_code, cls);
			/* The probes print no Subsystem line where the kernel shows 0x0000. */
			CHECK_STR(d->subsystem_vendor, o->f[5][0] ? o->f[5] : "0000");
			CHECK_STR(d->subsystem_device, o->f[6][0] ? o->f[6] : "0000");
			CHECK_STR(d->driver, o->f[7]);
			CHECK_STR(d->sriov_totalvfs, o->f[8]);
			checked++;
		}
		CHECK_INT(l.n, expect);
		pciscan_list_free(&l);
	}
	closedir(dir);
	free(rows);
	CHECK_INT(checked, nrows);
	return machines;
}

TEST(pciscan_all_fixtures_match_oracle)
{
	CHECK(sweep_machines("test/fixtures/pci", 200) >= 9);
}

/* The wider sweep: every machine of ../shared/fixtures/pci. */
TEST(pciscan_all_shared_fixtures_match_oracle)
{
	size_t n = sweep_machines(SHARED_OR_SKIP("fixtures/pci"), 400);

	CHECK(n >= 40);
	fprintf(stderr, "  swept %zu PCI machines of ../shared/fixtures\n", n);
}

TEST(pciscan_features_of_nuc)
{
	struct pciscan_list l;
	struct log_err err = {0};
	struct feat_set *fs = feat_set_new();
	const struct feat *f, *gpu = NULL;
	size_t i;

	REQUIRE(scan_machine("test/fixtures/pci", "linuxhw-intel-nuc12-alderlake", &l, &err) == 25);
	REQUIRE(pciscan_add_features(&l, fs) == 0);
	f = feat_get(fs, "pci.device");
	REQUIRE(f && feat_kind(f) == FEAT_INSTANCES);
	CHECK_INT(feat_ninstances(f), 25);
	for (i = 0; i < feat_ninstances(f); i++) {
		const struct feat *in = feat_instance_at(f, i);

		if (!strcmp(feat_lookup(in, "device"), "46a6"))
			gpu = in;
	}
	REQUIRE(gpu);
	CHECK_STR(feat_lookup(gpu, "vendor"), "8086");
	CHECK_STR(feat_lookup(gpu, "class"), "0300");
	CHECK_STR(feat_lookup(gpu, "driver"), "i915");
	CHECK(feat_lookup(gpu, "sriov_totalvfs") == NULL);
	feat_set_free(fs);
	pciscan_list_free(&l);
}

/* A tiny sysfs tree written by the test. */
static const char *mkdev(const char *root, const char *addr)
{
	static char dir[512];

	snprintf(dir, sizeof(dir), "%s/bus/pci/devices/%s", root, addr);
	if (mkdir_p(dir) != 0)
		abort();
	return dir;
}

static void good_dev(const char *dir)
{
	harness_put_str(dir, "vendor", "0x8086\n");
	harness_put_str(dir, "device", "0x46A6\n");
	harness_put_str(dir, "class", "0x030000\n");
	harness_put_str(dir, "subsystem_vendor", "0x8086\n");
	harness_put_str(dir, "subsystem_device", "0x3024\n");
}

static int scan_root(const char *root, struct pciscan_list *l, struct log_err *err)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/bus/pci", root);
	return pciscan_scan(path, l, err);
}

TEST(pciscan_real_symlink_and_uppercase)
{
	char root[64], link[600];
	struct pciscan_list l;
	struct log_err err = {0};
	const char *dir;

	snprintf(root, sizeof(root), "%s", harness_tmpdir());
	dir = mkdev(root, "0000:00:02.0");
	good_dev(dir);
	harness_put_str(dir, "sriov_totalvfs", "7\n");
	snprintf(link, sizeof(link), "%s/driver", dir);
	REQUIRE(symlink("../../../../bus/pci/drivers/xe", link) == 0);
	REQUIRE_INT(scan_root(root, &l, &err), 1);
	CHECK_STR(l.dev[0].addr, "0000:00:02.0");
	CHECK_STR(l.dev[0].device, "46a6");
	CHECK_STR(l.dev[0].driver, "xe");
	CHECK_STR(l.dev[0].sriov_totalvfs, "7");
	pciscan_list_free(&l);
}

TEST(pciscan_no_bus_is_empty)
{
	struct pciscan_list l;
	struct log_err err = {0};

	CHECK_INT(scan_root(harness_tmpdir(), &l, &err), 0);
	CHECK_INT(l.n, 0);
}

TEST(pciscan_missing_attribute_skips_device)
{
	char root[64];
	struct pciscan_list l;
	struct log_err err = {0};
	const char *dir;

	snprintf(root, sizeof(root), "%s", harness_tmpdir());
	good_dev(mkdev(root, "0000:00:01.0"));
	dir = mkdev(root, "0000:00:02.0");
	harness_put_str(dir, "vendor", "0x8086\n");
	REQUIRE_INT(scan_root(root, &l, &err), 1);
	CHECK_STR(l.dev[0].addr, "0000:00:01.0");
	pciscan_list_free(&l);
}

/* Present but bad input: an error naming the path, never a crash or exit. */
static void expect_error(const char *root, const char *needle)
{
	struct pciscan_list l;
	struct log_err err = {0};
	int r = scan_root(root, &l, &err);

	CHECK(r < 0);
	CHECK_INT(l.n, 0);
	if (!strstr(err.msg, needle))
		HFAIL_("error '%s' does not name '%s'", err.msg, needle);
}

TEST(pciscan_garbage_vendor)
{
	char root[64];
	const char *dir;

	snprintf(root, sizeof(root), "%s", harness_tmpdir());
	dir = mkdev(root, "0000:00:02.0");
	good_dev(dir);
	harness_put_str(dir, "vendor", "0xzz86\n");
	expect_error(root, "0000:00:02.0/vendor: not a 4-digit hex value");
}

TEST(pciscan_garbage_class_and_vfs)
{
	char root[64];
	const char *dir;

	snprintf(root, sizeof(root), "%s", harness_tmpdir());
	dir = mkdev(root, "0000:00:02.0");
	good_dev(dir);
	harness_put_str(dir, "class", "0x0300\n");
	expect_error(root, "/class: not a 6-digit hex value");
}

TEST(pciscan_unreadable_attribute)
{
	char root[64], path[600];
	const char *dir;

	snprintf(root, sizeof(root), "%s", harness_tmpdir());
	dir = mkdev(root, "0000:00:02.0");
	good_dev(dir);
	snprintf(path, sizeof(path), "%s/device", dir);
	REQUIRE(unlink(path) == 0 && mkdir(path, 0755) == 0);
	expect_error(root, "0000:00:02.0/device: Is a directory");
}

/* What libpci would fail on (its default handler exits the process) is refused first. */
TEST(pciscan_unreadable_devices_dir)
{
	char root[64], path[600];

	snprintf(root, sizeof(root), "%s", harness_tmpdir());
	snprintf(path, sizeof(path), "%s/bus/pci", root);
	REQUIRE(mkdir_p(path) == 0);
	harness_put_str(path, "devices", "not a directory\n");
	expect_error(root, "bus/pci/devices: Not a directory");
	/* and the library is usable again afterwards */
	good_dev(mkdev(harness_tmpdir(), "0000:00:02.0"));
}

/*
 * An entry of devices/ that is no PCI address: libpci's scan fails on it while
 * it holds an open directory and a half-made device, which its error jump
 * leaked (LeakSanitizer made that exit 1, not 3). Refused before libpci runs;
 * under make check (ASan) this case also fails on any leak.
 */
TEST(pciscan_bad_entry_name_no_leak)
{
	char root[64], path[600];

	snprintf(root, sizeof(root), "%s", harness_tmpdir());
	good_dev(mkdev(root, "0000:00:02.0"));
	snprintf(path, sizeof(path), "%s/bus/pci/devices/junk", root);
	REQUIRE(mkdir(path, 0755) == 0);
	expect_error(root, "bus/pci/devices/junk: not a PCI device address");
	/* a dot-entry is skipped, as libpci skips it */
	REQUIRE(rmdir(path) == 0);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/.junk", root);
	REQUIRE(mkdir(path, 0755) == 0);
	{
		struct pciscan_list l;
		struct log_err err = {0};

		CHECK_INT(scan_root(root, &l, &err), 1);
		pciscan_list_free(&l);
	}
}

/*
 * NFD's optional iommu_group/type and iommu/intel-iommu/version (source/pci/utils.go, v0.12-v0.19)
 * through the kernel's links: the text less "0x", trimmed; absent without the file (issue 20).
 */
TEST(pciscan_iommu_attributes)
{
	char root[64], p[600], link[600];
	struct pciscan_list l;
	struct log_err err = {0};
	struct feat_set *fs = feat_set_new();
	const struct feat *f, *in;
	const char *dir;

	snprintf(root, sizeof(root), "%s", harness_tmpdir());
	snprintf(p, sizeof(p), "%s/kernel/iommu_groups/7", root);
	REQUIRE(mkdir_p(p) == 0);
	harness_put_str(p, "type", "DMA-FQ\n");
	snprintf(p, sizeof(p), "%s/devices/virtual/iommu/dmar0/intel-iommu", root);
	REQUIRE(mkdir_p(p) == 0);
	harness_put_str(p, "version", "1:0\n");
	dir = mkdev(root, "0000:00:02.0");
	good_dev(dir);
	snprintf(link, sizeof(link), "%s/iommu_group", dir);
	REQUIRE(symlink("../../../../kernel/iommu_groups/7", link) == 0);
	snprintf(link, sizeof(link), "%s/iommu", dir);
	REQUIRE(symlink("../../../../devices/virtual/iommu/dmar0", link) == 0);
	dir = mkdev(root, "0000:00:03.0"); /* no IOMMU */
	good_dev(dir);
	dir = mkdev(root, "0000:00:04.0"); /* a copied tree: the link stored as a file */
	good_dev(dir);
	harness_put_str(dir, "iommu_group", "../../../../kernel/iommu_groups/7");
	REQUIRE_INT(scan_root(root, &l, &err), 3);
	REQUIRE_INT(pciscan_add_features(&l, fs), 0);
	f = feat_get(fs, "pci.device");
	REQUIRE(f != NULL && feat_ninstances(f) == 3);
	in = feat_instance_at(f, 0);
	CHECK_STR(feat_lookup(in, "iommu_group/type"), "DMA-FQ");
	CHECK_STR(feat_lookup(in, "iommu/intel-iommu/version"), "1:0");
	for (size_t i = 1; i < 3; i++) {
		in = feat_instance_at(f, i);
		CHECK(feat_lookup(in, "iommu_group/type") == NULL);
		CHECK(feat_lookup(in, "iommu/intel-iommu/version") == NULL);
	}
	pciscan_list_free(&l);
	feat_set_free(fs);
}

/*
 * NFD's readPciDevInfo keeps an optional attribute (sriov_totalvfs, iommu_group/type) only when
 * its read succeeds: a directory, a FIFO or an over-long file where one belongs leaves the key out,
 * the device is scanned (issue 20 review: these made the whole run exit 3). A value that is no
 * decimal is kept as read, as NFD's text.
 */
TEST(pciscan_optional_attribute_unreadable_left_out)
{
	char root[64], p[600], big[101];
	struct pciscan_list l;
	struct log_err err = {0};
	struct feat_set *fs = feat_set_new();
	const struct feat *f, *in;
	const char *dir;
	size_t i;

	snprintf(root, sizeof(root), "%s", harness_tmpdir());
	memset(big, '1', 100);
	big[100] = '\0';
	dir = mkdev(root, "0000:00:01.0"); /* type a directory; sriov_totalvfs a directory */
	good_dev(dir);
	snprintf(p, sizeof(p), "%s/iommu_group/type", dir);
	REQUIRE(mkdir_p(p) == 0);
	snprintf(p, sizeof(p), "%s/sriov_totalvfs", dir);
	REQUIRE(mkdir(p, 0755) == 0);
	dir = mkdev(root, "0000:00:02.0"); /* FIFOs */
	good_dev(dir);
	snprintf(p, sizeof(p), "%s/iommu_group", dir);
	REQUIRE(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/iommu_group/type", dir);
	REQUIRE(mkfifo(p, 0644) == 0);
	snprintf(p, sizeof(p), "%s/sriov_totalvfs", dir);
	REQUIRE(mkfifo(p, 0644) == 0);
	dir = mkdev(root, "0000:00:03.0"); /* 100 bytes */
	good_dev(dir);
	snprintf(p, sizeof(p), "%s/iommu_group", dir);
	REQUIRE(mkdir(p, 0755) == 0);
	harness_put_str(p, "type", big);
	harness_put_str(dir, "sriov_totalvfs", big);
	dir = mkdev(root, "0000:00:04.0"); /* not a decimal: kept as NFD keeps it */
	good_dev(dir);
	harness_put_str(dir, "sriov_totalvfs", "-1\n");
	REQUIRE_INT(scan_root(root, &l, &err), 4);
	REQUIRE_INT(pciscan_add_features(&l, fs), 0);
	f = feat_get(fs, "pci.device");
	REQUIRE(f != NULL && feat_ninstances(f) == 4);
	for (i = 0; i < 3; i++) {
		in = feat_instance_at(f, i);
		CHECK_STR(feat_lookup(in, "vendor"), "8086");
		CHECK(feat_lookup(in, "iommu_group/type") == NULL);
		CHECK(feat_lookup(in, "sriov_totalvfs") == NULL);
	}
	CHECK_STR(feat_lookup(feat_instance_at(f, 3), "sriov_totalvfs"), "-1");
	pciscan_list_free(&l);
	feat_set_free(fs);
}
