/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_scan: a class's devices under the dev and sys roots (globs, USB and PCI through sysfs,
 * GPUs), their IDs; each path resolved and checked by devices_path.c. */
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha1.h>

#include "devices/devices_internal.h"
#include "feature/feature.h"
#include "fsutil/fsutil.h"
#include "label/label.h"
#include "log/log.h"
#include "pciscan/pciscan.h"
#include "rules/rules.h"
#include "strbuf/strbuf.h"
#include "usb/usb.h"

#define PATH_LEN 4096

static const char *dev_root(const struct devices_roots *r)
{
	return r && r->dev ? r->dev : "/dev";
}

static const char *sys_root(const struct devices_roots *r)
{
	return r && r->sys ? r->sys : "/sys";
}

/*
 * host as a node of kind want (devices_path.c): 0 with its resolved host path in out (and n's type
 * and rdev when n is not NULL), DPATH_IS_DIR, or <0 after one warning naming it and what is wrong
 * (none when it is gone: hotplug raced the scan).
 */
static int offer(const struct devices_roots *r, const struct dclass *k, const char *host,
		 enum dpath_want want, char *out, size_t size, struct devices_node *n)
{
	const char *why;
	int rc = dpath_check(r, host, want, out, size, n, &why);

	if (rc < 0 && rc != -ENOENT)
		log_warn("class '%s': %s: %s; skipped", k->name, host, why);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Glob pattern (a host path) under the roots: sorted host paths (as Go's filepath.Glob +
 * sort.Strings). Returns how many, -E2BIG over DEVICES_MATCH_MAX, -ENOMEM. */
static int glob_host(const struct devices_roots *r, const char *pattern, char ***out,
		     struct log_err *err)
{
	char p[PATH_LEN], h[PATH_LEN];
	glob_t g;
	size_t i, n;
	int rc;

	*out = NULL;
	if (dpath_rooted(r, pattern, p, sizeof(p)) < 0)
		return log_err_set(err, -ENAMETOOLONG, "%s: path too long", pattern);
	rc = glob(p, 0, NULL, &g);
	if (rc == GLOB_NOMATCH)
		return 0;
	if (rc)
		return log_err_set(err, rc == GLOB_NOSPACE ? -ENOMEM : -EIO, "%s: glob failed", p);
	if (g.gl_pathc > DEVICES_MATCH_MAX) {
		globfree(&g);
		return log_err_set(err, -E2BIG, "%s: more than %d matches", pattern,
				   DEVICES_MATCH_MAX);
	}
	*out = calloc(g.gl_pathc + 1, sizeof(char *));
	for (i = 0, n = 0; *out && i < g.gl_pathc; i++) {
		if (dpath_unrooted(r, g.gl_pathv[i], h, sizeof(h)) < 0)
			break;
		if (dpath_has_dots(h)) /* glob's ".*" or "[.]" matches "." and "..": never */
			continue;
		if (!((*out)[n] = strdup(h)))
			break;
		n++;
	}
	rc = i < g.gl_pathc ? -1 : (int)n;
	globfree(&g);
	if (!*out || rc < 0) {
		fs_names_free(*out, n);
		*out = NULL;
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	qsort(*out, (size_t)rc, sizeof(char *), cmp_str);
	return rc;
}

/* ------------------------------------------------------------ building the list */

static void dev_clear(struct devices_dev *d)
{
	for (size_t j = 0; j < d->n_nodes; j++) {
		free(d->nodes[j].host);
		free(d->nodes[j].container);
	}
	free(d->nodes);
	fs_names_free(d->ids, d->n_ids);
	free(d->name);
}

void devices_found_free(struct devices_found *f)
{
	for (size_t i = 0; i < f->n; i++)
		dev_clear(&f->d[i]);
	free(f->idx);
	f->idx = NULL;
	f->n_idx = 0;
	free(f->d);
	f->d = NULL;
	f->n = 0;
}

static struct devices_dev *dev_new(struct devices_found *f, struct log_err *err)
{
	struct devices_dev *d;

