/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_func: text/template's builtin functions (funcs.go) and the table of every function. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

/* ---- parameter types (one letter each, see struct gotmpl_func) ---- */

const char *gotmpl_param_typename(char t)
{
	switch (t) {
	case 's':
		return "string";
	case 'i':
		return "int";
	case 'u':
		return "uint32";
	case 'f':
		return "float64";
	case 'b':
		return "bool";
	case 'm':
		return "map[string]interface {}";
	case 'l':
		return "[]interface {}";
	case 'V':
		return "*semver.Version";
	}
	return "interface {}";
}

int gotmpl_param_nilable(char t)
{
	return t == 'm' || t == 'l' || t == 'V';
}

int gotmpl_param_ok(const struct gotmpl_val *v, char t)
{
	switch (t) {
	case 's':
		return v->kind == GOTMPL_STRING;
	case 'i':
		return v->kind == GOTMPL_INT && v->sub == GT_PLAIN;
	case 'u': /* no template value is a uint32: only a constant converts (exec's evalArg) */
		return 0;
	case 'f':
		return v->kind == GOTMPL_FLOAT;
	case 'b':
		return v->kind == GOTMPL_BOOL;
	case 'm':
		return v->kind == GOTMPL_MAP && v->sub == GT_PLAIN;
	case 'l':
		return v->kind == GOTMPL_LIST && v->sub == GT_PLAIN;
	case 'V':
		return v->kind == GT_OBJ &&
		       strcmp(gotmpl_typename(v), gotmpl_param_typename(t)) == 0;
	}
	return 1;
}

char gotmpl_func_param(const struct gotmpl_func *f, size_t i, size_t *nfixed, int *variadic)
{
	const char *sig = f->sig, *star;

	if (!sig) {
		*nfixed = 0;
		*variadic = 1;
		return 'a';
	}
	star = strchr(sig, '*');
	*variadic = star != NULL;
	*nfixed = star ? (size_t)(star - sig) : strlen(sig);
	if (i < *nfixed)
		return sig[i];
	return star ? star[1] : 0;
}

GT_FN(f_not)
{
	(void)ac;
	GT_RES(gotmpl_bool(c->a, !gotmpl_truth(av[0])));
}

/* The type funcs.go's length and index name: after indirect(), so a *T's is T's. */
static const char *indirect_typename(const struct gotmpl_val *v)
{
	const char *t = gotmpl_typename(v);

	return t + (v->kind == GT_OBJ && t[0] == '*');
}

GT_FN(f_len)
{
	const struct gotmpl_val *v = av[0];

	(void)ac;
	switch (v->kind) {
	case GOTMPL_STRING:
		GT_RES(gotmpl_int(c->a, (int64_t)v->u.s.n, GT_PLAIN));
	case GOTMPL_LIST:
		GT_RES(gotmpl_int(c->a, (int64_t)v->u.l.n, GT_PLAIN));
	case GOTMPL_MAP:
		GT_RES(gotmpl_int(c->a, (int64_t)v->u.m.n, GT_PLAIN));
	case GOTMPL_NIL: /* data's nil is an interface holding nil; the literal nil no value */
		if (v != GT_NIL)
			return gotmpl_fail(c, "len of nil pointer");
		return gotmpl_fail(c, "reflect: call of reflect.Value.Type on zero Value");
	}
	return gotmpl_fail(c, "len of type %s", indirect_typename(v));
}

/* Go's indexArg: an index into something of length cap (slices allow cap itself). */
static int index_arg(struct gotmpl_fctx *c, const struct gotmpl_val *i, size_t cap, int64_t *out)
{
	if (i->kind == GOTMPL_NIL)
		return gotmpl_fail(c, "cannot index slice/array with nil");
	if (i->kind != GOTMPL_INT)
		return gotmpl_fail(c, "cannot index slice/array with type %s", gotmpl_typename(i));
	if (i->u.i < 0 || (uint64_t)i->u.i > cap)
		return gotmpl_fail(c, "index out of range: %lld", (long long)i->u.i);
	*out = i->u.i;
	return 0;
}

