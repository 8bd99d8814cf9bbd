/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_val: the values templates see, the arena, Go's truth, equality and fmt's %v. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

const struct gotmpl_val gotmpl_nil_val = {.kind = GOTMPL_NIL, .arena = 1};

/* ---- arena ---- */

struct gotmpl_chunk {
	struct gotmpl_chunk *next;
	size_t size, used;
	max_align_t data[];
};

void gotmpl_arena_init(struct gotmpl_arena *a, size_t max)
{
	memset(a, 0, sizeof(*a));
	a->max = max;
	a->work_max = ~0ul;
}

int gotmpl_work(struct gotmpl_arena *a, size_t n)
{
	a->work += n;
	return a->work > a->work_max ? -ELOOP : 0;
}

size_t gotmpl_arena_inuse(const struct gotmpl_arena *a)
{
	size_t n = 0;

	for (const struct gotmpl_chunk *c = a->head; c; c = c->next)
		n += sizeof(*c) + c->used;
	return n;
}

size_t gotmpl_room(struct gotmpl_arena *a, unsigned per_byte)
{
	unsigned long left = a->work < a->work_max ? a->work_max - a->work : 0;

	return left / per_byte < GT_STR_MAX ? left / per_byte : GT_STR_MAX;
}

void gotmpl_arena_free(struct gotmpl_arena *a)
{
	struct gotmpl_chunk *c = a->head, *n;

	while (c) {
		n = c->next;
		free(c);
		c = n;
	}
	a->head = NULL;
	a->used = 0;
}

void *gotmpl_alloc(struct gotmpl_arena *a, size_t n)
{
	struct gotmpl_chunk *c = a->head;
	size_t need = (n + 15) & ~(size_t)15, size;
	void *p;

	if (need < n)
		return NULL;
	if (!c || c->size - c->used < need) {
		size = need > 16384 ? need : 16384;
		if (a->used + size + sizeof(*c) > a->max || a->used + size < a->used) {
			a->over = 1;
			return NULL;
		}
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = a->head;
		a->head = c;
		a->used += size + sizeof(*c);
	}
	p = (char *)c->data + c->used;
	c->used += need;
	memset(p, 0, n);
	return p;
}

char *gotmpl_strdup(struct gotmpl_arena *a, const char *s, size_t n)
{
	char *p = gotmpl_alloc(a, n + 1);

	if (p && n)
		memcpy(p, s, n);
	return p;
}

/* ---- arena values ---- */

static struct gotmpl_val *nv(struct gotmpl_arena *a, int kind)
{
	struct gotmpl_val *v = gotmpl_alloc(a, sizeof(*v));

	if (v) {
		v->kind = (unsigned char)kind;
		v->arena = 1;
	}
	return v;
}

struct gotmpl_val *gotmpl_str(struct gotmpl_arena *a, const char *s, size_t n)
{
	struct gotmpl_val *v = nv(a, GOTMPL_STRING);

	if (!v)
		return NULL;
	v->u.s.p = gotmpl_strdup(a, s, n);
	v->u.s.n = n;
	return v->u.s.p ? v : NULL;
}

struct gotmpl_val *gotmpl_cstr(struct gotmpl_arena *a, const char *s)
{
	return gotmpl_str(a, s, strlen(s));
}

struct gotmpl_val *gotmpl_int(struct gotmpl_arena *a, int64_t i, int sub)
{
	struct gotmpl_val *v = nv(a, GOTMPL_INT);

	if (v) {
		v->u.i = i;
		v->sub = (unsigned char)sub;
	}
	return v;
}

struct gotmpl_val *gotmpl_float(struct gotmpl_arena *a, double f)
{
	struct gotmpl_val *v = nv(a, GOTMPL_FLOAT);

	if (v)
		v->u.f = f;
	return v;
}

struct gotmpl_val *gotmpl_bool(struct gotmpl_arena *a, int b)
{
	struct gotmpl_val *v = nv(a, GOTMPL_BOOL);

	if (v)
		v->u.b = !!b;
	return v;
}

struct gotmpl_val *gotmpl_list(struct gotmpl_arena *a, size_t cap, int sub)
{
	struct gotmpl_val *v = nv(a, GOTMPL_LIST);

