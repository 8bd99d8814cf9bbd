/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror config: options from the environment and a YAML file, below the command line. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "goconv/goconv.h"
#include "log/log.h"
#include "mirror/mirror_internal.h"
#include "strbuf/strbuf.h"
#include "ydoc/ydoc.h"

void mirror_opts_init(struct mirror_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->resolve_tags = -1;
	o->prepend_existing = -1;
}

void mirror_opts_free(struct mirror_opts *o)
{
	free(o->config_file);
	free(o->config_path);
	mirror_list_free(&o->registries);
	mirror_list_free(&o->targets);
	free(o->dial_timeout);
	free(o->basic_auth_dir);
	free(o->containerd_config);
	free(o->containerd_version);
	free(o->distro_version);
	free(o->host_root);
	free(o->image);
	mirror_opts_init(o);
}

static int set_str(char **dst, const char *val)
{
	if (*dst)
		return 0;
	*dst = strdup(val);
	return *dst ? 0 : -ENOMEM;
}

static int set_bool(int *dst, const char *val, const char *what, struct log_err *err)
{
	int b;

	if (*dst >= 0)
		return 0;
	/*
	 * Spegel reads these with Go's strconv.ParseBool; the YAML file also takes
	 * YAML 1.1's yes/no, and any case (as this option always did).
	 */
	b = goconv_parse_bool(val);
	if (b < 0 && (!strcasecmp(val, "true") || !strcasecmp(val, "yes")))
		b = 1;
	else if (b < 0 && (!strcasecmp(val, "false") || !strcasecmp(val, "no")))
		b = 0;
	if (b < 0)
		return log_err_set(err, -EINVAL, "%s: '%s' is not true or false", what, val);
	*dst = b;
	return 0;
}

static int set_duration(char **dst, const char *val, const char *what, struct log_err *err)
{
	if (*dst)
		return 0;
	if (mirror_dial_timeout_problem(val))
		return log_err_set(err, -EINVAL, "%s: '%s' %s", what, val,
				   mirror_dial_timeout_problem(val));
	return set_str(dst, val) < 0 ? log_err_set(err, -ENOMEM, "out of memory") : 0;
}

/* ---- environment ---- */

static int from_env(struct mirror_opts *o, struct log_err *err)
{
	const char *v;
	int r = 0;

	if ((v = getenv("CONTAINERD_REGISTRY_CONFIG_PATH")) && *v)
		r = set_str(&o->config_path, v);
	if (r == 0 && (v = getenv("MIRRORED_REGISTRIES")) && *v && o->registries.n == 0)
		r = mirror_list_add_split(&o->registries, v);
	if (r == 0 && (v = getenv("MIRROR_TARGETS")) && *v && o->targets.n == 0)
		r = mirror_list_add_split(&o->targets, v);
	if (r == 0 && (v = getenv("MIRROR_BASIC_AUTH_DIR")) && *v)
		r = set_str(&o->basic_auth_dir, v);
	if (r < 0)
		return log_err_set(err, r, "environment: %s", strerror(-r));
	if ((v = getenv("MIRROR_DIAL_TIMEOUT")) && *v)
		r = set_duration(&o->dial_timeout, v, "MIRROR_DIAL_TIMEOUT", err);
	if (r == 0 && (v = getenv("RESOLVE_TAGS")) && *v)
		r = set_bool(&o->resolve_tags, v, "RESOLVE_TAGS", err);
	if (r == 0 && (v = getenv("PREPEND_EXISTING")) && *v)
		r = set_bool(&o->prepend_existing, v, "PREPEND_EXISTING", err);
	return r;
}

/* ---- YAML file ---- */

static int ylist(struct ydoc *y, const char *key, yaml_node_t *n, struct mirror_list *l)
{
	yaml_node_item_t *it;
	int r;

	if (l->n) /* set on the command line or in the environment */
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return ydoc_fail(y, n, "%s: expected a list", key);
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = ydoc_node(y, *it);
		const char *s = ydoc_scalar(e);

		if (!s)
			return ydoc_fail(y, e ? e : n, "%s: items must be strings", key);
		r = mirror_list_add(l, s);
		if (r < 0)
			return log_err_set(y->err, r, "%s: out of memory", y->file);
	}
	return 0;
}

