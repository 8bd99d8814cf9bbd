/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/goregex: Go regexp syntax and semantics, refusals, hostile patterns. */
#include <errno.h>

#include "goregex/goregex.h"
#include "harness.h"

/* 1 match, 0 no match, -1 compile error. */
static int m(const char *pat, unsigned flags, const char *s)
{
	struct goregex *re;
	char err[256];
	int r;

	if (goregex_compile(pat, flags, &re, err, sizeof(err)) != 0)
		return -1;
	r = goregex_match(re, s, strlen(s));
	goregex_free(re);
	return r;
}

TEST(go_syntax_and_semantics)
{
	/* Results as Go's regexp.MatchString gives them (unanchored). */
	CHECK_INT(m("\\d+", 0, "a1"), 1);
	CHECK_INT(m("\\d+", 0, "abc"), 0);
	CHECK_INT(m("(?i)abc", 0, "xABCx"), 1);
	CHECK_INT(m("a+?b", 0, "aaab"), 1);
	CHECK_INT(m("^\\pL+$", 0, "Grüße"), 1);
	CHECK_INT(m("^\\pL+$", 0, "abc1"), 0);
	CHECK_INT(m("^\\PL$", 0, "1"), 1);
	CHECK_INT(m("^[[:alpha:]]+$", 0, "abc"), 1);
	CHECK_INT(m("^$", 0, ""), 1);
	CHECK_INT(m("\\Qa.b\\E", 0, "a.b"), 1);
	CHECK_INT(m("\\Qa.b\\E", 0, "axb"), 0);
	CHECK_INT(m("^.$", 0, "\n"), 0); /* . does not match \n without (?s) */
	CHECK_INT(m("(?s)^.$", 0, "\n"), 1);
	CHECK_INT(m("^é$", 0, "é"), 1);	     /* UTF-8: one character */
	CHECK_INT(m("(?U)a+", 0, "aaa"), 1); /* ungreedy flag */
	CHECK_INT(m("(?P<x>a)b", 0, "ab"), 1);
	CHECK_INT(m("(?<x>a)b", 0, "ab"), 1); /* Go 1.22 named group */
	CHECK_INT(m("[(?<x>]", 0, "<"), 1);   /* not a group inside a class */
	CHECK_INT(m("\\z", 0, "a"), 1);
	CHECK_INT(m("^[]a]$", 0, "]"), 1);
	CHECK_INT(m("^[^]a]$", 0, "b"), 1);
}

TEST(full_match_anchors_every_alternative)
{
	CHECK_INT(m("web|api", GOREGEX_FULL, "web"), 1);
	CHECK_INT(m("web|api", GOREGEX_FULL, "webx"), 0);
	CHECK_INT(m("web|api", GOREGEX_FULL, "xapi"), 0);
	CHECK_INT(m("web|api", 0, "xapi"), 1);
	CHECK_INT(m("app-.*", GOREGEX_FULL, "app-config"), 1);
}

TEST(what_go_refuses_is_refused)
{
	static const char *const bad[] = {
	    "(a)\\1",				     /* back-reference */
	    "a(?=b)",				     /* look-ahead */
	    "a(?!b)",				     /* negative look-ahead */
	    "(?<=a)b",				     /* look-behind */
	    "\\C",				     /* any byte: RE2 has it, Go does not */
	    "a{1001}",				     /* repeat count over 1000 */
	    "((((a{1,255}){1,255}){1,255}){1,255})", /* nested repeat product over 1000 */
	    "(",
	    "[a",
	    "*a",
	    "a**",
	    "\\Z",
	    "\\8",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct goregex *re = (void *)1;
		char err[256] = "";

		if (goregex_compile(bad[i], 0, &re, err, sizeof(err)) != -EINVAL)
			HFAIL_("'%s' was not refused", bad[i]);
		CHECK(re == NULL);
		if (!err[0])
			HFAIL_("'%s': no reason", bad[i]);
	}
}

