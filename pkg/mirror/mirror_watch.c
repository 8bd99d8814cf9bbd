/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_watch: keep what configure wrote (our hosts.toml dirs and _backup) in place. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil/fsutil.h"
#include "log/log.h"
#include "strbuf/strbuf.h"
#include "mirror/mirror_internal.h"

/*
 * Bounds: what one snapshot of a tree we own may hold (a hosts.toml dir holds a
 * few files; _backup holds the user's config path), and the timing of repairs.
 */
#define SNAP_MAX_NODES	 1024
#define SNAP_MAX_BYTES	 (16u << 20)
#define SNAP_MAX_DEPTH	 8
#define WATCH_MAX	 512		      /* inotify watches (directories) */
#define QUIET_MS	 100		      /* a burst of events is over after this much quiet */
#define BURST_MAX_MS	 500		      /* ... or this long after its first event */
#define RESYNC_MS	 60000		      /* compare with the snapshots even without events */
#define STORM_REPAIRS	 MIRROR_STORM_REPAIRS /* this many repairs ... */
#define STORM_WINDOW_S	 60		      /* ... within this many seconds is a fight */
#define BACKOFF_FIRST_MS 2000		      /* first delay of a fight, doubled each time */
#define BACKOFF_MAX_MS	 300000		      /* longest delay */

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

static void snap_free(struct snap *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].rel);
		free(s->v[i].data);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int snap_add(struct snap *s, const char *rel, const struct stat *st, char *data, size_t len,
		    struct log_err *err)
{
	struct snap_node *v;

