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
 * reloader.stakater.com/match and ignore annotations with a GET at each rotation (an error reads
 * as none); we LIST and WATCH secretproviderclasses instead (class CLS_SPCS, flat items: only its
 * name and those two bits are kept), so a rotation needs no request and a slow apiserver stalls
 * nothing. A SecretProviderClass entry counts the statuses naming it, so forgetting a status
 * (a namespace deleted) is O(1), not a scan of every status.
 *
 * Either resource answering 403 (RBAC not granted) or 404 (CRD absent or removed) stops only the
 * CSI side: warned about once, listed again after a back-off, shown in
 * nodeprobe_reload_csi_available and /healthz; ConfigMaps, Secrets and workloads go on.
 */

/* A SecretProviderClassPodStatus: the SecretProviderClass it names and its hash. */
struct spcps_ent {
	struct ent e;		    /* cls CLS_SPC, namespace, the status object's name */
	char *spc;		    /* status.secretProviderClassName; owned */
	char hash[RELOAD_HASH_HEX]; /* Reloader's hash; "" while status.objects is absent */
	unsigned char seen;	    /* in the current (re-)LIST */
};

/* A SecretProviderClass (in the same table, cls CLS_SPCS): listed, or named by statuses. */
struct spc_ent {
	struct ent e;	      /* cls CLS_SPCS, namespace, name */
	unsigned long refs;   /* statuses naming it */
	unsigned char match;  /* reloader.stakater.com/match is "true" */
	unsigned char ignore; /* reloader.stakater.com/ignore is "true" */
	unsigned char listed; /* the API has it (LIST, WATCH) */
	unsigned char seen;   /* in the current (re-)LIST */
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
			if (e->cls == CLS_SPC)
				free(((struct spcps_ent *)e)->spc);
			free(e->ns);
			free(e->name);
			free(e);
		}
	free(c->in.spcps.b);
	memset(&c->in.spcps, 0, sizeof(c->in.spcps));
}

/* The SecretProviderClass entry ns/name; create: make it when absent (NULL: out of memory). */
static struct spc_ent *spc_get(struct ctl *c, const char *ns, const char *name, int create)
{
	struct spc_ent *se = (struct spc_ent *)reload_tab_get(&c->in.spcps, CLS_SPCS, ns, name);

	if (se || !create)
		return se;
	se = calloc(1, sizeof(*se));
	if (!se)
		return NULL;
	se->e.cls = CLS_SPCS;
	se->e.ns = strdup(ns);
	se->e.name = strdup(name);
	if (!se->e.ns || !se->e.name || reload_tab_put(&c->in.spcps, &se->e) < 0) {
		free(se->e.ns);
		free(se->e.name);
		free(se);
		return NULL;
	}
	return se;
}

/* Free se once nothing keeps it: not listed and no status naming it. */
static void spc_put(struct ctl *c, struct spc_ent *se)
{
	if (se->refs || se->listed)
		return;
	reload_tab_del(&c->in.spcps, &se->e);
	free(se->e.ns);
	free(se->e.name);
	free(se);
}

/*
 * One status less names SecretProviderClass spc in ns: with the last one, the entry it kept among
 * the ConfigMaps and Secrets (for the rollouts) goes too (memory stays bounded by the statuses
 * there are). O(1): the count, not a scan of the statuses.
 */
static void spc_unref(struct ctl *c, const char *ns, const char *spc, int keep)
{
	struct spc_ent *se;
	struct ent *ce;

	c->in.csi_steps++;
	se = spc_get(c, ns, spc, 0);
	if (!se || !se->refs)
		return;
	if (--se->refs)
		return;
	ce = reload_tab_get(&c->cfg, CLS_SPC, ns, spc);
	if (ce) {
		reload_tab_del(&c->cfg, ce);
		reload_cfg_free((struct cfg_ent *)ce);
	}
	if (!keep) /* keep: a sweep is walking the table (se may be its next entry) */
		spc_put(c, se);
}

