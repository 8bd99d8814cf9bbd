/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_sync: LIST and WATCH of every class, applied to the tables as events stream in. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_csi.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

/* ---- applying list and watch items ---- */

static void apply_config(struct ctl *c, int cls, const char *evtype, const char *ns,
			 const char *name, const char *rv, const char *hash,
			 const unsigned char *alt, int match, int ignore, int from_relist)
{
	struct cfg_ent *ce = (struct cfg_ent *)reload_tab_get(&c->cfg, cls, ns, name);
	int existed = ce != NULL, changed;
	int ev = !strcmp(evtype, "DELETED") ? 2 : !strcmp(evtype, "MODIFIED") ? 1 : 0;

	/* reloader_events_received_total: every item, initial LIST ones as adds (as informers) */
	METRIC_INC(c->m.events[cls == CLS_SEC][ev]);
	if (strcmp(evtype, "DELETED") == 0) {
		if (ce && !ce->deleted && c->o->reload_on_delete) {
			reload_tombstone(c, ce); /* rolls what it selects, freed once done */
			return;
		}
		if (ce) {
			if (ce->deleted)
				return; /* a tombstone already: reload_tombs_sweep frees it */
			METRIC_SET(c->m.objects[cls], c->m.objects[cls] - 1);
			reload_tab_del(&c->cfg, &ce->e);
			reload_cfg_free(ce);
		}
		return;
	}
	if (ce && ce->deleted) { /* created again before its tombstone was swept */
		existed = 0;
		ce->deleted = 0;
		METRIC_SET(c->m.objects[cls], c->m.objects[cls] + 1);
	} else if (!ce) {
		ce = calloc(1, sizeof(*ce));
		if (!ce)
			return;
		ce->e.cls = (unsigned char)cls;
		ce->e.ns = strdup(ns);
		ce->e.name = strdup(name);
		if (!ce->e.ns || !ce->e.name || reload_tab_put(&c->cfg, &ce->e) < 0) {
			reload_cfg_free(ce);
			return;
		}
		METRIC_SET(c->m.objects[cls], c->m.objects[cls] + 1);
	}
	changed = existed && strcmp(ce->hash, hash) != 0;
	if (existed && !changed && strcmp(evtype, "MODIFIED") == 0)
		METRIC_INC(c->m.skipped[SKIP_UNCHANGED]);
	free(ce->rv);
	ce->rv = strdup(rv);
	memcpy(ce->hash, hash, RELOAD_HASH_HEX);
	if (alt)
		memcpy(ce->alt, alt, RELOAD_HASH_ALT);
	ce->match = (unsigned char)match;
	ce->ignore = (unsigned char)ignore;
	ce->seen = 1;
	/* A first sight (initial LIST, or created while we watch) is not a change. */
	if (changed && (from_relist || strcmp(evtype, "LIST") != 0))
		RELOAD_IN_TELL(c, changed, c, ce);
	else if (!existed && c->o->reload_on_create &&
		 (from_relist || strcmp(evtype, "ADDED") == 0))
		RELOAD_IN_TELL(c, changed, c, ce); /* --reload-on-create: not the initial LIST's */
}

/* Does obj carry the reload lists we already parsed (and warned about) for we? */
static int same_lists(const struct wl_ent *we, int cls, json_t *obj)
{
	json_t *anns[2];
	int a;

	if (!we)
		return 0;
	anns[0] = json_object_get(json_object_get(obj, "metadata"), "annotations");
	anns[1] = json_object_get(
	    json_object_get(reload_kind_template((enum reload_kind)(cls - CLS_DEP), obj),
			    "metadata"),
	    "annotations");
	for (a = 0; a < 2; a++)
		if (!reload_workload_same_list(&we->w, a, RA_CM_RELOAD,
					       json_string_value(json_object_get(
						   anns[a], reload_ann_key(RA_CM_RELOAD)))) ||
		    !reload_workload_same_list(&we->w, a, RA_SEC_RELOAD,
					       json_string_value(json_object_get(
						   anns[a], reload_ann_key(RA_SEC_RELOAD)))) ||
		    !reload_workload_same_list(
			&we->w, a, RA_SPC_RELOAD,
			json_string_value(json_object_get(anns[a], reload_ann_key(RA_SPC_RELOAD)))))
			return 0;
	return 1;
}

