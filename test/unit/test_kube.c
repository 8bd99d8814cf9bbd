/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/kube: kubeconfig, in-cluster config, URLs, base64, the streaming parser. */
#include <errno.h>
#include <sys/stat.h>
#include <yajl/yajl_parse.h>

#include "harness.h"
#include "kube/kube.h"
#include "kube_rec.h"

static const char *write_tmp(const char *dir, const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	fputs(text, f);
	fclose(f);
	return path;
}

#define KC_HEAD                                                                                    \
	"apiVersion: v1\nkind: Config\ncurrent-context: prod\n"                                    \
	"contexts:\n- name: other\n  context: {cluster: c2, user: u2}\n"                           \
	"- name: prod\n  context:\n    cluster: main\n    user: admin\n    namespace: apps\n"

TEST(kubeconfig_files_relative_to_its_directory)
{
	const char *dir = harness_tmpdir();
	struct kube_config cfg;
	struct log_err err = {0};
	const char *p =
	    write_tmp(dir, "kc",
		      KC_HEAD "clusters:\n- name: main\n  cluster:\n"
			      "    server: https://10.0.0.1:6443/\n"
			      "    certificate-authority: certs/ca.crt\n"
			      "users:\n- name: admin\n  user:\n    tokenFile: /run/tok\n"
			      "    client-certificate: c.crt\n    client-key: /abs/c.key\n");
	char want[600];

	REQUIRE_INT(kube_config_load(&cfg, p, NULL, &err), 0);
	CHECK_STR(cfg.server, "https://10.0.0.1:6443");
	snprintf(want, sizeof(want), "%s/certs/ca.crt", dir);
	CHECK_STR(cfg.ca_file, want);
	CHECK_STR(cfg.token_file, "/run/tok");
	CHECK(cfg.token == NULL);
	snprintf(want, sizeof(want), "%s/c.crt", dir);
	CHECK_STR(cfg.cert_file, want);
	CHECK_STR(cfg.key_file, "/abs/c.key");
	CHECK_STR(cfg.namespace, "apps");
	CHECK_INT(cfg.insecure, 0);
	kube_config_free(&cfg);
}

TEST(kubeconfig_inline_data_token_insecure_and_context)
{
	const char *dir = harness_tmpdir();
	struct kube_config cfg;
	struct log_err err = {0};
	/* "LS0tLS1CRUdJTg==" is base64 of "-----BEGIN" */
	const char *p = write_tmp(dir, "kc",
				  KC_HEAD "clusters:\n- name: c2\n  cluster:\n"
					  "    server: https://b.example:443\n"
					  "    insecure-skip-tls-verify: true\n"
					  "- name: main\n  cluster:\n    server: https://a\n"
					  "    certificate-authority-data: LS0tLS1CRUdJTg==\n"
					  "users:\n- name: admin\n  user: {}\n"
					  "- name: u2\n  user:\n    token: abc.def\n"
					  "    client-certificate-data: LS0tLS1CRUdJTg==\n"
					  "    client-key-data: LS0tLS1CRUdJTg==\n");

	REQUIRE_INT(kube_config_load(&cfg, p, NULL, &err), 0);
	CHECK_STR(cfg.server, "https://a");
	REQUIRE(cfg.ca_pem != NULL);
	CHECK_INT(cfg.ca_pem_len, 10);
	CHECK(memcmp(cfg.ca_pem, "-----BEGIN", 10) == 0);
	kube_config_free(&cfg);

	REQUIRE_INT(kube_config_load(&cfg, p, "other", &err), 0);
	CHECK_STR(cfg.server, "https://b.example:443");
	CHECK_INT(cfg.insecure, 1);
	CHECK_STR(cfg.token, "abc.def");
	CHECK_INT(cfg.cert_pem_len, 10);
	CHECK_INT(cfg.key_pem_len, 10);
	CHECK(cfg.namespace == NULL);
	kube_config_free(&cfg);
}

