/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_sources: the pci and kernel probe sources plus the built-in rules, on every PCI fixture. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "feature/feature.h"
#include "harness.h"
#include "label/label.h"
#include "log/log.h"
#include "probe/probe.h"
#include "rules/rules.h"
#include "strbuf/strbuf.h"

extern const struct probe_source probe_source_pci, probe_source_kernel;

/* Labels (formatted) of the built-in rules for sysfs root + proc dir. NULL on error. */
static char *labels_for(const char *sysfs, const char *proc, struct log_err *err)
{
	static char out[8192];
	struct probe_opts o = {.sysfs = sysfs, .proc = proc};
	struct feat_set *fs = feat_set_new();
	struct label_set *ls = label_set_new();
	struct rules *r = rules_new();
	struct probe_ctx ctx = {.opts = &o, .features = fs, .labels = ls};
	struct strbuf sb = STRBUF_INIT(sizeof(out) - 1);
	char *ret = NULL;

	if (probe_source_pci.scan(&ctx, err) < 0 || probe_source_kernel.scan(&ctx, err) < 0 ||
	    rules_load_builtin(r, err) < 0 || rules_eval(r, fs, ls, err) < 0)
		goto out;
	label_set_format(ls, &sb);
	snprintf(out, sizeof(out), "%s", sb.buf);
	ret = out;
out:
	sb_free(&sb);
	rules_free(r);
	label_set_free(ls);
	feat_set_free(fs);
	return ret;
}

/*
 * Every machine under pci: the labels equal test/data/pci-labels/<machine>.labels
 * (none if absent). Returns how many machines, and in *labelled how many have labels.
 */
static int sweep_labels(const char *pci, int *labelled)
{
	DIR *dir = opendir(pci);
	char proc[64];
	struct dirent *e;
	int machines = 0;

	*labelled = 0;
	if (!dir) {
		HFAIL_("%s: cannot open", pci);
		return 0;
	}
	snprintf(proc, sizeof(proc), "%s", harness_tmpdir());
	while ((e = readdir(dir))) {
		char sysfs[4096], want_path[1024];
		struct strbuf want = STRBUF_INIT(8192);
		struct log_err err = {0};
		const char *got;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "sources") || strchr(e->d_name, '.'))
			continue;
		machines++;
		snprintf(sysfs, sizeof(sysfs), "%s/%s", pci, e->d_name);
		snprintf(want_path, sizeof(want_path), "test/data/pci-labels/%s.labels", e->d_name);
		if (sb_read_file(&want, want_path) >= 0)
			(*labelled)++;
		got = labels_for(sysfs, proc, &err);
		if (!got)
			HFAIL_("%s: %s", e->d_name, err.msg);
		else if (strcmp(got, want.buf))
			HFAIL_("%s: got\n%s--- expected\n%s", e->d_name, got, want.buf);
		sb_free(&want);
	}
	closedir(dir);
	return machines;
}

TEST(sources_builtin_rules_every_fixture)
{
	int labelled;

	CHECK(sweep_labels("test/fixtures/pci", &labelled) >= 9);
	CHECK_INT(labelled, 7); /* every machine with an expectation is in test/fixtures */
}

/* The wider sweep: every machine of ../shared/fixtures/pci. */
TEST(sources_builtin_rules_every_shared_fixture)
{
	int labelled, n = sweep_labels(SHARED_OR_SKIP("fixtures/pci"), &labelled);

	CHECK(n >= 40);
	CHECK_INT(labelled, 7);
}

/* QAT needs intel_qat loaded and vfio-pci: the driver (c6xx) alone is not enough. */
TEST(sources_qat_needs_modules)
{
	char proc[64], path[128], sysfs[4096];
	struct log_err err = {0};
	const char *got;
	FILE *fp;

	snprintf(sysfs, sizeof(sysfs), "%s", harness_fixture("pci/linuxhw-qat-c62x"));
	snprintf(proc, sizeof(proc), "%s", harness_tmpdir());
	got = labels_for(sysfs, proc, &err);
	REQUIRE(got);
	CHECK_STR(got, "");
	snprintf(path, sizeof(path), "%s/modules", proc);
	fp = fopen(path, "w");
	REQUIRE(fp);
	fputs("qat_c62x 16384 0 - Live 0x0000000000000000\n"
	      "intel_qat 335872 1 qat_c62x, Live 0x0000000000000000\n",
	      fp);
	fclose(fp);
	got = labels_for(sysfs, proc, &err);
	REQUIRE(got);
	CHECK_STR(got, "");
	fp = fopen(path, "a");
	REQUIRE(fp);
	fputs("vfio_pci 16384 0 - Live 0x0000000000000000\n", fp);
	fclose(fp);
	got = labels_for(sysfs, proc, &err);
	REQUIRE(got);
	CHECK_STR(got, "intel.feature.node.kubernetes.io/qat=true\n");
}

/* A loaded xe module gives the Intel GPU label to a device without a driver. */
TEST(sources_module_without_driver)
{
	char proc[64], path[128], sysfs[4096];
	struct log_err err = {0};
	const char *got;
	FILE *fp;

	snprintf(sysfs, sizeof(sysfs), "%s", harness_fixture("pci/pciutils-tree-fujitsu-p8010"));
	snprintf(proc, sizeof(proc), "%s", harness_tmpdir());
	snprintf(path, sizeof(path), "%s/modules", proc);
	fp = fopen(path, "w");
	REQUIRE(fp);
	fputs("xe 2457600 0 - Live 0x0000000000000000\n", fp);
	fclose(fp);
	got = labels_for(sysfs, proc, &err);
	REQUIRE(got);
	CHECK(strstr(got, "intel.feature.node.kubernetes.io/gpu=true\n") != NULL);
}

/* A present but bad sysfs: the source fails with the path in the message. */
TEST(sources_pci_error)
{
	char root[64], path[256];
	struct log_err err = {0};
	FILE *fp;

	snprintf(root, sizeof(root), "%s", harness_tmpdir());
	snprintf(path, sizeof(path), "%s/bus", root);
	REQUIRE(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/bus/pci", root);
	REQUIRE(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/bus/pci/devices", root);
	fp = fopen(path, "w");
	REQUIRE(fp);
	fclose(fp);
	CHECK(labels_for(root, root, &err) == NULL);
	CHECK(strstr(err.msg, "/bus/pci/devices: Not a directory") != NULL);
}
