/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devices_dra: the classes whose api is dra (issue 28). Each device of such a class is a device of
 * our pool (the node's name) named "<class>-<device>" as a DNS label; hooks/devices/dra.c serves
 * them over pkg/dra (another layer). ../shared/reference/dra.md.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "devices/devices_internal.h"
#include "log/log.h"

/* "<class>-<device>" lower case, other characters '-', no runs of '-' nor one at the ends:
 * its whole length (maybe over 63), of which out holds cap - 1. */
static size_t plain_name(const char *cls, const char *dev, char *out, size_t cap)
{
	char buf[512], prev = '-';
	size_t at = 0, len = 0;

	snprintf(buf, sizeof(buf), "%s-%s", cls, dev);
	for (const char *p = buf; *p; p++) {
		char ch = (char)tolower((unsigned char)*p);

		if (!isalnum((unsigned char)ch))
			ch = '-';
		if (ch == '-' && prev == '-')
			continue;
		if (at + 1 < cap)
			out[at++] = ch;
		len++;
		prev = ch;
	}
	if (prev == '-' && len) {
		len--;
		if (at > len)
			at = len;
	}
	out[at] = 0;
	return len;
}

/*
 * The name with its identity's hash: the plain name's first DRA_NAME_CUT characters (no '-' at
 * the end), '-' and DRA_NAME_HASH hex digits of SHA-256(class NUL device) into out[64].
 */
static void hashed_name(const char *cls, const char *dev, char *out)
{
	uint8_t md[SHA256_DIGEST_SIZE];
	struct sha256_ctx h;
	char p[DRA_NAME_MAX + 1];
	size_t n;

	sha256_init(&h);
	sha256_update(&h, strlen(cls) + 1, (const uint8_t *)cls);
	sha256_update(&h, strlen(dev), (const uint8_t *)dev);
	sha256_digest(&h, sizeof(md), md);
	plain_name(cls, dev, p, DRA_NAME_CUT + 1);
	n = strlen(p);
	while (n && p[n - 1] == '-')
		n--;
	p[n] = 0;
	n = (size_t)snprintf(out, DRA_NAME_MAX + 1, "%s%s", p, n ? "-" : "");
	for (size_t i = 0; i < DRA_NAME_HASH / 2; i++)
		snprintf(out + n + 2 * i, 3, "%02x", md[i]);
}

int devices_dra_name(const char *cls, const char *dev, char *out, size_t cap)
{
	char buf[DRA_NAME_MAX + 1];
	size_t len;

	if (cap < DRA_NAME_MAX + 1)
		return -EINVAL;
	len = plain_name(cls, dev, buf, sizeof(buf));
	if (len == 0)
		return -EINVAL;
	if (len > DRA_NAME_MAX)
		hashed_name(cls, dev, buf); /* cut: the hash keeps it unique */
	snprintf(out, cap, "%s", buf);
	return 0;
}

/* One device of the pool while names are given: its name and where it is. */
struct named {
	char name[DRA_NAME_MAX + 1];
	size_t cls, dev, at; /* class, device in its scan, index in the caller's order */
};

static int by_name(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	return r ? r : x->at < y->at ? -1 : x->at > y->at;
}

int devices_dra_names(const struct devices_classes *c, const struct devices_found *const *f,
		      char (**out)[DRA_NAME_MAX + 1], size_t *out_n)
{
	struct named *t;
	size_t n = 0, m = 0;
	char(*names)[DRA_NAME_MAX + 1];

	*out = NULL;
	*out_n = 0;
	for (size_t i = 0; i < c->n; i++)
		n += f[i] ? f[i]->n : 0;
	t = calloc(n + 1, sizeof(*t));
	names = calloc(n + 1, sizeof(*names));
	if (!t || !names) {
		free(t);
		free(names);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->n; i++)
		for (size_t k = 0; f[i] && k < f[i]->n; k++, m++) {
			t[m] = (struct named){.cls = i, .dev = k, .at = m};
			if (devices_dra_name(c->c[i].name, f[i]->d[k].name, t[m].name,
					     sizeof(t[m].name)) < 0)
				t[m].name[0] = 0;
		}
	/* names that collide (lower case, '-' for other characters): all of them hashed */
	qsort(t, n, sizeof(*t), by_name);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(t[i].name, t[j].name); j++)
			;
		for (size_t k = i; j - i > 1 && t[i].name[0] && k < j; k++)
			hashed_name(c->c[t[k].cls].name, f[t[k].cls]->d[t[k].dev].name, t[k].name);
	}
	/* a hash that still collides (2^-40): none of them */
	qsort(t, n, sizeof(*t), by_name);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(t[i].name, t[j].name); j++)
			;
		for (size_t k = i; j - i > 1 && t[i].name[0] && k < j; k++) {
			log_warn(
			    "dra: class %s device %s: its pool name %s is another device's too: "
			    "not published",
			    c->c[t[k].cls].name, f[t[k].cls]->d[t[k].dev].name, t[k].name);
			t[k].name[0] = 0;
		}
	}
	for (size_t i = 0; i < n; i++)
		memcpy(names[t[i].at], t[i].name, sizeof(names[0]));
	free(t);
	*out = names;
	*out_n = n;
	return 0;
}

