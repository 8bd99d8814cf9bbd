/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "storage": storage.block from <sysfs>/block, as NFD v0.19. */
#include "hostfeat/hostfeat.h"
#include "probe/probe.h"

static int storage_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return hostfeat_storage(ctx->opts->sysfs, ctx->features, err);
}

const struct probe_source probe_source_storage = {
    .name = "storage",
    .help = "storage.block: <sysfs>/block/*/queue",
    .features = "storage.",
    .scan = storage_scan,
};
