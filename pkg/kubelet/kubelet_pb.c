// SPDX-License-Identifier: GPL-2.0-or-later
/* kubelet_pb: device-plugin messages (protoc-c's code from deviceplugin.proto) <-> our structs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kubelet/deviceplugin.pb-c.h"
#include "kubelet/kubelet_internal.h"
#include "log/log.h"

void kpb_buf_free(struct kpb_buf *b)
{
	if (!b)
		return;
	free(b->p);
	b->p = NULL;
	b->len = 0;
}

/* Encode m behind the 5-byte gRPC prefix (uncompressed, big-endian length). */
static int pack(const ProtobufCMessage *m, struct kpb_buf *out)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *p;

	out->p = NULL;
	out->len = 0;
	if (n > KPB_MAX_MSG)
		return -E2BIG;
	p = malloc(KPB_PREFIX + n + 1);
	if (!p)
		return -ENOMEM;
	p[0] = 0;
	p[1] = (uint8_t)(n >> 24);
	p[2] = (uint8_t)(n >> 16);
	p[3] = (uint8_t)(n >> 8);
	p[4] = (uint8_t)n;
	protobuf_c_message_pack(m, p + KPB_PREFIX);
	out->p = p;
	out->len = KPB_PREFIX + n;
	return 0;
}

int kpb_pack(const void *msg, struct kpb_buf *out)
{
	return pack(msg, out);
}

int kpb_unframe(const uint8_t *body, size_t n, const uint8_t **msg, size_t *len,
		struct log_err *err)
{
	uint32_t l;

	if (n < KPB_PREFIX)
		return log_err_set(err, -EINVAL, "request body of %zu bytes: no gRPC message", n);
	if (body[0] != 0)
		return log_err_set(err, -ENOTSUP,
				   "compressed gRPC message (flag %u): not supported", body[0]);
	l = (uint32_t)body[1] << 24 | (uint32_t)body[2] << 16 | (uint32_t)body[3] << 8 | body[4];
	if (l > KPB_MAX_MSG)
		return log_err_set(err, -E2BIG, "gRPC message of %u bytes: limit %u", l,
				   KPB_MAX_MSG);
	if ((size_t)l != n - KPB_PREFIX)
		return log_err_set(err, -EINVAL,
				   "request body of %zu bytes holds not exactly one message (%u)",
				   n, l);
	*msg = body + KPB_PREFIX;
	*len = l;
	return 0;
}

int kpb_list(const struct kubelet_device *d, size_t n, struct kpb_buf *out)
{
	V1beta1__ListAndWatchResponse r = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
	V1beta1__Device *dv = NULL, **dp = NULL;
	V1beta1__TopologyInfo *topo = NULL;
	V1beta1__NUMANode *numa = NULL, **np = NULL;
	int rc = -ENOMEM;

	if (n) {
		dv = calloc(n, sizeof(*dv));
		dp = calloc(n, sizeof(*dp));
		topo = calloc(n, sizeof(*topo));
		numa = calloc(n, sizeof(*numa));
		np = calloc(n, sizeof(*np));
		if (!dv || !dp || !topo || !numa || !np)
			goto out;
	}
	for (size_t i = 0; i < n; i++) {
		v1beta1__device__init(&dv[i]);
		dv[i].id = (char *)d[i].id;
		dv[i].health = (char *)(d[i].healthy ? "Healthy" : "Unhealthy");
		if (d[i].numa_node >= 0) {
			v1beta1__topology_info__init(&topo[i]);
			v1beta1__numanode__init(&numa[i]);
			numa[i].id = d[i].numa_node;
			np[i] = &numa[i];
			topo[i].n_nodes = 1;
			topo[i].nodes = &np[i];
			dv[i].topology = &topo[i];
		}
		dp[i] = &dv[i];
	}
	r.n_devices = n;
	r.devices = dp;
	rc = pack(&r.base, out);
out:
	free(dv);
	free(dp);
	free(topo);
	free(numa);
	free(np);
	return rc;
}

int kpb_options(bool pre_start, bool preferred, struct kpb_buf *out)
{
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;

	o.pre_start_required = pre_start;
	o.get_preferred_allocation_available = preferred;
	return pack(&o.base, out);
}

int kpb_empty(struct kpb_buf *out)
{
	V1beta1__Empty e = V1BETA1__EMPTY__INIT;

	return pack(&e.base, out);
}

int kpb_register(const char *endpoint, const char *resource, bool preferred, struct kpb_buf *out)
{
	V1beta1__RegisterRequest r = V1BETA1__REGISTER_REQUEST__INIT;
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;

	o.get_preferred_allocation_available = preferred;
	r.version = (char *)KUBELET_API_VERSION;
	r.endpoint = (char *)endpoint;
	r.resource_name = (char *)resource;
	r.options = &o;
	return pack(&r.base, out);
}

int kpb_check_empty(const uint8_t *msg, size_t len, struct log_err *err)
{
	V1beta1__Empty *e = v1beta1__empty__unpack(NULL, len, msg);

	if (!e)
		return log_err_set(err, -EINVAL, "malformed Empty message (%zu bytes)", len);
	v1beta1__empty__free_unpacked(e, NULL);
	return 0;
}