/* The workload obj names, if we track it. */
static struct wl_ent *wl_of(const struct ctl *c, int cls, json_t *obj)
{
	json_t *meta = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));

	return name ? (struct wl_ent *)reload_tab_get(&c->wl, cls, ns ? ns : "", name) : NULL;
}

/*
 * Workloads whose reload list was refused for the namespace or total budget are
 * kept on c->refused (REFUSED_MAX at most; the others are tried again when they
 * change) and compiled again when lists were given back since the last try.
 */
#define REFUSED_MAX 256

static void refused_add(struct ctl *c, struct wl_ent *we)
{
	if (we->refused_q || c->in.nrefused >= REFUSED_MAX || !(we->w.retry[0] | we->w.retry[1]))
		return;
	we->refused_q = 1;
	we->rnext = c->in.refused;
	c->in.refused = we;
	c->in.nrefused++;
	c->in.refused_used = reload_relist_used();
}

static void refused_retry(struct ctl *c)
{
	struct wl_ent *we, *nx;
	int r;

	if (!c->in.refused || reload_relist_used() >= c->in.refused_used)
		return;
	for (we = c->in.refused; we; we = nx) {
		nx = we->rnext;
		reload_byname_del(c, we); /* its lists change: filed again under their names */
		r = reload_workload_retry_lists(&we->w);
		if (reload_byname_add(c, we) < 0)
			log_warn("%s %s/%s: out of memory", reload_kind_name(we->w.kind), we->e.ns,
				 we->e.name);
		if (r != 0 || !(we->w.retry[0] | we->w.retry[1])) {
			log_info("%s %s/%s: its reload lists fit the budgets now",
				 reload_kind_name(we->w.kind), we->e.ns, we->e.name);
			reload_refused_remove(c, we);
		}
	}
	c->in.refused_used = reload_relist_used();
}

/*
 * The budget's ReloadSkipped Event (and warning): at most one per workload per
 * SKIPPED_EVENT_MS, so a tenant flipping a refused list posts no stream of them.
 */
#define SKIPPED_EVENT_MS (10 * 60 * 1000)

static void refused_event(struct ctl *c, struct wl_ent *we)
{
	long long now = reload_now_ms();

	if (we->skipped_ms && now - we->skipped_ms < SKIPPED_EVENT_MS) {
		log_debug("%s (Event and warning sent less than 10 minutes ago)", we->w.refused);
		return;
	}
	we->skipped_ms = now;
	RELOAD_IN_TELL(c, event, c, we, "ReloadSkipped", we->w.refused);
}

