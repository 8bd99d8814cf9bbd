/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_cache: each distinct pattern and template of the loaded rules compiled once, in budget. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goregex/goregex.h"
#include "gotmpl/gotmpl.h"
#include "rules/rules_internal.h"

/* One distinct text: what it compiled to, or why it is refused. */
struct rcache_ent {
	char *key; /* owned: the pattern or template text; NULL for a free slot */
	void *val; /* owned: struct goregex or struct gotmpl; NULL when refused */
	char *why; /* owned: why it is refused, or NULL */
};

static size_t slot_of(const struct rtable *t, const char *key)
{
	size_t h = 5381, i;

	for (i = 0; key[i]; i++)
		h = h * 33 + (unsigned char)key[i];
	for (i = h & (t->cap - 1); t->e[i].key && strcmp(t->e[i].key, key);
	     i = (i + 1) & (t->cap - 1))
		;
	return i;
}

/* Room for one more entry (grown at half full): 0 or -ENOMEM. */
static int reserve(struct rtable *t)
{
	struct rtable g = {.cap = t->cap ? 2 * t->cap : 64, .n = t->n};
	size_t i;

	if (2 * (t->n + 1) <= t->cap)
		return 0;
	g.e = calloc(g.cap, sizeof(*g.e));
	if (!g.e)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++)
		if (t->e[i].key)
			g.e[slot_of(&g, t->e[i].key)] = t->e[i];
	free(t->e);
	*t = g;
	return 0;
}

/* key's entry in t, or NULL when absent. */
static struct rcache_ent *find(const struct rtable *t, const char *key)
{
	struct rcache_ent *e = t->cap ? &t->e[slot_of(t, key)] : NULL;

	return e && e->key ? e : NULL;
}

/* A new entry of t for key holding val (owned) or refused with why: it, or NULL on ENOMEM. */
static struct rcache_ent *add(struct rtable *t, const char *key, void *val, const char *why)
{
	struct rcache_ent *e;

	if (reserve(t) < 0)
		return NULL;
	e = &t->e[slot_of(t, key)];
	e->key = strdup(key);
	e->why = why ? strdup(why) : NULL;
	if (!e->key || (why && !e->why)) {
		free(e->key);
		free(e->why);
		memset(e, 0, sizeof(*e));
		return NULL;
	}
	e->val = val;
	t->n++;
	return e;
}

/* The cached answer of e: 0 with *val, or -EINVAL with why. */
static int answer(const struct rcache_ent *e, const void **val, char *why, size_t whylen)
{
	*val = e->val;
	if (e->why)
		snprintf(why, whylen, "%s", e->why);
	return e->why ? -EINVAL : 0;
}

int rules_regex(struct rcache *c, const char *pat, const struct goregex **re, char *why,
		size_t whylen)
{
	struct rcache_ent *e = find(&c->re, pat);
	struct goregex *g = NULL;
	char msg[160] = "";
	size_t mem = 0;
	int x;

	*re = NULL;
	if (e)
		return answer(e, (const void **)re, why, whylen);
	if (c->re.n >= RULES_REGEX_MAX) {
		snprintf(why, whylen,
			 "more than %d distinct regular expressions in the rules loaded (the "
			 "limit): join patterns with '|'",
			 RULES_REGEX_MAX);
		return -ENOSPC;
	}
	if (c->re_over > RULES_REGEX_MEM) { /* refused ones cost their compile: not unbounded */
		snprintf(why, whylen,
			 "the regular expressions of the rules loaded need more than the %u MiB "
			 "limit (and those refused at it took as much again to try): use fewer or "
			 "simpler patterns (a long repeat of a class such as \\pL{50} is costly)",
			 RULES_REGEX_MEM >> 20);
		return -ENOSPC;
	}
	/* Go's regexp (NFD's), unanchored as regexp.MatchString; see pkg/goregex. */
	x = goregex_compile_mem(pat, 0, &g, &mem, msg, sizeof(msg));
	c->compiled++;
	if (x == -ENOMEM)
		return -ENOMEM;
	if (x == -E2BIG)
		snprintf(msg, sizeof(msg), "too long");
	if (x == 0 && mem > RULES_REGEX_MEM - c->mem) {
		goregex_free(g);
		c->re_over += mem;
		snprintf(why, whylen,
			 "the regular expressions of the rules loaded need more than the %u MiB "
			 "limit (this one up to %zu KiB): use fewer or simpler patterns (a long "
			 "repeat of a class such as \\pL{50} is costly)",
			 RULES_REGEX_MEM >> 20, (mem + 1023) >> 10);
		return -ENOSPC;
	}
	e = add(&c->re, pat, g, x < 0 ? msg : NULL);
	if (!e) {
		goregex_free(g);
		return -ENOMEM;
	}
	c->mem += mem;
	return answer(e, (const void **)re, why, whylen);
}

int rules_tmpl(struct rcache *c, const char *src, struct rtmpl *t, char *why, size_t whylen)
{
	struct rcache_ent *e = find(&c->tmpl, src);
	struct gotmpl *p = NULL;
	size_t len = strlen(src);
	int x;

	if (!e) {
		if (c->tmpl.n >= RULES_TMPL_MAX) {
			snprintf(why, whylen,
				 "more than %d distinct templates in the rules loaded (the limit): "
				 "share templates between rules (YAML anchors)",
				 RULES_TMPL_MAX);
			return -ENOSPC;
		}
		if (len > RULES_TMPL_SRC - c->tsrc) {
			snprintf(why, whylen,
				 "the templates of the rules loaded are more than %u MiB together "
				 "(the limit): share templates between rules (YAML anchors)",
				 RULES_TMPL_SRC >> 20);
			return -ENOSPC;
		}
		if (c->tmpl_over > RULES_TMPL_MEM) { /* refused ones cost their parse */
			snprintf(
			    why, whylen,
			    "the rules' templates need more than %u MiB parsed (the limit; those "
			    "refused at it took as much again to try)",
			    RULES_TMPL_MEM >> 20);
			return -ENOSPC;
		}
		/* each distinct text once; one that does not parse, or runs out of memory parsing,
		 * is kept refused (why) and fails its rules when they run */
		x = rules_tmpl_parse(src, &p, why, whylen);
		c->compiled++;
		if (gotmpl_mem(p) > RULES_TMPL_MEM - c->tmem) { /* a dense template: 200 B a byte */
			c->tmpl_over += gotmpl_mem(p);
			gotmpl_free(p);
			snprintf(why, whylen,
				 "the rules' templates need more than %u MiB parsed (the limit)",
				 RULES_TMPL_MEM >> 20);
			return -ENOSPC;
		}
		e = add(&c->tmpl, src, p, x < 0 ? why : NULL);
		if (!e) {
			gotmpl_free(p);
			return -ENOMEM;
		}
		c->tsrc += len;
		c->tmem += gotmpl_mem(p);
	}
	t->set = true;
	t->t = e->val;
	t->bad = e->why;
	return 0;
}

void rules_cache_free(struct rcache *c)
{
	size_t i;

	for (i = 0; i < c->re.cap; i++) {
		free(c->re.e[i].key);
		goregex_free(c->re.e[i].val);
		free(c->re.e[i].why);
	}
	for (i = 0; i < c->tmpl.cap; i++) {
		free(c->tmpl.e[i].key);
		gotmpl_free(c->tmpl.e[i].val);
		free(c->tmpl.e[i].why);
	}
	free(c->re.e);
	free(c->tmpl.e);
	memset(c, 0, sizeof(*c));
}
