/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_byname: the workloads indexed by the names of the objects they can be rolled for, so a
 * change considers the workloads that name it, not every workload (a namespace's deletion with
 * --reload-on-delete: N objects and M workloads cost N + M, not N x M). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reload/reload_internal.h"

/*
 * Reloader (v1.4.21 internal/pkg/handler/upgrade.go PerformAction, read, not copied) LISTs every
 * workload of the object's namespace for each change and asks ShouldReload of each. We ask
 * reload_should of the workloads filed under the object's name and of those filed as "any name"
 * (regexes); what it says of every other one follows from the namespace's counts
 * (reload_should_unnamed), so the skipped counters count as Reloader's loop would.
 */

#define BN_NS	   1		  /* a namespace's key: ns, name "" */
#define BN_NAME(t) (2 + (int)(t)) /* an object's key: type t, ns, name */
#define NTYPES_	   3

struct bn_key {
	struct ent e;			  /* BN_NS or BN_NAME(type) */
	struct bn_node *head;		  /* the workloads filed under it */
	unsigned long all;		  /* BN_NS: workloads of the namespace */
	unsigned long unused[NTYPES_][2]; /* BN_NS: [type][match] of those, not used */
};

struct bn_node {
	struct bn_node *prev, *next;
	struct bn_key *key;
	struct wl_ent *we;
};

static struct bn_key *key_get(struct ctl *c, int cls, const char *ns, const char *name, size_t len)
{
	struct bn_key *k;
	char *nm = strndup(name, len);

	if (!nm)
		return NULL;
	k = (struct bn_key *)reload_tab_get(&c->bn.keys, cls, ns, nm);
	if (k) {
		free(nm);
		return k;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		free(nm);
		return NULL;
	}
	k->e.cls = (unsigned char)cls;
	k->e.ns = strdup(ns);
	k->e.name = nm;
	if (!k->e.ns || reload_tab_put(&c->bn.keys, &k->e) < 0) {
		free(k->e.ns);
		free(nm);
		free(k);
		return NULL;
	}
	return k;
}

/* Free k once nothing is filed under it and it counts nothing. */
static void key_put(struct ctl *c, struct bn_key *k)
{
	if (k->head || k->all)
		return;
	reload_tab_del(&c->bn.keys, &k->e);
	free(k->e.ns);
	free(k->e.name);
	free(k);
}

/* The names w is filed under: one call of fn per name (type t), or counted when fn is NULL. */
struct names {
	struct ctl *c;
	struct wl_ent *we;
	size_t n;  /* nodes made (or counted) */
	int err;   /* -ENOMEM */
	int count; /* only count */
};

static void file_under(struct names *x, int cls, const char *name, size_t len)
{
	struct bn_key *k;
	struct bn_node *nd;

	if (x->err)
		return;
	if (x->count) {
		x->n++;
		return;
	}
	k = key_get(x->c, cls, x->we->e.ns, name, len);
	if (!k) {
		x->err = -ENOMEM;
		return;
	}
	nd = &x->we->bn[x->n++];
	nd->key = k;
	nd->we = x->we;
	nd->prev = NULL;
	nd->next = k->head;
	if (k->head)
		k->head->prev = nd;
	k->head = nd;
}

/* How many list names (plain reload-list entries, exclude entries) w has; -1: a regex. */
static long list_names(const struct reload_workload *w)
{
	long n = 0;
	size_t i, len;
	int t, where;
	const char *p;

	for (t = 0; t < NTYPES_; t++) {
		for (where = 0; where < 2; where++) {
			if (reload_relist_regexes(w->relist[where][t]))
				return -1;
			for (i = 0; reload_relist_literal(w->relist[where][t], i, &len); i++)
				n++;
		}
		for (p = reload_workload_exclude(w, (enum reload_type)t); p; p = strchr(p + 1, ','))
			n++;
	}
	return n;
}

static void file_names(struct names *x, int wild)
{
	const struct reload_workload *w = &x->we->w;
	size_t i, len;
	int t, where;
	const char *s, *p, *e;

	for (i = 0; i < w->nrefs; i++)
		file_under(x, BN_NAME(w->refs[i].type), w->refs[i].name, strlen(w->refs[i].name));
	if (wild) {
		file_under(x, BN_NS, "", 0);
		return;
	}
	for (t = 0; t < NTYPES_; t++) {
		for (where = 0; where < 2; where++)
			for (i = 0; (s = reload_relist_literal(w->relist[where][t], i, &len)); i++)
				file_under(x, BN_NAME(t), s, len);
		for (p = reload_workload_exclude(w, (enum reload_type)t); p;
		     p = *e ? e + 1 : NULL) {
			char *item;

			e = strchr(p, ',');
			if (!e)
				e = p + strlen(p);
			item = reload_trimmed(p, e);
			if (!item) {
				x->err = -ENOMEM;
				return;
			}
			file_under(x, BN_NAME(t), item, strlen(item));
			free(item);
		}
	}
}

