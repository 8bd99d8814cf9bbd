// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kubelet_srv: the public API (kubelet.h). Resources and their sockets, the DevicePlugin service
 * (method routing over kubelet_grpc, messages by kubelet_pb), ListAndWatch streams, and the one
 * poll loop that also drives registration (kubelet_reg) and the caller's fds.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "kubelet/kubelet_internal.h"
#include "log/log.h"

struct kres {
	char *name, *endpoint;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lfd;   /* listening socket; -1 before run */
	dev_t dev; /* the socket file we bound, to remove only ours */
	ino_t ino;
	struct kubelet_device *devs; /* owned, ids strdup'd */
	size_t n;
	unsigned kubelet_gen; /* the Register (kreg_generation) whose kubelet stream is marked */
};

struct kconn {
	struct kg_conn *g;
	size_t res;
	long long last_ms;  /* last I/O */
	long long since_ms; /* accepted */
	long long watch_ms; /* its newest ListAndWatch began */
	bool requested;	    /* a request came: no first-request deadline */
	bool kubelet;	    /* its ListAndWatch was the first after our Register: the kubelet's */
	size_t watches;	    /* ListAndWatch streams open on it */
};

struct kwatch {
	struct kg_conn *g;
	int32_t sid;
	size_t res;
};

struct kubelet_srv {
	char *dir, *prefix;
	struct kubelet_ops ops;
	void *ctx;
	struct kres res[KSRV_MAX_RES];
	size_t n_res;
	struct kconn conns[KSRV_MAX_CONNS]; /* slots; g NULL: free */
	struct kwatch w[KSRV_MAX_CONNS * KG_MAX_STREAMS];
	size_t n_w;
	struct kreg *reg;
};

#define DP "/" KUBELET_API_VERSION ".DevicePlugin/"

static struct kconn *conn_of(struct kubelet_srv *s, const struct kg_conn *g)
{
	for (size_t i = 0; i < KSRV_MAX_CONNS; i++)
		if (s->conns[i].g == g)
			return &s->conns[i];
	return NULL;
}

static void devs_free(struct kubelet_device *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)d[i].id);
	free(d);
}

int kubelet_srv_new(const struct kubelet_opts *o, struct kubelet_srv **out, struct log_err *err)
{
	struct kubelet_srv *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return log_err_set(err, -ENOMEM, "out of memory");
	if (!o->ops.allocate)
		return free(s), log_err_set(err, -EINVAL, "kubelet: no allocate callback");
	s->dir = strdup(o->dir ? o->dir : KUBELET_DIR_DEFAULT);
	s->prefix = strdup(o->socket_prefix ? o->socket_prefix : "nodeprobe-");
	s->ops = o->ops;
	s->ctx = o->ctx;
	if (!s->dir || !s->prefix) {
		kubelet_srv_free(s);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	*out = s;
	return 0;
}

int kubelet_srv_add(struct kubelet_srv *s, const char *resource, struct log_err *err)
{
	struct kres *r;
	char ep[256];

	if (!kubelet_resource_ok(resource))
		return log_err_set(err, -EINVAL,
				   "resource '%s': not <domain>/<name> (a DNS subdomain other than "
				   "kubernetes.io, a name of 1..63 letters, digits, '-', '_', '.')",
				   resource);
	if (s->n_res == KSRV_MAX_RES)
		return log_err_set(err, -E2BIG, "resource '%s': more than %d resources", resource,
				   KSRV_MAX_RES);
	for (size_t i = 0; i < s->n_res; i++)
		if (!strcmp(s->res[i].name, resource))
			return log_err_set(err, -EEXIST, "resource '%s' added twice", resource);
	if ((size_t)snprintf(ep, sizeof(ep), "%s%s.sock", s->prefix, resource) >= sizeof(ep))
		return log_err_set(err, -ENAMETOOLONG, "resource '%s': socket name too long",
				   resource);
	*strchr(ep + strlen(s->prefix), '/') = '_';
	r = &s->res[s->n_res];
	memset(r, 0, sizeof(*r));
	r->lfd = -1;
	if ((size_t)snprintf(r->path, sizeof(r->path), "%s/%s", s->dir, ep) >= sizeof(r->path))
		return log_err_set(err, -ENAMETOOLONG, "%s/%s: longer than a socket path may be",
				   s->dir, ep);
	r->name = strdup(resource);
	r->endpoint = strdup(ep);
	if (!r->name || !r->endpoint) {
		free(r->name);
		free(r->endpoint);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	return (int)s->n_res++;
}

static bool devs_equal(const struct kres *r, const struct kubelet_device *d, size_t n)
{
	if (r->n != n || !r->devs)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(r->devs[i].id, d[i].id) || r->devs[i].healthy != d[i].healthy ||
		    r->devs[i].numa_node != d[i].numa_node)
			return false;
	return true;
}

/* Send res's list to one stream (latest: replaces an unsent older list). */
static void send_list(struct kubelet_srv *s, struct kg_conn *g, int32_t sid, size_t res)
{
	struct kpb_buf b;

	if (kpb_list(s->res[res].devs, s->res[res].n, &b) < 0) {
		kg_finish(g, sid, KG_INTERNAL, "cannot encode the device list");
		return;
	}
	kg_send(g, sid, &b, true);
}

int kubelet_srv_set_devices(struct kubelet_srv *s, size_t res, const struct kubelet_device *d,
			    size_t n, struct log_err *err)
{
	struct kubelet_device *c;
	struct kres *r;

	if (res >= s->n_res)
		return log_err_set(err, -EINVAL, "no resource %zu", res);
	r = &s->res[res];
	if (n > KSRV_MAX_DEVICES)
		return log_err_set(err, -E2BIG, "%s: %zu devices, limit %d", r->name, n,
				   KSRV_MAX_DEVICES);
	for (size_t i = 0; i < n; i++) {
		size_t l = d[i].id ? strlen(d[i].id) : 0;

		if (l == 0 || l > KSRV_MAX_ID)
			return log_err_set(err, -EINVAL, "%s: device %zu: ID of %zu bytes (1..%d)",
					   r->name, i, l, KSRV_MAX_ID);
	}
	if (devs_equal(r, d, n))
		return 0;
	c = calloc(n ? n : 1, sizeof(*c));
	if (!c)
		return log_err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		c[i] = d[i];
		c[i].id = strdup(d[i].id);
		if (!c[i].id) {
			devs_free(c, i);
			return log_err_set(err, -ENOMEM, "out of memory");
		}
	}
	devs_free(r->devs, r->n);
	r->devs = c;
	r->n = n;
	for (size_t i = 0; i < s->n_w; i++)
		if (s->w[i].res == res)
			send_list(s, s->w[i].g, s->w[i].sid, res);
	return 0;
}

