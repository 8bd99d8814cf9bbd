/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_notify: Reloader's --webhook-url and its ALERT_* alerts (Slack, Teams, Google Chat, raw).
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reload/reload_act.h"
#include "reload/reload_gate.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

#define NOTIFY_TIMEOUT_MS 10000L /* Reloader sets none: a hanging endpoint stalled its queue */

/* The answer being read: its first 256 bytes kept for the log, RELOAD_NOTIFY_BODY_MAX read. */
struct answer {
	struct strbuf *sb;
	size_t seen;
	int capped; /* the body went past the cap: the transfer was cut there */
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct answer *a = ud;
	size_t len = size * n, room = a->sb->len < 256 ? 256 - a->sb->len : 0;

	sb_addn(a->sb, p, len < room ? len : room);
	a->seen += len;
	if (a->seen > RELOAD_NOTIFY_BODY_MAX) {
		a->capped = 1;
		return 0; /* CURLE_WRITE_ERROR: nothing more is read */
	}
	return len;
}

/*
 * url without what may be a credential, for messages: "scheme://host[:port]/..." (no user
 * info, path or query). A Slack or Teams webhook's path is its token, and Reloader's chart
 * keeps ALERT_WEBHOOK_URL in a Secret.
 */
static const char *url_for_log(const char *url, char *buf, size_t len)
{
	const char *host = strstr(url, "://"), *end, *at;
	size_t n;

	if (!host) {
		snprintf(buf, len, "(webhook URL)");
		return buf;
	}
	host += 3;
	end = host + strcspn(host, "/?#");
	for (at = host; at < end && memchr(at, '@', (size_t)(end - at));)
		at = (const char *)memchr(at, '@', (size_t)(end - at)) + 1;
	n = (size_t)(host - url);
	snprintf(buf, len, "%.*s%.*s%s", (int)n, url, (int)(end - at), at, *end ? "/..." : "");
	return buf;
}

/* A SIGTERM abandons a POST in flight: shutdown must not wait out a hanging endpoint. */
static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	(void)ud;
	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return atomic_load(&reload_stop_flag) ||
		       (ud && __atomic_load_n((int *)ud, __ATOMIC_RELAXED))
		   ? 1
		   : 0;
}

static int post(const char *url, const char *proxy, const char *ctype, const char *body,
		struct strbuf *resp, int *abort_flag, struct log_err *err);

int reload_notify_post(const char *url, const char *proxy, const char *ctype, const char *body,
		       struct strbuf *resp, struct log_err *err)
{
	return post(url, proxy, ctype, body, resp, NULL, err);
}

static int post(const char *url, const char *proxy, const char *ctype, const char *body,
		struct strbuf *resp, int *abort_flag, struct log_err *err)
{
	struct answer ans = {.sb = resp};
	CURL *e = curl_easy_init();
	struct curl_slist *h = NULL;
	char hdr[128], ebuf[CURL_ERROR_SIZE] = "", shown[256];
	long code = 0;
	CURLcode cr;

	if (!e)
		return log_err_set(err, -ENOMEM, "out of memory");
	if (atomic_load(&reload_stop_flag)) {
		curl_easy_cleanup(e);
		return log_err_set(err, -EIO, "POST %s: stopping",
				   url_for_log(url, shown, sizeof(shown)));
	}
	snprintf(hdr, sizeof(hdr), "Content-Type: %s", ctype);
	h = curl_slist_append(h, hdr);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https,http");
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "nodeprobe-reload/" NP_VERSION);
	/* "" : no proxy, also none from the environment (Reloader ignores http_proxy here) */
	curl_easy_setopt(e, CURLOPT_PROXY, proxy ? proxy : "");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, NOTIFY_TIMEOUT_MS);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(e, CURLOPT_XFERINFODATA, abort_flag);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &ans);
	sb_reset(resp);
	cr = curl_easy_perform(e);
	if (cr == CURLE_WRITE_ERROR && ans.capped) {
		log_debug("POST %s: answer longer than %d bytes, not read further",
			  url_for_log(url, shown, sizeof(shown)), RELOAD_NOTIFY_BODY_MAX);
		cr = CURLE_OK; /* the status line came: it decides */
	}
	if (cr == CURLE_OK)
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(h);
	curl_easy_cleanup(e);
	if (cr == CURLE_ABORTED_BY_CALLBACK)
		return log_err_set(err, -EIO, "POST %s: stopping",
				   url_for_log(url, shown, sizeof(shown)));
	if (cr != CURLE_OK)
		return log_err_set(err, -EIO, "POST %s: %s", url_for_log(url, shown, sizeof(shown)),
				   ebuf[0] ? ebuf : curl_easy_strerror(cr));
	if (code >= 300 && code < 400) /* Reloader's redirect policy refuses any redirect */
		return log_err_set(err, -EIO, "POST %s: incorrect token (redirection)",
				   url_for_log(url, shown, sizeof(shown)));
	return (int)code;
}

