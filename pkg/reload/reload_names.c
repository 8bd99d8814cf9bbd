/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_names: Reloader's annotation keys, kinds, verdicts and STAKATER_* env var names. */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64/base64.h"
#include "goregex/goregex.h"
#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_internal.h"

static const char *const ann_defaults[RA_N] = {
    [RA_AUTO] = "reloader.stakater.com/auto",
    [RA_CM_AUTO] = "configmap.reloader.stakater.com/auto",
    [RA_SEC_AUTO] = "secret.reloader.stakater.com/auto",
    [RA_CM_RELOAD] = "configmap.reloader.stakater.com/reload",
    [RA_SEC_RELOAD] = "secret.reloader.stakater.com/reload",
    [RA_SEARCH] = "reloader.stakater.com/search",
    [RA_CM_EXCLUDE] = "configmaps.exclude.reloader.stakater.com/reload",
    [RA_SEC_EXCLUDE] = "secrets.exclude.reloader.stakater.com/reload",
    /* Reloader v1.4.21 internal/pkg/options/flags.go: no flag renames these three */
    [RA_SPC_AUTO] = "secretproviderclass.reloader.stakater.com/auto",
    [RA_SPC_RELOAD] = "secretproviderclass.reloader.stakater.com/reload",
    [RA_SPC_EXCLUDE] = "secretproviderclasses.exclude.reloader.stakater.com/reload",
};

/* Defaults of Reloader's annotation flags (internal/pkg/options/flags.go, util.go). */
static const char *const name_defaults[RELOAD_ANN_NNAMES] = {
    [RELOAD_ANN_AUTO] = "reloader.stakater.com/auto",
    [RELOAD_ANN_CM_AUTO] = "configmap.reloader.stakater.com/auto",
    [RELOAD_ANN_SEC_AUTO] = "secret.reloader.stakater.com/auto",
    [RELOAD_ANN_CM_RELOAD] = "configmap.reloader.stakater.com/reload",
    [RELOAD_ANN_SEC_RELOAD] = "secret.reloader.stakater.com/reload",
    [RELOAD_ANN_SEARCH] = "reloader.stakater.com/search",
    [RELOAD_ANN_MATCH] = "reloader.stakater.com/match",
    [RELOAD_ANN_IGNORE] = "reloader.stakater.com/ignore",
    [RELOAD_ANN_PAUSE_PERIOD] = "deployment.reloader.stakater.com/pause-period",
    [RELOAD_ANN_PAUSED_AT] = "deployment.reloader.stakater.com/paused-at",
};

static const char *overrides[RELOAD_ANN_NNAMES]; /* overrides (borrowed), NULL: default */

void reload_ann_names(const char *const *n)
{
	int i;

	for (i = 0; i < RELOAD_ANN_NNAMES; i++)
		overrides[i] = n && n[i] && *n[i] ? n[i] : NULL;
}

const char *reload_ann_name(enum reload_ann_name n)
{
	if ((unsigned)n >= RELOAD_ANN_NNAMES)
		return "";
	return overrides[n] ? overrides[n] : name_defaults[n];
}

const char *reload_ann_key(enum reload_ann a)
{
	static const enum reload_ann_name flag[RA_N] = {
	    [RA_AUTO] = RELOAD_ANN_AUTO,
	    [RA_CM_AUTO] = RELOAD_ANN_CM_AUTO,
	    [RA_SEC_AUTO] = RELOAD_ANN_SEC_AUTO,
	    [RA_CM_RELOAD] = RELOAD_ANN_CM_RELOAD,
	    [RA_SEC_RELOAD] = RELOAD_ANN_SEC_RELOAD,
	    [RA_SEARCH] = RELOAD_ANN_SEARCH,
	    [RA_CM_EXCLUDE] = RELOAD_ANN_NNAMES,
	    [RA_SEC_EXCLUDE] = RELOAD_ANN_NNAMES,
	    [RA_SPC_AUTO] = RELOAD_ANN_NNAMES,
	    [RA_SPC_RELOAD] = RELOAD_ANN_NNAMES,
	    [RA_SPC_EXCLUDE] = RELOAD_ANN_NNAMES,
	};

	if ((unsigned)a >= RA_N)
		return "";
	/* the exclude and SecretProviderClass keys have no flag in Reloader */
	if (flag[a] == RELOAD_ANN_NNAMES || !overrides[flag[a]])
		return ann_defaults[a];
	return overrides[flag[a]];
}

const char *reload_type_name(enum reload_type t)
{
	return t == RELOAD_SPC	    ? "SecretProviderClass"
	       : t == RELOAD_SECRET ? "Secret"
				    : "ConfigMap";
}

const char *reload_type_upper(enum reload_type t)
{
	return t == RELOAD_SPC	    ? "SECRETPROVIDERCLASS"
	       : t == RELOAD_SECRET ? "SECRET"
				    : "CONFIGMAP";
}

const char *reload_kind_name(enum reload_kind k)
{
	static const char *const kinds[] = {"Deployment", "StatefulSet", "DaemonSet",
					    "CronJob",	  "Job",	 "Rollout"};

	return k < RELOAD_NKINDS ? kinds[k] : "?";
}

const char *reload_verdict_name(enum reload_verdict v)
{
	static const char *const names[] = {"reload",	    "ignored",	"excluded",
					    "not_selected", "not_used", "namespace"};

	return v <= RELOAD_NO_NAMESPACE ? names[v] : "?";
}

/* ---- names ---- */

/*
 * The next byte of Reloader's ConvertToEnvVarName of the name at *p (advanced), or 0 at its end:
 * ASCII upper-cased, letters and digits kept, a run of other bytes one '_' after a letter or digit.
 */
static char env_next(const char **p, int *prev_alnum)
{
	while (**p) {
		char c = *(*p)++;

		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			*prev_alnum = 1;
			return c;
		}
		if (*prev_alnum) {
			*prev_alnum = 0;
			return '_';
		}
	}
	return 0;
}

int reload_env_name(struct strbuf *sb, const char *name, enum reload_type type)
{
	int r = sb_add(sb, "STAKATER_"), prev_alnum = 0;
	const char *p = name;
	char c;

	while (r == 0 && (c = env_next(&p, &prev_alnum)) != 0)
		r = sb_addch(sb, c);
	if (r == 0)
		r = sb_addch(sb, '_');
	if (r == 0)
		r = sb_add(sb, reload_type_upper(type));
	return r;
}

int reload_env_same(const char *a, const char *b)
{
	int pa = 0, pb = 0;
	char ca, cb;

	do {
		ca = env_next(&a, &pa);
		cb = env_next(&b, &pb);
		if (ca != cb)
			return 0;
	} while (ca);
	return 1;
}
