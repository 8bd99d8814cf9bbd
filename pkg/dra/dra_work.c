// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dra_work: the driver's worker thread. What waits on the API server (a NodePrepareResources
 * call's claim GETs and the CDI and checkpoint writes after them, NodeUnprepareResources, the
 * ResourceSlice sync, the stale-claim sweep) runs here, one job at a time, as upstream's
 * kubelet-plugin helper serialises Prepare and Unprepare (K staging/src/k8s.io/dynamic-resource-
 * allocation/kubeletplugin/draplugin.go): the loop serving the kubelet's gRPC, the device
 * plugins, /health and hotplug never waits on the API server. The loop hands jobs in
 * (dwork_push; dra_srv bounds how many wait), the worker runs them in order, then the periodic
 * task when it is due (coalesced: asked for ten times while busy, it runs once), and hands each
 * job back on a done list, waking the loop through an eventfd.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dra/dra_internal.h"
#include "log/log.h"

struct dwork {
	pthread_mutex_t mu; /* guards every field below but efd */
	pthread_cond_t cv;  /* a job, the task or stop */
	pthread_t th;
	bool started, stop;
	int efd;
	struct dwork_job *q, **q_tail;	     /* waiting, in order */
	struct dwork_job *done, **done_tail; /* run, not yet taken back by the loop */
	bool task_due;
	int (*task)(void *ctx, struct log_err *err);
	void *task_ctx;
};

int dwork_new(struct dwork **out, struct log_err *err)
{
	struct dwork *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return log_err_set(err, -ENOMEM, "out of memory");
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd < 0) {
		int e = errno;

		free(w);
		return log_err_set(err, -e, "dra: eventfd: %s", strerror(e));
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->q_tail = &w->q;
	w->done_tail = &w->done;
	*out = w;
	return 0;
}

int dwork_fd(const struct dwork *w)
{
	return w->efd;
}

static void wake_loop(struct dwork *w)
{
	uint64_t one = 1;

	if (write(w->efd, &one, sizeof(one)) < 0)
		(void)0; /* the counter is full: the loop is woken already */
}

static void *worker(void *arg)
{
	struct dwork *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct dwork_job *j;

		while (!w->stop && !w->q && !(w->task_due && w->task))
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->stop)
			break;
		j = w->q;
		if (j) { /* the kubelet's calls before the periodic task */
			w->q = j->next;
			if (!w->q)
				w->q_tail = &w->q;
			pthread_mutex_unlock(&w->mu);
			j->run(j);
			j->ran = true;
			j->next = NULL;
			pthread_mutex_lock(&w->mu);
			*w->done_tail = j;
			w->done_tail = &j->next;
			wake_loop(w);
		} else {
			int (*fn)(void *, struct log_err *) = w->task;
			void *ctx = w->task_ctx;
			struct log_err e = {0};

			w->task_due = false;
			pthread_mutex_unlock(&w->mu);
			if (fn(ctx, &e) < 0)
				log_warn("dra: %s", e.msg[0] ? e.msg : "periodic work failed");
			pthread_mutex_lock(&w->mu);
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int dwork_start(struct dwork *w, struct log_err *err)
{
	sigset_t all, old;
	int r;

	if (w->started)
		return 0;
	sigfillset(&all); /* signals are the loop's (a signalfd): the worker inherits none */
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&w->th, NULL, worker, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return log_err_set(err, -r, "dra: worker thread: %s", strerror(r));
	w->started = true;
	return 0;
}

void dwork_push(struct dwork *w, struct dwork_job *j)
{
	j->next = NULL;
	j->ran = false;
	pthread_mutex_lock(&w->mu);
	*w->q_tail = j;
	w->q_tail = &j->next;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void dwork_set_task(struct dwork *w, int (*fn)(void *ctx, struct log_err *err), void *ctx)
{
	pthread_mutex_lock(&w->mu);
	w->task = fn;
	w->task_ctx = ctx;
	pthread_mutex_unlock(&w->mu);
}

void dwork_kick(struct dwork *w)
{
	pthread_mutex_lock(&w->mu);
	w->task_due = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

struct dwork_job *dwork_done(struct dwork *w)
{
	struct dwork_job *j;
	uint64_t n;

	if (read(w->efd, &n, sizeof(n)) < 0)
		(void)0; /* nothing counted: the list says what there is */
	pthread_mutex_lock(&w->mu);
	j = w->done;
	w->done = NULL;
	w->done_tail = &w->done;
	pthread_mutex_unlock(&w->mu);
	return j;
}

struct dwork_job *dwork_stop(struct dwork *w)
{
	struct dwork_job *j;

	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (w->started)
		pthread_join(w->th, NULL); /* after the job or task in progress */
	w->started = false;
	/* done ones first, then the ones never run (ran false) */
	*w->done_tail = w->q;
	j = w->done;
	w->done = w->q = NULL;
	w->done_tail = &w->done;
	w->q_tail = &w->q;
	return j;
}

void dwork_free(struct dwork *w)
{
	if (!w)
		return;
	dwork_stop(w);
	close(w->efd);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
