/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_workload: a workload's references, annotations and reload lists, and the reload decision
 * over them. */
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

/* ---- workloads ---- */

#define NTYPES (RELOAD_SPC + 1) /* ConfigMap, Secret, SecretProviderClass */

/* Per type of object (enum reload_type): its typed auto, reload and exclude annotations. */
static const enum reload_ann type_ann[NTYPES][3] = {
    [RELOAD_CONFIGMAP] = {RA_CM_AUTO, RA_CM_RELOAD, RA_CM_EXCLUDE},
    [RELOAD_SECRET] = {RA_SEC_AUTO, RA_SEC_RELOAD, RA_SEC_EXCLUDE},
    [RELOAD_SPC] = {RA_SPC_AUTO, RA_SPC_RELOAD, RA_SPC_EXCLUDE},
};

/* Go's strconv.ParseBool, true side. */
static int go_true(const char *s)
{
	static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
	size_t i;

	if (!s)
		return 0;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(s, t[i]) == 0)
			return 1;
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

char *reload_trimmed(const char *s, const char *e)
{
	char *out;

	while (s < e && strchr(" \t\r\n\v\f", *s))
		s++;
	while (e > s && strchr(" \t\r\n\v\f", e[-1]))
		e--;
	out = malloc((size_t)(e - s) + 1);
	if (!out)
		return NULL;
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = '\0';
	return out;
}

/*
 * The shared list for annotation a of w, where (metadata or template). Over a
 * budget, no list: w->refused says why (the first refusal), with w named.
 */
static int compile_list(struct reload_workload *w, int where, enum reload_type t, int quiet,
			const struct reload_workload *old)
{
	enum reload_ann a = type_ann[t][1];
	char what[600], why[400], hex[RELOAD_HASH_HEX];
	struct reload_relist_req q = {w->ns, w->ann[where][a], quiet ? NULL : what, NULL, 0};
	size_t len = strlen(w->ann[where][a]);
	int r;

	snprintf(what, sizeof(what), "%s %.200s/%.200s: annotation %s", reload_kind_name(w->kind),
		 w->ns, w->name, reload_ann_key(a));
	if (old) {
		q.old = &old->relist[0][0];
		q.nold = 2 * NTYPES;
	}
	r = reload_relist_too_long(len, why, sizeof(why));
	if (r == -E2BIG) {
		/* only its digest is kept, to tell the next version from it (same_list) */
		if (reload_relist_digest(w->ann[where][a], len, hex) < 0)
			return -ENOMEM;
		free(w->ann[where][a]);
		w->ann[where][a] = strdup(hex);
		if (!w->ann[where][a])
			return -ENOMEM;
		w->digest[where] |= (unsigned char)(1u << t);
	} else {
		r = reload_relist_get(&q, &w->relist[where][t], why, sizeof(why));
		if (r != -ENOSPC)
			return r;
		w->retry[where] |= (unsigned char)(1u << t);
	}
	if (!w->refused &&
	    asprintf(&w->refused, "%s%s: %s", what, where ? " (pod template)" : "", why) < 0) {
		w->refused = NULL;
		return -ENOMEM;
	}
	return 0;
}

int reload_workload_retry_lists(struct reload_workload *w)
{
	struct reload_relist_req q = {w->ns, NULL, NULL, NULL, 0};
	char why[400];
	int where, t, r, left = 0;

	for (where = 0; where < 2; where++) {
		for (t = 0; t < NTYPES; t++) {
			if (!(w->retry[where] & (1u << t)))
				continue;
			q.text = w->ann[where][type_ann[t][1]];
			r = reload_relist_get(&q, &w->relist[where][t], why, sizeof(why));
			if (r == -ENOMEM)
				return r;
			if (r < 0)
				left = 1;
			else
				w->retry[where] &= (unsigned char)~(1u << t);
		}
	}
	if (left || w->digest[0] || w->digest[1])
		return 0;
	free(w->refused);
	w->refused = NULL;
	return 1;
}

