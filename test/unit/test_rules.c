/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_rules: NodeFeatureRule parsing and NFD's match semantics, templates, errors and warnings. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "feature/feature.h"
#include "harness.h"
#include "label/label.h"
#include "log/log.h"
#include "rules/rules.h"
#include "strbuf/strbuf.h"

/* Warnings captured from the library. */
static char warnings[8192];

static void capture(void *data, enum log_level lvl, const char *msg)
{
	(void)data;
	if (lvl <= LOG_LVL_WARN && strlen(warnings) + strlen(msg) + 2 < sizeof(warnings)) {
		strcat(warnings, msg);
		strcat(warnings, "\n");
	}
}

static void capture_on(void)
{
	warnings[0] = '\0';
	log_set_fn(capture, NULL, LOG_LVL_WARN);
}

#define HDR                                                                                        \
	"apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata: {name: "           \
	"t}\nspec:\n  rules:\n"

/* A host: an Intel iGPU bound to i915, an NVIDIA 3D controller, modules, dt attributes. */
static struct feat_set *host(void)
{
	struct feat_set *fs = feat_set_new();
	struct feat *d;

	d = feat_instance_add(fs, "pci.device");
	feat_instance_set(d, "vendor", "8086");
	feat_instance_set(d, "device", "46a6");
	feat_instance_set(d, "class", "0300");
	feat_instance_set(d, "driver", "i915");
	d = feat_instance_add(fs, "pci.device");
	feat_instance_set(d, "vendor", "8086");
	feat_instance_set(d, "device", "4680");
	feat_instance_set(d, "class", "0300");
	d = feat_instance_add(fs, "pci.device");
	feat_instance_set(d, "vendor", "8086");
	feat_instance_set(d, "device", "46a6");
	feat_instance_set(d, "class", "0300");
	d = feat_instance_add(fs, "pci.device");
	feat_instance_set(d, "vendor", "10de");
	feat_instance_set(d, "device", "1d10");
	feat_instance_set(d, "class", "0302");
	feat_instance_set(d, "sriov_totalvfs", "16");
	feat_flag_add(fs, "kernel.loadedmodule", "i915");
	feat_flag_add(fs, "kernel.loadedmodule", "vfio_pci");
	feat_flag_add(fs, "kernel.enabledmodule", "i915");
	feat_flag_add(fs, "kernel.enabledmodule", "vfio-pci");
	feat_attr_set(fs, "dt.root", "model", "Raspberry Pi 4 Model B");
	feat_attr_set(fs, "dt.root", "board", "rpi-4");
	feat_attr_set(fs, "dt.root", "cores", "4");
	feat_attr_set(fs, "dt.root", "secure", "true");
	return fs;
}

/* Load a whole file, evaluate on host(), return "k=v\n" lines or "ERROR msg". */
static char *run_doc(const char *file, int *nlabels);

/* Load yaml (a list of rules after HDR), evaluate on host(), return "k=v\n" lines. */
static char *run(const char *rules_yaml, int *nlabels)
{
	static char buf[65536];

	snprintf(buf, sizeof(buf), "%s%s", HDR, rules_yaml);
	return run_doc(buf, nlabels);
}

static char *run_doc(const char *file, int *nlabels)
{
	static char out[4096];
	struct rules *r = rules_new();
	struct feat_set *fs = host();
	struct label_set *ls = label_set_new();
	struct strbuf sb = STRBUF_INIT(4096);
	struct strbuf doc = STRBUF_INIT(65536);
	struct log_err err = {0};
	int n;

	sb_add(&doc, file);
	n = rules_load_buffer(r, "t.yaml", doc.buf, doc.len, &err);
	if (n < 0) {
		snprintf(out, sizeof(out), "ERROR %s", err.msg);
		goto out;
	}
	n = rules_eval(r, fs, ls, &err);
	if (nlabels)
		*nlabels = n;
	label_set_format(ls, &sb);
	snprintf(out, sizeof(out), "%s", sb.buf);
out:
	sb_free(&sb);
	sb_free(&doc);
	label_set_free(ls);
	feat_set_free(fs);
	rules_free(r);
	return out;
}

/* One rule named x with label a.io/x=y and the given matchFeatures body. */
#define ONE(mf) "  - name: x\n    labels: {a.io/x: \"y\"}\n    matchFeatures:\n" mf

/* The warnings of loading and evaluating rules_yaml (a list of rules after HDR) on host(). */
static const char *warned(const char *rules_yaml)
{
	static char w[sizeof(warnings)];

	capture_on();
	run(rules_yaml, NULL);
	snprintf(w, sizeof(w), "%s", warnings);
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
	return w;
}

TEST(rules_op_in_notin_instances)
{
	CHECK_STR(run(ONE("      - feature: pci.device\n        matchExpressions:\n"
			  "          vendor: {op: In, value: [\"10de\", \"1002\"]}\n"),
		      NULL),
		  "a.io/x=y\n");
	CHECK_STR(run(ONE("      - feature: pci.device\n        matchExpressions:\n"
			  "          vendor: {op: In, value: [\"1002\"]}\n"),
		      NULL),
		  "");
	/* NotIn: some instance has a vendor not in the list */
	CHECK_STR(run(ONE("      - feature: pci.device\n        matchExpressions:\n"
			  "          vendor: {op: NotIn, value: [\"8086\"]}\n"),
		      NULL),
		  "a.io/x=y\n");
	CHECK_STR(run(ONE("      - feature: pci.device\n        matchExpressions:\n"
			  "          vendor: {op: NotIn, value: [\"8086\", \"10de\"]}\n"),
		      NULL),
		  "");
	/* NotIn on a missing attribute does not match (NFD: valid == false) */
	CHECK_STR(run(ONE("      - feature: pci.device\n        matchExpressions:\n"
			  "          nosuch: {op: NotIn, value: [\"x\"]}\n"),
		      NULL),
		  "");
}

/* An instance term needs ONE instance matching ALL expressions. */
TEST(rules_instance_semantics)
{
	/* vendor 10de exists, class 0300 exists, but not on the same device */
	CHECK_STR(run(ONE("      - feature: pci.device\n        matchExpressions:\n"
			  "          vendor: {op: In, value: [\"10de\"]}\n"
			  "          class: {op: In, value: [\"0300\"]}\n"),
		      NULL),
		  "");
	CHECK_STR(run(ONE("      - feature: pci.device\n        matchExpressions:\n"
			  "          vendor: {op: In, value: [\"10de\"]}\n"
			  "          class: {op: In, value: [\"0302\"]}\n"),
		      NULL),
		  "a.io/x=y\n");
	/* DoesNotExist per instance: a device without a driver */
	CHECK_STR(run(ONE("      - feature: pci.device\n        matchExpressions:\n"
			  "          vendor: {op: In, value: [\"8086\"]}\n"
			  "          driver: {op: DoesNotExist}\n"),
		      NULL),
		  "a.io/x=y\n");
	CHECK_STR(run(ONE("      - feature: pci.device\n        matchExpressions:\n"
			  "          vendor: {op: In, value: [\"10de\"]}\n"
			  "          sriov_totalvfs: {op: DoesNotExist}\n"),
		      NULL),
		  "");
	/* empty matchExpressions: any instance */
	CHECK_STR(run(ONE("      - feature: pci.device\n        matchExpressions: {}\n"), NULL),
		  "a.io/x=y\n");
}

TEST(rules_flags_semantics)
{
	CHECK_STR(run(ONE("      - feature: kernel.loadedmodule\n        matchExpressions:\n"
			  "          i915: {op: Exists}\n"),
		      NULL),
		  "a.io/x=y\n");
	CHECK_STR(run(ONE("      - feature: kernel.loadedmodule\n        matchExpressions:\n"
			  "          xe: {op: Exists}\n"),
		      NULL),
		  "");
	CHECK_STR(run(ONE("      - feature: kernel.loadedmodule\n        matchExpressions:\n"
			  "          xe: {op: DoesNotExist}\n"),
		      NULL),
		  "a.io/x=y\n");
	/* a flag has no value: In never matches it */
	CHECK_STR(run(ONE("      - feature: kernel.loadedmodule\n        matchExpressions:\n"
			  "          i915: {op: In, value: [\"\"]}\n"),
		      NULL),
		  "");
	/* built-in names keep NFD's '-' */
	CHECK_STR(run(ONE("      - feature: kernel.enabledmodule\n        matchExpressions:\n"
			  "          vfio-pci: {op: Exists}\n"),
		      NULL),
		  "a.io/x=y\n");
	/* a feature no source produced matches nothing, even DoesNotExist */
	CHECK_STR(run(ONE("      - feature: dt.compatible\n        matchExpressions:\n"
			  "          foo: {op: DoesNotExist}\n"),
		      NULL),
		  "");
	/* term without expressions: the feature exists */
	CHECK_STR(run(ONE("      - feature: kernel.loadedmodule\n"), NULL), "a.io/x=y\n");
}

TEST(rules_op_regexp_numbers_bools)
{
	CHECK_STR(
	    run(ONE("      - feature: dt.root\n        matchExpressions:\n"
		    "          model: {op: InRegexp, value: [\"^Jetson\", \"Pi [0-9]+ Model\"]}\n"),
		NULL),
	    "a.io/x=y\n");
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          model: {op: InRegexp, value: [\"^Pi\"]}\n"),
		      NULL),
		  "");
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          cores: {op: Gt, value: [\"3\"]}\n"),
		      NULL),
		  "a.io/x=y\n");
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          cores: {op: Gt, value: [\"4\"]}\n"),
		      NULL),
		  "");
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          cores: {op: Lt, value: [\"5\"]}\n"),
		      NULL),
		  "a.io/x=y\n");
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          cores: {op: GtLt, value: [\"3\", \"5\"]}\n"),
		      NULL),
		  "a.io/x=y\n");
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          cores: {op: GtLt, value: [\"4\", \"5\"]}\n"),
		      NULL),
		  "");
	CHECK_STR(run(ONE("      - feature: pci.device\n        matchExpressions:\n"
			  "          sriov_totalvfs: {op: Gt, value: [\"15\"]}\n"),
		      NULL),
		  "a.io/x=y\n");
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          secure: {op: IsTrue}\n"),
		      NULL),
		  "a.io/x=y\n");
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          secure: {op: IsFalse}\n"),
		      NULL),
		  "");
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          model: {op: IsTrue}\n"),
		      NULL),
		  "");
	/* Exists on an attribute */
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          board: {op: Exists}\n"),
		      NULL),
		  "a.io/x=y\n");
}

