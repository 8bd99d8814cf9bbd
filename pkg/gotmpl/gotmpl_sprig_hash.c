/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_sprig_hash: Sprig's deterministic crypto functions: sha1sum, sha256sum, derivePassword,
 * decryptAES. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/aes.h>
#include <nettle/cbc.h>
#include <nettle/hmac.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <openssl/evp.h> /* EVP_PBE_scrypt's prototype only: libcrypto is loaded with dlopen */

#include "base64/base64.h"
#include "gotmpl/gotmpl_internal.h"
#include "strbuf/strbuf.h"

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

/*
 * derivePassword and decryptAES, as Sprig v3 crypto.go (Masterminds/sprig @
 * 0209fbb277cdb6be2892cd06d6edbc7232a6528a, the code NFD v0.19's sprig/v3 v3.3.0 carries).
 *
 * derivePassword is the Master Password algorithm: scrypt(password, salt = seed ‖ len(user) ‖ user,
 * N=32768, r=8, p=2, 64 bytes) as key of an HMAC-SHA256 over seed ‖ len(site) ‖ site ‖ counter
 * (lengths and counter big-endian uint32); the HMAC's first byte picks the type's template, the
 * next ones its characters. scrypt is OpenSSL's EVP_PBE_scrypt from libcrypto, loaded (dlopen) on
 * the first call only: libcrypto costs 1.9 MB of RSS and 3400 relocations at every start, and
 * nothing else in nodeprobe needs it. HMAC-SHA256 and AES are libnettle's (linked in).
 */

#define MP_SEED	  "com.lyndir.masterpassword"
#define LIBCRYPTO "libcrypto.so.3" /* Debian bookworm's OpenSSL 3 (package libssl3) */

/* Sprig's passwordTypeTemplates */
static const struct {
	const char *type;
	const char *const *tmpl;
	int n;
} pw_types[] = {
#define T(name, ...)                                                                               \
	{                                                                                          \
		name, (const char *const[]){__VA_ARGS__},                                          \
		    (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))       \
	}
    T("maximum", "anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"),
    T("long", "CvcvnoCvcvCvcv", "CvcvCvcvnoCvcv", "CvcvCvcvCvcvno", "CvccnoCvcvCvcv",
      "CvccCvcvnoCvcv", "CvccCvcvCvcvno", "CvcvnoCvccCvcv", "CvcvCvccnoCvcv", "CvcvCvccCvcvno",
      "CvcvnoCvcvCvcc", "CvcvCvcvnoCvcc", "CvcvCvcvCvccno", "CvccnoCvccCvcv", "CvccCvccnoCvcv",
      "CvccCvccCvcvno", "CvcvnoCvccCvcc", "CvcvCvccnoCvcc", "CvcvCvccCvccno", "CvccnoCvcvCvcc",
      "CvccCvcvnoCvcc", "CvccCvcvCvccno"),
    T("medium", "CvcnoCvc", "CvcCvcno"),
    T("short", "Cvcn"),
    T("basic", "aaanaaan", "aannaaan", "aaannaaa"),
    T("pin", "nnnn"),
#undef T
};

/* Sprig's templateCharacters: the characters each template letter draws from. */
static const char *pw_chars(char t)
{
	switch (t) {
	case 'V':
		return "AEIOU";
	case 'C':
		return "BCDFGHJKLMNPQRSTVWXYZ";
	case 'v':
		return "aeiou";
	case 'c':
		return "bcdfghjklmnpqrstvwxyz";
	case 'A':
		return "AEIOUBCDFGHJKLMNPQRSTVWXYZ";
	case 'a':
		return "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz";
	case 'n':
		return "0123456789";
	case 'o':
		return "@&%?,=[]_:-+*$#!'^~;()/.";
	}
	return "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()"; /* 'x' */
}

