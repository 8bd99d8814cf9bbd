/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nodeprobe: scan the devicetree and PCI bus, evaluate rules, write an NFD features.d file. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "devices/devices.h"
#include "log/log.h"
#include "probe/probe.h"

enum {
	OPT_SYSFS = 256,
	OPT_PROC,
	OPT_FDT,
	OPT_BOOT,
	OPT_OS_RELEASE,
	OPT_CPUID,
	OPT_MODULES_DIR,
	OPT_FEATURES_DIR,
	OPT_RULES,
	OPT_NO_BUILTIN,
	OPT_DRY_RUN,
	OPT_REMOVE,
	OPT_DEV_ROOT,
	OPT_OUTPUT_NAME,
	OPT_FEATURES,
	OPT_OUTPUT,
	OPT_SUMMARY,
};

static const struct cli_opt opts_table[] = {
    {"sysfs", 0, "DIR", "sysfs root: PCI and the live devicetree (default /sys)", OPT_SYSFS},
    {"proc", 0, "DIR", "procfs root: kernel modules, version, config.gz (default /proc)", OPT_PROC},
    {"boot", 0, "DIR", "dir with config-RELEASE, the kernel config (default /boot)", OPT_BOOT},
    {"os-release", 0, "FILE", "the host's os-release (default /etc/os-release)", OPT_OS_RELEASE},
    {"cpuid", 0, "FILE", "x86: cpuid leaves from FILE ('cpuid -r -1') instead of this CPU",
     OPT_CPUID},
    {"fdt", 0, "FILE", "read this devicetree blob instead of the live tree", OPT_FDT},
    {"modules-dir", 0, "DIR", "dir with modules.builtin (default /lib/modules/RELEASE)",
     OPT_MODULES_DIR},
    {"features-dir", 0, "DIR",
     "NFD features.d (default /etc/kubernetes/node-feature-discovery/features.d)",
     OPT_FEATURES_DIR},
    {"node", 'n', "NAME", "also label compatible strings of nodes named NAME (repeatable)", 'n'},
    {"rules", 'r', "PATH", "NodeFeatureRule file or directory (repeatable)", OPT_RULES},
    {"no-builtin-rules", 0, NULL, "do not evaluate the built-in rules", OPT_NO_BUILTIN},
    DEVICES_CLI_OPTS, /* nodeprobe-devices' class options: <resource>.count labels */
    {"device-classes", 0, "FILE", "the same as --classes", DEVICES_OPT_CLASSES},
    {"dev-root", 0, "DIR", "where the host's /dev is seen, for the device classes (/dev)",
     OPT_DEV_ROOT},
    {"output-name", 0, "NAME", "the file's name in features-dir (default nodeprobe)",
     OPT_OUTPUT_NAME},
    {"dry-run", 'd', NULL, "print the labels instead of writing the file", OPT_DRY_RUN},
    {"remove", 0, NULL, "delete <features-dir>/nodeprobe if nodeprobe wrote it, scan nothing",
     OPT_REMOVE},
    {"features", 0, "[=NAME,...]",
     "print the raw features rules match (NFD's NodeFeature), only NAMEs; write nothing",
     OPT_FEATURES},
    {"output", 'o', "FORMAT", "--features as yaml (default) or json", OPT_OUTPUT},
    {"summary", 0, NULL, "then print what each source saw and the number of labels", OPT_SUMMARY},
    {NULL, 0, NULL, NULL, 0},
};

static const struct cli_spec spec = {
    .prog = "nodeprobe",
    .synopsis = "[OPTIONS] [NODE-NAME...]",
    .description = "Scan the devicetree and the PCI bus, evaluate built-in and user rules and\n"
		   "write the labels to <features-dir>/nodeprobe for NFD's nfd-worker.",
    .opts = opts_table,
    .epilog = "Exit status: 0 ok, 1 failure, 2 usage, 3 bad input (devicetree, sysfs, rules),\n"
	      "4 the features file could not be written (or removed), 5 --remove: the file is\n"
	      "not nodeprobe's (left alone).\n",
};

static int add_list(const char **list, size_t *n, const char *v, char *msg, int msglen)
{
	if (*n >= PROBE_MAX_LIST) {
		snprintf(msg, (size_t)msglen, "too many values (at most %d)", PROBE_MAX_LIST);
		return -1;
	}
	list[(*n)++] = v;
	return 0;
}

static int output_format; /* --output, for --features */

/* --features=a,b: each comma-separated name (borrowed from argv, split in place). */
static int add_names(struct probe_opts *o, const char *arg, char *msg, int msglen)
{
	char *p = (char *)arg, *comma; /* argv's own storage: writable */

	for (; p; p = comma ? comma + 1 : NULL) {
		comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (!*p) {
			snprintf(msg, (size_t)msglen, "--features: an empty name");
			return -1;
		}
		if (add_list(o->features, &o->n_features, p, msg, msglen) < 0)
			return -1;
	}
	return 0;
}

