/* SPDX-License-Identifier: GPL-2.0-or-later */
/* harness: the tiny unit-test harness every test/unit/test_<module>.c includes (once). */
#ifndef NP_HARNESS_H
#define NP_HARNESS_H

/*
 * Define cases with TEST(name) { ... }; check with CHECK*, stop a case early
 * with REQUIRE*, give up on a case that cannot run here with SKIP("why"). The
 * binary runs every case, or only those named on its command line (a name that
 * is no case is a failure), each in its own process, so a crash or a failed
 * REQUIRE cannot leak state into the next case. It prints "PASS: name",
 * "FAIL: name" or "SKIP: name" per case and "<N> passed, <N> failed, <N>
 * skipped" at the end, and exits 1 if any case failed. --list prints every case's name, one a
 * line, in file order, and runs none (test/bats/cross.bash checks that an emulated run ran
 * exactly those). Tests run from the repo
 * root; their fixtures are under test/fixtures (harness_fixture), and the
 * optional wider set under ../shared (harness_shared, NP_SHARED overrides).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void (*harness_fn)(void);

struct harness_case {
	const char *name; /* the function's name, as given on the command line */
	harness_fn fn;	  /* the case */
};

static struct harness_case *harness_cases; /* every registered case, in file order */
static int harness_ncases;
static int harness_failed_now;

#define HARNESS_SKIP_EXIT 77 /* a case's exit status for "skipped" (as automake's) */

static inline void harness_register(const char *name, harness_fn fn)
{
	struct harness_case *n = realloc(harness_cases, sizeof(*n) * (size_t)(harness_ncases + 1));

	if (!n) {
		fprintf(stderr, "harness: out of memory registering %s\n", name);
		abort();
	}
	harness_cases = n;
	harness_cases[harness_ncases].name = name;
	harness_cases[harness_ncases].fn = fn;
	harness_ncases++;
}

#define TEST(name)                                                                                 \
	static void name(void);                                                                    \
	__attribute__((constructor)) static void harness_reg_##name(void)                          \
	{                                                                                          \
		harness_register(#name, name);                                                     \
	}                                                                                          \
	static void name(void)

/* Skip the running case (it cannot run here); the reason goes to stderr. */
#define SKIP(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "  skipped: ");                                                    \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		fflush(NULL);                                                                      \
		exit(HARNESS_SKIP_EXIT);                                                           \
	} while (0)

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

/* Path of test/fixtures/<rel> (the fixtures every clone has); static buffer, valid until the next
 * call. */
static inline const char *harness_fixture(const char *rel)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "test/fixtures/%s", rel);
	return buf;
}

/*
 * Path of <shared>/<rel>, where <shared> is $NP_SHARED or ../shared: the wider
 * fixture set beside a CI checkout. NULL when <shared>/fixtures is absent (a
 * plain clone): the caller SKIPs. Static buffer, valid until the next call.
 */
static inline const char *harness_shared(const char *rel)
{
	static char buf[4096];
	const char *base = getenv("NP_SHARED");
	struct stat st;

	snprintf(buf, sizeof(buf), "%s/fixtures", base ? base : "../shared");
	if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
		return NULL;
	snprintf(buf, sizeof(buf), "%s/%s", base ? base : "../shared", rel);
	return buf;
}

/* harness_shared(rel), or SKIP the case when ../shared/fixtures is absent. */
#define SHARED_OR_SKIP(rel)                                                                        \
	({                                                                                         \
		const char *p_ = harness_shared(rel);                                              \
		if (!p_)                                                                           \
			SKIP("../shared/fixtures absent (NP_SHARED): the wider sweep needs it");   \
		p_;                                                                                \
	})

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

/* Run case i in a child process; 0 passed, 1 failed, 2 skipped. */
static inline int harness_run_one(int i)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("harness: fork");
		return 1;
	}
	if (pid == 0) {
		harness_failed_now = 0;
		harness_cases[i].fn();
		fflush(NULL);
		exit(harness_failed_now ? 1 : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "  %s: killed by signal %d (%s)\n", harness_cases[i].name,
			WTERMSIG(status), strsignal(WTERMSIG(status)));
		return 1;
	}
	if (WEXITSTATUS(status) == HARNESS_SKIP_EXIT)
		return 2;
	if (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1)
		fprintf(stderr, "  %s: exited %d\n", harness_cases[i].name, WEXITSTATUS(status));
	return WEXITSTATUS(status) != 0;
}

int main(int argc, char **argv)
{
	static const char *const outcome[] = {"PASS", "FAIL", "SKIP"};
	int i, j, count[3] = {0, 0, 0};

	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (i = 0; i < harness_ncases; i++)
			printf("%s\n", harness_cases[i].name);
		free(harness_cases);
		return 0;
	}
	for (j = 1; j < argc; j++) {
		for (i = 0; i < harness_ncases; i++)
			if (strcmp(argv[j], harness_cases[i].name) == 0)
				break;
		if (i == harness_ncases) {
			printf("FAIL: %s: no such case\n", argv[j]);
			count[1]++;
		}
	}
	for (i = 0; i < harness_ncases; i++) {
		int selected = argc < 2, r;

		for (j = 1; j < argc; j++)
			if (strcmp(argv[j], harness_cases[i].name) == 0)
				selected = 1;
		if (!selected)
			continue;
		r = harness_run_one(i);
		fflush(stderr);
		printf("%s: %s\n", outcome[r], harness_cases[i].name);
		fflush(stdout);
		count[r]++;
	}
	printf("%d passed, %d failed, %d skipped\n", count[0], count[1], count[2]);
	free(harness_cases);
	return count[1] ? 1 : 0;
}

#endif
