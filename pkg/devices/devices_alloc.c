/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_alloc: Allocate answers (DeviceSpecs, Mounts, CDI names) and preferred allocation. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "devices/devices_internal.h"
#include "kubelet/kubelet.h"
#include "log/log.h"

void devices_alloc_free(struct kubelet_alloc *a)
{
	size_t i;

	for (i = 0; i < a->n_cdi; i++)
		free((char *)a->cdi_names[i]);
	free(a->cdi_names);
	free(a->specs);
	free(a->mounts);
	memset(a, 0, sizeof(*a));
}

/*
 * A node as it is now: resolved again under f's roots, it must still be itself (no link swapped
 * in, inside the root), of the same type, and a device node the same major:minor as when it was
 * offered. 0, or -ESTALE with err naming it (the whole answer is refused: no partial device).
 */
static int recheck(const struct devices_found *f, const char *cls, const struct devices_node *x,
		   struct log_err *err)
{
	char res[DPATH_LEN];
	struct stat st;
	int r = dpath_resolve(&f->roots, x->host, res, sizeof(res), &st);

	if (r < 0)
		return log_err_set(err, -ESTALE, "'%s': %s %s: %s", cls,
				   x->mount ? "mount" : "device", x->host,
				   r == -EXDEV ? "now leads out of its root" : strerror(-r));
	if (strcmp(res, x->host))
		return log_err_set(err, -ESTALE, "'%s': %s is now a link to %s", cls, x->host, res);
	if ((unsigned)(st.st_mode & S_IFMT) != x->type ||
	    ((S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && (unsigned long)st.st_rdev != x->rdev))
		return log_err_set(err, -ESTALE, "'%s': %s is no longer the node it was offered as",
				   cls, x->host);
	return 0;
}

int devices_allocate(const struct devices_found *f, const char *cls_name, bool cdi,
		     const char *const *ids, size_t n, struct kubelet_alloc *out,
		     struct log_err *err)
{
	const struct devices_dev **devs = calloc(n + 1, sizeof(*devs));
	size_t i, j, nd = 0, ns = 0, nm = 0;

	memset(out, 0, sizeof(*out));
	if (!devs)
		return log_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		const struct devices_dev *d = devices_find(f, ids[i]);

		if (!d) {
			free(devs);
			return log_err_set(err, -ENOENT,
					   "device '%s' of '%s' is not (or no longer) there",
					   ids[i], cls_name);
		}
		for (j = 0; j < nd && devs[j] != d; j++)
			;
		if (j == nd) { /* two shares of one device: its nodes once */
			devs[nd++] = d;
			for (j = 0; j < d->n_nodes; j++) {
				if (recheck(f, cls_name, &d->nodes[j], err) < 0) {
					free(devs);
					return -ESTALE;
				}
				d->nodes[j].mount ? nm++ : ns++;
			}
		}
	}
	out->specs = calloc(ns + 1, sizeof(*out->specs));
	out->mounts = calloc(nm + 1, sizeof(*out->mounts));
	out->cdi_names = calloc(nd + 1, sizeof(*out->cdi_names));
	if (!out->specs || !out->mounts || !out->cdi_names)
		goto nomem;
	for (i = 0; i < nd; i++) {
		for (j = 0; j < devs[i]->n_nodes; j++) {
			const struct devices_node *x = &devs[i]->nodes[j];

			if (x->mount) {
				out->mounts[out->n_mounts++] =
				    (struct kubelet_mount){.container_path = x->container,
							   .host_path = x->host,
							   .read_only = x->read_only};
			} else {
				out->specs[out->n_specs++] =
				    (struct kubelet_spec){.container_path = x->container,
							  .host_path = x->host,
							  .permissions = x->perms};
			}
		}
		if (cdi) {
			char *name;

			if (asprintf(&name, "%s/%s=%s", DEVICES_CDI_VENDOR, cls_name,
				     devs[i]->name) < 0)
				goto nomem;
			out->cdi_names[out->n_cdi++] = name;
		}
	}
	free(devs);
	return 0;
nomem:
	free(devs);
	devices_alloc_free(out);
	return log_err_set(err, -ENOMEM, "out of memory");
}

/* How a device's shares stand in one request. */
struct tally {
	size_t avail; /* its IDs among avail, not yet chosen */
	size_t taken; /* its IDs chosen so far */
	size_t next;  /* its next entry in the per-device order (struct pick.by_dev) */
	size_t end;
};

#define BUCKETED 2

/* One request's state: every avail entry looked up once. */
struct pick {
	long *pos;	       /* avail[j]'s position in f->idx, -1 unknown */
	unsigned char *chosen; /* per f->idx position: 1 chosen (BUCKETED while sorting) */
	bool *used;	       /* per avail entry (unknown IDs, which have no position) */
	size_t *by_dev;	       /* avail entries grouped by device, in avail's order within one */
	struct tally *t;
};

