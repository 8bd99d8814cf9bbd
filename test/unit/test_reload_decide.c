/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/reload's decide stage (reload_decide.c): which workloads a change makes
 * stale, from tables built in memory. No server, no I/O. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "reload/reload.h"
#include "reload/reload_decide.h"
#include "reload/reload_internal.h"

#define HASH_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HASH_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

struct fix {
	struct reload_opts o;
	struct ctl c;
};

static void fix_init(struct fix *f)
{
	memset(f, 0, sizeof(*f));
	reload_opts_init(&f->o);
	f->c.o = &f->o;
}

static void fix_free(struct fix *f)
{
	size_t i;
	struct ent *e, *nx;

	for (i = 0; i < f->c.cfg.nb; i++)
		for (e = f->c.cfg.b[i]; e; e = nx) {
			nx = e->next;
			reload_cfg_free((struct cfg_ent *)e);
		}
	for (i = 0; i < f->c.wl.nb; i++)
		for (e = f->c.wl.b[i]; e; e = nx) {
			nx = e->next;
			reload_wl_free(&f->c, (struct wl_ent *)e);
		}
	free(f->c.cfg.b);
	free(f->c.wl.b);
}

static struct cfg_ent *add_cm(struct fix *f, const char *ns, const char *name, const char *hash)
{
	struct cfg_ent *ce = calloc(1, sizeof(*ce));

	ce->e.cls = CLS_CM;
	ce->e.ns = strdup(ns);
	ce->e.name = strdup(name);
	memcpy(ce->hash, hash, RELOAD_HASH_HEX);
	reload_tab_put(&f->c.cfg, &ce->e);
	return ce;
}

/*
 * A Deployment in ns "ns" whose container "app" uses ConfigMap "cfg" by envFrom; anns: its pod
 * template's annotations (JSON members), env: its container's env (JSON array members).
 */
static struct wl_ent *add_dep(struct fix *f, const char *name, const char *anns, const char *env)
{
	char buf[2048];
	struct wl_ent *we = calloc(1, sizeof(*we));
	json_t *j;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"annotations\":{%s}},"
		 "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\","
		 "\"envFrom\":[{\"configMapRef\":{\"name\":\"cfg\"}}],\"env\":[%s]}]}}}}",
		 name, anns, env);
	j = json_loads(buf, 0, NULL);
	if (!j || reload_workload_parse(&we->w, RELOAD_DEPLOYMENT, j, 0, NULL) < 0) {
		fprintf(stderr, "bad test workload: %s\n", buf);
		abort();
	}
	json_decref(j);
	we->e.cls = CLS_DEP;
	we->e.ns = strdup("ns");
	we->e.name = strdup(name);
	reload_tab_put(&f->c.wl, &we->e);
	return we;
}

#define AUTO "\"reloader.stakater.com/auto\":\"true\""

/* A change rolls an annotated workload that records nothing; a start (no change) does not. */
TEST(change_selects_stale_workloads)
{
	struct fix f;
	struct cfg_ent *ce;
	struct wl_ent *we;
	enum reload_verdict why = RELOAD_YES;

	fix_init(&f);
	ce = add_cm(&f, "ns", "cfg", HASH_A);
	we = add_dep(&f, "web", AUTO, "");
	CHECK_INT(reload_decide(&f.c, we, ce, 1, &why), RELOAD_DECIDE_ROLL);
	CHECK_INT(reload_decide(&f.c, we, ce, 0, &why), RELOAD_DECIDE_NONE);
	fix_free(&f);
}

/* The env-vars record of the object's current hash: current; of an older one: stale. */
TEST(recorded_hash_current_or_stale)
{
	struct fix f;
	struct cfg_ent *ce;
	struct wl_ent *cur, *old;
	enum reload_verdict why = RELOAD_YES;

	fix_init(&f);
	ce = add_cm(&f, "ns", "cfg", HASH_A);
	cur = add_dep(&f, "cur", AUTO,
		      "{\"name\":\"STAKATER_CFG_CONFIGMAP\",\"value\":\"" HASH_A "\"}");
	old = add_dep(&f, "old", AUTO,
		      "{\"name\":\"STAKATER_CFG_CONFIGMAP\",\"value\":\"" HASH_B "\"}");
	CHECK_INT(reload_decide(&f.c, cur, ce, 1, &why), RELOAD_DECIDE_CURRENT);
	CHECK_INT(reload_decide(&f.c, cur, ce, 0, &why), RELOAD_DECIDE_CURRENT);
	/* restart safety: a record of another hash rolls without a change seen */
	CHECK_INT(reload_decide(&f.c, old, ce, 0, &why), RELOAD_DECIDE_ROLL);
	fix_free(&f);
}

/* No annotation: skipped, and why is reload_should's verdict (counted by act). */
TEST(unannotated_skipped_with_verdict)
{
	struct fix f;
	struct cfg_ent *ce;
	struct wl_ent *we;
	enum reload_verdict why = RELOAD_YES;

	fix_init(&f);
	ce = add_cm(&f, "ns", "cfg", HASH_A);
	we = add_dep(&f, "plain", "", "");
	CHECK_INT(reload_decide(&f.c, we, ce, 1, &why), RELOAD_DECIDE_SKIP);
	CHECK(why != RELOAD_YES);
	fix_free(&f);
}

/* --reload-on-delete with env-vars: a tombstone with no variable recorded has nothing to remove. */
TEST(deleted_without_env_record_skipped)
{
	struct fix f;
	struct cfg_ent *ce;
	struct wl_ent *we;
	enum reload_verdict why = RELOAD_YES;

	fix_init(&f);
	ce = add_cm(&f, "ns", "cfg", RELOAD_DELETE_HASH);
	ce->deleted = 1;
	we = add_dep(&f, "web", AUTO, "");
	CHECK_INT(reload_decide(&f.c, we, ce, 1, &why), RELOAD_DECIDE_NONE);
	fix_free(&f);
}

/* A pending trigger is still stale until the workload records the object's current hash. */
TEST(still_stale_after_leader_rolled)
{
	struct fix f;
	struct wl_ent *before, *after;
	struct trig t = {RELOAD_CONFIGMAP, (char *)"cfg"};

	fix_init(&f);
	add_cm(&f, "ns", "cfg", HASH_A);
	before = add_dep(&f, "before", AUTO,
			 "{\"name\":\"STAKATER_CFG_CONFIGMAP\",\"value\":\"" HASH_B "\"}");
	after = add_dep(&f, "after", AUTO,
			"{\"name\":\"STAKATER_CFG_CONFIGMAP\",\"value\":\"" HASH_A "\"}");
	CHECK_INT(reload_records_differ(&before->w, &after->w), 1);
	CHECK_INT(reload_records_differ(&after->w, &after->w), 0);
	CHECK_INT(reload_decide_still_stale(&f.c, &before->w, &t), 1);
	CHECK_INT(reload_decide_still_stale(&f.c, &after->w, &t), 0);
	fix_free(&f);
}
