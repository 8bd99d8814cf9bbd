/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_http: squat's --listen: GET /health and /metrics (Prometheus text), served by
 * libmicrohttpd without a thread of its own: its epoll fd and a timerfd for its timeouts are
 * polled by the run loop, and every answer is made in that thread.
 * libmicrohttpd is loaded (dlopen) only when --listen is given: Debian's links GnuTLS and with it
 * p11-kit, GMP, Nettle's hogweed, libunistring..., 2.3 MB of resident pages a plugin without
 * --listen (the default) does not need (make bench, test/bench/devices.sh).
 *
 * Slow clients: pkg/slots keeps the connections waiting for a request, as for nodeprobe-reload:
 * a request (head and any chunked body: it waits until it is whole, slots_request_in in handle)
 * must be in HTTP_HEAD_S after waiting began (accepted, or kept alive after an answer), and when
 * more than HTTP_CONNS - HTTP_RESERVE wait, the oldest is closed for the newcomer, so the table
 * never fills with heads and a probe always gets a slot. Single-threaded: slots_sweep runs in
 * devices_http_ready, and the timerfd wakes the loop at the next deadline. */
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "devices/devices_internal.h"
#include "listen/listen.h"
#include "log/log.h"
#include "slots/slots.h"
#include "strbuf/strbuf.h"

#define HTTP_CONNS   16	       /* connections at once */
#define HTTP_IDLE_S  10	       /* an idle connection is closed after this */
#define HTTP_BODY    (1 << 20) /* bytes of /metrics */
#define HTTP_HEAD_S  5	       /* a request head must be complete this long after waiting began */
#define HTTP_RESERVE 4	       /* slots never held by connections waiting for a head */
#define MHD_SONAME   "libmicrohttpd.so.12"

/* The libmicrohttpd functions we call, from dlopen (mhd_load). */
static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_run) *run;
	__typeof__(MHD_get_timeout) *get_timeout;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_get_connection_info) *get_connection_info;
} mhd;

static int mhd_load(struct log_err *err)
{
	void *l;

	if (mhd.run)
		return 0;
	l = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!l)
		return log_err_set(err, -ENOENT, "--listen needs %s: %s", MHD_SONAME, dlerror());
