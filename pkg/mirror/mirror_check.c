/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror check: what containerd would reject or silently ignore in each hosts.toml of the config
 * path (reads only); containerd's config.toml is mirror_check_ctrd.c's. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil/fsutil.h"
#include "log/log.h"
#include "mirror/mirror_internal.h"
#include "strbuf/strbuf.h"
#include "toml/toml.h"

/* ---- versions, durations, URLs ---- */

/* Parse "1.6.20", "v2.1.0", "1.6.20~ds1-1". Returns 0 or -EINVAL. */
static int ver_parse(const char *s, struct mirror_ctrd_ver *v)
{
	int n = 0;

	memset(v, 0, sizeof(*v));
	if (*s == 'v')
		s++;
	if (sscanf(s, "%d.%d.%d%n", &v->major, &v->minor, &v->patch, &n) != 3 || n == 0 ||
	    v->major < 0 || v->minor < 0 || v->patch < 0)
		return -EINVAL;
	if (s[n] && s[n] != '~' && s[n] != '-' && s[n] != '+')
		return -EINVAL;
	v->known = true;
	return 0;
}

/* containerd 1.x decodes hosts.toml with go-toml v1 (its quirks apply). */
static bool gotoml_v1(const struct mirror_ctrd_ver *v)
{
	return !v->known || v->major < 2;
}

/* containerd 2.x lists hosts from [host.'…'] table headers only. */
static bool gotoml_v2(const struct mirror_ctrd_ver *v)
{
	return !v->known || v->major >= 2;
}

/* dial_timeout is read from 2.0.7 and 2.1.0 on. */
static bool has_dial_timeout(const struct mirror_ctrd_ver *v)
{
	return v->major > 2 || (v->major == 2 && (v->minor >= 1 || v->patch >= 7));
}

/* The end of check's message for a dial_timeout mirror_dial_timeout_problem refuses. */
static const char *dial_timeout_finding(const char *s)
{
	const char *p = mirror_dial_timeout_problem(s);

	if (!strncmp(p, "is negative", 11))
		return "is negative: every dial to this mirror fails at once";
	if (!strncmp(p, "is not", 6))
		return "is not a duration like '200ms'";
	return p;
}

/* Go url.Parse-like validation of a server or host URL: NULL if fine, else why not. */
static const char *url_problem(const char *url)
{
	const char *p, *host, *end, *colon = NULL;

	for (p = url; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return "invalid control character in URL";
		if (*p == '%' && !(isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])))
			return "invalid URL escape";
	}
	p = strstr(url, "://");
	if (!p)
		return "missing scheme";
	if (p == url || !isalpha((unsigned char)url[0]))
		return "invalid scheme";
	for (host = url; host < p; host++)
		if (!isalnum((unsigned char)*host) && *host != '+' && *host != '-' && *host != '.')
			return "invalid scheme";
	host = p + 3;
	end = host + strcspn(host, "/?#");
	for (p = host; p < end; p++)
		if (*p == '@')
			host = p + 1;
	if (*host == '[') {
		const char *close = memchr(host, ']', (size_t)(end - host));

		if (!close)
			return "missing ']' in host";
		colon = close + 1 < end ? close + 1 : NULL;
		if (colon && *colon != ':')
			return "invalid port after host";
	} else {
		for (p = host; p < end; p++) {
			if (*p == ':')
				colon = p;
			else if (!isalnum((unsigned char)*p) && !strchr("-._~!$&'()*+,;=%", *p))
				return "invalid character in host name";
		}
	}
	if (colon)
		for (p = colon + 1; p < end; p++)
			if (!isdigit((unsigned char)*p))
				return "invalid port after host";
	return NULL;
}

/* ---- hosts.toml ---- */

/* "a string", "an integer", "an array of tables", ... for messages. */
static bool is_string_array(const struct toml_value *v, const struct toml_value **bad)
{
	size_t i;

	*bad = NULL;
	if (v->type != TOML_ARRAY)
		return false;
	for (i = 0; i < v->n; i++)
		if (v->items[i]->type != TOML_STRING) {
			*bad = v->items[i];
			return false;
		}
	return true;
}

