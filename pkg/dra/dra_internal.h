/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dra_internal: the stages of pkg/dra, called one way:
 *   dra_pb (messages <-> dra.h's structs, framing by pkg/kubelet's kpb_pack)
 *   <- dra_srv (sockets, connections over pkg/kubelet's kubelet_grpc, method routing).
 * Limits (also in nodeprobe-devices(8)): DRA_CLAIMS_MAX claims a call, DRA_MAX_CONNS
 * connections, and pkg/kubelet's per-connection ones (KPB_MAX_MSG, KG_MAX_STREAMS, KG_MAX_IN,
 * KG_MAX_OUT, KG_REQ_DEADLINE_MS).
 */
#ifndef NP_DRA_INTERNAL_H
#define NP_DRA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
