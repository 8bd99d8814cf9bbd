/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dra: the DRA side of nodeprobe-devices (issue 28), joining pkg/devices (node scan: which
 * devices the api: dra classes have) and pkg/dra + pkg/kube (API: the kubelet plugin, the
 * claims). Devices are our pool's (the node's name) under devices_dra_name; a prepared claim's
 * CDI spec gets the device's nodes (not its Mounts: CDI deviceNodes only). Two threads: the
 * loop (scans, gRPC) and pkg/dra's worker (everything that talks to the API server: claims,
 * slices, the sweep), which sees the scans only through snapshots (struct snap).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dra.h"
#include "dra/dra.h"
#include "kube/kube.h"
#include "log/log.h"

#define SA_DIR	 "/var/run/secrets/kubernetes.io/serviceaccount"
#define NODE_MAX 256 /* device nodes of one device handed to a claim's CDI spec */
#define RESYNC_S                                                                                   \
	10 /* slices checked again (the kubelet deletes them at its start; a failed write) */
#define API_TIMEOUT_S 5	  /* one API server request (--dra-api-timeout) */
#define SWEEP_S	      300 /* prepared claims the API server no longer has: unprepared */

/*
 * Our pool's devices as the last scan found them, for the worker: built by the loop after each
 * scan (devices_found is the loop's and changes under a rescan), read by the worker's slice sync
 * and claim lookups; held by reference (under side.mu), freed by whoever drops the last one.
 */
struct snap {
	unsigned refs;
	size_t n;
	struct dra_slice_dev *sd;	 /* sd[i].name: one of names */
	char (*names)[DRA_NAME_MAX + 1]; /* devices_dra_names: every device's, "" when none */
	struct devices_attr *a;		 /* the attributes, DEVICES_ATTRS_MAX a device */
	struct dra_attr *da;		 /* pointing into a */
	struct dra_node **nodes;	 /* per device: its nodes (not its Mounts), strings owned */
	size_t *n_nodes;
};

struct side {
	const struct devices_classes *c;
	const struct devices_found *
	    *f;			  /* per class: the last scan (DRA classes only; the loop's) */
	struct kube_client *kube; /* the worker's, after start */
	struct dra_prep *prep;	  /* the worker's, after start */
	struct dra_srv *srv;
	struct dra_pub *pub; /* the worker's */
	const struct devices_roots *roots;
	size_t last; /* the last DRA class: its update ends a scan, the slices follow */
	pthread_mutex_t mu;
	struct snap *cur;     /* the newest (under mu) */
	struct snap *held;    /* the worker's: lookup's answers point into it */
	long long next_sweep; /* the worker's: when the stale-claim sweep is due (ms) */
	int sweep_ms;	      /* --dra-sweep */
	int resync_ms;	      /* --dra-resync */
	bool unserved;	      /* the worker's: the slices' LIST was 404 (said once) */
};

static struct side side = {.mu = PTHREAD_MUTEX_INITIALIZER};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void snap_free(struct snap *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->nodes && i < s->n; i++) {
		for (size_t j = 0; s->nodes[i] && j < s->n_nodes[i]; j++) {
			free((char *)s->nodes[i][j].host);
			free((char *)s->nodes[i][j].container);
		}
		free(s->nodes[i]);
	}
	free(s->nodes);
	free(s->n_nodes);
	free(s->sd);
	free(s->names);
	free(s->a);
	free(s->da);
	free(s);
}

/* Take a reference to the newest snapshot (NULL: no scan yet). */
static struct snap *snap_get(struct side *d)
{
	struct snap *s;

	pthread_mutex_lock(&d->mu);
	s = d->cur;
	if (s)
		s->refs++;
	pthread_mutex_unlock(&d->mu);
	return s;
}

static void snap_put(struct side *d, struct snap *s)
{
	bool last;

	if (!s)
		return;
	pthread_mutex_lock(&d->mu);
	last = --s->refs == 0;
	pthread_mutex_unlock(&d->mu);
	if (last)
		snap_free(s);
}

/* One device's nodes (not its Mounts), copied. */
static int snap_nodes(struct snap *s, size_t at, const struct devices_dev *v)
{
	size_t m = 0;

	s->nodes[at] = calloc(v->n_nodes + 1, sizeof(**s->nodes));
	if (!s->nodes[at])
		return -ENOMEM;
	for (size_t j = 0; j < v->n_nodes && m < NODE_MAX; j++) {
		if (v->nodes[j].mount)
			continue;
		s->nodes[at][m] =
		    (struct dra_node){strdup(v->nodes[j].host), strdup(v->nodes[j].container)};
		s->n_nodes[at] = ++m;
		if (!s->nodes[at][m - 1].host || !s->nodes[at][m - 1].container)
			return -ENOMEM;
	}
	return 0;
}