/* Gt on a value that is not a number: NFD errors, the rule gives nothing. */
TEST(rules_gt_non_number_voids_rule)
{
	capture_on();
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          model: {op: Gt, value: [\"1\"]}\n"),
		      NULL),
		  "");
	CHECK(strstr(warnings, "not a number 'Raspberry Pi 4 Model B'") != NULL);
	CHECK(strstr(warnings, "t.yaml:6:5: rule 'x' not applied") != NULL);
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

TEST(rules_match_any_and_features)
{
	static const char y[] =
	    "  - name: any\n    labels: {a.io/any: \"true\"}\n"
	    "    matchFeatures:\n"
	    "      - feature: pci.device\n        matchExpressions:\n"
	    "          vendor: {op: In, value: [\"8086\"]}\n"
	    "    matchAny:\n"
	    "      - matchFeatures:\n"
	    "          - feature: kernel.loadedmodule\n            matchExpressions:\n"
	    "              xe: {op: Exists}\n"
	    "      - matchFeatures:\n"
	    "          - feature: kernel.enabledmodule\n            matchExpressions:\n"
	    "              i915: {op: Exists}\n"
	    "  - name: none\n    labels: {a.io/none: \"true\"}\n"
	    "    matchAny:\n"
	    "      - matchFeatures:\n"
	    "          - feature: kernel.loadedmodule\n            matchExpressions:\n"
	    "              xe: {op: Exists}\n"
	    "  - name: anyok-featuresfail\n    labels: {a.io/f: \"true\"}\n"
	    "    matchFeatures:\n"
	    "      - feature: pci.device\n        matchExpressions:\n"
	    "          vendor: {op: In, value: [\"1002\"]}\n"
	    "    matchAny:\n"
	    "      - matchFeatures:\n"
	    "          - feature: kernel.loadedmodule\n";

	CHECK_STR(run(y, NULL), "a.io/any=true\n");
}

TEST(rules_match_name)
{
	CHECK_STR(run("  - name: n\n    labels: {a.io/n: \"1\"}\n    matchFeatures:\n"
		      "      - feature: kernel.loadedmodule\n"
		      "        matchName: {op: InRegexp, value: [\"^vfio\"]}\n",
		      NULL),
		  "a.io/n=1\n");
	CHECK_STR(run("  - name: n\n    labels: {a.io/n: \"1\"}\n    matchFeatures:\n"
		      "      - feature: pci.device\n"
		      "        matchName: {op: In, value: [\"sriov_totalvfs\"]}\n",
		      NULL),
		  "a.io/n=1\n");
	CHECK_STR(run("  - name: n\n    labels: {a.io/n: \"1\"}\n    matchFeatures:\n"
		      "      - feature: kernel.loadedmodule\n"
		      "        matchName: {op: In, value: [\"xe\"]}\n",
		      NULL),
		  "");
}

