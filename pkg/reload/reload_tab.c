/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_tab: the hash table of the controller's tables (and of the reload-list cache): entries
 * keyed by class, namespace and name. Calls no other file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reload/reload_internal.h"

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
