/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cpu_x86: cpuid leaves (instruction or dump) as NFD's cpu.cpuid flags and cpu.model, via
 * klauspost/cpuid's rules. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "cpu/cpu.h"
#include "feature/feature.h"

enum reg { EAX, EBX, ECX, EDX };
enum gate {
	G_NONE,	  /* the bit alone */
	G_AVX,	  /* and AVX detected (VEX encodings need the OS's YMM state) */
	G_AVX512, /* and the OS enabled the opmask and ZMM states (XCR0) */
	G_SVM,	  /* and SVM detected */
	G_IBS,	  /* and IBS detected */
	G_XSAVE,  /* and XSAVE detected */
	G_AMD,	  /* and the vendor is AMD */
};

/*
 * One feature bit: klauspost/cpuid v2's support() (cpuid.go), restated as data.
 * Rows run in order; a gate only refers to rows above it. Basic leaves count
 * when the maximum leaf (CPUID.0:EAX) reaches them, extended ones when
 * CPUID.80000000h:EAX does.
 */
static const struct bit {
	uint32_t leaf, sub;
	unsigned char reg, bit, gate;
	const char *name;
} bits[] = {
    {1, 0, EDX, 0, G_NONE, "X87"},
    {1, 0, EDX, 8, G_NONE, "CMPXCHG8"},
    {1, 0, EDX, 11, G_NONE, "SYSEE"},
    {1, 0, EDX, 15, G_NONE, "CMOV"},
    {1, 0, EDX, 23, G_NONE, "MMX"},
    {1, 0, EDX, 24, G_NONE, "FXSR"},
    {1, 0, EDX, 25, G_NONE, "FXSROPT"},
    {1, 0, EDX, 25, G_NONE, "SSE"},
    {1, 0, EDX, 26, G_NONE, "SSE2"},
    {1, 0, ECX, 0, G_NONE, "SSE3"},
    {1, 0, ECX, 5, G_NONE, "VMX"},
    {1, 0, ECX, 9, G_NONE, "SSSE3"},
    {1, 0, ECX, 19, G_NONE, "SSE4"},
    {1, 0, ECX, 20, G_NONE, "SSE42"},
    {1, 0, ECX, 25, G_NONE, "AESNI"},
    {1, 0, ECX, 1, G_NONE, "CLMUL"},
    {1, 0, ECX, 22, G_NONE, "MOVBE"},
    {1, 0, ECX, 23, G_NONE, "POPCNT"},
    {1, 0, ECX, 30, G_NONE, "RDRAND"},
    {1, 0, ECX, 31, G_NONE, "HYPERVISOR"},
    {1, 0, ECX, 29, G_NONE, "F16C"},
    {1, 0, ECX, 13, G_NONE, "CX16"},
    {1, 0, ECX, 26, G_NONE, "XSAVE"},
    {1, 0, ECX, 27, G_NONE, "OSXSAVE"},
    /* leaf 7.0 */
    {7, 0, EBX, 5, G_AVX, "AVX2"},
    {7, 0, EBX, 2, G_NONE, "SGX"},
    {7, 0, EBX, 4, G_NONE, "HLE"},
    {7, 0, EBX, 9, G_NONE, "ERMS"},
    {7, 0, EBX, 11, G_NONE, "RTM"},
    {7, 0, EBX, 14, G_NONE, "MPX"},
    {7, 0, EBX, 18, G_NONE, "RDSEED"},
    {7, 0, EBX, 19, G_NONE, "ADX"},
    {7, 0, EBX, 29, G_NONE, "SHA"},
    {7, 0, ECX, 5, G_NONE, "WAITPKG"},
    {7, 0, ECX, 7, G_NONE, "CETSS"},
    {7, 0, ECX, 8, G_NONE, "GFNI"},
    {7, 0, ECX, 9, G_NONE, "VAES"},
    {7, 0, ECX, 10, G_NONE, "VPCLMULQDQ"},
    {7, 0, ECX, 13, G_NONE, "TME"},
    {7, 0, ECX, 25, G_NONE, "CLDEMOTE"},
    {7, 0, ECX, 23, G_NONE, "KEYLOCKER"},
    {7, 0, ECX, 27, G_NONE, "MOVDIRI"},
    {7, 0, ECX, 28, G_NONE, "MOVDIR64B"},
    {7, 0, ECX, 29, G_NONE, "ENQCMD"},
    {7, 0, ECX, 30, G_NONE, "SGXLC"},
    {7, 0, EDX, 4, G_NONE, "FSRM"},
    {7, 0, EDX, 9, G_NONE, "SRBDS_CTRL"},
    {7, 0, EDX, 10, G_NONE, "MD_CLEAR"},
    {7, 0, EDX, 11, G_NONE, "RTM_ALWAYS_ABORT"},
    {7, 0, EDX, 14, G_NONE, "SERIALIZE"},
    {7, 0, EDX, 15, G_NONE, "HYBRID_CPU"},
    {7, 0, EDX, 16, G_NONE, "TSXLDTRK"},
    {7, 0, EDX, 18, G_NONE, "PCONFIG"},
    {7, 0, EDX, 20, G_NONE, "CETIBT"},
    {7, 0, EDX, 26, G_NONE, "IBPB"},
    {7, 0, EDX, 27, G_NONE, "STIBP"},
    {7, 0, EDX, 28, G_NONE, "FLUSH_L1D"},
    {7, 0, EDX, 29, G_NONE, "IA32_ARCH_CAP"},
    {7, 0, EDX, 30, G_NONE, "IA32_CORE_CAP"},
    {7, 0, EDX, 31, G_NONE, "SPEC_CTRL_SSBD"},
    /* leaf 7.1 */
    {7, 1, EAX, 4, G_AVX, "AVXVNNI"},
    {7, 1, EAX, 1, G_NONE, "SM3_X86"},
    {7, 1, EAX, 2, G_NONE, "SM4_X86"},
    {7, 1, EAX, 7, G_NONE, "CMPCCXADD"},
    {7, 1, EAX, 10, G_NONE, "MOVSB_ZL"},
    {7, 1, EAX, 11, G_NONE, "STOSB_SHORT"},
    {7, 1, EAX, 12, G_NONE, "CMPSB_SCADBS_SHORT"},
    {7, 1, EAX, 22, G_NONE, "HRESET"},
    {7, 1, EAX, 23, G_NONE, "AVXIFMA"},
    {7, 1, EAX, 26, G_NONE, "LAM"},
    {7, 1, EDX, 4, G_NONE, "AVXVNNIINT8"},
    {7, 1, EDX, 5, G_NONE, "AVXNECONVERT"},
    {7, 1, EDX, 6, G_NONE, "AMXTRANSPOSE"},
    {7, 1, EDX, 7, G_NONE, "AMXTF32"},
    {7, 1, EDX, 8, G_NONE, "AMXCOMPLEX"},
    {7, 1, EDX, 10, G_NONE, "AVXVNNIINT16"},
    {7, 1, EDX, 14, G_NONE, "PREFETCHI"},
    {7, 1, EDX, 19, G_NONE, "AVX10"},
    {7, 1, EDX, 21, G_NONE, "APX_F"},
    /* AVX-512 and AMX: only with the OS's opmask/ZMM states */
    {7, 0, EBX, 16, G_AVX512, "AVX512F"},
    {7, 0, EBX, 17, G_AVX512, "AVX512DQ"},
    {7, 0, EBX, 21, G_AVX512, "AVX512IFMA"},
    {7, 0, EBX, 26, G_AVX512, "AVX512PF"},
    {7, 0, EBX, 27, G_AVX512, "AVX512ER"},
    {7, 0, EBX, 28, G_AVX512, "AVX512CD"},
    {7, 0, EBX, 30, G_AVX512, "AVX512BW"},
    {7, 0, EBX, 31, G_AVX512, "AVX512VL"},
    {7, 0, ECX, 1, G_AVX512, "AVX512VBMI"},
    {7, 0, ECX, 3, G_AVX512, "AMXFP8"},
    {7, 0, ECX, 6, G_AVX512, "AVX512VBMI2"},
    {7, 0, ECX, 11, G_AVX512, "AVX512VNNI"},
    {7, 0, ECX, 12, G_AVX512, "AVX512BITALG"},
    {7, 0, ECX, 14, G_AVX512, "AVX512VPOPCNTDQ"},
    {7, 0, EDX, 8, G_AVX512, "AVX512VP2INTERSECT"},
    {7, 0, EDX, 22, G_AVX512, "AMXBF16"},
    {7, 0, EDX, 23, G_AVX512, "AVX512FP16"},
    {7, 0, EDX, 24, G_AVX512, "AMXTILE"},
    {7, 0, EDX, 25, G_AVX512, "AMXINT8"},
    {7, 1, EAX, 5, G_AVX512, "AVX512BF16"},
    {7, 1, EAX, 19, G_AVX512, "WRMSRNS"},
    {7, 1, EAX, 21, G_AVX512, "AMXFP16"},
    {7, 1, EAX, 27, G_AVX512, "MSRLIST"},
    /* leaf 7.2 */
    {7, 2, EDX, 0, G_NONE, "PSFD"},
    {7, 2, EDX, 1, G_NONE, "IDPRED_CTRL"},
    {7, 2, EDX, 2, G_NONE, "RRSBA_CTRL"},
    {7, 2, EDX, 4, G_NONE, "BHI_CTRL"},
    {7, 2, EDX, 5, G_NONE, "MCDT_NO"},
    /* leaf 0xd.1 */
    {0xd, 1, EAX, 0, G_XSAVE, "XSAVEOPT"},
    {0xd, 1, EAX, 1, G_XSAVE, "XSAVEC"},
    {0xd, 1, EAX, 2, G_XSAVE, "XGETBV1"},
    {0xd, 1, EAX, 3, G_XSAVE, "XSAVES"},
    /* extended leaves */
    {0x80000001, 0, ECX, 5, G_NONE, "LZCNT"},
    {0x80000001, 0, ECX, 5, G_NONE, "POPCNT"},
    {0x80000001, 0, ECX, 0, G_NONE, "LAHF"},
    {0x80000001, 0, ECX, 2, G_NONE, "SVM"},
    {0x80000001, 0, ECX, 6, G_NONE, "SSE4A"},
    {0x80000001, 0, ECX, 10, G_NONE, "IBS"},
    {0x80000001, 0, ECX, 22, G_NONE, "TOPEXT"},
    {0x80000001, 0, EDX, 11, G_NONE, "SYSCALL"},
    {0x80000001, 0, EDX, 20, G_NONE, "NX"},
    {0x80000001, 0, EDX, 22, G_NONE, "MMXEXT"},
    {0x80000001, 0, EDX, 23, G_NONE, "MMX"},
    {0x80000001, 0, EDX, 24, G_NONE, "FXSR"},
    {0x80000001, 0, EDX, 25, G_NONE, "FXSROPT"},
    {0x80000001, 0, EDX, 27, G_NONE, "RDTSCP"},
    {0x80000001, 0, EDX, 30, G_NONE, "AMD3DNOWEXT"},
    {0x80000001, 0, EDX, 31, G_NONE, "AMD3DNOW"},
    {0x80000001, 0, ECX, 11, G_AVX, "XOP"},
    {0x80000001, 0, ECX, 16, G_AVX, "FMA4"},
    {0x80000007, 0, EBX, 0, G_NONE, "MCAOVERFLOW"},
    {0x80000007, 0, EBX, 1, G_NONE, "SUCCOR"},
    {0x80000007, 0, EBX, 2, G_NONE, "HWA"},
    {0x80000007, 0, EDX, 9, G_NONE, "CPBOOST"},
    {0x80000008, 0, EBX, 28, G_NONE, "PSFD"},
    {0x80000008, 0, EBX, 27, G_NONE, "CPPC"},
    {0x80000008, 0, EBX, 24, G_NONE, "SPEC_CTRL_SSBD"},
    {0x80000008, 0, EBX, 23, G_NONE, "PPIN"},
    {0x80000008, 0, EBX, 21, G_NONE, "TLB_FLUSH_NESTED"},
    {0x80000008, 0, EBX, 20, G_NONE, "EFER_LMSLE_UNS"},
    {0x80000008, 0, EBX, 19, G_NONE, "IBRS_PROVIDES_SMP"},
    {0x80000008, 0, EBX, 18, G_NONE, "IBRS_PREFERRED"},
    {0x80000008, 0, EBX, 17, G_NONE, "STIBP_ALWAYSON"},
    {0x80000008, 0, EBX, 15, G_NONE, "STIBP"},
    {0x80000008, 0, EBX, 14, G_NONE, "IBRS"},
    {0x80000008, 0, EBX, 13, G_NONE, "INT_WBINVD"},
    {0x80000008, 0, EBX, 12, G_NONE, "IBPB"},
    {0x80000008, 0, EBX, 9, G_NONE, "WBNOINVD"},
    {0x80000008, 0, EBX, 8, G_NONE, "MCOMMIT"},
    {0x80000008, 0, EBX, 4, G_NONE, "RDPRU"},
    {0x80000008, 0, EBX, 3, G_NONE, "INVLPGB"},
    {0x80000008, 0, EBX, 1, G_NONE, "MSRIRC"},
    {0x80000008, 0, EBX, 0, G_NONE, "CLZERO"},
    {0x8000000a, 0, EDX, 0, G_SVM, "SVMNP"},
    {0x8000000a, 0, EDX, 1, G_SVM, "LBRVIRT"},
    {0x8000000a, 0, EDX, 2, G_SVM, "SVML"},
    {0x8000000a, 0, EDX, 3, G_SVM, "NRIPS"},
    {0x8000000a, 0, EDX, 4, G_SVM, "TSCRATEMSR"},
    {0x8000000a, 0, EDX, 5, G_SVM, "VMCBCLEAN"},
    {0x8000000a, 0, EDX, 6, G_SVM, "SVMFBASID"},
    {0x8000000a, 0, EDX, 7, G_SVM, "SVMDA"},
    {0x8000000a, 0, EDX, 10, G_SVM, "SVMPF"},
    {0x8000000a, 0, EDX, 12, G_SVM, "SVMPFT"},
    {0x8000001a, 0, EAX, 0, G_NONE, "FP128"},
    {0x8000001a, 0, EAX, 1, G_NONE, "MOVU"},
    {0x8000001a, 0, EAX, 2, G_NONE, "FP256"},
    {0x8000001b, 0, EAX, 0, G_IBS, "IBSFFV"},
    {0x8000001b, 0, EAX, 1, G_IBS, "IBSFETCHSAM"},
    {0x8000001b, 0, EAX, 2, G_IBS, "IBSOPSAM"},
    {0x8000001b, 0, EAX, 3, G_IBS, "IBSRDWROPCNT"},
    {0x8000001b, 0, EAX, 4, G_IBS, "IBSOPCNT"},
    {0x8000001b, 0, EAX, 5, G_IBS, "IBSBRNTRGT"},
    {0x8000001b, 0, EAX, 6, G_IBS, "IBSOPCNTEXT"},
    {0x8000001b, 0, EAX, 7, G_IBS, "IBSRIPINVALIDCHK"},
    {0x8000001b, 0, EAX, 8, G_IBS, "IBS_OPFUSE"},
    {0x8000001b, 0, EAX, 9, G_IBS, "IBS_FETCH_CTLX"},
    {0x8000001b, 0, EAX, 10, G_IBS, "IBS_OPDATA4"},
    {0x8000001b, 0, EAX, 11, G_IBS, "IBS_ZEN4"},
    {0x8000001f, 0, EAX, 0, G_AMD, "SME"},
    {0x8000001f, 0, EAX, 1, G_AMD, "SEV"},
    {0x8000001f, 0, EAX, 2, G_AMD, "MSR_PAGEFLUSH"},
    {0x8000001f, 0, EAX, 3, G_AMD, "SEV_ES"},
    {0x8000001f, 0, EAX, 4, G_AMD, "SEV_SNP"},
    {0x8000001f, 0, EAX, 5, G_AMD, "VMPL"},
    {0x8000001f, 0, EAX, 10, G_AMD, "SME_COHERENT"},
    {0x8000001f, 0, EAX, 11, G_AMD, "SEV_64BIT"},
    {0x8000001f, 0, EAX, 12, G_AMD, "SEV_RESTRICTED"},
    {0x8000001f, 0, EAX, 13, G_AMD, "SEV_ALTERNATIVE"},
    {0x8000001f, 0, EAX, 14, G_AMD, "SEV_DEBUGSWAP"},
    {0x8000001f, 0, EAX, 15, G_AMD, "IBS_PREVENTHOST"},
    {0x8000001f, 0, EAX, 16, G_AMD, "VTE"},
    {0x8000001f, 0, EAX, 24, G_AMD, "VMSA_REGPROT"},
    {0x80000021, 0, EAX, 31, G_AMD, "SRSO_MSR_FIX"},
    {0x80000021, 0, EAX, 30, G_AMD, "SRSO_USER_KERNEL_NO"},
    {0x80000021, 0, EAX, 29, G_AMD, "SRSO_NO"},
    {0x80000021, 0, EAX, 28, G_AMD, "IBPB_BRTYPE"},
    {0x80000021, 0, EAX, 27, G_AMD, "SBPB"},
    {0x80000021, 0, ECX, 1, G_AMD, "TSA_L1_NO"},
    {0x80000021, 0, ECX, 2, G_AMD, "TSA_SQ_NO"},
    {0x80000021, 0, EAX, 5, G_AMD, "TSA_VERW_CLEAR"},
};