TEST(kubeconfig_errors_name_file_and_field)
{
	const char *dir = harness_tmpdir();
	struct kube_config cfg;
	struct log_err err = {0};
	char path[512], want[700];
	const char *p;

	p = write_tmp(dir, "nocluster", KC_HEAD "clusters: []\n");
	snprintf(path, sizeof(path), "%s", p);
	CHECK_INT(kube_config_load(&cfg, path, NULL, &err), KUBE_ECONFIG);
	snprintf(want, sizeof(want), "%s: clusters: no cluster 'main' for context 'prod'", path);
	CHECK_STR(err.msg, want);
	kube_config_free(&cfg);

	p = write_tmp(dir, "noserver", KC_HEAD "clusters:\n- name: main\n  cluster: {}\n");
	snprintf(path, sizeof(path), "%s", p);
	CHECK_INT(kube_config_load(&cfg, path, NULL, &err), KUBE_ECONFIG);
	snprintf(want, sizeof(want), "%s: clusters[main].cluster.server: missing", path);
	CHECK_STR(err.msg, want);
	kube_config_free(&cfg);

	p = write_tmp(dir, "badb64",
		      KC_HEAD "clusters:\n- name: main\n  cluster:\n"
			      "    server: https://a\n    certificate-authority-data: '@@'\n");
	snprintf(path, sizeof(path), "%s", p);
	CHECK_INT(kube_config_load(&cfg, path, NULL, &err), KUBE_ECONFIG);
	snprintf(want, sizeof(want), "%s: certificate-authority-data: not valid base64", path);
	CHECK_STR(err.msg, want);
	kube_config_free(&cfg);

	p = write_tmp(dir, "badyaml", "a: [\n");
	snprintf(path, sizeof(path), "%s", p);
	CHECK_INT(kube_config_load(&cfg, path, NULL, &err), KUBE_ECONFIG);
	CHECK(strstr(err.msg, "badyaml:2:1: ") != NULL);
	kube_config_free(&cfg);

	CHECK_INT(kube_config_load(&cfg, "/nonexistent/kc", "x", &err), -ENOENT);
	CHECK_STR(err.msg, "/nonexistent/kc: No such file or directory");
	kube_config_free(&cfg);
}

TEST(in_cluster_config)
{
	const char *dir = harness_tmpdir();
	struct kube_config cfg;
	struct log_err err = {0};
	char want[600];

	write_tmp(dir, "token", "tok\n");
	write_tmp(dir, "ca.crt", "pem\n");
	write_tmp(dir, "namespace", "kube-system\n");
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	REQUIRE_INT(kube_config_in_cluster(&cfg, dir, &err), 0);
	CHECK_STR(cfg.server, "https://10.96.0.1:443");
	snprintf(want, sizeof(want), "%s/token", dir);
	CHECK_STR(cfg.token_file, want);
	snprintf(want, sizeof(want), "%s/ca.crt", dir);
	CHECK_STR(cfg.ca_file, want);
	CHECK_STR(cfg.namespace, "kube-system");
	kube_config_free(&cfg);
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	REQUIRE_INT(kube_config_in_cluster(&cfg, dir, &err), 0);
	CHECK_STR(cfg.server, "https://[fd00::1]:443");
	kube_config_free(&cfg);
	unsetenv("KUBERNETES_SERVICE_HOST");
	CHECK_INT(kube_config_in_cluster(&cfg, dir, &err), KUBE_ECONFIG);
	kube_config_free(&cfg);
}

TEST(urls)
{
	struct strbuf sb = STRBUF_INIT(4096);
	struct kube_query q = {0};

	CHECK_INT(kube_url(&sb, "https://h:6443", &kube_configmaps, NULL, NULL, NULL), 0);
	CHECK_STR(sb.buf, "https://h:6443/api/v1/configmaps");
	sb_reset(&sb);
	q.label_selector = "app in (a,b),!x";
	q.field_selector = "type!=helm.sh/release.v1";
	q.limit = 500;
	q.cont = "eyJ2Ijoi+/=";
	kube_url(&sb, "", &kube_secrets, "ns-1", NULL, &q);
	CHECK_STR(
	    sb.buf,
	    "/api/v1/namespaces/ns-1/secrets?labelSelector=app%20in%20%28a%2Cb%29%2C%21x"
	    "&fieldSelector=type%21%3Dhelm.sh%2Frelease.v1&limit=500&continue=eyJ2Ijoi%2B%2F%3D");
	sb_reset(&sb);
	memset(&q, 0, sizeof(q));
	q.watch = 1;
	q.bookmarks = 1;
	q.resource_version = "12345";
	q.timeout_seconds = 300;
	kube_url(&sb, "", &kube_deployments, "", NULL, &q);
	CHECK_STR(sb.buf, "/apis/apps/v1/deployments?watch=1&allowWatchBookmarks=true"
			  "&resourceVersion=12345&timeoutSeconds=300");
	sb_reset(&sb);
	memset(&q, 0, sizeof(q));
	q.field_manager = "nodeprobe-reload";
	kube_url(&sb, "", &kube_statefulsets, "a", "b/../c", &q);
	CHECK_STR(
	    sb.buf,
	    "/apis/apps/v1/namespaces/a/statefulsets/b%2F..%2Fc?fieldManager=nodeprobe-reload");
	sb_free(&sb);
}

