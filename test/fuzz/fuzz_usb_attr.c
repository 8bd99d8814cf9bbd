/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: USB sysfs attribute values (pkg/usb) and kernel osrelease strings (pkg/kernel).
 */
// seeds: test/fixtures/usb/homelab/bus/usb/devices/usb1 test/fixtures/host/firecracker-x86/proc/sys
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feature/feature.h"
#include "kernel/kernel.h"
#include "usb/usb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[USB_ATTR_MAX];
	struct feat_set *fs;
	int n;

	if (size > USB_ATTR_MAX) /* what the usb source reads of one attribute */
		return 0;
	n = usb_trim_attr((const char *)data, size, out, sizeof(out));
	if (n >= 0 && (strlen(out) != (size_t)n || (n > 0 && (isspace((unsigned char)out[0]) ||
							      isspace((unsigned char)out[n - 1])))))
		abort();
	fs = feat_set_new();
	if (fs && kernel_parse_version((const char *)data, size, fs) == 0) {
		const struct feat *f = feat_get(fs, KERNEL_VERSION);
		const char *full = f ? feat_lookup(f, "full") : NULL;

		if (!full)
			abort();
		for (; *full; full++)
			if (!isalnum((unsigned char)*full) && !strchr("-_.", *full))
				abort(); /* full is always label-safe */
	}
	feat_set_free(fs);
	return 0;
}
