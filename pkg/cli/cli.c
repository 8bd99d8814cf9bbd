/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cli: the option table, --help, -V, -v and the message format every binary shares. */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "log/log.h"

static const char *cli_prog = "nodeprobe";

enum { ID_HELP = 'h', ID_VERSION = 'V', ID_VERBOSE = 'v' };

static const struct cli_opt common_opts[] = {
    {"verbose", 'v', NULL, "more messages on stderr (repeat for debug)", ID_VERBOSE},
    {"help", 'h', NULL, "show this help and exit", ID_HELP},
    {"version", 'V', NULL, "show the version and exit", ID_VERSION},
    {NULL, 0, NULL, NULL, 0},
};

static void print_opts(const struct cli_opt *o)
{
	char left[64];

	for (; o->lng; o++) {
		const char *sep = o->arg && o->arg[0] != '[' ? " " : "";

		if (o->shrt)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->shrt, o->lng, sep,
				 o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->lng, sep,
				 o->arg ? o->arg : "");
		if (strlen(left) > 28)
			printf("  %s\n  %-28s  %s\n", left, "", o->help);
		else
			printf("  %-28s  %s\n", left, o->help);
	}
}

void cli_help(const struct cli_spec *spec)
{
	printf("Usage: %s %s\n", spec->prog, spec->synopsis);
	if (spec->description)
		printf("%s\n", spec->description);
	printf("\nOptions:\n");
	print_opts(spec->opts);
	print_opts(common_opts);
	if (spec->epilog)
		printf("\n%s", spec->epilog);
}

static size_t count_opts(const struct cli_opt *o)
{
	size_t n = 0;

	while (o[n].lng)
		n++;
	return n;
}

static void add_opts(const struct cli_opt *o, struct option *lo, size_t *nlo, char *so, size_t *nso)
{
	for (; o->lng; o++) {
		lo[*nlo].name = o->lng;
		lo[*nlo].has_arg = !o->arg	      ? no_argument
				   : o->arg[0] == '[' ? optional_argument
						      : required_argument;
		lo[*nlo].flag = NULL;
		lo[*nlo].val = o->id;
		(*nlo)++;
		if (o->shrt) {
			so[(*nso)++] = (char)o->shrt;
			if (o->arg)
				so[(*nso)++] = ':';
		}
	}
}

/*
 * The option getopt_long refused, as the user wrote it: "--name" for a long
 * option (its val is our id, often not a character), "-x" for a short one
 * (also inside a cluster such as "-dx"). Static buffer.
 */
static const char *bad_option(const struct option *lo, const char *arg, int opt)
{
	static char buf[256];
	size_t n;

	if (!strncmp(arg, "--", 2)) {
		n = strcspn(arg, "=");
		if (opt) /* known, argument missing: its full name (arg may be a prefix) */
			for (; lo->name; lo++)
				if (lo->val == opt && !strncmp(lo->name, arg + 2, n - 2)) {
					snprintf(buf, sizeof(buf), "--%s", lo->name);
					return buf;
				}
		snprintf(buf, sizeof(buf), "%.*s", (int)n, arg);
		return buf;
	}
	if (opt > 0 && opt < 0x80)
		snprintf(buf, sizeof(buf), "-%c", opt);
	else
		snprintf(buf, sizeof(buf), "%s", arg);
	return buf;
}

/* If arg ("--name" or "--name=v") is one of spec's refused options, say why and return 1. */
static int refused(const struct cli_spec *spec, const char *arg)
{
	const struct cli_refused *f;
	size_t n;

	if (!spec->refused || strncmp(arg, "--", 2) != 0)
		return 0;
	n = strcspn(arg + 2, "=");
	for (f = spec->refused; f->lng; f++)
		if (strlen(f->lng) == n && strncmp(f->lng, arg + 2, n) == 0) {
			cli_error("option '--%s' is %s", f->lng, f->why);
			return 1;
		}
	return 0;
}

