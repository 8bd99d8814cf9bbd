// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kubelet-bench: Allocate latency of a device plugin, from a C client on pkg/kubelet's own
 * client side (kg_conn over one HTTP/2 connection), so the figures are the plugin's and the
 * wire's, not a Python client's.
 *   kubelet-bench SOCK N ID[,ID...]
 * One warm-up call, then N sequential Allocate calls of the IDs (one container); prints
 *   allocate_calls=N p50_ms=.. p99_ms=.. max_ms=..
 * Exit 1 on any failed call (its gRPC status and message on stderr), 2 on usage.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "kubelet/deviceplugin.pb-c.h"
#include "kubelet/kubelet.h"
#include "kubelet/kubelet_internal.h"
#include "log/log.h"

struct call {
	bool got;
	int status;
	char msg[256];
};

static void on_response(void *ctx, struct kg_conn *c, int32_t sid, int status, const char *msg)
{
	struct call *k = ctx;

	(void)c;
	(void)sid;
	k->got = true;
	k->status = status;
	snprintf(k->msg, sizeof(k->msg), "%s", msg ? msg : "");
}

static const struct kg_handler handler = {.response = on_response};

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int frame(const ProtobufCMessage *m, struct kpb_buf *out)
{
	size_t n = protobuf_c_message_get_packed_size(m);

	out->p = malloc(KPB_PREFIX + n + 1);
	if (!out->p)
		return -ENOMEM;
	out->p[0] = 0;
	out->p[1] = (uint8_t)(n >> 24);
	out->p[2] = (uint8_t)(n >> 16);
	out->p[3] = (uint8_t)(n >> 8);
	out->p[4] = (uint8_t)n;
	protobuf_c_message_pack(m, out->p + KPB_PREFIX);
	out->len = KPB_PREFIX + n;
	return 0;
}

/* One Allocate call on c; 0 when it answered OK. */
static int allocate(struct kg_conn *c, struct call *k, const ProtobufCMessage *req)
{
	struct kpb_buf msg;
	struct log_err e;
	int rc;

	*k = (struct call){0};
	rc = frame(req, &msg);
	if (rc == 0)
		rc = kg_call(c, "/" KUBELET_API_VERSION ".DevicePlugin/Allocate", &msg);
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

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
	V1beta1__ContainerAllocateRequest cr = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
	V1beta1__ContainerAllocateRequest *crs[1] = {&cr};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char *ids[64], *list;
	struct kg_conn *c;
	struct call k;
	double *t;
	long n;
	int fd, rc;

	if (argc != 4 || (n = strtol(argv[2], NULL, 10)) < 1 || n > 1000000 ||
	    strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: kubelet-bench SOCK N ID[,ID...]\n");
		return 2;
	}
	list = argv[3];
	for (char *s = strtok(list, ","); s && cr.n_devices_ids < 64; s = strtok(NULL, ","))
		ids[cr.n_devices_ids++] = s;
	cr.devices_ids = ids;
	req.n_container_requests = 1;
	req.container_requests = crs;
	t = calloc((size_t)n, sizeof(*t));
	memcpy(sa.sun_path, argv[1], strlen(argv[1]));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (!t || fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "kubelet-bench: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (kg_conn_new(fd, false, &handler, &k, &c) < 0)
		return 1;
	rc = allocate(c, &k, &req.base); /* the connection's set-up, not measured */
	for (long i = 0; rc == 0 && i < n; i++) {
		double t0 = now_ms();

		rc = allocate(c, &k, &req.base);
		t[i] = now_ms() - t0;
	}
	if (rc < 0) {
		fprintf(stderr, "kubelet-bench: Allocate: %s (gRPC status %d: %s)\n", strerror(-rc),
			k.status, k.msg);
		return 1;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("allocate_calls=%ld p50_ms=%.3f p99_ms=%.3f max_ms=%.3f\n", n, t[n / 2],
	       t[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1], t[n - 1]);
	kg_conn_free(c);
	free(t);
	return 0;
}