/* A ca or client file must be readable, or every pull of this registry fails. */
static void check_cert_file(struct mirror_checker *c, const struct toml_value *v, const char *key)
{
	char path[PATH_MAX];

	if (v->str[0] == '/')
		snprintf(path, sizeof(path), "%s", v->str);
	else
		snprintf(path, sizeof(path), "%s/%s", c->dir, v->str);
	if (access(path, R_OK) != 0)
		mirror_found(c, MIRROR_ERROR, v->line, v->col,
			     "%s file '%s' cannot be read (%s): every pull of this registry fails",
			     key, path, strerror(errno));
}

static void check_capabilities(struct mirror_checker *c, const struct toml_value *v)
{
	const struct toml_value *bad;
	size_t i;

	if (!is_string_array(v, &bad)) {
		if (bad)
			mirror_found(c, MIRROR_ERROR, bad->line, bad->col,
				     "'capabilities' must hold strings, not %s",
				     mirror_toml_type(bad));
		else
			mirror_found(c, MIRROR_ERROR, v->line, v->col,
				     "'capabilities' must be an array of strings, not %s",
				     mirror_toml_type(v));
		return;
	}
	for (i = 0; i < v->n; i++) {
		const char *s = v->items[i]->str;

		if (strcasecmp(s, "pull") && strcasecmp(s, "resolve") && strcasecmp(s, "push"))
			mirror_found(c, MIRROR_ERROR, v->items[i]->line, v->items[i]->col,
				     "unknown capability '%s' (pull, resolve or push)", s);
	}
}

static void check_ca(struct mirror_checker *c, const struct toml_value *v)
{
	const struct toml_value *bad;
	size_t i;

	if (v->type == TOML_STRING) {
		check_cert_file(c, v, "ca");
		return;
	}
	if (!is_string_array(v, &bad)) {
		bad = bad ? bad : v;
		mirror_found(c, MIRROR_ERROR, bad->line, bad->col,
			     "'ca' must be a string or an array of strings, not %s",
			     mirror_toml_type(bad));
		return;
	}
	for (i = 0; i < v->n; i++)
		check_cert_file(c, v->items[i], "ca");
}

static void check_client(struct mirror_checker *c, const struct toml_value *v)
{
	const struct toml_value *bad;
	size_t i, j;

	if (v->type == TOML_STRING) {
		check_cert_file(c, v, "client");
		return;
	}
	if (v->type != TOML_ARRAY) {
		mirror_found(c, MIRROR_ERROR, v->line, v->col,
			     "'client' must be a string or an array, not %s", mirror_toml_type(v));
		return;
	}
	for (i = 0; i < v->n; i++) {
		const struct toml_value *e = v->items[i];

		if (e->type == TOML_STRING) {
			check_cert_file(c, e, "client");
			continue;
		}
		if (e->type != TOML_ARRAY) {
			mirror_found(c, MIRROR_ERROR, e->line, e->col,
				     "'client' items must be strings or [cert, key] pairs, not %s",
				     mirror_toml_type(e));
			continue;
		}
		if (!is_string_array(e, &bad)) {
			mirror_found(c, MIRROR_ERROR, bad->line, bad->col,
				     "'client' pair must hold strings, not %s",
				     mirror_toml_type(bad));
			continue;
		}
		if (e->n != 2) {
			mirror_found(c, MIRROR_ERROR, e->line, e->col,
				     "'client' pair must have 2 items (cert, key), not %zu", e->n);
			continue;
		}
		for (j = 0; j < 2; j++)
			if (j == 0 || e->items[j]->len)
				check_cert_file(c, e->items[j], "client");
	}
}