bool devices_dra_is(const struct devices_classes *c, size_t i, enum devices_api dflt)
{
	enum devices_api a = c->c[i].api;

	return (a == DEVICES_API_UNSET ? dflt : a) == DEVICES_API_DRA;
}

bool devices_dra_any(const struct devices_classes *c, enum devices_api dflt)
{
	for (size_t i = 0; i < c->n; i++)
		if (devices_dra_is(c, i, dflt))
			return true;
	return false;
}

int devices_dra_check(const struct devices_classes *c, enum devices_api dflt, struct log_err *err)
{
	bool dra = devices_dra_any(c, dflt);

	for (size_t i = 0; i < c->n; i++) {
		const struct dclass *k = &c->c[i];
		char cdi[80];

		/* <vendor>-claim_<uid>.json is a DRA claim's CDI spec (pkg/dra/dra_prep.c) */
		if (dra && !devices_dra_is(c, i, dflt) &&
		    devices_cdi_class(devices_class_name(c, i), cdi, sizeof(cdi)) == 0 &&
		    !strncmp(cdi, "claim_", 6))
			return log_err_set(
			    err, -EINVAL,
			    "class %s: CDI class '%s' begins with 'claim_': its spec "
			    "would be named like a DRA claim's spec: rename the class",
			    devices_class_name(c, i), cdi);
		if (!devices_dra_is(c, i, dflt))
			continue;
		for (size_t g = 0; g < k->ng; g++)
			if (k->g[g].count > 1)
				return log_err_set(
				    err, -EINVAL,
				    "class %s: api: dra with count %u: shares are a device-plugin "
				    "scheme; in DRA several claims share a device through the API "
				    "(adminAccess, consumable capacity), which nodeprobe-devices does "
				    "not offer yet: use api: device-plugin for this class",
				    k->name, k->g[g].count);
	}
	return 0;
}

const struct devices_dev *devices_dra_find(const struct devices_classes *c,
					   const struct devices_found *const *f, const char *device)
{
	const struct devices_dev *found = NULL;
	char(*names)[DRA_NAME_MAX + 1];
	size_t n, m = 0;

	if (devices_dra_names(c, f, &names, &n) < 0)
		return NULL;
	for (size_t i = 0; i < c->n && !found; i++)
		for (size_t k = 0; f[i] && k < f[i]->n && !found; k++, m++)
			if (!strcmp(names[m], device))
				found = &f[i]->d[k];
	free(names);
	return found;
}

/* ---- attributes (devices_dra_attrs) */

struct attrs {
	struct devices_attr *a;
	size_t n, max;
};

static void put_str(struct attrs *t, const char *id, const char *v)
{
	if (t->n == t->max || !v || !*v)
		return;
	snprintf(t->a[t->n].id, sizeof(t->a[0].id), "%s", id);
	snprintf(t->a[t->n].str, sizeof(t->a[0].str), "%s", v);
	t->a[t->n++].type = DEVICES_ATTR_STRING;
}

static void put_num(struct attrs *t, const char *id, long long v)
{
	if (t->n == t->max)
		return;
	snprintf(t->a[t->n].id, sizeof(t->a[0].id), "%s", id);
	t->a[t->n].str[0] = 0;
	t->a[t->n].num = v;
	t->a[t->n++].type = DEVICES_ATTR_INT;
}

/* dir/name's first line (unless raw: without a leading "0x", lower case) into v (empty when
 * absent; a line over 127 bytes is cut, still over the API's 64: pkg/dra leaves it out). */
