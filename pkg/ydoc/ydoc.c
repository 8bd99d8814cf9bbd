/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ydoc: libyaml documents loaded within limits, and the lookups every reader of YAML needs. */
#include "ydoc/ydoc.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "file:line:col: problem context" for a libyaml parser error. */
static int parser_fail(const yaml_parser_t *p, const char *file, struct log_err *err)
{
	if (p->error == YAML_MEMORY_ERROR)
		return log_err_set(err, -ENOMEM, "%s: out of memory", file);
	return log_err_set(err, -EINVAL, "%s:%zu:%zu: %s%s%s", file, p->problem_mark.line + 1,
			   p->problem_mark.column + 1, p->problem ? p->problem : "YAML error",
			   p->context ? " " : "", p->context ? p->context : "");
}

/* msg[0..len) = fmt...; -EINVAL. */
static int fail(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* An anchor of the document being scanned: what an alias to it repeats. */
struct anchor {
	char *name;	 /* owned; NULL for a free slot */
	long long nodes; /* nodes under it, its aliases expanded; -1 while it is still open */
	long long text;	 /* scalar bytes under it, the same way */
};

/* The anchors of one document: open addressing, grown at half full; at most YDOC_MAX_ANCHORS. */
struct anchors {
	struct anchor *a; /* slots */
	size_t cap, n;	  /* slots, used */
};

static void anchors_clear(struct anchors *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		free(t->a[i].name);
	free(t->a);
	memset(t, 0, sizeof(*t));
}

/* The slot of name in t (a free one when absent); t->cap must be non-zero. */
static struct anchor *anchors_slot(const struct anchors *t, const char *name)
{
	size_t h = 5381, i;

	for (i = 0; name[i]; i++)
		h = h * 33 + (unsigned char)name[i];
	for (i = h & (t->cap - 1); t->a[i].name && strcmp(t->a[i].name, name);
	     i = (i + 1) & (t->cap - 1))
		;
	return &t->a[i];
}

static struct anchor *anchors_find(const struct anchors *t, const char *name)
{
	struct anchor *a = t->cap ? anchors_slot(t, name) : NULL;

	return a && a->name ? a : NULL;
}

/* Add (or redefine: libyaml's loader refuses that later) name: its slot, NULL on ENOMEM. */
static struct anchor *anchors_put(struct anchors *t, const char *name)
{
	struct anchor *a;

	if (2 * (t->n + 1) > t->cap) {
		struct anchors g = {.cap = t->cap ? 2 * t->cap : 64};
		size_t i;

		g.a = calloc(g.cap, sizeof(*g.a));
		if (!g.a)
			return NULL;
		for (i = 0; i < t->cap; i++)
			if (t->a[i].name)
				*anchors_slot(&g, t->a[i].name) = t->a[i];
		g.n = t->n;
		free(t->a);
		*t = g;
	}
	a = anchors_slot(t, name);
	if (!a->name) {
		a->name = strdup(name);
		if (!a->name)
			return NULL;
		t->n++;
	}
	a->nodes = -1;
	a->text = 0;
	return a;
}

/* What the prescan counts: the stream's nodes and scalar bytes as if every alias were expanded. */
struct scan {
	struct anchors anchors; /* of the current document */
	long depth;		/* open collections */
	long long nodes, text;	/* so far, aliases expanded */
	long aliases;		/* so far, as written */
	struct {
		const char *anchor;    /* its anchor's name (the table's), or NULL */
		long long nodes, text; /* the counts when it opened */
	} open[YDOC_MAX_DEPTH + 1];    /* the open collections */
};

/* Count one event: 0, or -EINVAL (a limit) or -ENOMEM with msg[0..len) saying why. */
static int scan_event(struct scan *s, const yaml_event_t *ev, char *msg, size_t len)
{
	const unsigned char *anchor = NULL;
	struct anchor *a;

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT: /* anchors are per document */
		anchors_clear(&s->anchors);
		return 0;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (s->depth == YDOC_MAX_DEPTH)
			return fail(msg, len, "nested deeper than %d (the limit): flatten it",
				    YDOC_MAX_DEPTH);
		anchor = ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.anchor
							       : ev->data.mapping_start.anchor;
		s->open[s->depth].nodes = s->nodes;
		s->open[s->depth].text = s->text;
		s->open[s->depth].anchor = NULL;
		s->nodes++;
		break;
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		s->nodes++;
		s->text += (long long)ev->data.scalar.length;
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		s->depth--;
		a = s->open[s->depth].anchor ? anchors_find(&s->anchors, s->open[s->depth].anchor)
					     : NULL;
		if (a) {
			a->nodes = s->nodes - s->open[s->depth].nodes;
			a->text = s->text - s->open[s->depth].text;
		}
		return 0;
	case YAML_ALIAS_EVENT:
		if (++s->aliases > YDOC_MAX_ALIASES)
			return fail(msg, len,
				    "more than %d aliases (the limit): write some of them out, or "
				    "split the file",
				    YDOC_MAX_ALIASES);
		a = anchors_find(&s->anchors, (const char *)ev->data.alias.anchor);
		if (a && a->nodes < 0)
			return fail(
			    msg, len,
			    "alias '*%.100s' inside the node it names (a loop): move it out "
			    "of that node",
			    (const char *)ev->data.alias.anchor);
		s->nodes += a ? a->nodes : 1; /* libyaml's loader refuses an unknown one */
		s->text += a ? a->text : 0;
		break;
	default:
		return 0;
	}
	if (anchor) {
		if (s->anchors.n >= YDOC_MAX_ANCHORS &&
		    !anchors_find(&s->anchors, (const char *)anchor))
			return fail(msg, len,
				    "more than %d anchors in a document (the limit): drop unused "
				    "ones, or split it into documents",
				    YDOC_MAX_ANCHORS);
		a = anchors_put(&s->anchors, (const char *)anchor);
		if (!a) {
			snprintf(msg, len, "out of memory");
			return -ENOMEM;
		}
		if (ev->type == YAML_SCALAR_EVENT) {
			a->nodes = 1;
			a->text = (long long)ev->data.scalar.length;
		} else {
			s->open[s->depth].anchor = a->name; /* slots move as the table grows */
		}
	}
	if (ev->type == YAML_SEQUENCE_START_EVENT || ev->type == YAML_MAPPING_START_EVENT)
		s->depth++;
	if (s->nodes > YDOC_MAX_NODES)
		return fail(msg, len,
			    "more than %d nodes, each alias counted as the nodes it repeats (the "
			    "limit): use fewer aliases",
			    YDOC_MAX_NODES);
	if (s->text > YDOC_MAX_TEXT)
		return fail(msg, len,
			    "more than %d MiB of text, each alias counted as the text it repeats "
			    "(the limit): use fewer aliases",
			    YDOC_MAX_TEXT >> 20);
	return 0;
}

