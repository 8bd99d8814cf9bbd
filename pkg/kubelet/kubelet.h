/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kubelet: the kubelet's device-plugin API (v1beta1) as a plugin serves it:
 * gRPC over HTTP/2 (libnghttp2) on unix sockets in the kubelet's
 * device-plugins directory, messages encoded by libprotobuf-c from our own
 * .proto (written from ../shared/reference/device-plugins.md and
 * k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1). One socket and one
 * Registration per resource; registers again when the kubelet re-creates
 * kubelet.sock. Knows nothing of which devices exist or how they are chosen:
 * the caller sets each resource's device list and answers Allocate and
 * GetPreferredAllocation through kubelet_ops.
 *
 * Contract shared by the helper branches of issue 19 (wire: this module;
 * selection: pkg/devices). Single-threaded: every call from the thread that
 * runs kubelet_srv_run (callbacks included).
 */
#ifndef NP_KUBELET_H
#define NP_KUBELET_H

#include <stdbool.h>
#include <stddef.h>

struct log_err;

#define KUBELET_API_VERSION "v1beta1"
#define KUBELET_DIR_DEFAULT "/var/lib/kubelet/device-plugins"
#define KUBELET_SOCK	    "kubelet.sock"
#define KUBELET_DEVICES_MAX 4096 /* devices of one resource (kubelet_srv_set_devices) */

/* One device of a resource as ListAndWatch reports it. */
struct kubelet_device {
	const char *id; /* stable across restarts, e.g. "ttyUSB0-3" */
	bool healthy;	/* "Healthy" / "Unhealthy" */
	int numa_node;	/* TopologyInfo node ID; -1 for none */
};

/* DeviceSpec: a device node for the container (permissions: a subset of "rwm"). */
struct kubelet_spec {
	const char *container_path, *host_path, *permissions;
};

/* Mount: a host path bound into the container. */
struct kubelet_mount {
	const char *container_path, *host_path;
	bool read_only;
};

/* A key=value pair (envs, annotations). */
struct kubelet_kv {
	const char *key, *value;
};

/*
 * The answer for one container of an Allocate call (ContainerAllocateResponse).
 * Filled by kubelet_ops.allocate; the memory stays the provider's and is
 * released by kubelet_ops.free_alloc once the answer is encoded.
 */
struct kubelet_alloc {
	struct kubelet_spec *specs;
	size_t n_specs;
	struct kubelet_mount *mounts;
	size_t n_mounts;
	struct kubelet_kv *envs;
	size_t n_envs;
	struct kubelet_kv *annotations;
	size_t n_annotations;
	const char **cdi_names; /* fully qualified: "nodeprobe.io/serial=ttyUSB0" */
	size_t n_cdi;
	void *priv; /* the provider's, for free_alloc */
};

/* What the caller answers for. res is the index kubelet_srv_add returned. */
struct kubelet_ops {
	/*
	 * Allocate for one container the devices ids[0..n). 0 and *out filled,
	 * or -errno with err set (sent as a gRPC error, the message named).
	 */
	int (*allocate)(void *ctx, size_t res, const char *const *ids, size_t n,
			struct kubelet_alloc *out, struct log_err *err);
	void (*free_alloc)(void *ctx, struct kubelet_alloc *a);
	/*
	 * GetPreferredAllocation for one container: choose size IDs out of
	 * avail, every one of must included; write them (pointers into avail or
	 * must) to out[0..size) and return how many, or -errno with err set.
	 * NULL: the resource does not offer preferred allocation.
	 */
	int (*preferred)(void *ctx, size_t res, const char *const *avail, size_t n_avail,
			 const char *const *must, size_t n_must, size_t size, const char **out,
			 struct log_err *err);
};

struct kubelet_opts {
	const char *dir;	   /* the device-plugins directory; NULL: KUBELET_DIR_DEFAULT */
	const char *socket_prefix; /* our sockets: <dir>/<prefix><resource, '/' -> '_'>.sock */
	struct kubelet_ops ops;
	void *ctx; /* passed to ops */
};

struct kubelet_srv;

/* Something else the run loop polls (hotplug, a signalfd, a timerfd). */
struct kubelet_poll {
	int fd;
	/* Called when fd is readable: 0 go on, 1 stop the loop cleanly, -errno stop with error. */
	int (*ready)(void *ctx, struct log_err *err);
	void *ctx;
};

/* A server with no resources yet; nothing is created on disk. -errno with err set. */
int kubelet_srv_new(const struct kubelet_opts *o, struct kubelet_srv **out, struct log_err *err);

/* Is r an extended resource name kubelet_srv_add takes, as the kubelet's IsExtendedResourceName
 * ("<domain>/<name>", the domain a DNS-1123 subdomain of at most 244 characters and not
 * kubernetes.io or under it, no "requests." prefix, the name 1..63 letters, digits, '-', '_', '.')?
 */
bool kubelet_resource_ok(const char *r);
/* The rule r breaks (a static string, for "resource 'r': <rule>"), or NULL when it is one. */
const char *kubelet_resource_why(const char *r);

/*
 * Add a resource ("<domain>/<name>", checked as an extended resource name).
 * Returns its index (>= 0) or -errno with err set. Its socket is created and
 * registered by kubelet_srv_run.
 */
int kubelet_srv_add(struct kubelet_srv *s, const char *resource, struct log_err *err);

/*
 * Replace a resource's device list (copied). Every open ListAndWatch stream
 * of the resource gets the full new list; an unchanged list sends nothing.
 */
int kubelet_srv_set_devices(struct kubelet_srv *s, size_t res, const struct kubelet_device *d,
			    size_t n, struct log_err *err);

/*
 * Serve: create each resource's socket, register with kubelet.sock (again
 * whenever the kubelet re-creates it; a refused or absent kubelet is retried
 * without blocking the loop), answer the DevicePlugin service, and poll the
 * extra fds. Returns 0 when a ready callback returned 1, else -errno with err
 * set. Never blocks on one slow peer: every connection is non-blocking with a
 * bounded buffer.
 */
int kubelet_srv_run(struct kubelet_srv *s, const struct kubelet_poll *extra, size_t n_extra,
		    struct log_err *err);

/* Close every connection and remove the sockets we created (only ours). NULL is a no-op. */
void kubelet_srv_free(struct kubelet_srv *s);

#endif
