// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kubelet_grpc: gRPC calls over one libnghttp2 session per non-blocking connection (HTTP/2 with
 * prior knowledge, no TLS). Server side: a request's body is gathered (bounded), handed to the
 * owner's handler, which answers with kg_send / kg_finish; answers are pulled by nghttp2's data
 * provider as the socket takes them, so a peer that never reads costs bounded memory and never
 * blocks the caller. Client side: unary calls (Register). Framing of a message's 5-byte prefix is
 * kubelet_pb's; the request, response and trailer headers are gRPC's (PROTOCOL-HTTP2.md).
 *
 * A server session runs with libnghttp2's HTTP messaging checks off
 * (nghttp2_option_set_no_http_messaging): among them, nghttp2_http_on_header requires a request's
 * :authority to be non-empty and made of RFC 3986 authority characters, and resets the stream
 * (PROTOCOL_ERROR) otherwise. grpc-go dials a target without a scheme with that target as the
 * :authority, so kubelet v1.25, whose target is the plugin socket's path, sent
 * "/var/lib/kubelet/device-plugins/<ours>.sock" and had every call reset; later kubelets add
 * grpc.WithAuthority("localhost") (pkg/kubelet/cm/devicemanager/plugin/v1beta1/client.go, dial).
 * A gRPC server ignores :authority and :scheme, as grpc-go's does. What a gRPC server does check
 * is ours (on_header, request_ok): a POST of content-type application/grpc[+...|;...] with a
 * :path, pseudo-headers only in the request's own HEADERS (never in trailers); anything else is
 * reset with PROTOCOL_ERROR. The frame layer (preface, SETTINGS, flow control, HPACK, stream
 * states, the CONTINUATION bounds) stays nghttp2's, and our own bounds stay: KG_MAX_HEADERS per
 * request, KG_MAX_STREAMS, the byte budgets and deadlines (kubelet_internal.h). Client sessions
 * (Register) keep the checks: they read what a kubelet's grpc-go server answers.
 */
#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kubelet/kubelet_internal.h"
#include "log/log.h"

struct kg_stream {
	int32_t id;
	struct kg_stream *prev, *next_st;
	char path[128];	  /* :path; "" when absent or too long */
	size_t hdr_bytes; /* header list bytes received */
	uint8_t *in;	  /* request (or response) body so far */
	size_t in_len;
	bool too_big;	    /* body passed the message limit: answered RESOURCE_EXHAUSTED */
	bool over_budget;   /* ... or the process-wide byte budget */
	bool dispatched;    /* server: request complete (handed on) or reset: no deadline */
	bool post, grpc_ct; /* server: :method POST; content-type application/grpc[+..|;..] */
	bool has_path;	    /* server: a :path came (path "" when too long: an unknown method) */
	long long start_ms; /* server: HEADERS received (CLOCK_MONOTONIC) */
	long long deadline; /* server: grpc-timeout or kg_set_deadline, as mono_ms; -1: none */
	struct kpb_buf cur; /* the message being sent, from off */
	size_t off;
	struct kpb_buf next; /* the one after it */
	bool responded;	     /* response headers submitted */
	bool finishing;	     /* trailers after what is queued */
	int status;	     /* server: status to send; client: grpc-status read (-1: none) */
	char msg[256];	     /* grpc-message, either way */
	int http_status;     /* client: :status */
};

struct kg_conn {
	uint64_t id; /* kg_conn_id: never reused in the process */
	int fd;
	bool server;
	bool dead; /* a limit was passed or the session failed: free it */
	nghttp2_session *s;
	const struct kg_handler *h;
	void *ctx;
	struct kg_stream *streams;
	size_t in_bytes, out_bytes;
	struct kg_conn *prev_c, *next_c; /* every connection of the process (conns) */
};

/* Request and answer bytes buffered by every connection of the process (KG_MAX_TOTAL). */
static size_t total_bytes;
static struct kg_conn *conns;
static uint64_t last_id;

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct kg_stream *stream_new(struct kg_conn *c, int32_t id)
{
	struct kg_stream *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->id = id;
	st->status = -1;
	st->deadline = -1;
	st->next_st = c->streams;
	if (c->streams)
		c->streams->prev = st;
	c->streams = st;
	return st;
}