/* A JSON string as Go's encoding/json writes it (<, >, & and U+2028/9 escaped too). */
static int go_json_str(struct strbuf *sb, const char *s)
{
	const unsigned char *p;
	int r = sb_add(sb, "\"");

	for (p = (const unsigned char *)s; *p && !r; p++) {
		if (*p == '"' || *p == '\\')
			r = sb_addf(sb, "\\%c", *p);
		else if (*p == '\n')
			r = sb_add(sb, "\\n");
		else if (*p == '\r')
			r = sb_add(sb, "\\r");
		else if (*p == '\t')
			r = sb_add(sb, "\\t");
		else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
			r = sb_addf(sb, "\\u%04x", *p);
		else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
			r = sb_addf(sb, "\\u202%c", p[2] == 0xa8 ? '8' : '9');
			p += 2;
		} else
			r = sb_addn(sb, (const char *)p, 1);
	}
	return r ? r : sb_add(sb, "\"");
}

int reload_alert_body(struct strbuf *sb, const struct reload_alert *a, const char *obj,
		      const char *type, const char *ns, const char *workload, const char *kind,
		      const char **ctype)
{
	struct strbuf msg = STRBUF_INIT(RELOAD_ALERT_MSG_MAX);
	const char *sink = a->sink ? a->sink : "";
	int r = 0;

	/* Reloader v1.4.21 internal/pkg/handler/upgrade.go and alerts/alert.go: the message,
	 * "<info> : " in front when ALERT_ADDITIONAL_INFO is set (even empty) */
	if (a->info)
		r = sb_addf(&msg, "%s : ", a->info);
	if (!r)
		r = sb_addf(
		    &msg,
		    "Reloader detected changes in *%s* of type *%s* in namespace *%s*. Hence "
		    "reloaded *%s* of type *%s* in namespace *%s*",
		    obj, type, ns, workload, kind, ns);
	if (r)
		goto out;
	*ctype = "application/json";
	if (strcmp(sink, "slack") == 0) {
		r = sb_add(sb, "{\"attachments\":[{\"author_name\":\"Reloader\",\"color\":\"good\","
			       "\"text\":");
		r = r ? r : go_json_str(sb, msg.buf);
		r = r ? r : sb_add(sb, "}]}");
	} else if (strcmp(sink, "teams") == 0 || strcmp(sink, "gchat") == 0) {
		r = sb_add(sb, "{\"text\":");
		r = r ? r : go_json_str(sb, msg.buf);
		r = r ? r : sb_add(sb, "}");
	} else { /* raw webhook: the text without Slack's '*' markup */
		const char *p;

		*ctype = "text/plain";
		for (p = msg.buf; *p && !r; p++)
			if (*p != '*')
				r = sb_addn(sb, p, 1);
	}
out:
	sb_free(&msg);
	return r;
}

/* ---- the queue: alerts and webhooks are sent by their own thread, never by the run loop ---- */

struct note {
	struct note *next;
	int alert;	    /* 1: an alert (ALERT_*), 0: a --webhook-url POST */
	const char *ctype;  /* static */
	char *body, *about; /* owned; about names the change in messages */
};

struct reload_notifyq {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;   /* to the worker: a note queued, or stop */
	pthread_cond_t room; /* from the worker: a note taken (room in the queue), or it ended */
	struct note *head, *tail;
	size_t n;
	int stop;      /* 1: drop what is queued and end; 2: send what is queued, then end */
	int abort;     /* read by the POST's progress callback: abandon the POST in flight */
	int ended;     /* the worker has returned */
	size_t unsent; /* taken but not sent: abandoned at a stop */
	const struct reload_opts *o;
	struct reload_metrics *m;
};

static void note_free(struct note *nt)
{
	if (!nt)
		return;
	free(nt->body);
	free(nt->about);
	free(nt);
}

/* Are we stopping (SIGTERM, or the drain's time is up)? Then a failed POST is counted, not logged.
 */