TEST(reason_is_worded_without_the_pattern)
{
	struct goregex *re;
	char err[256];

	CHECK_INT(goregex_compile("a{1001}", 0, &re, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "invalid repetition size");
	CHECK_INT(goregex_compile("(a", 0, &re, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "missing )");
	CHECK_INT(goregex_compile("\\C", 0, &re, NULL, 0), -EINVAL);
}

TEST(pattern_length_is_capped)
{
	size_t n = GOREGEX_PATTERN_MAX + 1;
	char *p = malloc(n + 1);
	struct goregex *re;

	REQUIRE(p);
	memset(p, 'a', n);
	p[n] = '\0';
	CHECK_INT(goregex_compile(p, 0, &re, NULL, 0), -E2BIG);
	free(p);
}

/* The 6 KB reload annotation that cost 84 MB with glibc's regex: cheap here. */
TEST(hostile_optional_chain_is_cheap)
{
	size_t i, n = 3000;
	char *p = malloc(2 * n + 3), *s = malloc(n + 3);
	struct goregex *re;
	char err[256];
	int r;

	REQUIRE(p && s);
	p[0] = 'c';
	for (i = 0; i < n; i++)
		memcpy(p + 1 + 2 * i, "m?", 2);
	strcpy(p + 1 + 2 * n, "1");
	s[0] = 'c';
	memset(s + 1, 'm', n);
	strcpy(s + 1 + n, "1");
	r = goregex_compile(p, GOREGEX_FULL, &re, err, sizeof(err));
	if (r == 0) {
		CHECK_INT(goregex_match(re, s, strlen(s)), 1);
		CHECK_INT(goregex_match(re, "c1", 2), 1);
		CHECK_INT(goregex_match(re, "cm2", 3), 0);
		goregex_free(re);
	} else {
		CHECK_INT(r, -EINVAL); /* refused as too large is the other acceptable outcome */
	}
	free(p);
	free(s);
}

TEST(long_subject_is_linear)
{
	/* (a*)*b against a^n: exponential for a backtracker, linear here. */
	size_t n = 1 << 20;
	char *s = malloc(n);
	struct goregex *re;

	REQUIRE(s);
	memset(s, 'a', n);
	REQUIRE_INT(goregex_compile("(a*)*b", 0, &re, NULL, 0), 0);
	CHECK_INT(goregex_match(re, s, n), 0);
	goregex_free(re);
	free(s);
}

/* goregex_compile_mem: the least RE2 budget that compiles, and the pattern still matches. */
TEST(compile_mem_least_budget)
{
	struct goregex *re;
	size_t mem = 0;

	REQUIRE_INT(goregex_compile_mem("^8086$", 0, &re, &mem, NULL, 0), 0);
	CHECK(mem == GOREGEX_MIN_MEM + 6);
	CHECK_INT(goregex_match(re, "8086", 4), 1); /* '$': RE2's reverse program, in budget */
	CHECK_INT(goregex_match(re, "x8086", 5), 0);
	goregex_free(re);
	REQUIRE_INT(goregex_compile_mem("\\pL{50}7", 0, &re, &mem, NULL, 0), 0);
	CHECK(mem > (GOREGEX_MAX_MEM >> 2) && mem <= GOREGEX_MAX_MEM + 8);
	printf("  \\pL{50}7 may use %zu bytes\n", mem);
	goregex_free(re);
	CHECK_INT(goregex_compile_mem("\\pL{200}", 0, &re, &mem, NULL, 0), -EINVAL);
}

/*
 * goregex_compile_budget: with the 16 KiB nodeprobe-reload gives a reload-list
 * pattern, ordinary Reloader patterns compile and match as with the default;
 * one whose program does not fit is refused as too large.
 */
TEST(compile_with_small_memory_budget)
{
	static const char *const ok[] = {"^cfg-.*$", "^app-(a|b)-config$", "^cfg-[0-9]+$",
					 "^(?i)my-app-[a-z0-9-]+-secret$", "^[ab]*a[ab]{12}$"};
	struct goregex *re;
	char err[128];
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		REQUIRE_INT(goregex_compile_budget(ok[i], 0, 16u << 10, &re, err, sizeof(err)), 0);
		goregex_free(re);
	}
	REQUIRE_INT(goregex_compile_budget("^app-(a|b)-config$", 0, 16u << 10, &re, NULL, 0), 0);
	CHECK_INT(goregex_match(re, "app-b-config", 12), 1);
	CHECK_INT(goregex_match(re, "app-c-config", 12), 0);
	goregex_free(re);
	CHECK_INT(goregex_compile_budget("^\\pL+-\\d{1,5}$", 0, 16u << 10, &re, err, sizeof(err)),
		  -EINVAL);
	CHECK_STR(err, "pattern too large: it needs more memory than allowed");
	REQUIRE_INT(goregex_compile_budget("^\\pL+-\\d{1,5}$", 0, GOREGEX_MAX_MEM, &re, NULL, 0),
		    0);
	goregex_free(re);
}
