/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror: containerd hosts.toml files for a Spegel mirror: configure, cleanup, check. */
#ifndef NP_MIRROR_H
#define NP_MIRROR_H

#include <stdbool.h>
#include <stddef.h>

struct log_err;
struct strbuf;

#define MIRROR_DEFAULT_CONFIG_PATH "/etc/containerd/certs.d"
#define MIRROR_BACKUP_DIR	   "_backup" /* Spegel's name; shared with its init container */
/* What Spegel writes per mirror since v0.3.0 (pkg/oci/containerd/mirror.go templateHosts). */
#define MIRROR_DEFAULT_DIAL_TIMEOUT "200ms"
/* The newest Spegel chart's one target: its registry Service's nodePort (d2446b5, #1313). */
#define MIRROR_DEFAULT_TARGET "http://${NODE_IP}:30020"
/* Where Spegel's chart mounts basicAuthSecretName (main.go loadBasicAuth). */
#define MIRROR_DEFAULT_BASIC_AUTH_DIR "/etc/secrets/basic-auth"

enum mirror_cmd {
	MIRROR_CONFIGURE,    /* write <config-path>/<host>/hosts.toml */
	MIRROR_CLEANUP,	     /* put _backup back */
	MIRROR_CHECK,	     /* report what containerd would reject or ignore */
	MIRROR_WATCH,	     /* configure, then keep it in place until SIGTERM */
	MIRROR_TALOS_CONFIG, /* print Talos RegistryMirrorConfig documents */
};

/* Kubernetes distributions whose containerd layout --distro knows (mirror_distro.c). */
enum mirror_distro {
	MIRROR_DISTRO_UNSET = 0, /* no --distro: plain paths, no distro rules */
	MIRROR_DISTRO_KUBEADM,	 /* stock containerd, /etc/containerd */
	MIRROR_DISTRO_TALOS,	 /* Talos Linux, /etc/cri */
	MIRROR_DISTRO_K3S,	 /* k3s, /var/lib/rancher/k3s */
	MIRROR_DISTRO_RKE2,	 /* RKE2, /var/lib/rancher/rke2 */
	MIRROR_DISTRO_K0S,	 /* k0s, /etc/k0s */
	MIRROR_DISTRO_MICROK8S,	 /* MicroK8s snap, /var/snap/microk8s */
	MIRROR_DISTRO_KIND,	 /* kind node container */
	MIRROR_DISTRO_AUTO,	 /* detect from --host-root */
};

/* A list of strings; owned by whoever filled it, freed with mirror_list_free. */
struct mirror_list {
	char **v; /* items */
	size_t n; /* count */
};

enum mirror_severity {
	MIRROR_WARNING, /* containerd accepts the file but ignores or misroutes something */
	MIRROR_ERROR,	/* containerd rejects the file (or the pull fails): no mirror */
	MIRROR_OK,	/* check --probe: what answered (does not change the result) */
};

/* One problem found by check. All pointers are valid during the callback only. */
struct mirror_finding {
	enum mirror_severity sev; /* how bad */
	const char *file;	  /* path of the file */
	int line, col;		  /* 1-based position, 0 when about the whole file */
	const char *msg;	  /* one line, no trailing newline */
	const char *fix;	  /* the exact fix (lines), or NULL */
};

typedef void (*mirror_report_fn)(void *data, const struct mirror_finding *f);
/* Receives text a command prints (talos-config's documents); valid during the call. */
typedef void (*mirror_output_fn)(void *data, const char *text);

/*
 * What to do. Fields left unset (NULL, n == 0, -1) are taken from the
 * environment, then from the YAML file config_file, then from the defaults;
 * see mirror_opts_resolve.
 */
struct mirror_opts {
	enum mirror_cmd cmd;	       /* the subcommand */
	char *config_file;	       /* --config YAML file, or NULL */
	char *config_path;	       /* --config-path (default /etc/containerd/certs.d) */
	struct mirror_list registries; /* --registry: URLs or hosts; none or "*" = _default */
	struct mirror_list targets;    /* --mirror-target: mirror URLs in order, ${VAR} expanded */
	int resolve_tags;	       /* --resolve-tags: 1 adds 'resolve' (default), 0, -1 unset */
	int prepend_existing;	       /* --prepend-existing: keep the user's hosts after ours */
	char *dial_timeout;	       /* --dial-timeout: Go duration written per host, or NULL */
	char *basic_auth_dir;	       /* --basic-auth-dir: dir with username and password files */
	char *containerd_config;       /* check --containerd-config FILE */
	char *containerd_version;      /* check --containerd-version, e.g. "1.6.20" */
	enum mirror_distro distro;     /* --distro, or MIRROR_DISTRO_UNSET */
	char *distro_version;	       /* --distro-version, e.g. "1.13" (Talos), or NULL */
	char *host_root;	       /* --host-root: where the host's / is mounted ("/") */
	bool probe;		       /* check --probe: GET /v2/ of every mirror */
	char *image;		       /* check --image REF: can the mirror resolve REF */
	mirror_report_fn report;       /* check: called once per finding (required for check) */
	mirror_output_fn output;       /* talos-config: its documents (required for it) */
	void *report_data;	       /* passed to report and output */
};

