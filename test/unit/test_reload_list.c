/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/reload's paged LIST (reload_list.c) as --namespace-selector uses it, against
 * a canned HTTP server in a child process: the page cap, and a restart after an expired token. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "harness.h"
#include "reload/reload.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

/* What the server answers: LIST pages of one Namespace each, "p<k>" continuing at page k. */
struct srv {
	int npages;    /* pages in a pass; 0: endless (every page has a new token) */
	int expire;    /* the first request with a continue token is answered 410 */
	pid_t pid;     /* the child serving */
	int port;      /* its port on 127.0.0.1 */
	char log[128]; /* the request targets, one a line */
	char url[64];  /* http://127.0.0.1:<port> */
};

static void reply(int fd, const char *status, const char *body)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n",
			 status, strlen(body));

	if (write(fd, head, (size_t)n) != n || write(fd, body, strlen(body)) < 0)
		_exit(1);
}

/* One request a connection; pass 1 names its Namespaces ns<k>, later passes (after a 410) new<k>.
 */
static void serve(const struct srv *s, int lfd)
{
	int logfd = open(s->log, O_WRONLY | O_APPEND | O_CREAT, 0600), pass = 0, expired = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(60);
	for (;;) {
		char req[16384], body[512], *sp, *end, *c;
		size_t len = 0;
		int fd = accept(lfd, NULL, NULL), k = 0;

		if (fd < 0)
			_exit(1);
		req[0] = 0;
		while (!strstr(req, "\r\n\r\n") && len < sizeof(req) - 1) {
			ssize_t n = read(fd, req + len, sizeof(req) - 1 - len);

			if (n <= 0)
				_exit(1);
			len += (size_t)n;
			req[len] = 0;
		}
		sp = strchr(req, ' ');
		end = sp ? strchr(sp + 1, ' ') : NULL;
		if (!end)
			_exit(1);
		*end = 0;
		dprintf(logfd, "%s\n", sp + 1);
		c = strstr(sp + 1, "continue=p");
		if (c)
			k = atoi(c + 10);
		else
			pass++;
		if (c && s->expire && !expired) {
			expired = 1;
			reply(
			    fd, "410 Gone",
			    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
			    "\"Failure\",\"message\":\"The provided continue parameter is too old to "
			    "display a consistent list result.\",\"reason\":\"Expired\",\"code\":410}");
			close(fd);
			continue;
		}
		if (!s->npages || k + 1 < s->npages)
			snprintf(body, sizeof(body),
				 "{\"kind\":\"NamespaceList\",\"apiVersion\":\"v1\",\"metadata\":{"
				 "\"resourceVersion\":\"7\",\"continue\":\"p%d\"},\"items\":[{"
				 "\"metadata\":{\"name\":\"%s%d\"}}]}",
				 k + 1, pass > 1 ? "new" : "ns", k);
		else
			snprintf(body, sizeof(body),
				 "{\"kind\":\"NamespaceList\",\"apiVersion\":\"v1\",\"metadata\":{"
				 "\"resourceVersion\":\"7\"},\"items\":[{\"metadata\":{\"name\":"
				 "\"%s%d\"}}]}",
				 pass > 1 ? "new" : "ns", k);
		reply(fd, "200 OK", body);
		close(fd);
	}
}

static void srv_start(struct srv *s)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	REQUIRE(lfd >= 0);
	REQUIRE(bind(lfd, (struct sockaddr *)&a, sizeof(a)) == 0);
	REQUIRE(listen(lfd, 16) == 0);
	REQUIRE(getsockname(lfd, (struct sockaddr *)&a, &alen) == 0);
	s->port = ntohs(a.sin_port);
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", s->port);
	snprintf(s->log, sizeof(s->log), "%s/requests", harness_tmpdir());
	s->pid = fork();
	REQUIRE(s->pid >= 0);
	if (s->pid == 0)
		serve(s, lfd);
	close(lfd);
}

static void srv_stop(struct srv *s)
{
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
}

