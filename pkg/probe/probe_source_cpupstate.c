/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "cpupstate": cpu.pstate from sysfs, as NFD v0.19's cpu source. */
#include "hostfeat/hostfeat.h"
#include "probe/probe.h"
#include "probe/probe_cpuid.h"

static int cpupstate_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return hostfeat_cpu_pstate(ctx->opts->sysfs, PROBE_AMD64, ctx->features, err);
}

const struct probe_source probe_source_cpupstate = {
    .name = "cpupstate",
    .help = "cpu.pstate: <sysfs>/devices/system/cpu/intel_pstate and cpufreq (amd64)",
    .features = "cpu.pstate",
    .scan = cpupstate_scan,
};
