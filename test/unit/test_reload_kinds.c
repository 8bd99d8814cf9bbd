/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/reload's kinds beyond apps/v1: pod templates per kind, template changes,
 * the --reload-on-delete JSON patch, annotation-name overrides, pause and rollout annotations. */
#include <errno.h>

#include "harness.h"
#include "reload/reload.h"
#include "reload/reload_internal.h"

static json_t *J(const char *s)
{
	json_error_t e;
	json_t *j = json_loads(s, 0, &e);

	if (!j)
		fprintf(stderr, "bad test JSON: %s: %s\n", e.text, s);
	return j;
}

static char *dump(json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
}

/* A CronJob's pod template is spec.jobTemplate.spec.template: its uses and annotations count. */
TEST(cronjob_template_and_uses)
{
	struct reload_workload w;
	struct log_err err = {0};
	json_t *j = J("{\"metadata\":{\"name\":\"backup\",\"namespace\":\"ns\"},\"spec\":{"
		      "\"template\":{\"spec\":{\"containers\":[{\"name\":\"wrong\",\"envFrom\":[{"
		      "\"configMapRef\":{\"name\":\"no\"}}]}]}},"
		      "\"jobTemplate\":{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{"
		      "\"reloader.stakater.com/auto\":\"true\"}},\"spec\":{\"containers\":[{"
		      "\"name\":\"app\",\"envFrom\":[{\"secretRef\":{\"name\":\"db\"}}]}]}}}}}}");
	struct reload_object o = {RELOAD_SECRET, "ns", "db", "h", NULL, 0, 0};
	const char *ct;

	CHECK_INT(reload_workload_parse(&w, RELOAD_CRONJOB, j, 0, &err), 0);
	CHECK_INT((int)w.nrefs, 1);
	CHECK_STR(w.refs[0].name, "db");
	CHECK_INT(reload_should(&w, &o, 0, &ct), RELOAD_YES); /* template fallback */
	CHECK_STR(ct, "app");
	CHECK_STR(reload_kind_name(RELOAD_CRONJOB), "CronJob");
	CHECK_STR(reload_kind_name(RELOAD_ROLLOUT), "Rollout");
	reload_workload_free(&w);
	json_decref(j);
}

/* rollout-strategy is read for Rollouts, pause keys and spec.paused for Deployments, from metadata.
 */
TEST(rollout_and_pause_annotations)
{
	struct reload_workload w;
	struct log_err err = {0};
	json_t *ro = J("{\"metadata\":{\"name\":\"r\",\"annotations\":{"
		       "\"reloader.stakater.com/rollout-strategy\":\"restart\"}}}");
	json_t *dep = J("{\"metadata\":{\"name\":\"d\",\"annotations\":{"
			"\"deployment.reloader.stakater.com/pause-period\":\"5m\","
			"\"deployment.reloader.stakater.com/paused-at\":\"2026-11-25T08:00:00Z\"}},"
			"\"spec\":{\"paused\":true,\"template\":{\"metadata\":{\"annotations\":{"
			"\"deployment.reloader.stakater.com/pause-period\":\"1s\"}}}}}");

	CHECK_INT(reload_workload_parse(&w, RELOAD_ROLLOUT, ro, 0, &err), 0);
	CHECK_STR(w.rollout_strategy, "restart");
	CHECK(w.pause_period == NULL);
	reload_workload_free(&w);
	CHECK_INT(reload_workload_parse(&w, RELOAD_DEPLOYMENT, dep, 0, &err), 0);
	CHECK_STR(w.pause_period, "5m");
	CHECK_STR(w.paused_at, "2026-11-25T08:00:00Z");
	CHECK_INT(w.paused, 1);
	CHECK(w.rollout_strategy == NULL);
	reload_workload_free(&w);
	/* a StatefulSet's pause annotation means nothing (Deployments only) */
	CHECK_INT(reload_workload_parse(&w, RELOAD_STATEFULSET, dep, 0, &err), 0);
	CHECK(w.pause_period == NULL && !w.paused);
	reload_workload_free(&w);
	json_decref(ro);
	json_decref(dep);
}

/* env-vars: set an existing var, append a new one, remove a deleted one; annotations: last trigger.
 */
