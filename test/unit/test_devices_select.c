/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_devices_select: pkg/devices classes, scans, IDs, Allocate answers, preferred allocation
 * and CDI specs on temp /dev and /sys trees (device nodes made with mknod: root only). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "devices/devices.h"
#include "kubelet/kubelet.h"
#include "label/label.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

#include "harness.h"

static char devr[256], sysr[256], top[64];
static struct devices_roots roots;

/* The case's one temp tree (harness_tmpdir makes a new one per call). */
static const char *tmp(void)
{
	if (!top[0])
		snprintf(top, sizeof(top), "%s", harness_tmpdir());
	return top;
}

static void trees(void)
{
	const char *dir = tmp();

	snprintf(devr, sizeof(devr), "%s/dev", dir);
	snprintf(sysr, sizeof(sysr), "%s/sys", dir);
	roots.dev = devr;
	roots.sys = sysr;
	harness_put_str(dir, "dev/.keep", "");
	harness_put_str(dir, "sys/.keep", "");
}

/* A character device node (1:3, /dev/null's) at dev/rel: only those are offered. */
static void node(const char *rel)
{
	char p[300];

	snprintf(p, sizeof(p), "dev/%s", rel);
	harness_put_str(tmp(), p, ""); /* its directories */
	snprintf(p, sizeof(p), "%s/dev/%s", tmp(), rel);
	unlink(p);
	if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) < 0)
		SKIP("mknod %s: %s (device nodes need root)", p, strerror(errno));
}

static struct devices_found scan1(struct devices_classes *c, size_t i, int want)
{
	struct devices_found f = {0};
	struct log_err err = {0};
	int r = devices_scan(c, i, &roots, &f, &err);

	if (r != want)
		fprintf(stderr, "  scan: %d (%s)\n", r, err.msg);
	CHECK_INT(r, want);
	return f;
}

/* squat's README: video, fuse count 10, capture pairing controlC* + pcmC*D0c with mountPath */
TEST(devices_squat_examples)
{
	struct devices_classes *c = devices_classes_new();
	struct log_err err = {0};
	struct devices_found f;

	trees();
	node("video0");
	node("fuse");
	node("snd/controlC0");
	node("snd/pcmC0D0c");
	node("ttyUSB0");
	node("ttyUSB1");
	node("ttyACM0");
	REQUIRE_INT(devices_add_squat(c,
				      "{\"name\": \"video\", \"groups\": [{\"count\": 2, "
				      "\"paths\": [{\"path\": \"/dev/video0\"}]}]}",
				      NULL, &err),
		    0);
	REQUIRE_INT(devices_add_squat(c,
				      "{\"name\": \"fuse\", \"groups\": [{\"count\": 10, "
				      "\"paths\": [{\"path\": \"/dev/fuse\"}]}]}",
				      NULL, &err),
		    0);
	REQUIRE_INT(
	    devices_add_squat(c,
			      "name: capture\ngroups:\n- paths:\n  - path: /dev/snd/controlC0\n"
			      "  - path: /dev/snd/pcmC0D0c\n    mountPath: /dev/snd/pcm\n",
			      "example.org", &err),
	    0);
	REQUIRE_INT(devices_add_squat(c, "serial,/dev/ttyUSB*,/dev/ttyACM*", NULL, &err), 0);
	CHECK_STR(devices_class_resource(c, 0), "squat.ai/video");
	CHECK_STR(devices_class_resource(c, 2), "example.org/capture");

	f = scan1(c, 0, 1);
	REQUIRE_INT((int)f.d[0].n_ids, 2);
	/* squat's ID: sha1 of the share number, then the host paths */
	CHECK_STR(f.d[0].ids[0], "f88ae3a1aba46ffcde26322d41d7d2c9a79fa77c");
	CHECK_STR(f.d[0].ids[1], "0e4d95014008bb35fd0b8d4fce6948f0d1f3824a");
	CHECK_STR(f.d[0].nodes[0].host, "/dev/video0");
	CHECK_STR(f.d[0].nodes[0].perms, "mrw");
	devices_found_free(&f);

	f = scan1(c, 1, 1);
	CHECK_INT((int)f.d[0].n_ids, 10);
	devices_found_free(&f);

	f = scan1(c, 2, 1);
	REQUIRE_INT((int)f.d[0].n_nodes, 2);
	CHECK_STR(f.d[0].ids[0], "8e312365c4c43caed695c0e3bad2b52cb3dd6fa4");
	CHECK_STR(f.d[0].nodes[1].host, "/dev/snd/pcmC0D0c");
	CHECK_STR(f.d[0].nodes[1].container, "/dev/snd/pcm");
	devices_found_free(&f);

	f = scan1(c, 3, 3); /* the old comma form: each path its own group */
	CHECK_STR(f.d[0].name, "ttyUSB0");
	CHECK_STR(f.d[2].name, "ttyACM0");
	devices_found_free(&f);
	devices_classes_free(c);
}