/* The request body gathered so far goes (handed on, too big, or past its deadline). */
static void body_drop(struct kg_conn *c, struct kg_stream *st)
{
	c->in_bytes -= st->in_len;
	total_bytes -= st->in_len;
	free(st->in);
	st->in = NULL;
	st->in_len = 0;
}

static void stream_free(struct kg_conn *c, struct kg_stream *st)
{
	if (st->prev)
		st->prev->next_st = st->next_st;
	else
		c->streams = st->next_st;
	if (st->next_st)
		st->next_st->prev = st->prev;
	c->in_bytes -= st->in_len;
	c->out_bytes -= st->cur.len + st->next.len;
	total_bytes -= st->in_len + st->cur.len + st->next.len;
	free(st->in);
	kpb_buf_free(&st->cur);
	kpb_buf_free(&st->next);
	free(st);
}

/*
 * The process-wide budget cannot take len more bytes for c: the connection holding the most
 * (requests and answers buffered), when it holds more than c would, gives them back now and is
 * closed (dead: its owner frees it), until len fits. So peers that never read, or trickle
 * requests, fill the budget only until a connection that does its share (the kubelet's Allocate,
 * a new ListAndWatch) needs room: they are the ones closed, not it. Returns whether len fits.
 */
static bool budget_room(struct kg_conn *c, size_t len)
{
	while (total_bytes + len > KG_MAX_TOTAL) {
		struct kg_conn *hog = NULL;

		for (struct kg_conn *x = conns; x; x = x->next_c)
			if (x != c && !x->dead &&
			    (!hog || x->in_bytes + x->out_bytes > hog->in_bytes + hog->out_bytes))
				hog = x;
		if (!hog || hog->in_bytes + hog->out_bytes <= c->in_bytes + c->out_bytes + len)
			return false;
		hog->dead = true;
		for (struct kg_stream *st = hog->streams; st; st = st->next_st) {
			body_drop(hog, st);
			hog->out_bytes -= st->cur.len + st->next.len;
			total_bytes -= st->cur.len + st->next.len;
			kpb_buf_free(&st->cur);
			kpb_buf_free(&st->next);
			st->off = 0;
		}
	}
	return true;
}

/* grpc-message is percent-encoded: bytes outside printable ASCII and '%' as %XX. */
static void pct_encode(char *dst, size_t cap, const char *src)
{
	size_t o = 0;

	for (; *src && o + 4 < cap; src++) {
		unsigned char ch = (unsigned char)*src;

		if (ch < 0x20 || ch > 0x7e || ch == '%')
			o += (size_t)snprintf(dst + o, cap - o, "%%%02X", ch);
		else
			dst[o++] = (char)ch;
	}
	dst[o] = '\0';
}

static int hexval(uint8_t c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
				      : -1;
}

/* The reverse, for what a kubelet sends; a '%' not followed by two hex digits stays. */
static void pct_decode(char *dst, size_t cap, const uint8_t *v, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		if (v[i] == '%' && i + 2 < n && hexval(v[i + 1]) >= 0 && hexval(v[i + 2]) >= 0) {
			dst[o++] = (char)(hexval(v[i + 1]) << 4 | hexval(v[i + 2]));
			i += 2;
		} else {
			dst[o++] = (char)v[i];
		}
	}
	dst[o] = '\0';
}