TEST(template_apply_both_strategies)
{
	json_t *t =
	    J("{\"spec\":{\"containers\":[{\"name\":\"side\"},{\"name\":\"app\",\"env\":["
	      "{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"STAKATER_OLD_SECRET\","
	      "\"value\":\"x\"},{\"name\":\"STAKATER_CFG_CONFIGMAP\",\"value\":\"old\"}]}]}}");
	struct reload_trigger tr[3] = {
	    {RELOAD_CONFIGMAP, "cfg", "h1", "app", 0},
	    {RELOAD_SECRET, "new.one", "h2", "side", 0},
	    {RELOAD_SECRET, "old", RELOAD_DELETE_HASH, "app", 1},
	};
	char *s;

	CHECK_INT(reload_template_apply(t, RELOAD_ENV_VARS, "ns", tr, 3, 7), 3);
	s = dump(t);
	CHECK_STR(s, "{\"spec\":{\"containers\":[{\"name\":\"side\",\"env\":[{\"name\":"
		     "\"STAKATER_NEW_ONE_SECRET\",\"value\":\"h2\"}]},{\"name\":\"app\",\"env\":[{"
		     "\"name\":\"A\",\"value\":\"1\"},{\"name\":\"STAKATER_CFG_CONFIGMAP\","
		     "\"value\":\"h1\"}]}]}}");
	free(s);
	/* the same again changes nothing */
	CHECK_INT(reload_template_apply(t, RELOAD_ENV_VARS, "ns", tr, 2, 7), 0);
	CHECK_INT(reload_template_apply(t, RELOAD_ANNOTATIONS, "ns", tr, 2, 7), 1);
	s = dump(json_object_get(t, "metadata"));
	CHECK_STR(
	    s, "{\"annotations\":{\"reloader.stakater.com/last-reloaded-from\":\"{\\\"type\\\":"
	       "\\\"SECRET\\\",\\\"name\\\":\\\"new.one\\\",\\\"namespace\\\":\\\"ns\\\","
	       "\\\"hash\\\":\\\"h2\\\",\\\"containerRefs\\\":[\\\"side\\\"],\\\"observedAt\\\":7}"
	       "\"}}");
	free(s);
	json_decref(t);
}

/* The delete patch removes each recorded var by index, highest first, each guarded by a test. */
TEST(delete_patch_exact)
{
	struct reload_workload w;
	struct log_err err = {0};
	struct strbuf sb = STRBUF_INIT(4096);
	json_t *j =
	    J("{\"metadata\":{\"name\":\"d\"},\"spec\":{\"template\":{\"spec\":{"
	      "\"containers\":[{\"name\":\"a\",\"env\":[{\"name\":\"STAKATER_X_CONFIGMAP\","
	      "\"value\":\"1\"}]},{\"name\":\"b\",\"env\":[{\"name\":\"K\",\"value\":\"v\"},"
	      "{\"name\":\"STAKATER_X_CONFIGMAP\",\"value\":\"1\"},{\"name\":"
	      "\"STAKATER_Y_SECRET\",\"value\":\"2\"}]}]}}}}");
	struct reload_trigger t[3] = {
	    {RELOAD_CONFIGMAP, "x", RELOAD_DELETE_HASH, "b", 1},
	    {RELOAD_SECRET, "y", RELOAD_DELETE_HASH, "b", 1},
	    {RELOAD_CONFIGMAP, "z", "h", "a", 0},
	};

	CHECK_INT(reload_workload_parse(&w, RELOAD_DEPLOYMENT, j, 0, &err), 0);
	CHECK_INT(reload_delete_patch(&sb, &w, t, 3), 2);
	CHECK_STR(sb.buf,
		  "[{\"op\":\"test\",\"path\":\"/spec/template/spec/containers/1/env/2/name\","
		  "\"value\":\"STAKATER_Y_SECRET\"},{\"op\":\"remove\",\"path\":"
		  "\"/spec/template/spec/containers/1/env/2\"},{\"op\":\"test\",\"path\":"
		  "\"/spec/template/spec/containers/1/env/1/name\",\"value\":"
		  "\"STAKATER_X_CONFIGMAP\"},{\"op\":\"remove\",\"path\":"
		  "\"/spec/template/spec/containers/1/env/1\"}]");
	sb_reset(&sb);
	/* nothing recorded for it: no patch */
	CHECK_INT(reload_delete_patch(&sb, &w, &t[2], 1), 0);
	CHECK_STR(sb.buf, "");
	sb_free(&sb);
	reload_workload_free(&w);
	json_decref(j);
}

/* Reloader's annotation flags rename the keys; the exclude keys keep theirs; NULL restores. */
TEST(annotation_name_overrides)
{
	const char *names[RELOAD_ANN_NNAMES] = {0};
	struct reload_workload w;
	struct log_err err = {0};
	json_t *j =
	    J("{\"metadata\":{\"name\":\"d\",\"annotations\":{\"my/auto\":\"true\","
	      "\"reloader.stakater.com/auto\":\"false\"}},\"spec\":{\"template\":{\"spec\":{"
	      "\"containers\":[{\"name\":\"app\",\"envFrom\":[{\"configMapRef\":{"
	      "\"name\":\"c\"}}]}]}}}}");
	struct reload_object o = {RELOAD_CONFIGMAP, "", "c", "h", NULL, 0, 0};

	names[RELOAD_ANN_AUTO] = "my/auto";
	names[RELOAD_ANN_PAUSED_AT] = "my/at";
	names[RELOAD_ANN_IGNORE] = "";
	reload_ann_names(names);
	CHECK_STR(reload_ann_key(RA_AUTO), "my/auto");
	CHECK_STR(reload_ann_key(RA_CM_EXCLUDE), "configmaps.exclude.reloader.stakater.com/reload");
	CHECK_STR(reload_ann_name(RELOAD_ANN_PAUSED_AT), "my/at");
	CHECK_STR(RELOAD_IGNORE, "reloader.stakater.com/ignore"); /* "" is no override */
	CHECK_INT(reload_workload_parse(&w, RELOAD_DEPLOYMENT, j, 0, &err), 0);
	CHECK_INT(reload_should(&w, &o, 0, NULL), RELOAD_YES);
	reload_workload_free(&w);
	reload_ann_names(NULL);
	CHECK_STR(reload_ann_key(RA_AUTO), "reloader.stakater.com/auto");
	CHECK_INT(reload_workload_parse(&w, RELOAD_DEPLOYMENT, j, 0, &err), 0);
	CHECK_INT(reload_should(&w, &o, 0, NULL), RELOAD_NO_NOT_SELECTED);
	reload_workload_free(&w);
	json_decref(j);
}

