/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_hash: Reloader's hash of a ConfigMap or Secret (SHA-1, and SHA-512/256 as recent Reloader
 * writes), streamed. */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64/base64.h"
#include "goregex/goregex.h"
#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_internal.h"

/* ---- hash ---- */

/* SHA-1 of the empty string: the hash of an object without entries. */
static const char sha1_empty[] = "da39a3ee5e6b4b0d3255bfef95601890afd80709";

static int md_init(void **md, const EVP_MD *type)
{
	*md = EVP_MD_CTX_new();
	return *md && EVP_DigestInit_ex(*md, type, NULL) == 1 ? 0 : -ENOMEM;
}

int reload_hasher_init(struct reload_hasher *h)
{
	memset(h, 0, sizeof(*h));
	sb_init(&h->prev, 64 * 1024);
	if (md_init(&h->md, EVP_sha1()) < 0 || md_init(&h->md2, EVP_sha512_256()) < 0) {
		reload_hasher_free(h);
		return -ENOMEM;
	}
	return 0;
}

void reload_hasher_free(struct reload_hasher *h)
{
	EVP_MD_CTX_free(h->md);
	EVP_MD_CTX_free(h->md2);
	h->md = h->md2 = NULL;
	sb_free(&h->prev);
}

/* Feed both digests. */
static void hasher_update(struct reload_hasher *h, const void *p, size_t n)
{
	EVP_DigestUpdate(h->md, p, n);
	EVP_DigestUpdate(h->md2, p, n);
}

/*
 * Order of the entries "a=..." and "b=..." for distinct keys a and b: decided
 * within the keys and the "=", so the values never need to be kept.
 */
static int entry_key_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t m = alen < blen ? alen : blen;
	int c = memcmp(a, b, m);
	unsigned char ca, cb;

	if (c)
		return c;
	if (alen == blen)
		return 0;
	ca = alen > m ? (unsigned char)a[m] : '=';
	cb = blen > m ? (unsigned char)b[m] : '=';
	return (int)ca - (int)cb; /* 0 only for a key containing '=': treated as unordered */
}

static int hasher_key(struct reload_hasher *h, const char *key, size_t klen)
{
	if (!h->md)
		return -EINVAL;
	if (h->n && entry_key_cmp(key, klen, h->prev.buf, h->prev.len) <= 0)
		h->unordered = 1;
	sb_reset(&h->prev);
	if (sb_addn(&h->prev, key, klen) < 0)
		h->unordered = 1; /* absurdly long key: let the slow path decide */
	if (h->n)
		hasher_update(h, ";", 1);
	hasher_update(h, key, klen);
	hasher_update(h, "=", 1);
	h->n++;
	return 0;
}

int reload_hasher_add(struct reload_hasher *h, const char *key, size_t klen, const char *val,
		      size_t vlen)
{
	int r = hasher_key(h, key, klen);

	if (r < 0)
		return r;
	hasher_update(h, val, vlen);
	return 0;
}

int reload_hasher_add_b64(struct reload_hasher *h, const char *key, size_t klen, const char *b64,
			  size_t len)
{
	unsigned char out[3072];
	size_t off = 0;
	int r = hasher_key(h, key, klen);

	if (r < 0)
		return r;
	while (off < len) {
		size_t n = len - off > 4096 ? 4096 : len - off;
		long d = base64_decode(b64 + off, n, out, sizeof(out));

		if (d < 0) {
			h->bad = 1;
			return 0;
		}
		hasher_update(h, out, (size_t)d);
		off += n;
	}
	return 0;
}

static void to_hex(const unsigned char *d, unsigned int n, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	unsigned int i;

	for (i = 0; i < n; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[2 * n] = '\0';
}

/* Finish md (SHA-1) into hex and md2 (SHA-512/256) into alt (if not NULL). */
static int digests_final(void *md, void *md2, char hex[RELOAD_HASH_HEX], unsigned char *alt)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (EVP_DigestFinal_ex(md, d, &n) != 1 || n != 20)
		return -ENOMEM;
	to_hex(d, n, hex);
	if (alt && (EVP_DigestFinal_ex(md2, d, &n) != 1 || n != RELOAD_HASH_ALT))
		return -ENOMEM;
	if (alt)
		memcpy(alt, d, RELOAD_HASH_ALT);
	return 0;
}