	if (!v)
		return NULL;
	v->sub = (unsigned char)sub;
	if (cap) {
		v->u.l.v = gotmpl_alloc(a, cap * sizeof(*v->u.l.v));
		if (!v->u.l.v)
			return NULL;
		v->u.l.cap = cap;
	}
	return v;
}

struct gotmpl_val *gotmpl_map(struct gotmpl_arena *a, int sub)
{
	struct gotmpl_val *v = nv(a, GOTMPL_MAP);

	if (v)
		v->sub = (unsigned char)sub;
	return v;
}

int gotmpl_alist_push(struct gotmpl_arena *a, struct gotmpl_val *l, struct gotmpl_val *v)
{
	if (!v)
		return -ENOMEM;
	if (l->u.l.n == l->u.l.cap) {
		size_t cap = l->u.l.cap ? 2 * l->u.l.cap : 8;
		struct gotmpl_val **n = gotmpl_alloc(a, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		if (l->u.l.n)
			memcpy(n, l->u.l.v, l->u.l.n * sizeof(*n));
		l->u.l.v = n;
		l->u.l.cap = cap;
	}
	l->u.l.v[l->u.l.n++] = v;
	return 0;
}

static int keycmp(const char *a, size_t an, const char *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	if (c)
		return c;
	return an < bn ? -1 : an > bn;
}

/* Where k is or goes in m: *found set when present. */
static size_t map_slot(const struct gotmpl_val *m, const char *k, size_t klen, int *found)
{
	size_t lo = 0, hi = m->u.m.n;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = keycmp(m->u.m.e[mid].k, m->u.m.e[mid].klen, k, klen);

		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

long gotmpl_map_find(const struct gotmpl_val *m, const char *k, size_t klen)
{
	int found;
	size_t i = map_slot(m, k, klen, &found);

	return found ? (long)i : -1;
}

int gotmpl_map_put(struct gotmpl_arena *a, struct gotmpl_val *m, const char *k, size_t klen,
		   struct gotmpl_val *v)
{
	int found;
	size_t i = map_slot(m, k, klen, &found);

	if (found) {
		m->u.m.e[i].v = v;
		return 0;
	}
	if (m->u.m.n == m->u.m.cap) {
		size_t cap = m->u.m.cap ? 2 * m->u.m.cap : 8;
		struct gotmpl_kv *n = gotmpl_alloc(a, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		if (m->u.m.n)
			memcpy(n, m->u.m.e, m->u.m.n * sizeof(*n));
		m->u.m.e = n;
		m->u.m.cap = cap;
	}
	if (gotmpl_work(a, m->u.m.n - i + 1)) /* a sorted insert moves the entries after it */
		return -ELOOP;
	memmove(m->u.m.e + i + 1, m->u.m.e + i, (m->u.m.n - i) * sizeof(*m->u.m.e));
	m->u.m.e[i].k = gotmpl_strdup(a, k, klen);
	if (!m->u.m.e[i].k)
		return -ENOMEM;
	m->u.m.e[i].klen = klen;
	m->u.m.e[i].v = v;
	m->u.m.n++;
	return 0;
}

struct gotmpl_val *gotmpl_zero_elem(struct gotmpl_arena *a, const struct gotmpl_val *c)
{
	if (c->sub == GT_STRS)
		return gotmpl_str(a, "", 0);
	return GT_NIL;
}

/* ---- caller-built values (malloc'd, freed by gotmpl_val_free) ---- */

static struct gotmpl_val *cv(int kind)
{
	struct gotmpl_val *v = calloc(1, sizeof(*v));

	if (v)
		v->kind = (unsigned char)kind;
	return v;
}

struct gotmpl_val *gotmpl_val_nil(void)
{
	return cv(GOTMPL_NIL);
}

struct gotmpl_val *gotmpl_val_bool(int b)
{
	struct gotmpl_val *v = cv(GOTMPL_BOOL);

	if (v)
		v->u.b = !!b;
	return v;
}

struct gotmpl_val *gotmpl_val_int(int64_t i)
{
	struct gotmpl_val *v = cv(GOTMPL_INT);

	if (v)
		v->u.i = i;
	return v;
}

struct gotmpl_val *gotmpl_val_int64(int64_t i)
{
	struct gotmpl_val *v = gotmpl_val_int(i);

	if (v)
		v->sub = GT_INT64;
	return v;
}

struct gotmpl_val *gotmpl_val_float(double f)
{
	struct gotmpl_val *v = cv(GOTMPL_FLOAT);

	if (v)
		v->u.f = f;
	return v;
}

struct gotmpl_val *gotmpl_val_strn(const char *s, size_t n)
{
	struct gotmpl_val *v = cv(GOTMPL_STRING);

	if (!v)
		return NULL;
	v->u.s.p = malloc(n + 1);
	if (!v->u.s.p) {
		free(v);
		return NULL;
	}
	if (n)
		memcpy(v->u.s.p, s, n);
	v->u.s.p[n] = '\0';
	v->u.s.n = n;
	return v;
}

struct gotmpl_val *gotmpl_val_str(const char *s)
{
	return gotmpl_val_strn(s, strlen(s));
}

struct gotmpl_val *gotmpl_val_list(int strings)
{
	struct gotmpl_val *v = cv(GOTMPL_LIST);

	if (v)
		v->sub = strings ? GT_STRS : GT_PLAIN;
	return v;
}

struct gotmpl_val *gotmpl_val_map(int strings)
{
	struct gotmpl_val *v = cv(GOTMPL_MAP);

	if (v)
		v->sub = strings ? GT_STRS : GT_PLAIN;
	return v;
}

enum gotmpl_kind gotmpl_val_kind(const struct gotmpl_val *v)
{
	return v ? (enum gotmpl_kind)v->kind : GOTMPL_NIL;
}

int gotmpl_list_push(struct gotmpl_val *l, struct gotmpl_val *v)
{
	if (!v)
		return -ENOMEM;
	if (!l || l->arena || l->kind != GOTMPL_LIST ||
	    (l->sub == GT_STRS && v->kind != GOTMPL_STRING)) {
		gotmpl_val_free(v);
		return -EINVAL;
	}
	if (l->u.l.n == l->u.l.cap) {
		size_t cap = l->u.l.cap ? 2 * l->u.l.cap : 8;
		struct gotmpl_val **n = realloc(l->u.l.v, cap * sizeof(*n));

		if (!n) {
			gotmpl_val_free(v);
			return -ENOMEM;
		}
		l->u.l.v = n;
		l->u.l.cap = cap;
	}
	l->u.l.v[l->u.l.n++] = v;
	return 0;
}

int gotmpl_map_set(struct gotmpl_val *m, const char *key, struct gotmpl_val *v)
{
	size_t klen = strlen(key), i;
	int found;

	if (!v)
		return -ENOMEM;
	if (!m || m->arena || m->kind != GOTMPL_MAP ||
	    (m->sub == GT_STRS && v->kind != GOTMPL_STRING)) {
		gotmpl_val_free(v);
		return -EINVAL;
	}
	i = map_slot(m, key, klen, &found);
	if (found) {
		gotmpl_val_free(m->u.m.e[i].v);
		m->u.m.e[i].v = v;
		return 0;
	}
	if (m->u.m.n == m->u.m.cap) {
		size_t cap = m->u.m.cap ? 2 * m->u.m.cap : 8;
		struct gotmpl_kv *n = realloc(m->u.m.e, cap * sizeof(*n));

		if (!n) {
			gotmpl_val_free(v);
			return -ENOMEM;
		}
		m->u.m.e = n;
		m->u.m.cap = cap;
	}
	memmove(m->u.m.e + i + 1, m->u.m.e + i, (m->u.m.n - i) * sizeof(*m->u.m.e));
	m->u.m.e[i].k = strdup(key);
	if (!m->u.m.e[i].k) {
		memmove(m->u.m.e + i, m->u.m.e + i + 1, (m->u.m.n - i) * sizeof(*m->u.m.e));
		gotmpl_val_free(v);
		return -ENOMEM;
	}
	m->u.m.e[i].klen = klen;
	m->u.m.e[i].v = v;
	m->u.m.n++;
	return 0;
}

void gotmpl_val_free(struct gotmpl_val *v)
{
	size_t i;

	if (!v || v->arena)
		return;
	switch (v->kind) {
	case GOTMPL_STRING:
		free(v->u.s.p);
		break;
	case GOTMPL_LIST:
		for (i = 0; i < v->u.l.n; i++)
			gotmpl_val_free(v->u.l.v[i]);
		free(v->u.l.v);
		break;
	case GOTMPL_MAP:
		for (i = 0; i < v->u.m.n; i++) {
			free(v->u.m.e[i].k);
			gotmpl_val_free(v->u.m.e[i].v);
		}
		free(v->u.m.e);
		break;
	}
	free(v);
}

/* ---- Go's view of a value ---- */

int gotmpl_truth(const struct gotmpl_val *v)
{
	switch (v->kind) {
	case GOTMPL_BOOL:
		return v->u.b;
	case GOTMPL_INT:
		return v->u.i != 0;
	case GOTMPL_FLOAT:
		return v->u.f != 0;
	case GOTMPL_STRING:
		return v->u.s.n != 0;
	case GOTMPL_LIST:
		return v->u.l.n != 0;
	case GOTMPL_MAP:
		return v->u.m.n != 0;
	case GT_OBJ: /* a non-nil pointer, or a struct */
		return 1;
	}
	return 0;
}

const char *gotmpl_kindname(const struct gotmpl_val *v)
{
	static const char *const k[] = {"invalid", "bool",  "int", "float64",
					"string",  "slice", "map"};

	if (v->kind == GOTMPL_INT && v->sub == GT_INT64)
		return "int64";
	if (v->kind == GOTMPL_INT && v->sub == GT_UINT64)
		return "uint64";
	if (v->kind == GOTMPL_INT && v->sub == GT_UINT8)
		return "uint8";
	if (v->kind == GT_OBJ)
		return v->u.o.t->kind;
	return k[v->kind];
}

const char *gotmpl_typename(const struct gotmpl_val *v)
{
	switch (v->kind) {
	case GOTMPL_LIST:
		return v->sub == GT_STRS    ? "[]string"
		       : v->sub == GT_INTS  ? "[]int"
		       : v->sub == GT_BYTES ? "[]uint8"
					    : "[]interface {}";
	case GOTMPL_MAP:
		return v->sub == GT_STRS ? "map[string]string" : "map[string]interface {}";
	case GOTMPL_NIL:
		return "<nil>";
	case GT_OBJ:
		return v->u.o.t->name;
	}
	return gotmpl_kindname(v);
}

int gotmpl_strcmp(const struct gotmpl_val *a, const struct gotmpl_val *b)
{
	return keycmp(a->u.s.p, a->u.s.n, b->u.s.p, b->u.s.n);
}

/* ---- printing ---- */

int gotmpl_utf8(const char *s, size_t n, uint32_t *r)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c;
	int len, i;

	if (u[0] < 0x80) {
		*r = u[0];
		return 1;
	}
	if ((u[0] & 0xE0) == 0xC0) {
		len = 2;
		c = u[0] & 0x1F;
	} else if ((u[0] & 0xF0) == 0xE0) {
		len = 3;
		c = u[0] & 0x0F;
	} else if ((u[0] & 0xF8) == 0xF0) {
		len = 4;
		c = u[0] & 0x07;
	} else {
		goto bad;
	}
	if ((size_t)len > n)
		goto bad;
	for (i = 1; i < len; i++) {
		if ((u[i] & 0xC0) != 0x80)
			goto bad;
		c = (c << 6) | (u[i] & 0x3F);
	}
	if ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		goto bad;
	*r = c;
	return len;
bad:
	*r = 0xFFFD;
	return 1;
}

int gotmpl_put_utf8(struct strbuf *sb, uint32_t r)
{
	char b[4];

	if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF))
		r = 0xFFFD;
	if (r < 0x80)
		return sb_addch(sb, (char)r);
	if (r < 0x800) {
		b[0] = (char)(0xC0 | (r >> 6));
		b[1] = (char)(0x80 | (r & 0x3F));
		return sb_addn(sb, b, 2);
	}
	if (r < 0x10000) {
		b[0] = (char)(0xE0 | (r >> 12));
		b[1] = (char)(0x80 | ((r >> 6) & 0x3F));
		b[2] = (char)(0x80 | (r & 0x3F));
		return sb_addn(sb, b, 3);
	}
	b[0] = (char)(0xF0 | (r >> 18));
	b[1] = (char)(0x80 | ((r >> 12) & 0x3F));
	b[2] = (char)(0x80 | ((r >> 6) & 0x3F));
	b[3] = (char)(0x80 | (r & 0x3F));
	return sb_addn(sb, b, 4);
}

