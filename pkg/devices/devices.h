/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices: device classes (squat's --device, nodeprobe's rules, presets), their device nodes
 * under a dev and sys root, Allocate answers, CDI specs, hotplug, and the nodeprobe-devices run.
 */
#ifndef NP_DEVICES_H
#define NP_DEVICES_H

#include <stdbool.h>
#include <stddef.h>

struct log_err;
struct kubelet_alloc;
struct label_set;
struct strbuf;

#define DEVICES_DOMAIN_DEFAULT "squat.ai"     /* squat/generic-device-plugin's --domain */
#define DEVICES_CDI_VENDOR     "nodeprobe.io" /* CDI kind nodeprobe.io/<class> */
#define DEVICES_CDI_DIR	       "/var/run/cdi"
#define DEVICES_CDI_VERSION    "0.5.0" /* the lowest with hostPath (CDI SPEC.md) */
#define DEVICES_CLASSES_MAX    64      /* classes of one run */
#define DEVICES_GROUPS_MAX     256     /* groups (or selections) of one class */
#define DEVICES_PATHS_MAX      64      /* paths (or usbs) of one group */
#define DEVICES_MATCH_MAX      1024    /* matches of one glob, devices of one class */
#define DEVICES_COUNT_MAX      1000    /* count (shares) of one group; limit of one path */
#define DEVICES_IDS_MAX	       4096 /* device IDs of one class: pkg/kubelet's KUBELET_DEVICES_MAX */
#define DEVICES_ARG_MAX	       (64 << 10)     /* bytes of one --device value */
#define DEVICES_FILE_MAX       (1 << 20)      /* bytes of a classes file */
#define DEVICES_DRA_DRIVER     "nodeprobe.io" /* the DRA driver name: CDI kind nodeprobe.io/claim */

/* GetPreferredAllocation among the shares of several devices (Intel's -allocation-policy). */
enum devices_policy {
	DEVICES_POLICY_NONE = 0, /* the kubelet's order */
	DEVICES_POLICY_BALANCED, /* spread over devices: the one with most free shares first */
	DEVICES_POLICY_PACKED,	 /* fill one device's shares before the next */
};

/* Which kubelet API serves a class (class documents' spec.api, nodeprobe-devices --api). */
enum devices_api {
	DEVICES_API_UNSET = 0,	   /* not said: --api decides (device-plugin by default) */
	DEVICES_API_DEVICE_PLUGIN, /* "device-plugin": pkg/kubelet, one extended resource */
	DEVICES_API_DRA,	   /* "dra": pkg/dra, ResourceSlices and claims */
};

/* Parse "device-plugin" or "dra": 0 with *a, -EINVAL otherwise. */
int devices_api_parse(const char *s, enum devices_api *a);

struct devices_found;
struct devices_dev;
struct devices_opts;
struct devices_classes;

/*
 * The DRA side of a run (issue 28): pkg/dra and pkg/kube are another layer (API), so the binary
 * brings them (hooks/devices/dra.c) and devices_run drives them through these.
 */
struct devices_dra_hooks {
	/* Start serving the DRA classes of c (borrowed for the run): 0 with *fd to poll. */
	int (*start)(void *ctx, const struct devices_opts *o, const struct devices_classes *c,
		     int *fd, struct log_err *err);
	int (*ready)(void *ctx, struct log_err *err); /* *fd readable */
	/* Class cls was scanned: its devices f (borrowed until the next update of cls). */
	void (*update)(void *ctx, size_t cls, const struct devices_found *f);
	void (*stop)(void *ctx); /* after a start, also a failed one */
	void *ctx;
};

/* Where to look: every path is rooted here (tests point them at temp trees). */
struct devices_roots {
	const char *dev; /* the host's /dev as we see it; NULL: "/dev" */
	const char *sys; /* the host's /sys as we see it; NULL: "/sys" */
};

/* ------------------------------------------------------------ classes (devices_conf.c) */

struct devices_classes; /* the loaded classes, in load order */

/* What presets take. */
struct devices_preset_opts {
	unsigned shared_dev_num;    /* intel-gpu: shares per GPU; 0: 1 */
	enum devices_policy policy; /* intel-gpu's allocation policy */
};

/* New empty set, or NULL when out of memory. */
struct devices_classes *devices_classes_new(void);
void devices_classes_free(struct devices_classes *c);

/*
 * One squat --device value (JSON or YAML {name, groups: [{paths|usb|usbs, count}]}, or the older
 * "<name>,<path>,<path>..." form), resource "<domain>/<name>" (domain NULL: squat.ai). Returns 0,
 * -EINVAL with err "--device: <where>: <what>", -E2BIG (a limit, named), -ENOMEM.
 */
