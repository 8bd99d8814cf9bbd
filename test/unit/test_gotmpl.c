/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/gotmpl: Go's and Sprig's own test vectors (as data) and NFD's templates. */
#include <errno.h>
#include <stdint.h>

#include <jansson.h>

#include "../tools/gotmpl_json.h"
#include "gotmpl/gotmpl.h"
#include "harness.h"

/*
 * Run src over data: 0 and the output in out (static), or the error code and
 * the message in out.
 */
static int run(const char *src, const struct gotmpl_val *data, const char **out)
{
	static char buf[1 << 16];
	struct strbuf sb = STRBUF_INIT(1u << 21);
	struct gotmpl_err err;
	struct gotmpl *t;
	int rc = gotmpl_parse("t", src, strlen(src), &t, &err);

	if (rc == 0) {
		rc = gotmpl_exec(t, data, &sb, &err);
		gotmpl_free(t);
	}
	snprintf(buf, sizeof(buf), "%s", rc ? err.msg : sb.buf);
	sb_free(&sb);
	*out = buf;
	return rc;
}

/* One case of a fixture file; returns 1 when it holds (else prints why). */
static int run_case(const char *file, size_t idx, json_t *c)
{
	const char *name = json_string_value(json_object_get(c, "name"));
	const char *src = json_string_value(json_object_get(c, "tmpl"));
	json_t *want = json_object_get(c, "out"), *werr = json_object_get(c, "err");
	struct gotmpl_val *data = NULL;
	const char *got;
	int rc, ok;

	if (json_is_true(json_object_get(c, "parse_only"))) { /* Go's parse tests: it parses */
		struct gotmpl_err err;
		struct gotmpl *t;

		rc = gotmpl_parse("t", src, strlen(src), &t, &err);
		gotmpl_free(t);
		if (rc)
			fprintf(stderr, "  %s[%zu] %s: %s\n    got error: %s\n", file, idx,
				name ? name : "", src, err.msg);
		return rc == 0;
	}
	if (json_object_get(c, "data"))
		data = from_json(json_object_get(c, "data"));
	rc = run(src, data, &got);
	gotmpl_val_free(data);
	if (want)
		ok = rc == 0 && strcmp(got, json_string_value(want)) == 0;
	else
		ok = rc != 0 && strstr(got, json_string_value(werr)) != NULL;
	if (!ok)
		fprintf(stderr, "  %s[%zu] %s: %s\n    got %s: \"%s\"\n    want %s: \"%s\"\n", file,
			idx, name ? name : "", src, rc ? "error" : "output", got,
			want ? "output" : "error containing",
			want ? json_string_value(want) : json_string_value(werr));
	return ok;
}

/*
 * Under an emulator (NP_EMULATED: test/bats/cross.bash), a fixture's first derivePassword case
 * runs and the others are left out, counted: each is an scrypt over 32 MiB (N=32768, r=8, p=2, as
 * Sprig's Master Password algorithm), 0.1 s natively and 30 s for the lot under qemu-user, where
 * one is what tells the ARM build apart (the counter and length bytes, big-endian, and libcrypto
 * loaded); every case still runs natively.
 */
static int emulated_skip(json_t *c, int *scrypt_seen, size_t *left_out)
{
	const char *src = json_string_value(json_object_get(c, "tmpl"));

	if (!getenv("NP_EMULATED") || !src || !strstr(src, "derivePassword"))
		return 0;
	if (!*scrypt_seen) {
		*scrypt_seen = 1;
		return 0;
	}
	(*left_out)++;
	return 1;
}

/* Every case of test/fixtures/gotmpl/<file>; returns the count run. */
static size_t run_fixture(const char *file)
{
	json_error_t e;
	char path[256];
	json_t *all, *c;
	size_t i, failed = 0, left_out = 0;
	int scrypt_seen = 0;

	snprintf(path, sizeof(path), "gotmpl/%s", file);
	all = json_load_file(harness_fixture(path), 0, &e);
	if (!all) {
		HFAIL_("%s: %s (line %d)", file, e.text, e.line);
		return 0;
	}
	json_array_foreach(all, i, c)
	{
		if (emulated_skip(c, &scrypt_seen, &left_out))
			continue;
		if (!run_case(file, i, c))
			failed++;
	}
	CHECK_INT(failed, 0);
	i = json_array_size(all);
	json_decref(all);
	fprintf(stderr, "  %s: %zu cases, %zu failed", file, i, failed);
	if (left_out)
		fprintf(stderr, ", %zu more derivePassword cases left out under emulation",
			left_out);
	fputc('\n', stderr);
	return i;
}

