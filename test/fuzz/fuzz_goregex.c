/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_goregex: libFuzzer target for pkg/goregex: a pattern and a subject from one input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "goregex/goregex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Input: pattern, a NUL byte, subject (no NUL: the input is the pattern and "" the subject). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t plen = nul ? (size_t)(nul - data) : size;
	char *pat = malloc(plen + 1);
	struct goregex *re;
	unsigned flags;

	if (!pat)
		return 0;
	memcpy(pat, data, plen);
	pat[plen] = '\0';
	for (flags = 0; flags <= GOREGEX_FULL; flags++) {
		if (goregex_compile(pat, flags, &re, NULL, 0) != 0)
			continue;
		if (nul)
			goregex_match(re, (const char *)nul + 1, size - plen - 1);
		goregex_match(re, "", 0);
		goregex_free(re);
	}
	free(pat);
	return 0;
}
