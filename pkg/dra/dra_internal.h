/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dra_internal: the stages of pkg/dra, called one way:
 *   dra_pb (messages <-> dra.h's structs, framing by pkg/kubelet's kpb_pack)
 *   <- dra_srv (sockets, connections over pkg/kubelet's kubelet_grpc, method routing);
 *   dra_slice (devices -> Device JSON, the API's rules) <- dra_pub (ResourceSlices via pkg/kube).
 * Limits (also in nodeprobe-devices(8)): DRA_CLAIMS_MAX claims a call, DRA_MAX_CONNS
 * connections, and pkg/kubelet's per-connection ones (KPB_MAX_MSG, KG_MAX_STREAMS, KG_MAX_IN,
 * KG_MAX_OUT, KG_REQ_DEADLINE_MS).
 */
#ifndef NP_DRA_INTERNAL_H
#define NP_DRA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "dra/dra.h"
#include "kubelet/kubelet_internal.h"

/* PluginInfo of the driver, its service socket as endpoint. */
int dpb_info(const char *driver, const char *endpoint, struct kpb_buf *out);
/* Decode a RegistrationStatus. */
int dpb_status(const uint8_t *msg, size_t len, bool *registered, char *errmsg, size_t cap,
	       struct log_err *err);
/* Check an InfoRequest; encode a RegistrationStatusResponse. */
int dpb_empty_ok(const uint8_t *msg, size_t len, struct log_err *err);
int dpb_empty_resp(struct kpb_buf *out);
/*
 * A NodePrepareResources (prepare) or NodeUnprepareResources call: decode, ask ops, encode
 * the answer (every claim of the request in its map). -EINVAL (bad request), -E2BIG (too many
 * claims, answer too large), or the provider's error, with err set.
 */
int dpb_call(const uint8_t *msg, size_t len, bool prepare, const struct dra_ops *ops, void *ctx,
	     struct kpb_buf *out, struct log_err *err);

/* ---- dra_slice.c: the devices as the API takes them (used by dra_pub.c) */

#define DRA_WARNED_MAX 1024 /* devices and attributes warned about once; then no more warnings */

/* What dra_slice_build has warned about (one warning per device and attribute, for a run). */
struct dra_warned {
	char **keys; /* "<device>/<attribute>" */
	size_t n;
	bool full; /* DRA_WARNED_MAX reached (said once) */
};
void dra_warned_free(struct dra_warned *w);

/*
 * Devices d[0..n) as the API takes them: *chunks[0..*k) are JSON arrays of at most
 * DRA_SLICE_DEVICES Device objects, sorted by name, at least one (maybe empty) array. A device
 * whose name is no DNS label or is given twice, and an attribute the API would refuse (its
 * name, type, a string or version over 64 bytes, no UTF-8, no semver, over 32 a device, given
 * twice), is left out with one warning (w) naming device and attribute. 0, or -ENOMEM with err
 * and nothing in *chunks. Free with dra_chunks_free.
 */
int dra_slice_build(const struct dra_slice_dev *d, size_t n, struct dra_warned *w, json_t ***chunks,
		    size_t *k, struct log_err *err);
void dra_chunks_free(json_t **chunks, size_t k);

#endif
