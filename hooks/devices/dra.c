/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dra: the DRA side of nodeprobe-devices (issue 28), joining pkg/devices (node scan: which
 * devices the api: dra classes have) and pkg/dra + pkg/kube (API: the kubelet plugin, the
 * claims). Devices are our pool's (the node's name) under devices_dra_name; a prepared claim's
 * CDI spec gets the device's nodes (not its Mounts: CDI deviceNodes only).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra.h"
#include "dra/dra.h"
#include "kube/kube.h"
#include "log/log.h"

#define SA_DIR	 "/var/run/secrets/kubernetes.io/serviceaccount"
#define NODE_MAX 256 /* device nodes of one device handed to a claim's CDI spec */
#define RESYNC_MS                                                                                  \
	10000 /* slices checked again (the kubelet deletes them at its start; a failed write) */

struct side {
	const struct devices_classes *c;
	const struct devices_found **f; /* per class: the last scan (DRA classes only) */
	struct kube_client *kube;
	struct dra_prep *prep;
	struct dra_srv *srv;
	struct dra_pub *pub;
	const struct devices_roots *roots;
	size_t last; /* the last DRA class: its update ends a scan, the slices follow */
	struct dra_node nodes[NODE_MAX]; /* the last lookup's answer */
};

static struct side side;

static int lookup(void *ctx, const char *device, const struct dra_node **nodes, size_t *n)
{
	struct side *d = ctx;
	const struct devices_dev *v = devices_dra_find(d->c, d->f, device);
	size_t m = 0;

	if (!v)
		return -ENOENT;
	for (size_t j = 0; j < v->n_nodes && m < NODE_MAX; j++)
		if (!v->nodes[j].mount)
			d->nodes[m++] = (struct dra_node){v->nodes[j].host, v->nodes[j].container};
	*nodes = d->nodes;
	*n = m;
	return 0;
}

static int kube_of(const struct devices_opts *o, struct kube_client **out, struct log_err *err)
{
	struct kube_config cfg = {0};
	int r;

	if (o->kubeconfig)
		r = kube_config_load(&cfg, o->kubeconfig, NULL, err);
	else if (getenv("KUBERNETES_SERVICE_HOST") && getenv("KUBERNETES_SERVICE_PORT"))
		r = kube_config_in_cluster(&cfg, SA_DIR, err);
	else
		r = log_err_set(err, KUBE_ECONFIG,
				"api: dra reads claims from the API server: give --kubeconfig, or "
				"run in a cluster (a ServiceAccount token)");
	if (r == 0)
		r = kube_client_new(out, &cfg, err);
	kube_config_free(&cfg);
	if (r < 0)
		return r;
	kube_client_set_timeout(*out, 5000); /* one claim GET; the kubelet waits 45 s a call */
	kube_client_set_retries(*out, 2, 200);
	return 0;
}

static int publish(void *ctx, struct log_err *err);

static int start(void *ctx, const struct devices_opts *o, const struct devices_classes *c, int *fd,
		 struct log_err *err)
{
	struct side *d = ctx;
	const char *node = o->node_name ? o->node_name : getenv("NODE_NAME");
	const char *driver = o->dra_driver ? o->dra_driver : DEVICES_DRA_DRIVER;
	const char *plugins = o->dra_dir ? o->dra_dir : DRA_PLUGINS_DIR;
	char state[4096];
	int r;

	if (!node || !*node)
		return log_err_set(err, -EINVAL,
				   "api: dra needs the node's name (its pool): --node-name or "
				   "$NODE_NAME");
	if (!dra_driver_ok(driver))
		return log_err_set(
		    err, -EINVAL,
		    "--dra-driver '%s': not a DNS subdomain of at most 63 characters "
		    "beginning with a letter",
		    driver);
	d->c = c;
	d->roots = &o->roots;
	for (size_t i = 0; i < devices_classes_count(c); i++)
		if (devices_dra_is(c, i, o->api ? o->api : DEVICES_API_DEVICE_PLUGIN))
			d->last = i;
	d->f = calloc(devices_classes_count(c) + 1, sizeof(*d->f));
	if (!d->f)
		return log_err_set(err, -ENOMEM, "out of memory");
	if ((size_t)snprintf(state, sizeof(state), "%s/%s", plugins, driver) >= sizeof(state))
		return log_err_set(err, -ENAMETOOLONG, "%s: path too long", plugins);
	r = kube_of(o, &d->kube, err);
	if (r == 0) {
		struct dra_prep_opts po = {
		    .driver = driver,
		    .pool = node,
		    .state_dir = state,
		    .cdi_dir = o->cdi_dir ? o->cdi_dir : DEVICES_CDI_DIR,
		    .kube = d->kube,
		    .lookup = lookup,
		    .ctx = d,
		};

		r = dra_prep_new(&po, &d->prep, err);
	}
	if (r == 0) {
		struct dra_opts so = {
		    .driver = driver,
		    .registry_dir = o->registry_dir,
		    .plugins_dir = plugins,
		    .ops = {dra_prep_prepare, dra_prep_unprepare, dra_prep_free_result},
		    .ctx = d->prep,
		};

		r = dra_srv_new(&so, &d->srv, err);
	}
	if (r == 0)
		r = dra_pub_new(d->kube, driver, node, &d->pub, err);
	if (r == 0)
		r = dra_srv_start(d->srv, err);
	if (r == 0)
		r = dra_srv_every(d->srv, RESYNC_MS, publish, d, err);
	if (r < 0)
		return r;
	r = dra_prep_sweep(d->prep, err); /* claims deleted while we were down */
	if (r < 0) {
		log_warn("%s; the prepared claims stay until the kubelet unprepares them",
			 err->msg);
		log_err_clear(err);
	}
	*fd = dra_srv_fd(d->srv);
	return 0;
}