/* A rune strconv.IsPrint would call printable (approximated outside Latin-1). */
int gotmpl_isprint(uint32_t r)
{
	if (r < 0x20 || r == 0x7F || (r >= 0x80 && r < 0xA0) || r == 0xAD ||
	    (r & 0xFFFE) == 0xFFFE || r >= 0xF0000) /* noncharacters; planes 15, 16: private use */
		return 0;
	if (r == 0xFFFD || (r >= 0xFFF9 && r <= 0xFFFB) || (r >= 0x2028 && r <= 0x202E) ||
	    (r >= 0x200B && r <= 0x200F) || (r >= 0x2060 && r <= 0x206F) || r == 0xFEFF ||
	    (r >= 0xE000 && r <= 0xF8FF))
		return r == 0xFFFD;
	return 1;
}

int gotmpl_quote(struct strbuf *sb, const char *s, size_t n, char q)
{
	size_t i = 0;
	int rc = sb_addch(sb, q);

	while (!rc && i < n) {
		uint32_t r;
		int l = gotmpl_utf8(s + i, n - i, &r);
		unsigned char c = (unsigned char)s[i];

		if (r == 0xFFFD && l == 1 && c >= 0x80) {
			rc = sb_addf(sb, "\\x%02x", c);
		} else if (r == (uint32_t)q || r == '\\') {
			rc = sb_addch(sb, '\\') ?: sb_addch(sb, (char)r);
		} else if (gotmpl_isprint(r)) {
			rc = sb_addn(sb, s + i, (size_t)l);
		} else {
			switch (r) {
			case '\a':
				rc = sb_add(sb, "\\a");
				break;
			case '\b':
				rc = sb_add(sb, "\\b");
				break;
			case '\f':
				rc = sb_add(sb, "\\f");
				break;
			case '\n':
				rc = sb_add(sb, "\\n");
				break;
			case '\r':
				rc = sb_add(sb, "\\r");
				break;
			case '\t':
				rc = sb_add(sb, "\\t");
				break;
			case '\v':
				rc = sb_add(sb, "\\v");
				break;
			default:
				if (r < 0x20 || r == 0x7F)
					rc = sb_addf(sb, "\\x%02x", r);
				else if (r < 0x10000)
					rc = sb_addf(sb, "\\u%04x", r);
				else
					rc = sb_addf(sb, "\\U%08x", r);
			}
		}
		i += (size_t)l;
	}
	return rc ?: sb_addch(sb, q);
}

