/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "ksys": kernel.selinux and kernel.kvm from sysfs, as NFD v0.19's kernel source. */
#include "hostfeat/hostfeat.h"
#include "probe/probe.h"

static int ksys_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return hostfeat_kernel(ctx->opts->sysfs, ctx->features, err);
}

const struct probe_source probe_source_ksys = {
    .name = "ksys",
    .help = "kernel.selinux (<sysfs>/fs/selinux/enforce) and kernel.kvm",
    .features = "kernel.selinux kernel.kvm",
    .scan = ksys_scan,
};
