/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules: NFD NodeFeatureRule files (YAML, libyaml) evaluated against raw features into labels. */
#ifndef NP_RULES_H
#define NP_RULES_H

#include <stdbool.h>
#include <stddef.h>

struct feat_set;
struct label_set;
struct log_err;
struct yaml_document_s; /* libyaml's yaml_document_t */
struct yaml_node_s;	/* libyaml's yaml_node_t */
struct ydoc;
struct feat;

/*
 * The format is NFD's NodeFeatureRule (apiVersion nfd.k8s-sigs.io/v1alpha1,
 * kind NodeFeatureRule), several per file as YAML documents, checked against
 * NFD's CRD schema (every field, type and op; metadata.name required), and
 * evaluated as nfd-master does (NFD v0.19, pkg/apis/nfd/nodefeaturerule and
 * pkg/nfd-master): objects ordered by metadata.name, rules in order; labels,
 * labelsTemplate, vars, varsTemplate; matchFeatures (AND), matchAny (OR);
 * terms with matchExpressions and matchName; the 13 ops of NFD's table, with
 * type: version for the six numeric ones; rule.matched (the labels and vars
 * of earlier rules) as an attribute feature; "@<domain>.<feature>.<element>"
 * label values read after all rules ran. An expression NFD cannot evaluate
 * fails its rule (with a warning) exactly when NFD's would: when evaluated on
 * an element that is there.
 *
 * labelsTemplate and varsTemplate run as nfd-master v0.19 runs them
 * (pkg/apis/nfd/nodefeaturerule/rule.go, pkg/apis/nfd/template/template.go):
 * Go's text/template with Sprig's functions and missingkey=error (pkg/gotmpl,
 * which also bounds source, steps and output), over the matched features of
 * the matcher that matched ({{ .<domain>.<feature> }}: a list of elements,
 * flags {Name}, attributes {Name, Value}, instances their attributes). Each
 * distinct template text is parsed once, at load; one that does not parse
 * fails its rule when the rule matches, as in NFD. The output is "key=value"
 * lines (each TrimSpace'd, blank ones skipped; a line without '=' fails the
 * rule); labels/vars win over it. A template error fails that rule only,
 * with a warning naming it and NFD's message.
 *
 * nodeprobe's own kind, apiVersion nodeprobe.io/v1alpha1, kind
 * LabelCountRule: rules of name, countLabelsTemplate, matchFeatures and
 * matchAny; each distinct line the template gives becomes a label whose value
 * is the number of lines that gave it.
 *
 * Unprefixed label keys get "feature.node.kubernetes.io/", as nfd-master
 * adds. Labels that are invalid, or in a kubernetes.io namespace NFD denies,
 * are skipped with a warning naming the rule and label.
 *
 * A term on a feature the scan does not hold is "no match", as NFD's "feature
 * not available" (a matchAny branch on it fails alone); when the rule then
 * gives nothing and no source makes that feature (rules_feature_supported()),
 * a warning names it. annotations, extendedResources and
 * taints are checked, then ignored with a warning (a features.d file holds
 * labels only). Documents of another apiVersion/kind are skipped with a
 * warning. A malformed file (YAML syntax, or anything the CRD schema
 * refuses) is an error "file:line:column: what".
 *
 * The patterns and templates of all the rules loaded into one struct rules
 * are bounded together (10000 distinct patterns and 64 MiB for them; 10000
 * distinct templates, 16 MiB of them and 32 MiB of parse trees): rules are
 * taken in load order, and one whose pattern or template would pass a bound
 * is skipped with a warning "file:line:col: rule 'name' not applied: field:
 * the limit" (what it compiled before stays counted); it is no error. Once
 * the texts refused at a memory bound took as much again to compile, no new
 * text is compiled: each rule needing one is skipped the same way.
 */

struct rules; /* loaded rules, in load order */

/* New empty rule list, or NULL when out of memory. */
struct rules *rules_new(void);
void rules_free(struct rules *r);

/*
 * Load the NodeFeatureRule documents of buf (len bytes, need not be
 * NUL-terminated); name is used in messages. On error returns -EINVAL (or
 * -ENOMEM) with err "name:line:col: what" and r unchanged. Returns the number
 * of rules added (not counting those skipped at a bound of all the rules).
 */
int rules_load_buffer(struct rules *r, const char *name, const char *buf, size_t len,
		      struct log_err *err);

