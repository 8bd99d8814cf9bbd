/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload: Reloader-compatible rollouts of workloads when the ConfigMaps and Secrets they use
 * change. */
#ifndef NP_RELOAD_H
#define NP_RELOAD_H

#include <jansson.h>
#include <stddef.h>

#include "log/log.h"
#include "strbuf/strbuf.h"

/* What triggers a reload. */
enum reload_type {
	RELOAD_CONFIGMAP = 0,
	RELOAD_SECRET = 1,
};

/* How a workload is rolled. */
enum reload_strategy {
	RELOAD_ENV_VARS = 0,	/* STAKATER_<NAME>_CONFIGMAP|SECRET env var in the container */
	RELOAD_ANNOTATIONS = 1, /* reloader.stakater.com/last-reloaded-from on the pod template */
};

/* Workload kinds handled. */
enum reload_kind {
	RELOAD_DEPLOYMENT = 0,
	RELOAD_STATEFULSET = 1,
	RELOAD_DAEMONSET = 2,
	RELOAD_NKINDS = 3,
};

/* "ConfigMap"/"Secret"; "CONFIGMAP"/"SECRET"; "Deployment"/... (static strings). */
const char *reload_type_name(enum reload_type t);
const char *reload_type_upper(enum reload_type t);
const char *reload_kind_name(enum reload_kind k);

#define RELOAD_HASH_HEX 41 /* 40 hex digits and a NUL */
#define RELOAD_HASH_ALT 32 /* raw SHA-512/256 digest (Reloader since PR #1073) */

/*
 * Reloader's hash, fed one entry at a time: SHA-1 over the entries
 * "key=value" sorted bytewise and joined by ";". Entries that arrive already
 * sorted (the API server's maps are) are hashed as they stream in, so no value
 * is kept; an entry out of order makes final() return -EAGAIN and the caller
 * hashes the whole object with reload_hash_object() instead.
 */
struct reload_hasher {
	void *md;	    /* EVP_MD_CTX: SHA-1, the hash written */
	void *md2;	    /* EVP_MD_CTX: SHA-512/256, newer Reloader's, only compared */
	struct strbuf prev; /* previous key, for the order check */
	size_t n;	    /* entries so far */
	int unordered;	    /* an entry arrived out of order */
	int bad;	    /* a Secret value was not base64 */
};

/* Start a hash. Returns 0 or -ENOMEM. */
int reload_hasher_init(struct reload_hasher *h);
/* Add key=value with value as given (ConfigMap data, or binaryData already base64). */
int reload_hasher_add(struct reload_hasher *h, const char *key, size_t klen, const char *val,
		      size_t vlen);
/* Add key=<decoded value> for a base64 value (Secret data), decoding as it goes. */
int reload_hasher_add_b64(struct reload_hasher *h, const char *key, size_t klen, const char *b64,
			  size_t len);
/*
 * Finish into hex (SHA-1, 40 lowercase digits) and, if alt is not NULL, the raw
 * SHA-512/256 of the same bytes. Returns 0, -EAGAIN when entries came out of
 * order, or -EINVAL when a Secret value was not base64. Frees h either way.
 */
int reload_hasher_final(struct reload_hasher *h, char hex[RELOAD_HASH_HEX], unsigned char *alt);
/* Free without finishing (safe after final, and twice). */
void reload_hasher_free(struct reload_hasher *h);

/*
 * Hash a whole ConfigMap or Secret (jansson object with data/binaryData) the
 * way Reloader does: SHA-1 into hex and, if alt is not NULL, raw SHA-512/256
 * into alt. Returns 0, -EINVAL (a Secret value not base64) or -ENOMEM.
 */
int reload_hash_object(json_t *obj, enum reload_type type, char hex[RELOAD_HASH_HEX],
		       unsigned char *alt);

/*
 * Whether the hash rec recorded on a workload names the data whose SHA-1 is
 * hex and whose SHA-512/256 is alt (may be NULL: SHA-1 only). Decided by rec's
 * length: 40 digits are SHA-1 (older Reloader, and what we write), 64 are
 * SHA-512/256 (Reloader since PR #1073). "" is current only for empty data
 * (the first #1073 version wrote "" there). Returns 1 or 0.
 */