GT_FN(f_index)
{
	struct gotmpl_val *v = av[0];
	int64_t x = 0;
	long k;

	for (int i = 1; i < ac; i++) {
		const struct gotmpl_val *ix = av[i];

		switch (v->kind) {
		case GOTMPL_LIST:
		case GOTMPL_STRING: {
			size_t n = v->kind == GOTMPL_LIST ? v->u.l.n : v->u.s.n;

			if (index_arg(c, ix, n, &x))
				return -EINVAL;
			if ((size_t)x == n)
				return gotmpl_fail(c, "index out of range: %lld", (long long)x);
			if (v->kind == GOTMPL_LIST)
				v = v->u.l.v[x];
			else if (!(v = gotmpl_int(c->a, (unsigned char)v->u.s.p[x], GT_PLAIN)))
				return -ENOMEM;
			break;
		}
		case GOTMPL_MAP:
			if (ix->kind == GOTMPL_NIL)
				return gotmpl_fail(c, "value is nil; should be of type string");
			if (ix->kind != GOTMPL_STRING)
				return gotmpl_fail(c, "value has type %s; should be string",
						   gotmpl_typename(ix));
			k = gotmpl_map_find(v, ix->u.s.p, ix->u.s.n);
			v = k < 0 ? gotmpl_zero_elem(c->a, v) : v->u.m.e[k].v;
			if (!v)
				return -ENOMEM;
			break;
		case GOTMPL_NIL:
			return gotmpl_fail(c, "index of untyped nil");
		default:
			return gotmpl_fail(c, "can't index item of type %s", indirect_typename(v));
		}
	}
	*res = v;
	return 0;
}

GT_FN(f_slice)
{
	struct gotmpl_val *v = av[0], *r;
	int64_t idx[3] = {0, 0, 0};
	size_t n, cap;

	if (v->kind == GOTMPL_NIL)
		return gotmpl_fail(c, "slice of untyped nil");
	if (ac > 4)
		return gotmpl_fail(c, "too many slice indexes: %d", ac - 1);
	if (v->kind == GOTMPL_STRING) {
		if (ac == 4)
			return gotmpl_fail(c, "cannot 3-index slice a string");
		cap = n = v->u.s.n;
	} else if (v->kind == GOTMPL_LIST) {
		cap = v->u.l.cap > v->u.l.n ? v->u.l.cap : v->u.l.n;
		n = v->u.l.n;
	} else {
		return gotmpl_fail(c, "can't slice item of type %s", gotmpl_typename(v));
	}
	idx[1] = (int64_t)n;
	for (int i = 1; i < ac; i++)
		if (index_arg(c, av[i], cap, &idx[i - 1]))
			return -EINVAL;
	if (idx[0] > idx[1])
		return gotmpl_fail(c, "invalid slice index: %lld > %lld", (long long)idx[0],
				   (long long)idx[1]);
	if (ac == 4 && idx[1] > idx[2])
		return gotmpl_fail(c, "invalid slice index: %lld > %lld", (long long)idx[1],
				   (long long)idx[2]);
	if ((size_t)idx[1] > n) /* past the length into capacity: we keep no such elements */
		return gotmpl_fail(c, "index out of range: %lld", (long long)idx[1]);
	if (v->kind == GOTMPL_STRING)
		GT_RES(gotmpl_str(c->a, v->u.s.p + idx[0], (size_t)(idx[1] - idx[0])));
	r = gotmpl_list(c->a, (size_t)(idx[1] - idx[0]), v->sub);
	if (!r)
		return -ENOMEM;
	for (int64_t i = idx[0]; i < idx[1]; i++)
		r->u.l.v[r->u.l.n++] = v->u.l.v[i];
	*res = r;
	return 0;
}

/* Go's basicKind classes for comparisons. */
enum { K_INVALID, K_BOOL, K_INT, K_FLOAT, K_STRING, K_OTHER };

static int basic_kind(const struct gotmpl_val *v)
{
	switch (v->kind) {
	case GOTMPL_NIL:
		return K_INVALID;
	case GOTMPL_BOOL:
		return K_BOOL;
	case GOTMPL_INT:
		return K_INT;
	case GOTMPL_FLOAT:
		return K_FLOAT;
	case GOTMPL_STRING:
		return K_STRING;
	}
	return K_OTHER;
}

/*
 * eq of two objects (funcs.go's eq, Go 1.25: neither is a basic kind, so == of the two
 * interfaces: pointers by identity, structs field by field; Kinds that differ are an error).
 */
