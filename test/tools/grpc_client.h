/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * grpc_client: a blocking unary gRPC client on pkg/kubelet's client side (kg_conn over one
 * HTTP/2 connection on a unix socket), and latency figures, shared by the C bench clients
 * kubelet-bench (device plugin Allocate) and dra-bench (DRA NodePrepareResources).
 */
#ifndef NP_TEST_GRPC_CLIENT_H
#define NP_TEST_GRPC_CLIENT_H

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "kubelet/kubelet_internal.h"
#include "log/log.h"

/* The last call's end: its gRPC status and message, and its response body (owned, framed). */
struct gc_call {
	bool got;
	int status;
	char msg[256];
	uint8_t *body;
	size_t n;
};

static inline void gc_on_response(void *ctx, struct kg_conn *c, int32_t sid, int status,
				  const char *msg, const uint8_t *body, size_t n)
{
	struct gc_call *k = ctx;

	(void)c;
	(void)sid;
	k->got = true;
	k->status = status;
	snprintf(k->msg, sizeof(k->msg), "%s", msg ? msg : "");
	k->body = n ? malloc(n) : NULL;
	k->n = k->body ? n : 0;
	if (k->body)
		memcpy(k->body, body, n);
}

static const struct kg_handler gc_handler = {.response = gc_on_response};

static inline double gc_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Connect to the unix socket path: 0 with *out (its calls report to k), or -errno. */
static inline int gc_dial(const char *path, struct gc_call *k, struct kg_conn **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, rc;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return kg_conn_new(fd, false, &gc_handler, k, out);
}

/*
 * One unary call of method path with req (a ProtobufCMessage *) on c, waiting up to 10 s:
 * 0 when it answered OK (k->body, k->n: the answer, freed by the next call), -EPROTO (another
 * gRPC status, in k), or -errno.
 */
static inline int gc_unary(struct kg_conn *c, struct gc_call *k, const char *path, const void *req)
{
	struct kpb_buf msg;
	struct log_err e;
	int rc;

	free(k->body);
	*k = (struct gc_call){0};
	rc = kpb_pack(req, &msg);
	if (rc == 0)
		rc = kg_call(c, path, &msg);
	if (rc < 0)
		return rc;
	while (!k->got) {
		struct pollfd p = {.fd = kg_conn_fd(c), .events = kg_conn_events(c)};

		if (!p.events)
			return -ECONNRESET;
		if (poll(&p, 1, 10000) <= 0)
			return -ETIMEDOUT;
		log_err_clear(&e);
		if (kg_conn_io(c, p.revents, &e) < 0 && !k->got)
			return -EIO;
	}
	return k->status == KG_OK ? 0 : -EPROTO;
}

static inline int gc_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sort t[0..n) (ms, n >= 1) and print "<what>_calls=N p50_ms=.. p99_ms=.. max_ms=..". */
static inline void gc_print(const char *what, double *t, long n)
{
	qsort(t, (size_t)n, sizeof(*t), gc_cmp);
	printf("%s_calls=%ld p50_ms=%.3f p99_ms=%.3f max_ms=%.3f\n", what, n, t[n / 2],
	       t[(n * 99) / 100], t[n - 1]);
}

#endif
