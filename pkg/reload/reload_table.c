/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_table: the controller's tables: ConfigMaps and Secrets (identity, resourceVersion, hash)
 * and workloads (references, annotations). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

int reload_ns_ignored(const struct ctl *c, const char *ns)
{
	const char **p;

	for (p = c->o->ignore_ns; p && *p; p++)
		if (strcmp(*p, ns) == 0)
			return 1;
	return 0;
}

static void ent_free_strings(struct ent *e)
{
	free(e->ns);
	free(e->name);
}

void reload_cfg_free(struct cfg_ent *ce)
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

void reload_pend_remove(struct ctl *c, struct wl_ent *we)
{
	struct wl_ent **pp;

	for (pp = &c->act.pend; *pp; pp = &(*pp)->pnext) {
		if (*pp == we) {
			*pp = we->pnext;
			break;
		}
	}
	we->pending = 0;
	we->pnext = NULL;
	trig_clear(we);
}

void reload_wl_free(struct ctl *c, struct wl_ent *we)
{
	reload_byname_del(c, we);
	if (we->pending)
		reload_pend_remove(c, we);
	reload_refused_remove(c, we);
	if (we->resume_ms)
		c->gate.npause--;
	if (we->recreate) {
		json_decref(we->recreate);
		c->act.nrecreate--;
	}
	trig_clear(we);
	reload_workload_free(&we->w);
	ent_free_strings(&we->e);
	free(we);
}

void reload_refused_remove(struct ctl *c, struct wl_ent *we)
{
	struct wl_ent **p;

	if (!we->refused_q)
		return;
	for (p = &c->in.refused; *p && *p != we; p = &(*p)->rnext)
		;
	if (*p)
		*p = we->rnext;
	we->refused_q = 0;
	c->in.nrefused--;
}

/* ---- --reload-on-delete ---- */

void reload_tombstone(struct ctl *c, struct cfg_ent *ce)
{
	/*
	 * Reloader's delete handler (internal/pkg/handler/delete.go) runs the reload with the hash
	 * of "__RELOADER_EMPTY_DELETE_MARKER__": annotations records it in last-reloaded-from,
	 * env-vars removes the STAKATER_* variable instead.
	 */
	ce->deleted = 1;
	if (!ce->tomb_q) {
		ce->tomb_q = 1;
		ce->tnext = c->tombs;
		c->tombs = ce;
	}
	memcpy(ce->hash, RELOAD_DELETE_HASH, RELOAD_HASH_HEX);
	memset(ce->alt, 0, sizeof(ce->alt));
	METRIC_SET(c->m.objects[ce->e.cls], c->m.objects[ce->e.cls] - 1);
	RELOAD_IN_TELL(c, changed, c, ce);
}

void reload_tombs_sweep(struct ctl *c)
{
	struct cfg_ent *ce;

	/* the list, not the table: a namespace's deletion (a sweep after each when nothing is
	 * pending) stays linear however many objects other namespaces hold */
	if (!c->tombs || c->act.pend)
		return;
	while ((ce = c->tombs)) {
		c->tombs = ce->tnext;
		ce->tomb_q = 0;
		c->swept++;
		if (!ce->deleted)
			continue; /* created again since */
		reload_tab_del(&c->cfg, &ce->e);
		reload_cfg_free(ce);
	}
}
