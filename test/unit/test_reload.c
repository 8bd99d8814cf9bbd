/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/reload: Reloader's hash, env names, annotation resolution, uses, patch bodies.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "reload/reload.h"
#include "reload/reload_act.h"
#include "reload/reload_internal.h"

static json_t *J(const char *s)
{
	json_error_t e;
	json_t *j = json_loads(s, 0, &e);

	if (!j)
		fprintf(stderr, "bad test JSON: %s: %s\n", e.text, s);
	return j;
}

static void alt_hex(const unsigned char *alt, char *out)
{
	int i;

	for (i = 0; i < RELOAD_HASH_ALT; i++)
		sprintf(out + 2 * i, "%02x", alt[i]);
}

/* want: SHA-1 hex; want512: SHA-512/256 hex (printf %s DATA | openssl dgst -sha512-256). */
static void check_hash2(const char *obj, enum reload_type t, const char *want, const char *want512)
{
	char hex[RELOAD_HASH_HEX], ahex[2 * RELOAD_HASH_ALT + 1];
	unsigned char alt[RELOAD_HASH_ALT];
	json_t *j = J(obj);

	CHECK_INT(reload_hash_object(j, t, hex, alt), 0);
	CHECK_STR(hex, want);
	alt_hex(alt, ahex);
	CHECK_STR(ahex, want512);
	CHECK(reload_hash_current(want512, hex, alt));
	CHECK(reload_hash_current(want, hex, alt));
	json_decref(j);
}

static void check_hash(const char *obj, enum reload_type t, const char *want)
{
	char hex[RELOAD_HASH_HEX];
	json_t *j = J(obj);

	CHECK_INT(reload_hash_object(j, t, hex, NULL), 0);
	CHECK_STR(hex, want);
	json_decref(j);
}