/* klauspost/cpuid's vendorMapping and its Vendor names (cpuid.go). */
static const struct {
	const char *id, *name;
} vendors[] = {
    {"AMDisbetter!", "AMD"},	{"AuthenticAMD", "AMD"},       {"CentaurHauls", "VIA"},
    {"GenuineIntel", "Intel"},	{"TransmetaCPU", "Transmeta"}, {"GenuineTMx86", "Transmeta"},
    {"Geode by NSC", "NSC"},	{"VIA VIA VIA ", "VIA"},       {"KVMKVMKVM", "KVM"},
    {"Linux KVM Hv", "KVM"},	{"TCGTCGTCGTCG", "QEMU"},      {"Microsoft Hv", "MSVM"},
    {"VMwareVMware", "VMware"}, {"XenVMMXenVMM", "XenHVM"},    {"bhyve bhyve ", "Bhyve"},
    {"HygonGenuine", "Hygon"},	{"Vortex86 SoC", "SiS"},       {"SiS SiS SiS ", "SiS"},
    {"RiseRiseRise", "SiS"},	{"Genuine  RDC", "RDC"},       {"QNXQVMBSQG", "QNX"},
    {"ACRNACRNACRN", "ACRN"},	{"SRESRESRESRE", "SRE"},       {"Apple VZ", "Apple"},
};

