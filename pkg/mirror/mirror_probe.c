/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_probe: check --probe: is each mirror answering (GET /v2/), can it resolve --image. */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log/log.h"
#include "mirror/mirror_internal.h"
#include "strbuf/strbuf.h"

/*
 * containerd falls back upstream whenever a mirror does not answer (a refused
 * or timed-out dial, or a 404: core/remotes/docker/resolver.go "trying next
 * host"), so a mirror that is not there looks exactly like one that works.
 * These bounds keep a probe of a black-holed mirror short.
 */
#define PROBE_CONNECT_MS 1000
#define PROBE_TOTAL_MS	 3000
#define PROBE_MAX_BODY	 (64 * 1024)

struct reply {
	size_t body;	  /* bytes of body seen (discarded) */
	char digest[128]; /* Docker-Content-Digest, if any */
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct reply *rp = ud;

	(void)p;
	rp->body += sz * n;
	return rp->body > PROBE_MAX_BODY ? 0 : sz * n; /* 0 aborts the transfer */
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
	static const char name[] = "docker-content-digest:";
	struct reply *rp = ud;
	size_t len = sz * n, i;

	if (len > sizeof(name) && !strncasecmp(p, name, sizeof(name) - 1)) {
		const char *v = p + sizeof(name) - 1;
		size_t vl = len - (sizeof(name) - 1);

		while (vl && isspace((unsigned char)*v))
			v++, vl--;
		while (vl && isspace((unsigned char)v[vl - 1]))
			vl--;
		for (i = 0; i < vl && i + 1 < sizeof(rp->digest); i++)
			rp->digest[i] = isprint((unsigned char)v[i]) ? v[i] : '?';
		rp->digest[i] = '\0';
	}
	return len;
}

/* One request: *code gets the HTTP status, or 0 and why (curl's words) when none came. */
static int request(const char *url, bool head, long *code, struct reply *rp, char *why,
		   size_t wsize)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdr = NULL;
	CURL *c = curl_easy_init();
	CURLcode rc;

	*code = 0;
	if (!c)
		return -ENOMEM;
	if (head) /* what containerd's resolver sends (remotes/docker/resolver.go) */
		hdr = curl_slist_append(
		    hdr,
		    "Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.docker.distribution.manifest.v2+json, */*");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOBODY, head ? 1L : 0L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)PROBE_CONNECT_MS);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)PROBE_TOTAL_MS);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*"); /* the node's own mirror, never a proxy */
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, rp);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, rp);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "nodeprobe-mirror/" NP_VERSION);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK || rc == CURLE_WRITE_ERROR)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code);
	if (*code == 0) {
		long oserr = 0;

		curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &oserr);
		if (oserr) /* "Connection refused" says more than "Couldn't connect to server" */
			snprintf(why, wsize, "%s (%s)", curl_easy_strerror(rc),
				 strerror((int)oserr));
		else
			snprintf(why, wsize, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
	}
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	return 0;
}

/* An image reference split as containerd does (docker.io/library/ for short names). */
struct ref {
	char registry[256]; /* docker.io, ghcr.io, host:5000 */
	char repo[512];	    /* library/hello */
	char object[160];   /* tag or digest */
};

static int parse_ref(const char *s, struct ref *rf, struct log_err *err)
{
	const char *slash = strchr(s, '/'), *at, *rest = s, *colon;
	size_t rl;

	memset(rf, 0, sizeof(*rf));
	if (!*s || strlen(s) > 700 || strpbrk(s, " \t\n?#"))
		return log_err_set(err, -EINVAL, "--image '%s': not an image reference", s);
	if (slash && (memchr(s, '.', (size_t)(slash - s)) || memchr(s, ':', (size_t)(slash - s)) ||
		      !strncmp(s, "localhost/", 10))) {
		snprintf(rf->registry, sizeof(rf->registry), "%.*s", (int)(slash - s), s);
		rest = slash + 1;
	} else {
		snprintf(rf->registry, sizeof(rf->registry), "docker.io");
	}
	at = strchr(rest, '@');
	colon = strrchr(rest, ':');
	if (at) {
		rl = (size_t)(at - rest);
		snprintf(rf->object, sizeof(rf->object), "%s", at + 1);
	} else if (colon && !strchr(colon, '/')) {
		rl = (size_t)(colon - rest);
		snprintf(rf->object, sizeof(rf->object), "%s", colon + 1);
	} else {
		rl = strlen(rest);
		snprintf(rf->object, sizeof(rf->object), "latest");
	}
	if (rl == 0 || !rf->object[0])
		return log_err_set(err, -EINVAL, "--image '%s': not an image reference", s);
	snprintf(rf->repo, sizeof(rf->repo), "%s%.*s",
		 !strcmp(rf->registry, "docker.io") && !memchr(rest, '/', rl) ? "library/" : "",
		 (int)rl, rest);
	return 0;
}

