/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kube: a small Kubernetes API client on libcurl: config, requests, paged LIST and WATCH streams.
 */
#ifndef NP_KUBE_H
#define NP_KUBE_H

#include <jansson.h>
#include <stddef.h>

#include "log/log.h"
#include "strbuf/strbuf.h"

/* Module error codes (negative, outside the errno range). */
enum {
	KUBE_ETLS = -4001,    /* TLS handshake or verification failed */
	KUBE_ECONN = -4002,   /* could not connect, or the connection broke */
	KUBE_EAUTH = -4003,   /* the server rejected our credentials (401/403) */
	KUBE_EHTTP = -4004,   /* an unexpected HTTP status (the message says which) */
	KUBE_EJSON = -4005,   /* a response that is not the JSON we expected */
	KUBE_ECONFIG = -4006, /* the kubeconfig or in-cluster files are unusable */
	KUBE_EFENCED = -4007, /* a write the client's gate refused (not sent) */
};

/* A static description of code: a KUBE_E* code, or -errno (strerror's words). */
const char *kube_strerror(int code);

/* Where and how to reach the API server. All strings are owned (free with kube_config_free). */
struct kube_config {
	char *server;  /* "https://host:port" without a trailing slash */
	char *ca_file; /* CA bundle path, or NULL */
	char *ca_pem;  /* CA bundle bytes (certificate-authority-data), or NULL */
	size_t ca_pem_len;
	char *token;	  /* a fixed bearer token, or NULL */
	char *token_file; /* bearer token file, re-read whenever it changes, or NULL */
	char *cert_file;  /* client certificate path, or NULL */
	char *key_file;	  /* client key path, or NULL */
	char *cert_pem;	  /* client certificate bytes, or NULL */
	size_t cert_pem_len;
	char *key_pem; /* client key bytes, or NULL */
	size_t key_pem_len;
	char *namespace; /* the context's (or service account's) namespace, or NULL */
	int insecure;	 /* insecure-skip-tls-verify: true in the kubeconfig */
};

/*
 * Fill cfg from the kubeconfig at path (libyaml), using context (NULL: the
 * current-context). Relative file names are taken relative to the kubeconfig's
 * directory. Returns 0, or KUBE_ECONFIG / -errno with err naming the file and
 * the field. cfg is zeroed first; free it with kube_config_free either way.
 */
int kube_config_load(struct kube_config *cfg, const char *path, const char *context,
		     struct log_err *err);

#define KUBE_CONFIG_FILES_MAX 32

/*
 * Fill cfg from several kubeconfig files merged as client-go merges $KUBECONFIG
 * (clientcmd's loading rules): current-context from the first file that sets
 * one; each context, cluster and user from the first file that defines that
 * name; relative paths relative to the file that defined the entry. n is at
 * most KUBE_CONFIG_FILES_MAX. Returns as kube_config_load.
 */
int kube_config_load_list(struct kube_config *cfg, const char *const *paths, size_t n,
			  const char *context, struct log_err *err);

/*
 * Fill cfg for in-cluster use: server from KUBERNETES_SERVICE_HOST and
 * KUBERNETES_SERVICE_PORT, token file, ca.crt and namespace under sa_dir
 * (normally /var/run/secrets/kubernetes.io/serviceaccount). Returns 0 or
 * KUBE_ECONFIG with err set.
 */
int kube_config_in_cluster(struct kube_config *cfg, const char *sa_dir, struct log_err *err);

/* Free every string in cfg and zero it. */
void kube_config_free(struct kube_config *cfg);

/* A resource kind the client knows how to address. */
struct kube_resource {
	const char *prefix; /* "/api/v1" or "/apis/apps/v1" */
	const char *plural; /* "configmaps" */
	const char *kind;   /* "ConfigMap" */
};

extern const struct kube_resource kube_configmaps, kube_secrets, kube_deployments,
    kube_statefulsets, kube_daemonsets, kube_events;

/* Query parameters; NULL / 0 fields are left out. */
struct kube_query {
	const char *label_selector;
	const char *field_selector;
	const char *resource_version;
	const char *cont;	   /* LIST continue token */
	const char *field_manager; /* PATCH/POST fieldManager */
	long limit;		   /* LIST page size */
	long timeout_seconds;	   /* WATCH server-side timeout */
	int watch;		   /* 1: watch=1 */
	int bookmarks;		   /* 1: allowWatchBookmarks=true */
};

