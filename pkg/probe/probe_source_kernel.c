/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "kernel": loaded and built-in modules as kernel.loadedmodule / kernel.enabledmodule.
 */
#include "kernel/kernel.h"
#include "log/log.h"
#include "probe/probe.h"

static int kernel_scan_source(struct probe_ctx *ctx, struct log_err *err)
{
	return kernel_scan_modules(ctx->opts->proc, ctx->opts->modules_dir, ctx->features, err);
}

const struct probe_source probe_source_kernel = {
    .name = "kernel",
    .help = "<proc>/modules and <modules_dir>/modules.builtin as kernel module features",
    .scan = kernel_scan_source,
};
