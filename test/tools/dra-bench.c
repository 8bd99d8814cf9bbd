// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dra-bench: DRA latency of a kubelet plugin, from a C client on pkg/kubelet's client side
 * (grpc_client.h: one HTTP/2 connection, as the kubelet keeps), and of the claim GET it makes.
 * Registers nothing: it dials the plugin's service socket (<plugins>/<driver>/dra.sock).
 *
 *   dra-bench SOCK N NAMESPACE NAME UID [KUBECONFIG]
 *
 * One warm-up round, then N rounds of: with KUBECONFIG, one GET of the ResourceClaim through
 * pkg/kube with the plugin's client settings (hooks/devices/dra.c: 5 s timeout, 2 retries; a
 * kept TLS connection), the API server's part of a prepare measured in the same moments; then
 * v1 NodePrepareResources and NodeUnprepareResources of the one claim (an unprepared claim is
 * read from the API server again at the next prepare, so every timed prepare holds one claim
 * GET). Every answer is checked: the claim's entry only, no error, the same devices each time.
 * Prints
 *   claim NAMESPACE/NAME (UID): request R pool P device D cdi ID[,ID][; request ...]
 *   prepare_calls=N p50_ms=.. p99_ms=.. max_ms=..
 *   unprepare_calls=N p50_ms=.. p99_ms=.. max_ms=..
 *   claim_get_calls=N p50_ms=.. p99_ms=.. max_ms=..      (with KUBECONFIG)
 * Exit 1 on a failed call or a wrong answer (named on stderr), 2 on usage.
 */
#include <stdarg.h>

#include "dra/dra.h"
#include "dra/dra.pb-c.h"
#include "grpc_client.h"
#include "kube/kube.h"
#include "strbuf/strbuf.h"

#define PREPARE	  "/" DRA_SVC_V1 "/NodePrepareResources"
#define UNPREPARE "/" DRA_SVC_V1 "/NodeUnprepareResources"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim Claim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest PrepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse PrepareAns;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse UnprepareAns;