static bool read_attr(const char *dir, const char *name, char *v, size_t cap, bool raw)
{
	char path[4096], buf[128];
	FILE *f;
	size_t l;

	v[0] = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	l = strcspn(buf, "\n");
	buf[l] = 0;
	snprintf(v, cap, "%s", !raw && !strncmp(buf, "0x", 2) ? buf + 2 : buf);
	for (char *p = v; *p && !raw; p++)
		*p = (char)tolower((unsigned char)*p);
	return true;
}

static void link_base(const char *dir, const char *name, char *v, size_t cap)
{
	char path[4096], tgt[4096];
	ssize_t l;

	v[0] = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	l = readlink(path, tgt, sizeof(tgt) - 1);
	if (l <= 0)
		return;
	tgt[l] = 0;
	snprintf(v, cap, "%.127s", strrchr(tgt, '/') ? strrchr(tgt, '/') + 1 : tgt);
}

static bool pci_addr(const char *s)
{
	unsigned d, b, dv, f;
	char end;

	return sscanf(s, "%4x:%2x:%2x.%1x%c", &d, &b, &dv, &f, &end) == 4;
}

/* How a row of a sysfs table reads its value. */
enum from {
	HEX,	  /* the file's first line: lower case, without "0x" */
	RAW,	  /* the file's first line as it is (a serial number) */
	PCI_ID,	  /* the file's first line as Intel's driver takes it: "0x" and lower-case hex */
	DIRNAME,  /* the device directory's own name (bus path, PCI address) */
	LINK,	  /* the base name of the symlink's target (the bound driver) */
	INT,	  /* the file's first line as a decimal int; absent when negative */
	LINK_INT, /* the symlink target's base name as a decimal int (the IOMMU group) */
};

/* One attribute of a sysfs device: its file (NULL for DIRNAME), our id, how to read it. */
struct sysfs_row {
	const char *file, *id;
	enum from from;
};

/* A USB device (it has idVendor), in publishing order. */
static const struct sysfs_row usb_rows[] = {
    {"idVendor", "usbVendorID", HEX}, {"idProduct", "usbProductID", HEX},
    {"serial", "usbSerial", RAW},     {"bcdDevice", "usbBcdDevice", HEX},
    {NULL, "usbBusPath", DIRNAME},
};

/* A PCI function (a directory named by its address, with a vendor file), in publishing order. */
static const struct sysfs_row pci_rows[] = {
    {"vendor", "pciVendorID", HEX},
    {"device", "pciDeviceID", HEX},
    {"class", "pciClass", HEX},
    {"subsystem_vendor", "pciSubsystemVendorID", HEX},
    {"subsystem_device", "pciSubsystemDeviceID", HEX},
    {NULL, "pciAddress", DIRNAME},
    {"driver", "pciDriver", LINK},
    {"numa_node", "numaNode", INT},
    {"iommu_group", "iommuGroup", LINK_INT},
};

/*
 * An Intel GPU (PCI vendor 8086, display class 03): the facts Intel's DRA driver publishes for it
 * too, under its names (intel/intel-resource-drivers-for-kubernetes
 * cmd/kubelet-gpu-plugin/node_state.go GetResources: "pciId" the sysfs device file as read,
 * "driver" the bound driver, i915 or xe; pkg/gpu/discovery/discovery.go), so a selector written
 * for gpu.intel.com reads the same under our domain. Its pciAddress is pci_rows' already.
 */
static const struct sysfs_row intel_gpu_rows[] = {
    {"device", "pciId", PCI_ID},
    {"driver", "driver", LINK},
};

/* The rows r[0..n) of the device directory dir (named base). */
static void put_rows(struct attrs *t, const char *dir, const char *base, const struct sysfs_row *r,
		     size_t n)
{
	char v[128];

	for (size_t i = 0; i < n; i++) {
		switch (r[i].from) {
		case HEX:
		case RAW:
			if (read_attr(dir, r[i].file, v, sizeof(v), r[i].from == RAW))
				put_str(t, r[i].id, v);
			break;
		case PCI_ID:
			if (read_attr(dir, r[i].file, v + 2, sizeof(v) - 2, false) && v[2]) {
				memcpy(v, "0x", 2);
				put_str(t, r[i].id, v);
			}
			break;
		case DIRNAME:
			put_str(t, r[i].id, base);
			break;
		case LINK:
			link_base(dir, r[i].file, v, sizeof(v));
			put_str(t, r[i].id, v);
			break;
		case INT:
			if (read_attr(dir, r[i].file, v, sizeof(v), false) && v[0] && v[0] != '-')
				put_num(t, r[i].id, strtoll(v, NULL, 10));
			break;
		case LINK_INT:
			link_base(dir, r[i].file, v, sizeof(v));
			if (v[0])
				put_num(t, r[i].id, strtoll(v, NULL, 10));
			break;
		}
	}
}

