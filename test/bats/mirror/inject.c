/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test shim (LD_PRELOAD) from the issue 17 review: counts the calls that change files; at
 * INJ_AT kills the process (INJ_MODE unset) or fails that call and, with INJ_STICKY=1, every
 * later space-using call with ENOSPC. INJ_MATCH/INJ_CMD: before the first call whose
 * description ("mkdir PATH", "rename A -> B", ...) contains INJ_MATCH, run INJ_CMD (sh -c).
 * INJ_KILL2=K: kill at call K too (after an ENOSPC at INJ_AT: during the undo). Counted: renames,
 * links, mkdir/rmdir, unlinks, symlink, mkostemp, chmod/fchmod, fsync, writes to regular files. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static long cnt, at = -1, kill2 = -1;
static int mode, sticky, tripped, inited;
static void init(void)
{
	if (inited)
		return;
	inited = 1;
	const char *a = getenv("INJ_AT"), *m = getenv("INJ_MODE"), *s = getenv("INJ_STICKY");
	const char *k = getenv("INJ_KILL2");
	if (a)
		at = atol(a);
	if (k)
		kill2 = atol(k);
	mode = m && !strcmp(m, "enospc");
	sticky = s && *s == '1';
}
static void report(const char *what)
{
	const char *f = getenv("INJ_LOG");
	if (!f)
		return;
	FILE *o = fopen(f, "a");
	if (o) {
		fprintf(o, "%ld %s\n", cnt, what);
		fclose(o);
	}
}
/* returns 1 when the call must fail with ENOSPC */
static int step(const char *what, int uses_space)
{
	static int ran;
	const char *match = getenv("INJ_MATCH"), *cmd = getenv("INJ_CMD");

	init();
	cnt++;
	if (getenv("INJ_TRACE"))
		report(what);
	if (match && cmd && !ran && strstr(what, match)) {
		ran = 1;
		unsetenv("LD_PRELOAD");
		if (system(cmd) != 0)
			report("INJ_CMD failed");
	}
	/* INJ_KILL2: a second run of the shim's count, kill at that call (during an undo) */
	if (kill2 > 0 && cnt == kill2) {
		report(what);
		kill(getpid(), SIGKILL);
	}
	if (at > 0 && cnt == at) {
		if (!mode) {
			report(what);
			kill(getpid(), SIGKILL);
		}
		tripped = 1;
		report(what);
		return uses_space || !sticky ? 1 : 0;
	}
	if (tripped && sticky && uses_space)
		return 1;
	return 0;
}
#define REAL(ret, name, ...)                                                                       \
	static ret (*real_##name)(__VA_ARGS__);                                                    \
	if (!real_##name)                                                                          \
	real_##name = dlsym(RTLD_NEXT, #name)
int rename(const char *a, const char *b)
{
	REAL(int, rename, const char *, const char *);
	char w[8192];
	snprintf(w, sizeof w, "rename %s -> %s", a, b);
	if (step(w, 0)) {
		errno = ENOSPC;
		return -1;
	}
	return real_rename(a, b);
}
int renameat(int d1, const char *a, int d2, const char *b)
{
	REAL(int, renameat, int, const char *, int, const char *);
	char w[8192];
	snprintf(w, sizeof w, "renameat %s -> %s", a, b);
	if (step(w, 0)) {
		errno = ENOSPC;
		return -1;
	}
	return real_renameat(d1, a, d2, b);
}
int mkdir(const char *p, mode_t m)
{
	REAL(int, mkdir, const char *, mode_t);
	char w[8192];
	snprintf(w, sizeof w, "mkdir %s", p);
	struct stat st;
	if (lstat(p, &st) == 0)
		return real_mkdir(p, m);
	if (step(w, 1)) {
		errno = ENOSPC;
		return -1;
	}
	return real_mkdir(p, m);
}
int rmdir(const char *p)
{
	REAL(int, rmdir, const char *);
	char w[8192];
	snprintf(w, sizeof w, "rmdir %s", p);
	if (step(w, 0)) {
		errno = ENOSPC;
		return -1;
	}
	return real_rmdir(p);
}
int unlink(const char *p)
{
	REAL(int, unlink, const char *);
	char w[8192];
	snprintf(w, sizeof w, "unlink %s", p);
	if (step(w, 0)) {
		errno = ENOSPC;
		return -1;
	}
	return real_unlink(p);
}
int unlinkat(int d, const char *p, int f)
{
	REAL(int, unlinkat, int, const char *, int);
	char w[8192];
	snprintf(w, sizeof w, "unlinkat %s", p);
	if (step(w, 0)) {
		errno = ENOSPC;
		return -1;
	}
	return real_unlinkat(d, p, f);
}
int symlink(const char *t, const char *p)
{
	REAL(int, symlink, const char *, const char *);
	char w[8192];
	snprintf(w, sizeof w, "symlink %s", p);
	if (step(w, 1)) {
		errno = ENOSPC;
		return -1;
	}
	return real_symlink(t, p);
}
int mkostemp(char *t, int f)
{
	REAL(int, mkostemp, char *, int);
	char w[8192];
	snprintf(w, sizeof w, "mkostemp %s", t);
	if (step(w, 1)) {
		errno = ENOSPC;
		return -1;
	}
	return real_mkostemp(t, f);
}
int chmod(const char *p, mode_t m)
{
	REAL(int, chmod, const char *, mode_t);
	char w[8192];
	snprintf(w, sizeof w, "chmod %s", p);
	if (step(w, 0)) {
		errno = ENOSPC;
		return -1;
	}
	return real_chmod(p, m);
}
int linkat(int d1, const char *a, int d2, const char *b, int f)
{
	REAL(int, linkat, int, const char *, int, const char *, int);
	char w[8192];
	snprintf(w, sizeof w, "linkat %s -> %s", a, b);
	if (step(w, 1)) {
		errno = ENOSPC;
		return -1;
	}
	return real_linkat(d1, a, d2, b, f);
}
int link(const char *a, const char *b)
{
	REAL(int, link, const char *, const char *);
	char w[8192];
	snprintf(w, sizeof w, "link %s -> %s", a, b);
	if (step(w, 1)) {
		errno = ENOSPC;
		return -1;
	}
	return real_link(a, b);
}
ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(ssize_t, write, int, const void *, size_t);
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fd > 2) {
		if (step("write", 1)) {
			errno = ENOSPC;
			return -1;
		}
	}
	return real_write(fd, buf, n);
}
int fsync(int fd)
{
	REAL(int, fsync, int);
	if (step("fsync", 1)) {
		errno = ENOSPC;
		return -1;
	}
	return real_fsync(fd);
}
int fchmod(int fd, mode_t m)
{
	REAL(int, fchmod, int, mode_t);
	if (step("fchmod", 0)) {
		errno = ENOSPC;
		return -1;
	}
	return real_fchmod(fd, m);
}