void reload_apply_workload(struct ctl *c, int cls, const char *evtype, json_t *obj)
{
	struct reload_workload w;
	struct log_err err = {0};
	struct wl_ent *we = wl_of(c, cls, obj);
	int r, quiet = same_lists(we, cls, obj);

	r = reload_workload_parse_over(&w, (enum reload_kind)(cls - CLS_DEP), obj, quiet,
				       we ? &we->w : NULL, &err);
	if (r < 0) {
		log_warn("skipping a %s: %s", reload_cls_res[cls]->kind,
			 err.msg[0] ? err.msg : strerror(-r));
		reload_workload_free(&w);
		return;
	}
	if (reload_ns_ignored(c, w.ns)) {
		reload_workload_free(&w);
		return;
	}
	we = (struct wl_ent *)reload_tab_get(&c->wl, cls, w.ns, w.name);
	if (strcmp(evtype, "DELETED") == 0) {
		/* a Job we deleted and created again: the old one's DELETED is not about ours */
		if (we && w.uid && we->w.uid && strcmp(w.uid, we->w.uid) != 0)
			we = NULL;
		if (we && we->recreate) /* the Job we deleted and still have to create again */
			we = NULL;
		if (we) {
			reload_tab_del(&c->wl, &we->e);
			reload_wl_free(c, we);
			METRIC_SET(c->m.objects[cls], c->m.objects[cls] - 1);
		}
		reload_workload_free(&w);
		refused_retry(c);
		return;
	}
	if (!we) {
		we = calloc(1, sizeof(*we));
		if (!we) {
			reload_workload_free(&w);
			return;
		}
		we->e.cls = (unsigned char)cls;
		we->e.ns = strdup(w.ns);
		we->e.name = strdup(w.name);
		if (!we->e.ns || !we->e.name || reload_tab_put(&c->wl, &we->e) < 0) {
			reload_workload_free(&w);
			reload_wl_free(c, we);
			return;
		}
		METRIC_SET(c->m.objects[cls], c->m.objects[cls] + 1);
	}
	RELOAD_IN_TELL(c, replacing, c, we, &w);
	reload_byname_del(c, we);
	reload_workload_free(&we->w);
	we->w = w;
	if (reload_byname_add(c, we) < 0) /* a change of what it uses would miss it */
		log_warn("%s %s/%s: out of memory", reload_kind_name(w.kind), w.ns, w.name);
	we->seen = 1;
	RELOAD_IN_TELL(c, read, c, we);
	reload_refused_remove(c, we);
	refused_retry(c);
	refused_add(c, we);
	if (we->w.refused && !quiet) /* once per new list text */
		refused_event(c, we);
}

/* ---- stream callbacks ---- */

/* ConfigMaps and Secrets (flat items, cfg_ops), or a workload kind (JSON items, wl_ops). */
static int cfg_class(const struct rs *s)
{
	return s->cls == CLS_CM || s->cls == CLS_SEC;
}

static int cfg_begin(void *p)
{
	struct rs *s = p;

	sb_reset(&s->name);
	sb_reset(&s->ns_);
	sb_reset(&s->irv);
	s->match = s->ignore = 0;
	s->code = 0;
	if (s->hs_live)
		reload_hasher_free(&s->hs);
	if (!cfg_class(s)) /* SecretProviderClasses: metadata only, nothing hashed */
		return 0;
	s->hs_live = reload_hasher_init(&s->hs) == 0;
	return s->hs_live ? 0 : -ENOMEM;
}

static int cfg_scalar(void *p, int depth, const char *const *keys, const char *val, size_t len)
{
	struct rs *s = p;

	if (depth == 1 && strcmp(keys[0], "code") == 0) {
		s->code = strtol(val, NULL, 10);
	} else if (depth == 2 && strcmp(keys[0], "metadata") == 0) {
		if (strcmp(keys[1], "name") == 0)
			sb_addn(&s->name, val, len);
		else if (strcmp(keys[1], "namespace") == 0)
			sb_addn(&s->ns_, val, len);
		else if (strcmp(keys[1], "resourceVersion") == 0)
			sb_addn(&s->irv, val, len);
	} else if (depth == 3 && strcmp(keys[0], "metadata") == 0 &&
		   strcmp(keys[1], "annotations") == 0) {
		int t = len == 4 && memcmp(val, "true", 4) == 0;

		if (strcmp(keys[2], RELOAD_MATCH) == 0)
			s->match = t;
		else if (strcmp(keys[2], RELOAD_IGNORE) == 0)
			s->ignore = t;
	} else if (depth == 2 && s->hs_live) {
		if (strcmp(keys[0], "data") == 0 && s->cls == CLS_SEC)
			return reload_hasher_add_b64(&s->hs, keys[1], strlen(keys[1]), val, len);
		if (strcmp(keys[0], "data") == 0 ||
		    (strcmp(keys[0], "binaryData") == 0 && s->cls == CLS_CM))
			return reload_hasher_add(&s->hs, keys[1], strlen(keys[1]), val, len);
	}
	return 0;
}