int reload_workload_same_list(const struct reload_workload *w, int where, enum reload_ann a,
			      const char *val)
{
	int t = a == RA_SPC_RELOAD   ? RELOAD_SPC
		: a == RA_SEC_RELOAD ? RELOAD_SECRET
				     : RELOAD_CONFIGMAP;
	char hex[RELOAD_HASH_HEX];
	size_t len;

	if (!w->ann[where][a] || !val)
		return !w->ann[where][a] && !val;
	if (!(w->digest[where] & (1u << t)))
		return strcmp(w->ann[where][a], val) == 0;
	len = strlen(val);
	return reload_relist_too_long(len, hex, sizeof(hex)) < 0 &&
	       reload_relist_digest(val, len, hex) == 0 && strcmp(hex, w->ann[where][a]) == 0;
}

void reload_workload_free(struct reload_workload *w)
{
	size_t i;
	int a, b;

	free(w->ns);
	free(w->name);
	free(w->uid);
	free(w->refused);
	for (a = 0; a < 2; a++) {
		for (b = 0; b < RA_N; b++)
			free(w->ann[a][b]);
		for (b = 0; b < NTYPES; b++)
			reload_relist_put(w->relist[a][b]);
	}
	for (i = 0; i < w->nrefs; i++) {
		free(w->refs[i].name);
		free(w->refs[i].container);
	}
	free(w->refs);
	for (i = 0; i < w->nenv; i++) {
		free(w->env[i].container);
		free(w->env[i].name);
		free(w->env[i].value);
	}
	free(w->env);
	free(w->first_container);
	free(w->lr_type);
	free(w->lr_name);
	free(w->lr_hash);
	free(w->rollout_strategy);
	free(w->pause_period);
	free(w->paused_at);
	free(w->spc);
	memset(w, 0, sizeof(*w));
}

static const struct reload_ref *find_ref(const struct reload_workload *w, enum reload_type t,
					 const char *name)
{
	size_t i;

	for (i = 0; i < w->nrefs; i++)
		if (w->refs[i].type == t && strcmp(w->refs[i].name, name) == 0)
			return &w->refs[i];
	return NULL;
}

static int add_ref(struct reload_workload *w, enum reload_type t, const char *name,
		   const char *container)
{
	struct reload_ref *nr = realloc(w->refs, (w->nrefs + 1) * sizeof(*nr));

	if (!nr)
		return -ENOMEM;
	w->refs = nr;
	nr[w->nrefs].type = t;
	nr[w->nrefs].name = strdup(name);
	nr[w->nrefs].container = dup_or_null(container);
	if (!nr[w->nrefs].name || (container && !nr[w->nrefs].container)) {
		free(nr[w->nrefs].name);
		free(nr[w->nrefs].container);
		return -ENOMEM;
	}
	w->nrefs++;
	return 0;
}

/* Add parent.<ref>.name as used by container ct unless already known. */
static int add_new_ref(struct reload_workload *w, enum reload_type t, json_t *parent,
		       const char *ref, const char *ct)
{
	const char *name = json_string_value(json_object_get(json_object_get(parent, ref), "name"));

	if (!name || find_ref(w, t, name))
		return 0;
	return add_ref(w, t, name, ct);
}

static const char *cname(json_t *c)
{
	return json_string_value(json_object_get(c, "name"));
}

/* The container that mounts volume vol: regular ones first, an init hit maps to the first regular.
 */
static const char *mounting_container(json_t *containers, json_t *inits, const char *vol)
{
	json_t *lists[2] = {containers, inits}, *c, *m;
	size_t i, j, l;

	for (l = 0; l < 2; l++) {
		json_array_foreach(lists[l], i, c)
		{
			json_array_foreach(json_object_get(c, "volumeMounts"), j, m)
			{
				const char *n = json_string_value(json_object_get(m, "name"));

				if (n && strcmp(n, vol) == 0)
					return l == 0 ? cname(c)
						      : cname(json_array_get(containers, 0));
			}
		}
	}
	return NULL;
}

