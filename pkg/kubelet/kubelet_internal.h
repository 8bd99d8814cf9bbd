/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kubelet_internal: the stages of pkg/kubelet, called one way:
 *   kubelet_pb (messages <-> our structs, the 5-byte gRPC prefix)
 *   <- kubelet_grpc (gRPC calls over one nghttp2 session per connection, server and client)
 *   <- kubelet_reg (Register with kubelet.sock, inotify on the directory)
 *   <- kubelet_srv (resources, sockets, ListAndWatch streams, the poll loop).
 *
 * Limits (every one also in nodeprobe-devices(8)):
 *   KPB_MAX_MSG       4 MiB   a gRPC message either way (gRPC's default receive limit); larger:
 *                             the call fails RESOURCE_EXHAUSTED, the connection stays.
 *   KG_MAX_STREAMS    16      concurrent HTTP/2 streams a peer may open on one connection.
 *   KG_MAX_IN         8 MiB   request bytes buffered on one connection (all its streams); more:
 *                             the connection is closed.
 *   KG_MAX_OUT        8 MiB   answer bytes queued on one connection; a ListAndWatch stream keeps
 *                             only its newest list (older unsent lists are dropped, each message
 *                             being the full list); more: the connection is closed.
 *   KG_MAX_HEADERS    16 KiB  a request's header list.
 *   KG_MAX_TOTAL      16 MiB  request and answer bytes buffered by all connections together: a
 *                             request or answer past it first closes the connection holding the
 *                             most, if it holds more than the asking one would (kubelet_grpc.c
 *                             budget_room); else a request is answered RESOURCE_EXHAUSTED (its
 *                             bytes dropped), an answer closes its own connection.
 *   KG_REQ_DEADLINE_MS 10 s   from a request's HEADERS to its end: later, RST_STREAM (CANCEL).
 *   grpc-timeout      the caller's: a call handed on and not answered by then is ended with
 *                     DEADLINE_EXCEEDED (its owner may set an earlier one: kg_set_deadline).
 *   KSRV_MAX_CONNS    32      plugin connections (all resources). A new connection always gets
 *                             in: a full table closes the connection idle longest (last I/O) of
 *                             those without a ListAndWatch stream older than KSRV_FIRST_REQ_MS,
 *                             else the one whose newest ListAndWatch began last, else the idle
 *                             longest of the young ones; never the first ListAndWatch after our
 *                             Register while another is there (kubelet_srv.c victim), so no number
 *                             of idle, half-open or streaming peers locks the kubelet out or
 *                             pushes out its stream.
 *   KSRV_FIRST_REQ_MS 10 s    a connection that has sent no complete request by then is closed.
 *   KSRV_SOCK_MODE    0600    our sockets (set before listen): only the kubelet (root) connects.
 *   KSRV_MAX_RES      64      resources per server; KSRV_MAX_DEVICES 4096 devices per resource,
 *                             device IDs 1..255 bytes.
 *   KREG_TIMEOUT_MS   5000    one Register call; then it is retried.
 *   KREG_BACKOFF_*    1 s doubling to 30 s between Register attempts after a failure (refused,
 *                             no kubelet.sock, another plugin holds the resource); re-created
 *                             kubelet.sock or our socket removed: at once.
 */
#ifndef NP_KUBELET_INTERNAL_H
#define NP_KUBELET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <sys/types.h>

#include "kubelet/kubelet.h"

struct log_err;

#define KPB_PREFIX	    5 /* compressed flag + 4-byte big-endian length */
#define KPB_MAX_MSG	    (4u << 20)
#define KG_MAX_STREAMS	    16
#define KG_MAX_IN	    (8u << 20)
#define KG_MAX_OUT	    (8u << 20)
#define KG_MAX_HEADERS	    (16u << 10)
#define KG_MAX_TOTAL	    (16u << 20)
#define KG_REQ_DEADLINE_MS  10000
#define KSRV_MAX_CONNS	    32
#define KSRV_FIRST_REQ_MS   10000
#define KSRV_SOCK_MODE	    0600
#define KSRV_MAX_RES	    64
#define KSRV_MAX_DEVICES    KUBELET_DEVICES_MAX
#define KSRV_MAX_ID	    255
#define KREG_TIMEOUT_MS	    5000
#define KREG_BACKOFF_MIN_MS 1000
#define KREG_BACKOFF_MAX_MS 30000

/* gRPC status codes we send or read (grpc/doc/statuscodes.md). */
enum kg_status {
	KG_OK = 0,
	KG_UNKNOWN = 2,
	KG_INVALID_ARGUMENT = 3,
	KG_DEADLINE_EXCEEDED = 4,
	KG_NOT_FOUND = 5,
	KG_RESOURCE_EXHAUSTED = 8,
	KG_UNIMPLEMENTED = 12,
	KG_INTERNAL = 13,
	KG_UNAVAILABLE = 14,
};

/* ---- kubelet_pb: one framed message (prefix + protobuf bytes), malloc'd, owned by holder. */
struct kpb_buf {
	uint8_t *p;
	size_t len;
};

void kpb_buf_free(struct kpb_buf *b);
/* Frame a protobuf-c message (a ProtobufCMessage *) into out: 0, -E2BIG (over KPB_MAX_MSG),
 * -ENOMEM. For other modules serving their own services over kubelet_grpc (pkg/dra). */
int kpb_pack(const void *msg, struct kpb_buf *out);
/* Parse a request body holding exactly one uncompressed message: *msg, *len point into body. */
int kpb_unframe(const uint8_t *body, size_t n, const uint8_t **msg, size_t *len,
		struct log_err *err);
int kpb_list(const struct kubelet_device *d, size_t n, struct kpb_buf *out);
int kpb_options(bool pre_start, bool preferred, struct kpb_buf *out);
int kpb_empty(struct kpb_buf *out);
int kpb_register(const char *endpoint, const char *resource, bool preferred, struct kpb_buf *out);
/* Check msg is a well-formed message of the named kind (Empty, PreStartContainerRequest). */
int kpb_check_empty(const uint8_t *msg, size_t len, struct log_err *err);
int kpb_check_prestart(const uint8_t *msg, size_t len, struct log_err *err);
/*
 * Decode an AllocateRequest / PreferredAllocationRequest, ask ops for each container and
 * encode the answer into out. -errno with err set: a decode error (-EINVAL) or the
 * provider's error; *status says which gRPC status fits.
 */
int kpb_allocate(const uint8_t *msg, size_t len, const struct kubelet_ops *ops, void *ctx,
		 size_t res, struct kpb_buf *out, int *status, struct log_err *err);
int kpb_preferred(const uint8_t *msg, size_t len, const struct kubelet_ops *ops, void *ctx,
		  size_t res, struct kpb_buf *out, int *status, struct log_err *err);

/* ---- kubelet_grpc: one HTTP/2 connection (nghttp2 session) on a non-blocking fd. */
struct kg_conn;

/* What a connection reports to its owner (kubelet_srv for server ones, kubelet_reg for clients). */
struct kg_handler {
	/*
	 * Server: a whole request on stream sid; body is the raw request body (framed), valid
	 * during the call. The answer (kg_send, kg_finish) may come now or later: a deferred
	 * answer keeps the token (kg_conn_id(c), sid), never c itself, and answers only while
	 * the owner still holds a connection of that id; a stream gone meanwhile makes kg_send
	 * and kg_finish return -ENOENT (HTTP/2 never reuses a stream id on a connection).
	 */
	void (*request)(void *ctx, struct kg_conn *c, int32_t sid, const char *path,
			const uint8_t *body, size_t n);
	/* A stream ended (answered, reset, or the connection closed); not called by kg_conn_free.
	 */
	void (*closed)(void *ctx, struct kg_conn *c, int32_t sid);
	/*
	 * Client: the call on sid ended with this gRPC status and message; body, n: the response
	 * body as received (framed messages, borrowed for the call; NULL, 0: none, or it passed
	 * KPB_MAX_MSG and was dropped).
	 */
	void (*response)(void *ctx, struct kg_conn *c, int32_t sid, int status, const char *msg,
			 const uint8_t *body, size_t n);
};

/* Take fd (closed by kg_conn_free). server: answer calls; else make them. */
int kg_conn_new(int fd, bool server, const struct kg_handler *h, void *ctx, struct kg_conn **out);
void kg_conn_free(struct kg_conn *c);
int kg_conn_fd(const struct kg_conn *c);
/* c's id: unique among every connection the process ever made (the token of deferred answers). */
uint64_t kg_conn_id(const struct kg_conn *c);
/* poll events the connection wants; 0: it is finished, free it. */
short kg_conn_events(const struct kg_conn *c);
/* Read and write what the socket allows. -errno: the connection is dead (free it). */
int kg_conn_io(struct kg_conn *c, short revents, struct log_err *err);

/*
 * Reset (RST_STREAM CANCEL) every request of c not complete KG_REQ_DEADLINE_MS after its
 * HEADERS (a peer trickling a request), and end with DEADLINE_EXCEEDED every call handed on
 * but not answered by its deadline; send with kg_conn_io. Returns how many.
 */
int kg_conn_expire(struct kg_conn *c, long long now_ms);
/* When the next of c's requests or unanswered calls expires (kg_now_ms clock), or -1: none. */
long long kg_conn_deadline(const struct kg_conn *c);
/* Server stream sid's deadline (grpc-timeout, kg_now_ms clock), or -1: none, or no such stream. */
long long kg_stream_deadline(const struct kg_conn *c, int32_t sid);
/* Make sid's deadline at_ms (kg_now_ms clock) unless it has an earlier one. 0 or -ENOENT. */
int kg_set_deadline(struct kg_conn *c, int32_t sid, long long at_ms);
long long kg_now_ms(void);
/* Request and answer bytes buffered by all connections (the KG_MAX_TOTAL budget). */
size_t kg_total_bytes(void);
/*
 * Queue a framed message on server stream sid (taken, also on failure). latest: this
 * message replaces any earlier one not yet started (ListAndWatch).
 */
int kg_send(struct kg_conn *c, int32_t sid, struct kpb_buf *msg, bool latest);
/* End server stream sid with status (message optional) after what is queued. */
int kg_finish(struct kg_conn *c, int32_t sid, int status, const char *msg);
/* Client: start a unary call of path with msg (taken). Returns the stream id or -errno. */
int kg_call(struct kg_conn *c, const char *path, struct kpb_buf *msg);

/* ---- kubelet_sock: a plugin's unix socket (also pkg/dra's). */

/*
 * Listen on the unix socket path (closing *lfd first when >= 0): a socket file there is replaced
 * only when nobody serves it (-EADDRINUSE), another file is -EEXIST; made mode KSRV_SOCK_MODE
 * before listen. 0 with *lfd (non-blocking), *dev, *ino of the file, or -errno with err.
 */
int ksock_listen(const char *path, int *lfd, dev_t *dev, ino_t *ino, struct log_err *err);
/* Is path still the socket file we bound (lfd open, same dev and ino)? */
bool ksock_ours(const char *path, int lfd, dev_t dev, ino_t ino);

/* ---- kubelet_reg: registration of each resource with the kubelet. */
struct kreg;

int kreg_new(const char *dir, struct kreg **out, struct log_err *err);
void kreg_free(struct kreg *r);
/* Add a resource to register (endpoint: the socket's file name). Returns its index. */
int kreg_add(struct kreg *r, const char *resource, const char *endpoint, bool preferred);
/* Register i now (its socket is (re)created): cancels any backoff. */
void kreg_kick(struct kreg *r, size_t i);
/* How many Register calls of i were sent (a kubelet dials back after each). */
unsigned kreg_generation(const struct kreg *r, size_t i);
/* The inotify fd (readable: call kreg_inotify). */
int kreg_watch_fd(const struct kreg *r);
/*
 * Read the directory's events: kubelet.sock created kicks every resource; gone[i] set
 * when resource i's socket was removed (the caller re-creates it, then kreg_kick).
 */
int kreg_inotify(struct kreg *r, bool *gone, size_t n_gone, struct log_err *err);
/* Fill pfd with the registration connections' fds (at most max); returns how many. */
size_t kreg_pollfds(struct kreg *r, struct pollfd *pfd, size_t max);
/* After poll: serve the fds kreg_pollfds gave (same order), start due attempts, time out
 * old ones. Returns the ms until the next thing to do (-1: nothing). */
int kreg_step(struct kreg *r, const struct pollfd *pfd, size_t n, long long now_ms);
/* Monotonic milliseconds. */
long long kreg_now_ms(void);

#endif
