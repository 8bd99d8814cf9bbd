/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_internal: what pkg/reload's files and its tests share: Reloader's contract as pure
 * functions (hash, names, workloads, decision, patches), the controller's tables, the metrics. */
#ifndef NP_RELOAD_INTERNAL_H
#define NP_RELOAD_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "kube/kube.h"
#include "reload/reload.h"
#include "strbuf/strbuf.h"

/* What triggers a reload. */
enum reload_type {
	RELOAD_CONFIGMAP = 0,
	RELOAD_SECRET = 1,
	RELOAD_SPC = 2, /* a SecretProviderClass (--enable-csi-integration; reload_csi.c) */
};

/* Workload kinds handled. */
enum reload_kind {
	RELOAD_DEPLOYMENT = 0,
	RELOAD_STATEFULSET = 1,
	RELOAD_DAEMONSET = 2,
	RELOAD_CRONJOB = 3, /* batch/v1: a Job is created from its jobTemplate */
	RELOAD_JOB = 4,	    /* batch/v1: deleted and created again */
	RELOAD_ROLLOUT = 5, /* argoproj.io/v1alpha1 (--is-Argo-Rollouts) */
	RELOAD_NKINDS = 6,
};

/* "ConfigMap"/"Secret"; "CONFIGMAP"/"SECRET"; "Deployment"/... (static strings). */
const char *reload_type_name(enum reload_type t);
const char *reload_type_upper(enum reload_type t);
const char *reload_kind_name(enum reload_kind k);

#define RELOAD_HASH_HEX 41 /* 40 hex digits and a NUL */
#define RELOAD_HASH_ALT 32 /* raw SHA-512/256 digest (Reloader PR #1073, no release) */

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
 * SHA-512/256 (Reloader PR #1073; in no release checked). "" is current only for empty data
 * (the first #1073 version wrote "" there). Returns 1 or 0.
 */
int reload_hash_current(const char *rec, const char *hex, const unsigned char *alt);

/*
 * Append Reloader's env var name for an object: "STAKATER_" + name upper-cased
 * with every run of other bytes turned into one "_" (leading ones dropped) +
 * "_CONFIGMAP" or "_SECRET". Returns 0 or the sb error.
 */
int reload_env_name(struct strbuf *sb, const char *name, enum reload_type type);
/* 1 when names a and b give the same env var name (for one type), else 0. */
int reload_env_same(const char *a, const char *b);

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
	RA_SPC_AUTO,	/* secretproviderclass.reloader.stakater.com/auto */
	RA_SPC_RELOAD,	/* secretproviderclass.reloader.stakater.com/reload */
	RA_SPC_EXCLUDE, /* secretproviderclasses.exclude.reloader.stakater.com/reload */
	RA_N,
};

/* The annotation key for an index (static string, or the override reload_ann_names set). */
const char *reload_ann_key(enum reload_ann a);

/*
 * Use the names of Reloader's annotation flags (--auto-annotation, ...) from
 * names[RELOAD_ANN_NNAMES] (NULL entries: the defaults). The strings are
 * borrowed until the next call; names NULL restores every default. Not
 * thread-safe: called before the controller starts.
 */
void reload_ann_names(const char *const *names);
/* The key for a name of enum reload_ann_name (default or override; borrowed). */
const char *reload_ann_name(enum reload_ann_name n);

#define RELOAD_LAST_RELOADED_FROM "reloader.stakater.com/last-reloaded-from"
#define RELOAD_MATCH		  reload_ann_name(RELOAD_ANN_MATCH)
#define RELOAD_IGNORE		  reload_ann_name(RELOAD_ANN_IGNORE)
#define RELOAD_ROLLOUT_STRATEGY	  "reloader.stakater.com/rollout-strategy"
/* SHA-1 of Reloader's delete marker "__RELOADER_EMPTY_DELETE_MARKER__" (--reload-on-delete). */
#define RELOAD_DELETE_HASH "aae45badef99284e4dae01d6046154ea9d99532f"

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
	int ci, ei;	 /* indices of the container and the env entry (JSON patch paths) */
};