/* pkg/devices' attribute types as pkg/dra's. */
static const enum dra_attr_type attr_type[] = {
    [DEVICES_ATTR_STRING] = DRA_ATTR_STRING,
    [DEVICES_ATTR_INT] = DRA_ATTR_INT,
    [DEVICES_ATTR_BOOL] = DRA_ATTR_BOOL,
    [DEVICES_ATTR_VERSION] = DRA_ATTR_VERSION,
};

/* Our pool's devices with their attributes, to the API server (nothing when unchanged). */
static int publish(void *ctx, struct log_err *err)
{
	struct side *d = ctx;
	size_t n = 0, at = 0, na = 0;
	struct dra_slice_dev *sd;
	struct devices_attr *a = NULL;
	struct dra_attr *da = NULL;
	char(*names)[DRA_NAME_MAX + 1] = NULL;
	size_t n_names = 0, nm = 0;
	int r = -ENOMEM;

	for (size_t i = 0; i < devices_classes_count(d->c); i++)
		n += d->f[i] ? d->f[i]->n : 0;
	sd = calloc(n + 1, sizeof(*sd));
	if (devices_dra_names(d->c, d->f, &names, &n_names) < 0)
		goto out;
	a = calloc((n + 1) * DEVICES_ATTRS_MAX, sizeof(*a));
	da = calloc((n + 1) * DEVICES_ATTRS_MAX, sizeof(*da));
	if (!sd || !names || !a || !da)
		goto out;
	for (size_t i = 0; i < devices_classes_count(d->c); i++) {
		const char *cls = devices_class_name(d->c, i);

		for (size_t k = 0; d->f[i] && k < d->f[i]->n; k++) {
			const struct devices_dev *v = &d->f[i]->d[k];
			size_t m;

			if (!names[nm++][0]) /* no name (a warning) */
				continue;
			m = devices_dra_attrs(d->roots, cls, v, a + na, DEVICES_ATTRS_MAX);
			sd[at] = (struct dra_slice_dev){names[nm - 1], da + na, m};
			for (size_t j = 0; j < m; j++, na++)
				da[na] = (struct dra_attr){a[na].id, a[na].str, a[na].num,
							   attr_type[a[na].type]};
			at++;
		}
	}
	r = dra_pub_sync(d->pub, sd, at, err);
	if (r < 0) {
		log_warn("dra: ResourceSlices: %s; again in %d s", err->msg, RESYNC_MS / 1000);
		log_err_clear(err);
		r = 0;
	}
out:
	free(sd);
	free(names);
	free(a);
	free(da);
	return r < 0 ? log_err_set(err, r, "out of memory") : 0;
}

static int ready(void *ctx, struct log_err *err)
{
	struct side *d = ctx;

	return dra_srv_ready(d->srv, err);
}

static void update(void *ctx, size_t cls, const struct devices_found *f)
{
	struct side *d = ctx;

	struct log_err e = {0};

	if (!d->f)
		return;
	d->f[cls] = f;
	if (cls == d->last)
		publish(d, &e);
}

static void stop(void *ctx)
{
	struct side *d = ctx;

	dra_srv_free(d->srv);
	dra_pub_free(d->pub);
	dra_prep_free(d->prep);
	kube_client_free(d->kube);
	free(d->f);
	memset(d, 0, sizeof(*d));
}

const struct devices_dra_hooks devices_dra_side = {start, ready, update, stop, &side};
