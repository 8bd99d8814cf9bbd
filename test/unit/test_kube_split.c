/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Differential tests for pkg/kube's stream parser: a LIST or WATCH body fed whole and fed in
 * any split gives the same callbacks, the same first error and the same continue and
 * resourceVersion. Bodies come from a fixed-seed generator (no timing, no randomness between
 * runs).
 */
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "kube/kube.h"
#include "kube_rec.h"

/* xorshift64*: deterministic */
static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

/* 0..n-1 */
static size_t below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

/* A run of JSON whitespace: mostly none, sometimes longer than a lead (64). */
static void ws(struct strbuf *b)
{
	size_t n = below(10) < 6 ? 0 : below(10) < 8 ? 1 + below(4) : 60 + below(20);

	while (n--)
		sb_addch(b, " \t\r\n"[below(4)]);
}

/* A string's contents of about n bytes: letters, escapes, 2- and 4-byte UTF-8. */
static void str_body(struct strbuf *b, size_t n)
{
	static const char *const bits[] = {"a",
					   "Z",
					   "0",
					   " ",
					   "\\n",
					   "\\\"",
					   "\\\\",
					   "\\/",
					   "\\u00e9",
					   "\\ud83d\\ude00",
					   "\xc3\xa9",
					   "\xf0\x9f\x98\x80",
					   "\xe2\x82\xac",
					   "\\t"};
	size_t start = b->len;

	while (b->len - start < n) {
		if (below(4))
			sb_addch(b, (char)('a' + below(26)));
		else
			sb_add(b, bits[below(sizeof(bits) / sizeof(bits[0]))]);
	}
}

static void str(struct strbuf *b, size_t n)
{
	sb_addch(b, '"');
	str_body(b, n);
	sb_addch(b, '"');
}

/* One long value (kind picks it): strings around the cut, a long key, a long number. */
static void big_value(struct strbuf *b, int kind)
{
	static const long off[] = {-40, -9, -8, -7, -3, 0, 1, 5, 40};
	size_t n = (size_t)(KUBE_VALUE_MAX + off[below(sizeof(off) / sizeof(off[0]))]);

	if (kind == 2) { /* a number */
		sb_addch(b, '1');
		while (--n)
			sb_addch(b, (char)('0' + below(10)));
		return;
	}
	str(b, n);
}

static void value(struct strbuf *b, int depth, int *big);

static void object(struct strbuf *b, int depth, int *big)
{
	size_t i, n = below(depth > 3 ? 2 : 5);

	sb_addch(b, '{');
	for (i = 0; i < n; i++) {
		if (i) {
			ws(b);
			sb_addch(b, ',');
		}
		ws(b);
		if (*big >= 0 && *big == 3 && !below(3)) { /* a long key */
			big_value(b, 1);
			*big = -1;
		} else {
			str(b, below(12));
		}
		ws(b);
		sb_addch(b, ':');
		ws(b);
		value(b, depth + 1, big);
	}
	ws(b);
	sb_addch(b, '}');
}

static void value(struct strbuf *b, int depth, int *big)
{
	size_t i, n;

	if (*big >= 0 && *big != 3 && !below(4)) {
		big_value(b, *big);
		*big = -1;
		return;
	}
	switch (below(depth > 4 ? 6 : 9)) {
	case 0:
		str(b, below(40));
		break;
	case 1:
		str(b, below(300));
		break;
	case 2:
		sb_addf(b, "%d", (int)below(100000) - 50000);
		break;
	case 3:
		sb_addf(b, "%d.%de%d", (int)below(100), (int)below(1000), (int)below(20) - 10);
		break;
	case 4:
		sb_add(b, below(2) ? "true" : "false");
		break;
	case 5:
		sb_add(b, "null");
		break;
	case 6:
	case 7:
		object(b, depth, big);
		break;
	default:
		sb_addch(b, '[');
		n = below(5);
		for (i = 0; i < n; i++) {
			if (i)
				sb_addch(b, ',');
			ws(b);
			value(b, depth + 1, big);
			ws(b);
		}
		sb_addch(b, ']');
	}
}

