/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/base64: RFC 4648 section 10 vectors both ways, and bad input. */
#include <errno.h>

#include "base64/base64.h"
#include "harness.h"

static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
static const char *const coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};

TEST(rfc4648_vectors_encode)
{
	char out[16];
	size_t i;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		CHECK_INT(base64_encode(plain[i], strlen(plain[i]), out), strlen(coded[i]));
		CHECK_STR(out, coded[i]);
		CHECK_INT(BASE64_ENCODED_LEN(strlen(plain[i])), strlen(coded[i]));
	}
}

TEST(rfc4648_vectors_decode)
{
	unsigned char out[16];
	size_t i;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		long n = base64_decode(coded[i], strlen(coded[i]), out, sizeof(out));

		CHECK_INT(n, strlen(plain[i]));
		CHECK(n >= 0 && memcmp(out, plain[i], (size_t)n) == 0);
	}
}

TEST(all_bytes_round_trip)
{
	unsigned char in[256], back[256];
	char enc[BASE64_ENCODED_LEN(256) + 1];
	size_t i;

	for (i = 0; i < 256; i++)
		in[i] = (unsigned char)i;
	for (i = 0; i <= 256; i++) {
		size_t n = base64_encode(in, i, enc);

		CHECK_INT(base64_decode(enc, n, back, sizeof(back)), i);
		CHECK(memcmp(in, back, i) == 0);
	}
}

TEST(bad_input)
{
	unsigned char out[16];

	CHECK_INT(base64_decode("dGVzdA", 6, out, sizeof(out)), 4); /* padding optional */
	CHECK_INT(base64_decode("dG=zdA==", 8, out, sizeof(out)), -EINVAL);
	CHECK_INT(base64_decode("d", 1, out, sizeof(out)), -EINVAL);
	CHECK_INT(base64_decode("dGVzdA===", 9, out, sizeof(out)), -EINVAL);
	CHECK_INT(base64_decode("dGV zdA==", 9, out, sizeof(out)), -EINVAL);
	CHECK_INT(base64_decode("dGVzdA==", 8, out, 3), -E2BIG);
}