/*
 * One pass over the events: nesting, nodes, text, anchors and aliases within the limits,
 * nodes and text counted as if every alias were expanded (a billion-laughs document is
 * refused here, before libyaml loads it or a reader walks it).
 */
static int prescan(const char *file, const char *buf, size_t len, struct log_err *err)
{
	struct scan *s = calloc(1, sizeof(*s));
	yaml_parser_t p;
	yaml_event_t ev;
	char msg[200];
	int r = 0;

	if (!s || !yaml_parser_initialize(&p)) {
		free(s);
		return log_err_set(err, -ENOMEM, "%s: out of memory", file);
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	for (;;) {
		if (!yaml_parser_parse(&p, &ev)) {
			r = parser_fail(&p, file, err);
			break;
		}
		r = scan_event(s, &ev, msg, sizeof(msg));
		if (r < 0)
			r = log_err_set(err, r, "%s:%zu:%zu: %s", file, ev.start_mark.line + 1,
					ev.start_mark.column + 1, msg);
		if (r < 0 || ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	anchors_clear(&s->anchors);
	free(s);
	return r;
}

int ydoc_stream_open(struct ydoc_stream *s, const char *file, const char *buf, size_t len,
		     struct log_err *err)
{
	int r;

	memset(s, 0, sizeof(*s));
	r = prescan(file, buf, len, err);
	if (r < 0)
		return r;
	if (!yaml_parser_initialize(&s->parser))
		return log_err_set(err, -ENOMEM, "%s: out of memory", file);
	yaml_parser_set_input_string(&s->parser, (const unsigned char *)buf, len);
	s->file = file;
	s->err = err;
	return 0;
}

/* d's name in messages, where its errors go, and a full walking budget. */
static void attach(struct ydoc *d, const char *file, struct log_err *err)
{
	d->file = file;
	d->err = err;
	d->budget = YDOC_BUDGET;
}

int ydoc_stream_next(struct ydoc_stream *s, struct ydoc *d)
{
	memset(d, 0, sizeof(*d));
	if (s->done)
		return 0;
	if (!yaml_parser_load(&s->parser, &d->doc)) {
		s->done = true;
		return parser_fail(&s->parser, s->file, s->err);
	}
	attach(d, s->file, s->err);
	if (!yaml_document_get_root_node(&d->doc)) { /* libyaml's end of stream */
		yaml_document_delete(&d->doc);
		memset(d, 0, sizeof(*d));
		s->done = true;
		return 0;
	}
	return 1;
}

void ydoc_stream_close(struct ydoc_stream *s)
{
	if (s->file)
		yaml_parser_delete(&s->parser);
	memset(s, 0, sizeof(*s));
}

int ydoc_load(struct ydoc *d, const char *file, const char *buf, size_t len, struct log_err *err)
{
	struct ydoc_stream s;
	int r = ydoc_stream_open(&s, file, buf, len, err);

	memset(d, 0, sizeof(*d));
	if (r < 0)
		return r;
	r = ydoc_stream_next(&s, d);
	ydoc_stream_close(&s);
	if (r == 0) { /* empty input: an empty document */
		attach(d, file, err);
		if (!yaml_document_initialize(&d->doc, NULL, NULL, NULL, 1, 1))
			return log_err_set(err, -ENOMEM, "%s: out of memory", file);
	}
	return r < 0 ? r : 0;
}

void ydoc_borrow(struct ydoc *d, const char *file, const yaml_document_t *doc, struct log_err *err)
{
	memset(d, 0, sizeof(*d));
	d->doc = *doc;
	attach(d, file, err);
	d->borrowed = true;
}

void ydoc_free(struct ydoc *d)
{
	if (d->file && !d->borrowed)
		yaml_document_delete(&d->doc);
	memset(d, 0, sizeof(*d));
}

yaml_node_t *ydoc_root(struct ydoc *d)
{
	return yaml_document_get_root_node(&d->doc);
}

yaml_node_t *ydoc_node(struct ydoc *d, int id)
{
	return yaml_document_get_node(&d->doc, id);
}

bool ydoc_visit(struct ydoc *d)
{
	return --d->budget >= 0;
}

bool ydoc_is_null(const yaml_node_t *n)
{
	const char *v;

	if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	v = (const char *)n->data.scalar.value;
	if (*v != '~' && *v != 'n' && *v != 'N') /* no null form starts otherwise */
		return !*v;
	return !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL");
}

const char *ydoc_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/*
 * The YAML 1.1 booleans of go-yaml v2's resolver (read, not copied) that
 * every YAML 1.1 reader agrees on; its single letters y/n are left strings.
 */
static const char *const ydoc_bools[] = {
    "yes",   "Yes",   "YES",   "no", "No", "NO", "true", "True", "TRUE",
    "false", "False", "FALSE", "on", "On", "ON", "off",	 "Off",	 "OFF",
};

/* strconv.ParseInt(s without '_', 0, 64) syntax: sign, then 0x/0o/0b/0 prefixes or decimal. */
static bool ydoc_is_int(const char *v)
{
	const char *p = v;
	int base = 10;
	bool digit = false;

	if (*p == '+' || *p == '-')
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		base = 16, p += 2;
	else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O'))
		base = 8, p += 2;
	else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
		base = 2, p += 2;
	else if (p[0] == '0' && p[1])
		base = 8, p++;
	for (; *p; p++) {
		int d = isdigit((unsigned char)*p)    ? *p - '0'
			: isxdigit((unsigned char)*p) ? (tolower((unsigned char)*p) - 'a' + 10)
						      : -1;

		if (*p == '_')
			continue;
		if (d < 0 || d >= base)
			return false;
		digit = true;
	}
	return digit;
}

/* go-yaml v2's float form: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, and .inf/.nan. */
static bool ydoc_is_float(const char *v)
{
	static const char *const special[] = {".inf",  ".Inf",	".INF",	 "+.inf", "+.Inf", "+.INF",
					      "-.inf", "-.Inf", "-.INF", ".nan",  ".NaN",  ".NAN"};
	const char *p = v;
	bool mant = false;
	size_t i;

	for (i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		if (!strcmp(v, special[i]))
			return true;
	if (*p == '+' || *p == '-')
		p++;
	while (isdigit((unsigned char)*p))
		p++, mant = true;
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p))
			p++, mant = true;
	}
	if (!mant)
		return false;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return !*p;
}

const char *ydoc_scalar_type(const yaml_node_t *n)
{
	const char *v;
	size_t i;

	if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return NULL;
	if (ydoc_is_null(n))
		return "null";
	v = (const char *)n->data.scalar.value;
	for (i = 0; i < sizeof(ydoc_bools) / sizeof(ydoc_bools[0]); i++)
		if (v[0] == ydoc_bools[i][0] && !strcmp(v, ydoc_bools[i])) /* first letter first */
			return "a boolean";
	if (ydoc_is_int(v))
		return "an integer";
	if (ydoc_is_float(v))
		return "a number";
	return NULL;
}

const char *ydoc_kind(const yaml_node_t *n)
{
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	return ydoc_is_null(n) ? "null" : "a string";
}

yaml_node_t *ydoc_get(struct ydoc *d, const yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = ydoc_scalar(ydoc_node(d, p->key));

		if (!ydoc_visit(d))
			return NULL;
		if (k && !strcmp(k, key))
			return ydoc_node(d, p->value);
	}
	return NULL;
}

