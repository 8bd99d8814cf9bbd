/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: /proc/cpuinfo text (both ARM tables) and cpuid dumps (pkg/cpu). */
// seeds: test/fixtures/host/rpi4-arm64/proc/cpuinfo test/fixtures/host/firecracker-x86/cpuid.txt
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "feature/feature.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct feat_set *fs;
	struct cpu_x86 src;
	int n;

	if (size > CPU_DUMP_MAX) /* the bound of a dump; cpuinfo's is larger */
		return 0;
	fs = feat_set_new();
	if (!fs)
		return 0;
	if (cpu_parse_cpuinfo((const char *)data, size, size % 2 ? CPU_ARCH_ARM64 : CPU_ARCH_ARM,
			      fs) < 0)
		abort();
	n = cpu_x86_dump((const char *)data, size, &src);
	if (n > 0) {
		/* any register values: the detection never fails but for memory */
		if (cpu_x86_features(&src, fs) < 0)
			abort();
		cpu_x86_dump_free(&src);
	} else if (n != -EINVAL && n != -ENOMEM) {
		abort();
	}
	feat_set_free(fs);
	return 0;
}