static int eq_obj(struct gotmpl_fctx *c, const struct gotmpl_val *a, const struct gotmpl_val *b)
{
	struct strbuf sa = STRBUF_INIT(4096), sb = STRBUF_INIT(4096);

	if (a->kind == GT_OBJ && b->kind == GT_OBJ && a->u.o.t == b->u.o.t)
		return a->u.o.p == b->u.o.p || (strcmp(gotmpl_kindname(a), "ptr") != 0 &&
						a->u.o.t->same(a->u.o.p, b->u.o.p));
	if (gotmpl_fmt_v(&sa, a) || gotmpl_fmt_v(&sb, b))
		gotmpl_fail(c, "non-comparable types %s, %s", gotmpl_typename(a),
			    gotmpl_typename(b));
	else
		gotmpl_fail(c, "non-comparable types %s: %s, %s: %s", sa.buf, gotmpl_typename(a),
			    gotmpl_typename(b), sb.buf);
	sb_free(&sa);
	sb_free(&sb);
	return -EINVAL;
}

/* funcs.go's eq of two values of no basic kind: canCompare (the same type), then the error of a
 * type that is not comparable; values as fmt prints the reflect.Values (%s, %v). */
static int non_comparable(struct gotmpl_fctx *c, const struct gotmpl_val *a,
			  const struct gotmpl_val *b)
{
	struct strbuf sa = STRBUF_INIT(GOTMPL_ERR_MAX), sb = STRBUF_INIT(GOTMPL_ERR_MAX);
	struct gotmpl_val *av[1] = {(struct gotmpl_val *)a}, *bv[1] = {(struct gotmpl_val *)b};
	int same = strcmp(gotmpl_typename(a), gotmpl_typename(b)) == 0;

	gotmpl_sprintf(c, &sa, "%s", 2, same ? bv : av, 1);
	gotmpl_sprintf(c, &sb, "%v", 2, bv, 1);
	if (same)
		gotmpl_fail(c, "non-comparable type %s: %s", sa.buf ? sa.buf : "",
			    gotmpl_typename(b));
	else
		gotmpl_fail(c, "non-comparable types %s: %s, %s: %s", sa.buf ? sa.buf : "",
			    gotmpl_typename(a), gotmpl_typename(b), sb.buf ? sb.buf : "");
	sb_free(&sa);
	sb_free(&sb);
	return -EINVAL;
}

/* eq of two values: 1, 0 or -EINVAL. */
static int eq2(struct gotmpl_fctx *c, const struct gotmpl_val *a, const struct gotmpl_val *b)
{
	int ka = basic_kind(a), kb = basic_kind(b);

	if (ka == K_OTHER && kb == K_OTHER && (a->kind == GT_OBJ || b->kind == GT_OBJ))
		return eq_obj(c, a, b);
	if (ka != kb) {
		if (ka != K_INVALID && kb != K_INVALID)
			return gotmpl_fail(c, "incompatible types for comparison");
		return 0;
	}
	switch (ka) {
	case K_INVALID:
		return 1;
	case K_BOOL:
		return a->u.b == b->u.b;
	case K_INT: /* an int is never a uint past INT64_MAX (Go 1.18's eq of int and uint) */
		return a->u.i == b->u.i && gotmpl_bigu(a) == gotmpl_bigu(b);
	case K_FLOAT:
		return a->u.f == b->u.f;
	case K_STRING:
		return gotmpl_strcmp(a, b) == 0;
	}
	return non_comparable(c, a, b);
}

GT_FN(f_eq)
{
	int t = 0;

	if (ac < 2)
		return gotmpl_fail(c, "missing argument for comparison");
	for (int i = 1; i < ac && !t; i++) {
		t = eq2(c, av[0], av[i]);
		if (t < 0)
			return t;
	}
	GT_RES(gotmpl_bool(c->a, t));
}

GT_FN(f_ne)
{
	int t = eq2(c, av[0], av[1]);

	(void)ac;
	if (t < 0)
		return t;
	GT_RES(gotmpl_bool(c->a, !t));
}