/*
 * A compiled "reload" list (reload_relist.c), shared by every workload of one
 * namespace whose annotation has the same text: plain names compared as
 * strings, the other entries Go regexes matching whole names; invalid entries
 * are left out. Opaque.
 */
struct reload_relist;

#define RELOAD_LIST_TEXT_MAX (64u << 10) /* bytes of one reload annotation compiled */
#define RELOAD_LIST_RE_MEM   (16u << 10) /* RE2 memory of a reload-list pattern, + 64 B/byte */
#define RELOAD_LIST_NS_MAX   (2u << 20)	 /* bytes the lists of one namespace may be charged */
#define RELOAD_LIST_MEM_MAX  (16u << 20) /* bytes the lists of all namespaces may be charged */

/* Set the three budgets (tests lower them); 0 restores a default. Not thread-safe. */
void reload_relist_limits(size_t text_max, size_t ns_max, size_t mem_max);

/* What reload_relist_get is asked. */
struct reload_relist_req {
	const char *ns;	  /* the workload's namespace: lists are shared and charged in it */
	const char *text; /* the annotation value */
	const char *what; /* "<Kind> <ns>/<name>: annotation <key>" for warnings; NULL: quiet */
	struct reload_relist *const *old; /* the lists of the workload's previous version, */
	size_t nold;			  /* given back after: what only they hold is credited */
};
/*
 * The compiled list for q: the one already compiled from the same text in the
 * same namespace (one more reference), or a new one. Invalid entries are left
 * out, each warned about as "<what>: invalid regex ..." unless quiet. Returns 0
 * with *out to give back with reload_relist_put; -E2BIG (the text is over the
 * per-annotation budget) or -ENOSPC (it would pass the namespace's or the
 * total budget), why then saying so with the limit and what to do; or -ENOMEM.
 */
int reload_relist_get(const struct reload_relist_req *q, struct reload_relist **out, char *why,
		      size_t whylen);
/* Give a reference back (NULL allowed); the last one frees the list and its budget. */
void reload_relist_put(struct reload_relist *rl);
/* Plain name i of rl (len set; not NUL-terminated), NULL past the last (or rl NULL). */
const char *reload_relist_literal(const struct reload_relist *rl, size_t i, size_t *len);
/* Entries of rl that are regexes (0 for NULL). */
size_t reload_relist_regexes(const struct reload_relist *rl);
/* 1 when rl (NULL: an empty list) has an entry matching the whole name. */
int reload_relist_match(const struct reload_relist *rl, const char *name);
/* Entries kept in rl (0 for NULL). */
size_t reload_relist_count(const struct reload_relist *rl);
/* Bytes charged to the budget of all lists now; to namespace ns's. */
size_t reload_relist_used(void);
size_t reload_relist_ns_used(const char *ns);
/* -E2BIG with why when an annotation of len bytes is over the per-annotation budget, else 0. */
int reload_relist_too_long(size_t len, char *why, size_t whylen);
/* SHA-1 of s[0..len) in hex: what is kept of a list over the per-annotation budget. */
int reload_relist_digest(const char *s, size_t len, char hex[RELOAD_HASH_HEX]);
/* A copy of [s, e) without Go's TrimSpace ASCII spaces at both ends; NULL: out of memory. */
char *reload_trimmed(const char *s, const char *e);

