/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_csi: Reloader's Secrets Store CSI integration (--enable-csi-integration): the
 * SecretProviderClassPodStatus items of the LIST and WATCH, their hash, and the change they
 * bring to the SecretProviderClass they name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_csi.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

/*
 * Reloader v1.4.21, read, not copied: internal/pkg/util/util.go
 * (GetSHAfromSecretProviderClassPodStatus), internal/pkg/common/common.go
 * (GetSecretProviderClassPodStatusConfig: the trigger is the SecretProviderClass named by
 * status.secretProviderClassName, in the status object's namespace, type SECRETPROVIDERCLASS),
 * internal/pkg/handler/update.go (an update rolls when the old and new hash differ; an old
 * status whose objects are nil hashes as ""). The object is the CSI driver's
 * (kubernetes-sigs/secrets-store-csi-driver apis/v1 SecretProviderClassPodStatus: status.podName,
 * status.secretProviderClassName, status.mounted, status.objects[].id, .version); only the
 * SecretProviderClass name and the hash are kept. Reloader reads the SecretProviderClass's
 * reloader.stakater.com/match and ignore annotations with a GET (an error reads as none); so do we,
 * once per rotation and SecretProviderClass, before the change is told: one try of at most
 * RELOAD_SPC_GET_MS, at most RELOAD_SPC_GETS_PER_PASS per run-loop pass (oldest first, the rest
 * the next pass), none on a standby replica, so a slow apiserver stalls no watch or lease.
 */

/* A SecretProviderClassPodStatus: the SecretProviderClass it names and its hash. */
struct spcps_ent {
	struct ent e;		    /* cls CLS_SPC, namespace, the status object's name */
	char *spc;		    /* status.secretProviderClassName; owned */
	char hash[RELOAD_HASH_HEX]; /* Reloader's hash; "" while status.objects is absent */
	unsigned char seen;	    /* in the current (re-)LIST */
};

/* One "id=version" (or "SecretProviderClassName=<spc>") entry of the hash. */
struct spc_pair {
	const char *k, *v;
	size_t kl, vl;
};

/* Byte i of a pair's "k=v". */
static unsigned char pair_at(const struct spc_pair *x, size_t i)
{
	if (i < x->kl)
		return (unsigned char)x->k[i];
	return i == x->kl ? '=' : (unsigned char)x->v[i - x->kl - 1];
}

/* Go's sort.Strings order of "k=v": bytewise over the joined string. */
static int pair_cmp(const void *a, const void *b)
{
	const struct spc_pair *x = a, *y = b;
	size_t i, xl = x->kl + 1 + x->vl, yl = y->kl + 1 + y->vl;

	for (i = 0; i < xl && i < yl; i++)
		if (pair_at(x, i) != pair_at(y, i))
			return pair_at(x, i) < pair_at(y, i) ? -1 : 1;
	return xl < yl ? -1 : xl > yl;
}

static void str_of(json_t *j, const char **s, size_t *len)
{
	*s = json_is_string(j) ? json_string_value(j) : "";
	*len = json_is_string(j) ? json_string_length(j) : 0;
}

