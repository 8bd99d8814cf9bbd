/* SPDX-License-Identifier: GPL-2.0-or-later */
/* usb: the USB devices of a sysfs tree as NFD's usb.device instances. */
#ifndef NP_USB_H
#define NP_USB_H

#include <stddef.h>

struct feat_set;
struct log_err;

#define USB_FEATURE	"usb.device" /* instances: class, vendor, device, serial */
#define USB_ATTR_MAX	384	     /* bytes read of one attribute (a serial: up to 381 + "\n") */
#define USB_DEVICES_MAX 4096	     /* entries of bus/usb/devices, and interfaces per device */

/*
 * One attribute as NFD's usb source keeps it (source/usb/utils.go): the file's
 * content with white space trimmed (Go's TrimSpace, ASCII). Returns the
 * trimmed length written to out (NUL-terminated, size > 0), 0 for an empty
 * value, or -EINVAL for a value with a NUL inside (sysfs never prints one).
 * Other control bytes are kept, as NFD keeps them: serial is the device's own
 * string descriptor, which the kernel copies with its control characters.
 */
int usb_trim_attr(const char *raw, size_t len, char *out, size_t size);

/*
 * Add one usb.device instance per USB device of bus_usb ("<sysfs>/bus/usb"),
 * as NFD does: every entry of devices/ (name order) with an idProduct file is
 * a device (root hubs too; interfaces have none); class = bDeviceClass,
 * vendor = idVendor, device = idProduct, serial = serial, each trimmed and
 * left out when missing or empty. When class is "00" (defined per
 * interface), the device gives one instance per <dev>/<iface>/bInterfaceClass
 * (name order) with that class instead, and none when it has no interface.
 * usb.device always exists, as in NFD (an empty list on a host without USB).
 * No devices/ directory: no devices, 0. An unreadable directory or attribute,
 * a FIFO, an over-long or garbled value: -errno with err naming the path.
 * Returns the number of instances added.
 */
int usb_scan(const char *bus_usb, struct feat_set *fs, struct log_err *err);

/*
 * usb_scan, and each instance also holds key = its device's entry name in devices/ ("1-1.2"),
 * so that a caller finds the device in sysfs again (pkg/devices); key NULL: usb_scan.
 */
int usb_scan_named(const char *bus_usb, struct feat_set *fs, const char *key, struct log_err *err);

#endif
