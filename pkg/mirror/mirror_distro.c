/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_distro: per-distribution containerd paths, detection, the fixes check prints, and the
 * registries k3s/RKE2 manage. Facts and their sources: nodeprobe-mirror(8), DISTRIBUTIONS. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yaml.h>

#include "fsutil/fsutil.h"
#include "log/log.h"
#include "mirror/mirror_internal.h"
#include "strbuf/strbuf.h"
#include "ydoc/ydoc.h"

/*
 * One row per distribution; paths as the host sees them.
 * Talos: config_path set by Talos (internal/pkg/containers/cri/containerd/containerd.go),
 *   /etc/cri/containerd.toml imports /etc/cri/conf.d/cri.toml (hack/cri-containerd.toml).
 * k3s/RKE2: pkg/agent/containerd/config.go writes certs.d/ from registries.yaml and
 *   regenerates config.toml at every start.
 * k0s: /etc/k0s/containerd.toml imports /etc/k0s/containerd.d/ drop-ins (docs/runtime.md);
 *   k0s sets no config_path, Spegel's docs use /etc/containerd/certs.d.
 * MicroK8s: ${SNAP_DATA}/args/certs.d, args/containerd-template.toml rendered into
 *   args/containerd.toml at each containerd start (microk8s-resources/default-args).
 * kind: /etc/containerd/config.toml baked into the node image (images/base/files).
 */
static const struct mirror_distro_info table[] = {
    {MIRROR_DISTRO_KUBEADM, "kubeadm", "/etc/containerd/certs.d", "/etc/containerd/config.toml",
     NULL},
    {MIRROR_DISTRO_TALOS, "talos", "/etc/cri/conf.d/hosts", "/etc/cri/containerd.toml", NULL},
    {MIRROR_DISTRO_K3S, "k3s", "/var/lib/rancher/k3s/agent/etc/containerd/certs.d",
     "/var/lib/rancher/k3s/agent/etc/containerd/config.toml", "/etc/rancher/k3s/registries.yaml"},
    {MIRROR_DISTRO_RKE2, "rke2", "/var/lib/rancher/rke2/agent/etc/containerd/certs.d",
     "/var/lib/rancher/rke2/agent/etc/containerd/config.toml", "/etc/rancher/rke2/registries.yaml"},
    {MIRROR_DISTRO_K0S, "k0s", "/etc/containerd/certs.d", "/etc/k0s/containerd.toml", NULL},
    {MIRROR_DISTRO_MICROK8S, "microk8s", "/var/snap/microk8s/current/args/certs.d",
     "/var/snap/microk8s/current/args/containerd.toml", NULL},
    {MIRROR_DISTRO_KIND, "kind", "/etc/containerd/certs.d", "/etc/containerd/config.toml", NULL},
};

#define NTABLE (sizeof(table) / sizeof(table[0]))

const struct mirror_distro_info *mirror_distro_info(enum mirror_distro d)
{
	size_t i;

	for (i = 0; i < NTABLE; i++)
		if (table[i].id == d)
			return &table[i];
	return NULL;
}

const char *mirror_distro_name(enum mirror_distro d)
{
	const struct mirror_distro_info *di = mirror_distro_info(d);

	if (d == MIRROR_DISTRO_AUTO)
		return "auto";
	return di ? di->name : NULL;
}

int mirror_distro_parse(const char *s)
{
	size_t i;

	if (!strcmp(s, "auto"))
		return MIRROR_DISTRO_AUTO;
	for (i = 0; i < NTABLE; i++)
		if (!strcmp(s, table[i].name))
			return (int)table[i].id;
	return -EINVAL;
}

int mirror_host_path(char *out, size_t size, const char *root, const char *path)
{
	size_t rl;

	if (!root || !*root || !strcmp(root, "/"))
		root = "";
	rl = strlen(root);
	while (rl > 0 && root[rl - 1] == '/')
		rl--;
	if ((size_t)snprintf(out, size, "%.*s%s", (int)rl, root, path) >= size)
		return -ENAMETOOLONG;
	return 0;
}

static bool dir_at(const char *root, const char *path)
{
	char p[PATH_MAX];

	return mirror_host_path(p, sizeof(p), root, path) == 0 && fs_is_dir(p);
}

/* os-release's ID and VERSION_ID (unquoted) from <root>/etc/os-release. */
static void os_release(const char *root, char *id, size_t isz, char *ver, size_t vsz)
{
	char p[PATH_MAX], line[256];
	FILE *f;

	*id = *ver = '\0';
	if (mirror_host_path(p, sizeof(p), root, "/etc/os-release") < 0)
		return;
	f = fopen(p, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, '='), *end;
		char *dst;
		size_t dsz;

		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(line, "ID")) {
			dst = id;
			dsz = isz;
		} else if (!strcmp(line, "VERSION_ID")) {
			dst = ver;
			dsz = vsz;
		} else {
			continue;
		}
		v += strspn(v, "\"'");
		end = v + strcspn(v, "\"'\n");
		snprintf(dst, dsz, "%.*s", (int)(end - v), v);
	}
	fclose(f);
}

