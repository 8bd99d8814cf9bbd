/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slots: connections waiting for a request, oldest first; deadlines and room (slots.h). */
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "slots/slots.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void lock(struct slots *s)
{
	if (s->mu)
		pthread_mutex_lock(s->mu);
}

static void unlock(struct slots *s)
{
	if (s->mu)
		pthread_mutex_unlock(s->mu);
}

void slots_init(struct slots *s, __typeof__(MHD_get_connection_info) *info, pthread_mutex_t *mu,
		unsigned int cull_at, unsigned int press_at, long long head_ms)
{
	*s = (struct slots){
	    .info = info, .mu = mu, .cull_at = cull_at, .press_at = press_at, .head_ms = head_ms};
	s->wait.next = s->wait.prev = &s->wait;
}

static void unlink_conn(struct slots *s, struct slots_conn *hc)
{
	if (!hc->linked)
		return;
	hc->prev->next = hc->next;
	hc->next->prev = hc->prev;
	hc->linked = false;
	s->nwait--;
	if (hc->culled)
		s->nculled--;
	hc->culled = false;
}

/* hc waits from now on: to the list's end (the list stays oldest first). */
static void link_conn(struct slots *s, struct slots_conn *hc, bool kept)
{
	hc->since_ms = now_ms();
	hc->kept = kept;
	hc->culled = false;
	hc->prev = s->wait.prev;
	hc->next = &s->wait;
	s->wait.prev->next = hc;
	s->wait.prev = hc;
	hc->linked = true;
	s->nwait++;
}

static void cull(struct slots *s, struct slots_conn *hc)
{
	hc->culled = true;
	s->nculled++;
	shutdown(hc->fd, SHUT_RDWR);
}

/* Keep the reserve: the oldest still waiting, before hc, are closed past cull_at. */
static void make_room(struct slots *s, struct slots_conn *hc)
{
	for (struct slots_conn *o = s->wait.next; o != hc && s->nwait - s->nculled > s->cull_at;
	     o = o->next) {
		if (o->culled)
			continue;
		cull(s, o);
		s->culls++;
	}
}

/* hc waits no more (its request is in, or it is closed). */
static void stop_waiting(struct slots *s, struct slots_conn *hc)
{
	lock(s);
	unlink_conn(s, hc);
	unlock(s);
}

static struct slots_conn *conn_of(struct slots *s, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = s->info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void slots_on_conn(void *cls, struct MHD_Connection *c, void **sctx,
		   enum MHD_ConnectionNotificationCode code)
{
	struct slots *s = cls;
	struct slots_conn *hc = *sctx;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = s->info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		hc = ci ? calloc(1, sizeof(*hc)) : NULL;
		if (!hc)
			return; /* untracked: the idle timeout still holds */
		hc->fd = ci->connect_fd;
		*sctx = hc;
		lock(s);
		link_conn(s, hc, false);
		make_room(s, hc);
		unlock(s);
		return;
	}
	if (!hc)
		return;
	stop_waiting(s, hc);
	free(hc);
	*sctx = NULL;
}

void slots_on_done(void *cls, struct MHD_Connection *c, void **state,
		   enum MHD_RequestTerminationCode code)
{
	struct slots *s = cls;
	struct slots_conn *hc = conn_of(s, c);

	(void)state;
	(void)code;
	if (!hc)
		return;
	lock(s);
	if (!hc->linked) {
		link_conn(s, hc, true);
		if (s->room_on_reuse)
			make_room(s, hc);
	}
	unlock(s);
}

void slots_request_in(struct slots *s, struct MHD_Connection *c)
{
	struct slots_conn *hc = conn_of(s, c);

	if (hc)
		stop_waiting(s, hc);
}

unsigned int slots_sweep(struct slots *s, long long *next_ms)
{
	long long now = now_ms(), next = -1;
	unsigned int n = 0;
	bool pressed;

	lock(s);
	pressed = s->nwait - s->nculled > s->press_at;
	for (struct slots_conn *hc = s->wait.next; hc != &s->wait; hc = hc->next) {
		if (hc->culled)
			continue;
		if (now - hc->since_ms < s->head_ms) {
			next = hc->since_ms + s->head_ms -
			       now; /* oldest first: the rest are younger */
			break;
		}
		if (hc->kept && !pressed)
			continue; /* a kept-alive connection has the idle timeout only, with room */
		cull(s, hc);
		n++;
		next = 0;
	}
	s->timeouts += n;
	unlock(s);
	if (next_ms)
		*next_ms = next;
	return n;
}
