/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_watches: the watches' state: back-off after a failure, open or not (the gauges, /readyz),
 * and the re-list of a watch whose answer does not come. */
#include <stdlib.h>

#include "kube/kube.h"
#include "log/log.h"
#include "reload/reload_csi.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

/* A failed watch's jittered back-off: 0.2 s doubling with each consecutive failure, up to 12.8 s.
 */
long long reload_watch_backoff_ms(const struct rs *s)
{
	long long base = 200LL << (s->fails < 6 ? s->fails : 6);

	return base / 2 + random() % (base / 2 + 1);
}

/* How long the current watch may stay unanswered: WATCH_OPEN_MS, doubled for each watch of this
 * stream given up unanswered in a row, up to 32 times (320 s). */
long long reload_watch_open_ms(const struct rs *s)
{
	return (long long)WATCH_OPEN_MS << (s->held < WATCH_HELD_MAX ? s->held : WATCH_HELD_MAX);
}

void reload_watches_check(struct ctl *c)
{
	long long now = reload_now_ms();
	unsigned long want = 0, open = 0;
	size_t i;

	for (i = 0; i < c->in.nrs; i++) {
		struct rs *s = &c->in.rs[i];
		const char *what = reload_cls_res[s->cls]->plural;

		if (s->absent)
			continue; /* not served: nothing to wait for (re-checked by a LIST) */
		want++;
		if (s->w && !s->open && kube_watch_open(s->w)) {
			s->open = 1;
			s->held = 0;
			if (reload_csi_cls(s->cls))
				reload_csi_opened(s);
			log_debug("watch %s%s%s open from resourceVersion %s (%lld ms after its "
				  "request)",
				  what, *s->ns ? " in " : "", s->ns, s->rv, now - s->start_ms);
		}
		if (s->w && !s->open && now - s->start_ms >= reload_watch_open_ms(s)) {
			/*
			 * Connected, sent and unanswered: events wait behind it. A kube-apiserver
			 * whose watch cache for this resource has not finished its own first list
			 * holds every WATCH from a resourceVersion until it has (Cacher.Watch waits
			 * on c.ready, staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go),
			 * while our LIST (no resourceVersion, a limit) is delegated to etcd
			 * (shouldDelegateList) and answered at once. So catch up as after a 410:
			 * re-list (acting on what changed meanwhile), then watch again from the
			 * new resourceVersion. The failure back-off is not raised (the server
			 * answers; a failing LIST raises it, reload_restart_watches), but each
			 * watch held again in a row is waited for twice as long (held), so a
			 * server that keeps holding watches gets a LIST every 10, 20, 40 ... 320 s,
			 * not every 10 s.
			 */
			long long waited = reload_watch_open_ms(s);

			kube_watch_cancel(c->cl, s->w);
			s->w = NULL;
			s->gone = 1;
			s->restart_ms = now + reload_watch_backoff_ms(s);
			METRIC_INC(c->m.watch_restarts[s->cls]);
			log_msg(s->held ? LOG_LVL_DEBUG : LOG_LVL_WARN,
				"watch %s%s%s: no answer within %lld s; re-listing and starting it "
				"again",
				what, *s->ns ? " in " : "", s->ns, waited / 1000);
			if (s->held < WATCH_HELD_MAX)
				s->held++;
		}
		open += s->w && s->open;
	}
	METRIC_SET(c->m.watches, want);
	METRIC_SET(c->m.watches_open, open);
	if (!METRIC_GET(c->m.ready) && open == want) {
		log_debug("all %lu watches open: ready", want);
		METRIC_SET(c->m.ready, 1);
	}
}