static int from_yaml(struct mirror_opts *o, struct log_err *err)
{
	struct ydoc y;
	yaml_node_t *root;
	yaml_node_pair_t *pr;
	struct strbuf text = STRBUF_INIT(1 << 20);
	int r;

	r = sb_read_file(&text, o->config_file);
	if (r < 0)
		return log_err_set(err, r, "%s: %s", o->config_file, strerror(-r));
	r = ydoc_load(&y, o->config_file, text.buf, text.len, err);
	if (r < 0) {
		sb_free(&text);
		return r;
	}
	root = ydoc_root(&y);
	if (!root)
		goto out; /* empty file */
	if (root->type != YAML_MAPPING_NODE) {
		r = ydoc_fail(&y, root, "expected a mapping of options");
		goto out;
	}
	for (pr = root->data.mapping.pairs.start; r == 0 && pr < root->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *kn = ydoc_node(&y, pr->key);
		yaml_node_t *vn = ydoc_node(&y, pr->value);
		const char *k = ydoc_scalar(kn), *v = ydoc_scalar(vn);
		char what[128];

		if (!k || !vn) {
			r = ydoc_fail(&y, kn ? kn : root, "keys must be strings");
			break;
		}
		snprintf(what, sizeof(what), "%s:%lu:%lu: %s", o->config_file,
			 (unsigned long)vn->start_mark.line + 1,
			 (unsigned long)vn->start_mark.column + 1, k);
		if (!strcmp(k, "mirroredRegistries")) {
			r = ylist(&y, k, vn, &o->registries);
		} else if (!strcmp(k, "mirrorTargets")) {
			r = ylist(&y, k, vn, &o->targets);
		} else if (!v) {
			r = ydoc_fail(&y, vn, "%s: expected a single value", k);
		} else if (!strcmp(k, "containerdRegistryConfigPath")) {
			r = set_str(&o->config_path, v);
		} else if (!strcmp(k, "dialTimeout")) {
			r = set_duration(&o->dial_timeout, v, what, err);
		} else if (!strcmp(k, "basicAuthDir")) {
			r = set_str(&o->basic_auth_dir, v);
		} else if (!strcmp(k, "resolveTags")) {
			r = set_bool(&o->resolve_tags, v, what, err);
		} else if (!strcmp(k, "prependExisting")) {
			r = set_bool(&o->prepend_existing, v, what, err);
		} else {
			r = ydoc_fail(&y, kn, "unknown option '%s'", k);
		}
		if (r == -ENOMEM)
			log_err_set(err, r, "out of memory");
	}
out:
	ydoc_free(&y);
	sb_free(&text);
	return r;
}

/* --distro: detect (auto), then the distro's config path and containerd config. */
static int resolve_distro(struct mirror_opts *o, struct log_err *err)
{
	const struct mirror_distro_info *di;
	char path[PATH_MAX], ver[64] = "";
	int d;

	if (o->distro == MIRROR_DISTRO_AUTO) {
		d = mirror_distro_detect(o->host_root, ver, sizeof(ver), err);
		if (d < 0)
			return d;
		o->distro = (enum mirror_distro)d;
		log_info("--distro auto: %s%s%s", mirror_distro_name(o->distro), *ver ? " " : "",
			 ver);
		if (*ver && !o->distro_version && set_str(&o->distro_version, ver) < 0)
			return log_err_set(err, -ENOMEM, "out of memory");
	}
	di = mirror_distro_info(o->distro);
	if (!di)
		return 0;
	if (!o->config_path) {
		if (mirror_host_path(path, sizeof(path), o->host_root, di->config_path) < 0)
			return log_err_set(err, -ENAMETOOLONG, "--host-root: path too long");
		if (set_str(&o->config_path, path) < 0)
			return log_err_set(err, -ENOMEM, "out of memory");
	}
	if (!o->containerd_config && o->cmd == MIRROR_CHECK) {
		if (mirror_host_path(path, sizeof(path), o->host_root, di->containerd_config) < 0)
			return log_err_set(err, -ENAMETOOLONG, "--host-root: path too long");
		if (access(path, F_OK) == 0 && set_str(&o->containerd_config, path) < 0)
			return log_err_set(err, -ENOMEM, "out of memory");
		if (!o->containerd_config)
			log_warn("%s: not found, containerd's config is not checked", path);
	}
	return 0;
}

int mirror_opts_resolve(struct mirror_opts *o, struct log_err *err)
{
	const char *v;
	int64_t ns;
	int r;

	if (!o->config_file && (v = getenv("NODEPROBE_MIRROR_CONFIG")) && *v) {
		o->config_file = strdup(v);
		if (!o->config_file)
			return log_err_set(err, -ENOMEM, "out of memory");
	}
	r = from_env(o, err);
	if (r == 0 && o->config_file)
		r = from_yaml(o, err);
	if (r == 0)
		r = resolve_distro(o, err);
	if (r < 0)
		return r;
	if (!o->config_path && set_str(&o->config_path, MIRROR_DEFAULT_CONFIG_PATH) < 0)
		return log_err_set(err, -ENOMEM, "out of memory");
	/* Spegel writes dial_timeout = '200ms'; a zero duration ("0", "0s") leaves it out */
	if (!o->dial_timeout && set_str(&o->dial_timeout, MIRROR_DEFAULT_DIAL_TIMEOUT) < 0)
		return log_err_set(err, -ENOMEM, "out of memory");
	if (goconv_parse_duration(o->dial_timeout, &ns) == 0 && ns == 0) {
		free(o->dial_timeout);
		o->dial_timeout = NULL;
	}
	/* Spegel reads /etc/secrets/basic-auth when its chart mounts a Secret there */
	if (!o->basic_auth_dir && set_str(&o->basic_auth_dir, MIRROR_DEFAULT_BASIC_AUTH_DIR) < 0)
		return log_err_set(err, -ENOMEM, "out of memory");
	if (!*o->basic_auth_dir) {
		free(o->basic_auth_dir);
		o->basic_auth_dir = NULL;
	}
	if (o->targets.n == 0 &&
	    (o->cmd == MIRROR_CONFIGURE || o->cmd == MIRROR_WATCH ||
	     o->cmd == MIRROR_TALOS_CONFIG) &&
	    mirror_list_add(&o->targets, MIRROR_DEFAULT_TARGET) < 0)
		return log_err_set(err, -ENOMEM, "out of memory");
	if (o->resolve_tags < 0)
		o->resolve_tags = 1;
	if (o->prepend_existing < 0)
		o->prepend_existing = 0;
	return 0;
}