static int status_of(int rc)
{
	return rc == -E2BIG	? KG_RESOURCE_EXHAUSTED
	       : rc == -ENOTSUP ? KG_UNIMPLEMENTED
				: KG_INVALID_ARGUMENT;
}

static void reply(struct kg_conn *g, int32_t sid, int rc, struct kpb_buf *b, int status,
		  const char *msg)
{
	if (rc == 0 && kg_send(g, sid, b, false) < 0)
		return;
	kg_finish(g, sid, status, msg);
}

/* One call being answered: the method's row gets it, fills out (or keeps the stream open). */
struct kcall {
	struct kubelet_srv *s;
	struct kconn *kc;
	struct kg_conn *g;
	int32_t sid;
	const uint8_t *m; /* the request message (unframed) */
	size_t len;
	struct kpb_buf out; /* the answer, sent when the row returns 0 */
	int status;	    /* the gRPC status of a failure, KG_OK: status_of(rc) */
	struct log_err e;
};

static int m_options(struct kcall *c)
{
	int rc = kpb_check_empty(c->m, c->len, &c->e);

	return rc < 0 ? rc : kpb_options(false, c->s->ops.preferred != NULL, &c->out);
}

/* Returns 1: the stream stays open (the list sent now and on every change). */
static int m_watch(struct kcall *c)
{
	struct kubelet_srv *s = c->s;
	int rc = kpb_check_empty(c->m, c->len, &c->e);

	if (rc < 0)
		return rc;
	if (s->n_w == sizeof(s->w) / sizeof(s->w[0]))
		return log_err_set(&c->e, -E2BIG, "too many ListAndWatch streams");
	s->w[s->n_w++] = (struct kwatch){.g = c->g, .sid = c->sid, .res = c->kc->res};
	c->kc->watches++;
	if (s->reg && kreg_generation(s->reg, c->kc->res) != s->res[c->kc->res].kubelet_gen) {
		/* The first ListAndWatch since we registered: the kubelet dialing back (victim) */
		s->res[c->kc->res].kubelet_gen = kreg_generation(s->reg, c->kc->res);
		for (size_t i = 0; i < KSRV_MAX_CONNS; i++)
			if (s->conns[i].res == c->kc->res)
				s->conns[i].kubelet = false;
		c->kc->kubelet = true;
	}
	c->kc->watch_ms = kg_now_ms();
	send_list(s, c->g, c->sid, c->kc->res);
	return 1;
}