/* What is kept per workload: identity, what it uses, Reloader annotations, its records. */
struct reload_workload {
	enum reload_kind kind;
	char *ns;	    /* owned */
	char *name;	    /* owned */
	char *uid;	    /* metadata.uid (Events name it), NULL if absent; owned */
	char *ann[2][RA_N]; /* [0] metadata, [1] pod template; NULL = absent; owned */
	struct reload_relist *relist[2][RELOAD_SPC + 1]; /* [where][type] lists; NULL: none */
	unsigned char digest[2]; /* [where] bit 1 << type: ann holds a long list's SHA-1 */
	unsigned char retry[2];	 /* [where] bit 1 << type: refused for the budgets */
	char *refused;		 /* why a reload list was refused (over a budget), or NULL; owned */
	struct reload_ref *refs; /* owned array */
	size_t nrefs;
	char *first_container;	   /* owned, NULL if none */
	struct reload_envrec *env; /* owned array */
	size_t nenv;
	char *lr_type, *lr_name, *lr_hash; /* last-reloaded-from fields, or NULL; owned */
	char *rollout_strategy; /* Rollout: reloader.stakater.com/rollout-strategy; owned */
	char *pause_period;	/* Deployment: the pause-period annotation, or NULL; owned */
	char *paused_at;	/* Deployment: the paused-at annotation, or NULL; owned */
	int paused;		/* Deployment: spec.paused */
	char *spc;		/* a SecretProviderClass it uses or names (unsupported); owned */
};

/* The pod template of a workload object of kind (spec.jobTemplate.spec.template for CronJobs). */
json_t *reload_kind_template(enum reload_kind kind, json_t *obj);

/*
 * Fill w from a workload object of any kind (borrowed). Invalid
 * regexes in reload lists are skipped, with a warning unless quiet (the caller
 * has warned about the same annotation before). Returns 0, -ENOMEM, or -EINVAL
 * with err set (no metadata.name). Free with reload_workload_free either way.
 */
int reload_workload_parse(struct reload_workload *w, enum reload_kind kind, json_t *obj, int quiet,
			  struct log_err *err);
/*
 * reload_workload_parse of a new version of old (NULL: none): the reload lists
 * only old holds are credited against the budgets, as they are given back when
 * old is freed, so a workload's own edit is not refused for its old lists.
 */
int reload_workload_parse_over(struct reload_workload *w, enum reload_kind kind, json_t *obj,
			       int quiet, const struct reload_workload *old, struct log_err *err);
/*
 * Compile again the lists of w that were refused for the namespace or total
 * budget (quietly). Returns 1 when none is refused any longer (w->refused
 * freed), 0 when some still is, -ENOMEM.
 */
int reload_workload_retry_lists(struct reload_workload *w);
/* 1 when val (NULL: absent) is the reload list w keeps for annotation a at where, else 0. */
int reload_workload_same_list(const struct reload_workload *w, int where, enum reload_ann a,
			      const char *val);
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
 * What reload_should says of an object of type t in w's namespace, neither ignored nor used,
 * listed or excluded by w (match: its match annotation): RELOAD_NO_NOT_USED when search or auto
 * selects that type, else RELOAD_NO_NOT_SELECTED.
 */
enum reload_verdict reload_should_unnamed(const struct reload_workload *w, enum reload_type t,
					  int match, int auto_all);
/* w's exclude annotation for type t (metadata, borrowed), or NULL. */
const char *reload_workload_exclude(const struct reload_workload *w, enum reload_type t);

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
	int deleted;	       /* the object was deleted (--reload-on-delete) */
};

/*
 * Append the strategic-merge patch body for triggers t[0..n-1] (n >= 1) in
 * namespace ns. env-vars: one env entry per trigger, grouped by container in
 * first-seen order; annotations: last-reloaded-from for the last trigger with
 * observedAt now. Returns 0, -EINVAL (n == 0) or the sb error.
 */
int reload_patch_body(struct strbuf *sb, enum reload_strategy s, const char *ns,
		      const struct reload_trigger *t, size_t n, long long now);

/*
 * Append Reloader's last-reloaded-from value (compact JSON, Go's field order)
 * for trigger t in namespace ns observed at now. Returns 0 or the sb error.
 */
int reload_last_reloaded_json(struct strbuf *v, const char *ns, const struct reload_trigger *t,
			      long long now);

/* Resource classes the controller lists and watches. */
/* CLS_SPC: secretproviderclasspodstatuses; CLS_SPCS: secretproviderclasses (reload_csi.c). */
enum {
	CLS_CM = 0,
	CLS_SEC,
	CLS_DEP,
	CLS_STS,
	CLS_DS,
	CLS_CJ,
	CLS_JOB,
	CLS_RO,
	CLS_SPC,
	CLS_SPCS,
	NCLS
};

