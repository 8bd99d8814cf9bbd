/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_kernel: /proc/modules and modules.builtin as NFD's module features, and bound drivers. */
#include <errno.h>
#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "feature/feature.h"
#include "harness.h"
#include "kernel/kernel.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

/* Lines as a real kernel writes them (6.1, trimmed). */
static const char proc_modules[] = "i915 3448832 35 - Live 0x0000000000000000\n"
				   "drm_buddy 20480 1 i915, Live 0x0000000000000000\n"
				   "vfio_pci 16384 0 - Live 0x0000000000000000\n"
				   "\n";
static const char builtin[] = "kernel/drivers/vfio/pci/vfio-pci-core.ko\n"
			      "  kernel/drivers/dma/idxd/idxd.ko  \n"
			      "kernel/fs/ext4/ext4.ko\n"
			      "not-a-module.txt\n"
			      "kernel/crypto/crc32c_generic.ko\n";

TEST(kernel_loaded_and_enabled)
{
	char dir[64];
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	const struct feat *l, *e;

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	harness_put_str(dir, "modules", proc_modules);
	harness_put_str(dir, "modules.builtin", builtin);
	REQUIRE_INT(kernel_scan_modules(dir, dir, fs, &err), 0);
	l = feat_get(fs, KERNEL_LOADED);
	e = feat_get(fs, KERNEL_ENABLED);
	REQUIRE(l && e);
	CHECK_INT(feat_kind(l), FEAT_FLAGS);
	CHECK_INT(feat_nelems(l), 3);
	CHECK(feat_lookup(l, "i915") && feat_lookup(l, "drm_buddy") && feat_lookup(l, "vfio_pci"));
	CHECK(feat_lookup(l, "idxd") == NULL);
	CHECK_INT(feat_nelems(e), 7);
	CHECK(feat_lookup(e, "i915") && feat_lookup(e, "vfio_pci"));
	/* built-in names as written: NFD keeps the '-' */
	CHECK(feat_lookup(e, "vfio-pci-core") != NULL);
	CHECK(feat_lookup(e, "vfio_pci_core") == NULL);
	CHECK(feat_lookup(e, "idxd") && feat_lookup(e, "ext4") && feat_lookup(e, "crc32c_generic"));
	CHECK(feat_lookup(e, "not-a-module.txt") == NULL);
	feat_set_free(fs);
}

TEST(kernel_missing_files_no_features)
{
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	const char *dir = harness_tmpdir();

	CHECK_INT(kernel_scan_modules(dir, dir, fs, &err), 0);
	CHECK(feat_get(fs, KERNEL_LOADED) == NULL);
	CHECK(feat_get(fs, KERNEL_ENABLED) == NULL);
	CHECK_INT(kernel_scan_modules(NULL, NULL, fs, &err), 0);
	CHECK_INT(feat_set_count(fs), 0);
	feat_set_free(fs);
}

/* A module list over its cap names the file and the cap (it said "Argument list too long"). */
TEST(kernel_modules_over_the_limit)
{
	struct strbuf big = STRBUF_INIT((16u << 20) + 2);
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	char dir[64], want[160];

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	REQUIRE_INT(sb_reserve(&big, (16u << 20) + 1), 0);
	memset(big.buf, 'x', (16u << 20) + 1);
	sb_setlen(&big, (16u << 20) + 1);
	harness_put(dir, "modules", big.buf, big.len);
	CHECK_INT(kernel_scan_modules(dir, NULL, fs, &err), -E2BIG);
	snprintf(want, sizeof(want), "%s/modules: larger than the 16 MiB limit for a module list",
		 dir);
	CHECK_STR(err.msg, want);
	sb_free(&big);
	feat_set_free(fs);
}

TEST(kernel_only_builtin)
{
	char dir[64];
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	harness_put_str(dir, "modules.builtin", builtin);
	CHECK_INT(kernel_scan_modules(dir, dir, fs, &err), 0);
	CHECK(feat_get(fs, KERNEL_LOADED) == NULL);
	REQUIRE(feat_get(fs, KERNEL_ENABLED));
	CHECK_INT(feat_nelems(feat_get(fs, KERNEL_ENABLED)), 4);
	feat_set_free(fs);
}

/*
 * An empty /proc/modules (a kernel without loadable modules) was read: the
 * features exist with no elements, as in NFD, so "nouveau: DoesNotExist"
 * matches. Same for an empty modules.builtin.
 */
