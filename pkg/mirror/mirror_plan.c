/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_plan: what configure writes and moves, decided before anything changes (reads only).
 * Calls inputs, render, distro, base. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil/fsutil.h"
#include "log/log.h"
#include "strbuf/strbuf.h"
#include "mirror/mirror_internal.h"

bool mirror_is_work_name(const char *name)
{
	static const char *const ours[] = {BACKING_UP,	RESTORING, STAGING,
					   WATCH_BUILD, WATCH_TMP, WATCH_OLD};
	size_t i;

	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!strcmp(name, ours[i]))
			return true;
	return false;
}

/*
 * name in base, if present, must be a real directory (never a symbolic link,
 * which could lead out of the config path) owned by us. Returns 1 when it is,
 * 0 when absent, -errno with err when it may not be used: nothing is moved.
 */
static int own_dir(const char *base, const char *name, struct log_err *err)
{
	char p[PATH_MAX];
	struct stat st;

	if (fs_path_join(p, sizeof(p), base, name, err) < 0)
		return err ? err->code : -ENAMETOOLONG;
	if (lstat(p, &st) < 0)
		return errno == ENOENT ? 0 : log_err_set(err, -errno, "%s: %s", p, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return mirror_refuse_link(
		    p, ": refused, it could lead out of the config path; nothing was moved", err);
	if (!S_ISDIR(st.st_mode))
		return log_err_set(err, -ENOTDIR,
				   "%s is not a directory: refused, nothing was moved", p);
	if (st.st_uid != geteuid())
		return log_err_set(
		    err, -EPERM,
		    "%s is owned by uid %u, not by us (uid %u): refused, nothing was moved", p,
		    (unsigned)st.st_uid, (unsigned)geteuid());
	return 1;
}

int mirror_own_dirs(const char *base, struct log_err *err)
{
	static const char *const names[] = {MIRROR_BACKUP_DIR, RESTORING, BACKING_UP, STAGING,
					    WATCH_BUILD,       WATCH_TMP, WATCH_OLD};
	size_t i;
	int r;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		r = own_dir(base, names[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

bool mirror_hosts_generated(const char *file)
{
	static const char *const heads[] = {
	    "server = '",	"[host.'",	     "capabilities = ['pull'",
	    "dial_timeout = '", "Authorization = '", ""};
	struct strbuf text = STRBUF_INIT(1 << 16);
	bool yes = false, host = false;
	const char *line, *nl;
	struct stat st;
	size_t i;

	if (lstat(file, &st) < 0 || !S_ISREG(st.st_mode) || sb_read_file(&text, file) < 0 ||
	    text.len == 0 || text.buf[text.len - 1] == '\n')
		goto out;
	yes = true;
	for (line = text.buf; yes && line < text.buf + text.len; line = nl + 1) {
		size_t len;

		nl = memchr(line, '\n', (size_t)(text.buf + text.len - line));
		if (!nl)
			nl = text.buf + text.len;
		len = (size_t)(nl - line);
		for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
			if (len >= strlen(heads[i]) && !strncmp(line, heads[i], strlen(heads[i])))
				break;
		if (i == sizeof(heads) / sizeof(heads[0]) || (i == 0 && line != text.buf) ||
		    (i == 5 && len != 0) || (len && line[len - 1] != '\'' && line[len - 1] != ']'))
			yes = false;
		host |= i == 1;
	}
	yes = yes && host;
out:
	sb_free(&text);
	return yes;
}

/* Whether file is a regular file holding exactly data with mode. */
static bool same_as(const char *file, const struct strbuf *data, mode_t mode)
{
	struct strbuf have = STRBUF_INIT(MIRROR_MAX_FILE);
	struct stat st;
	bool same;

	same = lstat(file, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == mode &&
	       (size_t)st.st_size == data->len && sb_read_file(&have, file) >= 0 &&
	       have.len == data->len && !memcmp(have.buf, data->buf, data->len);
	sb_free(&have);
	return same;
}

/*
 * What is at base/<w->dir> before anything changes: refused when it is not a
 * real directory; w->user_hosts when its hosts.toml is the user's (first: no
 * _backup yet, or neither _backup holds the user's nor is it in the generated shape,
 * nor does the caller know it is ours); w->write when hosts.toml must be
 * written.
 */
static int classify(const char *base, struct mirror_want *w, bool first, bool ours_in_place,
		    struct log_err *err)
{
	char p[PATH_MAX], file[PATH_MAX], saved[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", base, w->dir) >= sizeof(p) ||
	    (size_t)snprintf(file, sizeof(file), "%s/%s", p, HOSTS_TOML) >= sizeof(file) ||
	    (size_t)snprintf(saved, sizeof(saved), "%s/%s/%s/%s", base, MIRROR_BACKUP_DIR, w->dir,
			     HOSTS_TOML) >= sizeof(saved))
		return log_err_set(
		    err, -ENAMETOOLONG,
		    "%s/%s: path too long (over %d bytes): use a shorter config path", base, w->dir,
		    PATH_MAX - 1);
	w->write = true;
	w->fresh = false;
	if (lstat(p, &st) < 0) {
		w->fresh = errno == ENOENT;
		return errno == ENOENT ? 0 : log_err_set(err, -errno, "%s: %s", p, strerror(errno));
	}
	if (S_ISLNK(st.st_mode))
		return mirror_refuse_link(
		    p,
		    ", not a directory: refused, never followed, nothing was changed; replace it with a real directory and run configure again",
		    err);
	if (!S_ISDIR(st.st_mode))
		return log_err_set(
		    err, -ENOTDIR,
		    "%s is not a directory: refused, nothing was changed; move it away and run configure again",
		    p);
	if (lstat(file, &st) < 0)
		return errno == ENOENT ? 0
				       : log_err_set(err, -errno, "%s: %s", file, strerror(errno));
	w->user_hosts =
	    first || !(ours_in_place || lstat(saved, &st) == 0 || mirror_hosts_generated(file));
	w->write = w->user_hosts || !same_as(file, &w->hosts, w->mode);
	return 0;
}

int mirror_plan_classify(struct mirror_plan *p, struct log_err *err)
{
	char bak[PATH_MAX];
	size_t i;
	int r = 0;

	if (fs_path_join(bak, sizeof(bak), p->base, MIRROR_BACKUP_DIR, err) < 0)
		r = -ENAMETOOLONG;
	p->first = !fs_is_dir(bak);
	for (i = 0; r == 0 && i < p->nw; i++)
		r = classify(p->base, &p->w[i], p->first, p->ours_in_place, err);
	return r;
}

void mirror_plan_free(struct mirror_plan *p)
{
	size_t i;

	for (i = 0; p->w && i < p->nw; i++)
		sb_free(&p->w[i].hosts);
	free(p->w);
	mirror_list_free(&p->managed);
	memset(p, 0, sizeof(*p));
}

int mirror_plan_build(const struct mirror_opts *o, bool ours_in_place, struct mirror_plan *p,
		      struct log_err *err)
{
	const char *base = o->config_path;
	struct mirror_list targets = {0};
	struct mirror_want *w = NULL;
	size_t nw = 0, i, j;
	char *auth = NULL;
	int wildcards = 0, r = 0;

	memset(p, 0, sizeof(*p));
	p->base = base;
	p->ours_in_place = ours_in_place;
	/* everything is validated before the first change on disk */
	if (access(base, F_OK) == 0 && !fs_is_dir(base))
		return log_err_set(err, -ENOTDIR, "config path %s: not a directory", base);
	r = mirror_own_dirs(base, err);
	if (r == 0)
		r = mirror_expand_targets(&o->targets, &targets, err);
	for (i = 0; r == 0 && i < targets.n; i++)
		if (strchr(targets.v[i], ']'))
			log_warn(
			    "mirror target '%s': containerd 1.x cannot read a [host] key with ']' (IPv6) and will ignore the whole file",
			    targets.v[i]);
	if (r == 0 && o->basic_auth_dir)
		r = mirror_basic_auth(o->basic_auth_dir, &auth, err);
	if (r == 0)
		r = mirror_distro_managed(o, &p->managed, err);
	if (r < 0)
		goto out;
	nw = o->registries.n ? o->registries.n : 1;
	w = calloc(nw, sizeof(*w));
	if (!w) {
		r = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = j = 0; i < nw; i++) {
		const char *reg = o->registries.n ? o->registries.v[i] : "_default";
		struct strbuf existing = STRBUF_INIT(MIRROR_MAX_FILE);
		struct mirror_want *wi = &w[j];
		size_t k;

		sb_init(&wi->hosts, MIRROR_MAX_FILE);
		wi->mode = 0644;
		wildcards += mirror_is_wildcard(reg);
		if (wildcards > 1) {
			r = log_err_set(
			    err, -EINVAL,
			    "registries contain two wildcards (_default or *): give one");
			goto out;
		}
		r = mirror_registry_dir(reg, wi->dir, sizeof(wi->dir), err);
		for (k = 0; r == 0 && k < j; k++)
			if (!strcmp(w[k].dir, wi->dir))
				r = log_err_set(err, -EINVAL,
						"registry '%s' given twice: give it once", reg);
		if (r == 0 && mirror_listed(&p->managed, wi->dir)) {
			/* k3s/RKE2 rewrite it from registries.yaml at their next start */
			log_warn(
			    "%s: managed by %s's registries.yaml: not written (add the mirror there)",
			    wi->dir, o->distro == MIRROR_DISTRO_RKE2 ? "rke2" : "k3s");
			sb_free(&wi->hosts);
			continue;
		}
		if (r == 0)
			r = mirror_render(&wi->hosts, reg, &targets, o->resolve_tags != 0,
					  o->dial_timeout, auth, err);
		if (r == 0)
			r = mirror_existing_hosts(base, wi->dir,
						  o->prepend_existing == 1 ? &existing : NULL,
						  &wi->mode, err);
		if (r == 0 && o->prepend_existing == 1 && existing.len) {
			wi->copy_backup = true;
			if (sb_add(&wi->hosts, "\n\n") < 0 ||
			    sb_addn(&wi->hosts, existing.buf, existing.len) < 0)
				r = log_err_set(
				    err, -E2BIG,
				    "%s: hosts.toml with the existing hosts would be over %u KiB: shorten the user's hosts.toml in %s",
				    wi->dir, MIRROR_MAX_FILE / 1024, MIRROR_BACKUP_DIR);
			else
				log_info("%s: keeping the existing hosts after the mirrors",
					 wi->dir);
		}
		sb_free(&existing);
		j++;
		if (r < 0)
			goto out;
	}
	nw = j;
out:
	p->w = w;
	p->nw = nw;
	mirror_list_free(&targets);
	free(auth);
	return r;
}
