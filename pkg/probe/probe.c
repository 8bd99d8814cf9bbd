/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe: the nodeprobe job: run each feature source, evaluate rules, publish the features.d file.
 */
#include "probe/probe.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "feature/feature.h"
#include "fsutil/fsutil.h"
#include "label/label.h"
#include "log/log.h"
#include "rules/rules.h"
#include "strbuf/strbuf.h"

#define PROBE_FEATURES_DIR "/etc/kubernetes/node-feature-discovery/features.d"
#define PROBE_OUTPUT_NAME  "nodeprobe"
#define PROBE_MAX_FILE	   65536 /* NFD skips feature files larger than this */

extern const struct probe_source probe_source_dt;
extern const struct probe_source probe_source_pci;
extern const struct probe_source probe_source_kernel;
extern const struct probe_source probe_source_kversion;
extern const struct probe_source probe_source_kconfig;
extern const struct probe_source probe_source_osrelease;
extern const struct probe_source probe_source_usb;
extern const struct probe_source probe_source_cpu;
extern const struct probe_source probe_source_cpusecurity;
extern const struct probe_source probe_source_cputopology;
extern const struct probe_source probe_source_system;
extern const struct probe_source probe_source_memory;
extern const struct probe_source probe_source_storage;
extern const struct probe_source probe_source_network;
extern const struct probe_source probe_source_ksys;
extern const struct probe_source probe_source_cpucstate;
extern const struct probe_source probe_source_cpupstate;
extern const struct probe_source probe_source_cpurdt;
extern const struct probe_source probe_source_cpusst;
extern const struct probe_source probe_source_cpucoprocessor;
extern const struct probe_source probe_source_devices;

/* The sources, in the order they run. A new source is one file and one line here. */
static const struct probe_source *const probe_sources[] = {
    &probe_source_dt,	       &probe_source_pci,
    &probe_source_kernel,      &probe_source_kversion,
    &probe_source_kconfig,     &probe_source_osrelease,
    &probe_source_usb,	       &probe_source_cpu,
    &probe_source_cpusecurity, &probe_source_cputopology,
    &probe_source_system,      &probe_source_memory,
    &probe_source_storage,     &probe_source_network,
    &probe_source_ksys,	       &probe_source_cpucstate,
    &probe_source_cpupstate,   &probe_source_cpurdt,
    &probe_source_cpusst,      &probe_source_cpucoprocessor,
    &probe_source_devices,
};

void probe_opts_defaults(struct probe_opts *opts)
{
	static char moddir[300];
	struct utsname u;

	if (!opts->sysfs)
		opts->sysfs = "/sys";
	if (!opts->proc)
		opts->proc = "/proc";
	if (!opts->boot)
		opts->boot = "/boot";
	if (!opts->os_release)
		opts->os_release = "/etc/os-release";
	if (!opts->features_dir)
		opts->features_dir = PROBE_FEATURES_DIR;
	if (!opts->output_name)
		opts->output_name = PROBE_OUTPUT_NAME;
	if (!opts->modules_dir && uname(&u) == 0) {
		snprintf(moddir, sizeof(moddir), "/lib/modules/%s", u.release);
		opts->modules_dir = moddir;
	}
}

/*
 * The sysfs and procfs roots must be there: inside them a missing devicetree,
 * PCI bus or modules file means "none", but a missing root is a mount or a
 * flag gone wrong, and taking it as an empty machine would wipe the labels.
 */
