/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_node: Go's String() of parse-tree nodes, for execution errors (node.go), the values of
 * constant nodes, and the lookup of a {{template}}'s tree. */
#include <errno.h>
#include <string.h>

#include "gotmpl/gotmpl_internal.h"

int gotmpl_node_constant(struct gotmpl_arena *a, const struct gotmpl_node *n,
			 struct gotmpl_val **out)
{
	switch (n->type) {
	case N_BOOL:
		*out = gotmpl_bool(a, n->bval);
		break;
	case N_STRING:
		*out = gotmpl_str(a, n->text, n->tlen);
		break;
	case N_NUMBER: { /* Go's idealConstant: a float only if written as one */
		const char *r = n->raw + (n->raw[0] == '+' || n->raw[0] == '-');
		size_t rl = n->rawlen - (size_t)(r - n->raw);
		int hex = rl > 1 && r[0] == '0' && (r[1] | 0x20) == 'x', floaty = 0;

		for (size_t i = 0; i < rl && n->raw[0] != '\'' && n->is_float; i++)
			if (strchr(hex ? "pP" : ".eEpP", r[i]))
				floaty = 1;
		if (floaty)
			*out = gotmpl_float(a, n->fval);
		else if (n->is_int)
			*out = gotmpl_int(a, n->ival, GT_PLAIN);
		else
			return -ERANGE;
		break;
	}
	default:
		*out = NULL;
		return 0;
	}
	return *out ? 0 : -ENOMEM;
}

int gotmpl_node_string(struct strbuf *sb, const struct gotmpl_node *n)
{
	size_t i;
	int rc = 0;

	switch (n->type) {
	case N_LIST:
		for (i = 0; i < n->nkids && !rc; i++)
			rc = gotmpl_node_string(sb, n->kids[i]);
		return rc;
	case N_TEXT:
		return sb_addn(sb, n->text, n->tlen);
	case N_ACTION:
		return sb_add(sb, "{{") ?: gotmpl_node_string(sb, n->pipe) ?: sb_add(sb, "}}");
	case N_IF:
	case N_RANGE:
	case N_WITH:
		rc = sb_add(sb, n->type == N_IF	     ? "{{if "
				: n->type == N_RANGE ? "{{range "
						     : "{{with ");
		rc = rc ?: gotmpl_node_string(sb, n->pipe) ?: sb_add(sb, "}}") ?: gotmpl_node_string(sb, n->list);
		if (n->elist)
			rc = rc ?: sb_add(sb, "{{else}}") ?: gotmpl_node_string(sb, n->elist);
		return rc ?: sb_add(sb, "{{end}}");
	case N_TEMPLATE:
		rc = sb_add(sb, "{{template ") ?: gotmpl_quote(sb, n->text, n->tlen, '"');
		if (n->pipe)
			rc = rc ?: sb_addch(sb, ' ') ?: gotmpl_node_string(sb, n->pipe);
		return rc ?: sb_add(sb, "}}");
	case N_BREAK:
		return sb_add(sb, "{{break}}");
	case N_CONTINUE:
		return sb_add(sb, "{{continue}}");
	case N_PIPE:
		for (i = 0; i < n->ndecl && !rc; i++)
			rc = (i ? sb_add(sb, ", ") : 0) ?: sb_add(sb, n->decl[i]);
		if (n->ndecl)
			rc = rc ?: sb_add(sb, n->assign ? " = " : " := ");
		for (i = 0; i < n->nkids && !rc; i++)
			rc = (i ? sb_add(sb, " | ") : 0) ?: gotmpl_node_string(sb, n->kids[i]);
		return rc;
	case N_CMD:
		for (i = 0; i < n->nkids && !rc; i++) {
			int paren = n->kids[i]->type == N_PIPE;

			rc = (i ? sb_addch(sb, ' ') : 0) ?: (paren ? sb_addch(sb, '(') : 0)
				 ?: gotmpl_node_string(sb, n->kids[i]) ?: (paren ? sb_addch(sb, ')') : 0);
		}
		return rc;
	case N_FIELD:
	case N_VAR:
		for (i = 0; i < n->nids && !rc; i++)
			rc = (i || n->type == N_FIELD ? sb_addch(sb, '.') : 0)
				 ?: sb_add(sb, n->ids[i]);
		return rc;
	case N_CHAIN:
		if (n->sub->type == N_PIPE)
			rc = sb_addch(sb, '(') ?: gotmpl_node_string(sb, n->sub) ?: sb_addch(sb, ')');
		else
			rc = gotmpl_node_string(sb, n->sub);
		for (i = 0; i < n->nids && !rc; i++)
			rc = sb_addch(sb, '.') ?: sb_add(sb, n->ids[i]);
		return rc;
	case N_DOT:
		return sb_addch(sb, '.');
	case N_NIL:
		return sb_add(sb, "nil");
	case N_BOOL:
		return sb_add(sb, n->bval ? "true" : "false");
	case N_NUMBER:
	case N_STRING:
	case N_IDENT:
		return sb_addn(sb, n->raw, n->rawlen);
	}
	return 0;
}

int gotmpl_tmpl_find(const struct gotmpl *t, struct gotmpl_arena *a, const char *name, size_t len,
		     const struct gotmpl_tmpl **out)
{
	*out = NULL;
	/* the lookup reads every define's name (2700 and a {{template}} in a loop: 1.5 s) */
	if (gotmpl_work(a, t->ntm))
		return -ELOOP;
	for (size_t i = 0; i < t->ntm; i++)
		if (strlen(t->tm[i].name) == len && memcmp(t->tm[i].name, name, len) == 0 &&
		    t->tm[i].root)
			*out = &t->tm[i];
	return 0;
}
