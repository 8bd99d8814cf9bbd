/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_table: the controller's tables: ConfigMaps and Secrets (identity, resourceVersion, hash)
 * and workloads (references, annotations). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kube.h"
#include "reload/reload.h"
#include "reload/reload_internal.h"

const struct kube_resource *const reload_cls_res[NCLS] = {
    &kube_configmaps, &kube_secrets,	    &kube_deployments, &kube_statefulsets,
    &kube_daemonsets, &reload_res_cronjobs, &reload_res_jobs,  &reload_res_rollouts,
};
/* ---- tables ---- */

static unsigned int key_hash(int cls, const char *ns, const char *name)
{
	unsigned int h = 2166136261u ^ (unsigned int)cls;
	const char *p;

	for (p = ns; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	h = (h ^ '/') * 16777619u;
	for (p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h;
}

struct ent *reload_tab_get(const struct tab *t, int cls, const char *ns, const char *name)
{
	unsigned int h = key_hash(cls, ns, name);
	struct ent *e;

	if (!t->nb)
		return NULL;
	for (e = t->b[h % t->nb]; e; e = e->next)
		if (e->h == h && e->cls == cls && strcmp(e->name, name) == 0 &&
		    strcmp(e->ns, ns) == 0)
			return e;
	return NULL;
}

int reload_tab_put(struct tab *t, struct ent *e)
{
	if (t->n >= t->nb) {
		size_t nb = t->nb ? t->nb * 2 : 1024, i;
		struct ent **b = calloc(nb, sizeof(*b));

		if (!b)
			return -ENOMEM;
		for (i = 0; i < t->nb; i++) {
			struct ent *x = t->b[i], *nx;

			for (; x; x = nx) {
				nx = x->next;
				x->next = b[x->h % nb];
				b[x->h % nb] = x;
			}
		}
		free(t->b);
		t->b = b;
		t->nb = nb;
	}
	e->h = key_hash(e->cls, e->ns, e->name);
	e->next = t->b[e->h % t->nb];
	t->b[e->h % t->nb] = e;
	t->n++;
	return 0;
}

void reload_tab_del(struct tab *t, struct ent *e)
{
	struct ent **pp;

	for (pp = &t->b[e->h % t->nb]; *pp; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			t->n--;
			return;
		}
	}
}

/* ---- controller state ---- */

struct ctl;

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

int reload_ns_ignored(const struct ctl *c, const char *ns)
{
	const char **p;

	for (p = c->o->ignore_ns; p && *p; p++)
		if (strcmp(*p, ns) == 0)
			return 1;
	return 0;
}

enum reload_type reload_cls_type(int cls)
{
	return cls == CLS_SEC ? RELOAD_SECRET : RELOAD_CONFIGMAP;
}

int reload_type_cls(enum reload_type t)
{
	return t == RELOAD_SECRET ? CLS_SEC : CLS_CM;
}

static void ent_free_strings(struct ent *e)
{
	free(e->ns);
	free(e->name);
}

void reload_cfg_free(struct cfg_ent *ce)
{
	ent_free_strings(&ce->e);
	free(ce->rv);
	free(ce);
}

static void trig_clear(struct wl_ent *we)
{
	size_t i;

	for (i = 0; i < we->ntrig; i++)
		free(we->trig[i].name);
	free(we->trig);
	we->trig = NULL;
	we->ntrig = 0;
}

void reload_pend_remove(struct ctl *c, struct wl_ent *we)
{
	struct wl_ent **pp;

	for (pp = &c->pend; *pp; pp = &(*pp)->pnext) {
		if (*pp == we) {
			*pp = we->pnext;
			break;
		}
	}
	we->pending = 0;
	we->pnext = NULL;
	trig_clear(we);
}

void reload_wl_free(struct ctl *c, struct wl_ent *we)
{
	if (we->pending)
		reload_pend_remove(c, we);
	reload_refused_remove(c, we);
	if (we->resume_ms)
		c->npause--;
	if (we->recreate) {
		json_decref(we->recreate);
		c->nrecreate--;
	}
	trig_clear(we);
	reload_workload_free(&we->w);
	ent_free_strings(&we->e);
	free(we);
}
