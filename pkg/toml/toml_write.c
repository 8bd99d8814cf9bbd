/* SPDX-License-Identifier: GPL-2.0-or-later */
/* toml_write: TOML values written back as go-toml v2 writes them (Spegel's --prepend-existing). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "toml/toml_internal.h"

/* ---- writing, go-toml v2 style ---- */

/* go-toml v2 needsQuoting: a ' or a control character other than tab. */
static bool needs_basic(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\'' || (c < 0x20 && c != '\t') || c == 0x7f)
			return true;
	}
	return false;
}

/* go-toml v2 encodeQuotedString (single line). */
static int write_basic(struct strbuf *sb, const char *s, size_t len)
{
	static const char esc[] = {['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f',
				   ['\r'] = 'r', ['"'] = '"',  ['\\'] = '\\'};
	size_t i;
	int r = sb_addch(sb, '"');

	for (i = 0; r == 0 && i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < sizeof(esc) && esc[c])
			r = sb_addf(sb, "\\%c", esc[c]);
		else if (c < 0x20 || c == 0x7f)
			r = sb_addf(sb, "\\u%04X", c);
		else
			r = sb_addch(sb, (char)c);
	}
	return r ? r : sb_addch(sb, '"');
}

static int write_string(struct strbuf *sb, const char *s, size_t len)
{
	int r;

	if (needs_basic(s, len))
		return write_basic(sb, s, len);
	r = sb_addch(sb, '\'');
	if (r == 0)
		r = sb_addn(sb, s, len);
	return r ? r : sb_addch(sb, '\'');
}

/*
 * A float as Go's strconv.FormatFloat: 'f' with one decimal when integral,
 * else the fewest decimals that read back as the same double.
 */
static int write_float(struct strbuf *sb, double f)
{
	char buf[512];
	int p;

	if (isnan(f))
		return sb_add(sb, "nan");
	if (isinf(f))
		return sb_add(sb, f < 0 ? "-inf" : "inf");
	if (f == trunc(f))
		return sb_addf(sb, "%.1f", f);
	for (p = 1; p < 400; p++) {
		snprintf(buf, sizeof(buf), "%.*f", p, f);
		if (strtod(buf, NULL) == f)
			break;
	}
	return sb_add(sb, buf);
}

/*
 * A date-time as go-toml v2 writes what it read: 'T' between date and time,
 * at most 9 fraction digits; an offset date-time goes through Go's time.Time
 * (RFC 3339, fraction without trailing zeros, offset 0 as Z).
 */
static int write_datetime(struct strbuf *sb, const char *s)
{
	struct strbuf out = STRBUF_INIT(128);
	const char *p = s, *frac = NULL, *zone = NULL;
	size_t nfrac = 0;
	int r = 0;

	if (strlen(s) > 10 && s[4] == '-' && (s[10] == ' ' || s[10] == 't' || s[10] == 'T')) {
		r = sb_addn(&out, s, 10);
		if (r == 0)
			r = sb_addch(&out, 'T');
		p = s + 11;
	}
	if (r == 0 && strlen(p) >= 8 && p[2] == ':') {
		r = sb_addn(&out, p, 8);
		p += 8;
		if (*p == '.') {
			frac = ++p;
			while (toml_isdig(*p))
				p++;
			nfrac = (size_t)(p - frac) > 9 ? 9 : (size_t)(p - frac);
		}
		zone = *p ? p : NULL;
	} else if (r == 0) {
		r = sb_add(&out, p); /* local date */
		p += strlen(p);
	}
	if (zone)
		while (nfrac && frac[nfrac - 1] == '0')
			nfrac--;
	if (r == 0 && nfrac)
		r = sb_addch(&out, '.');
	if (r == 0 && nfrac)
		r = sb_addn(&out, frac, nfrac);
	if (r == 0 && zone) {
		if (!strcmp(zone, "z") || !strcmp(zone, "Z") || !strcmp(zone + 1, "00:00"))
			r = sb_addch(&out, 'Z');
		else
			r = sb_add(&out, zone);
	}
	if (r == 0)
		r = sb_add(sb, out.buf);
	sb_free(&out);
	return r;
}

int toml_write_key(struct strbuf *sb, const char *key)
{
	const char *p;

	for (p = key; *p && toml_is_bare((unsigned char)*p); p++)
		;
	if (*key && !*p)
		return sb_add(sb, key);
	return write_string(sb, key, strlen(key));
}

static size_t *sorted_index(const struct toml_value *t);

