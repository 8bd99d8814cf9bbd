/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_gotmpl_exec: libFuzzer target for pkg/gotmpl's executor and functions over NFD-shaped data.
 */
// seeds: test/fuzz/fuzz_gotmpl.seeds
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "gotmpl/gotmpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct gotmpl_val *smap(const char *const *kv)
{
	struct gotmpl_val *m = gotmpl_val_map(1);

	for (; kv[0]; kv += 2)
		if (gotmpl_map_set(m, kv[0], gotmpl_val_str(kv[1])))
			abort();
	return m;
}

/* .pci.device (instances), .kernel.loadedmodule (flags), .system.osRelease (attributes), and
 * a few plain values of every kind. */
static struct gotmpl_val *nfd_data(void)
{
	static const char *const dev0[] = {
	    "class",	      "0300", "vendor",		  "8086", "device", "9a49",
	    "sriov_totalvfs", "7",    "iommu_group/type", "DMA",  NULL};
	static const char *const dev1[] = {"class",  "0380", "vendor", "1002",
					   "device", "73bf", NULL};
	static const char *const mod[] = {"Name", "i915", NULL};
	static const char *const os0[] = {"Name", "ID", "Value", "debian", NULL};
	struct gotmpl_val *root = gotmpl_val_map(0), *pci = gotmpl_val_map(0),
			  *devs = gotmpl_val_list(0), *kernel = gotmpl_val_map(0),
			  *mods = gotmpl_val_list(0), *sys = gotmpl_val_map(0),
			  *os = gotmpl_val_list(0), *misc = gotmpl_val_list(0),
			  *strs = gotmpl_val_list(1);

	if (gotmpl_list_push(devs, smap(dev0)) || gotmpl_list_push(devs, smap(dev1)) ||
	    gotmpl_map_set(pci, "device", devs) || gotmpl_map_set(root, "pci", pci) ||
	    gotmpl_list_push(mods, smap(mod)) || gotmpl_map_set(kernel, "loadedmodule", mods) ||
	    gotmpl_map_set(root, "kernel", kernel) || gotmpl_list_push(os, smap(os0)) ||
	    gotmpl_map_set(sys, "osRelease", os) || gotmpl_map_set(root, "system", sys) ||
	    gotmpl_list_push(misc, gotmpl_val_int(-3)) ||
	    gotmpl_list_push(misc, gotmpl_val_int64(1ll << 40)) ||
	    gotmpl_list_push(misc, gotmpl_val_float(2.5)) ||
	    gotmpl_list_push(misc, gotmpl_val_bool(1)) ||
	    gotmpl_list_push(misc, gotmpl_val_nil()) ||
	    gotmpl_list_push(strs, gotmpl_val_str("b")) ||
	    gotmpl_list_push(strs, gotmpl_val_str("a")) || gotmpl_list_push(misc, strs) ||
	    gotmpl_map_set(root, "misc", misc))
		abort();
	return root;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gotmpl_val *root;
	struct strbuf out = STRBUF_INIT(2u << 20);
	struct gotmpl_err err;
	struct gotmpl *t;

	if (!root)
		root = nfd_data();
	if (gotmpl_parse("fuzz", (const char *)data, size, &t, &err) != 0)
		return 0;
	gotmpl_exec(t, root, &out, &err);
	gotmpl_exec(t, NULL, &out, &err);
	sb_free(&out);
	gotmpl_free(t);
	return 0;
}
