/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_relist: compiled "reload" lists, shared by content and refcounted, under a budget per
 * annotation and one for all lists together. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goregex/goregex.h"
#include "reload/reload_internal.h"

/*
 * What a compiled entry is charged: RE2 keeps about 1.1 KB per small pattern
 * plus 6 bytes per pattern byte, and its lazy DFA adds about 0.9 KB once it
 * matches (measured with libre2 9 on bookworm); a plain name is a string.
 */
#define RE_COST(len)  (2048 + 8 * (size_t)(len))
#define LIT_COST(len) (sizeof(char *) + (size_t)(len) + 1)

static struct reload_relist *cache; /* every list held by some workload */
static size_t used;		    /* the cost of the lists in cache */
static size_t text_max = RELOAD_LIST_TEXT_MAX, mem_max = RELOAD_LIST_MEM_MAX;

void reload_relist_limits(size_t text, size_t mem)
{
	text_max = text ? text : RELOAD_LIST_TEXT_MAX;
	mem_max = mem ? mem : RELOAD_LIST_MEM_MAX;
}

size_t reload_relist_used(void)
{
	return used;
}

/* A name with no Go regexp syntax in it matches itself only: compared as a string. */
static int plain(const char *s)
{
	return strpbrk(s, "\\.+*?()|[]{}^$") == NULL;
}

/* Call fn on each trimmed, non-empty item of the comma list val. Returns 0 or fn's/-ENOMEM. */
static int each_item(const char *val, int (*fn)(void *ctx, char *item), void *ctx)
{
	const char *p = val, *e;
	int r = 0;

	for (;;) {
		char *item;

		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		item = reload_trimmed(p, e);
		if (!item)
			return -ENOMEM;
		if (*item)
			r = fn(ctx, item);
		free(item);
		if (r < 0 || !*e)
			return r;
		p = e + 1;
	}
}

struct est {
	size_t cost, nlit, nre;
};

static int estimate(void *ctx, char *item)
{
	struct est *s = ctx;

	if (plain(item)) {
		s->cost += LIT_COST(strlen(item));
		s->nlit++;
	} else {
		s->cost += RE_COST(strlen(item) + 2);
		s->nre++;
	}
	return 0;
}

struct comp {
	struct reload_relist *rl;
	const char *what; /* the workload and key, for warnings; NULL: quiet */
};

static int compile_item(void *ctx, char *item)
{
	struct comp *k = ctx;
	struct reload_relist *rl = k->rl;
	char msg[128], *pat;
	int rc;

	if (plain(item)) {
		rl->lit[rl->nlit] = strdup(item);
		if (!rl->lit[rl->nlit])
			return -ENOMEM;
		rl->nlit++;
		return 0;
	}
	/*
	 * Reloader matches regexp.MatchString("^" + item + "$"), Go's regexp: the anchors are
	 * text, so "a|b" is "^a|b$" (pkg/goregex).
	 */
	if (asprintf(&pat, "^%s$", item) < 0)
		return -ENOMEM;
	rc = goregex_compile(pat, 0, &rl->re[rl->n], msg, sizeof(msg));
	free(pat);
	if (rc == -ENOMEM)
		return rc;
	if (rc == 0)
		rl->n++;
	else if (k->what)
		log_warn("%s: invalid regex '%.200s' skipped: %s", k->what, item,
			 rc == -E2BIG ? "pattern too long" : msg);
	return 0;
}

static void relist_free(struct reload_relist *rl)
{
	size_t i;

	for (i = 0; i < rl->n; i++)
		goregex_free(rl->re[i]);
	for (i = 0; i < rl->nlit; i++)
		free(rl->lit[i]);
	free(rl->re);
	free(rl->lit);
	free(rl->text);
	free(rl);
}

int reload_relist_get(const char *val, const char *what, int quiet, struct reload_relist **out,
		      char *why, size_t whylen)
{
	struct est s = {0};
	struct comp k = {NULL, quiet ? NULL : what};
	struct reload_relist *rl;
	size_t len = strlen(val);
	unsigned h = 2166136261u;
	const char *p;
	int r;

	*out = NULL;
	for (p = val; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u; /* FNV-1a */
	for (rl = cache; rl; rl = rl->next) {
		if (rl->h == h && strcmp(rl->text, val) == 0) {
			rl->refs++;
			*out = rl;
			return 0;
		}
	}
	if (len > text_max) {
		snprintf(why, whylen,
			 "%zu bytes of patterns, over the limit of %zu bytes per annotation; the "
			 "list is ignored (name fewer objects, or match them with fewer, broader "
			 "patterns)",
			 len, text_max);
		return -E2BIG;
	}
	r = each_item(val, estimate, &s);
	if (r < 0)
		return r;
	if (s.cost > mem_max - (used < mem_max ? used : mem_max)) {
		snprintf(why, whylen,
			 "its %zu patterns would need about %zu KiB, and the reload lists of all "
			 "workloads may use %zu KiB (%zu KiB in use); the list is ignored (use "
			 "fewer, broader patterns, or plain names, which cost little)",
			 s.nlit + s.nre, s.cost >> 10, mem_max >> 10, used >> 10);
		return -ENOSPC;
	}
	rl = calloc(1, sizeof(*rl));
	if (!rl)
		return -ENOMEM;
	rl->text = strdup(val);
	rl->lit = calloc(s.nlit + 1, sizeof(*rl->lit));
	rl->re = calloc(s.nre + 1, sizeof(*rl->re));
	k.rl = rl;
	r = rl->text && rl->lit && rl->re ? each_item(val, compile_item, &k) : -ENOMEM;
	if (r < 0) {
		relist_free(rl);
		return r;
	}
	rl->refs = 1;
	rl->h = h;
	rl->cost = s.cost;
	used += s.cost;
	rl->next = cache;
	cache = rl;
	*out = rl;
	return 0;
}

void reload_relist_put(struct reload_relist *rl)
{
	struct reload_relist **p;

	if (!rl || --rl->refs > 0)
		return;
	for (p = &cache; *p && *p != rl; p = &(*p)->next)
		;
	if (*p)
		*p = rl->next;
	used -= rl->cost;
	relist_free(rl);
}

size_t reload_relist_count(const struct reload_relist *rl)
{
	return rl ? rl->nlit + rl->n : 0;
}

int reload_relist_match(const struct reload_relist *rl, const char *name)
{
	size_t i, len = strlen(name);

	if (!rl)
		return 0;
	for (i = 0; i < rl->nlit; i++)
		if (strcmp(rl->lit[i], name) == 0)
			return 1;
	for (i = 0; i < rl->n; i++)
		if (goregex_match(rl->re[i], name, len) == 1)
			return 1;
	return 0;
}