/* pkg/devices' attribute types as pkg/dra's. */
static const enum dra_attr_type attr_type[] = {
    [DEVICES_ATTR_STRING] = DRA_ATTR_STRING,
    [DEVICES_ATTR_INT] = DRA_ATTR_INT,
    [DEVICES_ATTR_BOOL] = DRA_ATTR_BOOL,
    [DEVICES_ATTR_VERSION] = DRA_ATTR_VERSION,
};

/* The DRA classes' devices of the last scan, with their attributes and nodes, as a snapshot. */
static struct snap *snap_build(struct side *d)
{
	struct snap *s = calloc(1, sizeof(*s));
	size_t n = 0, at = 0, na = 0, nm = 0, n_names = 0;

	for (size_t i = 0; i < devices_classes_count(d->c); i++)
		n += d->f[i] ? d->f[i]->n : 0;
	if (!s || !(s->sd = calloc(n + 1, sizeof(*s->sd))) ||
	    devices_dra_names(d->c, d->f, &s->names, &n_names) < 0 || !s->names ||
	    !(s->a = calloc((n + 1) * DEVICES_ATTRS_MAX, sizeof(*s->a))) ||
	    !(s->da = calloc((n + 1) * DEVICES_ATTRS_MAX, sizeof(*s->da))) ||
	    !(s->nodes = calloc(n + 1, sizeof(*s->nodes))) ||
	    !(s->n_nodes = calloc(n + 1, sizeof(*s->n_nodes))))
		goto oom;
	s->refs = 1;
	for (size_t i = 0; i < devices_classes_count(d->c); i++) {
		const char *cls = devices_class_name(d->c, i);

		for (size_t k = 0; d->f[i] && k < d->f[i]->n; k++) {
			const struct devices_dev *v = &d->f[i]->d[k];
			struct devices_attr *a = s->a;
			struct dra_attr *da = s->da;
			size_t m;

			if (nm >= n_names || !s->names[nm++][0]) /* no name (a warning) */
				continue;
			m = devices_dra_attrs(d->roots, cls, v, a + na, DEVICES_ATTRS_MAX);
			s->sd[at] = (struct dra_slice_dev){s->names[nm - 1], da + na, m};
			for (size_t j = 0; j < m; j++, na++)
				da[na] = (struct dra_attr){a[na].id, a[na].str, a[na].num,
							   attr_type[a[na].type]};
			s->n = at + 1; /* snap_free frees nodes[at] from here */
			if (snap_nodes(s, at, v) < 0)
				goto oom;
			at++;
		}
	}
	s->n = at;
	return s;
oom:
	snap_free(s);
	return NULL;
}

/*
 * On the worker: the nodes of our pool's device, from the newest snapshot (held until the next
 * lookup: the answer is valid until then, as dra_prep_opts.lookup says).
 */
static int lookup(void *ctx, const char *device, const struct dra_node **nodes, size_t *n)
{
	struct side *d = ctx;
	struct snap *s = snap_get(d);

	snap_put(d, d->held);
	d->held = s;
	for (size_t i = 0; s && i < s->n; i++)
		if (!strcmp(s->sd[i].name, device)) {
			*nodes = s->nodes[i];
			*n = s->n_nodes[i];
			return 0;
		}
	return -ENOENT;
}

/*
 * GnuTLS is in this process only because Debian's libcurl (OpenSSL flavour) needs librtmp and
 * libldap, which link it; our API client speaks https through OpenSSL, and rtmp and ldap are not
 * among its protocols (pkg/kube: CURLOPT_PROTOCOLS_STR "https,http"). GnuTLS still initialises
 * itself when loaded (a constructor calling gnutls_global_init: its crypto backends, the ASN.1
 * trees, the system priorities), 0.8 MB of this plugin's peak RSS (make bench,
 * test/bench/dra.sh). GnuTLS asks this function before doing so (gnutls lib/global.c lib_init:
 * "if (_gnutls_global_init_skip() != 0) return;", a weak definition there, called through the
 * PLT; gnutls.h's GNUTLS_SKIP_GLOBAL_INIT is this definition): ours, exported by the link
 * (Makefile: --export-dynamic-symbol), answers 1. Whoever uses GnuTLS initialises it first:
 * librtmp (RTMP_TLS_Init), libldap (tls_g.c tlsg_init) and libmicrohttpd (--listen) call
 * gnutls_global_init themselves, each import it (readelf --dyn-syms). test/bats/devices-dra.bats
 * checks that GnuTLS does not initialise (GNUTLS_DEBUG_LEVEL prints nothing).
 */
