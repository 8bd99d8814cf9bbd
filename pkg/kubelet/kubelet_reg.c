// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kubelet_reg: Registration.Register of each resource with <dir>/kubelet.sock, retried with
 * backoff (1 s doubling to 30 s) when the kubelet is absent, refuses, or another plugin holds the
 * resource; again at once when the kubelet re-creates kubelet.sock (inotify on the directory, no
 * polling). Reports our own sockets' removal to the caller, who re-creates them and kicks.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "kubelet/kubelet_internal.h"
#include "log/log.h"

enum kreg_state { KREG_IDLE, KREG_DUE, KREG_CALLING, KREG_DONE };

struct kreg_res {
	char *resource, *endpoint;
	bool preferred;
	enum kreg_state state;
	long long due_ms, started_ms; /* DUE: when; CALLING: since when */
	unsigned gen;		      /* Register calls sent */
	int backoff_ms;		      /* the wait after the next failure */
	struct kg_conn *c;	      /* CALLING: the call's connection */
	bool got;		      /* the call's answer arrived */
	int status;
	char msg[256];
};

struct kreg {
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int ifd;
	struct kreg_res *r;
	size_t n;
	size_t polled[KSRV_MAX_RES];		/* kreg_pollfds' order: resource index ... */
	struct kg_conn *polled_c[KSRV_MAX_RES]; /* ... and its connection then */
	size_t n_polled;
};

long long kreg_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int kreg_new(const char *dir, struct kreg **out, struct log_err *err)
{
	struct kreg *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return log_err_set(err, -ENOMEM, "out of memory");
	if ((size_t)snprintf(r->sock, sizeof(r->sock), "%s/%s", dir, KUBELET_SOCK) >=
	    sizeof(r->sock)) {
		free(r);
		return log_err_set(err, -ENAMETOOLONG, "%s/%s: longer than a socket path may be",
				   dir, KUBELET_SOCK);
	}
	r->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (r->ifd < 0 || inotify_add_watch(r->ifd, dir,
					    IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM |
						IN_ONLYDIR) < 0) {
		int e = errno;

		if (r->ifd >= 0)
			close(r->ifd);
		free(r);
		return log_err_set(err, -e, "%s: cannot watch the device-plugins directory: %s",
				   dir, strerror(e));
	}
	*out = r;
	return 0;
}

static void call_end(struct kreg_res *x)
{
	kg_conn_free(x->c);
	x->c = NULL;
	x->got = false;
}

void kreg_free(struct kreg *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		call_end(&r->r[i]);
		free(r->r[i].resource);
		free(r->r[i].endpoint);
	}
	free(r->r);
	close(r->ifd);
	free(r);
}

int kreg_add(struct kreg *r, const char *resource, const char *endpoint, bool preferred)
{
	struct kreg_res *n = realloc(r->r, (r->n + 1) * sizeof(*n));
	struct kreg_res *x;

	if (!n)
		return -ENOMEM;
	r->r = n;
	x = &r->r[r->n];
	memset(x, 0, sizeof(*x));
	x->resource = strdup(resource);
	x->endpoint = strdup(endpoint);
	if (!x->resource || !x->endpoint) {
		free(x->resource);
		free(x->endpoint);
		return -ENOMEM;
	}
	x->preferred = preferred;
	x->backoff_ms = KREG_BACKOFF_MIN_MS;
	return (int)r->n++;
}

void kreg_kick(struct kreg *r, size_t i)
{
	struct kreg_res *x = &r->r[i];

	call_end(x);
	x->state = KREG_DUE;
	x->due_ms = kreg_now_ms();
	x->backoff_ms = KREG_BACKOFF_MIN_MS;
}

int kreg_watch_fd(const struct kreg *r)
{
	return r->ifd;
}

int kreg_inotify(struct kreg *r, bool *gone, size_t n_gone, struct log_err *err)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		ssize_t n = read(r->ifd, buf, sizeof(buf));

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n <= 0)
			return log_err_set(err, n < 0 ? -errno : -EIO, "inotify read: %s",
					   n < 0 ? strerror(errno) : "end of file");
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			bool kubelet = ev->len && !strcmp(ev->name, KUBELET_SOCK);

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				/* Lost events: check every socket, register everything again. */
				for (size_t i = 0; i < n_gone; i++)
					gone[i] = true;
				kubelet = true;
			}
			if (kubelet && (ev->mask & (IN_CREATE | IN_MOVED_TO | IN_Q_OVERFLOW))) {
				log_info("kubelet: %s (re)created: registering again", r->sock);
				for (size_t i = 0; i < r->n; i++)
					kreg_kick(r, i);
				continue;
			}
			if (!ev->len || !(ev->mask & (IN_DELETE | IN_MOVED_FROM)))
				continue;
			for (size_t i = 0; i < r->n && i < n_gone; i++)
				if (!strcmp(ev->name, r->r[i].endpoint))
					gone[i] = true;
		}
	}
}