/* Skip reasons counted in nodeprobe_reload_skipped_total. */
enum {
	SKIP_CURRENT = 0,  /* the workload already carries the hash */
	SKIP_IGNORED,	   /* reloader.stakater.com/ignore on the object */
	SKIP_EXCLUDED,	   /* the workload's exclude list */
	SKIP_NOT_USED,	   /* selected by auto/search but not used by a container */
	SKIP_NO_CONTAINER, /* env-vars needs a container, the workload has none */
	SKIP_UNCHANGED,	   /* an update that did not change the data */
	NSKIP,
};

/* A Prometheus histogram: cumulative buckets as RELOAD_HIST_MAX bounds at most. */
#define RELOAD_HIST_MAX 16
struct reload_hist {
	unsigned long b[RELOAD_HIST_MAX]; /* observations <= bound i */
	unsigned long count;
	unsigned long long sum_us; /* microseconds */
};

/* Rollouts in one namespace, for reloader_reload_executed_total_by_namespace. */
struct reload_ns_count {
	struct reload_ns_count *next;
	unsigned long n[2]; /* [0 success, 1 failure] */
	char ns[];
};

/* Counters; updated by the controller thread, read by the HTTP thread (relaxed atomics). */
struct reload_metrics {
	unsigned long reloads[RELOAD_NKINDS][2]; /* [kind][0 success, 1 failure] */
	unsigned long skipped[NSKIP];
	unsigned long watch_restarts[NCLS];
	unsigned long objects[NCLS];  /* gauge: objects tracked */
	int ready;		      /* initial sync done, every watch has been open */
	int synced;		      /* initial sync done (watches may still be opening) */
	unsigned long watches;	      /* gauge: watches that should run (absent kinds excluded) */
	unsigned long watches_open;   /* gauge: watches whose 200 answer has arrived */
	int leader;		      /* --enable-ha: 2 leading, 1 standing by; 0 without */
	const struct kube_client *cl; /* for API request counts by code */
	/* Reloader's metrics and latencies (reload_promreloader.c) */
	struct reload_hist action_latency[RELOAD_NKINDS]; /* PATCH duration per kind */
	struct reload_hist change_latency;		  /* change seen -> PATCH answered */
	unsigned long not_selected;			  /* dropped by --namespace-selector */
	/* [configmaps, secrets, secretproviderclasspodstatuses][add, update, delete] received */
	unsigned long events[3][3];
	int csi;	  /* --enable-csi-integration: the statuses' rows are shown */
	int by_namespace; /* METRICS_COUNT_BY_NAMESPACE=enabled */
	struct reload_ns_count *ns_counts; /* rollouts per namespace (by_namespace) */
	unsigned long notify_dropped;	   /* alerts/webhooks dropped from a full queue */
	unsigned long notify_queued;	   /* gauge: alerts/webhooks waiting */
	unsigned long fenced;		   /* API writes not sent: the Lease not held */
	unsigned long oversize[NCLS];	   /* objects skipped: over the stream's limits */
	/* [CLS_SPC, CLS_SPCS]: 0 not listed yet, 1 available, 403 or 404: the answer (csi) */
	int csi_state[2];
	unsigned long csi_lost[2]; /* times it became unavailable */
};

/* Start /healthz, /readyz, /metrics on listen ("[host]:port"). Returns a handle or NULL + err. */
void *reload_http_start(const char *listen, struct reload_metrics *m, struct log_err *err);
/* Stop it (NULL allowed). */
void reload_http_stop(void *h);

#define METRIC_INC(x)	 __atomic_add_fetch(&(x), 1, __ATOMIC_RELAXED)
#define METRIC_SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define METRIC_GET(x)	 __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define METRIC_ADD(x, n) __atomic_add_fetch(&(x), (n), __ATOMIC_RELAXED)

/* ---- the controller (reload_table.c, reload_sync.c, reload_rollout.c, reload_run.c) ---- */

