/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cpu_arm: ARM hwcaps and MIDR fields from /proc/cpuinfo as NFD's cpu.cpuid and cpu.model. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "feature/feature.h"

/*
 * cpuinfo name -> NFD flag. arm64: NFD's getauxval tables (AT_HWCAP bits 0-31,
 * AT_HWCAP2 bits 0-33, source/cpu/cpuid_linux_arm64.go), whose names are the
 * kernel's hwcap strings (arch/arm64/kernel/cpuinfo.c) in upper case; higher
 * bits NFD ignores. arm: source/cpu/cpuid_linux_arm.go against the kernel's
 * hwcap_str/hwcap2_str (arch/arm/kernel/setup.c).
 */
static const char *const arm64_names[] = {
    "fp",	 "asimd",      "evtstrm",  "aes",	"pmull",     "sha1",	  "sha2",
    "crc32",	 "atomics",    "fphp",	   "asimdhp",	"cpuid",     "asimdrdm",  "jscvt",
    "fcma",	 "lrcpc",      "dcpop",	   "sha3",	"sm3",	     "sm4",	  "asimddp",
    "sha512",	 "sve",	       "asimdfhm", "dit",	"uscat",     "ilrcpc",	  "flagm",
    "ssbs",	 "sb",	       "paca",	   "pacg",	"dcpodp",    "sve2",	  "sveaes",
    "svepmull",	 "svebitperm", "svesha3",  "svesm4",	"flagm2",    "frint",	  "svei8mm",
    "svef32mm",	 "svef64mm",   "svebf16",  "i8mm",	"bf16",	     "dgh",	  "rng",
    "bti",	 "mte",	       "ecv",	   "afp",	"rpres",     "mte3",	  "sme",
    "smei16i64", "smef64f64",  "smei8i32", "smef16f32", "smeb16f32", "smef32f32", "smefa64",
    "wfxt",	 "ebf16",      "sveebf16",
};

static const struct {
	const char *cpuinfo, *nfd;
} arm_names[] = {
    {"swp", "SWP"},	    {"half", "HALF"},	     {"thumb", "THUMB"},
    {"26bit", "26BIT"},	    {"fastmult", "FASTMUL"}, {"fpa", "FPA"},
    {"vfp", "VFP"},	    {"edsp", "EDSP"},	     {"java", "JAVA"},
    {"iwmmxt", "IWMMXT"},   {"crunch", "CRUNCH"},    {"thumbee", "THUMBEE"},
    {"neon", "NEON"},	    {"vfpv3", "VFPv3"},	     {"vfpv3d16", "VFPv3D16"},
    {"tls", "TLS"},	    {"vfpv4", "VFPv4"},	     {"idiva", "IDIVA"},
    {"idivt", "IDIVT"},	    {"vfpd32", "VFPD32"},    {"lpae", "LPAE"},
    {"evtstrm", "EVTSTRM"}, {"aes", "AES"},	     {"pmull", "PMULL"},
    {"sha1", "SHA1"},	    {"sha2", "SHA2"},	     {"crc32", "CRC32"},
};

/* klauspost/cpuid's vendor for a MIDR implementer (detect_arm64.go). */
static const char *implementer_vendor(unsigned long imp)
{
	switch (imp) {
	case 0x41:
		return "ARM";
	case 0x42:
		return "Broadcom";
	case 0x43:
		return "Cavium";
	case 0x44:
		return "DEC";
	case 0x46:
		return "Fujitsu";
	case 0x49:
		return "Infineon";
	case 0x4d:
		return "Motorola";
	case 0x4e:
		return "NVIDIA";
	case 0x50:
		return "AMCC";
	case 0x51:
		return "Qualcomm";
	case 0x56:
		return "Marvell";
	case 0x61:
		return "Apple";
	case 0xc0:
		return "Ampere";
	default:
		return "VendorUnknown";
	}
}

