/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/toml: the strict TOML reader and the go-toml-style writer. */
#include "harness.h"

#include <errno.h>
#include <math.h>

#include "log/log.h"
#include "strbuf/strbuf.h"
#include "toml/toml.h"

static struct toml_value *parse_ok(const char *text)
{
	struct toml_value *root = NULL;
	struct log_err err = {0};
	int r = toml_parse(text, strlen(text), "t.toml", &root, &err);

	if (r != 0)
		fprintf(stderr, "  unexpected error %d: %s\n", r, err.msg);
	return root;
}

/* Parse text, expect -EINVAL and exactly msg. */
static int parse_err(const char *text, size_t len, const char *msg)
{
	struct toml_value *root = NULL;
	struct log_err err = {0};
	int r = toml_parse(text, len, "t.toml", &root, &err);

	if (r != -EINVAL || root != NULL || strcmp(err.msg, msg) != 0) {
		fprintf(stderr, "  input %s\n  got %d \"%s\"\n  want \"%s\"\n", text, r, err.msg,
			msg);
		toml_free(root);
		return 0;
	}
	return 1;
}
#define CHECK_ERR(text, msg) CHECK(parse_err(text, strlen(text), msg))

TEST(spegel_file)
{
	const char *text = "server = 'https://registry-1.docker.io'\n"
			   "\n"
			   "[host.'http://10.0.0.5:30020']\n"
			   "capabilities = ['pull', 'resolve']\n"
			   "dial_timeout = '200ms'\n"
			   "[host.'http://10.0.0.5:30020'.header]\n"
			   "Authorization = 'Basic aGVsbG86d29ybGQ='";
	struct toml_value *root = parse_ok(text);
	const struct toml_value *host, *h, *caps, *hdr;

	REQUIRE(root);
	CHECK_STR(toml_get(root, "server")->str, "https://registry-1.docker.io");
	host = toml_get(root, "host");
	REQUIRE(host && host->type == TOML_TABLE);
	CHECK_INT(host->origin, TOML_IMPLICIT);
	CHECK_INT(host->n, 1);
	CHECK_STR(host->keys[0], "http://10.0.0.5:30020");
	h = host->items[0];
	CHECK_INT(h->origin, TOML_HEADER);
	CHECK_INT(h->line, 3);
	CHECK_INT(h->col, 1);
	caps = toml_get(h, "capabilities");
	REQUIRE(caps && caps->type == TOML_ARRAY && caps->n == 2);
	CHECK_STR(caps->items[1]->str, "resolve");
	CHECK_INT(caps->line, 4);
	CHECK_INT(caps->col, 16);
	CHECK_INT(caps->items[1]->col, 25);
	CHECK_INT(h->key_line[0], 4);
	CHECK_INT(h->key_col[1], 1);
	hdr = toml_get(h, "header");
	REQUIRE(hdr && hdr->type == TOML_TABLE);
	CHECK_STR(toml_get(hdr, "Authorization")->str, "Basic aGVsbG86d29ybGQ=");
	CHECK(toml_get(root, "nope") == NULL);
	CHECK(toml_get(caps, "x") == NULL);
	toml_free(root);
}

TEST(scalars)
{
	const char *text = "a = 1_000\n"
			   "b = -17\n"
			   "c = 0xdead_BEEF\n"
			   "d = 0o17\n"
			   "e = 0b101\n"
			   "f = 3.25\n"
			   "g = -1e-3\n"
			   "h = 6.02E+23\n"
			   "i = inf\n"
			   "j = -inf\n"
			   "k = nan\n"
			   "l = true\n"
			   "m = false\n"
			   "n = 1979-05-27T07:32:00Z\n"
			   "o = 1979-05-27 07:32:00.999+01:00\n"
			   "p = 07:32:00\n"
			   "q = 2024-02-29\n"
			   "r = +9223372036854775807\n"
			   "s = -9223372036854775808\n";
	struct toml_value *root = parse_ok(text);

	REQUIRE(root);
	CHECK_INT(toml_get(root, "a")->i, 1000);
	CHECK_INT(toml_get(root, "b")->i, -17);
	CHECK_INT(toml_get(root, "c")->i, 0xdeadbeefLL);
	CHECK_INT(toml_get(root, "d")->i, 15);
	CHECK_INT(toml_get(root, "e")->i, 5);
	CHECK(toml_get(root, "f")->f == 3.25);
	CHECK(toml_get(root, "g")->f == -1e-3);
	CHECK(toml_get(root, "h")->type == TOML_FLOAT);
	CHECK(isinf(toml_get(root, "i")->f) && toml_get(root, "i")->f > 0);
	CHECK(isinf(toml_get(root, "j")->f) && toml_get(root, "j")->f < 0);
	CHECK(isnan(toml_get(root, "k")->f));
	CHECK(toml_get(root, "l")->b == true);
	CHECK(toml_get(root, "m")->type == TOML_BOOL && !toml_get(root, "m")->b);
	CHECK_INT(toml_get(root, "n")->type, TOML_DATETIME);
	CHECK_STR(toml_get(root, "o")->str, "1979-05-27 07:32:00.999+01:00");
	CHECK_INT(toml_get(root, "p")->type, TOML_DATETIME);
	CHECK_INT(toml_get(root, "q")->type, TOML_DATETIME);
	CHECK_INT(toml_get(root, "r")->i, 9223372036854775807LL);
	CHECK(toml_get(root, "s")->i == (-9223372036854775807LL - 1));
	toml_free(root);
}