#define RV_MAX		 128
#define NAME_MAX_	 512
#define OBJ_MAX		 (8 * 1024 * 1024)
#define SMALL_MAX	 (1024 * 1024)
#define CONFLICT_RETRIES 5
#define LIST_RESTARTS	 3	/* a paged LIST restarted after its continue token expired */
#define RETRY_AFTER_MAX	 30	/* seconds; kube_request caps Retry-After the same */
#define ROLLOUT_RETRIES	 5	/* a failed rollout is retried after 1, 2, 4, 8, 16 s */
#define LIST_MAX_PAGES	 100000 /* a LIST longer than this (or a repeated continue) fails */

/* batch/v1 cronjobs and jobs, argoproj.io/v1alpha1 rollouts (reload_kinds.c). */
extern const struct kube_resource reload_res_cronjobs, reload_res_jobs, reload_res_rollouts;
/* The Secrets Store CSI driver's secretproviderclasspodstatuses and secretproviderclasses
 * (reload_kinds.c). */
extern const struct kube_resource reload_res_spcps, reload_res_spcs;
/* How act writes a rollout of a kind (reload_write.c). */
enum reload_shape {
	RELOAD_SHAPE_SMP, /* strategic merge PATCH (env vars of deleted objects: JSON patch) */
	RELOAD_SHAPE_JOB_FROM_TEMPLATE, /* POST a Job made from the jobTemplate */
	RELOAD_SHAPE_RECREATE,		/* DELETE the Job and POST it again */
	RELOAD_SHAPE_MERGE,		/* merge PATCH: restartAt, or the pod template */
};
/* One row of the kinds table: what act needs to know of a kind. */
struct reload_kind_info {
	const struct kube_resource *res;
	const char *api_version; /* an Event's involvedObject.apiVersion */
	enum reload_shape shape;
	unsigned char records; /* keeps a record of what it was rolled for (but restart Rollouts) */
	unsigned char pausable; /* pause-period applies (Deployments) */
};
/* The kinds table, indexed by enum reload_kind (reload_kinds.c). */
extern const struct reload_kind_info reload_kinds[RELOAD_NKINDS];
/* The API resource of each class (reload_kinds.c). */
extern const struct kube_resource *const reload_cls_res[NCLS];
/*
 * Set by SIGTERM/SIGINT (reload_on_signal); the run loop stops. Atomic (lock-free, so safe in a
 * signal handler): the notification thread reads it too.
 */
extern atomic_int reload_stop_flag;
/*
 * pthread_create with SIGTERM and SIGINT blocked in the new thread, so the signals land on the
 * main thread (whose blocking calls they interrupt). Returns pthread_create's result.
 */
int reload_thread_start(pthread_t *th, void *(*fn)(void *), void *arg);
/* Block SIGTERM and SIGINT in this thread (old: the mask before), for a library's own threads. */
void reload_signals_block(sigset_t *old);

/* Common head of every table entry. */
struct ent {
	struct ent *next;
	unsigned int h;
	unsigned char cls;
	char *ns;
	char *name;
};

/*
 * A ConfigMap or Secret: identity, version and hash only. The hash is kept
 * twice: SHA-1 as hex (written, and compared with 40-digit records) and the
 * raw SHA-512/256 (32 bytes, compared with newer Reloader's 64-digit records).
 */
struct cfg_ent {
	struct ent e;
	char *rv;
	char hash[RELOAD_HASH_HEX];
	unsigned char alt[RELOAD_HASH_ALT];
	unsigned char match, ignore, seen;
	unsigned char deleted; /* a tombstone kept for pending --reload-on-delete rollouts */
	unsigned char tomb_q;  /* on ctl.tombs (maybe created again since: then not deleted) */
	struct cfg_ent *tnext; /* ctl.tombs */
};

struct trig {
	enum reload_type type;
	char *name;
};

