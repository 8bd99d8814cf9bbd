/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/log: error wrapping and the logger callback. */
#include <errno.h>

#include "harness.h"
#include "log/log.h"

static char last[256];
static int calls;

static void capture(void *data, enum log_level lvl, const char *msg)
{
	(void)data;
	snprintf(last, sizeof(last), "%d %s", (int)lvl, msg);
	calls++;
}

TEST(err_wrap_chain)
{
	struct log_err err = {0};

	CHECK_INT(log_err_set(&err, -EINVAL, "unknown op '%s'", "Inn"), -EINVAL);
	CHECK_INT(log_err_wrap(&err, "%d:%d", 12, 5), -EINVAL);
	CHECK_INT(log_err_wrap(&err, "rules.yaml"), -EINVAL);
	CHECK_STR(err.msg, "rules.yaml: 12:5: unknown op 'Inn'");
	log_err_clear(&err);
	CHECK_STR(err.msg, "");
	CHECK_INT(log_err_set(NULL, -ENOENT, "x"), -ENOENT);
	CHECK_INT(log_err_wrap(NULL, "x"), 0);
}

TEST(err_wrap_truncates_safely)
{
	struct log_err err = {0};
	char big[600];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_err_set(&err, -1, "%s", big);
	log_err_wrap(&err, "ctx");
	CHECK(strncmp(err.msg, "ctx: xxx", 8) == 0);
	CHECK_INT(strlen(err.msg), sizeof(err.msg) - 1);
}

TEST(logger_levels)
{
	calls = 0;
	log_set_fn(capture, NULL, LOG_LVL_WARN);
	log_info("hidden %d", 1);
	CHECK_INT(calls, 0);
	log_warn("shown %s", "w");
	CHECK_INT(calls, 1);
	CHECK_STR(last, "1 shown w");
	log_set_fn(NULL, NULL, LOG_LVL_DEBUG);
	log_error("nowhere");
	CHECK_INT(calls, 1);
}

static char flast[512];

static void fcapture(void *data, enum log_level lvl, const struct log_field *f, size_t n,
		     const char *msg)
{
	size_t i, len;

	(void)data;
	len = (size_t)snprintf(flast, sizeof(flast), "%d %s", (int)lvl, msg);
	for (i = 0; i < n && len < sizeof(flast); i++)
		len += (size_t)snprintf(flast + len, sizeof(flast) - len, " %s=%s", f[i].key,
					f[i].val);
}

/* A fields logger sees the fields (and plain messages with none); a plain logger the text only. */
TEST(logger_fields)
{
	struct log_field f[2] = {{"workload", "Deployment/a/b"}, {"hash", "0123abcd"}};

	log_set_fields_fn(fcapture, NULL, LOG_LVL_INFO);
	log_fields(LOG_LVL_INFO, f, 2, "rolled %s", "x");
	CHECK_STR(flast, "2 rolled x workload=Deployment/a/b hash=0123abcd");
	log_info("plain");
	CHECK_STR(flast, "2 plain");
	log_fields(LOG_LVL_DEBUG, f, 2, "too verbose");
	CHECK_STR(flast, "2 plain");
	calls = 0;
	log_set_fn(capture, NULL, LOG_LVL_INFO);
	log_fields(LOG_LVL_INFO, f, 2, "rolled %s", "y");
	CHECK_INT(calls, 1);
	CHECK_STR(last, "2 rolled y");
	log_set_fn(NULL, NULL, LOG_LVL_WARN);
}
