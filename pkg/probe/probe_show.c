/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe: what a run saw, for people: --features (the raw features) and --summary (a picture). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "feature/feature.h"
#include "log/log.h"
#include "probe/probe.h"
#include "strbuf/strbuf.h"

#define PROBE_MAX_DUMP (64 << 20) /* --features output: far above any machine's */

int probe_dump(const struct probe_opts *opts, const struct feat_set *fs, struct log_err *err)
{
	struct strbuf out = STRBUF_INIT(PROBE_MAX_DUMP);
	const char *node = getenv("NODE_NAME"); /* nfd-worker's own source of its node's name */
	struct utsname u;
	int r;

	if (!node || !*node)
		node = uname(&u) == 0 ? u.nodename : "localhost";
	for (size_t i = 0; i < opts->n_features; i++) {
		const char *n = opts->features[i];
		bool found = false;

		for (size_t j = 0; j < feat_set_count(fs) && !found; j++) {
			const char *f = feat_name(feat_set_at(fs, j));
			size_t len = strlen(n);

			found = strcmp(f, n) == 0 ||
				(!strchr(n, '.') && strncmp(f, n, len) == 0 && f[len] == '.');
		}
		if (!found)
			log_warn("--features: no source made '%s' on this machine", n);
	}
	r = feat_set_dump(
	    fs, node, opts->features, opts->n_features,
	    opts->features_format == PROBE_FEATURES_JSON ? FEAT_DUMP_JSON : FEAT_DUMP_YAML, &out);
	if (r == 0)
		r = feat_set_error(fs);
	if (r < 0) {
		r = r == -E2BIG
			? log_err_set(err, -ENOMEM, "features over %d bytes", PROBE_MAX_DUMP)
			: log_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	fwrite(out.buf, 1, out.len, stdout);
	if (fflush(stdout) != 0)
		r = log_err_set(err, -PROBE_EXIT_OUTPUT, "stdout: %s", strerror(errno));
out:
	sb_free(&out);
	return r;
}

/*
 * --summary's examples: per feature a person knows, what to show of it. A row is the
 * feature, its kind and how to say it; the rest of a domain shows as its count only.
 */
enum show_how {
	SHOW_IDS,   /* instances: "N devices, e.g. vendor:device (class c), ..." */
	SHOW_COUNT, /* flags: "N <what>" */
	SHOW_ATTRS, /* attributes: the values of keys (space-separated names), "<what> v v" */
};

static const struct show_row {
	const char *feature; /* "pci.device" */
	enum feat_kind kind;
	enum show_how how;
	const char *what;  /* the plural noun, or SHOW_ATTRS' keys ("=key": "key value") */
	const char *label; /* SHOW_ATTRS: the word before the values */
} show_rows[] = {
    {"pci.device", FEAT_INSTANCES, SHOW_IDS, "PCI devices", NULL},
    {"usb.device", FEAT_INSTANCES, SHOW_IDS, "USB devices", NULL},
    {"dt.root", FEAT_ATTRS, SHOW_ATTRS, "model", "model"},
    {"dt.compatible", FEAT_FLAGS, SHOW_COUNT, "compatible strings", NULL},
    {"kernel.version", FEAT_ATTRS, SHOW_ATTRS, "full", "version"},
    {"kernel.loadedmodule", FEAT_FLAGS, SHOW_COUNT, "loaded modules", NULL},
    {"cpu.model", FEAT_ATTRS, SHOW_ATTRS, "vendor_id =family =id", "model"},
    {"cpu.cpuid", FEAT_FLAGS, SHOW_COUNT, "cpuid flags", NULL},
    {"system.osrelease", FEAT_ATTRS, SHOW_ATTRS, "ID VERSION_ID", "os-release"},
};

#define SHOW_EXAMPLES 3 /* devices named per instances feature */

/* Append "N nouns", or "1 noun" (plural less its 's'). */
static int noun(struct strbuf *out, size_t n, const char *plural)
{
	return sb_addf(out, "%zu %.*s", n, (int)(strlen(plural) - (n == 1)), plural);
}

/* Append ": " before a line's first part, ", " before the others. */
static int part(struct strbuf *out, bool *first)
{
	int r = sb_add(out, *first ? ": " : ", ");

	*first = false;
	return r;
}

static int show_one(const struct show_row *row, const struct feat *f, struct strbuf *out,
		    bool *first)
{
	size_t n, i;
	int r = part(out, first);
	char key[64];

	switch (row->how) {
	case SHOW_IDS:
		n = feat_ninstances(f);
		if (r == 0)
			r = noun(out, n, row->what);
		for (i = 0; i < n && i < SHOW_EXAMPLES && r == 0; i++) {
			const struct feat *in = feat_instance_at(f, i);
			const char *v = feat_lookup(in, "vendor"), *d = feat_lookup(in, "device");
			const char *c = feat_lookup(in, "class");

			r = sb_addf(out, "%s%s:%s (class %s)", i ? ", " : ", e.g. ", v ? v : "?",
				    d ? d : "?", c ? c : "?");
		}
		if (r == 0 && n > SHOW_EXAMPLES)
			r = sb_add(out, ", ...");
		return r;
	case SHOW_COUNT:
		return r ? r : noun(out, feat_nelems(f), row->what);
	case SHOW_ATTRS:
		if (r == 0)
			r = sb_add(out, row->label);
		for (const char *p = row->what; *p && r == 0;) {
			size_t len = strcspn(p, " ");
			const char *v;

			bool named = *p == '=';

			snprintf(key, sizeof(key), "%.*s", (int)(len - named), p + named);
			v = feat_lookup(f, key);
			r = sb_addf(out, " %s%s%s", named ? key : "", named ? " " : "",
				    v && *v ? v : "?");
			p += len + (p[len] == ' ');
		}
		return r;
	}
	return r;
}

/* The domain of feature name ("pci" of "pci.device") into buf. */
static void domain_of(const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%.*s", (int)strcspn(name, "."), name);
}

int probe_summary(const struct feat_set *fs, size_t nlabels, struct strbuf *out)
{
	size_t n = feat_set_count(fs), i, j, k, count;
	char dom[64], other[64];
	bool first;
	int r = sb_add(out, "What nodeprobe saw (source: features; --features prints them all):\n");

	/* each domain once, in the order its first feature was made */
	for (i = 0; i < n && r == 0; i++) {
		domain_of(feat_name(feat_set_at(fs, i)), dom, sizeof(dom));
		for (j = 0; j < i; j++) {
			domain_of(feat_name(feat_set_at(fs, j)), other, sizeof(other));
			if (strcmp(dom, other) == 0)
				break;
		}
		if (j < i)
			continue;
		count = 0;
		for (j = i; j < n; j++) {
			domain_of(feat_name(feat_set_at(fs, j)), other, sizeof(other));
			count += strcmp(dom, other) == 0;
		}
		r = sb_addf(out, "  %-8s ", dom);
		if (r == 0)
			r = noun(out, count, "features");
		first = true;
		for (k = 0; k < sizeof(show_rows) / sizeof(show_rows[0]) && r == 0; k++) {
			const struct feat *f =
			    feat_get_kind(fs, show_rows[k].feature, show_rows[k].kind);

			domain_of(show_rows[k].feature, other, sizeof(other));
			if (f && strcmp(dom, other) == 0)
				r = show_one(&show_rows[k], f, out, &first);
		}
		if (r == 0)
			r = sb_add(out, "\n");
	}
	if (r == 0 && nlabels)
		r = sb_addf(out, "%zu label%s\n", nlabels, nlabels == 1 ? "" : "s");
	if (r == 0 && nlabels == 0)
		r = sb_add(out,
			   "0 labels: no rule matched what this machine has (the built-in rules "
			   "label Intel, AMD and NVIDIA GPUs and accelerators; a devicetree board "
			   "labels its compatible strings)\n");
	if (r == 0 && feat_set_error(fs) < 0)
		r = feat_set_error(fs);
	return r;
}
