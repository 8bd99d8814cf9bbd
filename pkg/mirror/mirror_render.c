/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_render: registry names, mirror URLs and hosts.toml bytes exactly as Spegel writes them
 * (pure: no file system). */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil/fsutil.h"
#include "goconv/goconv.h"
#include "log/log.h"
#include "strbuf/strbuf.h"
#include "toml/toml.h"
#include "mirror/mirror_internal.h"

/* ---- names and URLs ---- */

static bool valid_port(const char *p, size_t n)
{
	size_t i;
	long v = 0;

	if (n == 0 || n > 5)
		return false;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)p[i]))
			return false;
		v = v * 10 + (p[i] - '0');
	}
	return v > 0 && v <= 65535;
}

/* host[:port] as a registry directory name: DNS name, IPv4 or [IPv6], optional port. */
static bool valid_hostport(const char *s, size_t n)
{
	const char *colon = NULL;
	size_t i, hn;

	if (n == 0 || n > 253)
		return false;
	if (s[0] == '[') {
		const char *close = memchr(s, ']', n);

		if (!close || close == s + 1)
			return false;
		for (i = 1; s + i < close; i++)
			if (!isxdigit((unsigned char)s[i]) && s[i] != ':' && s[i] != '.')
				return false;
		hn = (size_t)(close - s) + 1;
		if (hn == n)
			return true;
		return s[hn] == ':' && valid_port(s + hn + 1, n - hn - 1);
	}
	for (i = 0; i < n; i++)
		if (s[i] == ':')
			colon = s + i;
	hn = colon ? (size_t)(colon - s) : n;
	if (colon && !valid_port(colon + 1, n - hn - 1))
		return false;
	if (hn == 0 || s[0] == '.' || s[0] == '-' || s[hn - 1] == '.')
		return false;
	for (i = 0; i < hn; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!isalnum(c) && c != '-' && c != '.' && c != '_')
			return false;
		if (c == '.' && i + 1 < hn && s[i + 1] == '.')
			return false;
	}
	return true;
}

bool mirror_is_wildcard(const char *r)
{
	return strcmp(r, "_default") == 0 || strcmp(r, "*") == 0;
}

/*
 * Split an http(s) URL "scheme://host[:port]" (what Spegel accepts: no path,
 * query, fragment or user) into scheme and host. bare allows "host[:port]"
 * without a scheme (https). what names the thing in messages.
 */
static int split_url(const char *url, bool bare, const char *what, char *scheme, size_t ssize,
		     const char **host, struct log_err *err)
{
	const char *sep = strstr(url, "://"), *h;
	size_t sl;

	if (!sep) {
		if (!bare)
			return log_err_set(err, -EINVAL, "%s '%s': needs http:// or https://", what,
					   url);
		snprintf(scheme, ssize, "https");
		h = url;
		if (strpbrk(h, "/?#@"))
			return log_err_set(err, -EINVAL,
					   "%s '%s': not a host[:port] or an http(s):// URL", what,
					   url);
	} else {
		sl = (size_t)(sep - url);
		if (!((sl == 4 && !strncasecmp(url, "http", 4)) ||
		      (sl == 5 && !strncasecmp(url, "https", 5))))
			return log_err_set(err, -EINVAL, "%s '%s': scheme must be http or https",
					   what, url);
		snprintf(scheme, ssize, "%.*s", (int)sl, url);
		for (char *p = scheme; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		h = sep + 3;
	}
	if (strpbrk(h, "/?#"))
		return log_err_set(
		    err, -EINVAL,
		    "%s '%s': must be scheme://host[:port] with no path, query or fragment", what,
		    url);
	if (strchr(h, '@'))
		return log_err_set(err, -EINVAL, "%s '%s': must not contain a user", what, url);
	if (!valid_hostport(h, strlen(h)))
		return log_err_set(err, -EINVAL, "%s '%s': '%s' is not a valid host[:port]", what,
				   url, h);
	*host = h;
	return 0;
}

int mirror_registry_dir(const char *registry, char *dir, size_t size, struct log_err *err)
{
	char scheme[8];
	const char *host;
	int r;

	if (mirror_is_wildcard(registry)) {
		snprintf(dir, size, "_default");
		return 0;
	}
	r = split_url(registry, true, "registry", scheme, sizeof(scheme), &host, err);
	if (r < 0)
		return r;
	if (!fs_name_is_safe(host) || strcmp(host, MIRROR_BACKUP_DIR) == 0 || strlen(host) >= size)
		return log_err_set(err, -EINVAL, "registry '%s': unusable as a directory name",
				   registry);
	snprintf(dir, size, "%s", host);
	return 0;
}

/* ---- rendering (Spegel's templateHosts, byte for byte) ---- */

const char *mirror_dial_timeout_problem(const char *s)
{
	int64_t ns;
	int r = goconv_parse_duration(s, &ns);

	if (r == -ERANGE)
		return "is out of range: a Go duration is at most 2562047h47m16.854775807s";
	if (r < 0)
		return "is not a duration like 200ms";
	if (ns < 0) /* "-0s" is zero, not negative */
		return "is negative: every dial to the mirror would fail at once";
	return NULL;
}

int mirror_render(struct strbuf *out, const char *registry, const struct mirror_list *targets,
		  bool resolve, const char *dial_timeout, const char *authorization,
		  struct log_err *err)
{
	char scheme[8], tscheme[8];
	const char *host, *thost;
	size_t i;
	int r = 0;

	if (!mirror_is_wildcard(registry)) {
		r = split_url(registry, true, "registry", scheme, sizeof(scheme), &host, err);
		if (r < 0)
			return r;
		if (!strcmp(scheme, "https") && !strcmp(host, "docker.io"))
			r = sb_add(out, "server = 'https://registry-1.docker.io'\n");
		else
			r = sb_addf(out, "server = '%s://%s'\n", scheme, host);
	}
	if (dial_timeout && mirror_dial_timeout_problem(dial_timeout))
		return log_err_set(err, -EINVAL, "dial timeout '%s' %s", dial_timeout,
				   mirror_dial_timeout_problem(dial_timeout));
	if (targets->n == 0)
		return log_err_set(err, -EINVAL,
				   "no mirror target given: pass --mirror-target URL");
	for (i = 0; r == 0 && i < targets->n; i++) {
		r = split_url(targets->v[i], false, "mirror target", tscheme, sizeof(tscheme),
			      &thost, err);
		if (r < 0)
			return r;
		r = sb_addf(out, "\n[host.'%s://%s']\ncapabilities = %s\n", tscheme, thost,
			    resolve ? "['pull', 'resolve']" : "['pull']");
		if (r == 0 && dial_timeout)
			r = sb_addf(out, "dial_timeout = '%s'\n", dial_timeout);
		if (r == 0 && authorization)
			r = sb_addf(out, "[host.'%s://%s'.header]\nAuthorization = '%s'\n", tscheme,
				    thost, authorization);
	}
	if (r < 0)
		return log_err_set(err, r, "hosts.toml for '%s': %s", registry, strerror(-r));
	/* Spegel TrimSpace's the template output: no leading or trailing blank */
	sb_rtrim(out);
	if (out->len && out->buf[0] == '\n') {
		memmove(out->buf, out->buf + 1, out->len);
		out->len--;
	}
	return 0;
}
