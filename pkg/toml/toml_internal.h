/* SPDX-License-Identifier: GPL-2.0-or-later */
/* toml_internal: what the TOML lexer, reader and writer share (not a contract). */
#ifndef NP_TOML_INTERNAL_H
#define NP_TOML_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/log.h"
#include "strbuf/strbuf.h"
#include "toml/toml.h"

#define TOML_MAX_DEPTH	   64
#define TOML_MAX_KEY_PARTS 64

struct parser {
	const char *p, *end;	/* cursor and end of input */
	const char *line_start; /* first byte of the current line */
	int line;		/* current line, 1-based */
	const char *name;	/* for messages */
	struct log_err *err;	/* filled on error */
	struct toml_value *root;
	struct toml_value *cur; /* table that key/value lines go into */
	int depth;		/* array / inline table nesting */
};

/* A key as written: its decoded parts and where each part starts. */
struct key {
	char *part[TOML_MAX_KEY_PARTS];
	int line[TOML_MAX_KEY_PARTS], col[TOML_MAX_KEY_PARTS];
	int n;
};

/* Shared between the sibling files of this module (each defined in one). */
int toml_col_of(const struct parser *ps, const char *at);

__attribute__((format(printf, 3, 4))) int toml_fail_at(struct parser *ps, const char *at,
						       const char *fmt, ...);

__attribute__((format(printf, 4, 5))) int toml_fail_pos(struct parser *ps, int line, int col,
							const char *fmt, ...);

int toml_oom(struct parser *ps);

bool toml_at_end(const struct parser *ps);

int toml_peek(const struct parser *ps, size_t off);

void toml_skip_ws(struct parser *ps);

int toml_newline_len(const struct parser *ps);

void toml_take_newline(struct parser *ps, int n);

int toml_skip_ws_nl(struct parser *ps);

int toml_end_of_line(struct parser *ps);

int toml_check_utf8(struct parser *ps);

int toml_parse_string(struct parser *ps, struct strbuf *sb, bool allow_ml);

bool toml_is_bare(int c);

void toml_key_free(struct key *k);

int toml_parse_key(struct parser *ps, struct key *k);

bool toml_isdig(int c);

bool toml_digits(const char *s, const char *e, int n);

bool toml_is_datetime(const char *s, const char *e);

int toml_parse_number(struct parser *ps, const char *s, const char *e, struct toml_value *v);

const char *toml_what(const struct toml_value *v);

#endif