/* Initialise opts: everything unset. */
void mirror_opts_init(struct mirror_opts *o);
/* Free every string and list in opts (not opts itself). */
void mirror_opts_free(struct mirror_opts *o);

/* Append a copy of s to l. Returns 0 or -ENOMEM. */
int mirror_list_add(struct mirror_list *l, const char *s);
/*
 * Split s at commas and white space and append each non-empty part. Returns 0,
 * -E2BIG for a part of 4096 bytes or more (the parts before it stay appended),
 * or -ENOMEM.
 */
int mirror_list_add_split(struct mirror_list *l, const char *s);
/* Free the items of l and reset it. */
void mirror_list_free(struct mirror_list *l);

/*
 * Fill unset fields: first from the environment (CONTAINERD_REGISTRY_CONFIG_PATH,
 * MIRRORED_REGISTRIES, MIRROR_TARGETS, RESOLVE_TAGS, PREPEND_EXISTING — Spegel's
 * names — plus MIRROR_DIAL_TIMEOUT and MIRROR_BASIC_AUTH_DIR), then from the YAML
 * file o->config_file (keys containerdRegistryConfigPath, mirroredRegistries,
 * mirrorTargets, resolveTags, prependExisting, dialTimeout, basicAuthDir), then
 * defaults. Returns 0, -EINVAL with err "<file>:<line>:<col>: ..." for a bad
 * file or "<VAR>: ..." for a bad variable, or -errno reading the file.
 */
int mirror_opts_resolve(struct mirror_opts *o, struct log_err *err);

/*
 * Rewrite Spegel's `configuration` command line into ours, appending to out:
 * --mirrored-registries A B and --mirror-targets A B (go-arg lists: the values
 * up to the next '-' argument) become --registry=A --registry=B and
 * --mirror-target=..., --containerd-registry-config-path becomes
 * --config-path, a bare --resolve-tags becomes --resolve-tags=true,
 * --log-level=DEBUG|INFO|WARN|ERROR becomes -vv, -v or nothing, and the
 * command "configuration" becomes "configure". Everything else is copied.
 * argv[0] is copied. Returns 0 or -ENOMEM; free out with mirror_list_free.
 */
int mirror_spegel_args(int argc, char **argv, struct mirror_list *out);

/* The --distro name for d ("talos"), or NULL. */
const char *mirror_distro_name(enum mirror_distro d);
/* The distro named s, or -EINVAL. */
int mirror_distro_parse(const char *s);

/*
 * Result codes of mirror_run for check (configure and cleanup return 0).
 */
enum {
	MIRROR_CLEAN = 0,    /* nothing found */
	MIRROR_WARNINGS = 1, /* warnings only */
	MIRROR_ERRORS = 2,   /* at least one error */
};

/* The command named name ("configure", "talos-config"), or -EINVAL (mirror_cmd.c). */
int mirror_cmd_parse(const char *name);

/*
 * What a main calls: mirror_opts_resolve, then mirror_run. Returns what
 * either returns.
 */
int mirror_exec(struct mirror_opts *o, struct log_err *err);

/*
 * Run o->cmd after mirror_opts_resolve.
 * configure: writes the files as Spegel's "configuration" command does (same
 *   bytes, same _backup layout) but atomically and only when changed. Returns 0,
 *   -EINVAL for a bad registry, target, name or duration, -errno on I/O errors.
 * cleanup: restores what _backup holds, removes everything else; no-op without
 *   _backup. Returns 0 or -errno.
 * check: reports findings through o->report and returns MIRROR_CLEAN,
 *   MIRROR_WARNINGS or MIRROR_ERRORS; -errno if config_path cannot be read.
 * watch: configure, then watch config_path (inotify) and repair our
 *   directories and _backup whenever someone else removes or changes them,
 *   until SIGTERM or SIGINT (returns 0, nothing touched on the way out). Once
 *   cleanup is seen restoring _backup, nothing more is repaired. Returns what
 *   configure returns when the first configure fails.
 * err gets a one-line message on failure.
 */
int mirror_run(struct mirror_opts *o, struct log_err *err);

/*
 * The file configure writes for one registry: registry is a URL or host
 * ("https://docker.io", "registry.local:5000", "_default"), targets are
 * expanded mirror URLs. caps is "['pull', 'resolve']" or "['pull']";
 * dial_timeout and authorization (a full header value) may be NULL. Appends
 * to out. Returns 0, -EINVAL with err for a bad URL, -E2BIG/-ENOMEM.
 */
int mirror_render(struct strbuf *out, const char *registry, const struct mirror_list *targets,
		  bool resolve, const char *dial_timeout, const char *authorization,
		  struct log_err *err);

/*
 * The directory name for a registry ("docker.io", "host:5000", "_default").
 * Writes at most size bytes into dir. Returns 0 or -EINVAL (err filled) when
 * the registry is not an http(s) URL or host[:port] that is safe as a path.
 */
int mirror_registry_dir(const char *registry, char *dir, size_t size, struct log_err *err);

/*
 * What is wrong with s as a dial_timeout to write: NULL when fine, else the
 * end of a message ("is not a duration like 200ms", "is out of range: ...",
 * "is negative: ..."). s is read by Go's time.ParseDuration (pkg/goconv).
 */
const char *mirror_dial_timeout_problem(const char *s);

#endif