/*
 * Each leaf is read once per run: in a VM every cpuid instruction traps to the
 * hypervisor (about 50 us each in a Firecracker guest), and the table reads
 * the same few leaves about 200 times. Not thread-safe (one detection at a time).
 */
#define LEAF_CACHE 48
static struct {
	const struct cpu_x86 *src; /* whose leaves these are */
	size_t n;		   /* entries used */
	struct {
		uint32_t leaf, sub;
		struct cpu_regs r;
	} e[LEAF_CACHE];
} cache;

static void regs(const struct cpu_x86 *s, uint32_t leaf, uint32_t sub, struct cpu_regs *r)
{
	size_t i;

	for (i = 0; cache.src == s && i < cache.n; i++)
		if (cache.e[i].leaf == leaf && cache.e[i].sub == sub) {
			*r = cache.e[i].r;
			return;
		}
	memset(r, 0, sizeof(*r));
	s->cpuid(s, leaf, sub, r);
	if (cache.src == s && cache.n < LEAF_CACHE) {
		cache.e[cache.n].leaf = leaf;
		cache.e[cache.n].sub = sub;
		cache.e[cache.n].r = *r;
		cache.n++;
	}
}

static uint32_t reg_of(const struct cpu_regs *r, int reg)
{
	return reg == EAX ? r->eax : reg == EBX ? r->ebx : reg == ECX ? r->ecx : r->edx;
}

