/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * embed-yaml: write a C file embedding YAML files as an array of struct rules_builtin
 * (pkg/rules/rules.h): each file's bytes, and its documents as libyaml loads them
 * (yaml_document_t with its nodes, items and pairs as static data), so nodeprobe walks
 * the built-in rules without parsing them at every run. Parsing 12 KB of YAML with libyaml
 * was 2.8 M of nodeprobe's 7.5 M instructions (callgrind, every source on nuc12).
 *
 * Built for the build machine (HOSTCC), also in cross builds: it writes C, which the
 * target's compiler lays out. test_ydoc checks the result node for node against what
 * ydoc_stream_open/ydoc_stream_next load from the embedded bytes.
 *
 * Usage: embed-yaml ARRAY FILE... > out.c
 * Each entry's name is <the file's folder name>/<basename>, as "rules.d/x.yaml".
 * Exit 1 (a line naming the file) on unreadable input, invalid YAML, or %YAML/%TAG
 * directives (not carried over; the built-in rules have none).
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static int read_all(const char *path, unsigned char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return -1;
	for (;;) {
		if (n == cap) {
			unsigned char *nb = realloc(buf, cap = cap ? cap * 2 : 16384);

			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	*out = buf;
	*len = n;
	return 0;
}

/* A C string literal for s[0..n): octal escapes (never hex: a following digit would join
 * them), \? against trigraphs. */
static void literal(const unsigned char *s, size_t n)
{
	size_t i;

	putchar('"');
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\' || c == '?')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\%03o", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* libyaml's enum names, so the target's yaml.h gives the values */
static const char *const node_type[] = {"YAML_NO_NODE", "YAML_SCALAR_NODE", "YAML_SEQUENCE_NODE",
					"YAML_MAPPING_NODE"};
static const char *const scalar_style[] = {
    "YAML_ANY_SCALAR_STYLE",	       "YAML_PLAIN_SCALAR_STYLE",
    "YAML_SINGLE_QUOTED_SCALAR_STYLE", "YAML_DOUBLE_QUOTED_SCALAR_STYLE",
    "YAML_LITERAL_SCALAR_STYLE",       "YAML_FOLDED_SCALAR_STYLE"};
static const char *const seq_style[] = {"YAML_ANY_SEQUENCE_STYLE", "YAML_BLOCK_SEQUENCE_STYLE",
					"YAML_FLOW_SEQUENCE_STYLE"};
static const char *const map_style[] = {"YAML_ANY_MAPPING_STYLE", "YAML_BLOCK_MAPPING_STYLE",
					"YAML_FLOW_MAPPING_STYLE"};

static void mark(FILE *f, const yaml_mark_t *m)
{
	fprintf(f, "{%zu, %zu, %zu}", m->index, m->line, m->column);
}

/* A sequence's items or a mapping's pairs: k entries from at of array <p>_<a>
 * (start, end and top; none: NULLs, as nothing reads an empty one's stack). */
static void span(const char *field, const char *p, char a, size_t at, size_t k, const char *style)
{
	if (k)
		printf(".%s = {{%s_%c + %zu, %s_%c + %zu, %s_%c + %zu}, %s}", field, p, a, at, p, a,
		       at + k, p, a, at + k, style);
	else
		printf(".%s = {{0, 0, 0}, %s}", field, style);
}

/* One document as static arrays named <p>_n (nodes), <p>_i (items), <p>_p (pairs). */
static void emit_doc(const char *p, const yaml_document_t *d)
{
	const yaml_node_t *n;
	size_t items = 0, pairs = 0;

	for (n = d->nodes.start; n < d->nodes.top; n++) {
		if (n->type == YAML_SEQUENCE_NODE)
			items +=
			    (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
		else if (n->type == YAML_MAPPING_NODE)
			pairs += (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	}
	if (items) {
		printf("static yaml_node_item_t %s_i[] = {", p);
		for (n = d->nodes.start; n < d->nodes.top; n++)
			if (n->type == YAML_SEQUENCE_NODE)
				for (const yaml_node_item_t *it = n->data.sequence.items.start;
				     it < n->data.sequence.items.top; it++)
					printf("%d,", *it);
		printf("};\n");
	}
	if (pairs) {
		printf("static yaml_node_pair_t %s_p[] = {", p);
		for (n = d->nodes.start; n < d->nodes.top; n++)
			if (n->type == YAML_MAPPING_NODE)
				for (const yaml_node_pair_t *pr = n->data.mapping.pairs.start;
				     pr < n->data.mapping.pairs.top; pr++)
					printf("{%d,%d},", pr->key, pr->value);
		printf("};\n");
	}
	printf("static yaml_node_t %s_n[] = {\n", p);
	items = pairs = 0;
	for (n = d->nodes.start; n < d->nodes.top; n++) {
		size_t k;

		printf("\t{%s, (yaml_char_t *)", node_type[n->type]);
		literal(n->tag, strlen((const char *)n->tag));
		printf(", {");
		switch (n->type) {
		case YAML_SCALAR_NODE:
			printf(".scalar = {(yaml_char_t *)");
			literal(n->data.scalar.value, n->data.scalar.length);
			printf(", %zu, %s}", n->data.scalar.length,
			       scalar_style[n->data.scalar.style]);
			break;
		case YAML_SEQUENCE_NODE:
			k = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
			span("sequence", p, 'i', items, k, seq_style[n->data.sequence.style]);
			items += k;
			break;
		case YAML_MAPPING_NODE:
			k = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
			span("mapping", p, 'p', pairs, k, map_style[n->data.mapping.style]);
			pairs += k;
			break;
		default:
			printf("{0}");
			break;
		}
		printf("}, ");
		mark(stdout, &n->start_mark);
		printf(", ");
		mark(stdout, &n->end_mark);
		printf("},\n");
	}
	printf("};\n");
}

int main(int argc, char **argv)
{
	const char *array;
	size_t *ndocs, hdrlen;
	char *hdrs = NULL;
	FILE *hdr;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: embed-yaml ARRAY FILE... > out.c\n");
		return 2;
	}
	array = argv[1];
	ndocs = calloc((size_t)argc, sizeof(*ndocs));
	if (!ndocs)
		return 1;
	printf("/* Generated by scripts/embed-yaml -- do not edit. */\n");
	printf("#include <yaml.h>\n#include \"rules/rules.h\"\n");
	for (i = 2; i < argc; i++) {
		unsigned char *buf;
		size_t len, nd = 0, k;
		yaml_parser_t parser;
		char pre[64];

		if (read_all(argv[i], &buf, &len) < 0) {
			fprintf(stderr, "embed-yaml: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		printf("static const char %s_%d[] = {", array, i - 2);
		for (k = 0; k < len; k++)
			printf("%s%d,", k % 32 ? "" : "\n\t", buf[k]);
		printf("0};\n");
		if (!yaml_parser_initialize(&parser)) {
			fprintf(stderr, "embed-yaml: out of memory\n");
			return 1;
		}
		yaml_parser_set_input_string(&parser, buf, len);
		hdr = open_memstream(&hdrs, &hdrlen);
		if (!hdr) {
			fprintf(stderr, "embed-yaml: out of memory\n");
			return 1;
		}
		for (;;) {
			yaml_document_t d;
			size_t nn;

			if (!yaml_parser_load(&parser, &d)) {
				fprintf(stderr, "embed-yaml: %s:%zu:%zu: %s\n", argv[i],
					parser.problem_mark.line + 1,
					parser.problem_mark.column + 1,
					parser.problem ? parser.problem : "YAML error");
				return 1;
			}
			if (!yaml_document_get_root_node(&d)) {
				yaml_document_delete(&d);
				break;
			}
			if (d.version_directive || d.tag_directives.start != d.tag_directives.end) {
				fprintf(stderr,
					"embed-yaml: %s: %%YAML/%%TAG directives not supported\n",
					argv[i]);
				return 1;
			}
			snprintf(pre, sizeof(pre), "%s_%d_%zu", array, i - 2, nd);
			emit_doc(pre, &d);
			nn = (size_t)(d.nodes.top - d.nodes.start);
			fprintf(hdr, "\t{{%s_n, %s_n + %zu, %s_n + %zu}, 0, {0, 0}, %d, %d, ", pre,
				pre, nn, pre, nn, d.start_implicit, d.end_implicit);
			mark(hdr, &d.start_mark);
			fprintf(hdr, ", ");
			mark(hdr, &d.end_mark);
			fprintf(hdr, "},\n");
			yaml_document_delete(&d);
			nd++;
		}
		yaml_parser_delete(&parser);
		fclose(hdr);
		/* a file without documents still gets an array (C has no empty ones): count 0 */
		printf("static yaml_document_t %s_%d_docs[] = {\n%s%s};\n", array, i - 2, hdrs,
		       nd ? "" : "\t{{0, 0, 0}, 0, {0, 0}, 0, 0, {0, 0, 0}, {0, 0, 0}},\n");
		ndocs[i] = nd;
		free(hdrs);
		hdrs = NULL;
		free(buf);
	}
	printf("const struct rules_builtin %s[] = {\n", array);
	for (i = 2; i < argc; i++) {
		char *a = strdup(argv[i]), *b = strdup(argv[i]);

		if (!a || !b)
			return 1;
		printf("\t{\"%s/%s\", %s_%d, sizeof(%s_%d) - 1, %s_%d_docs, ", basename(dirname(a)),
		       basename(b), array, i - 2, array, i - 2, array, i - 2);
		printf("%zu},\n", ndocs[i]);
		free(a);
		free(b);
	}
	printf("\t{0, 0, 0, 0, 0},\n};\n");
	printf("const size_t %s_count = %d;\n", array, argc - 2);
	return 0;
}
