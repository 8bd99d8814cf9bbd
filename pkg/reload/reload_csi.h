/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_csi: Reloader's Secrets Store CSI integration (reload_csi.c), part of the input stage:
 * reload_sync.c hands it CLS_SPC's LIST and WATCH items; reload_run.c frees its table. */
#ifndef NP_RELOAD_CSI_H
#define NP_RELOAD_CSI_H

#include "reload/reload_internal.h"

#define RELOAD_SPC_OBJECTS_MAX	 4096	   /* status.objects of one status object hashed */
#define RELOAD_SPC_HASHED_MAX	 (1 << 20) /* bytes of its "id=version;..." string */
#define RELOAD_SPC_GET_MAX	 (1 << 20) /* bytes of a SecretProviderClass read by GET */
#define RELOAD_SPC_GET_MS	 5000	   /* its one try's timeout (no retry) */
#define RELOAD_SPC_GETS_PER_PASS 1	   /* GETs per run-loop pass; the rest wait for the next */

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
 * GET the SecretProviderClasses rotations named (queued by reload_csi_item; from the run loop,
 * never inside a stream callback), oldest first, at most RELOAD_SPC_GETS_PER_PASS a call, each
 * one try of at most RELOAD_SPC_GET_MS; set its entry's match and ignore from its
 * reloader.stakater.com/match and ignore annotations (none when the GET fails: a warning, but
 * quiet for a 404, as Reloader reads an error as no annotations), then tell the change. A
 * standby replica (--enable-ha, not leading) sends no GET and tells the change with the bits
 * read last.
 */
void reload_csi_fetch(struct ctl *c);
/* Free c->in.spcps and the queued GETs. */
void reload_csi_free(struct ctl *c);

#endif
