/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_http: /healthz, /readyz and Prometheus /metrics through libmicrohttpd. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "reload/reload_internal.h"

static const char *const skip_names[NSKIP] = {
    [SKIP_CURRENT] = "already_current",	  [SKIP_IGNORED] = "ignored",
    [SKIP_EXCLUDED] = "excluded",	  [SKIP_NOT_USED] = "not_used",
    [SKIP_NO_CONTAINER] = "no_container", [SKIP_UNCHANGED] = "no_data_change",
};

static const char *const cls_names[NCLS] = {"configmaps", "secrets",  "deployments", "statefulsets",
					    "daemonsets", "cronjobs", "jobs",	     "rollouts"};

static int head(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	return sb_addf(sb, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int render(struct strbuf *sb, struct reload_metrics *m)
{
	static const char reloads[] = "nodeprobe_reload_reloads_total";
	static const char skipped[] = "nodeprobe_reload_skipped_total";
	static const char restarts[] = "nodeprobe_reload_watch_restarts_total";
	static const char objects[] = "nodeprobe_reload_objects";
	static const char requests[] = "nodeprobe_reload_api_requests_total";
	int k, i, r;

	r = head(sb, reloads, "counter", "Rollouts by workload kind and result.");
	for (k = 0; k < RELOAD_NKINDS && !r; k++)
		for (i = 0; i < 2 && !r; i++)
			r = sb_addf(sb, "%s{kind=\"%s\",result=\"%s\"} %lu\n", reloads,
				    reload_kind_name((enum reload_kind)k),
				    i ? "failure" : "success", METRIC_GET(m->reloads[k][i]));
	r = r ? r : head(sb, skipped, "counter", "Reloads not done, by reason.");
	for (i = 0; i < NSKIP && !r; i++)
		r = sb_addf(sb, "%s{reason=\"%s\"} %lu\n", skipped, skip_names[i],
			    METRIC_GET(m->skipped[i]));
	r = r ? r : head(sb, restarts, "counter", "Watches restarted after an error or a 410.");
	for (i = 0; i < NCLS && !r; i++)
		r = sb_addf(sb, "%s{resource=\"%s\"} %lu\n", restarts, cls_names[i],
			    METRIC_GET(m->watch_restarts[i]));
	r = r ? r : head(sb, objects, "gauge", "Objects tracked (identity and hash only).");
	for (i = 0; i < NCLS && !r; i++)
		r = sb_addf(sb, "%s{resource=\"%s\"} %lu\n", objects, cls_names[i],
			    METRIC_GET(m->objects[i]));
	if (METRIC_GET(m->leader)) { /* --enable-ha */
		r = r ? r
		      : head(sb, "nodeprobe_reload_leader", "gauge",
			     "1 while this replica holds the Lease (--enable-ha), 0 standing by.");
		r = r ? r : sb_addf(sb, "nodeprobe_reload_leader %d\n", METRIC_GET(m->leader) == 2);
	}
	r = r ? r : head(sb, requests, "counter", "API requests by HTTP status (0: no answer).");
	for (i = 0; i < KUBE_CODES && !r; i++) {
		unsigned long n = kube_client_count(m->cl, i);

		if (n)
			r = sb_addf(sb, "%s{code=\"%d\"} %lu\n", requests, i, n);
	}
	return r;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code, const char *type,
			     const char *body, size_t len)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", type);
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct reload_metrics *m = cls;
	enum MHD_Result ret;

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply(conn, 405, "text/plain", "method not allowed\n", 19);
	if (strcmp(url, "/healthz") == 0)
		return reply(conn, 200, "text/plain", "ok\n", 3);
	if (strcmp(url, "/readyz") == 0) {
		if (METRIC_GET(m->ready))
			return reply(conn, 200, "text/plain", "ok\n", 3);
		return reply(conn, 503, "text/plain", "syncing\n", 8);
	}
	if (strcmp(url, "/metrics") == 0) {
		struct strbuf sb = STRBUF_INIT(1024 * 1024);

		if (render(&sb, m) < 0) {
			sb_free(&sb);
			return reply(conn, 500, "text/plain", "error\n", 6);
		}
		ret = reply(conn, 200, "text/plain; version=0.0.4", sb.buf, sb.len);
		sb_free(&sb);
		return ret;
	}
	return reply(conn, 404, "text/plain", "not found\n", 10);
}

void *reload_http_start(const char *listen, struct reload_metrics *m, struct log_err *err)
{
	struct sockaddr_in sin;
	const char *colon = strrchr(listen, ':');
	char host[64];
	long port;
	char *end;
	struct MHD_Daemon *d;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	if (!colon || (size_t)(colon - listen) >= sizeof(host)) {
		log_err_set(err, -EINVAL, "--listen '%s': expected [HOST]:PORT", listen);
		return NULL;
	}
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 0 || port > 65535) {
		log_err_set(err, -EINVAL, "--listen '%s': bad port", listen);
		return NULL;
	}
	sin.sin_port = htons((uint16_t)port);
	if (!*host)
		sin.sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
		log_err_set(err, -EINVAL, "--listen '%s': host must be an IPv4 address", listen);
		return NULL;
	}
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)port,
			     NULL, NULL, handle, m, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10, MHD_OPTION_END);
	if (!d) {
		log_err_set(err, -EADDRINUSE, "--listen '%s': cannot listen", listen);
		return NULL;
	}
	return d;
}

void reload_http_stop(void *h)
{
	if (h)
		MHD_stop_daemon(h);
}
