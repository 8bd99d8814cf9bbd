/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: os-release text as system.osrelease (pkg/osrelease). */
// seeds: test/fixtures/os-release test/fixtures/host/firecracker-x86/etc
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feature/feature.h"
#include "osrelease/osrelease.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct feat_set *fs;
	const struct feat *f;
	int n;

	if (size > OSRELEASE_MAX) /* what osrelease_scan reads at most */
		return 0;
	fs = feat_set_new();
	if (!fs)
		return 0;
	n = osrelease_parse((const char *)data, size, fs);
	f = feat_get(fs, OSRELEASE_FEATURE);
	/* the feature exists once parsed; never more keys than lines */
	if (n >= 0 && (!f || feat_nelems(f) > (size_t)n + 2))
		abort();
	feat_set_free(fs);
	return 0;
}
