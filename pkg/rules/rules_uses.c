/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_uses: which feature domains the loaded rules read, so that sources nobody reads are not
 * run. */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "rules/rules.h"
#include "rules/rules_internal.h"

static bool term_uses(const struct matcher *m, const char *prefix, size_t n)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->t[i].feature && !strncasecmp(m->t[i].feature, prefix, n))
			return true;
	return false;
}

bool rules_use_features(const struct rules *r, const char *prefix)
{
	size_t n = strlen(prefix), i, j;

	for (i = 0; r && i < r->n; i++) {
		const struct rule *ru = &r->r[i];

		if (term_uses(&ru->mf, prefix, n))
			return true;
		for (j = 0; j < ru->nany; j++)
			if (term_uses(&ru->any[j], prefix, n))
				return true;
		/* "@domain.feature.element" label values read attribute features too */
		for (j = 0; j < ru->nlabels; j++)
			if (ru->labels[j].v && ru->labels[j].v[0] == '@' &&
			    !strncmp(ru->labels[j].v + 1, prefix, n))
				return true;
	}
	return false;
}