/* Registers as klauspost's valAsString: little-endian bytes, cut at the first NUL. */
static void reg_string(char *out, uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t v[3] = {a, b, c};
	size_t i, n = 0;

	for (i = 0; i < 12; i++) {
		char ch = (char)((v[i / 4] >> (8 * (i % 4))) & 0xff);

		if (!ch)
			break;
		out[n++] = ch;
	}
	out[n] = '\0';
}

static const char *vendor_name(const char *id)
{
	size_t i;

	for (i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++)
		if (!strcmp(id, vendors[i].id))
			return vendors[i].name;
	return NULL;
}

static bool has(const struct feat_set *fs, const char *name)
{
	const struct feat *f = feat_get(fs, CPU_CPUID);

	return f && feat_lookup(f, name);
}

static void family_model(const struct cpu_x86 *s, uint32_t mfi, int *family, int *model)
{
	struct cpu_regs r;
	bool ext;

	*family = *model = 0;
	if (mfi < 1)
		return;
	regs(s, 1, 0, &r);
	*family = (int)((r.eax >> 8) & 0xf);
	ext = *family == 6;
	if (*family == 0xf) {
		*family += (int)((r.eax >> 20) & 0xff);
		ext = true;
	}
	*model = (int)((r.eax >> 4) & 0xf);
	if (ext)
		*model += (int)((r.eax >> 12) & 0xf0);
}

