// SPDX-License-Identifier: GPL-2.0-or-later
/* dra_pb: the DRA and registration messages (protoc-c's code from dra.proto and
 * pluginregistration.proto) <-> dra.h's structs, framed by pkg/kubelet's kpb_pack. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/dra.pb-c.h"
#include "dra/dra_internal.h"
#include "dra/pluginregistration.pb-c.h"
#include "log/log.h"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest PrepReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest UnprepReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse PrepResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry PrepEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse PrepOne;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse UnprepResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry
    UnprepEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse UnprepOne;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device PbDevice;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim PbClaim;

int dpb_info(const char *driver, const char *endpoint, struct kpb_buf *out)
{
	Pluginregistration__PluginInfo m = PLUGINREGISTRATION__PLUGIN_INFO__INIT;
	/* v1 first: the kubelet takes the first it knows */
	static char v1[] = "v1.DRAPlugin", v1beta1[] = "v1beta1.DRAPlugin",
		    type[] = DRA_PLUGIN_TYPE;
	char *versions[] = {v1, v1beta1};

	m.type = type;
	m.name = (char *)driver;
	m.endpoint = (char *)endpoint;
	m.n_supported_versions = 2;
	m.supported_versions = versions;
	return kpb_pack(&m, out);
}

int dpb_status(const uint8_t *msg, size_t len, bool *registered, char *errmsg, size_t cap,
	       struct log_err *err)
{
	Pluginregistration__RegistrationStatus *m =
	    pluginregistration__registration_status__unpack(NULL, len, msg);

	if (!m)
		return log_err_set(err, -EINVAL, "RegistrationStatus: not a valid message");
	*registered = m->plugin_registered;
	snprintf(errmsg, cap, "%s", m->error ? m->error : "");
	pluginregistration__registration_status__free_unpacked(m, NULL);
	return 0;
}

int dpb_empty_ok(const uint8_t *msg, size_t len, struct log_err *err)
{
	Pluginregistration__InfoRequest *m =
	    pluginregistration__info_request__unpack(NULL, len, msg);

	if (!m)
		return log_err_set(err, -EINVAL, "InfoRequest: not a valid message");
	pluginregistration__info_request__free_unpacked(m, NULL);
	return 0;
}

int dpb_empty_resp(struct kpb_buf *out)
{
	Pluginregistration__RegistrationStatusResponse m =
	    PLUGINREGISTRATION__REGISTRATION_STATUS_RESPONSE__INIT;

	return kpb_pack(&m, out);
}

/* A varint at *at (at most 10 bytes): 0 and *at past it, or -EINVAL. */
static int varint(const uint8_t *m, size_t len, size_t *at, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 70 && *at < len; shift += 7) {
		uint8_t b = m[(*at)++];

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -EINVAL;
}

/*
 * How many claims (field 1, length-delimited) a Node(Un)prepareResourcesRequest holds, from a
 * walk over its top-level fields (protobuf encoding: a varint key, then a varint, 8 bytes, a
 * varint length and that many bytes, or 4 bytes), before protobuf-c allocates one Claim per
 * entry: a 4 MiB request of 2-byte empty claims would be 2 million allocations. -EINVAL when
 * the walk does not end exactly at len (protobuf-c would refuse it too).
 */
static int count_claims(const uint8_t *m, size_t len, size_t *n)
{
	size_t at = 0;
	uint64_t key, v;

	*n = 0;
	while (at < len) {
		if (varint(m, len, &at, &key) < 0)
			return -EINVAL;
		switch (key & 7) {
		case 0:
			if (varint(m, len, &at, &v) < 0)
				return -EINVAL;
			break;
		case 1:
		case 5:
			v = (key & 7) == 1 ? 8 : 4;
			if (len - at < v)
				return -EINVAL;
			at += v;
			break;
		case 2:
			if (varint(m, len, &at, &v) < 0 || v > len - at)
				return -EINVAL;
			at += v;
			*n += key >> 3 == 1;
			break;
		default:
			return -EINVAL;
		}
	}
	return 0;
}

/* The claims of a request, checked (every one names namespace, uid and name), copied into q. */
static int claims_of(PbClaim **pc, size_t n, bool prepare, struct dpb_req **out,
		     struct log_err *err)
{
	size_t bytes = sizeof(struct dpb_req) + (n + 1) * sizeof(struct dra_claim);
	struct dpb_req *q;
	char *p;

	for (size_t i = 0; i < n; i++) {
		if (!*pc[i]->uid || !*pc[i]->name || !*pc[i]->namespace_)
			return log_err_set(err, -EINVAL,
					   "claim %zu: namespace, uid and name are required", i);
		bytes += strlen(pc[i]->namespace_) + strlen(pc[i]->uid) + strlen(pc[i]->name) + 3;
	}
	q = malloc(bytes);
	if (!q)
		return log_err_set(err, -ENOMEM, "out of memory");
	q->c = (struct dra_claim *)(q + 1);
	q->n = n;
	q->prepare = prepare;
	q->bytes = bytes;
	p = (char *)(q->c + n + 1);
	for (size_t i = 0; i < n; i++) {
		const char *f[3] = {pc[i]->namespace_, pc[i]->uid, pc[i]->name};
		const char *d[3];

		for (int k = 0; k < 3; k++) {
			size_t l = strlen(f[k]) + 1;

			memcpy(p, f[k], l);
			d[k] = p;
			p += l;
		}
		q->c[i] = (struct dra_claim){d[0], d[1], d[2]};
	}
	*out = q;
	return 0;
}

