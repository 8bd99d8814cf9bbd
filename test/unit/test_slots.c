/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/slots: room for a newcomer, request deadlines, kept-alive connections,
 * driven through its libmicrohttpd callbacks with a stand-in for MHD_get_connection_info. */
#include <errno.h>
#include <stdarg.h>
#include <sys/socket.h>

#include "harness.h"
#include "slots/slots.h"

/* A connection as libmicrohttpd shows it to the callbacks: its fd and socket context. */
struct fake {
	int fd, peer;		       /* a socketpair: fd is the server's side */
	void *sctx;		       /* what slots_on_conn stores */
	union MHD_ConnectionInfo info; /* the answer of the last query */
};

static const union MHD_ConnectionInfo *fake_info(struct MHD_Connection *c,
						 enum MHD_ConnectionInfoType t, ...)
{
	struct fake *f = (struct fake *)c;

	if (t == MHD_CONNECTION_INFO_CONNECTION_FD)
		f->info.connect_fd = f->fd;
	else if (t == MHD_CONNECTION_INFO_SOCKET_CONTEXT)
		f->info.socket_context = f->sctx;
	else
		return NULL;
	return &f->info;
}

#define CONN(f) ((struct MHD_Connection *)(f))

static void start(struct slots *s, struct fake *f)
{
	int sv[2];

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	f->fd = sv[0];
	f->peer = sv[1];
	f->sctx = NULL;
	slots_on_conn(s, CONN(f), &f->sctx, MHD_CONNECTION_NOTIFY_STARTED);
	REQUIRE(f->sctx != NULL);
}

static void done(struct slots *s, struct fake *f)
{
	slots_on_done(s, CONN(f), NULL, MHD_REQUEST_TERMINATED_COMPLETED_OK);
}

static void finish(struct slots *s, struct fake *f)
{
	slots_on_conn(s, CONN(f), &f->sctx, MHD_CONNECTION_NOTIFY_CLOSED);
	CHECK(f->sctx == NULL);
	close(f->fd);
	close(f->peer);
}

/* shut down by slots: the peer reads the end of the stream (not EAGAIN) */
static bool closed(const struct fake *f)
{
	char b;

	return recv(f->peer, &b, 1, MSG_DONTWAIT) == 0;
}

static bool culled(const struct fake *f)
{
	return ((struct slots_conn *)f->sctx)->culled;
}

TEST(newcomer_closes_the_oldest_waiting)
{
	struct slots s;
	struct fake f[4];
	int i;

	slots_init(&s, fake_info, NULL, 2, 0, 3600 * 1000LL);
	start(&s, &f[0]);
	start(&s, &f[1]);
	CHECK(!closed(&f[0]) && !closed(&f[1]));
	start(&s, &f[2]); /* three wait, two may: the oldest goes */
	CHECK(closed(&f[0]) && culled(&f[0]));
	CHECK(!closed(&f[1]) && !closed(&f[2]));
	slots_request_in(&s, CONN(&f[1])); /* its request is in: waits no more */
	start(&s, &f[3]);
	CHECK(!closed(&f[1]) && !closed(&f[2]) && !closed(&f[3]));
	CHECK_INT(s.nwait, 3); /* f[0] (shut down, until CLOSED), f[2], f[3] */
	CHECK_INT(s.nculled, 1);
	CHECK_INT((int)s.culls, 1);
	for (i = 0; i < 4; i++)
		finish(&s, &f[i]);
	CHECK_INT(s.nwait, 0);
	CHECK_INT(s.nculled, 0);
}

TEST(late_requests_are_closed)
{
	struct slots s;
	struct fake f[2];
	long long next;

	slots_init(&s, fake_info, NULL, 16, 0, 3600 * 1000LL);
	CHECK_INT(slots_sweep(&s, &next), 0);
	CHECK(next == -1); /* none waits */
	start(&s, &f[0]);
	start(&s, &f[1]);
	CHECK_INT(slots_sweep(&s, &next), 0);
	CHECK(next > 3590 * 1000LL && next <= 3600 * 1000LL);
	s.head_ms = 0; /* every deadline has passed */
	slots_request_in(&s, CONN(&f[1]));
	CHECK_INT(slots_sweep(&s, &next), 1);
	CHECK(next == 0);
	CHECK(closed(&f[0]) && !closed(&f[1]));
	CHECK_INT((int)s.timeouts, 1);
	CHECK_INT(slots_sweep(&s, &next), 0); /* shut down once */
	finish(&s, &f[0]);
	finish(&s, &f[1]);
}

TEST(kept_alive_has_the_deadline_only_under_pressure)
{
	struct slots s;
	struct fake f[3];

	slots_init(&s, fake_info, NULL, 16, 2, 0);
	start(&s, &f[0]);
	slots_request_in(&s, CONN(&f[0]));
	done(&s, &f[0]); /* kept alive: waits for its next request */
	CHECK_INT(s.nwait, 1);
	CHECK_INT(slots_sweep(&s, NULL), 0); /* room: the idle timeout only */
	CHECK(!closed(&f[0]));
	start(&s, &f[1]);
	start(&s, &f[2]); /* three wait, more than press_at */
	CHECK_INT(slots_sweep(&s, NULL), 3);
	CHECK(closed(&f[0]) && closed(&f[1]) && closed(&f[2]));
	finish(&s, &f[0]);
	finish(&s, &f[1]);
	finish(&s, &f[2]);

	slots_init(&s, fake_info, NULL, 16, 0, 0); /* press_at 0: always the deadline */
	start(&s, &f[0]);
	slots_request_in(&s, CONN(&f[0]));
	done(&s, &f[0]);
	CHECK_INT(slots_sweep(&s, NULL), 1);
	CHECK(closed(&f[0]));
	finish(&s, &f[0]);
}

TEST(kept_alive_makes_room_only_if_asked)
{
	struct slots s;
	struct fake f[2];
	int reuse;

	for (reuse = 0; reuse < 2; reuse++) {
		slots_init(&s, fake_info, NULL, 1, 0, 3600 * 1000LL);
		s.room_on_reuse = reuse;
		start(&s, &f[0]);
		slots_request_in(&s, CONN(&f[0]));
		start(&s, &f[1]); /* one waits: room */
		done(&s, &f[0]);  /* two wait, one may */
		CHECK_INT(closed(&f[1]), reuse);
		CHECK(!closed(&f[0]));
		CHECK_INT((int)s.culls, reuse);
		finish(&s, &f[0]);
		finish(&s, &f[1]);
	}
}