TEST(kernel_empty_files_give_empty_features)
{
	char dir[64];
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	harness_put_str(dir, "modules", "");
	REQUIRE_INT(kernel_scan_modules(dir, NULL, fs, &err), 0);
	REQUIRE(feat_get(fs, KERNEL_LOADED));
	CHECK_INT(feat_kind(feat_get(fs, KERNEL_LOADED)), FEAT_FLAGS);
	CHECK_INT(feat_nelems(feat_get(fs, KERNEL_LOADED)), 0);
	CHECK(feat_get(fs, KERNEL_ENABLED) == NULL); /* no modules.builtin read */
	feat_set_free(fs);

	fs = feat_set_new();
	harness_put_str(dir, "modules.builtin", "\n");
	REQUIRE_INT(kernel_scan_modules(NULL, dir, fs, &err), 0);
	CHECK(feat_get(fs, KERNEL_LOADED) == NULL);
	REQUIRE(feat_get(fs, KERNEL_ENABLED));
	CHECK_INT(feat_nelems(feat_get(fs, KERNEL_ENABLED)), 0);
	feat_set_free(fs);
}

TEST(kernel_unreadable_is_error)
{
	char dir[64], path[128];
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	snprintf(path, sizeof(path), "%s/modules", dir);
	REQUIRE(mkdir(path, 0755) == 0);
	CHECK(kernel_scan_modules(dir, NULL, fs, &err) < 0);
	CHECK(strstr(err.msg, "/modules: Is a directory") != NULL);
	feat_set_free(fs);
}

TEST(kernel_bound_driver_normalised)
{
	struct feat_set *fs = feat_set_new();
	const struct feat *l;

	CHECK_INT(kernel_add_bound_driver(fs, "virtio-pci"), 1);
	CHECK_INT(kernel_add_bound_driver(fs, "i915"), 1);
	CHECK_INT(kernel_add_bound_driver(fs, "HDA Intel"), 0);
	CHECK_INT(kernel_add_bound_driver(fs, ""), 0);
	CHECK_INT(kernel_add_bound_driver(fs, "../x"), 0);
	l = feat_get(fs, KERNEL_LOADED);
	REQUIRE(l);
	CHECK_INT(feat_nelems(l), 2);
	CHECK(feat_lookup(l, "virtio_pci") && feat_lookup(l, "i915"));
	CHECK(feat_get(fs, KERNEL_ENABLED) == NULL); /* made only with modules.builtin (NFD) */
	feat_set_free(fs);
}

/*
 * NFD v0.16+ makes kernel.enabledmodule only when modules.builtin is readable (source/kernel);
 * with it, the loaded modules and bound drivers are enabled too (issue 20 item 5).
 */
TEST(kernel_enabled_needs_builtin)
{
	char dir[64];
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	const struct feat *en;

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	harness_put_str(dir, "modules", "vfio_pci 16384 0 - Live 0x0\n");
	CHECK_INT(kernel_add_bound_driver(fs, "xe"), 1);
	REQUIRE_INT(kernel_scan_modules(dir, dir, fs, &err), 0); /* no modules.builtin in dir */
	CHECK(feat_lookup(feat_get(fs, KERNEL_LOADED), "vfio_pci") != NULL);
	CHECK(feat_get(fs, KERNEL_ENABLED) == NULL);
	feat_set_free(fs);

	fs = feat_set_new();
	harness_put_str(dir, "modules.builtin", "kernel/drivers/vfio/pci/vfio-pci-core.ko\n");
	CHECK_INT(kernel_add_bound_driver(fs, "xe"), 1);
	REQUIRE_INT(kernel_scan_modules(dir, dir, fs, &err), 0);
	en = feat_get(fs, KERNEL_ENABLED);
	REQUIRE(en != NULL);
	CHECK_INT(feat_nelems(en), 3);
	CHECK(feat_lookup(en, "vfio_pci") && feat_lookup(en, "vfio-pci-core") &&
	      feat_lookup(en, "xe"));
	CHECK_INT(kernel_add_bound_driver(fs, "i915"), 1); /* after: both features */
	CHECK(feat_lookup(en, "i915") != NULL);
	feat_set_free(fs);
}

/*
 * A /proc/modules line with leading blanks: NFD's strings.Fields(line)[0] is the name after them
 * (source/kernel/modules.go), and any white space ends it (issue 20 item 7b).
 */
