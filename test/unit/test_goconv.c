/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/goconv: Go's own test vectors for ParseBool, Atoi and ParseDuration. */
#include <errno.h>

#include "goconv/goconv.h"
#include "harness.h"

TEST(parse_bool_as_strconv)
{
	static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
	static const char *const bad[] = {"", "yes", "no", "TrUe", "2", " true", "true "};
	size_t i;

	for (i = 0; i < 6; i++) {
		CHECK_INT(goconv_parse_bool(t[i]), 1);
		CHECK_INT(goconv_parse_bool(f[i]), 0);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(goconv_parse_bool(bad[i]), -EINVAL);
}

/* Go's src/strconv/atoi_test.go (Atoi = ParseInt(s, 10, 64) on 64-bit): a sample of its cases. */
TEST(atoi_as_strconv)
{
	static const struct {
		const char *in;
		long long want;
	} ok[] = {{"0", 0},
		  {"-0", 0},
		  {"+1", 1},
		  {"-1", -1},
		  {"12345", 12345},
		  {"012345", 12345},
		  {"9223372036854775807", INT64_MAX},
		  {"-9223372036854775808", INT64_MIN}};
	static const char *const bad[] = {"",
					  "+",
					  "-",
					  " 1",
					  "1 ",
					  "1x",
					  "0x10",
					  "1_000",
					  "--1",
					  "+-1",
					  "12.5",
					  "9223372036854775808",
					  "-9223372036854775809"};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		long long got = 42;

		if (!goconv_atoi(ok[i].in, &got) || got != ok[i].want)
			HFAIL_("'%s': got %lld, want %lld", ok[i].in, got, ok[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		long long got;

		if (goconv_atoi(bad[i], &got))
			HFAIL_("'%s' was not refused", bad[i]);
	}
}

#define S  INT64_C(1000000000)
#define MS INT64_C(1000000)
#define US INT64_C(1000)
#define M  (60 * S)
#define H  (60 * M)

/* Go's src/time/time_test.go parseDurationTests (Go 1.22). */
TEST(parse_duration_go_vectors)
{
	static const struct {
		const char *in;
		int64_t want;
	} ok[] = {
	    {"0", 0},
	    {"5s", 5 * S},
	    {"30s", 30 * S},
	    {"1478s", 1478 * S},
	    {"-5s", -5 * S},
	    {"+5s", 5 * S},
	    {"-0", 0},
	    {"+0", 0},
	    {"5.0s", 5 * S},
	    {"5.6s", 5 * S + 600 * MS},
	    {"5.s", 5 * S},
	    {".5s", 500 * MS},
	    {"1.0s", 1 * S},
	    {"1.00s", 1 * S},
	    {"1.004s", 1 * S + 4 * MS},
	    {"1.0040s", 1 * S + 4 * MS},
	    {"100.00100s", 100 * S + 1 * MS},
	    {"10ns", 10},
	    {"11us", 11 * US},
	    {"12\xc2\xb5s", 12 * US},
	    {"12\xce\xbcs", 12 * US},
	    {"13ms", 13 * MS},
	    {"14s", 14 * S},
	    {"15m", 15 * M},
	    {"16h", 16 * H},
	    {"3h30m", 3 * H + 30 * M},
	    {"10.5s4m", 4 * M + 10 * S + 500 * MS},
	    {"-2m3.4s", -(2 * M + 3 * S + 400 * MS)},
	    {"1h2m3s4ms5us6ns", 1 * H + 2 * M + 3 * S + 4 * MS + 5 * US + 6},
	    {"39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS},
	    {"52763797000ns", 52763797000},
	    {"0.3333333333333333333h", 20 * M},
	    {"9007199254740993ns", (INT64_C(1) << 53) + 1},
	    {"9223372036854775807ns", INT64_MAX},
	    {"9223372036854775.807us", INT64_MAX},
	    {"9223372036s854ms775us807ns", INT64_MAX},
	    {"-9223372036854775808ns", INT64_MIN},
	    {"-9223372036854775.808us", INT64_MIN},
	    {"-9223372036s854ms775us808ns", INT64_MIN},
	    {"-2562047h47m16.854775808s", INT64_MIN},
	    {"0.100000000000000000000h", 6 * M},
	    {"0.830103483285477580700h", 49 * M + 48 * S + 372539827},
	};
	static const struct {
		const char *in;
		int err;
	} bad[] = {
	    {"", -EINVAL},
	    {"3", -EINVAL},
	    {"-", -EINVAL},
	    {"s", -EINVAL},
	    {".", -EINVAL},
	    {"-.", -EINVAL},
	    {".s", -EINVAL},
	    {"+.s", -EINVAL},
	    {"1d", -EINVAL},
	    {"\x85\x85", -EINVAL},
	    {"\xff\xff", -EINVAL},
	    {"hello \xff\xff world", -EINVAL},
	    {"9223372036854775808ns", -ERANGE},
	    {"9223372036854775.808us", -ERANGE},
	    {"9223372036854ms775us808ns", -ERANGE},
	    {"-9223372036854775809ns", -ERANGE},
	    {"99999999999999999999h", -ERANGE},
	};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int64_t got = 42;

		if (goconv_parse_duration(ok[i].in, &got) != 0 || got != ok[i].want)
			HFAIL_("'%s': got %lld, want %lld", ok[i].in, (long long)got,
			       (long long)ok[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t got = 42;

		if (goconv_parse_duration(bad[i].in, &got) != bad[i].err || got != 42)
			HFAIL_("'%s' was not refused with %d", bad[i].in, bad[i].err);
	}
}
