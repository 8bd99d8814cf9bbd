/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "cpurdt": cpu.rdt as NFD v0.19's cpu source (x86 cpuid and sysfs). */
#include "hostfeat/hostfeat.h"
#include "probe/probe.h"
#include "probe/probe_cpuid.h"

static int cpurdt_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return probe_cpuid_scan(ctx, hostfeat_cpu_rdt, err);
}

const struct probe_source probe_source_cpurdt = {
    .name = "cpurdt",
    .help = "cpu.rdt: Intel RDT from cpuid leaves 7, 0xf, 0x10 and <sysfs>/fs/resctrl",
    .features = "cpu.rdt",
    .scan = cpurdt_scan,
};
