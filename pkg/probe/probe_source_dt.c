/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe_source_dt: the devicetree feature source (blob or live tree -> labels, dt.* features). */
#include <errno.h>
#include <stdio.h>

#include "dt/dt.h"
#include "log/log.h"
#include "probe/probe.h"

#define TREE_SUFFIX "/firmware/devicetree/base"

static int scan(struct probe_ctx *ctx, struct log_err *err)
{
	const struct probe_opts *o = ctx->opts;
	char tree[4096];
	struct dt_blob b;
	int r;

	if (o->fdt) {
		r = dt_load_file(o->fdt, &b, err);
	} else {
		if ((size_t)snprintf(tree, sizeof(tree), "%s%s", o->sysfs, TREE_SUFFIX) >=
		    sizeof(tree))
			return log_err_set(err, -ENAMETOOLONG, "%s: sysfs path too long", o->sysfs);
		r = dt_load_tree(tree, &b, err);
	}
	if (r < 0)
		return r;
	if (r == DT_NONE) {
		log_info("devicetree: none at %s", o->fdt ? o->fdt : tree);
		return 0;
	}
	r = dt_labels(b.fdt, o->dt_nodes, o->n_dt_nodes, ctx->labels, err);
	if (r >= 0) {
		log_info("devicetree: %d labels from %s", r, o->fdt ? o->fdt : tree);
		r = dt_features(b.fdt, ctx->features, err);
	}
	dt_blob_free(&b);
	return r < 0 ? r : 0;
}

const struct probe_source probe_source_dt = {
    .name = "dt",
    .help = "devicetree: --fdt FILE, else <sysfs>" TREE_SUFFIX,
    .scan = scan,
};
