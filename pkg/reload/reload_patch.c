/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_patch: the strategic-merge PATCH bodies of both strategies, byte for byte as Reloader's;
 * a pod template changed in place (merge-patched kinds, Jobs); the JSON patch removing the env
 * vars of deleted objects. Pure: no I/O. */
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

/* ---- pod templates ---- */

json_t *reload_template_container(json_t *containers, const char *name)
{
	json_t *c;
	size_t i;

	json_array_foreach(containers, i, c)
	{
		const char *n = json_string_value(json_object_get(c, "name"));

		if (n && strcmp(n, name) == 0)
			return c;
	}
	return NULL;
}

static int apply_env(json_t *pod, const struct reload_trigger *t)
{
	struct strbuf var = STRBUF_INIT(1024);
	json_t *c = reload_template_container(json_object_get(pod, "containers"), t->container),
	       *env, *e;
	size_t i;
	int r = 0;

	if (!c)
		return 0;
	if (reload_env_name(&var, t->name, t->type) < 0) {
		sb_free(&var);
		return -ENOMEM;
	}
	env = json_object_get(c, "env");
	if (!json_is_array(env)) {
		if (t->deleted)
			goto out;
		env = json_array();
		if (!env || json_object_set_new(c, "env", env) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	json_array_foreach(env, i, e)
	{
		const char *n = json_string_value(json_object_get(e, "name"));

		if (!n || strcmp(n, var.buf) != 0)
			continue;
		if (t->deleted) {
			json_array_remove(env, i);
			r = 1;
		} else {
			const char *v = json_string_value(json_object_get(e, "value"));

			if (!v || strcmp(v, t->hash) != 0)
				r = json_object_set_new(e, "value", json_string(t->hash)) < 0
					? -ENOMEM
					: 1;
		}
		goto out;
	}
	if (!t->deleted) {
		e = json_pack("{s:s, s:s}", "name", var.buf, "value", t->hash);
		r = e && json_array_append_new(env, e) == 0 ? 1 : -ENOMEM;
	}
out:
	sb_free(&var);
	return r;
}

int reload_template_apply(json_t *tmpl, enum reload_strategy s, const char *ns,
			  const struct reload_trigger *t, size_t n, long long now)
{
	json_t *pod = json_object_get(tmpl, "spec"), *md, *anns;
	struct strbuf v = STRBUF_INIT(8192);
	size_t i;
	int r, changes = 0;

	if (n == 0 || !json_is_object(tmpl))
		return 0;
	if (s == RELOAD_ENV_VARS) {
		for (i = 0; i < n; i++) {
			if (!t[i].container)
				continue;
			r = apply_env(pod, &t[i]);
			if (r < 0)
				return r;
			changes += r;
		}
		return changes;
	}
	md = json_object_get(tmpl, "metadata");
	if (!json_is_object(md)) {
		md = json_object();
		if (!md || json_object_set_new(tmpl, "metadata", md) < 0)
			return -ENOMEM;
	}
	anns = json_object_get(md, "annotations");
	if (!json_is_object(anns)) {
		anns = json_object();
		if (!anns || json_object_set_new(md, "annotations", anns) < 0)
			return -ENOMEM;
	}
	r = reload_last_reloaded_json(&v, ns, &t[n - 1], now);
	if (r == 0 && json_object_set_new(anns, RELOAD_LAST_RELOADED_FROM, json_string(v.buf)) < 0)
		r = -ENOMEM;
	sb_free(&v);
	return r < 0 ? r : 1;
}

int reload_delete_patch(struct strbuf *sb, const struct reload_workload *w,
			const struct reload_trigger *t, size_t n)
{
	struct strbuf var = STRBUF_INIT(1024);
	size_t i, j, k, nrm = 0;
	int r = 0, *done = calloc(w->nenv ? w->nenv : 1, sizeof(*done));

	if (!done)
		return -ENOMEM;
	/*
	 * Reloader sends [{"op":"remove","path":".../containers/<i>/env/<j>"}] from the object it
	 * listed; ours come from the watched object, so each remove is guarded by a test of the
	 * name (a stale index fails the patch instead of removing another variable). Removals run
	 * from the highest index down so earlier ones do not shift later paths.
	 */
	for (k = 0; k < w->nenv && r == 0; k++) {
		const struct reload_envrec *best = NULL;
		size_t bi = 0;

		for (j = 0; j < w->nenv; j++) {
			const struct reload_envrec *e = &w->env[j];
			int want = 0;

			if (done[j])
				continue;
			for (i = 0; i < n && !want && r == 0; i++) {
				if (!t[i].deleted || !t[i].container || !e->container ||
				    strcmp(e->container, t[i].container) != 0)
					continue;
				sb_reset(&var);
				r = reload_env_name(&var, t[i].name, t[i].type);
				want = r == 0 && strcmp(var.buf, e->name) == 0;
			}
			if (!want) {
				done[j] = 1;
				continue;
			}
			if (!best || e->ci > best->ci || (e->ci == best->ci && e->ei > best->ei)) {
				best = e;
				bi = j;
			}
		}
		if (!best)
			break;
		done[bi] = 1;
		r = r ? r : sb_add(sb, nrm ? "," : "[");
		r = r ? r
		      : sb_addf(
			    sb,
			    "{\"op\":\"test\",\"path\":\"/spec/template/spec/containers/%d/env/%d/"
			    "name\",\"value\":",
			    best->ci, best->ei);
		r = r ? r : sb_add_json_str(sb, best->name);
		r = r ? r
		      : sb_addf(sb,
				"},{\"op\":\"remove\",\"path\":\"/spec/template/spec/containers/%d/"
				"env/%d\"}",
				best->ci, best->ei);
		nrm++;
	}
	if (r == 0 && nrm)
		r = sb_addch(sb, ']');
	free(done);
	sb_free(&var);
	return r < 0 ? r : (int)nrm;
}
