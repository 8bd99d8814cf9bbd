/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/feature. */
#include <errno.h>

#include "feature/feature.h"
#include "harness.h"
#include "strbuf/strbuf.h"

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

struct fill_log {
	int fills, releases; /* calls seen */
	int ret;	     /* what fill returns */
};

static int fill_two(void *arg, struct feat_set *fs)
{
	struct fill_log *l = arg;

	l->fills++;
	/* fill's own reads of the features it fills must not come back into it */
	if (feat_nelems(feat_get(fs, "cpu.cpuid")) != 0 || feat_deferred(fs, "cpu.model"))
		return -EIO;
	if (feat_flag_add(fs, "cpu.cpuid", "SSE2") < 0 ||
	    feat_attr_set(fs, "cpu.model", "family", "6") < 0)
		return -ENOMEM;
	return l->ret;
}

static void release_log(void *arg)
{
	((struct fill_log *)arg)->releases++;
}

TEST(defer_fills_once_when_an_element_is_read)
{
	static const char *const names[] = {"cpu.cpuid", "cpu.model", "cpu.cpuid"};
	struct fill_log l = {0, 0, 0};
	struct feat_set *fs = feat_set_new();
	const struct feat *f;

	REQUIRE(fs);
	CHECK_INT(feat_defer(fs, names, 2, fill_two, &l, release_log), -EINVAL); /* not declared */
	CHECK_INT(l.releases, 0);
	REQUIRE_INT(feat_declare(fs, "cpu.cpuid", FEAT_FLAGS), 0);
	REQUIRE_INT(feat_declare(fs, "cpu.model", FEAT_ATTRS), 0);
	REQUIRE_INT(feat_defer(fs, names, 3, fill_two, &l, release_log), 0);	 /* a name twice */
	CHECK_INT(feat_defer(fs, names, 1, fill_two, &l, release_log), -EINVAL); /* deferred */
	CHECK(feat_deferred(fs, "cpu.cpuid") && feat_deferred(fs, "cpu.model"));
	/* existence and kind do not fill */
	f = feat_get(fs, "cpu.model");
	REQUIRE(f);
	CHECK_INT(feat_kind(f), FEAT_ATTRS);
	CHECK_INT(l.fills, 0);
	/* the first element read fills both features, once */
	CHECK_STR(feat_lookup(f, "family"), "6");
	CHECK_INT(l.fills, 1);
	CHECK_INT(l.releases, 1);
	CHECK(!feat_deferred(fs, "cpu.cpuid") && !feat_deferred(fs, "cpu.model"));
	f = feat_get(fs, "cpu.cpuid");
	CHECK_INT(feat_nelems(f), 1);
	CHECK_STR(feat_lookup(f, "SSE2"), "");
	CHECK_INT(l.fills, 1);
	CHECK_INT(feat_set_error(fs), 0);
	feat_set_free(fs);
	CHECK_INT(l.releases, 1);
}

TEST(defer_unread_is_released_and_errors_kept)
{
	static const char *const names[] = {"cpu.cpuid", "cpu.model"};
	struct fill_log l = {0, 0, 0}, bad = {0, 0, -ENOMEM};
	struct feat_set *fs = feat_set_new();
	const char *n, *v;

	REQUIRE(fs);
	REQUIRE_INT(feat_declare(fs, "cpu.cpuid", FEAT_FLAGS), 0);
	REQUIRE_INT(feat_declare(fs, "cpu.model", FEAT_ATTRS), 0);
	REQUIRE_INT(feat_defer(fs, names, 2, fill_two, &l, release_log), 0);
	feat_set_free(fs); /* never read: never filled, released once */
	CHECK_INT(l.fills, 0);
	CHECK_INT(l.releases, 1);

	fs = feat_set_new();
	REQUIRE(fs);
	REQUIRE_INT(feat_declare(fs, "cpu.cpuid", FEAT_FLAGS), 0);
	REQUIRE_INT(feat_declare(fs, "cpu.model", FEAT_ATTRS), 0);
	REQUIRE_INT(feat_defer(fs, names, 2, fill_two, &bad, NULL), 0);
	feat_elem_at(feat_get(fs, "cpu.cpuid"), 0, &n, &v); /* enumeration fills too */
	CHECK_STR(n, "SSE2");
	CHECK_INT(feat_set_error(fs), -ENOMEM);
	CHECK_INT(bad.fills, 1);
	feat_set_free(fs);
	CHECK_INT(bad.releases, 0); /* release NULL: nothing to free */
}

static int fill_attr(void *arg, struct feat_set *fs)
{
	((struct fill_log *)arg)->fills++;
	if (feat_flag_add(fs, "cpu.cpuid", "AVX10") < 0 ||
	    feat_attr_set(fs, "cpu.cpuid", "AVX10_VERSION", "1") < 0)
		return -ENOMEM;
	return 0;
}

/* A name with two kinds (x86 cpu.cpuid: flags and AVX10_VERSION) is deferred as a whole: reading
 * the attribute alone fills it. */
TEST(defer_covers_every_kind_of_a_name)
{
	static const char *const names[] = {"cpu.cpuid"};
	struct fill_log l = {0, 0, 0};
	struct feat_set *fs = feat_set_new();
	const struct feat *a;

	REQUIRE(fs);
	REQUIRE_INT(feat_declare(fs, "cpu.cpuid", FEAT_FLAGS), 0);
	REQUIRE_INT(feat_declare(fs, "cpu.cpuid", FEAT_ATTRS), 0);
	REQUIRE_INT(feat_defer(fs, names, 1, fill_attr, &l, release_log), 0);
	a = feat_get_kind(fs, "cpu.cpuid", FEAT_ATTRS);
	REQUIRE(a);
	CHECK_INT(l.fills, 0);
	CHECK_STR(feat_lookup(a, "AVX10_VERSION"), "1");
	CHECK_INT(l.fills, 1);
	CHECK_STR(feat_lookup(feat_get_kind(fs, "cpu.cpuid", FEAT_FLAGS), "AVX10"), "");
	CHECK_INT(l.fills, 1);
	feat_set_free(fs);
	CHECK_INT(l.releases, 1);
}

