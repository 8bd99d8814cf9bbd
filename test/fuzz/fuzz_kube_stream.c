/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_kube_stream: libFuzzer target for the LIST/WATCH stream parser and Reloader's workload
 * parsing. */
#include <stddef.h>
#include <stdint.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reload_hasher h;
	size_t half, mode;

	/* The first byte picks the stream kind and item mode; the rest is fed in two pieces. */
	if (size < 1)
		return 0;
	mode = data[0] & 3;
	data++;
	size--;
	half = size / 2;
	if (reload_hasher_init(&h) < 0)
		return 0;
	{
		struct kube_stream *st =
		    kube_stream_new(mode & 1 ? KUBE_STREAM_WATCH : KUBE_STREAM_LIST,
				    mode & 2 ? KUBE_ITEM_JSON : KUBE_ITEM_FLAT, &ops, &h);

		if (st) {
			if (kube_stream_feed(st, data, half, NULL) == 0 &&
			    kube_stream_feed(st, data + half, size - half, NULL) == 0)
				kube_stream_finish(st, NULL);
			kube_stream_free(st);
		}
	}
	reload_hasher_free(&h);
	return 0;
}
