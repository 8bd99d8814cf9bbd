/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pciscan: the PCI devices of a sysfs tree, read with libpci's sysfs method, as NFD's pci.device.
 */
#include "pciscan/pciscan.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pci/pci.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "feature/feature.h"
#include "log/log.h"

/*
 * libpci's error callback must not return (the library continues as if it
 * had exited) and carries no context: jump back to pciscan_scan() from it.
 */
static jmp_buf lib_jmp;
static char lib_msg[400];

__attribute__((noreturn)) static void lib_error(char *msg, ...)
{
	va_list ap;

	va_start(ap, msg);
	vsnprintf(lib_msg, sizeof(lib_msg), msg, ap);
	va_end(ap);
	longjmp(lib_jmp, 1);
}

static void lib_warning(char *msg, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, msg);
	vsnprintf(buf, sizeof(buf), msg, ap);
	va_end(ap);
	log_warn("libpci: %s", buf);
}

static void lib_debug(char *msg, ...)
{
	(void)msg;
}

/*
 * Read a small sysfs attribute (path relative to dfd, or AT_FDCWD) into buf (NUL-terminated).
 * 0, -ENOENT or -errno.
 */
static int read_attr_at(int dfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	ssize_t n;
	int e = 0;

	if (fd < 0)
		return -errno;
	/* O_NONBLOCK: a FIFO reads as empty (EAGAIN with a writer), never blocks; a directory
	 * fails with EISDIR. Only an empty read is fstat'ed, to tell a FIFO or device (-EINVAL)
	 * from an empty file: one system call less per attribute (issue 20 perf) */
	n = read(fd, buf, size - 1);
	if (n < 0)
		e = errno == EAGAIN ? -EINVAL : -errno;
	else if (n == 0 && fstat(fd, &st) < 0)
		e = -errno;
	else if (n == 0 && !S_ISREG(st.st_mode))
		e = -EINVAL;
	close(fd);
	if (e)
		return e;
	if ((size_t)n == size - 1)
		return -EFBIG;
	buf[n] = '\0';
	return 0;
}

/* Words for a read_attr error: -EINVAL is a FIFO, socket or directory where a file belongs. */
static const char *read_error(int r)
{
	return r == -EINVAL ? "not a regular file" : strerror(-r);
}

/*
 * Parse what the kernel prints for a hex attribute ("0x%0Nx\n"): surrounding
 * white space, "0x", then exactly ndigits hex digits. Writes the first keep
 * digits, lowercased, to out. Returns 0 or -EINVAL.
 */
static int parse_hex(const char *s, size_t ndigits, size_t keep, char *out)
{
	const char *digits, *p;
	size_t i;

	while (isspace((unsigned char)*s))
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	digits = s;
	for (i = 0; i < ndigits; i++)
		if (!isxdigit((unsigned char)digits[i]))
			return -EINVAL;
	for (p = digits + ndigits; *p; p++)
		if (!isspace((unsigned char)*p))
			return -EINVAL;
	for (i = 0; i < keep; i++)
		out[i] = (char)tolower((unsigned char)digits[i]);
	out[keep] = '\0';
	return 0;
}

struct attr_spec {
	const char *name; /* sysfs file */
	size_t ndigits;	  /* hex digits the kernel prints */
	size_t keep;	  /* digits kept (class: class+subclass) */
	size_t off;	  /* field in struct pciscan_dev */
};

static const struct attr_spec required[] = {
    {"vendor", 4, 4, offsetof(struct pciscan_dev, vendor)},
    {"device", 4, 4, offsetof(struct pciscan_dev, device)},
    {"class", 6, 4, offsetof(struct pciscan_dev, class_code)},
    {"subsystem_vendor", 4, 4, offsetof(struct pciscan_dev, subsystem_vendor)},
    {"subsystem_device", 4, 4, offsetof(struct pciscan_dev, subsystem_device)},
};

/*
 * The bound driver: the basename of dir's "driver" symlink (read relative to dfd, dir's
 * descriptor). Copies of sysfs made by tools that store a symlink as a small file holding its
 * target (as the shared test fixtures do) are read the same way.
 */
static int read_driver(int dfd, const char *dir, char *out, size_t size, struct log_err *err)
{
	char target[256];
	ssize_t n = readlinkat(dfd, "driver", target, sizeof(target) - 1);
	const char *base;

	out[0] = '\0';
	if (n < 0 && errno == ENOENT)
		return 0;
	if (n < 0 && errno == EINVAL) {
		int r = read_attr_at(dfd, "driver", target, sizeof(target));

		if (r < 0)
			return log_err_set(err, r, "%s/driver: %s", dir, read_error(r));
		n = (ssize_t)strlen(target);
		if (!strstr(target, "drivers/"))
			return log_err_set(err, -EINVAL, "%s/driver: not a link to a driver", dir);
	} else if (n < 0) {
		return log_err_set(err, -errno, "%s/driver: %s", dir, strerror(errno));
	}
	target[n] = '\0';
	while (n > 0 && (target[n - 1] == '/' || isspace((unsigned char)target[n - 1])))
		target[--n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!*base || strlen(base) >= size)
		return log_err_set(err, -EINVAL, "%s/driver: bad driver link '%s'", dir, target);
	memcpy(out, base, strlen(base) + 1);
	return 0;
}