int devices_add_squat(struct devices_classes *c, const char *arg, const char *domain,
		      struct log_err *err);

/*
 * A preset by name: kvm, tun, fuse, serial, video, snd, dri, intel-gpu. Resource
 * "<domain>/<name>" (intel-gpu: gpu.intel.com/i915). -EINVAL with err for an unknown name.
 */
int devices_add_preset(struct devices_classes *c, const char *name, const char *domain,
		       const struct devices_preset_opts *o, struct log_err *err);

/*
 * A classes file (YAML, several documents): apiVersion nodeprobe.io/v1alpha1, kind DeviceClass,
 * metadata.name, spec with one of preset, groups (squat's), or matchFeatures over usb.device or
 * pci.device, and resource, count, permissions, allocationPolicy. Returns the number of classes
 * added, or -errno / -EINVAL with err "file:line:col: what".
 */
int devices_load_file(struct devices_classes *c, const char *path, const char *domain,
		      struct log_err *err);

/* Number of classes; the i-th one's name ("serial") and resource ("squat.ai/serial"). */
size_t devices_classes_count(const struct devices_classes *c);
const char *devices_class_name(const struct devices_classes *c, size_t i);
const char *devices_class_resource(const struct devices_classes *c, size_t i);
/* Its api (DEVICES_API_UNSET when its document said none). */
enum devices_api devices_class_api(const struct devices_classes *c, size_t i);
/* Its GetPreferredAllocation policy. */
enum devices_policy devices_class_policy(const struct devices_classes *c, size_t i);

/* --------------------------------------------------------------- scan (devices_scan.c) */

/* One node of a device: a DeviceSpec, or a Mount (type: Mount). */
struct devices_node {
	char *host;	    /* host path ("/dev/ttyUSB0"), as the runtime sees it */
	char *container;    /* path in the container */
	char perms[4];	    /* DeviceSpec permissions, a subset of "rwm" */
	bool mount;	    /* a Mount, not a DeviceSpec */
	bool read_only;	    /* Mount: read-only */
	unsigned type;	    /* what host was when offered: st_mode & S_IFMT (checked at Allocate) */
	unsigned long rdev; /* and its st_rdev (a device node's major:minor) */
};

/* One device: a group's nodes, handed out as n_ids shares. */
struct devices_dev {
	char *name;		    /* CDI device name, unique in the class ("ttyUSB0") */
	struct devices_node *nodes; /* its nodes */
	size_t n_nodes;
	char **ids; /* its shares' device IDs ("ttyUSB0-0", or squat's sha1 form) */
	size_t n_ids;
};

/* One device ID in the index: the string is borrowed from d[dev].ids. */
struct devices_id {
	const char *id;
	size_t dev;
};

/* The devices of one class, as one scan found them. */
struct devices_found {
	struct devices_dev *d;
	size_t n;
	struct devices_id *idx; /* every ID, sorted (devices_found_index); NULL: none built */
	size_t n_idx;
	struct devices_roots roots; /* where it was scanned (strings borrowed from the caller) */
};

/*
 * Scan class cls under roots into out (emptied first; free with devices_found_free): globs,
 * USB and PCI selections through sysfs, GPUs. Each path is resolved inside its root and a Device
 * must be a character or block node; what is not is left out with a warning naming it (host
 * paths handed out are the resolved ones). Nothing found is 0 devices, not an error.
 * Returns the number of devices, or -errno with err naming the path or limit.
 */
int devices_scan(const struct devices_classes *c, size_t cls, const struct devices_roots *roots,
		 struct devices_found *out, struct log_err *err);
void devices_found_free(struct devices_found *f);

/*
 * The ID -> device index of f, sorted by ID (devices_scan builds it; call it again after
 * changing f by hand). Returns 0 or -ENOMEM (then f has no index and lookups are linear).
 */
int devices_found_index(struct devices_found *f);

/* The device holding share id, or NULL: a binary search of the index (linear without one). */
const struct devices_dev *devices_find(const struct devices_found *f, const char *id);

/* id's position in f->idx (0..n_idx-1), or -1 when absent or f has no index. */
long devices_find_pos(const struct devices_found *f, const char *id);

/* ID comparisons devices_find and devices_find_pos made so far (tests, bench). */
unsigned long devices_find_compares(void);