static void defer_item(struct ctl *c, int cls, const char *ns, const char *name, const char *ev)
{
	struct deferred *d = calloc(1, sizeof(*d));

	if (!d)
		return;
	d->cls = cls;
	d->ns = strdup(ns);
	d->name = strdup(name);
	snprintf(d->evtype, sizeof(d->evtype), "%s", ev);
	if (!d->ns || !d->name) {
		free(d->ns);
		free(d->name);
		free(d);
		return;
	}
	d->next = c->in.defer;
	c->in.defer = d;
}

static int cfg_item(void *p, const char *type, json_t *obj)
{
	struct rs *s = p;
	char hex[RELOAD_HASH_HEX];
	unsigned char alt[RELOAD_HASH_ALT];
	int r;

	(void)obj;
	s->events++;
	if (strcmp(type, "ERROR") == 0) {
		if (s->code == 410)
			s->gone = 1;
		else
			s->error_code = s->code ? s->code : -1;
		log_info("%s watch: ERROR event (code %ld)", reload_cls_res[s->cls]->plural,
			 s->code);
		return 0;
	}
	if (strcmp(type, "BOOKMARK") == 0 || !s->name.len || reload_ns_ignored(s->c, s->ns_.buf))
		return 0;
	if (s->cls == CLS_SPCS) /* SecretProviderClasses: name, match, ignore (reload_csi.c) */
		return reload_csi_spcs_item(s, type, obj);
	r = s->hs_live ? reload_hasher_final(&s->hs, hex, alt) : -EINVAL;
	s->hs_live = 0;
	if (r == -EAGAIN) {
		/* Keys out of order: hash the whole object from a GET, one at a time. */
		struct cfg_ent *ce =
		    (struct cfg_ent *)reload_tab_get(&s->c->cfg, s->cls, s->ns_.buf, s->name.buf);

		if (ce)
			ce->seen = 1;
		defer_item(s->c, s->cls, s->ns_.buf, s->name.buf,
			   s->relist && strcmp(type, "LIST") == 0 ? "RELIST" : type);
		return 0;
	}
	if (r < 0) {
		log_warn("%s %s/%s: data is not valid base64; not tracked",
			 reload_cls_res[s->cls]->kind, s->ns_.buf, s->name.buf);
		return 0;
	}
	apply_config(s->c, s->cls, type, s->ns_.buf, s->name.buf, s->irv.buf, hex, alt, s->match,
		     s->ignore, s->relist);
	return 0;
}

static int wl_item(void *p, const char *type, json_t *obj)
{
	struct rs *s = p;

	s->events++;
	if (strcmp(type, "ERROR") == 0) {
		long code = (long)json_integer_value(json_object_get(obj, "code"));

		if (code == 410)
			s->gone = 1;
		else
			s->error_code = code ? code : -1;
		log_info("%s watch: ERROR event (code %ld)", reload_cls_res[s->cls]->plural, code);
		return 0;
	}
	if (strcmp(type, "BOOKMARK") == 0)
		return 0;
	if (s->cls == CLS_SPC) /* SecretProviderClassPodStatuses: their own table */
		reload_csi_item(s, type, obj);
	else
		reload_apply_workload(s->c, s->cls, type, obj);
	return 0;
}

/*
 * An object over the stream's limits (kube_stream_ops.oversize): skipped with one warning naming
 * it, and the LIST or watch goes on. What was known of it stays (a re-list does not sweep it, so
 * no --reload-on-delete rollout follows); a DELETED event still forgets it, by its name.
 */