static int threads_per_core(const struct cpu_x86 *s, uint32_t mfi, uint32_t maxext,
			    const char *vend, int family)
{
	struct cpu_regs r, r4;
	bool intel = vend && !strcmp(vend, "Intel"), amd = vend && !strcmp(vend, "AMD");

	if (mfi < 4 || (!intel && !amd))
		return 1;
	if (mfi < 0xb) {
		uint32_t v;

		if (!intel)
			return 1;
		regs(s, 1, 0, &r);
		if (!(r.edx & (1u << 28)))
			return 1;
		v = (r.ebx >> 16) & 255;
		if (v > 1) {
			regs(s, 4, 0, &r4);
			return (int)(v / ((r4.eax >> 26) + 1));
		}
		return 1;
	}
	regs(s, 0xb, 0, &r);
	if ((r.ebx & 0xffff) == 0) {
		struct cpu_regs r1;

		regs(s, 1, 0, &r1);
		if (amd && (r1.edx & (1u << 28)) && family >= 23) {
			if (maxext >= 0x8000001e) {
				regs(s, 0x8000001e, 0, &r4);
				return (int)((r4.ebx >> 8) & 0xff) + 1;
			}
			return 2;
		}
		return 1;
	}
	return (int)(r.ebx & 0xffff);
}

