/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_pipe: parsing pipelines, commands and operands, and the token helpers (parse.go). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

/* The token at i (the EOF for any i past it). */
struct gotmpl_token *gotmpl_p_tok(struct gotmpl_parser *p, size_t i)
{
	return &p->lx->t[i < p->lx->n ? i : p->lx->n - 1];
}

void gotmpl_p_perr(struct gotmpl_parser *p, const char *fmt, ...)
{
	char m[400];
	va_list ap;
	size_t i = p->i ? p->i - 1 : 0;

	if (p->rc)
		return;
	p->rc = -EINVAL;
	if (!p->err)
		return;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	snprintf(p->err->msg, sizeof(p->err->msg), "template: %s:%d: %s", p->top,
		 gotmpl_p_tok(p, i)->line, m);
}

struct gotmpl_token *gotmpl_p_next(struct gotmpl_parser *p)
{
	return gotmpl_p_tok(p, p->i++);
}

struct gotmpl_token *gotmpl_p_peek(struct gotmpl_parser *p)
{
	return gotmpl_p_tok(p, p->i);
}

struct gotmpl_token *gotmpl_p_next_ns(struct gotmpl_parser *p)
{
	struct gotmpl_token *t = gotmpl_p_next(p);

	while (t->type == T_SPACE)
		t = gotmpl_p_next(p);
	return t;
}

struct gotmpl_token *gotmpl_p_peek_ns(struct gotmpl_parser *p)
{
	size_t i = p->i;

	while (gotmpl_p_tok(p, i)->type == T_SPACE)
		i++;
	return gotmpl_p_tok(p, i);
}

void gotmpl_p_backup(struct gotmpl_parser *p)
{
	if (p->i)
		p->i--;
}

