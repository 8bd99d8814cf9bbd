/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: devicetree blob validation and scanning (labels, features) in pkg/dt. */
// seeds: ../shared/fixtures/dtb
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dt/dt.h"
#include "feature/feature.h"
#include "label/label.h"
#include "log/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"timer", "i2c", ""};
	struct log_err err = {0};
	struct label_set *ls;
	struct feat_set *fs;
	void *buf;

	/* The loaders hand libfdt a malloc'd (so aligned) buffer; do the same. */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (dt_check(buf, size, &err) == 0) {
		ls = label_set_new();
		fs = feat_set_new();
		if (ls && fs) {
			dt_labels(buf, names, 3, ls, &err);
			dt_features(buf, fs, &err);
		}
		label_set_free(ls);
		feat_set_free(fs);
	}
	free(buf);
	return 0;
}