static void check_header(struct mirror_checker *c, const struct toml_value *v)
{
	const struct toml_value *bad;
	size_t i;

	if (v->type != TOML_TABLE) {
		mirror_found(c, MIRROR_ERROR, v->line, v->col, "'header' must be a table, not %s",
			     mirror_toml_type(v));
		return;
	}
	for (i = 0; i < v->n; i++) {
		const struct toml_value *h = v->items[i];

		if (h->type == TOML_STRING || is_string_array(h, &bad))
			continue;
		bad = (h->type == TOML_ARRAY && bad) ? bad : h;
		mirror_found(c, MIRROR_ERROR, bad->line, bad->col,
			     "header '%s' must be a string or an array of strings, not %s",
			     v->keys[i], mirror_toml_type(bad));
	}
}

static void check_url(struct mirror_checker *c, const char *what, const char *url, int line,
		      int col)
{
	char full[4096];
	const char *why;

	if (strncmp(url, "http", 4) != 0) {
		snprintf(full, sizeof(full), "https://%s", url);
		mirror_found(c, MIRROR_WARNING, line, col,
			     "%s '%s' has no http:// or https:// scheme: containerd uses '%s'",
			     what, url, full);
		url = full;
	} else if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		mirror_found(c, MIRROR_WARNING, line, col,
			     "%s '%s' is not an http:// or https:// URL", what, url);
	}
	why = url_problem(url);
	if (why)
		mirror_found(c, MIRROR_ERROR, line, col, "%s '%s' cannot be parsed: %s", what, url,
			     why);
}

/* The fields containerd reads for the server (root) and for each [host.'…']. */
static void check_hostcfg(struct mirror_checker *c, const struct toml_value *t, bool root)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		const char *k = t->keys[i];
		const struct toml_value *v = t->items[i];
		int kl = t->key_line[i], kc = t->key_col[i];

		if (root && !strcmp(k, "host"))
			continue;
		if (root && !strcmp(k, "server")) {
			if (v->type != TOML_STRING)
				mirror_found(c, MIRROR_ERROR, v->line, v->col,
					     "'server' must be a string, not %s",
					     mirror_toml_type(v));
			else if (v->len)
				check_url(c, "server", v->str, v->line, v->col);
		} else if (!strcmp(k, "capabilities")) {
			check_capabilities(c, v);
		} else if (!strcmp(k, "ca")) {
			check_ca(c, v);
		} else if (!strcmp(k, "client")) {
			check_client(c, v);
		} else if (!strcmp(k, "skip_verify") || !strcmp(k, "override_path")) {
			if (v->type != TOML_BOOL)
				mirror_found(c, MIRROR_ERROR, v->line, v->col,
					     "'%s' must be a boolean, not %s", k,
					     mirror_toml_type(v));
		} else if (!strcmp(k, "header")) {
			check_header(c, v);
		} else if (!strcmp(k, "dial_timeout")) {
			if (c->ver.known && !has_dial_timeout(&c->ver))
				mirror_found(
				    c, MIRROR_WARNING, kl, kc,
				    "containerd %d.%d.%d ignores 'dial_timeout' (read from 2.0.7 and 2.1.0 on): a dead mirror costs 30 s per request",
				    c->ver.major, c->ver.minor, c->ver.patch);
			else if (v->type != TOML_STRING)
				mirror_found(c, MIRROR_ERROR, v->line, v->col,
					     "'dial_timeout' must be a string like '200ms', not %s",
					     mirror_toml_type(v));
			else if (v->len && mirror_dial_timeout_problem(v->str))
				mirror_found(c, MIRROR_ERROR, v->line, v->col,
					     "'dial_timeout' '%s' %s", v->str,
					     dial_timeout_finding(v->str));
		} else {
			mirror_found(c, MIRROR_WARNING, kl, kc,
				     "unknown key '%s': containerd ignores it", k);
		}
	}
}