/* Reloader's vectors (internal/pkg/crypto/sha_test.go, util_test.go, reloader.md §3.1). */
TEST(hash_reloader_vectors)
{
	check_hash("{}", RELOAD_CONFIGMAP, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	check_hash("{\"data\":{\"b\":\"2\",\"a\":\"1\"}}", RELOAD_CONFIGMAP,
		   "f83e99e324ba68ccc373a58ef1eb42f8ab88646a");
	check_hash("{\"data\":{\"test\":\"test\"}}", RELOAD_CONFIGMAP,
		   "b3cefbcce711f8574b0e66c41fc1dcf06eb5b6db");
	/* util_test.go's three ConfigMaps: data only, both, binaryData only (base64 hashed). */
	check_hash("{\"data\":{\"test\":\"test\"},\"binaryData\":{\"bintest\":\"dGVzdA==\"}}",
		   RELOAD_CONFIGMAP, "0d58150de76a895b24f4ca213f590766160c4349");
	check_hash("{\"binaryData\":{\"bintest\":\"dGVzdA==\"}}", RELOAD_CONFIGMAP,
		   "f327fede9d5cda17ab984fabce9eddeee1611a84");
	/* Secret values are hashed decoded: {test: "test"} as base64. */
	check_hash("{\"data\":{\"test\":\"dGVzdA==\"},\"type\":\"Opaque\"}", RELOAD_SECRET,
		   "b3cefbcce711f8574b0e66c41fc1dcf06eb5b6db");
	/* A Secret's binaryData does not exist; metadata is never hashed. */
	check_hash("{\"metadata\":{\"name\":\"x\",\"labels\":{\"a\":\"b\"}},\"data\":{\"test\":"
		   "\"dGVzdA==\"}}",
		   RELOAD_SECRET, "b3cefbcce711f8574b0e66c41fc1dcf06eb5b6db");
}

/*
 * Reloader PR #1073 (in no release checked) records SHA-512/256 of the same string: both digests
 * come from one pass. Vectors: `printf %s 'a=1;b=2' | openssl dgst -sha512-256`.
 */
TEST(hash_sha512_256_vectors)
{
	check_hash2("{}", RELOAD_CONFIGMAP, "da39a3ee5e6b4b0d3255bfef95601890afd80709",
		    "c672b8d1ef56ed28ab87c3622c5114069bdd3ad7b8f9737498d0c01ecef0967a");
	check_hash2("{\"data\":{\"b\":\"2\",\"a\":\"1\"}}", RELOAD_CONFIGMAP,
		    "f83e99e324ba68ccc373a58ef1eb42f8ab88646a",
		    "7db861b5f6b5272224f7cc5e03e8f31d6a2b6fb79ae21b996cdae72457dc886d");
	check_hash2("{\"data\":{\"test\":\"test\"},\"binaryData\":{\"bintest\":\"dGVzdA==\"}}",
		    RELOAD_CONFIGMAP, "0d58150de76a895b24f4ca213f590766160c4349",
		    "a2090e9b1f28c89bbacfa18a9cb7bcbf6a1f91005c1b4adacf0e34b92f7b0a5b");
	check_hash2("{\"binaryData\":{\"bintest\":\"dGVzdA==\"}}", RELOAD_CONFIGMAP,
		    "f327fede9d5cda17ab984fabce9eddeee1611a84",
		    "db7305e435b496c45be1fe8378f889df0ed6e61f6de09e3bea32f8c07414997b");
	check_hash2("{\"data\":{\"test\":\"dGVzdA==\"}}", RELOAD_SECRET,
		    "b3cefbcce711f8574b0e66c41fc1dcf06eb5b6db",
		    "42444f71dad85c450e773a3265284692b240aa22b00d0f8513a5d23814a191cc");
	/* the slow path (entries out of order) gives both too: "a.b=2;a=1" */
	check_hash2("{\"data\":{\"a\":\"1\",\"a.b\":\"2\"}}", RELOAD_CONFIGMAP,
		    "499daa6d70eb53ada0bb7346397120ffefcda5c3",
		    "549f0000c42ebce43c6e01c54daa9757ce01a273d0762f7d8a37768aafb399b9");
}

TEST(hash_current_by_record_length)
{
	struct reload_hasher h;
	char hex[RELOAD_HASH_HEX], ehex[RELOAD_HASH_HEX];
	unsigned char alt[RELOAD_HASH_ALT], ealt[RELOAD_HASH_ALT];
	const char *s1 = "f83e99e324ba68ccc373a58ef1eb42f8ab88646a",
		   *s512 = "7db861b5f6b5272224f7cc5e03e8f31d6a2b6fb79ae21b996cdae72457dc886d";

	/* the streaming hasher: a=1;b=2 */
	REQUIRE_INT(reload_hasher_init(&h), 0);
	reload_hasher_add(&h, "a", 1, "1", 1);
	reload_hasher_add(&h, "b", 1, "2", 1);
	REQUIRE_INT(reload_hasher_final(&h, hex, alt), 0);
	CHECK(reload_hash_current(s1, hex, alt));
	CHECK(reload_hash_current(s512, hex, alt));
	/* stale records of either length, and SHA-512/256 without the digest */
	CHECK(!reload_hash_current("b3cefbcce711f8574b0e66c41fc1dcf06eb5b6db", hex, alt));
	CHECK(!reload_hash_current(
	    "42444f71dad85c450e773a3265284692b240aa22b00d0f8513a5d23814a191cc", hex, alt));
	CHECK(!reload_hash_current(s512, hex, NULL));
	/* neither a prefix nor upper case nor another length matches */
	CHECK(!reload_hash_current("f83e99e324ba68ccc373a58ef1eb42f8ab88646", hex, alt));
	CHECK(!reload_hash_current("F83E99E324BA68CCC373A58EF1EB42F8AB88646A", hex, alt));
	CHECK(!reload_hash_current(
	    "7db861b5f6b5272224f7cc5e03e8f31d6a2b6fb79ae21b996cdae72457dc886d00", hex, alt));
	CHECK(!reload_hash_current(NULL, hex, alt));
	/* "" (what the first #1073 version wrote for empty data): current only when empty */
	CHECK(!reload_hash_current("", hex, alt));
	REQUIRE_INT(reload_hasher_init(&h), 0);
	REQUIRE_INT(reload_hasher_final(&h, ehex, ealt), 0);
	CHECK_STR(ehex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	CHECK(reload_hash_current("", ehex, ealt));
	CHECK(reload_hash_current(
	    "c672b8d1ef56ed28ab87c3622c5114069bdd3ad7b8f9737498d0c01ecef0967a", ehex, ealt));
	CHECK(!reload_hash_current(s512, ehex, ealt));
}

TEST(hash_secret_not_base64)
{
	char hex[RELOAD_HASH_HEX];
	json_t *j = J("{\"data\":{\"a\":\"not base64!\"}}");

	CHECK_INT(reload_hash_object(j, RELOAD_SECRET, hex, NULL), -EINVAL);
	json_decref(j);
}

TEST(hasher_streams_sorted_entries)
{
	struct reload_hasher h;
	char hex[RELOAD_HASH_HEX];

	REQUIRE_INT(reload_hasher_init(&h), 0);
	reload_hasher_add(&h, "a", 1, "1", 1);
	reload_hasher_add(&h, "b", 1, "2", 1);
	CHECK_INT(reload_hasher_final(&h, hex, NULL), 0);
	CHECK_STR(hex, "f83e99e324ba68ccc373a58ef1eb42f8ab88646a");

	REQUIRE_INT(reload_hasher_init(&h), 0);
	reload_hasher_add_b64(&h, "test", 4, "dGVzdA==", 8);
	CHECK_INT(reload_hasher_final(&h, hex, NULL), 0);
	CHECK_STR(hex, "b3cefbcce711f8574b0e66c41fc1dcf06eb5b6db");
}

TEST(hasher_detects_order_it_cannot_stream)
{
	struct reload_hasher h;
	char hex[RELOAD_HASH_HEX];
	json_t *j;

	/* Keys out of order. */
	REQUIRE_INT(reload_hasher_init(&h), 0);
	reload_hasher_add(&h, "b", 1, "2", 1);
	reload_hasher_add(&h, "a", 1, "1", 1);
	CHECK_INT(reload_hasher_final(&h, hex, NULL), -EAGAIN);
	/* Keys sorted ("a" < "a.b") but entries not ("a.b=" < "a="): Reloader sorts entries. */
	REQUIRE_INT(reload_hasher_init(&h), 0);
	reload_hasher_add(&h, "a", 1, "1", 1);
	reload_hasher_add(&h, "a.b", 3, "2", 1);
	CHECK_INT(reload_hasher_final(&h, hex, NULL), -EAGAIN);
	/* The slow path gets it right: sha1("a.b=2;a=1"). */
	j = J("{\"data\":{\"a\":\"1\",\"a.b\":\"2\"}}");
	CHECK_INT(reload_hash_object(j, RELOAD_CONFIGMAP, hex, NULL), 0);
	CHECK_STR(hex, "499daa6d70eb53ada0bb7346397120ffefcda5c3");
	json_decref(j);
	/* A binaryData key sorting before a data key: also the slow path. */
	REQUIRE_INT(reload_hasher_init(&h), 0);
	reload_hasher_add(&h, "z", 1, "1", 1);
	reload_hasher_add(&h, "a", 1, "AA==", 4);
	CHECK_INT(reload_hasher_final(&h, hex, NULL), -EAGAIN);
	/* Bad base64 in a Secret. */
	REQUIRE_INT(reload_hasher_init(&h), 0);
	reload_hasher_add_b64(&h, "k", 1, "@@@@", 4);
	CHECK_INT(reload_hasher_final(&h, hex, NULL), -EINVAL);
}

static void check_env(const char *name, enum reload_type t, const char *want)
{
	struct strbuf sb = STRBUF_INIT(1024);

	CHECK_INT(reload_env_name(&sb, name, t), 0);
	CHECK_STR(sb.buf, want);
	sb_free(&sb);
}

TEST(env_var_names)
{
	/* Reloader's TestConvertToEnvVarName: www.stakater.com -> WWW_STAKATER_COM */
	check_env("www.stakater.com", RELOAD_CONFIGMAP, "STAKATER_WWW_STAKATER_COM_CONFIGMAP");
	check_env("my-app--cfg", RELOAD_SECRET, "STAKATER_MY_APP_CFG_SECRET");
	check_env("-lead", RELOAD_CONFIGMAP, "STAKATER_LEAD_CONFIGMAP");
	check_env("trail-", RELOAD_SECRET, "STAKATER_TRAIL__SECRET");
	check_env("Mixed.Case9", RELOAD_CONFIGMAP, "STAKATER_MIXED_CASE9_CONFIGMAP");
	/* names that give one variable (issue 17 #9), and names that do not */
	CHECK_INT(reload_env_same("a-b", "a.b"), 1);
	CHECK_INT(reload_env_same("a--b", "A.b"), 1);
	CHECK_INT(reload_env_same("-a-b", "a-b"), 1);
	CHECK_INT(reload_env_same("a-b-", "a-b"), 0);
	CHECK_INT(reload_env_same("ab", "a-b"), 0);
	CHECK_INT(reload_env_same("a-b", "a-bc"), 0);
}

/* A Deployment with the given metadata and template annotations and pod spec. */
static int wl(struct reload_workload *w, const char *meta_ann, const char *tmpl_ann,
	      const char *pod)
{
	char buf[8192];
	json_t *j;
	int r;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"web\",\"namespace\":\"ns\",\"annotations\":%s},"
		 "\"spec\":{\"template\":{\"metadata\":{\"annotations\":%s},\"spec\":%s}}}",
		 meta_ann, tmpl_ann, pod);
	j = J(buf);
	if (!j)
		return -EINVAL;
	r = reload_workload_parse(w, RELOAD_DEPLOYMENT, j, 0, NULL);
	json_decref(j);
	return r;
}

#define POD_ENVFROM_CM                                                                             \
	"{\"containers\":[{\"name\":\"app\",\"envFrom\":[{\"configMapRef\":{\"name\":\"cfg\"}}]}]" \
	"}"

static enum reload_verdict verdict(const struct reload_workload *w, enum reload_type t,
				   const char *name, int match, int ignore, const char **c)
{
	struct reload_object o = {t, "ns", name, "h", NULL, match, ignore};

	return reload_should(w, &o, 0, c);
}

TEST(annotations_auto_and_typed_auto)
{
	struct reload_workload w;
	const char *c;

	REQUIRE_INT(wl(&w, "{\"reloader.stakater.com/auto\":\"true\"}", "{}", POD_ENVFROM_CM), 0);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 0, 0, &c), RELOAD_YES);
	CHECK_STR(c, "app");
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "other", 0, 0, &c), RELOAD_NO_NOT_USED);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 0, 1, &c), RELOAD_NO_IGNORED);
	reload_workload_free(&w);
	/* Go ParseBool: "T" is true, "yes" is not */
	REQUIRE_INT(wl(&w, "{\"reloader.stakater.com/auto\":\"T\"}", "{}", POD_ENVFROM_CM), 0);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 0, 0, &c), RELOAD_YES);
	reload_workload_free(&w);
	REQUIRE_INT(wl(&w, "{\"reloader.stakater.com/auto\":\"yes\"}", "{}", POD_ENVFROM_CM), 0);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	reload_workload_free(&w);
	/* typed auto: only its own type */
	REQUIRE_INT(wl(&w, "{\"secret.reloader.stakater.com/auto\":\"true\"}", "{}",
		       "{\"containers\":[{\"name\":\"app\",\"envFrom\":[{\"configMapRef\":{"
		       "\"name\":\"cfg\"}},"
		       "{\"secretRef\":{\"name\":\"sec\"}}]}]}"),
		    0);
	CHECK_INT(verdict(&w, RELOAD_SECRET, "sec", 0, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	reload_workload_free(&w);
}

TEST(annotations_auto_all_and_opt_out)
{
	struct reload_workload w;
	struct reload_object o = {RELOAD_CONFIGMAP, "ns", "cfg", "h", NULL, 0, 0};

	REQUIRE_INT(wl(&w, "{}", "{}", POD_ENVFROM_CM), 0);
	CHECK_INT(reload_should(&w, &o, 0, NULL), RELOAD_NO_NOT_SELECTED);
	CHECK_INT(reload_should(&w, &o, 1, NULL), RELOAD_YES);
	reload_workload_free(&w);
	REQUIRE_INT(wl(&w, "{\"reloader.stakater.com/auto\":\"false\"}", "{}", POD_ENVFROM_CM), 0);
	CHECK_INT(reload_should(&w, &o, 1, NULL), RELOAD_NO_NOT_SELECTED);
	reload_workload_free(&w);
	/* another namespace never matches */
	REQUIRE_INT(wl(&w, "{\"reloader.stakater.com/auto\":\"true\"}", "{}", POD_ENVFROM_CM), 0);
	o.ns = "other";
	CHECK_INT(reload_should(&w, &o, 1, NULL), RELOAD_NO_NAMESPACE);
	reload_workload_free(&w);
}

TEST(annotations_template_fallback_all_or_nothing)
{
	struct reload_workload w;
	const char *c;

	/* Only on the pod template: used. */
	REQUIRE_INT(wl(&w, "{}", "{\"reloader.stakater.com/auto\":\"true\"}", POD_ENVFROM_CM), 0);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 0, 0, &c), RELOAD_YES);
	reload_workload_free(&w);
	/* A search key on the metadata hides the template's auto (no merge). */
	REQUIRE_INT(wl(&w, "{\"reloader.stakater.com/search\":\"true\"}",
		       "{\"reloader.stakater.com/auto\":\"true\"}", POD_ENVFROM_CM),
		    0);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 1, 0, &c), RELOAD_YES);
	reload_workload_free(&w);
	/* A Secret reload key on the metadata does not hide the template for ConfigMaps. */
	REQUIRE_INT(wl(&w, "{\"secret.reloader.stakater.com/reload\":\"s\"}",
		       "{\"reloader.stakater.com/auto\":\"true\"}", POD_ENVFROM_CM),
		    0);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 0, 0, &c), RELOAD_YES);
	reload_workload_free(&w);
	/* Exclude lists are read from the metadata only. */
	REQUIRE_INT(wl(&w, "{}",
		       "{\"reloader.stakater.com/auto\":\"true\","
		       "\"configmaps.exclude.reloader.stakater.com/reload\":\"cfg\"}",
		       POD_ENVFROM_CM),
		    0);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 0, 0, &c), RELOAD_YES);
	reload_workload_free(&w);
}