/* Feed text one byte at a time: chunk boundaries anywhere must not matter. */
static int feed_bytes(struct kube_stream *st, const char *text)
{
	size_t i;
	int r;

	for (i = 0; text[i]; i++) {
		r = kube_stream_feed(st, text + i, 1, NULL);
		if (r < 0)
			return r;
	}
	return kube_stream_finish(st, NULL);
}

static const char list_json[] =
    "{\"kind\":\"SecretList\",\"metadata\":{\"resourceVersion\":\"900\",\"continue\":\"tok\"},"
    "\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"resourceVersion\":\"7\","
    "\"annotations\":{\"reloader.stakater.com/match\":\"true\"},\"managedFields\":[{\"x\":1}]},"
    "\"data\":{\"k\":\"dg==\",\"l\":\"\\u0041\"},\"type\":\"Opaque\"},"
    "{\"metadata\":{\"name\":\"b\"},\"data\":{}}]}";

TEST(stream_list_flat)
{
	struct rec r = {STRBUF_INIT(4096)};
	struct kube_stream *st = kube_stream_new(KUBE_STREAM_LIST, KUBE_ITEM_FLAT, &rops, &r);

	REQUIRE(st != NULL);
	CHECK_INT(feed_bytes(st, list_json), 0);
	CHECK_STR(r.log.buf, "<metadata.name=a;metadata.namespace=n;metadata.resourceVersion=7;"
			     "metadata.annotations.reloader.stakater.com/match=true;"
			     "data.k=dg==;data.l=A;type=Opaque;>LIST\n"
			     "<metadata.name=b;>LIST\n");
	CHECK_STR(kube_stream_continue(st), "tok");
	CHECK_STR(kube_stream_rv(st), "900");
	kube_stream_free(st);
	sb_free(&r.log);
}

TEST(stream_watch_json)
{
	struct rec r = {STRBUF_INIT(4096)};
	struct kube_stream *st = kube_stream_new(KUBE_STREAM_WATCH, KUBE_ITEM_JSON, &rops, &r);

	REQUIRE(st != NULL);
	CHECK_INT(
	    feed_bytes(
		st,
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\","
		"\"resourceVersion\":\"11\"},\"spec\":{\"l\":[1,2.5,true,null,{}]}}}\n"
		"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"15\"}}}\n"
		"{\"object\":{\"code\":410},\"type\":\"ERROR\"}\n"),
	    0);
	CHECK_STR(r.log.buf, ">ADDED{\"metadata\":{\"name\":\"x\",\"resourceVersion\":\"11\"},"
			     "\"spec\":{\"l\":[1,2.5,true,null,{}]}}\n"
			     ">BOOKMARK{\"metadata\":{\"resourceVersion\":\"15\"}}\n"
			     ">ERROR{\"code\":410}\n");
	CHECK_STR(kube_stream_rv(st), "15");
	kube_stream_free(st);
	sb_free(&r.log);
}

TEST(stream_rejects_bad_json)
{
	struct rec r = {STRBUF_INIT(4096)};
	struct kube_stream *st = kube_stream_new(KUBE_STREAM_LIST, KUBE_ITEM_FLAT, &rops, &r);
	struct log_err err = {0};

	REQUIRE(st != NULL);
	CHECK_INT(kube_stream_feed(st, "{\"items\":[{]}", 13, &err), KUBE_EJSON);
	CHECK(strncmp(err.msg, "bad JSON from the API server: ", 30) == 0);
	kube_stream_free(st);
	st = kube_stream_new(KUBE_STREAM_LIST, KUBE_ITEM_FLAT, &rops, &r);
	CHECK_INT(kube_stream_feed(st, "{\"items\":[", 10, &err), 0);
	CHECK_INT(kube_stream_finish(st, &err), KUBE_EJSON);
	kube_stream_free(st);
	sb_free(&r.log);
}

/* Feed chunk until the parser fails or more than limit bytes went in; returns the result. */
static int feed_until_error(struct kube_stream *st, const char *chunk, size_t n, size_t limit,
			    struct log_err *err)
{
	size_t fed = 0;
	int rc = 0;

	while (rc == 0 && fed <= limit + n) {
		rc = kube_stream_feed(st, chunk, n, err);
		fed += n;
	}
	return rc;
}

TEST(stream_caps_one_value)
{
	struct rec r = {STRBUF_INIT(4096)};
	struct kube_stream *st = kube_stream_new(KUBE_STREAM_WATCH, KUBE_ITEM_FLAT, &rops, &r);
	struct log_err err = {0};
	static char chunk[64 * 1024];
	REQUIRE(st != NULL);
	memset(chunk, 'A', sizeof(chunk));
	const char *head = "{\"type\":\"ADDED\",\"object\":{\"data\":{\"k\":\"";

	CHECK_INT(kube_stream_feed(st, head, strlen(head), &err), 0);
	CHECK_INT(feed_until_error(st, chunk, sizeof(chunk), KUBE_VALUE_MAX, &err), KUBE_EJSON);
	CHECK_STR(err.msg, "a JSON value from the API server exceeds 4718592 bytes");
	kube_stream_free(st);
	sb_free(&r.log);
}

