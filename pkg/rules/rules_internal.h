/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_internal: the data and calls the stages of pkg/rules share (not a public contract). */
#ifndef NP_RULES_INTERNAL_H
#define NP_RULES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "feature/feature.h"
#include "label/label.h"
#include "log/log.h"
#include "strbuf/strbuf.h"
#include "ydoc/ydoc.h"
#include "rules/rules.h"

#define RULES_FILE_MAX	   (1u << 20)  /* bytes per rules file */
#define RULES_TEMPLATE_OUT (1u << 20)  /* bytes a template may expand to */
#define RULES_TMPL_MAX	   10000       /* distinct templates over all loaded rules */
#define RULES_TMPL_SRC	   (16u << 20) /* bytes of their texts together */
#define RULES_TMPL_MEM	   (32u << 20) /* bytes of their parse trees together (gotmpl_mem) */
#define RULES_RULE_LABELS  4096	 /* labels one rule may produce (a features.d file holds 64 KiB) */
#define RULES_REGEX_MAX	   10000 /* distinct regular expressions over all loaded rules */
#define RULES_REGEX_MEM	   (64u << 20) /* memory they may use together (goregex_compile_mem) */
#define NFD_PREFIX	   "feature.node.kubernetes.io/"

enum op {
	OP_IN,
	OP_NOTIN,
	OP_INREGEXP,
	OP_EXISTS,
	OP_DOESNOTEXIST,
	OP_GT,
	OP_LT,
	OP_GTLT,
	OP_GE,
	OP_LE,
	OP_GELE,
	OP_ISTRUE,
	OP_ISFALSE,
};
/* A version as NFD compares them (type: version): major.minor.patch only. */
struct ver {
	unsigned long long v[3]; /* major, minor, patch */
};

struct expr {
	char *key;    /* attribute/flag name; NULL for matchName */
	enum op op;   /* operator */
	char **val;   /* values */
	size_t nval;  /* number of values */
	bool version; /* type: version (numeric ops) */
	const struct goregex *
	    *re; /* InRegexp: compiled values (borrowed from rules.re), NULL for a bad one */
	long long num[2];  /* numeric ops, untyped: parsed values */
	struct ver ver[2]; /* numeric ops, type: version: parsed values */
	char *bad;	   /* why NFD fails this expression when evaluated, or NULL */
};

struct term {
	char *feature;	   /* "pci.device" (lower-cased for lookup, as NFD) */
	char *tkey;	   /* the feature as written: the template's .<domain>.<feature> */
	struct expr *ex;   /* matchExpressions */
	size_t nex;	   /* number of expressions */
	bool has_ex;	   /* matchExpressions given (possibly empty) */
	struct expr *name; /* matchName, or NULL */
};

struct matcher {
	struct term *t; /* AND over these */
	size_t n;	/* number of terms */
};

struct gotmpl; /* pkg/gotmpl: a parsed template */

/* A template of a rule: parsed (borrowed from rules.cache), or why NFD would refuse it. */
struct rtmpl {
	bool set;		/* the rule has this template (a non-empty text) */
	const struct gotmpl *t; /* parsed, or NULL */
	const char *bad;	/* NFD's parse error (borrowed from rules.cache), or NULL */
};

struct kv {
	char *k, *v; /* label key and value */
};

struct rule {
	char *name;	     /* rule name */
	char *where;	     /* "file:line:col" of the rule */
	char *object;	     /* metadata.name of its object: nfd-master's order */
	size_t seq;	     /* load order, for objects of the same name */
	struct kv *labels;   /* static labels */
	size_t nlabels;	     /* number of static labels */
	struct kv *vars;     /* static vars */
	size_t nvars;	     /* number of static vars */
	struct rtmpl tmpl;   /* labelsTemplate */
	struct rtmpl vtmpl;  /* varsTemplate */
	struct rtmpl count;  /* countLabelsTemplate (LabelCountRule) */
	struct matcher mf;   /* matchFeatures */
	struct matcher *any; /* matchAny elements */
	size_t nany;	     /* number of matchAny elements */
	bool counting;	     /* from a LabelCountRule object */
};