int reload_hasher_final(struct reload_hasher *h, char hex[RELOAD_HASH_HEX], unsigned char *alt)
{
	int r = 0;

	hex[0] = '\0';
	if (!h->md || !h->md2)
		return -EINVAL;
	if (h->bad)
		r = -EINVAL;
	else if (h->unordered)
		r = -EAGAIN;
	else
		r = digests_final(h->md, h->md2, hex, alt);
	if (r < 0)
		hex[0] = '\0';
	reload_hasher_free(h);
	return r;
}

int reload_hash_current(const char *rec, const char *hex, const unsigned char *alt)
{
	char ahex[2 * RELOAD_HASH_ALT + 1];
	size_t n;

	if (!rec || !hex || !hex[0])
		return 0;
	n = strlen(rec);
	if (n == 2 * RELOAD_HASH_ALT && alt) {
		to_hex(alt, RELOAD_HASH_ALT, ahex);
		return strcmp(rec, ahex) == 0;
	}
	if (n == 0)
		return strcmp(hex, sha1_empty) == 0;
	return strcmp(rec, hex) == 0;
}

struct entry {
	char *s;
	size_t len;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	size_t m = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, m);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Append "key=value" entries of one data section to ents. */
static int collect(json_t *section, int decode, struct entry **ents, size_t *n, size_t *cap)
{
	const char *key;
	json_t *v;

	if (!json_is_object(section))
		return 0;
	json_object_foreach(section, key, v)
	{
		size_t klen = strlen(key), vlen = json_string_length(v);
		const char *val = json_string_value(v);
		struct entry *e;
		long d;

		if (!val)
			continue;
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 16;
			struct entry *ne = realloc(*ents, nc * sizeof(*ne));

			if (!ne)
				return -ENOMEM;
			*ents = ne;
			*cap = nc;
		}
		e = &(*ents)[*n];
		e->s = malloc(klen + 1 + vlen + 1);
		if (!e->s)
			return -ENOMEM;
		memcpy(e->s, key, klen);
		e->s[klen] = '=';
		if (decode) {
			d = base64_decode(val, vlen, (unsigned char *)e->s + klen + 1, vlen);
			if (d < 0) {
				free(e->s);
				return -EINVAL;
			}
			e->len = klen + 1 + (size_t)d;
		} else {
			memcpy(e->s + klen + 1, val, vlen);
			e->len = klen + 1 + vlen;
		}
		(*n)++;
	}
	return 0;
}

int reload_hash_object(json_t *obj, enum reload_type type, char hex[RELOAD_HASH_HEX],
		       unsigned char *alt)
{
	struct entry *ents = NULL;
	size_t n = 0, cap = 0, i;
	struct reload_hasher h = {0};
	int r;

	hex[0] = '\0';
	r = collect(json_object_get(obj, "data"), type == RELOAD_SECRET, &ents, &n, &cap);
	if (!r && type == RELOAD_CONFIGMAP)
		r = collect(json_object_get(obj, "binaryData"), 0, &ents, &n, &cap);
	if (r < 0)
		goto out;
	if (n)
		qsort(ents, n, sizeof(*ents), entry_cmp);
	r = reload_hasher_init(&h);
	if (r < 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (i)
			hasher_update(&h, ";", 1);
		hasher_update(&h, ents[i].s, ents[i].len);
	}
	r = digests_final(h.md, h.md2, hex, alt);
	if (r < 0)
		hex[0] = '\0';
out:
	for (i = 0; i < n; i++)
		free(ents[i].s);
	free(ents);
	reload_hasher_free(&h);
	return r;
}
