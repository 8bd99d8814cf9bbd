/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/reload's Secrets Store CSI integration (reload_csi.c): Reloader's hash of a
 * SecretProviderClassPodStatus, the CSI volume as a use, the SecretProviderClass annotations. */
#include <errno.h>

#include "harness.h"
#include "reload/reload.h"
#include "reload/reload_csi.h"
#include "reload/reload_internal.h"

/*
 * Expected values: SHA-1 of the string Reloader v1.4.21 builds
 * (internal/pkg/util/util.go GetSHAfromSecretProviderClassPodStatus), computed outside our
 * code with python3 hashlib.sha1 over the joined string shown beside each.
 */
static const struct {
	const char *status, *joined, *sha1;
} hashes[] = {
    {"{\"secretProviderClassName\":\"vault-db\"}", "SecretProviderClassName=vault-db",
     "1614effc0230aca4ac64801f4d1ec246d8b42938"},
    {"{\"secretProviderClassName\":\"vault-db\",\"objects\":[{\"id\":\"secret/db-pass\","
     "\"version\":\"2\"},{\"id\":\"secret/api-key\",\"version\":\"7\"}]}",
     "SecretProviderClassName=vault-db;secret/api-key=7;secret/db-pass=2",
     "b0d3931f3f8e7255a3de33c60df8a471e84c7415"},
    /* sorted as whole "id=version" strings: '-' < '=' puts "a-b=1" before "a=1" */
    {"{\"secretProviderClassName\":\"x\",\"objects\":[{\"id\":\"a\",\"version\":\"1\"},"
     "{\"id\":\"a-b\",\"version\":\"1\"}]}",
     "SecretProviderClassName=x;a-b=1;a=1", "d425cd7d26962df1b3f180db0b1112ac04d99268"},
    /* bytewise: upper case before lower case */
    {"{\"secretProviderClassName\":\"spc\",\"objects\":[{\"id\":\"b\",\"version\":\"2\"},"
     "{\"id\":\"Z\",\"version\":\"1\"}]}",
     "SecretProviderClassName=spc;Z=1;b=2", "2a991ffd97da0474ee08b37532dc827d491e549f"},
    {"{\"objects\":[{\"id\":\"k\",\"version\":\"v\"}]}", "SecretProviderClassName=;k=v",
     "a40fa1c0e3857b6c7c693ba72e649bab4354e2d3"},
    {"{\"secretProviderClassName\":\"s\",\"objects\":[{\"id\":\"k\",\"version\":\"2\"},"
     "{\"id\":\"k\",\"version\":\"1\"}]}",
     "SecretProviderClassName=s;k=1;k=2", "7297cb4268cc5ca7c6a57dcfe5ab669dd8f3b7b2"},
};

TEST(spc_hash_matches_reloader)
{
	size_t i;

	for (i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++) {
		json_t *st = json_loads(hashes[i].status, 0, NULL);
		char hex[RELOAD_HASH_HEX] = "";

		CHECK(st != NULL);
		CHECK_INT(reload_spc_hash(st, hex), 0);
		CHECK_STR(hex, hashes[i].sha1);
		json_decref(st);
	}
}

TEST(spc_hash_bounds)
{
	json_t *st = json_pack("{s:s, s:[]}", "secretProviderClassName", "s", "objects");
	json_t *objs = json_object_get(st, "objects");
	char hex[RELOAD_HASH_HEX];
	int i;

	for (i = 0; i <= RELOAD_SPC_OBJECTS_MAX; i++)
		json_array_append_new(objs, json_pack("{s:s, s:s}", "id", "k", "version", "1"));
	CHECK_INT(reload_spc_hash(st, hex), -E2BIG);
	json_array_remove(objs, 0);
	CHECK_INT(reload_spc_hash(st, hex), 0);
	json_decref(st);
	/* no status: "SecretProviderClassName=" alone (python3 hashlib.sha1) */
	CHECK_INT(reload_spc_hash(NULL, hex), 0);
	CHECK_STR(hex, "d0dfc411e571d49cef7ec914adf98877a31caa8d");
}

