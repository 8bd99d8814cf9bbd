/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kube_config: kubeconfig (libyaml) and in-cluster service-account configuration. */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The kubeconfig files being merged, in order (client-go: the first to set a key wins). */
struct kc_files {
	struct ydoc doc[KUBE_CONFIG_FILES_MAX];
	char *dir[KUBE_CONFIG_FILES_MAX]; /* owned: relative paths are relative to the file */
	const char *path[KUBE_CONFIG_FILES_MAX];
	size_t n;
};

/* The first file whose list (clusters, contexts, users) has an entry named name. */
static yaml_node_t *merged_entry(struct kc_files *f, const char *list, const char *field,
				 const char *name, size_t *which)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		yaml_node_t *root = ydoc_root(&f->doc[i]);
		yaml_node_t *e =
		    root ? named_entry(&f->doc[i], ydoc_get(&f->doc[i], root, list), field, name)
			 : NULL;

		if (e) {
			*which = i;
			return e;
		}
	}
	return NULL;
}

/* The credential a user entry set, by its kubeconfig name. */
static const char *cred_name(const struct kube_config *cfg)
{
	if (cfg->token)
		return "token";
	if (cfg->token_file)
		return "tokenFile";
	return cfg->cert_pem ? "client-certificate-data" : "client-certificate";
}

