/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kube: URLs, the libcurl client (TLS, bearer token re-read on change, retries; libcurl is
 * loaded with the first client, kube_curl.c) and watches. */
#include "kube/kube.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kube/kube_curl.h"

#define TOKEN_MAX   (64 * 1024)
#define ERRBODY_MAX (64 * 1024)

const struct kube_resource kube_configmaps = {"/api/v1", "configmaps", "ConfigMap"};
const struct kube_resource kube_secrets = {"/api/v1", "secrets", "Secret"};
const struct kube_resource kube_deployments = {"/apis/apps/v1", "deployments", "Deployment"};
const struct kube_resource kube_statefulsets = {"/apis/apps/v1", "statefulsets", "StatefulSet"};
const struct kube_resource kube_daemonsets = {"/apis/apps/v1", "daemonsets", "DaemonSet"};
const struct kube_resource kube_events = {"/api/v1", "events", "Event"};

struct kube_watch {
	struct kube_client *cl;
	CURL *easy;
	struct curl_slist *hdrs;
	struct kube_stream *st;
	kube_watch_done_fn done;
	void *ctx;
	int res;	  /* first feed error */
	long retry_after; /* Retry-After of the answer, seconds, -1 if none */
	int open;	  /* the 200 answer's headers have arrived: events flow from now */
	struct log_err err;
	struct strbuf errbody; /* body of a non-200 answer */
	char errbuf[CURL_ERROR_SIZE];
	struct kube_watch *next;
};

struct kube_client {
	struct kube_config cfg;
	CURL *easy;   /* for plain requests (keeps its connection) */
	CURLM *multi; /* for watches */
	struct kube_watch *watches;
	char *token;	      /* current bearer token, or NULL */
	struct stat token_st; /* token file's stat when last read */
	int retries;
	int base_ms;
	long timeout_ms;   /* whole-request timeout of kube_request (default 120 s) */
	kube_gate_fn gate; /* write gate, or NULL */
	void *gate_ctx;
	unsigned long codes[KUBE_CODES];
};

/* ---- URLs ---- */

static int add_escaped(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int r = 0;

	for (; *s && r == 0; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~')
			r = sb_addch(sb, (char)c);
		else
			r = sb_addf(sb, "%%%c%c", hex[c >> 4], hex[c & 15]);
	}
	return r;
}

static int add_param(struct strbuf *sb, int *first, const char *name, const char *val)
{
	int r = sb_addf(sb, "%c%s=", *first ? '?' : '&', name);

	*first = 0;
	return r ? r : add_escaped(sb, val);
}

int kube_url(struct strbuf *sb, const char *server, const struct kube_resource *res, const char *ns,
	     const char *name, const struct kube_query *q)
{
	int first = 1, r;
	char num[32];

	r = sb_add(sb, server ? server : "");
	r = r ? r : sb_add(sb, res->prefix);
	if (!r && ns && *ns) {
		r = sb_add(sb, "/namespaces/");
		r = r ? r : add_escaped(sb, ns);
	}
	r = r ? r : sb_addch(sb, '/');
	r = r ? r : sb_add(sb, res->plural);
	if (!r && name) {
		r = sb_addch(sb, '/');
		r = r ? r : add_escaped(sb, name);
	}
	if (r || !q)
		return r;
	if (q->label_selector && *q->label_selector)
		r = r ? r : add_param(sb, &first, "labelSelector", q->label_selector);
	if (q->field_selector && *q->field_selector)
		r = r ? r : add_param(sb, &first, "fieldSelector", q->field_selector);
	if (q->limit > 0) {
		snprintf(num, sizeof(num), "%ld", q->limit);
		r = r ? r : add_param(sb, &first, "limit", num);
	}
	if (q->cont && *q->cont)
		r = r ? r : add_param(sb, &first, "continue", q->cont);
	if (q->watch)
		r = r ? r : add_param(sb, &first, "watch", "1");
	if (q->bookmarks)
		r = r ? r : add_param(sb, &first, "allowWatchBookmarks", "true");
	if (q->resource_version && *q->resource_version)
		r = r ? r : add_param(sb, &first, "resourceVersion", q->resource_version);
	if (q->timeout_seconds > 0) {
		snprintf(num, sizeof(num), "%ld", q->timeout_seconds);
		r = r ? r : add_param(sb, &first, "timeoutSeconds", num);
	}
	if (q->field_manager && *q->field_manager)
		r = r ? r : add_param(sb, &first, "fieldManager", q->field_manager);
	return r;
}

