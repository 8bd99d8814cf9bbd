/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_dra_slice: pkg/dra's ResourceSlice content (dra_slice.c): the API's rules for device
 * names and attributes (what it would refuse is left out, warned once, never cut), and an
 * allocation failure at every point of the build failing it whole.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/dra_internal.h"
#include "log/log.h"

#include "harness.h"

static char warnings[1 << 16];
static int n_warnings;

static void capture(void *data, enum log_level lvl, const char *msg)
{
	(void)data;
	if (lvl != LOG_LVL_WARN)
		return;
	n_warnings++;
	strncat(warnings, msg, sizeof(warnings) - strlen(warnings) - 2);
	strcat(warnings, "\n");
}

/* The build of d[0..n) as one compact JSON text (slices joined by '|'), or NULL with *rc. */
static char *build(const struct dra_slice_dev *d, size_t n, struct dra_warned *w, int *rc)
{
	json_t **chunks = NULL;
	size_t k = 99;
	struct log_err err = {0};
	char *out = NULL;
	size_t len = 0;

	*rc = dra_slice_build(d, n, w, &chunks, &k, &err);
	if (*rc < 0) {
		CHECK(chunks == NULL && k == 0);
		return NULL;
	}
	for (size_t i = 0; i < k; i++) {
		char *s = json_dumps(chunks[i], JSON_COMPACT);
		size_t l = strlen(s);

		out = realloc(out, len + l + 2);
		memcpy(out + len, s, l);
		len += l;
		out[len++] = '|';
		out[len] = 0;
		free(s);
	}
	dra_chunks_free(chunks, k);
	return out;
}

TEST(attributes_the_api_refuses_are_left_out_and_warned_once)
{
	char s64[65], s65[66], id33[34];
	struct dra_attr a[] = {
	    {"s64", s64, 0, DRA_ATTR_STRING},
	    {"s65", s65, 0, DRA_ATTR_STRING},
	    {"v", "1.0.0-rc.1+build.05", 0, DRA_ATTR_VERSION},
	    {"vzero", "01.2.3", 0, DRA_ATTR_VERSION},
	    {"vtwo", "1.2", 0, DRA_ATTR_VERSION},
	    {"vpre", "1.0.0-01", 0, DRA_ATTR_VERSION},
	    {"utf", "caf\xc3\xa9", 0, DRA_ATTR_STRING},
	    {"notutf", "caf\xe9", 0, DRA_ATTR_STRING},
	    {"bad-id", "x", 0, DRA_ATTR_STRING},
	    {id33, "x", 0, DRA_ATTR_STRING},
	    {"resource.kubernetes.io/pcieRoot", "pci0000:00", 0, DRA_ATTR_STRING},
	    {"a/b/c", "x", 0, DRA_ATTR_STRING},
	    {"Bad.Domain/x", "x", 0, DRA_ATTR_STRING},
	    {"n", NULL, -3, DRA_ATTR_INT},
	    {"n", NULL, 4, DRA_ATTR_INT},
	    {"yes", NULL, 1, DRA_ATTR_BOOL},
	};
	struct dra_attr many[40];
	char ids[40][16];
	struct dra_slice_dev d[] = {
	    {"dev-a", a, sizeof(a) / sizeof(a[0])},
	    {"dev-b", many, 40},
	    {"Dev_C", a, 1},
	    {"dev-a", a, sizeof(a) / sizeof(a[0])},
	    {"d123456789012345678901234567890123456789012345678901234567890123", a, 1},
	};
	struct dra_warned w = {0};
	json_t *got, *dev_a;
	char *s;
	int rc, first;

	memset(s64, 'x', 64);
	s64[64] = 0;
	memset(s65, 'y', 65);
	s65[65] = 0;
	memset(id33, 'i', 33);
	id33[33] = 0;
	for (int i = 0; i < 40; i++) {
		snprintf(ids[i], sizeof(ids[i]), "a%d", i);
		many[i] = (struct dra_attr){ids[i], NULL, i, DRA_ATTR_INT};
	}
	log_set_fn(capture, NULL, LOG_LVL_DEBUG);
	s = build(d, sizeof(d) / sizeof(d[0]), &w, &rc);
	REQUIRE_INT(rc, 0);
	fprintf(stderr, "%s\n%s", s, warnings);
	s[strlen(s) - 1] = 0; /* one slice */
	got = json_loads(s, 0, NULL);
	REQUIRE(got);
	CHECK_INT(json_array_size(got), 2); /* dev-a (once), dev-b */
	dev_a = json_object_get(json_array_get(got, 0), "attributes");
	CHECK_STR(json_string_value(json_object_get(json_array_get(got, 0), "name")), "dev-a");
	CHECK_STR(json_string_value(json_object_get(json_object_get(dev_a, "s64"), "string")), s64);
	CHECK(!json_object_get(dev_a, "s65"));
	CHECK_STR(json_string_value(json_object_get(json_object_get(dev_a, "v"), "version")),
		  "1.0.0-rc.1+build.05");
	CHECK(!json_object_get(dev_a, "vzero"));
	CHECK(!json_object_get(dev_a, "vtwo"));
	CHECK(!json_object_get(dev_a, "vpre"));
	CHECK_STR(json_string_value(json_object_get(json_object_get(dev_a, "utf"), "string")),
		  "caf\xc3\xa9");
	CHECK(!json_object_get(dev_a, "notutf"));
	CHECK(!json_object_get(dev_a, "bad-id"));
	CHECK(!json_object_get(dev_a, id33));
	CHECK(json_object_get(dev_a, "resource.kubernetes.io/pcieRoot"));
	CHECK(!json_object_get(dev_a, "a/b/c"));
	CHECK(!json_object_get(dev_a, "Bad.Domain/x"));
	CHECK_INT(json_integer_value(json_object_get(json_object_get(dev_a, "n"), "int")), -3);
	CHECK(json_is_true(json_object_get(json_object_get(dev_a, "yes"), "bool")));
	CHECK_INT(json_object_size(dev_a), 6);
	/* 32 attributes a device: a32..a39 left out */
	CHECK_INT(json_object_size(json_object_get(json_array_get(got, 1), "attributes")), 32);
	CHECK(!json_object_get(json_object_get(json_array_get(got, 1), "attributes"), "a32"));
	/* one warning per device and attribute, naming both */
	CHECK(strstr(warnings, "device dev-a: attribute s65 left out: longer than the API's 64"));
	CHECK(strstr(warnings, "device dev-a: attribute vzero left out: not a semantic version"));
	CHECK(strstr(warnings, "device dev-a: attribute notutf left out: not UTF-8"));
	CHECK(strstr(warnings, "device dev-a: attribute n left out: given twice"));
	CHECK(strstr(warnings, "device dev-b: attribute a32 left out: over the API's 32"));
	CHECK(strstr(warnings, "device 'Dev_C' left out: not a DNS label"));
	CHECK(strstr(warnings, "device 'dev-a' left out: its name is given twice"));
	CHECK(strstr(warnings,
		     "device 'd1234567890123456789012345678901234567890123456789012345678901"
		     "23' left out: not a DNS label"));
	first = n_warnings;
	CHECK_INT(first, 10 + 8 + 3);
	free(s);
	s = build(d, sizeof(d) / sizeof(d[0]), &w, &rc);
	CHECK_INT(n_warnings, first); /* the second build: no warning again */
	free(s);
	json_decref(got);
	dra_warned_free(&w);
}