int cli_parse(const struct cli_spec *spec, int argc, char **argv, cli_opt_fn fn, void *ctx,
	      int *verbose)
{
	size_t n = count_opts(spec->opts) + count_opts(common_opts);
	struct option *lo = calloc(n + 1, sizeof(*lo));
	char *so = calloc(2 * n + 3, 1);
	size_t nlo = 0, nso = 0;
	char msg[512];
	int c, r = 0;

	cli_prog = spec->prog;
	if (!lo || !so) {
		cli_error("out of memory");
		r = -CLI_EXIT_FAILURE;
		goto out;
	}
	so[nso++] = '+'; /* stop at the first positional (a subcommand) */
	so[nso++] = ':'; /* report missing arguments as ':' */
	add_opts(spec->opts, lo, &nlo, so, &nso);
	add_opts(common_opts, lo, &nlo, so, &nso);
	opterr = 0;
	optind = 1;
	for (;;) {
		c = getopt_long(argc, argv, so, lo, NULL);
		if (c == -1)
			break;
		if (c == ID_HELP) {
			cli_help(spec);
			r = -CLI_EXIT_OK;
			goto out;
		}
		if (c == ID_VERSION) {
			printf("%s %s\n", spec->prog, NP_VERSION);
			r = -CLI_EXIT_OK;
			goto out;
		}
		if (c == ID_VERBOSE) {
			if (verbose)
				(*verbose)++;
			continue;
		}
		if (c == '?' && refused(spec, argv[optind - 1])) {
			fprintf(stderr, "Try '%s --help' for more information.\n", spec->prog);
			r = -CLI_EXIT_USAGE;
			goto out;
		}
		if (c == '?' || c == ':') {
			cli_error("%s option '%s'", c == ':' ? "missing argument to" : "unknown",
				  bad_option(lo, argv[optind - 1], optopt));
			fprintf(stderr, "Try '%s --help' for more information.\n", spec->prog);
			r = -CLI_EXIT_USAGE;
			goto out;
		}
		msg[0] = '\0';
		if (fn(ctx, c, optarg, msg, (int)sizeof(msg)) < 0) {
			cli_error("%s", msg[0] ? msg : "invalid option");
			fprintf(stderr, "Try '%s --help' for more information.\n", spec->prog);
			r = -CLI_EXIT_USAGE;
			goto out;
		}
	}
	r = optind;
out:
	free(lo);
	free(so);
	return r;
}

/*
 * Write one message line to stderr. Messages quote input (YAML keys, devicetree
 * strings, file names): control characters are escaped so a message is always
 * exactly one line and cannot drive the terminal. stderr is locked for the line (as json_log
 * does): a program logging from two threads never interleaves two lines.
 */
static void put_line(const char *kind, const char *msg)
{
	const unsigned char *p;

	flockfile(stderr);
	fprintf(stderr, "%s: %s", cli_prog, kind);
	for (p = (const unsigned char *)msg; *p; p++) {
		if (*p == '\n')
			fputs("\\n", stderr);
		else if (*p == '\t')
			fputs("\\t", stderr);
		else if (*p == '\r')
			fputs("\\r", stderr);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(stderr, "\\x%02x", *p);
		else
			fputc(*p, stderr);
	}
	fputc('\n', stderr);
	funlockfile(stderr);
}

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	char msg[2048];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	put_line(kind, msg);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

static void stderr_log(void *data, enum log_level lvl, const char *msg)
{
	static const char *const kinds[] = {"error: ", "warning: ", "", "debug: "};

	(void)data;
	put_line(kinds[lvl], msg);
}

void cli_log_init(const char *prog, int verbose)
{
	enum log_level max = LOG_LVL_WARN;

	cli_prog = prog;
	if (verbose < 0)
		max = LOG_LVL_ERROR;
	else if (verbose == 1)
		max = LOG_LVL_INFO;
	else if (verbose >= 2)
		max = LOG_LVL_DEBUG;
	log_set_fn(stderr_log, NULL, max);
}

/* The length of the valid UTF-8 sequence at p (1-4), or 0 if it is not one. */
static int utf8_len(const unsigned char *p)
{
	int n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 3 && p[0] == 0xed && p[1] > 0x9f) ||
	    (n == 4 && p[0] == 0xf0 && p[1] < 0x90) || (n == 4 && p[0] == 0xf4 && p[1] > 0x8f))
		return 0; /* overlong, surrogate, beyond U+10FFFF */
	return n;
}

/* A JSON string (RFC 8259): quotes, backslash and control characters escaped, bytes that are
 * not UTF-8 (a server's error body quoted in a message) replaced by U+FFFD. */
static void put_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		int n = utf8_len(p);

		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else if (n == 0)
			fputs("\\ufffd", f);
		else
			fwrite(p, 1, (size_t)n, f);
		p += n ? n : 1;
	}
	fputc('"', f);
}

static void json_log(void *data, enum log_level lvl, const struct log_field *fl, size_t n,
		     const char *msg)
{
	static const char *const levels[] = {"error", "warning", "info", "debug"};
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	size_t i;

	(void)data;
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	flockfile(stderr);
	fprintf(stderr, "{\"time\":\"%s\",\"level\":\"%s\",\"msg\":", ts, levels[lvl]);
	put_json_str(stderr, msg);
	for (i = 0; i < n; i++) {
		fputc(',', stderr);
		put_json_str(stderr, fl[i].key);
		fputc(':', stderr);
		put_json_str(stderr, fl[i].val ? fl[i].val : "");
	}
	fputs("}\n", stderr);
	funlockfile(stderr);
}

void cli_log_init_json(const char *prog, enum log_level max)
{
	cli_prog = prog;
	log_set_fields_fn(json_log, NULL, max);
}

int cli_parse_bool(const char *s)
{
	if (!strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "yes"))
		return 1;
	if (!strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "no"))
		return 0;
	return -1;
}
