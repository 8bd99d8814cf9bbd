/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/ydoc: streams, lookups, messages, and the limits checked before loading. */
#include <errno.h>

#include "harness.h"
#include "rules/rules.h"
#include "strbuf/strbuf.h"
#include "ydoc/ydoc.h"

static int load(struct ydoc *d, const char *text, struct log_err *err)
{
	return ydoc_load(d, "t.yaml", text, strlen(text), err);
}

TEST(mappings_scalars_and_kinds)
{
	struct log_err err = {0};
	struct ydoc d;
	yaml_node_t *root, *v;

	REQUIRE_INT(load(&d, "a: 1\nb: [x, y]\nc: {d: e}\nn: ~\n", &err), 0);
	root = ydoc_root(&d);
	REQUIRE(root);
	CHECK_INT(ydoc_check_map(&d, root), 0);
	CHECK_STR(ydoc_scalar(ydoc_get(&d, root, "a")), "1");
	v = ydoc_get(&d, root, "b");
	REQUIRE(v);
	CHECK_STR(ydoc_kind(v), "a list");
	CHECK_STR(ydoc_scalar(ydoc_node(&d, v->data.sequence.items.start[1])), "y");
	CHECK_STR(ydoc_kind(ydoc_get(&d, root, "c")), "a mapping");
	CHECK(ydoc_is_null(ydoc_get(&d, root, "n")));
	CHECK(ydoc_get(&d, root, "zz") == NULL);
	CHECK(ydoc_get(&d, v, "a") == NULL); /* not a mapping */
	CHECK(ydoc_scalar(v) == NULL);
	ydoc_free(&d);
}

TEST(errors_name_file_line_column)
{
	struct log_err err = {0};
	struct ydoc d;

	REQUIRE_INT(load(&d, "a: 1\nb:\n  c: 2\n  c: 3\n", &err), 0);
	CHECK_INT(ydoc_check_map(&d, ydoc_get(&d, ydoc_root(&d), "b")), -EINVAL);
	CHECK_STR(err.msg, "t.yaml:4:3: duplicate key 'c'");
	ydoc_free(&d);
	CHECK_INT(load(&d, "a: [1, 2\n", &err), -EINVAL);
	CHECK(strncmp(err.msg, "t.yaml:2:1: did not find expected ',' or ']'", 44) == 0);
}

TEST(empty_input_is_an_empty_document)
{
	struct log_err err = {0};
	struct ydoc d;

	REQUIRE_INT(load(&d, "", &err), 0);
	CHECK(ydoc_root(&d) == NULL);
	ydoc_free(&d);
}

TEST(stream_of_documents)
{
	static const char text[] = "a: 1\n---\nb: 2\n---\n";
	struct log_err err = {0};
	struct ydoc_stream s;
	struct ydoc d;
	int n = 0, r;

	REQUIRE_INT(ydoc_stream_open(&s, "t.yaml", text, strlen(text), &err), 0);
	while ((r = ydoc_stream_next(&s, &d)) > 0) {
		n++;
		if (n == 3) /* a "---" with nothing after it starts a null document */
			CHECK(ydoc_is_null(ydoc_root(&d)));
		ydoc_free(&d);
	}
	CHECK_INT(r, 0);
	CHECK_INT(n, 3);
	ydoc_stream_close(&s);
}

/* Nesting is refused before a document is built, with the place of the first level too deep. */
TEST(depth_limit_before_loading)
{
	struct strbuf sb = STRBUF_INIT(1 << 20);
	struct log_err err = {0};
	struct ydoc d;
	int i;

	for (i = 0; i < 100000; i++)
		sb_addch(&sb, '[');
	CHECK_INT(load(&d, sb.buf, &err), -EINVAL);
	CHECK_STR(err.msg, "t.yaml:1:65: nested deeper than 64 (the limit): flatten it");
	sb_reset(&sb);
	for (i = 0; i < 64; i++)
		sb_addch(&sb, '[');
	for (i = 0; i < 64; i++)
		sb_addch(&sb, ']');
	CHECK_INT(load(&d, sb.buf, &err), 0);
	ydoc_free(&d);
	sb_free(&sb);
}

/*
 * A billion-laughs document: nodes are counted as if every alias were expanded, and it is
 * refused by the scan, before libyaml loads it (11 levels of 10 aliases: 10^11 nodes).
 */
