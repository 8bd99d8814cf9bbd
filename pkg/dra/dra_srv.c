// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dra_srv: the public API (dra.h): the service and registration sockets, their connections over
 * pkg/kubelet's kubelet_grpc, the method table, all in one epoll set the caller polls, and the
 * calls handed to the worker (dra_work.c), answered when they come back.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "dra/dra_internal.h"
#include "fsutil/fsutil.h"
#include "log/log.h"

enum {
	SOCK_SVC = 0,
	SOCK_REG = 1,
	TAG_INOTIFY = 2,
	TAG_TIMER = 3,
	TAG_TICK = 4,
	TAG_DONE = 5,
	TAG_CONN = 16
};

struct dsock {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char *name; /* its file name, inside path */
	int lfd;
	dev_t dev; /* the socket file we bound, to remove only ours */
	ino_t ino;
};

struct dconn {
	struct kg_conn *g;
	long long last_ms;
	uint32_t ev; /* the epoll events asked for */
};

/* A Prepare or Unprepare call, from its request to its answer (or its drop). */
struct dcall {
	struct dwork_job j;	   /* first: the worker's */
	struct dcall *prev, *next; /* dra_srv.calls, the loop's only */
	const struct dra_srv *s;   /* ops and ctx (the worker reads nothing else) */
	const char *method;	   /* the path's last part, for messages (static: the table's) */
	uint64_t conn;		   /* the token: kg_conn_id and stream */
	int32_t sid;
	long long deadline;  /* kg_now_ms clock */
	atomic_bool gone;    /* the stream or connection went: skip it, drop its answer */
	struct dpb_req *req; /* the claims */
	struct kpb_buf out;  /* the answer (status KG_OK), filled on the worker */
	int status;	     /* gRPC status */
	char msg[256];	     /* its message */
};

struct dra_srv {
	char *driver;
	char dir[2][4096]; /* the service socket's directory, the registry */
	struct dra_ops ops;
	void *ctx;
	struct dsock sock[2];
	struct dconn conns[DRA_MAX_CONNS];
	int ep, ino, tfd;
	int tick; /* dra_srv_every's timerfd, or -1 */
	unsigned reg_ok, reg_refused;
	char last[256];
	struct dwork *w;
	struct dcall *calls; /* taken, not answered yet */
	size_t n_calls, call_bytes;
};

/* The method table: each path's handler. */
typedef int (*method_fn)(struct dra_srv *s, const uint8_t *m, size_t len, struct kpb_buf *out,
			 struct log_err *err);

static int m_info(struct dra_srv *s, const uint8_t *m, size_t len, struct kpb_buf *out,
		  struct log_err *err)
{
	int rc = dpb_empty_ok(m, len, err);

	return rc < 0 ? rc : dpb_info(s->driver, s->sock[SOCK_SVC].path, out);
}

static int m_status(struct dra_srv *s, const uint8_t *m, size_t len, struct kpb_buf *out,
		    struct log_err *err)
{
	bool ok = false;
	int rc = dpb_status(m, len, &ok, s->last, sizeof(s->last), err);

	if (rc < 0)
		return rc;
	if (ok) {
		s->reg_ok++;
		log_info("dra: %s registered with the kubelet", s->driver);
		dwork_kick(s->w); /* a kubelet that starts deletes the node's slices */
	} else {
		s->reg_refused++;
		log_warn("dra: the kubelet refused %s: %s", s->driver, s->last);
	}
	return dpb_empty_resp(out);
}

static const struct {
	const char *path;
	method_fn fn; /* answered on the loop */
	int call;     /* else: 1 NodePrepareResources, 2 NodeUnprepareResources (the worker) */
} methods[] = {
    {"/" DRA_REG_SVC "/GetInfo", m_info, 0},
    {"/" DRA_REG_SVC "/NotifyRegistrationStatus", m_status, 0},
    {"/" DRA_SVC_V1 "/NodePrepareResources", NULL, 1},
    {"/" DRA_SVC_V1 "/NodeUnprepareResources", NULL, 2},
    {"/" DRA_SVC_V1BETA1 "/NodePrepareResources", NULL, 1},
    {"/" DRA_SVC_V1BETA1 "/NodeUnprepareResources", NULL, 2},
};

