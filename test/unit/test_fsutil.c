/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/fsutil: atomic publish, unchanged files not rewritten, safe names. */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil/fsutil.h"
#include "harness.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

TEST(publish_writes_then_skips_unchanged)
{
	char dir[64], path[128];
	struct strbuf sb = STRBUF_INIT(1024);
	struct stat st1, st2;

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	snprintf(path, sizeof(path), "%s/nodeprobe", dir);
	CHECK_INT(fs_publish(dir, "nodeprobe", "a=1\n", 4, 0644, NULL), 1);
	REQUIRE(stat(path, &st1) == 0);
	CHECK_INT(st1.st_mode & 07777, 0644);
	CHECK_INT(sb_read_file(&sb, path), 4);
	CHECK_STR(sb.buf, "a=1\n");
	CHECK_INT(fs_publish(dir, "nodeprobe", "a=1\n", 4, 0644, NULL), 0);
	REQUIRE(stat(path, &st2) == 0);
	CHECK_INT(st2.st_ino, st1.st_ino); /* not replaced */
	CHECK_INT(fs_publish(dir, "nodeprobe", "a=2\n", 4, 0644, NULL), 1);
	REQUIRE(stat(path, &st2) == 0);
	CHECK(st2.st_ino != st1.st_ino); /* replaced by rename */
	CHECK_INT(fs_publish(dir, "nodeprobe", "", 0, 0644, NULL), 1);
	CHECK_INT(count_entries(dir), 1); /* no temp file left */
	chmod(path, 0600);
	CHECK_INT(fs_publish(dir, "nodeprobe", "", 0, 0644, NULL), 1); /* mode differs */
	unlink(path);
	rmdir(dir);
	sb_free(&sb);
}

TEST(publish_errors_leave_target)
{
	struct log_err err = {0};

	CHECK_INT(fs_publish("/nonexistent-dir", "x", "a", 1, 0644, &err), -ENOENT);
	CHECK_STR(err.msg, "/nonexistent-dir: No such file or directory");
	CHECK_INT(fs_publish("/tmp", "../x", "a", 1, 0644, &err), -EINVAL);
	CHECK_INT(fs_publish("/tmp", "", "a", 1, 0644, NULL), -EINVAL);
}

TEST(publish_full_disk)
{
	struct log_err err = {0};

	/* /dev/full: not a directory, so the open fails cleanly. */
	CHECK(fs_publish("/dev/full", "x", "a", 1, 0644, &err) < 0);
}

TEST(safe_names)
{
	CHECK(fs_name_is_safe("docker.io"));
	CHECK(fs_name_is_safe("registry.local:5000"));
	CHECK(fs_name_is_safe("_default"));
	CHECK(!fs_name_is_safe(""));
	CHECK(!fs_name_is_safe("."));
	CHECK(!fs_name_is_safe(".."));
	CHECK(!fs_name_is_safe("../../etc"));
	CHECK(!fs_name_is_safe("a/b"));
	CHECK(!fs_name_is_safe("a\nb"));
	CHECK(!fs_name_is_safe(NULL));
}

TEST(mkdir_p)
{
	char dir[64], deep[128];

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	snprintf(deep, sizeof(deep), "%s/a/b/c", dir);
	CHECK_INT(fs_mkdir_p(deep, 0755), 0);
	CHECK(fs_is_dir(deep));
	CHECK_INT(fs_mkdir_p(deep, 0755), 0);
	rmdir(deep);
	snprintf(deep, sizeof(deep), "%s/a/b", dir);
	rmdir(deep);
	snprintf(deep, sizeof(deep), "%s/a", dir);
	rmdir(deep);
	rmdir(dir);
}

/* The tree helpers pkg/mirror's _backup/ rests on. */
TEST(remove_tree_never_follows_links)
{
	char dir[64], path[256];
	struct log_err err = {0};
	const char *outside;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	outside = harness_tmpdir();
	harness_put_str(outside, "keep", "x");
	harness_put_str(dir, "t/a/b", "y");
	snprintf(path, sizeof(path), "%s/t/link", dir);
	REQUIRE_INT(symlink(outside, path), 0);
	CHECK_INT(fs_remove_tree(dir, "t", &err), 0);
	snprintf(path, sizeof(path), "%s/t", dir);
	CHECK(stat(path, &st) != 0);
	snprintf(path, sizeof(path), "%s/keep", outside);
	CHECK_INT(stat(path, &st), 0);		      /* the link's target is untouched */
	CHECK_INT(fs_remove_tree(dir, "t", &err), 0); /* missing: fine */
	harness_rm_tree(dir);
	harness_rm_tree(outside);
}

TEST(list_move_and_join)
{
	char a[64], b[64], p[8];
	struct log_err err = {0};
	char **names;
	size_t n;

	snprintf(a, sizeof(a), "%s", harness_tmpdir());
	snprintf(b, sizeof(b), "%s", harness_tmpdir());
	harness_put_str(a, "z", "1");
	harness_put_str(a, "b/c", "2");
	harness_put_str(a, ".h", "3");
	REQUIRE_INT(fs_list_dir(a, &names, &n, &err), 0);
	REQUIRE_INT(n, 3);
	CHECK_STR(names[0], ".h");
	CHECK_STR(names[1], "b");
	CHECK_STR(names[2], "z");
	fs_names_free(names, n);
	CHECK_INT(fs_move_all(a, b, &err), 0);
	REQUIRE_INT(fs_list_dir(a, &names, &n, &err), 0);
	CHECK_INT(n, 0);
	fs_names_free(names, n);
	REQUIRE_INT(fs_list_dir(b, &names, &n, &err), 0);
	CHECK_INT(n, 3);
	fs_names_free(names, n);
	CHECK_INT(fs_path_join(p, sizeof(p), "abc", "defg", &err), -ENAMETOOLONG);
	CHECK_STR(err.msg, "abc/defg: path too long");
	CHECK_INT(fs_list_dir("/nonexistent", &names, &n, &err), -ENOENT);
	CHECK_INT(fs_mkdir_if_missing(b, &err), 0);
	harness_rm_tree(a);
	harness_rm_tree(b);
}

TEST(lock_dir_excludes_and_times_out)
{
	struct log_err err = {0};
	char dir[64], missing[96], want[160];
	int a, b;

	snprintf(dir, sizeof(dir), "%s", harness_tmpdir());
	snprintf(missing, sizeof(missing), "%s/none", dir);
	CHECK_INT(fs_lock_dir(missing, 100, &err), -ENOENT);
	a = fs_lock_dir(dir, 100, &err);
	REQUIRE(a >= 0);
	/* a second open file description is another holder, as another process would be */
	CHECK_INT(fs_lock_dir(dir, 100, &err), -ETIMEDOUT);
	snprintf(want, sizeof(want), "%s: locked by another process for 0 s", dir);
	CHECK_STR(err.msg, want);
	close(a);
	b = fs_lock_dir(dir, 100, &err);
	CHECK(b >= 0);
	close(b);
	harness_rm_tree(dir);
}