int ydoc_check_map(struct ydoc *d, const yaml_node_t *m)
{
	yaml_node_pair_t *p, *q;

	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = ydoc_node(d, p->key);

		if (!ydoc_visit(d))
			return ydoc_too_complex(d, m);
		if (k->type != YAML_SCALAR_NODE)
			return ydoc_fail(d, k, "mapping key must be a string, not %s",
					 ydoc_kind(k));
		for (q = m->data.mapping.pairs.start; q < p; q++)
			if (ydoc_visit(d) &&
			    !strcmp(ydoc_scalar(ydoc_node(d, q->key)), ydoc_scalar(k)))
				return ydoc_fail(d, k, "duplicate key '%s'", ydoc_scalar(k));
		if (d->budget < 0)
			return ydoc_too_complex(d, m);
	}
	return 0;
}

int ydoc_too_complex(struct ydoc *d, const yaml_node_t *n)
{
	if (d->told)
		return -EINVAL;
	d->told = true;
	return ydoc_fail(d, n,
			 "document too complex: more than %d steps to read it (the limit): split "
			 "it into smaller documents, or use fewer aliases",
			 YDOC_BUDGET);
}

int ydoc_fail(struct ydoc *d, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return log_err_set(d->err, -EINVAL, "%s:%zu:%zu: %s", d->file, n->start_mark.line + 1,
			   n->start_mark.column + 1, msg);
}