/*
 * An optional attribute read as NFD's readSinglePciAttribute (source/pci/utils.go): one leading
 * "0x" removed, then surrounding white space (Go's strings.TrimSpace). As NFD's readPciDevInfo,
 * which keeps an optional attribute only when its read succeeds, any error (not there, a parent
 * that is no directory, a directory, FIFO or socket where the file belongs, longer than 62 bytes,
 * a read error) leaves it out with a debug line: 0; 1 when read into out (size bytes, at least
 * 64). name is opened relative to dfd, dir's descriptor.
 */
static int read_optional(int dfd, const char *dir, const char *name, char *out, size_t size)
{
	char buf[64];
	const char *s = buf;
	size_t n;
	int r;

	out[0] = '\0';
	r = read_attr_at(dfd, name, buf, sizeof(buf));
	if (r == -EFBIG) {
		log_debug("%s/%s: longer than %zu bytes, left out", dir, name, sizeof(buf) - 2);
		return 0;
	}
	if (r < 0) {
		log_debug("%s/%s: %s, left out", dir, name, read_error(r));
		return 0;
	}
	if (s[0] == '0' && s[1] == 'x')
		s += 2;
	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 1;
}

/*
 * Fill d from dir (the device's sysfs directory), its attributes opened relative to dfd, dir's
 * descriptor: one path walk (through the devices/<addr> link) per device instead of one per
 * attribute. 1 ok, 0 skip, <0 error.
 */
static int read_device_at(int dfd, const char *dir, struct pciscan_dev *d, struct log_err *err)
{
	char buf[64];
	size_t i;
	int r;

	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		const struct attr_spec *a = &required[i];

		r = read_attr_at(dfd, a->name, buf, sizeof(buf));
		if (r == -ENOENT) {
			log_warn("%s/%s: missing, device %s skipped", dir, a->name, d->addr);
			return 0;
		}
		if (r < 0)
			return log_err_set(err, r, "%s/%s: %s", dir, a->name, read_error(r));
		if (parse_hex(buf, a->ndigits, a->keep, (char *)d + a->off) < 0)
			return log_err_set(err, -EINVAL, "%s/%s: not a %zu-digit hex value", dir,
					   a->name, a->ndigits);
	}
	d->has_sriov_totalvfs =
	    read_optional(dfd, dir, "sriov_totalvfs", d->sriov_totalvfs, sizeof(d->sriov_totalvfs));
	d->has_iommu_group_type = read_optional(dfd, dir, "iommu_group/type", d->iommu_group_type,
						sizeof(d->iommu_group_type));
	d->has_intel_iommu_version =
	    read_optional(dfd, dir, "iommu/intel-iommu/version", d->intel_iommu_version,
			  sizeof(d->intel_iommu_version));
	return read_driver(dfd, dir, d->driver, sizeof(d->driver), err) < 0 ? -EINVAL : 1;
}

static int read_device(const char *dir, struct pciscan_dev *d, struct log_err *err)
{
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), r;

	if (dfd < 0 && errno == ENOENT) {
		log_warn("%s: missing, device %s skipped", dir, d->addr);
		return 0;
	}
	if (dfd < 0)
		return log_err_set(err, -errno, "%s: %s", dir, strerror(errno));
	r = read_device_at(dfd, dir, d, err);
	close(dfd);
	return r;
}

static int dev_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pciscan_dev *)a)->addr, ((const struct pciscan_dev *)b)->addr);
}

/*
 * What libpci's sysfs_scan() turns into a fatal error, checked first: every
 * entry of devices/ not starting with '.' must read as domain:bus:dev.fn
 * (its sscanf "%x:%x:%x.%d"), and the directory must open. libpci reports a
 * bad entry from the middle of its scan, holding an open directory and a
 * half-made device that the jump back from its error handler can never free
 * (a leak that LeakSanitizer turned into exit 1 instead of 3). Returns 0 or
 * -errno/-EINVAL with err naming the path.
 */
static int check_entries(const char *devdir, struct log_err *err)
{
	DIR *dir = opendir(devdir);
	struct dirent *e;
	int r = 0;

	if (!dir)
		return log_err_set(err, -errno, "%s: %s", devdir, strerror(errno));
	while ((e = readdir(dir))) {
		unsigned int dom, bus, dev;
		int fn;

		if (e->d_name[0] == '.')
			continue;
		if (sscanf(e->d_name, "%x:%x:%x.%d", &dom, &bus, &dev, &fn) < 4) {
			r = log_err_set(
			    err, -EINVAL,
			    "%s/%s: not a PCI device address (domain:bus:device.function)", devdir,
			    e->d_name);
			break;
		}
	}
	closedir(dir);
	return r;
}