TEST(annotations_reload_lists_and_exclude)
{
	struct reload_workload w;
	const char *c;

	REQUIRE_INT(wl(&w,
		       "{\"configmap.reloader.stakater.com/reload\":\" cfg , app-.* ,[bad\","
		       "\"configmaps.exclude.reloader.stakater.com/reload\":\"app-x, skip\","
		       "\"reloader.stakater.com/auto\":\"true\"}",
		       "{}", POD_ENVFROM_CM),
		    0);
	/* named: reload even if unused, attributed to the first container */
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "app-1", 0, 0, &c), RELOAD_YES);
	CHECK_STR(c, "app");
	/* anchored: "xapp-1" and "cfg2" do not match */
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "xapp-1", 0, 0, &c), RELOAD_NO_NOT_USED);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg2", 0, 0, &c), RELOAD_NO_NOT_USED);
	/* excluded wins over the list and over auto */
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "app-x", 0, 0, &c), RELOAD_NO_EXCLUDED);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "skip", 0, 0, &c), RELOAD_NO_EXCLUDED);
	/* the invalid "[bad" entry was skipped, the others kept */
	CHECK_INT(reload_relist_count(w.relist[0][RELOAD_CONFIGMAP]), 2);
	/* the ConfigMap list does not apply to Secrets */
	CHECK_INT(verdict(&w, RELOAD_SECRET, "cfg", 0, 0, &c), RELOAD_NO_NOT_USED);
	reload_workload_free(&w);
	/* "a|b" is anchored as Go does it: ^a|b$ */
	REQUIRE_INT(
	    wl(&w, "{\"secret.reloader.stakater.com/reload\":\"a|b\"}", "{}", POD_ENVFROM_CM), 0);
	CHECK_INT(verdict(&w, RELOAD_SECRET, "ab", 0, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&w, RELOAD_SECRET, "xb", 0, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&w, RELOAD_SECRET, "xa", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	reload_workload_free(&w);
}

/* The lists are Go (RE2) regexes: its escapes mean what they mean in Go, not POSIX. */
TEST(annotations_reload_lists_go_escapes)
{
	struct reload_workload w;
	const char *c;

	REQUIRE_INT(wl(&w,
		       "{\"configmap.reloader.stakater.com/reload\":"
		       "\"cfg-\\\\d+, app-[a-z\\\\d\\\\-]+, x\\\\.y, n\\\\D\\\\w\"}",
		       "{}", POD_ENVFROM_CM),
		    0);
	CHECK_INT(reload_relist_count(w.relist[0][RELOAD_CONFIGMAP]), 4);
	/* \d is a digit (POSIX would read it as the letter d) */
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg-12", 0, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg-dd", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	/* escapes inside a bracket: \d and \- */
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "app-a-9", 0, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "app-a.9", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "app-d\\", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	/* \. is a literal dot */
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "x.y", 0, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "xzy", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	/* \D: not a digit; \w: a word character */
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "n-a", 0, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "n1a", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	reload_workload_free(&w);
}

/*
 * Patterns Go refuses (nested repetition operators, repeat counts over 1000,
 * back-references) are warned about and skipped; sane ones beside them are
 * kept. "((a+)+)+..." is valid Go and, with RE2, linear to match (glibc's
 * regcomp expanded it exponentially).
 */
TEST(annotations_reload_lists_costly_patterns)
{
	static const char *const bad[] = {
	    "a++++++++++++++++++++++++++++++++++++++++",
	    "((((((((((((((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+",
	    "a{2}{2}",
	    "a*+",
	    "a{1001}",
	    "(a{1000}){1000}",
	    "a*??",
	    "(a*)*(a*)*(a*)*\\\\1\\\\2\\\\3x",
	};
	struct reload_workload w;
	struct strbuf ann = STRBUF_INIT(1 << 16);
	const char *c;
	size_t i;

	sb_add(&ann, "{\"configmap.reloader.stakater.com/reload\":\"cfg-[0-9]{3}, (x|y)+?");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		sb_addf(&ann, ", %s", bad[i]);
	sb_add(&ann, "\"}");
	REQUIRE_INT(wl(&w, ann.buf, "{}", POD_ENVFROM_CM), 0);
	CHECK_INT(reload_relist_count(w.relist[0][RELOAD_CONFIGMAP]), 3);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg-123", 0, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "xyx", 0, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "aa", 0, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "ab", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	reload_workload_free(&w);
	sb_free(&ann);
}

/* A Deployment named name whose metadata carries the ConfigMap reload list list. */
static int wl_list(struct reload_workload *w, const char *name, const char *list)
{
	json_t *j =
	    json_pack("{s:{s:s,s:s,s:{s:s}},s:{s:{s:{s:[{s:s}]}}}}", "metadata", "name", name,
		      "namespace", "ns", "annotations", "configmap.reloader.stakater.com/reload",
		      list, "spec", "template", "spec", "containers", "name", "app");
	int r = reload_workload_parse(w, RELOAD_DEPLOYMENT, j, 0, NULL);

	json_decref(j);
	return r;
}

/*
 * Issue 17 #4: identical lists compile once (shared, refcounted); a list over
 * the per-annotation budget, or one that would pass the budget of all lists,
 * is refused with a message naming the workload, the annotation and the limit.
 * The refused list selects nothing; the workload's other annotations still do.
 */
TEST(annotations_reload_lists_shared_and_budgeted)
{
	struct reload_workload a, b, big, more;
	struct strbuf text = STRBUF_INIT(1 << 20);
	const char *c;
	size_t used;

	REQUIRE_INT(wl_list(&a, "a", "cfg-[0-9]+, other"), 0);
	used = reload_relist_used();
	CHECK(used > 0);
	REQUIRE_INT(wl_list(&b, "b", "cfg-[0-9]+, other"), 0);
	CHECK(a.relist[0][RELOAD_CONFIGMAP] == b.relist[0][RELOAD_CONFIGMAP]);
	CHECK_INT(reload_relist_used(), used); /* compiled once */
	CHECK_INT(verdict(&b, RELOAD_CONFIGMAP, "cfg-7", 0, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&b, RELOAD_CONFIGMAP, "other", 0, 0, &c), RELOAD_YES);
	reload_workload_free(&a);
	CHECK_INT(verdict(&b, RELOAD_CONFIGMAP, "cfg-7", 0, 0, &c), RELOAD_YES);
	reload_workload_free(&b);
	CHECK_INT(reload_relist_used(), 0);

	/* per annotation: 64 KiB of text by default; 247 KB (21,500 patterns) refused */
	while (text.len <= RELOAD_LIST_TEXT_MAX)
		sb_addf(&text, "cfg-%05zu-.*, ", text.len);
	REQUIRE_INT(wl_list(&big, "big", text.buf), 0);
	CHECK(big.relist[0][RELOAD_CONFIGMAP] == NULL);
	CHECK_INT(reload_relist_used(), 0);
	REQUIRE(big.refused != NULL);
	CHECK(strstr(big.refused, "Deployment ns/big: annotation "
				  "configmap.reloader.stakater.com/reload: ") == big.refused);
	CHECK(strstr(big.refused, "over the limit of 65536 bytes per annotation") != NULL);
	CHECK_INT(verdict(&big, RELOAD_CONFIGMAP, "cfg-00000-x", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	reload_workload_free(&big);

	/* all lists: what would pass the total is refused; plain names cost little */
	reload_relist_limits(0, 0, 40000); /* two patterns (16 KiB each) and some names */
	REQUIRE_INT(wl_list(&a, "a", "x.*, y.*"), 0);
	CHECK(a.relist[0][RELOAD_CONFIGMAP] != NULL && a.refused == NULL);
	REQUIRE_INT(wl_list(&more, "more", "z.*, w.*"), 0);
	CHECK(more.relist[0][RELOAD_CONFIGMAP] == NULL);
	REQUIRE(more.refused != NULL);
	CHECK(strstr(more.refused, "Deployment ns/more: annotation") == more.refused);
	CHECK(strstr(more.refused, ": its 2 entries would need about 32 KiB, and the reload lists "
				   "of all namespaces may use 39 KiB (32 KiB in use, the most by "
				   "namespace 'ns': 32 KiB)") != NULL);
	REQUIRE_INT(wl_list(&b, "b", "plain-name, other-name"), 0);
	CHECK(b.refused == NULL);
	CHECK_INT(verdict(&b, RELOAD_CONFIGMAP, "other-name", 0, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&b, RELOAD_CONFIGMAP, "other-namex", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	reload_workload_free(&more);
	reload_workload_free(&a); /* its budget is given back: the list fits now */
	REQUIRE_INT(wl_list(&more, "more", "z.*, w.*"), 0);
	CHECK(more.refused == NULL);
	CHECK_INT(verdict(&more, RELOAD_CONFIGMAP, "wx", 0, 0, &c), RELOAD_YES);
	reload_workload_free(&more);
	reload_workload_free(&b);
	sb_free(&text);
	reload_relist_limits(0, 0, 0);
}

TEST(annotations_search_match)
{
	struct reload_workload w;
	const char *c;

	REQUIRE_INT(wl(&w, "{\"reloader.stakater.com/search\":\"true\"}", "{}", POD_ENVFROM_CM), 0);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 1, 0, &c), RELOAD_YES);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 0, 0, &c), RELOAD_NO_NOT_SELECTED);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "unused", 1, 0, &c), RELOAD_NO_NOT_USED);
	reload_workload_free(&w);
	/* search must be exactly "true" */
	REQUIRE_INT(wl(&w, "{\"reloader.stakater.com/search\":\"True\"}", "{}", POD_ENVFROM_CM), 0);
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "cfg", 1, 0, &c), RELOAD_NO_NOT_SELECTED);
	reload_workload_free(&w);
}

