/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_select: a matchFeatures list on its own, choosing instances (device classes), through
 * the load and evaluate stages' parser and matcher. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "feature/feature.h"
#include "log/log.h"
#include "rules/rules.h"
#include "rules/rules_internal.h"

struct rules_select {
	struct matcher m;    /* the terms */
	struct rcache cache; /* their patterns */
};

int rules_select_parse(struct ydoc *y, const struct yaml_node_s *n, struct rules_select **out,
		       struct log_err *err)
{
	struct rules_select *s = calloc(1, sizeof(*s));
	struct ctx c = {.y = y, .file = y->file, .err = err};
	int r;

	*out = NULL;
	if (!s)
		return log_err_set(err, -ENOMEM, "out of memory");
	c.cache = &s->cache;
	r = rules_parse_matcher(&c, n, &s->m);
	if (r == -ENOMEM)
		log_err_set(err, r, "out of memory");
	if (r < 0) {
		rules_select_free(s);
		return r;
	}
	*out = s;
	return 0;
}

int rules_select_eval(const struct rules_select *s, const struct feat_set *fs, const char *feature,
		      const struct feat **out, size_t max, struct log_err *err)
{
	const struct feat *all = feat_get_kind(fs, feature, FEAT_INSTANCES);
	struct evalfs e = {.fs = fs};
	struct matched m = {0};
	char why[256] = "";
	size_t i, j, k, nt = 0, got = 0;
	int r;

	for (i = 0; i < s->m.n; i++)
		nt += !strcasecmp(s->m.t[i].feature, feature);
	r = rules_eval_matcher(&s->m, &e, &m, why, sizeof(why));
	if (r == -ENOMEM)
		log_err_set(err, r, "out of memory");
	else if (r < 0)
		log_err_set(err, r, "matchFeatures: %s", why);
	if (r <= 0 || !all || !nt)
		goto out;
	/* an instance is chosen when each term on feature matched it */
	for (i = 0; i < feat_ninstances(all); i++) {
		const struct feat *in = feat_instance_at(all, i);
		size_t hits = 0;

		for (j = 0; j < m.n; j++) {
			if (strcasecmp(m.g[j].feature, feature))
				continue;
			for (k = 0; k < m.g[j].n; k++)
				hits += m.g[j].e[k].inst == in;
		}
		if (hits < nt)
			continue;
		if (got == max) {
			r = log_err_set(err, -E2BIG, "more than %zu %s instances chosen", max,
					feature);
			goto out;
		}
		out[got++] = in;
	}
	r = (int)got;
out:
	rules_matched_free(&m);
	return r;
}

void rules_select_free(struct rules_select *s)
{
	if (!s)
		return;
	rules_matcher_free(&s->m);
	rules_cache_free(&s->cache);
	free(s);
}
