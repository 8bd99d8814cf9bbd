/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_run: the run loop: setup, initial sync, watch threads, signals, once and watch modes. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_act.h"
#include "reload/reload_csi.h"
#include "reload/reload_gate.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

/* ---- setup ---- */

void reload_opts_init(struct reload_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
	o->secret_field_selector = "type!=helm.sh/release.v1";
	o->strategy = RELOAD_ENV_VARS;
	o->window_ms = 1000;
	o->min_interval_ms = 10000;
	o->max_rate = 5;
	o->burst = 20;
	o->events = 1;
	o->page_size = 500;
	o->watch_timeout_s = 1800;
	o->retries = 5;
	o->retry_base_ms = 200;
	o->settle_ms = 10;
	o->lease_name = "stakater-reloader-lock";
	o->lease_duration_ms = 15000;
	o->renew_deadline_ms = 10000;
	o->retry_period_ms = 2000;
}

/* ---- what input tells the stages above it ---- */

static void on_replacing(struct ctl *c, struct wl_ent *we, const struct reload_workload *nw)
{
	if (c->gate.ha)
		reload_ha_workload_seen(c, we, nw);
}

static void on_read(struct ctl *c, struct wl_ent *we)
{
	reload_pause_seen(c, we);
	reload_check_unsupported(c, we);
}

static const struct reload_in_hooks in_hooks = {
    .changed = reload_config_changed,
    .relisted = reload_reconcile_all,
    .replacing = on_replacing,
    .read = on_read,
    .event = reload_queue_event,
};

static int make_streams(struct ctl *c)
{
	static const char *const all[] = {"", NULL};
	const char *const *nss =
	    c->o->namespaces && c->o->namespaces[0] ? (const char *const *)c->o->namespaces : all;
	size_t nns = 0, i;
	int cls;

	while (nss[nns])
		nns++;
	c->in.rs = calloc(nns * NCLS, sizeof(*c->in.rs));
	if (!c->in.rs)
		return -ENOMEM;
	/* Workloads first, so the first ConfigMap/Secret pass already sees them. */
	for (cls = NCLS - 1; cls >= 0; cls--) {
		if ((cls == CLS_CM && c->o->ignore_cls[0]) ||
		    (cls == CLS_SEC && c->o->ignore_cls[1]))
			continue; /* --resources-to-ignore: not watched at all */
		for (i = 0; i < nns; i++) {
			struct rs *s =
			    reload_cls_enabled(c->o, cls) ? &c->in.rs[c->in.nrs++] : NULL;

			if (!s)
				break; /* a kind left out: --ignored-workload-types, Argo Rollouts
					  off */
			s->c = c;
			s->cls = cls;
			s->ns = nss[i];
			sb_init(&s->name, NAME_MAX_);
			sb_init(&s->ns_, NAME_MAX_);
			sb_init(&s->irv, RV_MAX);
		}
	}
	return 0;
}

static void ctl_free(struct ctl *c)
{
	size_t i;
	struct ent *e, *nx;

	for (i = 0; i < c->in.nrs; i++) {
		struct rs *s = &c->in.rs[i];

		if (s->w)
			kube_watch_cancel(c->cl, s->w);
		kube_stream_free(s->st);
		if (s->hs_live)
			reload_hasher_free(&s->hs);
		sb_free(&s->name);
		sb_free(&s->ns_);
		sb_free(&s->irv);
	}
	free(c->in.rs);
	reload_events_free(c);
	for (i = 0; i < c->cfg.nb; i++)
		for (e = c->cfg.b[i]; e; e = nx) {
			nx = e->next;
			reload_cfg_free((struct cfg_ent *)e);
		}
	free(c->cfg.b);
	reload_csi_free(c);
	for (i = 0; i < c->wl.nb; i++)
		for (e = c->wl.b[i]; e; e = nx) {
			nx = e->next;
			((struct wl_ent *)e)->pending = 0;
			reload_wl_free(c, (struct wl_ent *)e);
		}
	free(c->wl.b);
	reload_byname_free(c);
	while (c->in.defer) {
		struct deferred *d = c->in.defer;

		c->in.defer = d->next;
		free(d->ns);
		free(d->name);
		free(d);
	}
	reload_notify_stop(c, c->o->once);
	reload_nsel_free(c);
	reload_metrics_free(&c->m);
	sb_free(&c->url);
	sb_free(&c->body);
	sb_free(&c->resp);
	reload_ha_free(c);
	kube_client_free(c->cl);
}