static void check_out(const char *src, const struct gotmpl_val *data, const char *want)
{
	const char *got;
	int rc = run(src, data, &got);

	if (rc != 0 || strcmp(got, want) != 0)
		HFAIL_("%s: got %d \"%s\", want \"%s\"", src, rc, got, want);
}

static void check_err(const char *src, const struct gotmpl_val *data, int code, const char *want)
{
	const char *got;
	int rc = run(src, data, &got);

	if (rc != code || !strstr(got, want))
		HFAIL_("%s: got %d \"%s\", want %d with \"%s\"", src, rc, got, code, want);
}

TEST(go_exec_vectors)
{
	CHECK(run_fixture("go_exec.json") > 0);
}

TEST(smoke)
{
	check_out("hello {{ \"world\" }}", NULL, "hello world");
	check_out("{{ 1 }} {{ 1.5 }} {{ true }} {{ 'a' }}", NULL, "1 1.5 true 97");
}

TEST(missingkey_error_wording)
{
	struct gotmpl_val *d = gotmpl_val_map(0);

	REQUIRE(gotmpl_map_set(d, "a", gotmpl_val_str("x")) == 0);
	check_err(
	    "{{.missing}}", d, -EINVAL,
	    "template: t:1:2: executing \"t\" at <.missing>: map has no entry for key \"missing\"");
	check_out("{{ index . \"missing\" }}", d, "<no value>");
	gotmpl_val_free(d);
}

TEST(go_parse_vectors)
{
	CHECK(run_fixture("go_parse.json") > 0);
}

TEST(sprig_vectors)
{
	CHECK(run_fixture("sprig.json") > 0);
}

TEST(nfd_templates)
{
	CHECK(run_fixture("nfd.json") > 0);
}

/* Go 1.19 + Sprig 3.2.3's own outputs and errors (test/gotmpl-oracle), for where go is absent. */
TEST(go_oracle_vectors)
{
	CHECK(run_fixture("go_oracle.json") > 0);
}

TEST(source_cap_is_nfds)
{
	size_t n = GOTMPL_SRC_MAX + 1;
	char *src = malloc(n + 1);
	struct gotmpl_err err;
	struct gotmpl *t;

	REQUIRE(src);
	memset(src, 'x', n);
	src[n] = '\0';
	CHECK_INT(gotmpl_parse("t", src, n, &t, &err), -E2BIG);
	CHECK(strstr(err.msg, "template too large") != NULL);
	CHECK_INT(gotmpl_parse("t", src, n - 1, &t, &err), 0);
	gotmpl_free(t);
	free(src);
}

TEST(step_budget_stops_a_long_loop)
{
	check_err(
	    "{{ range until 1000 }}{{ range until 1000 }}{{ range until 10 }}x{{ end }}{{ end }}{{ end }}",
	    NULL, -ELOOP, "steps");
	/* a loop inside the budget runs */
	check_out("{{ range until 3 }}{{ . }}{{ end }}", NULL, "012");
}

TEST(output_cap)
{
	check_err("{{ range until 2000 }}{{ repeat 1000 \"x\" }}{{ end }}", NULL, -E2BIG,
		  "output longer than 1048576 bytes");
}

TEST(output_untouched_on_error)
{
	struct strbuf sb = STRBUF_INIT(1024);
	struct gotmpl_err err;
	struct gotmpl *t;
	const char *src = "before{{ fail \"stop\" }}after";

	REQUIRE(gotmpl_parse("t", src, strlen(src), &t, &err) == 0);
	REQUIRE(sb_add(&sb, "kept") == 0);
	CHECK_INT(gotmpl_exec(t, NULL, &sb, &err), -EINVAL);
	CHECK_STR(sb.buf, "kept");
	CHECK_STR(err.msg,
		  "template: t:1:9: executing \"t\" at <fail \"stop\">: error calling fail: stop");
	gotmpl_free(t);
	sb_free(&sb);
}

TEST(template_recursion_depth)
{
	check_err("{{ define \"r\" }}{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}", NULL,
		  -ELOOP, "exceeded maximum template depth (100)");
}

TEST(parse_nesting_depth)
{
	char src[4096] = "";
	int i;

	for (i = 0; i < 150; i++)
		strcat(src, "{{if 1}}");
	for (i = 0; i < 150; i++)
		strcat(src, "{{end}}");
	check_err(src, NULL, -ELOOP, "nested deeper than 100");
}

TEST(memory_budget)
{
	/* every step small, the values huge: the bytes made are charged to the step budget, which
	 * stops it before the arena's budget (64 MiB) would, and never the machine */
	check_err(
	    "{{ $s := repeat 1000000 \"x\" }}{{ range until 200 }}{{ $s = print $s \"y\" }}{{ end }}",
	    NULL, -ELOOP,
	    "error calling print: execution stopped: its work passed the step budget");
}