/*
 * Append "<server><prefix>[/namespaces/<ns>]/<plural>[/<name>][?query]" to sb,
 * with every value percent-encoded. server may be "" (path only). ns NULL or ""
 * means all namespaces. Returns 0 or the sb error.
 */
int kube_url(struct strbuf *sb, const char *server, const struct kube_resource *res, const char *ns,
	     const char *name, const struct kube_query *q);

struct kube_client;

/* Request counters by HTTP status, for /metrics. Index 0 counts transport errors. */
#define KUBE_CODES 600

/*
 * Make a client for cfg; takes ownership of cfg's strings (cfg is zeroed).
 * Warns (log_warn) when cfg->insecure. Returns 0 or -ENOMEM / KUBE_ECONFIG.
 */
int kube_client_new(struct kube_client **out, struct kube_config *cfg, struct log_err *err);
/* Free the client, stopping every watch it still runs. NULL is allowed. */
void kube_client_free(struct kube_client *cl);
/* The server URL (borrowed, valid while cl lives). */
const char *kube_client_server(const struct kube_client *cl);
/* How many requests ended with HTTP status code (0: transport error); code < KUBE_CODES. */
unsigned long kube_client_count(const struct kube_client *cl, int code);
/* Set the retry budget for 429, 5xx and connection errors (default 5) and the base backoff in ms.
 */
void kube_client_set_retries(struct kube_client *cl, int attempts, int base_ms);
/*
 * Set the whole-request timeout of kube_request and kube_get_stream in ms (default 120000;
 * <= 0 restores it; watches are not affected). Returns the previous value.
 */
long kube_client_set_timeout(struct kube_client *cl, long ms);
/*
 * A write gate: gate(ctx, method, url, after_ms) decides, for every request whose method is not
 * GET, whether an attempt sent after_ms from now may go: < 0 refuses it, 0 lets it go unbounded,
 * > 0 lets it go and bounds the attempt to that many ms (with the client's own timeout, the
 * smaller). It is asked right before each attempt is sent (after_ms 0), and before each retry
 * sleep with after_ms the sleep: a write whose sleep would end past the gate's deadline gives up
 * at once, unsent. Refused: kube_request returns KUBE_EFENCED with err set. NULL gate: none
 * (default). Leader election fences the controller's writes with it (reload_ha.c).
 */
typedef long (*kube_gate_fn)(void *ctx, const char *method, const char *url, long after_ms);
void kube_client_set_gate(struct kube_client *cl, kube_gate_fn gate, void *ctx);

/*
 * One request. url is a full URL from kube_url. body may be NULL (no body).
 * The response body goes to resp (reset first; its cap bounds what is kept, a
 * longer body fails with -E2BIG). 429 is retried after Retry-After (bounded),
 * 5xx and broken connections with jittered backoff, 401 once after re-reading
 * the token file; a POST or DELETE only when it cannot have been processed (no
 * connection, 429, a 5xx with Retry-After), as client-go. Returns the final HTTP status (also
 * 4xx/5xx; the caller decides), or a negative code with err set (KUBE_ETLS, KUBE_ECONN, -E2BIG...).
 */
int kube_request(struct kube_client *cl, const char *method, const char *url,
		 const char *content_type, const char *body, struct strbuf *resp,
		 struct log_err *err);

/* The stream parser: LIST responses and WATCH event streams, parsed as they arrive. */
enum kube_stream_kind {
	KUBE_STREAM_LIST = 0,  /* {"metadata":{...},"items":[...]} */
	KUBE_STREAM_WATCH = 1, /* {"type":"ADDED","object":{...}} values, one after another */
};

enum kube_item_mode {
	KUBE_ITEM_FLAT = 0, /* scalars up to depth KUBE_FLAT_DEPTH reported one by one */
	KUBE_ITEM_JSON = 1, /* each item built as a jansson object */
};

#define KUBE_FLAT_DEPTH 3
/* The longest single JSON value (a Secret value) the parser holds: 3 x the 1.5 MiB etcd limit. */
#define KUBE_VALUE_MAX (4608 * 1024)
/* The largest object built whole in KUBE_ITEM_JSON mode (workloads, Status). */
#define KUBE_ITEM_MAX (8 * 1024 * 1024)