int reload_hash_current(const char *rec, const char *hex, const unsigned char *alt);

/*
 * Append Reloader's env var name for an object: "STAKATER_" + name upper-cased
 * with every run of other bytes turned into one "_" (leading ones dropped) +
 * "_CONFIGMAP" or "_SECRET". Returns 0 or the sb error.
 */
int reload_env_name(struct strbuf *sb, const char *name, enum reload_type type);

/* Reloader's annotations a workload can carry (indices into reload_workload.ann). */
enum reload_ann {
	RA_AUTO = 0,	/* reloader.stakater.com/auto */
	RA_CM_AUTO,	/* configmap.reloader.stakater.com/auto */
	RA_SEC_AUTO,	/* secret.reloader.stakater.com/auto */
	RA_CM_RELOAD,	/* configmap.reloader.stakater.com/reload */
	RA_SEC_RELOAD,	/* secret.reloader.stakater.com/reload */
	RA_SEARCH,	/* reloader.stakater.com/search */
	RA_CM_EXCLUDE,	/* configmaps.exclude.reloader.stakater.com/reload */
	RA_SEC_EXCLUDE, /* secrets.exclude.reloader.stakater.com/reload */
	RA_N,
};

/* The annotation key for an index (static string). */
const char *reload_ann_key(enum reload_ann a);

#define RELOAD_LAST_RELOADED_FROM "reloader.stakater.com/last-reloaded-from"
#define RELOAD_MATCH		  "reloader.stakater.com/match"
#define RELOAD_IGNORE		  "reloader.stakater.com/ignore"

/* An object the workload uses, and the container the reload is attributed to. */
struct reload_ref {
	enum reload_type type;
	char *name;	 /* owned */
	char *container; /* owned */
};

/* A STAKATER_* env var found on a container (the env-vars strategy's record). */
struct reload_envrec {
	char *container; /* owned */
	char *name;	 /* owned */
	char *value;	 /* owned */
};

/* A compiled "reload" list: Go regexes matching whole names; invalid entries are left out. */
struct reload_relist {
	struct goregex **re; /* owned */
	size_t n;
};

/* What is kept per workload: identity, what it uses, Reloader annotations, its records. */
struct reload_workload {
	enum reload_kind kind;
	char *ns;	    /* owned */
	char *name;	    /* owned */
	char *uid;	    /* metadata.uid (Events name it), NULL if absent; owned */
	char *ann[2][RA_N]; /* [0] metadata, [1] pod template; NULL = absent; owned */
	struct reload_relist relist[2][2]; /* [where][type] compiled reload lists */
	struct reload_ref *refs;	   /* owned array */
	size_t nrefs;
	char *first_container;	   /* owned, NULL if none */
	struct reload_envrec *env; /* owned array */
	size_t nenv;
	char *lr_type, *lr_name, *lr_hash; /* last-reloaded-from fields, or NULL; owned */
};

/*
 * Fill w from a Deployment/StatefulSet/DaemonSet object (borrowed). Invalid
 * regexes in reload lists are skipped, with a warning unless quiet (the caller
 * has warned about the same annotation before). Returns 0, -ENOMEM, or -EINVAL
 * with err set (no metadata.name). Free with reload_workload_free either way.
 */
int reload_workload_parse(struct reload_workload *w, enum reload_kind kind, json_t *obj, int quiet,
			  struct log_err *err);
/* Free what w owns and zero it. */
void reload_workload_free(struct reload_workload *w);

/* A changed ConfigMap or Secret, as the decision sees it. */
struct reload_object {
	enum reload_type type;
	const char *ns;
	const char *name;
	const char *hash;	  /* SHA-1 hex: what is written and compared */
	const unsigned char *alt; /* RELOAD_HASH_ALT bytes of SHA-512/256, or NULL */
	int match;		  /* reloader.stakater.com/match == "true" */
	int ignore;		  /* reloader.stakater.com/ignore == "true" */
};

