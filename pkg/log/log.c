/* SPDX-License-Identifier: GPL-2.0-or-later */
/* log: the logging callback libraries report through, and the error object they fill. */
#include "log/log.h"

#include <stdio.h>
#include <string.h>

static log_fn cur_fn;
static log_fields_fn cur_ffn;
static void *cur_data;
static enum log_level cur_max = LOG_LVL_WARN;

void log_set_fn(log_fn fn, void *data, enum log_level max)
{
	cur_fn = fn;
	cur_ffn = NULL;
	cur_data = data;
	cur_max = max;
}

void log_set_fields_fn(log_fields_fn fn, void *data, enum log_level max)
{
	cur_fn = NULL;
	cur_ffn = fn;
	cur_data = data;
	cur_max = max;
}

static void emit(enum log_level lvl, const struct log_field *f, size_t n, const char *fmt,
		 va_list ap)
{
	char msg[1024];

	if ((!cur_fn && !cur_ffn) || lvl > cur_max)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (cur_ffn)
		cur_ffn(cur_data, lvl, f, n, msg);
	else
		cur_fn(cur_data, lvl, msg);
}

void log_fields(enum log_level lvl, const struct log_field *f, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(lvl, f, n, fmt, ap);
	va_end(ap);
}

enum log_level log_get_level(void)
{
	return cur_max;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(lvl, NULL, 0, fmt, ap);
	va_end(ap);
}

int log_err_set(struct log_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

int log_err_wrap(struct log_err *err, const char *fmt, ...)
{
	char prefix[sizeof(err->msg)];
	size_t plen, olen, cap = sizeof(err->msg) - 1;
	va_list ap;

	if (!err)
		return 0;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	plen = strlen(prefix);
	olen = strlen(err->msg);
	if (olen && plen + 2 <= cap) {
		if (olen > cap - plen - 2)
			olen = cap - plen - 2;
		memmove(err->msg + plen + 2, err->msg, olen);
		memcpy(err->msg + plen, ": ", 2);
		memcpy(err->msg, prefix, plen);
		err->msg[plen + 2 + olen] = '\0';
	} else {
		memcpy(err->msg, prefix, plen + 1);
	}
	return err->code;
}

void log_err_clear(struct log_err *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}
