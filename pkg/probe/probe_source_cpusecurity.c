/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "cpusecurity": cpu.security (SGX, TDX, SEV) as NFD v0.19's cpu source. */
#include "hostfeat/hostfeat.h"
#include "probe/probe.h"
#include "probe/probe_cpuid.h"

static int cpusecurity_scan(struct probe_ctx *ctx, struct log_err *err)
{
	return probe_cpuid_scan(ctx, hostfeat_cpu_security, err);
}

const struct probe_source probe_source_cpusecurity = {
    .name = "cpusecurity",
    .help = "cpu.security: SGX (cpuid), TDX and SEV (<sysfs>/module, the misc cgroup)",
    .features = "cpu.security",
    .scan = cpusecurity_scan,
};
