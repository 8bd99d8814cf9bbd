/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_watch: keep what configure wrote (our hosts.toml dirs and _backup) in place. Calls
 * apply (configure: plan + apply), snap, render. */
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

/* The timing of repairs. */
#define WATCH_MAX	 512		      /* inotify watches (directories) */
#define QUIET_MS	 100		      /* a burst of events is over after this much quiet */
#define BURST_MAX_MS	 500		      /* ... or this long after its first event */
#define RESYNC_MS	 60000		      /* compare with the snapshots even without events */
#define STORM_REPAIRS	 MIRROR_STORM_REPAIRS /* this many repairs ... */
#define STORM_WINDOW_S	 60		      /* ... within this many seconds is a fight */
#define BACKOFF_FIRST_MS 2000		      /* first delay of a fight, doubled each time */
#define BACKOFF_MAX_MS	 300000		      /* longest delay */

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
	bool limit_warned;	     /* the inotify watch limit was logged since the last rearm */
	bool inotify_failed; /* the last failure came from inotify (its limits, not the disk) */
	bool dormant;	     /* cleanup ran: repair nothing any more */
	bool new_backup;     /* a re-sync made a new _backup: keep that one */
	struct mirror_backoff bo; /* repairs done and the delay before the next */
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
		else if (errno == ENOSPC && !w->limit_warned) {
			w->limit_warned = true;
			log_warn(
			    "%s: the inotify watch limit (fs.inotify.max_user_watches) is reached: watching only %zu directories, the others compared every 60 s; raise it with sysctl",
			    w->base, w->nwatches);
		}
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
	w->limit_warned = false;
	w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ifd < 0) {
		w->inotify_failed = true;
		return log_err_set(err, -errno, "inotify: %s", strerror(errno));
	}
	if (inotify_add_watch(w->ifd, w->base, DIR_EVENTS) >= 0) {
		w->nwatches++;
	} else if (errno != ENOENT) { /* removed as a whole: the repair makes it again */
		w->inotify_failed = true;
		if (errno == ENOSPC)
			return log_err_set(
			    err, -ENOSPC,
			    "%s: cannot watch: the inotify watch limit (fs.inotify.max_user_watches) is reached; raise it with sysctl",
			    w->base);
		return log_err_set(err, -errno, "%s: cannot watch: %s", w->base, strerror(errno));
	}
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
		r = mirror_snap_take(&ours[i], w->base, w->dirs[i], err);
	if (r == 0)
		r = mirror_snap_take(bak, w->base, MIRROR_BACKUP_DIR, err);
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
		r = mirror_configure(w->o, repair, err);
		if (r == 0)
			r = snap_all(w, a, &abak, err);
		if (r == 0)
			r = mirror_configure(w->o, repair, err);
		if (r == 0)
			r = snap_all(w, b, &bbak, err);
		same = r == 0 && !*mirror_snap_diff(&abak, &bbak);
		for (i = 0; r == 0 && i < w->ndirs; i++) {
			const char *why = mirror_snap_diff(&b[i], &a[i]);

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
		mirror_snap_free(&w->ours[i]);
		w->ours[i] = b[i];
		memset(&b[i], 0, sizeof(b[i]));
	}
	if (r == 0 && (!repair || w->new_backup || !w->backup.present)) {
		w->new_backup = false;
		/* in a repair what was backed up stays what we keep: added entries are not ours */
		mirror_snap_free(&w->backup);
		w->backup = bbak;
		memset(&bbak, 0, sizeof(bbak));
	}
	for (i = 0; a && b && i < w->ndirs; i++) {
		mirror_snap_free(&a[i]);
		mirror_snap_free(&b[i]);
	}
	mirror_snap_free(&abak);
	mirror_snap_free(&bbak);
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
		r = mirror_snap_take(&now, w->base, w->dirs[j], err);
		untouched[j] = r == 0 && now.present && !*mirror_snap_diff(&w->ours[j], &now);
		mirror_snap_free(&now);
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

