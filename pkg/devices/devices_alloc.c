/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_alloc: Allocate answers (DeviceSpecs, Mounts, CDI names) and preferred allocation. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
			for (j = 0; j < d->n_nodes; j++)
				d->nodes[j].mount ? nm++ : ns++;
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
	const struct devices_dev *d;
	size_t avail; /* its IDs among avail, not yet chosen */
	size_t taken; /* its IDs chosen so far */
};

static bool chosen(const char **out, size_t n, const char *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(out[i], id))
			return true;
	return false;
}

/*
 * Intel's policies (cmd/gpu_plugin: -allocation-policy): packed fills a device's shares before
 * the next one (the device with fewest free shares first, so busy GPUs fill up); balanced takes
 * one share from each device in turn (the device with most free shares first); none keeps the
 * kubelet's order. must's IDs come first in every policy.
 */
int devices_preferred(const struct devices_found *f, enum devices_policy policy,
		      const char *const *avail, size_t n_avail, const char *const *must,
		      size_t n_must, size_t size, const char **out, struct log_err *err)
{
	struct tally *t = calloc(f->n + 1, sizeof(*t));
	size_t i, j, got = 0;

	if (!t)
		return log_err_set(err, -ENOMEM, "out of memory");
	if (size < n_must || size > n_avail + n_must) {
		free(t);
		return log_err_set(err, -EINVAL, "allocation size %zu: %zu required, %zu available",
				   size, n_must, n_avail);
	}
	for (i = 0; i < n_must && got < size; i++)
		if (!chosen(out, got, must[i]))
			out[got++] = must[i];
	for (i = 0; i < f->n; i++) {
		t[i].d = &f->d[i];
		for (j = 0; j < n_avail; j++)
			if (devices_find(f, avail[j]) == t[i].d && !chosen(out, got, avail[j]))
				t[i].avail++;
		for (j = 0; j < got; j++)
			t[i].taken += devices_find(f, out[j]) == t[i].d;
	}
	while (got < size) {
		struct tally *best = NULL;

		for (i = 0; i < f->n && policy != DEVICES_POLICY_NONE; i++) {
			struct tally *x = &t[i];

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
		for (j = 0; j < n_avail; j++) {
			if (chosen(out, got, avail[j]))
				continue;
			if (best && devices_find(f, avail[j]) != best->d)
				continue;
			out[got++] = avail[j];
			if (best) {
				best->avail--;
				best->taken++;
			}
			break;
		}
		if (j == n_avail)
			break; /* avail holds IDs we do not know: none left */
	}
	free(t);
	return (int)got;
}