/* The request targets the server saw, joined by " " (static buffer). */
static const char *srv_requests(const struct srv *s)
{
	static char buf[4096];
	FILE *f = fopen(s->log, "r");
	size_t n = 0;
	char line[512];

	buf[0] = 0;
	while (f && fgets(line, sizeof(line), f) && n + strlen(line) < sizeof(buf)) {
		line[strcspn(line, "\n")] = 0;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " " : "", line);
	}
	if (f)
		fclose(f);
	return buf;
}

/* A controller with only what --namespace-selector's LIST uses: options, client, URL buffer. */
static void ctl_setup(struct ctl *c, struct reload_opts *o, const struct srv *s)
{
	struct kube_config cfg = {0};
	struct log_err err = {0};

	reload_opts_init(o);
	o->namespace_selector = "team";
	o->page_size = 1;
	memset(c, 0, sizeof(*c));
	c->o = o;
	sb_init(&c->url, 64 * 1024);
	cfg.server = strdup(s->url);
	REQUIRE(cfg.server);
	REQUIRE_INT(kube_client_new(&c->cl, &cfg, &err), 0);
	kube_config_free(&cfg);
}

static void ctl_teardown(struct ctl *c)
{
	reload_nsel_free(c);
	kube_client_free(c->cl);
	sb_free(&c->url);
}

#define Q "/api/v1/namespaces?labelSelector=team&limit=1"

/* At the page cap with a continue token still there, the Namespace LIST is an error: a partial set
 * of selected namespaces would leave workloads in the others never reloaded. */
TEST(nsel_list_at_page_cap_is_an_error)
{
	struct srv s = {.npages = 0};
	struct reload_opts o;
	struct ctl c;
	struct log_err err = {0};
	char want[512];

	srv_start(&s);
	ctl_setup(&c, &o, &s);
	c.in.list_max_pages = 3;
	CHECK_INT(reload_nsel_start(&c, &err), KUBE_EHTTP);
	snprintf(want, sizeof(want), "LIST %s" Q "&continue=p2: more than 3 pages", s.url);
	CHECK_STR(err.msg, want);
	CHECK_STR(srv_requests(&s), Q " " Q "&continue=p1 " Q "&continue=p2");
	ctl_teardown(&c);
	srv_stop(&s);
}

/* A LIST of exactly the cap's pages is whole: every namespace is selected. */
TEST(nsel_list_of_cap_pages_is_whole)
{
	struct srv s = {.npages = 3};
	struct reload_opts o;
	struct ctl c;
	struct log_err err = {0};

	srv_start(&s);
	ctl_setup(&c, &o, &s);
	c.in.list_max_pages = 3;
	CHECK_INT(reload_nsel_start(&c, &err), 0);
	CHECK_STR(srv_requests(&s), Q " " Q "&continue=p1 " Q "&continue=p2");
	CHECK(reload_nsel_selected(&c, "ns0"));
	CHECK(reload_nsel_selected(&c, "ns2"));
	CHECK(!reload_nsel_selected(&c, "ns3"));
	ctl_teardown(&c);
	srv_stop(&s);
}

/* 410 on a continue token: the LIST starts over from the first page, and what the first pass saw
 * (ns0, gone from the second pass) is not selected. */
TEST(nsel_list_restarts_after_expired_token)
{
	struct srv s = {.npages = 3, .expire = 1};
	struct reload_opts o;
	struct ctl c;
	struct log_err err = {0};

	srv_start(&s);
	ctl_setup(&c, &o, &s);
	CHECK_INT(reload_nsel_start(&c, &err), 0);
	CHECK_STR(srv_requests(&s),
		  Q " " Q "&continue=p1 " Q " " Q "&continue=p1 " Q "&continue=p2");
	CHECK(!reload_nsel_selected(&c, "ns0"));
	CHECK(reload_nsel_selected(&c, "new0"));
	CHECK(reload_nsel_selected(&c, "new1"));
	CHECK(reload_nsel_selected(&c, "new2"));
	ctl_teardown(&c);
	srv_stop(&s);
}