int mirror_distro_detect(const char *root, char *version, size_t vsize, struct log_err *err)
{
	char id[64], ver[64];

	os_release(root, id, sizeof(id), ver, sizeof(ver));
	if (!strcmp(id, "talos")) {
		if (version && !*version)
			snprintf(version, vsize, "%s", ver[0] == 'v' ? ver + 1 : ver);
		return MIRROR_DISTRO_TALOS;
	}
	if (dir_at(root, "/var/lib/rancher/rke2/agent"))
		return MIRROR_DISTRO_RKE2;
	if (dir_at(root, "/var/lib/rancher/k3s/agent"))
		return MIRROR_DISTRO_K3S;
	if (dir_at(root, "/etc/k0s") || dir_at(root, "/var/lib/k0s"))
		return MIRROR_DISTRO_K0S;
	if (dir_at(root, "/var/snap/microk8s"))
		return MIRROR_DISTRO_MICROK8S;
	if (dir_at(root, "/kind")) /* kind's node image: /kind/version, /kind/manifests */
		return MIRROR_DISTRO_KIND;
	if (dir_at(root, "/etc/containerd"))
		return MIRROR_DISTRO_KUBEADM;
	return log_err_set(
	    err, -ENOENT,
	    "--distro auto: %s shows none of Talos (/etc/os-release ID=talos), RKE2, k3s (/var/lib/rancher), k0s, MicroK8s, kind (/kind) or /etc/containerd: pass --distro",
	    root && *root ? root : "/");
}

/* "1.13" -> 113, "v1.8.2" -> 108; -1 when unknown. */
static int minor_of(const char *v)
{
	int a, b;

	if (!v)
		return -1;
	if (*v == 'v')
		v++;
	if (sscanf(v, "%d.%d", &a, &b) != 2)
		return -1;
	return a * 100 + b;
}

/* The two TOML lines of each setting, in a v2 or v3 config. */
static int toml_fix(struct strbuf *out, const char *indent, bool v3, bool discard,
		    const char *config_path)
{
	const char *plugin = v3 ? "io.containerd.cri.v1.images" : "io.containerd.grpc.v1.cri";
	int r = 0;

	if (config_path)
		r = sb_addf(out, "%s[plugins.\"%s\".registry]\n%s  config_path = \"%s\"\n", indent,
			    plugin, indent, config_path);
	if (r == 0 && discard)
		r = sb_addf(out, "%s[plugins.\"%s\"%s]\n%s  discard_unpacked_layers = false\n",
			    indent, plugin, v3 ? "" : ".containerd", indent);
	return r;
}

int mirror_distro_fix(struct strbuf *out, const struct mirror_fix_req *q)
{
	const struct mirror_distro_info *di = mirror_distro_info(q->distro);
	int dv = minor_of(q->distro_version), r = 0;
	const char *cp = q->config_path ? di->config_path : NULL;
	bool v3 = q->config_version == 3;

	if (!di)
		return 0;
	switch (q->distro) {
	case MIRROR_DISTRO_TALOS:
		if (q->config_path) {
			r = sb_add(
			    out,
			    "Talos sets config_path = /etc/cri/conf.d/hosts itself: run with --distro talos and do not override it\n");
			if (!q->discard)
				break;
		}
		if (dv >= 0 && dv < 114) {
			r = sb_addf(
			    out,
			    "Talos %s: add this machine-config patch (talosctl patch mc --patch @spegel.yaml), then reboot the node:\n"
			    "  machine:\n    files:\n      - path: /etc/cri/conf.d/20-customization.part\n"
			    "        op: create\n        content: |\n",
			    q->distro_version);
			if (r == 0)
				r = toml_fix(out, "          ", dv >= 108, true, NULL);
			break;
		}
		r = sb_addf(
		    out,
		    "Talos %s: apply this machine-config document (talosctl patch mc --patch @spegel.yaml); CRI restarts, no reboot (before 1.14: a machine.files entry /etc/cri/conf.d/20-customization.part, see nodeprobe-mirror(8)):\n"
		    "  apiVersion: v1alpha1\n  kind: CRICustomizationConfig\n  name: spegel\n"
		    "  content: |\n",
		    dv >= 0 ? q->distro_version : "1.14 or later");
		if (r == 0)
			r = toml_fix(out, "      ", true, true, NULL);
		break;
	case MIRROR_DISTRO_K3S:
	case MIRROR_DISTRO_RKE2:
		if (q->config_path)
			r = sb_addf(out,
				    "%s writes config_path = %s itself: run with --distro %s\n",
				    di->name, di->config_path, di->name);
		if (r == 0 && q->discard)
			r = sb_addf(
			    out,
			    "%s regenerates config.toml at every start: remove discard_unpacked_layers from %s/config-v3.toml.tmpl (or config.toml.tmpl) next to it, then restart %s\n",
			    di->name,
			    q->distro == MIRROR_DISTRO_K3S
				? "/var/lib/rancher/k3s/agent/etc/containerd"
				: "/var/lib/rancher/rke2/agent/etc/containerd",
			    q->distro == MIRROR_DISTRO_K3S
				? "k3s (systemctl restart k3s)"
				: "rke2 (systemctl restart rke2-server or rke2-agent)");
		break;
	case MIRROR_DISTRO_K0S:
		/* k0s <= 1.35 ships containerd 1.7 and takes v2 drop-ins; 1.36 ships 2.3, v3 only
		 */
		v3 = dv >= 0 ? dv >= 136
			     : (q->containerd_major > 0 ? q->containerd_major >= 2 : true);
		r = sb_addf(
		    out,
		    "k0s %s: write this drop-in as /etc/k0s/containerd.d/spegel.toml (k0s restarts containerd when it changes):\n  version = %d\n",
		    v3 ? "1.36 or later" : "1.35 or earlier", v3 ? 3 : 2);
		if (r == 0)
			r = toml_fix(out, "  ", v3, q->discard,
				     q->config_path ? di->config_path : NULL);
		break;
	case MIRROR_DISTRO_MICROK8S:
		r = sb_add(
		    out,
		    "MicroK8s renders args/containerd.toml from its template at every start: in /var/snap/microk8s/current/args/containerd-template.toml set the following, then run snap restart microk8s.daemon-containerd:\n");
		if (r == 0)
			r = toml_fix(out, "  ", false, q->discard,
				     q->config_path ? "${SNAP_DATA}/args/certs.d" : NULL);
		break;
	case MIRROR_DISTRO_KIND:
		r = sb_add(
		    out,
		    "kind: add to the Cluster config and recreate the cluster (kind create cluster --config FILE):\n"
		    "  containerdConfigPatches:\n    - |-\n");
		if (r == 0)
			r = toml_fix(out, "      ", false, q->discard, cp);
		break;
	case MIRROR_DISTRO_KUBEADM:
	default:
		r = sb_addf(
		    out,
		    "in %s (config version %d) set the following, then restart containerd (systemctl restart containerd):\n",
		    di->containerd_config, v3 ? 3 : 2);
		if (r == 0)
			r = toml_fix(out, "  ", v3, q->discard, cp);
		break;
	}
	sb_rtrim(out);
	return r;
}