TEST(kernel_loaded_leading_blanks)
{
	char dir[64];
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	const struct feat *l;

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	harness_put_str(dir, "modules",
			"  nvme 61440 2 - Live 0x0\n\tvfio_pci\t16384 0 - Live 0x0\nxe\r\n   \n");
	REQUIRE_INT(kernel_scan_modules(dir, NULL, fs, &err), 0);
	l = feat_get(fs, KERNEL_LOADED);
	REQUIRE(l != NULL);
	CHECK_INT(feat_nelems(l), 3);
	CHECK(feat_lookup(l, "nvme") && feat_lookup(l, "vfio_pci") && feat_lookup(l, "xe"));
	feat_set_free(fs);
}

/* The running kernel's own /proc/modules, against cut(1) as an oracle. */
TEST(kernel_host_proc_modules)
{
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	FILE *p = popen("cut -d' ' -f1 /proc/modules 2>/dev/null | sort -u | wc -l", "r");
	long want = -1;
	const struct feat *l;

	REQUIRE(p);
	if (fscanf(p, "%ld", &want) != 1)
		want = -1;
	pclose(p);
	REQUIRE_INT(kernel_scan_modules("/proc", NULL, fs, &err), 0);
	l = feat_get(fs, KERNEL_LOADED);
	if (want <= 0) {
		CHECK(l == NULL || feat_nelems(l) == 0);
	} else {
		REQUIRE(l);
		CHECK_INT(feat_nelems(l), want);
	}
	feat_set_free(fs);
}

/* kernel.version of one osrelease string: "full|major|minor|revision", "-" for absent. */
static const char *version_of(const char *osrelease)
{
	static char out[512];
	struct feat_set *fs = feat_set_new();
	const struct feat *f;
	const char *k[] = {"full", "major", "minor", "revision"}, *v;
	size_t i, n = 0;

	out[0] = '\0';
	if (kernel_parse_version(osrelease, strlen(osrelease), fs) < 0 ||
	    !(f = feat_get(fs, KERNEL_VERSION))) {
		feat_set_free(fs);
		return "error";
	}
	for (i = 0; i < 4; i++) {
		v = feat_lookup(f, k[i]);
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s", i ? "|" : "", v ? v : "-");
	}
	feat_set_free(fs);
	return out;
}

/* Vectors run through NFD's own regexps (reference/nfd.md 10.2) plus the trimming rules. */
TEST(kernel_version_nfd_parsing)
{
	CHECK_STR(version_of("6.1.0-50-arm64\n"), "6.1.0-50-arm64|6|1|0");
	CHECK_STR(version_of("6.8"), "6.8|6|8|");
	CHECK_STR(version_of("6"), "6|6||");
	CHECK_STR(version_of("5.14.0-362.8.1.el9_3.x86_64"), "5.14.0-362.8.1.el9_3.x86_64|5|14|0");
	CHECK_STR(version_of("6.1.0+rpt-rpi-v8"), "6.1.0_rpt-rpi-v8|-|-|-");
	CHECK_STR(version_of("4.19.0.1"), "4.19.0.1|-|-|-");
	CHECK_STR(version_of("6.18.44-fc-v769"), "6.18.44-fc-v769|6|18|44");
	/* the Raspberry Pi 3 capture (test/fixtures/host/rpi3-armv7): the + becomes _ and is
	 * trimmed */
	CHECK_STR(version_of("4.9.41-v7+\n"), "4.9.41-v7|4|9|41");
	/* TrimSpace, then '-_.' trimmed after the replacement */
	CHECK_STR(version_of("  -6.6.3-talos.\n"), "6.6.3-talos|6|6|3");
	/* a UTF-8 sequence is one '_' (one rune), a stray byte one '_' each */
	CHECK_STR(version_of("6.1-\xc3\xa9x"), "6.1-_x|6|1|");
	CHECK_STR(version_of("6.1-\xff\xfex"), "6.1-__x|6|1|");
	CHECK_STR(version_of("6.1.0-\xc3\xa9"), "6.1.0|6|1|0");
	CHECK_STR(version_of("v6.1"), "v6.1|-|-|-");
	CHECK_STR(version_of("6.x"), "6.x|-|-|-");
	CHECK_STR(version_of(""), "|-|-|-");
}

