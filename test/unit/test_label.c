/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/label: the k8s label rules, cases from apimachinery's validation. */
#include <errno.h>

#include "harness.h"
#include "label/label.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

TEST(keys)
{
	char longname[80], longprefix[300];

	CHECK(label_key_valid("a"));
	CHECK(label_key_valid("beta.devicetree.org/raspberrypi-4-model-b"));
	CHECK(label_key_valid("gpu.intel.com/device-id.0300-46a6.present"));
	CHECK(label_key_valid("A_b.C-9"));
	CHECK(!label_key_valid(""));
	CHECK(!label_key_valid("/a"));
	CHECK(!label_key_valid("a/"));
	CHECK(!label_key_valid("a/b/c"));
	CHECK(!label_key_valid("Upper.com/a")); /* prefix must be lowercase */
	CHECK(!label_key_valid("-a.com/a"));
	CHECK(!label_key_valid("a..com/a"));
	CHECK(!label_key_valid("a.com/-a"));
	CHECK(!label_key_valid("a.com/a-"));
	CHECK(!label_key_valid("a.com/a,b"));
	CHECK(!label_key_valid("a.com/a b"));
	memset(longname, 'a', 63);
	longname[63] = '\0';
	CHECK(label_key_valid(longname));
	longname[63] = 'a';
	longname[64] = '\0';
	CHECK(!label_key_valid(longname));
	memset(longprefix, 'a', 254);
	for (int i = 50; i < 254; i += 50)
		longprefix[i] = '.';
	strcpy(longprefix + 254, "/x");
	CHECK(!label_key_valid(longprefix)); /* prefix 254 > 253 */
	/* IsDNS1123Subdomain has no 63-character limit per dot-separated part */
	memset(longprefix, 'b', 100);
	strcpy(longprefix + 100, ".example.com/x");
	CHECK(label_key_valid(longprefix));
	CHECK(!label_key_valid_prefixed("noprefix"));
	CHECK(label_key_valid_prefixed("p.io/x"));
}

TEST(values)
{
	char v[70];

	CHECK(label_value_valid(""));
	CHECK(label_value_valid("true"));
	CHECK(label_value_valid("4"));
	CHECK(label_value_valid("Max_1550"));
	CHECK(!label_value_valid("b=c"));
	CHECK(!label_value_valid("x "));
	CHECK(!label_value_valid("a/b"));
	CHECK(!label_value_valid("_a"));
	memset(v, 'z', 63);
	v[63] = '\0';
	CHECK(label_value_valid(v));
	v[63] = 'z';
	v[64] = '\0';
	CHECK(!label_value_valid(v));
}

TEST(set_sorted_unique)
{
	struct label_set *ls = label_set_new();
	struct strbuf sb = STRBUF_INIT(4096);
	struct log_err err = {0};

	REQUIRE(ls);
	CHECK_INT(label_set_put(ls, "b.io/z", "1", NULL), 0);
	CHECK_INT(label_set_put(ls, "a.io/y", "true", NULL), 0);
	CHECK_INT(label_set_put(ls, "b.io/a", "2", NULL), 0);
	CHECK_INT(label_set_put(ls, "b.io/z", "3", NULL), 0);
	CHECK_INT(label_set_put(ls, "bad key/x", "1", &err), -EINVAL);
	CHECK_STR(err.msg, "invalid label key 'bad key/x'");
	CHECK_INT(label_set_put(ls, "a.io/v", "a=b", &err), -EINVAL);
	CHECK_STR(err.msg, "invalid value 'a=b' for label 'a.io/v'");
	CHECK_INT(label_set_put(ls, "unprefixed", "1", NULL), -EINVAL);
	CHECK_INT(label_set_count(ls), 3);
	CHECK_STR(label_set_get(ls, "b.io/z"), "3");
	CHECK(label_set_get(ls, "nope.io/x") == NULL);
	CHECK_INT(label_set_format(ls, &sb), 0);
	CHECK_STR(sb.buf, "a.io/y=true\nb.io/a=2\nb.io/z=3\n");
	CHECK_INT(label_set_del(ls, "b.io/a"), 1);
	CHECK_INT(label_set_del(ls, "b.io/a"), 0);
	CHECK_INT(label_set_count(ls), 2);
	sb_free(&sb);
	label_set_free(ls);
}
