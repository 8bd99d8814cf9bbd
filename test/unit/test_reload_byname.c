/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/reload's name index (reload_byname.c): a change is weighed against the
 * workloads that name it, and a namespace's deletion is linear. No server, no I/O. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "reload/reload.h"
#include "reload/reload_act.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

#define HASH_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct reload_in_hooks hooks = {.changed = reload_config_changed};

/* Deployment name in ns gone: metadata annotations anns (JSON members), envFrom ConfigMap cm. */
static void dep(struct ctl *c, const char *name, const char *anns, const char *cm)
{
	char buf[1024];
	json_t *j;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"gone\",\"annotations\":{%s}},"
		 "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\","
		 "\"envFrom\":[{\"configMapRef\":{\"name\":\"%s\"}}]}]}}}}",
		 name, anns, cm);
	j = json_loads(buf, 0, NULL);
	if (!j)
		abort();
	reload_apply_workload(c, CLS_DEP, "ADDED", j);
	json_decref(j);
}

static struct cfg_ent *cm_in(struct ctl *c, const char *ns, const char *name)
{
	struct cfg_ent *ce = calloc(1, sizeof(*ce));

	if (!ce)
		abort();
	ce->e.cls = CLS_CM;
	ce->e.ns = strdup(ns);
	ce->e.name = strdup(name);
	ce->rv = strdup("1");
	memcpy(ce->hash, HASH_A, RELOAD_HASH_HEX);
	reload_tab_put(&c->cfg, &ce->e);
	return ce;
}

static struct cfg_ent *cm(struct ctl *c, const char *name)
{
	return cm_in(c, "gone", name);
}

static void ctl_free(struct ctl *c)
{
	size_t i;
	struct ent *e, *nx;

	for (i = 0; i < c->cfg.nb; i++)
		for (e = c->cfg.b[i]; e; e = nx) {
			nx = e->next;
			reload_cfg_free((struct cfg_ent *)e);
		}
	for (i = 0; i < c->wl.nb; i++)
		for (e = c->wl.b[i]; e; e = nx) {
			nx = e->next;
			reload_wl_free(c, (struct wl_ent *)e);
		}
	free(c->cfg.b);
	free(c->wl.b);
	reload_byname_free(c);
}

#define AUTO "\"reloader.stakater.com/auto\":\"true\""

/*
 * Namespace gone is deleted with --reload-on-delete: N ConfigMaps, M auto workloads each using
 * its own, one whose reload list is a regex, one excluding c3. Before, each deletion weighed
 * every workload of the namespace: N x (M + 2) = 160,800 here. Now at most 3 per deletion (the
 * user, the regex one, the excluding one); and the tombstones' sweep after each deletion (the
 * run loop's, nothing pending) visits the tombstones, not the 2000 ConfigMaps of another
 * namespace (before: N x 2400 entries). The skipped counters count what Reloader's loop over
 * every workload would (computed by hand below), though most workloads are not weighed.
 */
TEST(namespace_deletion_is_linear)
{
	enum { N = 400, M = 400 };
	struct reload_opts o;
	struct ctl c;
	struct cfg_ent *ce[N];
	char name[32], use[32];
	int i;

	reload_opts_init(&o);
	o.reload_on_delete = 1;
	memset(&c, 0, sizeof(c));
	c.o = &o;
	c.in.on = &hooks;
	for (i = 0; i < M; i++) {
		snprintf(name, sizeof(name), "a%d", i);
		snprintf(use, sizeof(use), "c%d", i);
		dep(&c, name, AUTO, use);
	}
	dep(&c, "wild", "\"configmap.reloader.stakater.com/reload\":\"c1.*\"", "x");
	dep(&c, "excl", AUTO ",\"configmaps.exclude.reloader.stakater.com/reload\":\"c3\"", "c0");
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		ce[i] = cm(&c, name);
	}
	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "k%d", i);
		cm_in(&c, "kept", name);
	}
	for (i = 0; i < N; i++) {
		reload_tombstone(&c, ce[i]);
		CHECK(c.act.pend == NULL);
		reload_tombs_sweep(&c);
	}
	CHECK(c.act.considered <= 3 * N);
	CHECK(c.bn.steps <= 3 * N);
	CHECK(c.swept <= N);
	CHECK_INT((int)c.cfg.n, 2000);
	/*
	 * Reloader's loop: for ConfigMap ci the M + 1 auto workloads but its users (ai when i < M,
	 * excl for c0) and excl for c3 (excluded) say "not used": N (M + 1) - M - 1 - 1.
	 */
	CHECK_INT((long)c.m.skipped[SKIP_NOT_USED], (long)N * (M + 1) - M - 2);
	CHECK_INT((long)c.m.skipped[SKIP_EXCLUDED], 1);
	CHECK_INT((long)c.m.skipped[SKIP_IGNORED], 0);
	ctl_free(&c);
}

/* A workload changed to use another ConfigMap is filed under the new name only; deleted, under
 * none; an ignored object counts every workload not weighed as ignored. */
TEST(refiled_on_change_and_delete)
{
	struct reload_opts o;
	struct ctl c;
	struct cfg_ent *old, *nw;
	struct reload_byname_rest rest;
	json_t *j;

	reload_opts_init(&o);
	memset(&c, 0, sizeof(c));
	c.o = &o;
	c.in.on = &hooks;
	dep(&c, "web", AUTO, "old");
	dep(&c, "other", AUTO, "zzz");
	old = cm(&c, "old");
	nw = cm(&c, "new");
	CHECK_INT((int)reload_byname_query(&c, old, &rest), 1);
	CHECK_INT((int)rest.all, 1);
	dep(&c, "web", AUTO, "new");
	CHECK_INT((int)reload_byname_query(&c, old, &rest), 0);
	CHECK_INT((int)rest.all, 2);
	CHECK_INT((int)rest.unused, 2);
	CHECK_INT((int)reload_byname_query(&c, nw, &rest), 1);
	nw->ignore = 1;
	reload_config_changed(&c, nw);
	CHECK_INT((int)c.m.skipped[SKIP_IGNORED], 2);
	j = json_loads("{\"metadata\":{\"name\":\"web\",\"namespace\":\"gone\"}}", 0, NULL);
	reload_apply_workload(&c, CLS_DEP, "DELETED", j);
	json_decref(j);
	CHECK_INT((int)reload_byname_query(&c, nw, &rest), 0);
	CHECK_INT((int)rest.all, 1);
	j = json_loads("{\"metadata\":{\"name\":\"other\",\"namespace\":\"gone\"}}", 0, NULL);
	reload_apply_workload(&c, CLS_DEP, "DELETED", j);
	json_decref(j);
	CHECK_INT((int)c.bn.keys.n, 0); /* nothing filed, nothing kept */
	ctl_free(&c);
}