#define NV(n, v)                                                                                   \
	{                                                                                          \
		(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE     \
	}

static ssize_t on_send(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *u)
{
	struct kg_conn *c = u;
	ssize_t n;

	(void)s;
	(void)flags;
	n = send(c->fd, data, len, MSG_NOSIGNAL);
	if (n >= 0)
		return n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return NGHTTP2_ERR_WOULDBLOCK;
	return NGHTTP2_ERR_CALLBACK_FAILURE;
}

/* Pull the stream's queued messages; then (server) trailers, (client) the end of the request. */
static ssize_t on_read(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
		       uint32_t *flags, nghttp2_data_source *src, void *u)
{
	struct kg_conn *c = u;
	struct kg_stream *st = src->ptr;

	if (st->cur.p) {
		size_t n = st->cur.len - st->off;

		if (n > length)
			n = length;
		memcpy(buf, st->cur.p + st->off, n);
		st->off += n;
		if (st->off == st->cur.len) {
			c->out_bytes -= st->cur.len;
			total_bytes -= st->cur.len;
			kpb_buf_free(&st->cur);
			st->cur = st->next;
			st->next = (struct kpb_buf){0};
			st->off = 0;
		}
		return (ssize_t)n;
	}
	if (!c->server) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		return 0;
	}
	if (!st->finishing)
		return NGHTTP2_ERR_DEFERRED;
	char status[16], msg[sizeof(st->msg) * 3];

	snprintf(status, sizeof(status), "%d", st->status);
	pct_encode(msg, sizeof(msg), st->msg);
	nghttp2_nv tr[2] = {NV("grpc-status", status), NV("grpc-message", msg)};

	*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
	if (nghttp2_submit_trailer(s, sid, tr, msg[0] ? 2 : 1) != 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return 0;
}

/*
 * grpc-timeout (PROTOCOL-HTTP2.md: TimeoutValue, 1 to 8 ASCII digits, then the unit H, M, S, m,
 * u or n) in milliseconds, rounded up; -1 when malformed (then ignored, as no timeout).
 */
static long long timeout_ms(const uint8_t *v, size_t n)
{
	static const struct {
		char unit;
		long long num, den;
	} units[] = {{'H', 3600000, 1}, {'M', 60000, 1}, {'S', 1000, 1},
		     {'m', 1, 1},	{'u', 1, 1000},	 {'n', 1, 1000000}};
	long long x = 0;

	if (n < 2 || n > 9)
		return -1;
	for (size_t i = 0; i + 1 < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (v[i] - '0');
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (units[i].unit == (char)v[n - 1])
			return (x * units[i].num + units[i].den - 1) / units[i].den;
	return -1;
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *u)
{
	struct kg_conn *c = u;
	struct kg_stream *st;

	if (!c->server || f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = stream_new(c, f->hd.stream_id);
	if (!st)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	st->start_ms = mono_ms();
	nghttp2_session_set_stream_user_data(s, f->hd.stream_id, st);
	return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		     const uint8_t *value, size_t vlen, uint8_t flags, void *u)
{
	struct kg_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	struct kg_conn *c = u;

	(void)flags;
	if (!st)
		return 0;
	st->hdr_bytes += nlen + vlen + 32;
	if (st->hdr_bytes > KG_MAX_HEADERS)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* resets this stream only */
	if (c->server) {
		if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
			return 0; /* trailers: nothing of them is read */
		if (nlen == 5 && !memcmp(name, ":path", 5)) {
			st->has_path = vlen > 0;
			if (vlen < sizeof(st->path)) {
				memcpy(st->path, value, vlen);
				st->path[vlen] = '\0';
			}
		} else if (nlen == 7 && !memcmp(name, ":method", 7)) {
			st->post = vlen == 4 && !memcmp(value, "POST", 4);
		} else if (nlen == 12 && !memcmp(name, "content-type", 12)) {
			st->grpc_ct = vlen >= 16 && !memcmp(value, "application/grpc", 16) &&
				      (vlen == 16 || value[16] == '+' || value[16] == ';');
		} else if (nlen == 12 && !memcmp(name, "grpc-timeout", 12)) {
			long long ms = timeout_ms(value, vlen);

			st->deadline = ms < 0 ? -1 : st->start_ms + ms;
		}
		return 0;
	}
	if (nlen == 7 && !memcmp(name, ":status", 7))
		st->http_status = atoi((const char *)value);
	else if (nlen == 11 && !memcmp(name, "grpc-status", 11))
		st->status = atoi((const char *)value);
	else if (nlen == 12 && !memcmp(name, "grpc-message", 12))
		pct_decode(st->msg, sizeof(st->msg), value, vlen);
	return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t sid, const uint8_t *data, size_t len,
		   void *u)
{
	struct kg_stream *st = nghttp2_session_get_stream_user_data(s, sid);
	struct kg_conn *c = u;
	uint8_t *p;

	(void)flags;
	if (!st || st->too_big || st->dispatched)
		return 0;
	if (st->in_len + len > KPB_PREFIX + KPB_MAX_MSG || !budget_room(c, len)) {
		st->too_big = true; /* what it sent so far is dropped; answered at its end */
		st->over_budget = st->in_len + len <= KPB_PREFIX + KPB_MAX_MSG;
		body_drop(c, st);
		return 0;
	}
	if (c->in_bytes + len > KG_MAX_IN) {
		c->dead = true;
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	p = realloc(st->in, st->in_len + len);
	if (!p)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	memcpy(p + st->in_len, data, len);
	st->in = p;
	st->in_len += len;
	c->in_bytes += len;
	total_bytes += len;
	return 0;
}

/* The request's HEADERS are complete: is it a gRPC call? Not: RST_STREAM PROTOCOL_ERROR. */
static int request_ok(nghttp2_session *s, struct kg_stream *st)
{
	if (st->post && st->grpc_ct && st->has_path)
		return 0;
	st->dispatched = true;
	return nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_PROTOCOL_ERROR) == 0
		   ? 0
		   : NGHTTP2_ERR_CALLBACK_FAILURE;
}

static int on_frame(nghttp2_session *s, const nghttp2_frame *f, void *u)
{
	struct kg_conn *c = u;
	struct kg_stream *st;

	if (c->server && f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST) {
		st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
		if (st && request_ok(s, st) < 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	if (!c->server || (f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	if (!st || st->responded || st->dispatched)
		return 0;
	st->dispatched = true;
	if (st->too_big) {
		char m[96];

		if (st->over_budget)
			snprintf(m, sizeof(m), "the plugin holds %u bytes of requests and answers",
				 KG_MAX_TOTAL);
		else
			snprintf(m, sizeof(m), "request message larger than %u bytes", KPB_MAX_MSG);
		return kg_finish(c, st->id, KG_RESOURCE_EXHAUSTED, m) < 0
			   ? NGHTTP2_ERR_CALLBACK_FAILURE
			   : 0;
	}
	c->h->request(c->ctx, c, st->id, st->path, st->in ? st->in : (const uint8_t *)"",
		      st->in_len);
	body_drop(c, st);
	return 0;
}

static int on_close(nghttp2_session *s, int32_t sid, uint32_t code, void *u)
{
	struct kg_stream *st = nghttp2_session_get_stream_user_data(s, sid);
	struct kg_conn *c = u;

	if (!st)
		return 0;
	if (c->server) {
		c->h->closed(c->ctx, c, sid);
	} else {
		int status = st->status;

		if (code != NGHTTP2_NO_ERROR || status < 0)
			status =
			    st->http_status && st->http_status != 200 ? KG_UNKNOWN : KG_UNAVAILABLE;
		if (status != st->status && !st->msg[0])
			snprintf(st->msg, sizeof(st->msg),
				 "stream closed (HTTP/2 error %u, :status %d)", code,
				 st->http_status);
		c->h->response(c->ctx, c, sid, status, st->msg, st->too_big ? NULL : st->in,
			       st->too_big ? 0 : st->in_len);
	}
	stream_free(c, st);
	return 0;
}

int kg_conn_new(int fd, bool server, const struct kg_handler *h, void *ctx, struct kg_conn **out)
{
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_option *opt = NULL;
	struct kg_conn *c = calloc(1, sizeof(*c));
	nghttp2_settings_entry set[] = {
	    {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, KG_MAX_STREAMS},
	    {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, KG_MAX_HEADERS},
	};
	int rc = -ENOMEM;

	*out = NULL;
	if (!c || nghttp2_session_callbacks_new(&cb) != 0 || nghttp2_option_new(&opt) != 0)
		goto fail;
	c->id = ++last_id;
	c->fd = fd;
	c->server = server;
	c->h = h;
	c->ctx = ctx;
	nghttp2_session_callbacks_set_send_callback(cb, on_send);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	nghttp2_option_set_max_send_header_block_length(opt, KG_MAX_HEADERS);
	nghttp2_option_set_no_http_messaging(opt, server); /* see the top of this file */
	if (server)
		rc = nghttp2_session_server_new2(&c->s, cb, c, opt);
	else
		rc = nghttp2_session_client_new2(&c->s, cb, c, opt);
	if (rc != 0) {
		rc = -ENOMEM;
		goto fail;
	}
	if (nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, set, server ? 2 : 0) != 0) {
		rc = -ENOMEM;
		goto fail;
	}
	nghttp2_session_callbacks_del(cb);
	nghttp2_option_del(opt);
	c->next_c = conns;
	if (conns)
		conns->prev_c = c;
	conns = c;
	*out = c;
	return 0;
fail:
	nghttp2_session_callbacks_del(cb);
	nghttp2_option_del(opt);
	if (c) {
		nghttp2_session_del(c->s);
		free(c);
	}
	close(fd);
	return rc;
}

void kg_conn_free(struct kg_conn *c)
{
	if (!c)
		return;
	if (c->prev_c)
		c->prev_c->next_c = c->next_c;
	else
		conns = c->next_c;
	if (c->next_c)
		c->next_c->prev_c = c->prev_c;
	nghttp2_session_del(c->s);
	while (c->streams)
		stream_free(c, c->streams);
	close(c->fd);
	free(c);
}

uint64_t kg_conn_id(const struct kg_conn *c)
{
	return c->id;
}

int kg_conn_fd(const struct kg_conn *c)
{
	return c->fd;
}

short kg_conn_events(const struct kg_conn *c)
{
	short ev = 0;

	if (c->dead)
		return 0;
	if (nghttp2_session_want_read(c->s))
		ev |= POLLIN;
	if (nghttp2_session_want_write(c->s))
		ev |= POLLOUT;
	return ev;
}

int kg_conn_io(struct kg_conn *c, short revents, struct log_err *err)
{
	uint8_t buf[16384];
	int rc;

	if (c->dead) /* a limit passed, or closed for the budget (budget_room) */
		return log_err_set(err, -EPROTO, "HTTP/2: connection passed a limit");
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		/* At most 4 reads a turn: one busy peer cannot starve the others. */
		for (int i = 0; i < 4; i++) {
			ssize_t n = read(c->fd, buf, sizeof(buf));
			ssize_t m;

			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
				break;
			if (n < 0)
				return log_err_set(err, -errno, "read: %s", strerror(errno));
			if (n == 0)
				return log_err_set(err, -ECONNRESET, "peer closed the connection");
			m = nghttp2_session_mem_recv(c->s, buf, (size_t)n);
			if (m < 0 || c->dead)
				return log_err_set(err, -EPROTO, "HTTP/2: %s",
						   c->dead ? "connection passed a limit"
							   : nghttp2_strerror((int)m));
			if ((size_t)n < sizeof(buf))
				break;
		}
	}
	rc = nghttp2_session_send(c->s);
	if (rc != 0 || c->dead)
		return log_err_set(err, -EPROTO, "HTTP/2 send: %s",
				   c->dead ? "connection passed a limit" : nghttp2_strerror(rc));
	return 0;
}

static int respond(struct kg_conn *c, struct kg_stream *st)
{
	nghttp2_nv hdr[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
	nghttp2_data_provider prd = {.source.ptr = st, .read_callback = on_read};

	if (st->responded) {
		/* Not deferred (still sending): fine, the provider finds the new message. */
		nghttp2_session_resume_data(c->s, st->id);
		return 0;
	}
	st->responded = true;
	return nghttp2_submit_response(c->s, st->id, hdr, 2, &prd) == 0 ? 0 : -EPROTO;
}

int kg_send(struct kg_conn *c, int32_t sid, struct kpb_buf *msg, bool latest)
{
	struct kg_stream *st = nghttp2_session_get_stream_user_data(c->s, sid);
	struct kpb_buf *slot;

	if (!st || st->finishing) {
		kpb_buf_free(msg);
		return -ENOENT;
	}
	if (latest && st->cur.p && st->off == 0)
		slot = &st->cur;
	else if (latest || !st->cur.p)
		slot = st->cur.p ? &st->next : &st->cur;
	else if (!st->next.p)
		slot = &st->next;
	else {
		kpb_buf_free(msg);
		return -ENOBUFS;
	}
	c->out_bytes -= slot->len;
	total_bytes -= slot->len;
	kpb_buf_free(slot);
	if (c->dead || c->out_bytes + msg->len > KG_MAX_OUT || !budget_room(c, msg->len)) {
		kpb_buf_free(msg);
		c->dead = true;
		return -ENOBUFS;
	}
	*slot = *msg;
	*msg = (struct kpb_buf){0};
	c->out_bytes += slot->len;
	total_bytes += slot->len;
	return respond(c, st);
}

int kg_finish(struct kg_conn *c, int32_t sid, int status, const char *msg)
{
	struct kg_stream *st = nghttp2_session_get_stream_user_data(c->s, sid);

	if (!st || st->finishing)
		return -ENOENT;
	st->finishing = true;
	st->status = status;
	snprintf(st->msg, sizeof(st->msg), "%s", msg ? msg : "");
	return respond(c, st);
}

int kg_call(struct kg_conn *c, const char *path, struct kpb_buf *msg)
{
	nghttp2_nv hdr[] = {
	    NV(":method", "POST"),
	    NV(":scheme", "http"),
	    NV(":path", path),
	    NV(":authority", "localhost"),
	    NV("content-type", "application/grpc"),
	    NV("te", "trailers"),
	};
	nghttp2_data_provider prd = {.read_callback = on_read};
	struct kg_stream *st = stream_new(c, 0);
	int32_t sid;

	if (!st) {
		kpb_buf_free(msg);
		return -ENOMEM;
	}
	st->cur = *msg;
	*msg = (struct kpb_buf){0};
	c->out_bytes += st->cur.len;
	total_bytes += st->cur.len;
	prd.source.ptr = st;
	sid = nghttp2_submit_request(c->s, NULL, hdr, sizeof(hdr) / sizeof(hdr[0]), &prd, st);
	if (sid < 0) {
		stream_free(c, st);
		return -EPROTO;
	}
	st->id = sid;
	return sid;
}

int kg_conn_expire(struct kg_conn *c, long long now_ms)
{
	int n = 0;

	for (struct kg_stream *st = c->streams; c->server && st; st = st->next_st) {
		if (st->dispatched) {
			/* handed on, not answered by its deadline: DEADLINE_EXCEEDED, as a gRPC
			 * server ends a call whose grpc-timeout passed (a late answer is dropped)
			 */
			if (st->deadline >= 0 && now_ms >= st->deadline && !st->finishing &&
			    kg_finish(c, st->id, KG_DEADLINE_EXCEEDED, "deadline exceeded") == 0)
				n++;
			continue;
		}
		if (now_ms - st->start_ms < KG_REQ_DEADLINE_MS)
			continue;
		st->dispatched = true; /* once; its buffer goes now, the stream when closed */
		body_drop(c, st);
		if (nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL) == 0)
			n++;
	}
	return n;
}

long long kg_conn_deadline(const struct kg_conn *c)
{
	long long d = -1;

	for (const struct kg_stream *st = c->streams; c->server && st; st = st->next_st) {
		long long at = !st->dispatched ? st->start_ms + KG_REQ_DEADLINE_MS
			       : st->finishing ? -1
					       : st->deadline;

		if (at >= 0 && (d < 0 || at < d))
			d = at;
	}
	return d;
}

int kg_set_deadline(struct kg_conn *c, int32_t sid, long long at_ms)
{
	struct kg_stream *st = nghttp2_session_get_stream_user_data(c->s, sid);

	if (!st)
		return -ENOENT;
	if (st->deadline < 0 || at_ms < st->deadline)
		st->deadline = at_ms;
	return 0;
}

long long kg_stream_deadline(const struct kg_conn *c, int32_t sid)
{
	const struct kg_stream *st = nghttp2_session_get_stream_user_data(c->s, sid);

	return st ? st->deadline : -1;
}

long long kg_now_ms(void)
{
	return mono_ms();
}

size_t kg_total_bytes(void)
{
	return total_bytes;
}
