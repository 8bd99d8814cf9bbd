/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe source "pci": every PCI device of <sysfs>/bus/pci as a pci.device instance. */
#include <errno.h>
#include <stdio.h>

#include "kernel/kernel.h"
#include "log/log.h"
#include "pciscan/pciscan.h"
#include "probe/probe.h"

/*
 * Also records each bound driver as a loaded (and enabled) kernel module, so a
 * rule's "module loaded" holds for the driver of a device even when /proc is
 * not mounted (kernel_add_bound_driver()).
 */
static int pci_scan_source(struct probe_ctx *ctx, struct log_err *err)
{
	struct pciscan_list l;
	char path[4096];
	size_t i;
	int r;

	snprintf(path, sizeof(path), "%s/bus/pci", ctx->opts->sysfs);
	r = pciscan_scan(path, &l, err);
	if (r < 0)
		return r;
	log_info("pci: %zu devices in %s", l.n, path);
	r = pciscan_add_features(&l, ctx->features);
	for (i = 0; i < l.n && r >= 0; i++)
		if (l.dev[i].driver[0])
			r = kernel_add_bound_driver(ctx->features, l.dev[i].driver);
	pciscan_list_free(&l);
	if (r < 0)
		return log_err_set(err, r, "pci: out of memory");
	return 0;
}

const struct probe_source probe_source_pci = {
    .name = "pci",
    .help = "PCI devices of <sysfs>/bus/pci (libpci sysfs method) as pci.device",
    .scan = pci_scan_source,
};