/* Callbacks; a negative return aborts the parse with that code. */
struct kube_stream_ops {
	/*
	 * FLAT mode: a string or number inside an item. keys[0..depth-1] are the
	 * map keys from the item root (arrays are not descended into); val is
	 * not NUL-terminated and valid only during the call.
	 */
	int (*scalar)(void *ctx, int depth, const char *const *keys, const char *val, size_t len);
	/* FLAT mode: the item started (the previous one, if any, has ended). */
	int (*begin)(void *ctx);
	/*
	 * An item ended. type is the watch event type ("ADDED", "MODIFIED",
	 * "DELETED", "BOOKMARK", "ERROR") or "LIST" for a list item. obj is the
	 * item in JSON mode (borrowed: valid during the call; json_incref to keep)
	 * and NULL in FLAT mode.
	 */
	int (*item)(void *ctx, const char *type, json_t *obj);
	/*
	 * Optional: an item over a limit (one string longer than KUBE_VALUE_MAX, a key longer
	 * than 1 KiB, a JSON-mode item larger than KUBE_ITEM_MAX) is skipped, not built: this is
	 * called once at its end instead of item, with its event type, metadata.namespace and
	 * metadata.name ("" when absent; borrowed, valid during the call) and what was over the
	 * limit. No scalar of the item is reported after that point. NULL: such an item fails
	 * the parse with KUBE_EJSON.
	 */
	int (*oversize)(void *ctx, const char *type, const char *ns, const char *name,
			const char *what);
};

struct kube_stream;

/* Make a parser. ops and ctx are borrowed for its lifetime. Returns NULL on -ENOMEM. */
struct kube_stream *kube_stream_new(enum kube_stream_kind kind, enum kube_item_mode mode,
				    const struct kube_stream_ops *ops, void *ctx);
/*
 * Feed bytes. Returns 0, the callback's negative code, or KUBE_EJSON with err
 * set (bad JSON, one value longer than KUBE_VALUE_MAX, or a JSON-mode item
 * larger than KUBE_ITEM_MAX, each unless inside an item and ops->oversize is set).
 * yajl buffers an unfinished string whole: a string inside an item is cut at
 * KUBE_VALUE_MAX and the rest of it dropped, so no more than that is held.
 * A string, number or literal still open at the end of buf is copied and held
 * until it ends (or the cut), then parsed once: the work is linear in its size
 * however the bytes are split (yajl alone lexes it again on every feed).
 */
int kube_stream_feed(struct kube_stream *st, const void *buf, size_t len, struct log_err *err);
/* Finish (end of body). Returns 0 or KUBE_EJSON (truncated document). */
int kube_stream_finish(struct kube_stream *st, struct log_err *err);
/* The list's metadata.continue ("" if none); borrowed until the next feed or free. */
const char *kube_stream_continue(const struct kube_stream *st);
/* The newest resourceVersion seen: list metadata or the last event's object. Borrowed. */
const char *kube_stream_rv(const struct kube_stream *st);
/* Free; NULL allowed. */
void kube_stream_free(struct kube_stream *st);

/*
 * GET url and stream the body into st (any status other than 200 is returned
 * without feeding st; its body, up to 64 KiB, lands in errbody if not NULL).
 * Retries like kube_request but only before the first body byte. Returns the
 * HTTP status or a negative code with err set.
 */
int kube_get_stream(struct kube_client *cl, const char *url, struct kube_stream *st,
		    struct strbuf *errbody, struct log_err *err);

/* A long-running WATCH, driven by kube_poll. */
struct kube_watch;

/*
 * Called once when the watch stream ends. status is the HTTP status (0 if
 * none), res 0 for a clean end or a negative code (with msg) for a broken one.
 */
typedef void (*kube_watch_done_fn)(void *ctx, struct kube_watch *w, int status, int res,
				   const char *msg);

/*
 * Start GET url as a streaming watch feeding st (borrowed until done is called).
 * Returns the watch (owned by the client until done is called, then freed by
 * it) or NULL with err set.
 */
struct kube_watch *kube_watch_start(struct kube_client *cl, const char *url, struct kube_stream *st,
				    kube_watch_done_fn done, void *ctx, struct log_err *err);
/* The Retry-After seconds of the watch's answer (-1 if none); for use in its done callback. */
long kube_watch_retry_after(const struct kube_watch *w);
/*
 * 1 once the watch's answer arrived with status 200 (its headers: the server has registered the
 * watch and events flow from now), 0 while the request is still being connected, sent or held.
 */
int kube_watch_open(const struct kube_watch *w);
/* Abort a running watch without calling done. Not from inside its own done callback. */
void kube_watch_cancel(struct kube_client *cl, struct kube_watch *w);

/*
 * Move every running watch forward, waiting at most timeout_ms for data.
 * Returns the number of watches still running, or a negative code.
 */
int kube_poll(struct kube_client *cl, int timeout_ms);

#endif