int gotmpl_fmt_float(struct strbuf *sb, double f, char fmt, int prec)
{
	char digits[40], buf[64];
	int nd, dp, p, shortest = prec < 0, eprec, exp, rc = 0;
	const char *d;

	if (isnan(f))
		return sb_add(sb, "NaN");
	if (isinf(f))
		return sb_add(sb, f > 0 ? "+Inf" : "-Inf");
	if (fmt == 'f' && !shortest)
		return sb_addf(sb, "%.*f", prec, f);
	if ((fmt == 'e' || fmt == 'E') && !shortest)
		return sb_addf(sb, fmt == 'e' ? "%.*e" : "%.*E", prec, f);
	/* the shortest decimal digits that read back as f (or prec of them for %g) */
	if (shortest) {
		for (p = 0; p < 17; p++) {
			snprintf(buf, sizeof(buf), "%.*e", p, f);
			if (strtod(buf, NULL) == f)
				break;
		}
	} else {
		p = prec == 0 ? 0 : prec - 1;
		if (p > 30)
			p = 30;
		snprintf(buf, sizeof(buf), "%.*e", p, f);
	}
	/* buf: [-]d.ddde[+-]xx */
	d = buf[0] == '-' ? buf + 1 : buf;
	nd = 0;
	for (; *d && *d != 'e'; d++)
		if (*d >= '0' && *d <= '9')
			digits[nd++] = *d;
	exp = atoi(d + 1);
	while (nd > 1 && digits[nd - 1] == '0' && (shortest || fmt == 'g' || fmt == 'G'))
		nd--;
	if (f == 0)
		nd = 1, exp = 0;
	dp = exp + 1;
	if (buf[0] == '-')
		rc = sb_addch(sb, '-');
	if (fmt == 'e' || fmt == 'E' || fmt == 'g' || fmt == 'G') {
		eprec = shortest ? 6 : (prec == 0 ? 1 : prec);
		if (!shortest && eprec > nd && nd >= dp)
			eprec = nd;
		if (fmt == 'e' || fmt == 'E' || exp < -4 || exp >= eprec) {
			rc = rc ?: sb_addch(sb, digits[0]);
			if (nd > 1)
				rc = rc ?: sb_addch(sb, '.') ?: sb_addn(sb, digits + 1, (size_t)nd - 1);
			return rc
				   ?: sb_addf(sb, "%c%c%02d",
					      (fmt == 'E' || fmt == 'G') ? 'E' : 'e',
					      exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
		}
	}
	/* %f form of the digits */
	if (dp <= 0) {
		rc = rc ?: sb_add(sb, "0.");
		for (p = 0; p < -dp && !rc; p++)
			rc = sb_addch(sb, '0');
		return rc ?: sb_addn(sb, digits, (size_t)nd);
	}
	for (p = 0; p < dp && !rc; p++)
		rc = sb_addch(sb, p < nd ? digits[p] : '0');
	if (nd > dp)
		rc = rc ?: sb_addch(sb, '.') ?: sb_addn(sb, digits + dp, (size_t)(nd - dp));
	return rc;
}

/* fmt's %v of v, depth levels down: -ELOOP past GT_VAL_DEPTH_MAX (a cycle a dict made, or a
 * chain of lists: Go's fmt would recurse until its stack ends). */
static int fmt_v(struct strbuf *sb, const struct gotmpl_val *v, int depth)
{
	size_t i;
	int rc = 0;

	if (depth > GT_VAL_DEPTH_MAX)
		return -ELOOP;
	switch (v->kind) {
	case GOTMPL_NIL:
		return sb_add(sb, "<nil>");
	case GOTMPL_BOOL:
		return sb_add(sb, v->u.b ? "true" : "false");
	case GOTMPL_INT: { /* by hand: vsnprintf twice a number made printing a list slow */
		char d[24], *p = d + sizeof(d);
		int neg = v->u.i < 0 && !gotmpl_bigu(v);
		uint64_t u = neg ? -(uint64_t)v->u.i : (uint64_t)v->u.i;

		do
			*--p = (char)('0' + u % 10);
		while (u /= 10);
		if (neg)
			*--p = '-';
		return sb_addn(sb, p, (size_t)(d + sizeof(d) - p));
	}
	case GOTMPL_FLOAT:
		return gotmpl_fmt_float(sb, v->u.f, 'g', -1);
	case GOTMPL_STRING:
		return sb_addn(sb, v->u.s.p, v->u.s.n);
	case GOTMPL_LIST:
		rc = sb_addch(sb, '[');
		for (i = 0; i < v->u.l.n && !rc; i++)
			rc = (i ? sb_addch(sb, ' ') : 0) ?: fmt_v(sb, v->u.l.v[i], depth + 1);
		return rc ?: sb_addch(sb, ']');
	case GOTMPL_MAP:
		rc = sb_add(sb, "map[");
		for (i = 0; i < v->u.m.n && !rc; i++)
			rc = (i ? sb_addch(sb, ' ') : 0)
				 ?: sb_addn(sb, v->u.m.e[i].k, v->u.m.e[i].klen)
				 ?: sb_addch(sb, ':') ?: fmt_v(sb, v->u.m.e[i].v, depth + 1);
		return rc ?: sb_addch(sb, ']');
	case GT_OBJ: /* fmt calls its String() */
		return v->u.o.t->str(sb, v->u.o.p);
	}
	return 0;
}

int gotmpl_fmt_v(struct strbuf *sb, const struct gotmpl_val *v)
{
	return fmt_v(sb, v, 0);
}
