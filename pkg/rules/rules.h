/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules: NFD NodeFeatureRule files (YAML, libyaml) evaluated against raw features into labels. */
#ifndef NP_RULES_H
#define NP_RULES_H

#include <stdbool.h>
#include <stddef.h>

struct feat_set;
struct label_set;
struct log_err;

/*
 * The format is NFD's NodeFeatureRule (apiVersion nfd.k8s-sigs.io/v1alpha1,
 * kind NodeFeatureRule), several per file as YAML documents. Per rule: name,
 * labels (values "@<domain>.<feature>.<element>" are read from an attribute
 * feature), labelsTemplate (a subset of Go templates, below), matchFeatures
 * (AND) and matchAny (OR of matchFeatures). Terms: feature, matchExpressions
 * {key: {op, value}} and matchName {op, value}. Ops: In, NotIn, InRegexp (Go's
 * regexp, unanchored, through pkg/goregex), Exists, DoesNotExist, Gt, Ge, Lt, Le, GtLt, GeLe,
 * IsTrue, IsFalse, with NFD's semantics (pkg/apis/nfd/nodefeaturerule): a flag only
 * Exists/DoesNotExist; a missing attribute matches only DoesNotExist; an
 * instance term matches when one instance matches all its expressions; a
 * feature no source produced matches nothing.
 *
 * labelsTemplate subset: "{{ range .<dom>.<feat> }} ... {{ end }}" over the
 * elements the rule matched (flags and attributes sorted by name, as NFD),
 * "{{ .<attr> }}" inside it (instances: their attributes; flags: .Name;
 * attributes: .Name, .Value), "{{ len .<dom>.<feat> }}",
 * "{{ (index .<dom>.<feat> N).<attr> }}", and the "{{-"/"-}}" trim markers.
 * The output is "key=value" lines, as in NFD; labels wins over it. As NFD's
 * missingkey=error, a key that is not there (an attribute the element lacks,
 * .Value of a flag, a feature the matcher did not match on) fails the
 * template, and the rule gives nothing.
 *
 * nodeprobe extension, countLabelsTemplate: a template in the same subset
 * that expands to label keys, one per line; each distinct key becomes a label
 * whose value is the number of lines that produced it. (Intel's GPU count
 * template labels the first device id with the total; this counts per id.)
 *
 * Unprefixed label keys get "feature.node.kubernetes.io/", as nfd-master
 * adds. Labels that are invalid, or in a kubernetes.io namespace NFD denies,
 * are skipped with a warning naming the rule and label.
 *
 * What we cannot evaluate skips the rule with a warning naming file and
 * rule: a feature outside rules_feature_supported(), the op Any, a "type"
 * ("type: version"; its values are then not read as integers), a template
 * construct outside the subset. Rule outputs
 * other than labels (annotations, extendedResources, taints, vars) are
 * ignored with a warning. Documents of another apiVersion/kind are skipped
 * with a warning. A malformed file (YAML syntax, wrong type, missing name,
 * unknown op, wrong number of values, a regex Go refuses) is an error
 * "file:line:column: what".
 */

struct rules; /* loaded rules, in load order */

/* New empty rule list, or NULL when out of memory. */
struct rules *rules_new(void);
void rules_free(struct rules *r);

/*
 * Load the NodeFeatureRule documents of buf (len bytes, need not be
 * NUL-terminated); name is used in messages. On error returns -EINVAL (or
 * -ENOMEM) with err "name:line:col: what" and r unchanged. Returns the number
 * of rules added (skipped ones included).
 */
int rules_load_buffer(struct rules *r, const char *name, const char *buf, size_t len,
		      struct log_err *err);

/*
 * Load a file, or every "*.yaml" and "*.yml" in a directory (sorted by name,
 * not recursive, dot-files skipped). A file is at most 1 MiB. Returns the
 * number of rules added, or -errno / -EINVAL with err naming the file.
 */
int rules_load_path(struct rules *r, const char *path, struct log_err *err);

/* Number of loaded rules (skipped ones included). */
size_t rules_count(const struct rules *r);

/*
 * Evaluate every rule that is not skipped against fs, in load order, and put
 * the labels of matching rules into out (a later rule replaces an earlier
 * value). Evaluation problems (a non-number for Gt, a template error) make
 * that rule produce nothing, with a warning. Returns the number of labels
 * set, or -ENOMEM with err filled.
 */
int rules_eval(const struct rules *r, const struct feat_set *fs, struct label_set *out,
	       struct log_err *err);

/*
 * True if rules may use feature: "pci.device", "kernel.loadedmodule",
 * "kernel.enabledmodule", "kernel.version", "kernel.config", "cpu.cpuid",
 * "cpu.model", "system.osrelease", "usb.device" and any "dt.*" feature (the
 * devicetree source).
 */
bool rules_feature_supported(const char *feature);

/*
 * True if a rule of r that is not skipped reads a feature whose name starts
 * with prefix ("cpu.", "kernel.config"): in a matchFeatures or matchAny term
 * (compared case-insensitively, as NFD lower-cases term features) or in an
 * "@domain.feature.element" label value. Sources whose features no rule reads
 * need not run.
 */
bool rules_use_features(const struct rules *r, const char *prefix);

/* The rules shipped in the binary (every cmd/nodeprobe/rules.d YAML file, generated at build). */
struct rules_builtin {
	const char *name; /* "rules.d/intel.yaml" */
	const char *data; /* file contents (not NUL-terminated) */
	size_t len;	  /* bytes */
};
extern const struct rules_builtin rules_builtin[];
extern const size_t rules_builtin_count;

/* Load every built-in file as rules_load_buffer() does (without ydoc's bounds scan: our own
 * YAML, checked by a test). Same returns. */
int rules_load_builtin(struct rules *r, struct log_err *err);

#endif
