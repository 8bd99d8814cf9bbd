/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_run: nodeprobe-devices' loop: classes served through pkg/kubelet, rescanned on
 * hotplug, CDI specs kept in step, SIGTERM/SIGINT a clean stop. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "devices/devices_internal.h"
#include "kubelet/kubelet.h"
#include "fsutil/fsutil.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

_Static_assert(DEVICES_IDS_MAX == KUBELET_DEVICES_MAX, "one device limit with pkg/kubelet");
_Static_assert(DEVICES_COUNT_MAX <= DEVICES_IDS_MAX, "one group's count fits a class");

#define GONE_MAX 1024
#define COALESCE_MS                                                                                \
	100 /* hotplug events within this of the first one: one rescan */ /* IDs of vanished       \
									     devices still listed  \
									     Unhealthy, per class  \
									   */

struct cls_state {
	struct devices_found f; /* the last scan */
	size_t res;		/* kubelet_srv_add's index */
	char **gone;		/* IDs seen before and not now: listed Unhealthy */
	size_t n_gone;
	unsigned long long allocs; /* Allocate answers given (containers) */
	bool cdi_foreign;	   /* its CDI file is someone else's: no CDI names in answers */
	char cdi[80];		   /* its CDI class (devices_cdi_class) */
};

struct run {
	const struct devices_opts *o;
	struct devices_classes *c;
	struct cls_state *s; /* per class */
	struct kubelet_srv *srv;
	struct devices_watch *w;
	struct devices_http *http;	     /* --listen, or NULL */
	const struct devices_dra_hooks *dra; /* started for api: dra classes, or NULL */
	int sfd;			     /* signalfd */
	int tfd; /* timerfd: the rescan COALESCE_MS after the first event */
	bool armed;
	unsigned long events, rescans; /* hotplug batches drained, rescans done (-vv) */
};

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is id among the n sorted ids? */
static bool has(char **sorted, size_t n, const char *id)
{
	return n && bsearch(&id, sorted, n, sizeof(char *), str_cmp);
}

