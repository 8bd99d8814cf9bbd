/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/rules' inner stages, which need the module's internal header: the value
 * helpers (rules_value.c), the template parser (rules_template.c), the cache (rules_cache.c). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "feature/feature.h"
#include "gotmpl/gotmpl.h"
#include "gotmpl/gotmpl_internal.h"
#include "harness.h"
#include "label/label.h"
#include "log/log.h"
#include "rules/rules.h"
#include "rules/rules_internal.h"
#include "strbuf/strbuf.h"

#define HDR                                                                                        \
	"apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata: {name: "           \
	"t}\nspec:\n  rules:\n"

/*
 * Compile once (issue 17): rules sharing an aliased list of patterns and an aliased template,
 * and a second file with the same texts, compile each distinct pattern and template once.
 */
TEST(rules_compile_once)
{
	static const char doc[] = HDR
	    "  - name: a\n    labelsTemplate: &tp \"{{range .pci.device}}x.{{.vendor}}=1\n{{end}}\"\n"
	    "    matchFeatures:\n      - feature: pci.device\n        matchExpressions:\n"
	    "          vendor: {op: InRegexp, value: &p [\"^80\", \"^10de$\", \"a|b\"]}\n"
	    "          device: {op: InRegexp, value: [\"^80\"]}\n"
	    "  - {name: b, labelsTemplate: *tp, matchFeatures: [{feature: pci.device, "
	    "matchExpressions: {vendor: {op: InRegexp, value: *p}}}]}\n"
	    "  - {name: c, varsTemplate: *tp, matchFeatures: [{feature: pci.device, "
	    "matchExpressions: {class: {op: InRegexp, value: *p}}}]}\n";
	struct rules *r = rules_new();
	struct log_err err = {0};

	REQUIRE_INT(rules_load_buffer(r, "a.yaml", doc, strlen(doc), &err), 3);
	CHECK(r->cache.re.n == 3 && r->cache.tmpl.n == 1);
	CHECK(r->cache.compiled == 4); /* 3 patterns and 1 template, however often used */
	REQUIRE_INT(rules_load_buffer(r, "b.yaml", doc, strlen(doc), &err), 3);
	CHECK(r->cache.compiled == 4);
	CHECK(r->r[0].tmpl.t && r->r[0].tmpl.t == r->r[1].tmpl.t &&
	      r->r[1].tmpl.t == r->r[2].vtmpl.t);
	CHECK(r->r[0].mf.t[0].ex[0].re[0] == r->r[1].mf.t[0].ex[0].re[0]);
	rules_free(r);
}

/* The value helpers: Go's strconv.Atoi, NFD's version parse, the array growth. */
TEST(rules_value_atoi_go)
{
	long long v = 7;

	CHECK(rules_atoi_go("42", &v) && v == 42);
	CHECK(rules_atoi_go("+5", &v) && v == 5);
	CHECK(rules_atoi_go("-0", &v) && v == 0);
	CHECK(rules_atoi_go("-9223372036854775808", &v) && v == -9223372036854775807LL - 1);
	CHECK(!rules_atoi_go("", &v));
	CHECK(!rules_atoi_go("+", &v));
	CHECK(!rules_atoi_go(" 1", &v));
	CHECK(!rules_atoi_go("1 ", &v));
	CHECK(!rules_atoi_go("0x10", &v));
	CHECK(!rules_atoi_go("1.5", &v));
	CHECK(!rules_atoi_go("9223372036854775808", &v)); /* out of range, as Go's ErrRange */
}

