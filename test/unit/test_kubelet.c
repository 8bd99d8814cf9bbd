// SPDX-License-Identifier: GPL-2.0-or-later
/* test_kubelet: pkg/kubelet's messages (encode, decode, the gRPC prefix) and gRPC over nghttp2. */
#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "harness.h"
#include "kubelet/deviceplugin.pb-c.h"
#include "kubelet/kubelet.h"
#include "kubelet/kubelet_internal.h"
#include "log/log.h"

static uint32_t prefix_len(const struct kpb_buf *b)
{
	return (uint32_t)b->p[1] << 24 | (uint32_t)b->p[2] << 16 | (uint32_t)b->p[3] << 8 | b->p[4];
}

TEST(list_encodes_ids_health_and_numa)
{
	struct kubelet_device d[] = {{"a-0", true, -1}, {"a-1", false, 3}};
	struct kpb_buf b;
	V1beta1__ListAndWatchResponse *r;

	REQUIRE_INT(kpb_list(d, 2, &b), 0);
	CHECK_INT(b.p[0], 0);
	REQUIRE_INT(prefix_len(&b), b.len - 5);
	r = v1beta1__list_and_watch_response__unpack(NULL, b.len - 5, b.p + 5);
	REQUIRE(r);
	REQUIRE_INT(r->n_devices, 2);
	CHECK_STR(r->devices[0]->id, "a-0");
	CHECK_STR(r->devices[0]->health, "Healthy");
	CHECK(r->devices[0]->topology == NULL);
	CHECK_STR(r->devices[1]->health, "Unhealthy");
	REQUIRE(r->devices[1]->topology && r->devices[1]->topology->n_nodes == 1);
	CHECK_INT(r->devices[1]->topology->nodes[0]->id, 3);
	v1beta1__list_and_watch_response__free_unpacked(r, NULL);
	kpb_buf_free(&b);
	/* An empty list is a valid message of 0 bytes. */
	REQUIRE_INT(kpb_list(NULL, 0, &b), 0);
	CHECK_INT(b.len, 5);
	kpb_buf_free(&b);
}

TEST(register_request_fields)
{
	struct kpb_buf b;
	V1beta1__RegisterRequest *r;

	REQUIRE_INT(kpb_register("np-x.sock", "example.com/x", true, &b), 0);
	r = v1beta1__register_request__unpack(NULL, b.len - 5, b.p + 5);
	REQUIRE(r);
	CHECK_STR(r->version, "v1beta1");
	CHECK_STR(r->endpoint, "np-x.sock");
	CHECK_STR(r->resource_name, "example.com/x");
	REQUIRE(r->options);
	CHECK(r->options->get_preferred_allocation_available);
	CHECK(!r->options->pre_start_required);
	v1beta1__register_request__free_unpacked(r, NULL);
	kpb_buf_free(&b);
}

