/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "memory": memory.numa, .swap, .nv, .hugepages, as NFD v0.19. */
#include "hostfeat/hostfeat.h"
#include "probe/probe.h"

static int memory_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return hostfeat_memory(ctx->opts->sysfs, ctx->opts->proc, ctx->features, err);
}

const struct probe_source probe_source_memory = {
    .name = "memory",
    .help = "memory.numa, memory.swap (<proc>/swaps), memory.nv, memory.hugepages",
    .features = "memory.",
    .scan = memory_scan,
};