TEST(rules_value_version_parse)
{
	static const struct {
		const char *s;
		bool ok;
		unsigned long long v[3];
	} cases[] = {
	    {"v1.2.3", true, {1, 2, 3}},
	    {"22.04", true, {22, 4, 0}},
	    {"6", true, {6, 0, 0}},
	    {"6.1.0-50-arm64", true, {6, 1, 0}},
	    {"1.2.3-rc.1+build.7", true, {1, 2, 3}},
	    {"1.2.3.4", false, {0}},
	    {"5.4.0-050", false, {0}},
	    {"1.2.3+", false, {0}},
	    {"1_2", false, {0}},
	    {"", false, {0}},
	    {"18446744073709551616", false, {0}},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ver v;
		bool ok = rules_version_parse(cases[i].s, &v);

		CHECK(ok == cases[i].ok);
		if (ok && cases[i].ok)
			CHECK(!memcmp(v.v, cases[i].v, sizeof(v.v)));
	}
}

TEST(rules_value_grow)
{
	struct kv *a = NULL, *e;
	size_t n = 0, i;

	for (i = 0; i < 100; i++) {
		e = rules_grow(&a, &n, sizeof(*a));
		REQUIRE(e != NULL);
		CHECK(e == &a[i] && n == i + 1 && !e->k && !e->v);
		e->k = (char *)"x"; /* not zero, so a later element's zeroing shows */
	}
	CHECK(a[0].k && a[99].k);
	free(a);
}

/* The template stage alone: pkg/gotmpl parses, refusals carry NFD's wording. */
TEST(rules_template_parse)
{
	struct gotmpl *t = NULL;
	char why[600] = "";

	REQUIRE_INT(
	    rules_tmpl_parse("{{- range $i, $d := .pci.device }}v={{ $d.vendor }}\n{{ end -}}", &t,
			     why, sizeof(why)),
	    0);
	REQUIRE(t != NULL);
	gotmpl_free(t);
	t = NULL;
	CHECK_INT(rules_tmpl_parse("{{ end }}", &t, why, sizeof(why)), -EINVAL);
	CHECK(t == NULL);
	CHECK_STR(why,
		  "failed to parse template: invalid template: template: :1: unexpected {{end}}");
	CHECK_INT(rules_tmpl_parse("{{ now }}", &t, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "function \"now\" refused"));
}

/*
 * The compile budget: a template that does not parse is cached as refused (parsed once too,
 * and failing its rules when they run, as NFD); the distinct templates and their bytes are
 * bounded over all the rules loaded.
 */
TEST(rules_template_cache_budget)
{
	struct rcache c = {0};
	struct rtmpl a = {0}, b = {0};
	char why[600] = "", src[32];
	int i, r = 0;

	REQUIRE_INT(rules_tmpl(&c, "{{ if }}", &a, why, sizeof(why)), 0);
	CHECK(a.set && !a.t && a.bad && strstr(a.bad, "missing value for if"));
	REQUIRE_INT(rules_tmpl(&c, "{{ if }}", &b, why, sizeof(why)), 0);
	CHECK(b.bad == a.bad && c.compiled == 1);
	for (i = 0; i < RULES_TMPL_MAX + 1 && r == 0; i++) {
		snprintf(src, sizeof(src), "x=%d", i);
		r = rules_tmpl(&c, src, &a, why, sizeof(why));
	}
	CHECK_INT(r, -ENOSPC);
	CHECK_INT(i, RULES_TMPL_MAX);
	CHECK(strstr(why, "more than 10000 distinct templates"));
	rules_cache_free(&c);
}

/*
 * Issue 27: parse trees are bounded together, not only texts: "{{.}}" repeated to NFD's 64 KiB
 * cap parses to about 12 MiB, so 16 MiB of such text (the text limit) took 3 GB. The third
 * distinct one passes RULES_TMPL_MEM and is refused by name; two fit.
 */
TEST(rules_template_cache_parse_memory)
{
	struct rcache c = {0};
	struct rtmpl a = {0};
	char why[600] = "", *src = malloc(65000);
	int i, r = 0;

	REQUIRE(src);
	for (i = 0; i < 12990; i++)
		memcpy(src + 5 * i, "{{.}}", 5);
	for (i = 0; i < 10 && r == 0; i++) {
		snprintf(src + 5 * 12990, 65000 - 5 * 12990, "{{/*%d*/}}", i);
		r = rules_tmpl(&c, src, &a, why, sizeof(why));
	}
	CHECK_INT(r, -ENOSPC);
	CHECK_INT(i, sizeof(void *) == 8 ? 3 : 5); /* armhf's parse trees are smaller: the fifth */
	CHECK(strstr(why, "the rules' templates need more than 32 MiB parsed (the limit)"));
	CHECK(c.tmem <= RULES_TMPL_MEM);
	free(src);
	rules_cache_free(&c);
}

