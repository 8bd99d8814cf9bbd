/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "network": network.device and network.virtual from <sysfs>/class/net (NFD v0.19). */
#include "hostfeat/hostfeat.h"
#include "probe/probe.h"

static int network_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return hostfeat_network(ctx->opts->sysfs, ctx->features, err);
}

const struct probe_source probe_source_network = {
    .name = "network",
    .help = "network.device and network.virtual: <sysfs>/class/net",
    .features = "network.",
    .scan = network_scan,
};