int kpb_check_prestart(const uint8_t *msg, size_t len, struct log_err *err)
{
	V1beta1__PreStartContainerRequest *r =
	    v1beta1__pre_start_container_request__unpack(NULL, len, msg);

	if (!r)
		return log_err_set(err, -EINVAL, "malformed PreStartContainerRequest (%zu bytes)",
				   len);
	v1beta1__pre_start_container_request__free_unpacked(r, NULL);
	return 0;
}

/* One ContainerAllocateResponse from the provider's answer; pointers borrowed from a. */
struct calloc_bufs {
	V1beta1__ContainerAllocateResponse c;
	V1beta1__DeviceSpec *specs, **sp;
	V1beta1__Mount *mounts, **mp;
	V1beta1__ContainerAllocateResponse__EnvsEntry *envs, **ep;
	V1beta1__ContainerAllocateResponse__AnnotationsEntry *ann, **ap;
	V1beta1__CDIDevice *cdi, **cp;
};

static void calloc_bufs_free(struct calloc_bufs *b)
{
	free(b->specs);
	free(b->sp);
	free(b->mounts);
	free(b->mp);
	free(b->envs);
	free(b->ep);
	free(b->ann);
	free(b->ap);
	free(b->cdi);
	free(b->cp);
}

/* calloc that is happy with 0 (returns a non-NULL pointer or NULL on failure). */
static void *zalloc(size_t n, size_t sz)
{
	return calloc(n ? n : 1, sz);
}

static int fill_container(struct calloc_bufs *b, const struct kubelet_alloc *a)
{
	v1beta1__container_allocate_response__init(&b->c);
	b->specs = zalloc(a->n_specs, sizeof(*b->specs));
	b->sp = zalloc(a->n_specs, sizeof(*b->sp));
	b->mounts = zalloc(a->n_mounts, sizeof(*b->mounts));
	b->mp = zalloc(a->n_mounts, sizeof(*b->mp));
	b->envs = zalloc(a->n_envs, sizeof(*b->envs));
	b->ep = zalloc(a->n_envs, sizeof(*b->ep));
	b->ann = zalloc(a->n_annotations, sizeof(*b->ann));
	b->ap = zalloc(a->n_annotations, sizeof(*b->ap));
	b->cdi = zalloc(a->n_cdi, sizeof(*b->cdi));
	b->cp = zalloc(a->n_cdi, sizeof(*b->cp));
	if (!b->specs || !b->sp || !b->mounts || !b->mp || !b->envs || !b->ep || !b->ann ||
	    !b->ap || !b->cdi || !b->cp)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_specs; i++) {
		v1beta1__device_spec__init(&b->specs[i]);
		b->specs[i].container_path = (char *)a->specs[i].container_path;
		b->specs[i].host_path = (char *)a->specs[i].host_path;
		b->specs[i].permissions = (char *)a->specs[i].permissions;
		b->sp[i] = &b->specs[i];
	}
	for (size_t i = 0; i < a->n_mounts; i++) {
		v1beta1__mount__init(&b->mounts[i]);
		b->mounts[i].container_path = (char *)a->mounts[i].container_path;
		b->mounts[i].host_path = (char *)a->mounts[i].host_path;
		b->mounts[i].read_only = a->mounts[i].read_only;
		b->mp[i] = &b->mounts[i];
	}
	for (size_t i = 0; i < a->n_envs; i++) {
		v1beta1__container_allocate_response__envs_entry__init(&b->envs[i]);
		b->envs[i].key = (char *)a->envs[i].key;
		b->envs[i].value = (char *)a->envs[i].value;
		b->ep[i] = &b->envs[i];
	}
	for (size_t i = 0; i < a->n_annotations; i++) {
		v1beta1__container_allocate_response__annotations_entry__init(&b->ann[i]);
		b->ann[i].key = (char *)a->annotations[i].key;
		b->ann[i].value = (char *)a->annotations[i].value;
		b->ap[i] = &b->ann[i];
	}
	for (size_t i = 0; i < a->n_cdi; i++) {
		v1beta1__cdidevice__init(&b->cdi[i]);
		b->cdi[i].name = (char *)a->cdi_names[i];
		b->cp[i] = &b->cdi[i];
	}
	b->c.n_devices = a->n_specs;
	b->c.devices = b->sp;
	b->c.n_mounts = a->n_mounts;
	b->c.mounts = b->mp;
	b->c.n_envs = a->n_envs;
	b->c.envs = b->ep;
	b->c.n_annotations = a->n_annotations;
	b->c.annotations = b->ap;
	b->c.n_cdi_devices = a->n_cdi;
	b->c.cdi_devices = b->cp;
	return 0;
}