/* squat's limit: a path with fewer matches is reused up to limit times */
TEST(devices_squat_limit_and_mounts)
{
	struct devices_classes *c = devices_classes_new();
	struct log_err err = {0};
	struct devices_found f;

	trees();
	node("a0");
	node("a1");
	node("a2");
	node("shared");
	REQUIRE_INT(devices_add_squat(c,
				      "{name: x, groups: [{paths: [{path: '/dev/a*'}, {path: "
				      "/dev/shared, limit: 2, type: Mount, readOnly: true}]}]}",
				      NULL, &err),
		    0);
	f = scan1(c, 0, 2); /* 3 matches, but shared only twice */
	CHECK(f.d[1].nodes[1].mount);
	CHECK(f.d[1].nodes[1].read_only);
	CHECK_STR(f.d[1].nodes[1].host, "/dev/shared");
	devices_found_free(&f);
	devices_classes_free(c);
}

TEST(devices_squat_refusals)
{
	struct devices_classes *c = devices_classes_new();
	struct log_err err = {0};

	CHECK_INT(devices_add_squat(c,
				    "{name: x, groups: [{paths: [{path: /dev/a}], usb: "
				    "[{vendor: '1a86', product: '7523'}]}]}",
				    NULL, &err),
		  -EINVAL);
	CHECK(strstr(err.msg, "either 'paths' or 'usb'") != NULL);
	CHECK_INT(devices_add_squat(c, "{name: x, groups: [{paths: [{path: /dev/a, perms: r}]}]}",
				    NULL, &err),
		  -EINVAL);
	CHECK(strstr(err.msg, "unknown field 'perms'") != NULL);
	CHECK_INT(devices_add_squat(c, "{name: x, groups: [{count: 1001, paths: [{path: /a}]}]}",
				    NULL, &err),
		  -EINVAL);
	CHECK(strstr(err.msg, "up to 1000") != NULL);
	CHECK_INT(devices_add_squat(
		      c, "{name: x, groups: [{paths: [{path: /a, permissions: rx}]}]}", NULL, &err),
		  -EINVAL);
	CHECK_INT(devices_add_squat(c, "{name: x, groups: []}", "Bad_Domain", &err), -EINVAL);
	CHECK_INT((int)devices_classes_count(c), 0);
	devices_classes_free(c);
}

static void usb_dev(const char *name, const char *vid, const char *pid, const char *serial,
		    const char *tty)
{
	char p[300], v[64];

	snprintf(p, sizeof(p), "sys/bus/usb/devices/%s/idVendor", name);
	harness_put_str(tmp(), p, vid);
	snprintf(p, sizeof(p), "sys/bus/usb/devices/%s/idProduct", name);
	harness_put_str(tmp(), p, pid);
	snprintf(p, sizeof(p), "sys/bus/usb/devices/%s/serial", name);
	harness_put_str(tmp(), p, serial);
	snprintf(p, sizeof(p), "sys/bus/usb/devices/%s/bDeviceClass", name);
	harness_put_str(tmp(), p, "00");
	snprintf(p, sizeof(p), "sys/bus/usb/devices/%s/busnum", name);
	harness_put_str(tmp(), p, "1");
	snprintf(p, sizeof(p), "sys/bus/usb/devices/%s/devnum", name);
	snprintf(v, sizeof(v), "%zu", strlen(name) + 3);
	harness_put_str(tmp(), p, v);
	snprintf(p, sizeof(p), "sys/bus/usb/devices/%s/%s:1.0/bInterfaceClass", name, name);
	harness_put_str(tmp(), p, "ff");
	snprintf(p, sizeof(p), "sys/bus/usb/devices/%s/%s:1.0/%s/uevent", name, name, tty);
	harness_put_str(tmp(), p, "");
}

static const char classes_yaml[] =
    "apiVersion: nodeprobe.io/v1alpha1\nkind: DeviceClass\nmetadata: {name: zigbee}\n"
    "spec:\n  resource: nodeprobe.io/zigbee\n  matchFeatures:\n  - feature: usb.device\n"
    "    matchExpressions:\n      vendor: {op: In, value: ['10c4']}\n"
    "      serial: {op: InRegexp, value: ['^ZB']}\n"
    "---\napiVersion: nodeprobe.io/v1alpha1\nkind: DeviceClass\nmetadata: {name: ci-kvm}\n"
    "spec: {preset: kvm}\n";

