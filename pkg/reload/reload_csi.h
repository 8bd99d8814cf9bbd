/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_csi: Reloader's Secrets Store CSI integration (reload_csi.c), part of the input stage:
 * reload_sync.c hands it CLS_SPC's and CLS_SPCS's LIST and WATCH items; reload_run.c frees its
 * table. */
#ifndef NP_RELOAD_CSI_H
#define NP_RELOAD_CSI_H

#include "reload/reload_internal.h"

#define RELOAD_SPC_OBJECTS_MAX 4096	 /* status.objects of one status object hashed */
#define RELOAD_SPC_HASHED_MAX  (1 << 20) /* bytes of its "id=version;..." string */
#define RELOAD_CSI_RETRY_MAX_S 300	 /* a 403 on a CSI resource: LIST again at most this late */

/*
 * Reloader's hash of a SecretProviderClassPodStatus's status (jansson, borrowed; NULL: none):
 * SHA-1 in hex over "<id>=<version>" per status.objects[] and
 * "SecretProviderClassName=<status.secretProviderClassName>", sorted bytewise, joined by ";"
 * (Reloader v1.4.21 internal/pkg/util/util.go GetSHAfromSecretProviderClassPodStatus). Returns
 * 0, -E2BIG (more than RELOAD_SPC_OBJECTS_MAX objects or RELOAD_SPC_HASHED_MAX bytes) or
 * -ENOMEM.
 */
int reload_spc_hash(json_t *status, char hex[RELOAD_HASH_HEX]);
/*
 * A SecretProviderClassPodStatus item of s's LIST or WATCH (obj borrowed): kept as its
 * SecretProviderClass name and hash; an update (or a re-list) that changes the hash rolls what
 * selects that SecretProviderClass in its namespace (told through c->in.on->changed).
 */
void reload_csi_item(struct rs *s, const char *type, json_t *obj);
/* Status ns/name was skipped (over the stream's limits): what is known of it stays, seen. */
void reload_csi_keep(struct ctl *c, const char *ns, const char *name);
/* Before a (re-)LIST of the statuses in ns ("": all): mark them unseen. */
void reload_csi_mark(struct ctl *c, const char *ns);
/*
 * After it: forget those not seen (deleted while the watch was down, between a 410 and the
 * re-list), and each SecretProviderClass entry no status names any more.
 */
void reload_csi_sweep(struct ctl *c, const char *ns);
/*
 * A secretproviderclasses LIST or WATCH item other than ERROR and BOOKMARK (flat; s->name,
 * s->ns_, s->match and s->ignore read by reload_sync.c's callbacks, which handle those two):
 * kept as its name and the two bits; and one over the stream's limits
 * (kube_stream_ops.oversize). p is the struct rs.
 */
int reload_csi_spcs_item(void *p, const char *type, json_t *obj);
int reload_csi_spcs_oversize(void *p, const char *type, const char *ns, const char *name,
			     const char *what);
/* Before and after a (re-)LIST of the SecretProviderClasses in ns ("": all), as for statuses. */
void reload_csi_spcs_mark(struct ctl *c, const char *ns);
void reload_csi_spcs_sweep(struct ctl *c, const char *ns);
/* Whether class cls is one of the CSI driver's (CLS_SPC, CLS_SPCS). */
int reload_csi_cls(int cls);
/*
 * The HTTP status of a LIST page or a WATCH (watch 1) of CSI stream s (one resource in one
 * namespace, "": all). 200 clears s->absent (the WATCH is tried next) and marks a stream that
 * never failed available; it does not end a failure episode (only reload_csi_opened does, so a
 * LIST granted while the WATCH is forbidden does not flap). 403 (RBAC) or 404 (CRD absent or
 * removed) marks it unavailable, warns once per episode (and when its cause changes), sets
 * s->absent (LIST again later, no sweep: a grant re-lists and compares) and returns 1; anything
 * else returns 0 (the caller's usual handling). The metric and /healthz show the worst state of
 * the resource's streams.
 */
int reload_csi_status(struct rs *s, int status, int watch);
/* CSI stream s's WATCH answered 200 (open): the failure episode ends, its back-off starts over. */
void reload_csi_opened(struct rs *s);
/*
 * When to LIST unavailable CSI stream s again, in ms from now: 404: ABSENT_RECHECK_S; 403: 5 s
 * doubling with each retry of the episode (s->csi_fails, counted here) to
 * RELOAD_CSI_RETRY_MAX_S, each jittered down to half.
 */
long long reload_csi_retry_ms(struct rs *s);
/* Free c->in.spcps (statuses and SecretProviderClasses). */
void reload_csi_free(struct ctl *c);

#endif
