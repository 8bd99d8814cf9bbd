/* SPDX-License-Identifier: GPL-2.0-or-later */
/* base64: RFC 4648 standard base64 (Go's base64.StdEncoding), the one place it is written. */
#ifndef NP_BASE64_H
#define NP_BASE64_H

#include <stddef.h>

/* Bytes base64_encode writes for len input bytes, without the NUL. */
#define BASE64_ENCODED_LEN(len) (4 * (((len) + 2) / 3))

/*
 * Decode len bytes of standard base64 (Kubernetes' Secret data, kubeconfig
 * *-data fields) into out (outmax bytes). Padding is optional; data after
 * padding, more than two '=', a lone trailing character or any byte outside
 * the alphabet is -EINVAL; more than outmax bytes is -E2BIG. Returns the
 * number of bytes written.
 */
long base64_decode(const char *in, size_t len, unsigned char *out, size_t outmax);

/*
 * Decode len bytes as Go's base64.StdEncoding.Decode does, byte for byte
 * (encoding/base64's decodeQuantum): '\r' and '\n' are skipped anywhere,
 * padding is required, nothing may follow it. out must hold len / 4 * 3 bytes.
 * Returns the bytes written, which Go also keeps on error; *bad is -1, or
 * the offset Go's CorruptInputError names ("illegal base64 data at input
 * byte N").
 */
long base64_decode_go(const char *in, size_t len, unsigned char *out, long *bad);

/*
 * Encode len bytes into out, which must hold BASE64_ENCODED_LEN(len) + 1
 * bytes: padded standard base64, NUL-terminated. Returns the length written.
 */
size_t base64_encode(const void *in, size_t len, char *out);

#endif
