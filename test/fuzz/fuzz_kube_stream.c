/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_kube_stream: libFuzzer target for the LIST/WATCH stream parser and Reloader's workload
 * parsing. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_scalar(void *ctx, int depth, const char *const *keys, const char *val, size_t len)
{
	struct reload_hasher *h = ctx;

	if (depth == 2 && val && h->md)
		reload_hasher_add_b64(h, keys[1], strlen(keys[1]), val, len);
	return 0;
}

static int on_item(void *ctx, const char *type, json_t *obj)
{
	struct reload_workload w;
	char hex[RELOAD_HASH_HEX];

	(void)ctx;
	(void)type;
	if (!obj)
		return 0;
	reload_workload_parse(&w, RELOAD_DEPLOYMENT, obj, 0, NULL);
	reload_workload_free(&w);
	reload_hash_object(obj, RELOAD_CONFIGMAP, hex, NULL);
	return 0;
}

static const struct kube_stream_ops ops = {on_scalar, NULL, on_item, NULL};

/* The differential runs: what the parser reports, as text, to compare feeds split differently. */
static int rec_scalar(void *ctx, int depth, const char *const *keys, const char *val, size_t len)
{
	struct strbuf *log = ctx;
	int i;

	for (i = 0; i < depth; i++)
		sb_addf(log, "%s%s", i ? "." : "", keys[i]);
	sb_add(log, "=");
	sb_addn(log, val, len);
	sb_add(log, ";");
	return 0;
}

static int rec_begin(void *ctx)
{
	sb_add(ctx, "<");
	return 0;
}

static int rec_item(void *ctx, const char *type, json_t *obj)
{
	char *s = obj ? json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII) : NULL;

	sb_addf(ctx, ">%s%s\n", type, s ? s : "");
	free(s);
	return 0;
}

static int rec_oversize(void *ctx, const char *type, const char *ns, const char *name,
			const char *what)
{
	sb_addf(ctx, "!%s %s/%s (%s)\n", type, ns, name, what);
	return 0;
}

static const struct kube_stream_ops rec_ops[2] = {
    {rec_scalar, rec_begin, rec_item, NULL},
    {rec_scalar, rec_begin, rec_item, rec_oversize},
};

/*
 * Feed data[0..size) in pieces: up to cut, then chunks of step bytes (0: the rest whole). Record
 * the callbacks, the first error and what the stream extracted in out.
 */
static void run(size_t mode, const uint8_t *data, size_t size, size_t cut, size_t step,
		struct strbuf *out)
{
	struct log_err err = {0};
	struct kube_stream *st = kube_stream_new(mode & 1 ? KUBE_STREAM_WATCH : KUBE_STREAM_LIST,
						 mode & 2 ? KUBE_ITEM_JSON : KUBE_ITEM_FLAT,
						 &rec_ops[(mode >> 2) & 1], out);
	size_t i = 0;
	int r;

	if (!st)
		abort();
	r = kube_stream_feed(st, data, cut, &err);
	for (i = cut; r == 0 && i < size; i += step ? step : size) {
		size_t n = step && size - i > step ? step : size - i;

		r = kube_stream_feed(st, data + i, n, &err);
	}
	if (r == 0)
		r = kube_stream_finish(st, &err);
	sb_addf(out, "\n=> %d [%s] continue=%s rv=%s", r, r ? err.msg : "",
		kube_stream_continue(st), kube_stream_rv(st));
	kube_stream_free(st);
}

/*
 * The first byte: bits 0-1 the stream kind and item mode, bit 2 ops->oversize (differential
 * runs), bits 3-7 where the split run cuts and the chunk size of the chunked run. Fed whole,
 * cut in two and in small chunks, the parser must report the same (kube_stream_feed's contract).
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reload_hasher h;
	struct strbuf whole = STRBUF_INIT(1 << 26), part = STRBUF_INIT(1 << 26);
	size_t mode, sel;

	if (size < 1)
		return 0;
	mode = data[0] & 7;
	sel = data[0] >> 3;
	data++;
	size--;
	if (reload_hasher_init(&h) < 0)
		return 0;
	{
		struct kube_stream *st =
		    kube_stream_new(mode & 1 ? KUBE_STREAM_WATCH : KUBE_STREAM_LIST,
				    mode & 2 ? KUBE_ITEM_JSON : KUBE_ITEM_FLAT, &ops, &h);

		if (st) {
			if (kube_stream_feed(st, data, size / 2, NULL) == 0 &&
			    kube_stream_feed(st, data + size / 2, size - size / 2, NULL) == 0)
				kube_stream_finish(st, NULL);
			kube_stream_free(st);
		}
	}
	reload_hasher_free(&h);
	run(mode, data, size, size, 0, &whole);
	run(mode, data, size, size * sel / 31, 0, &part);
	if (strcmp(whole.buf, part.buf) != 0) {
		fprintf(stderr, "cut at %zu of %zu differs:\n--- whole\n%s\n--- cut\n%s\n",
			size * sel / 31, size, whole.buf, part.buf);
		abort();
	}
	sb_reset(&part);
	run(mode, data, size, 0, 1 + sel, &part);
	if (strcmp(whole.buf, part.buf) != 0) {
		fprintf(stderr, "%zu-byte feeds differ:\n--- whole\n%s\n--- chunked\n%s\n", 1 + sel,
			whole.buf, part.buf);
		abort();
	}
	sb_free(&whole);
	sb_free(&part);
	return 0;
}
