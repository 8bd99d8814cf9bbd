/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl: Go's text/template with Sprig's functions, as nfd-master v0.19 runs labelsTemplate. */
#ifndef NP_GOTMPL_H
#define NP_GOTMPL_H

#include <stddef.h>
#include <stdint.h>

#include "strbuf/strbuf.h"

/*
 * NFD (pkg/apis/nfd/template/template.go, v0.19) parses a rule's labelsTemplate
 * and varsTemplate with Go's text/template, Sprig v3's function map minus
 * env, expandenv and getHostByName, Option("missingkey=error") and a 64 KiB
 * source cap. This module is that engine: parse once (gotmpl_parse), execute
 * many times (gotmpl_exec) over data the caller builds with gotmpl_val_*.
 *
 * Semantics follow Go (golang/go src/text/template exec.go, funcs.go,
 * parse/lex.go, parse/parse.go) and Sprig v3 (Masterminds/sprig
 * functions.go): actions, trim markers, variables, define/template/block,
 * break/continue, Go's truthiness, missingkey=error (".x" on a map without
 * key x is an error; `index` on a missing key gives the element type's zero
 * value). Errors carry Go's wording: "template: NAME:LINE: ..." for parse
 * errors and "template: NAME:LINE:COL: executing \"NAME\" at <NODE>: ..."
 * for execution errors.
 *
 * Sprig functions whose output depends on the clock or randomness (now,
 * date*, rand*, uuidv4, genPrivateKey, shuffle, bcrypt, ...) are refused when the template is
 * parsed, with an error naming the function. derivePassword loads libcrypto (dlopen) on its first
 * call, for scrypt.
 * NFD removes env, expandenv and getHostByName from the map: they are "not
 * defined", as there.
 *
 * Everything is bounded: the source (GOTMPL_SRC_MAX), the output
 * (GOTMPL_OUT_MAX), execution steps (GOTMPL_STEPS_MAX), template-call and
 * parse nesting (GOTMPL_DEPTH_MAX), the nesting of all running templates
 * together (GOTMPL_NEST_MAX), memory made during one execution
 * (GOTMPL_MEM_MAX). Nothing aborts; a bound reached is an error.
 */

#define GOTMPL_SRC_MAX	 (64u << 10) /* longest template source, bytes (NFD's cap) */
#define GOTMPL_OUT_MAX	 (1u << 20)  /* longest output of one execution, bytes */
#define GOTMPL_STEPS_MAX 1000000ul   /* actions, commands, loop turns, functions' work */
#define GOTMPL_DEPTH_MAX 100	     /* nested template calls; parse nesting of actions */
#define GOTMPL_MEM_MAX	 (64u << 20) /* bytes of values made during one execution */
#define GOTMPL_NEST_MAX	 1000	     /* nested actions of all running templates together */
#define GOTMPL_ERR_MAX	 (8u << 10)  /* longest error message, bytes (cut past it) */

/* The kinds of value a template sees (Go's dynamic types, reduced). */
enum gotmpl_kind {
	GOTMPL_NIL,    /* Go's nil */
	GOTMPL_BOOL,   /* bool */
	GOTMPL_INT,    /* int (or int64, see gotmpl_val_int64) */
	GOTMPL_FLOAT,  /* float64 */
	GOTMPL_STRING, /* string (bytes, may hold NULs) */
	GOTMPL_LIST,   /* []interface{} (or []string) */
	GOTMPL_MAP,    /* map[string]interface{} (or map[string]string), keys sorted */
};

struct gotmpl_val; /* opaque */

/*
 * Constructors. Each returns a new value the caller owns and frees with
 * gotmpl_val_free (directly, or by handing it to a list or map that is
 * freed), or NULL when out of memory. String bytes are copied.
 */
struct gotmpl_val *gotmpl_val_nil(void);
struct gotmpl_val *gotmpl_val_bool(int b);
struct gotmpl_val *gotmpl_val_int(int64_t i);	/* Go int */
struct gotmpl_val *gotmpl_val_int64(int64_t i); /* Go int64 (only typeOf tells) */
struct gotmpl_val *gotmpl_val_float(double f);
struct gotmpl_val *gotmpl_val_str(const char *s);
struct gotmpl_val *gotmpl_val_strn(const char *s, size_t n);
/* An empty list; strings = 1 makes it a []string (only string elements may be added). */
struct gotmpl_val *gotmpl_val_list(int strings);
/*
 * An empty map; strings = 1 makes it a map[string]string: its values must be
 * strings, and `index` on a missing key gives "" (NFD's attribute and
 * instance elements are such maps), where map[string]interface{} gives nil.
 */
struct gotmpl_val *gotmpl_val_map(int strings);

/*
 * Append v to list, which takes v in every case (on failure v is freed).
 * Returns 0, -EINVAL (list is not a caller-built list, or v is not a string
 * in a []string) or -ENOMEM.
 */
int gotmpl_list_push(struct gotmpl_val *list, struct gotmpl_val *v);
/*
 * Set map[key] = v (replacing and freeing an old value), taking v in every
 * case. Returns 0, -EINVAL (not a caller-built map, or v not a string in a
 * map[string]string) or -ENOMEM.
 */
int gotmpl_map_set(struct gotmpl_val *map, const char *key, struct gotmpl_val *v);

/* The kind of v. */
enum gotmpl_kind gotmpl_val_kind(const struct gotmpl_val *v);

/* Free a caller-built value and everything in it; NULL is a no-op. */
void gotmpl_val_free(struct gotmpl_val *v);

/* An error: one line, Go's wording where Go has one. */
struct gotmpl_err {
	char msg[GOTMPL_ERR_MAX]; /* NUL-terminated; "" when no error */
};

struct gotmpl; /* a parsed template set; owned by the caller, freed by gotmpl_free */

/*
 * Parse len bytes of src as the template name (the name appears in error
 * messages; NFD's is ""), with its define'd templates. On success *out is
 * the new template set and 0 is returned. Errors (err filled when not NULL):
 * -EINVAL bad syntax, an undefined function or a refused one; -E2BIG src
 * over GOTMPL_SRC_MAX (NFD: "template too large"); -ELOOP actions nested
 * deeper than GOTMPL_DEPTH_MAX; -ENOMEM out of memory, or the parse tree over its budget
 * (512 bytes a source byte; err says which).
 */
int gotmpl_parse(const char *name, const char *src, size_t len, struct gotmpl **out,
		 struct gotmpl_err *err);

/*
 * Execute the set's main template over data (borrowed, not changed; NULL is
 * Go's nil) and append its output to out. out gets nothing on error. Returns
 * 0, or: -EINVAL an execution error (Go's message in err); -E2BIG output
 * over GOTMPL_OUT_MAX or out's own cap; -ELOOP the step, depth or memory
 * budget spent; -ENOMEM. The set is not changed, so executions may run
 * concurrently on one set.
 */
int gotmpl_exec(const struct gotmpl *t, const struct gotmpl_val *data, struct strbuf *out,
		struct gotmpl_err *err);

/* The bytes t's parse tree holds (at most about 200 per source byte); 0 for NULL. */
size_t gotmpl_mem(const struct gotmpl *t);

/* Free a set from gotmpl_parse; NULL is a no-op. */
void gotmpl_free(struct gotmpl *t);

#endif