static int flag(struct feat_set *fs, const char *name)
{
	return feat_flag_add(fs, CPU_CPUID, name) < 0 ? -ENOMEM : 0;
}

/* klauspost's X64Level(): NFD adds X86_64_V1 .. X86_64_V<level>. */
static int levels(struct feat_set *fs)
{
	static const char *const l1[] = {"CMOV", "CMPXCHG8", "X87",  "FXSR",
					 "MMX",	 "SSE",	     "SSE2", NULL};
	static const char *const l2[] = {"CX16", "LAHF",  "POPCNT", "SSE3",
					 "SSE4", "SSE42", "SSSE3",  NULL};
	static const char *const l3[] = {"AVX",	 "AVX2",  "BMI1",  "BMI2",    "F16C",
					 "FMA3", "LZCNT", "MOVBE", "OSXSAVE", NULL};
	static const char *const l4[] = {"AVX512F",  "AVX512BW", "AVX512CD",
					 "AVX512DQ", "AVX512VL", NULL};
	static const char *const *const lv[] = {l1, l2, l3, l4};
	static const char *const names[] = {"X86_64_V1", "X86_64_V2", "X86_64_V3", "X86_64_V4"};
	int level = 0, i, j;

	if (!has(fs, "SYSEE") && !has(fs, "SYSCALL"))
		return 0;
	for (i = 0; i < 4; i++) {
		for (j = 0; lv[i][j]; j++)
			if (!has(fs, lv[i][j]))
				break;
		if (lv[i][j])
			break;
		level = i + 1;
	}
	for (i = 0; i < level; i++)
		if (flag(fs, names[i]) < 0)
			return -ENOMEM;
	return 0;
}