/* A SecretProviderClass is noted when named by its keys, or mounted by an auto workload. */
TEST(secretproviderclass_is_noted)
{
	struct reload_workload w;
	struct log_err err = {0};
	json_t *mounted = J("{\"metadata\":{\"name\":\"d\",\"annotations\":{"
			    "\"reloader.stakater.com/auto\":\"true\"}},\"spec\":{\"template\":{"
			    "\"spec\":{\"volumes\":[{\"name\":\"s\",\"csi\":{\"volumeAttributes\":{"
			    "\"secretProviderClass\":\"vault\"}}}]}}}}");
	json_t *named = J("{\"metadata\":{\"name\":\"d\",\"annotations\":{"
			  "\"secretproviderclass.reloader.stakater.com/reload\":\"a,b\"}}}");
	json_t *plain = J("{\"metadata\":{\"name\":\"d\"},\"spec\":{\"template\":{\"spec\":{"
			  "\"volumes\":[{\"name\":\"s\",\"csi\":{\"volumeAttributes\":{"
			  "\"secretProviderClass\":\"vault\"}}}]}}}}");

	CHECK_INT(reload_workload_parse(&w, RELOAD_DEPLOYMENT, mounted, 0, &err), 0);
	CHECK_STR(w.spc, "vault");
	reload_workload_free(&w);
	CHECK_INT(reload_workload_parse(&w, RELOAD_DAEMONSET, named, 0, &err), 0);
	CHECK_STR(w.spc, "a,b");
	reload_workload_free(&w);
	/* not annotated for Reloader: nothing it would have done */
	CHECK_INT(reload_workload_parse(&w, RELOAD_DEPLOYMENT, plain, 0, &err), 0);
	CHECK(w.spc == NULL);
	reload_workload_free(&w);
	json_decref(mounted);
	json_decref(named);
	json_decref(plain);
}

/* Which classes are listed under the options. */
TEST(classes_enabled_by_options)
{
	struct reload_opts o;

	reload_opts_init(&o);
	CHECK(reload_cls_enabled(&o, CLS_CJ) && reload_cls_enabled(&o, CLS_JOB));
	CHECK(!reload_cls_enabled(&o, CLS_RO)); /* Reloader's --is-Argo-Rollouts default false */
	o.ignore_jobs = 1;
	o.argo_rollouts = 1;
	CHECK(reload_cls_enabled(&o, CLS_CJ) && !reload_cls_enabled(&o, CLS_JOB));
	CHECK(reload_cls_enabled(&o, CLS_RO) && reload_cls_enabled(&o, CLS_DEP));
}

/* The kinds table: each kind's resource, Event apiVersion, write shape, record and pause rules. */
TEST(kinds_table_rows)
{
	struct reload_workload ro = {0};

	CHECK(reload_kinds[RELOAD_DEPLOYMENT].res == &kube_deployments);
	CHECK_STR(reload_kinds[RELOAD_DAEMONSET].api_version, "apps/v1");
	CHECK_INT(reload_kinds[RELOAD_STATEFULSET].shape, RELOAD_SHAPE_SMP);
	CHECK_INT(reload_kinds[RELOAD_DEPLOYMENT].pausable, 1);
	CHECK_INT(reload_kinds[RELOAD_STATEFULSET].pausable, 0);
	CHECK(reload_kinds[RELOAD_CRONJOB].res == &reload_res_cronjobs);
	CHECK_STR(reload_kinds[RELOAD_JOB].api_version, "batch/v1");
	CHECK_INT(reload_kinds[RELOAD_CRONJOB].shape, RELOAD_SHAPE_JOB_FROM_TEMPLATE);
	CHECK_INT(reload_kinds[RELOAD_JOB].shape, RELOAD_SHAPE_RECREATE);
	CHECK_INT(reload_kinds[RELOAD_ROLLOUT].shape, RELOAD_SHAPE_MERGE);
	CHECK_STR(reload_kinds[RELOAD_ROLLOUT].api_version, "argoproj.io/v1alpha1");
	CHECK_INT(reload_kinds[RELOAD_CRONJOB].records, 0);
	CHECK_INT(reload_kinds[RELOAD_JOB].records, 1);
	/* a restart Rollout records nothing either */
	ro.kind = RELOAD_ROLLOUT;
	ro.rollout_strategy = (char *)"restart";
	CHECK_INT(reload_rollout_restart(&ro), 1);
	ro.rollout_strategy = NULL;
	CHECK_INT(reload_rollout_restart(&ro), 0);
}