/* A rule class finds the stick by vendor and serial wherever it enumerates. */
TEST(devices_rule_class_usb)
{
	struct devices_classes *c = devices_classes_new();
	struct log_err err = {0};
	struct devices_found f;
	struct label_set *ls = label_set_new();
	char path[300];

	trees();
	usb_dev("1-1", "10c4", "ea60", "ZB123", "ttyUSB3");
	usb_dev("1-2", "10c4", "ea60", "OTHER", "ttyUSB4");
	usb_dev("1-3", "0403", "6001", "ZB999", "ttyUSB5");
	node("ttyUSB3");
	node("ttyUSB4");
	node("kvm");
	harness_put_str(tmp(), "dev/serial/by-id/.keep", "");
	snprintf(path, sizeof(path), "%s/serial/by-id/usb-Silabs_ZB123-if00", devr);
	REQUIRE(symlink("../../ttyUSB3", path) == 0);
	harness_put_str(tmp(), "classes.yaml", classes_yaml);
	snprintf(path, sizeof(path), "%s/classes.yaml", tmp());
	REQUIRE_INT(devices_load_file(c, path, NULL, &err), 2);
	CHECK_STR(devices_class_resource(c, 0), "nodeprobe.io/zigbee");
	CHECK_STR(devices_class_resource(c, 1), "squat.ai/ci-kvm");
	f = scan1(c, 0, 1);
	CHECK_STR(f.d[0].name, "ttyUSB3");
	CHECK_STR(f.d[0].ids[0], "ttyUSB3-0");
	REQUIRE_INT((int)f.d[0].n_nodes, 2);
	CHECK_STR(f.d[0].nodes[0].host, "/dev/ttyUSB3");
	CHECK_STR(f.d[0].nodes[1].host, "/dev/ttyUSB3");
	CHECK_STR(f.d[0].nodes[1].container, "/dev/serial/by-id/usb-Silabs_ZB123-if00");
	devices_found_free(&f);
	f = scan1(c, 1, 1);
	CHECK_STR(f.d[0].ids[9], "kvm-9");
	devices_found_free(&f);
	/* labels from the same classes: <resource>.count */
	REQUIRE_INT(devices_labels(c, &roots, ls, &err), 2);
	CHECK_STR(label_set_get(ls, "nodeprobe.io/zigbee.count"), "1");
	CHECK_STR(label_set_get(ls, "squat.ai/ci-kvm.count"), "10");
	label_set_free(ls);
	devices_classes_free(c);
}

TEST(devices_class_file_errors)
{
	struct devices_classes *c = devices_classes_new();
	struct log_err err = {0};
	char path[300];

	harness_put_str(
	    tmp(), "bad.yaml",
	    "apiVersion: nodeprobe.io/v1alpha1\nkind: DeviceClass\nmetadata: {name: x}\n"
	    "spec:\n  matchFeatures:\n  - feature: usb.device\n    matchExpressions:\n"
	    "      vendor: {op: Inn, value: ['10c4']}\n");
	snprintf(path, sizeof(path), "%s/bad.yaml", tmp());
	CHECK_INT(devices_load_file(c, path, NULL, &err), -EINVAL);
	CHECK(strstr(err.msg, "bad.yaml:8:") != NULL);
	harness_put_str(
	    tmp(), "bad.yaml",
	    "apiVersion: nodeprobe.io/v1alpha1\nkind: DeviceClass\nmetadata: {name: x}\n"
	    "spec: {preset: nope}\n");
	CHECK_INT(devices_load_file(c, path, NULL, &err), -EINVAL);
	CHECK(strstr(err.msg, "'nope'") != NULL);
	devices_classes_free(c);
}