static int model_attrs(const struct cpu_x86 *s, struct feat_set *fs, const char *vend, int family,
		       int model)
{
	char buf[24], hv[16], clean[16];
	struct cpu_regs r;
	const char *h;
	size_t i, n = 0;

	if (feat_attr_set(fs, CPU_MODEL, "vendor_id", vend ? vend : "VendorUnknown") < 0)
		return -ENOMEM;
	snprintf(buf, sizeof(buf), "%d", family);
	if (feat_attr_set(fs, CPU_MODEL, "family", buf) < 0)
		return -ENOMEM;
	snprintf(buf, sizeof(buf), "%d", model);
	if (feat_attr_set(fs, CPU_MODEL, "id", buf) < 0)
		return -ENOMEM;
	if (!has(fs, "HYPERVISOR"))
		return feat_attr_set(fs, CPU_MODEL, "hypervisor", "none") < 0 ? -ENOMEM : 0;
	/* NFD's getHypervisorFromCPUID: the lower-cased vendor, or the raw string cleaned */
	regs(s, 0x40000000, 0, &r);
	reg_string(hv, r.ebx, r.ecx, r.edx);
	h = vendor_name(hv);
	if (h) {
		for (i = 0; h[i] && i < sizeof(clean) - 1; i++)
			clean[i] = (char)(h[i] >= 'A' && h[i] <= 'Z' ? h[i] + 32 : h[i]);
		clean[i] = '\0';
	} else {
		/* [^-A-Za-z0-9_.]+ -> "_": each run of other bytes becomes one '_' */
		bool in_run = false;

		for (i = 0; hv[i]; i++) {
			unsigned char c = (unsigned char)hv[i];
			bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				  (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';

			if (ok)
				clean[n++] = (char)c;
			else if (!in_run)
				clean[n++] = '_';
			in_run = !ok;
		}
		clean[n] = '\0';
		if (!n)
			snprintf(clean, sizeof(clean), "unknown");
	}
	return feat_attr_set(fs, CPU_MODEL, "hypervisor", clean) < 0 ? -ENOMEM : 0;
}

int cpu_x86_features(const struct cpu_x86 *s, struct feat_set *fs)
{
	struct cpu_regs r0, r1, r, ext0;
	char id[16];
	const char *vend;
	uint32_t mfi, maxext;
	int family, model;
	size_t i;
	bool amd, avx512;

	if (feat_declare(fs, CPU_CPUID, FEAT_FLAGS) < 0 ||
	    feat_declare(fs, CPU_MODEL, FEAT_ATTRS) < 0)
		return -ENOMEM;
	cache.src = s; /* a fresh cache for each detection (a dump may reuse an address) */
	cache.n = 0;
	regs(s, 0, 0, &r0);
	mfi = r0.eax;
	reg_string(id, r0.ebx, r0.edx, r0.ecx);
	vend = vendor_name(id);
	amd = vend && !strcmp(vend, "AMD");
	regs(s, 0x80000000, 0, &ext0);
	maxext = ext0.eax;
	family_model(s, mfi, &family, &model);
	if (mfi < 1)
		return model_attrs(s, fs, vend, family, model);
	regs(s, 1, 0, &r1);
	/* AVX: XSAVE, OSXSAVE and AVX bits, and the OS saves XMM and YMM (XCR0 bits 1, 2) */
	avx512 = (r1.ecx & (3u << 26)) == (3u << 26) && ((s->xcr0 >> 5) & 7) == 7 &&
		 ((s->xcr0 >> 1) & 3) == 3;
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		const struct bit *b = &bits[i];
		bool ok;

		if (b->leaf == 7 && i > 0 && bits[i - 1].leaf == 1) {
			/* between leaf 1 and leaf 7: AVX, AVXSLOW, FMA3, HTT, BMI1/2 */
			if ((r1.ecx & (7u << 26)) == (7u << 26) && (s->xcr0 & 6) == 6) {
				if (flag(fs, "AVX") < 0)
					return -ENOMEM;
				if (((vend && !strcmp(vend, "Intel") && family == 6 &&
				      model < 60) ||
				     (amd && (family < 23 || (family == 23 && model < 49)))) &&
				    flag(fs, "AVXSLOW") < 0)
					return -ENOMEM;
			}
			if ((r1.ecx & ((1u << 12) | (1u << 27))) == ((1u << 12) | (1u << 27)) &&
			    flag(fs, "FMA3") < 0)
				return -ENOMEM;
			if (vend && (amd || !strcmp(vend, "Intel")) && (r1.edx & (1u << 28)) &&
			    mfi >= 4 && threads_per_core(s, mfi, maxext, vend, family) > 1 &&
			    flag(fs, "HTT") < 0)
				return -ENOMEM;
			if (mfi >= 7) {
				regs(s, 7, 0, &r);
				if ((r.ebx & 8) && (flag(fs, "BMI1") < 0 ||
						    ((r.ebx & 0x100) && flag(fs, "BMI2") < 0)))
					return -ENOMEM;
			}
		}
		if (b->leaf >= 0x80000000 ? maxext < b->leaf : mfi < b->leaf)
			continue;
		regs(s, b->leaf, b->sub, &r);
		ok = (reg_of(&r, b->reg) >> b->bit) & 1;
		switch (b->gate) {
		case G_AVX:
			ok = ok && has(fs, "AVX");
			break;
		case G_AVX512:
			ok = ok && avx512;
			break;
		case G_SVM:
			ok = ok && has(fs, "SVM");
			break;
		case G_IBS:
			ok = ok && has(fs, "IBS");
			break;
		case G_XSAVE:
			ok = ok && has(fs, "XSAVE");
			break;
		case G_AMD:
			ok = ok && amd;
			break;
		}
		if (ok && flag(fs, b->name) < 0)
			return -ENOMEM;
	}
	if (mfi >= 7 && has(fs, "SGX")) {
		regs(s, 0x12, 0, &r);
		if ((r.eax & (1u << 12)) && flag(fs, "SGXPQC") < 0)
			return -ENOMEM;
	}
	if (mfi >= 0x19 && has(fs, "KEYLOCKER")) {
		regs(s, 0x19, 0, &r);
		if ((r.ebx & 5) == 5 && flag(fs, "KEYLOCKERW") < 0)
			return -ENOMEM;
	}
	if (mfi >= 0x24 && has(fs, "AVX10")) {
		char level[4];

		regs(s, 0x24, 0, &r);
		if (((r.ebx >> 16) & 1 && flag(fs, "AVX10_128") < 0) ||
		    ((r.ebx >> 17) & 1 && flag(fs, "AVX10_256") < 0) ||
		    ((r.ebx >> 18) & 1 && flag(fs, "AVX10_512") < 0))
			return -ENOMEM;
		/*
		 * NFD's one cpu.cpuid attribute (source/cpu/cpuid_amd64.go getCpuidAttributes):
		 * AVX10_VERSION = klauspost's AVX10Level, the low byte of leaf 0x24's EBX.
		 */
		snprintf(level, sizeof(level), "%u", (unsigned)(r.ebx & 0xff));
		if (feat_attr_set(fs, CPU_CPUID, "AVX10_VERSION", level) < 0)
			return -ENOMEM;
	}
	if (amd && (family < 0x19 ||
		    (family == 0x1a && (model <= 0x4f || (model >= 0x60 && model <= 0x7f))))) {
		if (flag(fs, "TSA_L1_NO") < 0 || flag(fs, "TSA_SQ_NO") < 0)
			return -ENOMEM;
	}
	if (mfi >= 0x20) {
		regs(s, 0x4000000c, 0, &r);
		if (r.ebx == 0xbe3 && flag(fs, "TDX_GUEST") < 0)
			return -ENOMEM;
	}
	if (mfi >= 0x21) {
		char tdx[16];

		regs(s, 0x21, 0, &r);
		reg_string(tdx, r.ebx, r.edx, r.ecx);
		if (!strcmp(tdx, "IntelTDX    ") && flag(fs, "TDX_GUEST") < 0)
			return -ENOMEM;
	}
	if (levels(fs) < 0)
		return -ENOMEM;
	return model_attrs(s, fs, vend, family, model);
}