/* ---- allocation failures */

static long allocs, fail_at = -1;

static void *failing_malloc(size_t n)
{
	if (allocs++ == fail_at)
		return NULL;
	return malloc(n);
}

TEST(an_allocation_failure_anywhere_fails_the_build_whole)
{
	struct dra_attr a[] = {
	    {"class", "serial", 0, DRA_ATTR_STRING}, {"major", NULL, 188, DRA_ATTR_INT},
	    {"yes", NULL, 1, DRA_ATTR_BOOL},	     {"fw", "1.2.3", 0, DRA_ATTR_VERSION},
	    {"bad-id", "x", 0, DRA_ATTR_STRING},
	};
	struct dra_slice_dev d[130];
	char names[130][16];
	struct dra_warned w = {0};
	char *want, *got;
	int rc, failed = 0;
	long at;

	for (int i = 0; i < 130; i++) {
		snprintf(names[i], sizeof(names[i]), "dev-%03d", i);
		d[i] = (struct dra_slice_dev){names[i], a, sizeof(a) / sizeof(a[0])};
	}
	want = build(d, 130, &w, &rc); /* two slices */
	REQUIRE(want && rc == 0);
	REQUIRE(strstr(want, "\"dev-129\"") && strstr(want, "\"version\":\"1.2.3\""));
	/* a failure at each allocation in turn (every 7th past the first 200: the test's time) */
	for (at = 0;; at += at < 200 ? 1 : 7) {
		json_t **chunks = NULL;
		size_t k = 99;
		struct log_err err = {0};

		allocs = 0;
		fail_at = at;
		json_set_alloc_funcs(failing_malloc, free);
		rc = dra_slice_build(d, 130, &w, &chunks, &k, &err);
		json_set_alloc_funcs(malloc, free);
		if (allocs <= at) { /* no failure reached: the whole build */
			REQUIRE_INT(rc, 0);
			dra_chunks_free(chunks, k);
			break;
		}
		if (rc == 0) { /* an allocation failed, yet a build: it must be the whole one */
			got = NULL;
			for (size_t i = 0; i < k; i++) {
				char *s = json_dumps(chunks[i], JSON_COMPACT);

				got = realloc(got, (got ? strlen(got) : 0) + strlen(s) + 2);
				if (i == 0)
					got[0] = 0;
				strcat(strcat(got, s), "|");
				free(s);
			}
			dra_chunks_free(chunks, k);
			if (strcmp(got, want))
				HFAIL_("allocation %ld failed: a build that is not the whole", at);
			free(got);
			if (harness_failed_now)
				break;
			continue;
		}
		failed++;
		CHECK_INT(rc, -ENOMEM);
		CHECK(chunks == NULL && k == 0);
		CHECK(strstr(err.msg, "out of memory building the slices"));
		if (harness_failed_now)
			break;
	}
	CHECK(failed > 100);
	free(want);
	dra_warned_free(&w);
}