/* A list of (type, name) pairs being filled, up to max. */
struct objlist {
	enum reload_type *types;
	const char **names;
	size_t n, max;
};

static void objlist_add(struct objlist *l, enum reload_type t, json_t *parent, const char *ref,
			const char *field)
{
	const char *s = json_string_value(json_object_get(json_object_get(parent, ref), field));

	if (s && l->n < l->max) {
		l->types[l->n] = t;
		l->names[l->n++] = s;
	}
}

/* Objects a volume refers to: up to max (type, name) pairs. */
static size_t volume_objects(json_t *vol, enum reload_type *types, const char **names, size_t max)
{
	struct objlist l = {types, names, 0, max};
	json_t *src;
	size_t i;

	objlist_add(&l, RELOAD_CONFIGMAP, vol, "configMap", "name");
	objlist_add(&l, RELOAD_SECRET, vol, "secret", "secretName");
	json_array_foreach(json_object_get(json_object_get(vol, "projected"), "sources"), i, src)
	{
		objlist_add(&l, RELOAD_CONFIGMAP, src, "configMap", "name");
		objlist_add(&l, RELOAD_SECRET, src, "secret", "name");
	}
	/* Reloader's CSI volume (internal/pkg/handler/upgrade.go): the SecretProviderClass */
	objlist_add(&l, RELOAD_SPC, json_object_get(vol, "csi"), "volumeAttributes",
		    "secretProviderClass");
	return l.n;
}

struct seen {
	enum reload_type type;
	const char *name;
};

static int parse_uses(struct reload_workload *w, json_t *pod)
{
	json_t *containers = json_object_get(pod, "containers");
	json_t *inits = json_object_get(pod, "initContainers");
	json_t *lists[2] = {containers, inits}, *vol, *c, *e;
	struct seen *seen = NULL;
	size_t nseen = 0, i, j, k, l;
	int r = 0;

	/* Volumes: only the first volume naming an object is examined. */
	json_array_foreach(json_object_get(pod, "volumes"), i, vol)
	{
		enum reload_type types[64];
		const char *names[64], *vname = json_string_value(json_object_get(vol, "name"));
		size_t n = volume_objects(vol, types, names, 64);

		for (k = 0; k < n && r == 0; k++) {
			const char *ct;
			int dup = 0;

			for (j = 0; j < nseen; j++)
				if (seen[j].type == types[k] && strcmp(seen[j].name, names[k]) == 0)
					dup = 1;
			if (dup)
				continue;
			{
				struct seen *ns = realloc(seen, (nseen + 1) * sizeof(*ns));

				if (!ns) {
					r = -ENOMEM;
					break;
				}
				seen = ns;
				seen[nseen].type = types[k];
				seen[nseen++].name = names[k];
			}
			ct = vname ? mounting_container(containers, inits, vname) : NULL;
			if (ct)
				r = add_ref(w, types[k], names[k], ct);
		}
	}
	free(seen);
	/* env[].valueFrom and envFrom[], containers then init containers. */
	for (l = 0; l < 2 && r == 0; l++) {
		json_array_foreach(lists[l], i, c)
		{
			const char *ct = l == 0 ? cname(c) : cname(json_array_get(containers, 0));

			json_array_foreach(json_object_get(c, "env"), j, e)
			{
				json_t *vf = json_object_get(e, "valueFrom");

				r = r ? r
				      : add_new_ref(w, RELOAD_CONFIGMAP, vf, "configMapKeyRef", ct);
				r = r ? r : add_new_ref(w, RELOAD_SECRET, vf, "secretKeyRef", ct);
			}
			json_array_foreach(json_object_get(c, "envFrom"), j, e)
			{
				r = r ? r : add_new_ref(w, RELOAD_CONFIGMAP, e, "configMapRef", ct);
				r = r ? r : add_new_ref(w, RELOAD_SECRET, e, "secretRef", ct);
			}
		}
	}
	return r;
}

