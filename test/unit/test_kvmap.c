/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/kvmap. */
#include "harness.h"
#include "kvmap/kvmap.h"

TEST(sorted_set_get_del)
{
	struct kvmap m = KVMAP_INIT;
	const char *keys[] = {"m", "a", "z", "b", "m"};
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		REQUIRE_INT(kvmap_set(&m, keys[i], keys[i]), 0);
	CHECK_INT(m.n, 4);
	CHECK_STR(m.v[0].key, "a");
	CHECK_STR(m.v[3].key, "z");
	CHECK_INT(kvmap_set(&m, "m", "new"), 0);
	CHECK_STR(kvmap_get(&m, "m"), "new");
	CHECK(kvmap_get(&m, "q") == NULL);
	CHECK_INT(kvmap_find(&m, "c"), -3); /* would insert at 2 */
	CHECK_INT(kvmap_del(&m, "a"), 1);
	CHECK_INT(kvmap_del(&m, "a"), 0);
	CHECK_STR(m.v[0].key, "b");
	kvmap_free(&m);
	CHECK_INT(m.n, 0);
	CHECK_INT(kvmap_set(&m, "again", ""), 0); /* reusable after free */
	kvmap_free(&m);
}

TEST(many_keys_stay_sorted)
{
	struct kvmap m = KVMAP_INIT;
	char k[16];
	size_t i;

	for (i = 0; i < 500; i++) {
		snprintf(k, sizeof(k), "k%03zu", (i * 7919) % 500);
		REQUIRE_INT(kvmap_set(&m, k, "v"), 0);
	}
	CHECK_INT(m.n, 500);
	for (i = 1; i < m.n; i++)
		CHECK(strcmp(m.v[i - 1].key, m.v[i].key) < 0);
	kvmap_free(&m);
}