static int item_oversize(void *p, const char *type, const char *ns, const char *name,
			 const char *what)
{
	struct rs *s = p;
	struct ctl *c = s->c;
	struct ent *e;

	s->events++; /* a live hasher is freed by the next item's begin */
	METRIC_INC(c->m.oversize[s->cls]);
	if (strcmp(type, "ERROR") == 0) { /* a Status, unread: a failed watch (restarted) */
		s->error_code = -1;
		log_info("%s watch: ERROR event (%s)", reload_cls_res[s->cls]->plural, what);
		return -EPROTO;
	}
	if (!*name || reload_ns_ignored(c, ns)) /* no object's: nothing to name or forget */
		return 0;
	if (strcmp(type, "DELETED") == 0 && cfg_class(s)) {
		apply_config(c, s->cls, "DELETED", ns, name, "", "", NULL, 0, 0, 0);
		return 0;
	}
	if (strcmp(type, "DELETED") == 0) { /* a workload or status: forgotten by its name */
		json_t *stub =
		    json_pack("{s:{s:s,s:s}}", "metadata", "name", name, "namespace", ns);
		int r = stub ? wl_item(s, type, stub) : -ENOMEM;

		json_decref(stub);
		return r;
	}
	log_warn("%s %s/%s: %s (the API server's object is over nodeprobe-reload's limit): "
		 "skipped; what was read of it before is kept",
		 reload_cls_res[s->cls]->kind, ns, name, what);
	if (s->cls == CLS_SPC) {
		reload_csi_keep(c, ns, name);
		return 0;
	}
	e = reload_tab_get(cfg_class(s) ? &c->cfg : &c->wl, s->cls, ns, name);
	if (e)
		*(cfg_class(s) ? &((struct cfg_ent *)e)->seen : &((struct wl_ent *)e)->seen) = 1;
	return 0;
}

static const struct kube_stream_ops cfg_ops = {
    .scalar = cfg_scalar,
    .begin = cfg_begin,
    .item = cfg_item,
    .oversize = item_oversize,
};

static const struct kube_stream_ops wl_ops = {
    .item = wl_item,
    .oversize = item_oversize,
};

static const struct kube_stream_ops spcs_ops = {
    .scalar = cfg_scalar,
    .begin = cfg_begin,
    .item = cfg_item,
    .oversize = reload_csi_spcs_oversize,
};

static enum kube_item_mode item_mode(const struct rs *s)
{
	return cfg_class(s) || s->cls == CLS_SPCS ? KUBE_ITEM_FLAT : KUBE_ITEM_JSON;
}

static const struct kube_stream_ops *item_ops(const struct rs *s)
{
	if (s->cls == CLS_SPCS)
		return &spcs_ops; /* SecretProviderClasses: name, match, ignore */
	return cfg_class(s) ? &cfg_ops : &wl_ops;
}

static struct kube_stream *new_stream(struct rs *s, enum kube_stream_kind kind)
{
	return kube_stream_new(kind, item_mode(s), item_ops(s), s);
}

static void fill_query(const struct ctl *c, const struct rs *s, struct kube_query *q)
{
	memset(q, 0, sizeof(*q));
	/* Reloader's --resource-label-selector filters every resource it lists but namespaces */
	if (cfg_class(s) || s->cls == CLS_SPC)
		q->label_selector = c->o->label_selector;
	if (s->cls == CLS_SEC)
		q->field_selector = c->o->secret_field_selector;
}

