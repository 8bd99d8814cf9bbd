/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_kernel: /proc/modules and modules.builtin as NFD's module features, and bound drivers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "feature/feature.h"
#include "harness.h"
#include "kernel/kernel.h"
#include "log/log.h"

/* Lines as a real kernel writes them (6.1, trimmed). */
static const char proc_modules[] = "i915 3448832 35 - Live 0x0000000000000000\n"
				   "drm_buddy 20480 1 i915, Live 0x0000000000000000\n"
				   "vfio_pci 16384 0 - Live 0x0000000000000000\n"
				   "\n";
static const char builtin[] = "kernel/drivers/vfio/pci/vfio-pci-core.ko\n"
			      "  kernel/drivers/dma/idxd/idxd.ko  \n"
			      "kernel/fs/ext4/ext4.ko\n"
			      "not-a-module.txt\n"
			      "kernel/crypto/crc32c_generic.ko\n";

TEST(kernel_loaded_and_enabled)
{
	char dir[64];
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	const struct feat *l, *e;

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	harness_put_str(dir, "modules", proc_modules);
	harness_put_str(dir, "modules.builtin", builtin);
	REQUIRE_INT(kernel_scan_modules(dir, dir, fs, &err), 0);
	l = feat_get(fs, KERNEL_LOADED);
	e = feat_get(fs, KERNEL_ENABLED);
	REQUIRE(l && e);
	CHECK_INT(feat_kind(l), FEAT_FLAGS);
	CHECK_INT(feat_nelems(l), 3);
	CHECK(feat_lookup(l, "i915") && feat_lookup(l, "drm_buddy") && feat_lookup(l, "vfio_pci"));
	CHECK(feat_lookup(l, "idxd") == NULL);
	CHECK_INT(feat_nelems(e), 7);
	CHECK(feat_lookup(e, "i915") && feat_lookup(e, "vfio_pci"));
	/* built-in names as written: NFD keeps the '-' */
	CHECK(feat_lookup(e, "vfio-pci-core") != NULL);
	CHECK(feat_lookup(e, "vfio_pci_core") == NULL);
	CHECK(feat_lookup(e, "idxd") && feat_lookup(e, "ext4") && feat_lookup(e, "crc32c_generic"));
	CHECK(feat_lookup(e, "not-a-module.txt") == NULL);
	feat_set_free(fs);
}

TEST(kernel_missing_files_no_features)
{
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	const char *dir = harness_tmpdir();

	CHECK_INT(kernel_scan_modules(dir, dir, fs, &err), 0);
	CHECK(feat_get(fs, KERNEL_LOADED) == NULL);
	CHECK(feat_get(fs, KERNEL_ENABLED) == NULL);
	CHECK_INT(kernel_scan_modules(NULL, NULL, fs, &err), 0);
	CHECK_INT(feat_set_count(fs), 0);
	feat_set_free(fs);
}

TEST(kernel_only_builtin)
{
	char dir[64];
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	harness_put_str(dir, "modules.builtin", builtin);
	CHECK_INT(kernel_scan_modules(dir, dir, fs, &err), 0);
	CHECK(feat_get(fs, KERNEL_LOADED) == NULL);
	REQUIRE(feat_get(fs, KERNEL_ENABLED));
	CHECK_INT(feat_nelems(feat_get(fs, KERNEL_ENABLED)), 4);
	feat_set_free(fs);
}

/*
 * An empty /proc/modules (a kernel without loadable modules) was read: the
 * features exist with no elements, as in NFD, so "nouveau: DoesNotExist"
 * matches. Same for an empty modules.builtin.
 */
TEST(kernel_empty_files_give_empty_features)
{
	char dir[64];
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	harness_put_str(dir, "modules", "");
	REQUIRE_INT(kernel_scan_modules(dir, NULL, fs, &err), 0);
	REQUIRE(feat_get(fs, KERNEL_LOADED));
	REQUIRE(feat_get(fs, KERNEL_ENABLED));
	CHECK_INT(feat_kind(feat_get(fs, KERNEL_LOADED)), FEAT_FLAGS);
	CHECK_INT(feat_nelems(feat_get(fs, KERNEL_LOADED)), 0);
	CHECK_INT(feat_nelems(feat_get(fs, KERNEL_ENABLED)), 0);
	feat_set_free(fs);

	fs = feat_set_new();
	harness_put_str(dir, "modules.builtin", "\n");
	REQUIRE_INT(kernel_scan_modules(NULL, dir, fs, &err), 0);
	CHECK(feat_get(fs, KERNEL_LOADED) == NULL);
	REQUIRE(feat_get(fs, KERNEL_ENABLED));
	CHECK_INT(feat_nelems(feat_get(fs, KERNEL_ENABLED)), 0);
	feat_set_free(fs);
}

TEST(kernel_unreadable_is_error)
{
	char dir[64], path[128];
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	snprintf(path, sizeof(path), "%s/modules", dir);
	REQUIRE(mkdir(path, 0755) == 0);
	CHECK(kernel_scan_modules(dir, NULL, fs, &err) < 0);
	CHECK(strstr(err.msg, "/modules: Is a directory") != NULL);
	feat_set_free(fs);
}

TEST(kernel_bound_driver_normalised)
{
	struct feat_set *fs = feat_set_new();
	const struct feat *l;

	CHECK_INT(kernel_add_bound_driver(fs, "virtio-pci"), 1);
	CHECK_INT(kernel_add_bound_driver(fs, "i915"), 1);
	CHECK_INT(kernel_add_bound_driver(fs, "HDA Intel"), 0);
	CHECK_INT(kernel_add_bound_driver(fs, ""), 0);
	CHECK_INT(kernel_add_bound_driver(fs, "../x"), 0);
	l = feat_get(fs, KERNEL_LOADED);
	REQUIRE(l);
	CHECK_INT(feat_nelems(l), 2);
	CHECK(feat_lookup(l, "virtio_pci") && feat_lookup(l, "i915"));
	CHECK(feat_lookup(feat_get(fs, KERNEL_ENABLED), "virtio_pci") != NULL);
	feat_set_free(fs);
}

/* The running kernel's own /proc/modules, against cut(1) as an oracle. */
TEST(kernel_host_proc_modules)
{
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	FILE *p = popen("cut -d' ' -f1 /proc/modules 2>/dev/null | sort -u | wc -l", "r");
	long want = -1;
	const struct feat *l;

	REQUIRE(p);
	if (fscanf(p, "%ld", &want) != 1)
		want = -1;
	pclose(p);
	REQUIRE_INT(kernel_scan_modules("/proc", NULL, fs, &err), 0);
	l = feat_get(fs, KERNEL_LOADED);
	if (want <= 0) {
		CHECK(l == NULL || feat_nelems(l) == 0);
	} else {
		REQUIRE(l);
		CHECK_INT(feat_nelems(l), want);
	}
	feat_set_free(fs);
}
