/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slots: the connection table both libmicrohttpd endpoints keep against slow clients
 * (nodeprobe-devices' --listen, nodeprobe-reload's): connections waiting for a request, oldest
 * first, each with a deadline, and room kept for a probe by closing the oldest for a newcomer. */
#ifndef NP_SLOTS_H
#define NP_SLOTS_H

#include <pthread.h>
#include <stdbool.h>

#include <microhttpd.h>

/*
 * libmicrohttpd's idle timeout starts again with every byte, so clients trickling a request a
 * byte at a time held every slot for ever and /health, /healthz went unanswered (the kubelet then
 * restarts the pod). So each connection waiting for a request (new, or kept alive after an
 * answer) is on a list, oldest first: closed head_ms after it began waiting (slots_sweep), and
 * when more than cull_at wait, the oldest is closed for the newcomer (slots_on_conn). Closing is
 * shutdown(2): libmicrohttpd sees the end of the stream and closes the connection itself; the fd
 * is ours to name until its CLOSED notification, which comes before libmicrohttpd closes it.
 *
 * No libmicrohttpd function is linked from here: they are called through info, so a binary that
 * loads libmicrohttpd with dlopen (nodeprobe-devices) still does not link it.
 */

/* One connection, from its STARTED notification to its CLOSED one (owned by struct slots). */
struct slots_conn {
	struct slots_conn *prev, *next; /* on slots.wait while it waits */
	int fd;				/* its socket (libmicrohttpd's) */
	long long since_ms;		/* accepted, or its previous answer done (monotonic) */
	bool linked;			/* on slots.wait */
	bool culled;			/* shut down: libmicrohttpd closes it soon */
	bool kept;			/* waits for its next request after an answer */
};

struct slots {
	__typeof__(MHD_get_connection_info) *info; /* libmicrohttpd's, linked or from dlsym */
	pthread_mutex_t *mu;	/* held around every change of the list, or NULL: one thread */
	struct slots_conn wait; /* list head: oldest first */
	unsigned int nwait;	/* on the list */
	unsigned int nculled;	/* of them, shut down */
	unsigned int cull_at;	/* more waiting (not shut down) than this: the oldest goes */
	unsigned int press_at;	/* more waiting than this: kept-alive ones have the deadline too */
	bool room_on_reuse;	/* a kept-alive connection's next wait makes room too */
	long long head_ms;	/* a request must be in this long after waiting began */
	unsigned long culls;	/* connections closed for room */
	unsigned long timeouts; /* connections closed at their deadline */
};

/*
 * Set s up empty: info is libmicrohttpd's MHD_get_connection_info (the symbol, or dlsym's
 * pointer), mu the caller's mutex when libmicrohttpd's thread and another touch s (NULL when
 * one thread runs everything), and the limits as their fields say (press_at 0: a kept-alive
 * connection always has the deadline). Nothing to free: MHD_stop_daemon's CLOSED notifications
 * free every connection.
 */
void slots_init(struct slots *s, __typeof__(MHD_get_connection_info) *info, pthread_mutex_t *mu,
		unsigned int cull_at, unsigned int press_at, long long head_ms);

/* MHD_OPTION_NOTIFY_CONNECTION's callback, cls the struct slots: a connection STARTED waits,
 * and makes room; CLOSED frees it. A connection that cannot be tracked (no memory) has the
 * idle timeout only. */
void slots_on_conn(void *cls, struct MHD_Connection *c, void **sctx,
		   enum MHD_ConnectionNotificationCode code);

/* MHD_OPTION_NOTIFY_COMPLETED's callback, cls the struct slots: an answer is done, a kept-alive
 * connection waits for its next request (and makes room if room_on_reuse). */
void slots_on_done(void *cls, struct MHD_Connection *c, void **state,
		   enum MHD_RequestTerminationCode code);

/* c's request is in (the access handler runs, at its first call or once the whole request is
 * read: the caller's choice): it waits no more, no deadline until its answer is done. */
void slots_request_in(struct slots *s, struct MHD_Connection *c);

/*
 * Shut down every connection whose deadline has passed (a kept-alive one only while more than
 * press_at wait). Returns how many. *next_ms (if not NULL) is set to the milliseconds until the
 * first deadline still ahead; without one, 0 after a shutdown (run libmicrohttpd now), else -1.
 */
unsigned int slots_sweep(struct slots *s, long long *next_ms);

#endif
