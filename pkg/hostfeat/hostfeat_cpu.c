/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostfeat_cpu: NFD's cpu.topology and cpu.security (SGX, TDX, SEV). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "feature/feature.h"
#include "fsutil/fsutil.h"
#include "hostfeat/hostfeat.h"
#include "hostfeat/hostfeat_internal.h"
#include "log/log.h"

#define TOPOLOGY "cpu.topology"
#define SECURITY "cpu.security"

/* NFD's discoverTopology: one unreadable file voids both elements. 1 ok, 0 none, <0 error. */
static int topology_scan(const char *devs, char **names, size_t n, bool *ht, size_t *sockets)
{
	char **ids = calloc(n + 1, sizeof(*ids));
	struct hf_buf b;
	size_t i, j;
	int r = 1;

	if (!ids)
		return -ENOMEM;
	*ht = false;
	*sockets = 0;
	for (i = 0; i < n && r > 0; i++) {
		char dir[4096 + 300];

		snprintf(dir, sizeof(dir), "%s/%s/topology", devs, names[i]);
		if (!hf_read(dir, "thread_siblings_list", &b)) {
			r = 0;
			break;
		}
		if (strpbrk(b.s, ",-"))
			*ht = true;
		if (!hf_value(dir, "physical_package_id", &b)) {
			r = 0;
			break;
		}
		for (j = 0; j < *sockets && strcmp(ids[j], b.s); j++)
			;
		if (j == *sockets) {
			ids[j] = strdup(b.s);
			if (!ids[j])
				r = -ENOMEM;
			else
				(*sockets)++;
		}
	}
	fs_names_free(ids, *sockets);
	return r;
}

int hostfeat_cpu_topology(const char *sysfs, struct feat_set *fs, struct log_err *err)
{
	char devs[4096], count[24];
	char **names = NULL;
	size_t n = 0, sockets;
	bool ht;
	int r;

	if (feat_declare(fs, TOPOLOGY, FEAT_ATTRS) < 0)
		return log_err_set(err, -ENOMEM, "out of memory");
	snprintf(devs, sizeof(devs), "%s/bus/cpu/devices", sysfs);
	r = hf_list(devs, &names, &n, err);
	if (r != 0)
		return r < 0 ? r : 0;
	r = topology_scan(devs, names, n, &ht, &sockets);
	fs_names_free(names, n);
	if (r > 0) {
		snprintf(count, sizeof(count), "%zu", sockets);
		if (feat_attr_set(fs, TOPOLOGY, "hardware_multithreading", ht ? "true" : "false") <
			0 ||
		    feat_attr_set(fs, TOPOLOGY, "socket_count", count) < 0)
			r = -ENOMEM;
	}
	return r < 0 ? log_err_set(err, r, "out of memory") : 0;
}