typedef __typeof__(EVP_PBE_scrypt) scrypt_fn;
static scrypt_fn *scrypt_p;
static char scrypt_err[200];
static pthread_once_t scrypt_once = PTHREAD_ONCE_INIT;

static void scrypt_load(void)
{
	void *l = dlopen(LIBCRYPTO, RTLD_NOW | RTLD_LOCAL);

	if (l)
		scrypt_p = (scrypt_fn *)dlsym(l, "EVP_PBE_scrypt");
	if (!scrypt_p)
		snprintf(scrypt_err, sizeof(scrypt_err), "%s", dlerror());
}

/* The bytes seed ‖ be32(len(s)) ‖ s into b (which holds sizeof(MP_SEED) + 4 + n). */
static size_t mp_msg(uint8_t *b, const char *s, size_t n)
{
	memcpy(b, MP_SEED, sizeof(MP_SEED) - 1);
	b += sizeof(MP_SEED) - 1;
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)((uint32_t)n >> (24 - 8 * i));
	memcpy(b + 4, s, n);
	return sizeof(MP_SEED) - 1 + 4 + n;
}

/*
 * derivePassword counter type password user site. scrypt's cost is charged as an eighth of the
 * execution's step budget, so one execution runs it at most 8 times (fewer when the template does
 * other work or its inputs are long: 64 units a byte of user and site, 8 of the password, so the
 * longest user is under 1 MiB and the longest password under 8 MiB); each run holds 32 MiB
 * (scrypt's N·r·128 bytes) from OpenSSL's allocator until it returns.
 */
GT_FN(f_derivepassword)
{
	const char *user = GT_S(3), *site = GT_S(4);
	size_t nuser = GT_SN(3), nsite = GT_SN(4), n;
	uint32_t counter = (uint32_t)av[0]->u.i;
	uint8_t key[64], seed[SHA256_DIGEST_SIZE], *b;
	struct hmac_sha256_ctx h;
	const char *tmpl;
	int t, rc;

	(void)ac;
	for (t = 0; t < (int)(sizeof(pw_types) / sizeof(pw_types[0])); t++)
		if (strlen(pw_types[t].type) == GT_SN(1) &&
		    !memcmp(pw_types[t].type, GT_S(1), GT_SN(1)))
			break;
	if (t ==
	    (int)(sizeof(pw_types) / sizeof(pw_types[0]))) { /* Sprig returns this as the result */
		struct strbuf sb = STRBUF_INIT(GT_STR_MAX);

		int r = sb_add(&sb, "cannot find password template ");

		return gotmpl_done(c, &sb, r ? r : sb_addn(&sb, GT_S(1), GT_SN(1)), res);
	}
	/* measured: PBKDF2 hashes the salt (seed and user) once per 32-byte block of scrypt's
	 * 2 KiB, so 64 times; OpenSSL holds copies of the password while it runs */
	rc = gotmpl_work(c->a, GOTMPL_STEPS_MAX * GT_WORK_PER_STEP / 8 + 64 * (nuser + nsite) +
				   8 * GT_SN(2));
	if (rc)
		return rc;
	pthread_once(&scrypt_once, scrypt_load);
	if (!scrypt_p)
		return gotmpl_fail(c, "scrypt: %s could not be loaded: %s", LIBCRYPTO, scrypt_err);
	b = malloc(sizeof(MP_SEED) + 8 + (nuser > nsite ? nuser : nsite));
	if (!b)
		return -ENOMEM;
	n = mp_msg(b, user, nuser);
	/* 40 MiB: OpenSSL's own default cap (32 MiB) is just under what N=32768, r=8 needs */
	if (scrypt_p(GT_S(2), GT_SN(2), b, n, 32768, 8, 2, 40u << 20, key, sizeof(key)) != 1) {
		free(b);
		return gotmpl_fail(c, "scrypt: EVP_PBE_scrypt failed (out of memory?)");
	}
	n = mp_msg(b, site, nsite);
	for (int i = 0; i < 4; i++)
		b[n++] = (uint8_t)(counter >> (24 - 8 * i));
	hmac_sha256_set_key(&h, sizeof(key), key);
	hmac_sha256_update(&h, n, b);
	hmac_sha256_digest(&h, sizeof(seed), seed);
	free(b);
	tmpl = pw_types[t].tmpl[seed[0] % pw_types[t].n];
	n = strlen(tmpl); /* at most 20: seed has 32 bytes */
	char out[32];

	for (size_t i = 0; i < n; i++) {
		const char *set = pw_chars(tmpl[i]);

		out[i] = set[seed[i + 1] % strlen(set)];
	}
	GT_RES(gotmpl_str(c->a, out, n));
}