TEST(unframe_checks_the_prefix)
{
	const uint8_t ok[] = {0, 0, 0, 0, 2, 0x0a, 0x00};
	const uint8_t zipped[] = {1, 0, 0, 0, 0};
	const uint8_t two[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	const uint8_t huge[] = {0, 0, 0x50, 0, 0};
	const uint8_t *m;
	size_t n;

	CHECK_INT(kpb_unframe(ok, sizeof(ok), &m, &n, NULL), 0);
	CHECK_INT(n, 2);
	CHECK(m == ok + 5);
	CHECK_INT(kpb_unframe(ok, 3, &m, &n, NULL), -EINVAL);
	CHECK_INT(kpb_unframe(zipped, sizeof(zipped), &m, &n, NULL), -ENOTSUP);
	CHECK_INT(kpb_unframe(two, sizeof(two), &m, &n, NULL), -EINVAL);
	CHECK_INT(kpb_unframe(huge, sizeof(huge), &m, &n, NULL), -E2BIG);
}

static int t_alloc(void *ctx, size_t res, const char *const *ids, size_t n,
		   struct kubelet_alloc *out, struct log_err *err)
{
	static struct kubelet_spec spec = {"/dev/c", "/dev/h", "rw"};
	static struct kubelet_mount mnt = {"/c", "/h", true};
	static struct kubelet_kv env = {"K", "V"}, ann = {"a/b", "c"};
	static const char *cdi[] = {"nodeprobe.io/x=1"};

	(void)ctx;
	(void)res;
	if (n && !strcmp(ids[0], "bad"))
		return log_err_set(err, -ENOENT, "unknown device 'bad'");
	*out = (struct kubelet_alloc){&spec, 1, &mnt, 1, &env, 1, &ann, 1, cdi, 1, NULL};
	return 0;
}

static int frees;
static void t_free(void *ctx, struct kubelet_alloc *a)
{
	(void)ctx;
	(void)a;
	frees++;
}

static int t_pref(void *ctx, size_t res, const char *const *avail, size_t n_avail,
		  const char *const *must, size_t n_must, size_t size, const char **out,
		  struct log_err *err)
{
	(void)ctx, (void)res, (void)must, (void)n_must, (void)err, (void)n_avail;
	for (size_t i = 0; i < size; i++)
		out[i] = avail[n_avail - 1 - i];
	return (int)size;
}

static const struct kubelet_ops ops = {t_alloc, t_free, t_pref};

/* Pack a message behind no prefix, into buf. */
static size_t packed(const ProtobufCMessage *m, uint8_t *buf)
{
	return protobuf_c_message_pack(m, buf);
}

TEST(allocate_round_trip_with_cdi_field_5)
{
	char *ids1[] = {(char *)"d-0"}, *ids2[] = {(char *)"d-1"};
	V1beta1__ContainerAllocateRequest c1 = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT, c2 = c1;
	V1beta1__ContainerAllocateRequest *cs[] = {&c1, &c2};
	V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
	V1beta1__AllocateResponse *r;
	struct kpb_buf b;
	uint8_t buf[256];
	size_t n;
	int status;

	c1.n_devices_ids = 1;
	c1.devices_ids = ids1;
	c2.n_devices_ids = 1;
	c2.devices_ids = ids2;
	req.n_container_requests = 2;
	req.container_requests = cs;
	n = packed(&req.base, buf);
	frees = 0;
	REQUIRE_INT(kpb_allocate(buf, n, &ops, NULL, 0, &b, &status, NULL), 0);
	CHECK_INT(status, KG_OK);
	CHECK_INT(frees, 2);
	r = v1beta1__allocate_response__unpack(NULL, b.len - 5, b.p + 5);
	REQUIRE(r);
	REQUIRE_INT(r->n_container_responses, 2);
	REQUIRE_INT(r->container_responses[1]->n_cdi_devices, 1);
	CHECK_STR(r->container_responses[1]->cdi_devices[0]->name, "nodeprobe.io/x=1");
	CHECK_STR(r->container_responses[0]->devices[0]->permissions, "rw");
	CHECK_STR(r->container_responses[0]->mounts[0]->host_path, "/h");
	CHECK(r->container_responses[0]->mounts[0]->read_only);
	CHECK_STR(r->container_responses[0]->envs[0]->key, "K");
	CHECK_STR(r->container_responses[0]->annotations[0]->value, "c");
	v1beta1__allocate_response__free_unpacked(r, NULL);
	kpb_buf_free(&b);
	/* CDI names are field 5 (tag 0x2a, length-delimited) of ContainerAllocateResponse. */
	{
		V1beta1__ContainerAllocateResponse c = V1BETA1__CONTAINER_ALLOCATE_RESPONSE__INIT;
		V1beta1__CDIDevice d = V1BETA1__CDIDEVICE__INIT, *dp[] = {&d};

		d.name = (char *)"v.io/c=x";
		c.n_cdi_devices = 1;
		c.cdi_devices = dp;
		n = packed(&c.base, buf);
		CHECK_INT(buf[0], 0x2a);
		CHECK_INT(n, 2 + 2 + strlen("v.io/c=x"));
	}
}

TEST(allocate_errors_carry_a_status)
{
	char *ids[] = {(char *)"bad"};
	V1beta1__ContainerAllocateRequest c = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT,
					  *cs[] = {&c};
	V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
	const uint8_t garbage[] = {0x0a, 0x10, 0x01};
	struct log_err err = {0};
	struct kpb_buf b = {0};
	uint8_t buf[64];
	int status;

	c.n_devices_ids = 1;
	c.devices_ids = ids;
	req.n_container_requests = 1;
	req.container_requests = cs;
	CHECK_INT(kpb_allocate(buf, packed(&req.base, buf), &ops, NULL, 0, &b, &status, &err),
		  -ENOENT);
	CHECK_INT(status, KG_NOT_FOUND);
	CHECK_STR(err.msg, "unknown device 'bad'");
	CHECK_INT(kpb_allocate(garbage, sizeof(garbage), &ops, NULL, 0, &b, &status, &err),
		  -EINVAL);
	CHECK_INT(status, KG_INVALID_ARGUMENT);
	CHECK(b.p == NULL);
}

TEST(preferred_checks_the_size)
{
	char *avail[] = {(char *)"a", (char *)"b", (char *)"c"};
	V1beta1__ContainerPreferredAllocationRequest c =
	    V1BETA1__CONTAINER_PREFERRED_ALLOCATION_REQUEST__INIT;
	V1beta1__ContainerPreferredAllocationRequest *cs[] = {&c};
	V1beta1__PreferredAllocationRequest req = V1BETA1__PREFERRED_ALLOCATION_REQUEST__INIT;
	V1beta1__PreferredAllocationResponse *r;
	struct kpb_buf b;
	uint8_t buf[64];
	int status;

	c.n_available_deviceids = 3;
	c.available_deviceids = avail;
	c.allocation_size = 2;
	req.n_container_requests = 1;
	req.container_requests = cs;
	REQUIRE_INT(kpb_preferred(buf, packed(&req.base, buf), &ops, NULL, 0, &b, &status, NULL),
		    0);
	r = v1beta1__preferred_allocation_response__unpack(NULL, b.len - 5, b.p + 5);
	REQUIRE(r && r->n_container_responses == 1);
	REQUIRE_INT(r->container_responses[0]->n_deviceids, 2);
	CHECK_STR(r->container_responses[0]->deviceids[0], "c");
	CHECK_STR(r->container_responses[0]->deviceids[1], "b");
	v1beta1__preferred_allocation_response__free_unpacked(r, NULL);
	kpb_buf_free(&b);
	c.allocation_size = 4;
	CHECK_INT(kpb_preferred(buf, packed(&req.base, buf), &ops, NULL, 0, &b, &status, NULL),
		  -EINVAL);
	CHECK_INT(status, KG_INVALID_ARGUMENT);
}

/* gRPC over nghttp2, both ends in this process on a socketpair. */
struct pair {
	struct kg_conn *srv, *cli;
	int requests, closed, responses, status;
	char path[128], msg[256];
	size_t body;
	uint8_t sent[256], got[256]; /* the request body, echoed; the response body received */
	size_t got_n;
};

static void p_request(void *ctx, struct kg_conn *c, int32_t sid, const char *path,
		      const uint8_t *body, size_t n)
{
	struct pair *p = ctx;
	struct kpb_buf m = {malloc(n), n};

	p->requests++;
	snprintf(p->path, sizeof(p->path), "%s", path);
	p->body = n;
	if (!m.p)
		abort();
	memcpy(m.p, body, n); /* the answer: the request's message back */
	memcpy(p->sent, body, n < sizeof(p->sent) ? n : sizeof(p->sent));
	kg_send(c, sid, &m, false);
	kg_finish(c, sid, KG_NOT_FOUND, "no such thing: 100% gone\n");
}

static void p_closed(void *ctx, struct kg_conn *c, int32_t sid)
{
	(void)c, (void)sid;
	((struct pair *)ctx)->closed++;
}

static void p_response(void *ctx, struct kg_conn *c, int32_t sid, int status, const char *msg,
		       const uint8_t *body, size_t n)
{
	struct pair *p = ctx;

	(void)c, (void)sid;
	p->got_n = n;
	memcpy(p->got, body, n < sizeof(p->got) ? n : sizeof(p->got));
	p->responses++;
	p->status = status;
	snprintf(p->msg, sizeof(p->msg), "%s", msg);
}

static const struct kg_handler ph = {p_request, p_closed, p_response};

static void pump(struct pair *p)
{
	for (int i = 0; i < 100 && !p->responses; i++) {
		struct pollfd f[2] = {{kg_conn_fd(p->srv), kg_conn_events(p->srv), 0},
				      {kg_conn_fd(p->cli), kg_conn_events(p->cli), 0}};

		REQUIRE(poll(f, 2, 1000) > 0);
		if (f[0].revents)
			REQUIRE_INT(kg_conn_io(p->srv, f[0].revents, NULL), 0);
		if (f[1].revents)
			REQUIRE_INT(kg_conn_io(p->cli, f[1].revents, NULL), 0);
	}
}

TEST(grpc_call_status_and_message_round_trip)
{
	struct pair p = {0};
	struct kpb_buf m;
	int sv[2];

	REQUIRE_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	REQUIRE_INT(kg_conn_new(sv[0], true, &ph, &p, &p.srv), 0);
	REQUIRE_INT(kg_conn_new(sv[1], false, &ph, &p, &p.cli), 0);
	REQUIRE_INT(kpb_register("e.sock", "a.io/b", false, &m), 0);
	size_t len = m.len;

	REQUIRE(kg_call(p.cli, "/v1beta1.Registration/Register", &m) > 0);
	pump(&p);
	CHECK_INT(p.requests, 1);
	CHECK_STR(p.path, "/v1beta1.Registration/Register");
	CHECK_INT(p.body, len);
	REQUIRE_INT(p.responses, 1);
	CHECK_INT(p.status, KG_NOT_FOUND);
	CHECK_STR(p.msg, "no such thing: 100% gone\n"); /* percent-encoded on the wire */
	/* the client is handed the response body: here the request's message echoed */
	REQUIRE_INT(p.got_n, len);
	CHECK(len <= sizeof(p.got) && memcmp(p.got, p.sent, len) == 0);
	kg_conn_free(p.srv);
	kg_conn_free(p.cli);
}

TEST(grpc_garbage_kills_only_that_connection)
{
	struct pair p = {0};
	int sv[2];
	struct log_err err = {0};

	REQUIRE_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	REQUIRE_INT(kg_conn_new(sv[0], true, &ph, &p, &p.srv), 0);
	REQUIRE(write(sv[1], "GET / HTTP/1.1\r\n\r\n0123456789abcdef", 34) == 34);
	CHECK_INT(kg_conn_io(p.srv, POLLIN, &err), -EPROTO);
	CHECK(strstr(err.msg, "HTTP/2") != NULL);
	kg_conn_free(p.srv);
	close(sv[1]);
}

TEST(resource_names_are_checked)
{
	struct kubelet_opts o = {.dir = "/nonexistent", .ops = ops};
	struct kubelet_srv *s;
	struct log_err err = {0};
	struct kubelet_device bad = {"", true, -1};

	REQUIRE_INT(kubelet_srv_new(&o, &s, &err), 0);
	CHECK_INT(kubelet_srv_add(s, "example.com/foo", &err), 0);
	CHECK_INT(kubelet_srv_add(s, "nodeprobe.io/serial_1.x", &err), 1);
	CHECK_INT(kubelet_srv_add(s, "example.com/foo", &err), -EEXIST);
	CHECK_INT(kubelet_srv_add(s, "foo", &err), -EINVAL);
	CHECK_INT(kubelet_srv_add(s, "kubernetes.io/foo", &err), -EINVAL);
	CHECK_INT(kubelet_srv_add(s, "x.kubernetes.io/foo", &err), -EINVAL);
	CHECK_INT(kubelet_srv_add(s, "Example.com/foo", &err), -EINVAL);
	CHECK_INT(kubelet_srv_add(s, "example.com/a/b", &err), -EINVAL);
	CHECK_INT(kubelet_srv_add(s, "example.com/-a", &err), -EINVAL);
	CHECK_INT(kubelet_srv_set_devices(s, 0, &bad, 1, &err), -EINVAL);
	CHECK_INT(kubelet_srv_set_devices(s, 5, NULL, 0, &err), -EINVAL);
	kubelet_srv_free(s);
}

/* A server that holds each request open (no answer yet): its stream id is kept. */
struct held {
	int32_t sid;
};

static void h_request(void *ctx, struct kg_conn *c, int32_t sid, const char *path,
		      const uint8_t *body, size_t n)
{
	(void)c, (void)path, (void)body, (void)n;
	((struct held *)ctx)->sid = sid;
}

static void h_closed(void *ctx, struct kg_conn *c, int32_t sid)
{
	(void)ctx, (void)c, (void)sid;
}

static const struct kg_handler hh = {h_request, h_closed, p_response};

static struct kpb_buf big(size_t n)
{
	struct kpb_buf b = {calloc(1, n), n};

	if (!b.p)
		abort();
	return b;
}

/* Three server connections, each holding one ListAndWatch-like request open (h[i].sid), their
 * clients never reading. */
static void held_conns(struct kg_conn **srv, struct kg_conn **cli, struct held *h, struct pair *p)
{
	struct kpb_buf m;
	int sv[2];

	for (int i = 0; i < 3; i++) {
		REQUIRE_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
		REQUIRE_INT(kg_conn_new(sv[0], true, &hh, &h[i], &srv[i]), 0);
		REQUIRE_INT(kg_conn_new(sv[1], false, &ph, p, &cli[i]), 0);
		kpb_empty(&m);
		REQUIRE(kg_call(cli[i], "/v1beta1.DevicePlugin/ListAndWatch", &m) > 0);
		for (int k = 0; k < 50 && !h[i].sid; k++) {
			struct pollfd f[2] = {{kg_conn_fd(srv[i]), kg_conn_events(srv[i]), 0},
					      {kg_conn_fd(cli[i]), kg_conn_events(cli[i]), 0}};

			REQUIRE(poll(f, 2, 1000) > 0);
			if (f[0].revents)
				REQUIRE_INT(kg_conn_io(srv[i], f[0].revents, NULL), 0);
			if (f[1].revents)
				REQUIRE_INT(kg_conn_io(cli[i], f[1].revents, NULL), 0);
		}
		REQUIRE(h[i].sid > 0);
	}
}

/* Answers queued on three connections whose peer never reads: 16 MiB in all, whatever each
 * connection's own 8 MiB allows (32 connections x 16 MiB was the worst case before); the
 * connection holding the most is closed for a newcomer. */
TEST(grpc_process_wide_byte_budget)
{
	struct kg_conn *srv[3], *cli[3];
	struct held h[3] = {{0}};
	struct pair p = {0};
	struct kpb_buf m;

	held_conns(srv, cli, h, &p);
	m = big(7u << 20);
	CHECK_INT(kg_send(srv[0], h[0].sid, &m, false), 0); /* 7 MiB: within 8 per connection */
	m = big(6u << 20);
	CHECK_INT(kg_send(srv[1], h[1].sid, &m, false), 0); /* 13 MiB in all */
	m = big(4u << 20);
	CHECK_INT(kg_send(srv[2], h[2].sid, &m, false), 0); /* 17 > 16 MiB: srv[0] closed */
	CHECK_INT(kg_conn_events(srv[0]), 0);
	CHECK(kg_conn_events(srv[1]) != 0);
	CHECK_INT(kg_total_bytes(), 10u << 20);
	m = big(7u << 20); /* srv[1] holds 6, less than its own 4 + 7: refused, srv[2] closed */
	CHECK_INT(kg_send(srv[2], h[2].sid, &m, false), -ENOBUFS);
	CHECK(kg_total_bytes() <= KG_MAX_TOTAL);
	for (int i = 0; i < 3; i++) {
		kg_conn_free(srv[i]);
		kg_conn_free(cli[i]);
	}
	CHECK_INT(kg_total_bytes(), 0); /* every byte given back */
}

/* Peers that never read their ListAndWatch streams fill the 16 MiB budget: the kubelet's small
 * Allocate answer on its own connection still goes out, the connection holding the most is
 * closed. Before: the kubelet's connection was the one closed (-ENOBUFS, dead). */
TEST(grpc_full_budget_closes_the_biggest_holder_not_the_kubelet)
{
	struct kg_conn *srv[3], *cli[3];
	struct held h[3] = {{0}};
	struct pair p = {0};
	struct kpb_buf m;

	held_conns(srv, cli, h, &p);
	m = big(8u << 20);
	CHECK_INT(kg_send(srv[0], h[0].sid, &m, false), 0);
	m = big((8u << 20) - 1000);
	CHECK_INT(kg_send(srv[1], h[1].sid, &m, false), 0);
	CHECK_INT(kg_total_bytes(), KG_MAX_TOTAL - 1000);
	m = big(2000); /* the kubelet's Allocate answer */
	CHECK_INT(kg_send(srv[2], h[2].sid, &m, false), 0);
	CHECK(kg_conn_events(srv[2]) != 0);   /* the kubelet's connection lives */
	CHECK_INT(kg_conn_events(srv[0]), 0); /* the biggest holder is closed */
	CHECK(kg_conn_events(srv[1]) != 0);
	CHECK_INT(kg_total_bytes(), (8u << 20) - 1000 + 2000);
	for (int i = 0; i < 3; i++) {
		kg_conn_free(srv[i]);
		kg_conn_free(cli[i]);
	}
	CHECK_INT(kg_total_bytes(), 0);
}

/* A raw HTTP/2 client (nghttp2, HTTP messaging left on as any client has it) that sends one
 * request with the headers a test chooses: what grpc-go clients of each kubelet send. */
struct raw {
	int fd;
	int status;    /* grpc-status read, -1: none */
	uint32_t code; /* the stream's close code */
	bool closed;
	int requests; /* the requests the server handed on */
};

static ssize_t raw_send(nghttp2_session *s, const uint8_t *d, size_t n, int fl, void *u)
{
	(void)s, (void)fl;
	ssize_t w = write(((struct raw *)u)->fd, d, n);

	return w < 0 ? NGHTTP2_ERR_WOULDBLOCK : w;
}

static int raw_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nl,
		      const uint8_t *v, size_t vl, uint8_t fl, void *u)
{
	(void)s, (void)f, (void)vl, (void)fl;
	if (nl == 11 && !memcmp(name, "grpc-status", 11))
		((struct raw *)u)->status = atoi((const char *)v);
	return 0;
}

