/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_internal: helpers shared by the files of pkg/mirror, not exported. */
#ifndef NP_MIRROR_INTERNAL_H
#define NP_MIRROR_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "mirror/mirror.h"
#include "strbuf/strbuf.h"

/* Names and limits every file shares; then a section per file, bottom first. */

#define HOSTS_TOML "hosts.toml"
/*
 * Widest mode of a file we write: a stricter mode of the user's file is kept
 * (a hosts.toml may hold credentials in a header table, a directory a client
 * key), never group/other write, execute or set-id bits.
 */
#define MODE_MAX 0644
/* Our in-progress backup and restore directories (dot names: never a registry). */
#define BACKING_UP ".nodeprobe-backup"
#define RESTORING  ".nodeprobe-restore"
/*
 * watch's _backup repair (mirror_watch.c): the tree it builds (WATCH_BUILD), renamed to
 * WATCH_TMP once complete, then to _backup; WATCH_OLD is what older versions set aside.
 */
#define WATCH_BUILD ".nodeprobe-watch-build"
#define WATCH_TMP   ".nodeprobe-watch"
#define WATCH_OLD   ".nodeprobe-watch-old"
/* configure writes and fsyncs every new file here before it moves anything (mirror_apply.c). */
#define STAGING ".nodeprobe-stage"

/* Most entries configure, cleanup and their merge read from one directory. */
#define MIRROR_MAX_ENTRIES 4096

/* Largest hosts.toml or certificate file read. */
#define MIRROR_MAX_FILE (1u << 20)

/*
 * Each section below is used only by the files of the sections after it; mirror_cmd.c, the
 * top (mirror_cmd_parse, mirror_run and mirror_exec of mirror.h), calls down into them.
 */

/* ---- base (mirror_base.c, with the mirror_list functions of mirror.h): calls no one ---- */

/* Whether l holds name. */
bool mirror_listed(const struct mirror_list *l, const char *name);

/*
 * err = "<path>: <why>" for a read that failed with r (a negative errno);
 * -E2BIG (over cap bytes) reads "file too large (over N KiB)". Returns r.
 */
int mirror_read_error(struct log_err *err, const char *path, int r, size_t cap);

/* err = "<path> is a symbolic link (to <target>)<why>"; returns -ELOOP. */
int mirror_refuse_link(const char *path, const char *why, struct log_err *err);

/* ---- render (mirror_render.c, with mirror_render of mirror.h): no I/O ---- */

/* Whether registry r is Spegel's wildcard ("_default"); mirror_render.c. */
bool mirror_is_wildcard(const char *r);

/* ---- distro (mirror_distro.c): the table of distributions ---- */

/* One --distro row (mirror_distro.c); paths as the host sees them. */
struct mirror_distro_info {
	enum mirror_distro id;	       /* which */
	const char *name;	       /* --distro name */
	const char *config_path;       /* registry config_path (hosts dirs) */
	const char *containerd_config; /* the main containerd config file check reads */
	const char *registries_yaml;   /* k3s/RKE2 registries.yaml, or NULL */
};

/* The row of d, or NULL (UNSET, AUTO). */
const struct mirror_distro_info *mirror_distro_info(enum mirror_distro d);

/* out = root + path ("/" or NULL root: path). Returns 0 or -ENAMETOOLONG. */
int mirror_host_path(char *out, size_t size, const char *root, const char *path);

/*
 * The distro whose files <root> shows (see the man page's --distro auto);
 * fills version (Talos's VERSION_ID) when it is empty. Returns the distro or
 * -ENOENT with err.
 */
int mirror_distro_detect(const char *root, char *version, size_t vsize, struct log_err *err);

/* What check needs fixed in containerd's config, and what it knows. */
struct mirror_fix_req {
	enum mirror_distro distro;  /* not UNSET or AUTO */
	const char *distro_version; /* "1.13", or NULL */
	int containerd_major;	    /* 1, 2, or 0 when unknown */
	int config_version;	    /* 2 or 3: the version of the file to edit */
	bool discard;		    /* discard_unpacked_layers must become false */
	bool config_path;	    /* config_path must be set */
};

/* Append the exact fix for q, lines without a trailing newline. 0 or -E2BIG/-ENOMEM. */
int mirror_distro_fix(struct strbuf *out, const struct mirror_fix_req *q);