#if defined(__x86_64__) || defined(__i386__)
static void live_cpuid(const struct cpu_x86 *src, uint32_t leaf, uint32_t sub, struct cpu_regs *r)
{
	(void)src;
	__cpuid_count(leaf, sub, r->eax, r->ebx, r->ecx, r->edx);
}

int cpu_x86_live(struct cpu_x86 *src)
{
	uint32_t a, b, c, d, lo = 0, hi = 0;

	memset(src, 0, sizeof(*src));
	src->cpuid = live_cpuid;
	__cpuid(1, a, b, c, d);
	if ((c & (3u << 26)) == (3u << 26)) { /* XSAVE and OSXSAVE: XGETBV works */
		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	}
	(void)a;
	(void)b;
	(void)d;
	src->xcr0 = ((uint64_t)hi << 32) | lo;
	return 0;
}
#else
int cpu_x86_live(struct cpu_x86 *src)
{
	memset(src, 0, sizeof(*src));
	return -ENOTSUP;
}
#endif

struct leaf {
	uint32_t leaf, sub;
	struct cpu_regs r;
};

static void dump_cpuid(const struct cpu_x86 *src, uint32_t leaf, uint32_t sub, struct cpu_regs *r)
{
	const struct leaf *l = src->dump;
	size_t i;

	memset(r, 0, sizeof(*r)); /* a leaf the dump lacks reads as zeros (cpu.h) */
	for (i = 0; i < src->n; i++)
		if (l[i].leaf == leaf && l[i].sub == sub) {
			*r = l[i].r;
			return;
		}
}

int cpu_x86_dump(const char *text, size_t len, struct cpu_x86 *src)
{
	const char *p = text, *end = text + len;
	struct leaf *l = NULL;
	size_t n = 0;
	bool have_xcr0 = false;

	memset(src, 0, sizeof(*src));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = (size_t)((nl ? nl : end) - p);
		char line[256];
		unsigned long long x;
		unsigned int lf, sb, a, b, c, d;
		int used = 0;

		if (ll < sizeof(line)) {
			memcpy(line, p, ll);
			line[ll] = '\0';
			if (sscanf(line, " 0x%x 0x%x: eax=0x%x ebx=0x%x ecx=0x%x edx=0x%x%n", &lf,
				   &sb, &a, &b, &c, &d, &used) == 6 &&
			    used > 0) {
				struct leaf *nlv;

				if (n >= CPU_DUMP_LEAVES) {
					free(l);
					return -EINVAL;
				}
				nlv = realloc(l, (n + 1) * sizeof(*l));
				if (!nlv) {
					free(l);
					return -ENOMEM;
				}
				l = nlv;
				l[n].leaf = lf;
				l[n].sub = sb;
				l[n].r = (struct cpu_regs){a, b, c, d};
				n++;
			} else if (sscanf(line, " xcr0=0x%llx", &x) == 1) {
				src->xcr0 = x;
				have_xcr0 = true;
			}
		}
		p = (nl ? nl : end) + 1;
	}
	if (!n)
		return -EINVAL;
	src->cpuid = dump_cpuid;
	src->dump = l;
	src->n = n;
	if (!have_xcr0) {
		struct cpu_regs r = {0, 0, 0, 0};

		dump_cpuid(src, 0xd, 0, &r);
		src->xcr0 = r.eax;
	}
	return (int)n;
}

void cpu_x86_dump_free(struct cpu_x86 *src)
{
	free((void *)(uintptr_t)src->dump);
	memset(src, 0, sizeof(*src));
}