/* A CSI volume's secretProviderClass is a use; the SPC annotations select and exclude. */
TEST(spc_use_and_annotations)
{
	struct reload_workload w;
	struct log_err err = {0};
	json_t *j = json_loads(
	    "{\"metadata\":{\"name\":\"web\",\"namespace\":\"ns\",\"annotations\":{"
	    "\"secretproviderclass.reloader.stakater.com/auto\":\"true\"}},\"spec\":{\"template\":{"
	    "\"spec\":{\"containers\":[{\"name\":\"app\",\"volumeMounts\":[{\"name\":\"s\","
	    "\"mountPath\":\"/s\"}]}],\"volumes\":[{\"name\":\"s\",\"csi\":{\"driver\":"
	    "\"secrets-store.csi.k8s.io\",\"volumeAttributes\":{\"secretProviderClass\":"
	    "\"vault-db\"}}}]}}}}",
	    0, NULL);
	struct reload_object o = {RELOAD_SPC, "ns", "vault-db", "h", NULL, 0, 0};
	struct reload_object other = {RELOAD_SPC, "ns", "other", "h", NULL, 0, 0};
	struct reload_object cm = {RELOAD_CONFIGMAP, "ns", "vault-db", "h", NULL, 0, 0};
	struct strbuf sb = STRBUF_INIT(256);
	const char *ct = NULL;

	CHECK_INT(reload_workload_parse(&w, RELOAD_DEPLOYMENT, j, 0, &err), 0);
	CHECK_INT((int)reload_should(&w, &o, 0, &ct), RELOAD_YES);
	CHECK_STR(ct, "app");
	CHECK_INT((int)reload_should(&w, &other, 0, &ct), RELOAD_NO_NOT_USED);
	/* the typed auto of another type does not select a ConfigMap of the same name */
	CHECK_INT((int)reload_should(&w, &cm, 0, &ct), RELOAD_NO_NOT_SELECTED);
	reload_workload_free(&w);
	json_object_set_new(json_object_get(json_object_get(j, "metadata"), "annotations"),
			    "secretproviderclasses.exclude.reloader.stakater.com/reload",
			    json_string("a, vault-db"));
	CHECK_INT(reload_workload_parse(&w, RELOAD_DEPLOYMENT, j, 0, &err), 0);
	CHECK_INT((int)reload_should(&w, &o, 0, &ct), RELOAD_NO_EXCLUDED);
	reload_workload_free(&w);
	CHECK_INT(reload_env_name(&sb, "vault-db", RELOAD_SPC), 0);
	CHECK_STR(sb.buf, "STAKATER_VAULT_DB_SECRETPROVIDERCLASS");
	sb_free(&sb);
	json_decref(j);
}

/* --enable-csi-integration lists and watches the statuses; off by default as in Reloader. */
TEST(spc_class_enabled)
{
	struct reload_opts o;

	reload_opts_init(&o);
	CHECK(!reload_cls_enabled(&o, CLS_SPC));
	o.csi = 1;
	CHECK(reload_cls_enabled(&o, CLS_SPC));
	CHECK_INT(reload_type_cls(RELOAD_SPC), CLS_SPC);
	CHECK_INT((int)reload_cls_type(CLS_SPC), RELOAD_SPC);
}

/* A status of SecretProviderClass spc in ns, its object id k at version v, as a LIST item. */
static void status_item(struct rs *s, const char *type, const char *ns, const char *name,
			const char *spc, const char *v)
{
	json_t *o = json_pack("{s:{s:s,s:s},s:{s:s,s:[{s:s,s:s}]}}", "metadata", "name", name,
			      "namespace", ns, "status", "secretProviderClassName", spc, "objects",
			      "id", "k", "version", v);

	REQUIRE(o != NULL);
	reload_csi_item(s, type, o);
	json_decref(o);
}

