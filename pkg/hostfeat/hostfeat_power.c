/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostfeat_power: NFD's cpu.cstate, cpu.pstate, cpu.rdt, cpu.sst and cpu.coprocessor. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cpu/cpu.h"
#include "feature/feature.h"
#include "fsutil/fsutil.h"
#include "goconv/goconv.h"
#include "hostfeat/hostfeat.h"
#include "hostfeat/hostfeat_internal.h"
#include "log/log.h"

#define CSTATE	    "cpu.cstate"
#define PSTATE	    "cpu.pstate"
#define RDT	    "cpu.rdt"
#define SST	    "cpu.sst"
#define COPROCESSOR "cpu.coprocessor"

/* Go's os.Stat(sysfs/rel): 0 exists, else the errno. */
static int stat_errno(const char *sysfs, const char *rel)
{
	char path[8192];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", sysfs, rel);
	return stat(path, &st) == 0 ? 0 : errno;
}

static int oom(struct log_err *err)
{
	return log_err_set(err, -ENOMEM, "out of memory");
}

/* source/cpu/cstate_amd64.go detectCstate; an error there leaves the feature out. */
int hostfeat_cpu_cstate(const char *sysfs, bool amd64, struct feat_set *fs, struct log_err *err)
{
	struct hf_buf b;
	const char *v;
	long long n;

	if (!amd64) /* cstate_stub.go: nil, nil: an empty feature */
		return feat_declare(fs, CSTATE, FEAT_ATTRS) < 0 ? oom(err) : 0;
	if (stat_errno(sysfs, "devices/system/cpu"))
		return 0;
	if (stat_errno(sysfs, "devices/system/cpu/cpuidle") == ENOENT)
		return feat_declare(fs, CSTATE, FEAT_ATTRS) < 0 ? oom(err) : 0;
	v = hf_value(sysfs, "devices/system/cpu/cpuidle/current_driver", &b);
	if (!v)
		return 0;
	if (strcmp(v, "intel_idle"))
		return feat_declare(fs, CSTATE, FEAT_ATTRS) < 0 ? oom(err) : 0;
	v = hf_value(sysfs, "module/intel_idle/parameters/max_cstate", &b);
	if (!v || !goconv_atoi(v, &n))
		return 0;
	if (feat_declare(fs, CSTATE, FEAT_ATTRS) < 0 ||
	    feat_attr_set(fs, CSTATE, "enabled", n > 0 ? "true" : "false") < 0)
		return oom(err);
	return 0;
}

/* pstate_amd64.go: the scaling governor every policy with cpus shares, or NULL. */
static const char *pstate_governor(const char *cpufreq, char **names, size_t n, struct hf_buf *gov)
{
	bool have = false;
	size_t i;

	for (i = 0; i < n; i++) {
		char dir[4096 + 300];
		struct hf_buf b;
		const char *v;

		snprintf(dir, sizeof(dir), "%s/%s", cpufreq, names[i]);
		v = hf_value(dir, "affected_cpus", &b);
		if (!v || !*v)
			continue;
		v = hf_value(dir, "scaling_governor", &b);
		if (!v)
			continue;
		/* NFD compares with the previous value only while it is non-empty */
		if (have && gov->len && strcmp(gov->s, v))
			return NULL;
		*gov = b;
		have = true;
	}
	return have && gov->len ? gov->s : NULL;
}

/* source/cpu/pstate_amd64.go detectPstate: always made, empty on any error. */
int hostfeat_cpu_pstate(const char *sysfs, bool amd64, struct feat_set *fs, struct log_err *err)
{
	char dir[4096 + 64], **names = NULL;
	struct hf_buf b, nt, gov;
	const char *status, *g;
	size_t n = 0;
	int r;

	if (feat_declare(fs, PSTATE, FEAT_ATTRS) < 0)
		return oom(err);
	if (!amd64 || stat_errno(sysfs, "devices/system/cpu") ||
	    stat_errno(sysfs, "devices/system/cpu/intel_pstate") == ENOENT)
		return 0;
	snprintf(dir, sizeof(dir), "%s/devices/system/cpu/intel_pstate", sysfs);
	status = hf_value(dir, "status", &b);
	if (!status || !strcmp(status, "off"))
		return 0;
	if (feat_attr_set(fs, PSTATE, "status", status) < 0)
		return oom(err);
	/* NFD indexes the first byte; an empty no_turbo (never seen) is left out here, not a panic
	 */
	if (hf_read(dir, "no_turbo", &nt) && nt.len &&
	    feat_attr_set(fs, PSTATE, "turbo", nt.s[0] == '0' ? "true" : "false") < 0)
		return oom(err);
	if (strcmp(status, "active"))
		return 0;
	snprintf(dir, sizeof(dir), "%s/devices/system/cpu/cpufreq", sysfs);
	r = hf_list(dir, &names, &n, err);
	if (r != 0)
		return r < 0 ? r : 0;
	g = pstate_governor(dir, names, n, &gov);
	fs_names_free(names, n);
	if (g && feat_attr_set(fs, PSTATE, "scaling_governor", g) < 0)
		return oom(err);
	return 0;
}

/*
 * source/cpu/rdt_linux_amd64.go getNumClosID: num_closids of the resctrl
 * filesystem's info/<level> minus one (the default group); -1 when unreadable.
 * NFD finds resctrl with runc's intelrdt.Root() (its own mount table); here it
 * is the kernel's documented mount point <sysfs>/fs/resctrl.
 */
