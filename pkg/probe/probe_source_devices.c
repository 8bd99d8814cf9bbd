/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "devices": with --device-classes, "<resource>.count" labels from the same
 * DeviceClass definitions nodeprobe-devices allocates from (pkg/devices). */
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

	if (!ctx->opts->device_classes)
		return 0;
	c = devices_classes_new();
	if (!c)
		return log_err_set(err, -ENOMEM, "out of memory");
	r = devices_load_file(c, ctx->opts->device_classes, NULL, err);
	if (r >= 0)
		r = devices_labels(c, &roots, ctx->labels, err);
	if (r >= 0)
		log_info("devices: %d <resource>.count labels from %s", r,
			 ctx->opts->device_classes);
	devices_classes_free(c);
	return r < 0 ? r : 0;
}

const struct probe_source probe_source_devices = {
    .name = "devices",
    .help = "with --device-classes: <resource>.count labels of nodeprobe-devices' classes",
    .features = NULL,
    .scan = devices_source_scan,
};
