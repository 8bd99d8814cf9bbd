/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_decide: which workloads a change makes stale, from the tables alone: pure functions, no
 * I/O, no metrics, nothing written (act, reload_rollout.c, schedules and counts what they say).
 * The env var value objects sharing a name hold is reload_collide.c's, the same stage. */
#include <string.h>

#include "reload/reload_decide.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

void reload_decide_object(const struct cfg_ent *ce, struct reload_object *o)
{
	memset(o, 0, sizeof(*o));
	o->type = reload_cls_type(ce->e.cls);
	o->ns = ce->e.ns;
	o->name = ce->e.name;
	o->hash = ce->hash;
	o->alt = ce->alt;
	o->match = ce->match;
	o->ignore = ce->ignore;
}

enum reload_decision reload_decide(const struct ctl *c, const struct wl_ent *we,
				   const struct cfg_ent *ce, int changed, enum reload_verdict *why)
{
	struct reload_object o;
	const char *container, *rec, *want;
	char buf[RELOAD_HASH_HEX];
	size_t shared;
	enum reload_verdict v;

	if (!reload_nsel_selected(c, we->e.ns))
		return RELOAD_DECIDE_NOT_SELECTED;
	reload_decide_object(ce, &o);
	v = reload_should(&we->w, &o, c->o->auto_all, &container);
	if (v != RELOAD_YES) {
		*why = v;
		return RELOAD_DECIDE_SKIP;
	}
	rec = reload_records(we) ? reload_recorded(&we->w, &o, container, c->o->strategy) : NULL;
	if (ce->deleted && c->o->strategy == RELOAD_ENV_VARS && !rec)
		return RELOAD_DECIDE_NONE; /* --reload-on-delete: no variable to remove */
	if (!changed && !rec)
		return RELOAD_DECIDE_NONE; /* no record: nothing says it changed while we were away
					    */
	want = rec ? reload_env_value(c, &we->w, ce, container, buf, &shared) : ce->hash;
	if (reload_hash_current(rec, want, want == ce->hash ? ce->alt : NULL))
		return RELOAD_DECIDE_CURRENT;
	return RELOAD_DECIDE_ROLL;
}

int reload_decide_still_stale(const struct ctl *c, const struct reload_workload *w,
			      const struct trig *t)
{
	const struct cfg_ent *ce = (const struct cfg_ent *)reload_tab_get(
	    &c->cfg, reload_type_cls(t->type), w->ns, t->name);
	struct reload_object o;
	const char *container, *rec, *want;
	char buf[RELOAD_HASH_HEX];
	size_t shared;

	if (!ce || !ce->hash[0])
		return 0;
	memset(&o, 0, sizeof(o));
	o.type = t->type;
	o.ns = ce->e.ns;
	o.name = ce->e.name;
	o.hash = ce->hash;
	o.alt = ce->alt;
	o.match = ce->match;
	o.ignore = ce->ignore;
	if (reload_should(w, &o, c->o->auto_all, &container) != RELOAD_YES)
		return 0;
	rec = reload_recorded(w, &o, container, c->o->strategy);
	want = reload_env_value(c, w, ce, container, buf, &shared); /* objects sharing its var */
	return !reload_hash_current(rec, want, want == ce->hash ? ce->alt : NULL);
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int reload_records_differ(const struct reload_workload *a, const struct reload_workload *b)
{
	size_t i;

	if (a->nenv != b->nenv || !same(a->lr_hash, b->lr_hash) || !same(a->lr_name, b->lr_name) ||
	    !same(a->lr_type, b->lr_type))
		return 1;
	for (i = 0; i < a->nenv; i++)
		if (!same(a->env[i].container, b->env[i].container) ||
		    !same(a->env[i].name, b->env[i].name) ||
		    !same(a->env[i].value, b->env[i].value))
			return 1;
	return 0;
}
