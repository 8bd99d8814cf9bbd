/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_nsel: Reloader's --namespace-selector: the set of selected Namespaces, listed and watched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reload/reload_in.h"
#include "reload/reload_internal.h"

static const struct kube_resource namespaces = {"/api/v1", "namespaces", "Namespace"};

/*
 * The selected namespaces. The LIST and the WATCH carry the selector, so the
 * server sends a namespace gaining the label as ADDED and one losing it as
 * DELETED (the watch cache's convertToWatchEvent); Reloader v1.4.21 keeps the
 * same set from a namespace informer (reloader.md §9.7).
 */
struct reload_nsel {
	char **names; /* owned */
	size_t n, cap;
	struct kube_stream *st;
	struct kube_watch *w;
	char rv[RV_MAX];
	int gone, fails;
	int error;	    /* the current watch sent an ERROR event other than 410 */
	long events;	    /* events on the current watch */
	long long start_ms; /* when it started */
	long long restart_ms;
	int live; /* the initial LIST is done: additions are news */
};

static ssize_t find(const struct reload_nsel *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->names[i], name) == 0)
			return (ssize_t)i;
	return -1;
}

static int on_item(void *ctx, const char *type, json_t *obj)
{
	struct ctl *c = ctx;
	struct reload_nsel *s = c->in.nsel;
	const char *name =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	ssize_t i;

	if (!strcmp(type, "ERROR")) {
		/* 410 in an ERROR event is the server's "re-list"; anything else a failure */
		long code = (long)json_integer_value(json_object_get(obj, "code"));

		s->gone |= code == 410;
		s->error |= code != 410;
		return 0;
	}
	s->events++;
	if (!name || !strcmp(type, "BOOKMARK"))
		return 0;
	i = find(s, name);
	if (strcmp(type, "DELETED") == 0) {
		if (i >= 0) {
			free(s->names[i]);
			s->names[i] = s->names[--s->n];
			log_info("namespace %s no longer matches --namespace-selector", name);
		}
		return 0;
	}
	if (i >= 0)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		char **nn = realloc(s->names, cap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		s->names = nn;
		s->cap = cap;
	}
	s->names[s->n] = strdup(name);
	if (!s->names[s->n])
		return -ENOMEM;
	s->n++;
	if (s->live) {
		/* changes there were ignored until now: roll what records a stale hash */
		log_info("namespace %s now matches --namespace-selector", name);
		RELOAD_IN_TELL(c, relisted, c);
	}
	return 0;
}

/*
 * A Namespace over the stream's limits: the server's selector chose it, and its name is all the
 * set keeps, so it is taken by its name (one warning).
 */
static int on_oversize(void *ctx, const char *type, const char *ns, const char *name,
		       const char *what)
{
	json_t *stub;
	int r;

	(void)ns;
	if (!*name)
		return 0;
	log_warn("Namespace %s: %s (over nodeprobe-reload's limit): taken by its name only", name,
		 what);
	stub = json_pack("{s:{s:s}}", "metadata", "name", name);
	if (!stub)
		return -ENOMEM;
	r = on_item(ctx, type, stub);
	json_decref(stub);
	return r;
}

static const struct kube_stream_ops ops = {.item = on_item, .oversize = on_oversize};

int reload_nsel_selected(const struct ctl *c, const char *ns)
{
	return !c->in.nsel || find(c->in.nsel, ns) >= 0;
}

/* Forget the set (a LIST starts, or starts over after its continue token expired). */
static void forget(void *ctx)
{
	struct reload_nsel *s = ((struct ctl *)ctx)->in.nsel;

	while (s->n)
		free(s->names[--s->n]);
}

/* LIST every page, replacing the set; live only when the whole LIST was read. */
static int list(struct ctl *c, struct log_err *err)
{
	struct reload_list l = {
	    .res = &namespaces,
	    .mode = KUBE_ITEM_JSON,
	    .ops = &ops,
	    .ctx = c,
	    .restart = forget,
	    .rv = c->in.nsel->rv,
	};
	int r;

	l.q.label_selector = c->o->namespace_selector;
	c->in.nsel->live = 0;
	forget(c);
	r = reload_list_pages(c, &l, err);
	c->in.nsel->live = r >= 0;
	return r < 0 ? r : 0;
}