#define MHD_SYM(f)                                                                                 \
	if (!(*(void **)&mhd.f = dlsym(l, "MHD_" #f)))                                             \
		return log_err_set(err, -ENOENT, "--listen: %s lacks MHD_%s", MHD_SONAME, #f);
	MHD_SYM(start_daemon)
	MHD_SYM(stop_daemon)
	MHD_SYM(get_timeout)
	MHD_SYM(get_daemon_info)
	MHD_SYM(create_response_from_buffer)
	MHD_SYM(add_response_header)
	MHD_SYM(queue_response)
	MHD_SYM(destroy_response)
	MHD_SYM(get_connection_info)
	MHD_SYM(run) /* last: set means all are */
#undef MHD_SYM
	return 0;
}

struct devices_http {
	struct MHD_Daemon *d;
	struct slots slots;	   /* connections waiting for a request (pkg/slots) */
	int tfd;		   /* timerfd: MHD's next timeout */
	devices_http_body metrics; /* fills /metrics */
	void *ctx;		   /* for metrics */
};

static enum MHD_Result answer(struct MHD_Connection *c, unsigned code, const char *type,
			      const char *body, size_t len)
{
	struct MHD_Response *r =
	    mhd.create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ok;

	if (!r)
		return MHD_NO;
	mhd.add_response_header(r, "Content-Type", type);
	ok = mhd.queue_response(c, code, r);
	mhd.destroy_response(r);
	return ok;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **state)
{
	struct devices_http *h = cls;
	struct strbuf sb = STRBUF_INIT(HTTP_BODY);
	enum MHD_Result ok;

	(void)version;
	(void)upload;
	if (!*state) { /* headers only: answer once the request is complete */
		*state = h;
		return MHD_YES;
	}
	if (*upload_len)
		return MHD_NO; /* no body is taken */
	/* the whole request is in (not only its head: a chunked body can trickle) */
	slots_request_in(&h->slots, c);
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return answer(c, 405, "text/plain", "method not allowed\n", 19);
	if (!strcmp(url, "/health"))
		return answer(c, 200, "text/plain", "ok\n", 3);
	if (strcmp(url, "/metrics"))
		return answer(c, 404, "text/plain", "not found\n", 10);
	if (h->metrics(h->ctx, &sb) < 0) {
		sb_free(&sb);
		return answer(c, 500, "text/plain", "metrics too large\n", 18);
	}
	ok = answer(c, 200, "text/plain; version=0.0.4", sb.buf ? sb.buf : "", sb.len);
	sb_free(&sb);
	return ok;
}

static struct MHD_Daemon *start(struct devices_http *h, unsigned flags, struct sockaddr *sa)
{
	return mhd.start_daemon(
	    MHD_USE_EPOLL | flags, 0, NULL, NULL, handle, h, MHD_OPTION_SOCK_ADDR, sa,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONNS, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)HTTP_IDLE_S, MHD_OPTION_NOTIFY_CONNECTION, slots_on_conn, &h->slots,
	    MHD_OPTION_NOTIFY_COMPLETED, slots_on_done, &h->slots, MHD_OPTION_END);
}

int devices_http_new(const char *listen, devices_http_body metrics, void *ctx,
		     struct devices_http **out, struct log_err *err)
{
	struct devices_http *h;
	struct sockaddr_storage ss;
	bool any;
	int r = listen_parse(listen, false, &ss, &any, err);

	*out = NULL;
	if (r == 0)
		r = mhd_load(err);
	if (r < 0)
		return r;
	h = calloc(1, sizeof(*h));
	if (!h)
		return log_err_set(err, -ENOMEM, "out of memory");
	h->metrics = metrics;
	h->ctx = ctx;
	/* one thread; a kept-alive connection always has the deadline and makes room */
	slots_init(&h->slots, mhd.get_connection_info, NULL, HTTP_CONNS - HTTP_RESERVE, 0,
		   HTTP_HEAD_S * 1000LL);
	h->slots.room_on_reuse = true;
	h->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (any) {
		/* every address (":PORT", "0.0.0.0:PORT", "[::]:PORT"): IPv6 too where the host has
		 * it, as squat's Go listener (net.Listen's wildcard is dual-stack) */
		struct sockaddr_in6 any6;

		listen_any6(&ss, &any6);
		h->d = start(h, MHD_USE_IPv6 | MHD_USE_DUAL_STACK, (struct sockaddr *)&any6);
	}
	if (!h->d)
		h->d =
		    start(h, ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0, (struct sockaddr *)&ss);
	if (!h->d || h->tfd < 0) {
		devices_http_free(h);
		return log_err_set(err, -EADDRINUSE, "--listen '%s': cannot listen", listen);
	}
	*out = h;
	return 0;
}

int devices_http_fd(const struct devices_http *h)
{
	const union MHD_DaemonInfo *i = mhd.get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);

	return i ? i->epoll_fd : -1;
}

int devices_http_timer_fd(const struct devices_http *h)
{
	return h->tfd;
}

int devices_http_ready(struct devices_http *h)
{
	struct itimerspec t = {0};
	MHD_UNSIGNED_LONG_LONG ms;
	unsigned long long n;
	long long next;

	if (read(h->tfd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return -errno;
	mhd.run(h->d);
	slots_sweep(&h->slots, &next); /* late requests: closed */
	if (mhd.get_timeout(h->d, &ms) == MHD_YES && (next < 0 || (long long)ms < next))
		next = (long long)ms; /* a connection's timeout: be back then */
	if (next >= 0) {
		t.it_value.tv_sec = (time_t)(next / 1000);
		t.it_value.tv_nsec = (long)(next % 1000) * 1000000L + (next ? 0 : 1);
	}
	timerfd_settime(h->tfd, 0, &t, NULL);
	return 0;
}

void devices_http_free(struct devices_http *h)
{
	if (!h)
		return;
	if (h->d)
		mhd.stop_daemon(h->d);
	if (h->tfd >= 0)
		close(h->tfd);
	free(h);
}