TEST(rules_dynamic_values_and_prefix)
{
	capture_on();
	CHECK_STR(run("  - name: d\n    labels:\n"
		      "      a.io/board: \"@dt.root.board\"\n"
		      "      a.io/gone: \"@dt.root.nosuch\"\n"
		      "      a.io/bad: \"@dt\"\n"
		      "      a.io/model: \"@dt.root.model\"\n"
		      "      plain: \"yes\"\n"
		      "    matchFeatures:\n      - feature: dt.root\n",
		      NULL),
		  "a.io/board=rpi-4\nfeature.node.kubernetes.io/plain=yes\n");
	CHECK(strstr(
	    warnings,
	    "rule 'd': label 'a.io/gone' skipped: element nosuch not found on feature dt.root"));
	CHECK(strstr(warnings, "label 'a.io/bad' skipped: value @dt is not in the form"));
	/* "Raspberry Pi 4 Model B" has spaces: not a label value */
	CHECK(strstr(warnings, "t.yaml:6:5: rule 'd': label skipped: invalid value 'Raspberry Pi 4 "
			       "Model B' for label 'a.io/model'"));
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

TEST(rules_invalid_and_denied_labels)
{
	capture_on();
	CHECK_STR(run("  - name: v\n    labels:\n"
		      "      \"a.io/bad key\": \"x\"\n"
		      "      kubernetes.io/hostname: \"x\"\n"
		      "      node.kubernetes.io/x: \"y\"\n"
		      "      sub.feature.node.kubernetes.io/ok: \"y\"\n"
		      "    matchFeatures:\n      - feature: dt.root\n",
		      NULL),
		  "sub.feature.node.kubernetes.io/ok=y\n");
	CHECK(strstr(warnings, "rule 'v': label skipped: invalid label key 'a.io/bad key'"));
	CHECK(strstr(warnings,
		     "label 'kubernetes.io/hostname' skipped: namespace not allowed by NFD"));
	CHECK(strstr(warnings, "label 'node.kubernetes.io/x' skipped"));
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

TEST(rules_templates)
{
	/* range over matched instances, in instance order, labels wins over the template */
	CHECK_STR(run("  - name: t\n"
		      "    labels: {g.io/d-0300-4680: \"static\"}\n"
		      "    labelsTemplate: |\n"
		      "      {{ range .pci.device }}g.io/d-{{ .class }}-{{ .device }}=true\n"
		      "      {{ end }}g.io/n={{ len .pci.device }}\n"
		      "      g.io/first={{ (index .pci.device 0).device }}\n"
		      "    matchFeatures:\n"
		      "      - feature: pci.device\n        matchExpressions:\n"
		      "          vendor: {op: In, value: [\"8086\"]}\n",
		      NULL),
		  "g.io/d-0300-4680=static\ng.io/d-0300-46a6=true\ng.io/first=46a6\ng.io/n=3\n");
	/* trim markers; .Name of flag elements */
	CHECK_STR(run("  - name: t\n"
		      "    labelsTemplate: \"{{- range .kernel.loadedmodule -}} m.io/{{ .Name "
		      "}}=on\\n{{ end }}\"\n"
		      "    matchFeatures:\n"
		      "      - feature: kernel.loadedmodule\n        matchExpressions:\n"
		      "          i915: {op: Exists}\n          vfio_pci: {op: Exists}\n",
		      NULL),
		  "m.io/i915=on\nm.io/vfio_pci=on\n");
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

/*
 * NFD executes templates with missingkey=error: a key that is not there (an
 * attribute one instance lacks, .Value of a flag, a feature the matcher did
 * not match on) fails the template, and the rule gives nothing, static labels
 * included.
 */
TEST(rules_template_missing_key_voids_rule)
{
	capture_on();
	CHECK_STR(
	    run("  - name: t\n    labels: {a.io/static: \"1\"}\n"
		"    labelsTemplate: \"{{ range .pci.device }}x.io/{{ .driver }}=1\\n{{ end }}\"\n"
		"    matchFeatures:\n"
		"      - feature: pci.device\n        matchExpressions:\n"
		"          vendor: {op: In, value: [\"8086\"]}\n",
		NULL),
	    "");
	CHECK(strstr(
	    warnings,
	    "t.yaml:6:5: rule 't' not applied: labelsTemplate: failed to expand template: template: "
	    ":1:31: executing \"\" at <.driver>: map has no entry for key \"driver\""));
	warnings[0] = '\0';
	CHECK_STR(
	    run("  - name: f\n"
		"    labelsTemplate: \"{{ range .kernel.loadedmodule }}m.io/{{ .Name }}={{ .Value "
		"}}\\n{{ end }}\"\n"
		"    matchFeatures:\n"
		"      - feature: kernel.loadedmodule\n        matchExpressions:\n"
		"          i915: {op: Exists}\n",
		NULL),
	    "");
	CHECK(strstr(warnings,
		     "rule 'f' not applied: labelsTemplate: failed to expand template: template: "
		     ":1:52: executing \"\" at <.Value>: map has no entry for key \"Value\""));
	warnings[0] = '\0';
	/* matchAny's matcher has no pci.device: NFD's template fails on it */
	CHECK_STR(run("  - name: a\n"
		      "    labelsTemplate: \"x.io/n={{ len .pci.device }}\"\n"
		      "    matchFeatures:\n      - feature: pci.device\n"
		      "    matchAny:\n      - matchFeatures:\n"
		      "          - feature: kernel.loadedmodule\n",
		      NULL),
		  "");
	CHECK(strstr(
	    warnings,
	    "rule 'a' not applied: labelsTemplate: failed to expand template: template: :1:18: "
	    "executing \"\" at <.pci.device>: map has no entry for key \"pci\""));
	/* with the instances where it is there, the same template works */
	CHECK_STR(
	    run("  - name: t\n    labels: {a.io/static: \"1\"}\n"
		"    labelsTemplate: \"{{ range .pci.device }}x.io/{{ .driver }}=1\\n{{ end }}\"\n"
		"    matchFeatures:\n"
		"      - feature: pci.device\n        matchExpressions:\n"
		"          driver: {op: Exists}\n",
		NULL),
	    "a.io/static=1\nx.io/i915=1\n");
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

/* nodeprobe's LabelCountRule fixes Intel's count: per id, not the first id with the total. */
TEST(rules_count_template)
{
	CHECK_STR(run_doc("apiVersion: nodeprobe.io/v1alpha1\nkind: LabelCountRule\n"
			  "metadata: {name: c}\nspec:\n  rules:\n"
			  "  - name: c\n"
			  "    countLabelsTemplate: |\n"
			  "      {{ range .pci.device }}gpu.intel.com/device-id.{{ .class }}-{{ "
			  ".device }}.count\n"
			  "      {{ end }}\n"
			  "    matchFeatures:\n"
			  "      - feature: pci.device\n        matchExpressions:\n"
			  "          vendor: {op: In, value: [\"8086\"]}\n",
			  NULL),
		  "gpu.intel.com/device-id.0300-4680.count=1\ngpu.intel.com/"
		  "device-id.0300-46a6.count=2\n");
	/* NFD's CRD has no such field: in a NodeFeatureRule it is a bad file */
	CHECK_STR(run("  - name: c\n    countLabelsTemplate: \"a\"\n", NULL),
		  "ERROR t.yaml:7:5: unknown field 'countLabelsTemplate' in rule 'c'");
	/* and a LabelCountRule has only the fields it uses */
	CHECK_STR(run_doc("apiVersion: nodeprobe.io/v1alpha1\nkind: LabelCountRule\n"
			  "metadata: {name: c}\nspec:\n  rules:\n  - name: c\n"
			  "    countLabelsTemplate: \"a\"\n    labels: {a: b}\n",
			  NULL),
		  "ERROR t.yaml:8:5: unknown field 'labels' in rule 'c'");
	CHECK_STR(run_doc("apiVersion: nodeprobe.io/v1alpha1\nkind: LabelCountRule\n"
			  "metadata: {name: c}\nspec:\n  rules:\n  - name: c\n",
			  NULL),
		  "ERROR t.yaml:6:5: LabelCountRule rule 'c' without 'countLabelsTemplate'");
	/* Intel's own template, in plain NFD format, keeps working (with its quirk) */
	CHECK_STR(run("  - name: intel\n"
		      "    labels:\n"
		      "    labelsTemplate: gpu.intel.com/device-id.0300-{{ (index .pci.device "
		      "0).device }}.count={{ len .pci.device }}\n"
		      "    matchFeatures:\n"
		      "      - feature: pci.device\n        matchExpressions:\n"
		      "          vendor: {op: In, value: [\"8086\"]}\n",
		      NULL),
		  "gpu.intel.com/device-id.0300-46a6.count=3\n");
}

TEST(rules_template_runtime_errors)
{
	capture_on();
	CHECK_STR(run("  - name: t\n    labels: {a.io/s: \"1\"}\n"
		      "    labelsTemplate: \"a.io/x={{ (index .pci.device 9).device }}\"\n"
		      "    matchFeatures:\n      - feature: pci.device\n",
		      NULL),
		  "");
	CHECK(strstr(warnings, "rule 't' not applied: labelsTemplate: failed to expand template: "
			       "template: :1:11: executing \"\" at <index .pci.device 9>: error "
			       "calling index: index out of range: 9"));
	warnings[0] = '\0';
	CHECK_STR(run("  - name: t\n    labelsTemplate: \"no equals sign\"\n"
		      "    matchFeatures:\n      - feature: pci.device\n",
		      NULL),
		  "");
	CHECK(strstr(warnings, "rule 't' not applied: labelsTemplate: failed to expand template: "
			       "missing value in expanded template line \"no equals sign\", "
			       "(format must be '<key>=<value>')"));
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

/*
 * A feature nodeprobe does not make is "no match", as NFD's "feature not available": a matchAny
 * branch on it fails alone, another branch labels (issue 20 item 6; main skipped the rule).
 */
TEST(rules_unmade_feature_is_no_match)
{
	int n = -1;

	capture_on();
	CHECK_STR(run("  - name: any\n    labels: {a.io/any: \"true\"}\n    matchAny:\n"
		      "      - matchFeatures:\n          - feature: local.label\n"
		      "            matchExpressions: {x: {op: Exists}}\n"
		      "      - matchFeatures:\n          - feature: kernel.loadedmodule\n"
		      "            matchExpressions: {i915: {op: Exists}}\n"
		      "  - name: after\n    labels: {a.io/after: \"@rule.matched.a.io/any\"}\n",
		      &n),
		  "a.io/after=true\na.io/any=true\n");
	CHECK_INT(n, 2);
	CHECK_STR(warnings, "");
	CHECK_STR(run("  - name: none\n    labels: {a.io/n: \"true\"}\n    matchAny:\n"
		      "      - matchFeatures:\n          - feature: local.label\n"
		      "      - matchFeatures:\n          - feature: kernel.loadedmodule\n"
		      "            matchExpressions: {nope: {op: Exists}}\n",
		      NULL),
		  "");
	CHECK(strstr(warnings, "t.yaml:6:5: rule 'none' did not match: nodeprobe makes no feature "
			       "'local.label' (its terms never match, as in NFD on a node without "
			       "it)"));
	/* DoesNotExist on an element of a feature the node lacks: no match either (NFD) */
	warnings[0] = '\0';
	CHECK_STR(run("  - name: dne\n    labels: {a.io/d: \"true\"}\n    matchFeatures:\n"
		      "      - feature: local.label\n        matchExpressions: {x: {op: "
		      "DoesNotExist}}\n",
		      NULL),
		  "");
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

/* Unsupported ops skip the rule with a warning. */
TEST(rules_unsupported_skipped)
{
	int n = -1;

	capture_on();
	CHECK_STR(run("  - name: sgx\n    labels: {a.io/sgx: \"true\"}\n    matchFeatures:\n"
		      "      - feature: local.label\n        matchExpressions:\n"
		      "          sgx.enabled: {op: IsTrue}\n"
		      "  - name: ge\n    labels: {a.io/ge: \"true\"}\n    matchFeatures:\n"
		      "      - feature: dt.root\n        matchExpressions:\n"
		      "          cores: {op: Ge, value: [\"1\"]}\n"
		      "  - name: ver\n    labels: {a.io/v: \"true\"}\n    matchFeatures:\n"
		      "      - feature: dt.root\n        matchExpressions:\n"
		      "          cores: {op: Gt, value: [\"5.15.0\"], type: version}\n"
		      "  - name: ok\n    labels: {a.io/ok: \"true\"}\n    extendedResources: "
		      "{a.io/r: \"1\"}\n"
		      "    matchFeatures:\n      - feature: pci.device\n",
		      &n),
		  "a.io/ge=true\na.io/ok=true\n");
	CHECK_INT(n, 2);
	CHECK(strstr(warnings, "t.yaml:6:5: rule 'sgx' did not match: nodeprobe makes no feature "
			       "'local.label'"));
	CHECK(!strstr(warnings, "rule 'ge' skipped"));
	CHECK(!strstr(warnings, "rule 'ver'")); /* 4.0.0 > 5.15.0 is false: no label, no warning */
	CHECK(strstr(warnings, "rule 'ok': 'extendedResources' ignored"));
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

/* Load errors: exact file:line:column messages. */
static const char *load_err(const char *yaml)
{
	static char msg[600];
	struct rules *r = rules_new();
	struct log_err err = {0};
	int n = rules_load_buffer(r, "bad.yaml", yaml, strlen(yaml), &err);

	snprintf(msg, sizeof(msg), "%s", n < 0 ? err.msg : "(loaded)");
	CHECK_INT(rules_count(r), 0);
	rules_free(r);
	return msg;
}

TEST(rules_malformed_files)
{
	CHECK_STR(
	    load_err(HDR
		     "  - name: x\n    matchFeatures:\n      - feature: pci.device\n"
		     "        matchExpressions:\n          vendor: {op: Inn, value: [\"8086\"]}\n"),
	    "bad.yaml:10:24: unknown op 'Inn'");
	CHECK_STR(load_err(HDR "  - labels: {a.io/x: \"y\"}\n"),
		  "bad.yaml:6:5: rule without 'name'");
	CHECK_STR(load_err(HDR "  - name: x\n    labels: [a, b]\n"),
		  "bad.yaml:7:13: labels must be a mapping, not a list");
	CHECK_STR(load_err(HDR "  - name: x\n    matchFeatures: {feature: pci.device}\n"),
		  "bad.yaml:7:20: matchFeatures must be a list, not a mapping");
	CHECK_STR(load_err(HDR "  - name: x\n    matchFeatres: []\n"),
		  "bad.yaml:7:5: unknown field 'matchFeatres' in rule 'x'");
	CHECK_STR(load_err(HDR "  - name: x\n    name: y\n"), "bad.yaml:7:5: duplicate key 'name'");
	CHECK_STR(load_err(HDR "  - name: [x]\n"),
		  "bad.yaml:6:11: name must be a string, not a list");
	CHECK_STR(load_err(HDR "  - name: x\n   labels: {}\n"),
		  "bad.yaml:7:4: did not find expected key while parsing a block mapping");
	CHECK_STR(load_err("apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\n"
			   "metadata: {name: a}\n"),
		  "bad.yaml:1:1: NodeFeatureRule without 'spec'");
	/* NFD's CRD schema: every field and type, as kube-apiserver checks them */
	CHECK_STR(load_err("apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\n"
			   "spec: {rules: []}\n"),
		  "bad.yaml:1:1: object without 'metadata.name'");
	CHECK_STR(load_err(HDR "  - name: x\n    labels: {a.io/x: true}\n"),
		  "bad.yaml:7:22: labels value must be a string, not a boolean 'true' (quote it)");
	CHECK_STR(load_err(HDR "  - name: x\n    vars: {v: 3}\n"),
		  "bad.yaml:7:15: vars value must be a string, not an integer '3' (quote it)");
	CHECK_STR(load_err(HDR
			   "  - name: x\n    matchFeatures:\n      - feature: dt.root\n"
			   "        matchExpressions:\n          cores: {op: Gt, value: [4]}\n"),
		  "bad.yaml:10:35: value item must be a string, not an integer '4' (quote it)");
	CHECK_STR(load_err(HDR "  - name: x\n    matchFeatures:\n      - feature: dt.root\n"
			       "        matchExpressions:\n          cores: {op: Any}\n"),
		  "bad.yaml:10:23: unknown op 'Any'");
	CHECK_STR(
	    load_err(HDR "  - name: x\n    matchFeatures:\n      - feature: dt.root\n"
			 "        matchExpressions:\n          cores: {op: In, values: [\"4\"]}\n"),
	    "bad.yaml:10:27: unknown field 'values' in match expression");
	CHECK_STR(load_err(HDR "  - name: x\n    taints: [{key: a.io/t, value: v}]\n"),
		  "bad.yaml:7:14: taint without 'effect'");
	CHECK_STR(load_err(HDR "  - name: x\n    taints: [{key: a.io/t, effect: NoSchedule, "
			       "timeAdded: yesterday}]\n"),
		  "bad.yaml:7:59: timeAdded 'yesterday' is not an RFC 3339 date-time");
	CHECK_STR(load_err(HDR "  - name: x\nstatus: {}\n"),
		  "bad.yaml:7:1: unknown field 'status' in NodeFeatureRule");
	CHECK_STR(load_err(HDR "  - name: x\n  extra: 1\n"),
		  "bad.yaml:7:3: unknown field 'extra' in spec");
	CHECK_STR(load_err(HDR "  - name: \"unterminated\n"),
		  "bad.yaml:7:1: found unexpected end of stream while scanning a quoted scalar");
	/* an error in the second document: nothing of the first is kept */
	CHECK_STR(load_err(HDR "  - name: ok\n---\n" HDR "  - name: x\n    labels: 3\n"),
		  "bad.yaml:14:13: labels must be a mapping, not a string");
}

TEST(rules_multi_document_and_other_kinds)
{
	static const char y[] =
	    "---\n" HDR "  - name: a\n    labels: {a.io/a: \"1\"}\n"
	    "---\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
	    "---\napiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata: {name: "
	    "u}\nspec:\n  rules:\n  - name: b\n    labels: {a.io/b: \"2\"}\n"
	    "    matchFeatures:\n      - feature: pci.device\n"
	    "...\n";
	struct rules *r = rules_new();
	struct feat_set *fs = host();
	struct label_set *ls = label_set_new();
	struct log_err err = {0};

	capture_on();
	CHECK_INT(rules_load_buffer(r, "m.yaml", y, strlen(y), &err), 2);
	CHECK(
	    strstr(warnings, "m.yaml:10:13: apiVersion 'kustomize.config.k8s.io/v1beta1' is not"));
	CHECK_INT(rules_eval(r, fs, ls, &err), 2);
	CHECK_STR(label_set_get(ls, "a.io/a"), "1");
	CHECK_STR(label_set_get(ls, "a.io/b"), "2");
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
	label_set_free(ls);
	feat_set_free(fs);
	rules_free(r);
}

TEST(rules_load_path_dir_sorted)
{
	char dir[64], path[128];
	struct rules *r = rules_new();
	struct feat_set *fs = host();
	struct label_set *ls = label_set_new();
	struct log_err err = {0};
	FILE *fp;

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	snprintf(path, sizeof(path), "%s/b.yml", dir);
	fp = fopen(path, "w");
	/* object "aaa" in the file loaded last */
	fputs("apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata: {name: aaa}\n"
	      "spec:\n  rules:\n  - name: b\n    labels: {a.io/v: b, a.io/b: b}\n",
	      fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/a.yaml", dir);
	fp = fopen(path, "w");
	fputs("apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata: {name: zzz}\n"
	      "spec:\n  rules:\n  - name: a\n    labels: {a.io/v: a}\n",
	      fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/.hidden.yaml", dir);
	fp = fopen(path, "w");
	fputs("garbage: [", fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	fp = fopen(path, "w");
	fputs("garbage: [", fp);
	fclose(fp);
	CHECK_INT(rules_load_path(r, dir, &err), 2);
	CHECK_INT(rules_eval(r, fs, ls, &err), 2);
	/* b.yml is loaded after a.yaml, but nfd-master runs object aaa before zzz */
	CHECK_STR(label_set_get(ls, "a.io/v"), "a");
	CHECK_STR(label_set_get(ls, "a.io/b"), "b");
	CHECK(rules_load_path(r, "/nonexistent/rules.yaml", &err) == -ENOENT);
	CHECK_STR(err.msg, "/nonexistent/rules.yaml: No such file or directory");
	label_set_free(ls);
	feat_set_free(fs);
	rules_free(r);
}

/* Every built-in file loads without warnings, and none is skipped. */
TEST(rules_builtin_load_clean)
{
	struct rules *r = rules_new();
	struct log_err err = {0};

	capture_on();
	CHECK(rules_builtin_count >= 4);
	CHECK(rules_load_builtin(r, &err) > 15);
	CHECK_STR(warnings, "");
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
	rules_free(r);
}

/* Intel's own files as published, in plain NFD format: they load and evaluate. */
TEST(rules_intel_upstream_file)
{
	static const char y[] =
	    "apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata:\n"
	    "  name: intel-gpu-platform-labeling\nspec:\n  rules:\n"
	    "  - extendedResources:\n"
	    "      gpu.intel.com/millicores: \"@local.label.gpu.intel.com/millicores\"\n"
	    "    matchFeatures:\n      - feature: local.label\n        matchExpressions:\n"
	    "          gpu.intel.com/millicores: {op: Exists}\n"
	    "    name: intel.gpu.fractionalresources\n"
	    "  - labels:\n    labelsTemplate: |\n"
	    "      {{ range .pci.device }}gpu.intel.com/device-id.{{ .class }}-{{ .device "
	    "}}.present=true\n"
	    "      {{ end }}\n"
	    "    matchFeatures:\n      - feature: pci.device\n        matchExpressions:\n"
	    "          class:\n            op: In\n            value:\n            - \"0300\"\n"
	    "            - \"0380\"\n          vendor:\n            op: In\n            value:\n"
	    "            - \"8086\"\n    name: intel.gpu.generic.deviceid\n";
	struct rules *r = rules_new();
	struct feat_set *fs = host();
	struct label_set *ls = label_set_new();
	struct log_err err = {0};

	capture_on();
	CHECK_INT(rules_load_buffer(r, "intel.yaml", y, strlen(y), &err), 2);
	CHECK(strstr(warnings,
		     "intel.yaml:7:5: rule 'intel.gpu.fractionalresources': "
		     "'extendedResources' ignored: a features.d file carries labels only"));
	CHECK_INT(rules_eval(r, fs, ls, &err), 2);
	CHECK(strstr(warnings, "intel.yaml:7:5: rule 'intel.gpu.fractionalresources' did not "
			       "match: nodeprobe makes no feature 'local.label'"));
	CHECK_STR(label_set_get(ls, "gpu.intel.com/device-id.0300-46a6.present"), "true");
	CHECK_STR(label_set_get(ls, "gpu.intel.com/device-id.0300-4680.present"), "true");
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
	label_set_free(ls);
	feat_set_free(fs);
	rules_free(r);
}

/* YAML aliases cannot blow up the work: a budget of nodes and comparisons per document. */
TEST(rules_alias_bomb_bounded)
{
	struct strbuf sb = STRBUF_INIT(1 << 20);
	int i;

	sb_add(&sb, HDR "  - name: x\n    matchAny:\n      - &m {matchFeatures: [{feature: "
			"pci.device, matchExpressions: {");
	for (i = 0; i < 200; i++)
		sb_addf(&sb, "%sk%d: {op: Exists}", i ? ", " : "", i);
	sb_add(&sb, "}}]}\n");
	for (i = 0; i < 600; i++)
		sb_add(&sb, "      - *m\n");
	CHECK_STR(load_err(sb.buf),
		  "bad.yaml:8:69: document too complex: more than 10000000 steps to "
		  "read it (the limit): split it into smaller documents, or use "
		  "fewer aliases");
	sb_free(&sb);
}

/*
 * Each distinct pattern is compiled once (issue 17: an aliased list was compiled again for
 * every rule), and there are at most 10000 distinct ones over every file loaded: the rule
 * that would pass that is skipped with a warning (issue 27: it failed the load).
 */
TEST(rules_regex_distinct_bounded)
{
	struct strbuf sb = STRBUF_INIT(1 << 20);
	struct rules *r = rules_new();
	struct log_err err = {0};
	int i;

	sb_add(&sb, HDR "  - name: a\n    matchFeatures:\n      - feature: pci.device\n"
			"        matchExpressions:\n          vendor: {op: InRegexp, value: [");
	for (i = 0; i < 6000; i++)
		sb_addf(&sb, "%s\"^%d$\"", i ? ", " : "", i);
	sb_add(&sb, "]}\n");
	REQUIRE_INT(rules_load_buffer(r, "a.yaml", sb.buf, sb.len, &err), 1);
	REQUIRE_INT(rules_load_buffer(r, "b.yaml", sb.buf, sb.len, &err), 1); /* the same 6000 */
	sb_reset(&sb);
	sb_add(&sb,
	       "apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata: {name: "
	       "c}\nspec:\n  rules:\n  - name: c\n    matchFeatures:\n      - feature: pci.device\n"
	       "        matchExpressions:\n          vendor: {op: InRegexp, value: [");
	for (i = 0; i < 4001; i++)
		sb_addf(&sb, "%s\"^x%d$\"", i ? ", " : "", i);
	sb_add(&sb, "]}\n");
	capture_on();
	CHECK_INT(rules_load_buffer(r, "c.yaml", sb.buf, sb.len, &err), 0);
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
	CHECK_STR(warnings, "c.yaml:6:5: rule 'c' not applied: InRegexp value '^x4000$': more "
			    "than 10000 distinct regular expressions in the rules loaded (the "
			    "limit): join patterns with '|'\n");
	CHECK_INT(rules_count(r), 1); /* b.yaml's object replaced a.yaml's; c.yaml added none */
	rules_free(r);
	sb_free(&sb);
}

/* Nesting, execution steps and a rule's output are bounded; each fails that rule only. */
TEST(rules_template_limits)
{
	struct strbuf sb = STRBUF_INIT(1 << 16);
	int i;

	capture_on();
	sb_add(&sb, "  - name: deep\n    labelsTemplate: \"");
	for (i = 0; i < 40; i++)
		sb_add(&sb, "{{ range $.pci.device }}");
	for (i = 0; i < 40; i++)
		sb_add(&sb, "{{ end }}");
	sb_add(&sb, "\"\n    matchFeatures:\n      - feature: pci.device\n"
		    "        matchExpressions: {vendor: {op: Exists}}\n");
	CHECK_STR(run(sb.buf, NULL), "");
	/* 3^40 turns: the step budget (pkg/gotmpl's GOTMPL_STEPS_MAX) ends it */
	CHECK(strstr(warnings,
		     "rule 'deep' not applied: labelsTemplate: failed to expand template: "));
	CHECK(strstr(warnings, "steps"));
	sb_reset(&sb);
	warnings[0] = '\0';
	sb_add(&sb, "  - name: deeper\n    labelsTemplate: \"");
	for (i = 0; i < 120; i++)
		sb_add(&sb, "{{ range .pci.device }}");
	for (i = 0; i < 120; i++)
		sb_add(&sb, "{{ end }}");
	sb_add(&sb, "\"\n    matchFeatures:\n      - feature: pci.device\n"
		    "  - name: ok\n    labels: {a.io/ok: \"1\"}\n");
	CHECK_STR(run(sb.buf, NULL), "a.io/ok=1\n");
	CHECK(strstr(warnings,
		     "rule 'deeper' not applied: labelsTemplate: failed to parse template: "
		     "invalid template: "));
	sb_reset(&sb);
	warnings[0] = '\0';
	/* 4200 devices: 4200 distinct keys, more than a rule may give */
	{
		struct rules *r = rules_new();
		struct feat_set *fs = feat_set_new();
		struct label_set *ls = label_set_new();
		struct log_err err = {0};

		for (i = 0; i < 4200; i++) {
			char id[8];

			snprintf(id, sizeof(id), "%04x", i);
			feat_instance_set(feat_instance_add(fs, "pci.device"), "device", id);
		}
		sb_add(&sb, HDR "  - name: wide\n    labelsTemplate: \"{{ range .pci.device }}"
				"a.io/{{ .device }}=1\\n{{ end }}\"\n"
				"    matchFeatures:\n      - feature: pci.device\n"
				"        matchExpressions: {}\n");
		REQUIRE_INT(rules_load_buffer(r, "w.yaml", sb.buf, sb.len, &err), 1);
		CHECK_INT(rules_eval(r, fs, ls, &err), 0);
		CHECK(
		    strstr(warnings,
			   "rule 'wide' not applied: labelsTemplate gives more than 4096 entries"));
		rules_free(r);
		feat_set_free(fs);
		label_set_free(ls);
	}
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
	sb_free(&sb);
}

/* Go trims any white space around action words and after "{{-" / before "-}}". */
TEST(rules_template_whitespace)
{
	CHECK_STR(run("  - name: ws\n"
		      "    labelsTemplate: \"{{-\\trange .pci.device\\t-}}\\n  w.io/{{\\n.device "
		      "}}=1\\n{{ end }}\"\n"
		      "    matchFeatures:\n"
		      "      - feature: pci.device\n        matchExpressions:\n"
		      "          class: {op: In, value: [\"0302\"]}\n",
		      NULL),
		  "w.io/1d10=1\n");
}

/*
 * NFD's MatchMulti: the flag and attribute elements matched by matchExpressions
 * are sorted by name, a flag element has no Value ("<no value>"), an attribute
 * element always has one, "" when the attribute is absent (DoesNotExist).
 */
TEST(rules_matched_elements_as_nfd)
{
	/* expressions listed vfio_pci first: element 0 is still i915 */
	CHECK_STR(
	    run("  - name: o\n"
		"    labelsTemplate: \"a.io/first={{ (index .kernel.loadedmodule 0).Name }}\"\n"
		"    matchFeatures:\n"
		"      - feature: kernel.loadedmodule\n        matchExpressions:\n"
		"          vfio_pci: {op: Exists}\n          i915: {op: Exists}\n",
		NULL),
	    "a.io/first=i915\n");
	CHECK_STR(
	    run("  - name: v\n"
		"    labelsTemplate: \"{{ range .dt.root }}a.io/{{ .Name }}={{ .Value }}\\n{{ "
		"end }}\"\n"
		"    matchFeatures:\n"
		"      - feature: dt.root\n        matchExpressions:\n"
		"          secure: {op: IsTrue}\n          nosuch: {op: DoesNotExist}\n"
		"          board: {op: Exists}\n",
		NULL),
	    "a.io/board=rpi-4\na.io/nosuch=\na.io/secure=true\n");
}

/*
 * InRegexp is Go's regexp (RE2 syntax, unanchored), as NFD evaluates it: \\d,
 * (?i), lazy quantifiers, escapes in brackets, \\x, \\pN all mean what they mean
 * in Go (they were skipped while POSIX regex.h evaluated them); a pattern Go
 * refuses (a back-reference) is a bad file, as NFD's validation rejects it.
 */
TEST(rules_go_regexp_evaluated)
{
	static const struct {
		const char *re, *want;
	} c[] = {
	    {"^\\\\d+$", "a.io/x=y\n"},
	    {"(?i)^raspberry", "a.io/x=y\n"},
	    {"^[0-9]+?$", "a.io/x=y\n"},
	    {"^[\\\\d]$", "a.io/x=y\n"},
	    {"\\\\x34", "a.io/x=y\n"},
	    {"^\\\\pN$", "a.io/x=y\n"},
	    {"^\\\\D$", ""},
	    {"(?i)^RASPBERRY PI 5", ""},
	    {"Pi", "a.io/x=y\n"}, /* unanchored, as regexp.MatchString */
	};
	char y[512];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(y, sizeof(y),
			 ONE("      - feature: dt.root\n        matchExpressions:\n"
			     "          %s: {op: InRegexp, value: [\"%s\"]}\n"),
			 strstr(c[i].re, "aspberry") || !strcmp(c[i].re, "Pi") ||
				 strstr(c[i].re, "RASP")
			     ? "model"
			     : "cores",
			 c[i].re);
		if (strcmp(run(y, NULL), c[i].want) != 0)
			HFAIL_("%s: got '%s'", c[i].re, run(y, NULL));
	}
	CHECK_STR(warned(ONE("      - feature: pci.device\n        matchExpressions:\n"
			     "          vendor: {op: InRegexp, value: [\"(a)\\\\1\"]}\n")),
		  "t.yaml:6:5: rule 'x' not applied: invalid regular expression '(a)\\1': "
		  "invalid escape sequence\n");
}

/* The pattern that made glibc's regcomp grow past 13 GB: refused by RE2's repeat limit. */
TEST(rules_hostile_regexp_refused)
{
	CHECK_STR(warned(ONE("      - feature: pci.device\n        matchExpressions:\n"
			     "          vendor: {op: InRegexp, value: "
			     "[\"((((a{1,255}){1,255}){1,255}){1,255})\"]}\n")),
		  "t.yaml:6:5: rule 'x' not applied: invalid regular expression "
		  "'((((a{1,255}){1,255}){1,255}){1,255})': invalid repetition size\n");
}

/* Gt Ge Lt Le GtLt GeLe on integers, NFD's semantics (expression.go): Ge/Le/GeLe inclusive. */
TEST(rules_numeric_ops)
{
	static const struct {
		const char *expr, *want;
	} c[] = {
	    {"{op: Gt, value: [\"4\"]}", ""},
	    {"{op: Gt, value: [\"3\"]}", "a.io/x=y\n"},
	    {"{op: Ge, value: [\"4\"]}", "a.io/x=y\n"},
	    {"{op: Ge, value: [\"5\"]}", ""},
	    {"{op: Lt, value: [\"4\"]}", ""},
	    {"{op: Le, value: [\"4\"]}", "a.io/x=y\n"},
	    {"{op: Le, value: [\"3\"]}", ""},
	    {"{op: GtLt, value: [\"4\", \"5\"]}", ""},
	    {"{op: GeLe, value: [\"4\", \"5\"]}", "a.io/x=y\n"},
	    {"{op: GeLe, value: [\"1\", \"4\"]}", "a.io/x=y\n"},
	    {"{op: GeLe, value: [\"5\", \"9\"]}", ""},
	};
	char y[512];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(y, sizeof(y),
			 ONE("      - feature: dt.root\n        matchExpressions:\n"
			     "          cores: %s\n"),
			 c[i].expr);
		if (strcmp(run(y, NULL), c[i].want) != 0)
			HFAIL_("cores=4 %s: got '%s'", c[i].expr, run(y, NULL));
	}
	CHECK_STR(warned(ONE("      - feature: pci.device\n        matchExpressions:\n"
			     "          vendor: {op: GeLe, value: [\"5\", \"5\"]}\n")),
		  "t.yaml:6:5: rule 'x' not applied: op GeLe: the first value must be less than "
		  "the second\n");
}

/* The features NFD's documentation examples run on (nfd-doc-examples.yaml). */
static struct feat_set *doc_host(void)
{
	struct feat_set *fs = feat_set_new();
	struct feat *d;

	feat_flag_add(fs, "cpu.cpuid", "AVX512F");
	feat_flag_add(fs, "cpu.cpuid", "AESNI");
	feat_flag_add(fs, "cpu.cpuid", "AVX");
	feat_flag_add(fs, "cpu.cpuid", "AVX2");
	feat_attr_set(fs, "kernel.version", "full", "5.15.0-91-generic");
	feat_attr_set(fs, "kernel.version", "major", "5");
	feat_attr_set(fs, "kernel.version", "minor", "15");
	feat_attr_set(fs, "kernel.version", "revision", "0");
	feat_attr_set(fs, "kernel.config", "LSM", "apparmor");
	feat_attr_set(fs, "kernel.selinux", "enabled", "true");
	feat_flag_add(fs, "kernel.loadedmodule", "kmod-2");
	feat_flag_add(fs, "kernel.loadedmodule", "e1000");
	feat_attr_set(fs, "system.osrelease", "ID", "opensuse-leap");
	feat_attr_set(fs, "system.osrelease", "NAME", "openSUSE Leap");
	feat_attr_set(fs, "system.osrelease", "VERSION_ID", "15.5");
	feat_attr_set(fs, "system.osrelease", "VERSION_ID.major", "15");
	feat_attr_set(fs, "system.osrelease", "VERSION_ID.minor", "5");
	d = feat_instance_add(fs, "pci.device");
	feat_instance_set(d, "vendor", "8086");
	feat_instance_set(d, "device", "1572");
	feat_instance_set(d, "class", "0200");
	d = feat_instance_add(fs, "pci.device");
	feat_instance_set(d, "vendor", "0fff");
	feat_instance_set(d, "device", "1234");
	feat_instance_set(d, "class", "0200");
	return fs;
}

/*
 * NFD's documentation examples, every op, vars, varsTemplate, rule.matched and
 * object order, in one file: exactly the labels the docs say (the .labels file).
 */
TEST(rules_nfd_doc_examples)
{
	struct strbuf want = STRBUF_INIT(1 << 16), got = STRBUF_INIT(1 << 16);
	struct rules *r = rules_new();
	struct feat_set *fs = doc_host();
	struct label_set *ls = label_set_new();
	struct log_err err = {0};
	const char *p;

	capture_on();
	REQUIRE(sb_read_file(&want, "test/data/rules/nfd-doc-examples.labels") > 0);
	REQUIRE(rules_load_path(r, "test/data/rules/nfd-doc-examples.yaml", &err) > 30);
	CHECK_INT(rules_eval(r, fs, ls, &err), 30);
	label_set_format(ls, &got);
	for (p = want.buf; *p == '#';) /* drop the comment lines */
		p = strchr(p, '\n') + 1;
	CHECK_STR(got.buf, p);
	CHECK_STR(warnings, "");
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
	sb_free(&want);
	sb_free(&got);
	label_set_free(ls);
	feat_set_free(fs);
	rules_free(r);
}

/*
 * NFD's version type: Masterminds/semver's coerced form, then major.minor.patch
 * only (../shared/reference/nfd.md 10.5, verified there against the Go code).
 * Seen from outside: "v GeLe [X, X]" holds iff the value is version X; a
 * value that is no version fails the rule.
 */
TEST(rules_version_semantics)
{
	static const struct {
		const char *in, *is; /* value, the version it is (NULL: none) */
	} c[] = {
	    {"6.1.0-50-arm64", "6.1.0"},
	    {"22.04", "22.4.0"},
	    {"v1.2", "1.2.0"},
	    {"5", "5.0.0"},
	    {"5.15.0", "5.15.0"},
	    {"1.2.3-rc.1+build.5", "1.2.3"},
	    {"007.1", "7.1.0"},
	    {"1.2.3.4", NULL},
	    {" 1.2", NULL},
	    {"5.4.0-050", NULL},
	    {"5.14.0-362.8.1.el9_3.x86_64", NULL},
	    {"6.5.6-300.fc39.x86_64", NULL},
	    {"6.1.0_rpt-rpi-v8", NULL},
	    {"", NULL},
	    {"v", NULL},
	    {"1.", NULL},
	    {"1.2.3-", NULL},
	    {"1.2.3+", NULL},
	    {"99999999999999999999", NULL},
	};
	char y[512];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct feat_set *fs = feat_set_new();
		struct label_set *ls = label_set_new();
		struct rules *r = rules_new();
		struct log_err err = {0};

		snprintf(y, sizeof(y),
			 HDR "  - name: v\n    labels: {a.io/v: \"1\"}\n    matchFeatures:\n"
			     "      - feature: a.b\n        matchExpressions:\n"
			     "          v: {op: GeLe, value: [\"%s\", \"%s\"], type: version}\n",
			 c[i].is ? c[i].is : "0", c[i].is ? c[i].is : "0");
		feat_attr_set(fs, "a.b", "v", c[i].in);
		capture_on();
		REQUIRE_INT(rules_load_buffer(r, "v.yaml", y, strlen(y), &err), 1);
		rules_eval(r, fs, ls, &err);
		log_set_fn(NULL, NULL, LOG_LVL_WARN);
		if (c[i].is && !label_set_get(ls, "a.io/v"))
			HFAIL_("'%s' is not %s: %s", c[i].in, c[i].is, warnings);
		if (!c[i].is && !strstr(warnings, "not applied: not a version"))
			HFAIL_("'%s' taken as a version", c[i].in);
		rules_free(r);
		label_set_free(ls);
		feat_set_free(fs);
	}
}

/* The rule: kernel.version full Gt 5.15.0 as a version, on constructed features. */
static const char *kernel_rule(const char *full)
{
	static char out[256];
	struct rules *r = rules_new();
	struct feat_set *fs = feat_set_new();
	struct label_set *ls = label_set_new();
	struct strbuf sb = STRBUF_INIT(4096);
	struct log_err err = {0};
	static const char y[] =
	    HDR "  - name: new-kernel\n    labels: {a.io/new-kernel: \"true\"}\n"
		"    matchFeatures:\n      - feature: kernel.version\n"
		"        matchExpressions:\n"
		"          full: {op: Gt, value: [\"5.15.0\"], type: version}\n";

	feat_attr_set(fs, "kernel.version", "full", full);
	CHECK_INT(rules_load_buffer(r, "k.yaml", y, strlen(y), &err), 1);
	rules_eval(r, fs, ls, &err);
	label_set_format(ls, &sb);
	snprintf(out, sizeof(out), "%s", sb.buf);
	sb_free(&sb);
	label_set_free(ls);
	feat_set_free(fs);
	rules_free(r);
	return out;
}

TEST(rules_kernel_version_type_version)
{
	capture_on();
	CHECK_STR(kernel_rule("6.1.0-50-arm64"), "a.io/new-kernel=true\n");
	CHECK_STR(kernel_rule("5.15.1"), "a.io/new-kernel=true\n");
	CHECK_STR(kernel_rule("5.15.0-91-generic"), ""); /* 5.15.0 is not > 5.15.0 */
	CHECK_STR(kernel_rule("5.4.0"), "");
	CHECK_STR(kernel_rule("5.16"), "a.io/new-kernel=true\n");
	CHECK_STR(kernel_rule("10.0.0"), "a.io/new-kernel=true\n"); /* not a string compare */
	CHECK_STR(warnings, "");
	/* RHEL's release is not a version for NFD: the rule fails, the run goes on */
	CHECK_STR(kernel_rule("5.14.0-362.8.1.el9_3.x86_64"), "");
	CHECK_STR(warnings, "k.yaml:6:5: rule 'new-kernel' not applied: not a version "
			    "'5.14.0-362.8.1.el9_3.x86_64'\n");
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

/*
 * NFD (expression.go) reports a bad expression only when it evaluates it on an
 * element that is there; Exists/DoesNotExist with values always; flags never
 * (they have no value). The rule then gives nothing, the others still apply.
 */
TEST(rules_bad_expressions_fail_when_evaluated)
{
	/* present element: the rule fails with NFD's reason */
	CHECK_STR(warned(ONE("      - feature: dt.root\n        matchExpressions:\n"
			     "          cores: {op: Gt, value: [\"four\"]}\n")),
		  "t.yaml:6:5: rule 'x' not applied: op Gt: 'four' is not an integer\n");
	CHECK_STR(warned(ONE("      - feature: dt.root\n        matchExpressions:\n"
			     "          cores: {op: In}\n")),
		  "t.yaml:6:5: rule 'x' not applied: op In needs at least one value\n");
	CHECK_STR(warned(ONE("      - feature: dt.root\n        matchExpressions:\n"
			     "          cores: {op: GtLt, value: [\"5\", \"3\"]}\n")),
		  "t.yaml:6:5: rule 'x' not applied: op GtLt: the first value must be less than "
		  "the second\n");
	CHECK_STR(warned(ONE("      - feature: dt.root\n        matchExpressions:\n"
			     "          cores: {op: Gt, value: [\"1\"], type: semver}\n")),
		  "t.yaml:6:5: rule 'x' not applied: op Gt: unknown type 'semver'\n");
	CHECK_STR(warned(ONE("      - feature: dt.root\n        matchExpressions:\n"
			     "          model: {op: Gt, value: [\"1\"]}\n")),
		  "t.yaml:6:5: rule 'x' not applied: not a number 'Raspberry Pi 4 Model B'\n");
	CHECK_STR(warned(ONE("      - feature: dt.root\n        matchExpressions:\n"
			     "          cores: {op: IsTrue, value: [\"x\"]}\n")),
		  "t.yaml:6:5: rule 'x' not applied: op IsTrue takes no value\n");
	/* absent element: no error, no match */
	CHECK_STR(warned(ONE("      - feature: dt.root\n        matchExpressions:\n"
			     "          nosuch: {op: Gt, value: [\"four\"]}\n")),
		  "");
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          nosuch: {op: In}\n"),
		      NULL),
		  "");
	/* Exists with a value: an error even where the element is absent */
	CHECK_STR(warned(ONE("      - feature: dt.root\n        matchExpressions:\n"
			     "          nosuch: {op: DoesNotExist, value: [\"a\"]}\n")),
		  "t.yaml:6:5: rule 'x' not applied: op DoesNotExist takes no value\n");
	/* a flag has no value: In/Gt are false without any check */
	CHECK_STR(warned(ONE("      - feature: kernel.loadedmodule\n        matchExpressions:\n"
			     "          i915: {op: Gt, value: [\"four\"]}\n")),
		  "");
	/* type is read by the numeric ops only */
	CHECK_STR(run(ONE("      - feature: dt.root\n        matchExpressions:\n"
			  "          board: {op: In, value: [\"rpi-4\"], type: whatever}\n"),
		      NULL),
		  "a.io/x=y\n");
	/* a failed rule leaves the others alone */
	CHECK_STR(run("  - name: bad\n    labels: {a.io/bad: \"1\"}\n    matchFeatures:\n"
		      "      - feature: dt.root\n        matchExpressions:\n"
		      "          cores: {op: Lt, value: [\"x\"]}\n"
		      "  - name: good\n    labels: {a.io/good: \"1\"}\n",
		      NULL),
		  "a.io/good=1\n");
}

/* rule.matched: earlier rules only, labels as written then vars; NFD's first-rule quirk. */
TEST(rules_backreferences)
{
	/* before any rule ran there is no rule.matched: even DoesNotExist is false */
	CHECK_STR(run("  - name: r0\n    labels: {a.io/r0: \"1\"}\n    matchFeatures:\n"
		      "      - feature: rule.matched\n        matchExpressions:\n"
		      "          x: {op: DoesNotExist}\n",
		      NULL),
		  "");
	/* after one (even non-matching) rule it exists, empty */
	CHECK_STR(run("  - name: none\n    labels: {a.io/none: \"1\"}\n    matchFeatures:\n"
		      "      - feature: pci.device\n        matchExpressions:\n"
		      "          vendor: {op: In, value: [\"ffff\"]}\n"
		      "  - name: r1\n    labels: {a.io/r1: \"1\"}\n    matchFeatures:\n"
		      "      - feature: rule.matched\n        matchExpressions:\n"
		      "          a.io/none: {op: DoesNotExist}\n",
		      NULL),
		  "a.io/r1=1\n");
	/* labels as written ('@' not resolved), then vars; a later rule cannot be seen */
	CHECK_STR(run("  - name: a\n    labels: {k: \"@dt.root.board\", v: \"1\"}\n"
		      "    vars: {v: \"2\"}\n"
		      "  - name: b\n    labelsTemplate: \"{{ range .rule.matched }}b.io/{{ .Name "
		      "}}={{ .Value }}\\n{{ end }}\"\n"
		      "    matchFeatures:\n      - feature: rule.matched\n"
		      "        matchName: {op: In, value: [k, v, later]}\n"
		      "  - name: later\n    vars: {later: \"1\"}\n",
		      NULL),
		  "b.io/k=rpi-4\nb.io/v=2\nfeature.node.kubernetes.io/k=rpi-4\n"
		  "feature.node.kubernetes.io/v=1\n");
}

/* '@' values are read after every rule ran: from rule.matched, later rules count too. */
TEST(rules_dynamic_value_after_all_rules)
{
	CHECK_STR(run("  - name: a\n    labels: {a.io/late: \"@rule.matched.v\"}\n"
		      "  - name: b\n    vars: {v: \"seen\"}\n",
		      NULL),
		  "a.io/late=seen\n");
}

/* Two objects, one label: nfd-master's order (metadata.name), not the file order, decides. */
TEST(rules_objects_ordered_by_name)
{
	static const char y[] =
	    "apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata: {name: "
	    "nodeprobe.b}\nspec:\n  rules:\n  - name: b\n    labels: {a.io/who: dot-b}\n---\n"
	    "apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata: {name: "
	    "nodeprobe-z}\nspec:\n  rules:\n  - name: z\n    labels: {a.io/who: dash-z}\n";

	/* Go byte order: '-' < '.', so nodeprobe-z runs first and nodeprobe.b wins */
	CHECK_STR(run_doc(y, NULL), "a.io/who=dot-b\n");
	CHECK_STR(
	    run_doc("apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\n"
		    "metadata: {name: Upper}\nspec: {rules: []}\n",
		    NULL),
	    "ERROR t.yaml:3:18: metadata.name 'Upper' is not a DNS-1123 subdomain (lower case, "
	    "digits, '-' and '.')");
}

/* The same metadata.name twice: the later object replaces the earlier (a second apply). */
TEST(rules_same_name_replaces)
{
	static const char y[] = HDR "  - name: one\n    labels: {a.io/one: \"1\"}\n---\n" HDR
				    "  - name: two\n    labels: {a.io/two: \"2\"}\n";
	struct rules *r = rules_new();
	struct log_err err = {0};

	capture_on();
	CHECK_STR(run_doc(y, NULL), "a.io/two=2\n");
	CHECK(strstr(warnings, "t.yaml:9:1: NodeFeatureRule 't' replaces the earlier one of that "
			       "name"));
	/* across files too */
	warnings[0] = '\0';
	CHECK_INT(rules_load_buffer(r, "1.yaml", y, strlen(y), &err), 1);
	CHECK_INT(rules_load_buffer(r, "2.yaml", y, strlen(y), &err), 1);
	CHECK_INT(rules_count(r), 1);
	CHECK(strstr(warnings, "2.yaml: NodeFeatureRule 't' replaces the one of that name loaded "
			       "before"));
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
	rules_free(r);
}

/* Any domain.feature works as soon as a source fills it: flags, attributes, instances. */
TEST(rules_any_feature_name)
{
	static const char y[] =
	    HDR "  - name: usb\n    labelsTemplate: \"{{ range .usb.device }}u.io/{{ .vendor "
		"}}-{{ .device }}={{ .class }}\\n{{ end }}\"\n"
		"    matchFeatures:\n      - feature: usb.device\n        matchExpressions:\n"
		"          vendor: {op: In, value: [\"1a6e\", \"18d1\"]}\n"
		"  - name: os\n    labels: {o.io/os: \"@system.osrelease.ID\"}\n"
		"    matchFeatures:\n      - feature: system.osrelease\n"
		"        matchExpressions:\n          VERSION_ID: {op: Ge, value: [\"1.8\"], type: "
		"version}\n"
		"  - name: cpu\n    labels: {c.io/sgx: \"true\"}\n    matchFeatures:\n"
		"      - feature: CPU.cpuid\n        matchExpressions:\n"
		"          SGX: {op: Exists}\n          SGXLC: {op: Exists}\n"
		"  - name: vendor\n    labels: {v.io/x: \"1\"}\n    matchFeatures:\n"
		"      - feature: vendor.flags\n        matchName: {op: Exists}\n";
	struct feat_set *fs = feat_set_new();
	struct label_set *ls = label_set_new();
	struct rules *r = rules_new();
	struct strbuf sb = STRBUF_INIT(4096);
	struct log_err err = {0};
	struct feat *d;

	d = feat_instance_add(fs, "usb.device");
	feat_instance_set(d, "vendor", "1a6e");
	feat_instance_set(d, "device", "089a");
	feat_instance_set(d, "class", "ff");
	d = feat_instance_add(fs, "usb.device");
	feat_instance_set(d, "vendor", "10c4");
	feat_instance_set(d, "device", "ea60");
	feat_instance_set(d, "class", "ff");
	feat_attr_set(fs, "system.osrelease", "ID", "talos");
	feat_attr_set(fs, "system.osrelease", "VERSION_ID", "v1.8.3");
	feat_flag_add(fs, "cpu.cpuid", "SGX");
	feat_flag_add(fs, "cpu.cpuid", "SGXLC");
	capture_on();
	CHECK_INT(rules_load_buffer(r, "f.yaml", y, strlen(y), &err), 4);
	CHECK_INT(rules_eval(r, fs, ls, &err), 3);
	label_set_format(ls, &sb);
	CHECK_STR(sb.buf, "c.io/sgx=true\no.io/os=talos\nu.io/1a6e-089a=ff\n");
	/* a feature no source makes and the scan lacks: no match, named */
	CHECK_STR(warnings, "f.yaml:25:5: rule 'vendor' did not match: nodeprobe makes no feature "
			    "'vendor.flags' (its terms never match, as in NFD on a node without "
			    "it)\n");
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
	sb_free(&sb);
	rules_free(r);
	label_set_free(ls);
	feat_set_free(fs);
}

/* Go's pipeline form "{{ .pci.device | len }}" (NFD's docs) is "{{ len .pci.device }}". */
TEST(rules_template_pipe_len)
{
	CHECK_STR(run("  - name: n\n    labelsTemplate: \"n.io/intel={{ .pci.device | len }}\"\n"
		      "    matchFeatures:\n      - feature: pci.device\n        matchExpressions:\n"
		      "          vendor: {op: In, value: [\"8086\"]}\n",
		      NULL),
		  "n.io/intel=3\n");
	/* Sprig's functions too (NFD's FuncMap) */
	CHECK_STR(
	    run("  - name: n\n    labelsTemplate: \"n.io/first={{ (.pci.device | first).class "
		"| upper | trunc 2 }}\"\n    matchFeatures:\n      - feature: pci.device\n"
		"        matchExpressions: {vendor: {op: In, value: [\"8086\"]}}\n",
		NULL),
	    "n.io/first=03\n");
}

/*
 * One name, two kinds (NFD's MatchMulti; x86 cpu.cpuid is flags plus the
 * attribute AVX10_VERSION): an expression holds on either part, DoesNotExist
 * needs the name absent from both, matchName sees both.
 */
TEST(rules_multi_kind_feature)
{
	static const struct {
		const char *expr, *want;
	} c[] = {
	    {"AVX10_VERSION: {op: Ge, value: [\"1\"]}", "m.io/x=1\n"},
	    {"AVX512F: {op: Exists}", "m.io/x=1\n"},
	    {"SGX: {op: DoesNotExist}", "m.io/x=1\n"},
	    {"AVX10_VERSION: {op: DoesNotExist}", ""},
	    {"AVX512F: {op: DoesNotExist}", ""},
	    {"AVX512F: {op: In, value: [\"\"]}", ""}, /* a flag has no value */
	    {"AVX512F: {op: Exists}\n          AVX10_VERSION: {op: In, value: [\"2\"]}", ""},
	};
	struct feat_set *fs = feat_set_new();
	char y[512];
	size_t i;

	feat_flag_add(fs, "cpu.cpuid", "AVX512F");
	feat_flag_add(fs, "cpu.cpuid", "AVX10");
	feat_attr_set(fs, "cpu.cpuid", "AVX10_VERSION", "1");
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct rules *r = rules_new();
		struct label_set *ls = label_set_new();
		struct strbuf sb = STRBUF_INIT(4096);
		struct log_err err = {0};

		snprintf(y, sizeof(y),
			 HDR
			 "  - name: m\n    labels: {m.io/x: \"1\"}\n    matchFeatures:\n"
			 "      - feature: cpu.cpuid\n        matchExpressions:\n          %s\n",
			 c[i].expr);
		REQUIRE_INT(rules_load_buffer(r, "m.yaml", y, strlen(y), &err), 1);
		rules_eval(r, fs, ls, &err);
		label_set_format(ls, &sb);
		if (strcmp(sb.buf, c[i].want))
			HFAIL_("%s: got '%s'", c[i].expr, sb.buf);
		sb_free(&sb);
		label_set_free(ls);
		rules_free(r);
	}
	{
		struct rules *r = rules_new();
		struct label_set *ls = label_set_new();
		struct strbuf sb = STRBUF_INIT(4096);
		struct log_err err = {0};
		static const char t[] = HDR
		    "  - name: names\n    labelsTemplate: \"{{ range .cpu.cpuid }}n.io/{{ .Name "
		    "}}=x\\n{{ end }}\"\n    matchFeatures:\n      - feature: cpu.cpuid\n"
		    "        matchName: {op: InRegexp, value: [\"^AVX10\"]}\n";

		REQUIRE_INT(rules_load_buffer(r, "m.yaml", t, strlen(t), &err), 1);
		CHECK_INT(rules_eval(r, fs, ls, &err), 2);
		label_set_format(ls, &sb);
		CHECK_STR(sb.buf, "n.io/AVX10=x\nn.io/AVX10_VERSION=x\n");
		sb_free(&sb);
		label_set_free(ls);
		rules_free(r);
	}
	feat_set_free(fs);
}

/* Inside a range, 'index . "key"' reads a key that is no identifier (NFD's "iommu_group/type"). */
TEST(rules_template_index_dot_key)
{
	struct feat_set *fs = feat_set_new();
	struct rules *r = rules_new();
	struct label_set *ls = label_set_new();
	struct strbuf sb = STRBUF_INIT(4096);
	struct log_err err = {0};
	struct feat *d = feat_instance_add(fs, "pci.device");
	static const char y[] =
	    HDR "  - name: iommu\n    labelsTemplate: \"{{ range .pci.device }}i.io/{{ .device "
		"}}={{ index . \\\"iommu_group/type\\\" }}\\n{{ end }}\"\n"
		"    matchFeatures:\n      - feature: pci.device\n        matchName: {op: In, "
		"value: [iommu_group/type]}\n";

	feat_instance_set(d, "device", "46a6");
	feat_instance_set(d, "iommu_group/type", "DMA-FQ");
	REQUIRE_INT(rules_load_buffer(r, "i.yaml", y, strlen(y), &err), 1);
	CHECK_INT(rules_eval(r, fs, ls, &err), 1);
	label_set_format(ls, &sb);
	CHECK_STR(sb.buf, "i.io/46a6=DMA-FQ\n");
	sb_free(&sb);
	label_set_free(ls);
	rules_free(r);
	feat_set_free(fs);
}

/* rules_yaml (a list of rules after HDR) on fs (freed here): its labels ("k=v\n" lines). */
static char *run_on(struct feat_set *fs, const char *rules_yaml)
{
	static char out[4096];
	struct rules *r = rules_new();
	struct label_set *ls = label_set_new();
	struct strbuf sb = STRBUF_INIT(4096), doc = STRBUF_INIT(65536);
	struct log_err err = {0};

	sb_add(&doc, HDR);
	sb_add(&doc, rules_yaml);
	out[0] = '\0';
	if (rules_load_buffer(r, "t.yaml", doc.buf, doc.len, &err) >= 0 &&
	    rules_eval(r, fs, ls, &err) >= 0) {
		label_set_format(ls, &sb);
		snprintf(out, sizeof(out), "%s", sb.buf);
	}
	sb_free(&sb);
	sb_free(&doc);
	label_set_free(ls);
	rules_free(r);
	feat_set_free(fs);
	return out;
}

/*
 * Issue 20, 2: Go's `index` on a missing key gives the element type's zero value even with
 * missingkey=error, so NFD renders {{ index . "sriov_totalvfs" }} on a device without the
 * attribute as "" and emits the label; the same for {{ index . "Value" }} on a flag. (The
 * subset before pkg/gotmpl failed the rule: "map has no entry for key".)
 */
TEST(rules_template_index_missing_key_zero)
{
	struct feat_set *fs = feat_set_new();
	struct feat *d = feat_instance_add(fs, "pci.device");

	feat_instance_set(d, "device", "46a6");
	feat_instance_set(d, "class", "0300");
	feat_flag_add(fs, "kernel.loadedmodule", "i915");
	capture_on();
	CHECK_STR(
	    run_on(fs,
		   "  - name: vf\n    labelsTemplate: |\n"
		   "      {{ range .pci.device }}vf-{{ .device }}={{ index . \"sriov_totalvfs\" "
		   "}}\n      {{ end }}\n"
		   "    matchFeatures:\n      - feature: pci.device\n"
		   "        matchExpressions: {class: {op: In, value: [\"0300\"]}}\n"
		   "  - name: flag\n    labelsTemplate: |\n"
		   "      {{ range .kernel.loadedmodule }}mod-{{ .Name }}={{ index . \"Value\" "
		   "}}\n      {{ end }}\n"
		   "    matchFeatures:\n      - feature: kernel.loadedmodule\n"
		   "        matchExpressions: {i915: {op: Exists}}\n"),
	    "feature.node.kubernetes.io/mod-i915=\nfeature.node.kubernetes.io/vf-46a6=\n");
	CHECK_STR(warnings, "");
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

/*
 * Issue 20, 7: a value ending in "\r" (a CRLF kernel config) is trimmed with the line and kept,
 * as NFD's strings.TrimSpace does; a control byte inside a line is never printed raw in a
 * warning (the line without '=', the invalid label value), always as \xNN or Go's %q escape.
 */
TEST(rules_template_crlf_and_control_bytes)
{
	struct feat_set *fs = feat_set_new();

	feat_attr_set(fs, "kernel.config", "CONFIG_NUMA", "y\r");
	capture_on();
	CHECK_STR(run_on(fs, "  - name: crlf\n    labelsTemplate: |\n"
			     "      {{ range .kernel.config }}k.io/{{ .Name }}={{ .Value }}\n"
			     "      {{ end }}\n"
			     "    matchFeatures:\n      - feature: kernel.config\n"
			     "        matchExpressions: {CONFIG_NUMA: {op: Exists}}\n"),
		  "k.io/CONFIG_NUMA=y\n");
	CHECK_STR(warnings, "");
	fs = feat_set_new();
	feat_attr_set(fs, "kernel.config", "CONFIG_A", "y\x1fz\x01");
	feat_attr_set(fs, "kernel.config", "CONFIG_B", "m\rx");
	warnings[0] = '\0';
	CHECK_STR(
	    run_on(fs,
		   "  - name: noeq\n    labelsTemplate: \"{{ range .kernel.config }}{{ "
		   ".Value }}{{ end }}\"\n"
		   "    matchFeatures:\n      - feature: kernel.config\n"
		   "        matchExpressions: {CONFIG_A: {op: Exists}}\n"
		   "  - name: badval\n    labelsTemplate: \"{{ range .kernel.config }}k.io/b={{ "
		   ".Value }}{{ end }}\"\n"
		   "    matchFeatures:\n      - feature: kernel.config\n"
		   "        matchExpressions: {CONFIG_B: {op: Exists}}\n"),
	    "");
	CHECK(strstr(warnings,
		     "rule 'noeq' not applied: labelsTemplate: failed to expand template: "
		     "missing value in expanded template line \"y\\x1fz\\x01\""));
	CHECK(strstr(warnings, "rule 'badval': label skipped: "));
	CHECK(strstr(warnings, "m\\x0dx"));
	CHECK(!strchr(warnings, '\x1f') && !strchr(warnings, '\x01') && !strchr(warnings, '\r'));
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

/*
 * A warning quoting a line escapes a byte of no printable UTF-8 character as \xNN (no raw
 * invalid UTF-8 reaches the log); a printable multi-byte character stays as it is.
 */
TEST(rules_template_quote_invalid_utf8)
{
	struct feat_set *fs = feat_set_new();

	feat_attr_set(fs, "kernel.config", "CONFIG_A", "\xff\xc3\xa9\xc3");
	capture_on();
	CHECK_STR(run_on(fs, "  - name: noeq\n    labelsTemplate: \"{{ range .kernel.config }}{{ "
			     ".Value }}{{ end }}\"\n"
			     "    matchFeatures:\n      - feature: kernel.config\n"
			     "        matchExpressions: {CONFIG_A: {op: Exists}}\n"),
		  "");
	CHECK(strstr(warnings, "missing value in expanded template line \"\\xff\xc3\xa9\\xc3\""));
	CHECK(!strstr(warnings, "\xff") && !strstr(warnings, "\xc3\""));
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

/*
 * A line holding a NUL byte is skipped and takes an earlier line's entry of its key with it: NFD
 * overwrites the key with the later line, whose value its label validation then drops.
 */
TEST(rules_template_nul_line_drops_key)
{
	capture_on();
	CHECK_STR(
	    run("  - name: nul\n    labelsTemplate: \"a.io/k=a\\na.io/k=b{{ printf \\\"%c\\\" 0 "
		"}}c\\na.io/o=1\"\n"
		"    matchFeatures:\n      - feature: kernel.loadedmodule\n",
		NULL),
	    "a.io/o=1\n");
	CHECK(strstr(warnings, "rule 'nul': labelsTemplate line \"a.io/k=b\\x00c\" skipped: it "
			       "holds a NUL byte"));
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

/*
 * A line feed inside a feature value reaches a template as U+001F (the documented departure
 * from NFD that keeps a value from adding label lines): len counts it, contains "\n" is false.
 */
TEST(rules_template_value_line_feed_seen_as_0x1f)
{
	struct feat_set *fs = feat_set_new();

	feat_attr_set(fs, "kernel.config", "CONFIG_A", "a\nb");
	capture_on();
	CHECK_STR(run_on(fs, "  - name: lf\n    labelsTemplate: |\n"
			     "      {{ range .kernel.config }}k.io/l={{ .Value | len }}\n"
			     "      k.io/nl={{ contains \"\\n\" .Value }}\n"
			     "      k.io/us={{ contains (printf \"%c\" 31) .Value }}{{ end }}\n"
			     "    matchFeatures:\n      - feature: kernel.config\n"
			     "        matchExpressions: {CONFIG_A: {op: Exists}}\n"),
		  "k.io/l=3\nk.io/nl=false\nk.io/us=true\n");
	CHECK_STR(warnings, "");
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}