static void done(void *ctx, struct kube_watch *w, int status, int res, const char *msg)
{
	struct ctl *c = ctx;
	struct reload_nsel *s = c->in.nsel;
	long long base;

	(void)w;
	s->w = NULL;
	if (kube_stream_rv(s->st)[0])
		snprintf(s->rv, sizeof(s->rv), "%s", kube_stream_rv(s->st));
	s->gone |= status == 410;
	/* a watch closed at once without events is a failure too (as client-go's) */
	if (!s->gone && !s->events && reload_now_ms() - s->start_ms < 1000)
		s->error = 1;
	if (res >= 0 && (status == 200 || status == 410) && !s->error) {
		s->fails = 0;
		s->restart_ms = reload_now_ms();
		return;
	}
	base = 200LL << (s->fails < 6 ? s->fails : 6);
	s->fails++;
	s->restart_ms = reload_now_ms() + base / 2 + random() % (base / 2 + 1);
	log_warn("watch namespaces ended (%s); restarting", s->error	  ? "ERROR event"
							    : msg && *msg ? msg
									  : "HTTP error");
}

static int watch(struct ctl *c, struct log_err *err)
{
	struct reload_nsel *s = c->in.nsel;
	struct kube_query q;

	memset(&q, 0, sizeof(q));
	q.label_selector = c->o->namespace_selector;
	q.watch = 1;
	q.bookmarks = 1;
	q.resource_version = s->rv;
	q.timeout_seconds = c->o->watch_timeout_s;
	kube_stream_free(s->st);
	s->st = kube_stream_new(KUBE_STREAM_WATCH, KUBE_ITEM_JSON, &ops, c);
	if (!s->st)
		return log_err_set(err, -ENOMEM, "out of memory");
	sb_reset(&c->url);
	kube_url(&c->url, kube_client_server(c->cl), &namespaces, NULL, NULL, &q);
	s->w = kube_watch_start(c->cl, c->url.buf, s->st, done, c, err);
	if (!s->w)
		return err->code ? err->code : -ENOMEM;
	s->restart_ms = 0;
	s->error = 0;
	s->events = 0;
	s->start_ms = reload_now_ms();
	return 0;
}

int reload_nsel_start(struct ctl *c, struct log_err *err)
{
	int r;

	if (!c->o->namespace_selector)
		return 0;
	c->in.nsel = calloc(1, sizeof(*c->in.nsel));
	if (!c->in.nsel)
		return log_err_set(err, -ENOMEM, "out of memory");
	r = list(c, err);
	if (r == 0)
		log_info("--namespace-selector '%s': %zu namespaces", c->o->namespace_selector,
			 c->in.nsel->n);
	return r;
}

int reload_nsel_watch(struct ctl *c, struct log_err *err)
{
	return c->in.nsel ? watch(c, err) : 0;
}

void reload_nsel_tick(struct ctl *c)
{
	struct reload_nsel *s = c->in.nsel;
	struct log_err err = {0};
	int r = 0;

	if (!s || s->w || !s->restart_ms || s->restart_ms > reload_now_ms())
		return;
	if (s->gone) {
		r = list(c, &err);
		if (r == 0) {
			s->gone = 0;
			RELOAD_IN_TELL(c, relisted, c);
		}
	}
	if (r == 0)
		r = watch(c, &err);
	if (r < 0) {
		long long base = 200LL << (s->fails < 6 ? s->fails : 6);

		s->fails++;
		s->restart_ms = reload_now_ms() + base / 2 + random() % (base / 2 + 1);
		log_warn("namespaces: %s", err.msg);
	}
}

void reload_nsel_free(struct ctl *c)
{
	struct reload_nsel *s = c->in.nsel;

	if (!s)
		return;
	if (s->w)
		kube_watch_cancel(c->cl, s->w);
	kube_stream_free(s->st);
	while (s->n)
		free(s->names[--s->n]);
	free(s->names);
	free(s);
	c->in.nsel = NULL;
}