TEST(kernel_version_from_proc)
{
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	char rel[300];
	const char *dir = harness_tmpdir();
	const struct feat *f;

	/* the real capture of this project's x86 test machine */
	REQUIRE_INT(kernel_scan_version(harness_fixture("host/firecracker-x86/proc"), fs, rel,
					sizeof(rel), &err),
		    0);
	CHECK_STR(rel, "6.18.44-fc-v769");
	f = feat_get(fs, KERNEL_VERSION);
	REQUIRE(f);
	CHECK_INT(feat_kind(f), FEAT_ATTRS);
	CHECK_STR(feat_lookup(f, "minor"), "18");
	/* missing: no feature, no error */
	CHECK_INT(kernel_scan_version(dir, NULL, rel, sizeof(rel), &err), 0);
	CHECK_STR(rel, "");
	/* longer than the bound: error naming the file */
	{
		char big[400];

		memset(big, '6', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		harness_put_str(dir, "sys/kernel/osrelease", big);
	}
	CHECK_INT(kernel_scan_version(dir, NULL, rel, sizeof(rel), &err), -E2BIG);
	CHECK(strstr(err.msg, "sys/kernel/osrelease") != NULL);
	/* a release with '/' is never used as a path part */
	harness_put_str(dir, "sys/kernel/osrelease", "../../etc/x\n");
	CHECK_INT(kernel_scan_version(dir, NULL, rel, sizeof(rel), &err), 0);
	CHECK_STR(rel, "");
	feat_set_free(fs);
}

TEST(kernel_config_nfd_parsing)
{
	static const char text[] = "#\n# Automatically generated file; DO NOT EDIT.\n"
				   "CONFIG_NO_HZ=y\n"
				   "CONFIG_IDXD=m\n"
				   "# CONFIG_PREEMPT is not set\n"
				   "CONFIG_LSM=\"landlock,lockdown,yama,apparmor\"\n"
				   "CONFIG_HZ=250\r\n"
				   "CONFIG_NOVALUE\n"
				   "  CONFIG_INDENTED=y\n"
				   "CONFIG_EMPTY=\n"
				   "CONFIG_Q=\"\"x\"\"\n"
				   "CONFIG_A=b=c\n"
				   "CONFIG_HZ_X=1\n"
				   "CONFIG_NO_HZ=m";
	struct feat_set *fs = feat_set_new();
	const struct feat *f;

	CHECK_INT(kernel_parse_config(text, strlen(text), fs), 9);
	f = feat_get(fs, KERNEL_CONFIG);
	REQUIRE(f);
	CHECK_INT(feat_kind(f), FEAT_ATTRS);
	CHECK_STR(feat_lookup(f, "NO_HZ"), "m"); /* the later line wins */
	CHECK_STR(feat_lookup(f, "IDXD"), "m");
	CHECK(feat_lookup(f, "PREEMPT") == NULL);
	CHECK_STR(feat_lookup(f, "LSM"), "landlock,lockdown,yama,apparmor");
	CHECK_STR(feat_lookup(f, "HZ"), "250\r"); /* nothing but quotes is trimmed */
	CHECK(feat_lookup(f, "NOVALUE") == NULL);
	CHECK(feat_lookup(f, "INDENTED") == NULL);
	CHECK_STR(feat_lookup(f, "EMPTY"), "");
	CHECK_STR(feat_lookup(f, "Q"), "x"); /* every leading and trailing quote */
	CHECK_STR(feat_lookup(f, "A"), "b=c");
	feat_set_free(fs);
}

/* The real /proc/config.gz of the x86 test machine, and the same text as /boot/config-RELEASE. */
TEST(kernel_config_gz_and_boot)
{
	const char *proc = harness_fixture("host/firecracker-x86/proc");
	struct strbuf gz = STRBUF_INIT(KERNEL_CONFIG_GZ_MAX), text = STRBUF_INIT(KERNEL_CONFIG_MAX);
	struct feat_set *a = feat_set_new(), *b = feat_set_new();
	struct log_err err = {0};
	char tmp[64], boot[128], procdir[128];
	const struct feat *fa, *fb;
	size_t i;

	REQUIRE(sb_read_file(&gz, "test/fixtures/host/firecracker-x86/proc/config.gz") > 0);
	REQUIRE_INT(kernel_gunzip(gz.buf, gz.len, &text), 0);
	CHECK(strstr(text.buf, "CONFIG_LOCALVERSION=\"-fc-v769\"\n") != NULL);
	REQUIRE_INT(kernel_scan_config(proc, "/nonexistent", "6.18.44-fc-v769", a, &err), 0);
	fa = feat_get(a, KERNEL_CONFIG);
	REQUIRE(fa);
	/* read and checked now, parsed when a rule first reads an option */
	CHECK(feat_deferred(a, KERNEL_CONFIG));
	CHECK_STR(feat_lookup(fa, "HZ"), "250");
	CHECK(!feat_deferred(a, KERNEL_CONFIG));
	CHECK_STR(feat_lookup(fa, "NO_HZ_IDLE"), "y");
	CHECK_STR(feat_lookup(fa, "LOCALVERSION"), "-fc-v769");
	CHECK(feat_lookup(fa, "X86_SGX") == NULL);
	/* no config.gz: <boot>/config-<release> */
	snprintf(tmp, sizeof(tmp), "%s", harness_tmpdir());
	snprintf(boot, sizeof(boot), "%s/boot", tmp);
	snprintf(procdir, sizeof(procdir), "%s/proc", tmp);
	harness_put(tmp, "boot/config-6.18.44-fc-v769", text.buf, text.len);
	harness_put_str(tmp, "proc/sys/kernel/osrelease", "6.18.44-fc-v769\n");
	REQUIRE_INT(kernel_scan_config(procdir, boot, "6.18.44-fc-v769", b, &err), 0);
	fb = feat_get(b, KERNEL_CONFIG);
	REQUIRE(fb);
	REQUIRE_INT(feat_nelems(fb), feat_nelems(fa));
	for (i = 0; i < feat_nelems(fa); i++) {
		const char *na, *va, *nb, *vb;

		feat_elem_at(fa, i, &na, &va);
		feat_elem_at(fb, i, &nb, &vb);
		CHECK_STR(na, nb);
		CHECK_STR(va, vb);
	}
	/* another release: nothing found, no feature, no error */
	feat_set_free(b);
	b = feat_set_new();
	CHECK_INT(kernel_scan_config(procdir, boot, "6.1.0-50-amd64", b, &err), 0);
	CHECK(feat_get(b, KERNEL_CONFIG) == NULL);
	/* a corrupt or truncated config.gz is an error naming it */
	harness_put(tmp, "proc/config.gz", gz.buf, gz.len / 2);
	CHECK(kernel_scan_config(procdir, boot, "6.18.44-fc-v769", b, &err) < 0);
	CHECK(strstr(err.msg, "config.gz") != NULL);
	CHECK(strstr(err.msg, "/proc/config.gz: not valid gzip data (corrupt or truncated)") !=
	      NULL);
	/* plain text where gzip is due: said as such, with where plain text is read (issue 17) */
	harness_put_str(tmp, "proc/config.gz",
			"# Linux/x86 6.1 Kernel Configuration\nCONFIG_X=y\n");
	CHECK_INT(kernel_scan_config(procdir, boot, "6.18.44-fc-v769", b, &err), -EINVAL);
	CHECK(strstr(err.msg,
		     "/proc/config.gz: plain text, not gzip data: this file must be "
		     "gzip-compressed, as the kernel writes it (a plain-text config is read "
		     "as <boot>/config-<release>)") != NULL);
	/* a config.gz over its cap names the cap, never E2BIG's "Argument list too long" */
	{
		struct strbuf big = STRBUF_INIT(KERNEL_CONFIG_GZ_MAX + 2);

		REQUIRE_INT(sb_reserve(&big, KERNEL_CONFIG_GZ_MAX + 1), 0);
		memset(big.buf, '#', KERNEL_CONFIG_GZ_MAX + 1);
		sb_setlen(&big, KERNEL_CONFIG_GZ_MAX + 1);
		harness_put(tmp, "proc/config.gz", big.buf, big.len);
		CHECK_INT(kernel_scan_config(procdir, boot, "6.18.44-fc-v769", b, &err), -E2BIG);
		CHECK(strstr(err.msg,
			     "/proc/config.gz: larger than the 4 MiB limit for a kernel config") !=
		      NULL);
		sb_free(&big);
	}
	/* a bomb: decompressed size past the cap */
	{
		struct strbuf small = STRBUF_INIT(1000);

		CHECK_INT(kernel_gunzip(gz.buf, gz.len, &small), -E2BIG);
		CHECK_INT(small.len, 0);
		sb_free(&small);
	}
	sb_free(&gz);
	sb_free(&text);
	feat_set_free(a);
	feat_set_free(b);
}

/*
 * gzip as Go's gzip.Reader reads it: every member in turn, the CRC-32 and size of each
 * checked. The first member here is larger than the last one's ISIZE (where the output's
 * room starts), so its room has to grow.
 */
TEST(kernel_gunzip_members_and_checks)
{
	struct strbuf gz = STRBUF_INIT(KERNEL_CONFIG_GZ_MAX), one = STRBUF_INIT(KERNEL_CONFIG_MAX);
	struct strbuf two = STRBUF_INIT(KERNEL_CONFIG_MAX),
		      cat = STRBUF_INIT(2 * KERNEL_CONFIG_GZ_MAX);
	struct strbuf bad = STRBUF_INIT(KERNEL_CONFIG_GZ_MAX);
	static const char tail_text[] = "CONFIG_LAST=y\n";
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
	unsigned char small[128];
	size_t n;

	REQUIRE(c != NULL);
	n = libdeflate_gzip_compress(c, tail_text, sizeof(tail_text) - 1, small, sizeof(small));
	libdeflate_free_compressor(c);
	REQUIRE(n > 0);
	REQUIRE(sb_read_file(&gz, "test/fixtures/host/firecracker-x86/proc/config.gz") > 0);
	REQUIRE_INT(kernel_gunzip(gz.buf, gz.len, &one), 0);
	CHECK(one.len > 4096);
	/* two members: both texts, in order */
	REQUIRE_INT(sb_addn(&cat, gz.buf, gz.len), 0);
	REQUIRE_INT(sb_addn(&cat, small, n), 0);
	REQUIRE_INT(sb_add(&two, "kept:"), 0);
	REQUIRE_INT(kernel_gunzip(cat.buf, cat.len, &two), 0);
	CHECK_INT(two.len, 5 + one.len + sizeof(tail_text) - 1);
	CHECK(!memcmp(two.buf, "kept:", 5));
	CHECK(!memcmp(two.buf + 5, one.buf, one.len));
	CHECK_STR(two.buf + 5 + one.len, tail_text);
	/* trailing bytes that are no gzip member: an error, what was there before kept */
	REQUIRE_INT(sb_addn(&cat, "junk", 4), 0);
	CHECK_INT(kernel_gunzip(cat.buf, cat.len, &two), -EINVAL);
	CHECK_INT(two.len, 5 + one.len + sizeof(tail_text) - 1);
	/* a wrong CRC-32, a wrong size, an empty input */
	REQUIRE_INT(sb_addn(&bad, gz.buf, gz.len), 0);
	bad.buf[bad.len - 8] ^= 1;
	sb_reset(&two);
	CHECK_INT(kernel_gunzip(bad.buf, bad.len, &two), -EINVAL);
	bad.buf[bad.len - 8] ^= 1;
	bad.buf[bad.len - 4] ^= 1;
	CHECK_INT(kernel_gunzip(bad.buf, bad.len, &two), -EINVAL);
	CHECK_INT(kernel_gunzip(bad.buf, 0, &two), -EINVAL);
	CHECK_INT(two.len, 0);
	/* a header CRC (FHCRC), checked as Go's reader does (libdeflate itself skips it) */
	{
		unsigned char h[sizeof(small) + 2];
		uint32_t crc;

		REQUIRE(small[3] == 0); /* the compressor writes no optional fields */
		memcpy(h, small, 10);
		h[3] = 0x02;
		crc = libdeflate_crc32(0, h, 10);
		h[10] = crc & 0xff;
		h[11] = (crc >> 8) & 0xff;
		memcpy(h + 12, small + 10, n - 10);
		sb_reset(&two);
		CHECK_INT(kernel_gunzip(h, n + 2, &two), 0);
		CHECK_STR(two.buf, tail_text);
		h[11] ^= 1;
		sb_reset(&two);
		CHECK_INT(kernel_gunzip(h, n + 2, &two), -EINVAL);
		CHECK_INT(two.len, 0);
	}
	sb_free(&gz);
	sb_free(&one);
	sb_free(&two);
	sb_free(&cat);
	sb_free(&bad);
}