static void results_free(const struct dra_ops *ops, void *ctx, struct dra_result *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++)
		if (ops->free_result)
			ops->free_result(ctx, &r[i]);
	free(r);
}

static int encode_prepare(const struct dra_claim *c, const struct dra_result *r, size_t n,
			  struct kpb_buf *out)
{
	PrepResp m = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
	size_t nd = 0, at = 0;
	PrepEntry *e, **ep;
	PrepOne *one;
	PbDevice *d, **dp;
	char **req;
	int rc = -ENOMEM;

	for (size_t i = 0; i < n; i++)
		nd += r[i].err[0] ? 0 : r[i].n;
	e = calloc(n + 1, sizeof(*e));
	ep = calloc(n + 1, sizeof(*ep));
	one = calloc(n + 1, sizeof(*one));
	d = calloc(nd + 1, sizeof(*d));
	dp = calloc(nd + 1, sizeof(*dp));
	req = calloc(nd + 1, sizeof(*req));
	if (!e || !ep || !one || !d || !dp || !req)
		goto out;
	for (size_t i = 0; i < n; i++) {
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__claims_entry__init(
		    &e[i]);
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__init(&one[i]);
		e[i].key = (char *)c[i].uid;
		e[i].value = &one[i];
		ep[i] = &e[i];
		if (r[i].err[0]) {
			one[i].error = (char *)r[i].err;
			continue;
		}
		one[i].devices = dp + at;
		one[i].n_devices = r[i].n;
		for (size_t k = 0; k < r[i].n; k++, at++) {
			const struct dra_device *v = &r[i].devs[k];

			k8s__io__kubelet__pkg__apis__dra__v1__device__init(&d[at]);
			if (v->request && *v->request) {
				req[at] = (char *)v->request;
				d[at].request_names = &req[at];
				d[at].n_request_names = 1;
			}
			d[at].pool_name = (char *)v->pool;
			d[at].device_name = (char *)v->device;
			d[at].cdi_device_ids = (char **)v->cdi;
			d[at].n_cdi_device_ids = v->n_cdi;
			dp[at] = &d[at];
		}
	}
	m.claims = ep;
	m.n_claims = n;
	rc = kpb_pack(&m, out);
out:
	free(e);
	free(ep);
	free(one);
	free(d);
	free(dp);
	free(req);
	return rc;
}

static int encode_unprepare(const struct dra_claim *c, const struct dra_result *r, size_t n,
			    struct kpb_buf *out)
{
	UnprepResp m =
	    K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_RESPONSE__INIT;
	UnprepEntry *e = calloc(n + 1, sizeof(*e));
	UnprepEntry **ep = calloc(n + 1, sizeof(*ep));
	UnprepOne *one = calloc(n + 1, sizeof(*one));
	int rc = -ENOMEM;

	if (!e || !ep || !one)
		goto out;
	for (size_t i = 0; i < n; i++) {
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__claims_entry__init(
		    &e[i]);
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resource_response__init(
		    &one[i]);
		e[i].key = (char *)c[i].uid;
		e[i].value = &one[i];
		one[i].error = (char *)r[i].err;
		ep[i] = &e[i];
	}
	m.claims = ep;
	m.n_claims = n;
	rc = kpb_pack(&m, out);
out:
	free(e);
	free(ep);
	free(one);
	return rc;
}

int dpb_decode(const uint8_t *msg, size_t len, bool prepare, struct dpb_req **out,
	       struct log_err *err)
{
	const char *what =
	    prepare ? "NodePrepareResourcesRequest" : "NodeUnprepareResourcesRequest";
	PrepReq *pr = NULL;
	UnprepReq *ur = NULL;
	size_t n;
	int rc;

	*out = NULL;
	if (count_claims(msg, len, &n) < 0)
		return log_err_set(err, -EINVAL, "%s: not a valid message", what);
	if (n > DRA_CLAIMS_MAX)
		return log_err_set(err, -E2BIG, "%zu claims in one call: limit %d", n,
				   DRA_CLAIMS_MAX);
	if (prepare)
		pr = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__unpack(
		    NULL, len, msg);
	else
		ur = k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__unpack(
		    NULL, len, msg);
	if (!pr && !ur)
		return log_err_set(err, -EINVAL, "%s: not a valid message", what);
	rc = claims_of(pr ? pr->claims : ur->claims, pr ? pr->n_claims : ur->n_claims, prepare, out,
		       err);
	if (pr)
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__free_unpacked(
		    pr, NULL);
	if (ur)
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__free_unpacked(
		    ur, NULL);
	return rc;
}

void dpb_req_free(struct dpb_req *q)
{
	free(q);
}

int dpb_answer(const struct dpb_req *q, const struct dra_ops *ops, void *ctx, long long deadline,
	       struct kpb_buf *out, struct log_err *err)
{
	struct dra_result *r = calloc(q->n ? q->n : 1, sizeof(*r));
	int rc;

	if (!r)
		return log_err_set(err, -ENOMEM, "out of memory");
	rc = q->n ? (q->prepare ? ops->prepare : ops->unprepare)(ctx, q->c, q->n, deadline, r, err)
		  : 0;
	if (rc == 0) {
		rc = q->prepare ? encode_prepare(q->c, r, q->n, out)
				: encode_unprepare(q->c, r, q->n, out);
		if (rc < 0)
			log_err_set(err, rc, "cannot encode the answer: %s",
				    rc == -E2BIG ? "over the 4 MiB message limit" : strerror(-rc));
	}
	results_free(ops, ctx, r, q->n);
	return rc;
}
