// SPDX-License-Identifier: GPL-2.0-or-later
/* listen: see listen.h. */
#include "listen/listen.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log/log.h"

int listen_parse(const char *s, bool port0, struct sockaddr_storage *ss, bool *any,
		 struct log_err *err)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	const char *colon = strrchr(s, ':'), *port, *h = s;
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 2], *pct;
	unsigned long p = 0;
	size_t n, i;

	memset(ss, 0, sizeof(*ss));
	*any = false;
	if (!colon || !colon[1])
		return log_err_set(err, -EINVAL,
				   "--listen '%s': no port: want HOST:PORT, :PORT or [V6]:PORT", s);
	port = colon + 1;
	for (i = 0; isdigit((unsigned char)port[i]) && i < 6; i++)
		;
	if (i && !port[i])
		p = strtoul(port, NULL, 10);
	if (!i || port[i] || p > 65535 || (p == 0 && !port0))
		return log_err_set(err, -EINVAL, "--listen '%s': port '%s' is not a number from %d to 65535",
				   s, port, port0 ? 0 : 1);
	n = (size_t)(colon - s);
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		h++;
		n -= 2;
		if (n && n < sizeof(host) && memchr(h, ':', n)) {
			memcpy(host, h, n);
			host[n] = 0;
			pct = strchr(host, '%');
			if (pct) {
				*pct++ = 0;
				/* a name, or an index as Go's zone cache takes it */
				sin6->sin6_scope_id = if_nametoindex(pct);
				if (!sin6->sin6_scope_id && *pct && strspn(pct, "0123456789") == strlen(pct) &&
				    strlen(pct) < 10)
					sin6->sin6_scope_id = (uint32_t)strtoul(pct, NULL, 10);
				if (!sin6->sin6_scope_id)
					return log_err_set(err, -EINVAL,
							   "--listen '%s': no interface '%s' here", s,
							   pct);
			}
			if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
				sin6->sin6_family = AF_INET6;
				sin6->sin6_port = htons((uint16_t)p);
				return 0;
			}
		}
		h--;
		n += 2;
	} else if (n < sizeof(host)) {
		memcpy(host, s, n);
		host[n] = 0;
		if (!n || inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
			sin->sin_family = AF_INET;
			sin->sin_port = htons((uint16_t)p);
			if (!n)
				sin->sin_addr.s_addr = htonl(INADDR_ANY);
			*any = !n;
			return 0;
		}
		if (memchr(host, ':', n) && !strchr(host, '['))
			return log_err_set(err, -EINVAL,
					   "--listen '%s': address '%s' is not a numeric IPv4 address "
					   "or a [bracketed] IPv6 one: an IPv6 address needs brackets: "
					   "[%s]:PORT",
					   s, host, host);
	}
	return log_err_set(
	    err, -EINVAL,
	    "--listen '%s': address '%.*s' is not a numeric IPv4 address or a [bracketed] IPv6 one",
	    s, (int)n, h);
}