/* intel-gpu: card + renderD per GPU of vendor 0x8086, shared N ways as card0-0..card0-(N-1) */
TEST(devices_intel_gpu_preferred)
{
	struct devices_classes *c = devices_classes_new();
	struct devices_preset_opts po = {.shared_dev_num = 3, .policy = DEVICES_POLICY_PACKED};
	struct log_err err = {0};
	struct devices_found f;
	const char *avail[] = {"card0-0", "card1-0", "card0-1", "card1-1", "card0-2", "card1-2"};
	const char *must[] = {"card1-2"};
	const char *out[6];

	trees();
	node("dri/card0");
	node("dri/renderD128");
	node("dri/card1");
	node("dri/renderD129");
	node("dri/card2");
	harness_put_str(tmp(), "sys/class/drm/card0/device/vendor", "0x8086\n");
	harness_put_str(tmp(), "sys/class/drm/card0/device/drm/renderD128/dev", "");
	harness_put_str(tmp(), "sys/class/drm/card1/device/vendor", "0x8086\n");
	harness_put_str(tmp(), "sys/class/drm/card1/device/drm/renderD129/dev", "");
	harness_put_str(tmp(), "sys/class/drm/card2/device/vendor", "0x10de\n");
	REQUIRE_INT(devices_add_preset(c, "intel-gpu", NULL, &po, &err), 0);
	CHECK_STR(devices_class_resource(c, 0), "gpu.intel.com/i915");
	f = scan1(c, 0, 2);
	CHECK_STR(f.d[1].ids[2], "card1-2");
	REQUIRE_INT((int)f.d[1].n_nodes, 2);
	CHECK_STR(f.d[1].nodes[1].host, "/dev/dri/renderD129");
	/* packed: must's card1 share, then card1's others */
	REQUIRE_INT(devices_preferred(&f, DEVICES_POLICY_PACKED, avail, 6, must, 1, 3, out, &err),
		    3);
	CHECK_STR(out[0], "card1-2");
	CHECK_STR(out[1], "card1-0");
	CHECK_STR(out[2], "card1-1");
	/* balanced: one share of each GPU */
	REQUIRE_INT(devices_preferred(&f, DEVICES_POLICY_BALANCED, avail, 6, NULL, 0, 2, out, &err),
		    2);
	CHECK(strncmp(out[0], "card0", 5) == 0 || strncmp(out[0], "card1", 5) == 0);
	CHECK(strncmp(out[0], out[1], 5) != 0);
	CHECK_INT(devices_preferred(&f, DEVICES_POLICY_NONE, avail, 6, NULL, 0, 7, out, &err),
		  -EINVAL);
	devices_found_free(&f);
	devices_classes_free(c);
}

/* Allocate: DeviceSpecs, Mounts, CDI names that resolve in the class's spec */
TEST(devices_allocate_and_cdi)
{
	struct devices_classes *c = devices_classes_new();
	struct log_err err = {0};
	struct kubelet_alloc a;
	struct devices_found f;
	const char *ids[2];
	char *js, cdi[300], name[400];

	trees();
	node("ttyUSB0");
	node("ttyUSB1");
	REQUIRE_INT(devices_add_preset(c, "serial", NULL, NULL, &err), 0);
	f = scan1(c, 0, 2);
	ids[0] = "ttyUSB1-0";
	REQUIRE_INT(devices_allocate(&f, "serial", true, ids, 1, &a, &err), 0);
	REQUIRE_INT((int)a.n_specs, 1);
	CHECK_STR(a.specs[0].host_path, "/dev/ttyUSB1");
	CHECK_STR(a.specs[0].container_path, "/dev/ttyUSB1");
	CHECK_STR(a.specs[0].permissions, "rw");
	REQUIRE_INT((int)a.n_cdi, 1);
	CHECK_STR(a.cdi_names[0], "nodeprobe.io/serial=ttyUSB1");
	devices_alloc_free(&a);
	REQUIRE_INT(devices_allocate(&f, "serial", false, ids, 1, &a, &err), 0);
	CHECK_INT((int)a.n_cdi, 0);
	devices_alloc_free(&a);
	ids[1] = "ttyUSB9-0";
	CHECK_INT(devices_allocate(&f, "serial", true, ids, 2, &a, &err), -ENOENT);
	CHECK(strstr(err.msg, "ttyUSB9-0") != NULL);

	REQUIRE(devices_cdi_json(&f, "serial", &js) > 0);
	CHECK(strstr(js, "\"cdiVersion\": \"0.5.0\"") != NULL);
	CHECK(strstr(js, "annotations") == NULL); /* CDI 0.5.0 has none */
	CHECK(strstr(js, "\"kind\": \"nodeprobe.io/serial\"") != NULL);
	CHECK(strstr(js, "\"name\": \"ttyUSB1\"") != NULL);
	free(js);
	/* written once, unchanged not rewritten; an empty list removes only our file */
	snprintf(cdi, sizeof(cdi), "%s/cdi", tmp());
	harness_put_str(tmp(), "cdi/nodeprobe.io-video.json", "{\"kind\": \"other\"}");
	harness_put_str(tmp(), "cdi/nodeprobe.io-serial.json", /* an older nodeprobe-devices' */
			"{\"cdiVersion\": \"0.6.0\", \"kind\": \"nodeprobe.io/serial\", "
			"\"annotations\": {\"nodeprobe.io/written-by\": \"nodeprobe-devices\"}, "
			"\"devices\": []}");
	CHECK_INT(devices_cdi_write(cdi, &f, "serial", &err), 1);
	CHECK_INT(devices_cdi_write(cdi, &f, "serial", &err), 0);
	harness_put_str(tmp(), "cdi/nodeprobe.io-video.json", /* our kind, not our writer's */
			"{\"cdiVersion\": \"0.5.0\", \"kind\": \"nodeprobe.io/video\", "
			"\"devices\": []}");
	CHECK_INT(devices_cdi_write(cdi, &f, "video", &err), -EEXIST);
	devices_found_free(&f);
	CHECK_INT(devices_cdi_write(cdi, &f, "serial", &err), 1);
	snprintf(name, sizeof(name), "%s/nodeprobe.io-serial.json", cdi);
	CHECK(access(name, F_OK) != 0);
	CHECK_INT(devices_cdi_write(cdi, &f, "video", &err), 0); /* not ours: left */
	snprintf(name, sizeof(name), "%s/nodeprobe.io-video.json", cdi);
	CHECK(access(name, F_OK) == 0);
	devices_classes_free(c);
}