/*
 * Load a file, or every "*.yaml" and "*.yml" in a directory (sorted by name,
 * not recursive, dot-files skipped). A file is at most 1 MiB. Returns the
 * number of rules added, or -errno / -EINVAL with err naming the file.
 */
int rules_load_path(struct rules *r, const char *path, struct log_err *err);

/* Number of loaded rules. */
size_t rules_count(const struct rules *r);

/*
 * Evaluate every rule against fs, in nfd-master's order
 * (objects by metadata.name, then load order; rules in order), and put the
 * final labels into out (a later rule replaces an earlier value). Evaluation
 * problems (a non-number for Gt, a template error) make that rule produce
 * nothing, with a warning. fs is borrowed, not changed. Returns the number of
 * labels set, or -ENOMEM with err filled.
 */
int rules_eval(const struct rules *r, const struct feat_set *fs, struct label_set *out,
	       struct log_err *err);

/*
 * True for a feature nodeprobe's sources make even where this node lacks it:
 * "pci.device", "kernel.loadedmodule", "kernel.enabledmodule",
 * "kernel.version", "kernel.config", "cpu.cpuid", "cpu.model",
 * "system.osrelease", "usb.device", any "dt.*" feature (the devicetree
 * source), "rule.matched", and pkg/hostfeat's "cpu.security", "cpu.topology",
 * "cpu.cstate", "cpu.pstate", "cpu.rdt", "cpu.sst", "cpu.coprocessor",
 * "system.name", "system.dmiid", "kernel.selinux", "kernel.kvm", "memory.numa",
 * "memory.swap", "memory.nv", "memory.hugepages", "network.device",
 * "network.virtual", "storage.block". It only decides whether a rule that
 * does not match is warned about: a feature the scan lacks is "no match"
 * whatever its name.
 */
bool rules_feature_supported(const char *feature);

/*
 * True if a rule of r reads a feature whose name starts
 * with prefix ("cpu.", "kernel.config"): in a matchFeatures or matchAny term
 * (compared case-insensitively, as NFD lower-cases term features) or in an
 * "@domain.feature.element" label value. Sources whose features no rule reads
 * need not run.
 */
bool rules_use_features(const struct rules *r, const char *prefix);

/*
 * The rules shipped in the binary (every cmd/nodeprobe/rules.d and counts.d YAML file),
 * generated at build by scripts/embed-yaml: each file's bytes, and its documents as libyaml
 * loads them, as static data (test_ydoc checks them against a load of the bytes).
 */
struct rules_builtin {
	const char *name;	      /* "rules.d/intel.yaml" */
	const char *data;	      /* file contents (NUL after them, not counted in len) */
	size_t len;		      /* bytes */
	struct yaml_document_s *docs; /* its documents (libyaml's yaml_document_t) */
	size_t ndocs;
};
extern const struct rules_builtin rules_builtin[];
extern const size_t rules_builtin_count;

/* Load every built-in file as rules_load_buffer() does, from its embedded documents (no
 * YAML parsing at run time). Same returns. */
int rules_load_builtin(struct rules *r, struct log_err *err);

/*
 * A matchFeatures list outside a rule, for choosing instances (pkg/devices: which usb.device or
 * pci.device instances a device class takes). The same parser and matcher as a rule's
 * matchFeatures: every term must hold (AND), and the instances of feature that are chosen are
 * the ones that every term on feature matched.
 */
struct rules_select;

/*
 * Parse the matchFeatures list n of document y (a sequence of terms, as in a rule); errors are
 * y's "file:line:col: what". Returns 0 with *out (free with rules_select_free), -EINVAL or
 * -ENOMEM with err set.
 */
int rules_select_parse(struct ydoc *y, const struct yaml_node_s *n, struct rules_select **out,
		       struct log_err *err);

/*
 * Evaluate s against fs (borrowed) and write to out[0..max) the instances of feature (an
 * instances feature of fs, e.g. "pci.device") that it chose, in fs's order. Returns how many
 * (0 when a term fails), -E2BIG when more than max, -EINVAL with err naming the expression NFD
 * cannot evaluate, or -ENOMEM. The instances are fs's, valid until feat_set_free.
 */
int rules_select_eval(const struct rules_select *s, const struct feat_set *fs, const char *feature,
		      const struct feat **out, size_t max, struct log_err *err);

/* Free s (NULL is fine). */
void rules_select_free(struct rules_select *s);

#endif
