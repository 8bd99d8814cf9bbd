/* SPDX-License-Identifier: GPL-2.0-or-later */
/* toml_read: a strict TOML 1.0 reader (the subset containerd's files use, and the rest of the
 * grammar) into values. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "toml/toml_internal.h"

/* ---- values ---- */

static struct toml_value *new_value(enum toml_type type, int line, int col)
{
	struct toml_value *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->type = type;
	v->line = line;
	v->col = col;
	return v;
}

void toml_free(struct toml_value *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++) {
		toml_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->key_line);
	free(v->key_col);
	free(v->str);
	free(v);
}

/*
 * Make room for one more item. Capacity is implicit: 4, then doubled whenever
 * n reaches a power of two.
 */
static int grow(struct toml_value *v, bool keyed)
{
	size_t cap;
	void *p;

	if (v->n == 0)
		cap = 4;
	else if (v->n >= 4 && (v->n & (v->n - 1)) == 0)
		cap = v->n * 2;
	else
		return 0;
	p = realloc(v->items, cap * sizeof(*v->items));
	if (!p)
		return -ENOMEM;
	v->items = p;
	if (!keyed)
		return 0;
	p = realloc(v->keys, cap * sizeof(*v->keys));
	if (!p)
		return -ENOMEM;
	v->keys = p;
	p = realloc(v->key_line, cap * sizeof(*v->key_line));
	if (!p)
		return -ENOMEM;
	v->key_line = p;
	p = realloc(v->key_col, cap * sizeof(*v->key_col));
	if (!p)
		return -ENOMEM;
	v->key_col = p;
	return 0;
}

/* Add item to array a (takes item). */
static int array_push(struct toml_value *a, struct toml_value *item)
{
	if (grow(a, false) < 0)
		return -ENOMEM;
	a->items[a->n++] = item;
	return 0;
}

/* Add key = item to table t (takes item, copies key). */
static int table_put(struct toml_value *t, const char *key, int line, int col,
		     struct toml_value *item)
{
	char *k = strdup(key);

	if (!k || grow(t, true) < 0) {
		free(k);
		return -ENOMEM;
	}
	t->keys[t->n] = k;
	t->key_line[t->n] = line;
	t->key_col[t->n] = col;
	t->items[t->n++] = item;
	return 0;
}

int toml_index(const struct toml_value *t, const char *key)
{
	size_t i;

	if (!t || t->type != TOML_TABLE)
		return -1;
	for (i = 0; i < t->n; i++)
		if (strcmp(t->keys[i], key) == 0)
			return (int)i;
	return -1;
}

const struct toml_value *toml_get(const struct toml_value *t, const char *key)
{
	int i = toml_index(t, key);

	return i < 0 ? NULL : t->items[i];
}