TEST(stream_caps_one_json_item)
{
	struct rec r = {STRBUF_INIT(4096)};
	struct kube_stream *st = kube_stream_new(KUBE_STREAM_LIST, KUBE_ITEM_JSON, &rops, &r);
	struct log_err err = {0};
	static char chunk[64 * 1024];
	const char *head = "{\"items\":[{\"a\":[";
	size_t i;

	REQUIRE(st != NULL);
	/* many small values: no single value is large, the item is */
	for (i = 0; i + 2 <= sizeof(chunk); i += 2)
		memcpy(chunk + i, "1,", 2);
	CHECK_INT(kube_stream_feed(st, head, strlen(head), &err), 0);
	CHECK_INT(feed_until_error(st, chunk, sizeof(chunk), KUBE_ITEM_MAX, &err), KUBE_EJSON);
	CHECK_STR(err.msg, "an object from the API server exceeds 8388608 bytes");
	kube_stream_free(st);
	sb_free(&r.log);
}

/*
 * Feed a LIST or WATCH body whose middle item has one string of vlen bytes (escapes and
 * multibyte characters at the cut too) between two small ones, in chunks of step bytes.
 */
static int feed_huge(struct kube_stream *st, int watch, size_t vlen, size_t step,
		     struct log_err *err)
{
	static const char *const parts[2][4] = {
	    {"{\"items\":[{\"metadata\":{\"name\":\"a\"},\"data\":{\"k\":\"1\"}},"
	     "{\"metadata\":{\"name\":\"big\",\"namespace\":\"ns\"},\"data\":{\"k\":\"",
	     "\",\"l\":\"2\"},\"spec\":[1,{\"x\":true}]},{\"metadata\":{\"name\":\"c\"}}]}"},
	    {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"},\"data\":{\"k\":\"1\"}}}\n"
	     "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"big\",\"namespace\":"
	     "\"ns\"},\"data\":{\"k\":\"",
	     "\",\"l\":\"2\"},\"spec\":[1,{\"x\":true}]}}\n"
	     "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"c\"}}}\n"}};
	char *body;
	size_t hl = strlen(parts[watch][0]), tl = strlen(parts[watch][1]), n = hl + vlen + tl, i;
	int r = 0;

	body = malloc(n);
	if (!body)
		return -ENOMEM;
	memcpy(body, parts[watch][0], hl);
	/* vlen is a multiple of 14: "é" (2 bytes), "\u00e9" and "\"" among plain letters */
	for (i = 0; i < vlen; i++)
		body[hl + i] = "ab\xc3\xa9\\u00e9\\\"cd"[i % 14];
	memcpy(body + hl + vlen, parts[watch][1], tl);
	for (i = 0; i < n && r == 0; i += step)
		r = kube_stream_feed(st, body + i, n - i < step ? n - i : step, err);
	free(body);
	return r ? r : kube_stream_finish(st, err);
}

/* With ops->oversize, an item with a string over KUBE_VALUE_MAX is skipped, named, not fatal. */
TEST(stream_skips_one_oversize_item)
{
	/* the sizes cut across escapes and characters */
	static const size_t steps[] = {65536, 1 << 22, 4099};
	/* [watch][mode]: the items around it arrive whole, nothing of it after the cut */
	static const char *const want[2][2] = {
	    {"<metadata.name=a;data.k=1;>LIST\n<metadata.name=big;metadata.namespace=ns;!LIST "
	     "ns/big (a value over 4718592 bytes)\n<metadata.name=c;>LIST\n",
	     ">LIST{\"data\":{\"k\":\"1\"},\"metadata\":{\"name\":\"a\"}}\n!LIST ns/big (a value "
	     "over 4718592 bytes)\n>LIST{\"metadata\":{\"name\":\"c\"}}\n"},
	    {"<metadata.name=a;data.k=1;>ADDED\n<metadata.name=big;metadata.namespace=ns;!MODIFIED "
	     "ns/big (a value over 4718592 bytes)\n<metadata.name=c;>DELETED\n",
	     ">ADDED{\"data\":{\"k\":\"1\"},\"metadata\":{\"name\":\"a\"}}\n!MODIFIED ns/big (a "
	     "value over 4718592 bytes)\n>DELETED{\"metadata\":{\"name\":\"c\"}}\n"}};
	int mode, watch, k;

	for (k = 0; k < 3; k++)
		for (watch = 0; watch < 2; watch++)
			for (mode = 0; mode < 2; mode++) {
				struct rec r = {STRBUF_INIT(1 << 16)};
				struct kube_stream *st = kube_stream_new(
				    watch ? KUBE_STREAM_WATCH : KUBE_STREAM_LIST,
				    mode ? KUBE_ITEM_JSON : KUBE_ITEM_FLAT, &sops, &r);
				struct log_err err = {0};

				REQUIRE(st != NULL);
				CHECK_INT(feed_huge(st, watch, KUBE_VALUE_MAX + 14 * 1000, steps[k],
						    &err),
					  0);
				CHECK_STR(r.log.buf, want[watch][mode]);
				kube_stream_free(st);
				sb_free(&r.log);
			}
}

