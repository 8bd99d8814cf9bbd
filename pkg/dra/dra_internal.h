/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dra_internal: the stages of pkg/dra, called one way:
 *   dra_pb (messages <-> dra.h's structs, framing by pkg/kubelet's kpb_pack),
 *   dra_work (the worker thread: a job queue, the periodic task, an eventfd back)
 *   <- dra_srv (sockets, connections over pkg/kubelet's kubelet_grpc, method routing; the
 *      Prepare and Unprepare calls answered later, from the worker's done jobs);
 *   dra_state (the checkpoint and claim spec files: load, check, write, clean)
 *   <- dra_prep (claims from the API server, prepared into CDI specs; dra_ops of dra_srv's
 *      caller, run on the worker);
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
/* A NodePrepareResources or NodeUnprepareResources request: its claims, in one allocation. */
struct dpb_req {
	struct dra_claim *c; /* c[0..n), strings inside this block */
	size_t n;
	bool prepare;
	size_t bytes; /* the block's size (pkg/dra bounds what waits for the worker) */
};

/*
 * Decode a request: its claims counted from the wire first (over DRA_CLAIMS_MAX: -E2BIG before
 * anything is unpacked), then unpacked, checked and copied into *out (free with dpb_req_free).
 * -EINVAL (bad request), -E2BIG, -ENOMEM, with err set.
 */
int dpb_decode(const uint8_t *msg, size_t len, bool prepare, struct dpb_req **out,
	       struct log_err *err);
void dpb_req_free(struct dpb_req *q);
/*
 * Answer q: ask ops (deadline passed on), encode the answer (every claim of the request in its
 * map) into out. -E2BIG (answer too large) or the provider's error, with err set.
 */
int dpb_answer(const struct dpb_req *q, const struct dra_ops *ops, void *ctx, long long deadline,
	       struct kpb_buf *out, struct log_err *err);

/* ---- dra_state: the prepared claims on disk (dra_prep's state, the worker's only). */
struct pdev {
	char *request, *pool, *device;
	char *cdi; /* one id: <driver>/claim=<uid>-<device> */
	bool admin;
};

struct pclaim {
	char *uid, *ns, *name;
	struct pdev *d;
	size_t n;
};

struct dra_prep {
	struct dra_prep_opts o;
	char *driver, *pool, *state_dir, *cdi_dir;
	struct pclaim **c; /* each allocated alone: results point into them */
	size_t n;
};

void dst_claim_free(struct pclaim *c);
/* The index of claim uid in p->c, or -1. */
long dst_find(const struct dra_prep *p, const char *uid);
/* "<driver>-claim_<uid>.json" into out: 0, or -EINVAL (not a safe file name). */
int dst_spec_name(const struct dra_prep *p, const char *uid, char *out, size_t cap);
/* Remove uid's claim spec if it is ours (a foreign file of its name: a warning, left). */
void dst_unlink(const struct dra_prep *p, const char *uid);
/* Write p->c as the checkpoint (atomically; at most DRA_CHECKPOINT_BYTES_MAX). 0 or -errno. */
int dst_write(struct dra_prep *p, struct log_err *err);
/*
 * Is v 1..max characters of [a-z0-9-] (and '.' with dots), '-' not first or last (a Kubernetes
 * DNS label or subdomain)? NULL, or the rule it breaks (a static string).
 */
const char *dst_name_rule(const char *v, size_t max, bool dots);
/* Load the checkpoint into p->c (none: empty); a file not as we write it: -EBADMSG naming it. */
int dst_load(struct dra_prep *p, struct log_err *err);
/* Remove our dot-temp files older than max_age seconds (-1: any). */
void dst_clean_temps(struct dra_prep *p, long max_age);
/* Remove our claim specs the checkpoint does not hold. */
void dst_clean_orphans(struct dra_prep *p);

/* ---- dra_work: one worker thread, one job at a time. */
struct dwork;

/* A job: embed it first in the caller's struct. */
struct dwork_job {
	struct dwork_job *next;
	void (*run)(struct dwork_job *j); /* on the worker thread */
	bool ran;			  /* false: handed back by dwork_stop, never run */
};

/* A stopped worker with an eventfd. -ENOMEM / -errno with err. */
int dwork_new(struct dwork **out, struct log_err *err);
/* Start the thread (every signal blocked in it). 0 or -errno with err. */
int dwork_start(struct dwork *w, struct log_err *err);
/* The eventfd: readable when jobs are done (take them with dwork_done). */
int dwork_fd(const struct dwork *w);
/* Queue j (the caller bounds how many wait); it comes back through dwork_done. */
void dwork_push(struct dwork *w, struct dwork_job *j);
/* The periodic task fn(ctx) run on the worker when kicked (errors logged). */
void dwork_set_task(struct dwork *w, int (*fn)(void *ctx, struct log_err *err), void *ctx);
/* Run the task once soon: after the queued jobs; asked again before it starts, still once. */
void dwork_kick(struct dwork *w);
/* The jobs run since the last call, in order (a list by next), the caller's again. */
struct dwork_job *dwork_done(struct dwork *w);
/*
 * Stop the thread after its job or task in progress, join it, and hand back every job not
 * yet taken: the done ones, then those never run. Then dwork_free (which stops, too).
 */
struct dwork_job *dwork_stop(struct dwork *w);
void dwork_free(struct dwork *w);

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