/* A workload: what reload_workload keeps, plus its rollout schedule. */
struct wl_ent {
	struct ent e;
	struct reload_workload w;
	unsigned char seen, pending;
	struct trig *trig;
	size_t ntrig;
	long long first_ms, due_ms, last_roll_ms;
	long long trig_ms;    /* the last change queued for it (HA: a standby's pending) */
	int fails;	      /* failed rollout attempts for the pending triggers */
	struct wl_ent *pnext; /* pending list */

	long long resume_ms;	      /* pause-period: when to resume (monotonic ms), 0: no timer */
	unsigned char spc_warned;     /* the unsupported SecretProviderClass use was reported */
	unsigned char collide_warned; /* objects sharing an env var name were reported */
	unsigned char refused_q;      /* on ctl.refused: a list to compile when budget frees */
	struct wl_ent *rnext;	      /* ctl.refused list */
	long long skipped_ms; /* the last budget ReloadSkipped Event (monotonic ms), 0: none */

	json_t *recreate; /* a Job we deleted whose copy the API refused: created later; owned */
	long long recreate_ms; /* when to try that create again (monotonic ms) */

	struct bn_node *bn;	       /* its nodes in the name index (reload_byname.c); owned */
	size_t nbn;		       /* how many */
	unsigned long bn_stamp;	       /* the last query that listed it (one listing per query) */
	unsigned char bn_unused[3][2]; /* [type][match]: reload_should_unnamed says not used */
};

struct tab {
	struct ent **b;
	size_t nb, n;
};

/* One LIST+WATCH of one resource class in one namespace ("" = all). */
struct rs {
	struct ctl *c;
	int cls;
	const char *ns;
	struct kube_stream *st;
	struct kube_watch *w;
	char rv[RV_MAX];
	int gone;	      /* a 410: re-list before watching again */
	int listing;	      /* items are from a LIST (initial or re-list) */
	int relist;	      /* this LIST is a re-list: compare and sweep */
	int fails;	      /* consecutive failed restarts */
	long long restart_ms; /* when to restart (0: running) */
	long long start_ms;   /* when the current watch started */
	long events;	      /* events the current watch delivered */
	long error_code;      /* code of an ERROR event other than 410 on it, or 0 */
	int open;	      /* the current watch's answer has arrived (kube_watch_open) */
	int held;	      /* watches given up unanswered in a row (reset once one opens) */
	int absent;	      /* the resource is not served (a CRD not installed): 404 */
	int csi_state; /* CSI classes: 0 not yet, 1 watched, 403/404 failing (reload_csi.c) */
	int csi_fails; /* CSI classes: retries in the current failure episode (the back-off) */
	/* the ConfigMap/Secret item being parsed (FLAT mode) */
	struct strbuf name, ns_, irv;
	int match, ignore;
	long code;
	struct reload_hasher hs;
	int hs_live;
};

/* An item whose hash could not be streamed: fetched whole later. */
struct deferred {
	struct deferred *next;
	int cls;
	char *ns, *name;
	char evtype[16];
};

struct reload_in_hooks;

/* What input owns (reload_list.c, reload_sync.c, reload_nsel.c). */
struct reload_in_state {
	struct rs *rs;
	size_t nrs;
	struct deferred *defer;
	struct wl_ent *refused;	  /* workloads with a list refused for a budget (reload_sync.c) */
	size_t nrefused;	  /* on that list, at most REFUSED_MAX */
	size_t refused_used;	  /* reload_relist_used() at the last try */
	struct reload_nsel *nsel; /* --namespace-selector, NULL: none */
	int list_max_pages;	  /* a LIST's page cap; 0: LIST_MAX_PAGES (tests set fewer) */
	const struct reload_in_hooks *on; /* what input tells the stages above (reload_in.h) */
	struct tab
	    spcps; /* SecretProviderClassPodStatuses and SecretProviderClasses (reload_csi.c) */
	unsigned long csi_steps; /* entries reload_csi.c visited (tests: a delete is O(1)) */
};

/* What the gates own (reload_ha.c, reload_pause.c). */
struct reload_gate_state {
	struct reload_ha *ha; /* --enable-ha: the election (reload_ha.c), else NULL */
	int npause;	      /* workloads with a pause-period resume timer armed */
};

