/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kube_config: kubeconfig (libyaml) and in-cluster service-account configuration. */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "base64/base64.h"
#include "kube/kube.h"
#include "ydoc/ydoc.h"

#define FILE_MAX (4 * 1024 * 1024)

void kube_config_free(struct kube_config *cfg)
{
	free(cfg->server);
	free(cfg->ca_file);
	free(cfg->ca_pem);
	free(cfg->token);
	free(cfg->token_file);
	free(cfg->cert_file);
	free(cfg->key_file);
	free(cfg->cert_pem);
	free(cfg->key_pem);
	free(cfg->namespace);
	memset(cfg, 0, sizeof(*cfg));
}

/* *dst = a copy of s. Returns 0 or -ENOMEM. */
static int dup_to(char **dst, const char *s)
{
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

/* In a sequence of {name: X, <field>: {...}}, the <field> mapping of the entry named name. */
static yaml_node_t *named_entry(struct ydoc *doc, yaml_node_t *seq, const char *field,
				const char *name)
{
	yaml_node_item_t *it;

	if (!seq || seq->type != YAML_SEQUENCE_NODE)
		return NULL;
	for (it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *e = ydoc_node(doc, *it);
		const char *n = ydoc_scalar(ydoc_get(doc, e, "name"));

		if (n && strcmp(n, name) == 0)
			return ydoc_get(doc, e, field);
	}
	return NULL;
}

/* Duplicate a path, making a relative one relative to dir. */
static char *path_from(const char *dir, const char *p)
{
	char *out;

	if (p[0] == '/' || !dir)
		return strdup(p);
	if (asprintf(&out, "%s/%s", dir, p) < 0)
		return NULL;
	return out;
}

static int b64_field(const char *val, char **out, size_t *outlen, const char *path,
		     const char *field, struct log_err *err)
{
	size_t n = strlen(val);
	unsigned char *buf = malloc(n / 4 * 3 + 4);
	long r;

	if (!buf)
		return -ENOMEM;
	r = base64_decode(val, n, buf, n / 4 * 3 + 3);
	if (r < 0) {
		free(buf);
		return log_err_set(err, KUBE_ECONFIG, "%s: %s: not valid base64", path, field);
	}
	buf[r] = '\0';
	*out = (char *)buf;
	*outlen = (size_t)r;
	return 0;
}

/*
 * "<key>-data" (base64 PEM, wins) or "<key>" (a file, relative to dir) from map
 * into *pem and *len, or *file. Returns 0, -ENOMEM or KUBE_ECONFIG with err set.
 */
static int pem_field(struct ydoc *doc, yaml_node_t *map, const char *key, char **pem, size_t *len,
		     char **file, const char *dir, const char *path, struct log_err *err)
{
	char datakey[64];
	const char *v;

	snprintf(datakey, sizeof(datakey), "%s-data", key);
	v = ydoc_scalar(ydoc_get(doc, map, datakey));
	if (v)
		return b64_field(v, pem, len, path, datakey, err);
	v = ydoc_scalar(ydoc_get(doc, map, key));
	if (v)
		*file = path_from(dir, v);
	return v && !*file ? -ENOMEM : 0;
}

static int is_true(const char *s)
{
	return s && (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0);
}

static int load_doc(struct kube_config *cfg, struct ydoc *doc, const char *path, const char *dir,
		    const char *context, struct log_err *err)
{
	yaml_node_t *root = ydoc_root(doc), *ctx, *cluster, *user;
	const char *ctxname = context, *v;
	int r;

	if (!root || root->type != YAML_MAPPING_NODE)
		return log_err_set(err, KUBE_ECONFIG, "%s: not a kubeconfig (no mapping)", path);
	if (!ctxname)
		ctxname = ydoc_scalar(ydoc_get(doc, root, "current-context"));
	if (!ctxname || !*ctxname)
		return log_err_set(err, KUBE_ECONFIG, "%s: current-context: not set", path);
	ctx = named_entry(doc, ydoc_get(doc, root, "contexts"), "context", ctxname);
	if (!ctx)
		return log_err_set(err, KUBE_ECONFIG, "%s: contexts: no context named '%s'", path,
				   ctxname);
	v = ydoc_scalar(ydoc_get(doc, ctx, "cluster"));
	cluster = v ? named_entry(doc, ydoc_get(doc, root, "clusters"), "cluster", v) : NULL;
	if (!cluster)
		return log_err_set(err, KUBE_ECONFIG,
				   "%s: clusters: no cluster '%s' for context '%s'", path,
				   v ? v : "", ctxname);
	v = ydoc_scalar(ydoc_get(doc, ctx, "namespace"));
	if (v && dup_to(&cfg->namespace, v) < 0)
		return -ENOMEM;

	v = ydoc_scalar(ydoc_get(doc, cluster, "server"));
	if (!v || !*v)
		return log_err_set(err, KUBE_ECONFIG, "%s: clusters[%s].cluster.server: missing",
				   path, ydoc_scalar(ydoc_get(doc, ctx, "cluster")));
	if (strncmp(v, "https://", 8) != 0 && strncmp(v, "http://", 7) != 0)
		return log_err_set(err, KUBE_ECONFIG,
				   "%s: clusters[%s].cluster.server: '%s' is not an http(s) URL",
				   path, ydoc_scalar(ydoc_get(doc, ctx, "cluster")), v);
	if (dup_to(&cfg->server, v) < 0)
		return -ENOMEM;
	while (strlen(cfg->server) > 8 && cfg->server[strlen(cfg->server) - 1] == '/')
		cfg->server[strlen(cfg->server) - 1] = '\0';
	cfg->insecure = is_true(ydoc_scalar(ydoc_get(doc, cluster, "insecure-skip-tls-verify")));
	r = pem_field(doc, cluster, "certificate-authority", &cfg->ca_pem, &cfg->ca_pem_len,
		      &cfg->ca_file, dir, path, err);
	if (r < 0)
		return r;

	v = ydoc_scalar(ydoc_get(doc, ctx, "user"));
	user = v ? named_entry(doc, ydoc_get(doc, root, "users"), "user", v) : NULL;
	if (v && !user)
		return log_err_set(err, KUBE_ECONFIG, "%s: users: no user '%s' for context '%s'",
				   path, v, ctxname);
	if (!user)
		return 0;
	v = ydoc_scalar(ydoc_get(doc, user, "token"));
	if (v && dup_to(&cfg->token, v) < 0)
		return -ENOMEM;
	v = ydoc_scalar(ydoc_get(doc, user, "tokenFile"));
	if (v && !cfg->token) {
		cfg->token_file = path_from(dir, v);
		if (!cfg->token_file)
			return -ENOMEM;
	}
	r = pem_field(doc, user, "client-certificate", &cfg->cert_pem, &cfg->cert_pem_len,
		      &cfg->cert_file, dir, path, err);
	if (r == 0)
		r = pem_field(doc, user, "client-key", &cfg->key_pem, &cfg->key_pem_len,
			      &cfg->key_file, dir, path, err);
	if (r < 0)
		return r;
	if ((cfg->cert_pem || cfg->cert_file) != (cfg->key_pem || cfg->key_file))
		return log_err_set(err, KUBE_ECONFIG,
				   "%s: users[%s]: client certificate and key must come together",
				   path, ydoc_scalar(ydoc_get(doc, ctx, "user")));
	return 0;
}

int kube_config_load(struct kube_config *cfg, const char *path, const char *context,
		     struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(FILE_MAX);
	struct ydoc doc;
	char *pathcopy = NULL, *dir;
	int r;

	memset(cfg, 0, sizeof(*cfg));
	r = sb_read_file(&sb, path);
	if (r < 0) {
		log_err_set(err, r, "%s: %s", path, r == -E2BIG ? "file too large" : strerror(-r));
		sb_free(&sb);
		return r;
	}
	r = ydoc_load(&doc, path, sb.buf, sb.len, err);
	if (r < 0) {
		sb_free(&sb);
		if (r == -EINVAL) { /* bad YAML: the kubeconfig is unusable */
			r = KUBE_ECONFIG;
			if (err)
				err->code = r;
		}
		return r;
	}
	pathcopy = strdup(path);
	dir = pathcopy ? dirname(pathcopy) : NULL;
	r = load_doc(cfg, &doc, path, dir, context, err);
	if (r == -ENOMEM)
		log_err_set(err, r, "out of memory");
	free(pathcopy);
	ydoc_free(&doc);
	sb_free(&sb);
	return r;
}

int kube_config_in_cluster(struct kube_config *cfg, const char *sa_dir, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(4096);
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	int r;

	memset(cfg, 0, sizeof(*cfg));
	if (!host || !*host || !port || !*port)
		return log_err_set(
		    err, KUBE_ECONFIG,
		    "not in a cluster: KUBERNETES_SERVICE_HOST/PORT unset (use --kubeconfig)");
	if (strchr(host, ':'))
		r = asprintf(&cfg->server, "https://[%s]:%s", host, port);
	else
		r = asprintf(&cfg->server, "https://%s:%s", host, port);
	if (r < 0) {
		cfg->server = NULL;
		return -ENOMEM;
	}
	if (asprintf(&cfg->token_file, "%s/token", sa_dir) < 0 ||
	    asprintf(&cfg->ca_file, "%s/ca.crt", sa_dir) < 0)
		return -ENOMEM;
	r = sb_read_file(&sb, cfg->token_file);
	if (r < 0)
		return log_err_set(err, KUBE_ECONFIG, "%s: %s", cfg->token_file, strerror(-r));
	sb_reset(&sb);
	r = sb_read_file(&sb, cfg->ca_file);
	if (r < 0) {
		sb_free(&sb);
		return log_err_set(err, KUBE_ECONFIG, "%s: %s", cfg->ca_file, strerror(-r));
	}
	sb_reset(&sb);
	{
		char *nsfile;

		if (asprintf(&nsfile, "%s/namespace", sa_dir) < 0) {
			sb_free(&sb);
			return -ENOMEM;
		}
		if (sb_read_file(&sb, nsfile) >= 0) {
			sb_rtrim(&sb);
			if (sb.len)
				cfg->namespace = sb_take(&sb);
		}
		free(nsfile);
	}
	sb_free(&sb);
	return 0;
}
