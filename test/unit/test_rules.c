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

/* Load yaml (a list of rules after HDR), evaluate on host(), return "k=v\n" lines or NULL. */
static char *run(const char *rules_yaml, int *nlabels)
{
	static char out[4096];
	struct rules *r = rules_new();
	struct feat_set *fs = host();
	struct label_set *ls = label_set_new();
	struct strbuf sb = STRBUF_INIT(4096);
	struct strbuf doc = STRBUF_INIT(65536);
	struct log_err err = {0};
	int n;

	sb_add(&doc, HDR);
	sb_add(&doc, rules_yaml);
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
#define ONE(mf) "  - name: x\n    labels: {a.io/x: y}\n    matchFeatures:\n" mf

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
	CHECK(strstr(warnings,
		     "t.yaml:6:5: rule 't': template: map has no entry for key \"driver\""));
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
	CHECK(strstr(warnings, "rule 'f': template: map has no entry for key \"Value\""));
	warnings[0] = '\0';
	/* matchAny's matcher has no pci.device: NFD's template fails on it */
	CHECK_STR(run("  - name: a\n"
		      "    labelsTemplate: \"x.io/n={{ len .pci.device }}\"\n"
		      "    matchFeatures:\n      - feature: pci.device\n"
		      "    matchAny:\n      - matchFeatures:\n"
		      "          - feature: kernel.loadedmodule\n",
		      NULL),
		  "");
	CHECK(strstr(warnings, "rule 'a': template: map has no entry for key \"pci.device\""));
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

/* The extension fixes Intel's count: per id, not the first id with the total. */
TEST(rules_count_template)
{
	CHECK_STR(run("  - name: c\n"
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
	CHECK(strstr(warnings, "rule 't': template: index 9 out of range for .pci.device"));
	warnings[0] = '\0';
	CHECK_STR(run("  - name: t\n    labelsTemplate: \"no equals sign\"\n"
		      "    matchFeatures:\n      - feature: pci.device\n",
		      NULL),
		  "");
	CHECK(strstr(warnings, "template line 'no equals sign' is not key=value"));
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}

/* Unsupported features, ops and template constructs skip the rule with a warning. */
TEST(rules_unsupported_skipped)
{
	int n = -1;

	capture_on();
	CHECK_STR(run("  - name: sgx\n    labels: {a.io/sgx: \"true\"}\n    matchFeatures:\n"
		      "      - feature: cpu.security\n        matchExpressions:\n"
		      "          sgx.enabled: {op: IsTrue}\n"
		      "  - name: ge\n    labels: {a.io/ge: \"true\"}\n    matchFeatures:\n"
		      "      - feature: dt.root\n        matchExpressions:\n"
		      "          cores: {op: Ge, value: [\"1\"]}\n"
		      "  - name: ver\n    labels: {a.io/v: \"true\"}\n    matchFeatures:\n"
		      "      - feature: dt.root\n        matchExpressions:\n"
		      "          cores: {op: Gt, value: [\"5.15.0\"], type: version}\n"
		      "  - name: tpl\n    labelsTemplate: \"{{ if .pci }}a=b{{ end }}\"\n"
		      "    matchFeatures:\n      - feature: pci.device\n"
		      "  - name: ok\n    labels: {a.io/ok: \"true\"}\n    extendedResources: "
		      "{a.io/r: \"1\"}\n"
		      "    matchFeatures:\n      - feature: pci.device\n",
		      &n),
		  "a.io/ge=true\na.io/ok=true\n");
	CHECK_INT(n, 2);
	CHECK(strstr(warnings,
		     "t.yaml:6:5: rule 'sgx' skipped: feature 'cpu.security' is not supported"));
	CHECK(!strstr(warnings, "rule 'ge' skipped"));
	CHECK(strstr(warnings, "rule 'ver' skipped: 'type: version' is not supported"));
	CHECK(strstr(
	    warnings,
	    "rule 'tpl' skipped: labelsTemplate: unsupported template action '{{ if .pci }}'"));
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
	CHECK_STR(load_err(HDR "  - name: x\n    matchFeatures:\n      - feature: pci.device\n"
			       "        matchExpressions:\n          vendor: {op: InRegexp, value: "
			       "[\"(8086\"]}\n"),
		  "bad.yaml:10:42: invalid regular expression '(8086': missing )");
	CHECK_STR(load_err(HDR "  - name: x\n    matchFeatures:\n      - feature: pci.device\n"
			       "        matchExpressions:\n          vendor: {op: In}\n"),
		  "bad.yaml:10:19: op In needs at least one value");
	CHECK_STR(
	    load_err(HDR "  - name: x\n    matchFeatures:\n      - feature: pci.device\n"
			 "        matchExpressions:\n          vendor: {op: Exists, value: [a]}\n"),
	    "bad.yaml:10:39: op Exists takes no value");
	CHECK_STR(
	    load_err(
		HDR
		"  - name: x\n    matchFeatures:\n      - feature: dt.root\n"
		"        matchExpressions:\n          cores: {op: GtLt, value: [\"5\", \"3\"]}\n"),
	    "bad.yaml:10:36: op GtLt: the first value must be less than the second");
	CHECK_STR(
	    load_err(HDR
		     "  - name: x\n    matchFeatures:\n      - feature: dt.root\n"
		     "        matchExpressions:\n          cores: {op: Gt, value: [\"four\"]}\n"),
	    "bad.yaml:10:35: op Gt: 'four' is not an integer");
	CHECK_STR(load_err(HDR "  - labels: {a.io/x: y}\n"), "bad.yaml:6:5: rule without 'name'");
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
	CHECK_STR(load_err("apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\n"),
		  "bad.yaml:1:1: NodeFeatureRule without 'spec'");
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
	    "---\n" HDR "  - name: b\n    labels: {a.io/b: \"2\"}\n"
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
	fputs(HDR "  - name: b\n    labels: {a.io/v: b}\n", fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/a.yaml", dir);
	fp = fopen(path, "w");
	fputs(HDR "  - name: a\n    labels: {a.io/v: a}\n", fp);
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
	CHECK_STR(label_set_get(ls, "a.io/v"), "b"); /* b.yml loaded after a.yaml */
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
	CHECK(strstr(warnings, "intel.yaml:7:5: rule 'intel.gpu.fractionalresources' skipped: "
			       "feature 'local.label' is not supported"));
	CHECK_INT(rules_eval(r, fs, ls, &err), 2);
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
	CHECK_STR(load_err(sb.buf), "bad.yaml:8:69: document too complex");
	sb_free(&sb);
}

/* Nested ranges are bounded; a rule's output is bounded. */
TEST(rules_template_limits)
{
	struct strbuf sb = STRBUF_INIT(1 << 16);
	int i;

	capture_on();
	sb_add(&sb, "  - name: deep\n    labelsTemplate: \"");
	for (i = 0; i < 40; i++)
		sb_add(&sb, "{{ range .pci.device }}");
	for (i = 0; i < 40; i++)
		sb_add(&sb, "{{ end }}");
	sb_add(&sb, "\"\n    matchFeatures:\n      - feature: pci.device\n");
	CHECK_STR(run(sb.buf, NULL), "");
	CHECK(strstr(warnings, "rule 'deep' skipped: labelsTemplate: ranges nested too deep"));
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
		sb_add(&sb, HDR "  - name: wide\n    countLabelsTemplate: \"{{ range .pci.device }}"
				"a.io/{{ .device }}\\n{{ end }}\"\n"
				"    matchFeatures:\n      - feature: pci.device\n"
				"        matchExpressions: {}\n");
		REQUIRE_INT(rules_load_buffer(r, "w.yaml", sb.buf, sb.len, &err), 1);
		CHECK_INT(rules_eval(r, fs, ls, &err), 0);
		CHECK(strstr(warnings, "rule 'wide': template gives more than 4096 labels"));
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
	CHECK_STR(load_err(HDR "  - name: x\n    matchFeatures:\n      - feature: pci.device\n"
			       "        matchExpressions:\n          vendor: {op: InRegexp, value: "
			       "[\"(a)\\\\1\"]}\n"),
		  "bad.yaml:10:42: invalid regular expression '(a)\\1': invalid escape sequence");
}

/* The pattern that made glibc's regcomp grow past 13 GB: refused by RE2's repeat limit. */
TEST(rules_hostile_regexp_refused)
{
	CHECK_STR(
	    load_err(HDR "  - name: x\n    matchFeatures:\n      - feature: pci.device\n"
			 "        matchExpressions:\n          vendor: {op: InRegexp, value: "
			 "[\"((((a{1,255}){1,255}){1,255}){1,255})\"]}\n"),
	    "bad.yaml:10:42: invalid regular expression '((((a{1,255}){1,255}){1,255}){1,255})': "
	    "invalid repetition size");
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
	CHECK_STR(load_err(HDR "  - name: x\n    matchFeatures:\n      - feature: pci.device\n"
			       "        matchExpressions:\n          vendor: {op: GeLe, value: "
			       "[\"5\", \"5\"]}\n"),
		  "bad.yaml:10:37: op GeLe: the first value must be less than the second");
}