int reload_run(const struct reload_opts *o, struct log_err *err)
{
	struct ctl c;
	struct kube_config cfg;
	void *http = NULL;
	size_t i;
	int r;

	memset(&c, 0, sizeof(c));
	c.o = o;
	c.in.on = &in_hooks;
	reload_ann_names(o->ann_names);
	sb_init(&c.url, 64 * 1024);
	sb_init(&c.body, 1024 * 1024);
	sb_init(&c.resp, OBJ_MAX);
	srandom((unsigned int)(reload_now_ms() ^ getpid()));
	r = reload_kubeconfig(&cfg, o, err);
	if (r < 0) {
		kube_config_free(&cfg);
		return r;
	}
	r = kube_client_new(&c.cl, &cfg, err);
	kube_config_free(&cfg);
	if (r < 0)
		return r;
	kube_client_set_retries(c.cl, o->retries, o->retry_base_ms);
	c.m.cl = c.cl;
	c.m.by_namespace = o->metrics_by_namespace;
	c.m.csi = o->csi;
	c.act.tok_ms = reload_now_ms();
	c.act.tokens = o->burst;
	r = make_streams(&c);
	if (r < 0) {
		log_err_set(err, r, "out of memory");
		goto out;
	}
	if (o->ha) {
		r = reload_ha_new(&c, err);
		if (r < 0)
			goto out;
	}
	r = reload_notify_start(&c, err);
	if (r < 0)
		goto out;
	if (!o->once) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = reload_on_signal;
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		if (o->listen && *o->listen) {
			http = reload_http_start(o->listen, &c.m, err);
			if (!http) {
				r = err->code ? err->code : -EADDRINUSE;
				goto out;
			}
		}
	}
	/* Initial sync: LIST everything (paged, streamed), then look for missed changes. */
	r = reload_nsel_start(&c, err);
	if (r < 0)
		goto out;
	for (i = 0; i < c.in.nrs; i++) {
		r = reload_list_stream(&c, &c.in.rs[i], err);
		if (r < 0)
			goto out;
	}
	reload_process_deferred(&c);
	reload_events_flush(&c);
	{
		unsigned long nwl = 0;
		int k;

		for (k = CLS_DEP; k <= CLS_RO; k++)
			nwl += c.m.objects[k];
		if (o->csi)
			log_info("synced: %lu ConfigMaps, %lu Secrets, %lu workloads, %lu "
				 "SecretProviderClassPodStatuses",
				 c.m.objects[CLS_CM], c.m.objects[CLS_SEC], nwl,
				 c.m.objects[CLS_SPC]);
		else
			log_info("synced: %lu ConfigMaps, %lu Secrets, %lu workloads",
				 c.m.objects[CLS_CM], c.m.objects[CLS_SEC], nwl);
	}
	reload_reconcile_all(&c);
	if (o->once) {
		reload_process_due(&c, 1);
		reload_pause_due(&c);
		reload_events_flush(&c); /* what the rollouts queued */
		r = c.act.failures
			? log_err_set(err, RELOAD_EPARTIAL, "%d rollouts failed", c.act.failures)
			: 0;
		goto out;
	}
	for (i = 0; i < c.in.nrs; i++) {
		r = reload_start_watch(&c, &c.in.rs[i], err);
		if (r < 0)
			goto out;
	}
	r = reload_nsel_watch(&c, err);
	if (r < 0)
		goto out;
	METRIC_SET(c.m.synced, 1); /* ready once every watch is open (reload_watches_check) */
	reload_watches_check(&c);
	while (!atomic_load(&reload_stop_flag)) {
		long long wait = reload_next_wakeup(&c) - reload_now_ms();

		if (wait < 0)
			wait = 0;
		r = kube_poll(c.cl, (int)wait);
		if (r < 0) {
			log_err_set(err, r, "polling the watches failed");
			goto out;
		}
		reload_ha_tick(&c); /* first round: at once (a sole instance leads) */
		reload_process_deferred(&c);
		reload_watches_check(&c);
		reload_restart_watches(&c);
		reload_nsel_tick(&c);
		reload_process_due(&c, 0);
		reload_pause_due(&c);
		reload_jobs_due(&c);
		reload_tombs_sweep(&c);
		reload_events_flush(&c);
	}
	reload_ha_release(&c);
	r = 0;
out:
	reload_http_stop(http);
	ctl_free(&c);
	return r;
}

const char *reload_strerror(int code)
{
	if (code == RELOAD_EPARTIAL)
		return "some rollouts failed";
	return kube_strerror(code);
}
