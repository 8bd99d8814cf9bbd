/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe: the nodeprobe job: run each feature source, evaluate rules, publish the features.d file.
 */
#ifndef NP_PROBE_H
#define NP_PROBE_H

#include <stdbool.h>
#include <stddef.h>

struct devices_opts;
struct feat_set;
struct label_set;
struct log_err;
struct strbuf;

#define PROBE_MAX_LIST 32 /* at most this many -n nodes or --rules paths */

/* Everything a run reads from the host is a path here, so tests and pods can point anywhere. */
struct probe_opts {
	const char *sysfs;	  /* sysfs root; default "/sys" */
	const char *proc;	  /* procfs root; default "/proc" */
	const char *fdt;	  /* devicetree blob to read instead of the live tree, or NULL */
	const char *boot;	  /* dir holding config-RELEASE; default "/boot" */
	const char *os_release;	  /* the host's os-release file; default "/etc/os-release" */
	const char *cpuid;	  /* x86: cpuid dump to read instead of the instruction, or NULL */
	const char *modules_dir;  /* dir holding modules.builtin; default /lib/modules/<release> */
	const char *features_dir; /* NFD features.d; default
				     /etc/kubernetes/node-feature-discovery/features.d */
	const char *output_name;  /* file name in features_dir; default "nodeprobe" */
	const char *dt_nodes[PROBE_MAX_LIST]; /* extra devicetree node names (-n) */
	size_t n_dt_nodes;		      /* used entries of dt_nodes */
	const char *rules[PROBE_MAX_LIST];    /* --rules files or directories */
	size_t n_rules;			      /* used entries of rules */
	bool no_builtin_rules;		      /* skip the rules shipped with the binary */
	bool dry_run;			      /* print the labels to stdout, write nothing */
	bool remove;			      /* nodeprobe --remove: main calls probe_remove */
	struct devices_opts *devices; /* nodeprobe-devices' class options (--device, --preset,
				       * --classes, --domain...): <resource>.count labels; NULL or
				       * none given: none */
	const char *dev;	      /* --dev-root: the host's /dev as seen; NULL: "/dev" */
	int features_format; /* --features: PROBE_FEATURES_YAML/JSON prints the raw features
			      * (NFD's NodeFeature), no labels, writes nothing; 0: off */
	const char *features[PROBE_MAX_LIST]; /* --features=NAME,...: only these (none: all) */
	size_t n_features;		      /* used entries of features */
	bool summary; /* --summary: after the run, what each source saw and the labels' count */
};

/* probe_opts.features_format */
enum {
	PROBE_FEATURES_YAML = 1,
	PROBE_FEATURES_JSON = 2,
};

/* What a source sees during one run. */
struct probe_ctx {
	const struct probe_opts *opts; /* options, defaults filled in */
	struct feat_set *features;     /* raw features for rules (NFD model) */
	struct label_set *labels;      /* labels a source emits directly (devicetree) */
};

/*
 * A feature source: one file pkg/probe/source_<name>.c exporting one of these,
 * listed in the table in probe.c (pciutils' pci_methods). scan() adds features
 * and/or labels. Absent hardware ("no devicetree") is not an error: return 0.
 * Return a negative code with err filled for input that is present but bad
 * (a corrupt blob, an unreadable directory); the run then fails and the
 * features file is left untouched.
 */
struct probe_source {
	const char *name; /* "dt", "pci", "kernel" */
	const char *help; /* one line for the man page */
	/* prefixes of the features it makes ("cpu."; several separated by ' '), or NULL:
	 * a source with prefixes runs only when a rule reads one of them */
	const char *features;
	int (*scan)(struct probe_ctx *ctx, struct log_err *err);
};

/* Exit codes of nodeprobe beyond cli's 0/1/2; also listed in nodeprobe.8. */
enum {
	PROBE_EXIT_INPUT = 3,	/* bad input: devicetree, sysfs, rules file */
	PROBE_EXIT_OUTPUT = 4,	/* the features file could not be written (or removed) */
	PROBE_EXIT_FOREIGN = 5, /* --remove: the file at that path is not nodeprobe's */
};

/* Fill unset fields of opts with the defaults above. */
void probe_opts_defaults(struct probe_opts *opts);

/*
 * Run the job: every source, then built-in and user rules, then publish
 * <features_dir>/<output_name> atomically (or print with dry_run). Returns 0,
 * or -PROBE_EXIT_INPUT / -PROBE_EXIT_OUTPUT with err filled.
 */
int probe_run(const struct probe_opts *opts, struct log_err *err);

/*
 * nodeprobe --remove: delete <features_dir>/<output_name> if it is the file probe_run
 * writes (a regular file of ours, mode 0644, sorted valid "key=value" label lines: it carries
 * no marker, see probe_remove.c), with the dot-temp files of killed runs. Never follows a
 * symlink. Returns 0 when removed or absent (the directory too), -PROBE_EXIT_FOREIGN with err
 * "<path>: not nodeprobe's file (<why>)..." when the file is someone else's (left alone),
 * -PROBE_EXIT_OUTPUT with err on an I/O error, -ENOMEM.
 */
int probe_remove(const struct probe_opts *opts, struct log_err *err);

/*
 * Scan and evaluate without publishing: fills labels (sorted) from every
 * source and rule. For tests and probe_run. Same errors as probe_run's input
 * stage.
 */
int probe_collect(const struct probe_opts *opts, struct label_set *labels, struct log_err *err);

/*
 * The same with every source run (not only those a rule reads) and the raw features kept:
 * fs (from feat_set_new, the caller's) gets them, labels (NULL: rules not evaluated) the
 * labels. For --features and --summary. Same errors as probe_collect.
 */
int probe_collect_all(const struct probe_opts *opts, struct feat_set *fs, struct label_set *labels,
		      struct log_err *err);

/*
 * nodeprobe --features (probe_run calls it when opts->features_format is set, after
 * probe_collect_all ran every source into fs, borrowed): the raw features (opts->features, or
 * all) printed to stdout as NFD's NodeFeature object in the format asked, named after
 * $NODE_NAME (as nfd-worker) or the host name. Writes no file. -ENOMEM, or -PROBE_EXIT_OUTPUT
 * when stdout fails; a NAME no source made is warned about (log_warn), not an error.
 */
int probe_dump(const struct probe_opts *opts, const struct feat_set *fs, struct log_err *err);

/*
 * Append to out the picture --summary prints: per source (feature domain) how many features
 * and a few examples (PCI and USB vendor:device with class, kernel version, CPU model and
 * cpuid flags count, os-release id), then the number of labels and, when none, why and the
 * command that shows a real machine's labels from the fixtures. Returns 0, -ENOMEM, -E2BIG.
 */
int probe_summary(const struct feat_set *fs, size_t nlabels, struct strbuf *out);

#endif
