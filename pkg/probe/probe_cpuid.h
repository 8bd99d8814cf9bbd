/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe_cpuid: the x86 cpuid values the cpu.* sources read (instruction or --cpuid dump). */
#ifndef NP_PROBE_CPUID_H
#define NP_PROBE_CPUID_H

#include <stdbool.h>

#include "cpu/cpu.h"

struct log_err;
struct probe_ctx;

/* One source's view of cpuid: use is &src, or NULL off x86 (no instruction, no dump). */
struct probe_cpuid {
	struct cpu_x86 src;
	const struct cpu_x86 *use;
	bool dump; /* src holds a dump: free it */
};

/*
 * Fill pc from --cpuid (the dump, checked again: -EINVAL with err naming the
 * file when it is not a dump, -ENOMEM) or the instruction. Returns 0 or <0;
 * release with probe_cpuid_free in both cases.
 */
int probe_cpuid_get(const struct probe_ctx *ctx, struct probe_cpuid *pc, struct log_err *err);
void probe_cpuid_free(struct probe_cpuid *pc);

/* Whether this build is for NFD's amd64 / ppc64le (the arch-only parts of its cpu source). */
#if defined(__x86_64__)
#define PROBE_AMD64 true
#else
#define PROBE_AMD64 false
#endif
#if defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
#define PROBE_PPC64LE true
#else
#define PROBE_PPC64LE false
#endif

#endif
