/* SPDX-License-Identifier: GPL-2.0-or-later */
/* goregex: Go regular expressions (RE2 syntax and semantics), linear time, bounded memory. */
#ifndef NP_GOREGEX_H
#define NP_GOREGEX_H

#include <stddef.h>

/*
 * One engine for every Go regexp our users write: NFD's InRegexp and matchName
 * (Go's regexp.MatchString: unanchored) and Reloader's reload lists (the whole
 * name must match). It is RE2 (Debian's libre2), the engine Go's regexp
 * follows: leftmost-first semantics, UTF-8, `\d`, `(?i)`, lazy quantifiers,
 * `\pL`, `\Q..\E`, repeat counts whose nested product exceeds 1000 refused, no
 * back-references or look-around. Where RE2 and Go differ the Go behaviour is
 * kept: `\C` (any byte) is refused as Go does, and Go 1.22's `(?<name>re)`
 * is accepted as `(?P<name>re)`. Matching is linear in the subject; a compiled
 * pattern and its lazy DFA use at most GOREGEX_MAX_MEM bytes (RE2 falls back
 * to its NFA, never grows past it), so a hostile pattern is refused or cheap.
 */

#define GOREGEX_PATTERN_MAX (64u << 10) /* longest pattern accepted, bytes */
#define GOREGEX_MAX_MEM	    (1u << 20)	/* RE2 memory budget per compiled pattern, bytes */
#define GOREGEX_MIN_MEM	    (4u << 10)	/* goregex_compile_mem's first try, bytes */

#define GOREGEX_FULL 0x1u /* the whole subject must match (as ^(?:re)$) */
#define GOREGEX_CAPTURE                                                                            \
	0x2u /* keep capture groups (for goregex_find); else only match/no match                   \
	      */

#define GOREGEX_GOERR                                                                              \
	0x4u /* errbuf as Go's regexp/syntax Error() words it: "error parsing regexp: CODE: `ARG`" \
	      */

struct goregex; /* opaque; owned by its creator, freed by goregex_free */

/*
 * Compile pattern (NUL-terminated, Go syntax) with flags (0 or GOREGEX_FULL).
 * On success *out is a new pattern and 0 is returned. Errors: -EINVAL for bad
 * syntax or a pattern that needs more than GOREGEX_MAX_MEM (errbuf says why,
 * as RE2 or Go words it, without the pattern), -E2BIG for a pattern over
 * GOREGEX_PATTERN_MAX, -ENOMEM. errbuf may be NULL.
 */
int goregex_compile(const char *pattern, unsigned flags, struct goregex **out, char *errbuf,
		    size_t errlen);

/*
 * goregex_compile with the least RE2 memory budget that compiles pattern:
 * GOREGEX_MIN_MEM, then 4 times more each try, at most GOREGEX_MAX_MEM. On
 * success *mem is what the pattern may use: that budget (its programs and
 * their DFA caches, which grow while matching; RE2 falls back to its NFA
 * past it, never past the budget) plus its text. Same returns otherwise.
 */
int goregex_compile_mem(const char *pattern, unsigned flags, struct goregex **out, size_t *mem,
			char *errbuf, size_t errlen);

/*
 * goregex_compile with RE2 memory budget max_mem (bytes) instead of
 * GOREGEX_MAX_MEM: the compiled program and its lazy DFAs stay under it (RE2
 * matches with its NFA when the DFA budget is spent, never grows past it); a
 * pattern whose program does not fit is -EINVAL ("pattern too large"). For
 * callers that hold many tenant-written patterns (nodeprobe-reload's lists).
 */
int goregex_compile_budget(const char *pattern, unsigned flags, size_t max_mem,
			   struct goregex **out, char *errbuf, size_t errlen);

/* 1 when s[0..len) matches re, 0 when not. Thread-safe on a shared re. */
int goregex_match(const struct goregex *re, const char *s, size_t len);

/*
 * Go's FindStringSubmatchIndex from byte pos of s[0..len) (the bytes before
 * pos still count for ^, \b and \B, as Go's FindAll* see them): 1 when re
 * matches, filling m[0..2*nm) with the start and end offsets of the match
 * and of groups 1..nm-1 (-1 for a group that did not take part), else 0.
 * Groups need GOREGEX_CAPTURE at compile; nm is at most 1 + goregex_groups.
 */
int goregex_find(const struct goregex *re, const char *s, size_t len, size_t pos, long *m, int nm);

/* Capture groups of re (0 unless compiled with GOREGEX_CAPTURE). */
int goregex_groups(const struct goregex *re);

/*
 * The instructions of re's compiled program (RE2's ProgramSize): what its NFA may step at each
 * subject byte. A short pattern can be a long program (`a{1000}` is 7 bytes, 1000 instructions).
 */
size_t goregex_size(const struct goregex *re);

/* The index of the group named name[0..n) ((?P<name>re)), or -1. */
int goregex_group_index(const struct goregex *re, const char *name, size_t n);

/* Free a pattern from goregex_compile; NULL is a no-op. */
void goregex_free(struct goregex *re);

#endif