	if (s->n >= SNAP_MAX_NODES || s->bytes + len > SNAP_MAX_BYTES) {
		free(data);
		return log_err_set(err, -E2BIG, "%s: more than %u entries or %u MiB to keep", rel,
				   SNAP_MAX_NODES, SNAP_MAX_BYTES >> 20);
	}
	v = realloc(s->v, (s->n + 1) * sizeof(*v));
	if (!v) {
		free(data);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	s->v = v;
	v[s->n].rel = strdup(rel);
	if (!v[s->n].rel) {
		free(data);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	v[s->n].type = st->st_mode & S_IFMT;
	v[s->n].mode = st->st_mode & 07777;
	v[s->n].data = data;
	v[s->n].len = len;
	s->bytes += len;
	s->n++;
	return 0;
}

/* Read base/rel (never following a link) and, for a directory, what it holds. */
static int snap_read(struct snap *s, const char *base, const char *rel, int depth,
		     struct log_err *err)
{
	char path[PATH_MAX], child[PATH_MAX], **names = NULL;
	struct strbuf sb;
	struct stat st;
	size_t n = 0, i;
	ssize_t l;
	int r;

	if (fs_path_join(path, sizeof(path), base, rel, err) < 0)
		return -ENAMETOOLONG;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0
				       : log_err_set(err, -errno, "%s: %s", path, strerror(errno));
	if (depth == 0)
		s->present = true;
	if (S_ISLNK(st.st_mode)) {
		char *target = malloc(PATH_MAX);

		if (!target)
			return log_err_set(err, -ENOMEM, "out of memory");
		l = readlink(path, target, PATH_MAX - 1);
		if (l < 0) {
			free(target);
			return log_err_set(err, -errno, "%s: %s", path, strerror(errno));
		}
		target[l] = '\0';
		return snap_add(s, rel, &st, target, (size_t)l, err);
	}
	if (S_ISREG(st.st_mode)) {
		sb_init(&sb, MIRROR_MAX_FILE);
		r = sb_read_file(&sb, path);
		if (r < 0) {
			sb_free(&sb);
			return log_err_set(err, r, "%s: %s", path,
					   r == -E2BIG ? "file too large" : strerror(-r));
		}
		l = (ssize_t)sb.len;
		return snap_add(s, rel, &st, sb_take(&sb), (size_t)l, err);
	}
	if (!S_ISDIR(st.st_mode))
		return 0; /* a device or FIFO is nothing we write or restore */
	if (depth >= SNAP_MAX_DEPTH)
		return log_err_set(err, -E2BIG, "%s: deeper than %d directories", path,
				   SNAP_MAX_DEPTH);
	r = snap_add(s, rel, &st, NULL, 0, err);
	if (r == 0)
		r = fs_list_dir(path, &names, &n, err);
	for (i = 0; r == 0 && i < n; i++) {
		r = fs_path_join(child, sizeof(child), rel, names[i], err);
		if (r == 0)
			r = snap_read(s, base, child, depth + 1, err);
	}
	fs_names_free(names, n);
	return r;
}

static int snap_take(struct snap *s, const char *base, const char *name, struct log_err *err)
{
	int r;

	snap_free(s);
	r = snap_read(s, base, name, 0, err);
	if (r < 0)
		snap_free(s);
	return r;
}

/* What differs between the kept snapshot and now, in words ("" when equal). */
static const char *snap_diff(const struct snap *kept, const struct snap *now)
{
	size_t i;

	if (kept->present && !now->present)
		return "removed";
	if (kept->n != now->n)
		return "changed (entries added or removed)";
	for (i = 0; i < kept->n; i++) {
		const struct snap_node *a = &kept->v[i], *b = &now->v[i];

		if (strcmp(a->rel, b->rel) != 0 || a->type != b->type)
			return "changed (entries replaced)";
		if (a->mode != b->mode)
			return "changed (mode)";
		if (a->len != b->len || (a->len && memcmp(a->data, b->data, a->len) != 0))
			return "changed (content)";
	}
	return "";
}

/*
 * Write snapshot s (of base/<name>) back as base/<name>: built in WATCH_TMP, then
 * renamed into place, so a reader sees the old tree or the whole new one.
 */
static int snap_restore(const struct snap *s, const char *base, struct log_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX], dst[PATH_MAX];
	const char *root;
	size_t rootlen, i;
	int r;

	if (!s->present || s->n == 0)
		return 0;
	root = s->v[0].rel;
	rootlen = strlen(root);

	r = fs_remove_tree(base, WATCH_TMP, err);
	if (r == 0)
		r = fs_remove_tree(base, WATCH_OLD, err);
	if (r == 0)
		r = fs_path_join(tmp, sizeof(tmp), base, WATCH_TMP, err);
	for (i = 0; r == 0 && i < s->n; i++) {
		const struct snap_node *nd = &s->v[i];
		char *slash;

		if ((size_t)snprintf(path, sizeof(path), "%s%s", tmp, nd->rel + rootlen) >=
		    sizeof(path))
			return log_err_set(err, -ENAMETOOLONG, "%s: path too long", nd->rel);
		if (nd->type == S_IFDIR) {
			if (mkdir(path, 0700) < 0 || chmod(path, nd->mode) < 0)
				r = log_err_set(err, -errno, "%s: %s", path, strerror(errno));
		} else if (nd->type == S_IFLNK) {
			if (symlink(nd->data, path) < 0)
				r = log_err_set(err, -errno, "%s: %s", path, strerror(errno));
		} else {
			slash = strrchr(path, '/');
			*slash = '\0';
			r = fs_publish(path, slash + 1, nd->data, nd->len, nd->mode, err);
			r = r < 0 ? r : 0;
		}
	}
	if (r < 0)
		return r;
	if (fs_path_join(dst, sizeof(dst), base, root, err) < 0 ||
	    fs_path_join(path, sizeof(path), base, WATCH_OLD, err) < 0)
		return -ENAMETOOLONG;
	if (rename(dst, path) < 0 && errno != ENOENT)
		return log_err_set(err, -errno, "cannot rename %s to %s: %s", dst, path,
				   strerror(errno));
	if (rename(tmp, dst) < 0)
		return log_err_set(err, -errno, "cannot rename %s to %s: %s", tmp, dst,
				   strerror(errno));
	return fs_remove_tree(base, WATCH_OLD, err);
}

/* ---- the watcher ---- */

struct watcher {
	const struct mirror_opts *o; /* options of the configure it repeats */
	const char *base;	     /* the config path */
	char (*dirs)[256];	     /* our registry directory names */
	size_t ndirs;		     /* count */
	struct snap *ours;	     /* per dir: what configure left there */
	struct snap backup;	     /* _backup as configure left it */
	int ifd;		     /* inotify descriptor, -1 when none */
	size_t nwatches;	     /* watches added to ifd */
	bool dormant;		     /* cleanup ran: repair nothing any more */
	struct mirror_backoff bo;    /* repairs done and the delay before the next */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const uint32_t DIR_EVENTS = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
				   IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF |
				   IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW;

/* Watch every directory of snapshot s (its nodes are relative to base). */
static void watch_snap(struct watcher *w, const struct snap *s)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < s->n && w->nwatches < WATCH_MAX; i++) {
		if (s->v[i].type != S_IFDIR ||
		    fs_path_join(path, sizeof(path), w->base, s->v[i].rel, NULL) < 0)
			continue;
		if (inotify_add_watch(w->ifd, path, DIR_EVENTS) >= 0)
			w->nwatches++;
	}
}