/*
 * What yajl's lexer reads and copies, as yajl 2.1's src/yajl_lex.c yajl_lex_lex does: a call
 * reads its text, and before it again what it holds of a token that the previous call's text
 * ended inside (kept in lexer->buf, read from bufOff 0); at its "lexed:" label it copies to
 * lexer->buf a token the text's end cut, and the first token of each call (bufInUse is left set
 * by the empty token at the end of the last). The binary links with -Wl,--wrap=yajl_parse
 * (Makefile), so each call comes here first.
 */
static struct {
	int on;
	size_t read;	 /* bytes lexed, the ones read again included */
	size_t copied;	 /* bytes copied to lexer->buf */
	size_t held;	 /* bytes of the token open at the end of the text so far */
	int in_str, esc; /* inside a string; after its backslash */
} lex;

yajl_status __real_yajl_parse(yajl_handle h, const unsigned char *text, size_t len);
yajl_status __wrap_yajl_parse(yajl_handle h, const unsigned char *text, size_t len);

/* A token of cur bytes in this call ends; the first of the call is copied. */
static void lex_token(int *first, size_t *cur)
{
	if (*first)
		lex.copied += *cur;
	*first = 0;
	*cur = 0;
	lex.held = 0;
}

yajl_status __wrap_yajl_parse(yajl_handle h, const unsigned char *text, size_t len)
{
	size_t i, cur = 0; /* bytes of the open token in this call */
	int first = 1;

	if (lex.on)
		lex.read += lex.held + len;
	for (i = 0; lex.on && i < len; i++) {
		unsigned char c = text[i];

		if (lex.in_str) {
			cur++;
			lex.held++;
			if (lex.esc)
				lex.esc = 0;
			else if (c == '\\')
				lex.esc = 1;
			else if (c == '"')
				lex.in_str = 0;
			if (!lex.in_str)
				lex_token(&first, &cur);
		} else if (c == '"') {
			lex.in_str = 1;
			lex.held = cur = 1;
		} else if (c && strchr("{}[],: \t\r\n", c)) {
			if (lex.held) /* a number or literal ends */
				lex_token(&first, &cur);
			cur = !strchr(" \t\r\n", c);
			if (cur)
				lex_token(&first, &cur);
		} else {
			cur++;
			lex.held++;
		}
	}
	if (lex.on && lex.held)
		lex.copied += cur;
	return __real_yajl_parse(h, text, len);
}

/*
 * A long value split over many feeds is lexed once, not again from its start on each (yajl's
 * way: 4.7 MB in 4099-byte feeds was 2.7 GB read, 55 s), nor copied to yajl's buffer besides the
 * copy held: counted, not timed. Over the cut and skipped, under it and kept, a long number.
 */
