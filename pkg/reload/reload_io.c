/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_io: what every stage shares and nothing above it owns: the clock, the stop flag set by
 * SIGTERM/SIGINT, and threads started with those signals blocked. Calls no other file. */
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "reload/reload_internal.h"

atomic_int reload_stop_flag;

void reload_on_signal(int sig)
{
	(void)sig;
	atomic_store(&reload_stop_flag, 1);
}

void reload_signals_block(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

int reload_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t old;
	int r;

	reload_signals_block(&old); /* the new thread inherits the mask */
	r = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

long long reload_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
