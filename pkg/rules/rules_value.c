/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_value: the pure helpers every stage of the module uses (arrays, Go's numbers, versions). */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goconv/goconv.h"
#include "rules/rules_internal.h"

/*
 * Grow *arr (of *n elements of size sz) by one zeroed element; NULL on ENOMEM.
 * The room is the next power of two of *n, so it is reallocated only when *n
 * is 0 or a power of two: appending n elements copies O(n) bytes, not O(n^2)
 * (a 150,000-node template took minutes under ASan, whose realloc always
 * copies). Arrays passed here are grown by this function only.
 */
void *rules_grow(void *arr_p, size_t *n, size_t sz)
{
	void **arr = arr_p;
	char *na = *arr;
	size_t room;

	if ((*n & (*n - 1)) == 0) {
		room = *n ? *n * 2 : 1;
		if (room > SIZE_MAX / sz)
			return NULL;
		na = realloc(*arr, room * sz);
		if (!na)
			return NULL;
		*arr = na;
	}
	memset(na + *n * sz, 0, sz);
	return na + (*n)++ * sz;
}

/* Go's strconv.Atoi: optional sign, decimal digits, no spaces. */
bool rules_atoi_go(const char *s, long long *out)
{
	return goconv_atoi(s, out);
}

/* One dot-separated identifier of a pre-release or build part: [0-9A-Za-z-]+. */
static bool ver_ident(const char *s, size_t n, bool pre)
{
	size_t i;
	bool digits = true;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '-')
			return false;
		if (!isdigit((unsigned char)s[i]))
			digits = false;
	}
	/* semver: a numeric pre-release identifier has no leading zero */
	return !(pre && digits && n > 1 && s[0] == '0');
}

static bool ver_idents(const char *s, size_t n, bool pre)
{
	const char *end = s + n;

	for (;;) {
		const char *dot = memchr(s, '.', (size_t)(end - s));
		size_t len = dot ? (size_t)(dot - s) : (size_t)(end - s);

		if (!ver_ident(s, len, pre))
			return false;
		if (!dot)
			return true;
		s = dot + 1;
	}
}

/*
 * type: version, as NFD: Masterminds/semver's NewVersion (coerced form
 * ^v?N(.N)?(.N)?(-PRE)?(+META)?$, missing parts 0, digits with leading zeros
 * allowed), then only major.minor.patch compared (expression.go drops the
 * pre-release; build metadata never compares). "6.1.0-50-arm64" is 6.1.0,
 * "22.04" 22.4.0; "1.2.3.4", "5.4.0-050" and anything with '_' are errors.
 */
bool rules_version_parse(const char *s, struct ver *out)
{
	const char *p = s, *plus, *dash;
	int i;

	memset(out, 0, sizeof(*out));
	if (*p == 'v')
		p++;
	for (i = 0; i < 3; i++) {
		unsigned long long v = 0;
		const char *start = p;

		while (isdigit((unsigned char)*p)) {
			if (v > (~0ULL - 9) / 10)
				return false;
			v = v * 10 + (unsigned long long)(*p - '0');
			p++;
		}
		if (p == start)
			return false;
		out->v[i] = v;
		if (*p != '.' || i == 2)
			break;
		p++;
	}
	if (*p == '.')
		return false; /* a fourth part */
	plus = strchr(p, '+');
	dash = *p == '-' ? p : NULL;
	if (!dash && p != plus && *p)
		return false;
	if (dash && !ver_idents(dash + 1, (size_t)((plus ? plus : p + strlen(p)) - dash - 1), true))
		return false;
	if (plus && !ver_idents(plus + 1, strlen(plus + 1), false))
		return false;
	return true;
}

void rules_escape(char *dst, size_t cap, const char *s)
{
	size_t o = 0;

	for (; *s && o + 5 < cap; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f)
			o += (size_t)snprintf(dst + o, cap - o, "\\x%02x", ch);
		else
			dst[o++] = (char)ch;
	}
	if (cap)
		dst[o] = '\0';
}
