/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_notify: Reloader's --webhook-url and its ALERT_* alerts (Slack, Teams, Google Chat, raw).
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reload/reload_internal.h"

#define NOTIFY_TIMEOUT_MS 10000L /* Reloader sets none: a hanging endpoint stalled its queue */

/* Keep at most 256 bytes of the answer, for the log. */
static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct strbuf *sb = ud;
	size_t len = size * n, room = sb->len < 256 ? 256 - sb->len : 0;

	sb_addn(sb, p, len < room ? len : room);
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
	return reload_stop_flag ? 1 : 0;
}

int reload_notify_post(const char *url, const char *proxy, const char *ctype, const char *body,
		       struct strbuf *resp, struct log_err *err)
{
	CURL *e = curl_easy_init();
	struct curl_slist *h = NULL;
	char hdr[128], ebuf[CURL_ERROR_SIZE] = "", shown[256];
	long code = 0;
	CURLcode cr;

	if (!e)
		return log_err_set(err, -ENOMEM, "out of memory");
	if (reload_stop_flag) {
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
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, resp);
	sb_reset(resp);
	cr = curl_easy_perform(e);
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
	struct strbuf msg = STRBUF_INIT(16 * 1024);
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

void reload_notify_alert(struct ctl *c, const char *obj, const char *type, const char *ns,
			 const char *workload, const char *kind)
{
	const struct reload_alert *a = &c->o->alert;
	struct strbuf body = STRBUF_INIT(64 * 1024), resp = STRBUF_INIT(4096);
	struct log_err err = {0};
	const char *ctype = NULL, *sink = a->sink ? a->sink : "";
	int r;

	if (!a->on)
		return;
	if (!a->url) {
		log_error("ALERT_WEBHOOK_URL env variable not provided");
		return;
	}
	r = reload_alert_body(&body, a, obj, type, ns, workload, kind, &ctype);
	if (r == 0)
		r = reload_notify_post(a->url, a->proxy, ctype, body.buf, &resp, &err);
	/* Reloader's success codes: Teams and Google Chat exactly 200, others below 400 */
	if (r < 0)
		log_error("Error sending alert: %s", err.msg);
	else if ((strcmp(sink, "teams") == 0 || strcmp(sink, "gchat") == 0) ? r != 200 : r >= 400)
		log_error("Error sending alert: error sending msg. status: %d", r);
	sb_free(&body);
	sb_free(&resp);
}

void reload_notify_webhook(struct ctl *c, const struct cfg_ent *ce)
{
	struct strbuf resp = STRBUF_INIT(4096);
	struct log_err err = {0};
	int r;

	/* Reloader v1.4.21 (reloader.md §9.7): the body is fixed, the status ignored */
	r = reload_notify_post(c->o->webhook_url, NULL, "application/json",
			       "{\"webhook\":\"update successful\"}", &resp, &err);
	if (r < 0)
		log_error("webhook for %s %s/%s failed: %s",
			  reload_type_name(reload_cls_type(ce->e.cls)), ce->e.ns, ce->e.name,
			  err.msg);
	else
		log_info("webhook sent for %s %s/%s: HTTP %d %s",
			 reload_type_name(reload_cls_type(ce->e.cls)), ce->e.ns, ce->e.name, r,
			 resp.buf ? resp.buf : "");
	sb_free(&resp);
}