/* Distinct texts, each compiled once: open addressing, grown at half full (rules_cache.c). */
struct rtable {
	struct rcache_ent *e; /* slots */
	size_t cap, n;	      /* slots, used */
};

/* The distinct patterns and templates of the loaded rules, each compiled once. */
struct rcache {
	struct rtable re, tmpl; /* patterns (struct goregex), templates (struct gotmpl) */
	size_t mem;		/* what the patterns may use, at most RULES_REGEX_MEM */
	size_t tsrc;		/* bytes of the template texts, at most RULES_TMPL_SRC */
	size_t tmem;		/* bytes of their parse trees, at most RULES_TMPL_MEM */
	size_t compiled;	/* compiles and parses done (tests count them) */
	size_t re_over;		/* patterns refused at RULES_REGEX_MEM took; past it none tried */
	size_t tmpl_over;	/* templates refused at RULES_TMPL_MEM took; past it none tried */
};

struct rules {
	struct rule *r;	     /* rules in load order */
	size_t n, cap;	     /* used, allocated */
	size_t seq;	     /* next load sequence number */
	struct rcache cache; /* the patterns and templates they borrow */
};

/* One matched element: an instance, or a flag/attribute element. */
struct elem {
	const struct feat *inst; /* instance, or NULL */
	const char *name;	 /* flag/attribute name */
	const char *value;	 /* attribute value; NULL for a flag (NFD: no Value key) */
};

/* Elements matched per feature name, for rules_templates (NFD's matchedFeatures). */
struct mgroup {
	const char *feature; /* as written in the term (borrowed from the rule) */
	struct elem *e;	     /* matched elements */
	size_t n;	     /* number */
};

struct matched {
	struct mgroup *g; /* groups */
	size_t n;	  /* number of groups */
};

/* A label candidate of one rule evaluation. */
struct cand {
	struct kv *kv; /* key/value pairs, later ones replace earlier */
	size_t n;      /* number */
};

/*
 * The stages, and who calls whom: calls run one way, each stage calling only stages listed
 * above it, never one below (scripts/check-calls checks it on the object files).
 *
 *   values     rules_value.c     pure helpers; calls nothing of the module
 *   templates  rules_template.c  templates through pkg/gotmpl: parse, execute; uses values
 *   cache      rules_cache.c     each distinct pattern and template compiled once; uses templates
 *   load       rules_load_expr.c YAML values checked, matchFeatures terms; uses cache, values
 *              rules_load.c      rules, documents, files into struct rules; uses all of the above
 *   evaluate   rules_eval.c      rules against features into labels; uses templates and values
 *   builtin    rules_builtin.c   the embedded files, through load; rules_uses.c reads struct rules
 *   select     rules_select.c    a matchFeatures list alone (device classes); uses load, evaluate
 */

/* ------------------------------------------------------------ values (rules_value.c) */

/* Grow *arr_p (an array of *n elements of sz bytes) by one zeroed element, counted in *n: the
 * new element, or NULL on ENOMEM (*arr_p and *n unchanged). */
void *rules_grow(void *arr_p, size_t *n, size_t sz);

/* Go's strconv.Atoi: optional sign, decimal digits, no spaces, in range. True with *out set;
 * false when Go refuses s (*out then unspecified). */
bool rules_atoi_go(const char *s, long long *out);

/* type: version as NFD reads it (Masterminds/semver, coerced): true with *out's
 * major.minor.patch (missing parts 0); false when NFD refuses s. */
bool rules_version_parse(const char *s, struct ver *out);

/* s for a log line into dst (cap bytes, NUL-terminated, cut when full): each control byte (a CR,
 * a 0x1f) written as "\xNN", never raw. */
void rules_escape(char *dst, size_t cap, const char *s);

/* ------------------------------------------------------ templates (rules_template.c) */

/* src parsed by pkg/gotmpl as NFD's NewHelper does, into *out (owned, gotmpl_free): 0; -EINVAL
 * with why (NFD's "failed to parse template: invalid template: ...") and *out NULL; -ENOMEM. */