static long long rdt_closids(const char *sysfs, const char *level)
{
	char rel[64];
	struct hf_buf b;
	const char *v;
	long long n;

	snprintf(rel, sizeof(rel), "fs/resctrl/info/%s/num_closids", level);
	v = hf_value(sysfs, rel, &b);
	return v && goconv_atoi(v, &n) && n > 0 ? n - 1 : -1;
}

static int rdt_set(struct feat_set *fs, const char *key)
{
	return feat_attr_set(fs, RDT, key, "true");
}

/* source/cpu/rdt_linux_amd64.go discoverRDT: always made; "true" elements only. */
int hostfeat_cpu_rdt(const char *sysfs, const struct cpu_x86 *src, struct feat_set *fs,
		     struct log_err *err)
{
	struct cpu_regs ext = {0}, mon = {0}, l3mon = {0}, alloc = {0};
	char s[24];
	long long closids;
	int r = feat_declare(fs, RDT, FEAT_ATTRS);

	if (r < 0 || !src) /* rdt_stub.go: an empty map off amd64 */
		return r < 0 ? oom(err) : 0;
	src->cpuid(src, 0x07, 0, &ext);
	src->cpuid(src, 0x0f, 0, &mon);
	src->cpuid(src, 0x0f, 1, &l3mon);
	src->cpuid(src, 0x10, 0, &alloc);
	/* monitoring: EBX bit 12 of leaf 7, then L3 monitoring (leaf 0xf EDX bit 1) */
	if ((ext.ebx & 1u << 12) && (mon.edx & 1u << 1)) {
		r = rdt_set(fs, "RDTMON");
		if (r == 0 && (l3mon.edx & 1u << 0))
			r = rdt_set(fs, "RDTCMT");
		if (r == 0 && (l3mon.edx & 1u << 1) && (l3mon.edx & 1u << 2))
			r = rdt_set(fs, "RDTMBM");
	}
	/* allocation: EBX bit 15 of leaf 7, then leaf 0x10 EBX bits 1 (L3), 2 (L2), 3 (MBA) */
	if (r == 0 && (ext.ebx & 1u << 15)) {
		if (alloc.ebx & 1u << 1) {
			r = rdt_set(fs, "RDTL3CA");
			closids = rdt_closids(sysfs, "L3");
			snprintf(s, sizeof(s), "%lld", closids);
			if (r == 0 && closids > -1)
				r = feat_attr_set(fs, RDT, "RDTL3CA_NUM_CLOSID", s);
		}
		if (r == 0 && (alloc.ebx & 1u << 2))
			r = rdt_set(fs, "RDTL2CA");
		if (r == 0 && (alloc.ebx & 1u << 3))
			r = rdt_set(fs, "RDTMBA");
	}
	return r < 0 ? oom(err) : 0;
}

/*
 * source/cpu/power_amd64.go discoverSSTBF: true when some cpu's
 * cpufreq/base_frequency (kHz) / 1000 exceeds the nominal base frequency
 * (MHz, cpuid leaf 0x16 EAX). A missing file is skipped; any other read or
 * parse error, or a nominal frequency of 0, is "not known" (false).
 */
static bool sst_bf(const char *devs, char **names, size_t n, long long nominal)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char dir[4096 + 300];
		struct hf_buf b;
		const char *v;
		long long eff;

		snprintf(dir, sizeof(dir), "%s/%s/cpufreq", devs, names[i]);
		v = hf_value(dir, "base_frequency", &b);
		if (!v) {
			if (stat_errno(dir, "base_frequency") == ENOENT)
				continue;
			return false;
		}
		if (!goconv_atoi(v, &eff) || nominal == 0)
			return false;
		if (eff / 1000 > nominal)
			return true;
	}
	return false;
}

/* source/cpu/power_amd64.go discoverSST: always made; bf.enabled only when true. */
int hostfeat_cpu_sst(const char *sysfs, const struct cpu_x86 *src, struct feat_set *fs,
		     struct log_err *err)
{
	char devs[4096], **names = NULL;
	struct cpu_regs freq = {0};
	size_t n = 0;
	bool bf;
	int r = feat_declare(fs, SST, FEAT_ATTRS);

	if (r < 0 || !src) /* power_stub.go: nil off amd64, an empty feature */
		return r < 0 ? oom(err) : 0;
	src->cpuid(src, 0x16, 0, &freq);
	snprintf(devs, sizeof(devs), "%s/bus/cpu/devices", sysfs);
	r = hf_list(devs, &names, &n, err);
	if (r != 0)
		return r < 0 ? r : 0;
	/* Go's int(EAX): EAX as an unsigned 32-bit value */
	bf = sst_bf(devs, names, n, (long long)freq.eax);
	fs_names_free(names, n);
	if (bf && feat_attr_set(fs, SST, "bf.enabled", "true") < 0)
		return oom(err);
	return 0;
}

/* source/cpu/coprocessor_ppc64le.go: nx_gzip when the NX GZIP capabilities exist (ppc64le). */
int hostfeat_cpu_coprocessor(const char *sysfs, bool ppc64le, struct feat_set *fs,
			     struct log_err *err)
{
	if (feat_declare(fs, COPROCESSOR, FEAT_ATTRS) < 0)
		return oom(err);
	if (ppc64le && !stat_errno(sysfs, "devices/vio/ibm,compression-v1/nx_gzip_caps") &&
	    feat_attr_set(fs, COPROCESSOR, "nx_gzip", "true") < 0)
		return oom(err);
	return 0;
}