/* --list: one line per device */
TEST(devices_list_lines)
{
	struct devices_opts o = {0};
	struct strbuf sb = STRBUF_INIT(1 << 16);
	struct log_err err = {0};
	const char *pre[] = {"fuse"};

	trees();
	node("fuse");
	o.roots = roots;
	o.preset = pre;
	o.n_preset = 1;
	REQUIRE_INT(devices_list(&o, &sb, &err), 0);
	CHECK_STR(sb.buf, "squat.ai/fuse fuse /dev/fuse:/dev/fuse:rw ids=10 fuse-0\n");
	sb_free(&sb);
}

/* Two terms on usb.device: a device is chosen when both match it (not either). */
TEST(devices_rule_terms_and)
{
	struct devices_classes *c = devices_classes_new();
	struct log_err err = {0};
	struct devices_found f;
	char path[300];

	trees();
	usb_dev("1-1", "10c4", "ea60", "ZB123", "ttyUSB3");
	usb_dev("1-3", "0403", "6001", "ZB999", "ttyUSB5");
	node("ttyUSB3");
	node("ttyUSB5");
	harness_put_str(
	    tmp(), "two.yaml",
	    "apiVersion: nodeprobe.io/v1alpha1\nkind: DeviceClass\nmetadata: {name: zb}\n"
	    "spec:\n  matchFeatures:\n  - feature: usb.device\n    matchExpressions:\n"
	    "      vendor: {op: In, value: ['0403']}\n  - feature: usb.device\n"
	    "    matchExpressions:\n      serial: {op: InRegexp, value: ['^ZB']}\n");
	snprintf(path, sizeof(path), "%s/two.yaml", tmp());
	REQUIRE_INT(devices_load_file(c, path, NULL, &err), 1);
	f = scan1(c, 0, 1);
	CHECK_STR(f.d[0].name, "ttyUSB5");
	devices_found_free(&f);
	devices_classes_free(c);
}

/* snd: every node of /dev/snd in one device (a directory path gives the nodes under it, as
 * containerd's DevicesFromPath: by-path's links, as on a host, are no nodes of their own) */
TEST(devices_snd_preset_all_nodes)
{
	struct devices_classes *c = devices_classes_new();
	struct log_err err = {0};
	struct devices_found f;

	trees();
	node("snd/controlC0");
	node("snd/pcmC0D0p");
	node("snd/timer");
	harness_put_str(tmp(), "dev/snd/by-path/.keep", "");
	{
		char p[300];

		snprintf(p, sizeof(p), "%s/dev/snd/by-path/pci-0000:00:1f.3", tmp());
		REQUIRE(symlink("../controlC0", p) == 0);
	}
	REQUIRE_INT(devices_add_preset(c, "snd", NULL, NULL, &err), 0);
	f = scan1(c, 0, 1);
	REQUIRE_INT((int)f.d[0].n_nodes, 3);
	CHECK_STR(f.d[0].nodes[0].host, "/dev/snd/controlC0");
	CHECK_STR(f.d[0].nodes[2].container, "/dev/snd/timer");
	CHECK_STR(f.d[0].nodes[2].perms, "rw");
	CHECK_INT((int)f.d[0].n_ids, 10);
	devices_found_free(&f);
	devices_classes_free(c);
}
