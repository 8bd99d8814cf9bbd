/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_internal: the class definitions the stages of pkg/devices share (not a contract).
 *
 * Stages, each calling only those above it (scripts/check-calls):
 *   conf   devices_conf.c   squat's --device, presets, classes files into struct devices_classes
 *   opt    devices_opt.c    the class options both binaries parse into struct devices_opts
 *   index  devices_index.c  a scan's ID -> device index (sorted, bsearch)
 *   path   devices_path.c   host paths resolved inside their root, what they name
 *   scan   devices_scan.c   a class's devices under the dev and sys roots
 *   list   devices_list.c   labels and --list lines from scans
 *   alloc  devices_alloc.c  Allocate answers, preferred allocation
 *   cdi    devices_cdi.c    CDI specs
 *   watch  devices_watch.c  hotplug (inotify)
 *   http   devices_http.c   --listen: /health, /metrics (libmicrohttpd, no thread)
 *   api    devices_api.c    a class document's spec.api (device-plugin or dra)
 *   dra    devices_dra.c    DRA classes: pool device names, the refusals (hooks/devices/dra.c
 *                           serves them over pkg/dra)
 *   run    devices_run.c    the long-running loop over pkg/kubelet
 */
#ifndef NP_DEVICES_INTERNAL_H
#define NP_DEVICES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "devices/devices.h"

struct rules_select;

enum grp_kind {
	G_PATHS,      /* squat's paths */
	G_USB,	      /* squat's usb: /dev/bus/usb nodes of matching devices */
	G_SELECT_USB, /* matchFeatures over usb.device: each instance's nodes */
	G_SELECT_PCI, /* matchFeatures over pci.device: each function's nodes */
	G_GPU,	      /* one device per DRM card: card* + renderD* */
};

struct dpath {
	char *path;	  /* host path, glob allowed */
	char *mount_path; /* NULL: the match's own path */
	char perms[4];	  /* "mrw" by default */
	bool read_only;	  /* type: Mount */
	bool mount;	  /* type: Mount */
	unsigned limit;	  /* squat's limit (1 by default) */
};

struct stat;

/* ------------------------------------------------------------ paths (devices_path.c) */

#define DPATH_LEN 4096

/* Does path p have a "." or ".." component? */
bool dpath_has_dots(const char *p);

/*
 * A class's host path: /dev or /sys, or under them, no "." or ".." component: the only host trees
 * the plugin sees (at --dev-root, --sys-root); any other path would be globbed inside its own
 * container.
 */
bool dpath_host_ok(const char *p);

/* A host path ("/dev/x") as the plugin sees it ("<dev root>/x"); other paths as they are. 0 or
 * -ENAMETOOLONG. */
int dpath_rooted(const struct devices_roots *r, const char *host, char *out, size_t size);
/* A path under the dev or sys root back as the host's "/dev/..." or "/sys/..." (others as they
 * are). 0 or -ENAMETOOLONG. */
int dpath_unrooted(const struct devices_roots *r, const char *seen, char *out, size_t size);

/*
 * host ("/dev/serial/by-id/x") resolved under its root, one component at a time: symbolic links
 * are followed while they stay inside the root (relative targets, or absolute ones naming the same
 * tree: "/dev/..." in the dev root); ".." never goes above it. out is the host path of what it
 * names ("/dev/ttyUSB0"), *st its lstat. 0; -EINVAL (not /dev or /sys, or a "."/".." component
 * in host); -EXDEV (leads out of the root); -EPERM (through a directory anyone may write, such
 * as /dev/shm); -ELOOP; -ENAMETOOLONG; -ENOENT and other -errno.
 */
int dpath_resolve(const struct devices_roots *r, const char *host, char *out, size_t size,
		  struct stat *st);

enum dpath_want {
	DPATH_DEVICE,	     /* a character or block device node */
	DPATH_DEVICE_OR_DIR, /* that, or a directory (squat's /dev/snd: its nodes) */
	DPATH_MOUNT,	     /* anything inside the root */
};
#define DPATH_IS_DIR 1

/*
 * dpath_resolve, then what it names must be what want asks. 0 (DPATH_IS_DIR for a directory
 * with DPATH_DEVICE_OR_DIR) with out and, when node is not NULL, node->type and node->rdev set;
 * else dpath_resolve's -errno or -ENODEV (not a device node), with *why (static) saying what is
 * wrong, for a warning naming host.
 */
int dpath_check(const struct devices_roots *r, const char *host, enum dpath_want want, char *out,
		size_t size, struct devices_node *node, const char **why);

#define DPATH_WANT                                                                                                      \
	"want /dev/... or /sys/... without '.' or '..': the plugin sees only the host's /dev and /sys (at --dev-root, " \
	"--sys-root); other paths would be read inside its own container"

struct dusb {
	unsigned vendor, product; /* parsed hex */
	char *serial;		  /* NULL: any */
};

struct dgroup {
	enum grp_kind kind;
	struct dpath *p; /* G_PATHS */
	size_t np;
	struct dusb *u; /* G_USB */
	size_t nu;
	unsigned count;		  /* shares of each device */
	struct rules_select *sel; /* G_SELECT_* */
	char perms[4];		  /* G_SELECT_*, G_GPU: permissions of the nodes */
	char gpu_vendor[8];	  /* G_GPU: PCI vendor ("0x8086"), "" any */
};

struct dclass {
	char *name;	  /* "serial": CDI class, resource name */
	char *resource;	  /* "squat.ai/serial" */
	struct dgroup *g; /* groups */
	size_t ng;	  /* number */
	bool squat_ids;	  /* IDs as squat makes them (sha1), else "<dev>-<n>" */
	enum devices_policy policy;
	enum devices_api api; /* spec.api; DEVICES_API_UNSET: --api decides */
};

struct devices_classes {
	struct dclass *c;
	size_t n;
};

/* ---- devices_api.c: a class document's spec.api. */
struct ydoc;
/* parse(c, y, domain) for one document, then its spec.api onto the classes it added. */
int devices_api_doc(struct devices_classes *c, struct ydoc *y, const char *domain,
		    int (*parse)(struct devices_classes *, struct ydoc *, const char *));

/* ---- devices_dra.c: refuse by name what DRA classes cannot do yet (shares: count > 1). */
int devices_dra_check(const struct devices_classes *c, enum devices_api dflt, struct log_err *err);

#endif