const char *kube_strerror(int code)
{
	switch (code) {
	case KUBE_ETLS:
		return "TLS handshake or certificate verification failed";
	case KUBE_ECONN:
		return "could not connect to the API server, or the connection broke";
	case KUBE_EAUTH:
		return "the API server rejected the credentials";
	case KUBE_EHTTP:
		return "unexpected HTTP status from the API server";
	case KUBE_EJSON:
		return "the API server's answer is not the JSON expected";
	case KUBE_ECONFIG:
		return "the kubeconfig or in-cluster configuration is unusable";
	case KUBE_EFENCED:
		return "a write not sent: the gate refused it (not leading)";
	default:
		return strerror(code < 0 ? -code : code);
	}
}

/* ---- client ---- */

static void count(struct kube_client *cl, long status)
{
	if (status < 0 || status >= KUBE_CODES)
		status = 0;
	__atomic_add_fetch(&cl->codes[status], 1, __ATOMIC_RELAXED);
}

unsigned long kube_client_count(const struct kube_client *cl, int code)
{
	if (code < 0 || code >= KUBE_CODES)
		return 0;
	return __atomic_load_n(&cl->codes[code], __ATOMIC_RELAXED);
}

void kube_client_set_retries(struct kube_client *cl, int attempts, int base_ms)
{
	cl->retries = attempts < 1 ? 1 : attempts;
	cl->base_ms = base_ms < 0 ? 0 : base_ms;
}

long kube_client_set_timeout(struct kube_client *cl, long ms)
{
	long old = cl->timeout_ms;

	cl->timeout_ms = ms > 0 ? ms : 120000;
	return old;
}

void kube_client_set_gate(struct kube_client *cl, kube_gate_fn gate, void *ctx)
{
	cl->gate = gate;
	cl->gate_ctx = ctx;
}

const char *kube_client_server(const struct kube_client *cl)
{
	return cl->cfg.server;
}

/* Re-read the token file when it changed (or when force). Keeps the old token on failure. */
static void refresh_token(struct kube_client *cl, int force)
{
	struct strbuf sb = STRBUF_INIT(TOKEN_MAX);
	struct stat st;

	if (!cl->cfg.token_file)
		return;
	if (stat(cl->cfg.token_file, &st) < 0) {
		log_warn("token file %s: %s", cl->cfg.token_file, strerror(errno));
		return;
	}
	if (!force && cl->token && st.st_ino == cl->token_st.st_ino &&
	    st.st_size == cl->token_st.st_size &&
	    st.st_mtim.tv_sec == cl->token_st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == cl->token_st.st_mtim.tv_nsec)
		return;
	if (sb_read_file(&sb, cl->cfg.token_file) < 0) {
		log_warn("token file %s: cannot read", cl->cfg.token_file);
		sb_free(&sb);
		return;
	}
	sb_rtrim(&sb);
	if (cl->token && strcmp(cl->token, sb.buf) != 0)
		log_info("token file %s changed, using the new token", cl->cfg.token_file);
	free(cl->token);
	cl->token = sb_take(&sb);
	cl->token_st = st;
	sb_free(&sb);
}