TEST(uses_volumes_env_init_containers)
{
	struct reload_workload w;
	const char *c;

	REQUIRE_INT(
	    wl(&w, "{\"reloader.stakater.com/auto\":\"true\"}", "{}",
	       "{\"volumes\":["
	       "{\"name\":\"v1\",\"configMap\":{\"name\":\"mounted\"}},"
	       "{\"name\":\"v2\",\"secret\":{\"secretName\":\"unmounted\"}},"
	       "{\"name\":\"v3\",\"projected\":{\"sources\":[{\"configMap\":{\"name\":\"proj\"}},"
	       "{\"secret\":{\"name\":\"psec\"}}]}},"
	       "{\"name\":\"v4\",\"configMap\":{\"name\":\"initvol\"}}],"
	       "\"initContainers\":[{\"name\":\"init\",\"volumeMounts\":[{\"name\":\"v4\","
	       "\"mountPath\":\"/i\"}],"
	       "\"env\":[{\"name\":\"E\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"initsec\","
	       "\"key\":\"k\"}}}]}],"
	       "\"containers\":["
	       "{\"name\":\"main\",\"volumeMounts\":[{\"name\":\"v3\",\"mountPath\":\"/p\"}]},"
	       "{\"name\":\"side\",\"volumeMounts\":[{\"name\":\"v1\",\"mountPath\":\"/m\"}],"
	       "\"env\":[{\"name\":\"X\",\"valueFrom\":{\"configMapKeyRef\":{\"name\":\"mounted\","
	       "\"key\":\"k\"}}},"
	       "{\"name\":\"Y\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"unmounted\",\"key\":"
	       "\"k\"}}}]}]}"),
	    0);
	/* volume mounted by the second container */
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "mounted", 0, 0, &c), RELOAD_YES);
	CHECK_STR(c, "side");
	/* projected sources */
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "proj", 0, 0, &c), RELOAD_YES);
	CHECK_STR(c, "main");
	CHECK_INT(verdict(&w, RELOAD_SECRET, "psec", 0, 0, &c), RELOAD_YES);
	CHECK_STR(c, "main");
	/* a volume no container mounts does not count; the env reference does */
	CHECK_INT(verdict(&w, RELOAD_SECRET, "unmounted", 0, 0, &c), RELOAD_YES);
	CHECK_STR(c, "side");
	/* init container hits are attributed to the first regular container */
	CHECK_INT(verdict(&w, RELOAD_CONFIGMAP, "initvol", 0, 0, &c), RELOAD_YES);
	CHECK_STR(c, "main");
	CHECK_INT(verdict(&w, RELOAD_SECRET, "initsec", 0, 0, &c), RELOAD_YES);
	CHECK_STR(c, "main");
	CHECK_INT(w.nrefs, 6);
	reload_workload_free(&w);
}