TEST(strings)
{
	const char *text = "a = \"tab\\there \\\"q\\\" \\u00e9 \\U0001F600\"\n"
			   "b = 'C:\\path\\n"
			   "o\\escape'\n"
			   "c = \"\"\"\n"
			   "line1\n"
			   "  line2 \\\n"
			   "    joined\"\"\"\n"
			   "d = '''\n"
			   "raw\\n"
			   " ''two'' quotes'''\n"
			   "e = \"\"\"five\"\"\"\"\"\n"
			   "f = \"nul\\u0000in\"\n"
			   "\"quoted key\" = 1\n"
			   "'' = 2\n";
	struct toml_value *root = parse_ok(text);

	REQUIRE(root);
	CHECK_STR(toml_get(root, "a")->str, "tab\there \"q\" \xc3\xa9 \xf0\x9f\x98\x80");
	CHECK_STR(toml_get(root, "b")->str, "C:\\path\\no\\escape");
	CHECK_STR(toml_get(root, "c")->str, "line1\n  line2 joined");
	CHECK_STR(toml_get(root, "d")->str, "raw\\n ''two'' quotes");
	CHECK_STR(toml_get(root, "e")->str, "five\"\"");
	CHECK_INT(toml_get(root, "f")->len, 6);
	CHECK_INT(toml_get(root, "quoted key")->i, 1);
	CHECK_INT(toml_get(root, "")->i, 2);
	toml_free(root);
}

TEST(tables_and_arrays)
{
	const char *text = "\xef\xbb\xbf# comment\r\n"
			   "x = [ 1, 'two', [3], {a = 1}, ]  # trailing comma ok\r\n"
			   "y = [\n"
			   "  'a', # c\n"
			   "  'b'\n"
			   "]\n"
			   "fruit.apple.color = 'red'\n"
			   "fruit.apple.size = 3\n"
			   "[fruit.apple.texture]\n"
			   "smooth = true\n"
			   "[[srv]]\n"
			   "name = 'a'\n"
			   "[[srv]]\n"
			   "name = 'b'\n"
			   "[srv.sub]\n"
			   "k = 1\n"
			   "[ a . \"b\" . 'c' ]\n"
			   "v = { p.q = 1, r = 'x' }\n"
			   "[a]\n"
			   "w = 1\n";
	struct toml_value *root = parse_ok(text);
	const struct toml_value *x, *srv, *abc;

	REQUIRE(root);
	x = toml_get(root, "x");
	REQUIRE(x && x->n == 4);
	CHECK_INT(x->items[2]->type, TOML_ARRAY);
	CHECK_INT(x->items[3]->origin, TOML_INLINE);
	CHECK_INT(x->line, 2);
	CHECK_INT(toml_get(root, "y")->n, 2);
	CHECK(toml_get(toml_get(toml_get(toml_get(root, "fruit"), "apple"), "texture"), "smooth"));
	srv = toml_get(root, "srv");
	REQUIRE(srv && srv->type == TOML_ARRAY && srv->n == 2);
	CHECK_STR(toml_get(srv->items[1], "name")->str, "b");
	CHECK_INT(toml_get(toml_get(srv->items[1], "sub"), "k")->i, 1);
	abc = toml_get(toml_get(toml_get(root, "a"), "b"), "c");
	REQUIRE(abc);
	CHECK_INT(toml_get(toml_get(toml_get(abc, "v"), "p"), "q")->i, 1);
	CHECK_INT(toml_get(toml_get(root, "a"), "w")->i, 1);
	toml_free(root);
}