/* The value of the first line "key<spaces>: value" of text, or NULL; *n its length. */
static const char *field(const char *text, size_t len, const char *key, size_t *n)
{
	const char *p = text, *end = text + len;
	size_t kl = strlen(key);

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *q = p + kl;

		if ((size_t)(eol - p) > kl && !memcmp(p, key, kl) &&
		    (*q == ' ' || *q == '\t' || *q == ':')) {
			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			if (q < eol && *q == ':') {
				q++;
				while (q < eol && (*q == ' ' || *q == '\t'))
					q++;
				*n = (size_t)(eol - q);
				return q;
			}
		}
		p = eol + 1;
	}
	return NULL;
}

/* A hex or decimal number field (strtoul base 0), or -1. */
static long num_field(const char *text, size_t len, const char *key)
{
	char buf[32];
	const char *v;
	size_t n;
	char *end;
	unsigned long x;

	v = field(text, len, key, &n);
	if (!v || n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	x = strtoul(buf, &end, 0);
	while (*end == ' ' || *end == '\t' || *end == '\r')
		end++;
	if (errno || *end || buf[0] == '-' || x > 0xffffffffUL)
		return -1;
	return (long)x;
}

static int model(struct feat_set *fs, const char *vendor, long family, long id)
{
	char f[24], i[24];

	snprintf(f, sizeof(f), "%ld", family);
	snprintf(i, sizeof(i), "%ld", id);
	if (feat_attr_set(fs, CPU_MODEL, "vendor_id", vendor) < 0 ||
	    feat_attr_set(fs, CPU_MODEL, "family", f) < 0 ||
	    feat_attr_set(fs, CPU_MODEL, "id", i) < 0 ||
	    feat_attr_set(fs, CPU_MODEL, "hypervisor", "none") < 0)
		return -ENOMEM;
	return 0;
}

int cpu_parse_cpuinfo(const char *text, size_t len, enum cpu_arch arch, struct feat_set *fs)
{
	const char *v;
	size_t n, i;
	int has_cpuid = 0;
	long imp, var, part, rev;

	v = field(text, len, "Features", &n);
	if (!v)
		return 0;
	if (feat_declare(fs, CPU_CPUID, FEAT_FLAGS) < 0)
		return -ENOMEM;
	while (n) {
		char word[32];
		size_t w = 0;

		while (n && isspace((unsigned char)*v)) {
			v++;
			n--;
		}
		while (w < n && !isspace((unsigned char)v[w]))
			w++;
		if (w && w < sizeof(word)) {
			memcpy(word, v, w);
			word[w] = '\0';
			if (arch == CPU_ARCH_ARM64) {
				for (i = 0; i < sizeof(arm64_names) / sizeof(arm64_names[0]); i++) {
					char up[32];
					size_t k;

					if (strcmp(word, arm64_names[i]))
						continue;
					for (k = 0; k <= w; k++)
						up[k] = (char)toupper((unsigned char)word[k]);
					if (feat_flag_add(fs, CPU_CPUID, up) < 0)
						return -ENOMEM;
					has_cpuid |= !strcmp(word, "cpuid");
				}
			} else {
				for (i = 0; i < sizeof(arm_names) / sizeof(arm_names[0]); i++)
					if (!strcmp(word, arm_names[i].cpuinfo) &&
					    feat_flag_add(fs, CPU_CPUID, arm_names[i].nfd) < 0)
						return -ENOMEM;
			}
		}
		v += w;
		n -= w;
	}
	imp = num_field(text, len, "CPU implementer");
	var = num_field(text, len, "CPU variant");
	part = num_field(text, len, "CPU part");
	rev = num_field(text, len, "CPU revision");
	if (arch != CPU_ARCH_ARM64 || !has_cpuid || imp < 0 || var < 0 || part < 0 || rev < 0)
		return model(fs, "VendorUnknown", 0, 0);
	return model(fs, implementer_vendor((unsigned long)imp), ((var & 0xf) << 4) | 0xf,
		     ((part & 0xfff) << 4) | (rev & 0xf));
}