/* ---- k3s / RKE2: what registries.yaml manages ---- */

/* k3s's first line of a hosts.toml it generated (pkg/agent/containerd/config.go). */
#define K3S_HEADER "# File generated by k3s. DO NOT EDIT."

static bool k3s_generated(const char *base, const char *name)
{
	char p[PATH_MAX], line[64];
	bool yes = false;
	FILE *f;

	if ((size_t)snprintf(p, sizeof(p), "%s/%s/" HOSTS_TOML, base, name) >= sizeof(p))
		return false;
	f = fopen(p, "re");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f))
		yes = !strncmp(line, K3S_HEADER, strlen(K3S_HEADER));
	fclose(f);
	return yes;
}

int mirror_distro_managed(const struct mirror_opts *o, struct mirror_list *names,
			  struct log_err *err)
{
	const struct mirror_distro_info *di = mirror_distro_info(o->distro);
	struct strbuf text = STRBUF_INIT(MIRROR_MAX_FILE);
	char path[PATH_MAX], **ents = NULL;
	size_t n = 0, i;
	struct ydoc y;
	yaml_node_t *root, *mirrors;
	yaml_node_pair_t *pr;
	int r = 0;

	if (!di || !di->registries_yaml)
		goto dirs; /* k3s's header is k3s's on any node, --distro or not */
	if (mirror_host_path(path, sizeof(path), o->host_root, di->registries_yaml) < 0)
		return log_err_set(err, -ENAMETOOLONG, "%s: path too long", o->host_root);
	r = sb_read_file(&text, path);
	if (r == -ENOENT) {
		r = 0;
		goto dirs;
	}
	if (r < 0) {
		r = mirror_read_error(err, path, r, MIRROR_MAX_FILE);
		goto out;
	}
	r = ydoc_load(&y, path, text.buf, text.len, err);
	if (r < 0)
		goto out;
	root = ydoc_root(&y);
	mirrors = root && root->type == YAML_MAPPING_NODE ? ydoc_get(&y, root, "mirrors") : NULL;
	if (mirrors && mirrors->type == YAML_MAPPING_NODE) {
		for (pr = mirrors->data.mapping.pairs.start;
		     r == 0 && pr < mirrors->data.mapping.pairs.top; pr++) {
			const char *k = ydoc_scalar(ydoc_node(&y, pr->key));

			if (k)
				r = mirror_list_add(names, !strcmp(k, "*") ? "_default" : k);
		}
	}
	ydoc_free(&y);
	if (r < 0)
		goto out;
dirs:
	/* and every directory holding a hosts.toml k3s generated (PR #10823's rule) */
	if (!fs_is_dir(o->config_path))
		goto out;
	r = fs_list_dir(o->config_path, &ents, &n, err);
	for (i = 0; r == 0 && i < n; i++)
		if (k3s_generated(o->config_path, ents[i]))
			r = mirror_list_add(names, ents[i]);
	fs_names_free(ents, n);
out:
	sb_free(&text);
	if (r == -ENOMEM)
		log_err_set(err, r, "out of memory");
	return r;
}