/*
 * nodeprobe's labels from the same classes: "<resource>.count" = the number of device IDs
 * (shares) the class offers, for each class whose key is a valid label key (others skipped
 * with a warning). Returns the number of labels set, or -errno with err.
 */
int devices_labels(const struct devices_classes *c, const struct devices_roots *roots,
		   struct label_set *out, struct log_err *err);

/* ---------------------------------------------------------- allocate (devices_alloc.c) */

/*
 * The Allocate answer for ids[0..n) of class (named cls_name) in f: DeviceSpecs and Mounts of
 * each device once, and with cdi the CDI names "nodeprobe.io/<class>=<device>". An unknown ID is
 * -ENOENT with err naming it; a node that no longer resolves (under f->roots) to what was offered
 * (a link swapped in, another type or major:minor) is -ESTALE with err naming it, and nothing is
 * handed out. Release with devices_alloc_free.
 */
int devices_allocate(const struct devices_found *f, const char *cls_name, bool cdi,
		     const char *const *ids, size_t n, struct kubelet_alloc *out,
		     struct log_err *err);
void devices_alloc_free(struct kubelet_alloc *a);

/*
 * GetPreferredAllocation: size IDs out of avail (every one of must first), by policy over the
 * devices of f the IDs belong to. Writes pointers into avail/must to out; returns how many, or
 * -EINVAL with err (size larger than what is available).
 */
int devices_preferred(const struct devices_found *f, enum devices_policy policy,
		      const char *const *avail, size_t n_avail, const char *const *must,
		      size_t n_must, size_t size, const char **out, struct log_err *err);

/* --------------------------------------------------------------- CDI (devices_cdi.c) */

/*
 * The CDI class of class name (a DNS-label-like name, 1-63 characters): the name itself when it is
 * one (container-device-interface pkg/cdi ValidateClassName before 0.6.0: a letter first, letters,
 * digits, '_', '-', a letter or digit last), else mapped to one: 'c' before a leading digit, '_'
 * for anything else ("9p.fs" -> "c9p_fs"). 0 with out, -ENAMETOOLONG, -EINVAL (nothing left).
 */
int devices_cdi_class(const char *name, char *out, size_t size);

/*
 * The CDI spec of class cls_name for f as JSON (cdiVersion DEVICES_CDI_VERSION, kind
 * nodeprobe.io/<class>, one device per devices_dev), into *out (malloc'ed, free it).
 * Returns its length or -ENOMEM.
 */
int devices_cdi_json(const struct devices_found *f, const char *cls_name, char **out);

/*
 * Write it to dir as "nodeprobe.io-<class>.json" atomically (fs_publish: unchanged content is
 * not rewritten); with no device, remove that file, but only when it is ours (our kind, and
 * byte for byte what our writer makes of its content; or our older 0.6.0 annotation). A file of
 * that name we did not write is never touched: -EEXIST with err naming it.
 * Returns 1 written or removed, 0 unchanged, -errno with err.
 */
int devices_cdi_write(const char *dir, const struct devices_found *f, const char *cls_name,
		      struct log_err *err);

/* ------------------------------------------------------------ hotplug (devices_watch.c) */

struct devices_watch;

/*
 * Watch dev_root (and its subdirectories, up to DEVICES_WATCH_MAX) with inotify for nodes that
 * come and go. 0 with *out, or -errno with err.
 */
#define DEVICES_WATCH_MAX 256
int devices_watch_new(const char *dev_root, struct devices_watch **out, struct log_err *err);
/* The descriptor to poll (readable when something changed). */
int devices_watch_fd(const struct devices_watch *w);
/* Read what is pending (never blocks): 1 when a rescan is due, 0 not, -errno. */
int devices_watch_drain(struct devices_watch *w);
void devices_watch_free(struct devices_watch *w);

/* ------------------------------------------------------- --listen (devices_http.c) */

struct devices_http;
/* Fills /metrics' body (Prometheus text format): 0, or <0 (500). */
typedef int (*devices_http_body)(void *ctx, struct strbuf *out);

/*
 * Listen on "HOST:PORT" / ":PORT" / "[V6]:PORT" for GET /health ("ok") and /metrics, with no
 * thread: poll devices_http_fd and devices_http_timer_fd, call devices_http_ready when either is
 * readable. 16 connections at once, idle ones closed after 10 s. 0 with *out, or -errno.
 */
int devices_http_new(const char *listen, devices_http_body metrics, void *ctx,
		     struct devices_http **out, struct log_err *err);