/* NFD's getCgroupMiscCapacity: the first line starting with res, its second field; -1 none. */
static long long misc_capacity(const char *sysfs, const char *res)
{
	static const char *const files[] = {"fs/cgroup/misc.capacity",
					    "fs/cgroup/misc/misc.capacity"};
	struct hf_buf b;
	char *line, *save = NULL, *end;
	size_t i;

	for (i = 0; i < 2 && !hf_read(sysfs, files[i], &b); i++)
		;
	if (i == 2)
		return -1;
	for (line = strtok_r(b.s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *f, *d;
		long long v;

		if (strncmp(line, res, strlen(res)))
			continue;
		/* Go's strconv.ParseInt(strings.Split(line, " ")[1], 10, 64): sign, then digits */
		f = strchr(line, ' ');
		if (!f)
			return -1;
		f++;
		d = f + (*f == '+' || *f == '-');
		if (!isdigit((unsigned char)*d))
			return -1;
		errno = 0;
		v = strtoll(f, &end, 10);
		if (errno || (*end && *end != ' '))
			return -1;
		return v;
	}
	return -1;
}

/* NFD's sevParameterEnabled: the kvm_amd parameter starts with '1' or 'Y'. */
static bool amd_param(const char *sysfs, const char *p)
{
	char rel[96];
	struct hf_buf b;

	snprintf(rel, sizeof(rel), "module/kvm_amd/parameters/%s", p);
	return hf_read(sysfs, rel, &b) && b.len && (b.s[0] == '1' || b.s[0] == 'Y');
}

/* The SGX EPC size as klauspost/cpuid's hasSGX sums it (leaf 0x12 subleaves 2..9). */
static uint64_t sgx_epc(const struct cpu_x86 *src)
{
	uint64_t sum = 0;
	uint32_t sub;

	for (sub = 2; sub < 10; sub++) {
		struct cpu_regs r = {0};

		src->cpuid(src, 0x12, sub, &r);
		if ((r.eax & 0xf) == 0)
			break;
		if ((r.eax & 0xf) == 1)
			sum +=
			    (uint64_t)(r.ecx & 0xfffff000u) + ((uint64_t)(r.edx & 0xfffffu) << 32);
	}
	return sum;
}

static int set_true(struct feat_set *fs, const char *key)
{
	return feat_attr_set(fs, SECURITY, key, "true");
}

static int set_count(struct feat_set *fs, const char *key, long long v)
{
	char s[24];

	if (v < 0)
		return 0;
	snprintf(s, sizeof(s), "%lld", v);
	return feat_attr_set(fs, SECURITY, key, s);
}

/* SGX and TDX_GUEST as the cpu.cpuid flags say (the library's own tests, via pkg/cpu). */
static int cpuid_flags(const struct cpu_x86 *src, bool *sgx, bool *tdx_guest)
{
	struct feat_set *tmp = feat_set_new();
	const struct feat *f;

	*sgx = *tdx_guest = false;
	if (!tmp || cpu_x86_features(src, tmp) < 0) {
		feat_set_free(tmp);
		return -ENOMEM;
	}
	f = feat_get_kind(tmp, CPU_CPUID, FEAT_FLAGS);
	*sgx = f && feat_lookup(f, "SGX");
	*tdx_guest = f && feat_lookup(f, "TDX_GUEST");
	feat_set_free(tmp);
	return 0;
}

int hostfeat_cpu_security(const char *sysfs, const struct cpu_x86 *src, struct feat_set *fs,
			  struct log_err *err)
{
	bool sgx = false, tdx_guest = false;
	struct hf_buf b;
	uint64_t epc;
	char s[24];
	int r = feat_declare(fs, SECURITY, FEAT_ATTRS);

	if (r == 0 && src)
		r = cpuid_flags(src, &sgx, &tdx_guest);
	if (r == 0 && sgx && (epc = sgx_epc(src)) > 0) {
		snprintf(s, sizeof(s), "%" PRIu64, epc);
		r = set_true(fs, "sgx.enabled");
		if (r == 0)
			r = feat_attr_set(fs, SECURITY, "sgx.epc", s);
	}
	/* tdx: exactly "Y\n", as NFD's tdxEnabled; the host kernel's kvm_intel parameter */
	if (r == 0 && hf_read(sysfs, "module/kvm_intel/parameters/tdx", &b) &&
	    !strcmp(b.s, "Y\n")) {
		r = set_true(fs, "tdx.enabled");
		if (r == 0)
			r = set_count(fs, "tdx.total_keys", misc_capacity(sysfs, "tdx"));
	}
	if (r == 0 && tdx_guest)
		r = set_true(fs, "tdx.protected");
	if (r == 0 && amd_param(sysfs, "sev")) {
		r = set_true(fs, "sev.enabled");
		if (r == 0)
			r = set_count(fs, "sev.asids", misc_capacity(sysfs, "sev"));
	}
	if (r == 0 && amd_param(sysfs, "sev_es")) {
		r = set_true(fs, "sev.es.enabled");
		if (r == 0)
			r = set_count(fs, "sev.encrypted_state_ids",
				      misc_capacity(sysfs, "sev_es"));
	}
	if (r == 0 && amd_param(sysfs, "sev_snp"))
		r = set_true(fs, "sev.snp.enabled");
	return r < 0 ? log_err_set(err, -ENOMEM, "out of memory") : 0;
}
