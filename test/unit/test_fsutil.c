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