/* feat_set_dump: NFD's NodeFeature layout; YAML quotes what a YAML reader would take for a
 * number, bool or null, or not read back at all; a filter by name or bare domain. */
TEST(dump_yaml_json)
{
	struct feat_set *fs = feat_set_new();
	struct strbuf sb = STRBUF_INIT(1 << 20);
	const char *only[] = {"pci", "kernel.version"};
	struct feat *inst;

	REQUIRE(fs);
	CHECK_INT(feat_flag_add(fs, "cpu.cpuid", "AVX2"), 0);
	CHECK_INT(feat_attr_set(fs, "cpu.cpuid", "AVX10_VERSION", "1"), 0);
	CHECK_INT(feat_attr_set(fs, "kernel.version", "full", "6.1.0-28-amd64"), 0);
	CHECK_INT(feat_attr_set(fs, "t.q", "yes", "true"), 0);
	CHECK_INT(feat_attr_set(fs, "t.q", "empty", ""), 0);
	CHECK_INT(feat_attr_set(fs, "t.q", "colon", "a: b"), 0);
	CHECK_INT(feat_attr_set(fs, "t.q", "dash", "-x"), 0);
	CHECK_INT(feat_attr_set(fs, "t.q", "nl", "a\n\"b\""), 0);
	CHECK_INT(feat_attr_set(fs, "t.q", "Off", "plain/path_1.2-x"), 0);
	CHECK_INT(feat_declare(fs, "usb.device", FEAT_INSTANCES), 0);
	inst = feat_instance_add(fs, "pci.device");
	REQUIRE(inst);
	CHECK_INT(feat_instance_set(inst, "vendor", "8086"), 0);
	CHECK_INT(feat_instance_set(inst, "class", "0300"), 0);
	REQUIRE(feat_instance_add(fs, "pci.device"));

	CHECK_INT(feat_set_dump(fs, "n1", NULL, 0, FEAT_DUMP_YAML, &sb), 0);
	CHECK_STR(sb.buf, "apiVersion: nfd.k8s-sigs.io/v1alpha1\n"
			  "kind: NodeFeature\n"
			  "metadata:\n"
			  "  labels:\n"
			  "    nfd.node.kubernetes.io/node-name: n1\n"
			  "  name: n1\n"
			  "spec:\n"
			  "  features:\n"
			  "    flags:\n"
			  "      cpu.cpuid:\n"
			  "        elements:\n"
			  "          AVX2: {}\n"
			  "    attributes:\n"
			  "      cpu.cpuid:\n"
			  "        elements:\n"
			  "          AVX10_VERSION: \"1\"\n"
			  "      kernel.version:\n"
			  "        elements:\n"
			  "          full: \"6.1.0-28-amd64\"\n"
			  "      t.q:\n"
			  "        elements:\n"
			  "          \"Off\": plain/path_1.2-x\n"
			  "          colon: \"a: b\"\n"
			  "          dash: \"-x\"\n"
			  "          empty: \"\"\n"
			  "          nl: \"a\\n\\\"b\\\"\"\n"
			  "          \"yes\": \"true\"\n"
			  "    instances:\n"
			  "      pci.device:\n"
			  "        elements:\n"
			  "        - attributes:\n"
			  "            class: \"0300\"\n"
			  "            vendor: \"8086\"\n"
			  "        - attributes: {}\n"
			  "      usb.device:\n"
			  "        elements: []\n");
	sb_reset(&sb);
	CHECK_INT(feat_set_dump(fs, "n1", only, 2, FEAT_DUMP_JSON, &sb), 0);
	CHECK_STR(sb.buf, "{\n"
			  "  \"apiVersion\": \"nfd.k8s-sigs.io/v1alpha1\",\n"
			  "  \"kind\": \"NodeFeature\",\n"
			  "  \"metadata\": {\n"
			  "    \"labels\": {\n"
			  "      \"nfd.node.kubernetes.io/node-name\": \"n1\"\n"
			  "    },\n"
			  "    \"name\": \"n1\"\n"
			  "  },\n"
			  "  \"spec\": {\n"
			  "    \"features\": {\n"
			  "      \"flags\": {},\n"
			  "      \"attributes\": {\n"
			  "        \"kernel.version\": {\n"
			  "          \"elements\": {\n"
			  "            \"full\": \"6.1.0-28-amd64\"\n"
			  "          }\n"
			  "        }\n"
			  "      },\n"
			  "      \"instances\": {\n"
			  "        \"pci.device\": {\n"
			  "          \"elements\": [\n"
			  "            {\n"
			  "              \"attributes\": {\n"
			  "                \"class\": \"0300\",\n"
			  "                \"vendor\": \"8086\"\n"
			  "              }\n"
			  "            },\n"
			  "            {\n"
			  "              \"attributes\": {}\n"
			  "            }\n"
			  "          ]\n"
			  "        }\n"
			  "      }\n"
			  "    }\n"
			  "  }\n"
			  "}\n");
	/* the output's cap: -E2BIG, never a cut object passed as whole */
	sb_free(&sb);
	sb_init(&sb, 64);
	CHECK_INT(feat_set_dump(fs, "n1", NULL, 0, FEAT_DUMP_YAML, &sb), -E2BIG);
	sb_free(&sb);
	feat_set_free(fs);
}
