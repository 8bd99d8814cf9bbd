/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostfeat_device: NFD's network.device, network.virtual and storage.block. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "feature/feature.h"
#include "fsutil/fsutil.h"
#include "hostfeat/hostfeat.h"
#include "hostfeat/hostfeat_internal.h"
#include "log/log.h"

/* One instance of feature: name, then each file of rel (its key the file's base name). */
static int add_instance(struct feat_set *fs, const char *feature, const char *dir, const char *name,
			const char *const *rel, size_t nrel)
{
	struct feat *in = feat_instance_add(fs, feature);
	size_t i;
	int r;

	if (!in)
		return -ENOMEM;
	r = feat_instance_set(in, "name", name);
	for (i = 0; i < nrel && r >= 0; i++) {
		const char *base = strrchr(rel[i], '/');

		r = hf_inst_attr(in, base ? base + 1 : rel[i], dir, rel[i]);
	}
	return r;
}

int hostfeat_network(const char *sysfs, struct feat_set *fs, struct log_err *err)
{
	/* NFD's devIfaceAttrs and virtualIfaceAttrs (the first three), with "mtu" (NFD PR #2044,
	 * "Discover MTU of physical and virtual network devices", merged 2025-03-27: v0.18, v0.19)
	 */
	static const char *const dev_attrs[] = {"operstate", "speed", "mtu", "device/sriov_numvfs",
						"device/sriov_totalvfs"};
	char base[4096], dir[4096 + 256];
	char **names = NULL;
	size_t n = 0, i;
	struct stat st;
	int r;

	snprintf(base, sizeof(base), "%s/class/net", sysfs);
	r = hf_list(base, &names, &n, err);
	if (r != 0)
		return r < 0 ? r : 0;
	r = feat_declare(fs, "network.device", FEAT_INSTANCES);
	if (r == 0)
		r = feat_declare(fs, "network.virtual", FEAT_INSTANCES);
	for (i = 0; i < n && r >= 0; i++) {
		if (!strcmp(names[i], "bonding_masters"))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s/device", base, names[i]);
		if (stat(dir, &st) == 0) {
			snprintf(dir, sizeof(dir), "%s/%s", base, names[i]);
			r = add_instance(fs, "network.device", dir, names[i], dev_attrs, 5);
		} else {
			snprintf(dir, sizeof(dir), "%s/%s", base, names[i]);
			r = add_instance(fs, "network.virtual", dir, names[i], dev_attrs, 3);
		}
	}
	fs_names_free(names, n);
	return r < 0 ? log_err_set(err, -ENOMEM, "out of memory") : 0;
}

int hostfeat_storage(const char *sysfs, struct feat_set *fs, struct log_err *err)
{
	static const char *const queue[] = {"queue/dax", "queue/rotational", "queue/nr_zones",
					    "queue/zoned"};
	char base[4096], dir[4096 + 256];
	char **names = NULL;
	size_t n = 0, i;
	int r;

	snprintf(base, sizeof(base), "%s/block", sysfs);
	r = hf_list(base, &names, &n, err);
	if (r != 0)
		return r < 0 ? r : 0;
	r = feat_declare(fs, "storage.block", FEAT_INSTANCES);
	for (i = 0; i < n && r >= 0; i++) {
		snprintf(dir, sizeof(dir), "%s/%s", base, names[i]);
		r = add_instance(fs, "storage.block", dir, names[i], queue, 4);
	}
	fs_names_free(names, n);
	return r < 0 ? log_err_set(err, -ENOMEM, "out of memory") : 0;
}
