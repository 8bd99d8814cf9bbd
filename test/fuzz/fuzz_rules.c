/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_rules: libFuzzer target for NodeFeatureRule parsing and evaluation (pkg/rules). */
// seeds: cmd/nodeprobe/rules.d cmd/nodeprobe/counts.d test/data/rules test/fuzz/fuzz_rules.seeds
#include <stddef.h>
#include <stdint.h>

#include "feature/feature.h"
#include "label/label.h"
#include "log/log.h"
#include "rules/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct feat_set *features(void)
{
	struct feat_set *fs = feat_set_new();
	struct feat *d = feat_instance_add(fs, "pci.device");

	feat_instance_set(d, "vendor", "8086");
	feat_instance_set(d, "device", "46a6");
	feat_instance_set(d, "class", "0300");
	feat_instance_set(d, "driver", "i915");
	d = feat_instance_add(fs, "pci.device");
	feat_instance_set(d, "vendor", "10de");
	feat_instance_set(d, "class", "0302");
	feat_instance_set(d, "sriov_totalvfs", "8");
	feat_flag_add(fs, "kernel.loadedmodule", "i915");
	feat_flag_add(fs, "kernel.enabledmodule", "vfio-pci");
	feat_attr_set(fs, "dt.root", "model", "Raspberry Pi 4 Model B");
	feat_attr_set(fs, "dt.root", "cores", "4");
	feat_attr_set(fs, "kernel.version", "full", "6.1.0-50-arm64");
	feat_attr_set(fs, "kernel.version", "major", "6");
	feat_attr_set(fs, "system.osrelease", "VERSION_ID", "22.04");
	feat_flag_add(fs, "cpu.cpuid", "AVX512F");
	d = feat_instance_add(fs, "usb.device");
	feat_instance_set(d, "vendor", "1a6e");
	feat_instance_set(d, "class", "ff");
	return fs;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct feat_set *fs;
	struct rules *r = rules_new();
	struct log_err err = {0};

	if (!fs)
		fs = features();
	if (r && rules_load_buffer(r, "fuzz.yaml", (const char *)data, size, &err) >= 0) {
		struct label_set *ls = label_set_new();

		if (ls)
			rules_eval(r, fs, ls, &err);
		label_set_free(ls);
	}
	rules_free(r);
	return 0;
}
