/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe_cpuid: the x86 cpuid values the cpu.* sources read (instruction or --cpuid dump). */
#ifndef NP_PROBE_CPUID_H
#define NP_PROBE_CPUID_H

#include <stdbool.h>

struct cpu_x86;
struct feat_set;
struct log_err;
struct probe_ctx;

/* A pkg/hostfeat reader of sysfs and cpuid (src NULL off x86). */
typedef int (*probe_cpuid_fn)(const char *sysfs, const struct cpu_x86 *src, struct feat_set *fs,
			      struct log_err *err);

/*
 * A cpuid source's scan: fn on ctx's sysfs and features, with cpuid from --cpuid
 * (the dump, checked again: -EINVAL with err naming the file when it is not
 * one, -ENOMEM) or the instruction (src NULL off x86). Returns 0 or <0.
 */
int probe_cpuid_scan(struct probe_ctx *ctx, probe_cpuid_fn fn, struct log_err *err);

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