int kpb_allocate(const uint8_t *msg, size_t len, const struct kubelet_ops *ops, void *ctx,
		 size_t res, struct kpb_buf *out, int *status, struct log_err *err)
{
	V1beta1__AllocateRequest *req = v1beta1__allocate_request__unpack(NULL, len, msg);
	V1beta1__AllocateResponse resp = V1BETA1__ALLOCATE_RESPONSE__INIT;
	struct kubelet_alloc *al = NULL;
	struct calloc_bufs *bufs = NULL;
	V1beta1__ContainerAllocateResponse **cr = NULL;
	size_t n = 0, done = 0;
	int rc;

	*status = KG_INVALID_ARGUMENT;
	if (!req)
		return log_err_set(err, -EINVAL, "malformed AllocateRequest (%zu bytes)", len);
	n = req->n_container_requests;
	*status = KG_INTERNAL;
	rc = -ENOMEM;
	al = zalloc(n, sizeof(*al));
	bufs = zalloc(n, sizeof(*bufs));
	cr = zalloc(n, sizeof(*cr));
	if (!al || !bufs || !cr) {
		log_err_set(err, rc, "out of memory");
		goto out;
	}
	for (; done < n; done++) {
		const V1beta1__ContainerAllocateRequest *c = req->container_requests[done];

		rc = ops->allocate(ctx, res, (const char *const *)c->devices_ids, c->n_devices_ids,
				   &al[done], err);
		if (rc < 0) {
			*status = rc == -ENOENT ? KG_NOT_FOUND : KG_UNKNOWN;
			goto out;
		}
		rc = fill_container(&bufs[done], &al[done]);
		cr[done] = &bufs[done].c;
		if (rc < 0) {
			done++;
			log_err_set(err, rc, "out of memory");
			goto out;
		}
	}
	resp.n_container_responses = n;
	resp.container_responses = cr;
	rc = pack(&resp.base, out);
	if (rc < 0) {
		*status = KG_RESOURCE_EXHAUSTED;
		log_err_set(err, rc, "AllocateResponse larger than %u bytes", KPB_MAX_MSG);
	} else {
		*status = KG_OK;
	}
out:
	for (size_t i = 0; i < done && bufs; i++) {
		calloc_bufs_free(&bufs[i]);
		if (ops->free_alloc)
			ops->free_alloc(ctx, &al[i]);
	}
	free(al);
	free(bufs);
	free(cr);
	v1beta1__allocate_request__free_unpacked(req, NULL);
	return rc;
}

int kpb_preferred(const uint8_t *msg, size_t len, const struct kubelet_ops *ops, void *ctx,
		  size_t res, struct kpb_buf *out, int *status, struct log_err *err)
{
	V1beta1__PreferredAllocationRequest *req =
	    v1beta1__preferred_allocation_request__unpack(NULL, len, msg);
	V1beta1__PreferredAllocationResponse resp = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
	V1beta1__ContainerPreferredAllocationResponse *cv = NULL, **cp = NULL;
	const char **ids = NULL;
	size_t n, total = 0, at = 0;
	int rc = -ENOMEM;

	*status = KG_INVALID_ARGUMENT;
	if (!req)
		return log_err_set(err, -EINVAL, "malformed PreferredAllocationRequest (%zu bytes)",
				   len);
	n = req->n_container_requests;
	for (size_t i = 0; i < n; i++) {
		const V1beta1__ContainerPreferredAllocationRequest *c = req->container_requests[i];

		if (c->allocation_size < 0 ||
		    (size_t)c->allocation_size > c->n_available_deviceids) {
			rc = log_err_set(
			    err, -EINVAL,
			    "allocation_size %d of container %zu: %zu devices available",
			    c->allocation_size, i, c->n_available_deviceids);
			goto out;
		}
		total += (size_t)c->allocation_size;
	}
	*status = KG_INTERNAL;
	cv = zalloc(n, sizeof(*cv));
	cp = zalloc(n, sizeof(*cp));
	ids = zalloc(total, sizeof(*ids));
	if (!cv || !cp || !ids) {
		log_err_set(err, rc, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const V1beta1__ContainerPreferredAllocationRequest *c = req->container_requests[i];
		size_t size = (size_t)c->allocation_size;

		rc = ops->preferred(ctx, res, (const char *const *)c->available_deviceids,
				    c->n_available_deviceids,
				    (const char *const *)c->must_include_deviceids,
				    c->n_must_include_deviceids, size, ids + at, err);
		if (rc < 0) {
			*status = rc == -ENOENT ? KG_NOT_FOUND : KG_UNKNOWN;
			goto out;
		}
		if ((size_t)rc > size)
			rc = (int)size;
		v1beta1__container_preferred_allocation_response__init(&cv[i]);
		cv[i].n_deviceids = (size_t)rc;
		cv[i].deviceids = (char **)(ids + at);
		cp[i] = &cv[i];
		at += size;
	}
	resp.n_container_responses = n;
	resp.container_responses = cp;
	rc = pack(&resp.base, out);
	if (rc < 0) {
		*status = KG_RESOURCE_EXHAUSTED;
		log_err_set(err, rc, "PreferredAllocationResponse larger than %u bytes",
			    KPB_MAX_MSG);
	} else {
		*status = KG_OK;
	}
out:
	free(cv);
	free(cp);
	free(ids);
	v1beta1__preferred_allocation_request__free_unpacked(req, NULL);
	return rc;
}
