/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_kinds: the kinds as data: one row per workload kind (its API resource, an Event's
 * apiVersion, how act writes a rollout, whether it keeps a record, whether pause-period applies),
 * the resource of each class, and which classes the options enable. Calls no other file. */
#include <string.h>

#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_internal.h"

/*
 * Reloader v1.4.21 (internal/pkg/callbacks/rolling_upgrade.go: CreateJobFromCronjob,
 * ReCreateJobFromjob, UpdateRollout; internal/pkg/handler/upgrade.go), read, not copied; see
 * ../shared/reference/reloader.md §9.1-§9.5 and nodeprobe-reload(8).
 */
const struct kube_resource reload_res_cronjobs = {"/apis/batch/v1", "cronjobs", "CronJob"};
const struct kube_resource reload_res_jobs = {"/apis/batch/v1", "jobs", "Job"};
const struct kube_resource reload_res_rollouts = {"/apis/argoproj.io/v1alpha1", "rollouts",
						  "Rollout"};

const struct reload_kind_info reload_kinds[RELOAD_NKINDS] = {
    [RELOAD_DEPLOYMENT] = {&kube_deployments, "apps/v1", RELOAD_SHAPE_SMP, 1, 1},
    [RELOAD_STATEFULSET] = {&kube_statefulsets, "apps/v1", RELOAD_SHAPE_SMP, 1, 0},
    [RELOAD_DAEMONSET] = {&kube_daemonsets, "apps/v1", RELOAD_SHAPE_SMP, 1, 0},
    /* a CronJob is never written: every change rolls */
    [RELOAD_CRONJOB] = {&reload_res_cronjobs, "batch/v1", RELOAD_SHAPE_JOB_FROM_TEMPLATE, 0, 0},
    [RELOAD_JOB] = {&reload_res_jobs, "batch/v1", RELOAD_SHAPE_RECREATE, 1, 0},
    [RELOAD_ROLLOUT] = {&reload_res_rollouts, "argoproj.io/v1alpha1", RELOAD_SHAPE_MERGE, 1, 0},
};

/* The Secrets Store CSI driver's CRD (kubernetes-sigs/secrets-store-csi-driver apis/v1). */
const struct kube_resource reload_res_spcps = {"/apis/secrets-store.csi.x-k8s.io/v1",
					       "secretproviderclasspodstatuses",
					       "SecretProviderClassPodStatus"};

/* Its SecretProviderClass, listed and watched for the match and ignore annotations (reload_csi.c).
 */
const struct kube_resource reload_res_spcs = {"/apis/secrets-store.csi.x-k8s.io/v1",
					      "secretproviderclasses", "SecretProviderClass"};

const struct kube_resource *const reload_cls_res[NCLS] = {
    &kube_configmaps,  &kube_secrets,	     &kube_deployments, &kube_statefulsets,
    &kube_daemonsets,  &reload_res_cronjobs, &reload_res_jobs,	&reload_res_rollouts,
    &reload_res_spcps, &reload_res_spcs,
};

/* The object type each class is the trigger of (workload classes: none, RELOAD_CONFIGMAP). */
static const enum reload_type cls_type[NCLS] = {[CLS_SEC] = RELOAD_SECRET, [CLS_SPC] = RELOAD_SPC};
/* The class each object type is kept in. */
static const int type_cls[RELOAD_SPC + 1] = {CLS_CM, CLS_SEC, CLS_SPC};

enum reload_type reload_cls_type(int cls)
{
	return cls >= 0 && cls < NCLS ? cls_type[cls] : RELOAD_CONFIGMAP;
}

int reload_type_cls(enum reload_type t)
{
	return t <= RELOAD_SPC ? type_cls[t] : CLS_CM;
}

int reload_cls_enabled(const struct reload_opts *o, int cls)
{
	switch (cls) {
	case CLS_CJ:
		return !o->ignore_cronjobs;
	case CLS_JOB:
		return !o->ignore_jobs;
	case CLS_RO:
		return o->argo_rollouts;
	case CLS_SPC:
	case CLS_SPCS:
		return o->csi;
	default:
		return 1;
	}
}

int reload_rollout_restart(const struct reload_workload *w)
{
	return w->kind == RELOAD_ROLLOUT && w->rollout_strategy &&
	       strcmp(w->rollout_strategy, "restart") == 0;
}

int reload_records(const struct wl_ent *we)
{
	/* A CronJob is never written and restartAt records nothing: every change rolls. */
	return reload_kinds[we->w.kind].records && !reload_rollout_restart(&we->w);
}