int devices_http_fd(const struct devices_http *h);
int devices_http_timer_fd(const struct devices_http *h);
/* Serve what is pending (never blocks): 0 or -errno. */
int devices_http_ready(struct devices_http *h);
void devices_http_free(struct devices_http *h);

/* ------------------------------------------------------------------ DRA (devices_dra.c) */

/* Is class i served by DRA (its api, or dflt when it has none)? Any class? */
bool devices_dra_is(const struct devices_classes *c, size_t i, enum devices_api dflt);
bool devices_dra_any(const struct devices_classes *c, enum devices_api dflt);
/*
 * A device's name in our pool (ResourceSlices, claims): a DNS label (the API's device name
 * rule). "<class>-<device>" lower case, other characters '-', no runs of '-' nor one at the
 * ends ("serial-ttyusb0"); one longer than 63 is cut to DRA_NAME_CUT and ends in '-' and
 * DRA_NAME_HASH hex digits of SHA-256(class NUL device), its whole identity, so it stays unique
 * and the same across restarts. cap at least DRA_NAME_MAX + 1. 0, or -EINVAL (nothing left).
 */
#define DRA_NAME_MAX  63 /* a DNS label */
#define DRA_NAME_HASH 10 /* hex digits of the identity's hash */
#define DRA_NAME_CUT  (DRA_NAME_MAX - 1 - DRA_NAME_HASH)
int devices_dra_name(const char *cls, const char *dev, char *out, size_t cap);
/*
 * The pool names of every device of the scans f[0..count of c) (f[i] NULL: class i has none),
 * class by class in scan order: devices_dra_name, but where two devices get the same name
 * (ttyUSB0 and ttyusb0, "a_b" and "a-b"), each of them gets the hashed form instead; a name that
 * still collides (or none) is "" (not published; a warning). A name depends on its device alone,
 * except in a collision: the names stay across restarts and hotplug. 0 with *names (free())
 * and *n, or -ENOMEM.
 */
int devices_dra_names(const struct devices_classes *c, const struct devices_found *const *f,
		      char (**names)[DRA_NAME_MAX + 1], size_t *n);
/* The device of pool name device among the DRA classes' scans f[0..count): NULL when none. */
const struct devices_dev *devices_dra_find(const struct devices_classes *c,
					   const struct devices_found *const *f,
					   const char *device);

/* One attribute of a device as a ResourceSlice publishes it (issue 28). */
#define DEVICES_ATTRS_MAX 32 /* the API's attributes a device */
#define DEVICES_ATTR_VALUE_MAX                                                                     \
	64 /* the API's string / version bytes (DeviceAttributeMaxValueLength) */
enum devices_attr_type {
	DEVICES_ATTR_STRING, /* str */
	DEVICES_ATTR_INT,    /* num */
	DEVICES_ATTR_BOOL,   /* num: 0 or 1 */
	DEVICES_ATTR_VERSION /* str: a semantic version */
};
struct devices_attr {
	char id[97]; /* a C identifier, or <domain>/<identifier> */
	/* string or version: a longer value than the API takes keeps 65 bytes (still too long:
	 * pkg/dra leaves it out, never publishes it cut) */
	char str[DEVICES_ATTR_VALUE_MAX + 2];
	long long num;
	enum devices_attr_type type;
};

/*
 * The attributes of device d of class cls from the host (under roots): class, devPath (and
 * devPath1.. for more nodes), major and minor (character and block nodes), and from sysfs
 * (<sys>/dev/{char,block}/<major>:<minor>, up to its USB device or PCI function): usbVendorID,
 * usbProductID, usbSerial, usbBcdDevice, usbBusPath; pciVendorID, pciDeviceID, pciClass,
 * pciSubsystemVendorID, pciSubsystemDeviceID, pciAddress, pciDriver, numaNode, iommuGroup.
 * Hex ids without "0x", lower case. Fills out[0..max); returns how many.
 */
size_t devices_dra_attrs(const struct devices_roots *roots, const char *cls,
			 const struct devices_dev *d, struct devices_attr *out, size_t max);

/* ------------------------------------------------------------------ run (devices_run.c) */