/* lt of two values: 1, 0 or -EINVAL. */
static int lt2(struct gotmpl_fctx *c, const struct gotmpl_val *a, const struct gotmpl_val *b)
{
	int ka = basic_kind(a), kb = basic_kind(b);

	/* funcs.go's lt: no basic kind, then kinds that differ, then bool */
	if (ka == K_INVALID || ka == K_OTHER || kb == K_INVALID || kb == K_OTHER)
		return gotmpl_fail(c, "invalid type for comparison");
	if (ka != kb)
		return gotmpl_fail(c, "incompatible types for comparison");
	if (ka == K_BOOL)
		return gotmpl_fail(c, "invalid type for comparison");
	switch (ka) {
	case K_INT: /* a uint past INT64_MAX is above every int */
		if (gotmpl_bigu(a) || gotmpl_bigu(b))
			return gotmpl_bigu(b) &&
			       (!gotmpl_bigu(a) || (uint64_t)a->u.i < (uint64_t)b->u.i);
		return a->u.i < b->u.i;
	case K_FLOAT:
		return a->u.f < b->u.f;
	default:
		return gotmpl_strcmp(a, b) < 0;
	}
}

static int cmp_fn(struct gotmpl_fctx *c, struct gotmpl_val **av, struct gotmpl_val **res, int which)
{
	int lt = lt2(c, av[0], av[1]), eq;

	if (lt < 0)
		return lt;
	eq = eq2(c, av[0], av[1]);
	if (eq < 0)
		return eq;
	switch (which) {
	case 0: /* lt */
		GT_RES(gotmpl_bool(c->a, lt));
	case 1: /* le */
		GT_RES(gotmpl_bool(c->a, lt || eq));
	case 2: /* gt */
		GT_RES(gotmpl_bool(c->a, !lt && !eq));
	default: /* ge */
		GT_RES(gotmpl_bool(c->a, !lt));
	}
}

GT_FN(f_lt)
{
	(void)ac;
	return cmp_fn(c, av, res, 0);
}

GT_FN(f_le)
{
	(void)ac;
	return cmp_fn(c, av, res, 1);
}

GT_FN(f_gt)
{
	(void)ac;
	return cmp_fn(c, av, res, 2);
}

GT_FN(f_ge)
{
	(void)ac;
	return cmp_fn(c, av, res, 3);
}

GT_FN(f_print)
{
	struct strbuf sb = STRBUF_INIT(gotmpl_room(c->a, GT_PRINT_UNITS));

	return gotmpl_printed(c, &sb, gotmpl_sprint(&sb, av, ac, 0), GT_PRINT_UNITS, res);
}

GT_FN(f_println)
{
	struct strbuf sb = STRBUF_INIT(gotmpl_room(c->a, GT_PRINT_UNITS));

	return gotmpl_printed(c, &sb, gotmpl_sprint(&sb, av, ac, 1), GT_PRINT_UNITS, res);
}

GT_FN(f_printf)
{
	struct strbuf sb = STRBUF_INIT(gotmpl_room(c->a, GT_PRINTF_UNITS));
	size_t in = 0;
	int rc;

	/* a string operand is formatted whole before the width pads it (%x a byte at a time) */
	for (int i = 1; i < ac; i++)
		in += av[i]->kind == GOTMPL_STRING ? av[i]->u.s.n : 0;
	if (gotmpl_work(c->a, in * GT_PRINTF_UNITS))
		return -ELOOP;
	rc = gotmpl_sprintf(c, &sb, av[0]->u.s.p, av[0]->u.s.n, av + 1, ac - 1);
	return gotmpl_printed(c, &sb, rc, GT_PRINTF_UNITS, res);
}

