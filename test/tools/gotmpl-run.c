/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl-run: pkg/gotmpl over a file of cases, one result line each, for the Go differential. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gotmpl/gotmpl.h"
#include "gotmpl_json.h"

/*
 * Usage: gotmpl-run CASES.jsonl
 * Each input line is a JSON object {"name", "tmpl" | "tmplhex", "data"?, "set"?}: the
 * template (tmplhex: its bytes in hex, for sources that are not UTF-8), the data as
 * test/fixtures/gotmpl/README.md says, the set's name ("" as NFD's when absent). Each case
 * prints "NAME<TAB>ok<TAB>OUTPUT", "NAME<TAB>err<TAB>MESSAGE" or, for a bound of pkg/gotmpl
 * reached (steps, depth, memory, output size: nodeprobe's own limits, which Go does not
 * have), "NAME<TAB>limit<TAB>MESSAGE"; OUTPUT and MESSAGE escaped as test/gotmpl-oracle's
 * main.go escapes them (printable ASCII as is, '\' doubled, other bytes \xNN), so that the
 * two programs' lines compare byte for byte. Exit 0, or 2 on a bad input line.
 */

static void put_escaped(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\')
			fputs("\\\\", stdout);
		else if (c >= 0x20 && c < 0x7f)
			putchar(c);
		else
			printf("\\x%02x", c);
	}
}

static int unhex(const char *h, char **out, size_t *len)
{
	size_t n = strlen(h) / 2, i;
	char *b = malloc(n + 1);

	if (!b)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(h + 2 * i, "%2x", &v) != 1) {
			free(b);
			return -EINVAL;
		}
		b[i] = (char)v;
	}
	b[n] = 0;
	*out = b;
	*len = n;
	return 0;
}

static int run_case(json_t *c)
{
	const char *name = json_string_value(json_object_get(c, "name"));
	const char *set = json_string_value(json_object_get(c, "set"));
	json_t *tj = json_object_get(c, "tmpl"), *hj = json_object_get(c, "tmplhex");
	struct strbuf out = STRBUF_INIT(GOTMPL_OUT_MAX + 1);
	struct gotmpl_val *data = NULL;
	struct gotmpl_err err = {{0}};
	struct gotmpl *t = NULL;
	char *src = NULL;
	size_t len;
	int rc;

	if (!name || (!json_is_string(tj) && !json_is_string(hj)))
		return -EINVAL;
	if (json_is_string(tj)) {
		len = json_string_length(tj);
		src = malloc(len + 1);
		if (!src)
			return -ENOMEM;
		memcpy(src, json_string_value(tj), len + 1);
	} else if (unhex(json_string_value(hj), &src, &len) < 0) {
		return -EINVAL;
	}
	if (json_object_get(c, "data"))
		data = from_json(json_object_get(c, "data"));
	rc = gotmpl_parse(set ? set : "", src, len, &t, &err);
	if (rc == 0)
		rc = gotmpl_exec(t, data, &out, &err);
	printf("%s\t%s\t", name, rc == 0 ? "ok" : (rc == -EINVAL ? "err" : "limit"));
	if (rc == 0)
		put_escaped(out.buf, out.len);
	else
		put_escaped(err.msg, strlen(err.msg));
	putchar('\n');
	gotmpl_free(t);
	gotmpl_val_free(data);
	sb_free(&out);
	free(src);
	return 0;
}

int main(int argc, char **argv)
{
	FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	int rc = 0;

	if (!f) {
		fprintf(stderr, "usage: gotmpl-run CASES.jsonl\n");
		return 2;
	}
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		json_error_t e;
		json_t *c = json_loads(line, 0, &e);

		lineno++;
		rc = c ? run_case(c) : -EINVAL;
		if (rc < 0)
			fprintf(stderr, "gotmpl-run: %s:%zu: bad case (%s)\n", argv[1], lineno,
				c ? strerror(-rc) : e.text);
		json_decref(c);
	}
	free(line);
	fclose(f);
	return rc == 0 ? 0 : 2;
}