/*
 * The PCI root of the sysfs device path: its "pci<domain>:<bus>" directory (pci0000:00), the
 * standard attribute resource.kubernetes.io/pcieRoot (kubernetes
 * staging/src/k8s.io/dynamic-resource-allocation/deviceattribute/attribute.go; Intel's driver
 * publishes it from the same directory: pkg/helpers DeterminePCIRoot). false when none.
 */
static bool pcie_root(const char *path, char *out, size_t cap)
{
	for (const char *p = strstr(path, "/pci"); p; p = strstr(p + 1, "/pci")) {
		unsigned dom, bus;
		int end = 0;

		if (sscanf(p, "/pci%4x:%2x%n", &dom, &bus, &end) == 2 && end == 11 &&
		    (p[end] == '/' || !p[end])) {
			snprintf(out, cap, "%.10s", p + 1);
			return true;
		}
	}
	return false;
}

/* Walk up from the node's sysfs device to its USB device and PCI function. */
static void sysfs_attrs(struct attrs *t, const char *dir0)
{
	char dir[4096], v[128];
	bool usb = false, pci = false;

	snprintf(dir, sizeof(dir), "%s", dir0);
	for (int depth = 0; depth < 32 && !pci; depth++) {
		const char *base = strrchr(dir, '/');

		if (!base)
			break;
		base++;
		if (!usb && read_attr(dir, "idVendor", v, sizeof(v), false)) {
			usb = true;
			put_rows(t, dir, base, usb_rows, sizeof(usb_rows) / sizeof(usb_rows[0]));
		} else if (pci_addr(base) && read_attr(dir, "vendor", v, sizeof(v), false)) {
			char cls[16];

			pci = true;
			put_rows(t, dir, base, pci_rows, sizeof(pci_rows) / sizeof(pci_rows[0]));
			if (!strcmp(v, "8086") &&
			    read_attr(dir, "class", cls, sizeof(cls), false) &&
			    !strncmp(cls, "03", 2))
				put_rows(t, dir, base, intel_gpu_rows,
					 sizeof(intel_gpu_rows) / sizeof(intel_gpu_rows[0]));
			if (pcie_root(dir, v, sizeof(v)))
				put_str(t, "resource.kubernetes.io/pcieRoot", v);
		}
		*strrchr(dir, '/') = 0;
	}
}

size_t devices_dra_attrs(const struct devices_roots *roots, const char *cls,
			 const struct devices_dev *d, struct devices_attr *out, size_t max)
{
	const char *dev = roots && roots->dev ? roots->dev : "/dev";
	const char *sys = roots && roots->sys ? roots->sys : "/sys";
	struct attrs t = {out, 0, max};
	bool first = true;

	put_str(&t, "class", cls);
	for (size_t i = 0, k = 0; i < d->n_nodes && k < 4; i++) {
		char id[16], path[4096], link[4096], real[PATH_MAX];
		const char *h = d->nodes[i].host;
		struct stat st;

		if (d->nodes[i].mount)
			continue;
		snprintf(id, sizeof(id), k ? "devPath%zu" : "devPath", k);
		put_str(&t, id, h);
		k++;
		if (!first)
			continue;
		first = false;
		snprintf(path, sizeof(path), "%s%s", dev, !strncmp(h, "/dev", 4) ? h + 4 : h);
		if (stat(path, &st) < 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
			continue;
		put_num(&t, "major", major(st.st_rdev));
		put_num(&t, "minor", minor(st.st_rdev));
		snprintf(link, sizeof(link), "%s/dev/%s/%u:%u", sys,
			 S_ISCHR(st.st_mode) ? "char" : "block", major(st.st_rdev),
			 minor(st.st_rdev));
		if (realpath(link, real))
			sysfs_attrs(&t, real);
	}
	return t.n;
}
