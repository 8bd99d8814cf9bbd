/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "cpucoprocessor": cpu.coprocessor from sysfs, as NFD v0.19's cpu source. */
#include "hostfeat/hostfeat.h"
#include "probe/probe.h"
#include "probe/probe_cpuid.h"

static int cpucoprocessor_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return hostfeat_cpu_coprocessor(ctx->opts->sysfs, PROBE_PPC64LE, ctx->features, err);
}

const struct probe_source probe_source_cpucoprocessor = {
    .name = "cpucoprocessor",
    .help = "cpu.coprocessor: nx_gzip from <sysfs>/devices/vio (ppc64le)",
    .features = "cpu.coprocessor",
    .scan = cpucoprocessor_scan,
};