/*
 * decryptAES password base64: AES-256-CBC with the password's first 32 bytes (zero-padded) as key
 * and the first block as IV; the last byte says how many to drop (PKCS#7's count, its bytes not
 * checked). Where Go panics (too short, not whole blocks, a count past the text) text/template
 * reports the panic; so does this, in Go's words.
 */
GT_FN(f_decryptaes)
{
	uint8_t key[AES256_KEY_SIZE] = {0}, iv[AES_BLOCK_SIZE], *crypt, *plain;
	size_t cap = GT_SN(1) / 4 * 3, body;
	struct aes256_ctx aes;
	long n, bad;
	int pad, rc;

	(void)ac;
	if (!GT_SN(1))
		GT_RES(gotmpl_str(c->a, "", 0));
	memcpy(key, GT_S(0), GT_SN(0) < sizeof(key) ? GT_SN(0) : sizeof(key));
	crypt = gotmpl_alloc(c->a, cap + 1);
	if (!crypt)
		return -ENOMEM;
	n = base64_decode_go(GT_S(1), GT_SN(1), crypt, &bad);
	if (bad >= 0)
		return gotmpl_fail(c, "illegal base64 data at input byte %ld", bad);
	if (cap < AES_BLOCK_SIZE) /* iv := crypt[:aes.BlockSize] */
		return gotmpl_fail(
		    c, "runtime error: slice bounds out of range [:%d] with capacity %zu",
		    AES_BLOCK_SIZE, cap);
	if (n < AES_BLOCK_SIZE) /* crypt = crypt[aes.BlockSize:] */
		return gotmpl_fail(c, "runtime error: slice bounds out of range [%d:%ld]",
				   AES_BLOCK_SIZE, n);
	body = (size_t)n - AES_BLOCK_SIZE;
	if (body % AES_BLOCK_SIZE)
		return gotmpl_fail(c, "crypto/cipher: input not full blocks");
	if (!body) /* decrypted[len(decrypted)-1] */
		return gotmpl_fail(c, "runtime error: index out of range [-1]");
	rc = gotmpl_work(c->a, body / AES_BLOCK_SIZE);
	if (rc)
		return rc;
	plain = gotmpl_alloc(c->a, body);
	if (!plain)
		return -ENOMEM;
	memcpy(iv, crypt, sizeof(iv));
	aes256_set_decrypt_key(&aes, key);
	cbc_decrypt(&aes, (nettle_cipher_func *)aes256_decrypt, AES_BLOCK_SIZE, iv, body, plain,
		    crypt + AES_BLOCK_SIZE);
	pad = plain[body - 1];
	if ((size_t)pad > body)
		return gotmpl_fail(c, "runtime error: slice bounds out of range [:%ld]",
				   (long)body - pad);
	GT_RES(gotmpl_str(c->a, (const char *)plain, body - (size_t)pad));
}

const struct gotmpl_func gotmpl_sprig_hash_funcs[] = {
    {"decryptAES", f_decryptaes, "ss", 0},
    {"derivePassword", f_derivepassword, "ussss", 0},
    {"sha1sum", f_sha1sum, "s", 0},
    {"sha256sum", f_sha256sum, "s", 0},
    {NULL, NULL, NULL, 0},
};