static int status_of(int rc)
{
	return rc == -E2BIG	? KG_RESOURCE_EXHAUSTED
	       : rc == -ENOTSUP ? KG_UNIMPLEMENTED
	       : rc == -EINVAL	? KG_INVALID_ARGUMENT
	       : rc == -EAGAIN	? KG_UNAVAILABLE
				: KG_INTERNAL;
}

/* On the worker: the call's answer, unless it is gone or too late to begin. */
static void call_run(struct dwork_job *j)
{
	struct dcall *d = (struct dcall *)j;
	struct log_err e = {0};
	int rc;

	if (atomic_load(&d->gone))
		return;
	if (kg_now_ms() >= d->deadline) {
		d->status = KG_DEADLINE_EXCEEDED;
		snprintf(d->msg, sizeof(d->msg), "deadline exceeded before the call's turn came");
		return;
	}
	rc = dpb_answer(d->req, &d->s->ops, d->s->ctx, d->deadline, &d->out, &e);
	if (rc < 0) {
		log_warn("dra: %s: %s", d->method, e.msg);
		d->status = status_of(rc);
		snprintf(d->msg, sizeof(d->msg), "%.250s", e.msg);
	}
}

static void call_free(struct dra_srv *s, struct dcall *d)
{
	if (d->prev)
		d->prev->next = d->next;
	else
		s->calls = d->next;
	if (d->next)
		d->next->prev = d->prev;
	s->n_calls--;
	s->call_bytes -= d->req->bytes;
	dpb_req_free(d->req);
	kpb_buf_free(&d->out);
	free(d);
}

/* Every call of connection id (and stream sid, unless -1) is gone: skipped, its answer dropped. */
static void calls_gone(struct dra_srv *s, uint64_t id, int32_t sid)
{
	for (struct dcall *d = s->calls; d; d = d->next)
		if (d->conn == id && (sid < 0 || d->sid == sid))
			atomic_store(&d->gone, true);
}

/*
 * A Prepare or Unprepare request: decoded here (its claims counted before anything is
 * unpacked), handed to the worker. An empty one (a liveness probe) is answered at once.
 */