static void report(const struct mirror_opts *o, const char *url, enum mirror_severity sev,
		   int *worst, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void report(const struct mirror_opts *o, const char *url, enum mirror_severity sev,
		   int *worst, const char *fmt, ...)
{
	struct mirror_finding f = {sev, url, 0, 0, NULL, NULL};
	va_list ap;

	va_start(ap, fmt);
	mirror_vfind(o->report, o->report_data, &f, worst, fmt, ap);
	va_end(ap);
}

int mirror_probe_run(const struct mirror_opts *o, const struct mirror_list *hosts,
		     struct log_err *err)
{
	struct ref rf;
	char url[2048], why[CURL_ERROR_SIZE + 64], *ns = NULL;
	int worst = MIRROR_CLEAN, r = 0;
	size_t i;

	if (o->image && parse_ref(o->image, &rf, err) < 0)
		return -EINVAL;
	if (hosts->n == 0) {
		report(
		    o, o->config_path, MIRROR_WARNING, &worst,
		    "--probe: no mirror to probe (no --mirror-target, no [host] in any hosts.toml)");
		return worst;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		return log_err_set(err, -ENOMEM, "--probe: libcurl could not start");
	for (i = 0; r == 0 && i < hosts->n; i++) {
		const char *t = hosts->v[i];
		size_t tl = strlen(t);
		struct reply rp = {0};
		long code;

		while (tl && t[tl - 1] == '/')
			tl--;
		snprintf(url, sizeof(url), "%.*s/v2/", (int)tl, t);
		r = request(url, false, &code, &rp, why, sizeof(why));
		if (r < 0)
			break;
		if (code == 0) {
			report(o, t, MIRROR_ERROR, &worst,
			       "mirror not answering: every pull goes upstream (GET /v2/: %s)",
			       why);
			continue;
		}
		if (code != 200 && code != 401) {
			report(
			    o, t, MIRROR_ERROR, &worst,
			    "mirror not answering as a registry: every pull goes upstream (GET /v2/: HTTP %ld)",
			    code);
			continue;
		}
		report(o, t, MIRROR_OK, &worst, "mirror answering (GET /v2/: HTTP %ld)", code);
		if (!o->image)
			continue;
		/* containerd asks a mirror with ?ns=<registry> (Spegel routes by it) */
		if (!ns)
			ns = curl_easy_escape(NULL, rf.registry, 0);
		snprintf(url, sizeof(url), "%.*s/v2/%s/manifests/%s?ns=%s", (int)tl, t, rf.repo,
			 rf.object, ns ? ns : rf.registry);
		memset(&rp, 0, sizeof(rp));
		r = request(url, true, &code, &rp, why, sizeof(why));
		if (r < 0)
			break;
		if (code == 200)
			report(o, t, MIRROR_OK, &worst, "resolves %s/%s:%s (%s)", rf.registry,
			       rf.repo, rf.object, rp.digest[0] ? rp.digest : "no digest header");
		else if (code == 404)
			report(
			    o, t, MIRROR_WARNING, &worst,
			    "cannot resolve %s/%s:%s (HEAD manifest: HTTP 404): pulls of it go upstream",
			    rf.registry, rf.repo, rf.object);
		else if (code == 0)
			report(
			    o, t, MIRROR_ERROR, &worst,
			    "cannot resolve %s/%s:%s (HEAD manifest: %s): pulls of it go upstream",
			    rf.registry, rf.repo, rf.object, why);
		else
			report(
			    o, t, MIRROR_ERROR, &worst,
			    "cannot resolve %s/%s:%s (HEAD manifest: HTTP %ld): pulls of it go upstream",
			    rf.registry, rf.repo, rf.object, code);
	}
	curl_free(ns);
	curl_global_cleanup();
	if (r < 0)
		return log_err_set(err, r, "--probe: %s", strerror(-r));
	return worst;
}