TEST(refused_are_named)
{
	check_err("{{ if false }}{{ now }}{{ end }}", NULL, -EINVAL, "function \"now\" refused");
	check_err("{{ uuidv4 }}", NULL, -EINVAL, "function \"uuidv4\" refused");
	check_err("{{ genPrivateKey \"rsa\" }}", NULL, -EINVAL, "\"genPrivateKey\" refused");
	check_err("{{ \"x\" | encryptAES \"k\" }}", NULL, -EINVAL, "\"encryptAES\" refused");
	check_err(
	    "{{ \"a\" | asLabelValue }}", NULL, -EINVAL,
	    "function \"asLabelValue\" not defined: not in NFD v0.19's template function map");
}

TEST(input_data_is_never_changed)
{
	struct gotmpl_val *d = gotmpl_val_map(0);

	REQUIRE(gotmpl_map_set(d, "m", gotmpl_val_map(0)) == 0);
	check_err("{{ $_ := set .m \"k\" \"v\" }}", d, -EINVAL,
		  "cannot change the template's input data");
	check_out("{{ $c := deepCopy .m }}{{ $_ := set $c \"k\" \"v\" }}{{ $c.k }}{{ len .m }}", d,
		  "v0");
	gotmpl_val_free(d);
}

TEST(value_api)
{
	struct gotmpl_val *l = gotmpl_val_list(1), *m = gotmpl_val_map(1);

	REQUIRE(l && m);
	CHECK_INT(gotmpl_list_push(l, gotmpl_val_int(1)), -EINVAL); /* []string takes strings */
	CHECK_INT(gotmpl_list_push(l, gotmpl_val_str("b")), 0);
	CHECK_INT(gotmpl_map_set(m, "k", gotmpl_val_bool(1)), -EINVAL);
	CHECK_INT(gotmpl_map_set(m, "k", gotmpl_val_str("v1")), 0);
	CHECK_INT(gotmpl_map_set(m, "k", gotmpl_val_str("v2")), 0); /* replaces, frees v1 */
	CHECK_INT(gotmpl_map_set(m, "a", gotmpl_val_strn("x\0y", 3)), 0);
	CHECK_INT(gotmpl_list_push(NULL, gotmpl_val_nil()), -EINVAL);
	CHECK_INT(gotmpl_val_kind(l), GOTMPL_LIST);
	CHECK_INT(gotmpl_val_kind(NULL), GOTMPL_NIL);
	check_out("{{ typeOf . }} {{ .k }} {{ len .a }} {{ index . \"zz\" | printf \"%q\" }}", m,
		  "map[string]string v2 3 \"\"");
	check_out("{{ typeOf . }} {{ . }}", l, "[]string [b]");
	gotmpl_val_free(l);
	gotmpl_val_free(m);
}

TEST(printf_verbs)
{
	check_out(
	    "{{ printf \"%5.2f|%-5d|%05d|%x|%X|%o|%b|%c|%q|%v|%t|%e|%g\" 3.14159 42 -42 255 255 8 5 65 \"hi\" 1.5 true 1234.5678 0.000012 }}",
	    NULL, " 3.14|42   |-0042|ff|FF|10|101|A|\"hi\"|1.5|true|1.234568e+03|1.2e-05");
	check_out("{{ printf \"%s %d\" 1 \"x\" }}", NULL, "%!s(int=1) %!d(string=x)");
	check_out("{{ printf \"%d %d\" 1 }}", NULL, "1 %!d(MISSING)");
	check_out("{{ printf \"%d\" 1 2 }}", NULL, "1%!(EXTRA int=2)");
	check_out("{{ printf \"%v %s\" (list 1 \"a\") (list \"b\" \"c\") }}", NULL, "[1 a] [b c]");
	check_out("{{ printf \"%x %X % x\" \"hi\" \"hi\" \"hi\" }}", NULL, "6869 6869 68 69");
	check_out("{{ printf \"%8.3s|%-6s|\" \"abcdef\" \"ab\" }}", NULL, "     abc|ab    |");
	check_out("{{ printf \"%+d %+.1f %T %T %%\" 5 2.25 (list) (dict) }}", NULL,
		  "+5 +2.2 []interface {} map[string]interface {} %");
	check_out("{{ 1e6 }} {{ 123456789.0 }} {{ 0.0001 }} {{ 1e-5 }} {{ 100.0 }}", NULL,
		  "1e+06 1.23456789e+08 0.0001 1e-05 100");
}

/* 90 nested ifs in a template calling itself 99 times: 8910 nested walks, past the C-stack bound.
 */