int rules_tmpl_parse(const char *src, struct gotmpl **out, char *why, size_t whylen);

/*
 * rl's templates (labelsTemplate, varsTemplate, countLabelsTemplate) run over m (NFD's
 * matchedFeatures), their lines put into labels and vars. 0, also when a template fails (one
 * that did not parse, an execution error, a bound of pkg/gotmpl, a line without '='): then
 * *failed is set and a warning names the rule; -ENOMEM.
 */
int rules_templates(const struct rule *rl, const struct matched *m, struct cand *labels,
		    struct cand *vars, bool *failed);

/* k=v (klen and vlen bytes, copied) into c, replacing an earlier k: 0; -E2BIG when c already
 * holds RULES_RULE_LABELS keys; -ENOMEM. */
int rules_cand_put(struct cand *c, const char *k, size_t klen, const char *v, size_t vlen);

/* Free c's pairs (c itself is the caller's). */
void rules_cand_free(struct cand *c);

/* ---------------------------------------------------------------- cache (rules_cache.c) */

/*
 * pat compiled as Go's regexp.MatchString (pkg/goregex), from c or into it: *re is borrowed
 * until rules_cache_free(c). 0; -EINVAL when Go refuses pat (why says why; *re NULL, and the
 * refusal is kept too); -ENOSPC when c would hold more than RULES_REGEX_MAX patterns or
 * RULES_REGEX_MEM bytes of them, or patterns refused at RULES_REGEX_MEM took more than it to
 * compile (why names the limit; pat is not kept, so the rule using it can be skipped and the
 * next one still compiles in what is left); -ENOMEM.
 */
int rules_regex(struct rcache *c, const char *pat, const struct goregex **re, char *why,
		size_t whylen);

/*
 * src parsed by rules_tmpl_parse, from c or into it: t->t, or t->bad when it does not parse,
 * borrowed until rules_cache_free(c). 0; -ENOSPC when c would hold more than RULES_TMPL_MAX
 * templates, RULES_TMPL_SRC bytes of them or RULES_TMPL_MEM bytes of parse trees, or those
 * refused at RULES_TMPL_MEM took more than it to parse (why names the limit; src is not kept);
 * -ENOMEM.
 */
int rules_tmpl(struct rcache *c, const char *src, struct rtmpl *t, char *why, size_t whylen);

/* Free every pattern and template of c. */
void rules_cache_free(struct rcache *c);

/* -------------------------------------- load, values (rules_load_expr.c; rules_load.c) */

/* YAML loading state of one file, while its documents are read. */
struct ctx {
	struct ydoc *y;	      /* current document (pkg/ydoc: limits, lookups, messages) */
	const char *file;     /* name for messages */
	struct log_err *err;  /* where errors go */
	struct rcache *cache; /* where patterns and templates are compiled, once each */
	bool skip_rule; /* a limit of all the rules skips the rule reaching it, not the file */
	char over[600]; /* why the rule being parsed is skipped (its first limit), or "" */
};

/* Node i of c's current document (borrowed from it), as ydoc_node. */
static inline yaml_node_t *rules_node(struct ctx *c, int i)
{
	return ydoc_node(c->y, i);
}

/* One more node walked: false once the document's walking budget is spent (ydoc_visit). */
static inline bool rules_visit(struct ctx *c)
{
	return ydoc_visit(c->y);
}

/* True for a node Kubernetes reads as null (ydoc_is_null). */
static inline bool rules_is_null(const yaml_node_t *n)
{
	return ydoc_is_null(n);
}

/* The key of a pair of a mapping checked by rules_want_map (borrowed). */
static inline const char *rules_key_of(struct ctx *c, const yaml_node_pair_t *p)
{
	return (const char *)rules_node(c, p->key)->data.scalar.value;
}

/* The value of key in mapping m (checked by rules_want_map), or NULL. */
static inline yaml_node_t *rules_map_get(struct ctx *c, const yaml_node_t *m, const char *key)
{
	return ydoc_get(c->y, m, key);
}

