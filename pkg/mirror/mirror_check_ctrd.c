/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_check_ctrd: check of containerd's config.toml and its imports (reads only). Calls
 * finding, distro. */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"
#include "mirror/mirror_internal.h"
#include "strbuf/strbuf.h"
#include "toml/toml.h"

static const struct toml_value *path_get(const struct toml_value *t, const char *const *keys)
{
	for (; *keys && t; keys++)
		t = toml_get(t, *keys);
	return t;
}

static bool same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (realpath(a, ra) && realpath(b, rb))
		return strcmp(ra, rb) == 0;
	return strcmp(a, b) == 0;
}

/* One parsed containerd config file: the main one or an import. */
struct ctrd_file {
	char *path;		 /* file name, for findings */
	struct toml_value *root; /* parsed */
	long long version;	 /* its config version (the main file's when unset) */
};

#define MAX_CONFIG_FILES 32

struct ctrd_config {
	struct ctrd_file f[MAX_CONFIG_FILES];
	size_t n;
};

static bool config_loaded(const struct ctrd_config *cf, const char *path)
{
	size_t i;

	for (i = 0; i < cf->n; i++)
		if (!strcmp(cf->f[i].path, path))
			return true;
	return false;
}

/*
 * containerd's LoadConfig: the file, then each of its imports (relative to its
 * directory, '*' globbed), depth first; a later file overrides an earlier one.
 */
static void load_config(struct mirror_checker *c, struct ctrd_config *cf, const char *path,
			long long version, int depth)
{
	struct strbuf text = STRBUF_INIT(MIRROR_MAX_FILE * 4);
	struct log_err err = {0};
	struct toml_value *root = NULL;
	const struct toml_value *ver, *imports;
	struct ctrd_file *f;
	size_t i;
	int r;

	if (config_loaded(cf, path))
		return;
	c->file = path;
	if (cf->n == MAX_CONFIG_FILES || depth > 8) {
		mirror_found(
		    c, MIRROR_WARNING, 0, 0,
		    "not read: imports go over %d files or %d levels deep; check this file with --containerd-config",
		    MAX_CONFIG_FILES, 8);
		return;
	}
	r = sb_read_file(&text, path);
	if (r < 0) {
		if (r == -E2BIG)
			mirror_found(c, MIRROR_ERROR, 0, 0, "file too large (over %u KiB)",
				     MIRROR_MAX_FILE * 4 / 1024);
		else
			mirror_found(c, MIRROR_ERROR, 0, 0, "cannot read: %s", strerror(-r));
		goto out;
	}
	if (toml_parse(text.buf, text.len, path, &root, &err) < 0) {
		mirror_found_parse_error(c, &err);
		goto out;
	}
	f = &cf->f[cf->n];
	f->path = strdup(path);
	if (!f->path)
		goto out;
	f->root = root;
	ver = toml_get(root, "version");
	f->version = ver && ver->type == TOML_INT ? ver->i : version;
	cf->n++;
	imports = toml_get(root, "imports");
	root = NULL; /* owned by cf now */
	for (i = 0; imports && imports->type == TOML_ARRAY && i < imports->n; i++) {
		const struct toml_value *im = imports->items[i];
		char want[PATH_MAX], dir[PATH_MAX], *slash;
		glob_t g;
		size_t j;

		if (im->type != TOML_STRING)
			continue;
		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (im->str[0] == '/' && c->o && c->o->distro != MIRROR_DISTRO_UNSET)
			mirror_host_path(want, sizeof(want), c->o->host_root, im->str);
		else if (im->str[0] == '/' || !slash)
			snprintf(want, sizeof(want), "%s", im->str);
		else
			snprintf(want, sizeof(want), "%.*s/%s", (int)(slash - dir), dir, im->str);
		if (strchr(want, '*')) {
			if (glob(want, 0, NULL, &g) != 0)
				continue; /* no match is fine */
			for (j = 0; j < g.gl_pathc; j++)
				load_config(c, cf, g.gl_pathv[j], f->version, depth + 1);
			globfree(&g);
		} else if (access(want, R_OK) != 0) {
			c->file = path;
			mirror_found(c, MIRROR_ERROR, im->line, im->col,
				     "import '%s' cannot be read (%s): containerd does not start",
				     want, strerror(errno));
		} else {
			load_config(c, cf, want, f->version, depth + 1);
		}
	}
out:
	toml_free(root);
	sb_free(&text);
}

/* The CRI registry plugin's name in a config of this version. */
static const char *cri_plugin(long long version)
{
	if (version == 3)
		return "io.containerd.cri.v1.images";
	return version == 2 ? "io.containerd.grpc.v1.cri" : "cri";
}

/*
 * The last value, over the main file and its imports, of the CRI registry
 * key (registry = true) or of discard_unpacked_layers; *file = its file.
 */
static const struct toml_value *config_get(const struct ctrd_config *cf, const char *key,
					   bool registry, const char **file)
{
	size_t i = cf->n;

	while (i-- > 0) {
		const char *plugin = cri_plugin(cf->f[i].version);
		const char *const kreg[] = {"plugins", plugin, "registry", key, NULL};
		const char *const kd3[] = {"plugins", plugin, key, NULL};
		const char *const kd2[] = {"plugins", plugin, "containerd", key, NULL};
		const char *const *keys = registry ? kreg : cf->f[i].version == 3 ? kd3 : kd2;
		const struct toml_value *v = path_get(cf->f[i].root, keys);

		if (v) {
			*file = cf->f[i].path;
			return v;
		}
	}
	return NULL;
}