TEST(recorded_hash_both_strategies)
{
	struct reload_workload w;
	struct reload_object o = {RELOAD_CONFIGMAP, "ns", "cfg", "h", NULL, 0, 0};

	REQUIRE_INT(wl(&w, "{\"reloader.stakater.com/auto\":\"true\"}",
		       "{\"reloader.stakater.com/last-reloaded-from\":"
		       "\"{\\\"type\\\":\\\"CONFIGMAP\\\",\\\"name\\\":\\\"cfg\\\","
		       "\\\"namespace\\\":\\\"ns\\\","
		       "\\\"hash\\\":\\\"abc\\\",\\\"containerRefs\\\":[\\\"app\\\"],"
		       "\\\"observedAt\\\":1}\"}",
		       "{\"containers\":[{\"name\":\"app\",\"envFrom\":[{\"configMapRef\":{"
		       "\"name\":\"cfg\"}}],"
		       "\"env\":[{\"name\":\"STAKATER_CFG_CONFIGMAP\",\"value\":\"def\"},{\"name\":"
		       "\"PLAIN\",\"value\":\"1\"}]}]}"),
		    0);
	CHECK_STR(reload_recorded(&w, &o, "app", RELOAD_ENV_VARS), "def");
	CHECK(reload_recorded(&w, &o, "other", RELOAD_ENV_VARS) == NULL);
	CHECK_STR(reload_recorded(&w, &o, "app", RELOAD_ANNOTATIONS), "abc");
	o.type = RELOAD_SECRET;
	CHECK(reload_recorded(&w, &o, "app", RELOAD_ANNOTATIONS) == NULL);
	CHECK(reload_recorded(&w, &o, "app", RELOAD_ENV_VARS) == NULL);
	CHECK_INT(w.nenv, 1);
	reload_workload_free(&w);
}