/* Fail the file at n: "file:line:col: <fmt>" into c->err; -EINVAL (ydoc_fail on c's document). */
#define rules_at(c, n, ...) ydoc_fail((c)->y, (n), __VA_ARGS__)

/*
 * why (from rules_regex or rules_tmpl: a limit of all the rules loaded) reached at n by what
 * ("labelsTemplate"): with c->skip_rule, the rule being parsed is to be skipped: c->over says
 * so (its first such limit only) and 0; without (rules_select), -EINVAL as rules_at.
 */
int rules_over(struct ctx *c, const yaml_node_t *n, const char *what, const char *why);

/* *out the string n holds as the CRD's "type: string" takes it (borrowed from the document):
 * 0; -EINVAL (rules_at, naming what) for a non-scalar, a null, a boolean or a number. */
int rules_want_string(struct ctx *c, const yaml_node_t *n, const char *what, const char **out);

/* Whether n holds a string as rules_want_string takes it (so a caller formats its message
 * only when it does not). */
bool rules_is_string(const yaml_node_t *n);

/* Whether mapping n has only the keys of allowed (NULL-terminated): rules_only_fields without
 * the message (so a caller formats what only when it does not). */
bool rules_fields_known(struct ctx *c, const yaml_node_t *n, const char *const *allowed);

/* 0 when mapping n has only the keys of allowed (NULL-terminated); else -EINVAL naming the
 * first other key and what. */
int rules_only_fields(struct ctx *c, const yaml_node_t *n, const char *const *allowed,
		      const char *what);

/* 0 when n is of type t (a mapping or a sequence); else -EINVAL naming what. */
int rules_want_type(struct ctx *c, const yaml_node_t *n, yaml_node_type_t t, const char *what);

/* 0 when n is a mapping with string keys, each once (ydoc_check_map); else -EINVAL. */
int rules_want_map(struct ctx *c, const yaml_node_t *n, const char *what);

/*
 * A matchFeatures list (n; null is none) appended to m: each term's feature, matchExpressions
 * and matchName, patterns compiled through c->cache. An op NFD would fail when evaluated sets
 * the expression's bad. 0; -EINVAL (rules_at) for what the CRD refuses; -ENOMEM. What was
 * added stays in m for rules_matcher_free either way.
 */
int rules_parse_matcher(struct ctx *c, const yaml_node_t *n, struct matcher *m);

/* Free m's terms and expressions (their patterns are the cache's); m itself is the caller's. */
void rules_matcher_free(struct matcher *m);

/* -------------------------------------------------------------- load, rules (rules_load.c) */

/* rules_load_buffer for documents already loaded (the built-in files' embedded ones,
 * scripts/embed-yaml): no parsing, no bounds scan. Same returns. */
int rules_load_docs(struct rules *rs, const char *name, const yaml_document_t *docs, size_t ndocs,
		    struct log_err *err);

/* -------------------------------------------------------------- evaluate (rules_eval.c) */

/* The features a rule sees: the scan's, and rule.matched (earlier rules' labels and vars). */
struct evalfs {
	const struct feat_set *fs; /* the sources' features */
	struct feat_set *back;	   /* holds "rule.matched" once the first rule ran */
};

/* A feature's parts: NFD keeps the flags, attributes and instances of one name apart. */
struct parts {
	const struct feat *f; /* flags, or NULL */
	const struct feat *a; /* attributes, or NULL */
	const struct feat *i; /* instances, or NULL */
};

/* Fill p for feature (rule.matched from e->back); true if any part exists. */
bool rules_parts(const struct evalfs *e, const char *feature, struct parts *p);

/* AND over a matcher's terms: 1 match, 0 not, -ENOMEM, or -EINVAL with why (an expression NFD
 * fails). */
int rules_eval_matcher(const struct matcher *m, const struct evalfs *e, struct matched *out,
		       char *why, size_t whylen);

/* Free m's groups; m is empty after, ready for reuse. */
void rules_matched_free(struct matched *m);

#endif
