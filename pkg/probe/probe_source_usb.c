/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "usb": every USB device of <sysfs>/bus/usb as a usb.device instance. */
#include <stdio.h>

#include "log/log.h"
#include "probe/probe.h"
#include "usb/usb.h"

static int usb_source_scan(struct probe_ctx *ctx, struct log_err *err)
{
	char path[4096];
	int r;

	snprintf(path, sizeof(path), "%s/bus/usb", ctx->opts->sysfs);
	r = usb_scan(path, ctx->features, err);
	if (r >= 0)
		log_info("usb: %d usb.device instances from %s", r, path);
	return r < 0 ? r : 0;
}

const struct probe_source probe_source_usb = {
    .name = "usb",
    .help = "USB devices of <sysfs>/bus/usb as usb.device",
    .features = "usb.",
    .scan = usb_source_scan,
};