int reload_spc_hash(json_t *status, char hex[RELOAD_HASH_HEX])
{
	json_t *objs = json_object_get(status, "objects"), *o;
	size_t n = json_is_array(objs) ? json_array_size(objs) : 0, i, total = 0;
	struct spc_pair *p;
	struct strbuf sb = STRBUF_INIT(RELOAD_SPC_HASHED_MAX);
	int r = 0;

	if (n > RELOAD_SPC_OBJECTS_MAX)
		return -E2BIG;
	p = calloc(n + 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	json_array_foreach(objs, i, o)
	{
		str_of(json_object_get(o, "id"), &p[i].k, &p[i].kl);
		str_of(json_object_get(o, "version"), &p[i].v, &p[i].vl);
		total += p[i].kl + p[i].vl + 2;
	}
	p[n].k = "SecretProviderClassName";
	p[n].kl = strlen(p[n].k);
	str_of(json_object_get(status, "secretProviderClassName"), &p[n].v, &p[n].vl);
	total += p[n].kl + p[n].vl + 1;
	if (total > RELOAD_SPC_HASHED_MAX) {
		free(p);
		return -E2BIG;
	}
	qsort(p, n + 1, sizeof(*p), pair_cmp);
	for (i = 0; i <= n && r == 0; i++) {
		if (i)
			r = sb_addch(&sb, ';');
		r = r ? r : sb_addn(&sb, p[i].k, p[i].kl);
		r = r ? r : sb_addch(&sb, '=');
		r = r ? r : sb_addn(&sb, p[i].v, p[i].vl);
	}
	if (r == 0)
		r = reload_relist_digest(sb.buf ? sb.buf : "", sb.len, hex);
	sb_free(&sb);
	free(p);
	return r < 0 ? r : 0;
}

void reload_csi_free(struct ctl *c)
{
	size_t i;
	struct ent *e, *nx;

	for (i = 0; i < c->in.spcps.nb; i++)
		for (e = c->in.spcps.b[i]; e; e = nx) {
			nx = e->next;
			free(((struct spcps_ent *)e)->spc);
			free(e->ns);
			free(e->name);
			free(e);
		}
	free(c->in.spcps.b);
	memset(&c->in.spcps, 0, sizeof(c->in.spcps));
	while (c->in.spc_gets) {
		struct deferred *d = c->in.spc_gets;

		c->in.spc_gets = d->next;
		free(d->ns);
		free(d->name);
		free(d);
	}
}

/*
 * The SecretProviderClass spc in ns changed to hash: its entry among the ConfigMaps and
 * Secrets (cls CLS_SPC, kept for the rollouts that follow) takes the hash, and a GET of the
 * SecretProviderClass is queued (once per SecretProviderClass while one is queued): its match
 * and ignore annotations are read before the change is told (reload_csi_fetch).
 */
static void spc_changed(struct ctl *c, const char *ns, const char *spc, const char *hash)
{
	struct cfg_ent *ce = (struct cfg_ent *)reload_tab_get(&c->cfg, CLS_SPC, ns, spc);
	struct deferred *d;

	if (!ce) {
		ce = calloc(1, sizeof(*ce));
		if (!ce)
			return;
		ce->e.cls = CLS_SPC;
		ce->e.ns = strdup(ns);
		ce->e.name = strdup(spc);
		ce->rv = strdup("");
		if (!ce->e.ns || !ce->e.name || !ce->rv || reload_tab_put(&c->cfg, &ce->e) < 0) {
			reload_cfg_free(ce);
			log_warn("SecretProviderClass %s/%s: out of memory", ns, spc);
			return;
		}
	}
	memcpy(ce->hash, hash, RELOAD_HASH_HEX);
	ce->seen = 1;
	for (d = c->in.spc_gets; d; d = d->next)
		if (strcmp(d->ns, ns) == 0 && strcmp(d->name, spc) == 0)
			return; /* its GET is queued: the change is told with the latest hash */
	d = calloc(1, sizeof(*d));
	if (d) {
		d->cls = CLS_SPC;
		d->ns = strdup(ns);
		d->name = strdup(spc);
	}
	if (!d || !d->ns || !d->name) {
		if (d) {
			free(d->ns);
			free(d->name);
			free(d);
		}
		RELOAD_IN_TELL(c, changed, c, ce); /* told without the annotations */
		return;
	}
	{ /* FIFO: the oldest rotation is read first */
		struct deferred **t = &c->in.spc_gets;

		while (*t)
			t = &(*t)->next;
		*t = d;
	}
}

/* GET SecretProviderClass d->ns/d->name: *match and *ignore from its annotations (0 if none). */
static void spc_get(struct ctl *c, const struct deferred *d, int *match, int *ignore)
{
	struct log_err err = {0};
	json_t *obj = NULL, *ann;
	const char *m, *ig;
	long old;
	int r;

	*match = *ignore = 0;
	sb_reset(&c->url);
	kube_url(&c->url, kube_client_server(c->cl), &reload_res_spcs, d->ns, d->name, NULL);
	c->resp.max = RELOAD_SPC_GET_MAX;
	/* the run loop waits for it: one try, bounded (a slow apiserver stalls no watch or lease)
	 */
	kube_client_set_retries(c->cl, 1, c->o->retry_base_ms);
	old = kube_client_set_timeout(c->cl, RELOAD_SPC_GET_MS);
	r = kube_request(c->cl, "GET", c->url.buf, NULL, NULL, &c->resp, &err);
	kube_client_set_timeout(c->cl, old);
	kube_client_set_retries(c->cl, c->o->retries, c->o->retry_base_ms);
	if (r == 200)
		obj = json_loadb(c->resp.buf, c->resp.len, 0, NULL);
	sb_reset(&c->resp);
	if (!obj) {
		/* as Reloader: an error reads as no annotations; a 404 (no such object) is quiet */
		if (r != 404)
			log_warn("SecretProviderClass %s/%s: %s: its match and ignore annotations "
				 "are not read",
				 d->ns, d->name,
				 r < 0	    ? err.msg
				 : r == 200 ? "not JSON (or over the size limit)"
					    : "unexpected answer");
		return;
	}
	ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
	m = json_string_value(json_object_get(ann, RELOAD_MATCH));
	ig = json_string_value(json_object_get(ann, RELOAD_IGNORE));
	*match = m && strcmp(m, "true") == 0;
	*ignore = ig && strcmp(ig, "true") == 0;
	json_decref(obj);
}

void reload_csi_fetch(struct ctl *c)
{
	int n = 0;

	while (c->in.spc_gets && n < RELOAD_SPC_GETS_PER_PASS) {
		struct deferred *d = c->in.spc_gets;
		struct cfg_ent *ce;
		int match = 0, ignore = 0, got = c->m.leader != 1; /* 1: standing by */

		c->in.spc_gets = d->next;
		if (got) { /* a standby writes nothing: the bits it read last do */
			spc_get(c, d, &match, &ignore);
			n++;
		}
		ce = (struct cfg_ent *)reload_tab_get(&c->cfg, CLS_SPC, d->ns, d->name);
		if (ce) { /* else its last status went meanwhile */
			if (got) {
				ce->match = (unsigned char)match;
				ce->ignore = (unsigned char)ignore;
			}
			RELOAD_IN_TELL(c, changed, c, ce);
		}
		free(d->ns);
		free(d->name);
		free(d);
	}
}

/* Does a status other than except in ns still name SecretProviderClass spc? */
static int spc_named(const struct ctl *c, const char *ns, const char *spc,
		     const struct spcps_ent *except)
{
	size_t i;
	const struct ent *e;

	for (i = 0; i < c->in.spcps.nb; i++)
		for (e = c->in.spcps.b[i]; e; e = e->next) {
			const struct spcps_ent *pe = (const struct spcps_ent *)e;

			if (pe != except && pe->spc && strcmp(pe->spc, spc) == 0 &&
			    strcmp(e->ns, ns) == 0)
				return 1;
		}
	return 0;
}

/*
 * Forget status pe; the SecretProviderClass entry it kept among the ConfigMaps and Secrets goes
 * with its last status (memory stays bounded by the statuses there are).
 */
static void spcps_del(struct ctl *c, struct spcps_ent *pe)
{
	struct ent *ce = NULL;

	if (pe->spc && *pe->spc && !spc_named(c, pe->e.ns, pe->spc, pe))
		ce = reload_tab_get(&c->cfg, CLS_SPC, pe->e.ns, pe->spc);
	if (ce) {
		reload_tab_del(&c->cfg, ce);
		reload_cfg_free((struct cfg_ent *)ce);
	}
	reload_tab_del(&c->in.spcps, &pe->e);
	free(pe->spc);
	free(pe->e.ns);
	free(pe->e.name);
	free(pe);
	METRIC_SET(c->m.objects[CLS_SPC], c->m.objects[CLS_SPC] - 1);
}

void reload_csi_keep(struct ctl *c, const char *ns, const char *name)
{
	struct spcps_ent *pe = (struct spcps_ent *)reload_tab_get(&c->in.spcps, CLS_SPC, ns, name);

	if (pe)
		pe->seen = 1;
}

void reload_csi_mark(struct ctl *c, const char *ns)
{
	size_t i;
	struct ent *e;

	for (i = 0; i < c->in.spcps.nb; i++)
		for (e = c->in.spcps.b[i]; e; e = e->next)
			if (!*ns || strcmp(e->ns, ns) == 0)
				((struct spcps_ent *)e)->seen = 0;
}

void reload_csi_sweep(struct ctl *c, const char *ns)
{
	size_t i;
	struct ent *e, *nx;

	for (i = 0; i < c->in.spcps.nb; i++)
		for (e = c->in.spcps.b[i]; e; e = nx) {
			nx = e->next;
			if ((!*ns || strcmp(e->ns, ns) == 0) && !((struct spcps_ent *)e)->seen)
				spcps_del(c, (struct spcps_ent *)e);
		}
}

void reload_csi_item(struct rs *s, const char *type, json_t *obj)
{
	struct ctl *c = s->c;
	json_t *meta = json_object_get(obj, "metadata");
	json_t *status = json_object_get(obj, "status");
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *spc = json_string_value(json_object_get(status, "secretProviderClassName"));
	struct spcps_ent *pe;
	char hex[RELOAD_HASH_HEX], *nspc;
	int r, changed, ev = !strcmp(type, "DELETED") ? 2 : !strcmp(type, "MODIFIED") ? 1 : 0;

	/* reloader_events_received_total: every item, initial LIST ones as adds (as informers) */
	METRIC_INC(c->m.events[2][ev]);
	if (!name || !ns || reload_ns_ignored(c, ns))
		return;
	pe = (struct spcps_ent *)reload_tab_get(&c->in.spcps, CLS_SPC, ns, name);
	if (strcmp(type, "DELETED") == 0) {
		if (pe)
			spcps_del(c, pe);
		return;
	}
	r = reload_spc_hash(status, hex);
	if (r < 0) {
		log_warn("SecretProviderClassPodStatus %s/%s: status not hashed (%s; at most %d "
			 "objects, %d bytes): skipped",
			 ns, name, r == -E2BIG ? "too large" : "out of memory",
			 RELOAD_SPC_OBJECTS_MAX, RELOAD_SPC_HASHED_MAX);
		return;
	}
	if (!pe) {
		pe = calloc(1, sizeof(*pe));
		if (!pe)
			return;
		pe->e.cls = CLS_SPC;
		pe->e.ns = strdup(ns);
		pe->e.name = strdup(name);
		if (!pe->e.ns || !pe->e.name || reload_tab_put(&c->in.spcps, &pe->e) < 0) {
			free(pe->e.ns);
			free(pe->e.name);
			free(pe);
			return;
		}
		METRIC_SET(c->m.objects[CLS_SPC], c->m.objects[CLS_SPC] + 1);
		changed = 0; /* a first sight (LIST, ADDED) is not a change, as in Reloader */
	} else {
		/* an update, or a re-list after a 410 that finds it changed */
		changed =
		    (strcmp(type, "MODIFIED") == 0 || s->relist) && strcmp(pe->hash, hex) != 0;
	}
	if (!changed && pe->hash[0] && strcmp(pe->hash, hex) == 0 && strcmp(type, "MODIFIED") == 0)
		METRIC_INC(c->m.skipped[SKIP_UNCHANGED]);
	pe->seen = 1;
	if (!spc)
		spc = "";
	if (!pe->spc || strcmp(pe->spc, spc) != 0) {
		nspc = strdup(spc);
		if (!nspc)
			return;
		free(pe->spc);
		pe->spc = nspc;
	}
	/* Reloader: an old status without objects hashes as "", so its next update is a change */
	if (json_is_array(json_object_get(status, "objects")))
		memcpy(pe->hash, hex, RELOAD_HASH_HEX);
	else
		pe->hash[0] = '\0';
	if (changed && *spc)
		spc_changed(c, ns, spc, hex);
}
