/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/mirror: rendering, names, durations, check findings, options, configure. */
#include "harness.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log.h"
#include "mirror/mirror.h"
#include "mirror/mirror_internal.h"
#include "strbuf/strbuf.h"

static struct mirror_list list_of(const char *a, const char *b)
{
	struct mirror_list l = {0};

	if (a)
		mirror_list_add(&l, a);
	if (b)
		mirror_list_add(&l, b);
	return l;
}

/* base: a list split at commas and white space, a part too long, the read-error words. */
TEST(base_lists)
{
	struct mirror_list l = {0};
	struct log_err err = {0};
	char *big = malloc(4097);

	REQUIRE(big != NULL);
	CHECK_INT(mirror_list_add_split(&l, "a, b\tc,,"), 0);
	REQUIRE_INT((int)l.n, 3);
	CHECK_STR(l.v[0], "a");
	CHECK_STR(l.v[1], "b");
	CHECK_STR(l.v[2], "c");
	memset(big, 'x', 4096);
	big[4096] = '\0';
	CHECK_INT(mirror_list_add_split(&l, big), -E2BIG);
	CHECK_INT((int)l.n, 3);
	big[4095] = '\0'; /* 4095 bytes fit */
	CHECK_INT(mirror_list_add_split(&l, big), 0);
	CHECK_INT((int)l.n, 4);
	mirror_list_free(&l);
	CHECK(l.v == NULL && l.n == 0);
	free(big);
	CHECK_INT(mirror_read_error(&err, "/x/hosts.toml", -E2BIG, 1u << 20), -E2BIG);
	CHECK_STR(err.msg, "/x/hosts.toml: file too large (over 1024 KiB)");
	CHECK_INT(mirror_read_error(&err, "/x/ca.pem", -ENOENT, 1u << 20), -ENOENT);
	CHECK_STR(err.msg, "/x/ca.pem: No such file or directory");
}