/*
 * The SecretProviderClass spc in ns changed to hash: its entry among the ConfigMaps and Secrets
 * (cls CLS_SPC, kept for the rollouts that follow) takes the hash and the match and ignore bits
 * its watch read last (none when it is not listed: as Reloader reads a failed GET), and the
 * change is told.
 */
static void spc_changed(struct ctl *c, const char *ns, const char *spc, const char *hash)
{
	struct cfg_ent *ce = (struct cfg_ent *)reload_tab_get(&c->cfg, CLS_SPC, ns, spc);
	struct spc_ent *se = spc_get(c, ns, spc, 0);

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
	ce->match = se && se->listed ? se->match : 0;
	ce->ignore = se && se->listed ? se->ignore : 0;
	RELOAD_IN_TELL(c, changed, c, ce);
}

/* Forget status pe (O(1)); keep: leave an unneeded SecretProviderClass entry to the caller. */
static void spcps_del(struct ctl *c, struct spcps_ent *pe, int keep)
{
	if (pe->spc && *pe->spc)
		spc_unref(c, pe->e.ns, pe->spc, keep);
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
		for (e = c->in.spcps.b[i]; e; e = e->next, c->in.csi_steps++)
			if (e->cls == CLS_SPC && (!*ns || strcmp(e->ns, ns) == 0))
				((struct spcps_ent *)e)->seen = 0;
}