static int m_allocate(struct kcall *c)
{
	return kpb_allocate(c->m, c->len, &c->s->ops, c->s->ctx, c->kc->res, &c->out, &c->status,
			    &c->e);
}

static int m_preferred(struct kcall *c)
{
	if (!c->s->ops.preferred) {
		c->status = KG_UNIMPLEMENTED;
		return log_err_set(&c->e, -ENOTSUP, "no preferred allocation");
	}
	return kpb_preferred(c->m, c->len, &c->s->ops, c->s->ctx, c->kc->res, &c->out, &c->status,
			     &c->e);
}

static int m_prestart(struct kcall *c)
{
	int rc = kpb_check_prestart(c->m, c->len, &c->e);

	return rc < 0 ? rc : kpb_empty(&c->out);
}

/*
 * The gRPC methods served on our sockets, by full path: a service we add is rows here; every one
 * gets kubelet_grpc's transport (any :authority, the bounds and deadlines) and kconn's admission.
 */
static const struct kmethod {
	const char *path;
	int (*call)(struct kcall *c); /* 0: send c->out; 1: answered itself; -errno: c->e */
} methods[] = {
    {DP "GetDevicePluginOptions", m_options},	{DP "ListAndWatch", m_watch},
    {DP "GetPreferredAllocation", m_preferred}, {DP "Allocate", m_allocate},
    {DP "PreStartContainer", m_prestart},
};

static void on_request(void *ctx, struct kg_conn *g, int32_t sid, const char *path,
		       const uint8_t *body, size_t n)
{
	struct kcall c = {.s = ctx, .g = g, .sid = sid, .status = KG_OK};
	const struct kmethod *me = NULL;
	int rc;

	c.kc = conn_of(c.s, g);
	if (!c.kc)
		return;
	c.kc->requested = true;
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]) && !me; i++)
		if (!strcmp(path, methods[i].path))
			me = &methods[i];
	if (!me) {
		snprintf(c.e.msg, sizeof(c.e.msg), "unknown method '%s'", path);
		kg_finish(g, sid, KG_UNIMPLEMENTED, c.e.msg);
		return;
	}
	rc = kpb_unframe(body, n, &c.m, &c.len, &c.e);
	if (rc < 0) {
		kg_finish(g, sid, status_of(rc), c.e.msg);
		return;
	}
	rc = me->call(&c);
	if (rc == 1)
		return;
	if (rc < 0 && c.status == KG_OK)
		c.status = status_of(rc);
	if (rc < 0 && c.status != KG_UNIMPLEMENTED)
		log_warn("kubelet: %s %s: %s", c.s->res[c.kc->res].name, strrchr(path, '/') + 1,
			 c.e.msg);
	reply(g, sid, rc, &c.out, c.status, rc < 0 ? c.e.msg : NULL);
}

static void on_closed(void *ctx, struct kg_conn *g, int32_t sid)
{
	struct kubelet_srv *s = ctx;

	for (size_t i = 0; i < s->n_w; i++) {
		if (s->w[i].g != g || s->w[i].sid != sid)
			continue;
		struct kconn *kc = conn_of(s, g);

		if (kc)
			kc->watches--;
		s->w[i] = s->w[--s->n_w];
		return;
	}
}

static const struct kg_handler srv_handler = {.request = on_request, .closed = on_closed};

static void conn_drop(struct kubelet_srv *s, struct kconn *kc)
{
	for (size_t i = 0; i < s->n_w;)
		if (s->w[i].g == kc->g)
			s->w[i] = s->w[--s->n_w];
		else
			i++;
	kg_conn_free(kc->g);
	*kc = (struct kconn){0};
}

/* Create res's socket (kubelet_sock.c). */
static int listen_on(struct kres *r, struct log_err *err)
{
	return ksock_listen(r->path, &r->lfd, &r->dev, &r->ino, err);
}

static bool ours_there(const struct kres *r)
{
	return ksock_ours(r->path, r->lfd, r->dev, r->ino);
}