/*
 * Append to names the directories of o->config_path holding a hosts.toml k3s
 * generated (its header line; any distro), and for k3s/RKE2 (o->distro) those
 * registries.yaml manages (its mirrors' keys, "*" as _default). Returns 0 or
 * -errno with err.
 */
int mirror_distro_managed(const struct mirror_opts *o, struct mirror_list *names,
			  struct log_err *err);

/* ---- inputs (mirror_inputs.c): what configure reads besides its options ---- */

/*
 * in's mirror targets with ${VAR} expanded (an IPv6 address as the host
 * bracketed) appended to out; a target given twice is refused. 0 or -errno
 * with err. mirror_inputs.c (reads the environment).
 */
int mirror_expand_targets(const struct mirror_list *in, struct mirror_list *out,
			  struct log_err *err);

/*
 * Spegel's basic-auth header value, "Basic base64(user:pass)", from the raw
 * bytes of <dir>/username and <dir>/password (4 KiB each); *out (malloc'ed,
 * the caller frees) stays NULL when both are missing or empty. 0 or -errno
 * with err (mirror_inputs.c).
 */
int mirror_basic_auth(const char *dir, char **out, struct log_err *err);

/*
 * Spegel's existingHosts (mirror_inputs.c): the [host.'…'] tables of the
 * user's <dir>/hosts.toml (in _backup, or where a first run moves it from),
 * re-serialised into out; out NULL reads only the file's mode into *mode
 * (left as it is when there is no such file). 0 or -errno with err.
 */
int mirror_existing_hosts(const char *base, const char *dir, struct strbuf *out, mode_t *mode,
			  struct log_err *err);

/* ---- finding (mirror_finding.c): one finding of check or probe ---- */

struct toml_value;

/* containerd version as check understands it. */
struct mirror_ctrd_ver {
	bool known; /* false: unknown, report what any version would reject */
	int major, minor, patch;
};

/* One check run's state: where it is, what it knows, how bad it got. */
struct mirror_checker {
	const char *file;	    /* file being checked, for findings */
	const char *dir;	    /* its directory, for relative ca/client paths */
	struct mirror_ctrd_ver ver; /* containerd version (known or not) */
	mirror_report_fn report;
	void *data;
	int worst;		     /* MIRROR_CLEAN, MIRROR_WARNINGS or MIRROR_ERRORS */
	const char *fix;	     /* the next finding's fix, or NULL */
	const struct mirror_opts *o; /* distro, host root (containerd config only) */
};

/*
 * One finding: f->msg formatted from fmt (at most 511 bytes), f given to
 * report (NULL: nobody listens), and its severity folded into *worst
 * (MIRROR_CLEAN, MIRROR_WARNINGS, MIRROR_ERRORS; MIRROR_OK leaves it).
 */
