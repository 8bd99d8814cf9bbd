/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "cpu": cpu.cpuid and cpu.model (x86: cpuid instruction or --cpuid dump; ARM:
 * <proc>/cpuinfo). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "feature/feature.h"
#include "log/log.h"
#include "probe/probe.h"
#include "strbuf/strbuf.h"

/* Read path, at most max bytes (what: the file's kind, for the message). */
static int read_bounded(const char *path, size_t max, const char *what, struct strbuf *sb,
			struct log_err *err)
{
	int r;

	sb_init(sb, max);
	r = sb_read_file(sb, path);
	if (r == -E2BIG)
		return log_err_set(err, r, "%s: larger than the %zu MiB limit for %s", path,
				   max >> 20, what);
	if (r < 0 && r != -ENOENT)
		return log_err_set(err, r, "%s: %s", path,
				   r == -EINVAL ? "not a regular file" : strerror(-r));
	return r;
}

static int from_dump(const char *path, struct probe_ctx *ctx, struct log_err *err)
{
	struct strbuf sb;
	struct cpu_x86 src;
	int r = read_bounded(path, CPU_DUMP_MAX, "a cpuid dump", &sb, err);

	if (r == -ENOENT)
		r = log_err_set(err, r, "--cpuid %s: %s", path, strerror(ENOENT));
	if (r < 0)
		goto out;
	r = cpu_x86_dump(sb.buf, sb.len, &src);
	if (r < 0) {
		r = log_err_set(err, r, "--cpuid %s: %s", path,
				r == -ENOMEM
				    ? "out of memory"
				    : "no '0xLEAF 0xSUB: eax=... edx=...' lines (cpuid -r -1)");
		goto out;
	}
	r = cpu_x86_features(&src, ctx->features);
	cpu_x86_dump_free(&src);
	if (r < 0)
		r = log_err_set(err, r, "out of memory");
out:
	sb_free(&sb);
	return r;
}

static int from_cpuinfo(struct probe_ctx *ctx, enum cpu_arch arch, struct log_err *err)
{
	char path[4096];
	struct strbuf sb;
	int r;

	snprintf(path, sizeof(path), "%s/cpuinfo", ctx->opts->proc);
	r = read_bounded(path, CPU_CPUINFO_MAX, "cpuinfo", &sb, err);
	if (r == -ENOENT) {
		log_info("%s: not found, no cpu features", path);
		r = 0;
	} else if (r >= 0 && cpu_parse_cpuinfo(sb.buf, sb.len, arch, ctx->features) < 0) {
		r = log_err_set(err, -ENOMEM, "out of memory");
	}
	sb_free(&sb);
	return r < 0 ? r : 0;
}

#if !defined(__aarch64__) && !defined(__arm__)
static int detect_deferred(void *arg, struct feat_set *fs)
{
	return cpu_x86_features(arg, fs);
}

/*
 * x86: the features exist now, their flags are detected when a rule reads
 * one (feat_defer): in a VM each cpuid leaf traps to the hypervisor (7-50 us,
 * 15 leaves), wasted when the rules only test that cpu.cpuid exists.
 */
static int defer_live(const struct cpu_x86 *live, struct feat_set *fs, struct log_err *err)
{
	static const char *const names[] = {CPU_CPUID, CPU_MODEL};
	struct cpu_x86 *src = malloc(sizeof(*src));

	/* cpu.cpuid is flags plus the attribute AVX10_VERSION, as NFD (which always makes both) */
	if (!src || feat_declare(fs, CPU_CPUID, FEAT_FLAGS) < 0 ||
	    feat_declare(fs, CPU_CPUID, FEAT_ATTRS) < 0 ||
	    feat_declare(fs, CPU_MODEL, FEAT_ATTRS) < 0) {
		free(src);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	*src = *live;
	/* -ENOMEM freed src; -EINVAL (deferred already) cannot happen: one cpu source */
	if (feat_defer(fs, names, 2, detect_deferred, src, free) < 0)
		return log_err_set(err, -ENOMEM, "out of memory");
	return 0;
}
#endif

static int cpu_source_scan(struct probe_ctx *ctx, struct log_err *err)
{
	struct cpu_x86 live;

	if (ctx->opts->cpuid)
		return from_dump(ctx->opts->cpuid, ctx, err);
#if defined(__aarch64__)
	(void)live;
	return from_cpuinfo(ctx, CPU_ARCH_ARM64, err);
#elif defined(__arm__)
	(void)live;
	return from_cpuinfo(ctx, CPU_ARCH_ARM, err);
#else
	(void)from_cpuinfo;
	if (cpu_x86_live(&live) < 0) {
		log_info("cpu: no cpuid on this architecture, no cpu features");
		return 0;
	}
	return defer_live(&live, ctx->features, err);
#endif
}

const struct probe_source probe_source_cpu = {
    .name = "cpu",
    .help = "cpu.cpuid and cpu.model: x86 cpuid (or --cpuid FILE), ARM <proc>/cpuinfo",
    .features = "cpu.cpuid cpu.model",
    .scan = cpu_source_scan,
};