struct devices_opts {
	struct devices_roots roots; /* dev and sys roots */
	const char *domain;	    /* --domain; NULL: squat.ai */
	const char *plugin_dir;	    /* --plugin-directory; NULL: the kubelet's */
	const char *listen;	    /* --listen: /health and /metrics; NULL: none */
	const char *cdi_dir;	    /* --cdi-dir; NULL: /var/run/cdi */
	bool no_cdi;		    /* --cdi=false */
	const char *const *device;  /* --device values */
	size_t n_device;
	const char *const *preset; /* --preset names */
	size_t n_preset;
	const char *classes_file;      /* --classes, or NULL */
	struct devices_preset_opts po; /* --shared-dev-num, --allocation-policy */
	/* DRA (devices_dra.c) */
	enum devices_api api;	/* --api: classes whose document says none; UNSET: device-plugin */
	const char *dra_driver; /* --dra-driver; NULL: DEVICES_DRA_DRIVER */
	const char *registry_dir; /* --plugins-registry; NULL: the kubelet's */
	const char *dra_dir;	  /* --dra-plugins-dir; NULL: the kubelet's plugins directory */
	const char *node_name;	  /* --node-name; NULL: $NODE_NAME */
	const char *kubeconfig;	  /* --kubeconfig; NULL: in-cluster */
	int dra_resync_s;	  /* --dra-resync: slices checked every N s; 0: the default */
	int dra_api_timeout_s;	  /* --dra-api-timeout: one API request, s; 0: the default */
	int dra_sweep_s;	  /* --dra-sweep: stale claims swept every N s; 0: the default */
	const struct devices_dra_hooks
	    *dra; /* the DRA side (the binary's); NULL: api: dra refused */
};

/*
 * The class options nodeprobe (labels) and nodeprobe-devices (allocation) both take, so the two
 * agree: DEVICES_CLI_OPTS in each binary's struct cli_opt table, devices_opt from its callback.
 */
enum {
	DEVICES_OPT_DEVICE = 0x4000,
	DEVICES_OPT_DOMAIN,
	DEVICES_OPT_PRESET,
	DEVICES_OPT_CLASSES,
	DEVICES_OPT_SHARED,
	DEVICES_OPT_POLICY,
};

/* clang-format off */
#define DEVICES_CLI_OPTS \
    {"device", 0, "JSON", "a squat --device class (JSON/YAML, or NAME,PATH,...), repeatable", \
     DEVICES_OPT_DEVICE}, \
    {"domain", 0, "DOMAIN", "resource domain of --device and --preset classes (squat.ai)", \
     DEVICES_OPT_DOMAIN}, \
    {"preset", 0, "NAME", "kvm, tun, fuse, serial, video, snd, dri, intel-gpu; repeatable", \
     DEVICES_OPT_PRESET}, \
    {"classes", 0, "FILE", "DeviceClass documents (presets, squat groups, matchFeatures)", \
     DEVICES_OPT_CLASSES}, \
    {"shared-dev-num", 0, "N", "intel-gpu: containers sharing one GPU (1)", DEVICES_OPT_SHARED}, \
    {"allocation-policy", 0, "POLICY", "intel-gpu: none, balanced or packed (none)", \
     DEVICES_OPT_POLICY}
/* clang-format on */

/*
 * One class option (id DEVICES_OPT_*) into o; --device and --preset values are borrowed (argv)
 * into arrays freed by devices_opts_free. Returns 0, or -1 with msg (a usage error).
 */
int devices_opt(struct devices_opts *o, int id, const char *arg, char *msg, int msglen);

/* Does o name any class (--device, --preset, --classes)? */
bool devices_opts_any(const struct devices_opts *o);
void devices_opts_free(struct devices_opts *o);

/* Exit codes of nodeprobe-devices (the man page lists them). */
#define DEVICES_EXIT_OK	   0
#define DEVICES_EXIT_ERROR 1 /* run-time failure */
#define DEVICES_EXIT_USAGE 2 /* bad option or class definition */

/*
 * Load the classes, then serve them (pkg/kubelet) until SIGTERM/SIGINT, rescanning on hotplug
 * and keeping the CDI specs in step.
 * Returns 0, or -EINVAL (a class definition: DEVICES_EXIT_USAGE) or -errno with err.
 */
int devices_run(const struct devices_opts *o, struct log_err *err);

/*
 * The classes o names (--device, --preset, --classes, in that order) into *out (free with
 * devices_classes_free). 0; -EINVAL with err (a bad definition, or none given); -ENOMEM.
 */
int devices_load(const struct devices_opts *o, struct devices_classes **out, struct log_err *err);

/*
 * --list: load the classes, scan each once and append one line per device to out:
 * "<resource> <device> <host>:<container>:<perms>... ids=<n> <first id>". 0 or -errno with err.
 */
int devices_list(const struct devices_opts *o, struct strbuf *out, struct log_err *err);

/* Parse "none", "balanced", "packed": 0 with *p, -EINVAL otherwise. */
int devices_policy_parse(const char *s, enum devices_policy *p);

#endif