TEST(stream_lexes_a_long_value_once)
{
	static const size_t vlen[] = {KUBE_VALUE_MAX + 14 * 1000, 14 * 200000};
	const char *head = "{\"items\":[{\"metadata\":{\"name\":\"n\"},\"n\":";
	size_t hl = strlen(head), nlen = 1 << 20, n = hl + nlen + 3, i;
	struct rec rn = {STRBUF_INIT(1 << 16)};
	struct log_err err = {0};
	struct kube_stream *st;
	char *body;
	int k, r;

	for (k = 0; k < 2; k++) {
		struct rec rc = {STRBUF_INIT(1 << 16)};

		st = kube_stream_new(KUBE_STREAM_LIST, KUBE_ITEM_FLAT, &sops, &rc);
		REQUIRE(st != NULL);
		memset(&lex, 0, sizeof(lex));
		lex.on = 1;
		CHECK_INT(feed_huge(st, 0, vlen[k], 4099, &err), 0);
		lex.on = 0;
		printf("# a %zu-byte string in 4099-byte feeds: %zu bytes lexed, %zu copied\n",
		       vlen[k], lex.read, lex.copied);
		CHECK(lex.read < 4 * vlen[k]);
		CHECK(lex.copied < 64 * 1024);
		CHECK((strstr(rc.log.buf, "!LIST ns/big") != NULL) == (k == 0));
		kube_stream_free(st);
		sb_free(&rc.log);
	}
	body = malloc(n);
	REQUIRE(body != NULL);
	memcpy(body, head, hl);
	memset(body + hl, '7', nlen);
	memcpy(body + hl + nlen, "}]}", 3);
	st = kube_stream_new(KUBE_STREAM_LIST, KUBE_ITEM_JSON, &rops, &rn);
	REQUIRE(st != NULL);
	memset(&lex, 0, sizeof(lex));
	lex.on = 1;
	for (i = 0, r = 0; i < n && r == 0; i += 4099)
		r = kube_stream_feed(st, body + i, n - i < 4099 ? n - i : 4099, &err);
	CHECK_INT(r, 0);
	CHECK_INT(kube_stream_finish(st, &err), 0);
	lex.on = 0;
	printf("# a %zu-byte number in 4099-byte feeds: %zu bytes lexed, %zu copied\n", nlen,
	       lex.read, lex.copied);
	CHECK(lex.read < 4 * n);
	CHECK(lex.copied < 64 * 1024);
	CHECK(strstr(rn.log.buf, ">LIST{") != NULL);
	kube_stream_free(st);
	sb_free(&rn.log);
	free(body);
}

/* A value just under the cut is taken whole, escapes and all; no oversize call. */
TEST(stream_value_under_the_limit_is_whole)
{
	struct rec r = {STRBUF_INIT(1 << 16)};
	struct kube_stream *st = kube_stream_new(KUBE_STREAM_LIST, KUBE_ITEM_JSON, &sops, &r);
	struct log_err err = {0};

	REQUIRE(st != NULL);
	CHECK_INT(feed_huge(st, 0, 14 * 1000, 4096, &err), 0);
	CHECK(strstr(r.log.buf, "!") == NULL);
	CHECK(strstr(r.log.buf, "\"l\":\"2\"") != NULL);
	kube_stream_free(st);
	sb_free(&r.log);
}

/* A JSON-mode item over KUBE_ITEM_MAX of small values, and a key over 1 KiB: skipped too. */
TEST(stream_skips_big_json_item_and_long_key)
{
	struct rec r = {STRBUF_INIT(1 << 16)};
	struct kube_stream *st = kube_stream_new(KUBE_STREAM_LIST, KUBE_ITEM_JSON, &sops, &r);
	struct log_err err = {0};
	static char chunk[64 * 1024];
	const char *head = "{\"items\":[{\"metadata\":{\"namespace\":\"n\",\"name\":\"w\"},\"a\":[";
	const char *tail = "1]},{\"metadata\":{\"name\":\"x\"}}]}";
	size_t i, fed = 0;
	char key[1100 + 64];

	REQUIRE(st != NULL);
	for (i = 0; i + 2 <= sizeof(chunk); i += 2)
		memcpy(chunk + i, "1,", 2);
	CHECK_INT(kube_stream_feed(st, head, strlen(head), &err), 0);
	while (fed <= KUBE_ITEM_MAX + sizeof(chunk)) {
		CHECK_INT(kube_stream_feed(st, chunk, sizeof(chunk), &err), 0);
		fed += sizeof(chunk);
	}
	CHECK_INT(kube_stream_feed(st, tail, strlen(tail), &err), 0);
	CHECK_INT(kube_stream_finish(st, &err), 0);
	CHECK_STR(r.log.buf,
		  "!LIST n/w (over 8388608 bytes in all)\n>LIST{\"metadata\":{\"name\":\"x\"}}\n");
	kube_stream_free(st);
	sb_reset(&r.log);
	st = kube_stream_new(KUBE_STREAM_LIST, KUBE_ITEM_FLAT, &sops, &r);
	REQUIRE(st != NULL);
	memset(key, 'k', sizeof(key));
	i = strlen("{\"items\":[{\"metadata\":{\"name\":\"q\"},\"data\":{\"");
	memcpy(key, "{\"items\":[{\"metadata\":{\"name\":\"q\"},\"data\":{\"", i);
	memcpy(key + i + 1100, "\":\"v\"}}]}", 10);
	CHECK_INT(kube_stream_feed(st, key, strlen(key), &err), 0);
	CHECK_INT(kube_stream_finish(st, &err), 0);
	CHECK_STR(r.log.buf, "<metadata.name=q;!LIST /q (a key over 1024 bytes)\n");
	kube_stream_free(st);
	sb_free(&r.log);
}

