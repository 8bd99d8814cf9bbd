/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_list: what a scan of every class gives, as nodeprobe's <resource>.count labels and as
 * nodeprobe-devices --list lines. */
#include <stdio.h>

#include "devices/devices_internal.h"
#include "label/label.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

int devices_labels(const struct devices_classes *c, const struct devices_roots *roots,
		   struct label_set *out, struct log_err *err)
{
	struct devices_found f = {0};
	size_t i, j, n;
	int rc, set = 0;

	for (i = 0; i < c->n; i++) {
		char key[400], val[16];

		rc = devices_scan(c, i, roots, &f, err);
		if (rc < 0)
			return rc;
		for (n = 0, j = 0; j < f.n; j++)
			n += f.d[j].n_ids;
		devices_found_free(&f);
		snprintf(key, sizeof(key), "%s.count", c->c[i].resource);
		snprintf(val, sizeof(val), "%zu", n);
		if (!label_key_valid_prefixed(key)) {
			log_warn("class '%s': label %s is not a valid label key; skipped",
				 c->c[i].name, key);
			continue;
		}
		rc = label_set_put(out, key, val, err);
		if (rc < 0)
			return rc;
		set++;
	}
	return set;
}

int devices_list(const struct devices_opts *o, struct strbuf *out, struct log_err *err)
{
	struct devices_classes *c;
	struct devices_found f = {0};
	size_t i, j, k;
	int r = devices_load(o, &c, err);

	for (i = 0; r >= 0 && i < c->n; i++) {
		r = devices_scan(c, i, &o->roots, &f, err);
		for (j = 0; r >= 0 && j < f.n; j++) {
			sb_addf(out, "%s %s", c->c[i].resource, f.d[j].name);
			for (k = 0; k < f.d[j].n_nodes; k++)
				sb_addf(out, " %s%s:%s%s%s", f.d[j].nodes[k].mount ? "mount=" : "",
					f.d[j].nodes[k].host, f.d[j].nodes[k].container,
					f.d[j].nodes[k].mount ? "" : ":",
					f.d[j].nodes[k].mount
					    ? (f.d[j].nodes[k].read_only ? ":ro" : "")
					    : f.d[j].nodes[k].perms);
			sb_addf(out, " ids=%zu", f.d[j].n_ids);
			r = sb_addf(out, " %s\n", f.d[j].ids[0]);
		}
		devices_found_free(&f);
	}
	devices_classes_free(c);
	return r < 0 ? r : 0;
}
