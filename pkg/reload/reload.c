/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload: the controller: list, watch, keep hashes and references only, coalesce, rate-limit,
 * patch. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_internal.h"

#define RV_MAX		 128
#define NAME_MAX_	 512
#define OBJ_MAX		 (8 * 1024 * 1024)
#define SMALL_MAX	 (1024 * 1024)
#define CONFLICT_RETRIES 5
#define LIST_RESTARTS	 3  /* a paged LIST restarted after its continue token expired */
#define RETRY_AFTER_MAX	 30 /* seconds; kube_request caps Retry-After the same */
#define ROLLOUT_RETRIES	 5  /* a failed rollout is retried after 1, 2, 4, 8, 16 s */

static const struct kube_resource *const cls_res[NCLS] = {
    &kube_configmaps, &kube_secrets, &kube_deployments, &kube_statefulsets, &kube_daemonsets,
};

/* ---- tables ---- */

/* Common head of every table entry. */
struct ent {
	struct ent *next;
	unsigned int h;
	unsigned char cls;
	char *ns;
	char *name;
};

/*
 * A ConfigMap or Secret: identity, version and hash only. The hash is kept
 * twice: SHA-1 as hex (written, and compared with 40-digit records) and the
 * raw SHA-512/256 (32 bytes, compared with newer Reloader's 64-digit records).
 */
struct cfg_ent {
	struct ent e;
	char *rv;
	char hash[RELOAD_HASH_HEX];
	unsigned char alt[RELOAD_HASH_ALT];
	unsigned char match, ignore, seen;
};

struct trig {
	enum reload_type type;
	char *name;
};

/* A workload: what reload_workload keeps, plus its rollout schedule. */
struct wl_ent {
	struct ent e;
	struct reload_workload w;
	unsigned char seen, pending;
	struct trig *trig;
	size_t ntrig;
	long long first_ms, due_ms, last_roll_ms;
	int fails;	      /* failed rollout attempts for the pending triggers */
	struct wl_ent *pnext; /* pending list */
};

struct tab {
	struct ent **b;
	size_t nb, n;
};