/* What act owns (reload_rollout.c, reload_write.c, reload_events.c, reload_notify.c). */
struct reload_act_state {
	struct wl_ent *pend; /* rollouts waiting for their time */
	double tokens;	     /* the rate limit's bucket */
	long long tok_ms;
	int failures;	 /* rollouts that failed (once mode exit status) */
	int nrecreate;	 /* Jobs deleted and not yet created again (wl_ent.recreate) */
	struct evq *evq; /* ReloadSkipped Events to post from the run loop */
	const struct cfg_ent *ev_last; /* the object the Reloaded Event names (borrowed) */
	struct reload_notifyq *nq;     /* alerts and webhooks waiting for their thread, or NULL */
	unsigned long considered;      /* workloads a change was weighed against (tests: linear) */
};

/* The name index (reload_byname.c): maintained by input, read by act. */
struct reload_byname {
	struct tab keys;      /* struct bn_key: a namespace, or an object's type and name */
	unsigned long gen;    /* queries made (wl_ent.bn_stamp) */
	struct wl_ent **cand; /* the last query's workloads (borrowed) */
	size_t ncand, cap;
	unsigned long steps; /* workloads listed by queries (tests: a deletion is linear) */
};

/*
 * The controller: what every stage shares (options, client and its buffers, the tables,
 * metrics) and the state each stage owns.
 */
struct ctl {
	const struct reload_opts *o;
	struct kube_client *cl;
	struct strbuf url, body, resp;
	struct tab cfg, wl;
	struct reload_byname bn; /* the workloads in wl by the names they can roll for */
	/* deleted ConfigMaps/Secrets kept for --reload-on-delete rollouts (tomb_q, tnext) */
	struct cfg_ent *tombs;
	unsigned long swept; /* entries tombstone sweeps visited (tests: linear) */
	struct reload_metrics m;
	struct reload_in_state in;
	struct reload_gate_state gate;
	struct reload_act_state act;
};

/*
 * The name index (reload_byname.c). A workload is filed under its namespace and under each name
 * of an object it can be rolled for or is excluded from: what its pod spec uses, the plain names
 * of its reload lists and exclude lists; one with a regex in a reload list, or more than
 * RELOAD_BYNAME_NAMES_MAX list names, is filed as "any name" of its namespace instead.
 */
#define RELOAD_BYNAME_NAMES_MAX 64
/* File we (its w as it is now). Returns 0 or -ENOMEM (we is then not filed: a query misses it). */
int reload_byname_add(struct ctl *c, struct wl_ent *we);
/* Take we out (before its w changes or it is freed); not filed: nothing. */
void reload_byname_del(struct ctl *c, struct wl_ent *we);
/* The workloads of ce's namespace no query of ce lists, by what reload_should says of ce. */
struct reload_byname_rest {
	unsigned long all;    /* all of them */
	unsigned long unused; /* of those, the ones it says RELOAD_NO_NOT_USED of (not ignored) */
};
/*
 * The workloads ce may be rolled for, each once, into c->bn.cand (valid until the next query or
 * index change), and what is known of the others of its namespace in rest. Returns how many.
 * O(workloads listed), whatever the namespace's size.
 */
size_t reload_byname_query(struct ctl *c, const struct cfg_ent *ce,
			   struct reload_byname_rest *rest);
/* Free the index. */
void reload_byname_free(struct ctl *c);

/* Shared between the sibling files of this module (each defined in one). */
struct ent *reload_tab_get(const struct tab *t, int cls, const char *ns, const char *name);

int reload_tab_put(struct tab *t, struct ent *e);

void reload_tab_del(struct tab *t, struct ent *e);

void reload_on_signal(int sig);

long long reload_now_ms(void);

int reload_ns_ignored(const struct ctl *c, const char *ns);

enum reload_type reload_cls_type(int cls);

int reload_type_cls(enum reload_type t);

void reload_cfg_free(struct cfg_ent *ce);

void reload_pend_remove(struct ctl *c, struct wl_ent *we);

