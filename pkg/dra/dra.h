/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dra: a Dynamic Resource Allocation kubelet plugin ("driver") on pkg/kubelet's gRPC stack
 * (HTTP/2 over libnghttp2, messages by libprotobuf-c from dra.proto and pluginregistration.proto).
 *
 * Serves, on two unix sockets (../shared/reference/dra.md sections 2 and 3):
 *   <plugins_dir>/<driver>/dra.sock          DRAPlugin v1 (Kubernetes 1.34+) and v1beta1
 *                                            (1.32-1.33): NodePrepareResources,
 *                                            NodeUnprepareResources
 *   <registry_dir>/<driver>-reg.sock         pluginregistration.Registration: GetInfo
 *                                            (type DRAPlugin, supported_versions
 *                                            "v1.DRAPlugin", "v1beta1.DRAPlugin"),
 *                                            NotifyRegistrationStatus
 * The service socket is made first, then the registration socket (the kubelet may call the
 * service right after GetInfo). Either socket removed by someone else is made again (the kubelet
 * then registers the plugin again). Only our own socket files are removed on exit.
 *
 * What a claim means is the caller's (dra_ops); dra_prep.c is one such caller's toolkit
 * (claim from the API server, CDI spec, checkpoint). Two threads: the caller's loop, which
 * calls every dra_srv_* function and serves the sockets (never waiting on a peer or on the API
 * server), and one worker per dra_srv, which runs dra_ops and dra_srv_every's fn, one at a
 * time, in that order of priority. A Prepare or Unprepare call is decoded on the loop, waits
 * for the worker in a bounded queue (DRA_QUEUE_MAX calls, DRA_QUEUE_BYTES of claims; more is
 * UNAVAILABLE), and is answered from the loop when the worker is done; a call whose stream or
 * connection went meanwhile is skipped or its answer dropped, and one past its deadline (the
 * caller's grpc-timeout, at most DRA_CALL_DEADLINE_MS) is answered DEADLINE_EXCEEDED.
 * GetInfo, NotifyRegistrationStatus and an empty Prepare or Unprepare (a liveness probe) are
 * answered on the loop at once.
 */
#ifndef NP_DRA_H
#define NP_DRA_H

#include <stdbool.h>
#include <stddef.h>

struct log_err;

#define DRA_REGISTRY_DIR "/var/lib/kubelet/plugins_registry"
#define DRA_PLUGINS_DIR	 "/var/lib/kubelet/plugins"
#define DRA_PLUGIN_TYPE	 "DRAPlugin"
#define DRA_SVC_V1	 "k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin"
#define DRA_SVC_V1BETA1	 "k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin"
#define DRA_REG_SVC	 "pluginregistration.Registration"
#define DRA_CLAIMS_MAX	 4096	    /* claims of one call: more is RESOURCE_EXHAUSTED */
#define DRA_MAX_CONNS	 16	    /* connections on both sockets; one more closes the idlest */
#define DRA_QUEUE_MAX	 16	    /* Prepare/Unprepare calls taken, not yet answered */
#define DRA_QUEUE_BYTES	 (8u << 20) /* their claims' bytes together */
#define DRA_CALL_DEADLINE_MS                                                                       \
	45000 /* a call without grpc-timeout: the kubelet's own (defaultClientCallTimeout) */

/* One claim of a call, as the kubelet names it (strings borrowed for the call). */
struct dra_claim {
	const char *ns, *uid, *name;
};

/* One prepared device (Device message). Strings are the provider's. */
struct dra_device {
	const char *request; /* the main request name; "" or NULL: every request */
	const char *pool, *device;
	const char *const *cdi; /* fully qualified CDI device ids */
	size_t n_cdi;
};

/* The answer for one claim: devices, or err non-empty (the claim failed, devices ignored). */
struct dra_result {
	struct dra_device *devs;
	size_t n;
	char err[256];
	void *priv; /* the provider's, for free_result */
};

/* Called on the worker thread, one at a time (never at once with dra_srv_every's fn). */
struct dra_ops {
	/*
	 * Prepare (or unprepare) claims c[0..n): fill r[i] for every i (r zeroed by the caller).
	 * A claim's failure goes in r[i].err; return -errno (whole call failed: a gRPC error
	 * with err's message) only when no claim could be answered at all. deadline: when the
	 * caller stops waiting (CLOCK_MONOTONIC ms); work not begun by then is a claim's error.
	 */
	int (*prepare)(void *ctx, const struct dra_claim *c, size_t n, long long deadline,
		       struct dra_result *r, struct log_err *err);
	int (*unprepare)(void *ctx, const struct dra_claim *c, size_t n, long long deadline,
			 struct dra_result *r, struct log_err *err);
	void (*free_result)(void *ctx, struct dra_result *r); /* NULL: nothing to free */
};

struct dra_opts {
	const char *driver;	  /* DNS subdomain, at most 63 characters (dra_driver_ok) */
	const char *registry_dir; /* NULL: DRA_REGISTRY_DIR */
	const char *plugins_dir;  /* NULL: DRA_PLUGINS_DIR */
	struct dra_ops ops;
	void *ctx;
};

struct dra_srv;

/* Is d a driver name the API takes (a DNS subdomain of at most 63 characters)? */
bool dra_driver_ok(const char *d);
/* A claim UID usable in a file name and CDI id: 1..36 of [A-Za-z0-9-]. */
bool dra_uid_ok(const char *uid);

/* New server; nothing on disk yet. -EINVAL (bad driver name) / -ENOMEM with err. */
int dra_srv_new(const struct dra_opts *o, struct dra_srv **out, struct log_err *err);

/* Create the service socket, then the registration socket (a stale one of ours is replaced, one
 * somebody serves is -EADDRINUSE), then start the worker. 0 or -errno with err naming the path. */
int dra_srv_start(struct dra_srv *s, struct log_err *err);

/* The one descriptor to poll for reading (an epoll set of every socket and timer of s). */
int dra_srv_fd(const struct dra_srv *s);

/* Serve what is pending, never blocking on a peer. 0 or -errno (s is unusable) with err. */
int dra_srv_ready(struct dra_srv *s, struct log_err *err);

/* NotifyRegistrationStatus calls seen: registered ones and refusals (last error in *last). */
void dra_srv_registrations(const struct dra_srv *s, unsigned *ok, unsigned *refused,
			   const char **last);

/*
 * Run fn(ctx) on the worker every ms milliseconds, when dra_srv_kick asks, and after each
 * NotifyRegistrationStatus that says registered (a kubelet that starts deletes the node's
 * ResourceSlices: dra.md section 2), after the queued calls; one fn (a later call replaces it).
 * Its errors are logged. After dra_srv_start.
 */
int dra_srv_every(struct dra_srv *s, int ms, int (*fn)(void *ctx, struct log_err *err), void *ctx,
		  struct log_err *err);
/* Run dra_srv_every's fn soon (coalesced: asked again before it starts, it runs once). */
void dra_srv_kick(struct dra_srv *s);

/* The service socket's path (borrowed). */
const char *dra_srv_endpoint(const struct dra_srv *s);

/* Stop the worker (after its job in progress), close every connection, remove our sockets
 * (only ours). NULL is a no-op. */
void dra_srv_free(struct dra_srv *s);

/* ------------------------------------------------------- claims (dra_prep.c) */

struct kube_client;
struct dra_prep;

#define DRA_CDI_CLASS		 "claim" /* CDI kind <driver>/claim, devices <claim uid>-<device> */
#define DRA_CDI_VERSION		 "0.5.0" /* the lowest with names starting with a digit, hostPath */
#define DRA_CHECKPOINT		 "checkpoint.json"
#define DRA_RESULTS_MAX		 64 /* our devices in one claim (the API allows 32 requests) */
#define DRA_CLAIM_BYTES_MAX	 (1 << 20) /* a claim's JSON as the API server sends it */
#define DRA_PREPARE_BUDGET_MS	 30000	   /* one call's claim GETs; the kubelet waits 45 s */
#define DRA_PREPARED_MAX	 8192	   /* claims prepared at once (the checkpoint's) */
#define DRA_CHECKPOINT_BYTES_MAX 67108864  /* the checkpoint file: larger is not ours */
#define DRA_TEMP_AGE_S		 60	   /* a dot-temp file of ours older than this is stale */

/* A device node for the container: host path (as the runtime sees it) and container path. */
struct dra_node {
	const char *host, *container;
};

struct dra_prep_opts {
	const char *driver;    /* our driver name: results of other drivers are not ours */
	const char *pool;      /* our pool (the node's name): a result of another pool is refused */
	const char *state_dir; /* the checkpoint's directory (<plugins>/<driver>) */
	const char *cdi_dir;   /* where the claim CDI specs go (/var/run/cdi) */
	struct kube_client *kube; /* borrowed; GETs the claims */
	/*
	 * The nodes of device (our pool's), valid until the next call: 0 with *nodes, *n, or
	 * -ENOENT (we have no such device, or not any more).
	 */
	int (*lookup)(void *ctx, const char *device, const struct dra_node **nodes, size_t *n);
	void *ctx;
};

/*
 * Load the checkpoint (a missing one is empty; a corrupt one is -EINVAL with err naming it),
 * remove our claim CDI specs that it does not hold (written by a run killed before its
 * checkpoint), and return the state. -errno with err.
 */
int dra_prep_new(const struct dra_prep_opts *o, struct dra_prep **out, struct log_err *err);
void dra_prep_free(struct dra_prep *p);

/* dra_ops for a dra_srv whose ctx is the dra_prep. */
int dra_prep_prepare(void *p, const struct dra_claim *c, size_t n, long long deadline,
		     struct dra_result *r, struct log_err *err);
int dra_prep_unprepare(void *p, const struct dra_claim *c, size_t n, long long deadline,
		       struct dra_result *r, struct log_err *err);
void dra_prep_free_result(void *p, struct dra_result *r);

/*
 * Unprepare every checkpointed claim the API server says is gone (404, or its name now holds
 * another UID): a claim deleted while we were down. Returns how many, or -errno with err (the
 * API server unreachable: nothing is removed).
 */
int dra_prep_sweep(struct dra_prep *p, struct log_err *err);

/* Prepared claims in the checkpoint. */
size_t dra_prep_count(const struct dra_prep *p);

/* ------------------------------------------------- ResourceSlices (dra_slice.c) */

#define DRA_SLICE_DEVICES  128	/* devices per slice (ResourceSliceMaxDevices) */
#define DRA_DEVICE_ATTRS   32	/* attributes + capacities per device (API limit) */
#define DRA_ATTR_VALUE_MAX 64	/* a string or version attribute's bytes (API limit) */
#define DRA_POOL_DEVICES   4096 /* devices of our pool: more are not published (a warning) */

/* Is s a device name the API takes (a DNS label: 1..63 of a-z, 0-9, '-', no '-' at the ends)? */
bool dra_device_name_ok(const char *s);

/* An attribute's type: which one of the DeviceAttribute fields it sets. */
enum dra_attr_type {
	DRA_ATTR_STRING,  /* "string": str, at most DRA_ATTR_VALUE_MAX bytes of UTF-8 */
	DRA_ATTR_INT,	  /* "int": num */
	DRA_ATTR_BOOL,	  /* "bool": num != 0 */
	DRA_ATTR_VERSION, /* "version": str, a semantic version (semver.org 2.0.0) */
};

/*
 * One attribute of a device: id a C identifier of at most 32 characters (our driver's domain)
 * or <domain>/<identifier> ("resource.kubernetes.io/pcieRoot").
 */
struct dra_attr {
	const char *id;
	const char *str; /* DRA_ATTR_STRING, DRA_ATTR_VERSION */
	long long num;	 /* DRA_ATTR_INT, DRA_ATTR_BOOL */
	enum dra_attr_type type;
};

/* One device of our pool as a slice lists it (name a DNS label). */
struct dra_slice_dev {
	const char *name;
	const struct dra_attr *attrs;
	size_t n_attrs;
};

struct dra_pub;

/* A publisher of the pool <node> of driver through kube (borrowed). -ENOMEM. */
int dra_pub_new(struct kube_client *kube, const char *driver, const char *node,
		struct dra_pub **out, struct log_err *err);
void dra_pub_free(struct dra_pub *p);

/*
 * Make the API server's slices of our pool (spec.driver, spec.nodeName) say devices d[0..n)
 * (sorted by name or not): LIST them; when they already do (same devices, one generation,
 * resourceSliceCount right, the same owner) nothing is written; else every slice is written
 * with the next generation (DRA_SLICE_DEVICES devices each, at least one slice), extra ones
 * deleted. Each slice names its Node as owner (ownerReferences, controller: deleting the Node
 * deletes them), its uid read once by GET /api/v1/nodes/<node>; a 403 or 404 there publishes
 * without the owner (one warning). A 409 (someone changed a slice) lists again, up to 3 times;
 * a 410 (our view is stale) lists again at once, once (a second 410: -ESTALE).
 * What the API would refuse is left out with one warning (dra_internal.h dra_slice_build); all
 * slices are built before the first write, so a failure writes nothing. Returns the number of
 * writes (0: up to date), or -errno / KUBE_E* with err (the caller retries later); -ENOTSUP when
 * the LIST is answered 404: the API server does not serve resource.k8s.io/v1 (before 1.34).
 */
int dra_pub_sync(struct dra_pub *p, const struct dra_slice_dev *d, size_t n, struct log_err *err);

#endif
