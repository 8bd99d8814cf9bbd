/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/rules' cache (rules_cache.c), which needs the module's internal header. */
#include <errno.h>
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
