/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pciscan: the PCI devices of a sysfs tree, read with libpci's sysfs method, as NFD's pci.device.
 */
#ifndef NP_PCISCAN_H
#define NP_PCISCAN_H

/*
 * The prefix is pciscan_, not pci_, and the directory is pkg/pciscan, not
 * pkg/pci: libpci exports pci_* and is included as <pci/pci.h>, which -Ipkg
 * would otherwise shadow.
 */

#include <stdbool.h>
#include <stddef.h>

struct feat_set;
struct log_err;

/*
 * One device, with values as NFD's pci source reports them: lowercase hex
 * without "0x", class cut to class+subclass (4 digits).
 */
struct pciscan_dev {
	char addr[16];		  /* "0000:00:02.0" (domain:bus:dev.fn) */
	char vendor[5];		  /* "8086" */
	char device[5];		  /* "46a6" */
	char class_code[5];	  /* "0300" */
	char subsystem_vendor[5]; /* "8086" */
	char subsystem_device[5]; /* "3024" */
	char driver[64];	  /* bound driver ("i915"), "" when unbound */
	/* NFD's optional "sriov_totalvfs", "iommu_group/type" and "iommu/intel-iommu/version"
	 * (v0.12-v0.19): the file's text less one leading "0x", trimmed; "" when absent, left out
	 * on any read error as NFD's readPciDevInfo (source/pci/utils.go) */
	char sriov_totalvfs[64];      /* "7" (the kernel prints a decimal) */
	char iommu_group_type[64];    /* "identity", "DMA-FQ", ... */
	char intel_iommu_version[64]; /* "1:0" */
	bool has_sriov_totalvfs;      /* the file was read (its value may be "") */
	bool has_iommu_group_type;    /* likewise */
	bool has_intel_iommu_version; /* likewise */
};

/* The devices of one scan, sorted by address. Free with pciscan_list_free(). */
struct pciscan_list {
	struct pciscan_dev *dev; /* owned array */
	size_t n;		 /* number of devices */
	bool bus;		 /* devices/ was read (NFD then has pci.device, maybe empty) */
};

/*
 * Scan bus_pci (a "<sysfs>/bus/pci" directory) with libpci's linux-sysfs
 * method, then read each device's attributes the way NFD does (vendor, device,
 * class, subsystem_vendor, subsystem_device required; sriov_totalvfs, iommu_group/type and
 * iommu/intel-iommu/version optional: kept only when read, any error leaves them out, as NFD;
 * driver from the "driver" symlink). No name database is loaded.
 *
 * A missing bus_pci/devices directory is "no PCI bus": returns 0 with an
 * empty list. A device that lacks a required attribute is skipped with a
 * warning (as NFD does). Anything present but bad is an error: an unreadable
 * directory or required attribute, a required attribute that is not what the kernel prints
 * (e.g. vendor "0xzz"), or any error libpci reports (its handler is replaced:
 * the library never exits the process). Then returns -EIO/-errno with err
 * naming the path, and out is empty.
 *
 * Returns the number of devices. Not thread-safe (libpci's error callback
 * carries no context, so the recovery point is static).
 */
int pciscan_scan(const char *bus_pci, struct pciscan_list *out, struct log_err *err);
void pciscan_list_free(struct pciscan_list *l);

/*
 * Add one instance of feature "pci.device" per device to fs (the feature exists,
 * maybe empty, whenever the scan read devices/, as NFD's), with attributes
 * vendor, device, class, subsystem_vendor, subsystem_device, and driver,
 * sriov_totalvfs, iommu_group/type and iommu/intel-iommu/version when known.
 * Returns 0 or -ENOMEM.
 */
int pciscan_add_features(const struct pciscan_list *l, struct feat_set *fs);

#endif