/* Keep the STAKATER_* env vars of regular containers: the env-vars strategy's record. */
static int parse_env_records(struct reload_workload *w, json_t *containers)
{
	json_t *c, *e;
	size_t i, j;

	json_array_foreach(containers, i, c)
	{
		json_array_foreach(json_object_get(c, "env"), j, e)
		{
			const char *n = json_string_value(json_object_get(e, "name"));
			const char *v = json_string_value(json_object_get(e, "value"));
			struct reload_envrec *ne;

			if (!n || !v || strncmp(n, "STAKATER_", 9) != 0)
				continue;
			ne = realloc(w->env, (w->nenv + 1) * sizeof(*ne));
			if (!ne)
				return -ENOMEM;
			w->env = ne;
			ne[w->nenv].container = dup_or_null(cname(c));
			ne[w->nenv].name = strdup(n);
			ne[w->nenv].value = strdup(v);
			ne[w->nenv].ci = (int)i;
			ne[w->nenv].ei = (int)j;
			w->nenv++;
			if (!ne[w->nenv - 1].name || !ne[w->nenv - 1].value)
				return -ENOMEM;
		}
	}
	return 0;
}

static int parse_last_reloaded(struct reload_workload *w, const char *val)
{
	json_t *j = json_loads(val, 0, NULL);
	int r = 0;

	if (!j)
		return 0; /* not ours to judge; treated as no record */
	w->lr_type = dup_or_null(json_string_value(json_object_get(j, "type")));
	w->lr_name = dup_or_null(json_string_value(json_object_get(j, "name")));
	w->lr_hash = dup_or_null(json_string_value(json_object_get(j, "hash")));
	json_decref(j);
	return r;
}

json_t *reload_kind_template(enum reload_kind kind, json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec");

	if (kind == RELOAD_CRONJOB)
		spec = json_object_get(json_object_get(spec, "jobTemplate"), "spec");
	return json_object_get(spec, "template");
}

/*
 * A SecretProviderClass the workload would be reloaded for by Reloader's CSI integration
 * (unsupported here): one named by the secretproviderclass.reloader.stakater.com keys, else one
 * mounted through a CSI volume of a workload with an auto or search annotation.
 */
static int find_spc(struct reload_workload *w, json_t *anns[2], json_t *pod)
{
	static const char *const keys[] = {"secretproviderclass.reloader.stakater.com/reload",
					   "secretproviderclass.reloader.stakater.com/auto"};
	const char *found = NULL;
	json_t *vol;
	size_t i;
	int a, k;

	for (a = 0; a < 2 && !found; a++)
		for (k = 0; k < 2 && !found; k++)
			if (json_object_get(anns[a], keys[k]))
				found = k == 0
					    ? json_string_value(json_object_get(anns[a], keys[k]))
					    : "";
	json_array_foreach(json_object_get(pod, "volumes"), i, vol)
	{
		const char *n = json_string_value(json_object_get(
		    json_object_get(json_object_get(vol, "csi"), "volumeAttributes"),
		    "secretProviderClass"));

		if (!n)
			continue;
		if (found && !*found)
			found = n; /* an auto key: name the mounted one */
		else if (!found && (w->ann[0][RA_AUTO] || w->ann[1][RA_AUTO] ||
				    w->ann[0][RA_SEARCH] || w->ann[1][RA_SEARCH]))
			found = n;
		break;
	}
	if (found) {
		w->spc = strdup(*found ? found : "(any)");
		if (!w->spc)
			return -ENOMEM;
	}
	return 0;
}

