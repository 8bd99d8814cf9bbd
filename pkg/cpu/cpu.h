/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cpu: NFD's cpu.cpuid flags and cpu.model (x86: the cpuid instruction or a dump; ARM: cpuinfo). */
#ifndef NP_CPU_H
#define NP_CPU_H

#include <stddef.h>
#include <stdint.h>

struct feat_set;
struct log_err;

#define CPU_CPUID	"cpu.cpuid" /* flags: NFD's names (klauspost/cpuid, NFD's ARM tables) */
#define CPU_MODEL	"cpu.model" /* attributes: vendor_id, family, id, hypervisor */
#define CPU_CPUINFO_MAX (8u << 20)  /* bytes read of <proc>/cpuinfo */
#define CPU_DUMP_MAX	(1u << 20)  /* bytes read of a cpuid dump */
#define CPU_DUMP_LEAVES 4096	    /* leaves kept from a dump */

/* The registers one cpuid leaf returns. */
struct cpu_regs {
	uint32_t eax, ebx, ecx, edx;
};

/* Where x86 cpuid values come from: the instruction, or a dump (tests, another machine). */
struct cpu_x86 {
	/* fill r for leaf/subleaf (zeros for a leaf the source does not have) */
	void (*cpuid)(const struct cpu_x86 *src, uint32_t leaf, uint32_t sub, struct cpu_regs *r);
	uint64_t xcr0;	  /* XGETBV(0): the register states the OS enabled */
	const void *dump; /* the dump's leaves, for cpu_x86_dump's cpuid (owned by the dump) */
	size_t n;	  /* leaves in dump */
};

/*
 * The x86 features of src as NFD's cpu source reports them through
 * klauspost/cpuid v2 (cpuid.go support(), familyModel(), vendorID(); NFD's
 * source/cpu/cpuid_amd64.go and cpu.go getCPUModel): cpu.cpuid gets the
 * library's FeatureID names (AVX512F, SGX, SGXLC, ...) of every feature
 * detected, with the library's OS checks (AVX and AVX-512 need the XCR0
 * states), plus X86_64_V1..V<level>; cpu.model gets vendor_id (the library's
 * vendor name: Intel, AMD, Hygon, ...; VendorUnknown), family and id
 * (decimal, with extended family/model as the library adds them) and
 * hypervisor ("none" without the hypervisor bit, else the lower-cased
 * hypervisor vendor: kvm, msvm, vmware, ...). Returns 0 or -ENOMEM.
 */
int cpu_x86_features(const struct cpu_x86 *src, struct feat_set *fs);

/* src reading this machine's cpuid instruction and XGETBV. Returns 0, or -ENOTSUP off x86. */
int cpu_x86_live(struct cpu_x86 *src);

/*
 * Parse a dump in the format of Debian's cpuid tool (`cpuid -r -1`): lines
 * "   0x00000007 0x00: eax=0x... ebx=0x... ecx=0x... edx=0x..."; other lines
 * are ignored, except an optional "xcr0=0x..." line. Without it XCR0 is
 * CPUID.(0xD,0).EAX, the states the CPU supports (Linux enables them all).
 * src is filled (its leaves owned: free with cpu_x86_dump_free). Returns the
 * number of leaves, -EINVAL (no leaf, or more than CPU_DUMP_LEAVES), -ENOMEM.
 */
int cpu_x86_dump(const char *text, size_t len, struct cpu_x86 *src);
void cpu_x86_dump_free(struct cpu_x86 *src);

enum cpu_arch {
	CPU_ARCH_ARM64 = 0, /* aarch64 kernel: NFD's cpuid_linux_arm64.go names */
	CPU_ARCH_ARM = 1,   /* 32-bit arm kernel: NFD's cpuid_linux_arm.go names */
};

/*
 * ARM: cpu.cpuid and cpu.model from the text of /proc/cpuinfo. The kernel
 * prints the hwcaps (AT_HWCAP/AT_HWCAP2, which NFD reads with getauxval) by
 * name on the first "Features" line; each name NFD's table for arch has
 * becomes its flag (arm64: upper case; arm: NFD's spelling, fastmult ->
 * FASTMUL, vfpv3 -> VFPv3). cpu.model as klauspost/cpuid reads MIDR_EL1 on
 * arm64: vendor_id from "CPU implementer" (0x41 ARM, 0x4e NVIDIA, 0xc0
 * Ampere, ...), family = variant << 4 | 0xf (MIDR bits 23:16; the
 * architecture field of every ARMv8 MIDR is 0xf), id = part << 4 | revision
 * (bits 15:0); VendorUnknown/0/0 when "cpuid" is not among the hwcaps (no
 * MIDR access) or on arm. hypervisor is "none". No Features line: no
 * features, 0. Returns 0 or -ENOMEM.
 */
int cpu_parse_cpuinfo(const char *text, size_t len, enum cpu_arch arch, struct feat_set *fs);

#endif
