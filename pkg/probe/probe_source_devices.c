/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "devices": with nodeprobe-devices' class options (--device, --preset, --classes,
 * --domain..., parsed by pkg/devices for both), "<resource>.count" labels from the same classes
 * nodeprobe-devices allocates from. */
#include <errno.h>
#include <stdio.h>

#include "devices/devices.h"
#include "log/log.h"
#include "probe/probe.h"

static int devices_source_scan(struct probe_ctx *ctx, struct log_err *err)
{
	struct devices_roots roots = {ctx->opts->dev, ctx->opts->sysfs};
	struct devices_classes *c;
	int r;

	if (!ctx->opts->devices || !devices_opts_any(ctx->opts->devices))
		return 0;
	r = devices_load(ctx->opts->devices, &c, err); /* as nodeprobe-devices loads them */
	if (r < 0)
		return r;
	r = devices_labels(c, &roots, ctx->labels, err);
	if (r >= 0)
		log_info("devices: %d <resource>.count labels of %zu classes", r,
			 devices_classes_count(c));
	devices_classes_free(c);
	return r < 0 ? r : 0;
}

const struct probe_source probe_source_devices = {
    .name = "devices",
    .help = "with --preset/--device/--classes: <resource>.count of nodeprobe-devices' classes",
    .features = NULL,
    .scan = devices_source_scan,
};