static void on_response(void *ctx, struct kg_conn *c, int32_t sid, int status, const char *msg,
			const uint8_t *body, size_t n)
{
	struct kreg *r = ctx;

	(void)sid, (void)body, (void)n;
	for (size_t i = 0; i < r->n; i++) {
		struct kreg_res *x = &r->r[i];

		if (x->c != c)
			continue;
		x->got = true;
		x->status = status;
		snprintf(x->msg, sizeof(x->msg), "%s", msg);
	}
}

static const struct kg_handler reg_handler = {.response = on_response};

static void fail(struct kreg_res *x, long long now, const char *why)
{
	log_warn("kubelet: Register %s (endpoint %s): %s; retrying in %d s", x->resource,
		 x->endpoint, why, x->backoff_ms / 1000);
	call_end(x);
	x->state = KREG_DUE;
	x->due_ms = now + x->backoff_ms;
	x->backoff_ms =
	    x->backoff_ms * 2 > KREG_BACKOFF_MAX_MS ? KREG_BACKOFF_MAX_MS : x->backoff_ms * 2;
}

static void start(struct kreg *r, struct kreg_res *x, long long now)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct kpb_buf msg;
	char why[320];
	int fd, rc;

	memcpy(sa.sun_path, r->sock, sizeof(sa.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(why, sizeof(why), "%s: %s", r->sock, strerror(errno));
		if (fd >= 0)
			close(fd);
		fail(x, now, why);
		return;
	}
	rc = kg_conn_new(fd, false, &reg_handler, r, &x->c);
	if (rc == 0)
		rc = kpb_register(x->endpoint, x->resource, x->preferred, &msg);
	if (rc == 0)
		rc = kg_call(x->c, "/" KUBELET_API_VERSION ".Registration/Register", &msg);
	if (rc < 0) {
		fail(x, now, strerror(-rc));
		return;
	}
	x->state = KREG_CALLING;
	x->started_ms = now;
	x->gen++;
}

unsigned kreg_generation(const struct kreg *r, size_t i)
{
	return i < r->n ? r->r[i].gen : 0;
}

size_t kreg_pollfds(struct kreg *r, struct pollfd *pfd, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n && k < max && k < KSRV_MAX_RES; i++) {
		if (r->r[i].state != KREG_CALLING || !r->r[i].c)
			continue;
		pfd[k] = (struct pollfd){.fd = kg_conn_fd(r->r[i].c),
					 .events = kg_conn_events(r->r[i].c)};
		r->polled[k] = i;
		r->polled_c[k] = r->r[i].c;
		k++;
	}
	r->n_polled = k;
	return k;
}

int kreg_step(struct kreg *r, const struct pollfd *pfd, size_t n, long long now)
{
	long long next = -1;
	struct log_err e;

	for (size_t k = 0; k < n && k < r->n_polled; k++) {
		struct kreg_res *x = &r->r[r->polled[k]];

		if (x->c != r->polled_c[k] || x->state != KREG_CALLING || !pfd[k].revents)
			continue;
		log_err_clear(&e);
		if (kg_conn_io(x->c, pfd[k].revents, &e) < 0 && !x->got)
			fail(x, now, e.msg);
	}
	r->n_polled = 0;
	for (size_t i = 0; i < r->n; i++) {
		struct kreg_res *x = &r->r[i];
		long long at = -1;

		if (x->state == KREG_CALLING && x->got) {
			if (x->status == KG_OK) {
				log_info("kubelet: registered %s (endpoint %s)", x->resource,
					 x->endpoint);
				call_end(x);
				x->state = KREG_DONE;
				x->backoff_ms = KREG_BACKOFF_MIN_MS;
			} else {
				char why[320];

				snprintf(why, sizeof(why), "gRPC status %d: %s", x->status, x->msg);
				fail(x, now, why);
			}
		} else if (x->state == KREG_CALLING && !kg_conn_events(x->c)) {
			fail(x, now, "connection ended without an answer");
		} else if (x->state == KREG_CALLING && now - x->started_ms >= KREG_TIMEOUT_MS) {
			fail(x, now, "no answer in time");
		}
		if (x->state == KREG_DUE && now >= x->due_ms)
			start(r, x, now);
		if (x->state == KREG_DUE)
			at = x->due_ms;
		else if (x->state == KREG_CALLING)
			at = x->started_ms + KREG_TIMEOUT_MS;
		if (at >= 0 && (next < 0 || at < next))
			next = at;
	}
	if (next < 0)
		return -1;
	return next <= now ? 0 : (int)(next - now > INT_MAX ? INT_MAX : next - now);
}
