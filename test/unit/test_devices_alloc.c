/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_devices_alloc: GetPreferredAllocation over many shares looks each ID up once (issue 19
 * review: 16 devices x 1000 shares took 33 s of the plugin's single loop). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devices/devices.h"
#include "log/log.h"

#include "harness.h"

#define NDEV   16
#define SHARES 1000
#define NIDS   (NDEV * SHARES)

/* f: NDEV devices "gpuD" of SHARES IDs "gpuD-S"; avail: every ID, devices interleaved. */
static void build(struct devices_found *f, const char **avail)
{
	char id[32];

	f->d = calloc(NDEV, sizeof(*f->d));
	REQUIRE(f->d != NULL);
	f->n = NDEV;
	for (size_t i = 0; i < NDEV; i++) {
		struct devices_dev *d = &f->d[i];

		snprintf(id, sizeof(id), "gpu%zu", i);
		d->name = strdup(id);
		d->ids = calloc(SHARES + 1, sizeof(char *));
		REQUIRE(d->name && d->ids);
		for (size_t s = 0; s < SHARES; s++) {
			snprintf(id, sizeof(id), "gpu%zu-%zu", i, s);
			REQUIRE((d->ids[s] = strdup(id)) != NULL);
			avail[s * NDEV + i] = d->ids[s];
		}
		d->n_ids = SHARES;
	}
	REQUIRE_INT(devices_found_index(f), 0);
}

static long gpu_of(const char *id)
{
	return strtol(id + 3, NULL, 10);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One request of size 4 per policy: lookups counted (no timing assertion; elapsed printed). */
TEST(devices_preferred_16x1000)
{
	static const char *avail[NIDS];
	struct devices_found f = {0};
	struct log_err err = {0};
	const char *must[] = {"gpu3-7"};
	const char *out[8];
	unsigned long c0;
	double t0;

	build(&f, avail);
	c0 = devices_find_compares();
	t0 = now();
	REQUIRE_INT(
	    devices_preferred(&f, DEVICES_POLICY_PACKED, avail, NIDS, must, 1, 4, out, &err), 4);
	fprintf(stderr, "  packed: %lu ID comparisons, %.3f ms\n", devices_find_compares() - c0,
		(now() - t0) * 1e3);
	/* one binary search per avail and must ID (log2 16000 < 15), never a scan per device */
	CHECK(devices_find_compares() - c0 < 16 * (NIDS + 2));
	CHECK_STR(out[0], "gpu3-7");
	for (int i = 1; i < 4; i++) /* packed: the must's GPU first */
		CHECK(strncmp(out[i], "gpu3-", 5) == 0 && strcmp(out[i], "gpu3-7") != 0);
	CHECK(strcmp(out[1], out[2]) && strcmp(out[2], out[3]) && strcmp(out[1], out[3]));

	c0 = devices_find_compares();
	t0 = now();
	REQUIRE_INT(
	    devices_preferred(&f, DEVICES_POLICY_BALANCED, avail, NIDS, NULL, 0, 4, out, &err), 4);
	fprintf(stderr, "  balanced: %lu ID comparisons, %.3f ms\n", devices_find_compares() - c0,
		(now() - t0) * 1e3);
	CHECK(devices_find_compares() - c0 < 16 * (NIDS + 2));
	for (int i = 0; i < 4; i++) /* balanced: four different GPUs */
		for (int j = 0; j < i; j++)
			CHECK(gpu_of(out[i]) != gpu_of(out[j]));

	c0 = devices_find_compares();
	REQUIRE_INT(devices_preferred(&f, DEVICES_POLICY_NONE, avail, NIDS, NULL, 0, 4, out, &err),
		    4);
	CHECK(devices_find_compares() - c0 < 16 * (NIDS + 2));
	CHECK_STR(out[0], avail[0]); /* none: the kubelet's order */
	CHECK_STR(out[3], avail[3]);
	devices_found_free(&f);
}

/* Repeated and unknown IDs in avail, a must ID also in avail: each handed out once. */
TEST(devices_preferred_repeats_and_unknowns)
{
	static const char *avail[NIDS];
	struct devices_found f = {0};
	struct log_err err = {0};
	const char *a[] = {"gpu0-0", "gpu0-0", "nope", "gpu1-0", "nope", "gpu1-1"};
	const char *must[] = {"gpu1-0"};
	const char *out[8];

	build(&f, avail);
	REQUIRE_INT(devices_preferred(&f, DEVICES_POLICY_PACKED, a, 6, must, 1, 4, out, &err), 4);
	CHECK_STR(out[0], "gpu1-0");
	CHECK_STR(out[1], "gpu1-1");
	CHECK_STR(out[2], "gpu0-0");
	CHECK_STR(out[3], "nope");
	REQUIRE_INT(devices_preferred(&f, DEVICES_POLICY_NONE, a, 6, NULL, 0, 5, out, &err), 4);
	CHECK_INT(devices_preferred(&f, DEVICES_POLICY_NONE, a, 6, NULL, 0, 7, out, &err), -EINVAL);
	devices_found_free(&f);
}
