/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_relist: compiled "reload" lists, shared by namespace and content and refcounted, under a
 * budget per annotation, one per namespace and one for all lists together. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "goregex/goregex.h"
#include "reload/reload_internal.h"

/*
 * What an entry is charged, an upper bound of what it holds: a pattern is
 * compiled with RE_MEM of RE2 memory, RELOAD_LIST_RE_MEM and 64 bytes per byte
 * of pattern (its program and lazy DFAs stay under 2/3 of it; the parsed
 * pattern RE2 keeps beside it is smaller than the program it fits in;
 * measured: at most 8.9 KB per pattern after matching 200 random 253-byte
 * names against [ab]*a[ab]{12}, with 16 KiB), plus its text and pointer; a
 * plain name is an offset and a length into the list's text, charged once.
 */
#define RE_MEM(len)   ((size_t)RELOAD_LIST_RE_MEM + 64 * (size_t)(len))
#define RE_COST(len)  (RE_MEM(len) + (len) + 2 + sizeof(struct goregex *))
#define LIT_COST      sizeof(uint32_t[2])
#define LIST_COST(tl) (sizeof(struct reload_relist) + (tl) + 1 + 2 * sizeof(void *))

struct reload_relist {
	struct ent e;	     /* cls 0, ns, name: the annotation text (owned); the cache key */
	struct ns_use *nsu;  /* the namespace it is charged to */
	size_t refs;	     /* workloads holding it */
	size_t cost;	     /* bytes charged */
	uint32_t (*lit)[2];  /* plain names: offset and length in e.name; owned */
	size_t nlit;	     /* entries in lit */
	struct goregex **re; /* the other entries, compiled; owned */
	size_t n;	     /* entries in re */
};

/* What the lists of one namespace are charged. */
struct ns_use {
	struct ent e; /* cls 1, ns, name "" */
	size_t used;  /* bytes */
	size_t lists; /* lists charged to it; the entry goes with the last */
};

static struct tab lists, nss; /* every list held by some workload; namespaces holding one */
static size_t used;	      /* the cost of every list */
static size_t text_max = RELOAD_LIST_TEXT_MAX, ns_max = RELOAD_LIST_NS_MAX,
	      mem_max = RELOAD_LIST_MEM_MAX;

void reload_relist_limits(size_t text, size_t ns, size_t mem)
{
	text_max = text ? text : RELOAD_LIST_TEXT_MAX;
	ns_max = ns ? ns : RELOAD_LIST_NS_MAX;
	mem_max = mem ? mem : RELOAD_LIST_MEM_MAX;
}

size_t reload_relist_used(void)
{
	return used;
}

size_t reload_relist_ns_used(const char *ns)
{
	const struct ns_use *u = (const struct ns_use *)reload_tab_get(&nss, 1, ns, "");

	return u ? u->used : 0;
}

int reload_relist_too_long(size_t len, char *why, size_t whylen)
{
	if (len <= text_max)
		return 0;
	snprintf(why, whylen,
		 "%zu bytes of patterns, over the limit of %zu bytes per annotation; the list is "
		 "ignored (name fewer objects, or match them with fewer, broader patterns)",
		 len, text_max);
	return -E2BIG;
}

int reload_relist_digest(const char *s, size_t len, char hex[RELOAD_HASH_HEX])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	if (EVP_Digest(s, len, md, &n, EVP_sha1(), NULL) != 1 || n != 20)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}

/* A name with no Go regexp syntax in it matches itself only: compared as a string. */
static int plain(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strchr("\\.+*?()|[]{}^$", s[i]))
			return 0;
	return 1;
}

/* Go's strings.TrimSpace for ASCII space. */
static int space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Call fn on each trimmed, non-empty item [s, s+n) of the comma list val. Returns 0 or fn's. */
static int each_item(const char *val, int (*fn)(void *ctx, const char *s, size_t n), void *ctx)
{
	const char *p = val, *e, *s;
	int r = 0;

	for (;;) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		for (s = e; p < s && space(*p); p++)
			;
		for (; s > p && space(s[-1]); s--)
			;
		if (s > p)
			r = fn(ctx, p, (size_t)(s - p));
		if (r < 0 || !*e)
			return r;
		p = e + 1;
	}
}

struct est {
	size_t cost, nlit, nre;
};

