/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "cpusecurity": cpu.security (SGX, TDX, SEV) as NFD v0.19's cpu source. */
#include <errno.h>
#include <string.h>

#include "cpu/cpu.h"
#include "hostfeat/hostfeat.h"
#include "log/log.h"
#include "probe/probe.h"
#include "strbuf/strbuf.h"

static int cpusecurity_scan(struct probe_ctx *ctx, struct log_err *err)
{
	struct cpu_x86 src;
	const struct cpu_x86 *use = NULL;
	struct strbuf sb = STRBUF_INIT(CPU_DUMP_MAX);
	bool dump = false;
	int r = 0;

	if (ctx->opts->cpuid) {
		/* the cpu source checked the dump already when a rule reads cpu.cpuid; here again
		 */
		r = sb_read_file(&sb, ctx->opts->cpuid);
		if (r >= 0 && cpu_x86_dump(sb.buf, sb.len, &src) > 0) {
			use = &src;
			dump = true;
		} else {
			r = log_err_set(err, r == -ENOMEM ? r : -EINVAL, "--cpuid %s: %s",
					ctx->opts->cpuid,
					r < 0 ? strerror(-r) : "not a cpuid dump (cpuid -r -1)");
		}
	} else if (cpu_x86_live(&src) == 0) {
		use = &src;
	}
	if (r >= 0)
		r = hostfeat_cpu_security(ctx->opts->sysfs, use, ctx->features, err);
	if (dump)
		cpu_x86_dump_free(&src);
	sb_free(&sb);
	return r;
}

const struct probe_source probe_source_cpusecurity = {
    .name = "cpusecurity",
    .help = "cpu.security: SGX (cpuid), TDX and SEV (<sysfs>/module, the misc cgroup)",
    .features = "cpu.security",
    .scan = cpusecurity_scan,
};