static int call_take(struct dra_srv *s, struct kg_conn *g, int32_t sid, const char *path,
		     const uint8_t *m, size_t len, bool prepare, struct log_err *err)
{
	struct dpb_req *q = NULL;
	struct kpb_buf b = {0};
	struct dcall *d;
	int rc = dpb_decode(m, len, prepare, &q, err);

	if (rc < 0)
		return rc;
	if (q->n == 0) {
		rc = dpb_answer(q, &s->ops, s->ctx, -1, &b, err);
		dpb_req_free(q);
		if (rc == 0 && kg_send(g, sid, &b, false) == 0)
			kg_finish(g, sid, KG_OK, NULL);
		return rc;
	}
	if (s->n_calls >= DRA_QUEUE_MAX || s->call_bytes + q->bytes > DRA_QUEUE_BYTES) {
		rc = log_err_set(err, -EAGAIN,
				 "%zu calls (%zu bytes of claims) wait for the API server: limit "
				 "%d calls, %u bytes; try again",
				 s->n_calls, s->call_bytes, DRA_QUEUE_MAX, DRA_QUEUE_BYTES);
		dpb_req_free(q);
		return rc;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		dpb_req_free(q);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	kg_set_deadline(g, sid, kg_now_ms() + DRA_CALL_DEADLINE_MS);
	d->j.run = call_run;
	d->s = s;
	d->method = strrchr(path, '/') + 1;
	d->conn = kg_conn_id(g);
	d->sid = sid;
	d->deadline = kg_stream_deadline(g, sid);
	atomic_init(&d->gone, false);
	d->req = q;
	d->status = KG_OK;
	d->next = s->calls;
	if (s->calls)
		s->calls->prev = d;
	s->calls = d;
	s->n_calls++;
	s->call_bytes += q->bytes;
	log_debug("dra: %s of %zu claims handed to the worker (%zu calls waiting)", d->method, q->n,
		  s->n_calls);
	dwork_push(s->w, &d->j);
	return 0;
}

static void on_request(void *ctx, struct kg_conn *g, int32_t sid, const char *path,
		       const uint8_t *body, size_t n)
{
	struct dra_srv *s = ctx;
	struct kpb_buf b = {0};
	struct log_err e = {0};
	method_fn fn = NULL;
	const uint8_t *m;
	size_t len;
	int rc;

	size_t i = 0;

	while (i < sizeof(methods) / sizeof(methods[0]) && strcmp(path, methods[i].path))
		i++;
	if (i == sizeof(methods) / sizeof(methods[0])) {
		snprintf(e.msg, sizeof(e.msg), "unknown method '%s'", path);
		kg_finish(g, sid, KG_UNIMPLEMENTED, e.msg);
		return;
	}
	fn = methods[i].fn;
	rc = kpb_unframe(body, n, &m, &len, &e);
	/* a call gets the table's path, not the stream's: it outlives its stream when the kubelet
	 * goes, and the worker names it in messages (make check found that use after free) */
	if (rc == 0 && !fn)
		rc = call_take(s, g, sid, methods[i].path, m, len, methods[i].call == 1, &e);
	else if (rc == 0)
		rc = fn(s, m, len, &b, &e);
	if (rc < 0) {
		log_warn("dra: %s: %s", path, e.msg);
		kg_finish(g, sid, status_of(rc), e.msg);
		return;
	}
	if (fn && kg_send(g, sid, &b, false) == 0)
		kg_finish(g, sid, KG_OK, NULL);
}

static void on_closed(void *ctx, struct kg_conn *g, int32_t sid)
{
	calls_gone(ctx, kg_conn_id(g), sid);
}

static const struct kg_handler handler = {.request = on_request, .closed = on_closed};

bool dra_driver_ok(const char *d)
{
	size_t n = d ? strlen(d) : 0, lab = 0;

	if (n == 0 || n > 63 || d[0] < 'a' || d[0] > 'z') /* CDI vendor: a letter first */
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = d[i];

		if (c == '.') {
			if (lab == 0 || d[i - 1] == '-')
				return false;
			lab = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return false;
		if (c == '-' && lab == 0)
			return false;
		lab++;
	}
	return lab > 0 && d[n - 1] != '-';
}

int dra_srv_new(const struct dra_opts *o, struct dra_srv **out, struct log_err *err)
{
	struct dra_srv *s;
	const char *reg = o->registry_dir ? o->registry_dir : DRA_REGISTRY_DIR;
	const char *plug = o->plugins_dir ? o->plugins_dir : DRA_PLUGINS_DIR;

	*out = NULL;
	if (!dra_driver_ok(o->driver))
		return log_err_set(err, -EINVAL,
				   "DRA driver '%s': not a DNS subdomain of at most 63 characters",
				   o->driver ? o->driver : "");
	if (!o->ops.prepare || !o->ops.unprepare)
		return log_err_set(err, -EINVAL, "dra: no prepare/unprepare callback");
	s = calloc(1, sizeof(*s));
	if (!s)
		return log_err_set(err, -ENOMEM, "out of memory");
	s->ep = s->ino = s->tfd = s->tick = -1;
	s->sock[0].lfd = s->sock[1].lfd = -1;
	s->ops = o->ops;
	s->ctx = o->ctx;
	s->driver = strdup(o->driver);
	if (!s->driver || dwork_new(&s->w, err) < 0) {
		free(s->driver);
		free(s);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	snprintf(s->dir[SOCK_SVC], sizeof(s->dir[0]), "%s/%s", plug, o->driver);
	snprintf(s->dir[SOCK_REG], sizeof(s->dir[0]), "%s", reg);
	if ((size_t)snprintf(s->sock[SOCK_SVC].path, sizeof(s->sock[0].path), "%s/dra.sock",
			     s->dir[SOCK_SVC]) >= sizeof(s->sock[0].path) ||
	    (size_t)snprintf(s->sock[SOCK_REG].path, sizeof(s->sock[0].path), "%s/%s-reg.sock", reg,
			     o->driver) >= sizeof(s->sock[0].path)) {
		dra_srv_free(s);
		return log_err_set(err, -ENAMETOOLONG,
				   "dra: %s or %s: longer than a socket path may be", plug, reg);
	}
	for (int i = 0; i < 2; i++)
		s->sock[i].name = strrchr(s->sock[i].path, '/') + 1;
	*out = s;
	return 0;
}

static int ep_add(struct dra_srv *s, int fd, uint64_t tag, uint32_t ev)
{
	struct epoll_event e = {.events = ev, .data.u64 = tag};

	return epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &e) < 0 ? -errno : 0;
}

/* Create socket i (pkg/kubelet's kubelet_sock.c: mode 0600, a stale one of ours replaced). */
static int listen_on(struct dra_srv *s, int i, struct log_err *err)
{
	struct dsock *k = &s->sock[i];
	int rc = ksock_listen(k->path, &k->lfd, &k->dev, &k->ino, err);

	if (rc == 0 && ep_add(s, k->lfd, (uint64_t)i, EPOLLIN) < 0)
		return log_err_set(err, -errno, "epoll: %s", strerror(errno));
	return rc;
}

static bool ours_there(const struct dsock *k)
{
	return ksock_ours(k->path, k->lfd, k->dev, k->ino);
}

int dra_srv_start(struct dra_srv *s, struct log_err *err)
{
	int rc;

	s->ep = epoll_create1(EPOLL_CLOEXEC);
	s->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->ep < 0 || s->ino < 0 || s->tfd < 0)
		return log_err_set(err, -errno, "dra: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		if (fs_mkdir_p(s->dir[i], 0750) < 0 && !fs_is_dir(s->dir[i]))
			return log_err_set(err, -errno, "%s: cannot create directory: %s",
					   s->dir[i], strerror(errno));
		if (inotify_add_watch(s->ino, s->dir[i], IN_DELETE | IN_MOVED_FROM) < 0)
			return log_err_set(err, -errno, "%s: inotify: %s", s->dir[i],
					   strerror(errno));
	}
	if (ep_add(s, s->ino, TAG_INOTIFY, EPOLLIN) < 0 ||
	    ep_add(s, s->tfd, TAG_TIMER, EPOLLIN) < 0 ||
	    ep_add(s, dwork_fd(s->w), TAG_DONE, EPOLLIN) < 0)
		return log_err_set(err, -errno, "epoll: %s", strerror(errno));
	/* the service first: the kubelet may call it right after GetInfo */
	rc = listen_on(s, SOCK_SVC, err);
	if (rc == 0)
		rc = listen_on(s, SOCK_REG, err);
	if (rc == 0)
		rc = dwork_start(s->w, err);
	if (rc == 0)
		log_info("dra: %s serving %s, registering through %s", s->driver,
			 s->sock[SOCK_SVC].path, s->sock[SOCK_REG].path);
	return rc;
}