static int estimate(void *ctx, const char *s, size_t n)
{
	struct est *t = ctx;

	if (plain(s, n)) {
		t->cost += LIT_COST;
		t->nlit++;
	} else {
		t->cost += RE_COST(n);
		t->nre++;
	}
	return 0;
}

struct comp {
	struct reload_relist *rl;
	const char *what; /* the workload and key, for warnings; NULL: quiet */
	size_t relen;	  /* bytes of the patterns compiled */
};

static int compile_item(void *ctx, const char *s, size_t n)
{
	struct comp *k = ctx;
	struct reload_relist *rl = k->rl;
	char msg[128], *pat;
	int rc;

	if (plain(s, n)) {
		rl->lit[rl->nlit][0] = (uint32_t)(s - rl->e.name);
		rl->lit[rl->nlit][1] = (uint32_t)n;
		rl->nlit++;
		return 0;
	}
	/*
	 * Reloader matches regexp.MatchString("^" + item + "$"), Go's regexp: the anchors are
	 * text, so "a|b" is "^a|b$" (pkg/goregex).
	 */
	if (asprintf(&pat, "^%.*s$", (int)n, s) < 0)
		return -ENOMEM;
	rc = goregex_compile_budget(pat, 0, RE_MEM(n), &rl->re[rl->n], msg, sizeof(msg));
	free(pat);
	if (rc == -ENOMEM)
		return rc;
	if (rc == 0) {
		rl->n++;
		k->relen += n;
	} else if (k->what)
		log_warn("%s: invalid regex '%.*s' skipped: %s", k->what, (int)(n < 200 ? n : 200),
			 s, rc == -E2BIG ? "pattern too long" : msg);
	return 0;
}

static void relist_free(struct reload_relist *rl)
{
	size_t i;

	for (i = 0; i < rl->n; i++)
		goregex_free(rl->re[i]);
	free(rl->re);
	free(rl->lit);
	free(rl->e.ns);
	free(rl->e.name);
	free(rl);
}

/* What giving back q->old would free: the lists only the old workload holds. */
static size_t credit(const struct reload_relist_req *q)
{
	size_t i, j, seen, sum = 0;

	for (i = 0; i < q->nold; i++) {
		const struct reload_relist *o = q->old[i];

		if (!o)
			continue;
		for (j = 0, seen = 0; j < q->nold; j++)
			seen += q->old[j] == o;
		for (j = 0; j < i && q->old[j] != o; j++)
			;
		if (j == i && o->refs == seen) /* the first time o is named, held only by q */
			sum += o->cost;
	}
	return sum;
}

/* The namespace charged the most, for the message that refuses a list over the total. */
static const struct ns_use *top_ns(void)
{
	const struct ns_use *top = NULL;
	const struct ent *e;
	size_t i;

	for (i = 0; i < nss.nb; i++)
		for (e = nss.b[i]; e; e = e->next)
			if (!top || ((const struct ns_use *)e)->used > top->used)
				top = (const struct ns_use *)e;
	return top;
}

/* 0 when cost fits both budgets (back credits included), else -ENOSPC with why. */
static int fits(const struct reload_relist_req *q, const struct est *s, size_t back, char *why,
		size_t whylen)
{
	size_t nsu = reload_relist_ns_used(q->ns), n = s->nlit + s->nre;
	size_t ns_now = nsu - (back < nsu ? back : nsu),
	       all_now = used - (back < used ? back : used);
	const struct ns_use *top;

	if (s->cost > ns_max || ns_now > ns_max - s->cost) {
		snprintf(
		    why, whylen,
		    "its %zu entr%s would need about %zu KiB, and the reload lists of one "
		    "namespace may use %zu KiB (namespace '%.200s': %zu KiB in use); the list is "
		    "ignored (use fewer, broader patterns, or plain names, which cost little)",
		    n, n == 1 ? "y" : "ies", s->cost >> 10, ns_max >> 10, q->ns, ns_now >> 10);
		return -ENOSPC;
	}
	if (s->cost > mem_max || all_now > mem_max - s->cost) {
		top = top_ns();
		snprintf(
		    why, whylen,
		    "its %zu entr%s would need about %zu KiB, and the reload lists of all "
		    "namespaces may use %zu KiB (%zu KiB in use, the most by namespace '%.200s': "
		    "%zu KiB); the list is ignored (use fewer, broader patterns, or plain "
		    "names, which cost little)",
		    n, n == 1 ? "y" : "ies", s->cost >> 10, mem_max >> 10, all_now >> 10,
		    top ? top->e.ns : "", top ? top->used >> 10 : 0);
		return -ENOSPC;
	}
	return 0;
}

