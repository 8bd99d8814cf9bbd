/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_http: /healthz, /readyz and Prometheus /metrics through libmicrohttpd. */
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reload/reload_internal.h"
#include "listen/listen.h"
#include "slots/slots.h"

static const char *const skip_names[NSKIP] = {
    [SKIP_CURRENT] = "already_current",	  [SKIP_IGNORED] = "ignored",
    [SKIP_EXCLUDED] = "excluded",	  [SKIP_NOT_USED] = "not_used",
    [SKIP_NO_CONTAINER] = "no_container", [SKIP_UNCHANGED] = "no_data_change",
};

static const char *const cls_names[NCLS] = {"configmaps",
					    "secrets",
					    "deployments",
					    "statefulsets",
					    "daemonsets",
					    "cronjobs",
					    "jobs",
					    "rollouts",
					    "secretproviderclasspodstatuses",
					    "secretproviderclasses"};

/* /healthz's word for a CSI resource's state (reload_metrics.csi_state). */
static const char *csi_word(int state)
{
	switch (state) {
	case 1:
		return "available";
	case 403:
		return "unavailable: HTTP 403 (RBAC: list and watch not granted); retrying with back-off";
	case 404:
		return "unavailable: HTTP 404 (CRD not installed); checking every 30 s";
	default:
		return "not listed yet";
	}
}

