/* SPDX-License-Identifier: GPL-2.0-or-later */
/* goconv: strconv.ParseBool, Atoi and time.ParseDuration with Go's exact grammar and limits. */
#include "goconv/goconv.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int goconv_parse_bool(const char *s)
{
	static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i]))
			return 1;
		if (!strcmp(s, no[i]))
			return 0;
	}
	return -EINVAL;
}

bool goconv_atoi(const char *s, long long *out)
{
	char *end;

	if (!*s || (!isdigit((unsigned char)*s) && *s != '-' && *s != '+'))
		return false;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return !errno && !*end && end != s && isdigit((unsigned char)end[-1]);
}

#define NEG_LIMIT (UINT64_C(1) << 63) /* magnitude of the most negative int64 */

static const struct {
	const char *name;
	uint64_t ns;
} units[] = {
    {"ns", 1},
    {"us", 1000},
    {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
    {"\xce\xbcs", 1000}, /* U+03BC Greek small letter mu */
    {"ms", 1000000},
    {"s", 1000000000},
    {"m", UINT64_C(60000000000)},
    {"h", UINT64_C(3600000000000)},
};

static int isdig(char c)
{
	return c >= '0' && c <= '9';
}

/* Go's leadingInt: digits at *s into *x; -ERANGE past 1<<63. */
static int leading_int(const char **s, uint64_t *x)
{
	*x = 0;
	for (; isdig(**s); (*s)++) {
		if (*x > NEG_LIMIT / 10)
			return -ERANGE;
		*x = *x * 10 + (uint64_t)(**s - '0');
		if (*x > NEG_LIMIT)
			return -ERANGE;
	}
	return 0;
}

/* Go's leadingFraction: digits at *s into *x and *scale, ignoring what would overflow. */
static void leading_fraction(const char **s, uint64_t *x, double *scale)
{
	int overflow = 0;

	*x = 0;
	*scale = 1;
	for (; isdig(**s); (*s)++) {
		uint64_t y;

		if (overflow)
			continue;
		if (*x > (NEG_LIMIT - 1) / 10) {
			overflow = 1;
			continue;
		}
		y = *x * 10 + (uint64_t)(**s - '0');
		if (y > NEG_LIMIT) {
			overflow = 1;
			continue;
		}
		*x = y;
		*scale *= 10;
	}
}

int goconv_parse_duration(const char *s, int64_t *ns)
{
	uint64_t d = 0;
	int neg = 0;

	if (*s == '-' || *s == '+') {
		neg = *s == '-';
		s++;
	}
	if (!strcmp(s, "0")) {
		*ns = 0;
		return 0;
	}
	if (!*s)
		return -EINVAL;
	while (*s) {
		uint64_t v = 0, f = 0, unit = 0;
		double scale = 1;
		const char *start = s;
		int pre, post = 0;
		size_t i, n;

		if (*s != '.' && !isdig(*s))
			return -EINVAL;
		if (leading_int(&s, &v) < 0)
			return -ERANGE;
		pre = s != start;
		if (*s == '.') {
			const char *fs = ++s;

			leading_fraction(&s, &f, &scale);
			post = s != fs;
		}
		if (!pre && !post)
			return -EINVAL;
		for (n = 0; s[n] && s[n] != '.' && !isdig(s[n]); n++)
			;
		if (n == 0)
			return -EINVAL; /* missing unit */
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strlen(units[i].name) == n && !strncmp(s, units[i].name, n))
				unit = units[i].ns;
		if (!unit)
			return -EINVAL; /* unknown unit */
		s += n;
		if (v > NEG_LIMIT / unit)
			return -ERANGE;
		v *= unit;
		if (f > 0) {
			v += (uint64_t)((double)f * ((double)unit / scale));
			if (v > NEG_LIMIT)
				return -ERANGE;
		}
		d += v;
		if (d > NEG_LIMIT)
			return -ERANGE;
	}
	if (neg) {
		*ns = d == NEG_LIMIT ? INT64_MIN : -(int64_t)d;
		return 0;
	}
	if (d > NEG_LIMIT - 1)
		return -ERANGE;
	*ns = (int64_t)d;
	return 0;
}