/* Charge rl (cost set) to its namespace, made when missing. */
static int charge(struct reload_relist *rl, const char *ns)
{
	struct ns_use *u = (struct ns_use *)reload_tab_get(&nss, 1, ns, "");

	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return -ENOMEM;
		u->e.cls = 1;
		u->e.ns = strdup(ns);
		u->e.name = strdup("");
		if (!u->e.ns || !u->e.name || reload_tab_put(&nss, &u->e) < 0) {
			free(u->e.ns);
			free(u->e.name);
			free(u);
			return -ENOMEM;
		}
	}
	u->used += rl->cost;
	u->lists++;
	used += rl->cost;
	rl->nsu = u;
	return 0;
}

int reload_relist_get(const struct reload_relist_req *q, struct reload_relist **out, char *why,
		      size_t whylen)
{
	struct est s = {0};
	struct comp k = {NULL, q->what, 0};
	struct reload_relist *rl;
	size_t len = strlen(q->text);
	int r;

	*out = (struct reload_relist *)reload_tab_get(&lists, 0, q->ns, q->text);
	if (*out) {
		(*out)->refs++;
		return 0;
	}
	r = reload_relist_too_long(len, why, whylen);
	if (r < 0)
		return r;
	each_item(q->text, estimate, &s);
	s.cost += LIST_COST(len);
	r = fits(q, &s, credit(q), why, whylen);
	if (r < 0)
		return r;
	rl = calloc(1, sizeof(*rl));
	if (!rl)
		return -ENOMEM;
	rl->e.ns = strdup(q->ns);
	rl->e.name = strdup(q->text);
	rl->lit = calloc(s.nlit + 1, sizeof(*rl->lit));
	rl->re = calloc(s.nre + 1, sizeof(*rl->re));
	k.rl = rl;
	r = rl->e.ns && rl->e.name && rl->lit && rl->re ? each_item(rl->e.name, compile_item, &k)
							: -ENOMEM;
	rl->refs = 1;
	/* what was kept: invalid entries cost nothing */
	rl->cost = LIST_COST(len) + rl->nlit * LIT_COST + rl->n * RE_COST(0) + 65 * k.relen;
	if (r == 0)
		r = reload_tab_put(&lists, &rl->e);
	if (r == 0) {
		r = charge(rl, q->ns);
		if (r < 0)
			reload_tab_del(&lists, &rl->e);
	}
	if (r < 0) {
		relist_free(rl);
		return r;
	}
	*out = rl;
	return 0;
}

void reload_relist_put(struct reload_relist *rl)
{
	struct ns_use *u;

	if (!rl || --rl->refs > 0)
		return;
	reload_tab_del(&lists, &rl->e);
	u = rl->nsu;
	used -= rl->cost;
	u->used -= rl->cost;
	if (--u->lists == 0) {
		reload_tab_del(&nss, &u->e);
		free(u->e.ns);
		free(u->e.name);
		free(u);
	}
	relist_free(rl);
}

size_t reload_relist_count(const struct reload_relist *rl)
{
	return rl ? rl->nlit + rl->n : 0;
}

const char *reload_relist_literal(const struct reload_relist *rl, size_t i, size_t *len)
{
	if (!rl || i >= rl->nlit)
		return NULL;
	*len = rl->lit[i][1];
	return rl->e.name + rl->lit[i][0];
}

size_t reload_relist_regexes(const struct reload_relist *rl)
{
	return rl ? rl->n : 0;
}

int reload_relist_match(const struct reload_relist *rl, const char *name)
{
	size_t i, len = strlen(name);

	if (!rl)
		return 0;
	for (i = 0; i < rl->nlit; i++)
		if (rl->lit[i][1] == len && memcmp(rl->e.name + rl->lit[i][0], name, len) == 0)
			return 1;
	for (i = 0; i < rl->n; i++)
		if (goregex_match(rl->re[i], name, len) == 1)
			return 1;
	return 0;
}