static int stopping(struct reload_notifyq *q)
{
	return atomic_load(&reload_stop_flag) || __atomic_load_n(&q->abort, __ATOMIC_RELAXED);
}

static void send_note(struct reload_notifyq *q, const struct note *nt)
{
	const struct reload_alert *a = &q->o->alert;
	struct strbuf resp = STRBUF_INIT(4096);
	struct log_err err = {0};
	const char *sink = a->sink ? a->sink : "";
	int r;

	if (nt->alert) {
		r = post(a->url, a->proxy, nt->ctype, nt->body, &resp, &q->abort, &err);
		/* Reloader's success codes: Teams and Google Chat exactly 200, others below 400 */
		if (r < 0 && stopping(q))
			q->unsent++; /* in the summary at the stop */
		else if (r < 0)
			log_error("Error sending alert: %s", err.msg);
		else if ((strcmp(sink, "teams") == 0 || strcmp(sink, "gchat") == 0) ? r != 200
										    : r >= 400)
			log_error("Error sending alert: error sending msg. status: %d", r);
	} else {
		/* Reloader v1.4.21 (reloader.md §9.7): the body is fixed, the status ignored */
		r = post(q->o->webhook_url, NULL, nt->ctype, nt->body, &resp, &q->abort, &err);
		if (r < 0 && stopping(q))
			q->unsent++;
		else if (r < 0)
			log_error("webhook for %s failed: %s", nt->about, err.msg);
		else
			log_info("webhook sent for %s: HTTP %d %s", nt->about, r,
				 resp.buf ? resp.buf : "");
	}
	sb_free(&resp);
}

static void *worker(void *ud)
{
	struct reload_notifyq *q = ud;
	struct note *nt;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->head && !q->stop)
			pthread_cond_wait(&q->cv, &q->mu);
		/* SIGTERM: nothing more is taken; what is queued is counted at the stop */
		if (q->stop == 1 || !q->head || atomic_load(&reload_stop_flag))
			break;
		nt = q->head;
		q->head = nt->next;
		if (!q->head)
			q->tail = NULL;
		q->n--;
		METRIC_SET(q->m->notify_queued, q->n);
		pthread_cond_broadcast(&q->room);
		pthread_mutex_unlock(&q->mu);
		send_note(q, nt);
		note_free(nt);
		pthread_mutex_lock(&q->mu);
	}
	q->ended = 1;
	pthread_cond_broadcast(&q->room);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

int reload_notify_start(struct ctl *c, struct log_err *err)
{
	struct reload_notifyq *q;
	pthread_condattr_t ca;

	if (!c->o->alert.on && !c->o->webhook_url)
		return 0;
	q = calloc(1, sizeof(*q));
	if (!q)
		return log_err_set(err, -ENOMEM, "out of memory");
	q->o = c->o;
	q->m = &c->m;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the drain's deadline */
	pthread_cond_init(&q->room, &ca);
	pthread_condattr_destroy(&ca);
	if (reload_thread_start(&q->th, worker, q) != 0) {
		pthread_mutex_destroy(&q->mu);
		pthread_cond_destroy(&q->cv);
		pthread_cond_destroy(&q->room);
		free(q);
		return log_err_set(err, -EAGAIN, "cannot start the notification thread");
	}
	c->act.nq = q;
	return 0;
}

/* Wait (q->mu held) until the worker ends or RELOAD_NOTIFY_DRAIN_MS pass. 1: it ended. */
static int wait_drained(struct reload_notifyq *q)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += RELOAD_NOTIFY_DRAIN_MS / 1000;
	while (!q->ended)
		if (pthread_cond_timedwait(&q->room, &q->mu, &ts) == ETIMEDOUT)
			break;
	return q->ended;
}

void reload_notify_stop(struct ctl *c, int drain)
{
	struct reload_notifyq *q = c->act.nq;
	struct note *nt;
	size_t left;

	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	q->stop = drain ? 2 : 1;
	pthread_cond_signal(&q->cv);
	if (drain && !wait_drained(q)) {
		log_warn("the alerts and webhooks still queued after %d s are dropped",
			 RELOAD_NOTIFY_DRAIN_MS / 1000);
		drain = 0;
		q->stop = 1;
	}
	if (!drain)
		__atomic_store_n(&q->abort, 1, __ATOMIC_RELAXED); /* the POST in flight ends */
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->th, NULL);
	for (left = q->unsent; (nt = q->head); left++) {
		q->head = nt->next;
		note_free(nt);
	}
	if (left)
		log_warn("stopping: %zu alerts or webhooks not sent", left);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	pthread_cond_destroy(&q->room);
	free(q);
	c->act.nq = NULL;
}