static bool in_out(const char **out, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(out[i], id))
			return true;
	return false;
}

/* Is avail entry j still free to choose? */
static bool open_entry(const struct pick *p, const char *const *avail, size_t j, const char **out,
		       size_t got)
{
	if (p->pos[j] >= 0)
		return !p->chosen[p->pos[j]];
	return !p->used[j] && !in_out(out, got, avail[j]); /* unknown: rare, never indexed */
}

static void take(struct pick *p, const struct devices_found *f, const char *const *avail, size_t j,
		 const char **out, size_t *got)
{
	out[(*got)++] = avail[j];
	p->used[j] = true;
	if (p->pos[j] >= 0) {
		struct tally *x = &p->t[f->idx[p->pos[j]].dev];

		p->chosen[p->pos[j]] = true;
		x->avail--;
		x->taken++;
	}
}

static void pick_free(struct pick *p)
{
	free(p->pos);
	free(p->chosen);
	free(p->used);
	free(p->by_dev);
	free(p->t);
}

/*
 * Intel's policies (cmd/gpu_plugin: -allocation-policy): packed fills a device's shares before
 * the next one (the device with fewest free shares first, so busy GPUs fill up); balanced takes
 * one share from each device in turn (the device with most free shares first); none keeps the
 * kubelet's order. must's IDs come first in every policy. Each avail and must ID is looked up
 * once in f's index: O((n_avail + n_must) log IDs + size x devices).
 */
int devices_preferred(const struct devices_found *f, enum devices_policy policy,
		      const char *const *avail, size_t n_avail, const char *const *must,
		      size_t n_must, size_t size, const char **out, struct log_err *err)
{
	struct pick p = {0};
	size_t i, j, got = 0, any = 0;
	long q;

	if (size < n_must || size > n_avail + n_must)
		return log_err_set(err, -EINVAL, "allocation size %zu: %zu required, %zu available",
				   size, n_must, n_avail);
	p.pos = calloc(n_avail + 1, sizeof(*p.pos));
	p.chosen = calloc(f->n_idx + 1, sizeof(*p.chosen));
	p.used = calloc(n_avail + 1, sizeof(*p.used));
	p.by_dev = calloc(n_avail + 1, sizeof(*p.by_dev));
	p.t = calloc(f->n + 1, sizeof(*p.t));
	if (!p.pos || !p.chosen || !p.used || !p.by_dev || !p.t) {
		pick_free(&p);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n_must && got < size; i++) {
		q = devices_find_pos(f, must[i]);
		if (q >= 0 ? p.chosen[q] : in_out(out, got, must[i]))
			continue;
		out[got++] = must[i];
		if (q >= 0) {
			p.chosen[q] = true;
			p.t[f->idx[q].dev].taken++;
		}
	}
	for (j = 0; j < n_avail; j++) { /* one lookup each; count the open ones per device */
		p.pos[j] = devices_find_pos(f, avail[j]);
		if (p.pos[j] >= 0 && !p.chosen[p.pos[j]]) {
			p.t[f->idx[p.pos[j]].dev].end++;
			p.chosen[p.pos[j]] = BUCKETED; /* a repeated ID counts once */
		}
	}
	for (i = 0, q = 0; i < f->n; i++) { /* by_dev: a counting sort of avail by device */
		p.t[i].avail = p.t[i].end;
		p.t[i].next = p.t[i].end = (size_t)q;
		q += (long)p.t[i].avail;
	}
	for (j = 0; j < n_avail; j++) {
		if (p.pos[j] >= 0 && p.chosen[p.pos[j]] == BUCKETED) {
			p.by_dev[p.t[f->idx[p.pos[j]].dev].end++] = j;
			p.chosen[p.pos[j]] = 0;
		}
	}
	while (got < size) {
		struct tally *best = NULL;

		for (i = 0; i < f->n && policy != DEVICES_POLICY_NONE; i++) {
			struct tally *x = &p.t[i];

			if (!x->avail)
				continue;
			if (!best)
				best = x;
			else if (policy == DEVICES_POLICY_PACKED &&
				 (x->taken > best->taken ||
				  (x->taken == best->taken && x->avail < best->avail)))
				best = x;
			else if (policy == DEVICES_POLICY_BALANCED &&
				 (x->taken < best->taken ||
				  (x->taken == best->taken && x->avail > best->avail)))
				best = x;
		}
		if (best) { /* its next open entry, in avail's order */
			while (!open_entry(&p, avail, p.by_dev[best->next], out, got))
				best->next++;
			take(&p, f, avail, p.by_dev[best->next++], out, &got);
			continue;
		}
		while (any < n_avail && !open_entry(&p, avail, any, out, got))
			any++;
		if (any == n_avail)
			break; /* nothing open is left */
		take(&p, f, avail, any++, out, &got);
	}
	pick_free(&p);
	return (int)got;
}
