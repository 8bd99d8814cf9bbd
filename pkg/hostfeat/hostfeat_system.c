/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostfeat_system: NFD's system.name, system.dmiid, kernel.selinux and kernel.kvm. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "feature/feature.h"
#include "hostfeat/hostfeat.h"
#include "hostfeat/hostfeat_internal.h"
#include "log/log.h"

int hostfeat_system(const char *sysfs, const char *nodename, struct feat_set *fs,
		    struct log_err *err)
{
	/* nfd.md §10.4: the DMI files NFD v0.19's system source reads */
	static const char *const dmi[] = {
	    "bios_date",    "bios_vendor",    "bios_version",	 "board_asset_tag",
	    "board_name",   "board_vendor",   "board_version",	 "chassis_asset_tag",
	    "chassis_type", "chassis_vendor", "chassis_version", "product_family",
	    "product_name", "product_sku",    "product_version", "sys_vendor",
	};
	char dir[4096];
	size_t i;
	int r = 0;

	if (feat_attr_set(fs, "system.name", "nodename", nodename ? nodename : "") < 0)
		return log_err_set(err, -ENOMEM, "out of memory");
	snprintf(dir, sizeof(dir), "%s/devices/virtual/dmi/id", sysfs);
	for (i = 0; i < sizeof(dmi) / sizeof(dmi[0]) && r >= 0; i++)
		r = hf_attr(fs, "system.dmiid", dmi[i], dir, dmi[i]);
	return r < 0 ? log_err_set(err, r, "out of memory") : 0;
}

int hostfeat_kernel(const char *sysfs, struct feat_set *fs, struct log_err *err)
{
	char path[4096];
	struct stat st;
	struct hf_buf b;
	const char *on = NULL;

	snprintf(path, sizeof(path), "%s/fs", sysfs);
	if (stat(path, &st) == 0) {
		snprintf(path, sizeof(path), "%s/fs/selinux", sysfs);
		if (stat(path, &st) < 0 && errno == ENOENT)
			on = "false";
		else if (hf_read(path, "enforce", &b))
			on = b.len && b.s[0] == '1' ? "true" : "false";
	}
	if (on && feat_attr_set(fs, "kernel.selinux", "enabled", on) < 0)
		return log_err_set(err, -ENOMEM, "out of memory");
	snprintf(path, sizeof(path), "%s/devices/virtual/misc/kvm", sysfs);
	on = stat(path, &st) == 0 ? "true" : (errno == ENOENT ? "false" : NULL);
	if (on && feat_attr_set(fs, "kernel.kvm", "enabled", on) < 0)
		return log_err_set(err, -ENOMEM, "out of memory");
	return 0;
}