TEST(alias_bomb_refused)
{
	struct strbuf sb = STRBUF_INIT(1 << 20);
	struct log_err err = {0};
	struct ydoc d;
	int i, j;

	sb_add(&sb, "a0: &a0 [x]\n");
	for (i = 1; i < 12; i++) {
		sb_addf(&sb, "a%d: &a%d [", i, i);
		for (j = 0; j < 10; j++)
			sb_addf(&sb, "%s*a%d", j ? ", " : "", i - 1);
		sb_add(&sb, "]\n");
	}
	CHECK_INT(load(&d, sb.buf, &err), -EINVAL);
	/* a level-5 alias repeats 211111 nodes: the 4th on line 7 passes the limit */
	CHECK_STR(err.msg, "t.yaml:7:25: more than 1000000 nodes, each alias counted as the nodes "
			   "it repeats (the limit): use fewer aliases");
	sb_reset(&sb);
	sb_add(&sb, "a0: &a0 [x]\n"); /* 5 levels: 10^5 nodes once expanded, loaded */
	for (i = 1; i < 6; i++) {
		sb_addf(&sb, "a%d: &a%d [", i, i);
		for (j = 0; j < 10; j++)
			sb_addf(&sb, "%s*a%d", j ? ", " : "", i - 1);
		sb_add(&sb, "]\n");
	}
	CHECK_INT(load(&d, sb.buf, &err), 0);
	ydoc_free(&d);
	sb_reset(&sb);
	sb_add(&sb, "a: &a x\nb: [");
	for (i = 0; i < YDOC_MAX_ALIASES + 1; i++)
		sb_add(&sb, "*a, ");
	sb_add(&sb, "]\n");
	CHECK_INT(load(&d, sb.buf, &err), -EINVAL);
	CHECK(strstr(err.msg, "more than 10000 aliases") != NULL);
	sb_free(&sb);
}

/* Text is counted the same way: 1 MiB written once, repeated 100 times, is refused. */
TEST(alias_text_bomb_refused)
{
	struct strbuf sb = STRBUF_INIT(2 << 20);
	struct log_err err = {0};
	struct ydoc d;
	int i;

	sb_add(&sb, "a: &a \"");
	for (i = 0; i < (1 << 20); i++)
		sb_addch(&sb, 'x');
	sb_add(&sb, "\"\nb: [");
	for (i = 0; i < 62; i++)
		sb_add(&sb, "*a, ");
	sb_add(&sb, "]\n");
	CHECK_INT(load(&d, sb.buf, &err), 0); /* 63 MiB and the keys: within the limit */
	ydoc_free(&d);
	sb.len -= 2;
	sb_add(&sb, "*a]\n");
	CHECK_INT(load(&d, sb.buf, &err), -EINVAL);
	CHECK(strstr(err.msg, "t.yaml:2:253: more than 64 MiB of text, each alias counted as the "
			      "text it repeats") == err.msg);
	sb_free(&sb);
}

/* An alias inside the node it names would make a loop: refused, as are too many anchors. */
TEST(alias_loop_and_anchors_refused)
{
	struct strbuf sb = STRBUF_INIT(1 << 20);
	struct log_err err = {0};
	struct ydoc d;
	int i;

	CHECK_INT(load(&d, "a: &a {b: [1, *a]}\n", &err), -EINVAL);
	CHECK_STR(err.msg, "t.yaml:1:15: alias '*a' inside the node it names (a loop): move it "
			   "out of that node");
	/* an anchor redefined after its node closed is not a loop (libyaml's loader refuses it) */
	CHECK_INT(load(&d, "a: &a [1]\nb: *a\n", &err), 0);
	ydoc_free(&d);
	for (i = 0; i <= YDOC_MAX_ANCHORS; i++)
		sb_addf(&sb, "- &n%d x\n", i);
	CHECK_INT(load(&d, sb.buf, &err), -EINVAL);
	CHECK_STR(err.msg, "t.yaml:10001:3: more than 10000 anchors in a document (the limit): "
			   "drop unused ones, or split it into documents");
	sb_free(&sb);
}

/* Two libyaml marks equal. */
static bool same_mark(const yaml_mark_t *a, const yaml_mark_t *b)
{
	return a->index == b->index && a->line == b->line && a->column == b->column;
}

/* Two runs [a, ae) and [b, be) of elements of size sz with the same bytes. */
static bool same_span(const void *a, const void *ae, const void *b, const void *be, size_t sz)
{
	size_t na = (size_t)((const char *)ae - (const char *)a) / sz;
	size_t nb = (size_t)((const char *)be - (const char *)b) / sz;

	return na == nb && (na == 0 || !memcmp(a, b, na * sz));
}