static char warnings[4096];

static void capture(void *ctx, enum log_level lvl, const char *msg)
{
	(void)ctx;
	if (lvl <= LOG_LVL_WARN && strlen(warnings) + strlen(msg) + 2 < sizeof(warnings)) {
		strcat(warnings, msg);
		strcat(warnings, "\n");
	}
}

/*
 * Issue 27, 1: a template whose parse tree passes its memory budget fails its own rule, with
 * one warning naming it, when the rules run; the other rules label. It was -ENOMEM, "out of
 * memory", and the end of the whole run. No 64 KiB template reaches the 32 MiB budget today
 * (about 250 bytes a source byte at most), so the test lowers it to 64 KiB.
 */
TEST(rules_template_over_its_parse_budget_fails_only_its_rule)
{
	size_t keep = gotmpl_parse_mem_max, i;
	struct strbuf doc = STRBUF_INIT(1 << 20), out = STRBUF_INIT(4096);
	struct rules *r = rules_new();
	struct feat_set *fs = feat_set_new();
	struct label_set *ls = label_set_new();
	struct log_err err = {0};
	const char *w;

	feat_flag_add(fs, "kernel.loadedmodule", "i915");
	gotmpl_parse_mem_max = 64 << 10;
	sb_add(&doc, HDR "  - name: dense\n    labelsTemplate: \"a.io/x=");
	for (i = 0; i < 2000; i++) /* about 1.9 MB parsed */
		sb_add(&doc, "{{.}}");
	sb_add(&doc, "\"\n    matchFeatures: &m [{feature: kernel.loadedmodule, "
		     "matchExpressions: {i915: {op: Exists}}}]\n"
		     "  - name: plain\n    labels: {a.io/plain: \"y\"}\n"
		     "    labelsTemplate: \"a.io/t={{ 1 }}\"\n    matchFeatures: *m\n");
	warnings[0] = '\0';
	log_set_fn(capture, NULL, LOG_LVL_WARN);
	CHECK_INT(rules_load_buffer(r, "t.yaml", doc.buf, doc.len, &err), 2);
	CHECK_INT(rules_eval(r, fs, ls, &err), 2);
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
	gotmpl_parse_mem_max = keep;
	label_set_format(ls, &out);
	CHECK_STR(out.buf ? out.buf : "", "a.io/plain=y\na.io/t=1\n");
	w = strstr(warnings, "rule 'dense' not applied: labelsTemplate: failed to parse template: "
			     "template: : its parse tree needs more than 64 KiB (the limit)");
	CHECK(w != NULL);
	CHECK(w && !strstr(w + 1, "rule 'dense'")); /* one warning */
	sb_free(&doc);
	sb_free(&out);
	label_set_free(ls);
	feat_set_free(fs);
	rules_free(r);
}

/*
 * rules_grow: every append keeps what was there and gives a zeroed element, across the
 * powers of two where it reallocates (its room is implied by the count, issue 17 review).
 */
TEST(rules_grow_keeps_and_zeroes)
{
	long *a = NULL, *e;
	size_t n = 0, i;
	int bad = 0;

	for (i = 0; i < 5000; i++) {
		e = rules_grow(&a, &n, sizeof(*a));
		REQUIRE(e != NULL);
		if (*e != 0 || e != a + i)
			bad++;
		*e = (long)i * 7 + 1;
	}
	CHECK(n == 5000);
	for (i = 0; i < n; i++)
		if (a[i] != (long)i * 7 + 1)
			bad++;
	CHECK_INT(bad, 0);
	free(a);
}