/* Reset requests past their deadline (a trickling peer); the poll timeout until the next one. */
static int expire(struct kubelet_srv *s, int timeout)
{
	long long now = kg_now_ms();

	for (size_t i = 0; i < KSRV_MAX_CONNS; i++) {
		struct kconn *kc = &s->conns[i];
		struct log_err e = {0};
		long long d;

		if (!kc->g)
			continue;
		if (!kc->requested && kg_conn_deadline(kc->g) >= 0)
			kc->requested = true; /* a request began: the request deadline holds now */
		if (!kc->requested && now - kc->since_ms >= KSRV_FIRST_REQ_MS) {
			log_warn("kubelet: %s: a connection without a request after %d s: closed",
				 s->res[kc->res].name, KSRV_FIRST_REQ_MS / 1000);
			conn_drop(s, kc);
			continue;
		}
		if (!kc->requested &&
		    (timeout < 0 || kc->since_ms + KSRV_FIRST_REQ_MS - now < timeout))
			timeout = (int)(kc->since_ms + KSRV_FIRST_REQ_MS - now);
		if (kg_conn_expire(kc->g, now) > 0) {
			log_warn("kubelet: %s: a request not complete after %d s: reset",
				 s->res[kc->res].name, KG_REQ_DEADLINE_MS / 1000);
			if (kg_conn_io(kc->g, 0, &e) < 0) {
				conn_drop(s, kc);
				continue;
			}
		}
		d = kg_conn_deadline(kc->g);
		if (d >= 0 && (timeout < 0 || d - now < timeout))
			timeout = d - now < 0 ? 0 : (int)(d - now);
	}
	return timeout;
}

/*
 * The connection a full table gives up for a new one (a new connection always gets in, so no
 * number of other clients can lock the kubelet out), first found of:
 *   - the one idle longest (last I/O) among those without a ListAndWatch stream older than
 *     KSRV_FIRST_REQ_MS (idle clients, unary calls done, half-open ones go first);
 *   - the one whose newest ListAndWatch began last, so that a flood of streams cannot push out
 *     the kubelet's, which is older;
 *   - the one idle longest of the younger ones without a stream: a kubelet's new connection is
 *     one until its ListAndWatch (it asks GetDevicePluginOptions first), so a kubelet registering
 *     two resources at once no longer closes its own first connection for its second one.
 * A connection whose ListAndWatch was the first of its resource after our latest Register
 * (kconn.kubelet: the kubelet dials back after each) is never chosen while another is there:
 * else a restarted kubelet's stream, the newest, would be the next one closed. A peer that opens
 * its stream between our Register and the kubelet's dial takes that mark (LIMITS in the man page).
 */
static struct kconn *victim(struct kubelet_srv *s, long long now)
{
	struct kconn *idle = NULL, *streaming = NULL, *young = NULL;

	for (size_t i = 0; i < KSRV_MAX_CONNS; i++) {
		struct kconn *c = &s->conns[i];

		if (c->kubelet)
			continue;
		if (c->watches) {
			if (!streaming || c->watch_ms > streaming->watch_ms)
				streaming = c;
		} else if (now - c->since_ms < KSRV_FIRST_REQ_MS) {
			if (!young || c->last_ms < young->last_ms)
				young = c;
		} else if (!idle || c->last_ms < idle->last_ms) {
			idle = c;
		}
	}
	if (!idle && !streaming && !young) /* every one is a kubelet's (32 resources or more) */
		for (size_t i = 0; i < KSRV_MAX_CONNS; i++)
			if (!streaming || s->conns[i].watch_ms > streaming->watch_ms)
				streaming = &s->conns[i];
	return idle ? idle : streaming ? streaming : young;
}

