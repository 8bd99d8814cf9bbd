/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostfeat_memory: NFD's memory.numa, memory.swap, memory.nv and memory.hugepages. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feature/feature.h"
#include "fsutil/fsutil.h"
#include "goconv/goconv.h"
#include "hostfeat/hostfeat.h"
#include "hostfeat/hostfeat_internal.h"
#include "log/log.h"

/* memory.numa: the entries of bus/node/devices (NFD's detectNuma). */
static int numa(const char *sysfs, struct feat_set *fs, struct log_err *err)
{
	char dir[4096], count[24];
	char **names = NULL;
	size_t n = 0;
	int r;

	snprintf(dir, sizeof(dir), "%s/bus/node/devices", sysfs);
	r = hf_list(dir, &names, &n, err);
	if (r != 0)
		return r < 0 ? r : 0;
	fs_names_free(names, n);
	snprintf(count, sizeof(count), "%zu", n);
	if (feat_attr_set(fs, "memory.numa", "is_numa", n > 1 ? "true" : "false") < 0 ||
	    feat_attr_set(fs, "memory.numa", "node_count", count) < 0)
		return log_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* memory.swap: more than the header line in <proc>/swaps (NFD's detectSwap). */
static int swap(const char *proc, struct feat_set *fs)
{
	struct hf_buf b;
	size_t lines = 0;
	char *line, *save = NULL;

	if (!hf_read(proc, "swaps", &b))
		return 0;
	for (line = strtok_r(b.s, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (line[strspn(line, " \t\r\v\f")])
			lines++;
	return feat_attr_set(fs, "memory.swap", "enabled", lines > 1 ? "true" : "false");
}

/* memory.nv: one instance per bus/nd/devices entry (NFD's detectNv, readNdDeviceInfo). */
static int nv(const char *sysfs, struct feat_set *fs, struct log_err *err)
{
	char dir[4096], dev[4096 + 256];
	char **names = NULL;
	size_t n = 0, i;
	int r;

	snprintf(dir, sizeof(dir), "%s/bus/nd/devices", sysfs);
	r = hf_list(dir, &names, &n, err);
	if (r == HF_ABSENT)
		r = 0; /* NFD (os.IsNotExist): not there is no NVDIMM, an empty list */
	else if (r == HF_UNREADABLE)
		return 0; /* any other error (ENOTDIR too): no feature, as NFD */
	if (r < 0)
		return r;
	r = feat_declare(fs, "memory.nv", FEAT_INSTANCES);
	for (i = 0; i < n && r >= 0; i++) {
		struct feat *in = feat_instance_add(fs, "memory.nv");

		snprintf(dev, sizeof(dev), "%s/%s", dir, names[i]);
		r = in ? feat_instance_set(in, "name", names[i]) : -ENOMEM;
		if (r >= 0)
			r = hf_inst_attr(in, "devtype", dev, "devtype");
		if (r >= 0)
			r = hf_inst_attr(in, "mode", dev, "mode");
	}
	fs_names_free(names, n);
	return r < 0 ? log_err_set(err, -ENOMEM, "out of memory") : 0;
}

/* Kubernetes' canonical quantity of n Ki (resource.Quantity.String(), binary SI). */
static void quantity_ki(unsigned long long n, char *out, size_t size)
{
	static const char *const unit[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	size_t u = 0;

	if (n == 0) {
		snprintf(out, size, "0");
		return;
	}
	while (u < 5 && n % 1024 == 0) {
		n /= 1024;
		u++;
	}
	snprintf(out, size, "%llu%s", n, unit[u]);
}

/* One hugepages-<N>kB directory: its key and nr_hugepages. 1 an element, 0 none. */
static int hugepage_size(const char *name, char *key, size_t size)
{
	char num[32], *end;
	const char *p = strncmp(name, "hugepages-", 10) ? name : name + 10;
	size_t n = strlen(p);
	unsigned long long v;

	while (n && (p[n - 1] == 'k' || p[n - 1] == 'B')) /* Go's TrimRight(s, "kB") */
		n--;
	if (n == 0 || n >= sizeof(num) || p[0] < '0' || p[0] > '9')
		return 0; /* ParseQuantity fails: NFD skips the directory */
	memcpy(num, p, n);
	num[n] = '\0';
	errno = 0;
	v = strtoull(num, &end, 10);
	if (errno || *end || v > (~0ull >> 10))
		return 0;
	memcpy(key, "hugepages-", 10);
	quantity_ki(v, key + 10, size - 10);
	return 1;
}

/* memory.hugepages (NFD's detectHugePages). */
static int hugepages(const char *sysfs, struct feat_set *fs, struct log_err *err)
{
	char dir[4096], sub[4096 + 256], key[64];
	char **names = NULL;
	size_t n = 0, i;
	bool on = false;
	int r;

	snprintf(dir, sizeof(dir), "%s/kernel/mm/hugepages", sysfs);
	r = hf_list(dir, &names, &n, err);
	if (r < 0)
		return r;
	if (r == HF_UNREADABLE)
		return 0; /* NFD's error (ENOTDIR too, not os.ErrNotExist): no feature */
	r = 0;		  /* HF_ABSENT: enabled=false, as NFD */
	for (i = 0; i < n && r >= 0; i++) {
		struct hf_buf b;
		const char *v;
		long long pages;

		snprintf(sub, sizeof(sub), "%s/%s", dir, names[i]);
		if (!fs_is_dir(sub) || !hugepage_size(names[i], key, sizeof(key)))
			continue;
		v = hf_value(sub, "nr_hugepages", &b);
		if (!v)
			v = "";
		if (goconv_atoi(v, &pages) && pages > 0) /* NFD: strconv.Atoi(totalPages) */
			on = true;
		r = feat_attr_set(fs, "memory.hugepages", key, v);
	}
	fs_names_free(names, n);
	if (r >= 0)
		r = feat_attr_set(fs, "memory.hugepages", "enabled", on ? "true" : "false");
	return r < 0 ? log_err_set(err, -ENOMEM, "out of memory") : 0;
}

int hostfeat_memory(const char *sysfs, const char *proc, struct feat_set *fs, struct log_err *err)
{
	int r = numa(sysfs, fs, err);

	if (r == 0 && swap(proc, fs) < 0)
		r = log_err_set(err, -ENOMEM, "out of memory");
	if (r == 0)
		r = nv(sysfs, fs, err);
	if (r == 0)
		r = hugepages(sysfs, fs, err);
	return r;
}