/* An item: metadata first (name, namespace, resourceVersion), then random fields. */
static void item(struct strbuf *b, int *big)
{
	size_t i, n = below(6);

	sb_add(b, "{");
	ws(b);
	sb_add(b, "\"metadata\":");
	ws(b);
	sb_addf(b, "{\"name\":\"n%d\",\"namespace\":\"ns\",\"resourceVersion\":\"%d\"}",
		(int)below(1000), (int)below(100000));
	for (i = 0; i < n; i++) {
		ws(b);
		sb_addch(b, ',');
		ws(b);
		if (*big == 3 && !below(2)) { /* a long key, often right after a number */
			if (below(2))
				sb_addf(b, "\"p\":%d,", (int)below(100));
			big_value(b, 1);
			*big = -1;
		} else {
			str(b, 1 + below(10));
		}
		ws(b);
		sb_addch(b, ':');
		ws(b);
		value(b, 1, big);
	}
	ws(b);
	sb_add(b, "}");
}

/* A LIST or WATCH body; big: -1 none, else the kind of one long value somewhere in it. */
static void body(struct strbuf *b, int watch, int big)
{
	size_t i, n = 1 + below(5);

	if (watch) {
		for (i = 0; i < n; i++) {
			sb_add(b, "{\"type\":");
			ws(b);
			sb_add(b, below(2) ? "\"ADDED\"" : "\"MODIFIED\"");
			ws(b);
			sb_add(b, ",\"object\":");
			ws(b);
			item(b, &big);
			ws(b);
			sb_add(b, "}\n");
		}
		return;
	}
	sb_add(b, "{\"kind\":\"List\",");
	ws(b);
	sb_addf(b, "\"metadata\":{\"resourceVersion\":\"%d\",\"continue\":", (int)below(100000));
	ws(b);
	str(b, below(30));
	sb_add(b, "},\"items\":[");
	for (i = 0; i < n; i++) {
		if (i)
			sb_addch(b, ',');
		ws(b);
		item(b, &big);
	}
	ws(b);
	sb_add(b, "]}");
}

/* Break a few bytes of b (a fifth of bodies), or cut it short. */
static void corrupt(struct strbuf *b)
{
	size_t k = below(10);

	if (k >= 2 || !b->len)
		return;
	if (k == 1) {
		sb_truncate(b, below(b->len));
		return;
	}
	for (k = 1 + below(3); k--;)
		b->buf[below(b->len)] = "\"\\{}[],: \x80\xff\0a1"[below(14)];
}

/* Feed b in chunks (sizes from sizes[], cycled; 0: whole) and record what comes back. */
static void run(const char *b, size_t n, int kind, int mode, const struct kube_stream_ops *ops,
		const size_t *sizes, size_t nsizes, struct strbuf *out)
{
	struct rec r = {STRBUF_INIT(SIZE_MAX / 2)};
	struct log_err err = {0};
	struct kube_stream *st = kube_stream_new(kind, mode, ops, &r);
	size_t i = 0, k = 0;
	int rc = 0;

	sb_reset(out);
	if (!st) {
		sb_add(out, "no stream");
		return;
	}
	while (i < n && rc == 0) {
		size_t c = nsizes && sizes[k % nsizes] ? sizes[k % nsizes] : n;

		if (c > n - i)
			c = n - i;
		rc = kube_stream_feed(st, b + i, c, &err);
		i += c;
		k++;
	}
	if (rc == 0) {
		rc = kube_stream_finish(st, &err);
		sb_addf(out, "finish %d", rc);
	} else {
		sb_addf(out, "feed %d", rc);
	}
	sb_addf(out, " [%s] continue=%s rv=%s\n", rc ? err.msg : "", kube_stream_continue(st),
		kube_stream_rv(st));
	sb_addn(out, r.log.buf, r.log.len);
	kube_stream_free(st);
	sb_free(&r.log);
}

/* Print where two records first differ (to the failure's stderr). */
static void show_diff(const struct strbuf *a, const struct strbuf *b, const char *what)
{
	size_t i = 0;

	while (i < a->len && i < b->len && a->buf[i] == b->buf[i])
		i++;
	fprintf(stderr, "  %s: differs at %zu of %zu/%zu\n  whole: %.300s\n  split: %.300s\n", what,
		i, a->len, b->len, a->buf + (i > 80 ? i - 80 : 0), b->buf + (i > 80 ? i - 80 : 0));
}

