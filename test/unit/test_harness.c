/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_harness: the harness itself; with NP_HARNESS_SELFTEST=1 its cases crash, fail and skip on
 * purpose. */
#include "harness.h"

static int selftest(void)
{
	const char *v = getenv("NP_HARNESS_SELFTEST");

	return v && strcmp(v, "1") == 0;
}

static int leaked_state; /* set by a failing case; a case in its own process never sees it */

TEST(aborts_in_selftest)
{
	if (selftest())
		abort();
	CHECK(1);
}

TEST(fails_after_setting_state_in_selftest)
{
	leaked_state = 1;
	REQUIRE(!selftest());
}

TEST(state_of_an_earlier_case_is_not_seen)
{
	CHECK_INT(leaked_state, 0);
}

TEST(skips_in_selftest)
{
	if (selftest())
		SKIP("asked to by NP_HARNESS_SELFTEST");
	CHECK(1);
}