int reload_workload_parse(struct reload_workload *w, enum reload_kind kind, json_t *obj, int quiet,
			  struct log_err *err)
{
	return reload_workload_parse_over(w, kind, obj, quiet, NULL, err);
}

int reload_workload_parse_over(struct reload_workload *w, enum reload_kind kind, json_t *obj,
			       int quiet, const struct reload_workload *old, struct log_err *err)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *tmpl = reload_kind_template(kind, obj);
	json_t *pod = json_object_get(tmpl, "spec");
	json_t *anns[2];
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *lr;
	int a, b, r;

	memset(w, 0, sizeof(*w));
	w->kind = kind;
	if (!name)
		return log_err_set(err, -EINVAL, "%s without metadata.name",
				   reload_kind_name(kind));
	w->name = strdup(name);
	w->ns = strdup(ns ? ns : "");
	w->uid = dup_or_null(json_string_value(json_object_get(meta, "uid")));
	if (!w->name || !w->ns || (json_object_get(meta, "uid") && !w->uid))
		return -ENOMEM;
	anns[0] = json_object_get(meta, "annotations");
	anns[1] = json_object_get(json_object_get(tmpl, "metadata"), "annotations");
	for (a = 0; a < 2; a++) {
		for (b = 0; b < RA_N; b++) {
			const char *v =
			    json_string_value(json_object_get(anns[a], reload_ann_key(b)));

			if (!v)
				continue;
			w->ann[a][b] = strdup(v);
			if (!w->ann[a][b])
				return -ENOMEM;
		}
		if (w->ann[a][RA_CM_RELOAD]) {
			r = compile_list(w, a, RELOAD_CONFIGMAP, quiet, old);
			if (r < 0)
				return r;
		}
		if (w->ann[a][RA_SEC_RELOAD]) {
			r = compile_list(w, a, RELOAD_SECRET, quiet, old);
			if (r < 0)
				return r;
		}
		if (w->ann[a][RA_SPC_RELOAD]) {
			r = compile_list(w, a, RELOAD_SPC, quiet, old);
			if (r < 0)
				return r;
		}
	}
	w->first_container =
	    dup_or_null(cname(json_array_get(json_object_get(pod, "containers"), 0)));
	r = parse_uses(w, pod);
	if (r == 0)
		r = parse_env_records(w, json_object_get(pod, "containers"));
	lr = json_string_value(json_object_get(anns[1], RELOAD_LAST_RELOADED_FROM));
	if (r == 0 && lr)
		r = parse_last_reloaded(w, lr);
	/* Read from the workload's metadata only, as Reloader does. */
	if (r == 0 && kind == RELOAD_ROLLOUT) {
		const char *v =
		    json_string_value(json_object_get(anns[0], RELOAD_ROLLOUT_STRATEGY));

		w->rollout_strategy = dup_or_null(v);
		r = v && !w->rollout_strategy ? -ENOMEM : 0;
	}
	if (r == 0 && kind == RELOAD_DEPLOYMENT) {
		const char *pp = json_string_value(
		    json_object_get(anns[0], reload_ann_name(RELOAD_ANN_PAUSE_PERIOD)));
		const char *pa = json_string_value(
		    json_object_get(anns[0], reload_ann_name(RELOAD_ANN_PAUSED_AT)));

		w->pause_period = dup_or_null(pp);
		w->paused_at = dup_or_null(pa);
		w->paused = json_is_true(json_object_get(json_object_get(obj, "spec"), "paused"));
		r = (pp && !w->pause_period) || (pa && !w->paused_at) ? -ENOMEM : 0;
	}
	if (r == 0)
		r = find_spc(w, anns, pod);
	return r;
}

/* ---- decision ---- */

static int in_list(const char *list, const char *name)
{
	const char *p = list, *e;

	for (;;) {
		char *item;
		int hit;

		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		item = reload_trimmed(p, e);
		hit = item && strcmp(item, name) == 0;
		free(item);
		if (hit)
			return 1;
		if (!*e)
			return 0;
		p = e + 1;
	}
}

