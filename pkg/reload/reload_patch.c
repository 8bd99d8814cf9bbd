/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_patch: the strategic-merge PATCH bodies of both strategies, byte for byte as Reloader's.
 */
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

/* ---- patches ---- */

static int env_patch(struct strbuf *sb, const struct reload_trigger *t, size_t n)
{
	char *done = calloc(n, 1);
	int r, firstc = 1;
	size_t i, j;

	if (!done)
		return -ENOMEM;
	r = sb_add(sb, "{\"spec\":{\"template\":{\"spec\":{\"containers\":[");
	for (i = 0; i < n && r == 0; i++) {
		int firste = 1;

		if (done[i] || !t[i].container)
			continue;
		r = sb_addf(sb, "%s{\"name\":", firstc ? "" : ",");
		r = r ? r : sb_add_json_str(sb, t[i].container);
		r = r ? r : sb_add(sb, ",\"env\":[");
		firstc = 0;
		for (j = i; j < n && r == 0; j++) {
			if (done[j] || !t[j].container ||
			    strcmp(t[j].container, t[i].container) != 0)
				continue;
			done[j] = 1;
			r = sb_addf(sb, "%s{\"name\":\"", firste ? "" : ",");
			r = r ? r : reload_env_name(sb, t[j].name, t[j].type);
			r = r ? r : sb_add(sb, "\",\"value\":");
			r = r ? r : sb_add_json_str(sb, t[j].hash);
			r = r ? r : sb_addch(sb, '}');
			firste = 0;
		}
		r = r ? r : sb_add(sb, "]}");
	}
	r = r ? r : sb_add(sb, "]}}}}");
	free(done);
	if (r == 0 && firstc)
		return -EINVAL; /* no trigger had a container */
	return r;
}

int reload_last_reloaded_json(struct strbuf *v, const char *ns, const struct reload_trigger *t,
			      long long now)
{
	int r;

	r = sb_addf(v, "{\"type\":\"%s\",\"name\":", reload_type_upper(t->type));
	r = r ? r : sb_add_json_str(v, t->name);
	r = r ? r : sb_add(v, ",\"namespace\":");
	r = r ? r : sb_add_json_str(v, ns);
	r = r ? r : sb_add(v, ",\"hash\":");
	r = r ? r : sb_add_json_str(v, t->hash);
	r = r ? r : sb_add(v, ",\"containerRefs\":[");
	if (t->container)
		r = r ? r : sb_add_json_str(v, t->container);
	r = r ? r : sb_addf(v, "],\"observedAt\":%lld}", now);
	return r;
}

static int annotation_patch(struct strbuf *sb, const char *ns, const struct reload_trigger *t,
			    long long now)
{
	struct strbuf v = STRBUF_INIT(8192);
	int r;

	r = reload_last_reloaded_json(&v, ns, t, now);
	r = r ? r : sb_add(sb, "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{");
	r = r ? r : sb_add_json_str(sb, RELOAD_LAST_RELOADED_FROM);
	r = r ? r : sb_addch(sb, ':');
	r = r ? r : sb_add_json_str(sb, v.buf);
	r = r ? r : sb_add(sb, "}}}}}");
	sb_free(&v);
	return r;
}

int reload_patch_body(struct strbuf *sb, enum reload_strategy s, const char *ns,
		      const struct reload_trigger *t, size_t n, long long now)
{
	if (n == 0)
		return -EINVAL;
	if (s == RELOAD_ANNOTATIONS)
		return annotation_patch(sb, ns, &t[n - 1], now);
	return env_patch(sb, t, n);
}
