/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "cpucstate": cpu.cstate from sysfs, as NFD v0.19's cpu source. */
#include "hostfeat/hostfeat.h"
#include "probe/probe.h"
#include "probe/probe_cpuid.h"

static int cpucstate_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return hostfeat_cpu_cstate(ctx->opts->sysfs, PROBE_AMD64, ctx->features, err);
}

const struct probe_source probe_source_cpucstate = {
    .name = "cpucstate",
    .help = "cpu.cstate: <sysfs>/devices/system/cpu/cpuidle, intel_idle max_cstate (amd64)",
    .features = "cpu.cstate",
    .scan = cpucstate_scan,
};
