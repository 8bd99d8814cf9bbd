/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_parse: tokens into parse trees, as Go's text/template/parse (parse.go, node.go). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

enum { END_EOF = 1, END_END, END_ELSE };

/* ---- actions and lists ---- */

static struct gotmpl_node *list(struct gotmpl_parser *p, int *ended);
static struct gotmpl_node *if_control(struct gotmpl_parser *p, enum gotmpl_ntype type,
				      const char *ctx);

static int expect_rdelim(struct gotmpl_parser *p, const char *ctx)
{
	struct gotmpl_token *t = gotmpl_p_next_ns(p);

	if (t->type == T_RDELIM)
		return 0;
	gotmpl_p_unexpected(p, t, ctx);
	return -1;
}

static int add_template(struct gotmpl_parser *p, const char *name, struct gotmpl_node *root);

/* After {{if/range/with: pipeline, body, optional else part, {{end}}. */
static struct gotmpl_node *if_control(struct gotmpl_parser *p, enum gotmpl_ntype type,
				      const char *ctx)
{
	struct gotmpl_node *n = gotmpl_p_node(p, type, gotmpl_p_tok(p, p->i - 1));
	size_t nvars = p->nvars;
	int ended = 0;

	if (!n)
		return NULL;
	n->pipe = gotmpl_p_pipeline(p, ctx, T_RDELIM);
	if (!n->pipe)
		return NULL;
	if (type == N_RANGE)
		p->in_range++;
	n->list = list(p, &ended);
	if (type == N_RANGE)
		p->in_range--;
	if (p->rc)
		return NULL;
	if (ended == END_ELSE) {
		struct gotmpl_token *t = gotmpl_p_peek_ns(p);

		if ((type == N_IF && t->type == T_IF) || (type == N_WITH && t->type == T_WITH)) {
			/* {{else if}} / {{else with}}: a nested control sharing our {{end}} */
			n->elist = gotmpl_p_node(p, N_LIST, t);
			gotmpl_p_next_ns(p);
			if (!n->elist ||
			    gotmpl_p_add_kid(p, n->elist,
					     if_control(p, type, type == N_IF ? "if" : "with")))
				return NULL;
		} else {
			if (expect_rdelim(p, "else"))
				return NULL;
			n->elist = list(p, &ended);
			if (p->rc)
				return NULL;
			if (ended != END_END) {
				gotmpl_p_perr(p, ended == END_ELSE ? "expected end; found {{else}}"
								   : "unexpected EOF");
				return NULL;
			}
		}
	} else if (ended != END_END) {
		gotmpl_p_perr(p, "unexpected EOF");
		return NULL;
	}
	p->nvars = nvars;
	return n;
}

static struct gotmpl_node *template_control(struct gotmpl_parser *p, int block)
{
	struct gotmpl_node *n = gotmpl_p_node(p, N_TEMPLATE, gotmpl_p_tok(p, p->i - 1));
	struct gotmpl_token *t = gotmpl_p_next_ns(p);
	const char *ctx = block ? "block clause" : "template clause";

	if (!n)
		return NULL;
	n->pos = t->pos; /* Go's newTemplate(token.pos, ...): the name's position */
	n->line = t->line;
	if (t->type != T_STRING && t->type != T_RAWSTRING) {
		gotmpl_p_unexpected(p, t, ctx);
		return NULL;
	}
	if (gotmpl_p_string(p, t, &n->text, &n->tlen))
		return NULL;
	if (gotmpl_p_peek_ns(p)->type != T_RDELIM) {
		n->pipe = gotmpl_p_pipeline(p, ctx, T_RDELIM);
		if (!n->pipe)
			return NULL;
	} else {
		gotmpl_p_next_ns(p);
		if (block) {
			gotmpl_p_perr(p, "missing value for block clause");
			return NULL;
		}
	}
	if (block) { /* {{block "x" .}}body{{end}}: define x, then call it */
		size_t nvars = p->nvars;
		int ended = 0, in_range = p->in_range;
		struct gotmpl_node *body;

		p->nvars = 1;
		p->in_range = 0;
		body = list(p, &ended);
		p->nvars = nvars;
		p->in_range = in_range;
		if (!body)
			return NULL;
		if (ended != END_END) {
			gotmpl_p_perr(p, "unexpected EOF");
			return NULL;
		}
		if (add_template(p, n->text, body))
			return NULL;
	}
	return n;
}