static int raw_close(nghttp2_session *s, int32_t sid, uint32_t code, void *u)
{
	(void)s, (void)sid;
	((struct raw *)u)->code = code;
	((struct raw *)u)->closed = true;
	return 0;
}

static ssize_t raw_body(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t len, uint32_t *fl,
			nghttp2_data_source *src, void *u)
{
	(void)s, (void)sid, (void)src, (void)u, (void)len; /* len: at least 16 KiB */
	memset(buf, 0, 5);				   /* one empty message: Empty */
	*fl |= NGHTTP2_DATA_FLAG_EOF;
	return 5;
}

#define RNV(n, v)                                                                                  \
	{                                                                                          \
		(uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v), NGHTTP2_NV_FLAG_NONE         \
	}

/* Send hdr[0..n) and an Empty message to a kg server; *r filled. */
static void raw_call(const nghttp2_nv *hdr, size_t n, struct raw *r)
{
	struct pair p = {0};
	nghttp2_session_callbacks *cb;
	nghttp2_session *cli;
	nghttp2_data_provider prd = {.read_callback = raw_body};
	int sv[2];

	*r = (struct raw){.status = -1};
	REQUIRE_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	REQUIRE_INT(kg_conn_new(sv[0], true, &ph, &p, &p.srv), 0);
	r->fd = sv[1];
	REQUIRE_INT(nghttp2_session_callbacks_new(&cb), 0);
	nghttp2_session_callbacks_set_send_callback(cb, raw_send);
	nghttp2_session_callbacks_set_on_header_callback(cb, raw_header);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, raw_close);
	REQUIRE_INT(nghttp2_session_client_new(&cli, cb, r), 0);
	nghttp2_session_callbacks_del(cb);
	REQUIRE_INT(nghttp2_submit_settings(cli, NGHTTP2_FLAG_NONE, NULL, 0), 0);
	REQUIRE(nghttp2_submit_request(cli, NULL, hdr, n, &prd, NULL) > 0);
	for (int i = 0; i < 100 && !r->closed; i++) {
		struct pollfd f[2] = {
		    {kg_conn_fd(p.srv), kg_conn_events(p.srv), 0},
		    {sv[1], POLLIN | (nghttp2_session_want_write(cli) ? POLLOUT : 0), 0}};
		uint8_t buf[4096];
		ssize_t got;

		REQUIRE(poll(f, 2, 1000) > 0);
		if (f[0].revents)
			REQUIRE_INT(kg_conn_io(p.srv, f[0].revents, NULL), 0);
		if (f[1].revents & POLLIN) {
			got = read(sv[1], buf, sizeof(buf));
			REQUIRE(got > 0);
			REQUIRE(nghttp2_session_mem_recv(cli, buf, (size_t)got) == got);
		}
		REQUIRE_INT(nghttp2_session_send(cli), 0);
	}
	REQUIRE(r->closed);
	nghttp2_session_del(cli);
	close(sv[1]);
	kg_conn_free(p.srv);
	r->requests = p.requests;
}

