/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_decide.h: the decide stage (reload_decide.c, reload_collide.c): pure functions of the
 * tables. Includes only the base vocabulary (reload_internal.h). */
#ifndef NP_RELOAD_DECIDE_H
#define NP_RELOAD_DECIDE_H

#include "reload/reload_internal.h"

/* What one object's state means for one workload. */
enum reload_decision {
	RELOAD_DECIDE_ROLL,	    /* stale: roll it for the object */
	RELOAD_DECIDE_NONE,	    /* nothing to do, nothing to count */
	RELOAD_DECIDE_NOT_SELECTED, /* its namespace is not selected (--namespace-selector) */
	RELOAD_DECIDE_SKIP,	    /* its annotations say no: *why is reload_should's verdict */
	RELOAD_DECIDE_CURRENT,	    /* it records the object's hash already */
};

/* The object ce as reload_should sees it (strings borrowed from ce). */
void reload_decide_object(const struct cfg_ent *ce, struct reload_object *o);
/*
 * Decide for workload we and object ce. changed: ce's data changed (roll unless already
 * current); otherwise (start, re-list) roll only when we records a different hash. Reads the
 * tables only.
 */
enum reload_decision reload_decide(const struct ctl *c, const struct wl_ent *we,
				   const struct cfg_ent *ce, int changed, enum reload_verdict *why);
/* Whether the pending trigger t of a workload parsed as w still needs a rollout for its object. */
int reload_decide_still_stale(const struct ctl *c, const struct reload_workload *w,
			      const struct trig *t);
/* Do two parses of a workload carry different reload records (env vars, last-reloaded-from)? */
int reload_records_differ(const struct reload_workload *a, const struct reload_workload *b);
/*
 * The value the env-vars strategy records for ce in container of we: ce's hash,
 * or, when other objects we reloads on in that container give the same
 * STAKATER_* name, SHA-1 over "<name>=<hash>" of all of them sorted by name and
 * joined by ";" (in buf); past 64 of them, the 64 lowest names, whichever ce is.
 * *shared: how many objects share the name (1: none other). Borrowed: ce->hash
 * or buf.
 */
const char *reload_env_value(const struct ctl *c, const struct reload_workload *w,
			     const struct cfg_ent *ce, const char *container,
			     char buf[RELOAD_HASH_HEX], size_t *shared);

#endif