TEST(patch_body_env_vars_exact)
{
	struct strbuf sb = STRBUF_INIT(4096);
	struct reload_trigger t[3] = {
	    {RELOAD_CONFIGMAP, "app-config", "0123456789abcdef0123456789abcdef01234567", "app", 0},
	    {RELOAD_SECRET, "db.creds", "89abcdef0123456789abcdef0123456789abcdef", "side", 0},
	    {RELOAD_SECRET, "tls", "fedcba9876543210fedcba9876543210fedcba98", "app", 0},
	};

	CHECK_INT(reload_patch_body(&sb, RELOAD_ENV_VARS, "ns", t, 1, 0), 0);
	CHECK_STR(sb.buf,
		  "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\",\"env\":"
		  "[{\"name\":\"STAKATER_APP_CONFIG_CONFIGMAP\",\"value\":"
		  "\"0123456789abcdef0123456789abcdef01234567\"}]}]}}}}");
	sb_reset(&sb);
	CHECK_INT(reload_patch_body(&sb, RELOAD_ENV_VARS, "ns", t, 3, 0), 0);
	CHECK_STR(sb.buf, "{\"spec\":{\"template\":{\"spec\":{\"containers\":["
			  "{\"name\":\"app\",\"env\":["
			  "{\"name\":\"STAKATER_APP_CONFIG_CONFIGMAP\",\"value\":"
			  "\"0123456789abcdef0123456789abcdef01234567\"},"
			  "{\"name\":\"STAKATER_TLS_SECRET\",\"value\":"
			  "\"fedcba9876543210fedcba9876543210fedcba98\"}]},"
			  "{\"name\":\"side\",\"env\":["
			  "{\"name\":\"STAKATER_DB_CREDS_SECRET\",\"value\":"
			  "\"89abcdef0123456789abcdef0123456789abcdef\"}]}"
			  "]}}}}");
	sb_reset(&sb);
	CHECK_INT(reload_patch_body(&sb, RELOAD_ENV_VARS, "ns", t, 0, 0), -EINVAL);
	t[0].container = NULL;
	CHECK_INT(reload_patch_body(&sb, RELOAD_ENV_VARS, "ns", t, 1, 0), -EINVAL);
	sb_free(&sb);
}

TEST(patch_body_annotations_exact)
{
	struct strbuf sb = STRBUF_INIT(4096);
	struct reload_trigger t[2] = {
	    {RELOAD_CONFIGMAP, "first", "1111111111111111111111111111111111111111", "app", 0},
	    {RELOAD_SECRET, "db", "89abcdef0123456789abcdef0123456789abcdef", "app", 0},
	};

	CHECK_INT(reload_patch_body(&sb, RELOAD_ANNOTATIONS, "prod", t, 2, 1795200000), 0);
	CHECK_STR(
	    sb.buf,
	    "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{"
	    "\"reloader.stakater.com/last-reloaded-from\":"
	    "\"{\\\"type\\\":\\\"SECRET\\\",\\\"name\\\":\\\"db\\\",\\\"namespace\\\":\\\"prod\\\","
	    "\\\"hash\\\":\\\"89abcdef0123456789abcdef0123456789abcdef\\\","
	    "\\\"containerRefs\\\":[\\\"app\\\"],\\\"observedAt\\\":1795200000}\"}}}}}");
	sb_free(&sb);
}

/*
 * Leading edge: a workload not rolled lately is due after the settle time; one rolled within
 * the window / minimum interval is due when the longer of them ends; further objects join the
 * same rollout without moving it.
 */
TEST(schedule_leading_edge_then_hold)
{
	struct reload_opts o;
	struct ctl c;
	struct wl_ent we;
	char ns[] = "default", name[] = "web";
	long long now;

	reload_opts_init(&o);
	memset(&c, 0, sizeof(c));
	memset(&we, 0, sizeof(we));
	c.o = &o;
	we.e.ns = ns;
	we.e.name = name;
	now = reload_now_ms();
	reload_schedule(&c, &we, RELOAD_CONFIGMAP, "cfg");
	REQUIRE(we.pending && c.act.pend == &we && we.ntrig == 1);
	CHECK(we.due_ms >= now + o.settle_ms && we.due_ms <= reload_now_ms() + o.settle_ms);
	CHECK(o.settle_ms == 10 && o.window_ms == 1000 && o.min_interval_ms == 10000);
	reload_pend_remove(&c, &we);
	CHECK(!we.pending && !c.act.pend && we.ntrig == 0);

	/* rolled just now: held until the minimum interval (the longer) ends, one rollout */
	we.last_roll_ms = reload_now_ms();
	reload_schedule(&c, &we, RELOAD_CONFIGMAP, "cfg");
	reload_schedule(&c, &we, RELOAD_SECRET, "db");
	reload_schedule(&c, &we, RELOAD_CONFIGMAP, "cfg");
	CHECK_INT((int)we.ntrig, 2);
	CHECK(we.due_ms == we.last_roll_ms + o.min_interval_ms);
	reload_pend_remove(&c, &we);

	/* a window longer than the interval holds for the window */
	o.window_ms = 20000;
	reload_schedule(&c, &we, RELOAD_CONFIGMAP, "cfg");
	CHECK(we.due_ms == we.last_roll_ms + 20000);
	reload_pend_remove(&c, &we);

	/* both 0: every change at once */
	o.window_ms = o.min_interval_ms = o.settle_ms = 0;
	now = reload_now_ms();
	reload_schedule(&c, &we, RELOAD_CONFIGMAP, "cfg");
	CHECK(we.due_ms >= now && we.due_ms <= reload_now_ms());
	reload_pend_remove(&c, &we);
}