static unsigned int key_hash(int cls, const char *ns, const char *name)
{
	unsigned int h = 2166136261u ^ (unsigned int)cls;
	const char *p;

	for (p = ns; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	h = (h ^ '/') * 16777619u;
	for (p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h;
}

static struct ent *tab_get(const struct tab *t, int cls, const char *ns, const char *name)
{
	unsigned int h = key_hash(cls, ns, name);
	struct ent *e;

	if (!t->nb)
		return NULL;
	for (e = t->b[h % t->nb]; e; e = e->next)
		if (e->h == h && e->cls == cls && strcmp(e->name, name) == 0 &&
		    strcmp(e->ns, ns) == 0)
			return e;
	return NULL;
}

static int tab_put(struct tab *t, struct ent *e)
{
	if (t->n >= t->nb) {
		size_t nb = t->nb ? t->nb * 2 : 1024, i;
		struct ent **b = calloc(nb, sizeof(*b));

		if (!b)
			return -ENOMEM;
		for (i = 0; i < t->nb; i++) {
			struct ent *x = t->b[i], *nx;

			for (; x; x = nx) {
				nx = x->next;
				x->next = b[x->h % nb];
				b[x->h % nb] = x;
			}
		}
		free(t->b);
		t->b = b;
		t->nb = nb;
	}
	e->h = key_hash(e->cls, e->ns, e->name);
	e->next = t->b[e->h % t->nb];
	t->b[e->h % t->nb] = e;
	t->n++;
	return 0;
}

static void tab_del(struct tab *t, struct ent *e)
{
	struct ent **pp;

	for (pp = &t->b[e->h % t->nb]; *pp; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			t->n--;
			return;
		}
	}
}

/* ---- controller state ---- */

struct ctl;

/* One LIST+WATCH of one resource class in one namespace ("" = all). */
struct rs {
	struct ctl *c;
	int cls;
	const char *ns;
	struct kube_stream *st;
	struct kube_watch *w;
	char rv[RV_MAX];
	int gone;	      /* a 410: re-list before watching again */
	int listing;	      /* items are from a LIST (initial or re-list) */
	int relist;	      /* this LIST is a re-list: compare and sweep */
	int fails;	      /* consecutive failed restarts */
	long long restart_ms; /* when to restart (0: running) */
	long long start_ms;   /* when the current watch started */
	long events;	      /* events the current watch delivered */
	long error_code;      /* code of an ERROR event other than 410 on it, or 0 */
	/* the ConfigMap/Secret item being parsed (FLAT mode) */
	struct strbuf name, ns_, irv;
	int match, ignore;
	long code;
	struct reload_hasher hs;
	int hs_live;
};

/* An item whose hash could not be streamed: fetched whole later. */
struct deferred {
	struct deferred *next;
	int cls;
	char *ns, *name;
	char evtype[16];
};

struct ctl {
	const struct reload_opts *o;
	struct kube_client *cl;
	struct tab cfg, wl;
	struct rs *rs;
	size_t nrs;
	struct wl_ent *pend;
	struct deferred *defer;
	double tokens;
	long long tok_ms;
	int failures; /* rollouts that failed (once mode exit status) */
	struct reload_metrics m;
	struct strbuf url, body, resp;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int ns_ignored(const struct ctl *c, const char *ns)
{
	const char **p;

	for (p = c->o->ignore_ns; p && *p; p++)
		if (strcmp(*p, ns) == 0)
			return 1;
	return 0;
}

static enum reload_type cls_type(int cls)
{
	return cls == CLS_SEC ? RELOAD_SECRET : RELOAD_CONFIGMAP;
}

static int type_cls(enum reload_type t)
{
	return t == RELOAD_SECRET ? CLS_SEC : CLS_CM;
}

static void ent_free_strings(struct ent *e)
{
	free(e->ns);
	free(e->name);
}

static void cfg_free(struct cfg_ent *ce)
{
	ent_free_strings(&ce->e);
	free(ce->rv);
	free(ce);
}

static void trig_clear(struct wl_ent *we)
{
	size_t i;

	for (i = 0; i < we->ntrig; i++)
		free(we->trig[i].name);
	free(we->trig);
	we->trig = NULL;
	we->ntrig = 0;
}

static void pend_remove(struct ctl *c, struct wl_ent *we)
{
	struct wl_ent **pp;

	for (pp = &c->pend; *pp; pp = &(*pp)->pnext) {
		if (*pp == we) {
			*pp = we->pnext;
			break;
		}
	}
	we->pending = 0;
	we->pnext = NULL;
	trig_clear(we);
}

static void wl_free(struct ctl *c, struct wl_ent *we)
{
	if (we->pending)
		pend_remove(c, we);
	trig_clear(we);
	reload_workload_free(&we->w);
	ent_free_strings(&we->e);
	free(we);
}

/* ---- scheduling ---- */

/* Queue a rollout of we for object (type, name). */
static void schedule(struct ctl *c, struct wl_ent *we, enum reload_type type, const char *name)
{
	long long now = now_ms(), due;
	size_t i;
	struct trig *nt;

	for (i = 0; i < we->ntrig; i++)
		if (we->trig[i].type == type && strcmp(we->trig[i].name, name) == 0)
			return; /* already queued; the latest hash is read at rollout time */
	nt = realloc(we->trig, (we->ntrig + 1) * sizeof(*nt));
	if (!nt)
		return;
	we->trig = nt;
	nt[we->ntrig].type = type;
	nt[we->ntrig].name = strdup(name);
	if (!nt[we->ntrig].name)
		return;
	we->ntrig++;
	if (we->pending)
		return;
	we->pending = 1;
	we->first_ms = now;
	due = now + c->o->window_ms;
	if (we->last_roll_ms && we->last_roll_ms + c->o->min_interval_ms > due)
		due = we->last_roll_ms + c->o->min_interval_ms;
	we->due_ms = due;
	we->pnext = c->pend;
	c->pend = we;
}

static void count_skip(struct ctl *c, enum reload_verdict v)
{
	switch (v) {
	case RELOAD_NO_IGNORED:
		METRIC_INC(c->m.skipped[SKIP_IGNORED]);
		break;
	case RELOAD_NO_EXCLUDED:
		METRIC_INC(c->m.skipped[SKIP_EXCLUDED]);
		break;
	case RELOAD_NO_NOT_USED:
		METRIC_INC(c->m.skipped[SKIP_NOT_USED]);
		break;
	default:
		break;
	}
}

static void obj_of(const struct cfg_ent *ce, struct reload_object *o)
{
	o->type = cls_type(ce->e.cls);
	o->ns = ce->e.ns;
	o->name = ce->e.name;
	o->hash = ce->hash;
	o->alt = ce->alt;
	o->match = ce->match;
	o->ignore = ce->ignore;
}

/*
 * Decide for one workload and one object. changed: the object's data changed
 * (roll unless already current); otherwise (start, re-list) roll only when the
 * workload records a different hash.
 */
static void consider(struct ctl *c, struct wl_ent *we, const struct cfg_ent *ce, int changed)
{
	struct reload_object o;
	const char *container, *rec;
	enum reload_verdict v;

	obj_of(ce, &o);
	v = reload_should(&we->w, &o, c->o->auto_all, &container);
	if (v != RELOAD_YES) {
		if (changed)
			count_skip(c, v);
		return;
	}
	rec = reload_recorded(&we->w, &o, container, c->o->strategy);
	if (reload_hash_current(rec, ce->hash, ce->alt)) {
		if (changed)
			METRIC_INC(c->m.skipped[SKIP_CURRENT]);
		return;
	}
	if (!changed && !rec)
		return; /* no record: nothing says it changed while we were away */
	schedule(c, we, o.type, o.name);
}

/* An object's data changed: every workload it selects is considered. */
static void config_changed(struct ctl *c, const struct cfg_ent *ce)
{
	size_t i;
	struct ent *e;

	for (i = 0; i < c->wl.nb; i++)
		for (e = c->wl.b[i]; e; e = e->next)
			if (strcmp(e->ns, ce->e.ns) == 0)
				consider(c, (struct wl_ent *)e, ce, 1);
}

/* Restart safety: roll we only for objects whose hash differs from what it records. */
static void reconcile_workload(struct ctl *c, struct wl_ent *we)
{
	size_t i;
	int t;

	for (i = 0; i < we->w.nrefs; i++) {
		struct cfg_ent *ce = (struct cfg_ent *)tab_get(
		    &c->cfg, type_cls(we->w.refs[i].type), we->w.ns, we->w.refs[i].name);

		if (ce && ce->hash[0])
			consider(c, we, ce, 0);
	}
	/* Named reload lists may select objects the pod spec does not use. */
	for (t = 0; t < 2; t++) {
		struct ent *e;

		if (!we->w.relist[0][t].n && !we->w.relist[1][t].n)
			continue;
		for (i = 0; i < c->cfg.nb; i++) {
			for (e = c->cfg.b[i]; e; e = e->next) {
				if (e->cls != type_cls((enum reload_type)t) ||
				    strcmp(e->ns, we->w.ns) != 0)
					continue;
				if (((struct cfg_ent *)e)->hash[0])
					consider(c, we, (struct cfg_ent *)e, 0);
			}
		}
	}
}

static void reconcile_all(struct ctl *c)
{
	size_t i;
	struct ent *e;

	for (i = 0; i < c->wl.nb; i++)
		for (e = c->wl.b[i]; e; e = e->next)
			reconcile_workload(c, (struct wl_ent *)e);
}

/* ---- applying list and watch items ---- */

static void apply_config(struct ctl *c, int cls, const char *evtype, const char *ns,
			 const char *name, const char *rv, const char *hash,
			 const unsigned char *alt, int match, int ignore, int from_relist)
{
	struct cfg_ent *ce = (struct cfg_ent *)tab_get(&c->cfg, cls, ns, name);
	int existed = ce != NULL, changed;

	if (strcmp(evtype, "DELETED") == 0) {
		if (ce) {
			tab_del(&c->cfg, &ce->e);
			cfg_free(ce);
			METRIC_SET(c->m.objects[cls], c->m.objects[cls] - 1);
		}
		return;
	}
	if (!ce) {
		ce = calloc(1, sizeof(*ce));
		if (!ce)
			return;
		ce->e.cls = (unsigned char)cls;
		ce->e.ns = strdup(ns);
		ce->e.name = strdup(name);
		if (!ce->e.ns || !ce->e.name || tab_put(&c->cfg, &ce->e) < 0) {
			cfg_free(ce);
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
		config_changed(c, ce);
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Does obj carry the reload lists we already parsed (and warned about) for it? */
static int same_lists(const struct ctl *c, int cls, json_t *obj)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *anns[2];
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	const struct wl_ent *we;
	int a;

	if (!name)
		return 0;
	we = (const struct wl_ent *)tab_get(&c->wl, cls, ns ? ns : "", name);
	if (!we)
		return 0;
	anns[0] = json_object_get(meta, "annotations");
	anns[1] = json_object_get(
	    json_object_get(json_object_get(json_object_get(obj, "spec"), "template"), "metadata"),
	    "annotations");
	for (a = 0; a < 2; a++) {
		if (!same_str(we->w.ann[a][RA_CM_RELOAD],
			      json_string_value(
				  json_object_get(anns[a], reload_ann_key(RA_CM_RELOAD)))) ||
		    !same_str(
			we->w.ann[a][RA_SEC_RELOAD],
			json_string_value(json_object_get(anns[a], reload_ann_key(RA_SEC_RELOAD)))))
			return 0;
	}
	return 1;
}

static void apply_workload(struct ctl *c, int cls, const char *evtype, json_t *obj)
{
	struct reload_workload w;
	struct log_err err = {0};
	struct wl_ent *we;
	int r;

	r = reload_workload_parse(&w, (enum reload_kind)(cls - CLS_DEP), obj,
				  same_lists(c, cls, obj), &err);
	if (r < 0) {
		log_warn("skipping a %s: %s", cls_res[cls]->kind,
			 err.msg[0] ? err.msg : strerror(-r));
		reload_workload_free(&w);
		return;
	}
	if (ns_ignored(c, w.ns)) {
		reload_workload_free(&w);
		return;
	}
	we = (struct wl_ent *)tab_get(&c->wl, cls, w.ns, w.name);
	if (strcmp(evtype, "DELETED") == 0) {
		if (we) {
			tab_del(&c->wl, &we->e);
			wl_free(c, we);
			METRIC_SET(c->m.objects[cls], c->m.objects[cls] - 1);
		}
		reload_workload_free(&w);
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
		if (!we->e.ns || !we->e.name || tab_put(&c->wl, &we->e) < 0) {
			reload_workload_free(&w);
			wl_free(c, we);
			return;
		}
		METRIC_SET(c->m.objects[cls], c->m.objects[cls] + 1);
	}
	reload_workload_free(&we->w);
	we->w = w;
	we->seen = 1;
}

/* ---- stream callbacks ---- */

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
	d->next = c->defer;
	c->defer = d;
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
		log_info("%s watch: ERROR event (code %ld)", cls_res[s->cls]->plural, s->code);
		return 0;
	}
	if (strcmp(type, "BOOKMARK") == 0 || !s->name.len)
		return 0;
	if (ns_ignored(s->c, s->ns_.buf))
		return 0;
	r = s->hs_live ? reload_hasher_final(&s->hs, hex, alt) : -EINVAL;
	s->hs_live = 0;
	if (r == -EAGAIN) {
		/* Keys out of order: hash the whole object from a GET, one at a time. */
		struct cfg_ent *ce =
		    (struct cfg_ent *)tab_get(&s->c->cfg, s->cls, s->ns_.buf, s->name.buf);

		if (ce)
			ce->seen = 1;
		defer_item(s->c, s->cls, s->ns_.buf, s->name.buf,
			   s->relist && strcmp(type, "LIST") == 0 ? "RELIST" : type);
		return 0;
	}
	if (r < 0) {
		log_warn("%s %s/%s: data is not valid base64; not tracked", cls_res[s->cls]->kind,
			 s->ns_.buf, s->name.buf);
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
		log_info("%s watch: ERROR event (code %ld)", cls_res[s->cls]->plural, code);
		return 0;
	}
	if (strcmp(type, "BOOKMARK") == 0)
		return 0;
	apply_workload(s->c, s->cls, type, obj);
	return 0;
}

static const struct kube_stream_ops cfg_ops = {
    .scalar = cfg_scalar,
    .begin = cfg_begin,
    .item = cfg_item,
};

static const struct kube_stream_ops wl_ops = {
    .item = wl_item,
};

static struct kube_stream *new_stream(struct rs *s, enum kube_stream_kind kind)
{
	int is_cfg = s->cls == CLS_CM || s->cls == CLS_SEC;

	return kube_stream_new(kind, is_cfg ? KUBE_ITEM_FLAT : KUBE_ITEM_JSON,
			       is_cfg ? &cfg_ops : &wl_ops, s);
}

static void fill_query(const struct ctl *c, const struct rs *s, struct kube_query *q)
{
	memset(q, 0, sizeof(*q));
	if (s->cls == CLS_CM || s->cls == CLS_SEC)
		q->label_selector = c->o->label_selector;
	if (s->cls == CLS_SEC)
		q->field_selector = c->o->secret_field_selector;
}

/* Fetch one object whose keys arrived out of order and hash it whole. */
static void process_deferred(struct ctl *c)
{
	while (c->defer) {
		struct deferred *d = c->defer;
		struct log_err err = {0};
		char hex[RELOAD_HASH_HEX];
		unsigned char alt[RELOAD_HASH_ALT];
		json_t *obj = NULL, *ann;
		int r;

		c->defer = d->next;
		sb_reset(&c->url);
		kube_url(&c->url, kube_client_server(c->cl), cls_res[d->cls], d->ns, d->name, NULL);
		c->resp.max = OBJ_MAX;
		r = kube_request(c->cl, "GET", c->url.buf, NULL, NULL, &c->resp, &err);
		if (r == 200)
			obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
		if (obj && reload_hash_object(obj, cls_type(d->cls), hex, alt) == 0) {
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
			log_warn("%s %s/%s: cannot hash: %s", cls_res[d->cls]->kind, d->ns, d->name,
				 r < 0 ? err.msg : "unexpected answer");
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
	int is_cfg = s->cls == CLS_CM || s->cls == CLS_SEC;
	struct tab *t = is_cfg ? &c->cfg : &c->wl;
	size_t i;
	struct ent *e;

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
	int is_cfg = s->cls == CLS_CM || s->cls == CLS_SEC;
	struct tab *t = is_cfg ? &c->cfg : &c->wl;
	size_t i;
	struct ent *e, *nx;

	for (i = 0; i < t->nb; i++) {
		for (e = t->b[i]; e; e = nx) {
			nx = e->next;
			if (e->cls != s->cls || (*s->ns && strcmp(e->ns, s->ns) != 0))
				continue;
			if (is_cfg ? ((struct cfg_ent *)e)->seen : ((struct wl_ent *)e)->seen)
				continue;
			tab_del(t, e);
			if (is_cfg)
				cfg_free((struct cfg_ent *)e);
			else
				wl_free(c, (struct wl_ent *)e);
			METRIC_SET(c->m.objects[s->cls], c->m.objects[s->cls] - 1);
		}
	}
}

/* LIST every page of s. Returns 0 or a negative code with err set. */
static int list_stream(struct ctl *c, struct rs *s, struct log_err *err)
{
	struct strbuf cont = STRBUF_INIT(64 * 1024), errbody = STRBUF_INIT(64 * 1024);
	struct kube_query q;
	int r = 0, page = 0, restarts = 0;

	s->listing = 1;
	if (s->relist)
		mark_unseen(c, s);
	for (;;) {
		struct kube_stream *st = new_stream(s, KUBE_STREAM_LIST);

		if (!st) {
			r = log_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		fill_query(c, s, &q);
		q.limit = c->o->page_size;
		q.cont = cont.len ? cont.buf : NULL;
		sb_reset(&c->url);
		kube_url(&c->url, kube_client_server(c->cl), cls_res[s->cls], s->ns, NULL, &q);
		r = kube_get_stream(c->cl, c->url.buf, st, &errbody, err);
		if (r == 410 && page > 0 && restarts < LIST_RESTARTS) {
			/* continue token expired: start over from the first page */
			kube_stream_free(st);
			sb_reset(&cont);
			page = 0;
			restarts++;
			mark_unseen(c, s); /* what the first pass saw may be gone since */
			continue;
		}
		if (r != 200) {
			if (r >= 0)
				r = log_err_set(err, r == 401 || r == 403 ? KUBE_EAUTH : KUBE_EHTTP,
						"LIST %s: HTTP %d: %.300s", c->url.buf, r,
						errbody.buf);
			kube_stream_free(st);
			break;
		}
		r = 0;
		snprintf(s->rv, sizeof(s->rv), "%s", kube_stream_rv(st));
		sb_reset(&cont);
		sb_add(&cont, kube_stream_continue(st));
		kube_stream_free(st);
		page++;
		if (!cont.len)
			break;
	}
	if (r == 0 && (s->relist || restarts))
		sweep_unseen(c, s);
	s->listing = 0;
	s->relist = 0;
	sb_free(&cont);
	sb_free(&errbody);
	return r;
}

static void watch_done(void *ctx, struct kube_watch *w, int status, int res, const char *msg);

static int start_watch(struct ctl *c, struct rs *s, struct log_err *err)
{
	struct kube_query q;

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
	kube_url(&c->url, kube_client_server(c->cl), cls_res[s->cls], s->ns, NULL, &q);
	s->w = kube_watch_start(c->cl, c->url.buf, s->st, watch_done, s, err);
	if (!s->w)
		return err->code ? err->code : -ENOMEM;
	s->restart_ms = 0;
	s->start_ms = now_ms();
	s->events = 0;
	s->error_code = 0;
	return 0;
}

static void watch_done(void *ctx, struct kube_watch *w, int status, int res, const char *msg)
{
	struct rs *s = ctx;
	struct ctl *c = s->c;
	long long delay = 0;
	char why[64] = "";

	s->w = NULL;
	if (kube_stream_rv(s->st)[0])
		snprintf(s->rv, sizeof(s->rv), "%s", kube_stream_rv(s->st));
	if (status == 410)
		s->gone = 1;
	/*
	 * Besides errors: an ERROR event other than 410, or a watch closed within a
	 * second without a single event, is a failure too (as client-go's "very short
	 * watch"); restarting at once would hammer the API server.
	 */
	if (res >= 0 && status == 200 && !s->gone) {
		if (s->error_code)
			snprintf(why, sizeof(why), "ERROR event, code %ld", s->error_code);
		else if (s->events == 0 && now_ms() - s->start_ms < 1000)
			snprintf(why, sizeof(why), "closed at once without events");
		if (why[0]) {
			res = -EPROTO;
			msg = why;
		}
	}
	if (res < 0 || (status != 200 && status != 410)) {
		long long base = 200LL << (s->fails < 6 ? s->fails : 6);

		delay = base / 2 + random() % (base / 2 + 1);
		if (status == 429) { /* Retry-After, capped as for requests */
			long ra = kube_watch_retry_after(w);

			delay =
			    ra > 0 ? (ra < RETRY_AFTER_MAX ? ra : RETRY_AFTER_MAX) * 1000LL : 1000;
		}
		s->fails++;
		METRIC_INC(c->m.watch_restarts[s->cls]);
		log_warn("watch %s%s%s ended (%s); restarting in %lld ms", cls_res[s->cls]->plural,
			 *s->ns ? " in " : "", s->ns, msg && *msg ? msg : "HTTP error", delay);
	} else {
		if (s->gone) {
			METRIC_INC(c->m.watch_restarts[s->cls]);
			log_info("watch %s: resourceVersion %s is gone (410); re-listing",
				 cls_res[s->cls]->plural, s->rv);
		}
		s->fails = 0;
	}
	s->restart_ms = now_ms() + delay;
}

/* Restart the watches whose time has come (re-listing after a 410). */
static void restart_watches(struct ctl *c)
{
	long long now = now_ms();
	size_t i;

	for (i = 0; i < c->nrs; i++) {
		struct rs *s = &c->rs[i];
		struct log_err err = {0};
		int r = 0;

		if (s->w || !s->restart_ms || s->restart_ms > now)
			continue;
		if (s->gone) {
			s->relist = 1;
			r = list_stream(c, s, &err);
			if (r == 0) {
				s->gone = 0;
				if (s->cls >= CLS_DEP)
					reconcile_all(c);
			}
		}
		if (r == 0)
			r = start_watch(c, s, &err);
		if (r < 0) {
			long long base = 200LL << (s->fails < 6 ? s->fails : 6);

			s->fails++;
			s->restart_ms = now + base / 2 + random() % (base / 2 + 1);
			log_warn("%s: %s", cls_res[s->cls]->plural, err.msg);
		}
	}
}

/* ---- rollouts ---- */

static long long wall_now(void)
{
	return (long long)time(NULL);
}

static void post_event(struct ctl *c, const struct wl_ent *we, const char *message)
{
	struct strbuf b = STRBUF_INIT(16 * 1024);
	struct log_err err = {0};
	char ts[32], evname[64];
	struct timespec now;
	struct tm tm;
	int r;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(evname, sizeof(evname), ".%llx%09ld", (long long)now.tv_sec, now.tv_nsec);
	r = sb_add(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":");
	{
		struct strbuf n = STRBUF_INIT(1024);

		sb_add(&n, we->e.name);
		sb_add(&n, evname);
		r = r ? r : sb_add_json_str(&b, n.buf);
		sb_free(&n);
	}
	r = r ? r : sb_add(&b, ",\"namespace\":");
	r = r ? r : sb_add_json_str(&b, we->e.ns);
	r = r ? r
	      : sb_addf(&b,
			"},\"involvedObject\":{\"apiVersion\":\"apps/v1\",\"kind\":\"%s\","
			"\"name\":",
			reload_kind_name(we->w.kind));
	r = r ? r : sb_add_json_str(&b, we->e.name);
	r = r ? r : sb_add(&b, ",\"namespace\":");
	r = r ? r : sb_add_json_str(&b, we->e.ns);
	if (we->w.uid) { /* kubectl describe selects a workload's Events by it */
		r = r ? r : sb_add(&b, ",\"uid\":");
		r = r ? r : sb_add_json_str(&b, we->w.uid);
	}
	r = r ? r : sb_add(&b, "},\"reason\":\"Reloaded\",\"message\":");
	r = r ? r : sb_add_json_str(&b, message);
	r = r ? r
	      : sb_addf(&b,
			",\"type\":\"Normal\",\"source\":{\"component\":\"nodeprobe-reload\"},"
			"\"reportingComponent\":\"nodeprobe-reload\",\"firstTimestamp\":\"%s\","
			"\"lastTimestamp\":\"%s\",\"count\":1}",
			ts, ts);
	if (r < 0) {
		sb_free(&b);
		return;
	}
	sb_reset(&c->url);
	kube_url(&c->url, kube_client_server(c->cl), &kube_events, we->e.ns, NULL, NULL);
	c->resp.max = SMALL_MAX;
	r = kube_request(c->cl, "POST", c->url.buf, "application/json", b.buf, &c->resp, &err);
	if (r != 201 && r != 200)
		log_warn("event for %s %s/%s not recorded: %s", reload_kind_name(we->w.kind),
			 we->e.ns, we->e.name, r < 0 ? err.msg : "HTTP error");
	sb_free(&b);
}

/* Re-read a workload after a 409. Returns 0, or -ENOENT when it is gone. */
static int reread(struct ctl *c, struct wl_ent *we)
{
	struct log_err err = {0};
	json_t *obj;
	int r;

	sb_reset(&c->url);
	kube_url(&c->url, kube_client_server(c->cl), cls_res[we->e.cls], we->e.ns, we->e.name,
		 NULL);
	c->resp.max = OBJ_MAX;
	r = kube_request(c->cl, "GET", c->url.buf, NULL, NULL, &c->resp, &err);
	if (r == 404)
		return -ENOENT;
	if (r != 200)
		return r < 0 ? r : -EIO;
	obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
	if (!obj)
		return -EIO;
	apply_workload(c, we->e.cls, "MODIFIED", obj);
	json_decref(obj);
	return 0;
}

/*
 * Roll we for its queued triggers. Returns 1 if patched, 0 if nothing to do,
 * negative on failure. we may be freed (-ENOENT).
 */
static int rollout_with(struct ctl *c, struct wl_ent *we, struct reload_trigger *t,
			struct cfg_ent **src)
{
	struct log_err err = {0};
	size_t i, n;
	int attempt, r = 0;
	struct kube_query q = {.field_manager = "nodeprobe-reload"};

	for (attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
		n = 0;
		for (i = 0; i < we->ntrig; i++) {
			struct cfg_ent *ce = (struct cfg_ent *)tab_get(
			    &c->cfg, type_cls(we->trig[i].type), we->e.ns, we->trig[i].name);
			struct reload_object o;
			const char *container, *rec;

			if (!ce || !ce->hash[0])
				continue;
			obj_of(ce, &o);
			if (reload_should(&we->w, &o, c->o->auto_all, &container) != RELOAD_YES)
				continue;
			rec = reload_recorded(&we->w, &o, container, c->o->strategy);
			if (reload_hash_current(rec, ce->hash, ce->alt)) {
				METRIC_INC(c->m.skipped[SKIP_CURRENT]);
				continue;
			}
			if (c->o->strategy == RELOAD_ENV_VARS && !container) {
				METRIC_INC(c->m.skipped[SKIP_NO_CONTAINER]);
				continue;
			}
			t[n].type = o.type;
			t[n].name = ce->e.name;
			t[n].hash = ce->hash;
			t[n].container = container;
			src[n] = ce;
			n++;
		}
		if (n == 0)
			return 0;
		sb_reset(&c->body);
		r = reload_patch_body(&c->body, c->o->strategy, we->e.ns, t, n, wall_now());
		if (r < 0)
			return r;
		sb_reset(&c->url);
		kube_url(&c->url, kube_client_server(c->cl), cls_res[we->e.cls], we->e.ns,
			 we->e.name, &q);
		c->resp.max = OBJ_MAX;
		r = kube_request(c->cl, "PATCH", c->url.buf,
				 "application/strategic-merge-patch+json", c->body.buf, &c->resp,
				 &err);
		if (r == 409 && attempt + 1 < CONFLICT_RETRIES) {
			log_info("%s %s/%s: conflict, re-reading (attempt %d)",
				 reload_kind_name(we->w.kind), we->e.ns, we->e.name, attempt + 1);
			r = reread(c, we);
			if (r < 0)
				return r;
			continue;
		}
		break;
	}
	if (r != 200) {
		log_error("%s %s/%s: rollout failed: %s", reload_kind_name(we->w.kind), we->e.ns,
			  we->e.name,
			  r < 0	     ? err.msg
			  : r == 409 ? "conflict persisted"
				     : "HTTP error");
		if (r > 0)
			log_error("%s %s/%s: HTTP %d: %.300s", reload_kind_name(we->w.kind),
				  we->e.ns, we->e.name, r, c->resp.buf);
		return r < 0 ? r : -EIO;
	}
	{
		/* The answer is the patched object: our record of it, without waiting for the
		 * watch. */
		json_t *obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
		char msg[1024];
		struct cfg_ent *last = src[n - 1];

		snprintf(msg, sizeof(msg), "rolled %s %s/%s for %s %s/%s hash %.8s%s (%s)",
			 reload_kind_name(we->w.kind), we->e.ns, we->e.name,
			 reload_type_name(cls_type(last->e.cls)), last->e.ns, last->e.name,
			 last->hash, n > 1 ? " and more" : "",
			 c->o->strategy == RELOAD_ENV_VARS ? "env-vars" : "annotations");
		log_info("%s", msg);
		if (c->o->events)
			post_event(c, we, msg + 7);
		if (obj)
			apply_workload(c, we->e.cls, "MODIFIED", obj);
		json_decref(obj);
	}
	return 1;
}

static int rollout(struct ctl *c, struct wl_ent *we)
{
	size_t n = we->ntrig ? we->ntrig : 1;
	struct reload_trigger *t = calloc(n, sizeof(*t));
	struct cfg_ent **src = calloc(n, sizeof(*src));
	int r = t && src ? rollout_with(c, we, t, src) : -ENOMEM;

	free(t);
	free(src);
	return r;
}

static int take_token(struct ctl *c, long long now)
{
	if (c->o->max_rate <= 0)
		return 1;
	c->tokens += (double)(now - c->tok_ms) * c->o->max_rate / 1000.0;
	if (c->tokens > c->o->burst)
		c->tokens = c->o->burst;
	c->tok_ms = now;
	if (c->tokens < 1.0)
		return 0;
	c->tokens -= 1.0;
	return 1;
}

/* Run every rollout that is due (all of them when force). */
static void process_due(struct ctl *c, int force)
{
	long long now = now_ms();
	struct wl_ent *we, *nx;

	for (we = c->pend; we; we = nx) {
		int cls, r;

		nx = we->pnext;
		if (!force && we->due_ms > now)
			continue;
		if (!take_token(c, now)) {
			if (force) {
				long long wait = (long long)(1000.0 / c->o->max_rate) + 1;
				struct timespec ts = {wait / 1000, (wait % 1000) * 1000000L};

				nanosleep(&ts, NULL);
				now = now_ms();
				take_token(c, now);
			} else {
				we->due_ms = now + (long long)(1000.0 / c->o->max_rate) + 1;
				continue;
			}
		}
		cls = we->e.cls;
		r = rollout(c, we);
		if (r == -ENOENT) {
			/* deleted meanwhile */
			tab_del(&c->wl, &we->e);
			wl_free(c, we);
			METRIC_SET(c->m.objects[cls], c->m.objects[cls] - 1);
			nx = c->pend;
			continue;
		}
		if (r != 0)
			METRIC_INC(c->m.reloads[cls - CLS_DEP][r < 0]);
		if (r < 0 && !force && we->fails < ROLLOUT_RETRIES) {
			/* keep the triggers, try again later (the latest hash is read then) */
			we->due_ms = now_ms() + (1000LL << we->fails);
			log_warn("%s %s/%s: retrying the rollout in %lld ms",
				 reload_kind_name(we->w.kind), we->e.ns, we->e.name,
				 1000LL << we->fails);
			we->fails++;
			nx = we->pnext;
			continue;
		}
		if (r < 0)
			c->failures++;
		we->fails = 0;
		we->last_roll_ms = r > 0 ? now_ms() : we->last_roll_ms;
		pend_remove(c, we);
		nx = c->pend; /* the list changed: start over (each entry is done once) */
	}
}

static long long next_wakeup(const struct ctl *c)
{
	long long t = now_ms() + 500;
	const struct wl_ent *we;
	size_t i;

	for (we = c->pend; we; we = we->pnext)
		if (we->due_ms < t)
			t = we->due_ms;
	for (i = 0; i < c->nrs; i++)
		if (!c->rs[i].w && c->rs[i].restart_ms && c->rs[i].restart_ms < t)
			t = c->rs[i].restart_ms;
	return t;
}

/* ---- setup ---- */

void reload_opts_init(struct reload_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
	o->secret_field_selector = "type!=helm.sh/release.v1";
	o->strategy = RELOAD_ENV_VARS;
	o->window_ms = 1000;
	o->min_interval_ms = 10000;
	o->max_rate = 5;
	o->burst = 20;
	o->events = 1;
	o->page_size = 500;
	o->watch_timeout_s = 1800;
	o->retries = 5;
	o->retry_base_ms = 200;
}

static int make_streams(struct ctl *c)
{
	static const char *const all[] = {"", NULL};
	const char *const *nss =
	    c->o->namespaces && c->o->namespaces[0] ? (const char *const *)c->o->namespaces : all;
	size_t nns = 0, i;
	int cls;

	while (nss[nns])
		nns++;
	c->rs = calloc(nns * NCLS, sizeof(*c->rs));
	if (!c->rs)
		return -ENOMEM;
	/* Workloads first, so the first ConfigMap/Secret pass already sees them. */
	for (cls = NCLS - 1; cls >= 0; cls--) {
		for (i = 0; i < nns; i++) {
			struct rs *s = &c->rs[c->nrs++];

			s->c = c;
			s->cls = cls;
			s->ns = nss[i];
			sb_init(&s->name, NAME_MAX_);
			sb_init(&s->ns_, NAME_MAX_);
			sb_init(&s->irv, RV_MAX);
		}
	}
	return 0;
}

static void ctl_free(struct ctl *c)
{
	size_t i;
	struct ent *e, *nx;

	for (i = 0; i < c->nrs; i++) {
		struct rs *s = &c->rs[i];

		if (s->w)
			kube_watch_cancel(c->cl, s->w);
		kube_stream_free(s->st);
		if (s->hs_live)
			reload_hasher_free(&s->hs);
		sb_free(&s->name);
		sb_free(&s->ns_);
		sb_free(&s->irv);
	}
	free(c->rs);
	for (i = 0; i < c->cfg.nb; i++)
		for (e = c->cfg.b[i]; e; e = nx) {
			nx = e->next;
			cfg_free((struct cfg_ent *)e);
		}
	free(c->cfg.b);
	for (i = 0; i < c->wl.nb; i++)
		for (e = c->wl.b[i]; e; e = nx) {
			nx = e->next;
			((struct wl_ent *)e)->pending = 0;
			wl_free(c, (struct wl_ent *)e);
		}
	free(c->wl.b);
	while (c->defer) {
		struct deferred *d = c->defer;

		c->defer = d->next;
		free(d->ns);
		free(d->name);
		free(d);
	}
	sb_free(&c->url);
	sb_free(&c->body);
	sb_free(&c->resp);
	kube_client_free(c->cl);
}

int reload_run(const struct reload_opts *o, struct log_err *err)
{
	struct ctl c;
	struct kube_config cfg;
	void *http = NULL;
	size_t i;
	int r;

	memset(&c, 0, sizeof(c));
	c.o = o;
	sb_init(&c.url, 64 * 1024);
	sb_init(&c.body, 1024 * 1024);
	sb_init(&c.resp, OBJ_MAX);
	srandom((unsigned int)(now_ms() ^ getpid()));
	if (o->kubeconfig)
		r = kube_config_load(&cfg, o->kubeconfig, o->context, err);
	else
		r = kube_config_in_cluster(&cfg, o->sa_dir, err);
	if (r < 0) {
		kube_config_free(&cfg);
		return r;
	}
	r = kube_client_new(&c.cl, &cfg, err);
	kube_config_free(&cfg);
	if (r < 0)
		return r;
	kube_client_set_retries(c.cl, o->retries, o->retry_base_ms);
	c.m.cl = c.cl;
	c.tok_ms = now_ms();
	c.tokens = o->burst;
	r = make_streams(&c);
	if (r < 0) {
		log_err_set(err, r, "out of memory");
		goto out;
	}
	if (!o->once) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		if (o->listen && *o->listen) {
			http = reload_http_start(o->listen, &c.m, err);
			if (!http) {
				r = err->code ? err->code : -EADDRINUSE;
				goto out;
			}
		}
	}
	/* Initial sync: LIST everything (paged, streamed), then look for missed changes. */
	for (i = 0; i < c.nrs; i++) {
		r = list_stream(&c, &c.rs[i], err);
		if (r < 0)
			goto out;
	}
	process_deferred(&c);
	log_info("synced: %lu ConfigMaps, %lu Secrets, %lu workloads", c.m.objects[CLS_CM],
		 c.m.objects[CLS_SEC],
		 c.m.objects[CLS_DEP] + c.m.objects[CLS_STS] + c.m.objects[CLS_DS]);
	reconcile_all(&c);
	if (o->once) {
		process_due(&c, 1);
		r = c.failures ? log_err_set(err, RELOAD_EPARTIAL, "%d rollouts failed", c.failures)
			       : 0;
		goto out;
	}
	for (i = 0; i < c.nrs; i++) {
		r = start_watch(&c, &c.rs[i], err);
		if (r < 0)
			goto out;
	}
	METRIC_SET(c.m.ready, 1);
	while (!stop_flag) {
		long long wait = next_wakeup(&c) - now_ms();

		if (wait < 0)
			wait = 0;
		r = kube_poll(c.cl, (int)wait);
		if (r < 0) {
			log_err_set(err, r, "polling the watches failed");
			goto out;
		}
		process_deferred(&c);
		restart_watches(&c);
		process_due(&c, 0);
	}
	r = 0;
out:
	reload_http_stop(http);
	ctl_free(&c);
	return r;
}