int kube_client_new(struct kube_client **out, struct kube_config *cfg, struct log_err *err)
{
	struct kube_client *cl = calloc(1, sizeof(*cl));
	int r;

	*out = NULL;
	if (!cl)
		return log_err_set(err, -ENOMEM, "out of memory");
	if (!cfg->server) {
		free(cl);
		return log_err_set(err, KUBE_ECONFIG, "no API server configured");
	}
	r = kube_curl_load(err);
	if (r < 0) {
		free(cl);
		return r;
	}
	cl->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	cl->retries = 5;
	cl->base_ms = 100;
	cl->timeout_ms = 120000;
	cl->easy = kube_curl.easy_init();
	cl->multi = kube_curl.multi_init();
	if (!cl->easy || !cl->multi) {
		kube_client_free(cl);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	if (cl->cfg.token)
		cl->token = strdup(cl->cfg.token);
	if (cl->cfg.token && !cl->token) {
		kube_client_free(cl);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	refresh_token(cl, 1);
	if (cl->cfg.insecure)
		log_warn(
		    "TLS verification of %s is OFF (insecure-skip-tls-verify in the kubeconfig)",
		    cl->cfg.server);
	*out = cl;
	return 0;
}

void kube_client_free(struct kube_client *cl)
{
	if (!cl)
		return;
	while (cl->watches)
		kube_watch_cancel(cl, cl->watches);
	if (cl->multi)
		kube_curl.multi_cleanup(cl->multi);
	if (cl->easy)
		kube_curl.easy_cleanup(cl->easy);
	free(cl->token);
	kube_config_free(&cl->cfg);
	free(cl);
}

/* Hand PEM bytes (copied by curl) or a file name to curl; type_opt 0: none to set. */
static void set_pem(CURL *e, CURLoption blob_opt, CURLoption file_opt, CURLoption type_opt,
		    char *pem, size_t len, const char *file)
{
	if (pem) {
		struct curl_blob b = {pem, len, CURL_BLOB_COPY};

		kube_curl.easy_setopt(e, blob_opt, &b);
		if (type_opt)
			kube_curl.easy_setopt(e, type_opt, "PEM");
	} else if (file) {
		kube_curl.easy_setopt(e, file_opt, file);
	}
}

/* Options every handle gets: TLS trust, client certificate, timeouts. */
static void setup_handle(struct kube_client *cl, CURL *e, char *errbuf)
{
	const struct kube_config *c = &cl->cfg;

	kube_curl.easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
	errbuf[0] = '\0';
	kube_curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	kube_curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	kube_curl.easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	kube_curl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https,http");
	if (c->insecure) {
		kube_curl.easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		kube_curl.easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	} else {
		kube_curl.easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
		kube_curl.easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	}
	/*
	 * A CA the config names is the only trust, as in client-go (transport/transport.go
	 * rootCertPool: that CA alone; the system's only without one). libcurl would also consult
	 * its built-in CA bundle and directory (Debian's: /etc/ssl/certs) next to a CA blob, and
	 * the directory next to a CA file, so a host CA store would vouch for any server: both off.
	 */
	if (c->ca_pem || c->ca_file) {
		kube_curl.easy_setopt(e, CURLOPT_CAPATH, NULL);
		kube_curl.easy_setopt(e, CURLOPT_CAINFO, NULL);
	}
	set_pem(e, CURLOPT_CAINFO_BLOB, CURLOPT_CAINFO, 0, c->ca_pem, c->ca_pem_len, c->ca_file);
	set_pem(e, CURLOPT_SSLCERT_BLOB, CURLOPT_SSLCERT, CURLOPT_SSLCERTTYPE, c->cert_pem,
		c->cert_pem_len, c->cert_file);
	set_pem(e, CURLOPT_SSLKEY_BLOB, CURLOPT_SSLKEY, CURLOPT_SSLKEYTYPE, c->key_pem,
		c->key_pem_len, c->key_file);
}

static struct curl_slist *make_headers(struct kube_client *cl, const char *content_type)
{
	struct curl_slist *h = NULL, *t;
	struct strbuf sb = STRBUF_INIT(TOKEN_MAX + 64);

	h = kube_curl.slist_append(h, "Accept: application/json");
	if (h && content_type) {
		sb_addf(&sb, "Content-Type: %s", content_type);
		t = kube_curl.slist_append(h, sb.buf);
		h = t ? t : h;
		sb_reset(&sb);
	}
	if (h && cl->token && *cl->token) {
		if (sb_addf(&sb, "Authorization: Bearer %s", cl->token) == 0) {
			t = kube_curl.slist_append(h, sb.buf);
			h = t ? t : h;
		}
	}
	sb_free(&sb);
	return h;
}

/* Map a curl failure to a module code and a clear message. */
static int curl_fail(struct kube_client *cl, CURLcode rc, const char *errbuf, const char *url,
		     struct log_err *err)
{
	const char *detail = errbuf && *errbuf ? errbuf : kube_curl.easy_strerror(rc);

	switch (rc) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_ISSUER_ERROR:
		return log_err_set(
		    err, KUBE_ETLS,
		    "TLS with %s failed (server certificate not trusted by %s%s?): %s",
		    cl->cfg.server,
		    cl->cfg.ca_file  ? "CA file "
		    : cl->cfg.ca_pem ? "the kubeconfig's CA data"
				     : "the system CAs",
		    cl->cfg.ca_file ? cl->cfg.ca_file : "", detail);
	default:
		return log_err_set(err, KUBE_ECONN, "%s: %s", url, detail);
	}
}

struct req_ctx {
	struct kube_client *cl;
	CURL *easy;
	struct strbuf *resp;
	struct kube_stream *st;
	struct strbuf *errbody;
	long status;
	int fed;  /* bytes went into st */
	int fail; /* negative code from the sink */
	struct log_err *err;
	long retry_after; /* seconds, -1 if none */
	CURLcode curl_rc; /* of the last attempt */
};

static size_t req_write(char *ptr, size_t size, size_t n, void *p)
{
	struct req_ctx *rc = p;
	size_t len = size * n;
	int r;

	if (!rc->status)
		kube_curl.easy_getinfo(rc->easy, CURLINFO_RESPONSE_CODE, &rc->status);
	if (rc->st && rc->status == 200) {
		rc->fed = 1;
		r = kube_stream_feed(rc->st, ptr, len, rc->err);
		if (r < 0) {
			rc->fail = r;
			return 0;
		}
		return len;
	}
	if (rc->st) {
		if (rc->errbody)
			sb_addn(rc->errbody, ptr, len);
		return len;
	}
	r = sb_addn(rc->resp, ptr, len);
	if (r < 0) {
		rc->fail = r;
		log_err_set(rc->err, r, "response body larger than %zu bytes", rc->resp->max);
		return 0;
	}
	return len;
}

/* A header line: note Retry-After (seconds) in *retry_after. Returns len for curl. */
static size_t note_retry_after(const char *buf, size_t len, long *retry_after)
{
	if (len > 12 && strncasecmp(buf, "Retry-After:", 12) == 0)
		*retry_after = strtol(buf + 12, NULL, 10);
	return len;
}

static size_t req_header(char *buf, size_t size, size_t n, void *p)
{
	return note_retry_after(buf, size * n, &((struct req_ctx *)p)->retry_after);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static long backoff_ms(const struct kube_client *cl, int attempt)
{
	long ms = (long)cl->base_ms << (attempt < 10 ? attempt : 10);

	if (ms > 5000)
		ms = 5000;
	return ms / 2 + (ms ? random() % (ms / 2 + 1) : 0);
}

static int perform(struct kube_client *cl, const char *method, const char *url,
		   const char *content_type, const char *body, struct req_ctx *rc)
{
	char errbuf[CURL_ERROR_SIZE];
	struct curl_slist *hdrs;
	CURLcode res;
	long tmo = cl->timeout_ms, left = 0;

	/*
	 * The gate is asked right before sending, and bounds the attempt too: a write sent in
	 * time must not land after the gate's deadline (an API server drops a request still
	 * queued when its client disconnects).
	 */
	if (cl->gate && strcmp(method, "GET") != 0 &&
	    (left = cl->gate(cl->gate_ctx, method, url, 0)) < 0)
		return log_err_set(rc->err, KUBE_EFENCED, "%s %s: not sent (not leading)", method,
				   url);
	if (left > 0 && left < tmo)
		tmo = left;
	refresh_token(cl, 0);
	kube_curl.easy_reset(cl->easy);
	setup_handle(cl, cl->easy, errbuf);
	hdrs = make_headers(cl, body ? content_type : NULL);
	kube_curl.easy_setopt(cl->easy, CURLOPT_URL, url);
	kube_curl.easy_setopt(cl->easy, CURLOPT_HTTPHEADER, hdrs);
	kube_curl.easy_setopt(cl->easy, CURLOPT_TIMEOUT_MS, tmo);
	kube_curl.easy_setopt(cl->easy, CURLOPT_WRITEFUNCTION, req_write);
	kube_curl.easy_setopt(cl->easy, CURLOPT_WRITEDATA, rc);
	kube_curl.easy_setopt(cl->easy, CURLOPT_HEADERFUNCTION, req_header);
	kube_curl.easy_setopt(cl->easy, CURLOPT_HEADERDATA, rc);
	kube_curl.easy_setopt(cl->easy, CURLOPT_ACCEPT_ENCODING, NULL);
	if (body) {
		kube_curl.easy_setopt(cl->easy, CURLOPT_POSTFIELDS, body);
		kube_curl.easy_setopt(cl->easy, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	if (strcmp(method, "GET") != 0)
		kube_curl.easy_setopt(cl->easy, CURLOPT_CUSTOMREQUEST, method);
	/*
	 * libcurl sends a request again by itself when a reused connection dies before an answer;
	 * a create (POST) or a DELETE goes on a new connection so it is never sent twice
	 * (may_resend).
	 */
	if (strcmp(method, "POST") == 0 || strcmp(method, "DELETE") == 0)
		kube_curl.easy_setopt(cl->easy, CURLOPT_FRESH_CONNECT, 1L);
	rc->easy = cl->easy;
	rc->status = 0;
	rc->retry_after = -1;
	res = kube_curl.easy_perform(cl->easy);
	rc->curl_rc = res;
	kube_curl.slist_free_all(hdrs);
	kube_curl.easy_getinfo(cl->easy, CURLINFO_RESPONSE_CODE, &rc->status);
	if (rc->fail)
		return rc->fail;
	if (res != CURLE_OK) {
		count(cl, 0);
		return curl_fail(cl, res, errbuf, url, rc->err);
	}
	count(cl, rc->status);
	return (int)rc->status;
}

/*
 * May a failed attempt of method be sent again? A POST creates (a generateName'd Job twice), a
 * DELETE sent again answers 404 for what it deleted: like client-go (rest/request.go), they are
 * sent again only when they cannot have reached the server (no connection) or the server asked
 * for it (429, or a 5xx with Retry-After).
 */
static int may_resend(const char *method, int r, const struct req_ctx *rc)
{
	if (strcmp(method, "POST") != 0 && strcmp(method, "DELETE") != 0)
		return 1;
	if (r == KUBE_ECONN)
		return rc->curl_rc == CURLE_COULDNT_CONNECT ||
		       rc->curl_rc == CURLE_COULDNT_RESOLVE_HOST ||
		       rc->curl_rc == CURLE_COULDNT_RESOLVE_PROXY;
	return r == 429 || rc->retry_after >= 0;
}

/*
 * Sleep ms before the next attempt of a write, unless the gate would refuse that attempt then:
 * the write gives up at once (KUBE_EFENCED, unsent), not holding its caller (the loop that renews
 * a Lease) past the gate's deadline.
 */
static int retry_sleep(struct kube_client *cl, const char *method, const char *url, long ms,
		       struct log_err *err)
{
	if (cl->gate && strcmp(method, "GET") != 0 && cl->gate(cl->gate_ctx, method, url, ms) < 0)
		return log_err_set(err, KUBE_EFENCED,
				   "%s %s: not sent again (a %ld ms wait would pass the fence)",
				   method, url, ms);
	sleep_ms(ms);
	return 0;
}

/* The retry loop shared by kube_request and kube_get_stream. */
static int request_loop(struct kube_client *cl, const char *method, const char *url,
			const char *content_type, const char *body, struct req_ctx *rc)
{
	int attempt, r = 0, reauth = 0;

	for (attempt = 0; attempt < cl->retries; attempt++) {
		if (rc->resp)
			sb_reset(rc->resp);
		if (rc->errbody)
			sb_reset(rc->errbody);
		log_err_clear(rc->err);
		r = perform(cl, method, url, content_type, body, rc);
		if (rc->fed)
			return r; /* a stream was fed: never replay it */
		if ((r == KUBE_ECONN || r >= 500) && !may_resend(method, r, rc))
			return r;
		if (r == KUBE_ECONN) {
			log_debug("%s %s: %s; retrying", method, url, rc->err ? rc->err->msg : "");
			if (retry_sleep(cl, method, url, backoff_ms(cl, attempt), rc->err) < 0)
				return KUBE_EFENCED;
			continue;
		}
		if (r < 0)
			return r;
		if (r == 401 && !reauth && cl->cfg.token_file) {
			reauth = 1;
			refresh_token(cl, 1);
			attempt--;
			continue;
		}
		if (r == 429) {
			long s = rc->retry_after >= 0 ? rc->retry_after : 1;

			if (s > 30)
				s = 30;
			log_info("%s %s: 429 Too Many Requests, Retry-After %lds", method, url, s);
			if (retry_sleep(cl, method, url, s * 1000, rc->err) < 0)
				return KUBE_EFENCED;
			continue;
		}
		if (r >= 500) {
			log_debug("%s %s: HTTP %d; retrying", method, url, r);
			if (retry_sleep(cl, method, url, backoff_ms(cl, attempt), rc->err) < 0)
				return KUBE_EFENCED;
			continue;
		}
		return r;
	}
	return r;
}

int kube_request(struct kube_client *cl, const char *method, const char *url,
		 const char *content_type, const char *body, struct strbuf *resp,
		 struct log_err *err)
{
	struct req_ctx rc = {.cl = cl, .resp = resp, .err = err};

	return request_loop(cl, method, url, content_type, body, &rc);
}

int kube_get_stream(struct kube_client *cl, const char *url, struct kube_stream *st,
		    struct strbuf *errbody, struct log_err *err)
{
	struct req_ctx rc = {.cl = cl, .st = st, .errbody = errbody, .err = err};
	int r = request_loop(cl, "GET", url, NULL, NULL, &rc);

	if (r == 200) {
		int f = kube_stream_finish(st, err);

		if (f < 0)
			return f;
	}
	return r;
}

/* ---- watches ---- */

static size_t watch_write(char *ptr, size_t size, size_t n, void *p)
{
	struct kube_watch *w = p;
	size_t len = size * n;
	long status = 0;
	int r;

	kube_curl.easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		sb_addn(&w->errbody, ptr, len);
		return len;
	}
	r = kube_stream_feed(w->st, ptr, len, &w->err);
	if (r < 0) {
		w->res = r;
		return 0;
	}
	return len;
}

static size_t watch_header(char *buf, size_t size, size_t n, void *p)
{
	struct kube_watch *w = p;
	size_t len = size * n;

	/* the blank line ending the answer's headers: a 200 means the server watches for us */
	if (len <= 2 && (len == 0 || buf[0] == '\r' || buf[0] == '\n')) {
		long status = 0;

		kube_curl.easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &status);
		if (status == 200)
			w->open = 1;
	}
	return note_retry_after(buf, len, &w->retry_after);
}

int kube_watch_open(const struct kube_watch *w)
{
	return w->open;
}

long kube_watch_retry_after(const struct kube_watch *w)
{
	return w->retry_after;
}

struct kube_watch *kube_watch_start(struct kube_client *cl, const char *url, struct kube_stream *st,
				    kube_watch_done_fn done, void *ctx, struct log_err *err)
{
	struct kube_watch *w = calloc(1, sizeof(*w));

	if (!w) {
		log_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	refresh_token(cl, 0);
	w->cl = cl;
	w->st = st;
	w->done = done;
	w->ctx = ctx;
	w->retry_after = -1;
	sb_init(&w->errbody, ERRBODY_MAX);
	w->easy = kube_curl.easy_init();
	w->hdrs = make_headers(cl, NULL);
	if (!w->easy || !w->hdrs) {
		kube_curl.easy_cleanup(w->easy);
		kube_curl.slist_free_all(w->hdrs);
		free(w);
		log_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	setup_handle(cl, w->easy, w->errbuf);
	kube_curl.easy_setopt(w->easy, CURLOPT_URL, url);
	kube_curl.easy_setopt(w->easy, CURLOPT_HTTPHEADER, w->hdrs);
	kube_curl.easy_setopt(w->easy, CURLOPT_WRITEFUNCTION, watch_write);
	kube_curl.easy_setopt(w->easy, CURLOPT_WRITEDATA, w);
	kube_curl.easy_setopt(w->easy, CURLOPT_HEADERFUNCTION, watch_header);
	kube_curl.easy_setopt(w->easy, CURLOPT_HEADERDATA, w);
	kube_curl.easy_setopt(w->easy, CURLOPT_PRIVATE, w);
	if (kube_curl.multi_add_handle(cl->multi, w->easy) != CURLM_OK) {
		kube_curl.easy_cleanup(w->easy);
		kube_curl.slist_free_all(w->hdrs);
		free(w);
		log_err_set(err, -ENOMEM, "cannot start the watch");
		return NULL;
	}
	w->next = cl->watches;
	cl->watches = w;
	return w;
}

static void watch_unlink(struct kube_client *cl, struct kube_watch *w)
{
	struct kube_watch **pp;

	for (pp = &cl->watches; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	}
	kube_curl.multi_remove_handle(cl->multi, w->easy);
}

static void watch_free(struct kube_watch *w)
{
	kube_curl.easy_cleanup(w->easy);
	kube_curl.slist_free_all(w->hdrs);
	sb_free(&w->errbody);
	free(w);
}

void kube_watch_cancel(struct kube_client *cl, struct kube_watch *w)
{
	watch_unlink(cl, w);
	watch_free(w);
}

int kube_poll(struct kube_client *cl, int timeout_ms)
{
	int running = 0, left;
	CURLMsg *m;

	/*
	 * Wait first, then read: data read here must reach the caller before it
	 * waits again (curl_multi_poll also wakes for curl's own timers, such as a
	 * newly added handle's start).
	 */
	if (kube_curl.multi_poll(cl->multi, NULL, 0, timeout_ms, NULL) != CURLM_OK)
		return -EIO;
	kube_curl.multi_perform(cl->multi, &running);
	for (;;) {
		struct kube_watch *w = NULL;
		long status = 0;
		int res;
		struct log_err err = {0};

		m = kube_curl.multi_info_read(cl->multi, &left);
		if (!m)
			break;
		if (m->msg != CURLMSG_DONE)
			continue;
		kube_curl.easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&w);
		kube_curl.easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &status);
		if (w->res < 0) {
			res = w->res;
			err = w->err;
		} else if (m->data.result != CURLE_OK) {
			res = curl_fail(cl, m->data.result, w->errbuf, "watch", &err);
		} else {
			res = 0;
		}
		count(cl, res == KUBE_ECONN || res == KUBE_ETLS ? 0 : status);
		if (status != 200 && w->errbody.len && !err.msg[0])
			snprintf(err.msg, sizeof(err.msg), "HTTP %ld: %.400s", status,
				 w->errbody.buf);
		watch_unlink(cl, w);
		w->done(w->ctx, w, (int)status, res, err.msg);
		watch_free(w);
	}
	return running;
}