void reload_wl_free(struct ctl *c, struct wl_ent *we);
/* Take we off the list of workloads whose refused reload lists are tried again. */
void reload_refused_remove(struct ctl *c, struct wl_ent *we);

/* ---- kinds (reload_kinds.c), writes (reload_write.c), pause-period (reload_pause.c), Events ----
 */

/* A watch whose answer has not come by then is started again (issue 30: a held first watch). */
#define WATCH_OPEN_MS	 10000
#define WATCH_HELD_MAX	 5  /* ...doubled per held watch in a row, up to WATCH_OPEN_MS << 5 */
#define ABSENT_RECHECK_S 30 /* a workload resource not served (CRD absent) is listed again */

/* Whether class cls is listed and watched under the options (ignored types, Argo). */
int reload_cls_enabled(const struct reload_opts *o, int cls);
/* Whether a workload keeps a record of what it was rolled for (not CronJobs, restart Rollouts). */
int reload_records(const struct wl_ent *we);
/* Whether w is an Argo Rollout with rollout-strategy "restart" (rolled by spec.restartAt). */
int reload_rollout_restart(const struct reload_workload *w);
/* The container named name in a pod spec's containers array, or NULL. */
json_t *reload_template_container(json_t *containers, const char *name);
/*
 * Apply triggers to a pod template (jansson, modified in place): env-vars sets
 * or appends the STAKATER_* var in each trigger's container (a deleted
 * trigger removes it), annotations sets last-reloaded-from for the last one.
 * Returns the number of changes made, or -ENOMEM.
 */
int reload_template_apply(json_t *tmpl, enum reload_strategy s, const char *ns,
			  const struct reload_trigger *t, size_t n, long long now);
/*
 * The JSON patch removing the env vars of deleted triggers t (env-vars,
 * --reload-on-delete), each guarded by a "test" of its name. Returns the
 * number of removals (0: none recorded) or the sb error.
 */
int reload_delete_patch(struct strbuf *sb, const struct reload_workload *w,
			const struct reload_trigger *t, size_t n);

/* ---- Reloader's deployment contract (reload-surface) ---- */

/* Record a rollout attempt of kind in ns: latency histograms (change_us < 0: unknown), counts. */
void reload_metrics_rolled(struct reload_metrics *m, int kind, const char *ns, int failed,
			   long long action_us, long long change_us);
/* Add one observation of us microseconds to h with bounds[0..nb-1] (seconds). */
void reload_hist_observe(struct reload_hist *h, const double *bounds, int nb, long long us);
/* Append Reloader's metrics, the change-to-PATCH histogram and build info. Returns 0 or sb's. */
int reload_render_reloader(struct strbuf *sb, struct reload_metrics *m);
/* Free the per-namespace counts. */
void reload_metrics_free(struct reload_metrics *m);

/*
 * POST body to url (Content-Type ctype) through proxy (NULL or "": direct, also
 * ignoring proxy environment variables), 10 s at most, no redirects; the first
 * 256 bytes of the answer land in resp. Returns the HTTP status, or -EIO with
 * err set (transport error, timeout, a redirect, SIGTERM: "stopping").
 */
int reload_notify_post(const char *url, const char *proxy, const char *ctype, const char *body,
		       struct strbuf *resp, struct log_err *err);
/*
 * Reloader's alert for one rollout: its message, with "<info> : " in front
 * when set, as the body for a's sink (slack, teams, gchat: JSON as Go encodes
 * it; anything else: text without '*'); *ctype is set. Returns 0 or sb's error.
 */
int reload_alert_body(struct strbuf *sb, const struct reload_alert *a, const char *obj,
		      const char *type, const char *ns, const char *workload, const char *kind,
		      const char **ctype);
/*
 * The client configuration, found as client-go controllers find it: --kubeconfig,
 * $KUBECONFIG (':' list, merged), in-cluster, ~/.kube/config. Returns as
 * kube_config_load, or KUBE_ECONFIG when none is there.
 */
int reload_kubeconfig(struct kube_config *cfg, const struct reload_opts *o, struct log_err *err);

#endif