/* Any :authority is served: kubelet 1.25's grpc-go sends the socket's path (a target without a
 * scheme is passed through as the authority), later kubelets "localhost"; a gRPC server ignores
 * it. Before: libnghttp2's HTTP messaging checks refused '/' in an authority (RST_STREAM
 * PROTOCOL_ERROR on every call of kubelet 1.25). */
TEST(grpc_any_authority_is_served)
{
	const char *auth[] = {"/var/lib/kubelet/device-plugins/np-x.sock", "localhost", "",
			      "unix:///var/lib/kubelet/device-plugins/np-x.sock", "a b\\x"};

	for (size_t i = 0; i < sizeof(auth) / sizeof(auth[0]); i++) {
		nghttp2_nv h[] = {
		    RNV(":method", "POST"),
		    RNV(":scheme", "http"),
		    RNV(":path", "/v1beta1.DevicePlugin/GetDevicePluginOptions"),
		    RNV(":authority", auth[i]),
		    RNV("content-type", "application/grpc"),
		    RNV("user-agent", "grpc-go/1.33.3"),
		    RNV("te", "trailers"),
		    RNV("grpc-timeout", "9999867u"),
		};
		struct raw r;

		raw_call(h, sizeof(h) / sizeof(h[0]), &r);
		if (r.requests != 1)
			fprintf(stderr, "  :authority '%s' not served\n", auth[i]);
		CHECK_INT(r.requests, 1);
		CHECK_INT(r.code, NGHTTP2_NO_ERROR);
		CHECK_INT(r.status, KG_NOT_FOUND); /* p_request's answer */
	}
}

/* What a gRPC server does check: a POST of a gRPC content type with a :path. */
TEST(grpc_non_grpc_requests_are_reset)
{
	nghttp2_nv get[] = {RNV(":method", "GET"), RNV(":scheme", "http"), RNV(":path", "/x"),
			    RNV(":authority", "l"), RNV("content-type", "application/grpc")};
	nghttp2_nv json[] = {RNV(":method", "POST"), RNV(":scheme", "http"), RNV(":path", "/x"),
			     RNV(":authority", "l"), RNV("content-type", "application/json")};
	nghttp2_nv plus[] = {RNV(":method", "POST"), RNV(":scheme", "http"), RNV(":path", "/x"),
			     RNV("content-type", "application/grpc+proto")};
	struct raw r;

	raw_call(get, 5, &r);
	CHECK_INT(r.requests, 0);
	CHECK_INT(r.code, NGHTTP2_PROTOCOL_ERROR);
	raw_call(json, 5, &r);
	CHECK_INT(r.requests, 0);
	CHECK_INT(r.code, NGHTTP2_PROTOCOL_ERROR);
	raw_call(plus, 4, &r);
	CHECK_INT(r.requests, 1);
	CHECK_INT(r.code, NGHTTP2_NO_ERROR);
}
