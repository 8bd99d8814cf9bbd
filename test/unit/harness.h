/* SPDX-License-Identifier: GPL-2.0-or-later */
/* harness: the tiny unit-test harness every test/unit/test_<module>.c includes (once). */
#ifndef NP_HARNESS_H
#define NP_HARNESS_H

/*
 * Define cases with TEST(name) { ... }; check with CHECK*, stop a case early
 * with REQUIRE*. The binary runs every case, or only those named on its command
 * line, prints "PASS: name" or "FAIL: name" per case and "<N> passed, <N>
 * failed" at the end, and exits 1 if any case failed. Tests run from the repo
 * root; real fixtures are under NP_SHARED (default ../shared).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>

typedef void (*harness_fn)(void);

static struct {
	const char *name;
	harness_fn fn;
} harness_cases[256];
static int harness_ncases;
static int harness_failed_now;

static inline void harness_register(const char *name, harness_fn fn)
{
	if (harness_ncases < (int)(sizeof(harness_cases) / sizeof(harness_cases[0]))) {
		harness_cases[harness_ncases].name = name;
		harness_cases[harness_ncases].fn = fn;
		harness_ncases++;
	}
}

#define TEST(name)                                                                                 \
	static void name(void);                                                                    \
	__attribute__((constructor)) static void harness_reg_##name(void)                          \
	{                                                                                          \
		harness_register(#name, name);                                                     \
	}                                                                                          \
	static void name(void)

#define HFAIL_(...)                                                                                \
	do {                                                                                       \
		fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                                  \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		harness_failed_now = 1;                                                            \
	} while (0)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			HFAIL_("CHECK(%s) failed", #cond);                                         \
	} while (0)
#define REQUIRE(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			HFAIL_("REQUIRE(%s) failed", #cond);                                       \
			return;                                                                    \
		}                                                                                  \
	} while (0)
#define CHECK_INT(a, b)                                                                            \
	do {                                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		if (a_ != b_)                                                                      \
			HFAIL_("%s == %lld, expected %s == %lld", #a, a_, #b, b_);                 \
	} while (0)
#define REQUIRE_INT(a, b)                                                                          \
	do {                                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		if (a_ != b_) {                                                                    \
			HFAIL_("%s == %lld, expected %s == %lld", #a, a_, #b, b_);                 \
			return;                                                                    \
		}                                                                                  \
	} while (0)
#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (!a_ || !b_ || strcmp(a_, b_) != 0)                                             \
			HFAIL_("%s == \"%s\", expected \"%s\"", #a, a_ ? a_ : "(null)",            \
			       b_ ? b_ : "(null)");                                                \
	} while (0)

/* Path of a file under ../shared (or $NP_SHARED); static buffer, valid until the next call. */
static inline const char *harness_shared(const char *rel)
{
	static char buf[4096];
	const char *base = getenv("NP_SHARED");

	snprintf(buf, sizeof(buf), "%s/%s", base ? base : "../shared", rel);
	return buf;
}

/* A fresh temporary directory (static buffer, valid until the next call). */
static inline const char *harness_tmpdir(void)
{
	static char buf[64];

	strcpy(buf, "/tmp/np-unit-XXXXXX");
	if (!mkdtemp(buf)) {
		perror("mkdtemp");
		exit(2);
	}
	return buf;
}

/* Write len bytes of data to dir/rel, creating parent directories; exits 2 on failure. */
static inline void harness_put(const char *dir, const char *rel, const void *data, size_t len)
{
	char path[4096], *slash;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	fp = fopen(path, "w");
	if (!fp || fwrite(data, 1, len, fp) != len || fclose(fp) != 0) {
		perror(path);
		exit(2);
	}
}

/* harness_put for a NUL-terminated string (without the NUL). */
static inline void harness_put_str(const char *dir, const char *rel, const char *s)
{
	harness_put(dir, rel, s, strlen(s));
}

static inline int harness_rm_one(const char *p, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)type;
	(void)f;
	return remove(p);
}

/* rm -rf dir (a directory made by harness_tmpdir); symlinks are removed, not followed. */
static inline void harness_rm_tree(const char *dir)
{
	nftw(dir, harness_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(int argc, char **argv)
{
	int i, j, passed = 0, failed = 0;

	for (i = 0; i < harness_ncases; i++) {
		int selected = argc < 2;

		for (j = 1; j < argc; j++)
			if (strcmp(argv[j], harness_cases[i].name) == 0)
				selected = 1;
		if (!selected)
			continue;
		harness_failed_now = 0;
		harness_cases[i].fn();
		fflush(stderr);
		printf("%s: %s\n", harness_failed_now ? "FAIL" : "PASS", harness_cases[i].name);
		fflush(stdout);
		if (harness_failed_now)
			failed++;
		else
			passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif
