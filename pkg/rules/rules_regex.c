/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_regex: each distinct InRegexp/matchName pattern compiled once, however many rules use it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goregex/goregex.h"
#include "rules/rules_internal.h"

/* One distinct pattern: compiled, or why Go's regexp refuses it. */
struct recache_ent {
	char *pat;	    /* owned; NULL for a free slot */
	struct goregex *re; /* owned; NULL when refused */
	char *why;	    /* owned: why it is refused, or NULL */
};

static size_t slot_of(const struct recache *c, const char *pat)
{
	size_t h = 5381, i;

	for (i = 0; pat[i]; i++)
		h = h * 33 + (unsigned char)pat[i];
	for (i = h & (c->cap - 1); c->e[i].pat && strcmp(c->e[i].pat, pat);
	     i = (i + 1) & (c->cap - 1))
		;
	return i;
}

/* Room for one more entry (grown at half full): 0 or -ENOMEM. */
static int reserve(struct recache *c)
{
	struct recache g = {.cap = c->cap ? 2 * c->cap : 64, .n = c->n};
	size_t i;

	if (2 * (c->n + 1) <= c->cap)
		return 0;
	g.e = calloc(g.cap, sizeof(*g.e));
	if (!g.e)
		return -ENOMEM;
	for (i = 0; i < c->cap; i++)
		if (c->e[i].pat)
			g.e[slot_of(&g, c->e[i].pat)] = c->e[i];
	free(c->e);
	*c = g;
	return 0;
}

int rules_regex(struct recache *c, const char *pat, const struct goregex **re, char *why,
		size_t whylen)
{
	struct recache_ent *e;
	char msg[160] = "";
	int x;

	*re = NULL;
	e = c->cap ? &c->e[slot_of(c, pat)] : NULL;
	if (!e || !e->pat) {
		if (c->n >= RULES_REGEX_MAX)
			return -ENOSPC;
		if (reserve(c) < 0)
			return -ENOMEM;
		e = &c->e[slot_of(c, pat)];
		/* Go's regexp (NFD's), unanchored as regexp.MatchString; see pkg/goregex. */
		x = goregex_compile(pat, 0, &e->re, msg, sizeof(msg));
		if (x == -ENOMEM)
			return -ENOMEM;
		if (x == -E2BIG)
			snprintf(msg, sizeof(msg), "too long");
		e->pat = strdup(pat);
		e->why = x < 0 ? strdup(msg) : NULL;
		if (!e->pat || (x < 0 && !e->why)) {
			goregex_free(e->re);
			free(e->pat);
			free(e->why);
			memset(e, 0, sizeof(*e));
			return -ENOMEM;
		}
		c->n++;
	}
	*re = e->re;
	if (e->why)
		snprintf(why, whylen, "%s", e->why);
	return e->why ? -EINVAL : 0;
}

void rules_regex_free(struct recache *c)
{
	size_t i;

	for (i = 0; i < c->cap; i++) {
		free(c->e[i].pat);
		goregex_free(c->e[i].re);
		free(c->e[i].why);
	}
	free(c->e);
	memset(c, 0, sizeof(*c));
}