const char *toml_type_name(enum toml_type type)
{
	static const char *const names[] = {"string",	"integer", "float", "boolean",
					    "datetime", "array",   "table"};

	return (unsigned)type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

/* ---- values ---- */

static int parse_value(struct parser *ps, struct toml_value **out);
static int put_keyval(struct parser *ps, struct toml_value *t, enum toml_origin dotted_origin);

static int parse_array(struct parser *ps, struct toml_value *a)
{
	const char *open = ps->p;
	struct toml_value *item;
	int r;

	ps->p++;
	for (;;) {
		r = toml_skip_ws_nl(ps);
		if (r < 0)
			return r;
		if (toml_at_end(ps))
			return toml_fail_at(ps, open, "unclosed array");
		if (*ps->p == ']') {
			ps->p++;
			return 0;
		}
		r = parse_value(ps, &item);
		if (r < 0)
			return r;
		if (array_push(a, item) < 0) {
			toml_free(item);
			return toml_oom(ps);
		}
		r = toml_skip_ws_nl(ps);
		if (r < 0)
			return r;
		if (toml_peek(ps, 0) == ',') {
			ps->p++;
			continue;
		}
		if (toml_peek(ps, 0) == ']') {
			ps->p++;
			return 0;
		}
		if (toml_at_end(ps))
			return toml_fail_at(ps, open, "unclosed array");
		return toml_fail_at(ps, ps->p, "expected ',' or ']' in array, found '%c'", *ps->p);
	}
}

static int parse_inline_table(struct parser *ps, struct toml_value *t)
{
	const char *open = ps->p;
	int r;

	ps->p++;
	toml_skip_ws(ps);
	if (toml_peek(ps, 0) == '}') {
		ps->p++;
		return 0;
	}
	for (;;) {
		toml_skip_ws(ps);
		r = put_keyval(ps, t, TOML_INLINE);
		if (r < 0)
			return r;
		toml_skip_ws(ps);
		if (toml_peek(ps, 0) == ',') {
			ps->p++;
			toml_skip_ws(ps);
			if (toml_peek(ps, 0) == '}')
				return toml_fail_at(ps, ps->p, "trailing comma in inline table");
			continue;
		}
		if (toml_peek(ps, 0) == '}') {
			ps->p++;
			return 0;
		}
		if (toml_at_end(ps) || toml_newline_len(ps))
			return toml_fail_at(ps, open, "unclosed inline table");
		return toml_fail_at(ps, ps->p, "expected ',' or '}' in inline table, found '%c'",
				    *ps->p);
	}
}

static bool is_word(int c)
{
	return toml_is_bare(c) || c == '+' || c == '.' || c == ':';
}

static int parse_value(struct parser *ps, struct toml_value **out)
{
	const char *s = ps->p, *e;
	int c = toml_peek(ps, 0), r = 0;
	struct toml_value *v;

	*out = NULL;
	v = new_value(TOML_STRING, ps->line, toml_col_of(ps, s));
	if (!v)
		return toml_oom(ps);
	if (c == '"' || c == '\'') {
		struct strbuf sb = STRBUF_INIT((size_t)(ps->end - ps->p) + 1);

		r = toml_parse_string(ps, &sb, true);
		v->len = sb.len;
		v->str = r < 0 ? NULL : sb_take(&sb);
		sb_free(&sb);
		if (r == 0 && !v->str)
			r = toml_oom(ps);
	} else if (c == '[' || c == '{') {
		if (ps->depth >= TOML_MAX_DEPTH) {
			r = toml_fail_at(ps, s, "nested deeper than %d levels", TOML_MAX_DEPTH);
		} else {
			ps->depth++;
			if (c == '[') {
				v->type = TOML_ARRAY;
				r = parse_array(ps, v);
			} else {
				v->type = TOML_TABLE;
				v->origin = TOML_INLINE;
				r = parse_inline_table(ps, v);
			}
			ps->depth--;
		}
	} else if (c < 0 || c == '\n' || c == '\r' || c == '#') {
		r = toml_fail_at(ps, s, "expected a value");
	} else {
		e = s;
		while (e < ps->end && is_word((unsigned char)*e))
			e++;
		/* "1979-05-27 07:32:00": a date, a space, then a time */
		if (e - s == 10 && e + 3 < ps->end && *e == ' ' && toml_isdig(e[1]) &&
		    toml_isdig(e[2]) && e[3] == ':') {
			e++;
			while (e < ps->end && is_word((unsigned char)*e))
				e++;
		}
		if (e == s) {
			r = toml_fail_at(ps, s, "invalid value starting with '%c'", c);
		} else if ((e - s == 4 && !strncmp(s, "true", 4)) ||
			   (e - s == 5 && !strncmp(s, "false", 5))) {
			v->type = TOML_BOOL;
			v->b = *s == 't';
		} else if (toml_is_datetime(s, e)) {
			v->type = TOML_DATETIME;
		} else {
			r = toml_parse_number(ps, s, e, v);
		}
		if (r == 0 && v->type != TOML_BOOL) {
			v->str = strndup(s, (size_t)(e - s));
			v->len = (size_t)(e - s);
			if (!v->str)
				r = toml_oom(ps);
		}
		ps->p = e;
	}
	if (r < 0) {
		toml_free(v);
		return r;
	}
	*out = v;
	return 0;
}

/*
 * Create a table or array under key part i of k in table t, with origin and
 * position (line, col). Returns it (owned by t), or NULL after reporting ENOMEM.
 */
static struct toml_value *add_child(struct parser *ps, struct toml_value *t, const struct key *k,
				    int i, enum toml_type type, enum toml_origin origin, int line,
				    int col)
{
	struct toml_value *sub = new_value(type, line, col);

	if (!sub || table_put(t, k->part[i], k->line[i], k->col[i], sub) < 0) {
		toml_free(sub);
		toml_oom(ps);
		return NULL;
	}
	sub->origin = origin;
	return sub;
}

/* Describe what a key already holds, for "defined twice" messages. */
const char *toml_what(const struct toml_value *v)
{
	return v->type == TOML_TABLE ? "a table" : v->type == TOML_ARRAY ? "an array" : "a value";
}

/*
 * Walk the leading parts of a dotted key inside t, creating tables with
 * origin. Returns the table that gets the last part, or NULL after an error.
 */
static struct toml_value *walk_dotted(struct parser *ps, struct toml_value *t, struct key *k,
				      enum toml_origin origin, int *r)
{
	int i, idx;

	for (i = 0; i < k->n - 1; i++) {
		struct toml_value *sub;

		idx = toml_index(t, k->part[i]);
		if (idx < 0) {
			t = add_child(ps, t, k, i, TOML_TABLE, origin, k->line[i], k->col[i]);
			if (!t) {
				*r = -ENOMEM;
				return NULL;
			}
			continue;
		}
		sub = t->items[idx];
		if (sub->type != TOML_TABLE || sub->origin != origin) {
			*r = toml_fail_pos(ps, k->line[i], k->col[i],
					   "key '%s' was already defined as %s at line %d",
					   k->part[i], toml_what(sub), sub->line);
			return NULL;
		}
		t = sub;
	}
	return t;
}

/* key = value into table t; dotted parts create tables of origin dotted_origin. */
static int put_keyval(struct parser *ps, struct toml_value *t, enum toml_origin dotted_origin)
{
	struct toml_value *v = NULL;
	struct key k;
	int r, idx;

	r = toml_parse_key(ps, &k);
	if (r < 0)
		return r;
	if (toml_peek(ps, 0) != '=') {
		if (toml_at_end(ps) || toml_newline_len(ps))
			r = toml_fail_at(ps, ps->p, "expected '=' after key '%s'", k.part[k.n - 1]);
		else
			r = toml_fail_at(ps, ps->p, "expected '=' after key '%s', found '%c'",
					 k.part[k.n - 1], *ps->p);
		goto out;
	}
	ps->p++;
	toml_skip_ws(ps);
	t = walk_dotted(ps, t, &k, dotted_origin, &r);
	if (!t)
		goto out;
	idx = toml_index(t, k.part[k.n - 1]);
	if (idx >= 0) {
		r = toml_fail_pos(ps, k.line[k.n - 1], k.col[k.n - 1],
				  "key '%s' defined twice (first at line %d)", k.part[k.n - 1],
				  t->key_line[idx]);
		goto out;
	}
	r = parse_value(ps, &v);
	if (r < 0)
		goto out;
	if (table_put(t, k.part[k.n - 1], k.line[k.n - 1], k.col[k.n - 1], v) < 0) {
		toml_free(v);
		r = toml_oom(ps);
	}
out:
	toml_key_free(&k);
	return r;
}

/* [a.b] or [[a.b]] at ps->p. */
static int parse_header(struct parser *ps)
{
	const char *open = ps->p;
	bool aot = toml_peek(ps, 1) == '[';
	struct toml_value *t = ps->root, *sub;
	struct key k;
	int r = 0, i, idx;

	ps->p += aot ? 2 : 1;
	toml_skip_ws(ps);
	r = toml_parse_key(ps, &k);
	if (r < 0)
		return r;
	if (toml_peek(ps, 0) != ']' || (aot && toml_peek(ps, 1) != ']')) {
		r = toml_fail_at(ps, toml_at_end(ps) ? open : ps->p, "unclosed table header");
		goto out;
	}
	ps->p += aot ? 2 : 1;
	for (i = 0; i < k.n - 1; i++) {
		idx = toml_index(t, k.part[i]);
		if (idx < 0) {
			t = add_child(ps, t, &k, i, TOML_TABLE, TOML_IMPLICIT, k.line[i], k.col[i]);
			if (!t) {
				r = -ENOMEM;
				goto out;
			}
			continue;
		}
		sub = t->items[idx];
		if (sub->type == TOML_ARRAY && sub->origin == TOML_HEADER && sub->n > 0) {
			t = sub->items[sub->n - 1];
			continue;
		}
		if (sub->type != TOML_TABLE || sub->origin == TOML_INLINE) {
			r = toml_fail_pos(ps, k.line[i], k.col[i],
					  "key '%s' was already defined as %s at line %d",
					  k.part[i], toml_what(sub), sub->line);
			goto out;
		}
		t = sub;
	}
	i = k.n - 1;
	idx = toml_index(t, k.part[i]);
	if (aot) {
		struct toml_value *elem = new_value(TOML_TABLE, k.line[0], toml_col_of(ps, open));

		if (!elem) {
			r = toml_oom(ps);
			goto out;
		}
		elem->origin = TOML_ARRAY_ELEM;
		if (idx < 0) {
			sub = add_child(ps, t, &k, i, TOML_ARRAY, TOML_HEADER, k.line[0],
					toml_col_of(ps, open));
			if (!sub) {
				toml_free(elem);
				r = -ENOMEM;
				goto out;
			}
		} else {
			sub = t->items[idx];
			if (sub->type != TOML_ARRAY || sub->origin != TOML_HEADER) {
				toml_free(elem);
				r = toml_fail_pos(ps, k.line[i], k.col[i],
						  "key '%s' was already defined as %s at line %d",
						  k.part[i], toml_what(sub), sub->line);
				goto out;
			}
		}
		if (array_push(sub, elem) < 0) {
			toml_free(elem);
			r = toml_oom(ps);
			goto out;
		}
		ps->cur = elem;
		goto out;
	}
	if (idx < 0) {
		sub = add_child(ps, t, &k, i, TOML_TABLE, TOML_HEADER, k.line[0],
				toml_col_of(ps, open));
		if (!sub) {
			r = -ENOMEM;
			goto out;
		}
	} else {
		sub = t->items[idx];
		if (sub->type != TOML_TABLE || sub->origin != TOML_IMPLICIT) {
			struct strbuf name = STRBUF_INIT(200);
			const char *how = sub->type != TOML_TABLE      ? "as a value"
					  : sub->origin == TOML_HEADER ? "by a header"
					  : sub->origin == TOML_DOTTED ? "by dotted keys"
								       : "inline";

			for (i = 0; i < k.n; i++)
				if ((i && sb_addch(&name, '.') < 0) ||
				    toml_write_key(&name, k.part[i]) < 0)
					break;
			r = toml_fail_pos(ps, k.line[0], toml_col_of(ps, open),
					  "table [%s] defined twice (first %s at line %d)",
					  name.buf, how, sub->line);
			sb_free(&name);
			goto out;
		}
		sub->origin = TOML_HEADER;
		sub->line = k.line[0];
		sub->col = toml_col_of(ps, open);
	}
	ps->cur = sub;
out:
	toml_key_free(&k);
	return r;
}

int toml_parse(const char *data, size_t len, const char *name, struct toml_value **out,
	       struct log_err *err)
{
	struct parser ps = {0};
	int r;

	*out = NULL;
	ps.p = data;
	ps.end = data + len;
	ps.line_start = data;
	ps.line = 1;
	ps.name = name ? name : "<toml>";
	ps.err = err;
	if (len >= 3 && !memcmp(data, "\xef\xbb\xbf", 3)) {
		ps.p += 3;
		ps.line_start = ps.p;
	}
	r = toml_check_utf8(&ps);
	if (r < 0)
		return r;
	ps.root = new_value(TOML_TABLE, 1, 1);
	if (!ps.root)
		return toml_oom(&ps);
	ps.root->origin = TOML_ROOT;
	ps.cur = ps.root;
	for (;;) {
		int n;

		toml_skip_ws(&ps);
		if (toml_at_end(&ps))
			break;
		n = toml_newline_len(&ps);
		if (n) {
			toml_take_newline(&ps, n);
			continue;
		}
		if (*ps.p == '#') {
			r = toml_end_of_line(&ps);
		} else if (*ps.p == '[') {
			r = parse_header(&ps);
			if (r == 0)
				r = toml_end_of_line(&ps);
		} else if (*ps.p == '\r') {
			r = toml_fail_at(&ps, ps.p, "carriage return not followed by a newline");
		} else {
			r = put_keyval(&ps, ps.cur, TOML_DOTTED);
			if (r == 0)
				r = toml_end_of_line(&ps);
		}
		if (r < 0) {
			toml_free(ps.root);
			return r;
		}
	}
	*out = ps.root;
	return 0;
}
