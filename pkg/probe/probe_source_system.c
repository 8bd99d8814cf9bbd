/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "system": system.name (NODE_NAME) and system.dmiid, as NFD v0.19. */
#include <stdlib.h>

#include "hostfeat/hostfeat.h"
#include "probe/probe.h"

static int system_scan(struct probe_ctx *ctx, struct log_err *err)
{
	/* NFD's utils.NodeName(): the NODE_NAME environment variable (the downward API) */
	return hostfeat_system(ctx->opts->sysfs, getenv("NODE_NAME"), ctx->features, err);
}

const struct probe_source probe_source_system = {
    .name = "system",
    .help = "system.name (NODE_NAME) and system.dmiid (<sysfs>/devices/virtual/dmi/id)",
    .features = "system.name system.dmiid",
    .scan = system_scan,
};