TEST(errors_syntax)
{
	CHECK_ERR("[host.'http://x'\ncapabilities = ['pull']",
		  "t.toml:1:17: unclosed table header");
	CHECK_ERR("a = 'x", "t.toml:1:5: unclosed string");
	CHECK_ERR("a = \"x\ny\"", "t.toml:1:5: unclosed string");
	CHECK_ERR("a = [1, 2", "t.toml:1:5: unclosed array");
	CHECK_ERR("a = [1 2]", "t.toml:1:8: expected ',' or ']' in array, found '2'");
	CHECK_ERR("a = {b = 1", "t.toml:1:5: unclosed inline table");
	CHECK_ERR("a = {b = 1,}", "t.toml:1:12: trailing comma in inline table");
	CHECK_ERR("a = {b = 1\n}", "t.toml:1:5: unclosed inline table");
	CHECK_ERR("a =", "t.toml:1:4: expected a value");
	CHECK_ERR("a = # c", "t.toml:1:5: expected a value");
	CHECK_ERR("a", "t.toml:1:2: expected '=' after key 'a'");
	CHECK_ERR("a ['x']", "t.toml:1:3: expected '=' after key 'a', found '['");
	CHECK_ERR("a = 1 b = 2", "t.toml:1:7: expected the end of the line, found 'b'");
	CHECK_ERR("ca!p = 1", "t.toml:1:3: expected '=' after key 'ca', found '!'");
	CHECK_ERR("= 1", "t.toml:1:1: invalid character '=' in key");
	CHECK_ERR("a = \"\\q\"", "t.toml:1:6: invalid escape sequence '\\q'");
	CHECK_ERR("a = \"\\u12\"", "t.toml:1:6: \\u needs 4 hex digits");
	CHECK_ERR("a = \"\\uD800\"", "t.toml:1:6: \\uD800 is not a Unicode scalar value");
	CHECK_ERR("a = \"\\U00110000\"", "t.toml:1:6: \\U00110000 is not a Unicode scalar value");
	CHECK_ERR("a = 'x\x01'", "t.toml:1:7: control character 0x01 in string");
	CHECK_ERR("# a\x01\n", "t.toml:1:4: control character 0x01 in comment");
	CHECK_ERR("a = 1\rb = 2", "t.toml:1:6: carriage return not followed by a newline");
	CHECK_ERR("a = '''x", "t.toml:1:5: unclosed string");
	CHECK_ERR("'''k''' = 1", "t.toml:1:1: multi-line string not allowed here");
	CHECK(parse_err("a = 'x\xff'", 9, "t.toml:1:7: invalid UTF-8"));
	CHECK(parse_err("a = 'x\xc0\x80'", 10, "t.toml:1:7: invalid UTF-8"));
	CHECK(parse_err("a = 'x\xed\xa0\x80'", 11, "t.toml:1:7: invalid UTF-8"));
	CHECK(parse_err("a = '\0'", 7, "t.toml:1:6: control character 0x00 in string"));
}

TEST(errors_numbers)
{
	CHECK_ERR("a = 012", "t.toml:1:5: leading zeros are not allowed in '012'");
	CHECK_ERR("a = 99999999999999999999",
		  "t.toml:1:5: integer '99999999999999999999' out of range");
	CHECK_ERR("a = -9223372036854775809",
		  "t.toml:1:5: integer '-9223372036854775809' out of range");
	CHECK_ERR("a = 0x8000000000000000",
		  "t.toml:1:5: integer '0x8000000000000000' out of range");
	CHECK_ERR("a = 1__0", "t.toml:1:5: invalid value '1__0'");
	CHECK_ERR("a = 1_", "t.toml:1:5: invalid value '1_'");
	CHECK_ERR("a = 1.", "t.toml:1:5: invalid value '1.'");
	CHECK_ERR("a = .5", "t.toml:1:5: invalid value '.5'");
	CHECK_ERR("a = 1e", "t.toml:1:5: invalid value '1e'");
	CHECK_ERR("a = -0x1", "t.toml:1:5: a sign is not allowed on hex, octal or binary numbers");
	CHECK_ERR("a = 0o8", "t.toml:1:5: invalid value '0o8'");
	CHECK_ERR("a = 1e999", "t.toml:1:5: float '1e999' out of range");
	CHECK_ERR("a = yes", "t.toml:1:5: invalid value 'yes'");
	CHECK_ERR("a = True", "t.toml:1:5: invalid value 'True'");
	CHECK_ERR("a = 2023-02-29", "t.toml:1:5: invalid value '2023-02-29'");
	CHECK_ERR("a = 2023-13-01", "t.toml:1:5: invalid value '2023-13-01'");
	CHECK_ERR("a = 24:00:00", "t.toml:1:5: invalid value '24:00:00'");
	CHECK_ERR("a = 1979-05-27T07:32:00+1:00",
		  "t.toml:1:5: invalid value '1979-05-27T07:32:00+1:00'");
	CHECK_ERR("a = x", "t.toml:1:5: invalid value 'x'");
	CHECK_ERR("a = !", "t.toml:1:5: invalid value starting with '!'");
}