/* After {{: one action (or *ended for {{end}} / {{else}}). */
static struct gotmpl_node *action(struct gotmpl_parser *p, int *ended)
{
	struct gotmpl_token *t = gotmpl_p_next_ns(p);
	struct gotmpl_node *n;

	switch (t->type) {
	case T_BLOCK:
		return template_control(p, 1);
	case T_BREAK:
	case T_CONTINUE:
		n = gotmpl_p_node(p, t->type == T_BREAK ? N_BREAK : N_CONTINUE, t);
		if (!p->in_range) {
			gotmpl_p_perr(p, "{{%.*s}} outside {{range}}", (int)t->n, t->s);
			return NULL;
		}
		if (expect_rdelim(p, t->type == T_BREAK ? "{{break}}" : "{{continue}}"))
			return NULL;
		return n;
	case T_ELSE: { /* Go's elseControl checks its own syntax before its place is judged */
		struct gotmpl_token *nx = gotmpl_p_peek_ns(p);

		if (nx->type != T_IF && nx->type != T_WITH && nx->type != T_RDELIM) {
			gotmpl_p_unexpected(p, nx, "else");
			return NULL;
		}
		*ended = END_ELSE;
		return NULL;
	}
	case T_END:
		*ended = END_END;
		expect_rdelim(p, "end");
		return NULL;
	case T_IF:
		return if_control(p, N_IF, "if");
	case T_RANGE:
		return if_control(p, N_RANGE, "range");
	case T_WITH:
		return if_control(p, N_WITH, "with");
	case T_TEMPLATE:
		return template_control(p, 0);
	default:
		gotmpl_p_backup(p);
		n = gotmpl_p_node(p, N_ACTION, t);
		if (n)
			n->pipe = gotmpl_p_pipeline(p, "command", T_RDELIM);
		return n && n->pipe ? n : NULL;
	}
}

static struct gotmpl_node *define(struct gotmpl_parser *p);

/* Items up to {{end}}, {{else}} or EOF (*ended says which); top: {{define}} allowed. */
static struct gotmpl_node *list_top(struct gotmpl_parser *p, int *ended, int top)
{
	struct gotmpl_node *l = gotmpl_p_node(p, N_LIST, gotmpl_p_peek(p));

	*ended = 0;
	if (!l)
		return NULL;
	if (++p->depth > GOTMPL_DEPTH_MAX) {
		gotmpl_p_perr(p, "actions nested deeper than %d", GOTMPL_DEPTH_MAX);
		p->rc = -ELOOP;
		return NULL;
	}
	while (!p->rc) {
		struct gotmpl_token *t = gotmpl_p_next(p);
		struct gotmpl_node *n;

		if (t->type == T_EOF) {
			if (p->lx->err[0]) {
				gotmpl_p_lex_fail(p);
				return NULL;
			}
			*ended = END_EOF;
			break;
		}
		if (t->type == T_TEXT) {
			n = gotmpl_p_node(p, N_TEXT, t);
			if (!n)
				return NULL;
			n->text = t->s;
			n->tlen = t->n;
			gotmpl_p_add_kid(p, l, n);
			continue;
		}
		if (t->type != T_LDELIM) {
			gotmpl_p_unexpected(p, t, "input");
			return NULL;
		}
		if (gotmpl_p_peek_ns(p)->type == T_DEFINE) {
			if (!top) {
				gotmpl_p_unexpected(p, gotmpl_p_peek_ns(p), "command");
				return NULL;
			}
			gotmpl_p_next_ns(p);
			define(p);
			continue;
		}
		n = action(p, ended);
		if (*ended) {
			if (top) {
				gotmpl_p_perr(p, "unexpected {{%s}}",
					      *ended == END_END ? "end" : "else");
				return NULL;
			}
			break;
		}
		if (!n)
			return NULL;
		gotmpl_p_add_kid(p, l, n);
	}
	p->depth--;
	return p->rc ? NULL : l;
}

static struct gotmpl_node *list(struct gotmpl_parser *p, int *ended)
{
	return list_top(p, ended, 0);
}

static int empty_tree(const struct gotmpl_node *n)
{
	for (size_t i = 0; i < n->nkids; i++) {
		const struct gotmpl_node *k = n->kids[i];

		if (k->type != N_TEXT)
			return 0;
		for (size_t j = 0; j < k->tlen; j++)
			if (!strchr(" \t\r\n", k->text[j]))
				return 0;
	}
	return 1;
}

