/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe_cpuid: cpuid from the instruction or a --cpuid dump, for the cpu.* sources. */
#include "probe/probe_cpuid.h"

#include <errno.h>
#include <string.h>

#include "cpu/cpu.h"
#include "log/log.h"
#include "probe/probe.h"
#include "strbuf/strbuf.h"

/* One source's view of cpuid: use is &src, or NULL off x86 (no instruction, no dump). */
struct probe_cpuid {
	struct cpu_x86 src;
	const struct cpu_x86 *use;
	bool dump; /* src holds a dump: free it */
};

static int probe_cpuid_get(const struct probe_ctx *ctx, struct probe_cpuid *pc, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(CPU_DUMP_MAX);
	int r = 0;

	pc->use = NULL;
	pc->dump = false;
	if (!ctx->opts->cpuid) {
		if (cpu_x86_live(&pc->src) == 0)
			pc->use = &pc->src;
		return 0;
	}
	/* the cpu source checked the dump already when a rule reads cpu.cpuid; here again */
	r = sb_read_file(&sb, ctx->opts->cpuid);
	if (r >= 0 && cpu_x86_dump(sb.buf, sb.len, &pc->src) > 0) {
		pc->use = &pc->src;
		pc->dump = true;
		r = 0;
	} else {
		r = log_err_set(err, r == -ENOMEM ? r : -EINVAL, "--cpuid %s: %s", ctx->opts->cpuid,
				r < 0 ? strerror(-r) : "not a cpuid dump (cpuid -r -1)");
	}
	sb_free(&sb);
	return r;
}

static void probe_cpuid_free(struct probe_cpuid *pc)
{
	if (pc->dump)
		cpu_x86_dump_free(&pc->src);
	pc->dump = false;
	pc->use = NULL;
}

int probe_cpuid_scan(struct probe_ctx *ctx, probe_cpuid_fn fn, struct log_err *err)
{
	struct probe_cpuid pc;
	int r = probe_cpuid_get(ctx, &pc, err);

	if (r == 0)
		r = fn(ctx->opts->sysfs, pc.use, ctx->features, err);
	probe_cpuid_free(&pc);
	return r;
}
