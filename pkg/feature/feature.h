/* SPDX-License-Identifier: GPL-2.0-or-later */
/* feature: NFD's raw feature model (flags, attributes, instances) that sources fill and rules read.
 */
#ifndef NP_FEATURE_H
#define NP_FEATURE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * As in NFD, a feature is named "<domain>.<name>" (e.g. "pci.device",
 * "kernel.loadedmodule") and is one of three kinds:
 *   flags:      a set of element names (kernel.loadedmodule: i915, xe, ...)
 *   attributes: element name -> value (dt.root: model -> "Raspberry Pi 4 Model B")
 *   instances:  a list of attribute maps (pci.device: one map per device)
 * As in NFD's Features (three maps keyed by name), one name may hold a feature
 * of each kind at once: x86 "cpu.cpuid" is flags plus the attribute
 * AVX10_VERSION. Each call works on the feature of its own kind.
 */
enum feat_kind {
	FEAT_FLAGS = 0,
	FEAT_ATTRS = 1,
	FEAT_INSTANCES = 2,
};

struct feat_set; /* all features of one scan */
struct feat;	 /* one feature, or one instance (an attribute map) */

/* New empty set, or NULL when out of memory. */
struct feat_set *feat_set_new(void);
void feat_set_free(struct feat_set *fs);

/*
 * Create feature of kind with no elements if no source made it yet, so that
 * it exists even when empty (NFD: a feature that was read but is empty still
 * matches DoesNotExist). Returns 0 or -ENOMEM.
 */
int feat_declare(struct feat_set *fs, const char *feature, enum feat_kind kind);
/* Add element name to flags feature. Duplicates are ignored. Returns 0 or -ENOMEM. */
int feat_flag_add(struct feat_set *fs, const char *feature, const char *name);
/* Set key=value in attributes feature (replacing). Returns 0 or -ENOMEM. */
int feat_attr_set(struct feat_set *fs, const char *feature, const char *key, const char *value);
/*
 * Append a new empty instance to instances feature. Returns the instance (owned
 * by fs, valid until feat_set_free) or NULL on -ENOMEM.
 */
struct feat *feat_instance_add(struct feat_set *fs, const char *feature);
/* Set key=value in one instance (replacing). Returns 0 or -ENOMEM. */
int feat_instance_set(struct feat *inst, const char *key, const char *value);

/*
 * Defer making the elements of features (n names, each declared already) until
 * one of them is read: the first feat_nelems, feat_elem_at or feat_lookup of
 * any of them calls fill(arg, fs) once, which adds their elements with the
 * calls above, then release(arg) (NULL: none); feat_set_free releases an
 * unused one. The features exist meanwhile (feat_get, feat_kind): a rule that
 * only tests that one exists costs nothing. For sources whose elements cost
 * time to make (a kernel config to parse, cpuid leaves that trap to the
 * hypervisor in a VM); the data must be checked before, as fill may fail
 * only with -ENOMEM (feat_set_error). fill adds elements to these features
 * only: it must not create a feature (of another kind, too), which a rule
 * may have looked for before. Every kind declared under a name is deferred
 * (declare each kind fill makes before calling this). Reading a deferred feature changes the
 * set: not thread-safe. Returns 0, -EINVAL (a name not declared, or deferred
 * already; release is then not called) or -ENOMEM (release called).
 */
int feat_defer(struct feat_set *fs, const char *const *features, size_t n,
	       int (*fill)(void *arg, struct feat_set *fs), void *arg, void (*release)(void *arg));
/* True while feature's elements are deferred (feat_defer) and not made yet. */
bool feat_deferred(const struct feat_set *fs, const char *feature);
/* The first error a deferred fill returned (-ENOMEM), else 0: the reads that made it saw too few
 * elements, so the caller must fail the run. */
int feat_set_error(const struct feat_set *fs);

/* The first-made feature named feature (any kind), or NULL if no source produced it. Borrowed. */
const struct feat *feat_get(const struct feat_set *fs, const char *feature);
/* The feature named feature of kind, or NULL. Borrowed. */
const struct feat *feat_get_kind(const struct feat_set *fs, const char *feature,
				 enum feat_kind kind);
/* Number of features in the set, and the i-th (creation order). */
size_t feat_set_count(const struct feat_set *fs);
const struct feat *feat_set_at(const struct feat_set *fs, size_t i);

/* The feature's name ("pci.device"), or "" for an instance. */
const char *feat_name(const struct feat *f);
enum feat_kind feat_kind(const struct feat *f);
/* Flags and attributes (and an instance): number of elements, sorted by name. */
size_t feat_nelems(const struct feat *f);
/* i-th element's name and value ("" for flags). Borrowed. */
void feat_elem_at(const struct feat *f, size_t i, const char **name, const char **value);
/* Value of element name ("" for a flag that is set), or NULL if absent. Borrowed. */
const char *feat_lookup(const struct feat *f, const char *name);
/* Instances feature: number of instances and the i-th one (an attribute map). */
size_t feat_ninstances(const struct feat *f);
const struct feat *feat_instance_at(const struct feat *f, size_t i);

/* Output formats of feat_set_dump. */
enum feat_dump_format {
	FEAT_DUMP_YAML = 0,
	FEAT_DUMP_JSON = 1,
};

struct strbuf;
/*
 * Append fs to out as NFD's NodeFeature object (nfd.k8s-sigs.io/v1alpha1, named node, with
 * spec.features.{flags,attributes,instances}, each <name>: {elements: ...} as NFD's
 * api/nfd/v1alpha1 types), in fmt: what a NodeFeatureRule's matchFeatures sees. Only the
 * features named in names[0..n) (a bare domain "pci" names every "pci.*"); n == 0: all.
 * Deferred features are made (feat_defer). Returns 0, -ENOMEM or -E2BIG (out's cap).
 */
int feat_set_dump(const struct feat_set *fs, const char *node, const char *const *names, size_t n,
		  enum feat_dump_format fmt, struct strbuf *out);

#endif
