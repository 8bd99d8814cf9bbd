/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/reload's reload-list budgets (reload_relist.c, issue 17 #4): memory bounded by
 * what is charged, per namespace and in total; a workload's own edit; long lists kept as a digest.
 */
#include <errno.h>
#include <stdlib.h>

#include "harness.h"
#include "reload/reload.h"
#include "reload/reload_internal.h"

/* A Deployment ns/name whose metadata carries the ConfigMap reload list list. */
static json_t *dep(const char *ns, const char *name, const char *list)
{
	return json_pack("{s:{s:s,s:s,s:{s:s}},s:{s:{s:{s:[{s:s}]}}}}", "metadata", "name", name,
			 "namespace", ns, "annotations", "configmap.reloader.stakater.com/reload",
			 list, "spec", "template", "spec", "containers", "name", "app");
}

/* Parse it as a new version of old (NULL: none). */
static int wl_over(struct reload_workload *w, const char *ns, const char *name, const char *list,
		   const struct reload_workload *old)
{
	json_t *j = dep(ns, name, list);
	int r = reload_workload_parse_over(w, RELOAD_DEPLOYMENT, j, 1, old, NULL);

	json_decref(j);
	return r;
}

static int matches(const struct reload_workload *w, const char *name)
{
	return reload_relist_match(w->relist[0][RELOAD_CONFIGMAP], name);
}

/* This process's resident set, KiB (/proc/self/status VmRSS). */
static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			v = atol(line + 6);
	fclose(f);
	return v;
}

/*
 * The review's probe, scaled to a 1 MiB total: distinct lists of 4 patterns
 * like [ab]*a[ab]{12}, whose lazy DFA grows with every new name matched, in
 * many namespaces; then 40 random 253-byte names matched against each. The
 * memory they take stays under what they were charged (with 1 MiB of RE2
 * memory per pattern and 2 KiB charged each, it was 150 times over).
 */
TEST(budget_bounds_memory_of_patterns_matched)
{
	enum { LISTS = 400, NAMES = 40 };
	static struct reload_workload w[LISTS];
	char list[256], ns[32], name[254];
	size_t i, k, kept = 0, charged;
	long before, grown;
	int j, hits = 0;

	reload_relist_limits(0, 0, 1u << 20);
	/* what the first list and match touch once (RE2's tables, the JSON library) */
	REQUIRE_INT(wl_over(&w[0], "warm", "w", "[ab]*a[ab]{12}", NULL), 0);
	CHECK(!matches(&w[0], "b"));
	reload_workload_free(&w[0]);
	before = rss_kib();
	for (i = 0; i < LISTS; i++) {
		snprintf(ns, sizeof(ns), "ns%zu", i % 20);
		snprintf(
		    list, sizeof(list),
		    "[ab]*a[ab]{12}, [ab]*b[ab]{12}x%zu, [ab]*a[ab]{11}b%zu, [ab]*ab[ab]{12}%zu", i,
		    i, i);
		REQUIRE_INT(wl_over(&w[i], ns, "w", list, NULL), 0);
		kept += w[i].relist[0][RELOAD_CONFIGMAP] != NULL;
	}
	charged = reload_relist_used();
	srandom(1);
	for (k = 0; k < NAMES; k++) {
		for (j = 0; j < 253; j++)
			name[j] = "ab"[random() % 2];
		name[253] = '\0';
		for (i = 0; i < LISTS; i++)
			hits += matches(&w[i], name);
	}
	grown = rss_kib() - before;
	printf("# %zu of %d lists kept, %zu KiB charged, RSS grew %ld KiB; %d matches\n", kept,
	       LISTS, charged >> 10, grown, hits);
	CHECK(kept > 0 && kept < LISTS);
	CHECK(charged <= 1u << 20);
#ifndef __SANITIZE_ADDRESS__ /* ASan's shadow memory and quarantine are no measure */
	/*
	 * Nor is an emulator's: under qemu-user (test/bats/cross.bash sets NP_EMULATED) the RSS
	 * holds qemu's translation cache, which grows with the code first run in this window
	 * (2.8 MB on armhf, while the same build natively grows as on amd64).
	 */
	if (getenv("NP_EMULATED"))
		printf("# RSS bound not checked under an emulator (NP_EMULATED)\n");
	else
		CHECK(grown <= (long)(charged >> 10) + 512); /* 512 KiB: the process's own slack */
#endif
	for (i = 0; i < LISTS; i++)
		reload_workload_free(&w[i]);
	CHECK_INT(reload_relist_used(), 0);
	reload_relist_limits(0, 0, 0);
}

/*
 * Plain names are offsets into the list's text: 5000 names cost their text and
 * 8 bytes each, not a string and a pointer each.
 */
TEST(budget_plain_names_charged_with_their_text)
{
	struct strbuf text = STRBUF_INIT(1 << 20);
	struct reload_workload w;
	size_t i;

	for (i = 0; i < 5000; i++)
		sb_addf(&text, "%scfg-%05zu", i ? ", " : "", i);
	REQUIRE_INT(wl_over(&w, "ns", "w", text.buf, NULL), 0);
	CHECK(w.refused == NULL);
	CHECK_INT(reload_relist_count(w.relist[0][RELOAD_CONFIGMAP]), 5000);
	CHECK(reload_relist_used() >= text.len + 8 * 5000);
	CHECK(reload_relist_used() <= text.len + 8 * 5000 + 256);
	CHECK(matches(&w, "cfg-04999"));
	CHECK(matches(&w, "cfg-00000"));
	CHECK(!matches(&w, "cfg-0000"));
	CHECK(!matches(&w, "cfg-05000"));
	reload_workload_free(&w);
	sb_free(&text);
}