	if (f->n >= DEVICES_MATCH_MAX) {
		log_err_set(err, -E2BIG, "more than %d devices in one class", DEVICES_MATCH_MAX);
		return NULL;
	}
	d = realloc(f->d, (f->n + 1) * sizeof(*d));
	if (!d) {
		log_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	f->d = d;
	d = &f->d[f->n++];
	memset(d, 0, sizeof(*d));
	return d;
}

/* A node: host (resolved), container (NULL: host); t's type and rdev when t is not NULL. */
static int node_add(struct devices_dev *d, const char *host, const char *container,
		    const char *perms, bool mount, bool ro, const struct devices_node *t)
{
	struct devices_node *n = realloc(d->nodes, (d->n_nodes + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	d->nodes = n;
	n = &d->nodes[d->n_nodes++];
	memset(n, 0, sizeof(*n));
	n->host = strdup(host);
	n->container = strdup(container ? container : host);
	snprintf(n->perms, sizeof(n->perms), "%s", perms ? perms : "");
	n->mount = mount;
	n->read_only = ro;
	n->type = t ? t->type : 0;
	n->rdev = t ? t->rdev : 0;
	return n->host && n->container ? 0 : -ENOMEM;
}

/*
 * A CDI device name from the first node's file name (or hint): letters, digits and '_', '.', ':',
 * '-' (anything else becomes '_'), beginning and ending with a letter or digit ("dev" when none is
 * left), as the CDI grammar wants (container-device-interface pkg/cdi ValidateDeviceName); unique
 * in f: a repeat gets "_2", "_3"... (deterministic: in scan order).
 */
static int dev_name(struct devices_found *f, struct devices_dev *d, const char *hint)
{
	const char *base = hint ? hint : d->n_nodes ? strrchr(d->nodes[0].host, '/') : NULL;
	char name[128], try[160];
	size_t i, k, n = 0;

	base = base ? (base[0] == '/' ? base + 1 : base) : "";
	for (i = 0; base[i] && n + 1 < sizeof(name); i++) {
		unsigned char c = (unsigned char)base[i];

		if (!n && !isalnum(c)) /* from the first letter or digit */
			continue;
		name[n++] = isalnum(c) || strchr("_.:-", c) ? (char)c : '_';
	}
	while (n && !isalnum((unsigned char)name[n - 1]))
		n--;
	name[n] = 0;
	snprintf(try, sizeof(try), "%s", n ? name : "dev");
	for (k = 2;; k++) {
		bool dup = false;

		for (i = 0; i + 1 < f->n && !dup; i++)
			dup = f->d[i].name && !strcmp(f->d[i].name, try);
		if (!dup)
			break;
		snprintf(try, sizeof(try), "%s_%zu", n ? name : "dev", k);
	}
	d->name = strdup(try);
	return d->name ? 0 : -ENOMEM;
}

/*
 * squat's ID of share j: hex sha1 of j in decimal, then each host path. Nettle's SHA-1 (no
 * state beyond the context): libcrypto's initialisation alone cost 2-3.4 MB of resident pages,
 * most of the plugin's RSS (make bench, test/bench/devices.sh).
 */
static int squat_id(const struct devices_dev *d, unsigned j, char out[41])
{
	struct sha1_ctx c;
	uint8_t md[SHA1_DIGEST_SIZE];
	char num[16];

	snprintf(num, sizeof(num), "%u", j);
	sha1_init(&c);
	sha1_update(&c, strlen(num), (const uint8_t *)num);
	for (size_t k = 0; k < d->n_nodes; k++)
		sha1_update(&c, strlen(d->nodes[k].host), (const uint8_t *)d->nodes[k].host);
	sha1_digest(&c, sizeof(md), md);
	for (size_t i = 0; i < sizeof(md); i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	return 0;
}

/* Name d and give it count shares. */
static int dev_finish(struct devices_found *f, struct devices_dev *d, const struct dclass *k,
		      unsigned count, const char *hint, size_t *ids_total, struct log_err *err)
{
	unsigned j;
	char id[200];

	if (dev_name(f, d, hint) < 0)
		return log_err_set(err, -ENOMEM, "out of memory");
	if (*ids_total + count > DEVICES_IDS_MAX) /* the class is full: devices_scan stops here */
		return log_err_set(err, -EOVERFLOW, "class '%s': more than %d device IDs", k->name,
				   DEVICES_IDS_MAX);
	d->ids = calloc(count + 1, sizeof(char *));
	if (!d->ids)
		return log_err_set(err, -ENOMEM, "out of memory");
	for (j = 0; j < count; j++) {
		if (k->squat_ids) {
			if (squat_id(d, j, id) < 0)
				return log_err_set(err, -EIO, "sha1 failed");
		} else {
			snprintf(id, sizeof(id), "%s-%u", d->name, j);
		}
		if (!(d->ids[j] = strdup(id)))
			return log_err_set(err, -ENOMEM, "out of memory");
		d->n_ids++;
	}
	*ids_total += count;
	return 0;
}

/* ------------------------------------------------------------ squat's groups */

/* What containerd's DevicesFromPath (pkg/oci/utils_unix.go getDevices) leaves out of a directory
 * it expands: these subdirectories, and a "console". */
static bool runtime_skips(const char *name, bool dir)
{
	static const char *const skip[] = {"pts",  "shm",	  "fd",	   "mqueue",
					   ".lxc", ".lxd-mounts", ".udev", NULL};

	if (!dir)
		return !strcmp(name, "console");
	for (size_t i = 0; skip[i]; i++)
		if (!strcmp(name, skip[i]))
			return true;
	return false;
}

/*
 * A Device path that is a directory (squat's audio example: /dev/snd; /dev/bus/usb) becomes the
 * device nodes under it (sorted; container paths under its container path; other files skipped
 * with a warning): a CDI deviceNode must be a node, and the runtime gets the same nodes either
 * way: containerd's DevicesFromPath expands it recursively, leaving out what runtime_skips names
 * and every symbolic link (its DeviceFromPath lstats: /dev/snd/by-path's links are no nodes of
 * their own; no loops either); at most DEVICES_MATCH_MAX nodes and directories in all.
 */
static int expand_dirs(const struct devices_roots *r, const struct dclass *k, struct devices_dev *d,
		       struct log_err *err)
{
	size_t i, j;
	int rc = 0;

	for (i = 0; i < d->n_nodes && rc >= 0; i++) { /* directories found are appended: walked */
		char seen[PATH_LEN], h[PATH_LEN + 256], c[PATH_LEN + 256], res[PATH_LEN];
		char **names = NULL;
		size_t n = 0;

		if (d->nodes[i].mount || d->nodes[i].type != S_IFDIR ||
		    dpath_rooted(r, d->nodes[i].host, seen, sizeof(seen)) < 0 ||
		    fs_list_dir(seen, &names, &n, NULL) < 0)
			continue;
		for (j = 0; j < n && rc >= 0; j++) {
			struct devices_node t;
			char perms[4];
			int o;

			if (d->n_nodes >= DEVICES_MATCH_MAX) {
				log_warn(
				    "class '%s': %s: more than %d nodes under it; the rest left out",
				    k->name, d->nodes[i].host, DEVICES_MATCH_MAX);
				break;
			}
			if ((size_t)snprintf(h, sizeof(h), "%s/%s", d->nodes[i].host, names[j]) >=
				PATH_LEN ||
			    runtime_skips(names[j], false))
				continue;
			o = offer(r, k, h, DPATH_DEVICE_OR_DIR, res, sizeof(res), &t);
			if (o < 0 || strcmp(res, h) ||
			    (o == DPATH_IS_DIR && runtime_skips(names[j], true)))
				continue; /* skipped with a warning, a link, or pts... */
			snprintf(c, sizeof(c), "%s/%s", d->nodes[i].container, names[j]);
			memcpy(perms, d->nodes[i].perms, sizeof(perms)); /* node_add moves nodes */
			if (node_add(d, res, c, perms, false, false, &t) < 0)
				rc = log_err_set(err, -ENOMEM, "out of memory");
		}
		fs_names_free(names, n);
	}
	for (i = 0, j = 0; i < d->n_nodes; i++) { /* the directories themselves go */
		if (!d->nodes[i].mount && d->nodes[i].type == S_IFDIR) {
			free(d->nodes[i].host);
			free(d->nodes[i].container);
			continue;
		}
		d->nodes[j++] = d->nodes[i];
	}
	d->n_nodes = j;
	return rc;
}

/* One path's matches: as matched (squat's IDs hash these), resolved, and what each was. */
struct matches {
	char **seen;		/* host paths as the glob matched them */
	char **res;		/* resolved (devices_path.c) */
	struct devices_node *t; /* type and rdev of each */
	size_t n;
};

static void matches_free(struct matches *m)
{
	fs_names_free(m->seen, m->n);
	fs_names_free(m->res, m->n);
	free(m->t);
}

/* dp's glob, each match offered (a Device: a device node, or a directory named without a glob
 * character; a Mount: anything inside its root); the others are left out with a warning. */
static int match_path(const struct devices_roots *r, const struct dclass *k, const struct dpath *dp,
		      struct matches *m, struct log_err *err)
{
	enum dpath_want want = dp->mount		    ? DPATH_MOUNT
			       : strpbrk(dp->path, "*?[\\") ? DPATH_DEVICE
							    : DPATH_DEVICE_OR_DIR;
	char res[PATH_LEN];
	size_t i, n = 0;
	int rc = glob_host(r, dp->path, &m->seen, err);

	if (rc < 0)
		return rc;
	m->n = (size_t)rc;
	m->res = calloc(m->n + 1, sizeof(char *));
	m->t = calloc(m->n + 1, sizeof(*m->t));
	if (!m->res || !m->t)
		return log_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < m->n; i++) {
		if (offer(r, k, m->seen[i], want, res, sizeof(res), &m->t[n]) < 0) {
			free(m->seen[i]);
			continue;
		}
		m->seen[n] = m->seen[i];
		if (!(m->res[n++] = strdup(res))) {
			while (++i < m->n)
				free(m->seen[i]);
			m->n = n; /* what is filled */
			return log_err_set(err, -ENOMEM, "out of memory");
		}
	}
	m->n = n;
	return 0;
}

/* squat's discoverPath: each path's sorted matches repeated limit times; as many devices as the
 * most matches of a path, capped at the fewest repeated matches of a path. */
static int scan_paths(const struct devices_roots *r, const struct dclass *k, const struct dgroup *g,
		      struct devices_found *f, size_t *ids, struct log_err *err)
{
	struct matches *m = calloc(g->np + 1, sizeof(*m));
	size_t i, p, length = 0, limited = 0;
	int rc = 0;

	if (!m) {
		rc = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (p = 0; p < g->np; p++) {
		rc = match_path(r, k, &g->p[p], &m[p], err);
		if (rc < 0)
			goto out;
		if (m[p].n > length)
			length = m[p].n;
		if (p == 0 || m[p].n * g->p[p].limit < limited)
			limited = m[p].n * g->p[p].limit;
	}
	if (length > limited)
		length = limited;
	for (i = 0; i < length; i++) {
		struct devices_dev *d = dev_new(f, err);

		if (!d) {
			rc = err ? err->code : -ENOMEM;
			goto out;
		}
		for (p = 0; p < g->np; p++) {
			const struct dpath *dp = &g->p[p];
			size_t at = i % m[p].n; /* the repeated list, as squat's */

			if (node_add(d, m[p].seen[at],
				     dp->mount_path ? dp->mount_path : m[p].seen[at],
				     dp->mount ? "" : dp->perms, dp->mount, dp->read_only,
				     &m[p].t[at]) < 0) {
				rc = log_err_set(err, -ENOMEM, "out of memory");
				goto out;
			}
		}
		rc = dev_finish(f, d, k, g->count, NULL, ids, err);
		for (p = 0; rc >= 0 && p < g->np; p++) { /* squat's IDs hashed the matches: now
							    the paths they resolve to */
			free(d->nodes[p].host);
			if (!(d->nodes[p].host = strdup(m[p].res[i % m[p].n])))
				rc = log_err_set(err, -ENOMEM, "out of memory");
		}
		if (rc >= 0)
			rc = expand_dirs(r, k, d, err);
		if (rc < 0)
			goto out;
	}
	rc = 0;
out:
	for (p = 0; m && p < g->np; p++)
		matches_free(&m[p]);
	free(m);
	return rc;
}

static int read_small(const char *dir, const char *name, char *out, size_t size)
{
	char p[PATH_LEN];
	struct strbuf sb = STRBUF_INIT(256);
	int r;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	r = sb_read_file(&sb, p);
	if (r >= 0) {
		sb_rtrim(&sb);
		snprintf(out, size, "%s", sb.buf ? sb.buf : "");
	}
	sb_free(&sb);
	return r < 0 ? r : 0;
}

/* squat's discoverUSB: every device matching one of the group's usb entries, as its
 * /dev/bus/usb/BBB/DDD node (rw), all in one device. squat prints bus and device numbers with
 * %03x; the kernel names the nodes in decimal, which we use (the same below 10). */
static int scan_usb(const struct devices_roots *r, const struct dclass *k, const struct dgroup *g,
		    struct devices_found *f, size_t *ids, struct log_err *err)
{
	char dir[PATH_LEN], sub[PATH_LEN + 256], v[64], pr[64], ser[400], bus[16], dn[16];
	struct devices_dev *d = NULL;
	char **names = NULL;
	size_t n = 0, i, u;
	int rc;

	snprintf(dir, sizeof(dir), "%s/bus/usb/devices", sys_root(r));
	if (!fs_is_dir(dir))
		return 0;
	rc = fs_list_dir(dir, &names, &n, err);
	if (rc < 0)
		return rc;
	for (i = 0; i < n && i < USB_DEVICES_MAX; i++) {
		char node[64], res[PATH_LEN];
		struct devices_node t;

		snprintf(sub, sizeof(sub), "%s/%s", dir, names[i]);
		if (read_small(sub, "idVendor", v, sizeof(v)) < 0 ||
		    read_small(sub, "idProduct", pr, sizeof(pr)) < 0 ||
		    read_small(sub, "busnum", bus, sizeof(bus)) < 0 ||
		    read_small(sub, "devnum", dn, sizeof(dn)) < 0)
			continue;
		if (read_small(sub, "serial", ser, sizeof(ser)) < 0)
			ser[0] = 0;
		for (u = 0; u < g->nu; u++) {
			const struct dusb *x = &g->u[u];

			if (strtoul(v, NULL, 16) == x->vendor &&
			    strtoul(pr, NULL, 16) == x->product &&
			    (!x->serial || !strcmp(x->serial, ser)))
				break;
		}
		if (u == g->nu)
			continue;
		snprintf(node, sizeof(node), "/dev/bus/usb/%03lu/%03lu", strtoul(bus, NULL, 10),
			 strtoul(dn, NULL, 10));
		if (offer(r, k, node, DPATH_DEVICE, res, sizeof(res), &t) < 0)
			continue;
		if (!d && !(d = dev_new(f, err))) {
			rc = err ? err->code : -ENOMEM;
			goto out;
		}
		if (node_add(d, res, node, "rw", false, false, &t) < 0) {
			rc = log_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
	}
	rc = d ? dev_finish(f, d, k, g->count, NULL, ids, err) : 0;
out:
	fs_names_free(names, n);
	return rc;
}

/* ------------------------------------------------------------ nodeprobe's selections */

/* Device nodes named in sysfs directory dir: entries whose name starts with one of prefixes
 * (and the same inside its tty, video4linux, hidraw, drm, accel, apex subdirectories), added to
 * d as /dev/<name> (drm: /dev/dri/<name>; accel: /dev/accel/<name>) when the node exists. */
static int nodes_in(const struct devices_roots *r, const struct dclass *k, const char *dir,
		    struct devices_dev *d, const char *perms, int depth, struct log_err *err)
{
	static const char *const pre[] = {"ttyUSB",  "ttyACM", "video", "hidraw", "card",
					  "renderD", "accel",  "apex_", NULL};
	static const char *const subs[] = {"tty",   "video4linux", "hidraw", "drm",
					   "accel", "apex",	   NULL};
	char **names = NULL, sub[PATH_LEN + 256], host[512], res[PATH_LEN];
	struct devices_node t;
	size_t n = 0, i, j;
	int rc = 0;

	if (!fs_is_dir(dir) || fs_list_dir(dir, &names, &n, NULL) < 0)
		return 0;
	for (i = 0; i < n && i < USB_DEVICES_MAX && rc >= 0; i++) {
		for (j = 0; subs[j] && strcmp(subs[j], names[i]); j++)
			;
		if (subs[j] && depth == 0) {
			snprintf(sub, sizeof(sub), "%s/%s", dir, names[i]);
			rc = nodes_in(r, k, sub, d, perms, 1, err);
			continue;
		}
		for (j = 0; pre[j] && strncmp(pre[j], names[i], strlen(pre[j])); j++)
			;
		if (!pre[j] || strchr(names[i], '-')) /* card0-DP-1: a connector */
			continue;
		snprintf(host, sizeof(host), "/dev/%s%s",
			 !strncmp(names[i], "card", 4) || !strncmp(names[i], "renderD", 7) ? "dri/"
			 : !strncmp(names[i], "accel", 5) ? "accel/"
							  : "",
			 names[i]);
		if (offer(r, k, host, DPATH_DEVICE, res, sizeof(res), &t) == 0 &&
		    node_add(d, res, host, perms, false, false, &t) < 0)
			rc = log_err_set(err, -ENOMEM, "out of memory");
	}
	fs_names_free(names, n);
	return rc;
}

/* /dev/serial/by-id links resolving (inside the dev root) to a tty node of d: the same node at
 * the link's path too. */
static int by_id(const struct devices_roots *r, struct devices_dev *d, const char *perms,
		 struct log_err *err)
{
	char dir[PATH_LEN], path[PATH_LEN], res[PATH_LEN];
	char **names = NULL;
	size_t n = 0, i, j, nodes = d->n_nodes;
	struct stat st;
	int rc = 0;

	snprintf(dir, sizeof(dir), "%s/serial/by-id", dev_root(r));
	if (!fs_is_dir(dir) || fs_list_dir(dir, &names, &n, NULL) < 0)
		return 0;
	for (i = 0; i < n && i < DEVICES_MATCH_MAX && rc >= 0; i++) {
		if ((size_t)snprintf(path, sizeof(path), "/dev/serial/by-id/%s", names[i]) >=
			sizeof(path) ||
		    dpath_resolve(r, path, res, sizeof(res), &st) < 0)
			continue; /* a link out of the dev root is nothing of ours */
		for (j = 0; j < nodes; j++) {
			const struct devices_node x = d->nodes[j]; /* node_add moves nodes */

			if (strcmp(x.host, res) || strncmp(strrchr(x.host, '/') + 1, "tty", 3))
				continue;
			if (node_add(d, x.host, path, perms, false, false, &x) < 0)
				rc = log_err_set(err, -ENOMEM, "out of memory");
			break;
		}
	}
	fs_names_free(names, n);
	return rc;
}

static int scan_select(const struct devices_roots *r, const struct dclass *k,
		       const struct dgroup *g, struct devices_found *f, size_t *ids,
		       struct log_err *err)
{
	bool usb = g->kind == G_SELECT_USB;
	const char *feature = usb ? "usb.device" : "pci.device";
	const struct feat **pick = calloc(DEVICES_MATCH_MAX, sizeof(*pick));
	struct pciscan_list pl = {0};
	struct feat_set *fs = feat_set_new();
	char bus[PATH_LEN], dir[PATH_LEN + 512];
	int rc, n, i, j;

	if (!pick || !fs) {
		rc = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	snprintf(bus, sizeof(bus), "%s/bus/%s", sys_root(r), usb ? "usb" : "pci");
	if (usb)
		rc = usb_scan_named(bus, fs, "sysfs", err);
	else if ((rc = pciscan_scan(bus, &pl, err)) >= 0)
		rc = pciscan_add_features(&pl, fs) < 0 ? log_err_set(err, -ENOMEM, "out of memory")
						       : 0;
	if (rc < 0)
		goto out;
	n = rc = rules_select_eval(g->sel, fs, feature, pick, DEVICES_MATCH_MAX, err);
	if (rc < 0)
		goto out;
	for (i = 0; i < n; i++) {
		const struct feat *all = feat_get_kind(fs, feature, FEAT_INSTANCES);
		const char *where = NULL;
		struct devices_dev *d;

		if (usb) {
			where = feat_lookup(pick[i], "sysfs");
			for (j = 0; j < i; j++) /* one instance per interface class: once each */
				if (!strcmp(feat_lookup(pick[j], "sysfs"), where))
					break;
			if (j < i)
				continue;
		} else {
			for (j = 0; j < (int)pl.n && feat_instance_at(all, (size_t)j) != pick[i];
			     j++)
				;
			if (j == (int)pl.n)
				continue;
			where = pl.dev[j].addr;
		}
		if (!(d = dev_new(f, err))) {
			rc = err ? err->code : -ENOMEM;
			goto out;
		}
		snprintf(dir, sizeof(dir), "%s/devices/%s", bus, where);
		rc = nodes_in(r, k, dir, d, g->perms, 0, err);
		if (rc >= 0 && usb) { /* the interfaces: <dev>/<dev>:<config>.<iface> */
			char **names = NULL, sub[PATH_LEN + 900];
			size_t nn = 0, x;

			fs_list_dir(dir, &names, &nn, NULL);
			for (x = 0; x < nn && rc >= 0; x++) {
				if (strncmp(names[x], where, strlen(where)) ||
				    names[x][strlen(where)] != ':')
					continue;
				snprintf(sub, sizeof(sub), "%s/%s", dir, names[x]);
				rc = nodes_in(r, k, sub, d, g->perms, 0, err);
			}
			fs_names_free(names, nn);
			if (rc >= 0)
				rc = by_id(r, d, g->perms, err);
		}
		if (rc < 0)
			goto out;
		if (!d->n_nodes) { /* nothing to hand out: not a device of this class (yet) */
			free(d->nodes);
			f->n--;
			continue;
		}
		rc = dev_finish(f, d, k, g->count, NULL, ids, err);
		if (rc < 0)
			goto out;
	}
	rc = 0;
out:
	free(pick);
	feat_set_free(fs);
	pciscan_list_free(&pl);
	return rc;
}

/* ------------------------------------------------------------ GPUs */

/* One device per DRM card (sysfs class/drm/cardN, or /dev/dri/cardN without sysfs): cardN and
 * the renderD node of the same function. */
static int scan_gpu(const struct devices_roots *r, const struct dclass *k, const struct dgroup *g,
		    struct devices_found *f, size_t *ids, struct log_err *err)
{
	char **cards = NULL, dir[PATH_LEN + 256], vendor[32], host[600], res[PATH_LEN];
	struct devices_node t;
	int n, i, rc = 0;

	n = glob_host(r, "/dev/dri/card*", &cards, err);
	if (n < 0)
		return n;
	for (i = 0; i < n && rc >= 0; i++) {
		const char *name = strrchr(cards[i], '/') + 1;
		struct devices_dev *d;
		char **rn = NULL;
		size_t nr = 0, x;

		if (!isdigit((unsigned char)name[4]) || strchr(name, '-'))
			continue;
		snprintf(dir, sizeof(dir), "%s/class/drm/%s/device", sys_root(r), name);
		if (g->gpu_vendor[0] && (read_small(dir, "vendor", vendor, sizeof(vendor)) < 0 ||
					 strcasecmp(vendor, g->gpu_vendor)))
			continue;
		if (offer(r, k, cards[i], DPATH_DEVICE, res, sizeof(res), &t) < 0)
			continue;
		if (!(d = dev_new(f, err))) {
			rc = err ? err->code : -ENOMEM;
			break;
		}
		if (node_add(d, res, cards[i], g->perms, false, false, &t) < 0) {
			rc = log_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/drm");
		if (fs_is_dir(dir) && fs_list_dir(dir, &rn, &nr, NULL) == 0) {
			for (x = 0; x < nr && rc >= 0; x++) {
				snprintf(host, sizeof(host), "/dev/dri/%s", rn[x]);
				if (!strncmp(rn[x], "renderD", 7) &&
				    offer(r, k, host, DPATH_DEVICE, res, sizeof(res), &t) == 0 &&
				    node_add(d, res, host, g->perms, false, false, &t) < 0)
					rc = log_err_set(err, -ENOMEM, "out of memory");
			}
			fs_names_free(rn, nr);
		} else { /* no sysfs: the kernel's numbering, renderD(128+N) */
			snprintf(host, sizeof(host), "/dev/dri/renderD%ld",
				 128 + strtol(name + 4, NULL, 10));
			if (offer(r, k, host, DPATH_DEVICE, res, sizeof(res), &t) == 0 &&
			    node_add(d, res, host, g->perms, false, false, &t) < 0)
				rc = log_err_set(err, -ENOMEM, "out of memory");
		}
		if (rc >= 0)
			rc = dev_finish(f, d, k, g->count, NULL, ids, err);
	}
	fs_names_free(cards, n > 0 ? (size_t)n : 0);
	return rc;
}

int devices_scan(const struct devices_classes *c, size_t cls, const struct devices_roots *roots,
		 struct devices_found *out, struct log_err *err)
{
	const struct dclass *k = &c->c[cls];
	size_t i, ids = 0;
	int rc = 0;

	devices_found_free(out);
	out->roots = roots ? *roots : (struct devices_roots){0};
	for (i = 0; i < k->ng && rc >= 0; i++) {
		const struct dgroup *g = &k->g[i];

		switch (g->kind) {
		case G_PATHS:
			rc = scan_paths(roots, k, g, out, &ids, err);
			break;
		case G_USB:
			rc = scan_usb(roots, k, g, out, &ids, err);
			break;
		case G_SELECT_USB:
		case G_SELECT_PCI:
			rc = scan_select(roots, k, g, out, &ids, err);
			break;
		case G_GPU:
			rc = scan_gpu(roots, k, g, out, &ids, err);
			break;
		}
	}
	if (rc == -EOVERFLOW) { /* one limit with pkg/kubelet: serve the first devices, warn */
		log_warn("%s; serving the first %zu devices (%zu IDs)", err ? err->msg : k->name,
			 out->n - 1, ids);
		log_err_clear(err);
		dev_clear(&out->d[--out->n]); /* the device that did not fit (no IDs yet) */
		rc = 0;
	}
	if (rc >= 0 && devices_found_index(out) < 0)
		rc = log_err_set(err, -ENOMEM, "out of memory");
	if (rc < 0) {
		devices_found_free(out);
		return log_err_wrap(err, "class '%s'", k->name);
	}
	return (int)out->n;
}
