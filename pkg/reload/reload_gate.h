/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_gate.h: the gates act consults (reload_ha.c: leadership; reload_pause.c: pause-period).
 * Includes only the base vocabulary (reload_internal.h). */
#ifndef NP_RELOAD_GATE_H
#define NP_RELOAD_GATE_H

#include "reload/reload_internal.h"

/* ---- HA (reload_ha.c): leader election on a coordination.k8s.io/v1 Lease ---- */

struct reload_ha;

/*
 * Set up the election for c (Lease name, namespace: opts, $POD_NAMESPACE or the
 * service-account file; identity: $POD_NAME or hostname_<random>). Returns 0, or
 * KUBE_ECONFIG / -ENOMEM with err set. Free with reload_ha_free (also on error).
 */
int reload_ha_new(struct ctl *c, struct log_err *err);
/* Free the election (NULL ha allowed). */
void reload_ha_free(struct ctl *c);
/* Try to acquire or renew when due; on becoming leader, re-read the pending workloads. */
void reload_ha_tick(struct ctl *c);
/* 1 when c may roll: no HA, or we hold a lease renewed within the renew deadline. */
int reload_ha_acting(const struct ctl *c);
/* ms within which our API writes must end (the Lease held); -1: no HA (unbounded), 0: none. */
long long reload_ha_write_left(const struct ctl *c);
/* on: the writes that follow complete one already made: sent until the Lease runs out. */
void reload_ha_completing(struct ctl *c, int on);
/* When reload_ha_tick wants to run next (monotonic ms; INT64_MAX without HA). */
long long reload_ha_next(const struct ctl *c);
/* Give the lease up if we hold it (SIGTERM; client-go's ReleaseOnCancel). */
void reload_ha_release(struct ctl *c);
/*
 * A standby (or a takeover's re-read) sees workload we parsed anew as nw: if its
 * reload records changed, the leader rolled it, and what nw records as current is
 * no longer pending here.
 */
void reload_ha_workload_seen(struct ctl *c, struct wl_ent *we, const struct reload_workload *nw);

/*
 * pause-period (Deployments): pause we before its reload PATCH as Reloader
 * does, and arm the resume timer. Returns 0 (nothing to do or paused),
 * negative when the period does not parse or the PATCH failed (err set).
 */
int reload_pause_before(struct ctl *c, struct wl_ent *we, struct log_err *err);
/* A workload was (re)read: arm or drop its resume timer from paused/paused-at. */
void reload_pause_seen(struct ctl *c, struct wl_ent *we);
/* Resume every paused Deployment whose period ended. */
void reload_pause_due(struct ctl *c);
/* The earliest resume time (monotonic ms), or t when none is earlier. */
long long reload_pause_next(const struct ctl *c, long long t);

#endif