static int on_opt(void *ctx, int id, const char *arg, char *msg, int msglen)
{
	struct probe_opts *o = ctx;

	if (id >= DEVICES_OPT_DEVICE) /* parsed as nodeprobe-devices parses them */
		return devices_opt(o->devices, id, arg, msg, msglen);
	switch (id) {
	case OPT_SYSFS:
		o->sysfs = arg;
		break;
	case OPT_PROC:
		o->proc = arg;
		break;
	case OPT_FDT:
		o->fdt = arg;
		break;
	case OPT_BOOT:
		o->boot = arg;
		break;
	case OPT_OS_RELEASE:
		o->os_release = arg;
		break;
	case OPT_CPUID:
		o->cpuid = arg;
		break;
	case OPT_MODULES_DIR:
		o->modules_dir = arg;
		break;
	case OPT_FEATURES_DIR:
		o->features_dir = arg;
		break;
	case 'n':
		return add_list(o->dt_nodes, &o->n_dt_nodes, arg, msg, msglen);
	case 'r':
	case OPT_RULES:
		return add_list(o->rules, &o->n_rules, arg, msg, msglen);
	case OPT_NO_BUILTIN:
		o->no_builtin_rules = true;
		break;
	case 'd':
	case OPT_DRY_RUN:
		o->dry_run = true;
		break;
	case OPT_REMOVE:
		o->remove = true;
		break;
	case OPT_DEV_ROOT:
		o->dev = arg;
		break;
	case OPT_FEATURES: /* --features or --features=pci.device,kernel.version */
		if (!o->features_format)
			o->features_format = PROBE_FEATURES_YAML;
		return arg ? add_names(o, arg, msg, msglen) : 0;
	case 'o':
	case OPT_OUTPUT:
		if (strcmp(arg, "yaml") && strcmp(arg, "json")) {
			snprintf(msg, (size_t)msglen, "--output '%s': want yaml or json", arg);
			return -1;
		}
		output_format = arg[0] == 'y' ? PROBE_FEATURES_YAML : PROBE_FEATURES_JSON;
		break;
	case OPT_SUMMARY:
		o->summary = true;
		break;
	case OPT_OUTPUT_NAME: /* a plain name: no '/', no dot-temp look-alike */
		if (!arg[0] || arg[0] == '.' || strchr(arg, '/') || strlen(arg) > 200) {
			snprintf(msg, (size_t)msglen,
				 "--output-name '%s': want a file name (no '/', not starting with "
				 "'.', at most 200 bytes)",
				 arg);
			return -1;
		}
		o->output_name = arg;
		break;
	default:
		snprintf(msg, (size_t)msglen, "unhandled option");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct devices_opts dev_opts; /* static: reachable at any early exit */
	struct probe_opts o = {.devices = &dev_opts};
	struct log_err err = {0};
	char msg[128];
	int verbose = 0, i, r;
	bool literal;

	i = cli_parse(&spec, argc, argv, on_opt, &o, &verbose);
	if (i <= 0) /* 0: --help or --version printed; < 0: usage error printed */
		return -i;
	/*
	 * Option parsing stops at the first NODE-NAME: an option after it would
	 * silently become a node name ("nodeprobe timer --dry-run" would write the
	 * file). Refuse it, unless "--" ended the options.
	 */
	literal = i > 1 && strcmp(argv[i - 1], "--") == 0;
	for (int j = i + 1; !literal && j < argc; j++) {
		if (argv[j][0] == '-') {
			cli_error("option '%s' after NODE-NAME '%s': options come first", argv[j],
				  argv[i]);
			fprintf(stderr, "Try '%s --help' for more information.\n", spec.prog);
			return CLI_EXIT_USAGE;
		}
	}
	for (; i < argc; i++) {
		if (add_list(o.dt_nodes, &o.n_dt_nodes, argv[i], msg, (int)sizeof(msg)) < 0) {
			cli_error("%s", msg);
			return CLI_EXIT_USAGE;
		}
	}
	if (output_format && !o.features_format) {
		cli_error("--output is the format of --features: give --features too");
		fprintf(stderr, "Try '%s --help' for more information.\n", spec.prog);
		return CLI_EXIT_USAGE;
	}
	if (output_format)
		o.features_format = output_format;
	if (o.remove && o.features_format) {
		cli_error("--remove scans nothing: it takes no --features");
		fprintf(stderr, "Try '%s --help' for more information.\n", spec.prog);
		return CLI_EXIT_USAGE;
	}
	if (o.remove && (o.dry_run || o.n_dt_nodes)) {
		cli_error("--remove scans nothing: it takes no --dry-run and no NODE-NAME");
		fprintf(stderr, "Try '%s --help' for more information.\n", spec.prog);
		return CLI_EXIT_USAGE;
	}
	cli_log_init(spec.prog, verbose);
	r = o.remove ? probe_remove(&o, &err) : probe_run(&o, &err);
	devices_opts_free(&dev_opts);
	if (r < 0) {
		cli_error("%s", err.msg[0] ? err.msg : "failed");
		return r == -PROBE_EXIT_INPUT || r == -PROBE_EXIT_OUTPUT || r == -PROBE_EXIT_FOREIGN
			   ? -r
			   : CLI_EXIT_FAILURE;
	}
	return CLI_EXIT_OK;
}