TEST(workload_without_name_is_an_error)
{
	struct reload_workload w;
	struct log_err err = {0};
	json_t *j = J("{\"metadata\":{}}");

	CHECK_INT(reload_workload_parse(&w, RELOAD_STATEFULSET, j, 0, &err), -EINVAL);
	CHECK_STR(err.msg, "StatefulSet without metadata.name");
	reload_workload_free(&w);
	json_decref(j);
}

/* Module codes stay out of the errno range and each has words; errno values keep strerror's. */
TEST(error_codes_and_words)
{
	CHECK(RELOAD_EPARTIAL <= -1000 && KUBE_ETLS <= -1000 &&
	      KUBE_ECONFIG <= -1000); /* errno < 200 */
	CHECK_STR(reload_strerror(RELOAD_EPARTIAL), "some rollouts failed");
	CHECK_STR(reload_strerror(KUBE_EAUTH), "the API server rejected the credentials");
	CHECK_STR(reload_strerror(-ENOENT), strerror(ENOENT));
	CHECK_STR(kube_strerror(KUBE_ETLS), "TLS handshake or certificate verification failed");
}

/* ---- Reloader's deployment contract (reload-surface) ---- */

static void check_selector(const char *const *in, size_t n, const char *want)
{
	struct log_err err = {0};
	char *out = NULL;

	CHECK_INT(reload_selector(&out, in, n, &err), 0);
	CHECK_STR(out ? out : "(null)", want);
	free(out);
}

/* Reloader v1.4.21 pkg/common/common.go: the legacy forms, and selectors passed through. */
TEST(selector_reloader_forms)
{
	const char *a[] = {"team:*"}, *b[] = {"env:prod"}, *c[] = {"env=*"},
		   *d[] = {"env:prod", "team:*", "tier=web"}, *e[] = {"env in (a", "b)"},
		   *f[] = {"!legacy", "k!=v"}, *g[] = {"a:b:c"},
		   *h[] = {"app.kubernetes.io/name:web"};

	check_selector(a, 1, "team");
	check_selector(b, 1, "env=prod");
	check_selector(c, 1, "env");
	check_selector(d, 3, "env=prod,team,tier=web");
	/* pflag split "env in (a,b)" at the comma; joined again it is the same selector */
	check_selector(e, 2, "env in (a,b)");
	check_selector(f, 2, "!legacy,k!=v");
	check_selector(g, 1, "a=b");
	check_selector(h, 1, "app.kubernetes.io/name=web");
}

TEST(selector_bad_is_an_error)
{
	const char *a[] = {"a b"}, *b[] = {"env in (a"}, *c[] = {"=x"};
	struct log_err err = {0};
	char *out = (char *)"x";

	CHECK_INT(reload_selector(&out, a, 1, &err), -EINVAL);
	CHECK(out == NULL);
	CHECK_STR(err.msg, "'a b': unexpected 'b'");
	CHECK_INT(reload_selector(&out, b, 1, &err), -EINVAL);
	CHECK_STR(err.msg, "'env in (a': expected ')' at ''");
	CHECK_INT(reload_selector(&out, c, 1, &err), -EINVAL);
	CHECK_STR(err.msg, "'=x': expected a label key at '=x'");
}

static void check_alert(const char *sink, const char *info, const char *want_type, const char *want)
{
	struct reload_alert a = {.on = 1, .url = "http://x", .sink = sink, .info = info};
	struct strbuf sb = STRBUF_INIT(64 * 1024);
	const char *ctype = NULL;

	CHECK_INT(reload_alert_body(&sb, &a, "app<cfg>&", "CONFIGMAP", "prod", "web", "Deployment",
				    &ctype),
		  0);
	CHECK_STR(ctype ? ctype : "(null)", want_type);
	CHECK_STR(sb.buf, want);
	sb_free(&sb);
}

/* Reloader v1.4.21 internal/pkg/alerts: payload per sink; JSON as Go's encoder writes it. */
TEST(alert_bodies_per_sink)
{
	check_alert(
	    "slack", NULL, "application/json",
	    "{\"attachments\":[{\"author_name\":\"Reloader\",\"color\":\"good\",\"text\":"
	    "\"Reloader detected changes in *app\\u003ccfg\\u003e\\u0026* of type *CONFIGMAP* "
	    "in namespace *prod*. Hence reloaded *web* of type *Deployment* in namespace "
	    "*prod*\"}]}");
	check_alert("teams", "cluster \"a\"", "application/json",
		    "{\"text\":\"cluster \\\"a\\\" : Reloader detected changes in "
		    "*app\\u003ccfg\\u003e\\u0026* of type *CONFIGMAP* in namespace *prod*. Hence "
		    "reloaded *web* of type *Deployment* in namespace *prod*\"}");
	check_alert(
	    "gchat", "", "application/json",
	    "{\"text\":\" : Reloader detected changes in *app\\u003ccfg\\u003e\\u0026* of type "
	    "*CONFIGMAP* in namespace *prod*. Hence reloaded *web* of type *Deployment* in "
	    "namespace *prod*\"}");
	check_alert("webhook", "c*1", "text/plain",
		    "c1 : Reloader detected changes in app<cfg>& of type CONFIGMAP in namespace "
		    "prod. Hence reloaded web of type Deployment in namespace prod");
	check_alert(NULL, NULL, "text/plain",
		    "Reloader detected changes in app<cfg>& of type CONFIGMAP in namespace prod. "
		    "Hence reloaded web of type Deployment in namespace prod");
}