/*
 * Feed body b every way: whole, then in chunk patterns (1-byte feeds for small bodies, tiny,
 * page-ish and one random cut), under each kind, mode and ops; all must agree with whole.
 */
static int differs(const char *b, size_t n, int watch, int *cases)
{
	size_t one[] = {1}, tiny[8], mid[8], cut[2];
	struct strbuf want = STRBUF_INIT(SIZE_MAX / 2), got = STRBUF_INIT(SIZE_MAX / 2);
	int mode, o, s, bad = 0;
	size_t j;

	for (j = 0; j < 8; j++) {
		tiny[j] = 1 + below(17);
		mid[j] = 1 + below(5000);
	}
	cut[0] = 1 + below(n ? n : 1);
	cut[1] = 0;
	for (mode = 0; mode < 2 && !bad; mode++)
		for (o = 0; o < 2 && !bad; o++) {
			const struct kube_stream_ops *ops = o ? &sops : &rops;
			enum kube_stream_kind kind = watch ? KUBE_STREAM_WATCH : KUBE_STREAM_LIST;

			run(b, n, kind, mode, ops, NULL, 0, &want);
			for (s = 0; s < 4 && !bad; s++) {
				static const char *const names[] = {"1-byte", "tiny", "mid", "cut"};

				if (s == 0 && n > 3000)
					continue;
				if (s == 1 && n > 3000 && getenv("NP_EMULATED"))
					continue; /* half a million feeds:
						     stream_split_long_values_same_result */
				run(b, n, kind, mode, ops,
				    s == 0   ? one
				    : s == 1 ? tiny
				    : s == 2 ? mid
					     : cut,
				    s == 0   ? 1
				    : s == 3 ? 2
					     : 8,
				    &got);
				(*cases)++;
				if (got.len != want.len ||
				    memcmp(got.buf, want.buf, got.len) != 0) {
					fprintf(stderr, "  watch=%d mode=%d oversize=%d split=%s\n",
						watch, mode, o, names[s]);
					show_diff(&want, &got, "record");
					bad = 1;
				}
			}
		}
	sb_free(&want);
	sb_free(&got);
	return bad;
}

/* Many small bodies, some corrupted: every split agrees with the whole. */
TEST(stream_split_anywhere_same_result)
{
	struct strbuf b = STRBUF_INIT(SIZE_MAX / 2);
	int i, cases = 0, bad = 0;

	rng = 0x9E3779B97F4A7C15ULL;
	for (i = 0; i < 600 && bad < 3; i++) {
		int watch = (int)below(2);

		sb_reset(&b);
		body(&b, watch, -1);
		corrupt(&b);
		if (differs(b.buf, b.len, watch, &cases)) {
			fprintf(stderr, "  body %d (%zu bytes): %.400s\n", i, b.len, b.buf);
			bad++;
		}
	}
	printf("# %d split cases compared\n", cases);
	CHECK_INT(bad, 0);
	sb_free(&b);
}

/*
 * Bodies with one value near and over KUBE_VALUE_MAX (string, key, number). 12 s natively, most
 * of it the 1-17-byte feeds of 4.7 MB; under an emulator (NP_EMULATED: test/bats/cross.bash) the
 * first four bodies, one of each kind, uncorrupted, without those feeds (the other splits still
 * cut them at thousands of places): 100 s a run under qemu-user for all 18.
 */
TEST(stream_split_long_values_same_result)
{
	struct strbuf b = STRBUF_INIT(SIZE_MAX / 2);
	int i, cases = 0, bad = 0, nbodies = getenv("NP_EMULATED") ? 4 : 18;

	rng = 0x0123456789ABCDEFULL;
	for (i = 0; i < nbodies && bad < 3; i++) {
		int watch = (int)below(2), kind = i % 4;

		sb_reset(&b);
		do { /* until the long value made it in */
			sb_reset(&b);
			body(&b, watch, kind == 3 ? 3 : kind);
		} while (b.len < KUBE_VALUE_MAX);
		if (i >= 12)
			corrupt(&b);
		if (differs(b.buf, b.len, watch, &cases)) {
			fprintf(stderr, "  long body %d (%zu bytes, kind %d)\n", i, b.len, kind);
			bad++;
		}
	}
	printf("# %d split cases compared\n", cases);
	CHECK_INT(bad, 0);
	sb_free(&b);
}