TEST(errors_semantic)
{
	CHECK_ERR("[h]\ncapabilities = ['pull']\ncapabilities = ['pull']",
		  "t.toml:3:1: key 'capabilities' defined twice (first at line 2)");
	CHECK_ERR(
	    "[host.'http://x']\n[host.'http://x']",
	    "t.toml:2:1: table [host.'http://x'] defined twice (first by a header at line 1)");
	CHECK_ERR("a = 1\n[a]", "t.toml:2:1: table [a] defined twice (first as a value at line 1)");
	CHECK_ERR("a.b = 1\n[a]",
		  "t.toml:2:1: table [a] defined twice (first by dotted keys at line 1)");
	CHECK_ERR("[a.b]\n[a]\nb.c = 1",
		  "t.toml:3:1: key 'b' was already defined as a table at line 1");
	CHECK_ERR("a = {b = 1}\na.c = 2",
		  "t.toml:2:1: key 'a' was already defined as a table at line 1");
	CHECK_ERR("a = {b = 1}\n[a.c]",
		  "t.toml:2:2: key 'a' was already defined as a table at line 1");
	CHECK_ERR("[h]\nx = {A = 'b'}\n[h.x]",
		  "t.toml:3:1: table [h.x] defined twice (first inline at line 2)");
	CHECK_ERR("a = [1]\n[[a]]",
		  "t.toml:2:3: key 'a' was already defined as an array at line 1");
	CHECK_ERR("[[a]]\n[a]", "t.toml:2:1: table [a] defined twice (first as a value at line 1)");
	CHECK_ERR("a.b = 1\na.b.c = 2",
		  "t.toml:2:3: key 'b' was already defined as a value at line 1");
	CHECK_ERR("a = {x = 1, x = 2}", "t.toml:1:13: key 'x' defined twice (first at line 1)");
}

TEST(depth_limit)
{
	char buf[300];
	int i;

	strcpy(buf, "a = ");
	for (i = 0; i < 70; i++)
		strcat(buf, "[");
	CHECK(parse_err(buf, strlen(buf), "t.toml:1:69: nested deeper than 64 levels"));
}

TEST(write_go_toml_style)
{
	const char *text =
	    "[host.\"https://test-1.registry\"]\n"
	    "  capabilities = [\"pull\", \"resolve\", \"push\"]\n"
	    "  ca = [\"/etc/certs/test-1-ca.pem\", \"/etc/certs/special.pem\"]\n"
	    "  client = [[\"/etc/certs/client.cert\", \"/etc/certs/client.key\"],[\"/etc/certs/client.pem\", \"\"]]\n"
	    "  skip_verify = false\n"
	    "  [host.\"https://test-1.registry\".header]\n"
	    "    x-custom-2 = [\"it's\", \"v\"]\n"
	    "    \"Key With Space\" = 'a\\b'\n";
	const char *want =
	    "[host.'https://test-1.registry']\n"
	    "ca = ['/etc/certs/test-1-ca.pem', '/etc/certs/special.pem']\n"
	    "capabilities = ['pull', 'resolve', 'push']\n"
	    "client = [['/etc/certs/client.cert', '/etc/certs/client.key'], ['/etc/certs/client.pem', '']]\n"
	    "skip_verify = false\n"
	    "\n"
	    "[host.'https://test-1.registry'.header]\n"
	    "'Key With Space' = 'a\\b'\n"
	    "x-custom-2 = [\"it's\", 'v']\n";
	struct toml_value *root = parse_ok(text);
	struct strbuf sb = STRBUF_INIT(1 << 16);
	const struct toml_value *host;

	REQUIRE(root);
	host = toml_get(root, "host");
	REQUIRE(host);
	CHECK_INT(toml_write_table(&sb, "host.'https://test-1.registry'", host->items[0]), 0);
	CHECK_STR(sb.buf, want);
	sb_reset(&sb);
	CHECK_INT(toml_write_key(&sb, "plain_key-1"), 0);
	CHECK_INT(toml_write_key(&sb, ""), 0);
	CHECK_INT(toml_write_key(&sb, "a'b"), 0);
	CHECK_STR(sb.buf, "plain_key-1''\"a'b\"");
	sb_free(&sb);
	toml_free(root);
}

TEST(type_names)
{
	CHECK_STR(toml_type_name(TOML_STRING), "string");
	CHECK_STR(toml_type_name(TOML_TABLE), "table");
	CHECK_STR(toml_type_name(TOML_BOOL), "boolean");
}