/* Say what failed on stderr; returns rc. */
__attribute__((format(printf, 2, 3))) static int fail(int rc, const char *fmt, ...)
{
	va_list ap;

	fputs("dra-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return rc;
}

/* Check a NodePrepareResources answer for claim uid; its devices as one line into out. */
static int prepared(const struct gc_call *k, const char *uid, char *out, size_t cap)
{
	const uint8_t *m;
	size_t len, at = 0;
	PrepareAns *a;
	int rc = -EINVAL;

	a = kpb_unframe(k->body, k->n, &m, &len, NULL) < 0
		? NULL
		: k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__unpack(
		      NULL, len, m);
	if (!a) {
		snprintf(out, cap, "not one NodePrepareResourcesResponse");
		return -EINVAL;
	}
	if (a->n_claims != 1 || strcmp(a->claims[0]->key, uid) || !a->claims[0]->value) {
		snprintf(out, cap, "%zu claims in the answer, want only %s", a->n_claims, uid);
	} else if (a->claims[0]->value->error[0]) {
		snprintf(out, cap, "error: %s", a->claims[0]->value->error);
	} else if (!a->claims[0]->value->n_devices) {
		snprintf(out, cap, "no devices");
	} else {
		rc = 0;
		out[0] = 0;
		for (size_t i = 0; i < a->claims[0]->value->n_devices && at < cap; i++) {
			const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device *d =
			    a->claims[0]->value->devices[i];

			at += snprintf(out + at, cap - at, "%srequest %s pool %s device %s cdi",
				       i ? "; " : "", d->n_request_names ? d->request_names[0] : "",
				       d->pool_name, d->device_name);
			for (size_t j = 0; j < d->n_cdi_device_ids && at < cap; j++)
				at += snprintf(out + at, cap - at, "%c%s", j ? ',' : ' ',
					       d->cdi_device_ids[j]);
		}
	}
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__free_unpacked(a,
											     NULL);
	return rc;
}

/* Check a NodeUnprepareResources answer: claim uid's entry, no error. */
static int unprepared(const struct gc_call *k, const char *uid, char *out, size_t cap)
{
	const uint8_t *m;
	size_t len;
	UnprepareAns *a;
	int rc = -EINVAL;

	a = kpb_unframe(k->body, k->n, &m, &len, NULL) < 0
		? NULL
		: k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__unpack(
		      NULL, len, m);
	if (!a) {
		snprintf(out, cap, "not one NodeUnprepareResourcesResponse");
		return -EINVAL;
	}
	if (a->n_claims != 1 || strcmp(a->claims[0]->key, uid) || !a->claims[0]->value)
		snprintf(out, cap, "%zu claims in the answer, want only %s", a->n_claims, uid);
	else if (a->claims[0]->value->error[0])
		snprintf(out, cap, "error: %s", a->claims[0]->value->error);
	else
		rc = 0;
	k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__free_unpacked(
	    a, NULL);
	return rc;
}

/* One pair of calls and their checks; the first prepare answer goes to first (2048 bytes),
 * later ones must equal it. */
static int pair(struct kg_conn *c, struct gc_call *k, const PrepareReq *req, const char *uid,
		char *first, double *tp, double *tu)
{
	char got[2048];
	double t0 = gc_now_ms();
	int rc = gc_unary(c, k, PREPARE, req);

	*tp = gc_now_ms() - t0;
	if (rc < 0)
		return fail(rc, "NodePrepareResources: %s (gRPC status %d: %s)", strerror(-rc),
			    k->status, k->msg);
	if (prepared(k, uid, got, sizeof(got)) < 0)
		return fail(-EINVAL, "NodePrepareResources: claim %s: %s", uid, got);
	if (!first[0])
		snprintf(first, 2048, "%s", got);
	else if (strcmp(first, got))
		return fail(-EINVAL, "NodePrepareResources: claim %s: %s, first %s", uid, got,
			    first);
	t0 = gc_now_ms();
	rc = gc_unary(c, k, UNPREPARE, req); /* the same message: both are claims = 1 */
	*tu = gc_now_ms() - t0;
	if (rc < 0)
		return fail(rc, "NodeUnprepareResources: %s (gRPC status %d: %s)", strerror(-rc),
			    k->status, k->msg);
	if (unprepared(k, uid, got, sizeof(got)) < 0)
		return fail(-EINVAL, "NodeUnprepareResources: claim %s: %s", uid, got);
	return 0;
}

/* The claim GET as the plugin makes it: pkg/kube, the plugin's client settings. */
struct getter {
	struct kube_client *cl; /* NULL: no GETs timed */
	struct strbuf url, body;
	const char *what; /* "NAMESPACE/NAME" */
};

static int getter_new(struct getter *g, const char *kubeconfig, const char *ns, const char *name)
{
	static const struct kube_resource claims = {"/apis/resource.k8s.io/v1", "resourceclaims",
						    "ResourceClaim"};
	struct kube_config cfg = {0};
	struct log_err e = {0};
	int rc = kube_config_load(&cfg, kubeconfig, NULL, &e);

	if (rc == 0)
		rc = kube_client_new(&g->cl, &cfg, &e);
	kube_config_free(&cfg);
	if (rc < 0)
		return fail(rc, "%s: %s", kubeconfig, e.msg);
	kube_client_set_timeout(g->cl, 5000); /* as hooks/devices/dra.c sets them */
	kube_client_set_retries(g->cl, 2, 200);
	rc = kube_url(&g->url, kube_client_server(g->cl), &claims, ns, name, NULL);
	return rc < 0 ? fail(rc, "claim URL: %s", strerror(-rc)) : 0;
}

/* One timed GET of the claim (none without a client): 0, or -errno / the HTTP status. */
static int get_once(struct getter *g, double *t)
{
	struct log_err e = {0};
	double t0 = gc_now_ms();
	int rc;

	if (!g->cl)
		return 0;
	rc = kube_request(g->cl, "GET", g->url.buf, NULL, NULL, &g->body, &e);
	*t = gc_now_ms() - t0;
	if (rc < 0)
		return fail(rc, "GET claim %s: %s", g->what, e.msg);
	if (rc != 200)
		return fail(-EIO, "GET claim %s: the API server answered %d", g->what, rc);
	return 0;
}

int main(int argc, char **argv)
{
	Claim cl = K8S__IO__KUBELET__PKG__APIS__DRA__V1__CLAIM__INIT;
	Claim *cls[1] = {&cl};
	PrepareReq req = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_REQUEST__INIT;
	struct getter g = {NULL, STRBUF_INIT(8192), STRBUF_INIT(DRA_CLAIM_BYTES_MAX), NULL};
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	double *t = NULL;
	struct gc_call k = {0};
	char first[2048] = "", what[512];
	struct kg_conn *c = NULL;
	int rc;

	if ((argc != 6 && argc != 7) || n < 1 || n > 1000000) {
		fprintf(stderr, "usage: dra-bench SOCK N NAMESPACE NAME UID [KUBECONFIG]\n");
		return 2;
	}
	cl.namespace_ = argv[3];
	cl.name = argv[4];
	cl.uid = argv[5];
	req.n_claims = 1;
	req.claims = cls;
	snprintf(what, sizeof(what), "%s/%s", cl.namespace_, cl.name);
	g.what = what;
	t = calloc((size_t)n * 3, sizeof(double)); /* prepare, unprepare, GET times */
	rc = t ? gc_dial(argv[1], &k, &c) : -ENOMEM;
	if (rc < 0)
		fail(rc, "%s: %s", argv[1], strerror(-rc));
	else if (argc == 7)
		rc = getter_new(&g, argv[6], cl.namespace_, cl.name);
	/* i = -1: the connections' set-up, not measured */
	for (long i = -1; rc == 0 && i < n; i++) {
		double at[3] = {0};

		rc = get_once(&g, &at[2]);
		if (rc == 0)
			rc = pair(c, &k, &req, cl.uid, first, &at[0], &at[1]);
		for (int j = 0; i >= 0 && j < 3; j++)
			t[j * n + i] = at[j];
	}
	if (rc == 0) {
		printf("claim %s (%s): %s\n", what, cl.uid, first);
		gc_print("prepare", t, n);
		gc_print("unprepare", t + n, n);
		if (g.cl)
			gc_print("claim_get", t + 2 * n, n);
	}
	kg_conn_free(c);
	kube_client_free(g.cl);
	sb_free(&g.url);
	sb_free(&g.body);
	free(k.body);
	free(t);
	return rc < 0 ? 1 : 0;
}