TEST(render_spegel_bytes)
{
	struct mirror_list t = list_of("http://127.0.0.1:5000", "http://127.0.0.1:5001");
	struct strbuf sb = STRBUF_INIT(1 << 16);
	struct log_err err = {0};

	CHECK_INT(mirror_render(&sb, "https://docker.io", &t, false, NULL, NULL, &err), 0);
	CHECK_STR(sb.buf, "server = 'https://registry-1.docker.io'\n"
			  "\n"
			  "[host.'http://127.0.0.1:5000']\n"
			  "capabilities = ['pull']\n"
			  "\n"
			  "[host.'http://127.0.0.1:5001']\n"
			  "capabilities = ['pull']");
	sb_reset(&sb);
	CHECK_INT(mirror_render(&sb, "_default", &t, true, "200ms", "Basic aGVsbG86d29ybGQ=", &err),
		  0);
	CHECK_STR(sb.buf, "[host.'http://127.0.0.1:5000']\n"
			  "capabilities = ['pull', 'resolve']\n"
			  "dial_timeout = '200ms'\n"
			  "[host.'http://127.0.0.1:5000'.header]\n"
			  "Authorization = 'Basic aGVsbG86d29ybGQ='\n"
			  "\n"
			  "[host.'http://127.0.0.1:5001']\n"
			  "capabilities = ['pull', 'resolve']\n"
			  "dial_timeout = '200ms'\n"
			  "[host.'http://127.0.0.1:5001'.header]\n"
			  "Authorization = 'Basic aGVsbG86d29ybGQ='");
	sb_reset(&sb);
	/* only https://docker.io maps to registry-1; http://docker.io keeps its URL */
	CHECK_INT(mirror_render(&sb, "http://docker.io", &t, true, NULL, NULL, &err), 0);
	CHECK(strncmp(sb.buf, "server = 'http://docker.io'\n\n", 29) == 0);
	sb_reset(&sb);
	CHECK_INT(mirror_render(&sb, "ghcr.io", &t, true, NULL, NULL, &err), 0);
	CHECK(strncmp(sb.buf, "server = 'https://ghcr.io'\n\n", 28) == 0);
	sb_reset(&sb);
	CHECK_INT(mirror_render(&sb, "ghcr.io", &t, true, "fast", NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "dial timeout 'fast' is not a duration like 200ms");
	sb_free(&sb);
	mirror_list_free(&t);
}

TEST(registry_dir_names)
{
	static const char *const bad[] = {
	    "../../etc", "..",	    "docker.io/x", "https://a/b", "https://u@a", "ftp://a",
	    "_backup",	 "a b",	    "a:0",	   "a:65536",	  "-a",		 "a..b",
	    "",		 "http://", "[::1",	   NULL};
	struct log_err err = {0};
	char dir[256];
	int i;

	CHECK_INT(mirror_registry_dir("https://docker.io", dir, sizeof(dir), &err), 0);
	CHECK_STR(dir, "docker.io");
	CHECK_INT(mirror_registry_dir("http://foo.bar:5000", dir, sizeof(dir), &err), 0);
	CHECK_STR(dir, "foo.bar:5000");
	CHECK_INT(mirror_registry_dir("*", dir, sizeof(dir), &err), 0);
	CHECK_STR(dir, "_default");
	CHECK_INT(mirror_registry_dir("HTTPS://[fd00::1]:5000", dir, sizeof(dir), &err), 0);
	CHECK_STR(dir, "[fd00::1]:5000");
	for (i = 0; bad[i]; i++) {
		int r = mirror_registry_dir(bad[i], dir, sizeof(dir), &err);

		if (r != -EINVAL)
			fprintf(stderr, "  accepted '%s'\n", bad[i]);
		CHECK_INT(r, -EINVAL);
	}
	mirror_registry_dir("../../etc", dir, sizeof(dir), &err);
	CHECK_STR(err.msg, "registry '../../etc': not a host[:port] or an http(s):// URL");
}

/* dial_timeout is Go's time.ParseDuration (pkg/goconv, tested with Go's vectors there). */
TEST(durations)
{
	static const char *const ok[] = {"200ms", "1m30s", "1.5h", ".5s", "0", "10\xc2\xb5s"};
	static const char *const bad[] = {"", "200", "soon", "1d", "ms", "1.s."};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CHECK(mirror_dial_timeout_problem(ok[i]) == NULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_STR(mirror_dial_timeout_problem(bad[i]), "is not a duration like 200ms");
	CHECK_STR(mirror_dial_timeout_problem("99999999999999999999h"),
		  "is out of range: a Go duration is at most 2562047h47m16.854775807s");
	CHECK_STR(mirror_dial_timeout_problem("-3us"),
		  "is negative: every dial to the mirror would fail at once");
	CHECK(mirror_dial_timeout_problem("200ms") == NULL);
	CHECK(mirror_dial_timeout_problem("-0.0s") == NULL);
	CHECK(mirror_dial_timeout_problem("-0s1ms") != NULL);
	CHECK(mirror_dial_timeout_problem("1d") != NULL);
}

/* Mirror targets: ${VAR} from the environment, an IPv6 host bracketed, a target given twice. */
TEST(expand_targets)
{
	struct mirror_list in = list_of("http://${NODE_IP}:30020", "http://${NODE_IP}:30021");
	struct mirror_list out = {0};
	struct log_err err = {0};

	REQUIRE(setenv("NODE_IP", "fd00::1", 1) == 0);
	CHECK_INT(mirror_expand_targets(&in, &out, &err), 0);
	REQUIRE_INT((int)out.n, 2);
	CHECK_STR(out.v[0], "http://[fd00::1]:30020");
	CHECK_STR(out.v[1], "http://[fd00::1]:30021");
	mirror_list_free(&out);
	mirror_list_free(&in);
	REQUIRE(setenv("NODE_IP", "10.0.0.5", 1) == 0);
	in = list_of("http://${NODE_IP}:30020", NULL);
	CHECK_INT(mirror_expand_targets(&in, &out, &err), 0);
	CHECK_STR(out.n ? out.v[0] : NULL, "http://10.0.0.5:30020");
	mirror_list_free(&out);
	mirror_list_free(&in);
	REQUIRE(unsetenv("NP_TEST_UNSET") == 0);
	in = list_of("http://${NP_TEST_UNSET}:30020", NULL);
	CHECK_INT(mirror_expand_targets(&in, &out, &err), -EINVAL);
	CHECK_STR(
	    err.msg,
	    "mirror target 'http://${NP_TEST_UNSET}:30020': environment variable NP_TEST_UNSET is not set");
	mirror_list_free(&out);
	mirror_list_free(&in);
	in = list_of("http://Mirror:1", "http://mirror:1");
	CHECK_INT(mirror_expand_targets(&in, &out, &err), -EINVAL);
	CHECK_STR(
	    err.msg,
	    "mirror target 'http://mirror:1' given twice: containerd would refuse the file (duplicate [host] table)");
	mirror_list_free(&out);
	mirror_list_free(&in);
}

struct seen {
	int n, errors;
	char text[8][600];
};

static void collect(void *data, const struct mirror_finding *f)
{
	struct seen *s = data;

	if (f->sev == MIRROR_ERROR)
		s->errors++;
	if (s->n < 8)
		snprintf(s->text[s->n], sizeof(s->text[0]), "%d:%d: %s: %s", f->line, f->col,
			 f->sev == MIRROR_ERROR ? "error" : "warning", f->msg);
	s->n++;
}

static int check_text(const char *text, const char *version, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	return mirror_check_hosts(text, strlen(text), "h.toml", "/nonexistent", version, collect,
				  s);
}

struct last {
	int n;		/* findings seen */
	size_t msg_len; /* strlen of the latest msg */
	char fix[64];	/* the latest fix, "" for none */
	int line, col;	/* the latest position */
};

static void keep_last(void *data, const struct mirror_finding *f)
{
	struct last *l = data;

	l->n++;
	l->msg_len = strlen(f->msg);
	snprintf(l->fix, sizeof(l->fix), "%s", f->fix ? f->fix : "");
	l->line = f->line;
	l->col = f->col;
}

static void vfind(mirror_report_fn report, void *data, enum mirror_severity sev, int *worst,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void vfind(mirror_report_fn report, void *data, enum mirror_severity sev, int *worst,
		  const char *fmt, ...)
{
	struct mirror_finding f = {sev, "f", 1, 2, NULL, NULL};
	va_list ap;

	va_start(ap, fmt);
	mirror_vfind(report, data, &f, worst, fmt, ap);
	va_end(ap);
}

/* finding: severities fold into the worst, nobody listening is fine, a long message is cut. */
TEST(finding_fold)
{
	static const enum mirror_severity sev[] = {MIRROR_OK, MIRROR_WARNING, MIRROR_ERROR,
						   MIRROR_WARNING};
	static const int worst_after[] = {MIRROR_CLEAN, MIRROR_WARNINGS, MIRROR_ERRORS,
					  MIRROR_ERRORS};
	struct mirror_checker c = {"/x/config.toml", NULL,	{0}, keep_last, NULL,
				   MIRROR_CLEAN,     "the fix", NULL};
	struct log_err err = {0};
	struct last l = {0};
	char big[700];
	int worst = MIRROR_CLEAN;
	size_t i;

	for (i = 0; i < sizeof(sev) / sizeof(sev[0]); i++) {
		vfind(keep_last, &l, sev[i], &worst, "finding %zu", i);
		CHECK_INT(worst, worst_after[i]);
	}
	CHECK_INT(l.n, 4);
	worst = MIRROR_CLEAN;
	vfind(NULL, NULL, MIRROR_WARNING, &worst, "nobody listens");
	CHECK_INT(worst, MIRROR_WARNINGS);
	memset(big, 'm', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	vfind(keep_last, &l, MIRROR_WARNING, &worst, "%s", big);
	CHECK_INT((int)l.msg_len, 511);
	/* mirror_found: c's fix goes with the next finding only */
	c.data = &l;
	mirror_found(&c, MIRROR_WARNING, 3, 4, "first");
	CHECK_STR(l.fix, "the fix");
	CHECK(c.fix == NULL);
	mirror_found(&c, MIRROR_WARNING, 3, 4, "second");
	CHECK_STR(l.fix, "");
	CHECK_INT(c.worst, MIRROR_WARNINGS);
	/* a parse error's "<file>:<line>:<col>: " becomes the finding's position */
	log_err_set(&err, -EINVAL, "/x/config.toml:7:9: unclosed table header");
	mirror_found_parse_error(&c, &err);
	CHECK_INT(l.line, 7);
	CHECK_INT(l.col, 9);
	CHECK_INT(c.worst, MIRROR_ERRORS);
}

TEST(check_findings)
{
	struct seen s;

	CHECK_INT(check_text("server = 'https://registry-1.docker.io'\n"
			     "\n"
			     "[host.'http://10.0.0.5:30020']\n"
			     "capabilities = ['pull', 'resolve']\n"
			     "dial_timeout = '200ms'",
			     "2.1.0", &s),
		  MIRROR_CLEAN);
	CHECK_INT(s.n, 0);
	CHECK_INT(check_text("[host.'http://a:1']\ndial_timeout = '200ms'", "1.7.27", &s),
		  MIRROR_WARNINGS);
	CHECK_STR(
	    s.text[0],
	    "2:1: warning: containerd 1.7.27 ignores 'dial_timeout' (read from 2.0.7 and 2.1.0 on): a dead mirror costs 30 s per request");
	CHECK_INT(check_text("[host.'http://a:1']\ndial_timeout = '200ms'", "2.0.7", &s),
		  MIRROR_CLEAN);
	CHECK_INT(check_text("[host.'http://a:1']\ndial_timeout = '200ms'", "2.0.6", &s),
		  MIRROR_WARNINGS);
	CHECK_INT(check_text("[host.'http://a:1']\ndial_timeout = 'soon'", NULL, &s),
		  MIRROR_ERRORS);
	CHECK_STR(s.text[0], "2:16: error: 'dial_timeout' 'soon' is not a duration like '200ms'");
	CHECK_INT(check_text("[host.'http://a:1']\ndial_timeout = '-200ms'", "2.1.0", &s),
		  MIRROR_ERRORS);
	CHECK_STR(
	    s.text[0],
	    "2:16: error: 'dial_timeout' '-200ms' is negative: every dial to this mirror fails at once");
	CHECK_INT(check_text("server = 'https://x'", "1.6.20", &s), MIRROR_ERRORS);
	CHECK_INT(check_text("server = 'https://x'", "2.0.0", &s), MIRROR_WARNINGS);
	CHECK_STR(s.text[0], "0:0: warning: no [host.'…'] table: no mirror is used");
	CHECK_INT(check_text("host.'http://a:1'.capabilities = ['pull']", "2.2.0", &s),
		  MIRROR_WARNINGS);
	CHECK_STR(
	    s.text[0],
	    "1:6: warning: host 'http://a:1' is not written as a [host.'…'] table: containerd 2.x ignores it");
	CHECK_INT(check_text("host.'http://a:1'.capabilities = ['pull']", "1.6.20", &s),
		  MIRROR_CLEAN);
	CHECK_INT(check_text("[host.'http://[::1]:5']\n", "2.0.0", &s), MIRROR_CLEAN);
	CHECK_INT(check_text("[host.'http://[::1]:5']\n", NULL, &s), MIRROR_ERRORS);
	CHECK_INT(check_text("[host.'http://a:1']\nca = 'ca.pem'\nclient = [['c.pem', ''], 'k']\n",
			     NULL, &s),
		  MIRROR_ERRORS);
	CHECK_INT(s.n, 3);
	CHECK_STR(
	    s.text[0],
	    "2:6: error: ca file '/nonexistent/ca.pem' cannot be read (No such file or directory): every pull of this registry fails");
	CHECK_INT(check_text("[host.'http://a:1']\n"
			     "capabilities = ['pull', 'Push', 'resolve', 'x']\n"
			     "[host.'http://a:1'.header]\n"
			     "A = ['b', 1]\n",
			     NULL, &s),
		  MIRROR_ERRORS);
	CHECK_INT(s.errors, 2);
	CHECK_STR(s.text[0], "2:44: error: unknown capability 'x' (pull, resolve or push)");
	CHECK_STR(
	    s.text[1],
	    "4:11: error: header 'A' must be a string or an array of strings, not an integer");
	CHECK_INT(check_text("", NULL, &s), MIRROR_WARNINGS);
	CHECK_INT(check_text("[host.'http://a:1'\n", NULL, &s), MIRROR_ERRORS);
	CHECK_STR(s.text[0], "1:19: error: unclosed table header");
}

struct ctrd_seen {
	int n;		/* findings */
	int sev, line;	/* the first one's */
	char msg[600];	/* the first one's */
	char fix[1024]; /* the first one's fix, "" for none */
};

static void ctrd_collect(void *data, const struct mirror_finding *f)
{
	struct ctrd_seen *s = data;

	if (s->n++ > 0)
		return;
	s->sev = (int)f->sev;
	s->line = f->line;
	snprintf(s->msg, sizeof(s->msg), "%s", f->msg);
	snprintf(s->fix, sizeof(s->fix), "%s", f->fix ? f->fix : "");
}

/* check_ctrd: containerd's config.toml without config_path, then with the wrong one, then right. */
TEST(check_ctrd_config_path)
{
	const char *dir = harness_tmpdir();
	char file[256], certs[256], text[512], want[512];
	struct mirror_opts o;
	struct mirror_checker c = {NULL, NULL, {0}, ctrd_collect, NULL, MIRROR_CLEAN, NULL, &o};
	struct ctrd_seen s = {0};

	mirror_opts_init(&o);
	o.distro = MIRROR_DISTRO_KUBEADM;
	snprintf(file, sizeof(file), "%s/config.toml", dir);
	snprintf(certs, sizeof(certs), "%s/certs.d", dir);
	REQUIRE(mkdir(certs, 0755) == 0);
	harness_put_str(dir, "config.toml",
			"version = 2\n"
			"[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
			"snapshotter = \"overlayfs\"\n");
	c.file = file;
	c.data = &s;
	mirror_check_ctrd(&c, certs);
	CHECK_INT(s.n, 1);
	CHECK_INT(s.sev, MIRROR_ERROR);
	CHECK_INT(s.line, 0);
	snprintf(
	    want, sizeof(want),
	    "[plugins.\"io.containerd.grpc.v1.cri\".registry] config_path is not set: the CRI never reads %s",
	    certs);
	CHECK_STR(s.msg, want);
	CHECK_STR(
	    s.fix,
	    "in /etc/containerd/config.toml (config version 2) set the following, then restart containerd (systemctl restart containerd):\n"
	    "  [plugins.\"io.containerd.grpc.v1.cri\".registry]\n"
	    "    config_path = \"/etc/containerd/certs.d\"");
	CHECK_INT(c.worst, MIRROR_ERRORS);
	CHECK(c.file == file && c.fix == NULL);

	harness_put_str(dir, "config.toml",
			"version = 2\n"
			"[plugins.\"io.containerd.grpc.v1.cri\".registry]\n"
			"config_path = \"/elsewhere\"\n");
	memset(&s, 0, sizeof(s));
	c.worst = MIRROR_CLEAN;
	mirror_check_ctrd(&c, certs);
	CHECK_INT(s.n, 1);
	CHECK_INT(s.line, 3);
	snprintf(want, sizeof(want), "config_path '/elsewhere' does not include %s", certs);
	CHECK_STR(s.msg, want);

	snprintf(text, sizeof(text),
		 "version = 2\n"
		 "[plugins.\"io.containerd.grpc.v1.cri\".registry]\n"
		 "config_path = \"/elsewhere:%s\"\n",
		 certs);
	harness_put_str(dir, "config.toml", text);
	memset(&s, 0, sizeof(s));
	c.worst = MIRROR_CLEAN;
	mirror_check_ctrd(&c, certs);
	CHECK_INT(s.n, 0);
	CHECK_INT(c.worst, MIRROR_CLEAN);
	mirror_opts_free(&o);
	harness_rm_tree(dir);
}

/* probe: nothing to probe is one warning and no network; a bad --image is refused first. */
TEST(probe_without_hosts)
{
	struct mirror_opts o;
	struct mirror_list none = {0};
	struct log_err err = {0};
	struct seen s = {0};

	mirror_opts_init(&o);
	o.cmd = MIRROR_CHECK;
	o.config_path = strdup("/nonexistent/certs.d");
	o.probe = true;
	o.report = collect;
	o.report_data = &s;
	CHECK_INT(mirror_probe_run(&o, &none, &err), MIRROR_WARNINGS);
	CHECK_INT(s.n, 1);
	CHECK_STR(
	    s.text[0],
	    "0:0: warning: --probe: no mirror to probe (no --mirror-target, no [host] in any hosts.toml)");
	memset(&s, 0, sizeof(s));
	o.image = strdup("a b");
	CHECK_INT(mirror_probe_run(&o, &none, &err), -EINVAL);
	CHECK_STR(err.msg, "--image 'a b': not an image reference");
	CHECK_INT(s.n, 0);
	mirror_opts_free(&o);
}

TEST(opts_env_and_yaml)
{
	const char *dir = harness_tmpdir();
	char path[256];
	struct mirror_opts o;
	struct log_err err = {0};
	FILE *f;

	snprintf(path, sizeof(path), "%s/o.yaml", dir);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("mirroredRegistries: [docker.io, 'ghcr.io']\n"
	      "mirrorTargets:\n"
	      "  - http://a:1\n"
	      "prependExisting: yes\n"
	      "dialTimeout: 200ms\n",
	      f);
	fclose(f);
	setenv("MIRROR_TARGETS", "http://b:2, http://c:3", 1);
	setenv("RESOLVE_TAGS", "false", 1);
	mirror_opts_init(&o);
	o.config_file = strdup(path);
	CHECK_INT(mirror_opts_resolve(&o, &err), 0);
	CHECK_STR(o.config_path, MIRROR_DEFAULT_CONFIG_PATH);
	REQUIRE_INT(o.targets.n, 2);
	CHECK_STR(o.targets.v[1], "http://c:3");
	REQUIRE_INT(o.registries.n, 2);
	CHECK_STR(o.registries.v[1], "ghcr.io");
	CHECK_INT(o.resolve_tags, 0);
	CHECK_INT(o.prepend_existing, 1);
	CHECK_STR(o.dial_timeout, "200ms");
	mirror_opts_free(&o);
	unsetenv("MIRROR_TARGETS");
	unsetenv("RESOLVE_TAGS");

	f = fopen(path, "w");
	REQUIRE(f);
	fputs("mirrorTargets: http://a:1\n", f);
	fclose(f);
	mirror_opts_init(&o);
	o.config_file = strdup(path);
	CHECK_INT(mirror_opts_resolve(&o, &err), -EINVAL);
	CHECK(strstr(err.msg, "o.yaml:1:16: mirrorTargets: expected a list") != NULL);
	mirror_opts_free(&o);
	harness_rm_tree(dir);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

TEST(configure_cleanup_roundtrip)
{
	const char *dir = harness_tmpdir();
	char base[256], p[512];
	struct mirror_opts o;
	struct log_err err = {0};
	struct stat st1, st2;

	snprintf(base, sizeof(base), "%s/certs.d", dir);
	mkdir(base, 0755);
	snprintf(p, sizeof(p), "%s/docker.io", base);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/docker.io/hosts.toml", base);
	write_file(p, "server = 'https://mine'\n");
	REQUIRE(stat(p, &st1) == 0);

	mirror_opts_init(&o);
	o.cmd = MIRROR_CONFIGURE;
	o.config_path = strdup(base);
	mirror_list_add(&o.registries, "docker.io");
	mirror_list_add(&o.targets, "http://10.0.0.5:29999");
	REQUIRE_INT(mirror_opts_resolve(&o, &err), 0);
	CHECK_INT(mirror_run(&o, &err), 0);
	snprintf(p, sizeof(p), "%s/_backup/docker.io/hosts.toml", base);
	REQUIRE(stat(p, &st2) == 0);
	CHECK(st1.st_ino == st2.st_ino); /* moved, not copied */
	snprintf(p, sizeof(p), "%s/docker.io/hosts.toml", base);
	REQUIRE(stat(p, &st1) == 0);
	CHECK((st1.st_mode & 0777) == 0644);
	CHECK_INT(mirror_run(&o, &err), 0);
	REQUIRE(stat(p, &st2) == 0);
	CHECK(st1.st_ino == st2.st_ino && st1.st_ctim.tv_nsec == st2.st_ctim.tv_nsec);

	o.cmd = MIRROR_CLEANUP;
	CHECK_INT(mirror_run(&o, &err), 0);
	{
		struct strbuf sb = STRBUF_INIT(4096);

		CHECK(sb_read_file(&sb, p) > 0);
		CHECK_STR(sb.buf, "server = 'https://mine'\n");
		sb_free(&sb);
	}
	snprintf(p, sizeof(p), "%s/_backup", base);
	CHECK(access(p, F_OK) != 0);
	CHECK_INT(mirror_run(&o, &err), 0);
	mirror_opts_free(&o);
	harness_rm_tree(dir);
}

/*
 * plan: what configure would write, decided by reading only. The config path
 * does not exist and nothing creates it: every registry directory is fresh,
 * its bytes are mirror_render's, and a bad set of registries is refused.
 */
TEST(plan_reads_only)
{
	const char *base = "/nonexistent/nodeprobe-plan/certs.d";
	struct strbuf want = STRBUF_INIT(4096);
	struct mirror_plan plan;
	struct mirror_opts o;
	struct log_err err = {0};
	size_t i;

	mirror_opts_init(&o);
	o.config_path = strdup(base);
	o.resolve_tags = 1;
	o.prepend_existing = 0;
	o.dial_timeout = strdup("200ms");
	mirror_list_add(&o.registries, "docker.io");
	mirror_list_add(&o.registries, "https://ghcr.io");
	mirror_list_add(&o.targets, "http://10.0.0.5:30020");
	REQUIRE_INT(mirror_plan_build(&o, false, &plan, &err), 0);
	REQUIRE_INT(plan.nw, 2);
	CHECK_STR(plan.w[0].dir, "docker.io");
	CHECK_STR(plan.w[1].dir, "ghcr.io");
	REQUIRE_INT(mirror_render(&want, "docker.io", &o.targets, true, "200ms", NULL, &err), 0);
	CHECK_STR(plan.w[0].hosts.buf, want.buf);
	CHECK_INT(plan.w[0].mode, 0644);
	CHECK(!plan.w[0].copy_backup);
	CHECK_INT(plan.managed.n, 0);
	REQUIRE_INT(mirror_plan_classify(&plan, &err), 0);
	CHECK(plan.first);
	for (i = 0; i < plan.nw; i++)
		CHECK(plan.w[i].fresh && plan.w[i].write && !plan.w[i].user_hosts);
	mirror_plan_free(&plan);
	CHECK(access(base, F_OK) != 0 && errno == ENOENT); /* nothing was made */

	mirror_list_add(&o.registries, "docker.io");
	CHECK_INT(mirror_plan_build(&o, false, &plan, &err), -EINVAL);
	CHECK_STR(err.msg, "registry 'docker.io' given twice: give it once");
	mirror_plan_free(&plan);
	mirror_list_free(&o.registries);
	mirror_list_add(&o.registries, "_default");
	mirror_list_add(&o.registries, "*");
	CHECK_INT(mirror_plan_build(&o, false, &plan, &err), -EINVAL);
	CHECK_STR(err.msg, "registries contain two wildcards (_default or *): give one");
	mirror_plan_free(&plan);
	CHECK(access(base, F_OK) != 0);
	sb_free(&want);
	mirror_opts_free(&o);
}

/* cmd: the verb table round-trips every name; an unknown one or number is refused. */
TEST(cmd_table)
{
	static const char *const names[] = {"configure", "cleanup", "check", "watch",
					    "talos-config"};
	struct mirror_opts o;
	struct log_err err = {0};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK_INT(mirror_cmd_parse(names[i]), (int)i);
	CHECK_INT(mirror_cmd_parse("configuration"), -EINVAL);
	CHECK_INT(mirror_cmd_parse(NULL), -EINVAL);
	mirror_opts_init(&o);
	o.cmd = (enum mirror_cmd)99;
	CHECK_INT(mirror_run(&o, &err), -EINVAL);
	CHECK_STR(err.msg, "unknown command");
	mirror_opts_free(&o);
}

/* Spegel's go-arg command line, as its chart renders it, becomes ours. */
TEST(spegel_args)
{
	/* mirror_spegel_args only reads argv (main's is not const) */
	const char *in[] = {"nodeprobe-mirror",
			    "configuration",
			    "--log-level=INFO",
			    "--containerd-registry-config-path=/etc/cri/conf.d/hosts",
			    "--mirrored-registries",
			    "https://docker.io",
			    "ghcr.io",
			    "--mirror-targets",
			    "http://$(NODE_IP):30020",
			    "--resolve-tags",
			    "--prepend-existing=false",
			    "--containerd-registry-config-path",
			    "/x",
			    "--resolve-tags",
			    "false",
			    "--log-level",
			    "DEBUG",
			    "--",
			    "--mirror-targets"};
	static const char *const want[] = {"nodeprobe-mirror",
					   "configure",
					   "-v",
					   "--config-path=/etc/cri/conf.d/hosts",
					   "--registry=https://docker.io",
					   "--registry=ghcr.io",
					   "--mirror-target=http://$(NODE_IP):30020",
					   "--resolve-tags=true",
					   "--prepend-existing=false",
					   "--config-path=/x",
					   "--resolve-tags=false",
					   "-vv",
					   "--",
					   "--mirror-targets"};
	struct mirror_list out = {0};
	size_t i;

	CHECK_INT(mirror_spegel_args((int)(sizeof(in) / sizeof(in[0])), (char **)in, &out), 0);
	CHECK_INT((int)out.n, (int)(sizeof(want) / sizeof(want[0])));
	for (i = 0; i < out.n && i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_STR(out.v[i], want[i]);
	mirror_list_free(&out);
	/* a list flag at the end without a value is left for the parser to name */
	{
		const char *in2[] = {"p", "configure", "--mirror-targets"};

		CHECK_INT(mirror_spegel_args(3, (char **)in2, &out), 0);
		CHECK_STR(out.v[2], "--mirror-target");
		mirror_list_free(&out);
	}
}

TEST(distro_table_and_fixes)
{
	struct strbuf sb = STRBUF_INIT(1 << 16);
	struct mirror_fix_req q = {0};
	char p[64];
	int d;

	for (d = MIRROR_DISTRO_KUBEADM; d <= MIRROR_DISTRO_AUTO; d++)
		CHECK_INT(mirror_distro_parse(mirror_distro_name((enum mirror_distro)d)), d);
	CHECK_INT(mirror_distro_parse("openshift"), -EINVAL);
	CHECK(mirror_distro_name(MIRROR_DISTRO_UNSET) == NULL);
	CHECK_STR(mirror_distro_info(MIRROR_DISTRO_TALOS)->config_path, "/etc/cri/conf.d/hosts");
	CHECK_INT(mirror_host_path(p, sizeof(p), "/host/", "/etc/x"), 0);
	CHECK_STR(p, "/host/etc/x");
	CHECK_INT(mirror_host_path(p, sizeof(p), "/", "/etc/x"), 0);
	CHECK_STR(p, "/etc/x");
	CHECK_INT(mirror_host_path(p, 8, "/host", "/etc/x"), -ENAMETOOLONG);
	/* Talos 1.7 (containerd 1.7): the v2 table in the machine.files patch */
	q.distro = MIRROR_DISTRO_TALOS;
	q.distro_version = "1.7.6";
	q.discard = true;
	CHECK_INT(mirror_distro_fix(&sb, &q), 0);
	CHECK(strstr(sb.buf, "[plugins.\"io.containerd.grpc.v1.cri\".containerd]") != NULL);
	CHECK(strstr(sb.buf, "then reboot the node") != NULL);
	sb_reset(&sb);
	q.distro_version = "1.14";
	CHECK_INT(mirror_distro_fix(&sb, &q), 0);
	CHECK(strstr(sb.buf, "kind: CRICustomizationConfig") != NULL);
	sb_reset(&sb);
	/* config_path on Talos: never overridden, Talos sets it */
	q.discard = false;
	q.config_path = true;
	CHECK_INT(mirror_distro_fix(&sb, &q), 0);
	CHECK_STR(
	    sb.buf,
	    "Talos sets config_path = /etc/cri/conf.d/hosts itself: run with --distro talos and do not override it");
	sb_reset(&sb);
	/* kubeadm on a version 3 file */
	q.distro = MIRROR_DISTRO_KUBEADM;
	q.config_version = 3;
	q.discard = true;
	CHECK_INT(mirror_distro_fix(&sb, &q), 0);
	CHECK_STR(
	    sb.buf,
	    "in /etc/containerd/config.toml (config version 3) set the following, then restart containerd (systemctl restart containerd):\n"
	    "  [plugins.\"io.containerd.cri.v1.images\".registry]\n"
	    "    config_path = \"/etc/containerd/certs.d\"\n"
	    "  [plugins.\"io.containerd.cri.v1.images\"]\n"
	    "    discard_unpacked_layers = false");
	sb_free(&sb);
}

static void collect_output(void *data, const char *text)
{
	sb_add(data, text);
}

/* talos-config: the exact documents, the named registry's upstream after the mirror. */
TEST(talos_documents)
{
	struct mirror_opts o;
	struct strbuf out = STRBUF_INIT(1 << 16);
	struct log_err err = {0};

	mirror_opts_init(&o);
	o.cmd = MIRROR_TALOS_CONFIG;
	o.registries = list_of("docker.io", "*");
	o.targets = list_of("http://10.0.0.5:30020", NULL);
	o.output = collect_output;
	o.report_data = &out;
	CHECK_INT(mirror_talos_config(&o, &err), 0);
	CHECK_STR(out.buf, "apiVersion: v1alpha1\n"
			   "kind: RegistryMirrorConfig\n"
			   "name: docker.io\n"
			   "endpoints:\n"
			   "  - url: http://10.0.0.5:30020\n"
			   "  - url: https://registry-1.docker.io\n"
			   "---\n"
			   "apiVersion: v1alpha1\n"
			   "kind: RegistryMirrorConfig\n"
			   "name: '*'\n"
			   "endpoints:\n"
			   "  - url: http://10.0.0.5:30020\n");
	sb_free(&out);
	mirror_opts_free(&o);
}

/*
 * watch's back-off, on a clock of our own: against a fighter that undoes each
 * repair at once, the delay doubles up to 5 minutes and stays there; it ends
 * only once a minute went by, after the delay, with nothing to repair.
 */
TEST(watch_backoff)
{
	struct mirror_backoff b = {0};
	long long t = 0, max = 0, prev;
	int i;

	for (i = 0; i < 5; i++, t += 100)
		mirror_backoff_note(&b, t);
	CHECK_INT(b.delay_ms, 2000);
	for (i = 0; i < 30; i++) {
		prev = b.delay_ms;
		t += b.delay_ms + 100; /* the fighter struck again before the delay was over */
		CHECK(mirror_backoff_note(&b, t) >= 0);
		CHECK(b.delay_ms >= prev); /* never back to full speed while the fight goes on */
		max = b.delay_ms > max ? b.delay_ms : max;
	}
	CHECK_INT(max, 300000);
	CHECK_INT(b.delay_ms, 300000);
	/* the next change comes 61 s after the delay was over: the fight has ended */
	t += b.delay_ms + 61000;
	CHECK_INT(mirror_backoff_note(&b, t), -1);
	CHECK_INT(b.delay_ms, 0);
	/* one repair a minute is no fight */
	for (i = 0; i < 10; i++) {
		t += 61000;
		CHECK_INT(mirror_backoff_note(&b, t), -1);
		CHECK_INT(b.delay_ms, 0);
	}
}