int dra_srv_fd(const struct dra_srv *s)
{
	return s->ep;
}

const char *dra_srv_endpoint(const struct dra_srv *s)
{
	return s->sock[SOCK_SVC].path;
}

void dra_srv_registrations(const struct dra_srv *s, unsigned *ok, unsigned *refused,
			   const char **last)
{
	*ok = s->reg_ok;
	*refused = s->reg_refused;
	*last = s->last;
}

int dra_srv_every(struct dra_srv *s, int ms, int (*fn)(void *ctx, struct log_err *err), void *ctx,
		  struct log_err *err)
{
	struct itimerspec at = {.it_interval = {ms / 1000, (ms % 1000) * 1000000L}};

	at.it_value = at.it_interval;
	if (s->tick < 0) {
		s->tick = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (s->tick < 0 || ep_add(s, s->tick, TAG_TICK, EPOLLIN) < 0)
			return log_err_set(err, -errno, "dra: timer: %s", strerror(errno));
	}
	dwork_set_task(s->w, fn, ctx);
	if (timerfd_settime(s->tick, 0, &at, NULL) < 0)
		return log_err_set(err, -errno, "dra: timer: %s", strerror(errno));
	return 0;
}

void dra_srv_kick(struct dra_srv *s)
{
	dwork_kick(s->w);
}

