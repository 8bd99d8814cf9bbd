/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_usb: usb.device instances as NFD's usb source makes them, on the homelab USB tree. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "feature/feature.h"
#include "harness.h"
#include "log/log.h"
#include "usb/usb.h"

/* Instances of usb.device as "class vendor device serial|..." ("-" for absent). */
static const char *dump(const struct feat_set *fs)
{
	static char out[4096];
	const struct feat *f = feat_get(fs, USB_FEATURE);
	size_t i, n = 0;

	out[0] = '\0';
	for (i = 0; f && i < feat_ninstances(f); i++) {
		const struct feat *in = feat_instance_at(f, i);
		const char *c = feat_lookup(in, "class"), *v = feat_lookup(in, "vendor"),
			   *d = feat_lookup(in, "device"), *s = feat_lookup(in, "serial");

		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s %s %s %s|", c ? c : "-",
				      v ? v : "-", d ? d : "-", s ? s : "-");
	}
	return out;
}

TEST(usb_homelab_tree)
{
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};

	/* 1-2: Zigbee stick (CP210x, class 00 -> its interface's ff); 4-1: Coral USB TPU
	 * (class 00 -> ff); root hubs class 09 with their serial; the interface entries
	 * 1-2:1.0 and 4-1:1.0 of devices/ have no idProduct and are no device */
	REQUIRE_INT(usb_scan(harness_fixture("usb/homelab/bus/usb"), fs, &err), 4);
	CHECK_STR(dump(fs), "ff 10c4 ea60 -|ff 1a6e 089a -|09 1d6b 0002 0000:00:14.0|"
			    "09 1d6b 0003 0000:00:14.0|");
	feat_set_free(fs);
}

TEST(usb_interfaces_and_trimming)
{
	const char *dir = harness_tmpdir();
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	char bus[128];

	snprintf(bus, sizeof(bus), "%s/bus/usb", dir);
	/* class 00 with two interfaces: two instances; with none: no instance */
	harness_put_str(dir, "bus/usb/devices/2-1/idVendor", "  0bda\n");
	harness_put_str(dir, "bus/usb/devices/2-1/idProduct", "8153\n");
	harness_put_str(dir, "bus/usb/devices/2-1/bDeviceClass", "00\n");
	harness_put_str(dir, "bus/usb/devices/2-1/serial", "\n");
	harness_put_str(dir, "bus/usb/devices/2-1/2-1:1.0/bInterfaceClass", "ff\n");
	harness_put_str(dir, "bus/usb/devices/2-1/2-1:1.1/bInterfaceClass", "0a\n");
	harness_put_str(dir, "bus/usb/devices/2-2/idVendor", "abcd\n");
	harness_put_str(dir, "bus/usb/devices/2-2/idProduct", "1234\n");
	harness_put_str(dir, "bus/usb/devices/2-2/bDeviceClass", "00\n");
	/* no bDeviceClass: the instance has no class */
	harness_put_str(dir, "bus/usb/devices/2-3/idProduct", "0001\n");
	REQUIRE_INT(usb_scan(bus, fs, &err), 3);
	CHECK_STR(dump(fs), "ff 0bda 8153 -|0a 0bda 8153 -|- - 0001 -|");
	/* garbage inside a value is an error naming the file */
	harness_put(dir, "bus/usb/devices/2-3/serial", "a\0b\n", 4);
	CHECK_INT(usb_scan(bus, fs, &err), -EINVAL);
	CHECK(strstr(err.msg, "2-3/serial") != NULL);
	feat_set_free(fs);
}

TEST(usb_serial_with_control_bytes)
{
	const char *dir = harness_tmpdir();
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	char bus[128];

	/* The serial is the device's own string descriptor: the kernel turns its UTF-16 into
	 * UTF-8 and keeps control characters (drivers/usb/core/message.c usb_string), so a
	 * cheap stick can show one. NFD keeps the value (TrimSpace only); one such stick must
	 * not fail the whole scan. */
	snprintf(bus, sizeof(bus), "%s/bus/usb", dir);
	harness_put_str(dir, "bus/usb/devices/1-2/idVendor", "10c4\n");
	harness_put_str(dir, "bus/usb/devices/1-2/idProduct", "ea60\n");
	harness_put_str(dir, "bus/usb/devices/1-2/bDeviceClass", "ff\n");
	harness_put_str(dir, "bus/usb/devices/1-2/serial", "A\001B\tC\n");
	REQUIRE_INT(usb_scan(bus, fs, &err), 1);
	CHECK_STR(dump(fs), "ff 10c4 ea60 A\001B\tC|");
	feat_set_free(fs);
}

TEST(usb_longest_serial)
{
	const char *dir = harness_tmpdir();
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	char bus[128], serial[400];
	const struct feat *in;
	size_t i;

	/* A string descriptor holds up to 126 UTF-16 units; the kernel's UTF-8 of it takes up
	 * to 3 bytes each (MAX_USB_STRING_SIZE 127 * 3 + 1 in drivers/usb/core/message.c): a
	 * serial of 126 CJK characters is 378 bytes, and a real device's value. */
	for (i = 0; i < 126; i++)
		memcpy(serial + 3 * i, "\xe4\xb8\xad", 3);
	serial[378] = '\n';
	serial[379] = '\0';
	snprintf(bus, sizeof(bus), "%s/bus/usb", dir);
	harness_put_str(dir, "bus/usb/devices/1-3/idVendor", "0483\n");
	harness_put_str(dir, "bus/usb/devices/1-3/idProduct", "5740\n");
	harness_put_str(dir, "bus/usb/devices/1-3/bDeviceClass", "02\n");
	harness_put_str(dir, "bus/usb/devices/1-3/serial", serial);
	serial[378] = '\0'; /* the value: the kernel's "%s\n" trimmed */
	REQUIRE_INT(usb_scan(bus, fs, &err), 1);
	in = feat_instance_at(feat_get(fs, USB_FEATURE), 0);
	CHECK_STR(feat_lookup(in, "serial"), serial);
	feat_set_free(fs);
}

/* No USB bus: usb.device still exists, with no instance, as NFD's (issue 20 item 3) */
TEST(usb_no_bus)
{
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};

	CHECK_INT(usb_scan(harness_tmpdir(), fs, &err), 0);
	REQUIRE(feat_get(fs, USB_FEATURE) != NULL);
	CHECK_INT((int)feat_ninstances(feat_get(fs, USB_FEATURE)), 0);
	feat_set_free(fs);
}
