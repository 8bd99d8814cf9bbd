/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_sprig_hash: Sprig's sha1sum and sha256sum over libnettle. */
#include <errno.h>

#include <nettle/sha1.h>
#include <nettle/sha2.h>

#include "gotmpl/gotmpl_internal.h"

/*
 * Sprig v3 crypto.go: sha1sum and sha256sum are hex.EncodeToString of Go's crypto/sha1 and
 * crypto/sha256 over the string's bytes. libnettle (a small library of primitives) rather than
 * libcrypto, which is 1.9 MB resident and 3400 relocations at every start for two functions.
 * adler32sum is in gotmpl_sprig_misc.c, over libdeflate.
 */

/* The digest d of n bytes as lowercase hex, as Go's hex.EncodeToString. */
static int hex_res(struct gotmpl_fctx *c, const uint8_t *d, size_t n, struct gotmpl_val **res)
{
	static const char hex[] = "0123456789abcdef";
	char buf[2 * SHA256_DIGEST_SIZE + 1];
	size_t i;

	for (i = 0; i < n; i++) {
		buf[2 * i] = hex[d[i] >> 4];
		buf[2 * i + 1] = hex[d[i] & 15];
	}
	buf[2 * n] = '\0';
	*res = gotmpl_cstr(c->a, buf);
	return *res ? 0 : -ENOMEM;
}

GT_FN(f_sha1sum)
{
	struct sha1_ctx ctx;
	uint8_t d[SHA1_DIGEST_SIZE];
	int rc = gotmpl_work(c->a, GT_SN(0) / 64);

	(void)ac;
	if (rc)
		return rc;
	sha1_init(&ctx);
	sha1_update(&ctx, GT_SN(0), (const uint8_t *)GT_S(0));
	sha1_digest(&ctx, sizeof(d), d);
	return hex_res(c, d, sizeof(d), res);
}

GT_FN(f_sha256sum)
{
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];
	int rc = gotmpl_work(c->a, GT_SN(0) / 64);

	(void)ac;
	if (rc)
		return rc;
	sha256_init(&ctx);
	sha256_update(&ctx, GT_SN(0), (const uint8_t *)GT_S(0));
	sha256_digest(&ctx, sizeof(d), d);
	return hex_res(c, d, sizeof(d), res);
}

const struct gotmpl_func gotmpl_sprig_hash_funcs[] = {
    {"sha1sum", f_sha1sum, "s", 0},
    {"sha256sum", f_sha256sum, "s", 0},
    {NULL, NULL, NULL, 0},
};