/*
 * Alerts wait in a bounded queue for their own thread: a sink that never answers (a socket that
 * is listened on, never accepted) holds one POST; 300 alerts leave 256 queued and the oldest
 * dropped and counted; stopping abandons the POST in flight.
 */
/* A listening socket on 127.0.0.1; its port in *port. */
static int sink_listen(int *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

/* Accept one connection within 10 s (the client's POST has reached the sink); -1 if none. */
static int sink_accept(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 10000) == 1 ? accept(fd, NULL, NULL) : -1;
}

TEST(alert_queue_drops_its_oldest_when_full)
{
	int port, fd = sink_listen(&port), i, held;
	char url[64];
	struct reload_opts o;
	struct ctl c;
	struct log_err err = {0};
	unsigned long dropped, queued;

	CHECK(fd >= 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", port);
	reload_opts_init(&o);
	o.alert.on = 1;
	o.alert.url = url;
	memset(&c, 0, sizeof(c));
	c.o = &o;
	CHECK_INT(reload_notify_start(&c, &err), 0);
	CHECK(c.act.nq != NULL);
	/* the first one is taken and held by the sink (accepted, never answered) ... */
	reload_notify_alert(&c, "cfg", "CONFIGMAP", "ns", "web", "Deployment");
	held = sink_accept(fd);
	CHECK(held >= 0);
	/* ... so the thread takes no other while the rest fill the queue */
	for (i = 1; i < 300; i++)
		reload_notify_alert(&c, "cfg", "CONFIGMAP", "ns", "web", "Deployment");
	dropped = METRIC_GET(c.m.notify_dropped);
	queued = METRIC_GET(c.m.notify_queued);
	CHECK_INT((int)queued, RELOAD_NOTIFY_QUEUE_MAX);
	CHECK_INT((int)dropped, 299 - RELOAD_NOTIFY_QUEUE_MAX);
	reload_notify_stop(&c, 0);
	CHECK(c.act.nq == NULL);
	close(held);
	close(fd);
}

struct responder {
	int fd, n; /* listening socket; requests answered */
};

/* Answer every POST 200 at once until the listening socket is shut down. */
static void *respond(void *ud)
{
	struct responder *r = ud;
	char buf[8192];
	int cfd;

	while ((cfd = accept(r->fd, NULL, NULL)) >= 0) {
		size_t got = 0;
		ssize_t k;
		const char *end = NULL, *cl;

		/* the head, then Content-Length bytes of body */
		while (got < sizeof(buf) - 1 &&
		       (k = read(cfd, buf + got, sizeof(buf) - 1 - got)) > 0) {
			got += (size_t)k;
			buf[got] = '\0';
			end = strstr(buf, "\r\n\r\n");
			cl = strcasestr(buf, "Content-Length:");
			if (end &&
			    (!cl || got >= (size_t)(end + 4 - buf) + strtoul(cl + 15, NULL, 10)))
				break;
		}
		dprintf(cfd, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
		close(cfd);
		__atomic_add_fetch(&r->n, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

TEST(alert_queue_in_once_mode_waits_for_room_and_sends_all)
{
	struct responder rs = {0};
	int port, i;
	char url[64];
	struct reload_opts o;
	struct ctl c;
	struct log_err err = {0};
	pthread_t th;

	rs.fd = sink_listen(&port);
	CHECK(rs.fd >= 0);
	CHECK_INT(pthread_create(&th, NULL, respond, &rs), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", port);
	reload_opts_init(&o);
	o.once = 1;
	o.alert.on = 1;
	o.alert.url = url;
	memset(&c, 0, sizeof(c));
	c.o = &o;
	CHECK_INT(reload_notify_start(&c, &err), 0);
	for (i = 0; i < 2 * RELOAD_NOTIFY_QUEUE_MAX; i++)
		reload_notify_alert(&c, "cfg", "CONFIGMAP", "ns", "web", "Deployment");
	CHECK_INT((int)METRIC_GET(c.m.notify_dropped), 0);
	reload_notify_stop(&c, 1);
	shutdown(rs.fd, SHUT_RDWR);
	pthread_join(th, NULL);
	close(rs.fd);
	CHECK_INT(rs.n, 2 * RELOAD_NOTIFY_QUEUE_MAX);
}

TEST(histogram_buckets_are_cumulative)
{
	static const double bounds[] = {.01, .1, 1};
	struct reload_hist h;

	memset(&h, 0, sizeof(h));
	reload_hist_observe(&h, bounds, 3, 5000);    /* 5 ms */
	reload_hist_observe(&h, bounds, 3, 50000);   /* 50 ms */
	reload_hist_observe(&h, bounds, 3, 2000000); /* 2 s */
	CHECK_INT((int)h.b[0], 1);
	CHECK_INT((int)h.b[1], 2);
	CHECK_INT((int)h.b[2], 2);
	CHECK_INT((int)h.count, 3);
	CHECK_INT((int)h.sum_us, 2055000);
}

/* What the API server's labels.Parse rejects is refused here, what it accepts is not. */
TEST(selector_keys_values_and_numbers_as_the_api_server)
{
	const char *ok[] = {"priority>5", "tier<10", "k in (a,)", "x.example.com/y_1=v-2.a"};
	const char *bad[][2] = {
	    {"k=a/b", "'k=a/b': bad label value at 'a/b'"},
	    {"a/b/c=x", "'a/b/c=x': expected a label key at 'a/b/c=x'"},
	    {"-k=v", "'-k=v': expected a label key at '-k=v'"},
	    {"k>x", "'k>x': bad label value at 'x'"},
	    {"k>=5", "'k>=5': bad label value at '=5'"},
	    {"Ex.com/k=v", "'Ex.com/k=v': expected a label key at 'Ex.com/k=v'"},
	    {"k=v_", "'k=v_': bad label value at 'v_'"},
	};
	struct log_err err = {0};
	char *out = NULL;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK_INT(reload_selector(&out, &ok[i], 1, &err), 0);
		free(out);
		out = NULL;
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(reload_selector(&out, &bad[i][0], 1, &err), -EINVAL);
		CHECK_STR(err.msg, bad[i][1]);
	}
}