int reload_byname_add(struct ctl *c, struct wl_ent *we)
{
	struct names x = {.c = c, .we = we, .count = 1};
	struct bn_key *ns;
	long ln = list_names(&we->w);
	int wild = ln < 0 || ln > RELOAD_BYNAME_NAMES_MAX, t, m;

	ns = key_get(c, BN_NS, we->e.ns, "", 0);
	if (!ns)
		return -ENOMEM;
	file_names(&x, wild);
	we->bn = calloc(x.n ? x.n : 1, sizeof(*we->bn));
	if (!we->bn) {
		key_put(c, ns);
		return -ENOMEM;
	}
	/* counted first: reload_byname_del undoes a half-filed workload */
	ns->all++;
	for (t = 0; t < NTYPES_; t++)
		for (m = 0; m < 2; m++) {
			we->bn_unused[t][m] =
			    reload_should_unnamed(&we->w, (enum reload_type)t, m, c->o->auto_all) ==
			    RELOAD_NO_NOT_USED;
			ns->unused[t][m] += we->bn_unused[t][m];
		}
	x.count = 0;
	x.n = 0;
	file_names(&x, wild);
	we->nbn = x.n;
	if (x.err) {
		reload_byname_del(c, we);
		return x.err;
	}
	return 0;
}

void reload_byname_del(struct ctl *c, struct wl_ent *we)
{
	struct bn_key *ns;
	size_t i;
	int t, m;

	if (!we->bn)
		return;
	for (i = 0; i < we->nbn; i++) {
		struct bn_node *nd = &we->bn[i];

		if (nd->prev)
			nd->prev->next = nd->next;
		else
			nd->key->head = nd->next;
		if (nd->next)
			nd->next->prev = nd->prev;
		if (nd->key->e.cls != BN_NS)
			key_put(c, nd->key);
	}
	ns = (struct bn_key *)reload_tab_get(&c->bn.keys, BN_NS, we->e.ns, "");
	if (ns) {
		ns->all--;
		for (t = 0; t < NTYPES_; t++)
			for (m = 0; m < 2; m++)
				ns->unused[t][m] -= we->bn_unused[t][m];
		key_put(c, ns);
	}
	free(we->bn);
	we->bn = NULL;
	we->nbn = 0;
	memset(we->bn_unused, 0, sizeof(we->bn_unused));
}

static void list_key(struct ctl *c, const struct bn_key *k)
{
	const struct bn_node *nd;

	for (nd = k ? k->head : NULL; nd; nd = nd->next) {
		c->bn.steps++;
		if (nd->we->bn_stamp == c->bn.gen)
			continue;
		nd->we->bn_stamp = c->bn.gen;
		if (c->bn.ncand == c->bn.cap) {
			size_t cap = c->bn.cap ? 2 * c->bn.cap : 16;
			struct wl_ent **v = realloc(c->bn.cand, cap * sizeof(*v));

			if (!v)
				return; /* out of memory: fewer considered, as a failed GET would */
			c->bn.cand = v;
			c->bn.cap = cap;
		}
		c->bn.cand[c->bn.ncand++] = nd->we;
	}
}

size_t reload_byname_query(struct ctl *c, const struct cfg_ent *ce, struct reload_byname_rest *rest)
{
	enum reload_type t = reload_cls_type(ce->e.cls);
	const struct bn_key *ns =
	    (const struct bn_key *)reload_tab_get(&c->bn.keys, BN_NS, ce->e.ns, "");
	size_t i;
	int m = ce->match ? 1 : 0;

	c->bn.gen++;
	c->bn.ncand = 0;
	list_key(c, (const struct bn_key *)reload_tab_get(&c->bn.keys, BN_NAME(t), ce->e.ns,
							  ce->e.name));
	list_key(c, ns);
	rest->all = ns ? ns->all : 0;
	rest->unused = ns ? ns->unused[t][m] : 0;
	for (i = 0; i < c->bn.ncand; i++) {
		rest->all--;
		rest->unused -= c->bn.cand[i]->bn_unused[t][m];
	}
	return c->bn.ncand;
}

void reload_byname_free(struct ctl *c)
{
	size_t i;
	struct ent *e, *nx;

	for (i = 0; i < c->bn.keys.nb; i++)
		for (e = c->bn.keys.b[i]; e; e = nx) {
			nx = e->next;
			free(e->ns);
			free(e->name);
			free(e);
		}
	free(c->bn.keys.b);
	free(c->bn.cand);
	memset(&c->bn, 0, sizeof(c->bn));
}