/* Remove base/dir/hosts.toml (ours, as we wrote it), then dir when that empties it. */
static int drop_hosts(const char *base, const char *dir, struct log_err *err)
{
	char p[PATH_MAX];
	int r;

	if (fs_path_join(p, sizeof(p), base, dir, err) < 0)
		return -ENAMETOOLONG;
	r = fs_remove_tree(p, HOSTS_TOML, err);
	if (r == 0 && rmdir(p) < 0 && errno != ENOTEMPTY && errno != EEXIST)
		r = log_err_set(err, -errno, "%s: cannot remove: %s", p, strerror(errno));
	return r;
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
		r = mirror_snap_restore(&w->backup, w->base, err);
	} else if (foreign > 0) {
		log_warn(
		    "%s: %s removed and %d %s written by someone else (a distro's re-sync?): backing up what is there now and re-applying",
		    w->base, MIRROR_BACKUP_DIR, foreign, foreign == 1 ? "entry" : "entries");
		for (i = 0; r == 0 && i < w->ndirs; i++)
			if (untouched[i])
				r = drop_hosts(w->base, w->dirs[i], err);
		w->new_backup = true;
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
	r = mirror_snap_take(&now, w->base, MIRROR_BACKUP_DIR, err);
	if (r < 0)
		return r;
	why = mirror_snap_diff(&w->backup, &now);
	if (*why) {
		*changed = true;
		if (!strcmp(why, "removed")) {
			r = backup_gone(w, err);
		} else {
			log_warn("restoring %s/%s: %s", w->base, MIRROR_BACKUP_DIR, why);
			r = mirror_snap_fill(&w->backup, &now, w->base, err);
		}
	}
	mirror_snap_free(&now);
	if (r < 0)
		return r;
	for (i = 0; i < w->ndirs; i++) {
		r = mirror_snap_take(&now, w->base, w->dirs[i], err);
		why = r < 0 ? "" : mirror_snap_diff(&w->ours[i], &now);
		mirror_snap_free(&now);
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

/*
 * The name of a failure and what it means, for the log ("ENOSPC: the file
 * system is full"); inotify: it came from inotify, whose ENOSPC and EMFILE
 * are its own limits, not the disk's.
 */
static const char *err_name(int r, bool inotify)
{
	if (inotify && r == -ENOSPC)
		return "ENOSPC: the inotify watch limit is reached (fs.inotify.max_user_watches)";
	if (inotify && r == -EMFILE)
		return "EMFILE: the inotify instance limit is reached (fs.inotify.max_user_instances)";
	switch (-r) {
	case ENOSPC:
		return "ENOSPC: the file system is full";
	case EDQUOT:
		return "EDQUOT: the disk quota is used up";
	case EROFS:
		return "EROFS: the file system is read-only";
	case EACCES:
	case EPERM:
		return "EACCES/EPERM: not allowed";
	case ETIMEDOUT:
		return "ETIMEDOUT: the config path stayed locked";
	default:
		return "a write failed";
	}
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
		mirror_snap_free(&w->ours[i]);
	mirror_snap_free(&w->backup);
	free(w->ours);
	free(w->dirs);
}

int mirror_watch_run(const struct mirror_opts *o, struct log_err *err)
{
	struct watcher w;
	struct pollfd pfd[2];
	sigset_t mask;
	long long t, due = -1, first = -1, next_check, fail_ms = 0, retry_at = 0;
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
			if (fail_ms && due < retry_at)
				due = retry_at;
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
		w.inotify_failed = false;
		lock = mirror_lock(w.base, err);
		r = lock < 0 ? lock : watch_rearm(&w, err);
		if (r == 0 && !w.dormant)
			r = watch_repair(&w, &changed, err);
		mirror_unlock(lock);
		if (r < 0 && w.ifd < 0)
			break; /* no inotify descriptor: nothing to wait on */
		if (r < 0) {
			/* not a fight: a write failed; tried again after a delay, then at events */
			fail_ms = fail_ms ? fail_ms * 2 : BACKOFF_FIRST_MS;
			if (fail_ms > BACKOFF_MAX_MS)
				fail_ms = BACKOFF_MAX_MS;
			log_error("%s: repair failed (%s): %s; trying again in %lld s", w.base,
				  err_name(r, w.inotify_failed), err->msg, fail_ms / 1000);
			log_err_clear(err);
			due = retry_at = now_ms() + fail_ms;
			continue;
		}
		fail_ms = 0;
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
