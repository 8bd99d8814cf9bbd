/* SPDX-License-Identifier: GPL-2.0-or-later */
/* usb: the USB devices of a sysfs tree as NFD's usb.device instances. */
#include "usb/usb.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feature/feature.h"
#include "fsutil/fsutil.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

int usb_trim_attr(const char *raw, size_t len, char *out, size_t size)
{
	size_t i;

	while (len && isspace((unsigned char)raw[0])) {
		raw++;
		len--;
	}
	while (len && isspace((unsigned char)raw[len - 1]))
		len--;
	for (i = 0; i < len; i++)
		if (raw[i] == '\0') /* control bytes are kept: a serial can hold them */
			return -EINVAL;
	if (len >= size)
		return -E2BIG;
	memcpy(out, raw, len);
	out[len] = '\0';
	return (int)len;
}

/* Read dir/name into out: >0 length, 0 missing or empty, <0 error with err set. */
static int read_attr(const char *dir, const char *name, char *out, size_t size, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(USB_ATTR_MAX);
	char path[4608];
	int r;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	r = sb_read_file(&sb, path);
	if (r == -ENOENT) {
		r = 0;
		goto out;
	}
	if (r >= 0)
		r = usb_trim_attr(sb.buf, sb.len, out, size);
	if (r < 0)
		log_err_set(err, r, "%s: %s", path,
			    r == -E2BIG	   ? "longer than 384 bytes"
			    : r == -EINVAL ? "not a regular file, or a NUL byte inside"
					   : strerror(-r));
out:
	sb_free(&sb);
	return r;
}

/* Where an instance came from: its device's name in devices/ under key (NULL: not kept). */
struct origin {
	const char *key, *name;
};

static int add_instance(struct feat_set *fs, const struct origin *o, const char *cls,
			const char *vendor, const char *device, const char *serial)
{
	struct feat *f = feat_instance_add(fs, USB_FEATURE);

	if (!f)
		return -ENOMEM;
	if (o->key && feat_instance_set(f, o->key, o->name) < 0)
		return -ENOMEM;
	if ((cls[0] && feat_instance_set(f, "class", cls) < 0) ||
	    (vendor[0] && feat_instance_set(f, "vendor", vendor) < 0) ||
	    (device[0] && feat_instance_set(f, "device", device) < 0) ||
	    (serial[0] && feat_instance_set(f, "serial", serial) < 0))
		return -ENOMEM;
	return 1;
}

/* One device directory: its instances (0 for "not a device"), or <0. */
static int scan_device(const char *dir, const struct origin *o, struct feat_set *fs,
		       struct log_err *err)
{
	char cls[USB_ATTR_MAX], vendor[USB_ATTR_MAX], device[USB_ATTR_MAX], serial[USB_ATTR_MAX];
	char **names = NULL;
	size_t n = 0, i;
	char p[4608];
	int r, count = 0;

	/* NFD globs devices/ * /idProduct: interfaces and other entries have none */
	snprintf(p, sizeof(p), "%s/idProduct", dir);
	if (access(p, F_OK) != 0)
		return 0;
	r = read_attr(dir, "idProduct", device, sizeof(device), err);
	if (r < 0)
		return r;
	if ((r = read_attr(dir, "bDeviceClass", cls, sizeof(cls), err)) < 0 ||
	    (r = read_attr(dir, "idVendor", vendor, sizeof(vendor), err)) < 0 ||
	    (r = read_attr(dir, "serial", serial, sizeof(serial), err)) < 0)
		return r;
	if (strcmp(cls, "00") != 0)
		return add_instance(fs, o, cls, vendor, device, serial);
	/* class defined per interface: one instance per <dev>/ * /bInterfaceClass */
	r = fs_list_dir(dir, &names, &n, err);
	if (r < 0)
		return r;
	if (n > USB_DEVICES_MAX) {
		r = log_err_set(err, -E2BIG, "%s: more than %d entries", dir, USB_DEVICES_MAX);
		goto out;
	}
	for (i = 0; i < n; i++) {
		char sub[4400], icls[USB_ATTR_MAX], ip[4450];

		snprintf(sub, sizeof(sub), "%s/%s", dir, names[i]);
		snprintf(ip, sizeof(ip), "%s/bInterfaceClass", sub);
		if (access(ip, F_OK) != 0)
			continue;
		r = read_attr(sub, "bInterfaceClass", icls, sizeof(icls), err);
		if (r < 0)
			goto out;
		/* an empty value gives no class, as NFD drops empty attributes */
		r = add_instance(fs, o, icls, vendor, device, serial);
		if (r < 0)
			goto out;
		count++;
	}
	r = count;
out:
	fs_names_free(names, n);
	return r;
}

int usb_scan_named(const char *bus_usb, struct feat_set *fs, const char *key, struct log_err *err)
{
	char devices[4096], dir[4096 + 256];
	char **names = NULL;
	size_t n = 0, i;
	int r, total = 0;

	/* NFD's usb source always makes usb.device: an empty list on a host without USB */
	if (feat_declare(fs, USB_FEATURE, FEAT_INSTANCES) < 0)
		return log_err_set(err, -ENOMEM, "out of memory");
	snprintf(devices, sizeof(devices), "%s/devices", bus_usb);
	if (!fs_is_dir(devices)) {
		log_info("%s: no USB bus", devices);
		return 0;
	}
	r = fs_list_dir(devices, &names, &n, err);
	if (r < 0)
		return r;
	if (n > USB_DEVICES_MAX) {
		r = log_err_set(err, -E2BIG, "%s: more than %d entries", devices, USB_DEVICES_MAX);
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct origin o = {key, names[i]};

		snprintf(dir, sizeof(dir), "%s/%s", devices, names[i]);
		r = scan_device(dir, &o, fs, err);
		if (r == -ENOMEM)
			log_err_set(err, r, "out of memory");
		if (r < 0)
			goto out;
		total += r;
	}
	r = total;
out:
	fs_names_free(names, n);
	return r;
}

int usb_scan(const char *bus_usb, struct feat_set *fs, struct log_err *err)
{
	return usb_scan_named(bus_usb, fs, NULL, err);
}