static void conn_drop(struct dra_srv *s, struct dconn *c)
{
	calls_gone(s, kg_conn_id(c->g), -1);
	kg_conn_free(c->g); /* closes the fd: out of the epoll set */
	*c = (struct dconn){0};
}

/* The worker's done calls: each answered on its stream if that is still there, then freed. */
static void deliver(struct dra_srv *s)
{
	struct dwork_job *j = dwork_done(s->w);

	while (j) {
		struct dcall *d = (struct dcall *)j;
		struct dconn *c = NULL;
		struct log_err e = {0};

		j = j->next;
		for (size_t i = 0; i < DRA_MAX_CONNS && !atomic_load(&d->gone) && !c; i++)
			if (s->conns[i].g && kg_conn_id(s->conns[i].g) == d->conn)
				c = &s->conns[i];
		if (!c) {
			log_debug("dra: %s: the kubelet went before the answer: dropped",
				  d->method);
		} else if (d->status != KG_OK) {
			kg_finish(c->g, d->sid, d->status, d->msg);
		} else if (kg_send(c->g, d->sid, &d->out, false) == 0) {
			kg_finish(c->g, d->sid, KG_OK, NULL);
		}
		if (c && kg_conn_io(c->g, 0, &e) < 0) /* send now, not at the next readiness */
			conn_drop(s, c);
		call_free(s, d);
	}
}

