/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/listen: the --listen forms both HTTP endpoints take, and their refusals. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>

#include "harness.h"
#include "listen/listen.h"
#include "log/log.h"

/* the address and port of ss as "A:P" or "[A%zone-index]:P" */
static const char *show(const struct sockaddr_storage *ss)
{
	static char out[96];
	char a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;

		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		snprintf(out, sizeof(out), "%s:%u", a, ntohs(s->sin_port));
	} else {
		const struct sockaddr_in6 *s = (const void *)ss;

		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		snprintf(out, sizeof(out), "[%s%%%u]:%u", a, s->sin6_scope_id, ntohs(s->sin6_port));
	}
	return out;
}

TEST(forms_taken)
{
	static const struct {
		const char *in, *want;
		bool any;
	} ok[] = {
	    {":9090", "0.0.0.0:9090", true},
	    {"127.0.0.1:8080", "127.0.0.1:8080", false},
	    {"0.0.0.0:1", "0.0.0.0:1", true},
	    {"[::]:65535", "[::%0]:65535", true},
	    {"[::1]:9090", "[::1%0]:9090", false},
	    {"[fe80::1%lo]:80", "[fe80::1%1]:80", false},
	    {"[fe80::1%1]:80", "[fe80::1%1]:80", false},
	    {"[fe80::1%]:80", "[fe80::1%0]:80", false},
	    {"0.0.0.0:9090", "0.0.0.0:9090", true},
	    {"[::]:9090", "[::%0]:9090", true},
	    {"[]:80", "0.0.0.0:80", true},
	    {"[1.2.3.4]:80", "1.2.3.4:80", false},
	    {":+80", "0.0.0.0:80", true},
	    {":00080", "0.0.0.0:80", true},
	};
	struct sockaddr_storage ss;
	struct log_err err;
	size_t i;
	bool any;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK_INT(listen_parse(ok[i].in, false, &ss, &any, &err), 0);
		CHECK_STR(show(&ss), ok[i].want);
		CHECK_INT(any, ok[i].any);
	}
	/* port 0 (the kernel picks) only when asked for */
	CHECK_INT(listen_parse("127.0.0.1:0", true, &ss, &any, &err), 0);
	CHECK_STR(show(&ss), "127.0.0.1:0");
	CHECK_INT(listen_parse("127.0.0.1:0", false, &ss, &any, &err), -EINVAL);
	CHECK_STR(err.msg, "--listen '127.0.0.1:0': port '0' is not a number from 1 to 65535");
}

TEST(forms_refused_with_one_line_naming_them)
{
	static const struct {
		const char *in, *msg;
	} bad[] = {
	    {"1.2.3.4", "--listen '1.2.3.4': no port: want HOST:PORT, :PORT or [V6]:PORT"},
	    {"1.2.3.4:", "--listen '1.2.3.4:': no port: want HOST:PORT, :PORT or [V6]:PORT"},
	    {"[::1]", "--listen '[::1]': no port: want HOST:PORT, :PORT or [V6]:PORT"},
	    {":65536", "--listen ':65536': port '65536' is not a number from 0 to 65535"},
	    {":1234567", "--listen ':1234567': port '1234567' is not a number from 0 to 65535"},
	    {":-1", "--listen ':-1': port '-1' is not a number from 0 to 65535"},
	    {":+", "--listen ':+': port '+' is not a number from 0 to 65535"},
	    {":80x", "--listen ':80x': port '80x' is not a number from 0 to 65535"},
	    {"localhost:80",
	     "--listen 'localhost:80': address 'localhost' is not a numeric IPv4 address or a [bracketed] IPv6 one"},
	    {"1.2.3:80",
	     "--listen '1.2.3:80': address '1.2.3' is not a numeric IPv4 address or a [bracketed] IPv6 one"},
	    {"::1:80",
	     "--listen '::1:80': address '::1' is not a numeric IPv4 address or a [bracketed] IPv6 one: an IPv6 address needs brackets: [::1]:PORT"},
	    {"[::1:80",
	     "--listen '[::1:80': address '[::1' is not a numeric IPv4 address or a [bracketed] IPv6 one"},
	    {"[::1]x:80",
	     "--listen '[::1]x:80': address '[::1]x' is not a numeric IPv4 address or a [bracketed] IPv6 one"},
	    {"[1.2.3.4%lo]:80",
	     "--listen '[1.2.3.4%lo]:80': address '[1.2.3.4%lo]' is not a numeric IPv4 address or a [bracketed] IPv6 one"},
	    {"[fe80::1%nosuchif0]:80",
	     "--listen '[fe80::1%nosuchif0]:80': no interface 'nosuchif0' here"},
	};
	struct sockaddr_storage ss;
	struct log_err err;
	size_t i;
	bool any;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(listen_parse(bad[i].in, true, &ss, &any, &err), -EINVAL);
		CHECK_STR(err.msg, bad[i].msg);
	}
}

/* The option callbacks' check gives listen_parse's line; a wildcard's [::] keeps its port. */
TEST(check_and_any6)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 six;
	char msg[64];
	bool any;

	CHECK_INT(listen_check(":9090", false, msg, sizeof(msg)), 0);
	CHECK_INT(listen_check(":0", false, msg, sizeof(msg)), -1);
	CHECK_STR(msg, "--listen ':0': port '0' is not a number from 1 to 65535");
	CHECK_INT(listen_check(":0", true, msg, sizeof(msg)), 0);
	CHECK_INT(listen_parse("0.0.0.0:8080", false, &ss, &any, NULL), 0);
	listen_any6(&ss, &six);
	CHECK_STR(show((struct sockaddr_storage *)&six), "[::%0]:8080");
	CHECK_INT(listen_parse("[::]:8081", false, &ss, &any, NULL), 0);
	listen_any6(&ss, &six);
	CHECK_STR(show((struct sockaddr_storage *)&six), "[::%0]:8081");
}