static int head(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	return sb_addf(sb, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int render(struct strbuf *sb, struct reload_metrics *m)
{
	static const char reloads[] = "nodeprobe_reload_reloads_total";
	static const char skipped[] = "nodeprobe_reload_skipped_total";
	static const char restarts[] = "nodeprobe_reload_watch_restarts_total";
	static const char objects[] = "nodeprobe_reload_objects";
	static const char requests[] = "nodeprobe_reload_api_requests_total";
	int k, i, r;

	r = head(sb, reloads, "counter", "Rollouts by workload kind and result.");
	for (k = 0; k < RELOAD_NKINDS && !r; k++)
		for (i = 0; i < 2 && !r; i++)
			r = sb_addf(sb, "%s{kind=\"%s\",result=\"%s\"} %lu\n", reloads,
				    reload_kind_name((enum reload_kind)k),
				    i ? "failure" : "success", METRIC_GET(m->reloads[k][i]));
	r = r ? r : head(sb, skipped, "counter", "Reloads not done, by reason.");
	for (i = 0; i < NSKIP && !r; i++)
		r = sb_addf(sb, "%s{reason=\"%s\"} %lu\n", skipped, skip_names[i],
			    METRIC_GET(m->skipped[i]));
	r = r ? r : head(sb, restarts, "counter", "Watches restarted after an error or a 410.");
	for (i = 0; i < NCLS && !r; i++)
		r = sb_addf(sb, "%s{resource=\"%s\"} %lu\n", restarts, cls_names[i],
			    METRIC_GET(m->watch_restarts[i]));
	r = r ? r : head(sb, objects, "gauge", "Objects tracked (identity and hash only).");
	for (i = 0; i < NCLS && !r; i++)
		r = sb_addf(sb, "%s{resource=\"%s\"} %lu\n", objects, cls_names[i],
			    METRIC_GET(m->objects[i]));
	r = r ? r
	      : head(sb, "nodeprobe_reload_watches", "gauge",
		     "Watches that should run (kinds the cluster does not serve are not counted).");
	r = r ? r : sb_addf(sb, "nodeprobe_reload_watches %lu\n", METRIC_GET(m->watches));
	r = r ? r
	      : head(sb, "nodeprobe_reload_watches_open", "gauge",
		     "Watches whose answer has arrived: changes are seen as they happen. /readyz "
		     "is ready once each watch has been open.");
	r = r ? r : sb_addf(sb, "nodeprobe_reload_watches_open %lu\n", METRIC_GET(m->watches_open));
	r = r ? r
	      : head(sb, "nodeprobe_reload_objects_skipped_total", "counter",
		     "Objects skipped: over the limits of one value or one object.");
	for (i = 0; i < NCLS && !r; i++)
		r = sb_addf(sb, "nodeprobe_reload_objects_skipped_total{resource=\"%s\"} %lu\n",
			    cls_names[i], METRIC_GET(m->oversize[i]));
	if (m->csi) { /* --enable-csi-integration: is each CSI resource listed and watched */
		r = r ? r
		      : head(
			    sb, "nodeprobe_reload_csi_available", "gauge",
			    "1 while the CSI resource is listed and watched; 0 before, or while it "
			    "answers 403 (RBAC) or 404 (CRD absent).");
		for (i = 0; i < 2 && !r; i++)
			r = sb_addf(sb, "nodeprobe_reload_csi_available{resource=\"%s\"} %d\n",
				    cls_names[CLS_SPC + i], METRIC_GET(m->csi_state[i]) == 1);
		r = r ? r
		      : head(sb, "nodeprobe_reload_csi_lost_total", "counter",
			     "Times a CSI resource became unavailable (403 or 404).");
		for (i = 0; i < 2 && !r; i++)
			r = sb_addf(sb, "nodeprobe_reload_csi_lost_total{resource=\"%s\"} %lu\n",
				    cls_names[CLS_SPC + i], METRIC_GET(m->csi_lost[i]));
	}
	if (METRIC_GET(m->leader)) { /* --enable-ha */
		r = r ? r
		      : head(sb, "nodeprobe_reload_leader", "gauge",
			     "1 while this replica holds the Lease (--enable-ha), 0 standing by.");
		r = r ? r : sb_addf(sb, "nodeprobe_reload_leader %d\n", METRIC_GET(m->leader) == 2);
	}
	r = r ? r
	      : head(sb, "nodeprobe_reload_notify_dropped_total", "counter",
		     "Alerts and webhooks dropped because their queue was full.");
	r = r ? r
	      : sb_addf(sb, "nodeprobe_reload_notify_dropped_total %lu\n",
			METRIC_GET(m->notify_dropped));
	r = r ? r
	      : head(sb, "nodeprobe_reload_notify_queued", "gauge",
		     "Alerts and webhooks waiting to be sent.");
	r = r ? r
	      : sb_addf(sb, "nodeprobe_reload_notify_queued %lu\n", METRIC_GET(m->notify_queued));
	r = r ? r
	      : head(sb, "nodeprobe_reload_fenced_writes_total", "counter",
		     "API writes not sent: the Lease was not held or its renewal overdue.");
	r = r ? r
	      : sb_addf(sb, "nodeprobe_reload_fenced_writes_total %lu\n", METRIC_GET(m->fenced));
	r = r ? r : head(sb, requests, "counter", "API requests by HTTP status (0: no answer).");
	for (i = 0; i < KUBE_CODES && !r; i++) {
		unsigned long n = kube_client_count(m->cl, i);

		if (n)
			r = sb_addf(sb, "%s{code=\"%d\"} %lu\n", requests, i, n);
	}
	return r ? r : reload_render_reloader(sb, m);
}

/*
 * Slow clients (slowloris): libmicrohttpd's idle timeout (HTTP_IDLE_S) starts again with every
 * byte, so a client trickling a header line a second held its connection for ever, and a few
 * thousand of them filled the table: no /healthz answer, and the kubelet restarts the pod.
 * So every request head has a deadline of its own, HTTP_HEAD_S from the accept, and the table
 * keeps HTTP_RESERVE slots: when more connections than the limit less the reserve wait for their
 * head, the oldest of them is closed (pkg/slots, as nodeprobe-devices' --listen). Connections are
 * tracked from libmicrohttpd's connection notifications (its own thread, under h->mu); a reaper
 * thread shuts down those whose head is late.
 * Between two requests of a kept-alive connection (Prometheus reuses its connection from one
 * scrape to the next) only the idle timeout applies while the table has room; once more than
 * the limit less twice the reserve wait for a head, the head deadline applies to them too (from
 * the end of the previous request), and the reserve's culling takes them as any other.
 */
#define HTTP_HEAD_S  5
#define HTTP_RESERVE 64

struct http {
	struct MHD_Daemon *d;
	struct reload_metrics *m;
	pthread_mutex_t mu; /* the slots' list, stop */
	pthread_cond_t cv;  /* wakes the reaper to stop */
	pthread_t reaper;
	int reaper_on, stop;
	struct slots slots; /* connections waiting for a request head */
};

static void *reaper(void *ud)
{
	struct http *h = ud;
	struct timespec ts;

	pthread_mutex_lock(&h->mu);
	while (!h->stop) {
		pthread_mutex_unlock(&h->mu);
		slots_sweep(&h->slots, NULL);	     /* takes h->mu */
		clock_gettime(CLOCK_MONOTONIC, &ts); /* the condition waits on it (h->cv) */
		ts.tv_nsec += 250 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&h->mu);
		if (!h->stop)
			pthread_cond_timedwait(&h->cv, &h->mu, &ts);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code, const char *type,
			     const char *body, size_t len)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", type);
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct reload_metrics *m = ((struct http *)cls)->m;
	enum MHD_Result ret;

	(void)version;
	(void)upload;
	if (!*con_cls) {
		/*
		 * The head has arrived: answer at the next call, once the request is read whole.
		 * libmicrohttpd 0.9.75 closes a connection whose answer was queued at the first
		 * call (keepalive_possible: the request not read whole), so no connection was kept
		 * alive; a request body is discarded.
		 */
		static int seen;

		slots_request_in(&((struct http *)cls)->slots, conn);
		*con_cls = &seen;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* no body is read: GET and HEAD only */
		return MHD_YES;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply(conn, 405, "text/plain", "method not allowed\n", 19);
	if (strcmp(url, "/healthz") == 0 && m->csi) {
		char b[512]; /* live either way: the CSI side's state is a detail */
		int n = snprintf(b, sizeof(b), "ok\n%s: %s\n%s: %s\n", cls_names[CLS_SPC],
				 csi_word(METRIC_GET(m->csi_state[0])), cls_names[CLS_SPCS],
				 csi_word(METRIC_GET(m->csi_state[1])));

		return reply(conn, 200, "text/plain", b, (size_t)n);
	}
	if (strcmp(url, "/healthz") == 0)
		return reply(conn, 200, "text/plain", "ok\n", 3);
	/* Reloader's liveness path (its chart probes it): kept so a Reloader Deployment's probes
	 * pass unchanged (internal/pkg/metrics/prometheus.go, reloader.md §9.9) */
	if (strcmp(url, "/live") == 0)
		return reply(conn, 200, "text/plain", "alive", 5);
	if (strcmp(url, "/readyz") == 0) {
		char why[96];
		int n;

		if (METRIC_GET(m->ready))
			return reply(conn, 200, "text/plain", "ok\n", 3);
		if (!METRIC_GET(m->synced))
			return reply(conn, 503, "text/plain", "syncing\n", 8);
		/* listed, but a watch is not answered yet: a change made now would wait for it */
		n = snprintf(why, sizeof(why), "watches opening: %lu of %lu open\n",
			     METRIC_GET(m->watches_open), METRIC_GET(m->watches));
		return reply(conn, 503, "text/plain", why, (size_t)n);
	}
	if (strcmp(url, "/metrics") == 0) {
		struct strbuf sb = STRBUF_INIT(1024 * 1024);

		if (render(&sb, m) < 0) {
			sb_free(&sb);
			return reply(conn, 500, "text/plain", "error\n", 6);
		}
		ret = reply(conn, 200, "text/plain; version=0.0.4", sb.buf, sb.len);
		sb_free(&sb);
		return ret;
	}
	return reply(conn, 404, "text/plain", "not found\n", 10);
}

/*
 * The connection bound: far above what probes and scrapers use, below the fd limit (raised to
 * its hard limit at start, as Go's runtime does since 1.19). Idle connections are closed after
 * HTTP_IDLE_S, so a flood of idle connections cannot hold the slots for long, and epoll (not
 * select, which stops at fd 1024) keeps accepting while they are held.
 */
#define HTTP_CONN_MAX 4096
#define HTTP_IDLE_S   10

static unsigned int conn_limit(void)
{
	struct rlimit rl;
	rlim_t want;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 512;
	want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
	if (rl.rlim_cur < want) {
		rl.rlim_cur = want;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	/* keep 256 descriptors for the API client, watches and files */
	if (rl.rlim_cur < 512)
		return 64;
	return rl.rlim_cur - 256 > HTTP_CONN_MAX ? HTTP_CONN_MAX
						 : (unsigned int)(rl.rlim_cur - 256);
}

/*
 * libmicrohttpd's own messages (a client's malformed request, a failed bind) go through our
 * logger at debug level: written to stderr directly they broke --log-format json, and any client
 * could add a line per request. The last one is kept for the "cannot listen" error.
 */
static char mhd_last[256];

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	size_t n;

	(void)cls;
	vsnprintf(mhd_last, sizeof(mhd_last), fmt, ap);
	n = strlen(mhd_last);
	while (n && (mhd_last[n - 1] == '\n' || mhd_last[n - 1] == '.'))
		mhd_last[--n] = '\0';
	log_debug("http: %s", mhd_last);
}

static struct MHD_Daemon *start(struct http *h, unsigned int flags, const struct sockaddr *sa,
				unsigned int limit)
{
	struct MHD_Daemon *d;
	sigset_t old;

	/* its polling thread inherits our mask: SIGTERM and SIGINT stay the main thread's */
	reload_signals_block(&old);
	/* the logger first: libmicrohttpd warns about options parsed before it */
	d = MHD_start_daemon(flags, 0, NULL, NULL, handle, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
			     NULL, MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_CONNECTION_LIMIT, limit,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_IDLE_S,
			     MHD_OPTION_NOTIFY_CONNECTION, slots_on_conn, &h->slots,
			     MHD_OPTION_NOTIFY_COMPLETED, slots_on_done, &h->slots, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return d;
}

/* The reaper's timed wait runs on the monotonic clock: immune to wall-clock steps. */
static void cond_init_monotonic(pthread_cond_t *cv)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
}

void *reload_http_start(const char *listen, struct reload_metrics *m, struct log_err *err)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 any6;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	unsigned int limit = conn_limit();
	struct http *h;
	bool any;

	if (listen_parse(listen, true, &ss, &any, err) < 0)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		log_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	h->m = m;
	pthread_mutex_init(&h->mu, NULL);
	slots_init(&h->slots, MHD_get_connection_info, &h->mu,
		   limit > 2 * HTTP_RESERVE ? limit - HTTP_RESERVE : limit / 2,
		   limit > 4 * HTTP_RESERVE ? limit - 2 * HTTP_RESERVE : limit / 4,
		   HTTP_HEAD_S * 1000LL);
	cond_init_monotonic(&h->cv);
	if (any) {
		/* every address (":PORT", "0.0.0.0:PORT", "[::]:PORT"), IPv6 too where the host has
		 * it, as Go's listener */
		listen_any6(&ss, &any6);
		h->d = start(h, flags | MHD_USE_DUAL_STACK, (struct sockaddr *)&any6, limit);
	}
	if (!h->d)
		h->d = start(h, flags | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
			     (struct sockaddr *)&ss, limit);
	if (!h->d) {
		log_err_set(err, -EADDRINUSE, "--listen '%s': cannot listen%s%s", listen,
			    mhd_last[0] ? ": " : "", mhd_last);
		reload_http_stop(h);
		return NULL;
	}
	h->reaper_on = reload_thread_start(&h->reaper, reaper, h) == 0;
	if (!h->reaper_on) {
		log_err_set(err, -EAGAIN, "--listen '%s': cannot start a thread", listen);
		reload_http_stop(h);
		return NULL;
	}
	return h;
}

void reload_http_stop(void *p)
{
	struct http *h = p;

	if (!h)
		return;
	if (h->reaper_on) {
		pthread_mutex_lock(&h->mu);
		h->stop = 1;
		pthread_cond_signal(&h->cv);
		pthread_mutex_unlock(&h->mu);
		pthread_join(h->reaper, NULL);
	}
	if (h->d)
		MHD_stop_daemon(h->d); /* its CLOSED notifications free what is still tracked */
	if (h->slots.timeouts || h->slots.culls)
		log_debug("http: %lu request heads late, %lu connections closed for room",
			  h->slots.timeouts, h->slots.culls);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->cv);
	free(h);
}