/* Accept on socket i; a full table closes the connection idle longest. */
static void accept_on(struct dra_srv *s, int i, long long now)
{
	for (int k = 0; k < 8; k++) {
		int fd = accept4(s->sock[i].lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct dconn *slot = NULL;
		size_t at = 0;

		if (fd < 0)
			return;
		for (size_t j = 0; j < DRA_MAX_CONNS; j++) {
			if (!s->conns[j].g) {
				slot = &s->conns[j], at = j;
				break;
			}
			if (!slot || s->conns[j].last_ms < slot->last_ms)
				slot = &s->conns[j], at = j;
		}
		if (slot->g) {
			log_warn("dra: %d connections: closing the one idle longest",
				 DRA_MAX_CONNS);
			conn_drop(s, slot);
		}
		if (kg_conn_new(fd, true, &handler, s, &slot->g) < 0)
			continue;
		slot->last_ms = now;
		slot->ev = EPOLLIN;
		if (ep_add(s, fd, TAG_CONN + at, EPOLLIN) < 0)
			conn_drop(s, slot);
	}
}

/* Someone removed a socket of ours: make it again (the kubelet registers us again). */
static int on_inotify(struct dra_srv *s, struct log_err *err)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool gone = false;
	ssize_t n;

	while ((n = read(s->ino, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			if (ev->len && (!strcmp(ev->name, s->sock[0].name) ||
					!strcmp(ev->name, s->sock[1].name)))
				gone = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	for (int i = 0; gone && i < 2; i++) {
		int rc;

		if (ours_there(&s->sock[i]))
			continue;
		log_info("dra: %s removed: serving it again", s->sock[i].path);
		rc = listen_on(s, i, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* After I/O: drop finished connections, ask epoll for what each wants, arm the deadline timer. */
static void settle(struct dra_srv *s)
{
	long long now = kg_now_ms(), next = -1;
	struct itimerspec at = {0};

	for (size_t i = 0; i < DRA_MAX_CONNS; i++) {
		struct dconn *c = &s->conns[i];
		struct log_err e = {0};
		uint32_t want;
		short pe;
		long long d;

		if (!c->g)
			continue;
		if (kg_conn_expire(c->g, now) > 0 && kg_conn_io(c->g, 0, &e) < 0) {
			conn_drop(s, c);
			continue;
		}
		pe = kg_conn_events(c->g);
		if (!pe) {
			conn_drop(s, c);
			continue;
		}
		want = (pe & POLLIN ? EPOLLIN : 0) | (pe & POLLOUT ? EPOLLOUT : 0);
		if (want != c->ev) {
			struct epoll_event ev = {.events = want, .data.u64 = TAG_CONN + i};

			epoll_ctl(s->ep, EPOLL_CTL_MOD, kg_conn_fd(c->g), &ev);
			c->ev = want;
		}
		d = kg_conn_deadline(c->g);
		if (d >= 0 && (next < 0 || d < next))
			next = d;
	}
	if (next >= 0) {
		long long ms = next - now < 1 ? 1 : next - now;

		at.it_value.tv_sec = ms / 1000;
		at.it_value.tv_nsec = (ms % 1000) * 1000000L;
	}
	timerfd_settime(s->tfd, 0, &at, NULL);
}

int dra_srv_ready(struct dra_srv *s, struct log_err *err)
{
	struct epoll_event ev[32];
	long long now = kg_now_ms();
	int n = epoll_wait(s->ep, ev, 32, 0);

	if (n < 0 && errno != EINTR)
		return log_err_set(err, -errno, "epoll: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		uint64_t tag = ev[i].data.u64;

		if (tag == SOCK_SVC || tag == SOCK_REG) {
			accept_on(s, (int)tag, now);
		} else if (tag == TAG_INOTIFY) {
			int rc = on_inotify(s, err);

			if (rc < 0)
				return rc;
		} else if (tag == TAG_TICK) {
			uint64_t ticks;

			if (read(s->tick, &ticks, sizeof(ticks)) > 0)
				dwork_kick(s->w);
		} else if (tag == TAG_DONE) {
			deliver(s);
		} else if (tag == TAG_TIMER) {
			uint64_t ticks;

			if (read(s->tfd, &ticks, sizeof(ticks)) < 0)
				(void)0; /* expiry is checked in settle */
		} else if (tag >= TAG_CONN && tag < TAG_CONN + DRA_MAX_CONNS) {
			struct dconn *c = &s->conns[tag - TAG_CONN];
			struct log_err e = {0};
			short re = (ev[i].events & EPOLLIN ? POLLIN : 0) |
				   (ev[i].events & EPOLLOUT ? POLLOUT : 0) |
				   (ev[i].events & (EPOLLHUP | EPOLLERR) ? POLLHUP : 0);

			if (!c->g)
				continue;
			c->last_ms = now;
			if (kg_conn_io(c->g, re, &e) < 0) {
				log_debug("dra: connection closed: %s", e.msg);
				conn_drop(s, c);
			}
		}
	}
	settle(s);
	return 0;
}

void dra_srv_free(struct dra_srv *s)
{
	if (!s)
		return;
	for (struct dwork_job *j = s->w ? dwork_stop(s->w) : NULL; j;) {
		struct dcall *d = (struct dcall *)j;

		j = j->next;
		call_free(s, d); /* answers dropped: the connections go now */
	}
	dwork_free(s->w);
	for (size_t i = 0; i < DRA_MAX_CONNS; i++)
		if (s->conns[i].g)
			conn_drop(s, &s->conns[i]);
	for (int i = 1; i >= 0; i--) { /* the registration first: the kubelet deregisters */
		if (ours_there(&s->sock[i]))
			unlink(s->sock[i].path);
		if (s->sock[i].lfd >= 0)
			close(s->sock[i].lfd);
	}
	if (s->ep >= 0)
		close(s->ep);
	if (s->ino >= 0)
		close(s->ino);
	if (s->tfd >= 0)
		close(s->tfd);
	if (s->tick >= 0)
		close(s->tick);
	free(s->driver);
	free(s);
}