static int watch_drain(struct watcher *w);

/*
 * A new inotify descriptor watching the config path and every directory we
 * own in it. The old one is read to its end first (a cleanup's start must
 * not be missed); other events our own writes caused go with it.
 */
static int watch_rearm(struct watcher *w, struct log_err *err)
{
	size_t i;

	if (w->ifd >= 0) {
		watch_drain(w);
		close(w->ifd);
	}
	w->nwatches = 0;
	w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ifd < 0)
		return log_err_set(err, -errno, "inotify: %s", strerror(errno));
	if (inotify_add_watch(w->ifd, w->base, DIR_EVENTS) >= 0)
		w->nwatches++;
	else if (errno != ENOENT) /* removed as a whole: the repair makes it again */
		return log_err_set(err, -errno, "%s: cannot watch: %s", w->base, strerror(errno));
	for (i = 0; i < w->ndirs; i++)
		watch_snap(w, &w->ours[i]);
	watch_snap(w, &w->backup);
	if (w->nwatches >= WATCH_MAX)
		log_warn("%s: watching only the first %d directories", w->base, WATCH_MAX);
	return 0;
}

/* Snapshots of our trees and _backup into ours[ndirs] and *bak. */
static int snap_all(const struct watcher *w, struct snap *ours, struct snap *bak,
		    struct log_err *err)
{
	size_t i;
	int r = 0;

	for (i = 0; r == 0 && i < w->ndirs; i++)
		r = snap_take(&ours[i], w->base, w->dirs[i], err);
	if (r == 0)
		r = snap_take(bak, w->base, MIRROR_BACKUP_DIR, err);
	return r;
}

#define SETTLE_TRIES 4

/*
 * configure, then remember what it left. A write of someone else's between
 * configure and the snapshot must not become what we keep, so: configure,
 * snapshot, configure again, snapshot again; the snapshots are kept when the
 * two agree (the second configure, which writes only what differs, found
 * nothing to change), else the whole is tried again.
 */
static int watch_settle(struct watcher *w, bool repair, struct log_err *err)
{
	struct snap *a = calloc(w->ndirs, sizeof(*a)), *b = calloc(w->ndirs, sizeof(*b));
	struct snap abak = {0}, bbak = {0};
	bool same = false;
	size_t i;
	int r = a && b ? 0 : log_err_set(err, -ENOMEM, "out of memory"), tries;

	for (tries = 0; r == 0 && !same && tries < SETTLE_TRIES; tries++) {
		/* in a repair the changed directories are ours: rewritten in place, not kept */
		r = mirror_configure_ex(w->o, repair, err);
		if (r == 0)
			r = snap_all(w, a, &abak, err);
		if (r == 0)
			r = mirror_configure_ex(w->o, repair, err);
		if (r == 0)
			r = snap_all(w, b, &bbak, err);
		same = r == 0 && !*snap_diff(&abak, &bbak);
		for (i = 0; r == 0 && i < w->ndirs; i++) {
			const char *why = snap_diff(&b[i], &a[i]);

			if (*why)
				log_warn("restoring %s/%s: %s (while the last repair wrote it)",
					 w->base, w->dirs[i], why);
			same = same && !*why;
		}
	}
	if (r == 0 && !same)
		r = log_err_set(err, -EAGAIN,
				"%s: changed by someone else while being written, %d times",
				w->base, SETTLE_TRIES);
	for (i = 0; r == 0 && i < w->ndirs; i++) {
		snap_free(&w->ours[i]);
		w->ours[i] = b[i];
		memset(&b[i], 0, sizeof(b[i]));
	}
	if (r == 0) {
		snap_free(&w->backup);
		w->backup = bbak;
		memset(&bbak, 0, sizeof(bbak));
	}
	for (i = 0; a && b && i < w->ndirs; i++) {
		snap_free(&a[i]);
		snap_free(&b[i]);
	}
	snap_free(&abak);
	snap_free(&bbak);
	free(a);
	free(b);
	return r;
}