/* $KUBECONFIG's merge (clientcmd): the first file to set a key wins, paths relative to it. */
TEST(kubeconfig_list_merged_first_wins)
{
	const char *dir = harness_tmpdir();
	struct kube_config cfg;
	struct log_err err = {0};
	char a[512], b[512], want[600];
	const char *paths[2] = {a, b};

	snprintf(want, sizeof(want), "%s/sub", dir);
	REQUIRE(mkdir(want, 0755) == 0);

	snprintf(a, sizeof(a), "%s",
		 write_tmp(dir, "a.yaml",
			   "current-context: prod\n"
			   "contexts:\n- name: prod\n  context: {cluster: main, "
			   "user: admin, namespace: first}\n"
			   "users:\n- name: admin\n  user: {token: from-a}\n"));
	snprintf(b, sizeof(b), "%s",
		 write_tmp(dir, "sub/b.yaml",
			   "current-context: other\n"
			   "contexts:\n- name: prod\n  context: {cluster: c2, user: "
			   "u2, namespace: second}\n"
			   "clusters:\n- name: main\n  cluster: {server: "
			   "\"https://b:6443\", certificate-authority: ca.crt}\n"
			   "users:\n- name: admin\n  user: {token: from-b}\n"));
	REQUIRE_INT(kube_config_load_list(&cfg, paths, 2, NULL, &err), 0);
	CHECK_STR(cfg.server, "https://b:6443");
	CHECK_STR(cfg.token, "from-a");
	CHECK_STR(cfg.namespace, "first");
	snprintf(want, sizeof(want), "%s/sub/ca.crt",
		 dir); /* relative to b.yaml, which defined it */
	CHECK_STR(cfg.ca_file, want);
	kube_config_free(&cfg);
	/* reversed: the other file's current-context, which names no context anywhere */
	paths[0] = b;
	paths[1] = a;
	CHECK_INT(kube_config_load_list(&cfg, paths, 2, NULL, &err), KUBE_ECONFIG);
	snprintf(want, sizeof(want), "%s: contexts: no context named 'other'", b);
	CHECK_STR(err.msg, want);
	kube_config_free(&cfg);
	/* --context picks across files; the error names the file that defined the entry */
	CHECK_INT(kube_config_load_list(&cfg, paths, 2, "prod", &err), KUBE_ECONFIG);
	snprintf(want, sizeof(want), "%s: clusters: no cluster 'c2' for context 'prod'", b);
	CHECK_STR(err.msg, want);
	kube_config_free(&cfg);
}

/*
 * client-go refuses a cluster that sets both a CA and insecure-skip-tls-verify
 * (k8s.io/client-go/transport TLSConfigFor: "specifying a root certificates file
 * with the insecure flag is not allowed"); we must not connect unverified instead.
 */
TEST(kubeconfig_insecure_with_ca_refused_as_client_go)
{
	const char *dir = harness_tmpdir();
	struct kube_config cfg;
	struct log_err err = {0};
	char want[700];
	const char *p = write_tmp(dir, "kc-insecure-ca",
				  KC_HEAD "clusters:\n- name: main\n  cluster:\n"
					  "    server: https://a\n"
					  "    insecure-skip-tls-verify: true\n"
					  "    certificate-authority-data: LS0tLS1CRUdJTg==\n"
					  "users:\n- name: admin\n  user: {}\n");

	CHECK_INT(kube_config_load(&cfg, p, NULL, &err), KUBE_ECONFIG);
	snprintf(want, sizeof(want),
		 "%s: clusters[main].cluster: insecure-skip-tls-verify with a "
		 "certificate-authority is not allowed (as client-go)",
		 p);
	CHECK_STR(err.msg, want);
	kube_config_free(&cfg);
}

static char warned[2048]; /* the warnings logged, one a line */

static void capture(void *data, enum log_level lvl, const char *msg)
{
	size_t n = strlen(warned);

	(void)data;
	(void)lvl;
	snprintf(warned + n, sizeof(warned) - n, "%s\n", msg);
}

/*
 * Issue 17 #10: a kubeconfig that is no regular file is named with what it is
 * (sb_read_file's "Invalid argument" said nothing); more files than the cap
 * name the cap; a token beside an exec plugin wins as in client-go, said by name.
 */
