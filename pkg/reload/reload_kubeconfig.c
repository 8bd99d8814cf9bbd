/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_kubeconfig: where the API server and credentials come from, found as client-go tools do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reload/reload_internal.h"

/*
 * controller-runtime's config.GetConfig order (what client-go controllers use):
 * --kubeconfig; $KUBECONFIG, a ':' list of files merged (missing ones skipped,
 * duplicates once, as clientcmd's loading rules); in-cluster when
 * KUBERNETES_SERVICE_HOST and _PORT are set; $HOME/.kube/config.
 */
int reload_kubeconfig(struct kube_config *cfg, const struct reload_opts *o, struct log_err *err)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	const char *paths[KUBE_CONFIG_FILES_MAX];
	char *list = NULL, *tok, *save = NULL, homecfg[4096];
	size_t n = 0, i;
	int r;

	memset(cfg, 0, sizeof(*cfg));
	if (o->kubeconfig)
		return kube_config_load(cfg, o->kubeconfig, o->context, err);
	if (env && *env) {
		list = strdup(env);
		if (!list)
			return log_err_set(err, -ENOMEM, "out of memory");
		for (tok = strtok_r(list, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
			for (i = 0; i < n && strcmp(paths[i], tok) != 0; i++)
				;
			if (i < n || access(tok, F_OK) != 0)
				continue;
			if (n == KUBE_CONFIG_FILES_MAX) {
				free(list);
				return log_err_set(
				    err, KUBE_ECONFIG,
				    "$KUBECONFIG: names more than %d existing files, the limit: "
				    "merge them into fewer (kubectl config view --flatten) or "
				    "name one with --kubeconfig",
				    KUBE_CONFIG_FILES_MAX);
			}
			paths[n++] = tok;
		}
		if (n) {
			log_debug("kubeconfig: $KUBECONFIG (%zu files)", n);
			r = kube_config_load_list(cfg, paths, n, o->context, err);
			free(list);
			return r;
		}
		free(list);
	}
	if (getenv("KUBERNETES_SERVICE_HOST") && getenv("KUBERNETES_SERVICE_PORT")) {
		log_debug("kubeconfig: in-cluster");
		return kube_config_in_cluster(cfg, o->sa_dir, err);
	}
	if (home && *home &&
	    (size_t)snprintf(homecfg, sizeof(homecfg), "%s/.kube/config", home) < sizeof(homecfg) &&
	    access(homecfg, F_OK) == 0) {
		log_debug("kubeconfig: %s", homecfg);
		return kube_config_load(cfg, homecfg, o->context, err);
	}
	return log_err_set(
	    err, KUBE_ECONFIG,
	    "not in a cluster: KUBERNETES_SERVICE_HOST/PORT unset (use --kubeconfig), "
	    "and no file named in $KUBECONFIG or at ~/.kube/config");
}
