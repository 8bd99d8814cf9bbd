/* SPDX-License-Identifier: GPL-2.0-or-later */
/* log: the logging callback libraries report through, and the error object they fill. */
#ifndef NP_LOG_H
#define NP_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum log_level {
	LOG_LVL_ERROR = 0, /* something failed; the caller usually stops */
	LOG_LVL_WARN = 1,  /* skipped or degraded, the run goes on */
	LOG_LVL_INFO = 2,  /* one line per notable action (-v) */
	LOG_LVL_DEBUG = 3, /* detail (-vv) */
};

/* A logger: receives one message without a trailing newline. */
typedef void (*log_fn)(void *data, enum log_level lvl, const char *msg);

/*
 * Set the process-wide logger and the most verbose level passed to it.
 * fn NULL silences everything (the default: libraries never print by
 * themselves). Not thread-safe against concurrent log_msg calls.
 */
void log_set_fn(log_fn fn, void *data, enum log_level max);
/* Current most verbose level passed on. */
enum log_level log_get_level(void);

/* Log a message through the current logger (no trailing newline). */
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A named value attached to a message (structured logs: workload, trigger, hash). */
struct log_field {
	const char *key; /* static name, e.g. "workload" */
	const char *val; /* borrowed for the call; never Secret data */
};

/*
 * A logger that also receives a message's fields (n may be 0). When set it
 * replaces the plain logger for every message; log_set_fn clears it.
 */
typedef void (*log_fields_fn)(void *data, enum log_level lvl, const struct log_field *f, size_t n,
			      const char *msg);
void log_set_fields_fn(log_fields_fn fn, void *data, enum log_level max);

/* Log a message with fields: a plain logger sees only the message. */
void log_fields(enum log_level lvl, const struct log_field *f, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

/*
 * An error with context, crun-style. Functions that can say more than -errno
 * take an optional struct log_err * (NULL allowed), fill it with log_err_set()
 * and return the negative code; callers add context with log_err_wrap(), giving
 * "rules.yaml:12:5: unknown op 'Inn'".
 */
struct log_err {
	int code;      /* the negative code that was returned (-errno or module code) */
	char msg[512]; /* one line, no trailing newline; "" when unset */
};

/* Set err (if not NULL) to code and a formatted message. Returns code. */
int log_err_set(struct log_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix err->msg with formatted context and ": " (if err not NULL). Returns err->code or 0. */
int log_err_wrap(struct log_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clear err (if not NULL). */
void log_err_clear(struct log_err *err);

#endif