static void check_hosts_table(struct mirror_checker *c, const struct toml_value *root)
{
	int hi = toml_index(root, "host");
	const struct toml_value *host = hi < 0 ? NULL : root->items[hi];
	size_t i;

	if (!host) {
		if (gotoml_v1(&c->ver))
			mirror_found(
			    c, MIRROR_ERROR, 0, 0,
			    "no [host.'…'] table: containerd 1.x rejects the file (\"invalid `host` tree\")");
		else
			mirror_found(c, MIRROR_WARNING, 0, 0,
				     "no [host.'…'] table: no mirror is used");
		return;
	}
	if (host->type != TOML_TABLE) {
		mirror_found(c, MIRROR_ERROR, root->key_line[hi], root->key_col[hi],
			     "'host' must be a table of [host.'URL'] tables, not %s",
			     mirror_toml_type(host));
		return;
	}
	if (host->n == 0)
		mirror_found(c, MIRROR_WARNING, host->line, host->col,
			     "[host] has no mirrors: containerd pulls from the server only");
	for (i = 0; i < host->n; i++) {
		const struct toml_value *h = host->items[i];
		int kl = host->key_line[i], kc = host->key_col[i];

		if (h->type != TOML_TABLE) {
			mirror_found(c, MIRROR_ERROR, h->line, h->col,
				     "host '%s' must be a table, not %s", host->keys[i],
				     mirror_toml_type(h));
			continue;
		}
		if (gotoml_v1(&c->ver) && strchr(host->keys[i], ']') &&
		    (h->origin == TOML_HEADER || h->origin == TOML_IMPLICIT))
			mirror_found(
			    c, MIRROR_ERROR, kl, kc,
			    "containerd 1.x cannot parse a table header whose key contains ']' (an IPv6 address): it rejects the file");
		if (gotoml_v2(&c->ver) && (h->origin == TOML_DOTTED || h->origin == TOML_INLINE))
			mirror_found(
			    c, MIRROR_WARNING, kl, kc,
			    "host '%s' is not written as a [host.'…'] table: containerd 2.x ignores it",
			    host->keys[i]);
		check_url(c, "host", host->keys[i], kl, kc);
		check_hostcfg(c, h, false);
	}
}

int mirror_check_hosts(const char *data, size_t len, const char *file, const char *dir,
		       const char *version, mirror_report_fn report, void *report_data)
{
	struct mirror_checker c = {file, dir, {0}, report, report_data, MIRROR_CLEAN, NULL, NULL};
	struct toml_value *root = NULL;
	struct log_err err = {0};

	if (version)
		ver_parse(version, &c.ver);
	if (len == 0) {
		mirror_found(
		    &c, MIRROR_WARNING, 0, 0,
		    "empty file: containerd ignores it and looks for certificate files instead");
		return c.worst;
	}
	if (toml_parse(data, len, file, &root, &err) < 0) {
		mirror_found_parse_error(&c, &err);
		return c.worst;
	}
	check_hostcfg(&c, root, true);
	check_hosts_table(&c, root);
	toml_free(root);
	return c.worst;
}

/* ---- the whole config path ---- */

/* Add the [host.'…'] keys of a hosts.toml text to l, once each (check --probe). */
static void collect_hosts(const char *data, size_t len, struct mirror_list *l)
{
	struct toml_value *root = NULL;
	const struct toml_value *host;
	size_t i, j;

	if (toml_parse(data, len, "", &root, NULL) < 0)
		return;
	host = toml_get(root, "host");
	for (i = 0; host && host->type == TOML_TABLE && i < host->n; i++) {
		for (j = 0; j < l->n && strcmp(l->v[j], host->keys[i]); j++)
			;
		if (j == l->n && !strncmp(host->keys[i], "http", 4))
			mirror_list_add(l, host->keys[i]);
	}
	toml_free(root);
}

static bool is_dir_at(const char *base, const char *name)
{
	char p[PATH_MAX];

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", base, name) >= sizeof(p))
		return false;
	return fs_is_dir(p);
}