/*
 * Queue a note (owned by the queue from now on). A full queue drops its oldest note; in once
 * mode (nothing else waits on us) it waits for room instead: every alert of the run is sent.
 */
static void enqueue(struct ctl *c, struct note *nt)
{
	struct reload_notifyq *q = c->act.nq;
	struct note *old = NULL;

	if (!q) { /* not started (a test's ctl): nothing sends it */
		note_free(nt);
		return;
	}
	pthread_mutex_lock(&q->mu);
	while (c->o->once && q->n >= RELOAD_NOTIFY_QUEUE_MAX && !q->ended)
		pthread_cond_wait(&q->room, &q->mu);
	if (q->n >= RELOAD_NOTIFY_QUEUE_MAX) {
		old = q->head;
		q->head = old->next;
		if (!q->head)
			q->tail = NULL;
		q->n--;
	}
	if (q->tail)
		q->tail->next = nt;
	else
		q->head = nt;
	q->tail = nt;
	q->n++;
	METRIC_SET(c->m.notify_queued, q->n);
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	if (old) {
		METRIC_INC(c->m.notify_dropped);
		log_warn("alert/webhook queue full (%d): dropped the one for %s",
			 RELOAD_NOTIFY_QUEUE_MAX, old->about);
		note_free(old);
	}
}

static struct note *note_new(int alert, const char *ctype, char *body, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static struct note *note_new(int alert, const char *ctype, char *body, const char *fmt, ...)
{
	struct note *nt = calloc(1, sizeof(*nt));
	va_list ap;
	int r;

	if (!nt) {
		free(body);
		return NULL;
	}
	nt->alert = alert;
	nt->ctype = ctype;
	nt->body = body;
	va_start(ap, fmt);
	r = vasprintf(&nt->about, fmt, ap);
	va_end(ap);
	if (r < 0 || !body) {
		nt->about = NULL;
		note_free(nt);
		return NULL;
	}
	return nt;
}

void reload_notify_alert(struct ctl *c, const char *obj, const char *type, const char *ns,
			 const char *workload, const char *kind)
{
	const struct reload_alert *a = &c->o->alert;
	struct strbuf body = STRBUF_INIT(64 * 1024);
	const char *ctype = NULL;
	int r;
	struct note *nt;

	if (!a->on)
		return;
	if (!a->url) {
		log_error("ALERT_WEBHOOK_URL env variable not provided");
		return;
	}
	r = reload_alert_body(&body, a, obj, type, ns, workload, kind, &ctype);
	if (r < 0) {
		sb_free(&body);
		if (r == -E2BIG)
			log_error("Error sending alert: the message for %s %s/%s is longer than %d "
				  "bytes (ALERT_ADDITIONAL_INFO and the names)",
				  kind, ns, workload, RELOAD_ALERT_MSG_MAX);
		else
			log_error("Error sending alert: out of memory");
		return;
	}
	nt = note_new(1, ctype, strdup(body.buf ? body.buf : ""), "%s %s/%s", kind, ns, workload);
	sb_free(&body);
	if (nt)
		enqueue(c, nt);
	else
		log_error("Error sending alert: out of memory");
}

void reload_notify_webhook(struct ctl *c, const struct cfg_ent *ce)
{
	struct note *nt = note_new(
	    0, "application/json", strdup("{\"webhook\":\"update successful\"}"), "%s %s/%s",
	    reload_type_name(reload_cls_type(ce->e.cls)), ce->e.ns, ce->e.name);

	if (nt)
		enqueue(c, nt);
	else
		log_error("webhook for %s/%s: out of memory", ce->e.ns, ce->e.name);
}

int reload_notify_url_ok(const char *url)
{
	const char *h, *at;
	size_t auth;

	if (strncasecmp(url, "http://", 7) == 0)
		h = url + 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		h = url + 8;
	else
		return 0;
	auth = strcspn(h, "/?#"); /* the authority: [user@]host[:port] */
	at = memchr(h, '@', auth);
	if (at) {
		auth -= (size_t)(at + 1 - h);
		h = at + 1;
	}
	return auth > 0 && *h != ':'; /* a host, not nothing or a bare port ("http://:80/") */
}