/*
 * A number just before the ',' of a key over the cut: yajl reports a number only at the byte
 * after it, so that byte reaches yajl before the item is marked over, however split.
 */
TEST(stream_number_before_long_key_reported)
{
	static const char head[] = "{\"items\":[{\"metadata\":{\"name\":\"a\"},\"n\":7,\"";
	static const char tail[] = "\":1}]}";
	size_t hl = sizeof(head) - 1, kl = KUBE_VALUE_MAX + 10, n = hl + kl + sizeof(tail) - 1;
	struct strbuf whole = STRBUF_INIT(SIZE_MAX / 2), split = STRBUF_INIT(SIZE_MAX / 2);
	size_t at[2] = {hl - 2, 0};
	char *b = malloc(n);

	REQUIRE(b != NULL);
	memcpy(b, head, hl);
	memset(b + hl, 'k', kl);
	memcpy(b + hl + kl, tail, sizeof(tail) - 1);
	run(b, n, KUBE_STREAM_LIST, KUBE_ITEM_FLAT, &sops, NULL, 0, &whole);
	CHECK(strstr(whole.buf, "<metadata.name=a;n=7;!LIST /a") != NULL);
	run(b, n, KUBE_STREAM_LIST, KUBE_ITEM_FLAT, &sops, at, 2, &split);
	CHECK_STR(split.buf, whole.buf);
	free(b);
	sb_free(&whole);
	sb_free(&split);
}

/*
 * A string that passes the cut on stray UTF-8 continuation bytes (never cut there) is bad JSON:
 * yajl's error, as when it was fed all along, whether the string ends in the feed or not.
 */
TEST(stream_stray_continuation_bytes_yajl_error)
{
	static const char head[] = "{\"items\":[{\"a\":\"";
	static const char tail[] = "\"}]}";
	size_t hl = sizeof(head) - 1, sl = KUBE_VALUE_MAX + 200, n = hl + sl + sizeof(tail) - 1;
	static const size_t steps[] = {0, 65536, 4099};
	struct strbuf got = STRBUF_INIT(SIZE_MAX / 2);
	char *b = malloc(n);
	size_t k, cut[2];

	REQUIRE(b != NULL);
	memcpy(b, head, hl);
	memset(b + hl, 'x', KUBE_VALUE_MAX - 9);
	memset(b + hl + KUBE_VALUE_MAX - 9, 0x80, sl - (KUBE_VALUE_MAX - 9));
	b[hl + KUBE_VALUE_MAX - 9] = (char)0xc3;
	memcpy(b + hl + sl, tail, sizeof(tail) - 1);
	for (k = 0; k < 2 * sizeof(steps) / sizeof(steps[0]); k++) {
		size_t s = steps[k % 3];

		/* the second round without the string's end (a body cut short) */
		run(b, k < 3 ? n : n - 5, KUBE_STREAM_LIST, KUBE_ITEM_FLAT, k % 2 ? &sops : &rops,
		    &s, 1, &got);
		if (!strstr(got.buf, "bad JSON from the API server: "))
			fprintf(stderr, "  step %zu, %s: %.200s\n", s,
				k < 3 ? "whole" : "cut short", got.buf);
		CHECK(strstr(got.buf, "bad JSON from the API server: ") != NULL);
	}
	cut[0] = hl + KUBE_VALUE_MAX - 8;
	cut[1] = 0;
	run(b, n - 5, KUBE_STREAM_LIST, KUBE_ITEM_FLAT, &rops, cut, 2, &got);
	CHECK(strstr(got.buf, "bad JSON from the API server: ") != NULL);
	free(b);
	sb_free(&got);
}