/*
 * With --distro: the fix for discard_unpacked_layers or config_path into fix
 * and c->fix (the next finding carries it). fix must outlive that finding.
 */
static void set_fix(struct mirror_checker *c, struct strbuf *fix, long long version, bool discard)
{
	struct mirror_fix_req q = {0};

	sb_reset(fix);
	if (!c->o || !mirror_distro_info(c->o->distro))
		return;
	q.distro = c->o->distro;
	q.distro_version = c->o->distro_version;
	q.containerd_major = c->ver.known ? c->ver.major : 0;
	q.config_version = version == 3 ? 3 : 2;
	q.discard = discard;
	q.config_path = !discard;
	if (mirror_distro_fix(fix, &q) == 0 && fix->len)
		c->fix = fix->buf;
}

/* The config path as the host sees it: --host-root taken off. */
static const char *host_view(const struct mirror_checker *c, const char *config_path)
{
	const char *root = c->o ? c->o->host_root : NULL;
	size_t rl = root ? strlen(root) : 0;

	while (rl > 0 && root[rl - 1] == '/')
		rl--;
	if (rl && !strncmp(config_path, root, rl) && config_path[rl] == '/')
		return config_path + rl;
	return config_path;
}

void mirror_check_ctrd(struct mirror_checker *c, const char *config_path)
{
	struct strbuf fix = STRBUF_INIT(8192);
	struct ctrd_config cf = {0};
	const struct toml_value *cp, *mirrors, *discard, *configs;
	const char *main_file = c->file, *cp_file = NULL, *m_file = NULL, *d_file = NULL;
	const char *c_file = NULL;
	long long version;
	size_t i;

	load_config(c, &cf, main_file, 1, 0);
	c->file = main_file;
	if (cf.n == 0 || strcmp(cf.f[0].path, main_file) != 0)
		goto out;
	version = cf.f[0].version;
	cp = config_get(&cf, "config_path", true, &cp_file);
	mirrors = config_get(&cf, "mirrors", true, &m_file);
	discard = config_get(&cf, "discard_unpacked_layers", false, &d_file);
	if (discard && discard->type == TOML_BOOL && discard->b) {
		c->file = d_file;
		set_fix(c, &fix, version, true);
		mirror_found(
		    c, MIRROR_ERROR, discard->line, discard->col,
		    "discard_unpacked_layers = true: layers are deleted after unpacking, so this node cannot serve them to Spegel");
	}
	if (mirrors && mirrors->type == TOML_TABLE && mirrors->n && cp) {
		c->file = m_file;
		mirror_found(
		    c, MIRROR_ERROR, mirrors->line, mirrors->col,
		    "legacy 'mirrors' set beside config_path: containerd's CRI plugin refuses to start");
	}
	configs = config_get(&cf, "configs", true, &c_file);
	for (i = 0; cp && configs && configs->type == TOML_TABLE && i < configs->n; i++) {
		const struct toml_value *tls = toml_get(configs->items[i], "tls");

		if (!tls)
			continue;
		c->file = c_file;
		mirror_found(
		    c, MIRROR_ERROR, tls->line, tls->col,
		    "legacy registry.configs.\"%s\".tls set beside config_path: containerd's CRI plugin refuses to start",
		    configs->keys[i]);
	}
	c->file = main_file;
	if (!cp) {
		if (version == 3 && !(mirrors && mirrors->n) && c->ver.known &&
		    (c->ver.major > 2 || (c->ver.major == 2 && c->ver.minor >= 2)) &&
		    (same_dir(host_view(c, config_path), "/etc/containerd/certs.d") ||
		     same_dir(host_view(c, config_path), "/etc/docker/certs.d")))
			goto out;
		set_fix(c, &fix, version, false);
		mirror_found(
		    c, MIRROR_ERROR, 0, 0,
		    "[plugins.\"%s\".registry] config_path is not set: the CRI never reads %s",
		    cri_plugin(version), config_path);
		goto out;
	}
	c->file = cp_file;
	if (cp->type != TOML_STRING) {
		mirror_found(c, MIRROR_ERROR, cp->line, cp->col,
			     "config_path must be a string, not %s", mirror_toml_type(cp));
		goto out;
	}
	{
		char *list = strdup(cp->str), *save = NULL, *p;
		bool ok = false;

		for (p = list ? strtok_r(list, ":", &save) : NULL; p && !ok;
		     p = strtok_r(NULL, ":", &save))
			ok = same_dir(p, config_path) || same_dir(p, host_view(c, config_path));
		free(list);
		if (!ok)
			set_fix(c, &fix, version, false);
		if (!ok)
			mirror_found(c, MIRROR_ERROR, cp->line, cp->col,
				     "config_path '%s' does not include %s", cp->str, config_path);
	}
out:
	c->file = main_file;
	c->fix = NULL;
	sb_free(&fix);
	for (i = 0; i < cf.n; i++) {
		free(cf.f[i].path);
		toml_free(cf.f[i].root);
	}
}