/* Two documents node for node: type, tag, scalar bytes and style, items, pairs, marks. */
static void check_same_doc(const char *file, const yaml_document_t *a, const yaml_document_t *b)
{
	long n = a->nodes.top - a->nodes.start, i;

	CHECK_INT(b->nodes.top - b->nodes.start, n);
	if (b->nodes.top - b->nodes.start != n)
		return;
	CHECK_INT(a->start_implicit, b->start_implicit);
	CHECK_INT(a->end_implicit, b->end_implicit);
	CHECK(same_mark(&a->start_mark, &b->start_mark));
	CHECK(same_mark(&a->end_mark, &b->end_mark));
	for (i = 0; i < n; i++) {
		const yaml_node_t *x = a->nodes.start + i, *y = b->nodes.start + i;
		bool same = x->type == y->type && !strcmp((char *)x->tag, (char *)y->tag) &&
			    same_mark(&x->start_mark, &y->start_mark) &&
			    same_mark(&x->end_mark, &y->end_mark);

		if (same && x->type == YAML_SCALAR_NODE)
			same = x->data.scalar.length == y->data.scalar.length &&
			       x->data.scalar.style == y->data.scalar.style &&
			       !memcmp(x->data.scalar.value, y->data.scalar.value,
				       x->data.scalar.length + 1);
		if (same && x->type == YAML_SEQUENCE_NODE)
			same = x->data.sequence.style == y->data.sequence.style &&
			       same_span(x->data.sequence.items.start, x->data.sequence.items.top,
					 y->data.sequence.items.start, y->data.sequence.items.top,
					 sizeof(yaml_node_item_t));
		if (same && x->type == YAML_MAPPING_NODE)
			same = x->data.mapping.style == y->data.mapping.style &&
			       same_span(x->data.mapping.pairs.start, x->data.mapping.pairs.top,
					 y->data.mapping.pairs.start, y->data.mapping.pairs.top,
					 sizeof(yaml_node_pair_t));
		if (!same) {
			fprintf(stderr, "%s: node %ld (line %zu) differs from libyaml's\n", file,
				i + 1, x->start_mark.line + 1);
			CHECK(same);
			return;
		}
	}
}

/*
 * The built-in rules are walked from documents embedded at build time (scripts/embed-yaml),
 * never parsed at run time: each file's bytes must pass the bounds scan and load to the
 * very documents embedded, node for node.
 */
TEST(builtin_rules_are_what_libyaml_loads)
{
	size_t i, k;

	REQUIRE(rules_builtin_count > 0);
	for (i = 0; i < rules_builtin_count; i++) {
		struct log_err err = {0};
		struct ydoc_stream a;
		struct ydoc da, db;
		int ra;

		CHECK_INT(rules_builtin[i].data[rules_builtin[i].len], 0);
		REQUIRE_INT(ydoc_stream_open(&a, rules_builtin[i].name, rules_builtin[i].data,
					     rules_builtin[i].len, &err),
			    0);
		for (k = 0;; k++) {
			ra = ydoc_stream_next(&a, &da);
			if (ra <= 0)
				break;
			CHECK(k < rules_builtin[i].ndocs);
			if (k < rules_builtin[i].ndocs) {
				ydoc_borrow(&db, rules_builtin[i].name, &rules_builtin[i].docs[k],
					    &err);
				CHECK(ydoc_root(&db) != NULL);
				check_same_doc(rules_builtin[i].name, &da.doc, &db.doc);
				ydoc_free(&db);
				/* still there: borrowed documents are not freed */
				CHECK(rules_builtin[i].docs[k].nodes.start != NULL);
			}
			ydoc_free(&da);
		}
		CHECK_INT(ra, 0);
		CHECK_INT(k, rules_builtin[i].ndocs);
		CHECK(k > 0);
		ydoc_stream_close(&a);
	}
}

/* Plain scalars as Kubernetes resolves them (YAML 1.1); quoted ones are always strings. */
TEST(scalar_types_as_kubernetes_reads_them)
{
	static const struct {
		const char *text, *type; /* "s" for a string (NULL) */
	} c[] = {
	    {"true", "a boolean"},
	    {"False", "a boolean"},
	    {"yes", "a boolean"},
	    {"OFF", "a boolean"},
	    {"y", "s"},
	    {"n", "s"},
	    {"5", "an integer"},
	    {"-0x1F", "an integer"},
	    {"0o17", "an integer"},
	    {"1_000", "an integer"},
	    {"0b101", "an integer"},
	    {"0300", "an integer"},
	    /* not octal, but go-yaml v2's float form: a number (PyYAML says string) */
	    {"0380", "a number"},
	    {"1.5", "a number"},
	    {"1e3", "a number"},
	    {".inf", "a number"},
	    {".NaN", "a number"},
	    {"~", "null"},
	    {"null", "null"},
	    {"8086", "an integer"},
	    {"46a6", "s"},
	    {"5.15.0", "s"},
	    {"v1", "s"},
	    {"1e", "s"},
	    {"\"true\"", "s"},
	    {"'5'", "s"},
	    {"\"\"", "s"},
	    {"0x", "s"},
	};
	char text[64];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct log_err err = {0};
		struct ydoc d;
		const char *t;

		snprintf(text, sizeof(text), "v: %s\n", c[i].text);
		REQUIRE_INT(load(&d, text, &err), 0);
		t = ydoc_scalar_type(ydoc_get(&d, ydoc_root(&d), "v"));
		if (strcmp(t ? t : "s", c[i].type))
			HFAIL_("%s: got %s, want %s", c[i].text, t ? t : "a string", c[i].type);
		ydoc_free(&d);
	}
}