/* Outcome of reload_should. */
enum reload_verdict {
	RELOAD_YES = 0,
	RELOAD_NO_IGNORED,	/* the object says ignore */
	RELOAD_NO_EXCLUDED,	/* in the workload's exclude list */
	RELOAD_NO_NOT_SELECTED, /* no annotation selects it */
	RELOAD_NO_NOT_USED,	/* selected by auto/search but no container uses it */
	RELOAD_NO_NAMESPACE,	/* another namespace */
};

/* Short reason label for metrics ("ignored", "excluded", ...). */
const char *reload_verdict_name(enum reload_verdict v);

/*
 * Reloader's ShouldReload plus container lookup for workload w and object o.
 * On RELOAD_YES *container (if not NULL) is the container the reload is
 * attributed to (borrowed from w; may be NULL for a workload without
 * containers). auto_all is --auto-reload-all.
 */
enum reload_verdict reload_should(const struct reload_workload *w, const struct reload_object *o,
				  int auto_all, const char **container);

/*
 * The hash w records for o under strategy s (borrowed from w), or NULL when w
 * carries none: env-vars: the STAKATER var of container; annotations: the
 * last-reloaded-from hash when it names o.
 */
const char *reload_recorded(const struct reload_workload *w, const struct reload_object *o,
			    const char *container, enum reload_strategy s);

/* One object to roll a workload for. */
struct reload_trigger {
	enum reload_type type;
	const char *name;
	const char *hash;
	const char *container; /* may be NULL (no containers: env-vars patch is skipped) */
};

/*
 * Append the strategic-merge patch body for triggers t[0..n-1] (n >= 1) in
 * namespace ns. env-vars: one env entry per trigger, grouped by container in
 * first-seen order; annotations: last-reloaded-from for the last trigger with
 * observedAt now. Returns 0, -EINVAL (n == 0) or the sb error.
 */
int reload_patch_body(struct strbuf *sb, enum reload_strategy s, const char *ns,
		      const struct reload_trigger *t, size_t n, long long now);

/* Options for reload_run (filled by main from the command line). */
struct reload_opts {
	const char *kubeconfig;		   /* NULL: in-cluster */
	const char *context;		   /* kubeconfig context, NULL: current */
	const char *sa_dir;		   /* service-account directory for in-cluster */
	int once;			   /* 1: reconcile and exit */
	const char **namespaces;	   /* NULL-terminated, NULL/empty: all namespaces */
	const char **ignore_ns;		   /* NULL-terminated namespaces to skip */
	const char *label_selector;	   /* server-side selector for ConfigMaps and Secrets */
	const char *secret_field_selector; /* server-side fieldSelector for Secrets */
	enum reload_strategy strategy;
	int auto_all;	      /* --auto-reload-all */
	long window_ms;	      /* coalescing window */
	long min_interval_ms; /* per-workload minimum interval between rollouts */
	double max_rate;      /* global rollouts per second (token bucket) */
	int burst;	      /* token bucket size */
	const char *listen;   /* "host:port" or ":port" for /metrics, NULL: off */
	int events;	      /* 1: post Kubernetes Events */
	long page_size;	      /* LIST limit */
	long watch_timeout_s; /* server-side watch timeout */
	int retries;	      /* API retry budget */
	int retry_base_ms;    /* first backoff step */
};

/* Fill opts with the defaults. */
void reload_opts_init(struct reload_opts *opts);

/* Exit-style results of reload_run beyond 0 and -errno. */
enum {
	RELOAD_EPARTIAL = -5001, /* once: some rollouts failed */
};

/*
 * Run the controller until SIGTERM/SIGINT (watch) or after one pass (once).
 * Returns 0, RELOAD_EPARTIAL, or a negative code with err set (configuration,
 * TLS, authentication, API errors that outlast the retries at start).
 */
int reload_run(const struct reload_opts *opts, struct log_err *err);

#endif
