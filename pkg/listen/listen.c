// SPDX-License-Identifier: GPL-2.0-or-later
/* listen: see listen.h. The forms follow Go's net.SplitHostPort and parsePort (go1.19
 * src/net/ipsock.go, port.go) and its wildcard rule (ipsock_posix.go favoriteAddrFamily). */
#include "listen/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/log.h"

/* host (NUL-terminated, brackets gone when v6) into ss; 0, or -1 when it is no address */
static int host_addr(char *host, bool v6, struct sockaddr_storage *ss, bool *any, const char *s,
		     struct log_err *err)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	char *pct = v6 ? strchr(host, '%') : NULL;

	if (!*host || (!v6 && inet_pton(AF_INET, host, &sin->sin_addr) == 1)) {
		sin->sin_family = AF_INET; /* "" is INADDR_ANY, all zeros */
		*any = sin->sin_addr.s_addr == htonl(INADDR_ANY);
		return 0;
	}
	if (!v6)
		return -1;
	if (pct) {
		*pct++ = 0;
		/* a name, or an index as Go's zone cache takes it; "" is none */
		sin6->sin6_scope_id = *pct ? if_nametoindex(pct) : 0;
		if (!sin6->sin6_scope_id && *pct && strspn(pct, "0123456789") == strlen(pct) &&
		    strlen(pct) < 10)
			sin6->sin6_scope_id = (uint32_t)strtoul(pct, NULL, 10);
		if (!sin6->sin6_scope_id && *pct)
			return log_err_set(err, -EINVAL, "--listen '%s': no interface '%s' here", s,
					   pct);
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		*any = IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr);
		return 0;
	}
	/* Go takes "[1.2.3.4]:80" too */
	return pct ? -1 : host_addr(host, false, ss, any, s, err);
}

int listen_parse(const char *s, bool port0, struct sockaddr_storage *ss, bool *any,
		 struct log_err *err)
{
	const char *rb = s[0] == '[' ? strchr(s, ']') : NULL, *colon, *port, *h = s;
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	unsigned long p = 0;
	size_t n, i;
	bool v6 = false;
	int r;

	memset(ss, 0, sizeof(*ss));
	*any = false;
	colon = rb && rb[1] == ':' ? rb + 1 : rb && !rb[1] ? NULL : strrchr(s, ':');
	if (!colon || !colon[1])
		return log_err_set(err, -EINVAL,
				   "--listen '%s': no port: want HOST:PORT, :PORT or [V6]:PORT", s);
	port = colon + 1;
	i = port[0] == '+'; /* as Go's parsePort */
	for (; port[i] >= '0' && port[i] <= '9' && p <= 65535; i++)
		p = p * 10 + (unsigned long)(port[i] - '0');
	if (i == (port[0] == '+') || port[i] || p > 65535 || (p == 0 && !port0))
		return log_err_set(err, -EINVAL,
				   "--listen '%s': port '%s' is not a number from %d to 65535", s,
				   port, port0 ? 0 : 1);
	n = (size_t)(colon - s);
	if (rb && colon == rb + 1) {
		h++, n -= 2, v6 = true;
	} else if (memchr(s, ':', n) && !memchr(s, '[', n) && n < sizeof(host)) {
		return log_err_set(
		    err, -EINVAL,
		    "--listen '%s': address '%.*s' is not a numeric IPv4 address or a [bracketed] IPv6 one: an IPv6 address needs brackets: [%.*s]:PORT",
		    s, (int)n, s, (int)n, s);
	}
	if (n < sizeof(host)) {
		memcpy(host, h, n);
		host[n] = 0;
		r = host_addr(host, v6, ss, any, s, err);
		if (r == 0) {
			((struct sockaddr_in *)ss)->sin_port =
			    htons((uint16_t)p); /* same offset in v6 */
			return 0;
		}
		if (r != -1)
			return r;
	}
	if (v6)
		h--, n += 2;
	return log_err_set(
	    err, -EINVAL,
	    "--listen '%s': address '%.*s' is not a numeric IPv4 address or a [bracketed] IPv6 one",
	    s, (int)n, h);
}

int listen_check(const char *s, bool port0, char *msg, int msglen)
{
	struct sockaddr_storage ss;
	struct log_err e;
	bool any;

	if (listen_parse(s, port0, &ss, &any, &e) == 0)
		return 0;
	snprintf(msg, (size_t)msglen, "%s", e.msg);
	return -1;
}

void listen_any6(const struct sockaddr_storage *ss, struct sockaddr_in6 *six)
{
	/* sin_port and sin6_port lie at the same offset */
	*six = (struct sockaddr_in6){.sin6_family = AF_INET6,
				     .sin6_addr = IN6ADDR_ANY_INIT,
				     .sin6_port = ((const struct sockaddr_in *)ss)->sin_port};
}