/*
 * How many entries of base are someone else's: not dot-named (our work
 * directories) and not one of our trees exactly as configure left it. Sets
 * untouched[i] for each of our trees still as configure left it.
 */
static int foreign_entries(struct watcher *w, bool *untouched, struct log_err *err)
{
	struct snap now = {0};
	char **names = NULL;
	size_t n = 0, i, j;
	int r, foreign = 0;

	for (j = 0; j < w->ndirs; j++) {
		r = snap_take(&now, w->base, w->dirs[j], err);
		untouched[j] = r == 0 && now.present && !*snap_diff(&w->ours[j], &now);
		snap_free(&now);
		if (r < 0)
			return r;
	}
	r = fs_list_dir(w->base, &names, &n, err);
	for (i = 0; r == 0 && i < n; i++) {
		bool ours = names[i][0] == '.';

		for (j = 0; j < w->ndirs && !ours; j++)
			ours = untouched[j] && !strcmp(names[i], w->dirs[j]);
		foreign += !ours;
	}
	fs_names_free(names, n);
	return r < 0 ? r : foreign;
}

/*
 * _backup is gone. When only our untouched trees are left, a person removed
 * it: put it back from memory. When other entries stand there, someone
 * re-synced the whole path (Talos removes every directory it did not write,
 * then writes its own): remove our untouched trees so that configure's first
 * backup takes exactly what the other writer left, as on a new node.
 */
static int backup_gone(struct watcher *w, struct log_err *err)
{
	bool *untouched = calloc(w->ndirs, sizeof(*untouched));
	size_t i;
	int r, foreign;

	if (!untouched)
		return log_err_set(err, -ENOMEM, "out of memory");
	foreign = foreign_entries(w, untouched, err);
	r = foreign < 0 ? foreign : 0;
	if (foreign == 0) {
		log_warn("restoring %s/%s: removed", w->base, MIRROR_BACKUP_DIR);
		r = snap_restore(&w->backup, w->base, err);
	} else if (foreign > 0) {
		log_warn(
		    "%s: %s removed and %d %s written by someone else (a distro's re-sync?): backing up what is there now and re-applying",
		    w->base, MIRROR_BACKUP_DIR, foreign, foreign == 1 ? "entry" : "entries");
		for (i = 0; r == 0 && i < w->ndirs; i++)
			if (untouched[i])
				r = fs_remove_tree(w->base, w->dirs[i], err);
	}
	free(untouched);
	return r;
}

/*
 * Compare what is on disk with the snapshots; repair what differs. Returns 1
 * when something was repaired, 0 when all was in place, -errno on failure.
 */
