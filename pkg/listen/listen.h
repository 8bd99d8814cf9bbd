/* SPDX-License-Identifier: GPL-2.0-or-later */
/* listen: the "--listen [HOST]:PORT" value both HTTP endpoints take (nodeprobe-devices,
 * nodeprobe-reload), parsed once, with one set of messages. */
#ifndef NP_LISTEN_H
#define NP_LISTEN_H

#include <stdbool.h>
#include <netinet/in.h>
#include <sys/socket.h>

struct log_err;

/*
 * Parse s as Go's net.Listen takes our literals (Reloader's and squat's flags are Go's):
 * ":PORT" (every address), "A.B.C.D:PORT", "[V6]:PORT", "[fe80::1%eth0]:PORT" (a zone names
 * an interface of this host). Numeric addresses only: a name would be looked up in DNS at
 * start. Port 1-65535, or 0 too when port0 (the kernel picks one, for tests). On success
 * fills *ss (IPv4 or IPv6; port in network order), sets *any for a wildcard (an empty host,
 * 0.0.0.0 or [::]: Go listens on IPv6 too there, see listen_any6) and returns 0; otherwise
 * -EINVAL with err set to one line "--listen 'S': what is wrong".
 */
int listen_parse(const char *s, bool port0, struct sockaddr_storage *ss, bool *any,
		 struct log_err *err);

/* listen_parse as an option callback checks a value: 0, or -1 with its message in msg. */
int listen_check(const char *s, bool port0, char *msg, int msglen);

/* [::] with ss's port into *six: a wildcard's dual-stack address, tried before ss itself. */
void listen_any6(const struct sockaddr_storage *ss, struct sockaddr_in6 *six);

#endif