int mirror_check_run(const struct mirror_opts *o, struct log_err *err)
{
	struct mirror_checker c = {NULL,	   NULL,	 {0},  o->report,
				   o->report_data, MIRROR_CLEAN, NULL, o};
	struct dirent **ents = NULL;
	struct mirror_list hosts = {0};
	int i, cnt, worst = MIRROR_CLEAN, files = 0;

	if (o->containerd_version && ver_parse(o->containerd_version, &c.ver) < 0)
		return log_err_set(err, -EINVAL, "containerd version '%s': expected X.Y.Z",
				   o->containerd_version);
	cnt = scandir(o->config_path, &ents, NULL, alphasort);
	if (cnt < 0)
		return log_err_set(err, -errno, "%s: %s", o->config_path, strerror(errno));
	for (i = 0; i < cnt; i++) {
		const char *name = ents[i]->d_name;
		char dir[PATH_MAX], file[PATH_MAX], alt[PATH_MAX];
		struct strbuf text = STRBUF_INIT(MIRROR_MAX_FILE);
		int r;

		if (name[0] == '.' || !strcmp(name, MIRROR_BACKUP_DIR) ||
		    !is_dir_at(o->config_path, name))
			continue;
		if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", o->config_path, name) >=
			sizeof(dir) - sizeof("/hosts.toml") ||
		    (size_t)snprintf(file, sizeof(file), "%s/hosts.toml", dir) >= sizeof(file))
			continue;
		c.file = file;
		c.dir = dir;
		c.worst = MIRROR_CLEAN;
		/* containerd looks up <host>_<port>_ before <host>:<port> */
		if (strchr(name, ':')) {
			char *colon;

			snprintf(alt, sizeof(alt), "%s", name);
			colon = strrchr(alt, ':');
			*colon = '_';
			if (strlen(alt) + 1 < sizeof(alt))
				strcat(alt, "_");
			if (is_dir_at(o->config_path, alt))
				mirror_found(&c, MIRROR_WARNING, 0, 0,
					     "not used: containerd reads %s/%s first",
					     o->config_path, alt);
		}
		r = sb_read_file(&text, file);
		if (r == -ENOENT) {
			sb_free(&text);
			continue; /* certificate-only directory */
		}
		files++;
		if (r == -E2BIG)
			mirror_found(&c, MIRROR_ERROR, 0, 0,
				     "file too large (over %u KiB): not checked",
				     MIRROR_MAX_FILE / 1024);
		else if (r < 0)
			mirror_found(&c, MIRROR_ERROR, 0, 0, "cannot read: %s", strerror(-r));
		else
			r = mirror_check_hosts(text.buf, text.len, file, dir, o->containerd_version,
					       o->report, o->report_data);
		if (text.len && o->probe && o->targets.n == 0)
			collect_hosts(text.buf, text.len, &hosts);
		sb_free(&text);
		if (r > c.worst)
			c.worst = r;
		if (c.worst > worst)
			worst = c.worst;
	}
	for (i = 0; i < cnt; i++)
		free(ents[i]);
	free(ents);
	log_info("%s: checked %d hosts.toml file%s", o->config_path, files, files == 1 ? "" : "s");
	if (files == 0) {
		c.file = o->config_path;
		c.worst = MIRROR_CLEAN;
		mirror_found(&c, MIRROR_WARNING, 0, 0,
			     "no */hosts.toml: containerd uses no mirror");
		worst = c.worst > worst ? c.worst : worst;
	}
	if (o->containerd_config) {
		c.file = o->containerd_config;
		c.dir = NULL;
		c.worst = MIRROR_CLEAN;
		mirror_check_ctrd(&c, o->config_path);
		if (c.worst > worst)
			worst = c.worst;
	}
	if (o->probe) {
		int r = o->targets.n ? mirror_expand_targets(&o->targets, &hosts, err) : 0;

		if (r == 0)
			r = mirror_probe_run(o, &hosts, err);
		mirror_list_free(&hosts);
		if (r < 0)
			return r;
		if (r > worst)
			worst = r;
	}
	return worst;
}
