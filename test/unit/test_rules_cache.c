/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/rules' inner stages, which need the module's internal header: the value
 * helpers (rules_value.c), the template parser (rules_template.c), the cache (rules_cache.c). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "log/log.h"
#include "rules/rules.h"
#include "rules/rules_internal.h"

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
	CHECK(r->r[0].tmpl == r->r[1].tmpl && r->r[1].tmpl == r->r[2].vtmpl);
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

/* The template stage alone: parse into nodes, refuse what is outside the subset. */
TEST(rules_template_parse)
{
	struct tmpl *t = NULL;
	char why[200] = "";

	REQUIRE_INT(rules_tmpl_parse("{{- range .pci.device }}v={{ .vendor }}\n{{ end -}}", &t, why,
				     sizeof(why)),
		    0);
	REQUIRE(t && t->nn == 1 && t->n[0].kind == T_RANGE);
	CHECK_STR(t->n[0].feature, "pci.device");
	REQUIRE(t->n[0].nbody == 3);
	CHECK(t->n[0].body[0].kind == T_TEXT && t->n[0].body[1].kind == T_FIELD);
	CHECK_STR(t->n[0].body[1].s, "vendor");
	rules_tmpl_free(t);
	CHECK_INT(rules_tmpl_parse("{{ end }}", &t, why, sizeof(why)), -EINVAL);
	CHECK(t == NULL);
	CHECK_STR(why, "'end' without 'range'");
	CHECK_INT(rules_tmpl_parse("{{ printf \"%d\" 1 }}", &t, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "unsupported template action '{{ printf \"%d\" 1 }}'");
	rules_tmpl_free(NULL);
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