static int add_template(struct gotmpl_parser *p, const char *name, struct gotmpl_node *root)
{
	struct gotmpl *t = p->t;
	struct gotmpl_tmpl *n;

	for (size_t i = 0; i < t->ntm; i++) {
		if (strcmp(t->tm[i].name, name) != 0)
			continue;
		if (!t->tm[i].root || empty_tree(t->tm[i].root)) {
			t->tm[i].root = root;
		} else if (!empty_tree(root)) {
			gotmpl_p_perr(p, "template: multiple definition of template \"%s\"", name);
			return -1;
		}
		return 0;
	}
	if (t->ntm == t->captm) { /* doubled: grown by one each, 3000 defines took 32 MiB */
		size_t cap = t->captm ? 2 * t->captm : 8;

		n = gotmpl_alloc(&t->a, cap * sizeof(*n));
		if (!n)
			return p->rc = p->rc ?: -ENOMEM;
		if (t->ntm)
			memcpy(n, t->tm, t->ntm * sizeof(*n));
		t->tm = n;
		t->captm = cap;
	}
	t->tm[t->ntm].name = name;
	t->tm[t->ntm].root = root;
	t->ntm++;
	return 0;
}

/* After {{define: "name"}} body {{end}}. */
static struct gotmpl_node *define(struct gotmpl_parser *p)
{
	struct gotmpl_token *t = gotmpl_p_next_ns(p);
	const char *name;
	size_t nvars = p->nvars, len;
	struct gotmpl_node *body;
	int ended = 0;

	if (t->type != T_STRING && t->type != T_RAWSTRING) {
		gotmpl_p_unexpected(p, t, "define clause");
		return NULL;
	}
	if (gotmpl_p_string(p, t, &name, &len) || expect_rdelim(p, "define clause"))
		return NULL;
	p->nvars = 1;
	body = list(p, &ended);
	if (body && ended != END_END)
		gotmpl_p_perr(p, "unexpected EOF");
	p->nvars = nvars;
	if (p->rc || add_template(p, name, body))
		return NULL;
	return body;
}

size_t gotmpl_mem(const struct gotmpl *t)
{
	return t ? gotmpl_arena_inuse(&t->a) : 0;
}

size_t gotmpl_parse_mem_max = GT_PARSE_MEM_MAX;

int gotmpl_parse(const char *name, const char *src, size_t len, struct gotmpl **out,
		 struct gotmpl_err *err)
{
	struct gotmpl_parser p = {.err = err};
	struct gotmpl_lexed lx;
	struct gotmpl *t;
	struct gotmpl_node *root;
	int ended = 0, rc;

	*out = NULL;
	if (err)
		err->msg[0] = '\0';
	if (len > GOTMPL_SRC_MAX) {
		if (err)
			snprintf(err->msg, sizeof(err->msg),
				 "template: %s: template too large: %zu bytes, at most %u", name,
				 len, GOTMPL_SRC_MAX);
		return -E2BIG;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	gotmpl_arena_init(&t->a, gotmpl_parse_mem_max);
	t->src = gotmpl_strdup(&t->a, src, len);
	t->srclen = len;
	rc = gotmpl_lex(t->src ? t->src : "", t->src ? len : 0, &lx);
	if (rc == -ENOMEM || !t->src || !lx.n) {
		gotmpl_lex_free(&lx);
		gotmpl_free(t);
		if (err)
			snprintf(err->msg, sizeof(err->msg),
				 "template: %s: out of memory parsing it", name);
		return -ENOMEM;
	}
	p.t = t;
	p.lx = &lx;
	p.top = gotmpl_strdup(&t->a, name, strlen(name));
	gotmpl_p_push_var(&p, "$");
	if (p.top && !add_template(&p, p.top, NULL)) {
		root = list_top(&p, &ended, 1);
		if (root && !p.rc)
			t->tm[0].root = root;
	} else {
		p.rc = p.rc ?: -ENOMEM;
	}
	rc = p.rc;
	if (!rc && t->a.over)
		rc = -ENOMEM;
	if (rc == -ENOMEM && err && t->a.over)
		snprintf(err->msg, sizeof(err->msg),
			 "template: %s: its parse tree needs more than %zu KiB (the limit)", name,
			 gotmpl_parse_mem_max >> 10);
	else if (rc == -ENOMEM && err)
		snprintf(err->msg, sizeof(err->msg), "template: %s: out of memory parsing it",
			 name);
	free(p.vars);
	gotmpl_lex_free(&lx);
	if (rc) {
		gotmpl_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void gotmpl_free(struct gotmpl *t)
{
	if (!t)
		return;
	gotmpl_arena_free(&t->a);
	free(t);
}