void mirror_vfind(mirror_report_fn report, void *data, struct mirror_finding *f, int *worst,
		  const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/*
 * A finding of c at line:col in c->file, carrying c->fix (which is then
 * cleared): mirror_vfind into c->report and c->worst.
 */
void mirror_found(struct mirror_checker *c, enum mirror_severity sev, int line, int col,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* A toml_parse error "<file>:<line>:<col>: what" in err as an error finding at that position. */
void mirror_found_parse_error(struct mirror_checker *c, const struct log_err *err);

/* "a string", "an array of tables", ...: v's type as check's messages name it. */
const char *mirror_toml_type(const struct toml_value *v);

/* ---- check (mirror_check_ctrd.c, mirror_probe.c, mirror_check.c): read, never write ---- */

/*
 * Check containerd's config file c->file and its imports (mirror_check_ctrd.c):
 * discard_unpacked_layers, legacy mirrors and configs.tls beside config_path,
 * and whether its config_path includes config_path, the directory check read
 * (or that directory as the host sees it, --host-root taken off). Findings go
 * through c; c->o (may be NULL) gives the distro for the fixes and the host
 * root for absolute imports. On return c->file is the main file again and
 * c->fix is NULL.
 */
void mirror_check_ctrd(struct mirror_checker *c, const char *config_path);

/* check --probe: GET /v2/ of each mirror, and --image (mirror_probe.c). */
int mirror_probe_run(const struct mirror_opts *o, const struct mirror_list *hosts,
		     struct log_err *err);

/* Check run over the whole config path (check.c). */
int mirror_check_run(const struct mirror_opts *o, struct log_err *err);

/*
 * Check one hosts.toml text as containerd version version (NULL = unknown:
 * report what any containerd would reject). dir is the file's directory (for
 * relative ca/client paths); file is used in findings. Returns MIRROR_CLEAN,
 * MIRROR_WARNINGS or MIRROR_ERRORS.
 */
int mirror_check_hosts(const char *data, size_t len, const char *file, const char *dir,
		       const char *version, mirror_report_fn report, void *report_data);

/* ---- talos (mirror_talos.c) ---- */

/* talos-config: RegistryMirrorConfig documents to o->output (mirror_talos.c). */
int mirror_talos_config(const struct mirror_opts *o, struct log_err *err);

/* ---- plan (mirror_plan.c): what configure writes and moves; reads, never writes ---- */

/* Whether name (an entry of the config path) is one of our dot work directories above. */
bool mirror_is_work_name(const char *name);

/* _backup, .nodeprobe-backup, .nodeprobe-restore, .nodeprobe-stage: absent or our real dirs. */
int mirror_own_dirs(const char *base, struct log_err *err);

/*
 * Whether file is a hosts.toml in the shape Spegel's template (and configure)
 * writes: an optional server line, then [host.'…'] tables of capabilities,
 * dial_timeout and an Authorization header, no trailing newline.
 */
bool mirror_hosts_generated(const char *file);

/* One registry directory configure writes. */
struct mirror_want {
	char dir[256];	     /* directory name under config_path */
	struct strbuf hosts; /* hosts.toml content */
	mode_t mode;	     /* hosts.toml mode */
	bool copy_backup;    /* prepend: copy _backup/<dir>/ files missing in <dir>/ */
	bool user_hosts;     /* <dir>/hosts.toml is the user's: it moves into _backup */
	bool write;	     /* hosts.toml must be written */
	bool fresh;	     /* base/<dir> does not exist: STAGING/<dir> is renamed into place */
};

/* What one configure does, decided before its first change on disk. */
struct mirror_plan {
	const char *base;	    /* o->config_path, borrowed */
	struct mirror_want *w;	    /* registry directories to write, in order; owned */
	size_t nw;		    /* count */
	struct mirror_list managed; /* names a distro manages: never moved or written; owned */
	bool ours_in_place;	    /* watch's repair: a wanted dir not in _backup is ours */
	bool first;		    /* no _backup yet: the user's entries move into it (classify) */
};

/*
 * Build p from o (p's own strings; free with mirror_plan_free, also on
 * failure): the config path's work directories checked, the targets expanded,
 * each registry's hosts.toml rendered (with the user's existing hosts when
 * prepending) and its mode taken from the user's. ours_in_place: the caller
 * knows the registry directories it is about to write are its own (watch
 * repairing them), so one that is not in _backup is rewritten in place rather
 * than moved into _backup as a user's. Reads only. 0, or -EINVAL (bad
 * registry, target, duration), -ENOTDIR, -E2BIG or -errno, with err.
 */
int mirror_plan_build(const struct mirror_opts *o, bool ours_in_place, struct mirror_plan *p,
		      struct log_err *err);
/*
 * Fill p->first and each want's fresh, user_hosts and write from the tree as
 * it is now (after mirror_recover). Reads only. 0, or -ELOOP / -ENOTDIR for a
 * registry path that is not a real directory, -errno, with err.
 */
int mirror_plan_classify(struct mirror_plan *p, struct log_err *err);
void mirror_plan_free(struct mirror_plan *p);

/* ---- journal (mirror_journal.c): the undo of configure ---- */

/*
 * What configure changed after staging (mirror_journal.c), undone in reverse
 * when a later step fails, so the tree is the old one again.
 */
enum mirror_jkind {
	MIRROR_J_RENAME,  /* from renamed to to: undone by renaming it back */
	MIRROR_J_LINK,	  /* to linked to from: to removed, or renamed back when from is gone */
	MIRROR_J_REPLACE, /* from replaced by a rename, its old file linked to to: to renamed over
			     it */
	MIRROR_J_MKDIR,	  /* directory from made: removed when empty */
};
struct mirror_jstep {
	enum mirror_jkind kind;
	int d1, d2;	 /* the directories of from and to (indexes into dirs) */
	char *from, *to; /* paths, for messages; the last component is the name in d1, d2 */
};
/* A directory a step acts in, held open so an undo never follows a path swapped meanwhile. */
struct mirror_jdir {
	int fd;	   /* O_NOFOLLOW descriptor of our own */
	dev_t dev; /* which directory */
	ino_t ino;
};
struct mirror_journal {
	struct mirror_jstep *v;
	size_t n;
	struct mirror_jdir *dirs;
	size_t ndirs;
};

void mirror_journal_free(struct mirror_journal *j);
/*
 * Every step acts in, and is undone in, the directories it is given, never by
 * path again: a path's parent is opened with mirror_open_dir (a symbolic link
 * refused). Each returns 0 or -errno with err.
 */
/* Note directory path as made. */
int mirror_journal_mkdir(struct mirror_journal *j, const char *path, struct log_err *err);
/* rename a to b, noted first (a kill in between leaves nothing to undo). */
int mirror_jrename(struct mirror_journal *j, const char *a, const char *b, struct log_err *err);
/*
 * The same relative to directories opened with mirror_open_dir (dir1, dir2:
 * their paths, for messages): renameat of name; linkat of name in fd1 as to in
 * fd2.
 */
int mirror_jrenameat(struct mirror_journal *j, int fd1, const char *dir1, int fd2, const char *dir2,
		     const char *name, struct log_err *err);
int mirror_jlinkat(struct mirror_journal *j, int fd1, const char *dir1, int fd2, const char *dir2,
		   const char *name, const char *to, struct log_err *err);
/*
 * renameat of name from sfd into dfd, the file it replaces (not a directory)
 * first linked as keep in kfd: one step, undone by renaming keep back over it.
 */
int mirror_jreplaceat(struct mirror_journal *j, int sfd, const char *sdir, int dfd,
		      const char *ddir, const char *name, int kfd, const char *kdir,
		      const char *keep, struct log_err *err);
/*
 * Open directory path never through a symbolic link (O_NOFOLLOW): the
 * descriptor, or -ELOOP / -ENOTDIR / -errno with err.
 */
int mirror_open_dir(const char *path, struct log_err *err);
/* mirror_jrename of from_dir/name to to_dir/name, logged. */
int mirror_jmove(struct mirror_journal *j, const char *from_dir, const char *to_dir,
		 const char *name, struct log_err *err);
/* Undo j in reverse. 0, or the first -errno (each logged). */
int mirror_journal_undo(const struct mirror_journal *j);

/* ---- restore (mirror_restore.c): cleanup, the merge back, recovery after a kill ---- */

/*
 * fs_list_dir of dir, refused with -E2BIG and err naming dir and the bound
 * when it holds more than MIRROR_MAX_ENTRIES entries (mirror_restore.c).
 */
int mirror_list_bounded(const char *dir, char ***names, size_t *n, struct log_err *err);

/*
 * What a killed run left, under the lock (mirror_restore.c): a _backup repair
 * of watch finished (WATCH_TMP complete) or dropped (WATCH_BUILD), STAGING
 * removed. Returns 0 or -errno with err.
 */
int mirror_recover(const char *base, struct log_err *err);

/*
 * Move every entry of from into directory to: an entry absent there is
 * renamed; two directories are merged the same way (from's then removed); a
 * regular file with the same bytes and mode replaces the one there. Anything
 * else is a conflict: -EEXIST with err naming both paths and what to do.
 * Renames only, so an interrupted merge is finished by the next one.
 */
int mirror_merge(const char *from, const char *to, struct log_err *err);

/*
 * configure, a registry directory base/name no longer written whose user's
 * hosts.toml is in bak/name (mirror_restore.c): as a first run does, bak/name
 * goes back into it (the user's hosts.toml renamed over ours, never a moment
 * without one), then it moves into bak whole (its mode and owner). 1 when
 * moved, 0 when not a directory or holding only our hosts.toml (for
 * mirror_drop_ours), -errno with err.
 */
int mirror_back_up_rest(const char *base, const char *bak, const char *name, struct log_err *err);

/*
 * Finish an interrupted cleanup: RESTORING merged back into base (cleanup's
 * merge: our hosts.toml in a registry directory not in managed, and a copy
 * --prepend-existing made, are replaced by the user's). 0 or -errno with err.
 */
int mirror_finish_restore(const char *base, const struct mirror_list *managed, struct log_err *err);

/*
 * Remove what configure wrote in the directory base/name (bak is _backup): its
 * hosts.toml when in the generated shape or when bak/name holds the user's
 * one, then the directory when that leaves it empty (keep_dir: unless bak/name
 * is a directory of the same mode, whose entries a merge brings back into it,
 * keeping the user's directory itself). Anything else, or a name that is not a
 * real directory, stays. Returns 0 or -errno with err.
 */
int mirror_drop_ours(const char *base, const char *bak, const char *name, bool keep_dir,
		     struct log_err *err);

/* cleanup (mirror_restore.c): what mirror_run does for MIRROR_CLEANUP, unlocked. */
int mirror_cleanup(const struct mirror_opts *o, struct log_err *err);

/* ---- apply (mirror_apply.c): execute a plan ---- */

/* How long configure, cleanup or a repair waits for another one on the same path. */
#define MIRROR_LOCK_MS 30000

/*
 * Lock config_path (an flock on the directory) against the other writers of
 * pkg/mirror; mirror_apply.c. Returns a handle for mirror_unlock (also when
 * the path does not exist yet), or -ETIMEDOUT / -errno with err.
 */
int mirror_lock(const char *config_path, struct log_err *err);
void mirror_unlock(int lock);

/*
 * Make the tree what p says: work left by a killed run finished, p classified,
 * every new file staged, then the user's entries moved into _backup and ours
 * installed, undone in reverse on failure. 0 or -errno with err.
 */
int mirror_apply_plan(struct mirror_plan *p, struct log_err *err);
/* configure, unlocked: mirror_plan_build, mirror_apply_plan, mirror_plan_free. */
int mirror_configure(const struct mirror_opts *o, bool ours_in_place, struct log_err *err);

/* ---- snapshots (mirror_snap.c) ---- */

/* One entry of a snapshot: path relative to the tree's parent, kind, mode, content. */
struct snap_node {
	char *rel;   /* "_backup/docker.io/hosts.toml" */
	mode_t type; /* S_IFDIR, S_IFREG or S_IFLNK (anything else is not kept) */
	mode_t mode; /* permission bits */
	char *data;  /* file content or link target (NUL-terminated), NULL for a dir */
	size_t len;  /* bytes of data */
};

/* A tree below a directory we own, as read at one moment. */
struct snap {
	struct snap_node *v; /* nodes, parents before children */
	size_t n;	     /* count */
	size_t bytes;	     /* sum of len */
	bool present;	     /* the tree's root existed */
};

/* Free what s holds and reset it. */
void mirror_snap_free(struct snap *s);
/*
 * Read base/<name> into s (a link never followed; of a registry directory only
 * its hosts.toml, of _backup everything). 0, or -E2BIG over the bounds (the man
 * page's LIMITS) or -errno, with err.
 */
int mirror_snap_take(struct snap *s, const char *base, const char *name, struct log_err *err);
/* What of kept is missing or changed in now, in words; "" when all is there (extras ignored). */
const char *mirror_snap_diff(const struct snap *kept, const struct snap *now);
/* Write s back as a whole (its tree is gone) via WATCH_BUILD and WATCH_TMP. 0 or -errno. */
int mirror_snap_restore(const struct snap *s, const char *base, struct log_err *err);
/* Put back in base what of s is missing or changed in now; nothing is removed. 0 or -errno. */
int mirror_snap_fill(const struct snap *s, const struct snap *now, const char *base,
		     struct log_err *err);

/* ---- watch (mirror_watch.c): configure, then keep it in place ---- */

/*
 * watch's back-off against something that rewrites the config path in a loop
 * (mirror_watch.c): the latest repairs and the delay before the next one.
 */
#define MIRROR_STORM_REPAIRS 5
struct mirror_backoff {
	long long at[MIRROR_STORM_REPAIRS]; /* ms of the latest repairs, a ring */
	unsigned n;			    /* repairs noted */
	long long delay_ms;		    /* delay before the next repair, 0 = none */
};

/*
 * Note a repair at t (ms, monotonic) in b and set b->delay_ms. Returns the span
 * in ms of the last MIRROR_STORM_REPAIRS repairs when they make a fight (the
 * caller warns), else -1.
 */
long long mirror_backoff_note(struct mirror_backoff *b, long long t);

/* watch (mirror_watch.c): what mirror_run does for MIRROR_WATCH. */
int mirror_watch_run(const struct mirror_opts *o, struct log_err *err);

#endif
