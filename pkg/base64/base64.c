/* SPDX-License-Identifier: GPL-2.0-or-later */
/* base64: RFC 4648 standard base64 decode and encode (Go's base64.StdEncoding). */
#include "base64/base64.h"

#include <errno.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

long base64_decode(const char *in, size_t len, unsigned char *out, size_t outmax)
{
	unsigned int acc = 0;
	int bits = 0;
	size_t i, n = 0, pad = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		int v;

		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '+')
			v = 62;
		else if (c == '/')
			v = 63;
		else if (c == '=') {
			pad++;
			continue;
		} else
			return -EINVAL;
		if (pad)
			return -EINVAL; /* data after padding */
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n >= outmax)
				return -E2BIG;
			out[n++] = (unsigned char)(acc >> bits);
		}
	}
	if (pad > 2 || bits >= 6)
		return -EINVAL;
	return (long)n;
}

size_t base64_encode(const void *in, size_t len, char *out)
{
	const unsigned char *p = in;
	size_t i, n = 0;

	for (i = 0; i + 2 < len; i += 3) {
		unsigned long v =
		    (unsigned long)p[i] << 16 | (unsigned long)p[i + 1] << 8 | p[i + 2];

		out[n++] = alphabet[v >> 18 & 63];
		out[n++] = alphabet[v >> 12 & 63];
		out[n++] = alphabet[v >> 6 & 63];
		out[n++] = alphabet[v & 63];
	}
	if (i < len) {
		unsigned long v =
		    (unsigned long)p[i] << 16 | (i + 1 < len ? (unsigned long)p[i + 1] << 8 : 0);

		out[n++] = alphabet[v >> 18 & 63];
		out[n++] = alphabet[v >> 12 & 63];
		out[n++] = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
		out[n++] = '=';
	}
	out[n] = '\0';
	return n;
}
