/* SPDX-License-Identifier: GPL-2.0-or-later */
/* base64: RFC 4648 standard base64 decode and encode (Go's base64.StdEncoding). */
#include "base64/base64.h"

#include <errno.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The value of base64 character c, or -1. */
static int b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

long base64_decode(const char *in, size_t len, unsigned char *out, size_t outmax)
{
	unsigned int acc = 0;
	int bits = 0;
	size_t i, n = 0, pad = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		int v = b64val(c);

		if (c == '=') {
			pad++;
			continue;
		}
		if (v < 0)
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

static int is_nl(char c)
{
	return c == '\n' || c == '\r';
}

/*
 * One quantum of up to four characters from in[*si], as Go's decodeQuantum (StdEncoding: padding
 * '=', not strict): the bytes written to out (0 when the quantum is cut short), *bad set on error.
 */
static int quantum(const char *in, size_t len, size_t *si, unsigned char *out, long *bad)
{
	unsigned char q[4] = {0, 0, 0, 0};
	int j, dlen = 4;
	unsigned long v;

	for (j = 0; j < 4; j++) {
		unsigned char c;
		int x;

		if (*si == len) {
			if (j > 0) /* a cut quantum: padding is required */
				*bad = (long)(*si - (size_t)j);
			return -1;
		}
		c = (unsigned char)in[(*si)++];
		if ((x = b64val(c)) >= 0) {
			q[j] = (unsigned char)x;
			continue;
		}
		if (is_nl((char)c)) {
			j--;
			continue;
		}
		if (c != '=' || j < 2) {
			*bad = (long)*si - 1;
			return -1;
		}
		if (j == 2) { /* "==" expected: the second '=' after any newlines */
			while (*si < len && is_nl(in[*si]))
				(*si)++;
			if (*si == len) {
				*bad = (long)len;
				return -1;
			}
			if (in[*si] != '=') {
				*bad = (long)*si - 1;
				return -1;
			}
			(*si)++;
		}
		while (*si < len && is_nl(in[*si]))
			(*si)++;
		if (*si < len) /* trailing garbage; the quantum's bytes are still written */
			*bad = (long)*si;
		dlen = j;
		break;
	}
	v = (unsigned long)q[0] << 18 | (unsigned long)q[1] << 12 | (unsigned long)q[2] << 6 | q[3];
	out[0] = (unsigned char)(v >> 16);
	if (dlen > 2)
		out[1] = (unsigned char)(v >> 8);
	if (dlen > 3)
		out[2] = (unsigned char)v;
	return dlen - 1;
}

long base64_decode_go(const char *in, size_t len, unsigned char *out, long *bad)
{
	size_t si = 0;
	long n = 0;
	int w;

	*bad = -1;
	while (si < len) {
		w = quantum(in, len, &si, out + n, bad);
		if (w > 0)
			n += w;
		if (*bad >= 0 || w < 3)
			break;
	}
	return n;
}