TEST(kubeconfig_inputs_named_with_the_limit)
{
	const char *dir = harness_tmpdir();
	const char *paths[KUBE_CONFIG_FILES_MAX + 1];
	struct kube_config cfg;
	struct log_err err = {0};
	char fifo[512], want[900];
	const char *p;
	int i;

	snprintf(fifo, sizeof(fifo), "%s/kc-fifo", dir);
	REQUIRE_INT(mkfifo(fifo, 0600), 0);
	CHECK_INT(kube_config_load(&cfg, fifo, NULL, &err), KUBE_ECONFIG);
	snprintf(want, sizeof(want),
		 "%s: is a FIFO: a kubeconfig must be a regular file (or a symbolic link to one)",
		 fifo);
	CHECK_STR(err.msg, want);
	kube_config_free(&cfg);
	CHECK_INT(kube_config_load(&cfg, dir, NULL, &err), KUBE_ECONFIG);
	CHECK(strstr(err.msg, ": is a directory: a kubeconfig must be a regular file") != NULL);
	kube_config_free(&cfg);

	for (i = 0; i <= KUBE_CONFIG_FILES_MAX; i++)
		paths[i] = fifo;
	CHECK_INT(kube_config_load_list(&cfg, paths, KUBE_CONFIG_FILES_MAX + 1, NULL, &err),
		  KUBE_ECONFIG);
	CHECK_STR(err.msg, "33 kubeconfig files, more than the limit of 32: merge them into "
			   "fewer (kubectl config view --flatten)");
	kube_config_free(&cfg);

	p = write_tmp(dir, "kc-exec-token",
		      KC_HEAD "clusters:\n- name: main\n  cluster:\n    server: https://a\n"
			      "users:\n- name: admin\n  user:\n    token: t0k\n    exec:\n"
			      "      apiVersion: client.authentication.k8s.io/v1\n"
			      "      command: aws\n");
	log_set_fn(capture, NULL, LOG_LVL_WARN);
	CHECK_INT(kube_config_load(&cfg, p, NULL, &err), 0);
	CHECK_STR(cfg.token, "t0k");
	snprintf(want, sizeof(want),
		 "%s: users[admin].user: both exec and token are set: token is used and the exec "
		 "plugin is not run (as client-go and kubectl decide); remove one to silence "
		 "this\n",
		 p);
	CHECK_STR(warned, want);
	kube_config_free(&cfg);
	/* a certificate given inline is named as written: client-certificate-data */
	p = write_tmp(dir, "kc-exec-cert",
		      KC_HEAD
		      "clusters:\n- name: main\n  cluster:\n    server: https://a\n"
		      "users:\n- name: admin\n  user:\n    client-certificate-data: Y2VydA==\n"
		      "    client-key-data: a2V5\n    exec:\n"
		      "      apiVersion: client.authentication.k8s.io/v1\n"
		      "      command: aws\n");
	warned[0] = '\0';
	CHECK_INT(kube_config_load(&cfg, p, NULL, &err), 0);
	snprintf(want, sizeof(want),
		 "%s: users[admin].user: both exec and client-certificate-data are set: "
		 "client-certificate-data is used and the exec plugin is not run (as client-go and "
		 "kubectl decide); remove one to silence this\n",
		 p);
	CHECK_STR(warned, want);
	kube_config_free(&cfg);
	log_set_fn(NULL, NULL, LOG_LVL_ERROR);
}

/*
 * A user whose credential comes from an exec plugin (EKS, GKE, kubelogin, Omni's
 * oidc-login) or an auth-provider: client-go runs it, we cannot. Say so by name
 * instead of sending requests without credentials (a bare 401 later).
 */
TEST(kubeconfig_exec_and_auth_provider_named)
{
	const char *dir = harness_tmpdir();
	struct kube_config cfg;
	struct log_err err = {0};
	char want[700];
	const char *p =
	    write_tmp(dir, "kc-exec",
		      KC_HEAD "clusters:\n- name: main\n  cluster:\n"
			      "    server: https://a\n"
			      "users:\n- name: admin\n  user:\n    exec:\n"
			      "      apiVersion: client.authentication.k8s.io/v1\n"
			      "      command: kubectl\n      args: [oidc-login, get-token]\n");

	CHECK_INT(kube_config_load(&cfg, p, NULL, &err), KUBE_ECONFIG);
	snprintf(want, sizeof(want),
		 "%s: users[admin].user.exec: credential plugins are not supported (use a "
		 "token, tokenFile or client certificate)",
		 p);
	CHECK_STR(err.msg, want);
	kube_config_free(&cfg);
	p = write_tmp(dir, "kc-authp",
		      KC_HEAD "clusters:\n- name: main\n  cluster:\n    server: https://a\n"
			      "users:\n- name: admin\n  user:\n    auth-provider: {name: oidc}\n");
	CHECK_INT(kube_config_load(&cfg, p, NULL, &err), KUBE_ECONFIG);
	snprintf(want, sizeof(want),
		 "%s: users[admin].user.auth-provider: credential plugins are not supported (use "
		 "a token, tokenFile or client certificate)",
		 p);
	CHECK_STR(err.msg, want);
	kube_config_free(&cfg);
}