void reload_csi_sweep(struct ctl *c, const char *ns)
{
	size_t i;
	struct ent *e, *nx;

	for (i = 0; i < c->in.spcps.nb; i++)
		for (e = c->in.spcps.b[i]; e; e = nx, c->in.csi_steps++) {
			nx = e->next;
			if (e->cls == CLS_SPC && (!*ns || strcmp(e->ns, ns) == 0) &&
			    !((struct spcps_ent *)e)->seen)
				spcps_del(c, (struct spcps_ent *)e, 1);
		}
	/* then the SecretProviderClass entries nothing keeps any more */
	for (i = 0; i < c->in.spcps.nb; i++)
		for (e = c->in.spcps.b[i]; e; e = nx, c->in.csi_steps++) {
			nx = e->next;
			if (e->cls == CLS_SPCS)
				spc_put(c, (struct spc_ent *)e);
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
			spcps_del(c, pe, 0);
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
		struct spc_ent *se = *spc ? spc_get(c, ns, spc, 1) : NULL;

		nspc = strdup(spc);
		if (!nspc || (*spc && !se)) {
			free(nspc);
			if (se)
				spc_put(c, se);
			return;
		}
		if (se)
			se->refs++;
		if (pe->spc && *pe->spc)
			spc_unref(c, ns, pe->spc, 0);
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

/* ---- secretproviderclasses: LIST and WATCH (flat items: name, match, ignore; reload_sync.c's
 * scalar callback reads them into the rs) ---- */

/*
 * SecretProviderClass ns/name (may be the entry's own strings): deleted (gone from the API), or
 * seen with its two bits.
 */
static int spcs_apply(struct ctl *c, const char *type, const char *ns, const char *name, int match,
		      int ignore)
{
	int del = strcmp(type, "DELETED") == 0;
	struct spc_ent *se = spc_get(c, ns, name, !del);
	struct cfg_ent *ce = (struct cfg_ent *)reload_tab_get(&c->cfg, CLS_SPC, ns, name);

	if (!se && !del)
		return -ENOMEM;
	if (ce) { /* what a later reconcile reads: the bits as they are now */
		ce->match = (unsigned char)(del ? 0 : match);
		ce->ignore = (unsigned char)(del ? 0 : ignore);
	}
	if (!se)
		return 0;
	if (se->listed != !del)
		METRIC_SET(c->m.objects[CLS_SPCS], c->m.objects[CLS_SPCS] + (del ? -1 : 1));
	se->listed = (unsigned char)!del;
	se->seen = 1;
	se->match = (unsigned char)(del ? 0 : match);
	se->ignore = (unsigned char)(del ? 0 : ignore);
	if (del)
		spc_put(c, se); /* last: ns and name may be its own */
	return 0;
}

int reload_csi_spcs_item(void *p, const char *type, json_t *obj)
{
	struct rs *s = p;

	(void)obj;
	return spcs_apply(s->c, type, s->ns_.buf, s->name.buf, s->match, s->ignore);
}

/* Over the stream's limits: a DELETED still goes; else what was read of it before stays. */
int reload_csi_spcs_oversize(void *p, const char *type, const char *ns, const char *name,
			     const char *what)
{
	struct rs *s = p;
	struct spc_ent *se;

	s->events++;
	METRIC_INC(s->c->m.oversize[CLS_SPCS]);
	if (!*name || reload_ns_ignored(s->c, ns))
		return 0;
	if (strcmp(type, "DELETED") == 0)
		return spcs_apply(s->c, type, ns, name, 0, 0);
	log_warn("SecretProviderClass %s/%s: %s (the API server's object is over "
		 "nodeprobe-reload's limit): skipped; what was read of it before is kept",
		 ns, name, what);
	se = spc_get(s->c, ns, name, 0);
	if (se)
		se->seen = 1;
	return 0;
}

void reload_csi_spcs_mark(struct ctl *c, const char *ns)
{
	size_t i;
	struct ent *e;

	for (i = 0; i < c->in.spcps.nb; i++)
		for (e = c->in.spcps.b[i]; e; e = e->next, c->in.csi_steps++)
			if (e->cls == CLS_SPCS && (!*ns || strcmp(e->ns, ns) == 0))
				((struct spc_ent *)e)->seen = 0;
}

void reload_csi_spcs_sweep(struct ctl *c, const char *ns)
{
	size_t i;
	struct ent *e, *nx;

	for (i = 0; i < c->in.spcps.nb; i++)
		for (e = c->in.spcps.b[i]; e; e = nx, c->in.csi_steps++) {
			nx = e->next;
			if (e->cls == CLS_SPCS && (!*ns || strcmp(e->ns, ns) == 0) &&
			    ((struct spc_ent *)e)->listed && !((struct spc_ent *)e)->seen)
				spcs_apply(c, "DELETED", e->ns, e->name, 0, 0);
		}
}

/* ---- availability: 403 and 404 stop the CSI side only ----
 *
 * The state is kept per stream, that is per resource and, with --namespaces, per namespace (each
 * has its own LIST and WATCH, and RBAC may grant one namespace and not another). A failure
 * episode starts with the first 403 or 404 of a stream that was fine and ends only when its
 * WATCH answers 200 (kube_watch_open): a LIST that is granted while the WATCH is not (RBAC's
 * list and watch are separate verbs) neither ends it nor restarts the back-off, so the warning
 * is said once per episode and the back-off grows as documented. The metric and /healthz show
 * the worst state of the resource's streams.
 */

int reload_csi_cls(int cls)
{
	return cls == CLS_SPC || cls == CLS_SPCS;
}

/* What the missing resource takes away (for the one warning). */
static const char *loss(int cls)
{
	return cls == CLS_SPC ? "SecretProviderClass rotations are not reloaded"
			      : "SecretProviderClasses' reloader.stakater.com/match and ignore "
				"annotations read as unset (as Reloader reads a failed GET)";
}

/* The resource's state for the metric and /healthz: 403, else 404, else 0, else 1 (watched). */
static void csi_publish(struct ctl *c, int cls)
{
	size_t i;
	int st = 1;

	for (i = 0; i < c->in.nrs; i++) {
		int x = c->in.rs[i].csi_state;

		if (c->in.rs[i].cls != cls)
			continue;
		if (x == 403 || (x == 404 && st != 403) || (x == 0 && st == 1))
			st = x;
	}
	METRIC_SET(c->m.csi_state[cls - CLS_SPC], st);
}

static void csi_warn(const struct rs *s, int status, int watch)
{
	const struct kube_resource *res = reload_cls_res[s->cls];
	const char *in = *s->ns ? " in namespace " : "";

	if (status == 403)
		log_warn(
		    "%s %s%s%s: forbidden (HTTP 403 on %s): this service account may not list and "
		    "watch %s in API group %s (RBAC); %s until it may; ConfigMaps, Secrets and "
		    "workloads are reloaded as before; trying again with back-off (at most "
		    "every %d s)",
		    res->prefix + 6, res->plural, in, s->ns, watch ? "WATCH" : "LIST", res->plural,
		    "secrets-store.csi.x-k8s.io", loss(s->cls), RELOAD_CSI_RETRY_MAX_S);
	else if (s->cls == CLS_SPC)
		log_warn(
		    "%s %s are not served by this cluster (HTTP 404 on %s%s%s): %s objects are "
		    "not reloaded; checking again every %d s",
		    res->prefix + 6, res->plural, watch ? "WATCH" : "LIST", in, s->ns, res->kind,
		    ABSENT_RECHECK_S);
	else
		log_warn("%s %s are not served by this cluster (HTTP 404 on %s%s%s): %s; checking "
			 "again every %d s",
			 res->prefix + 6, res->plural, watch ? "WATCH" : "LIST", in, s->ns,
			 loss(s->cls), ABSENT_RECHECK_S);
}

/* Whether another stream of s's resource (another namespace) is in state st. */
static int csi_other(const struct ctl *c, const struct rs *s, int st)
{
	size_t i;

	for (i = 0; i < c->in.nrs; i++)
		if (&c->in.rs[i] != s && c->in.rs[i].cls == s->cls && c->in.rs[i].csi_state == st)
			return 1;
	return 0;
}

int reload_csi_status(struct rs *s, int status, int watch)
{
	struct ctl *c = s->c;
	int was = s->csi_state;

	if (status == 200) {
		/* listed (or watching): the episode, if any, goes on until the WATCH is open */
		if (was == 0) {
			s->csi_state = 1;
			csi_publish(c, s->cls);
		}
		s->absent = 0;
		return 0;
	}
	if (status != 403 && status != 404)
		return 0;
	/* a new episode, or its cause changed; a CRD absent is the cluster's: said once for all
	 * namespaces, a 403 per namespace (RBAC may grant one and not another) */
	if (was != status && !(status == 404 && csi_other(c, s, 404)))
		csi_warn(s, status, watch);
	if (was != 403 && was != 404)
		METRIC_INC(c->m.csi_lost[s->cls - CLS_SPC]);
	s->csi_state = status;
	csi_publish(c, s->cls);
	s->absent = 1;
	s->relist = 0; /* a 403 forgets nothing: a grant re-lists and compares */
	return 1;
}

void reload_csi_opened(struct rs *s)
{
	const struct kube_resource *res = reload_cls_res[s->cls];
	int was = s->csi_state;

	if (was == 403 || was == 404)
		log_info("%s %s%s%s are %s now: watching them", res->prefix + 6, res->plural,
			 *s->ns ? " in namespace " : "", s->ns, was == 403 ? "granted" : "served");
	s->csi_state = 1;
	s->csi_fails = 0;
	csi_publish(s->c, s->cls);
}

long long reload_csi_retry_ms(struct rs *s)
{
	int f = s->csi_fails;
	long long base, ms;

	if (s->csi_state != 403)
		return ABSENT_RECHECK_S * 1000LL;
	/* 5 s doubling to RELOAD_CSI_RETRY_MAX_S, jittered down to half (client-go's style) */
	base = f < 6 ? 5000LL << f : RELOAD_CSI_RETRY_MAX_S * 1000LL;
	if (base > RELOAD_CSI_RETRY_MAX_S * 1000LL)
		base = RELOAD_CSI_RETRY_MAX_S * 1000LL;
	if (s->csi_fails < RELOAD_CSI_RETRY_MAX_S) /* no wrap however long it lasts */
		s->csi_fails++;
	ms = base / 2 + random() % (base / 2 + 1);
	log_debug("%s%s%s: HTTP 403, retry %d of this episode in %lld ms",
		  reload_cls_res[s->cls]->plural, *s->ns ? " in namespace " : "", s->ns,
		  s->csi_fails, ms);
	return ms;
}
