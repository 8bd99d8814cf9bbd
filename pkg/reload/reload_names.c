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

static const char *const ann_keys[RA_N] = {
    [RA_AUTO] = "reloader.stakater.com/auto",
    [RA_CM_AUTO] = "configmap.reloader.stakater.com/auto",
    [RA_SEC_AUTO] = "secret.reloader.stakater.com/auto",
    [RA_CM_RELOAD] = "configmap.reloader.stakater.com/reload",
    [RA_SEC_RELOAD] = "secret.reloader.stakater.com/reload",
    [RA_SEARCH] = "reloader.stakater.com/search",
    [RA_CM_EXCLUDE] = "configmaps.exclude.reloader.stakater.com/reload",
    [RA_SEC_EXCLUDE] = "secrets.exclude.reloader.stakater.com/reload",
};

const char *reload_ann_key(enum reload_ann a)
{
	return a < RA_N ? ann_keys[a] : "";
}

const char *reload_type_name(enum reload_type t)
{
	return t == RELOAD_SECRET ? "Secret" : "ConfigMap";
}

const char *reload_type_upper(enum reload_type t)
{
	return t == RELOAD_SECRET ? "SECRET" : "CONFIGMAP";
}

const char *reload_kind_name(enum reload_kind k)
{
	static const char *const names[] = {"Deployment", "StatefulSet", "DaemonSet"};

	return k < RELOAD_NKINDS ? names[k] : "?";
}

const char *reload_verdict_name(enum reload_verdict v)
{
	static const char *const names[] = {"reload",	    "ignored",	"excluded",
					    "not_selected", "not_used", "namespace"};

	return v <= RELOAD_NO_NAMESPACE ? names[v] : "?";
}

/* ---- names ---- */

int reload_env_name(struct strbuf *sb, const char *name, enum reload_type type)
{
	int r = sb_add(sb, "STAKATER_"), prev_alnum = 0;
	const char *p;

	for (p = name; *p && r == 0; p++) {
		char c = *p;

		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			r = sb_addch(sb, c);
			prev_alnum = 1;
		} else if (prev_alnum) {
			r = sb_addch(sb, '_');
			prev_alnum = 0;
		}
	}
	if (r == 0)
		r = sb_addch(sb, '_');
	if (r == 0)
		r = sb_add(sb, reload_type_upper(type));
	return r;
}
