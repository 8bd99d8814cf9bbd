// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kubelet-bench: Allocate latency of a device plugin, from a C client on pkg/kubelet's own
 * client side (kg_conn over one HTTP/2 connection, grpc_client.h), so the figures are the
 * plugin's and the wire's, not a Python client's.
 *   kubelet-bench SOCK N ID[,ID...]
 * One warm-up call, then N sequential Allocate calls of the IDs (one container); prints
 *   allocate_calls=N p50_ms=.. p99_ms=.. max_ms=..
 * Exit 1 on any failed call (its gRPC status and message on stderr), 2 on usage.
 */
#include "grpc_client.h"
#include "kubelet/deviceplugin.pb-c.h"
#include "kubelet/kubelet.h"

#define ALLOCATE "/" KUBELET_API_VERSION ".DevicePlugin/Allocate"

int main(int argc, char **argv)
{
	V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
	V1beta1__ContainerAllocateRequest cr = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
	V1beta1__ContainerAllocateRequest *crs[1] = {&cr};
	struct gc_call k = {0};
	struct kg_conn *c;
	char *ids[64];
	double *t;
	long n;
	int rc;

	if (argc != 4 || (n = strtol(argv[2], NULL, 10)) < 1 || n > 1000000) {
		fprintf(stderr, "usage: kubelet-bench SOCK N ID[,ID...]\n");
		return 2;
	}
	for (char *s = strtok(argv[3], ","); s && cr.n_devices_ids < 64; s = strtok(NULL, ","))
		ids[cr.n_devices_ids++] = s;
	cr.devices_ids = ids;
	req.n_container_requests = 1;
	req.container_requests = crs;
	t = calloc((size_t)n, sizeof(*t));
	rc = t ? gc_dial(argv[1], &k, &c) : -ENOMEM;
	if (rc < 0) {
		fprintf(stderr, "kubelet-bench: %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	rc = gc_unary(c, &k, ALLOCATE, &req); /* the connection's set-up, not measured */
	for (long i = 0; rc == 0 && i < n; i++) {
		double t0 = gc_now_ms();

		rc = gc_unary(c, &k, ALLOCATE, &req);
		t[i] = gc_now_ms() - t0;
	}
	if (rc < 0) {
		fprintf(stderr, "kubelet-bench: Allocate: %s (gRPC status %d: %s)\n", strerror(-rc),
			k.status, k.msg);
		return 1;
	}
	gc_print("allocate", t, n);
	kg_conn_free(c);
	free(k.body);
	free(t);
	return 0;
}
