/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/strbuf. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "strbuf/strbuf.h"

TEST(init_is_empty_string)
{
	struct strbuf sb = STRBUF_INIT(16);

	CHECK_STR(sb.buf, "");
	CHECK_INT(sb.len, 0);
	sb_free(&sb);
}

TEST(append_and_cap)
{
	struct strbuf sb = STRBUF_INIT(8);

	CHECK_INT(sb_add(&sb, "abcd"), 0);
	CHECK_INT(sb_addf(&sb, "%d%s", 12, "x"), 0);
	CHECK_STR(sb.buf, "abcd12x");
	CHECK_INT(sb_add(&sb, "yz"), -E2BIG);
	CHECK_STR(sb.buf, "abcd12x"); /* unchanged on failure */
	CHECK_INT(sb_addch(&sb, 'y'), 0);
	CHECK_INT(sb.len, 8);
	CHECK_INT(sb_addch(&sb, 'z'), -E2BIG);
	sb_free(&sb);
}

TEST(addf_grows_past_initial)
{
	struct strbuf sb = STRBUF_INIT(1 << 20);
	int i;

	for (i = 0; i < 1000; i++)
		REQUIRE_INT(sb_addf(&sb, "%04d,", i), 0);
	CHECK_INT(sb.len, 5000);
	CHECK(strncmp(sb.buf + 4995, "0999,", 5) == 0);
	sb_free(&sb);
}

TEST(json_escape)
{
	struct strbuf sb = STRBUF_INIT(64);

	CHECK_INT(sb_add_json_str(&sb, "a\"b\\c\n\x01"), 0);
	CHECK_STR(sb.buf, "\"a\\\"b\\\\c\\n\\u0001\"");
	sb_free(&sb);
	sb_init(&sb, 4);
	CHECK_INT(sb_add_json_str(&sb, "abcdef"), -E2BIG);
	CHECK_STR(sb.buf, "");
	sb_free(&sb);
}

TEST(take_transfers_ownership)
{
	struct strbuf sb = STRBUF_INIT(64);
	char *s;

	sb_add(&sb, "hello");
	s = sb_take(&sb);
	CHECK_STR(s, "hello");
	CHECK_STR(sb.buf, "");
	free(s);
	s = sb_take(&sb); /* empty take still gives a string */
	CHECK_STR(s, "");
	free(s);
}

TEST(rtrim_and_truncate)
{
	struct strbuf sb = STRBUF_INIT(64);

	sb_add(&sb, "0x8086 \n");
	sb_rtrim(&sb);
	CHECK_STR(sb.buf, "0x8086");
	sb_truncate(&sb, 2);
	CHECK_STR(sb.buf, "0x");
	sb_free(&sb);
}

TEST(read_file_capped)
{
	const char *dir = harness_tmpdir();
	char path[128];
	struct strbuf sb = STRBUF_INIT(4);
	int fd;

	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, "12345", 5) == 5);
	close(fd);
	CHECK_INT(sb_read_file(&sb, path), -E2BIG);
	CHECK_INT(sb.len, 0);
	sb.max = 5;
	CHECK_INT(sb_read_file(&sb, path), 5);
	CHECK_STR(sb.buf, "12345");
	sb_free(&sb);
	CHECK_INT(sb_read_file(&sb, "/nonexistent/x"), -ENOENT);
	unlink(path);
	rmdir(dir);
}

/* Only regular files and character devices are read; a FIFO is refused without blocking. */
TEST(read_file_refuses_fifo_and_directory)
{
	const char *dir = harness_tmpdir();
	struct strbuf sb = STRBUF_INIT(1024);
	char path[256];

	snprintf(path, sizeof(path), "%s/fifo", dir);
	REQUIRE_INT(mkfifo(path, 0600), 0);
	CHECK_INT(sb_read_file(&sb, path), -EINVAL);
	CHECK_INT(sb_read_file(&sb, dir), -EISDIR);
	CHECK(sb_read_file(&sb, "/dev/null") == 0);
	CHECK_INT(sb.len, 0);
	sb_free(&sb);
	harness_rm_tree(dir);
}

/* A character device with nothing to read (a terminal nobody types into) is -EAGAIN at once,
 * never a read that waits: the alarm kills the test if it blocks. */
TEST(read_file_tty_does_not_block)
{
	struct strbuf sb = STRBUF_INIT(1024);
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	const char *pts;

	REQUIRE(m >= 0);
	REQUIRE_INT(grantpt(m), 0);
	REQUIRE_INT(unlockpt(m), 0);
	pts = ptsname(m);
	REQUIRE(pts != NULL);
	alarm(10);
	CHECK_INT(sb_read_file(&sb, pts), -EAGAIN);
	alarm(0);
	CHECK_INT(sb.len, 0);
	sb_free(&sb);
	/* nor does reading it make it the controlling terminal of a session leader without one
	 * (nodeprobe-reload as PID 1): in a new session, /dev/tty stays unopenable */
	{
		pid_t pid = fork();
		int st = 0;

		REQUIRE(pid >= 0);
		if (pid == 0) {
			struct strbuf c = STRBUF_INIT(1024);
			int t;

			if (setsid() < 0)
				_exit(2);
			sb_read_file(&c, pts);
			t = open("/dev/tty", O_RDONLY | O_NOCTTY | O_NONBLOCK);
			_exit(t < 0 ? 0 : 1);
		}
		REQUIRE(waitpid(pid, &st, 0) == pid);
		CHECK(WIFEXITED(st));
		CHECK_INT(WEXITSTATUS(st), 0);
	}
	close(m);
}