/* Fetch one object whose keys arrived out of order and hash it whole. */
void reload_process_deferred(struct ctl *c)
{
	while (c->in.defer) {
		struct deferred *d = c->in.defer;
		struct log_err err = {0};
		char hex[RELOAD_HASH_HEX];
		unsigned char alt[RELOAD_HASH_ALT];
		json_t *obj = NULL, *ann;
		int r;

		c->in.defer = d->next;
		sb_reset(&c->url);
		kube_url(&c->url, kube_client_server(c->cl), reload_cls_res[d->cls], d->ns, d->name,
			 NULL);
		c->resp.max = OBJ_MAX;
		r = kube_request(c->cl, "GET", c->url.buf, NULL, NULL, &c->resp, &err);
		if (r == 200)
			obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
		if (obj && reload_hash_object(obj, reload_cls_type(d->cls), hex, alt) == 0) {
			json_t *meta = json_object_get(obj, "metadata");
			const char *rv =
			    json_string_value(json_object_get(meta, "resourceVersion"));
			const char *m, *ig;
			int relist = strcmp(d->evtype, "RELIST") == 0;

			ann = json_object_get(meta, "annotations");
			m = json_string_value(json_object_get(ann, RELOAD_MATCH));
			ig = json_string_value(json_object_get(ann, RELOAD_IGNORE));
			apply_config(c, d->cls, relist ? "LIST" : d->evtype, d->ns, d->name,
				     rv ? rv : "", hex, alt, m && strcmp(m, "true") == 0,
				     ig && strcmp(ig, "true") == 0, relist);
		} else if (r == 404) {
			apply_config(c, d->cls, "DELETED", d->ns, d->name, "", "", NULL, 0, 0, 0);
		} else {
			log_warn("%s %s/%s: cannot hash: %s", reload_cls_res[d->cls]->kind, d->ns,
				 d->name, r < 0 ? err.msg : "unexpected answer");
		}
		json_decref(obj);
		sb_reset(&c->resp);
		free(d->ns);
		free(d->name);
		free(d);
	}
}

/* Mark all entries of s's class and namespace unseen (before a LIST). */
static void mark_unseen(struct ctl *c, const struct rs *s)
{
	int is_cfg = cfg_class(s);
	struct tab *t = is_cfg ? &c->cfg : &c->wl;
	size_t i;
	struct ent *e;

	if (s->cls == CLS_SPC || s->cls == CLS_SPCS) {
		(s->cls == CLS_SPC ? reload_csi_mark : reload_csi_spcs_mark)(c, s->ns);
		return;
	}

	for (i = 0; i < t->nb; i++) {
		for (e = t->b[i]; e; e = e->next) {
			if (e->cls != s->cls || (*s->ns && strcmp(e->ns, s->ns) != 0))
				continue;
			if (is_cfg)
				((struct cfg_ent *)e)->seen = 0;
			else
				((struct wl_ent *)e)->seen = 0;
		}
	}
}

/* After a re-list: entries not seen were deleted while the watch was down. */
static void sweep_unseen(struct ctl *c, const struct rs *s)
{
	int is_cfg = cfg_class(s);
	struct tab *t = is_cfg ? &c->cfg : &c->wl;
	size_t i;
	struct ent *e, *nx;

	if (s->cls == CLS_SPC || s->cls == CLS_SPCS) {
		(s->cls == CLS_SPC ? reload_csi_sweep : reload_csi_spcs_sweep)(c, s->ns);
		return;
	}

	for (i = 0; i < t->nb; i++) {
		for (e = t->b[i]; e; e = nx) {
			nx = e->next;
			if (e->cls != s->cls || (*s->ns && strcmp(e->ns, s->ns) != 0))
				continue;
			if (is_cfg ? ((struct cfg_ent *)e)->seen : ((struct wl_ent *)e)->seen)
				continue;
			if (is_cfg && ((struct cfg_ent *)e)->deleted)
				continue; /* a tombstone: reload_tombs_sweep frees it */
			if (is_cfg && ((struct cfg_ent *)e)->tomb_q) {
				/* created again after a tombstone, gone again: still on the
				 * tombstones' list, so that sweep frees it */
				((struct cfg_ent *)e)->deleted = 1;
				METRIC_SET(c->m.objects[s->cls], c->m.objects[s->cls] - 1);
				continue;
			}
			if (!is_cfg && ((struct wl_ent *)e)->recreate)
				continue; /* a Job we deleted and still have to create again */
			reload_tab_del(t, e);
			if (is_cfg)
				reload_cfg_free((struct cfg_ent *)e);
			else
				reload_wl_free(c, (struct wl_ent *)e);
			METRIC_SET(c->m.objects[s->cls], c->m.objects[s->cls] - 1);
		}
	}
}