/* All-or-nothing: metadata if it has any of the four keys of type t, else the pod template. */
static int where_of(const struct reload_workload *w, int t)
{
	enum reload_ann rk = type_ann[t][1], ak = type_ann[t][0];

	return (w->ann[0][rk] || w->ann[0][ak] || w->ann[0][RA_SEARCH] || w->ann[0][RA_AUTO]) ? 0
											      : 1;
}

/* Whether search (o matching) or auto selects the objects of type t that w uses. */
static int selects_used(const struct reload_workload *w, int where, int t, int match, int auto_all)
{
	const char *search = w->ann[where][RA_SEARCH], *autov, *typedv;

	if (search && strcmp(search, "true") == 0 && match)
		return 1;
	autov = w->ann[where][RA_AUTO] ? w->ann[where][RA_AUTO] : "";
	typedv = w->ann[where][type_ann[t][0]] ? w->ann[where][type_ann[t][0]] : "";
	return go_true(autov) || go_true(typedv) || (!*autov && !*typedv && auto_all);
}

enum reload_verdict reload_should(const struct reload_workload *w, const struct reload_object *o,
				  int auto_all, const char **container)
{
	int t = (unsigned)o->type < NTYPES ? (int)o->type : RELOAD_CONFIGMAP;
	enum reload_ann ek = type_ann[t][2];
	const struct reload_ref *ref = find_ref(w, o->type, o->name);
	int where;

	if (container)
		*container = NULL;
	if (strcmp(o->ns, w->ns) != 0)
		return RELOAD_NO_NAMESPACE;
	if (o->ignore)
		return RELOAD_NO_IGNORED;
	where = where_of(w, t);
	if (w->ann[0][ek] && in_list(w->ann[0][ek], o->name))
		return RELOAD_NO_EXCLUDED;
	if (reload_relist_match(w->relist[where][t], o->name)) {
		if (container)
			*container = ref ? ref->container : w->first_container;
		return RELOAD_YES;
	}
	if (selects_used(w, where, t, o->match, auto_all)) {
		if (!ref)
			return RELOAD_NO_NOT_USED;
		if (container)
			*container = ref->container;
		return RELOAD_YES;
	}
	return RELOAD_NO_NOT_SELECTED;
}

enum reload_verdict reload_should_unnamed(const struct reload_workload *w, enum reload_type type,
					  int match, int auto_all)
{
	int t = (unsigned)type < NTYPES ? (int)type : RELOAD_CONFIGMAP;

	return selects_used(w, where_of(w, t), t, match, auto_all) ? RELOAD_NO_NOT_USED
								   : RELOAD_NO_NOT_SELECTED;
}

const char *reload_workload_exclude(const struct reload_workload *w, enum reload_type type)
{
	return (unsigned)type < NTYPES ? w->ann[0][type_ann[type][2]] : NULL;
}

const char *reload_recorded(const struct reload_workload *w, const struct reload_object *o,
			    const char *container, enum reload_strategy s)
{
	struct strbuf var = STRBUF_INIT(1024);
	const char *found = NULL;
	size_t i;

	if (s == RELOAD_ANNOTATIONS) {
		if (w->lr_type && w->lr_name && w->lr_hash &&
		    strcmp(w->lr_type, reload_type_upper(o->type)) == 0 &&
		    strcmp(w->lr_name, o->name) == 0)
			return w->lr_hash;
		return NULL;
	}
	if (reload_env_name(&var, o->name, o->type) < 0) {
		sb_free(&var);
		return NULL;
	}
	for (i = 0; i < w->nenv && !found; i++) {
		if (strcmp(w->env[i].name, var.buf) != 0)
			continue;
		if (!container ||
		    (w->env[i].container && strcmp(w->env[i].container, container) == 0))
			found = w->env[i].value;
	}
	sb_free(&var);
	return found;
}
