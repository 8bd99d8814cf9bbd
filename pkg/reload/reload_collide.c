/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_collide: objects whose names map to one STAKATER_* env var in one container, and the one
 * value that var then holds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reload/reload_decide.h"
#include "reload/reload_internal.h"

#define COLLIDE_MAX 64 /* objects sharing one variable that are combined; more are left out */

/* One object sharing the variable. */
struct sharer {
	const char *name, *hash;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sharer *)a)->name, ((const struct sharer *)b)->name);
}

/* The sharers chosen: the COLLIDE_MAX lowest names of all, whichever object is asked about. */
struct sharers {
	struct sharer s[COLLIDE_MAX];
	size_t n;     /* kept in s */
	size_t total; /* all of them */
};

/* Add ce to k when it is a live object w reloads on in container, not there yet. */
static void add_sharer(const struct ctl *c, const struct reload_workload *w,
		       const struct cfg_ent *ce, const char *container, struct sharers *k)
{
	struct reload_object o = {reload_cls_type(ce->e.cls),
				  ce->e.ns,
				  ce->e.name,
				  ce->hash,
				  ce->alt,
				  ce->match,
				  ce->ignore};
	const char *cn;
	size_t i, top = 0;

	if (!ce->hash[0] || ce->deleted)
		return;
	for (i = 0; i < k->n; i++) {
		if (strcmp(k->s[i].name, ce->e.name) == 0)
			return;
		if (strcmp(k->s[i].name, k->s[top].name) > 0)
			top = i;
	}
	if (reload_should(w, &o, c->o->auto_all, &cn) != RELOAD_YES || !cn ||
	    strcmp(cn, container) != 0)
		return;
	k->total++;
	if (k->n < COLLIDE_MAX) {
		top = k->n++;
	} else if (strcmp(ce->e.name, k->s[top].name) > 0) {
		return; /* past the COLLIDE_MAX lowest names: left out */
	}
	k->s[top].name = ce->e.name;
	k->s[top].hash = ce->hash;
}

const char *reload_env_value(const struct ctl *c, const struct reload_workload *w,
			     const struct cfg_ent *ce, const char *container,
			     char buf[RELOAD_HASH_HEX], size_t *shared)
{
	enum reload_type t = reload_cls_type(ce->e.cls);
	struct sharers k = {.n = 0, .total = 0};
	struct reload_hasher h;
	size_t i;
	struct ent *e;

	*shared = 1;
	if (c->o->strategy != RELOAD_ENV_VARS || !container || ce->deleted || !ce->hash[0])
		return ce->hash;
	add_sharer(c, w, ce, container, &k);
	/* the objects the pod uses; with a reload list, any object of the type in the namespace */
	for (i = 0; i < w->nrefs; i++) {
		if (w->refs[i].type != t || !reload_env_same(w->refs[i].name, ce->e.name))
			continue;
		e = reload_tab_get(&c->cfg, ce->e.cls, w->ns, w->refs[i].name);
		if (e)
			add_sharer(c, w, (const struct cfg_ent *)e, container, &k);
	}
	if (w->relist[0][t] || w->relist[1][t])
		for (i = 0; i < c->cfg.nb; i++)
			for (e = c->cfg.b[i]; e; e = e->next)
				if (e->cls == ce->e.cls && strcmp(e->ns, w->ns) == 0 &&
				    reload_env_same(e->name, ce->e.name))
					add_sharer(c, w, (const struct cfg_ent *)e, container, &k);
	*shared = k.total;
	if (k.total < 2)
		return ce->hash;
	/*
	 * Reloader writes whichever object changed last (internal/pkg/handler/upgrade.go,
	 * updateContainerEnvVars), so each start with --sync-after-restart flips the value: here
	 * it is the hash of every sharer's "<name>=<hash>", sorted by name, joined by ";" (SHA-1,
	 * as Reloader hashes an object's entries): stable across runs, new when any of them
	 * changes. Past COLLIDE_MAX, the lowest names: the same set whichever object changed.
	 */
	qsort(k.s, k.n, sizeof(*k.s), by_name);
	if (reload_hasher_init(&h) < 0)
		return ce->hash;
	for (i = 0; i < k.n; i++)
		reload_hasher_add(&h, k.s[i].name, strlen(k.s[i].name), k.s[i].hash,
				  strlen(k.s[i].hash));
	if (reload_hasher_final(&h, buf, NULL) < 0)
		return ce->hash;
	return buf;
}