/* Scan class i again; devices that went away are kept as Unhealthy (GONE_MAX at most). */
static int rescan(struct run *run, size_t i, struct log_err *err)
{
	struct cls_state *s = &run->s[i];
	struct devices_found nf = {0};
	size_t j, k, n_sorted = s->n_gone;
	char **sorted;
	int r = devices_scan(run->c, i, &run->o->roots, &nf, err);

	if (r < 0)
		return r;
	/* every lookup below is a binary search: nf's index, a sorted copy of gone */
	sorted = malloc((s->n_gone + 1) * sizeof(char *));
	if (!sorted) {
		devices_found_free(&nf);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	if (s->n_gone)
		memcpy(sorted, s->gone, s->n_gone * sizeof(char *));
	qsort(sorted, n_sorted, sizeof(char *), str_cmp);
	for (j = 0; j < s->f.n; j++) {
		for (k = 0; k < s->f.d[j].n_ids; k++) {
			const char *id = s->f.d[j].ids[k];
			char **g;

			if (devices_find(&nf, id) || has(sorted, n_sorted, id))
				continue; /* (IDs of one scan are unique: no new one is in gone) */
			g = realloc(s->gone, (s->n_gone + 1) * sizeof(char *));
			if (!g || !(g[s->n_gone] = strdup(id))) {
				s->gone = g ? g : s->gone;
				free(sorted);
				devices_found_free(&nf);
				return log_err_set(err, -ENOMEM, "out of memory");
			}
			s->gone = g;
			s->n_gone++;
		}
	}
	free(sorted);
	for (j = 0, k = 0; j < s->n_gone; j++) { /* back again: healthy; over GONE_MAX: the
						    oldest go */
		if (devices_find(&nf, s->gone[j]) || s->n_gone - j > GONE_MAX)
			free(s->gone[j]);
		else
			s->gone[k++] = s->gone[j];
	}
	s->n_gone = k;
	devices_found_free(&s->f);
	s->f = nf;
	return 0;
}

/* Hand class i's list to the server and its CDI spec to the CDI directory. */
static int publish(struct run *run, size_t i, struct log_err *err)
{
	struct cls_state *s = &run->s[i];
	struct kubelet_device *d;
	size_t n, healthy = 0, j, k, at = 0;
	int r;

	for (j = 0; j < s->f.n; j++)
		healthy += s->f.d[j].n_ids;
	n = healthy +
	    s->n_gone; /* the scan keeps healthy IDs within the limit; gone ones give way */
	if (n > KUBELET_DEVICES_MAX)
		n = healthy > KUBELET_DEVICES_MAX ? healthy : KUBELET_DEVICES_MAX;
	d = calloc(n + 1, sizeof(*d));
	if (!d)
		return log_err_set(err, -ENOMEM, "out of memory");
	for (j = 0; j < s->f.n; j++)
		for (k = 0; k < s->f.d[j].n_ids; k++)
			d[at++] = (struct kubelet_device){s->f.d[j].ids[k], true, -1};
	for (j = s->n_gone - (n - healthy); j < s->n_gone; j++)
		d[at++] = (struct kubelet_device){s->gone[j], false, -1};
	if (s->res == SIZE_MAX) { /* a DRA class: its devices are our pool's (devices_dra.c) */
		free(d);
		if (run->dra)
			run->dra->update(run->dra->ctx, i, &s->f);
		log_info("%s: %zu devices (DRA)", devices_class_resource(run->c, i), s->f.n);
		return 0;
	}
	r = run->srv ? kubelet_srv_set_devices(run->srv, s->res, d, n, err) : 0;
	free(d);
	if (r == -ENOMEM)
		return r;
	if (r < 0) { /* the server keeps the list it had */
		log_warn("%s; the kubelet keeps the last device list", err ? err->msg : "");
		log_err_clear(err);
	}
	if (!run->o->no_cdi) {
		r = devices_cdi_write(run->o->cdi_dir ? run->o->cdi_dir : DEVICES_CDI_DIR, &s->f,
				      s->cdi, err);
		if (r == -ENOMEM)
			return r;
		if (r < 0) { /* a read-only or full CDI directory: Allocate still answers */
			log_warn("%s; %s", err ? err->msg : "",
				 r == -EEXIST ? "Allocate answers without CDI names for this class"
					      : "its CDI spec is not updated");
			log_err_clear(err);
		}
		s->cdi_foreign = r == -EEXIST;
	}
	log_info("%s: %zu devices, %zu healthy IDs, %zu unhealthy",
		 devices_class_resource(run->c, i), s->f.n, healthy, n - healthy);
	return 0;
}

static int refresh(struct run *run, struct log_err *err)
{
	size_t i;
	int r;

	for (i = 0; i < run->c->n; i++) {
		r = rescan(run, i, err);
		if (r == -ENOMEM)
			return r;
		if (r < 0) { /* a bad scan keeps the last list */
			log_warn("%s; keeping the last device list",
				 err ? err->msg : "scan failed");
			log_err_clear(err);
			continue;
		}
		r = publish(run, i, err); /* only -ENOMEM: per-class errors are warnings */
		if (r < 0)
			return r;
	}
	return 0;
}

/* ------------------------------------------------------------ kubelet_ops */

static struct cls_state *by_res(struct run *run, size_t res, size_t *cls)
{
	size_t i;

	for (i = 0; i < run->c->n; i++) {
		if (run->s[i].res == res) {
			*cls = i;
			return &run->s[i];
		}
	}
	return NULL;
}

static int op_allocate(void *ctx, size_t res, const char *const *ids, size_t n,
		       struct kubelet_alloc *out, struct log_err *err)
{
	struct run *run = ctx;
	size_t cls;
	struct cls_state *s = by_res(run, res, &cls);

	int r;

	if (!s)
		return log_err_set(err, -ENOENT, "no resource %zu", res);
	r = devices_allocate(&s->f, s->cdi, !run->o->no_cdi && !s->cdi_foreign, ids, n, out, err);
	s->allocs += r >= 0;
	return r;
}

static void op_free(void *ctx, struct kubelet_alloc *a)
{
	(void)ctx;
	devices_alloc_free(a);
}

static int op_preferred(void *ctx, size_t res, const char *const *avail, size_t n_avail,
			const char *const *must, size_t n_must, size_t size, const char **out,
			struct log_err *err)
{
	struct run *run = ctx;
	size_t cls;
	struct cls_state *s = by_res(run, res, &cls);

	if (!s)
		return log_err_set(err, -ENOENT, "no resource %zu", res);
	return devices_preferred(&s->f, devices_class_policy(run->c, cls), avail, n_avail, must,
				 n_must, size, out, err);
}

static int on_signal(void *ctx, struct log_err *err)
{
	struct run *run = ctx;
	struct signalfd_siginfo si;

	(void)err;
	if (read(run->sfd, &si, sizeof(si)) != sizeof(si))
		return 0;
	log_info("signal %u: stopping", si.ssi_signo);
	return 1;
}

/* Events: the rescan is COALESCE_MS after the first of a burst (one for a whole burst). */
static int on_hotplug(void *ctx, struct log_err *err)
{
	struct run *run = ctx;
	struct itimerspec at = {.it_value = {0, COALESCE_MS * 1000000L}};
	int r = devices_watch_drain(run->w);

	if (r <= 0)
		return r < 0 ? log_err_set(err, r, "inotify: %s", strerror(-r)) : 0;
	run->events++;
	if (run->armed)
		return 0;
	if (timerfd_settime(run->tfd, 0, &at, NULL) < 0)
		return refresh(run, err); /* no timer: at once */
	run->armed = true;
	return 0;
}

static int on_timer(void *ctx, struct log_err *err)
{
	struct run *run = ctx;
	unsigned long long ticks;

	if (read(run->tfd, &ticks, sizeof(ticks)) != sizeof(ticks))
		return 0;
	run->armed = false;
	run->rescans++;
	log_debug("hotplug: rescan %lu (%lu event batches so far)", run->rescans, run->events);
	return refresh(run, err);
}

static int on_dra(void *ctx, struct log_err *err)
{
	struct run *run = ctx;

	return run->dra->ready(run->dra->ctx, err);
}

static int on_http(void *ctx, struct log_err *err)
{
	struct run *run = ctx;
	int r = devices_http_ready(run->http);

	return r < 0 ? log_err_set(err, r, "--listen: %s", strerror(-r)) : 0;
}

/* /metrics: devices (healthy and not) and Allocate answers per resource. */
static int metrics(void *ctx, struct strbuf *out)
{
	struct run *run = ctx;
	size_t i, j, n;
	int r = 0;

	sb_add(out, "# HELP nodeprobe_devices_devices Device IDs offered, by health.\n"
		    "# TYPE nodeprobe_devices_devices gauge\n");
	for (i = 0; i < run->c->n; i++) {
		for (n = 0, j = 0; j < run->s[i].f.n; j++)
			n += run->s[i].f.d[j].n_ids;
		sb_addf(out, "nodeprobe_devices_devices{resource=\"%s\",health=\"Healthy\"} %zu\n",
			devices_class_resource(run->c, i), n);
		sb_addf(out,
			"nodeprobe_devices_devices{resource=\"%s\",health=\"Unhealthy\"} %zu\n",
			devices_class_resource(run->c, i), run->s[i].n_gone);
	}
	sb_add(out, "# HELP nodeprobe_devices_allocations_total Allocate answers (one per "
		    "container).\n# TYPE nodeprobe_devices_allocations_total counter\n");
	for (i = 0; i < run->c->n && r >= 0; i++)
		r = sb_addf(out, "nodeprobe_devices_allocations_total{resource=\"%s\"} %llu\n",
			    devices_class_resource(run->c, i), run->s[i].allocs);
	return r < 0 ? r : 0;
}

/* ------------------------------------------------------------ the run */

int devices_run(const struct devices_opts *o, struct log_err *err)
{
	struct run run = {.o = o, .sfd = -1, .tfd = -1};
	struct kubelet_opts ko = {
	    .dir = o->plugin_dir,
	    .socket_prefix = "nodeprobe-",
	    .ops = {op_allocate, op_free, op_preferred},
	};
	struct kubelet_poll polls[6];
	enum devices_api dflt = o->api ? o->api : DEVICES_API_DEVICE_PLUGIN;
	size_t np = 3;
	sigset_t mask;
	size_t i;
	int r;

	ko.ctx = &run;
	r = devices_load(o, &run.c, err);
	if (r < 0)
		return r;
	run.s = calloc(run.c->n, sizeof(*run.s));
	if (!run.s) {
		r = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < run.c->n && r >= 0; i++) { /* one CDI class each, never shared */
		const char *name = devices_class_name(run.c, i);

		if (devices_cdi_class(name, run.s[i].cdi, sizeof(run.s[i].cdi)) < 0)
			r = log_err_set(err, -EINVAL, "class '%s': no CDI class for it", name);
		for (size_t j = 0; r >= 0 && !o->no_cdi && j < i; j++)
			if (!strcmp(run.s[j].cdi, run.s[i].cdi))
				r = log_err_set(err, -EINVAL,
						"classes '%s' and '%s' have one CDI class, '%s': "
						"rename one",
						devices_class_name(run.c, j), name, run.s[i].cdi);
	}
	if (r < 0)
		goto out;
	if (!o->no_cdi &&
	    (r = fs_mkdir_if_missing(o->cdi_dir ? o->cdi_dir : DEVICES_CDI_DIR, err)) < 0)
		goto out;
	r = devices_dra_check(run.c, dflt, err);
	if (r < 0)
		goto out;
	if (devices_dra_any(run.c, dflt) && !o->dra) {
		r = log_err_set(err, -EINVAL, "api: dra: this binary has no DRA side");
		goto out;
	}
	r = kubelet_srv_new(&ko, &run.srv, err);
	for (i = 0; r >= 0 && i < run.c->n; i++) {
		if (devices_dra_is(run.c, i, dflt)) {
			run.s[i].res = SIZE_MAX;
			continue;
		}
		r = kubelet_srv_add(run.srv, devices_class_resource(run.c, i), err);
		run.s[i].res = (size_t)r;
	}
	if (r < 0)
		goto out;
	r = devices_watch_new(o->roots.dev ? o->roots.dev : "/dev", &run.w, err);
	if (r < 0)
		goto out;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	run.sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	run.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (run.sfd < 0 || run.tfd < 0) {
		r = log_err_set(err, -errno, "%s: %s", run.sfd < 0 ? "signalfd" : "timerfd",
				strerror(errno));
		goto out;
	}
	r = refresh(&run, err);
	if (r < 0)
		goto out;
	polls[0] = (struct kubelet_poll){run.sfd, on_signal, &run};
	polls[1] = (struct kubelet_poll){devices_watch_fd(run.w), on_hotplug, &run};
	polls[2] = (struct kubelet_poll){run.tfd, on_timer, &run};
	if (devices_dra_any(run.c, dflt)) {
		int fd = -1;

		run.dra = o->dra; /* stopped at out, also after a failed start */
		r = o->dra->start(o->dra->ctx, o, run.c, &fd, err);
		if (r < 0)
			goto out;
		for (i = 0; i < run.c->n; i++) /* the first scan's devices */
			if (run.s[i].res == SIZE_MAX)
				o->dra->update(o->dra->ctx, i, &run.s[i].f);
		polls[np++] = (struct kubelet_poll){fd, on_dra, &run};
	}
	if (o->listen) {
		r = devices_http_new(o->listen, metrics, &run, &run.http, err);
		if (r < 0)
			goto out;
		polls[np++] = (struct kubelet_poll){devices_http_fd(run.http), on_http, &run};
		polls[np++] = (struct kubelet_poll){devices_http_timer_fd(run.http), on_http, &run};
	}
	r = kubelet_srv_run(run.srv, polls, np, err);
out:
	kubelet_srv_free(run.srv);
	if (run.dra)
		run.dra->stop(run.dra->ctx);
	devices_http_free(run.http);
	devices_watch_free(run.w);
	if (run.sfd >= 0)
		close(run.sfd);
	if (run.tfd >= 0)
		close(run.tfd);
	for (i = 0; run.s && i < run.c->n; i++) {
		devices_found_free(&run.s[i].f);
		fs_names_free(run.s[i].gone, run.s[i].n_gone);
	}
	free(run.s);
	devices_classes_free(run.c);
	return r;
}