/* A page's status: a resource not served (404) ends the LIST of batch/v1 and CRD kinds. */
static int list_status(void *ctx, int status)
{
	struct rs *s = ctx;

	if (reload_csi_cls(s->cls)) /* 403 and 404 stop the CSI side only */
		return reload_csi_status(s, status, 0);
	if (status == 404 && s->cls >= CLS_CJ) {
		/* batch/v1 on an old cluster, or a CRD (Argo Rollouts) not installed */
		if (!s->absent)
			log_warn("%s %s are not served by this cluster (HTTP 404 on LIST): "
				 "%s objects are not reloaded; checking again every %d s",
				 reload_cls_res[s->cls]->prefix + 6, reload_cls_res[s->cls]->plural,
				 reload_cls_res[s->cls]->kind, ABSENT_RECHECK_S);
		s->absent = 1;
		return 1;
	}
	if (status == 200 && s->absent) {
		log_info("%s %s are served now: watching them", reload_cls_res[s->cls]->prefix + 6,
			 reload_cls_res[s->cls]->plural);
		s->absent = 0;
	}
	return 0;
}

/* The LIST starts over (its continue token expired): what the first pass saw may be gone since. */
static void list_restart(void *ctx)
{
	struct rs *s = ctx;

	mark_unseen(s->c, s);
}

/* LIST every page of s. Returns 0 or a negative code with err set. */
int reload_list_stream(struct ctl *c, struct rs *s, struct log_err *err)
{
	struct reload_list l = {
	    .res = reload_cls_res[s->cls],
	    .ns = s->ns,
	    .mode = item_mode(s),
	    .ops = item_ops(s),
	    .ctx = s,
	    .status = list_status,
	    .restart = list_restart,
	    .rv = s->rv,
	};
	int r;

	fill_query(c, s, &l.q);
	s->listing = 1;
	if (s->relist)
		mark_unseen(c, s);
	r = reload_list_pages(c, &l, err);
	if (r >= 0 && (s->relist || r > 0))
		sweep_unseen(c, s);
	s->listing = 0;
	s->relist = 0;
	return r < 0 ? r : 0;
}

static void watch_done(void *ctx, struct kube_watch *w, int status, int res, const char *msg);

int reload_start_watch(struct ctl *c, struct rs *s, struct log_err *err)
{
	struct kube_query q;

	if (s->absent) { /* LIST again later: the resource may be installed meanwhile */
		s->gone = 1;
		s->restart_ms =
		    reload_now_ms() +
		    (reload_csi_cls(s->cls) ? reload_csi_retry_ms(s) : ABSENT_RECHECK_S * 1000LL);
		return 0;
	}
	fill_query(c, s, &q);
	q.watch = 1;
	q.bookmarks = 1;
	q.resource_version = s->rv;
	q.timeout_seconds = c->o->watch_timeout_s;
	kube_stream_free(s->st);
	s->st = new_stream(s, KUBE_STREAM_WATCH);
	if (!s->st)
		return log_err_set(err, -ENOMEM, "out of memory");
	sb_reset(&c->url);
	kube_url(&c->url, kube_client_server(c->cl), reload_cls_res[s->cls], s->ns, NULL, &q);
	s->w = kube_watch_start(c->cl, c->url.buf, s->st, watch_done, s, err);
	if (!s->w)
		return err->code ? err->code : -ENOMEM;
	s->restart_ms = 0;
	s->start_ms = reload_now_ms();
	s->events = 0;
	s->error_code = 0;
	s->open = 0;
	return 0;
}