/* evalArgs of html, js, urlquery: one string as is, else fmt.Sprint (charged as print is). */
static int eval_args(struct gotmpl_fctx *c, struct strbuf *sb, struct gotmpl_val **av, int ac)
{
	struct strbuf t = STRBUF_INIT(gotmpl_room(c->a, GT_PRINT_UNITS));
	struct gotmpl_val **v;
	int rc;

	if (ac == 1 && av[0]->kind == GOTMPL_STRING)
		return sb_addn(sb, av[0]->u.s.p, av[0]->u.s.n);
	v = gotmpl_alloc(c->a, ((size_t)ac + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (int i = 0; i < ac; i++) /* Go's printableValue: nil is the string "<no value>" */
		if (!(v[i] = av[i]->kind == GOTMPL_NIL ? gotmpl_cstr(c->a, "<no value>") : av[i]))
			return -ENOMEM;
	rc = gotmpl_sprint(&t, v, ac, 0);
	if (rc == -E2BIG && t.max < GT_STR_MAX) /* the budget's cap */
		rc = gotmpl_work(c->a, (t.max + 1) * GT_PRINT_UNITS);
	else if (!rc && gotmpl_work(c->a, t.len * GT_PRINT_UNITS))
		rc = -ELOOP;
	rc = rc ?: sb_addn(sb, t.buf, t.len);
	sb_free(&t);
	return rc;
}

GT_FN(f_html)
{
	struct strbuf in = STRBUF_INIT(GT_STR_MAX), out = STRBUF_INIT(GT_STR_MAX);
	int rc = eval_args(c, &in, av, ac);

	for (size_t i = 0; i < in.len && !rc; i++) {
		switch (in.buf[i]) {
		case '"':
			rc = sb_add(&out, "&#34;");
			break;
		case '\'':
			rc = sb_add(&out, "&#39;");
			break;
		case '&':
			rc = sb_add(&out, "&amp;");
			break;
		case '<':
			rc = sb_add(&out, "&lt;");
			break;
		case '>':
			rc = sb_add(&out, "&gt;");
			break;
		case '\0':
			rc = sb_add(&out, "\xEF\xBF\xBD");
			break;
		default:
			rc = sb_addch(&out, in.buf[i]);
		}
	}
	sb_free(&in);
	if (rc) {
		sb_free(&out);
		return rc;
	}
	GT_RES(gotmpl_take(c, &out));
}

GT_FN(f_js)
{
	struct strbuf in = STRBUF_INIT(GT_STR_MAX), out = STRBUF_INIT(GT_STR_MAX);
	int rc = eval_args(c, &in, av, ac);

	for (size_t i = 0; i < in.len && !rc;) {
		unsigned char ch = (unsigned char)in.buf[i];
		uint32_t r;
		int l;

		if (ch < 0x80) {
			i++;
			if (ch == '\\' || ch == '\'' || ch == '"')
				rc = sb_addch(&out, '\\') ?: sb_addch(&out, (char)ch);
			else if (ch == '<' || ch == '>' || ch == '&' || ch == '=' || ch < ' ')
				rc = sb_addf(&out, "\\u%04X", ch);
			else
				rc = sb_addch(&out, (char)ch);
			continue;
		}
		l = gotmpl_utf8(in.buf + i, in.len - i, &r);
		if (!gotmpl_isprint(r)) /* Go's JSEscape: \uXXXX for what unicode.IsPrint refuses */
			rc = sb_addf(&out, "\\u%04X", r);
		else
			rc = sb_addn(&out, in.buf + i, (size_t)l);
		i += (size_t)l;
	}
	sb_free(&in);
	if (rc) {
		sb_free(&out);
		return rc;
	}
	GT_RES(gotmpl_take(c, &out));
}

GT_FN(f_urlquery)
{
	struct strbuf in = STRBUF_INIT(GT_STR_MAX), out = STRBUF_INIT(GT_STR_MAX);
	int rc = eval_args(c, &in, av, ac);

	for (size_t i = 0; i < in.len && !rc; i++) {
		unsigned char ch = (unsigned char)in.buf[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '~')
			rc = sb_addch(&out, (char)ch);
		else if (ch == ' ')
			rc = sb_addch(&out, '+');
		else
			rc = sb_addf(&out, "%%%02X", ch);
	}
	sb_free(&in);
	if (rc) {
		sb_free(&out);
		return rc;
	}
	GT_RES(gotmpl_take(c, &out));
}

GT_FN(f_call)
{
	(void)ac;
	(void)res;
	if (av[0]->kind == GOTMPL_NIL)
		return gotmpl_fail(c, "call of nil");
	return gotmpl_fail(c, "non-function of type %s", gotmpl_typename(av[0]));
}

static const struct gotmpl_func builtins[] = {
    {"and", NULL, "a*a", GT_F_AND},
    {"call", f_call, "a*a", 0},
    {"eq", f_eq, "a*a", 0},
    {"ge", f_ge, "aa", 0},
    {"gt", f_gt, "aa", 0},
    {"html", f_html, "*a", 0},
    {"index", f_index, "a*a", 0},
    {"js", f_js, "*a", 0},
    {"le", f_le, "aa", 0},
    {"len", f_len, "a", 0},
    {"lt", f_lt, "aa", 0},
    {"ne", f_ne, "aa", 0},
    {"not", f_not, "a", 0},
    {"or", NULL, "a*a", GT_F_OR},
    {"print", f_print, "*a", 0},
    {"printf", f_printf, "s*a", 0},
    {"println", f_println, "*a", 0},
    {"slice", f_slice, "a*a", 0},
    {"urlquery", f_urlquery, "*a", 0},
    {NULL, NULL, NULL, 0},
};

/*
 * Functions that touch a fixed part of their arguments whatever their size (Go's are O(1) too, or
 * they count their own work): only their argument count is charged, so `index $big $i` in a loop
 * costs what Go's does. Sorted (bsearch).
 */
static const char *const touch_little[] = {
    "coalesce", "deepEqual", "default",	  "dict",	"dig",	    "empty",  "first",
    "get",	"has",	     "hasKey",	  "index",	"kindIs",   "kindOf", "last",
    "len",	"list",	     "mustFirst", "mustHas",	"mustLast", "not",    "set",
    "ternary",	"tuple",     "typeIs",	  "typeIsLike", "typeOf",
};

static int name_cmp(const void *k, const void *e)
{
	return strcmp(k, *(const char *const *)e);
}

/*
 * Functions that decode, map and re-encode their strings a rune at a time (strings.Map, unicode
 * case tables, strconv.Quote, a word wrapper): measured up to 5 times slower a byte than a copy
 * (nospace, camelcase, wrapWith of "ab" repeated: 0.33 s an execution charged 1 unit a byte, the
 * other hostile templates 0.14 s), so their strings are charged GT_PRINT_UNITS a byte. Sorted.
 */
static const char *const rune_wise[] = {
    "b32enc", "camelcase", "kebabcase", "lower",   "nospace", "quote", "snakecase",
    "squote", "swapcase",  "title",	"untitle", "upper",   "wrap",  "wrapWith",
};

static int is_in(const char *name, const char *const *t, size_t n)
{
	return bsearch(name, t, n, sizeof(*t), name_cmp) != NULL;
}

size_t gotmpl_func_charge(const struct gotmpl_func *f, struct gotmpl_val *const *argv, size_t n)
{
	/* semver's parsers run Masterminds' regexps with captures: about 300 ns a byte, measured */
	size_t units = n + 1, per_byte = f && !strncmp(f->name, "semver", 6) ? 64 : 1;

	if (f && is_in(f->name, touch_little, sizeof(touch_little) / sizeof(touch_little[0])))
		return units;
	if (f && is_in(f->name, rune_wise, sizeof(rune_wise) / sizeof(rune_wise[0])))
		per_byte = GT_PRINT_UNITS;
	for (size_t i = 0; i < n; i++) {
		const struct gotmpl_val *v = argv[i];

		if (v->kind == GOTMPL_STRING)
			units += v->u.s.n * per_byte;
		else if (v->kind == GOTMPL_LIST)
			units += v->u.l.n;
		else if (v->kind == GOTMPL_MAP)
			units += v->u.m.n;
	}
	return units;
}

static const struct gotmpl_func *find_in(const struct gotmpl_func *t, const char *name, size_t n)
{
	for (; t->name; t++)
		if (strlen(t->name) == n && memcmp(t->name, name, n) == 0)
			return t;
	return NULL;
}

const struct gotmpl_func *gotmpl_func_find(const char *name, size_t n)
{
	/* Go's builtins win over a FuncMap entry of the same name only where Sprig has none. */
	const struct gotmpl_func *f = find_in(gotmpl_sprig_str_funcs, name, n);

	if (!f)
		f = find_in(gotmpl_sprig_list_funcs, name, n);
	if (!f)
		f = find_in(gotmpl_sprig_misc_funcs, name, n);
	if (!f)
		f = find_in(gotmpl_sprig_num_funcs, name, n);
	if (!f)
		f = find_in(gotmpl_sprig_regex_funcs, name, n);
	if (!f)
		f = find_in(gotmpl_sprig_case_funcs, name, n);
	if (!f)
		f = find_in(gotmpl_sprig_url_funcs, name, n);
	if (!f)
		f = find_in(gotmpl_sprig_hash_funcs, name, n);
	if (!f)
		f = find_in(gotmpl_sprig_semver_funcs, name, n);
	if (!f)
		f = find_in(builtins, name, n);
	return f;
}