/* Accept on res's socket; a full table gives up victim()'s connection. */
static void accept_on(struct kubelet_srv *s, size_t res, long long now)
{
	for (int k = 0; k < 8; k++) {
		int fd = accept4(s->res[res].lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct kconn *slot = NULL;

		if (fd < 0)
			return;
		for (size_t i = 0; i < KSRV_MAX_CONNS && !slot; i++)
			if (!s->conns[i].g)
				slot = &s->conns[i];
		if (!slot) {
			slot = victim(s, now);
			log_warn("kubelet: %d connections: closing %s", KSRV_MAX_CONNS,
				 slot->watches ? "the one whose ListAndWatch began last"
					       : "the one idle longest");
			conn_drop(s, slot);
		}
		if (kg_conn_new(fd, true, &srv_handler, s, &slot->g) < 0)
			continue;
		*slot = (struct kconn){.g = slot->g, .res = res, .last_ms = now, .since_ms = now};
	}
}

/* The directory said some sockets went: re-create those not ours any more, register them. */
static int check_sockets(struct kubelet_srv *s, const bool *gone, struct log_err *err)
{
	for (size_t i = 0; i < s->n_res; i++) {
		if (!gone[i] || ours_there(&s->res[i]))
			continue;
		log_info("kubelet: %s removed: serving it again", s->res[i].path);
		int rc = listen_on(&s->res[i], err);

		if (rc < 0)
			return rc;
		kreg_kick(s->reg, i);
	}
	return 0;
}

int kubelet_srv_run(struct kubelet_srv *s, const struct kubelet_poll *extra, size_t n_extra,
		    struct log_err *err)
{
	enum { NPFD = 1 + KSRV_MAX_RES + KSRV_MAX_CONNS + KSRV_MAX_RES + 16 };
	struct pollfd pfd[NPFD];
	size_t slot_of[KSRV_MAX_CONNS];
	int rc,
	    timeout = 0; /* a ListAndWatch update queued by a callback: the next pfd asks POLLOUT */

	if (n_extra > 16)
		return log_err_set(err, -E2BIG, "kubelet: %zu extra fds, limit 16", n_extra);
	if (!s->reg) {
		rc = kreg_new(s->dir, &s->reg, err);
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < s->n_res; i++) {
			rc = kreg_add(s->reg, s->res[i].name, s->res[i].endpoint, s->ops.preferred);
			if (rc < 0)
				return log_err_set(err, rc, "out of memory");
		}
	}
	for (size_t i = 0; i < s->n_res; i++) {
		if (ours_there(&s->res[i]))
			continue;
		rc = listen_on(&s->res[i], err);
		if (rc < 0)
			return rc;
		kreg_kick(s->reg, i);
	}
	for (;;) {
		size_t np = 0, c0, nc = 0, r0, nr, x0;
		long long now;

		pfd[np++] = (struct pollfd){.fd = kreg_watch_fd(s->reg), .events = POLLIN};
		for (size_t i = 0; i < s->n_res; i++)
			pfd[np++] = (struct pollfd){.fd = s->res[i].lfd, .events = POLLIN};
		c0 = np;
		for (size_t i = 0; i < KSRV_MAX_CONNS; i++) {
			if (!s->conns[i].g)
				continue;
			pfd[np++] = (struct pollfd){.fd = kg_conn_fd(s->conns[i].g),
						    .events = kg_conn_events(s->conns[i].g)};
			slot_of[nc++] = i;
		}
		r0 = np;
		nr = kreg_pollfds(s->reg, pfd + np, KSRV_MAX_RES);
		np += nr;
		x0 = np;
		for (size_t i = 0; i < n_extra; i++)
			pfd[np++] = (struct pollfd){.fd = extra[i].fd, .events = POLLIN};
		if (poll(pfd, np, timeout) < 0 && errno != EINTR)
			return log_err_set(err, -errno, "poll: %s", strerror(errno));
		now = kreg_now_ms();
		for (size_t k = 0; k < nc; k++) {
			struct kconn *kc = &s->conns[slot_of[k]];
			struct log_err e = {0};

			if (pfd[c0 + k].revents) {
				kc->last_ms = now;
				if (kg_conn_io(kc->g, pfd[c0 + k].revents, &e) < 0) {
					log_debug("kubelet: %s: connection closed: %s",
						  s->res[kc->res].name, e.msg);
					conn_drop(s, kc);
					continue;
				}
			}
			if (!kg_conn_events(kc->g))
				conn_drop(s, kc);
		}
		if (pfd[0].revents) {
			bool gone[KSRV_MAX_RES] = {0};

			rc = kreg_inotify(s->reg, gone, s->n_res, err);
			if (rc == 0)
				rc = check_sockets(s, gone, err);
			if (rc < 0)
				return rc;
		}
		for (size_t i = 0; i < s->n_res; i++)
			if (pfd[1 + i].revents & POLLIN)
				accept_on(s, i, now);
		timeout = kreg_step(s->reg, pfd + r0, nr, now);
		timeout = expire(s, timeout);
		for (size_t i = 0; i < n_extra; i++) {
			if (!pfd[x0 + i].revents)
				continue;
			rc = extra[i].ready(extra[i].ctx, err);
			if (rc == 1)
				return 0;
			if (rc < 0)
				return rc;
		}
	}
}

void kubelet_srv_free(struct kubelet_srv *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < KSRV_MAX_CONNS; i++)
		if (s->conns[i].g)
			conn_drop(s, &s->conns[i]);
	kreg_free(s->reg);
	for (size_t i = 0; i < s->n_res; i++) {
		struct kres *r = &s->res[i];

		if (ours_there(r))
			unlink(r->path);
		if (r->lfd >= 0)
			close(r->lfd);
		free(r->name);
		free(r->endpoint);
		devs_free(r->devs, r->n);
	}
	free(s->dir);
	free(s->prefix);
	free(s);
}