/* A token's description in messages, as Go's item.String. */
/* Go's item.String(): EOF, <keyword>, else the text quoted (its first 10 runes, then "..."). */
static const char *tok_desc(const struct gotmpl_token *t, char *buf, size_t len)
{
	struct strbuf sb = STRBUF_INIT(len - 1);
	size_t n = 0, runes = 0;
	uint32_t r;

	if (t->type == T_EOF)
		return "EOF";
	if (t->type >= T_BLOCK || t->type == T_DOT || t->type == T_NIL) {
		snprintf(buf, len, "<%.*s>", (int)t->n, t->s);
		return buf;
	}
	while (n < t->n && runes < 10) {
		n += (size_t)gotmpl_utf8(t->s + n, t->n - n, &r);
		runes++;
	}
	if (gotmpl_quote(&sb, t->s, n, '"') == 0 && n < t->n)
		sb_add(&sb, "...");
	snprintf(buf, len, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
	return buf;
}

/* The lexer's error, at its line. */
void gotmpl_p_lex_fail(struct gotmpl_parser *p)
{
	if (p->rc)
		return;
	p->rc = -EINVAL;
	if (p->err)
		snprintf(p->err->msg, sizeof(p->err->msg), "template: %s:%d: %s", p->top,
			 p->lx->errline, p->lx->err);
	if (p->err && p->lx->errstart) {
		size_t n = strlen(p->err->msg);

		snprintf(p->err->msg + n, sizeof(p->err->msg) - n, " started at %s:%d", p->top,
			 p->lx->errstart);
	}
}

void gotmpl_p_unexpected(struct gotmpl_parser *p, const struct gotmpl_token *t, const char *ctx)
{
	char b[160];

	if (t->type == T_EOF && p->lx->err[0]) {
		gotmpl_p_lex_fail(p);
		return;
	}
	gotmpl_p_perr(p, "unexpected %s in %s", tok_desc(t, b, sizeof(b)), ctx);
}

struct gotmpl_node *gotmpl_p_node(struct gotmpl_parser *p, enum gotmpl_ntype type,
				  const struct gotmpl_token *t)
{
	struct gotmpl_node *n = gotmpl_alloc(&p->t->a, sizeof(*n));

	if (!n) {
		if (!p->rc)
			p->rc = -ENOMEM;
		return NULL;
	}
	n->type = type;
	n->pos = t->pos;
	n->line = t->line;
	return n;
}

int gotmpl_p_add_kid(struct gotmpl_parser *p, struct gotmpl_node *n, struct gotmpl_node *k)
{
	struct gotmpl_node **kids;

	if (!k)
		return -1;
	if (n->nkids == n->capkids) { /* doubling: a long list costs linear memory */
		size_t cap = n->capkids ? 2 * n->capkids : 4;

		kids = gotmpl_alloc(&p->t->a, cap * sizeof(*kids));
		if (!kids) {
			p->rc = p->rc ?: -ENOMEM;
			return -1;
		}
		if (n->nkids)
			memcpy(kids, n->kids, n->nkids * sizeof(*kids));
		n->kids = kids;
		n->capkids = cap;
	}
	n->kids[n->nkids++] = k;
	return 0;
}

char *gotmpl_p_sdup(struct gotmpl_parser *p, const char *s, size_t n)
{
	char *d = gotmpl_strdup(&p->t->a, s, n);

	if (!d)
		p->rc = p->rc ?: -ENOMEM;
	return d;
}

/* Split "$x.a.b" / ".a.b" into ids (the variable, if any, first). */
int gotmpl_p_string(struct gotmpl_parser *p, const struct gotmpl_token *t, const char **text,
		    size_t *len)
{
	struct strbuf sb = STRBUF_INIT(GOTMPL_SRC_MAX);

	if (t->type == T_RAWSTRING) { /* as is, less carriage returns (Go's parse does so) */
		for (size_t i = 1; i + 1 < t->n; i++)
			if (t->s[i] != '\r' && sb_addch(&sb, t->s[i]))
				break;
	} else if (gotmpl_unquote(t->s, t->n, &sb)) {
		sb_free(&sb);
		gotmpl_p_perr(p, "invalid syntax");
		return -1;
	}
	*text = gotmpl_p_sdup(p, sb.buf, sb.len);
	*len = sb.len;
	sb_free(&sb);
	return *text ? 0 : -1;
}

static int split_ids(struct gotmpl_parser *p, struct gotmpl_node *n, const char *s, size_t len)
{
	size_t i = 0, start;

	n->ids = gotmpl_alloc(&p->t->a, (len + 1) * sizeof(*n->ids));
	if (!n->ids)
		return p->rc = p->rc ?: -ENOMEM;
	if (s[0] == '$') {
		for (i = 1; i < len && s[i] != '.'; i++)
			;
		n->ids[n->nids++] = gotmpl_p_sdup(p, s, i);
	}
	while (i < len) {
		start = ++i;
		while (i < len && s[i] != '.')
			i++;
		n->ids[n->nids++] = gotmpl_p_sdup(p, s + start, i - start);
	}
	return p->rc;
}

/* ---- variables in scope ---- */

void gotmpl_p_push_var(struct gotmpl_parser *p, const char *name)
{
	if (p->nvars == p->capvars) {
		size_t cap = p->capvars ? 2 * p->capvars : 16;
		char **n = realloc(p->vars, cap * sizeof(*n));

		if (!n) {
			p->rc = p->rc ?: -ENOMEM;
			return;
		}
		p->vars = n;
		p->capvars = cap;
	}
	p->vars[p->nvars++] = (char *)name;
}

static void use_var(struct gotmpl_parser *p, const char *name)
{
	for (size_t i = p->nvars; i-- > 0;)
		if (strcmp(p->vars[i], name) == 0)
			return;
	gotmpl_p_perr(p, "undefined variable \"%s\"", name);
}

/* ---- pipelines ---- */

struct gotmpl_node *gotmpl_p_pipeline(struct gotmpl_parser *p, const char *ctx,
				      enum gotmpl_tok end);

static struct gotmpl_node *term(struct gotmpl_parser *p)
{
	struct gotmpl_token *t = gotmpl_p_next_ns(p);
	struct gotmpl_node *n;
	char m[160];

	switch (t->type) {
	case T_IDENT:
		n = gotmpl_p_node(p, N_IDENT, t);
		if (!n)
			return NULL;
		n->raw = t->s;
		n->rawlen = t->n;
		n->fn = gotmpl_func_find(t->s, t->n);
		if (!n->fn) {
			gotmpl_p_perr(p, "function \"%.*s\" not defined", (int)t->n, t->s);
			return NULL;
		}
		if (n->fn->flags & GT_F_NOT_NFD) {
			gotmpl_p_perr(p, "function \"%.*s\" not defined: %s", (int)t->n, t->s,
				      gotmpl_func_why(n->fn));
			return NULL;
		}
		if (n->fn->flags & GT_F_REFUSED) {
			gotmpl_p_perr(
			    p,
			    "function \"%.*s\" refused: its result depends on the clock, randomness, the environment or the network",
			    (int)t->n, t->s);
			return NULL;
		}
		return n;
	case T_DOT:
		return gotmpl_p_node(p, N_DOT, t);
	case T_NIL:
		return gotmpl_p_node(p, N_NIL, t);
	case T_VAR:
		n = gotmpl_p_node(p, N_VAR, t);
		if (!n || split_ids(p, n, t->s, t->n))
			return NULL;
		use_var(p, n->ids[0]);
		return n;
	case T_FIELD:
		n = gotmpl_p_node(p, N_FIELD, t);
		if (!n || split_ids(p, n, t->s, t->n))
			return NULL;
		return n;
	case T_BOOL:
		n = gotmpl_p_node(p, N_BOOL, t);
		if (n)
			n->bval = t->s[0] == 't';
		return n;
	case T_NUMBER:
	case T_CHAR:
		n = gotmpl_p_node(p, N_NUMBER, t);
		if (!n)
			return NULL;
		if (gotmpl_number(t, n, m, sizeof(m))) {
			gotmpl_p_perr(p, "%s", m);
			return NULL;
		}
		return n;
	case T_LPAREN:
		return gotmpl_p_pipeline(p, "parenthesized pipeline", T_RPAREN);
	case T_STRING:
	case T_RAWSTRING:
		n = gotmpl_p_node(p, N_STRING, t);
		if (!n || gotmpl_p_string(p, t, &n->text, &n->tlen))
			return NULL;
		n->raw = t->s;
		n->rawlen = t->n;
		return n;
	default:
		gotmpl_p_backup(p);
		return NULL;
	}
}

static struct gotmpl_node *operand(struct gotmpl_parser *p)
{
	struct gotmpl_node *n = term(p), *c;
	struct strbuf sb;

	if (!n || gotmpl_p_peek(p)->type != T_FIELD)
		return n;
	c = gotmpl_p_node(p, N_CHAIN, gotmpl_p_peek(p));
	if (!c)
		return NULL;
	c->sub = n;
	c->ids = gotmpl_alloc(&p->t->a, 64 * sizeof(*c->ids));
	if (!c->ids)
		return NULL;
	while (gotmpl_p_peek(p)->type == T_FIELD && c->nids < 64) {
		struct gotmpl_token *t = gotmpl_p_next(p);

		c->ids[c->nids++] = gotmpl_p_sdup(p, t->s + 1, t->n - 1);
	}
	switch (n->type) {
	case N_FIELD:
	case N_VAR: /* .a.b then .c: one field or variable node */
		sb_init(&sb, GOTMPL_SRC_MAX);
		for (size_t i = 0; i < n->nids; i++)
			sb_addf(&sb, "%s%s", i || n->type == N_FIELD ? "." : "", n->ids[i]);
		for (size_t i = 0; i < c->nids; i++)
			sb_addf(&sb, ".%s", c->ids[i]);
		n->nids = 0;
		n->pos = c->pos; /* Go's newField(chain.Position(), ...): the second field's */
		n->line = c->line;
		split_ids(p, n, sb.buf, sb.len);
		sb_free(&sb);
		return n;
	case N_BOOL:
	case N_STRING:
	case N_NUMBER:
	case N_NIL:
	case N_DOT: { /* Go: "unexpected . after term %q", node.String() */
		struct strbuf ts = STRBUF_INIT(GOTMPL_SRC_MAX), q = STRBUF_INIT(GOTMPL_SRC_MAX);

		if (gotmpl_node_string(&ts, n) == 0 && gotmpl_quote(&q, ts.buf, ts.len, '"') == 0)
			gotmpl_p_perr(p, "unexpected . after term %s", q.buf);
		else
			gotmpl_p_perr(p, "unexpected . after term");
		sb_free(&ts);
		sb_free(&q);
		return NULL;
	}
	default:
		return c;
	}
}

static struct gotmpl_node *command(struct gotmpl_parser *p)
{
	struct gotmpl_node *cmd = gotmpl_p_node(p, N_CMD, gotmpl_p_peek_ns(p));

	if (!cmd)
		return NULL;
	for (;;) {
		struct gotmpl_node *o;
		struct gotmpl_token *t;

		gotmpl_p_peek_ns(p);
		o = operand(p);
		if (p->rc)
			return NULL;
		if (o && gotmpl_p_add_kid(p, cmd, o))
			return NULL;
		t = gotmpl_p_next(p);
		if (t->type == T_SPACE)
			continue;
		if (t->type == T_RDELIM || t->type == T_RPAREN)
			gotmpl_p_backup(p);
		else if (t->type != T_PIPE) {
			gotmpl_p_unexpected(p, t, "operand");
			return NULL;
		}
		break;
	}
	if (!cmd->nkids) {
		gotmpl_p_perr(p, "empty command");
		return NULL;
	}
	return cmd;
}

struct gotmpl_node *gotmpl_p_pipeline(struct gotmpl_parser *p, const char *ctx, enum gotmpl_tok end)
{
	struct gotmpl_node *pipe = gotmpl_p_node(p, N_PIPE, gotmpl_p_peek_ns(p));
	struct gotmpl_token *t;

	if (!pipe)
		return NULL;
	if (++p->depth > GOTMPL_DEPTH_MAX) {
		gotmpl_p_perr(p, "actions nested deeper than %d", GOTMPL_DEPTH_MAX);
		p->rc = -ELOOP;
		return NULL;
	}
	pipe->decl = gotmpl_alloc(&p->t->a, 2 * sizeof(*pipe->decl));
	if (!pipe->decl)
		return NULL;
decls:
	t = gotmpl_p_peek_ns(p);
	if (t->type == T_VAR) {
		size_t save = p->i;
		struct gotmpl_token *v = gotmpl_p_next_ns(p), *after = gotmpl_p_peek_ns(p);

		if (after->type == T_ASSIGN || after->type == T_DECLARE) {
			gotmpl_p_next_ns(p);
			pipe->assign = after->type == T_ASSIGN;
			pipe->decl[pipe->ndecl++] = gotmpl_p_sdup(p, v->s, v->n);
			if (pipe->assign)
				use_var(p, pipe->decl[pipe->ndecl - 1]);
			else
				gotmpl_p_push_var(p, pipe->decl[pipe->ndecl - 1]);
		} else if (after->type == T_COMMA) {
			gotmpl_p_next_ns(p);
			pipe->decl[pipe->ndecl++] = gotmpl_p_sdup(p, v->s, v->n);
			gotmpl_p_push_var(p, pipe->decl[pipe->ndecl - 1]);
			if (strcmp(ctx, "range") == 0 && pipe->ndecl < 2) {
				t = gotmpl_p_peek_ns(p);
				if (t->type == T_VAR || t->type == T_RDELIM || t->type == T_RPAREN)
					goto decls;
				gotmpl_p_perr(p, "range can only initialize variables");
				return NULL;
			}
			gotmpl_p_perr(p, "too many declarations in %s", ctx);
			return NULL;
		} else {
			p->i = save;
		}
	}
	for (;;) {
		t = gotmpl_p_next_ns(p);
		if (p->rc)
			return NULL;
		if (t->type == end) {
			if (!pipe->nkids) {
				gotmpl_p_perr(p, "missing value for %s", ctx);
				return NULL;
			}
			for (size_t i = 1; i < pipe->nkids; i++) {
				enum gotmpl_ntype k = pipe->kids[i]->kids[0]->type;

				if (k == N_BOOL || k == N_DOT || k == N_NIL || k == N_NUMBER ||
				    k == N_STRING) {
					gotmpl_p_perr(
					    p, "non executable command in pipeline stage %zu",
					    i + 1);
					return NULL;
				}
			}
			p->depth--;
			return pipe;
		}
		switch (t->type) {
		case T_BOOL:
		case T_CHAR:
		case T_DOT:
		case T_FIELD:
		case T_IDENT:
		case T_NUMBER:
		case T_NIL:
		case T_RAWSTRING:
		case T_STRING:
		case T_VAR:
		case T_LPAREN:
			gotmpl_p_backup(p);
			if (gotmpl_p_add_kid(p, pipe, command(p)))
				return NULL;
			break;
		default:
			gotmpl_p_unexpected(p, t, ctx);
			return NULL;
		}
	}
}