/* What a file that is not a regular file is, for the message that refuses it. */
static const char *file_kind(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

static int load_merged(struct kube_config *cfg, struct kc_files *f, const char *context,
		       struct log_err *err)
{
	yaml_node_t *ctx, *cluster, *user;
	const char *ctxname = context, *v, *path = f->path[0], *cname, *uname;
	struct ydoc *doc;
	size_t i, w = 0;
	int r;

	for (i = 0; i < f->n; i++) {
		yaml_node_t *root = ydoc_root(&f->doc[i]);

		if (root && root->type != YAML_MAPPING_NODE)
			return log_err_set(err, KUBE_ECONFIG, "%s: not a kubeconfig (no mapping)",
					   f->path[i]);
		v = root ? ydoc_scalar(ydoc_get(&f->doc[i], root, "current-context")) : NULL;
		if (!ctxname && v && *v)
			ctxname = v;
	}
	if (!ctxname || !*ctxname)
		return log_err_set(err, KUBE_ECONFIG, "%s: current-context: not set", path);
	ctx = merged_entry(f, "contexts", "context", ctxname, &w);
	if (!ctx)
		return log_err_set(err, KUBE_ECONFIG, "%s: contexts: no context named '%s'", path,
				   ctxname);
	doc = &f->doc[w];
	path = f->path[w];
	cname = ydoc_scalar(ydoc_get(doc, ctx, "cluster"));
	uname = ydoc_scalar(ydoc_get(doc, ctx, "user"));
	v = ydoc_scalar(ydoc_get(doc, ctx, "namespace"));
	if (v && dup_to(&cfg->namespace, v) < 0)
		return -ENOMEM;
	cluster = cname ? merged_entry(f, "clusters", "cluster", cname, &w) : NULL;
	if (!cluster)
		return log_err_set(err, KUBE_ECONFIG,
				   "%s: clusters: no cluster '%s' for context '%s'", path,
				   cname ? cname : "", ctxname);
	doc = &f->doc[w];
	path = f->path[w];
	v = ydoc_scalar(ydoc_get(doc, cluster, "server"));
	if (!v || !*v)
		return log_err_set(err, KUBE_ECONFIG, "%s: clusters[%s].cluster.server: missing",
				   path, cname);
	if (strncmp(v, "https://", 8) != 0 && strncmp(v, "http://", 7) != 0)
		return log_err_set(err, KUBE_ECONFIG,
				   "%s: clusters[%s].cluster.server: '%s' is not an http(s) URL",
				   path, cname, v);
	if (dup_to(&cfg->server, v) < 0)
		return -ENOMEM;
	while (strlen(cfg->server) > 8 && cfg->server[strlen(cfg->server) - 1] == '/')
		cfg->server[strlen(cfg->server) - 1] = '\0';
	cfg->insecure = is_true(ydoc_scalar(ydoc_get(doc, cluster, "insecure-skip-tls-verify")));
	r = pem_field(doc, cluster, "certificate-authority", &cfg->ca_pem, &cfg->ca_pem_len,
		      &cfg->ca_file, f->dir[w], path, err);
	if (r < 0)
		return r;
	/* client-go's transport (TLSConfigFor) refuses the pair rather than pick one */
	if (cfg->insecure && (cfg->ca_pem || cfg->ca_file))
		return log_err_set(err, KUBE_ECONFIG,
				   "%s: clusters[%s].cluster: insecure-skip-tls-verify with a "
				   "certificate-authority is not allowed (as client-go)",
				   path, cname);

	user = uname ? merged_entry(f, "users", "user", uname, &w) : NULL;
	if (uname && !user)
		return log_err_set(err, KUBE_ECONFIG, "%s: users: no user '%s' for context '%s'",
				   path, uname, ctxname);
	if (!user)
		return 0;
	doc = &f->doc[w];
	path = f->path[w];
	v = ydoc_scalar(ydoc_get(doc, user, "token"));
	if (v && dup_to(&cfg->token, v) < 0)
		return -ENOMEM;
	v = ydoc_scalar(ydoc_get(doc, user, "tokenFile"));
	if (v && !cfg->token) {
		cfg->token_file = path_from(f->dir[w], v);
		if (!cfg->token_file)
			return -ENOMEM;
	}
	r = pem_field(doc, user, "client-certificate", &cfg->cert_pem, &cfg->cert_pem_len,
		      &cfg->cert_file, f->dir[w], path, err);
	if (r == 0)
		r = pem_field(doc, user, "client-key", &cfg->key_pem, &cfg->key_pem_len,
			      &cfg->key_file, f->dir[w], path, err);
	if (r < 0)
		return r;
	/* client-go runs these; without them we would send no credentials at all */
	if (!cfg->token && !cfg->token_file && !cfg->cert_pem && !cfg->cert_file) {
		static const char *const plugins[] = {"exec", "auth-provider"};
		size_t k;

		for (k = 0; k < 2; k++)
			if (ydoc_get(doc, user, plugins[k]))
				return log_err_set(
				    err, KUBE_ECONFIG,
				    "%s: users[%s].user.%s: credential plugins are not "
				    "supported (use a token, tokenFile or client "
				    "certificate)",
				    path, uname, plugins[k]);
	} else if (ydoc_get(doc, user, "exec")) {
		/*
		 * client-go does not run the plugin either when a token or client certificate is
		 * set (plugin/pkg/client/auth/exec/exec.go, UpdateTransportConfig: "we should
		 * assume the intention is to use the provided token"): said, not silent.
		 */
		log_warn("%s: users[%s].user: both exec and %s are set: %s is used and the exec "
			 "plugin is not run (as client-go and kubectl decide); remove one to "
			 "silence this",
			 path, uname, cred_name(cfg), cred_name(cfg));
	} else if (ydoc_get(doc, user, "auth-provider")) {
		log_warn("%s: users[%s].user: both auth-provider and %s are set: %s is used and "
			 "the auth-provider is not run (nodeprobe supports none); remove one to "
			 "silence this",
			 path, uname, cred_name(cfg), cred_name(cfg));
	}
	if ((cfg->cert_pem || cfg->cert_file) != (cfg->key_pem || cfg->key_file))
		return log_err_set(err, KUBE_ECONFIG,
				   "%s: users[%s]: client certificate and key must come together",
				   path, uname);
	return 0;
}

int kube_config_load_list(struct kube_config *cfg, const char *const *paths, size_t n,
			  const char *context, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(FILE_MAX);
	struct kc_files *f = calloc(1, sizeof(*f));
	size_t i;
	int r = 0;

	memset(cfg, 0, sizeof(*cfg));
	if (!f)
		return log_err_set(err, -ENOMEM, "out of memory");
	if (n > KUBE_CONFIG_FILES_MAX) {
		free(f);
		return log_err_set(
		    err, KUBE_ECONFIG,
		    "%zu kubeconfig files, more than the limit of %d: merge them into "
		    "fewer (kubectl config view --flatten)",
		    n, KUBE_CONFIG_FILES_MAX);
	}
	for (i = 0; i < n; i++) {
		struct stat st;
		char *copy;

		/* sb_read_file's -EINVAL would say "Invalid argument" for a FIFO */
		if (stat(paths[i], &st) == 0 && !S_ISREG(st.st_mode)) {
			r = log_err_set(err, KUBE_ECONFIG,
					"%s: is %s: a kubeconfig must be a regular file (or a "
					"symbolic link to one)",
					paths[i], file_kind(st.st_mode));
			break;
		}
		sb_reset(&sb);
		r = sb_read_file(&sb, paths[i]);
		if (r < 0) {
			if (r == -E2BIG)
				log_err_set(err, r,
					    "%s: larger than the limit of %d MiB for a kubeconfig",
					    paths[i], FILE_MAX >> 20);
			else
				log_err_set(err, r, "%s: %s", paths[i], strerror(-r));
			break;
		}
		r = ydoc_load(&f->doc[i], paths[i], sb.buf, sb.len, err);
		if (r < 0) {
			if (r == -EINVAL) { /* bad YAML: the kubeconfig is unusable */
				r = KUBE_ECONFIG;
				if (err)
					err->code = r;
			}
			break;
		}
		f->path[i] = paths[i];
		copy = strdup(paths[i]);
		f->dir[i] = copy ? strdup(dirname(copy)) : NULL;
		free(copy);
		f->n = i + 1;
		if (!f->dir[i]) {
			r = log_err_set(err, -ENOMEM, "out of memory");
			break;
		}
	}
	if (r == 0)
		r = load_merged(cfg, f, context, err);
	if (r == -ENOMEM)
		log_err_set(err, r, "out of memory");
	for (i = 0; i < f->n; i++) {
		ydoc_free(&f->doc[i]);
		free(f->dir[i]);
	}
	free(f);
	sb_free(&sb);
	return r;
}

int kube_config_load(struct kube_config *cfg, const char *path, const char *context,
		     struct log_err *err)
{
	return kube_config_load_list(cfg, &path, 1, context, err);
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
