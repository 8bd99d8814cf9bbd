/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/feature. */
#include <errno.h>

#include "feature/feature.h"
#include "harness.h"

TEST(flags_attrs_instances)
{
	struct feat_set *fs = feat_set_new();
	const struct feat *f;
	struct feat *inst;
	const char *n, *v;

	REQUIRE(fs);
	CHECK_INT(feat_flag_add(fs, "kernel.loadedmodule", "i915"), 0);
	CHECK_INT(feat_flag_add(fs, "kernel.loadedmodule", "e1000e"), 0);
	CHECK_INT(feat_flag_add(fs, "kernel.loadedmodule", "i915"), 0);
	CHECK_INT(feat_attr_set(fs, "dt.root", "model", "Pi"), 0);
	/* NFD: one name may be a flags and an attributes feature at once (x86 cpu.cpuid) */
	CHECK_INT(feat_flag_add(fs, "cpu.cpuid", "AVX10"), 0);
	CHECK_INT(feat_attr_set(fs, "cpu.cpuid", "AVX10_VERSION", "1"), 0);
	inst = feat_instance_add(fs, "pci.device");
	REQUIRE(inst);
	CHECK_INT(feat_instance_set(inst, "vendor", "8086"), 0);
	CHECK_INT(feat_instance_set(inst, "class", "0300"), 0);
	REQUIRE(feat_instance_add(fs, "pci.device"));

	f = feat_get(fs, "kernel.loadedmodule");
	REQUIRE(f);
	CHECK_INT(feat_kind(f), FEAT_FLAGS);
	CHECK_INT(feat_nelems(f), 2);
	feat_elem_at(f, 0, &n, &v);
	CHECK_STR(n, "e1000e"); /* sorted */
	CHECK_STR(feat_lookup(f, "i915"), "");
	CHECK(feat_lookup(f, "xe") == NULL);

	f = feat_get(fs, "pci.device");
	REQUIRE(f);
	CHECK_INT(feat_ninstances(f), 2);
	CHECK_STR(feat_lookup(feat_instance_at(f, 0), "class"), "0300");
	CHECK_INT(feat_nelems(feat_instance_at(f, 1)), 0);
	CHECK(feat_get(fs, "usb.device") == NULL);
	CHECK_INT(feat_set_count(fs), 5);
	CHECK_STR(feat_name(feat_set_at(fs, 1)), "dt.root");
	CHECK_INT(feat_kind(feat_get(fs, "cpu.cpuid")), FEAT_FLAGS); /* the first made */
	REQUIRE(feat_get_kind(fs, "cpu.cpuid", FEAT_ATTRS));
	CHECK_STR(feat_lookup(feat_get_kind(fs, "cpu.cpuid", FEAT_ATTRS), "AVX10_VERSION"), "1");
	CHECK(feat_lookup(feat_get_kind(fs, "cpu.cpuid", FEAT_ATTRS), "AVX10") == NULL);
	CHECK(feat_get_kind(fs, "cpu.cpuid", FEAT_INSTANCES) == NULL);
	feat_set_free(fs);
}

TEST(declare_makes_an_empty_feature)
{
	struct feat_set *fs = feat_set_new();

	REQUIRE(fs);
	CHECK_INT(feat_declare(fs, "kernel.loadedmodule", FEAT_FLAGS), 0);
	REQUIRE(feat_get(fs, "kernel.loadedmodule"));
	CHECK_INT(feat_nelems(feat_get(fs, "kernel.loadedmodule")), 0);
	CHECK_INT(feat_flag_add(fs, "kernel.loadedmodule", "i915"), 0);
	CHECK_INT(feat_declare(fs, "kernel.loadedmodule", FEAT_FLAGS), 0); /* keeps elements */
	CHECK_INT(feat_nelems(feat_get(fs, "kernel.loadedmodule")), 1);
	CHECK_INT(feat_declare(fs, "kernel.loadedmodule", FEAT_ATTRS), 0); /* a second kind */
	CHECK_INT(feat_set_count(fs), 2);
	CHECK_INT(feat_nelems(feat_get_kind(fs, "kernel.loadedmodule", FEAT_ATTRS)), 0);
	feat_set_free(fs);
}