static void watch_done(void *ctx, struct kube_watch *w, int status, int res, const char *msg)
{
	struct rs *s = ctx;
	struct ctl *c = s->c;
	long long delay = 0;
	char why[64] = "";

	s->w = NULL;
	s->open = 0;
	if (kube_stream_rv(s->st)[0])
		snprintf(s->rv, sizeof(s->rv), "%s", kube_stream_rv(s->st));
	if (status == 410)
		s->gone = 1;
	if (reload_csi_cls(s->cls) && reload_csi_status(s, status, 1)) {
		/* RBAC revoked or CRD removed while watching: LIST again after a back-off */
		METRIC_INC(c->m.watch_restarts[s->cls]);
		s->gone = 1;
		s->restart_ms = reload_now_ms() + reload_csi_retry_ms(s);
		return;
	}
	/*
	 * Besides errors: an ERROR event other than 410, or a watch closed within a
	 * second without a single event, is a failure too (as client-go's "very short
	 * watch"); restarting at once would hammer the API server.
	 */
	if ((res >= 0 || s->error_code) && status == 200 && !s->gone) {
		if (s->error_code)
			snprintf(why, sizeof(why), "ERROR event, code %ld", s->error_code);
		else if (s->events == 0 && reload_now_ms() - s->start_ms < 1000)
			snprintf(why, sizeof(why), "closed at once without events");
		if (why[0]) {
			res = -EPROTO;
			msg = why;
		}
	}
	if (res < 0 || (status != 200 && status != 410)) {
		/* A watch that delivered events was healthy: the back-off starts over
		 * (client-go's backoff manager resets after a quiet period). */
		if (s->events > 0 && !s->error_code)
			s->fails = 0;
		delay = reload_watch_backoff_ms(s);
		if (status == 429) { /* Retry-After, capped as for requests */
			long ra = kube_watch_retry_after(w);

			delay =
			    ra > 0 ? (ra < RETRY_AFTER_MAX ? ra : RETRY_AFTER_MAX) * 1000LL : 1000;
		}
		s->fails++;
		METRIC_INC(c->m.watch_restarts[s->cls]);
		log_warn("watch %s%s%s ended (%s); restarting in %lld ms",
			 reload_cls_res[s->cls]->plural, *s->ns ? " in " : "", s->ns,
			 msg && *msg ? msg : "HTTP error", delay);
	} else {
		if (s->gone) {
			METRIC_INC(c->m.watch_restarts[s->cls]);
			log_info("watch %s: resourceVersion %s is gone (410); re-listing",
				 reload_cls_res[s->cls]->plural, s->rv);
		}
		s->fails = 0;
	}
	s->restart_ms = reload_now_ms() + delay;
}

/* Restart the watches whose time has come (re-listing after a 410). */
void reload_restart_watches(struct ctl *c)
{
	long long now = reload_now_ms();
	size_t i;

	for (i = 0; i < c->in.nrs; i++) {
		struct rs *s = &c->in.rs[i];
		struct log_err err = {0};
		int r = 0;

		if (s->w || !s->restart_ms || s->restart_ms > now)
			continue;
		if (s->gone) {
			s->relist = 1;
			r = reload_list_stream(c, s, &err);
			if (r == 0) {
				s->gone = 0;
				/* not while absent: a 404 re-check lists nothing; nor for
				 * the CSI classes, whose re-list tells its changes itself */
				if (s->cls >= CLS_DEP && !s->absent && !reload_csi_cls(s->cls))
					RELOAD_IN_TELL(c, relisted, c);
			}
		}
		if (r == 0)
			r = reload_start_watch(c, s, &err);
		if (r < 0) {
			s->restart_ms = now + reload_watch_backoff_ms(s);
			s->fails++;
			log_warn("%s: %s", reload_cls_res[s->cls]->plural, err.msg);
		}
	}
}