int _gnutls_global_init_skip(void);
int _gnutls_global_init_skip(void)
{
	return 1;
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
	/* one claim GET (or slice call), each of 3 tries; the kubelet waits 45 s a call */
	kube_client_set_timeout(
	    *out, (o->dra_api_timeout_s ? o->dra_api_timeout_s : API_TIMEOUT_S) * 1000);
	kube_client_set_retries(*out, 2, 200);
	return 0;
}

static int work(void *ctx, struct log_err *err);

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
	d->resync_ms = (o->dra_resync_s ? o->dra_resync_s : RESYNC_S) * 1000;
	d->sweep_ms = (o->dra_sweep_s ? o->dra_sweep_s : SWEEP_S) * 1000;
	d->next_sweep = 0; /* the first pass sweeps: claims deleted while we were down */
	if (r == 0)
		r = dra_srv_every(d->srv, d->resync_ms, work, d, err);
	if (r < 0)
		return r;
	*fd = dra_srv_fd(d->srv);
	return 0;
}

/*
 * On the worker, after each scan, every --dra-resync seconds and after each registration: our
 * pool's devices with their attributes to the API server (nothing written when unchanged); and
 * when due (at start, then every --dra-sweep seconds) the stale-claim sweep.
 */
static int work(void *ctx, struct log_err *err)
{
	struct side *d = ctx;
	struct snap *s = snap_get(d);
	bool synced = s != NULL;
	int r = s ? dra_pub_sync(d->pub, s->sd, s->n, err) : 0;

	snap_put(d, s);
	/* resource.k8s.io/v1 not served (an API server before 1.34): said once, asked quietly */
	if (r == -ENOTSUP && !d->unserved)
		log_error(
		    "dra: %s; no ResourceSlices are published, asked again every %d s without more messages",
		    err->msg, d->resync_ms / 1000);
	else if (r < 0 && r != -ENOTSUP)
		log_warn("dra: ResourceSlices: %s; again in %d s", err->msg, d->resync_ms / 1000);
	else if (r >= 0 && synced && d->unserved)
		log_info(
		    "dra: the API server serves resource.k8s.io/v1 now: ResourceSlices published");
	if (synced)
		d->unserved = r == -ENOTSUP;
	log_err_clear(err);
	/*
	 * The sweep follows a pass whose LIST did not say "not served": there a claim's GET is
	 * 404 too, which the sweep would read as "claim deleted".
	 */
	if (!synced || d->unserved || now_ms() < d->next_sweep)
		return 0;
	r = dra_prep_sweep(d->prep, err); /* claims deleted in the API meanwhile */
	if (r < 0) {
		log_warn("%s; the prepared claims stay until the kubelet unprepares them, or the "
			 "next sweep",
			 err->msg);
		log_err_clear(err);
	}
	d->next_sweep = now_ms() + d->sweep_ms;
	return 0;
}

static int ready(void *ctx, struct log_err *err)
{
	struct side *d = ctx;

	return dra_srv_ready(d->srv, err);
}

/* A scan of class cls: after the last DRA class's, a new snapshot for the worker, then a sync. */
static void update(void *ctx, size_t cls, const struct devices_found *f)
{
	struct side *d = ctx;
	struct snap *s, *old;

	if (!d->f)
		return;
	d->f[cls] = f;
	if (cls != d->last)
		return;
	s = snap_build(d);
	if (!s) {
		log_warn("dra: out of memory: the slices keep the previous scan's devices");
		return;
	}
	pthread_mutex_lock(&d->mu);
	old = d->cur;
	d->cur = s;
	pthread_mutex_unlock(&d->mu);
	snap_put(d, old);
	dra_srv_kick(d->srv);
}

static void stop(void *ctx)
{
	struct side *d = ctx;

	dra_srv_free(d->srv); /* the worker stops first: nothing else holds a snapshot then */
	snap_put(d, d->held);
	snap_put(d, d->cur);
	dra_pub_free(d->pub);
	dra_prep_free(d->prep);
	kube_client_free(d->kube);
	free(d->f);
	d->c = NULL;
	d->f = NULL;
	d->kube = NULL;
	d->prep = NULL;
	d->srv = NULL;
	d->pub = NULL;
	d->cur = d->held = NULL;
}

const struct devices_dra_hooks devices_dra_side = {start, ready, update, stop, &side};