TEST(nesting_of_all_templates_together)
{
	struct strbuf src = STRBUF_INIT(1u << 16);
	int i;

	sb_add(&src, "{{ define \"r\" }}");
	for (i = 0; i < 90; i++)
		sb_add(&src, "{{ if 1 }}");
	sb_add(&src, "{{ if lt . 99 }}{{ template \"r\" add1 . | int }}{{ end }}");
	for (i = 0; i < 90; i++)
		sb_add(&src, "{{ end }}");
	sb_add(&src, "{{ end }}{{ template \"r\" 0 }}");
	check_err(src.buf, NULL, -ELOOP, "nested deeper than 1000");
	sb_free(&src);
}

/* The densest 64 KiB template (13107 actions) parses and runs: a list grows by doubling. */
TEST(largest_template_parses)
{
	struct strbuf src = STRBUF_INIT(GOTMPL_SRC_MAX);
	struct strbuf out = STRBUF_INIT(1u << 20);
	struct gotmpl_err err;
	struct gotmpl *t;

	while (src.len + 5 <= GOTMPL_SRC_MAX)
		REQUIRE(sb_add(&src, "{{1}}") == 0);
	REQUIRE_INT(gotmpl_parse("t", src.buf, src.len, &t, &err), 0);
	CHECK_INT(gotmpl_exec(t, NULL, &out, &err), 0);
	CHECK_INT(out.len, src.len / 5);
	gotmpl_free(t);
	sb_reset(&src);
	REQUIRE(sb_add(&src, "{{ list") == 0);
	while (src.len + 2 + 9 <= GOTMPL_SRC_MAX) /* room for " 1" and " | len }}" */
		REQUIRE(sb_add(&src, " 1") == 0);
	REQUIRE(sb_add(&src, " | len }}") == 0);
	REQUIRE_INT(gotmpl_parse("t", src.buf, src.len, &t, &err), 0);
	sb_reset(&out);
	CHECK_INT(gotmpl_exec(t, NULL, &out, &err), 0);
	CHECK_STR(out.buf, "32760");
	gotmpl_free(t);
	sb_free(&src);
	sb_free(&out);
}

/* Work that allocates nothing (sorted inserts, list searches) counts against the step budget. */
TEST(work_budget_bounds_quadratic_functions)
{
	/* 20000 lookups in a 20000-element list: 4e8 compares, never an allocation past the list */
	check_err(
	    "{{ $l := until 20000 }}{{ range $i := $l }}{{ if has -1 $l }}x{{ end }}{{ end }}",
	    NULL, -ELOOP, "error calling has: execution stopped: its work passed the step budget");
	/* 60000 inserts at the front of a growing dict */
	check_err(
	    "{{ $d := dict }}{{ range $i := until 60000 }}{{ $_ := set $d (printf \"%09d\" (sub 99999 $i)) 1 }}{{ end }}",
	    NULL, -ELOOP, "error calling set: execution stopped");
	check_out(
	    "{{ $l := until 100 }}{{ range $l }}{{ if has . $l }}{{ end }}{{ end }}{{ uniq (concat $l $l) | len }}",
	    NULL, "100");
}

/*
 * Issue 27: small templates that share structure (a list of itself, twice, thirty deep), hold
 * themselves (a dict set into itself), or loop a function over a big string. Each stops at a
 * bound with its own error, or gives Go's answer (deepEqual walks pairs once, as Go's visited
 * map does); none crashes, hangs or says "out of memory". test/bats/nodeprobe-rules.bats runs
 * the same corpus through nodeprobe and bounds its time and memory.
 */
TEST(hostile_vectors)
{
	CHECK(run_fixture("hostile.json") > 0);
}

/*
 * Issue 27 review: 2800 {{define}}s in NFD's 64 KiB. Each grew the table of templates by one in
 * the parse arena, so they took 32 MiB and the parse said "out of memory" (nodeprobe: the whole
 * run, exit 1); and each {{template}} reads every name, so one in a loop ran 1.5 s uncharged.
 */
static char *many_defines(const char *tail)
{
	size_t cap = 64u << 10, n = 0;
	char *s = malloc(cap);

	for (int i = 0; s && i < 2800; i++)
		n += (size_t)snprintf(s + n, cap - n, "{{define \"%x\"}}{{end}}", i);
	if (s)
		snprintf(s + n, cap - n, "%s", tail);
	return s;
}

TEST(many_defines_parse_and_their_lookup_is_charged)
{
	char *ok = many_defines("ok"),
	     *loop = many_defines("{{range until 1000000}}{{template \"0\"}}{{end}}ok");

	REQUIRE(ok && loop);
	check_out(ok, NULL, "ok");
	check_err(loop, NULL, -ELOOP,
		  "at <{{template \"0\"}}>: execution stopped: its work passed the step budget");
	free(ok);
	free(loop);
}