/* libpci's part: init and list the devices. 0, or -EIO with lib_msg set. */
static int lib_scan(struct pci_access *acc, char *path)
{
	static char param[] = "sysfs.path";

	if (setjmp(lib_jmp))
		return -EIO;
	pci_set_param(acc, param, path);
	pci_init(acc);
	pci_scan_bus(acc);
	return 0;
}

int pciscan_scan(const char *bus_pci, struct pciscan_list *out, struct log_err *err)
{
	struct pciscan_list l = {0};
	struct pci_access *acc = NULL;
	struct pci_dev *p;
	char devdir[4096];
	char *path = NULL;
	size_t cap = 0;
	int r = 0;

	out->dev = NULL;
	out->n = 0;
	out->bus = false;
	snprintf(devdir, sizeof(devdir), "%s/devices", bus_pci);
	if (access(devdir, F_OK) < 0 && errno == ENOENT) {
		log_info("%s: no PCI bus", devdir);
		return 0;
	}
	r = check_entries(devdir, err);
	if (r < 0)
		return r;
	path = strdup(bus_pci);
	acc = pci_alloc();
	if (!path || !acc) {
		r = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	acc->error = lib_error;
	acc->warning = lib_warning;
	acc->debug = lib_debug;
	acc->method = PCI_ACCESS_SYS_BUS_PCI;
	if (lib_scan(acc, path) < 0) {
		r = log_err_set(err, -EIO, "%s: libpci: %s", bus_pci, lib_msg);
		goto out;
	}
	for (p = acc->devices; p; p = p->next) {
		struct pciscan_dev *d;

		if (l.n == cap) {
			size_t ncap = cap ? cap * 2 : 32;
			struct pciscan_dev *nd = realloc(l.dev, ncap * sizeof(*nd));

			if (!nd) {
				r = log_err_set(err, -ENOMEM, "out of memory");
				goto out;
			}
			l.dev = nd;
			cap = ncap;
		}
		d = &l.dev[l.n];
		memset(d, 0, sizeof(*d));
		snprintf(d->addr, sizeof(d->addr), "%04x:%02x:%02x.%d", (unsigned)p->domain, p->bus,
			 p->dev, p->func);
		snprintf(devdir, sizeof(devdir), "%s/devices/%s", bus_pci, d->addr);
		r = read_device(devdir, d, err);
		if (r < 0)
			goto out;
		if (r > 0)
			l.n++;
		r = 0;
	}
	if (l.n)
		qsort(l.dev, l.n, sizeof(*l.dev), dev_cmp);
	l.bus = true;
	*out = l;
	l.dev = NULL;
	r = (int)out->n;
out:
	if (acc)
		pci_cleanup(acc);
	free(path);
	free(l.dev);
	return r;
}

void pciscan_list_free(struct pciscan_list *l)
{
	free(l->dev);
	l->dev = NULL;
	l->n = 0;
}

int pciscan_add_features(const struct pciscan_list *l, struct feat_set *fs)
{
	size_t i;

	if (l->bus && feat_declare(fs, "pci.device", FEAT_INSTANCES) < 0)
		return -ENOMEM;
	for (i = 0; i < l->n; i++) {
		const struct pciscan_dev *d = &l->dev[i];
		struct feat *f = feat_instance_add(fs, "pci.device");

		if (!f)
			return -ENOMEM;
		if (feat_instance_set(f, "vendor", d->vendor) < 0 ||
		    feat_instance_set(f, "device", d->device) < 0 ||
		    feat_instance_set(f, "class", d->class_code) < 0 ||
		    feat_instance_set(f, "subsystem_vendor", d->subsystem_vendor) < 0 ||
		    feat_instance_set(f, "subsystem_device", d->subsystem_device) < 0)
			return -ENOMEM;
		if (d->driver[0] && feat_instance_set(f, "driver", d->driver) < 0)
			return -ENOMEM;
		if (d->has_sriov_totalvfs &&
		    feat_instance_set(f, "sriov_totalvfs", d->sriov_totalvfs) < 0)
			return -ENOMEM;
		/* kept when the file was read, even empty (as NFD) */
		if (d->has_iommu_group_type &&
		    feat_instance_set(f, "iommu_group/type", d->iommu_group_type) < 0)
			return -ENOMEM;
		if (d->has_intel_iommu_version &&
		    feat_instance_set(f, "iommu/intel-iommu/version", d->intel_iommu_version) < 0)
			return -ENOMEM;
	}
	return 0;
}