static int need_dir(const char *opt, const char *path, struct log_err *err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return log_err_set(err, -errno, "--%s %s: %s", opt, path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return log_err_set(err, -ENOTDIR, "--%s %s: not a directory", opt, path);
	return 0;
}

/*
 * A sysfs root has bus/ or firmware/ (every kernel's /sys has both): a wrong
 * hostPath, such as the host's / mounted as /host-sys, has neither, and would
 * otherwise read as a machine without devices and wipe the node's labels.
 */
static int need_sysfs(const char *path, struct log_err *err)
{
	char p[4096];
	int r = need_dir("sysfs", path, err);

	if (r < 0)
		return r;
	snprintf(p, sizeof(p), "%s/bus", path);
	if (fs_is_dir(p))
		return 0;
	snprintf(p, sizeof(p), "%s/firmware", path);
	if (fs_is_dir(p))
		return 0;
	return log_err_set(err, -ENOENT, "--sysfs %s: not a sysfs (no bus/ or firmware/ in it)",
			   path);
}

/*
 * A source that only makes features for rules (cpu, usb, kernel config...) is
 * run when a loaded rule reads one of them: cpuid in a VM traps to the
 * hypervisor for every leaf, a config.gz is inflated, and nobody would see
 * the result. Sources that make labels themselves, or that the built-in
 * rules read, have no prefixes and always run.
 */
static bool source_needed(const struct probe_source *src, const struct rules *rs)
{
	char prefix[64];
	const char *p = src->features;

	while (p && *p) {
		size_t n = strcspn(p, " ");

		if (n && n < sizeof(prefix)) {
			memcpy(prefix, p, n);
			prefix[n] = '\0';
			if (rules_use_features(rs, prefix))
				return true;
		}
		p += n;
		p += strspn(p, " ");
	}
	return src->features == NULL;
}

static int load_rules(const struct probe_opts *opts, struct rules *rs, struct log_err *err)
{
	size_t i;
	int r;

	if (!opts->no_builtin_rules) {
		r = rules_load_builtin(rs, err);
		if (r < 0)
			return r;
	}
	for (i = 0; i < opts->n_rules; i++) {
		r = rules_load_path(rs, opts->rules[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * The scan into fs: rules loaded, roots checked, the sources run (every one when all, else
 * those a rule reads), the rules evaluated into labels (when not NULL).
 */
static int collect(const struct probe_opts *in, bool all, struct feat_set *fs,
		   struct label_set *labels, struct log_err *err)
{
	struct probe_opts opts = *in;
	struct label_set *scratch = NULL;
	struct probe_ctx ctx = {.opts = &opts, .labels = labels, .features = fs};
	struct rules *rs = NULL;
	size_t i;
	int r;

	probe_opts_defaults(&opts);
	rs = rules_new();
	/* sources that label directly (devicetree) need a set even when no labels are wanted */
	if (!labels)
		ctx.labels = scratch = label_set_new();
	if (!fs || !rs || !ctx.labels) {
		r = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	/* Parse rules first: a malformed rules file fails fast, before any scan. */
	r = load_rules(&opts, rs, err);
	if (r == 0)
		r = need_sysfs(opts.sysfs, err);
	if (r == 0)
		r = need_dir("proc", opts.proc, err);
	if (r < 0)
		goto out;
	for (i = 0; i < sizeof(probe_sources) / sizeof(probe_sources[0]); i++) {
		if (!all && !source_needed(probe_sources[i], rs)) {
			log_debug("source %s: skipped, no rule reads %s", probe_sources[i]->name,
				  probe_sources[i]->features);
			continue;
		}
		log_debug("source %s", probe_sources[i]->name);
		r = probe_sources[i]->scan(&ctx, err);
		if (r < 0)
			goto out;
	}
	r = labels ? rules_eval(rs, ctx.features, labels, err) : 0;
	/* a deferred source (feat_defer) that failed while the rules read it: -ENOMEM */
	if (r >= 0 && feat_set_error(ctx.features) < 0)
		r = log_err_set(err, feat_set_error(ctx.features), "out of memory");
	if (r > 0)
		r = 0;
out:
	rules_free(rs);
	label_set_free(scratch);
	return r == -ENOMEM ? r : (r < 0 ? -PROBE_EXIT_INPUT : 0);
}

int probe_collect(const struct probe_opts *opts, struct label_set *labels, struct log_err *err)
{
	struct feat_set *fs = feat_set_new();
	int r = collect(opts, false, fs, labels, err);

	feat_set_free(fs);
	return r;
}

int probe_collect_all(const struct probe_opts *opts, struct feat_set *fs, struct label_set *labels,
		      struct log_err *err)
{
	return collect(opts, true, fs, labels, err);
}

/* --summary: the picture after the run's own output, on stdout. */
static int print_summary(const struct feat_set *fs, size_t nlabels, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(1 << 20);
	int r = probe_summary(fs, nlabels, &sb);

	if (r < 0) {
		sb_free(&sb);
		return log_err_set(err, -ENOMEM, "out of memory");
	}
	fwrite(sb.buf, 1, sb.len, stdout);
	sb_free(&sb);
	return fflush(stdout) == 0
		   ? 0
		   : log_err_set(err, -PROBE_EXIT_OUTPUT, "stdout: %s", strerror(errno));
}

int probe_run(const struct probe_opts *in, struct log_err *err)
{
	struct probe_opts opts = *in;
	struct strbuf out = STRBUF_INIT(PROBE_MAX_FILE);
	struct label_set *labels = label_set_new();
	struct feat_set *fs = NULL;
	int r;

	probe_opts_defaults(&opts);
	if (opts.features_format) { /* every source run, no rule evaluated, no file written */
		label_set_free(labels);
		fs = feat_set_new();
		r = fs ? probe_collect_all(&opts, fs, NULL, err)
		       : log_err_set(err, -ENOMEM, "out of memory");
		if (r >= 0)
			r = probe_dump(&opts, fs, err);
		feat_set_free(fs);
		return r;
	}
	fs = opts.summary ? feat_set_new() : NULL;
	if (!labels || (opts.summary && !fs)) {
		r = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	r = opts.summary ? probe_collect_all(&opts, fs, labels, err)
			 : probe_collect(&opts, labels, err);
	if (r < 0)
		goto out;
	r = label_set_format(labels, &out);
	if (r == -E2BIG) {
		r = log_err_set(err, -PROBE_EXIT_INPUT,
				"%zu labels exceed NFD's feature file limit of %d bytes",
				label_set_count(labels), PROBE_MAX_FILE);
		goto out;
	}
	if (r < 0) {
		r = log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (opts.dry_run) {
		fwrite(out.buf, 1, out.len, stdout);
		r = fflush(stdout) == 0
			? 0
			: log_err_set(err, -PROBE_EXIT_OUTPUT, "stdout: %s", strerror(errno));
		/* the last line of a verbose dry run: an empty machine is not a silent one */
		if (r == 0)
			log_info("%zu labels (dry run; would be written to %s/%s)",
				 label_set_count(labels), opts.features_dir, opts.output_name);
		goto out;
	}
	r = fs_mkdir_p(opts.features_dir, 0755);
	if (r < 0) {
		r = log_err_set(err, -PROBE_EXIT_OUTPUT, "%s: %s", opts.features_dir, strerror(-r));
		goto out;
	}
	/* a killed run's dot-temp file would stay forever: remove ours older than a minute */
	fs_publish_clean(opts.features_dir, opts.output_name, 60);
	r = fs_publish(opts.features_dir, opts.output_name, out.buf, out.len, 0644, err);
	if (r < 0) {
		r = -PROBE_EXIT_OUTPUT;
		if (err)
			err->code = r;
		goto out;
	}
	log_info("%s/%s: %zu labels, %s", opts.features_dir, opts.output_name,
		 label_set_count(labels), r ? "written" : "unchanged");
	r = 0;
out:
	if (r == 0 && opts.summary)
		r = print_summary(fs, label_set_count(labels), err);
	sb_free(&out);
	label_set_free(labels);
	feat_set_free(fs);
	return r;
}