/* go-toml v2 inline table: {a = 1, b = 'x'}, keys sorted. */
static int write_inline_table(struct strbuf *sb, const struct toml_value *t)
{
	size_t *idx = sorted_index(t);
	size_t i;
	int r;

	if (!idx)
		return -ENOMEM;
	r = sb_addch(sb, '{');
	for (i = 0; r == 0 && i < t->n; i++) {
		if (i)
			r = sb_add(sb, ", ");
		if (r == 0)
			r = toml_write_key(sb, t->keys[idx[i]]);
		if (r == 0)
			r = sb_add(sb, " = ");
		if (r == 0)
			r = toml_write_value(sb, t->items[idx[i]]);
	}
	free(idx);
	return r ? r : sb_addch(sb, '}');
}

int toml_write_value(struct strbuf *sb, const struct toml_value *v)
{
	size_t i;
	int r = 0;

	switch (v->type) {
	case TOML_STRING:
		return write_string(sb, v->str, v->len);
	case TOML_INT:
		return sb_addf(sb, "%lld", v->i);
	case TOML_FLOAT:
		return write_float(sb, v->f);
	case TOML_BOOL:
		return sb_add(sb, v->b ? "true" : "false");
	case TOML_DATETIME:
		return write_datetime(sb, v->str);
	case TOML_ARRAY:
		r = sb_addch(sb, '[');
		for (i = 0; r == 0 && i < v->n; i++) {
			if (i)
				r = sb_add(sb, ", ");
			if (r == 0)
				r = toml_write_value(sb, v->items[i]);
		}
		return r ? r : sb_addch(sb, ']');
	case TOML_TABLE:
		return write_inline_table(sb, v);
	}
	return -EINVAL;
}

/* Indices of t's items sorted by key (insertion sort: tables here are small). */
static size_t *sorted_index(const struct toml_value *t)
{
	size_t *idx = malloc((t->n ? t->n : 1) * sizeof(*idx));
	size_t i, j;

	if (!idx)
		return NULL;
	for (i = 0; i < t->n; i++) {
		size_t v = i;

		for (j = i; j > 0 && strcmp(t->keys[idx[j - 1]], t->keys[v]) > 0; j--)
			idx[j] = idx[j - 1];
		idx[j] = v;
	}
	return idx;
}

/* What go-toml v2 writes as a table: a table, or a non-empty array of tables only ([[a]]). */
static bool is_subtable(const struct toml_value *v)
{
	size_t i;

	if (v->type == TOML_TABLE)
		return true;
	if (v->type != TOML_ARRAY || v->n == 0)
		return false;
	for (i = 0; i < v->n; i++)
		if (v->items[i]->type != TOML_TABLE)
			return false;
	return true;
}

/*
 * go-toml v2 encodeTable without the header: sorted key/values, then the
 * sorted sub-tables and arrays of tables, a blank line before each except
 * the first when no key/value was written.
 */
static int write_body(struct strbuf *sb, const char *path, const struct toml_value *t)
{
	size_t *idx = sorted_index(t);
	size_t i, j;
	bool blank = false;
	int r = 0;

	if (!idx)
		return -ENOMEM;
	for (i = 0; r == 0 && i < t->n; i++) {
		const struct toml_value *v = t->items[idx[i]];

		if (is_subtable(v))
			continue;
		r = toml_write_key(sb, t->keys[idx[i]]);
		if (r == 0)
			r = sb_add(sb, " = ");
		if (r == 0)
			r = toml_write_value(sb, v);
		if (r == 0)
			r = sb_addch(sb, '\n');
		blank = true;
	}
	for (i = 0; r == 0 && i < t->n; i++) {
		const struct toml_value *v = t->items[idx[i]];
		struct strbuf sub = STRBUF_INIT(sb->max);

		if (!is_subtable(v))
			continue;
		if (blank)
			r = sb_addch(sb, '\n');
		blank = true;
		if (r == 0)
			r = sb_addf(&sub, "%s.", path);
		if (r == 0)
			r = toml_write_key(&sub, t->keys[idx[i]]);
		if (r == 0 && v->type == TOML_TABLE)
			r = toml_write_table(sb, sub.buf, v);
		for (j = 0; r == 0 && v->type == TOML_ARRAY && j < v->n; j++) {
			r = sb_addf(sb, "%s[[%s]]\n", j ? "\n" : "", sub.buf);
			if (r == 0)
				r = write_body(sb, sub.buf, v->items[j]);
		}
		sb_free(&sub);
	}
	free(idx);
	return r;
}

int toml_write_table(struct strbuf *sb, const char *path, const struct toml_value *t)
{
	int r = sb_addf(sb, "[%s]\n", path);

	return r ? r : write_body(sb, path, t);
}