/*
 * A namespace deleted: each of its statuses' DELETED is O(1) (the SecretProviderClass entry
 * counts the statuses naming it), not a scan of every status: N deletes, at most N steps. Before,
 * each delete looked through every status for another naming the same class: N^2/2 steps.
 */
TEST(spc_namespace_delete_is_linear)
{
	enum { N = 3000 };
	struct reload_opts o;
	struct ctl c;
	struct rs s;
	char name[32];
	unsigned long steps;
	int i;

	reload_opts_init(&o);
	memset(&c, 0, sizeof(c));
	memset(&s, 0, sizeof(s));
	c.o = &o;
	s.c = &c;
	s.cls = CLS_SPC;
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "p%d-gone-vault", i);
		status_item(&s, "LIST", "gone", name, "vault", "1");
		snprintf(name, sizeof(name), "p%d-stays-vault", i);
		status_item(&s, "LIST", "stays", name, "vault", "1");
	}
	/* a rotation in each: the classes' entries among the ConfigMaps and Secrets exist */
	status_item(&s, "MODIFIED", "gone", "p0-gone-vault", "vault", "2");
	status_item(&s, "MODIFIED", "stays", "p0-stays-vault", "vault", "2");
	CHECK(reload_tab_get(&c.cfg, CLS_SPC, "gone", "vault") != NULL);
	CHECK_INT((int)c.m.objects[CLS_SPC], 2 * N);
	steps = c.in.csi_steps;
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "p%d-gone-vault", i);
		status_item(&s, "DELETED", "gone", name, "vault", "2");
		/* the class's entry stays while a status names it, and goes with the last */
		if (i == N - 2)
			CHECK(reload_tab_get(&c.cfg, CLS_SPC, "gone", "vault") != NULL);
	}
	CHECK(c.in.csi_steps - steps <= N);
	CHECK(reload_tab_get(&c.cfg, CLS_SPC, "gone", "vault") == NULL);
	CHECK(reload_tab_get(&c.cfg, CLS_SPC, "stays", "vault") != NULL);
	CHECK_INT((int)c.m.objects[CLS_SPC], N);
	reload_csi_free(&c);
	{
		size_t b;
		struct ent *e, *nx;

		for (b = 0; b < c.cfg.nb; b++)
			for (e = c.cfg.b[b]; e; e = nx) {
				nx = e->next;
				reload_cfg_free((struct cfg_ent *)e);
			}
		free(c.cfg.b);
	}
}

/*
 * A re-list that finds none of the statuses sweeps them all, and with them every
 * SecretProviderClass entry only they kept (the same table: a sweep must not free the entry it
 * walks to next; ASan checks it under make check); a listed SecretProviderClass stays.
 */