static int watch_repair(struct watcher *w, bool *changed, struct log_err *err)
{
	struct snap now = {0};
	char path[PATH_MAX];
	const char *why;
	size_t i;
	int r;

	*changed = false;
	if (fs_path_join(path, sizeof(path), w->base, RESTORING, err) < 0)
		return -ENAMETOOLONG;
	if (fs_is_dir(path)) {
		w->dormant = true;
		log_warn("%s: cleanup is restoring %s: not re-applying until restarted", w->base,
			 MIRROR_BACKUP_DIR);
		return 0;
	}
	if (access(w->base, F_OK) < 0 && errno == ENOENT) {
		/* removed as a whole: made again as configure makes it, then all of it restored */
		*changed = true;
		log_warn("restoring %s: removed", w->base);
		r = fs_mkdir_p(w->base, 0755);
		if (r < 0)
			return log_err_set(err, r, "%s: cannot create directory: %s", w->base,
					   strerror(-r));
	}
	r = snap_take(&now, w->base, MIRROR_BACKUP_DIR, err);
	if (r < 0)
		return r;
	why = snap_diff(&w->backup, &now);
	snap_free(&now);
	if (*why) {
		*changed = true;
		if (!strcmp(why, "removed")) {
			r = backup_gone(w, err);
		} else {
			log_warn("restoring %s/%s: %s", w->base, MIRROR_BACKUP_DIR, why);
			r = snap_restore(&w->backup, w->base, err);
		}
		if (r < 0)
			return r;
	}
	for (i = 0; i < w->ndirs; i++) {
		r = snap_take(&now, w->base, w->dirs[i], err);
		why = r < 0 ? "" : snap_diff(&w->ours[i], &now);
		snap_free(&now);
		if (r < 0)
			return r;
		if (*why) {
			*changed = true;
			log_warn("restoring %s/%s: %s", w->base, w->dirs[i], why);
		}
	}
	if (!*changed)
		return 0;
	r = watch_settle(w, true, err);
	return r < 0 ? r : 1;
}

/*
 * After a repair: when STORM_REPAIRS of them fell within STORM_WINDOW_S, someone
 * rewrites the path in a loop; wait longer before each next repair. Once
 * delayed, the repairs are spread out by the delay itself, so the fight is
 * over only when STORM_WINDOW_S went by after the delay with nothing to repair.
 */
long long mirror_backoff_note(struct mirror_backoff *b, long long t)
{
	long long oldest, prev = b->n ? b->at[(b->n - 1) % STORM_REPAIRS] : 0;

	b->at[b->n % STORM_REPAIRS] = t;
	b->n++;
	if (b->delay_ms && t - prev - b->delay_ms > STORM_WINDOW_S * 1000LL)
		b->delay_ms = 0;
	if (b->n < STORM_REPAIRS)
		return -1;
	oldest = b->at[b->n % STORM_REPAIRS];
	if (!b->delay_ms && t - oldest > STORM_WINDOW_S * 1000LL)
		return -1;
	b->delay_ms = b->delay_ms ? b->delay_ms * 2 : BACKOFF_FIRST_MS;
	if (b->delay_ms > BACKOFF_MAX_MS)
		b->delay_ms = BACKOFF_MAX_MS;
	return t - oldest;
}

static void watch_note_repair(struct watcher *w, long long t)
{
	long long span = mirror_backoff_note(&w->bo, t);

	if (span < 0)
		return;
	log_warn(
	    "%s: repaired %d times in %lld s: something rewrites it in a loop (a distro that owns it? see nodeprobe-mirror(8), DISTROS); next repair no sooner than %lld s",
	    w->base, STORM_REPAIRS, span / 1000 + 1, w->bo.delay_ms / 1000);
}

/* Read the pending inotify events; note whether cleanup started. Returns events read. */
static int watch_drain(struct watcher *w)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t len;
	char *p;
	int n = 0;

	for (;;) {
		len = read(w->ifd, buf, sizeof(buf));
		if (len <= 0)
			return n;
		for (p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			n++;
			if (ev->len && (ev->mask & (IN_CREATE | IN_MOVED_TO)) &&
			    !strcmp(ev->name, RESTORING) && !w->dormant) {
				w->dormant = true;
				log_warn(
				    "%s: cleanup is restoring %s: not re-applying until restarted",
				    w->base, MIRROR_BACKUP_DIR);
			}
		}
	}
}

static int watch_setup(struct watcher *w, const struct mirror_opts *o, struct log_err *err)
{
	size_t i;
	int r, lock;

	memset(w, 0, sizeof(*w));
	w->o = o;
	w->base = o->config_path;
	w->ifd = -1;
	w->ndirs = o->registries.n ? o->registries.n : 1;
	w->dirs = calloc(w->ndirs, sizeof(*w->dirs));
	w->ours = calloc(w->ndirs, sizeof(*w->ours));
	if (!w->dirs || !w->ours)
		return log_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < w->ndirs; i++) {
		r = mirror_registry_dir(o->registries.n ? o->registries.v[i] : "_default",
					w->dirs[i], sizeof(w->dirs[i]), err);
		if (r < 0)
			return r;
	}
	lock = mirror_lock(w->base, err);
	if (lock < 0)
		return lock;
	r = watch_settle(w, false, err);
	mirror_unlock(lock);
	if (r == 0)
		r = watch_rearm(w, err);
	return r;
}

