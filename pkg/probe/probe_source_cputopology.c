/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "cputopology": cpu.topology from <sysfs>/bus/cpu/devices, as NFD v0.19. */
#include "hostfeat/hostfeat.h"
#include "probe/probe.h"

static int cputopology_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return hostfeat_cpu_topology(ctx->opts->sysfs, ctx->features, err);
}

const struct probe_source probe_source_cputopology = {
    .name = "cputopology",
    .help = "cpu.topology: <sysfs>/bus/cpu/devices/*/topology",
    .features = "cpu.topology",
    .scan = cputopology_scan,
};