/*
 * One namespace may hold RELOAD_LIST_NS_MAX: past it its lists are refused
 * naming the namespace and that limit, while another namespace still gets its
 * own; past the total the message names the namespace holding the most.
 */
TEST(budget_per_namespace_and_total)
{
	struct reload_workload a, b, c2, d;

	reload_relist_limits(0, 40000, 70000); /* two patterns per namespace, four in all */
	REQUIRE_INT(wl_over(&a, "team-a", "a", "x.*, y.*", NULL), 0);
	CHECK(a.refused == NULL);
	REQUIRE_INT(wl_over(&b, "team-a", "b", "z.*", NULL), 0);
	REQUIRE(b.refused != NULL);
	CHECK(b.relist[0][RELOAD_CONFIGMAP] == NULL);
	CHECK(strstr(b.refused,
		     "Deployment team-a/b: annotation "
		     "configmap.reloader.stakater.com/reload: its 1 entry would need "
		     "about 16 KiB, and the reload lists of one namespace may use 39 KiB "
		     "(namespace 'team-a': 32 KiB in use); the list is ignored") == b.refused);
	REQUIRE_INT(wl_over(&c2, "team-b", "c", "z.*", NULL), 0);
	CHECK(c2.refused == NULL);
	CHECK(matches(&c2, "zz"));
	REQUIRE_INT(wl_over(&d, "team-c", "d", "p.*, q.*", NULL), 0);
	REQUIRE(d.refused != NULL);
	CHECK(strstr(d.refused,
		     "its 2 entries would need about 32 KiB, and the reload lists of all "
		     "namespaces may use 68 KiB (48 KiB in use, the most by namespace "
		     "'team-a': 32 KiB)") != NULL);
	CHECK_INT(reload_relist_ns_used("team-c"), 0);
	reload_workload_free(&a);
	reload_workload_free(&b);
	reload_workload_free(&c2);
	reload_workload_free(&d);
	CHECK_INT(reload_relist_used(), 0);
	CHECK_INT(reload_relist_ns_used("team-a"), 0);
	reload_relist_limits(0, 0, 0);
}

/*
 * A workload's edit of its own list is charged as if its old list were gone
 * (it is, once the edit is applied), and a refused list is compiled when
 * budget is given back (reload_workload_retry_lists).
 */
TEST(budget_own_edit_credited_and_refusal_retried)
{
	struct reload_workload a, a2, b;

	reload_relist_limits(0, 0, 40000);
	REQUIRE_INT(wl_over(&a, "ns", "a", "x.*, y.*", NULL), 0);
	CHECK(a.refused == NULL);
	REQUIRE_INT(wl_over(&a2, "ns", "a", "x.*, y2.*", &a), 0);
	CHECK(a2.refused == NULL);
	CHECK(matches(&a2, "y2z"));
	reload_workload_free(&a);
	REQUIRE_INT(wl_over(&b, "ns", "b", "z.*", NULL), 0);
	REQUIRE(b.refused != NULL);
	CHECK_INT(reload_workload_retry_lists(&b), 0);
	CHECK(!matches(&b, "zz"));
	reload_workload_free(&a2);
	CHECK_INT(reload_workload_retry_lists(&b), 1);
	CHECK(b.refused == NULL);
	CHECK(matches(&b, "zz"));
	reload_workload_free(&b);
	reload_relist_limits(0, 0, 0);
}

/* A list over the per-annotation limit keeps only its SHA-1, enough to tell a new version. */
TEST(budget_long_list_kept_as_digest)
{
	struct strbuf text = STRBUF_INIT(1 << 20);
	struct reload_workload w;
	char hex[RELOAD_HASH_HEX];

	while (text.len <= RELOAD_LIST_TEXT_MAX)
		sb_addf(&text, "cfg-%05zu-.*, ", text.len);
	REQUIRE_INT(wl_over(&w, "ns", "big", text.buf, NULL), 0);
	REQUIRE(w.refused != NULL);
	CHECK(strstr(w.refused, "over the limit of 65536 bytes per annotation") != NULL);
	REQUIRE_INT(reload_relist_digest(text.buf, text.len, hex), 0);
	CHECK_STR(w.ann[0][RA_CM_RELOAD], hex);
	CHECK_INT(reload_workload_same_list(&w, 0, RA_CM_RELOAD, text.buf), 1);
	CHECK_INT(reload_workload_same_list(&w, 0, RA_CM_RELOAD, hex), 0);
	text.buf[text.len - 3] = 'x';
	CHECK_INT(reload_workload_same_list(&w, 0, RA_CM_RELOAD, text.buf), 0);
	CHECK_INT(reload_workload_same_list(&w, 0, RA_CM_RELOAD, NULL), 0);
	CHECK_INT(reload_workload_same_list(&w, 0, RA_SEC_RELOAD, NULL), 1);
	reload_workload_free(&w);
	sb_free(&text);
}