static void watch_free(struct watcher *w)
{
	size_t i;

	if (w->ifd >= 0)
		close(w->ifd);
	for (i = 0; w->ours && i < w->ndirs; i++)
		snap_free(&w->ours[i]);
	snap_free(&w->backup);
	free(w->ours);
	free(w->dirs);
}

int mirror_watch_run(const struct mirror_opts *o, struct log_err *err)
{
	struct watcher w;
	struct pollfd pfd[2];
	sigset_t mask;
	long long t, due = -1, first = -1, next_check;
	int sfd = -1, r, timeout, lock;
	bool changed = false;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
	    (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		return log_err_set(err, -errno, "signalfd: %s", strerror(errno));
	r = watch_setup(&w, o, err);
	if (r < 0)
		goto out;
	log_info("watching %s (%zu registries, %zu directories)", w.base, w.ndirs, w.nwatches);
	next_check = now_ms() + RESYNC_MS;
	/* what changed between the first configure and the watches shows up here */
	due = now_ms() + QUIET_MS;
	for (;;) {
		t = now_ms();
		timeout = (int)((due >= 0 ? due : next_check) - t);
		pfd[0] = (struct pollfd){.fd = sfd, .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = w.ifd, .events = POLLIN};
		r = poll(pfd, 2, timeout < 0 ? 0 : timeout);
		if (r < 0 && errno != EINTR) {
			r = log_err_set(err, -errno, "poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				log_info("%s: exiting, %s left as it is",
					 strsignal((int)si.ssi_signo), w.base);
			r = 0;
			break;
		}
		t = now_ms();
		if (pfd[1].revents && w.dormant) {
			r = watch_drain(&w);
			log_debug("%s: %d events ignored: cleanup ran", w.base, r);
			continue;
		}
		if (pfd[1].revents && watch_drain(&w) > 0 && !w.dormant) {
			/* a burst: act after QUIET_MS of quiet, or BURST_MAX_MS after it began */
			if (first < 0)
				first = t;
			due = t + QUIET_MS;
			if (due > first + BURST_MAX_MS)
				due = first + BURST_MAX_MS;
			if (w.bo.delay_ms &&
			    due < w.bo.at[(w.bo.n - 1) % STORM_REPAIRS] + w.bo.delay_ms)
				due = w.bo.at[(w.bo.n - 1) % STORM_REPAIRS] + w.bo.delay_ms;
			continue;
		}
		if (t < (due >= 0 ? due : next_check))
			continue;
		due = first = -1;
		next_check = t + RESYNC_MS;
		if (w.dormant)
			continue;
		/*
		 * Locked against configure and cleanup of the same path. New watches
		 * first, so that nothing written from here on is missed (the old
		 * descriptor is read to its end: a cleanup that held the lock shows
		 * there); the events of our own repair then bring one more
		 * comparison, which finds everything in place.
		 */
		changed = false;
		lock = mirror_lock(w.base, err);
		r = lock < 0 ? lock : watch_rearm(&w, err);
		if (r == 0 && !w.dormant)
			r = watch_repair(&w, &changed, err);
		mirror_unlock(lock);
		if (r < 0 && w.ifd < 0)
			break; /* no inotify descriptor: nothing to wait on */
		if (r < 0) {
			/* a failed repair is tried again at the next event or resync */
			log_error("%s", err->msg);
			log_err_clear(err);
		}
		if (!changed)
			continue;
		watch_note_repair(&w, now_ms());
		/* once more, with watches on what the repair made (a path made anew has none) */
		due = now_ms() + (w.bo.delay_ms ? w.bo.delay_ms : QUIET_MS);
	}
	r = r < 0 ? r : 0;
out:
	watch_free(&w);
	close(sfd);
	return r;
}
