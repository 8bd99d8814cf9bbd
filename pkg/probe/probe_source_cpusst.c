/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "cpusst": cpu.sst as NFD v0.19's cpu source (x86 cpuid and sysfs). */
#include "hostfeat/hostfeat.h"
#include "probe/probe.h"
#include "probe/probe_cpuid.h"

static int cpusst_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return probe_cpuid_scan(ctx, hostfeat_cpu_sst, err);
}

const struct probe_source probe_source_cpusst = {
    .name = "cpusst",
    .help = "cpu.sst: SST-BF from cpuid leaf 0x16 and <sysfs>/bus/cpu/devices/*/cpufreq",
    .features = "cpu.sst",
    .scan = cpusst_scan,
};
