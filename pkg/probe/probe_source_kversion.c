/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "kversion": <proc>/sys/kernel/osrelease as kernel.version (NFD's parsing). */
#include "kernel/kernel.h"
#include "probe/probe.h"

static int kversion_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return kernel_scan_version(ctx->opts->proc, ctx->features, NULL, 0, err);
}

const struct probe_source probe_source_kversion = {
    .name = "kversion",
    .help = "<proc>/sys/kernel/osrelease as kernel.version (full, major, minor, revision)",
    .features = "kernel.version",
    .scan = kversion_scan,
};
