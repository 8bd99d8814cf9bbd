/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "osrelease": the host's os-release file (--os-release) as system.osrelease. */
#include "osrelease/osrelease.h"
#include "probe/probe.h"

static int osrelease_source_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return osrelease_scan(ctx->opts->os_release, ctx->features, err);
}

const struct probe_source probe_source_osrelease = {
    .name = "osrelease",
    .help = "--os-release FILE (the host's /etc/os-release) as system.osrelease",
    .features = "system.osrelease",
    .scan = osrelease_source_scan,
};
