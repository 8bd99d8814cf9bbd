/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_index: a scan's ID -> device index (sorted, binary search), built once per scan, so
 * Allocate, GetPreferredAllocation and the vanished-ID pass look each ID up in O(log n). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/devices_internal.h"

static unsigned long compares; /* devices_find_compares */

static int id_cmp(const void *a, const void *b)
{
	compares++;
	return strcmp(((const struct devices_id *)a)->id, ((const struct devices_id *)b)->id);
}

int devices_found_index(struct devices_found *f)
{
	size_t i, j, n = 0;

	free(f->idx);
	f->idx = NULL;
	f->n_idx = 0;
	for (i = 0; i < f->n; i++)
		n += f->d[i].n_ids;
	f->idx = calloc(n + 1, sizeof(*f->idx));
	if (!f->idx)
		return -ENOMEM;
	for (i = 0; i < f->n; i++)
		for (j = 0; j < f->d[i].n_ids; j++)
			f->idx[f->n_idx++] = (struct devices_id){f->d[i].ids[j], i};
	qsort(f->idx, f->n_idx, sizeof(*f->idx), id_cmp);
	return 0;
}

long devices_find_pos(const struct devices_found *f, const char *id)
{
	struct devices_id key = {id, 0};
	const struct devices_id *hit;

	if (!f->idx)
		return -1;
	hit = bsearch(&key, f->idx, f->n_idx, sizeof(*f->idx), id_cmp);
	return hit ? hit - f->idx : -1;
}

const struct devices_dev *devices_find(const struct devices_found *f, const char *id)
{
	size_t i, j;
	long p;

	if (f->idx) {
		p = devices_find_pos(f, id);
		return p < 0 ? NULL : &f->d[f->idx[p].dev];
	}
	for (i = 0; i < f->n; i++) {
		for (j = 0; j < f->d[i].n_ids; j++) {
			compares++;
			if (!strcmp(f->d[i].ids[j], id))
				return &f->d[i];
		}
	}
	return NULL;
}

unsigned long devices_find_compares(void)
{
	return compares;
}