TEST(spc_sweep_frees_statuses_and_their_classes)
{
	struct reload_opts o;
	struct ctl c;
	struct rs s, cs;
	char name[32], spc[32];
	int i;

	reload_opts_init(&o);
	memset(&c, 0, sizeof(c));
	memset(&s, 0, sizeof(s));
	memset(&cs, 0, sizeof(cs));
	c.o = &o;
	s.c = cs.c = &c;
	s.cls = CLS_SPC;
	cs.cls = CLS_SPCS;
	sb_init(&cs.name, NAME_MAX_);
	sb_init(&cs.ns_, NAME_MAX_);
	/* SecretProviderClass a/s7 listed, with its match annotation (as the scalars read it) */
	sb_add(&cs.name, "s7");
	sb_add(&cs.ns_, "a");
	cs.match = 1;
	CHECK_INT(reload_csi_spcs_item(&cs, "LIST", NULL), 0);
	CHECK_INT((int)c.m.objects[CLS_SPCS], 1);
	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		snprintf(spc, sizeof(spc), "s%d", i % 50);
		status_item(&s, "LIST", "a", name, spc, "1");
	}
	status_item(&s, "MODIFIED", "a", "p7", "s7", "2"); /* a rotation: s7's bits are read */
	{
		struct cfg_ent *ce = (struct cfg_ent *)reload_tab_get(&c.cfg, CLS_SPC, "a", "s7");

		REQUIRE(ce != NULL);
		CHECK_INT(ce->match, 1);
		CHECK_INT(ce->ignore, 0);
	}
	reload_csi_mark(&c, "");
	reload_csi_sweep(&c, "");
	CHECK_INT((int)c.m.objects[CLS_SPC], 0);
	CHECK_INT((int)c.in.spcps.n, 1); /* the listed class alone */
	CHECK(reload_tab_get(&c.cfg, CLS_SPC, "a", "s7") == NULL);
	/* and a re-list of the classes that finds none forgets it */
	reload_csi_spcs_mark(&c, "");
	reload_csi_spcs_sweep(&c, "");
	CHECK_INT((int)c.in.spcps.n, 0);
	CHECK_INT((int)c.m.objects[CLS_SPCS], 0);
	reload_csi_free(&c);
	free(c.cfg.b);
	sb_free(&cs.name);
	sb_free(&cs.ns_);
}

/*
 * The failure state is per stream (resource and namespace): another namespace's success leaves
 * it alone, and a LIST granted while the WATCH is refused neither ends the episode (one loss
 * counted, so one warning) nor restarts the back-off; only an open WATCH does. The metric shows
 * the worst stream.
 */
TEST(csi_failure_episode_per_stream)
{
	struct reload_opts o;
	struct ctl c;
	struct rs s[2];
	long long ms;
	int i;

	reload_opts_init(&o);
	memset(&c, 0, sizeof(c));
	memset(s, 0, sizeof(s));
	c.o = &o;
	c.in.rs = s;
	c.in.nrs = 2;
	for (i = 0; i < 2; i++) {
		s[i].c = &c;
		s[i].cls = CLS_SPC;
		s[i].ns = i ? "other" : "apps";
	}
	CHECK_INT(reload_csi_status(&s[0], 403, 0), 1); /* apps: LIST forbidden */
	CHECK_INT(s[0].absent, 1);
	CHECK_INT((int)c.m.csi_lost[0], 1);
	ms = reload_csi_retry_ms(&s[0]);
	CHECK(ms >= 2500 && ms <= 5000);
	CHECK_INT(reload_csi_status(&s[1], 200, 0), 0); /* other: fine */
	CHECK_INT(c.m.csi_state[0], 403);
	CHECK_INT(s[0].csi_fails, 1);
	/* apps: LIST granted, WATCH forbidden, twice: the same episode, the back-off grows */
	for (i = 0; i < 2; i++) {
		CHECK_INT(reload_csi_status(&s[0], 200, 0), 0);
		CHECK_INT(s[0].absent, 0);
		CHECK_INT(c.m.csi_state[0], 403);
		CHECK_INT(reload_csi_status(&s[0], 403, 1), 1);
		ms = reload_csi_retry_ms(&s[0]);
		CHECK(ms >= 5000LL << i && ms <= 10000LL << i);
	}
	CHECK_INT((int)c.m.csi_lost[0], 1);
	CHECK_INT(s[0].csi_fails, 3);
	/* other's watch opens, then apps's: the episode ends */
	reload_csi_opened(&s[1]);
	CHECK_INT(c.m.csi_state[0], 403);
	reload_csi_opened(&s[0]);
	CHECK_INT(c.m.csi_state[0], 1);
	CHECK_INT(s[0].csi_fails, 0);
	/* revoked later in other: a new episode there */
	CHECK_INT(reload_csi_status(&s[1], 403, 1), 1);
	CHECK_INT((int)c.m.csi_lost[0], 2);
	CHECK_INT(c.m.csi_state[0], 403);
	CHECK_INT(s[0].csi_state, 1);
}
