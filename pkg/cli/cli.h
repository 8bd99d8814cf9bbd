/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cli: the option table, --help, -V, -v and the message format every binary shares. */
#ifndef NP_CLI_H
#define NP_CLI_H

#include <stdarg.h>

#include "log/log.h"

/* Exit codes common to every binary; each man page lists these plus its own. */
enum {
	CLI_EXIT_OK = 0,      /* success */
	CLI_EXIT_FAILURE = 1, /* the job failed (see the message) */
	CLI_EXIT_USAGE = 2,   /* bad command line */
};

/* One option. A table ends with an entry whose lng is NULL. */
struct cli_opt {
	const char *lng;  /* long name without "--" */
	int shrt;	  /* short letter, or 0 for long-only */
	const char *arg;  /* argument name shown in --help ("DIR"), NULL for a flag; "[=BOOL]"
			   * (leading '['): optional, only as --name=VALUE (Go pflag's bool flags) */
	const char *help; /* one line for --help */
	int id;		  /* what the callback receives: the short letter, or a value >= 256 */
};

/* An option another tool has that this binary knows only to refuse by name. */
struct cli_refused {
	const char *lng; /* long name without "--"; a table ends with NULL */
	const char *why; /* the rest of the message, e.g. "not supported yet" */
};

/* What a binary says about itself. -h, -V and -v are added by cli_parse. */
struct cli_spec {
	const char *prog;		   /* program name used in messages */
	const char *synopsis;		   /* e.g. "[OPTIONS]" or "COMMAND [OPTIONS]" */
	const char *description;	   /* one or more lines printed after the usage line */
	const struct cli_opt *opts;	   /* the binary's own options */
	const char *epilog;		   /* printed after the options (exit codes), or NULL */
	const struct cli_refused *refused; /* refused with "--X: why" (exit 2), or NULL */
};

/*
 * Called for each option the binary defined. arg is NULL for flags. Returns 0,
 * or a negative value after filling msg (a usage error, printed as
 * "<prog>: error: <msg>").
 */
typedef int (*cli_opt_fn)(void *ctx, int id, const char *arg, char *msg, int msglen);

/*
 * Parse argv with getopt_long against spec plus -h/--help, -V/--version and
 * -v/--verbose (counted into *verbose, may be NULL). Returns the index of the
 * first positional argument (>= 1), or -CLI_EXIT_OK after printing help or the
 * version (the caller exits 0), or -CLI_EXIT_USAGE after printing an error and
 * a hint to use --help (the caller exits 2). Sets the name used by cli_error.
 */
int cli_parse(const struct cli_spec *spec, int argc, char **argv, cli_opt_fn fn, void *ctx,
	      int *verbose);

/* Print the --help text for spec to stdout. */
void cli_help(const struct cli_spec *spec);

/*
 * Install the stderr logger: "<prog>: error: msg", "<prog>: warning: msg",
 * "<prog>: msg" for info and debug. verbose 0 shows errors and warnings, 1 adds
 * info, 2 debug; a negative verbose shows errors only.
 */
void cli_log_init(const char *prog, int verbose);

/*
 * Install a JSON-lines logger on stderr (Reloader's --log-format json): one object a line,
 * {"time":RFC3339 UTC,"level":"error|warning|info|debug","msg":...} followed by the message's
 * fields (log_fields) as strings, every string JSON-escaped. max is the most verbose level shown.
 */
void cli_log_init_json(const char *prog, enum log_level max);

/*
 * Print "<prog>: error: <msg>" to stderr (msg without trailing newline). Every
 * message is one line: control characters in it are written escaped ("\n",
 * "\x1b"); the same holds for the logger of cli_log_init().
 */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "<prog>: warning: <msg>" to stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Parse a boolean option value: "true", "1", "yes" -> 1; "false", "0", "no" -> 0;
 * anything else -> -1.
 */
int cli_parse_bool(const char *s);

#endif
