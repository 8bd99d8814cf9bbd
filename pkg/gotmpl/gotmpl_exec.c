/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_exec: walking a parse tree over the data, as Go's text/template exec.go. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

struct var {
	const char *name;
	struct gotmpl_val *v;
};

struct exec {
	const struct gotmpl *t;
	const struct gotmpl_tmpl *tm; /* the template running (messages) */
	struct gotmpl_arena a;
	struct strbuf out;
	struct var *vars; /* the variable stack; vars[base] is "$" of the running template */
	size_t nvars, capvars, base;
	unsigned long steps;
	int depth;		      /* nested template calls */
	int nest;		      /* nested walks, all templates together (the C stack) */
	const struct gotmpl_node *at; /* the node being evaluated (messages) */
	struct gotmpl_err *err;
	char *fmsg; /* 2 x GOTMPL_ERR_MAX: a failing function's message (gotmpl_fctx), xerr's */
	int rc;
};

/* A value marking "no final argument" (Go's missingVal). */
static const struct gotmpl_val missing_val = {.kind = GOTMPL_NIL, .arena = 1};
#define MISSING ((struct gotmpl_val *)&missing_val)

enum { WALK_BREAK = 1, WALK_CONTINUE = 2 };

static void xerr(struct exec *e, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void xerr(struct exec *e, int rc, const char *fmt, ...)
{
	char *m = e->fmsg + GOTMPL_ERR_MAX; /* its second half (a function's is an argument) */
	struct strbuf ctx = STRBUF_INIT(GOTMPL_ERR_MAX);
	va_list ap;
	size_t line = 1, col, i, lastnl = 0;
	int seen_nl = 0;

	if (e->rc)
		return;
	e->rc = rc;
	if (!e->err)
		return;
	va_start(ap, fmt);
	vsnprintf(m, GOTMPL_ERR_MAX, fmt, ap);
	va_end(ap);
	if (!e->at) {
		snprintf(e->err->msg, sizeof(e->err->msg), "template: %s: %s", e->tm->name, m);
		return;
	}
	for (i = 0; i < e->at->pos && i < e->t->srclen; i++)
		if (e->t->src[i] == '\n') {
			line++;
			lastnl = i;
			seen_nl = 1;
		}
	col = seen_nl ? e->at->pos - lastnl - 1 : e->at->pos;
	/* Go's ErrorContext: the node's whole String() (Go 1.19 and later cut nothing) */
	gotmpl_node_string(&ctx, e->at);
	snprintf(e->err->msg, sizeof(e->err->msg),
		 "template: %s:%zu:%zu: executing \"%s\" at <%s>: %s", e->t->tm[0].name, line, col,
		 e->tm->name, ctx.buf ? ctx.buf : "", m);
	sb_free(&ctx);
}

static int step(struct exec *e)
{
	if (e->rc)
		return -1;
	if (++e->steps > GOTMPL_STEPS_MAX) {
		xerr(e, -ELOOP, "execution stopped after %lu steps (the limit)", GOTMPL_STEPS_MAX);
		return -1;
	}
	return 0;
}

static struct gotmpl_val *oom(struct exec *e)
{
	if (e->a.over)
		xerr(e, -ELOOP, "execution stopped: its values passed %u bytes (the limit)",
		     GOTMPL_MEM_MAX);
	else
		xerr(e, -ENOMEM, "out of memory");
	return NULL;
}

/* ---- variables ---- */

static int push(struct exec *e, const char *name, struct gotmpl_val *v)
{
	if (e->nvars == e->capvars) {
		size_t cap = e->capvars ? 2 * e->capvars : 32;
		struct var *n = realloc(e->vars, cap * sizeof(*n));

		if (!n) {
			oom(e);
			return -1;
		}
		e->vars = n;
		e->capvars = cap;
	}
	e->vars[e->nvars].name = name;
	e->vars[e->nvars++].v = v;
	return 0;
}

static struct var *lookup(struct exec *e, const char *name)
{
	for (size_t i = e->nvars; i-- > e->base;)
		if (strcmp(e->vars[i].name, name) == 0)
			return &e->vars[i];
	return NULL;
}

/* ---- evaluation ---- */

static struct gotmpl_val *eval_pipeline(struct exec *e, struct gotmpl_val *dot,
					const struct gotmpl_node *pipe);
static struct gotmpl_val *eval_arg(struct exec *e, struct gotmpl_val *dot, char type,
				   const struct gotmpl_node *n);

static int not_a_function(struct exec *e, const struct gotmpl_node *cmd, size_t nargs,
			  const struct gotmpl_val *final)
{
	struct strbuf sb = STRBUF_INIT(4096);

	if (nargs <= 1 && final == MISSING)
		return 0;
	gotmpl_node_string(&sb, cmd->kids[0]);
	xerr(e, -EINVAL, "can't give argument to non-function %s", sb.buf);
	sb_free(&sb);
	return -1;
}

static struct gotmpl_val *validate(struct exec *e, struct gotmpl_val *v, char t);

/*
 * What a call of function or method name gave (rc, c's message, its value v), as text/template
 * reports it: "error calling NAME: ..." for the callee's error, and this engine's bounds (the step
 * budget, the value and string limits) named as such, never as running out of memory.
 */
static struct gotmpl_val *call_result(struct exec *e, const char *name, int rc,
				      const struct gotmpl_fctx *c, struct gotmpl_val *v)
{
	if (rc == -EINVAL) {
		xerr(e, -EINVAL, "error calling %s: %s", name, c->msg);
		return NULL;
	}
	if (e->a.work > e->a.work_max && !(rc && e->a.over)) { /* a limit it met says more */
		xerr(e, -ELOOP,
		     "error calling %s: execution stopped: its work passed the step budget (%lu)",
		     name, GOTMPL_STEPS_MAX);
		return NULL;
	}
	if (rc == -ELOOP || rc == -E2BIG || (rc == -ENOMEM && e->a.over)) {
		xerr(
		    e, -ELOOP,
		    "error calling %s: its result passed the limits (%u bytes of values, %u bytes a string, %d levels of nesting)",
		    name, GOTMPL_MEM_MAX, GT_STR_MAX, GT_VAL_DEPTH_MAX);
		return NULL;
	}
	if (rc)
		return oom(e);
	return v ? v : GT_NIL;
}

/* Go's evalCall of recv's method name: its arguments are cmd's after the first, then final. */
static struct gotmpl_val *eval_method(struct exec *e, struct gotmpl_val *dot, const char *name,
				      const struct gotmpl_node *cmd, size_t nargs,
				      struct gotmpl_val *final, const struct gotmpl_val *recv,
				      const struct gotmpl_node *node)
{
	const struct gotmpl_method *m = gotmpl_obj_method(recv, name);
	const struct gotmpl_node *at;
	size_t n = (nargs ? nargs - 1 : 0) + (final != MISSING), i;
	struct gotmpl_fctx c = {.a = &e->a, .msg = e->fmsg};
	struct gotmpl_val *argv[2], *v = NULL;
	int rc;

	if (!m) {
		xerr(e, -EINVAL,
		     gotmpl_obj_field(recv, name) ? "%s is an unexported field of struct type %s"
						  : "can't evaluate field %s in type %s",
		     name, gotmpl_typename(recv));
		return NULL;
	}
	if (!m->sig) {
		xerr(e, -EINVAL, "method %s of %s is not supported by nodeprobe", name,
		     gotmpl_typename(recv));
		return NULL;
	}
	if (n != strlen(m->sig)) {
		xerr(e, -EINVAL, "wrong number of args for %s: want %zu got %zu", name,
		     strlen(m->sig), n);
		return NULL;
	}
	for (i = 0; i + 1 < nargs; i++)
		if (!(argv[i] = eval_arg(e, dot, m->sig[i], cmd->kids[i + 1])))
			return NULL;
	if (final != MISSING && !(argv[i] = validate(e, final, m->sig[i])))
		return NULL;
	at = e->at;   /* Go's s.node after a call: its last argument's, as evalArg left it */
	e->at = node; /* Go's evalCall names the field or chain node on an error only */
	if (gotmpl_work(&e->a, gotmpl_func_charge(NULL, argv, n))) {
		rc = -ELOOP;
	} else {
		size_t made = e->a.used;

		rc = m->fn(&c, recv, argv, &v);
		gotmpl_work(&e->a, e->a.used - made);
	}
	v = call_result(e, name, rc, &c, v);
	if (v)
		e->at = at;
	return v;
}

/* iface: recv came out of an interface{} slot (Go's receiver.Type() names interface {}). */
static struct gotmpl_val *eval_field(struct exec *e, struct gotmpl_val *dot, const char *name,
				     const struct gotmpl_node *cmd, size_t nargs,
				     struct gotmpl_val *final, struct gotmpl_val *recv, int first,
				     int iface, const struct gotmpl_node *node)
{
	long i;

	if (recv->kind == GOTMPL_NIL) {
		if (first)
			xerr(e, -EINVAL, "nil data; no entry for key \"%s\"", name);
		else
			xerr(e, -EINVAL, "nil pointer evaluating interface {}.%s", name);
		return NULL;
	}
	if (recv->kind == GT_OBJ)
		return eval_method(e, dot, name, cmd, nargs, final, recv, node);
	if (recv->kind != GOTMPL_MAP) {
		xerr(e, -EINVAL, "can't evaluate field %s in type %s", name,
		     iface ? "interface {}" : gotmpl_typename(recv));
		return NULL;
	}
	if (nargs > 1 || final != MISSING) {
		xerr(e, -EINVAL, "%s is not a method but has arguments", name);
		return NULL;
	}
	i = gotmpl_map_find(recv, name, strlen(name));
	if (i < 0) {
		xerr(e, -EINVAL, "map has no entry for key \"%s\"", name);
		return NULL;
	}
	return recv->u.m.e[i].v;
}

/* The fields ids of recv; the last one gets cmd's arguments (cmd NULL: none). */
static struct gotmpl_val *eval_field_chain(struct exec *e, struct gotmpl_val *dot,
					   struct gotmpl_val *recv, const struct gotmpl_node *n,
					   char **ids, size_t nids, const struct gotmpl_node *cmd,
					   size_t nargs, struct gotmpl_val *final, int first)
{
	int iface = 0;

	for (size_t i = 0; recv && i < nids; i++) {
		struct gotmpl_val *r = recv;

		if (n->type != N_CHAIN) /* Go's evalChainNode leaves the pipeline's last node */
			e->at = n;
		recv = eval_field(e, dot, ids[i], cmd, i + 1 == nids ? nargs : 0,
				  i + 1 == nids ? final : MISSING, recv, first && i == 0, iface, n);
		iface = r->kind == GOTMPL_MAP && r->sub != GT_STRS;
	}
	return recv;
}

/* Go's validateType: v as a parameter of type t. */
static struct gotmpl_val *validate(struct exec *e, struct gotmpl_val *v, char t)
{
	if (!v || t == 'a')
		return v;
	if (v->kind == GOTMPL_NIL) {
		if (gotmpl_param_nilable(t))
			return v;
		xerr(e, -EINVAL, "invalid value; expected %s", gotmpl_param_typename(t));
		return NULL;
	}
	if (gotmpl_param_ok(v, t))
		return v;
	xerr(e, -EINVAL, "wrong type for value; expected %s; got %s", gotmpl_param_typename(t),
	     gotmpl_typename(v));
	return NULL;
}

static struct gotmpl_val *eval_function(struct exec *e, struct gotmpl_val *dot,
					const struct gotmpl_node *ident,
					const struct gotmpl_node *cmd,
					struct gotmpl_node *const *args, size_t nargs,
					struct gotmpl_val *final)
{
	const struct gotmpl_func *f = ident->fn;
	size_t n = nargs + (final != MISSING), nfixed, i;
	struct gotmpl_val **argv, *v = NULL;
	struct gotmpl_fctx c = {.a = &e->a, .msg = e->fmsg};
	const struct gotmpl_node *at;
	int variadic, rc;

	e->at = ident;
	gotmpl_func_param(f, 0, &nfixed, &variadic);
	if (f->flags & (GT_F_AND | GT_F_OR)) {
		if (n < 1) {
			xerr(e, -EINVAL, "wrong number of args for %s: want at least 1 got 0",
			     f->name);
			return NULL;
		}
		for (i = 0; i < nargs; i++) {
			v = eval_arg(e, dot, 'a', args[i]);
			if (!v || gotmpl_truth(v) == !!(f->flags & GT_F_OR))
				return v;
		}
		return final != MISSING ? final : v;
	}
	if (variadic ? n < nfixed : n != nfixed) {
		xerr(e, -EINVAL, "wrong number of args for %s: want %s%zu got %zu", f->name,
		     variadic ? "at least " : "", nfixed, n);
		return NULL;
	}
	argv = gotmpl_alloc(&e->a, (n + 1) * sizeof(*argv));
	if (!argv)
		return oom(e);
	for (i = 0; i < nargs; i++) {
		argv[i] = eval_arg(e, dot, gotmpl_func_param(f, i, &nfixed, &variadic), args[i]);
		if (!argv[i])
			return NULL;
	}
	if (final != MISSING) {
		argv[i] = validate(e, final, gotmpl_func_param(f, i, &nfixed, &variadic));
		if (!argv[i])
			return NULL;
	}
	at = e->at;
	e->at = cmd; /* Go's evalCall names the command on an error only */
	if (gotmpl_work(&e->a, gotmpl_func_charge(f, argv, n))) {
		rc = -ELOOP;
	} else {
		size_t made = e->a.used;

		rc = f->fn(&c, argv, (int)n, &v);
		gotmpl_work(&e->a, e->a.used - made); /* the values it made, bytes */
	}
	v = call_result(e, f->name, rc, &c, v);
	if (v)
		e->at = at;
	return v;
}

static struct gotmpl_val *constant(struct exec *e, const struct gotmpl_node *n)
{
	struct gotmpl_val *v = NULL;
	int rc = gotmpl_node_constant(&e->a, n, &v);

	if (rc == -ENOMEM)
		return oom(e);
	if (rc)
		xerr(e, -EINVAL, "%.*s overflows int", (int)n->rawlen, n->raw);
	return v;
}

static struct gotmpl_val *eval_command(struct exec *e, struct gotmpl_val *dot,
				       const struct gotmpl_node *cmd, struct gotmpl_val *final)
{
	const struct gotmpl_node *first = cmd->kids[0];
	struct gotmpl_val *v;
	struct var *var;

	if (step(e))
		return NULL;
	if (first->type != N_PIPE) /* Go's evalCommand: a parenthesized pipeline sets none */
		e->at = first;
	switch (first->type) {
	case N_FIELD:
		return eval_field_chain(e, dot, dot, first, first->ids, first->nids, cmd,
					cmd->nkids, final, dot == e->vars[e->base].v);
	case N_CHAIN:
		if (first->sub->type == N_NIL) {
			xerr(e, -EINVAL, "indirection through explicit nil in %s", "chain");
			return NULL;
		}
		v = eval_arg(e, dot, 'a', first->sub);
		/* first: a (pipeline)'s nil is no value at all (Go's evalPipeline unwraps it) */
		return v ? eval_field_chain(e, dot, v, first, first->ids, first->nids, cmd,
					    cmd->nkids, final, 1)
			 : NULL;
	case N_IDENT:
		return eval_function(e, dot, first, cmd, cmd->kids + 1, cmd->nkids - 1, final);
	case N_PIPE:
		if (not_a_function(e, cmd, cmd->nkids, final))
			return NULL;
		return eval_pipeline(e, dot, first);
	case N_VAR:
		var = lookup(e, first->ids[0]);
		if (!var) {
			xerr(e, -EINVAL, "undefined variable: %s", first->ids[0]);
			return NULL;
		}
		if (first->nids == 1)
			return not_a_function(e, cmd, cmd->nkids, final) ? NULL : var->v;
		return eval_field_chain(e, dot, var->v, first, first->ids + 1, first->nids - 1, cmd,
					cmd->nkids, final, 1);
	default:
		break;
	}
	if (not_a_function(e, cmd, cmd->nkids, final))
		return NULL;
	switch (first->type) {
	case N_DOT:
		return dot;
	case N_NIL:
		xerr(e, -EINVAL, "nil is not a command");
		return NULL;
	default:
		return constant(e, first);
	}
}

/* Go's evalArg: the argument node n for a parameter of type t. */
static struct gotmpl_val *eval_arg(struct exec *e, struct gotmpl_val *dot, char t,
				   const struct gotmpl_node *n)
{
	struct gotmpl_node cmd = {.type = N_CMD, .pos = n->pos, .line = n->line, .nkids = 1};
	struct gotmpl_node *kids[1] = {(struct gotmpl_node *)n};
	struct strbuf sb = STRBUF_INIT(256);
	struct var *var;
	const char *want = NULL;

	cmd.kids = kids;
	e->at = n;
	switch (n->type) {
	case N_DOT:
		return validate(e, dot, t);
	case N_NIL:
		if (t == 'a' || gotmpl_param_nilable(t))
			return GT_NIL;
		xerr(e, -EINVAL, "cannot assign nil to %s", gotmpl_param_typename(t));
		return NULL;
	case N_FIELD:
		return validate(e,
				eval_field_chain(e, dot, dot, n, n->ids, n->nids, NULL, 1, MISSING,
						 dot == e->vars[e->base].v),
				t);
	case N_VAR:
		var = lookup(e, n->ids[0]);
		if (!var) {
			xerr(e, -EINVAL, "undefined variable: %s", n->ids[0]);
			return NULL;
		}
		return validate(e,
				eval_field_chain(e, dot, var->v, n, n->ids + 1, n->nids - 1, NULL,
						 1, MISSING, 1),
				t);
	case N_PIPE:
		return validate(e, eval_pipeline(e, dot, n), t);
	case N_IDENT:
		return validate(e, eval_function(e, dot, n, &cmd, NULL, 0, MISSING), t);
	case N_CHAIN:
		return validate(e, eval_command(e, dot, &cmd, MISSING), t);
	default:
		break;
	}
	switch (t) {
	case 'b':
		if (n->type != N_BOOL)
			want = "bool";
		break;
	case 's':
		if (n->type != N_STRING)
			want = "string";
		break;
	case 'i':
		if (n->type != N_NUMBER || !n->is_int)
			want = "integer";
		else
			return gotmpl_int(&e->a, n->ival, GT_PLAIN) ?: oom(e);
		break;
	case 'u': /* Go's evalUnsignedInteger: SetUint keeps a uint32's low 32 bits */
		if (n->type != N_NUMBER || !n->is_uint)
			want = "unsigned integer";
		else
			return gotmpl_int(&e->a, (int64_t)(uint32_t)n->uval, GT_PLAIN) ?: oom(e);
		break;
	case 'f':
		if (n->type != N_NUMBER || !n->is_float)
			want = "float";
		else
			return gotmpl_float(&e->a, n->fval) ?: oom(e);
		break;
	case 'm':
	case 'l':
	case 'V':
		gotmpl_node_string(&sb, n);
		xerr(e, -EINVAL, "can't handle %s for arg of type %s", sb.buf,
		     gotmpl_param_typename(t));
		sb_free(&sb);
		return NULL;
	}
	if (want) {
		gotmpl_node_string(&sb, n);
		xerr(e, -EINVAL, "expected %s; found %s", want, sb.buf);
		sb_free(&sb);
		return NULL;
	}
	return constant(e, n);
}

static struct gotmpl_val *eval_pipeline(struct exec *e, struct gotmpl_val *dot,
					const struct gotmpl_node *pipe)
{
	struct gotmpl_val *v = MISSING;
	struct var *var;

	if (!pipe)
		return GT_NIL;
	e->at = pipe;
	for (size_t i = 0; i < pipe->nkids; i++) {
		v = eval_command(e, dot, pipe->kids[i], v);
		if (!v)
			return NULL;
	}
	for (size_t i = 0; i < pipe->ndecl; i++) {
		if (pipe->assign) {
			var = lookup(e, pipe->decl[i]);
			if (!var) {
				xerr(e, -EINVAL, "undefined variable: %s", pipe->decl[i]);
				return NULL;
			}
			var->v = v;
		} else if (push(e, pipe->decl[i], v)) {
			return NULL;
		}
	}
	return v;
}

/* ---- walking ---- */

static int walk(struct exec *e, struct gotmpl_val *dot, const struct gotmpl_node *n);

static int print_value(struct exec *e, const struct gotmpl_val *v)
{
	int rc = v->kind == GOTMPL_NIL ? sb_add(&e->out, "<no value>") : gotmpl_fmt_v(&e->out, v);

	if (rc == -E2BIG)
		xerr(e, -E2BIG, "output longer than %u bytes (the limit)", GOTMPL_OUT_MAX);
	else if (rc == -ELOOP)
		xerr(e, -ELOOP, "value nested deeper than %d (the limit)", GT_VAL_DEPTH_MAX);
	else if (rc)
		oom(e);
	return rc ? -1 : 0;
}

static int walk_if_with(struct exec *e, struct gotmpl_val *dot, const struct gotmpl_node *n)
{
	size_t mark = e->nvars;
	struct gotmpl_val *v = eval_pipeline(e, dot, n->pipe);
	int rc = 0;

	if (!v)
		return -1;
	if (gotmpl_truth(v))
		rc = walk(e, n->type == N_WITH ? v : dot, n->list);
	else if (n->elist)
		rc = walk(e, dot, n->elist);
	e->nvars = mark;
	return rc;
}

/* One turn of a range: set the loop variables, walk the body. */
static int range_turn(struct exec *e, const struct gotmpl_node *n, struct gotmpl_val *key,
		      struct gotmpl_val *elem, size_t mark)
{
	const struct gotmpl_node *pipe = n->pipe;
	int rc;

	if (step(e))
		return -1;
	if (pipe->ndecl) {
		if (pipe->assign) {
			struct var *v0 = lookup(e, pipe->decl[0]);

			if (v0)
				v0->v = pipe->ndecl > 1 ? key : elem;
			if (pipe->ndecl > 1) {
				struct var *v1 = lookup(e, pipe->decl[1]);

				if (v1)
					v1->v = elem;
			}
		} else {
			e->vars[mark - 1].v = elem;
			if (pipe->ndecl > 1)
				e->vars[mark - 2].v = key;
		}
	}
	rc = walk(e, elem, n->list);
	e->nvars = mark;
	return rc == WALK_CONTINUE ? 0 : rc;
}

static int walk_range(struct exec *e, struct gotmpl_val *dot, const struct gotmpl_node *n)
{
	size_t mark0 = e->nvars, mark, i;
	struct gotmpl_val *v = eval_pipeline(e, dot, n->pipe), *k;
	int rc = 0, ran = 0;

	if (!v)
		return -1;
	mark = e->nvars;
	switch (v->kind) {
	case GOTMPL_LIST:
		for (i = 0; i < v->u.l.n && rc == 0; i++, ran = 1) {
			k = gotmpl_int(&e->a, (int64_t)i, GT_PLAIN);
			rc = k ? range_turn(e, n, k, v->u.l.v[i], mark) : (oom(e), -1);
		}
		break;
	case GOTMPL_MAP:
		for (i = 0; i < v->u.m.n && rc == 0; i++, ran = 1) {
			k = gotmpl_str(&e->a, v->u.m.e[i].k, v->u.m.e[i].klen);
			rc = k ? range_turn(e, n, k, v->u.m.e[i].v, mark) : (oom(e), -1);
		}
		break;
	case GOTMPL_INT:
		if (n->pipe->ndecl > 1) { /* at: the last node evaluated, as Go's walkRange */
			xerr(e, -EINVAL, "can't use %lld to iterate over more than one variable",
			     (long long)v->u.i);
			return -1;
		}
		for (int64_t j = 0; (gotmpl_bigu(v) || j < v->u.i) && rc == 0; j++, ran = 1) {
			k = gotmpl_int(&e->a, j, v->sub);
			rc = k ? range_turn(e, n, k, k, mark) : (oom(e), -1);
		}
		break;
	case GOTMPL_NIL:
		break;
	default: {
		struct strbuf sb = STRBUF_INIT(64);

		gotmpl_fmt_v(&sb, v);
		xerr(e, -EINVAL, "range can't iterate over %s", sb.buf);
		sb_free(&sb);
		return -1;
	}
	}
	if (rc < 0)
		return rc;
	rc = 0;
	if (!ran && n->elist)
		rc = walk(e, dot, n->elist);
	e->nvars = mark0;
	return rc;
}

static int walk_template(struct exec *e, struct gotmpl_val *dot, const struct gotmpl_node *n)
{
	const struct gotmpl_tmpl *tm, *saved = e->tm;
	size_t base = e->base, mark;
	int rc;

	e->at = n;
	if (gotmpl_tmpl_find(e->t, &e->a, n->text, n->tlen, &tm)) { /* charged */
		xerr(e, -ELOOP, "execution stopped: its work passed the step budget (%lu)",
		     GOTMPL_STEPS_MAX);
		return -1;
	}
	if (!tm) {
		xerr(e, -EINVAL, "template \"%.*s\" not defined", (int)n->tlen, n->text);
		return -1;
	}
	if (e->depth >= GOTMPL_DEPTH_MAX) {
		xerr(e, -ELOOP, "exceeded maximum template depth (%d)", GOTMPL_DEPTH_MAX);
		return -1;
	}
	dot = eval_pipeline(e, dot, n->pipe);
	if (!dot)
		return -1;
	mark = e->nvars;
	if (push(e, "$", dot))
		return -1;
	e->base = mark;
	e->tm = tm;
	e->depth++;
	rc = walk(e, dot, tm->root);
	e->depth--;
	e->tm = saved;
	e->base = base;
	e->nvars = mark;
	return rc < 0 ? rc : 0;
}

static int walk_node(struct exec *e, struct gotmpl_val *dot, const struct gotmpl_node *n)
{
	struct gotmpl_val *v;
	size_t i;
	int rc;

	if (step(e))
		return -1;
	e->at = n;
	switch (n->type) {
	case N_LIST:
		for (i = 0; i < n->nkids; i++) {
			rc = walk(e, dot, n->kids[i]);
			if (rc)
				return rc;
		}
		return 0;
	case N_TEXT:
		rc = sb_addn(&e->out, n->text, n->tlen);
		if (rc == -E2BIG)
			xerr(e, -E2BIG, "output longer than %u bytes (the limit)", GOTMPL_OUT_MAX);
		else if (rc)
			oom(e);
		return rc ? -1 : 0;
	case N_ACTION:
		v = eval_pipeline(e, dot, n->pipe);
		if (!v)
			return -1;
		return n->pipe->ndecl ? 0 : print_value(e, v);
	case N_IF:
	case N_WITH:
		return walk_if_with(e, dot, n);
	case N_RANGE:
		return walk_range(e, dot, n);
	case N_TEMPLATE:
		return walk_template(e, dot, n);
	case N_BREAK:
		return WALK_BREAK;
	case N_CONTINUE:
		return WALK_CONTINUE;
	default:
		xerr(e, -EINVAL, "unknown node");
		return -1;
	}
}

/* Walk n, bounding the nesting of all templates together (it is the C stack's depth). */
static int walk(struct exec *e, struct gotmpl_val *dot, const struct gotmpl_node *n)
{
	int rc;

	if (++e->nest > GOTMPL_NEST_MAX) {
		e->at = n;
		xerr(e, -ELOOP, "actions and template calls nested deeper than %d (the limit)",
		     GOTMPL_NEST_MAX);
		return -1;
	}
	rc = walk_node(e, dot, n);
	e->nest--;
	return rc;
}

int gotmpl_exec(const struct gotmpl *t, const struct gotmpl_val *data, struct strbuf *out,
		struct gotmpl_err *err)
{
	struct exec e = {.t = t, .tm = &t->tm[0], .err = err};
	int rc;

	if (err)
		err->msg[0] = '\0';
	gotmpl_arena_init(&e.a, GOTMPL_MEM_MAX);
	e.a.work_max = GOTMPL_STEPS_MAX * GT_WORK_PER_STEP;
	sb_init(&e.out, GOTMPL_OUT_MAX);
	if (!(e.fmsg = gotmpl_alloc(&e.a, 2 * GOTMPL_ERR_MAX)))
		e.rc = -ENOMEM;
	else if (push(&e, "$", data ? (struct gotmpl_val *)data : GT_NIL) == 0) {
		if (!t->tm[0].root) {
			xerr(&e, -EINVAL, "\"%s\" is an incomplete or empty template",
			     t->tm[0].name);
		} else {
			rc = walk(&e, e.vars[0].v, t->tm[0].root);
			if (rc > 0 && !e.rc) /* break/continue escaped: the parser prevents it */
				xerr(&e, -EINVAL, "break or continue outside range");
		}
	}
	rc = e.rc;
	if (!rc) {
		rc = sb_addn(out, e.out.buf, e.out.len);
		if (rc == -E2BIG && err)
			snprintf(err->msg, sizeof(err->msg),
				 "template: %s: output of %zu bytes does not fit the buffer",
				 t->tm[0].name, e.out.len);
	}
	sb_free(&e.out);
	free(e.vars);
	gotmpl_arena_free(&e.a);
	return rc;
}
