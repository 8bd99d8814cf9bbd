/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: kernel config text and gzip data as kernel.config (pkg/kernel). */
// seeds: test/fixtures/host/firecracker-x86/proc/config.gz
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feature/feature.h"
#include "kernel/kernel.h"
#include "strbuf/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf text = STRBUF_INIT(1u << 20); /* a small cap: bombs stop at it */
	struct feat_set *fs;
	int r;

	if (size > KERNEL_CONFIG_GZ_MAX)
		return 0;
	fs = feat_set_new();
	if (!fs)
		return 0;
	/* the input as plain text, and as config.gz */
	if (kernel_parse_config((const char *)data, size, fs) < 0 && feat_get(fs, KERNEL_CONFIG))
		abort();
	r = kernel_gunzip(data, size, &text);
	if (r < 0 && text.len != 0)
		abort(); /* a failed decompression leaves nothing behind */
	if (r == 0)
		kernel_parse_config(text.buf, text.len, fs);
	sb_free(&text);
	feat_set_free(fs);
	return 0;
}
