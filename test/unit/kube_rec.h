/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kube_rec: what the stream parser reports, recorded as text (test_kube, test_kube_split). */
#ifndef NP_TEST_KUBE_REC_H
#define NP_TEST_KUBE_REC_H

#include "kube/kube.h"

/* Records what the parser reports. */
struct rec {
	struct strbuf log;
};

static int r_scalar(void *ctx, int depth, const char *const *keys, const char *val, size_t len)
{
	struct rec *r = ctx;
	int i;

	for (i = 0; i < depth; i++)
		sb_addf(&r->log, "%s%s", i ? "." : "", keys[i]);
	sb_addf(&r->log, "=%.*s;", (int)len, val);
	return 0;
}

static int r_begin(void *ctx)
{
	sb_add(&((struct rec *)ctx)->log, "<");
	return 0;
}

static int r_item(void *ctx, const char *type, json_t *obj)
{
	struct rec *r = ctx;

	sb_addf(&r->log, ">%s", type);
	if (obj) {
		char *s = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);

		sb_addf(&r->log, "%s", s);
		free(s);
	}
	sb_add(&r->log, "\n");
	return 0;
}

static const struct kube_stream_ops rops = {r_scalar, r_begin, r_item, NULL};

static int r_oversize(void *ctx, const char *type, const char *ns, const char *name,
		      const char *what)
{
	sb_addf(&((struct rec *)ctx)->log, "!%s %s/%s (%s)\n", type, ns, name, what);
	return 0;
}

static const struct kube_stream_ops sops = {r_scalar, r_begin, r_item, r_oversize};

#endif
