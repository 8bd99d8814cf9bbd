/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "kconfig": <proc>/config.gz or <boot>/config-RELEASE as kernel.config. */
#include "kernel/kernel.h"
#include "probe/probe.h"

static int kconfig_scan(struct probe_ctx *ctx, struct log_err *err)
{
	char release[KERNEL_RELEASE_MAX + 1];
	int r;

	/* the release is the one of the kernel the proc root shows, not ours (uname) */
	r = kernel_scan_version(ctx->opts->proc, NULL, release, sizeof(release), err);
	if (r < 0)
		return r;
	return kernel_scan_config(ctx->opts->proc, ctx->opts->boot, release, ctx->features, err);
}

const struct probe_source probe_source_kconfig = {
    .name = "kconfig",
    .help = "<proc>/config.gz, else <boot>/config-RELEASE, as kernel.config",
    .features = "kernel.config",
    .scan = kconfig_scan,
};
