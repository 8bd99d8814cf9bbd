/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_internal: what the stages of pkg/gotmpl (lex -> parse -> exec -> func -> val) share. */
#ifndef NP_GOTMPL_INTERNAL_H
#define NP_GOTMPL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gotmpl/gotmpl.h"
#include "strbuf/strbuf.h"

/* ---- values and the arena (gotmpl_val.c, the bottom of the pipeline) ---- */

/* Go's static type of a value, where it matters (typeOf, index's zero value). */
enum gotmpl_sub {
	GT_PLAIN = 0,  /* int, []interface {}, map[string]interface {} */
	GT_INT64 = 1,  /* int64 */
	GT_STRS = 2,   /* []string, map[string]string */
	GT_UINT64 = 3, /* uint64: u.i holds its bits, so one past INT64_MAX reads negative */
	GT_INTS = 4,   /* []int (Sprig's until and untilStep) */
	GT_BYTES = 5,  /* []uint8 (a semver's MarshalJSON, MarshalText): a list of GT_UINT8 */
	GT_UINT8 = 6,  /* uint8, an element of a GT_BYTES list */
};

/* An internal kind past enum gotmpl_kind: a Go object with methods (gotmpl_sprig_semver_obj.c). */
#define GT_OBJ 7
struct gotmpl_otype;

struct gotmpl_kv {
	char *k;	      /* key bytes, NUL-terminated */
	size_t klen;	      /* key length */
	struct gotmpl_val *v; /* value */
};

struct gotmpl_val {
	unsigned char kind;  /* enum gotmpl_kind */
	unsigned char sub;   /* enum gotmpl_sub */
	unsigned char arena; /* 1: made by the engine in an arena (never freed one by one) */
	union {
		int b;
		int64_t i;
		double f;
		struct {
			char *p; /* NUL-terminated */
			size_t n;
		} s;
		struct {
			struct gotmpl_val **v;
			size_t n, cap;
		} l;
		struct {
			struct gotmpl_kv *e; /* sorted by key bytes */
			size_t n, cap;
		} m;
		struct {
			const struct gotmpl_otype *t; /* its Go type and methods */
			const void *p;		      /* its state (arena, never changed) */
		} o;
	} u;
};

/* Whether v is a uint64 (u.i its bits) and one past INT64_MAX: it prints, compares and converts
 * to float64 unsigned; cast.ToInt64 and Go's int64(u) give its bits, as u.i does. */
static inline int gotmpl_bigu(const struct gotmpl_val *v)
{
	return v->kind == GOTMPL_INT && v->sub == GT_UINT64 && v->u.i < 0;
}

/* Bump allocator with a byte budget; everything is freed at once. */
struct gotmpl_arena {
	struct gotmpl_chunk *head; /* newest chunk first */
	size_t used;		   /* bytes handed out plus chunk overhead */
	size_t max;		   /* budget; gotmpl_alloc fails past it */
	int over;		   /* set once the budget (or a string or nesting limit) was hit */
	unsigned long work;	   /* work charged: bytes, elements and nodes touched */
	unsigned long work_max;	   /* gotmpl_work fails past it */
};

void gotmpl_arena_init(struct gotmpl_arena *a, size_t max);
void gotmpl_arena_free(struct gotmpl_arena *a);
/* The bytes handed out from a's chunks (what a chunk's unused tail never touched is left out). */
size_t gotmpl_arena_inuse(const struct gotmpl_arena *a);
/* n zeroed bytes, or NULL (budget spent: a->over set; or out of memory). */
void *gotmpl_alloc(struct gotmpl_arena *a, size_t n);
char *gotmpl_strdup(struct gotmpl_arena *a, const char *s, size_t n);
/* Count n units of work that allocate nothing: 0, or -ELOOP once past a->work_max. */
#define GT_WORK_PER_STEP 64ul /* an execution's work budget: this many units per step */
int gotmpl_work(struct gotmpl_arena *a, size_t n);
/*
 * The longest string (at most GT_STR_MAX) a function whose work is per_byte units a byte of its
 * output can still pay for: its strbuf's cap, so a slow printer stops at the budget, not after.
 */
size_t gotmpl_room(struct gotmpl_arena *a, unsigned per_byte);

extern const struct gotmpl_val gotmpl_nil_val;
#define GT_NIL ((struct gotmpl_val *)&gotmpl_nil_val)

struct gotmpl_val *gotmpl_str(struct gotmpl_arena *a, const char *s, size_t n);
struct gotmpl_val *gotmpl_cstr(struct gotmpl_arena *a, const char *s);
struct gotmpl_val *gotmpl_int(struct gotmpl_arena *a, int64_t i, int sub);
struct gotmpl_val *gotmpl_float(struct gotmpl_arena *a, double f);
struct gotmpl_val *gotmpl_bool(struct gotmpl_arena *a, int b);
struct gotmpl_val *gotmpl_list(struct gotmpl_arena *a, size_t cap, int sub);
struct gotmpl_val *gotmpl_map(struct gotmpl_arena *a, int sub);
/* Append v to an arena list: 0, or -ENOMEM (also when v is NULL: its allocation failed). */
int gotmpl_alist_push(struct gotmpl_arena *a, struct gotmpl_val *l, struct gotmpl_val *v);
/* A []uint8 of s (GT_BYTES), and the text of one appended to sb (Go's string(b)). */
struct gotmpl_val *gotmpl_bytes(struct gotmpl_arena *a, const char *s, size_t n);
int gotmpl_bytes_text(struct strbuf *sb, const struct gotmpl_val *b);
/* Set m[k] (arena maps only). 0, -ENOMEM or -ELOOP (the work budget). */
int gotmpl_map_put(struct gotmpl_arena *a, struct gotmpl_val *m, const char *k, size_t klen,
		   struct gotmpl_val *v);
/* Index of k in m, or -1. */
long gotmpl_map_find(const struct gotmpl_val *m, const char *k, size_t klen);
/* Go's zero value of m's or l's element type: nil, or "" for the GT_STRS kinds. */
struct gotmpl_val *gotmpl_zero_elem(struct gotmpl_arena *a, const struct gotmpl_val *container);

/* Go's truth: false, 0, nil, empty string, list or map are false. */
int gotmpl_truth(const struct gotmpl_val *v);
/* Go's reflect kind name ("string", "int", "slice", "map", "invalid", ...). */
const char *gotmpl_kindname(const struct gotmpl_val *v);
/* Go's type name ("string", "int", "[]interface {}", "<nil>", ...). */
const char *gotmpl_typename(const struct gotmpl_val *v);
/* reflect.DeepEqual of two values (gotmpl_deepeq.c): 1, 0, or -ELOOP (a's work budget spent, or
 * nested deeper than GT_VAL_DEPTH_MAX). Each node and string byte compared is a's work. */
int gotmpl_deep_equal(struct gotmpl_arena *a, const struct gotmpl_val *x,
		      const struct gotmpl_val *y);
/* How deep the walks over a value go (%v, deepEqual): a dict holding itself is a cycle. */
#define GT_VAL_DEPTH_MAX 1000
/* Byte order of two strings. */
int gotmpl_strcmp(const struct gotmpl_val *a, const struct gotmpl_val *b);

/* ---- objects: Go values with methods (gotmpl_sprig_semver_obj.c) ---- */

struct gotmpl_fctx;
/* A method: recv's method name called with av (converted to its sig): 0, -EINVAL (c->msg)... */
struct gotmpl_method {
	const char *name; /* as templates call it */
	const char *sig;  /* parameter letters: s string, V *semver.Version; NULL: refused */
	int (*fn)(struct gotmpl_fctx *c, const struct gotmpl_val *recv, struct gotmpl_val **av,
		  struct gotmpl_val **res);
};

struct gotmpl_otype {
	const char *name;			      /* Go's type ("*semver.Version") */
	const char *kind;			      /* reflect's kind ("ptr", "struct") */
	const struct gotmpl_method *methods;	      /* its method set, NULL-name terminated */
	const char *const *fields;		      /* its unexported fields, NULL terminated */
	int (*str)(struct strbuf *sb, const void *p); /* String() */
	int (*same)(const void *a, const void *b);    /* its fields equal (DeepEqual) */
};

/* recv's method name, or NULL (not in its method set). */
const struct gotmpl_method *gotmpl_obj_method(const struct gotmpl_val *recv, const char *name);
/* Whether name is an unexported field of recv's struct. */
int gotmpl_obj_field(const struct gotmpl_val *recv, const char *name);
/* A new value of v's type with every field zero (copystructure's copy of a struct of unexported
 * fields only), or NULL (out of memory). */
struct gotmpl_val *gotmpl_obj_zero(struct gotmpl_arena *a, const struct gotmpl_val *v);

/* Masterminds/semver's Version (gotmpl_sprig_semver_obj.c, used by gotmpl_sprig_semver.c). */
struct gotmpl_sv {
	uint64_t maj, min, pat;
	const char *pre, *meta; /* "" when absent */
	size_t npre, nmeta;
};
/* strconv.ParseUint(s, 10, 64): 0, or -1 (not all digits, empty, or out of range). */
int gotmpl_sv_parse_uint(const char *s, size_t n, uint64_t *out);
/* comparePrerelease of two prerelease strings: -1, 0 or 1. */
int gotmpl_sv_cmp_pre(const char *s, size_t ns, const char *o, size_t no);
/* validatePrerelease (pre 1) or validateMetadata of s[0..n), v3.4 line (an empty part is
 * refused): NULL, or the error's words. */
const char *gotmpl_sv_invalid(const char *s, size_t n, int pre);
/* Version.Compare: -1, 0 or 1. */
int gotmpl_sv_compare(const struct gotmpl_sv *v, const struct gotmpl_sv *o);
/* A new *semver.Version of v (strings copied) whose Original() is orig[0..norig). */
struct gotmpl_val *gotmpl_sv_new(struct gotmpl_arena *a, const struct gotmpl_sv *v,
				 const char *orig, size_t norig);

/* fmt's %v of v into sb; nil is "<nil>". Returns 0, a strbuf error, or -ELOOP (v nested deeper
 * than GT_VAL_DEPTH_MAX). */
int gotmpl_fmt_v(struct strbuf *sb, const struct gotmpl_val *v);
/* strconv.FormatFloat(f, fmt, prec, 64) for fmt in "eEfgG" (prec -1: shortest). */
int gotmpl_fmt_float(struct strbuf *sb, double f, char fmt, int prec);
/* strconv.Quote of s[0..n) into sb. */
int gotmpl_quote(struct strbuf *sb, const char *s, size_t n, char q);
/* Decode one UTF-8 rune at s[0..n): returns its length (1 for a bad byte, *r = 0xFFFD). */
int gotmpl_utf8(const char *s, size_t n, uint32_t *r);
int gotmpl_put_utf8(struct strbuf *sb, uint32_t r);
/* strconv.IsPrint, approximated outside Latin-1 (format characters, private use, noncharacters). */
int gotmpl_isprint(uint32_t r);

/* ---- functions (gotmpl_func.c and the files it tables) ---- */

/* What a function sees of the execution. */
struct gotmpl_fctx {
	struct gotmpl_arena *a; /* where results are made */
	char *msg; /* the error, when a function fails with -EINVAL: GOTMPL_ERR_MAX bytes
		      of the execution's (one error is taken at a time) */
};

/*
 * A function: argv[0..argc) already converted to the types its signature
 * asks; *res its result (arena or borrowed from argv). 0, or -EINVAL with
 * c->msg set, -ENOMEM, -ELOOP (budget).
 */
typedef int (*gotmpl_fn)(struct gotmpl_fctx *c, struct gotmpl_val **argv, int argc,
			 struct gotmpl_val **res);

#define GT_F_REFUSED 0x1u  /* refused at parse time (time, randomness, environment, network) */
#define GT_F_AND     0x2u  /* the builtin `and` (arguments evaluated lazily by exec) */
#define GT_F_OR	     0x4u  /* the builtin `or` */
#define GT_F_NOT_NFD 0x10u /* a name people expect NFD to have: "not defined", with why */

struct gotmpl_func {
	const char *name; /* as templates call it */
	gotmpl_fn fn;	  /* NULL for refused ones and and/or */
	/*
	 * Parameter types, one letter each: a any, s string, i int, f float64,
	 * u uint32 (constants only), b bool, l list, m map, V *semver.Version; a '*' before the
	 * last letter makes it variadic (zero or more). NULL: any number of any.
	 */
	const char *sig;
	unsigned flags; /* GT_F_* */
};

/* Go's name of parameter type t ('s' -> "string", 'V' -> "*semver.Version", ...). */
const char *gotmpl_param_typename(char t);
/* Whether nil converts to parameter type t (maps, slices, pointers). */
int gotmpl_param_nilable(char t);
/* Whether non-nil v is assignable to parameter type t. */
int gotmpl_param_ok(const struct gotmpl_val *v, char t);
/* The type letter of f's argument i (0 past its parameters); its fixed count and variadic. */
char gotmpl_func_param(const struct gotmpl_func *f, size_t i, size_t *nfixed, int *variadic);
/* Why a GT_F_NOT_NFD function is refused, or NULL (gotmpl_sprig_misc.c). */
const char *gotmpl_func_why(const struct gotmpl_func *f);
/*
 * The units of work a call of f over argv[0..n) is charged before it runs: a unit per argument,
 * and per byte of a string, element of a list and entry of a map it is given, but for the functions
 * that touch a fixed part of them (index, len, first, ...). What it makes is charged after, by the
 * bytes of values it made (the arena's growth); the deep walks charge their nodes as they go.
 * f NULL: a method (its arguments all charged).
 */
size_t gotmpl_func_charge(const struct gotmpl_func *f, struct gotmpl_val *const *argv, size_t n);
/* The function named name[0..n), or NULL. */
const struct gotmpl_func *gotmpl_func_find(const char *name, size_t n);
/* fmt.Sprintf over argv into sb: 0, -EINVAL (c->msg) or a strbuf error. */
int gotmpl_sprintf(struct gotmpl_fctx *c, struct strbuf *sb, const char *fmt, size_t flen,
		   struct gotmpl_val **argv, int argc);
/* fmt.Sprint of argv (spaces between operands when neither is a string). */
int gotmpl_sprint(struct strbuf *sb, struct gotmpl_val **argv, int argc, int ln);
/* The tables the Sprig files export, NULL-name terminated. */
extern const struct gotmpl_func gotmpl_sprig_str_funcs[];
extern const struct gotmpl_func gotmpl_sprig_list_funcs[];
extern const struct gotmpl_func gotmpl_sprig_misc_funcs[];
extern const struct gotmpl_func gotmpl_sprig_num_funcs[];
extern const struct gotmpl_func gotmpl_sprig_regex_funcs[];
extern const struct gotmpl_func gotmpl_sprig_case_funcs[];
extern const struct gotmpl_func gotmpl_sprig_url_funcs[];
extern const struct gotmpl_func gotmpl_sprig_hash_funcs[];
extern const struct gotmpl_func gotmpl_sprig_semver_funcs[];

/* Shorthands of the function files: a function's definition, its result, its string arguments. */
#define GT_FN(name)                                                                                \
	static int name(struct gotmpl_fctx *c, struct gotmpl_val **av, int ac,                     \
			struct gotmpl_val **res)
#define GT_RES(expr)                                                                               \
	do {                                                                                       \
		*res = (expr);                                                                     \
		return *res ? 0 : -ENOMEM;                                                         \
	} while (0)
#define GT_S(i)	 (av[i]->u.s.p)
#define GT_SN(i) (av[i]->u.s.n)

/* Helpers the function files share (gotmpl_fmt.c). */
/* unicode.IsSpace; IsUpper, IsLower, ToUpper, ToLower for ASCII and Latin-1 (other runes: no case).
 */
int gotmpl_uspace(uint32_t r);
int gotmpl_isupper(uint32_t r);
int gotmpl_islower(uint32_t r);
uint32_t gotmpl_toupper(uint32_t r);
uint32_t gotmpl_tolower(uint32_t r);
/* unicode.IsTitle: the titlecase letters (Lt). */
int gotmpl_istitle(uint32_t r);
/* unicode.ToTitle: ToUpper but for the digraphs (U+01C5 ...) and Georgian. */
uint32_t gotmpl_totitle(uint32_t r);
/* Finish a function that built sb: its contents as *res (sb freed), or rc when it failed. */
int gotmpl_done(struct gotmpl_fctx *c, struct strbuf *sb, int rc, struct gotmpl_val **res);
/*
 * The end of a function that printed into sb (its cap gotmpl_room(c->a, per_byte)) with result
 * rc: sb's bytes charged per_byte units each (formatting is slower than copying), its contents as
 * *res. A cap the budget set that was hit is the budget spent (-ELOOP), not the string limit.
 */
int gotmpl_printed(struct gotmpl_fctx *c, struct strbuf *sb, int rc, unsigned per_byte,
		   struct gotmpl_val **res);
#define GT_PRINT_UNITS	4  /* %v, JSON, a regexp's expansion: about 20 ns a byte (measured) */
#define GT_PRINTF_UNITS 32 /* printf: up to 370 ns a byte (%x of a string, measured) */
int gotmpl_fail(struct gotmpl_fctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* JSON text as Go's json.Unmarshal into interface{} (gotmpl_fromjson.c, over yajl): 0, -EINVAL
 * (c->msg), -ENOMEM or -ELOOP. */
int gotmpl_json_decode(struct gotmpl_fctx *c, const char *s, size_t n, struct gotmpl_val **res);
/* Sprig's strval / cast.ToString: a string as is, else fmt's %v. NULL on budget. */
struct gotmpl_val *gotmpl_tostring(struct gotmpl_fctx *c, const struct gotmpl_val *v);
/* Take sb's contents as an arena string (sb freed). NULL when out of budget. */
struct gotmpl_val *gotmpl_take(struct gotmpl_fctx *c, struct strbuf *sb);
/* cast.ToInt64 / ToFloat64 as Sprig calls them (0 for what does not convert). */
int64_t gotmpl_toint64(const struct gotmpl_val *v);
double gotmpl_tofloat64(const struct gotmpl_val *v);
#define GT_STR_MAX (16u << 20) /* longest string a function builds */
/* Memory a parsed set may use: about 200 bytes per source byte at the densest ("{{.}}{{.}}..."). */
#define GT_PARSE_MEM_MAX ((size_t)512 * GOTMPL_SRC_MAX)
/* The parse-memory budget in force: GT_PARSE_MEM_MAX; tests lower it to reach it with a small
 * template (test_rules_cache), as no 64 KiB template reaches 32 MiB today. */
extern size_t gotmpl_parse_mem_max;

/* ---- lexer (gotmpl_lex.c) ---- */

enum gotmpl_tok {
	T_EOF,
	T_TEXT,
	T_LDELIM,
	T_RDELIM,
	T_SPACE,
	T_IDENT,
	T_FIELD,
	T_VAR,
	T_STRING,
	T_RAWSTRING,
	T_CHAR,
	T_NUMBER,
	T_BOOL,
	T_NIL,
	T_DOT,
	T_PIPE,
	T_LPAREN,
	T_RPAREN,
	T_ASSIGN,
	T_DECLARE,
	T_COMMA,
	T_OTHER, /* another printable ASCII character (Go's itemChar) */
	T_BLOCK,
	T_BREAK,
	T_CONTINUE,
	T_DEFINE,
	T_ELSE,
	T_END,
	T_IF,
	T_RANGE,
	T_TEMPLATE,
	T_WITH,
};

struct gotmpl_token {
	enum gotmpl_tok type; /* T_* */
	size_t pos;	      /* byte offset in the source */
	int line;	      /* 1-based line of pos */
	const char *s;	      /* the token's bytes (in the source) */
	size_t n;	      /* their length */
};

struct gotmpl_lexed {
	struct gotmpl_token *t; /* tokens, ending with T_EOF (or cut at the error) */
	size_t n, cap;
	char err[200]; /* the lexer's error, "" when none */
	int errline;   /* its line */
	int errstart;  /* for an unclosed action spanning lines: the line it started on, else 0 */
};

/* Lex src[0..len) into out (malloc'd, freed by gotmpl_lex_free). 0, -EINVAL (out->err) or -ENOMEM.
 */
int gotmpl_lex(const char *src, size_t len, struct gotmpl_lexed *out);
void gotmpl_lex_free(struct gotmpl_lexed *l);
struct gotmpl_node;
/* strconv.Unquote of a "..." or '...' token into sb: 0, or -1 on bad syntax. */
int gotmpl_unquote(const char *s, size_t n, struct strbuf *sb);
/* A number or character token's value into n (Go's parse.newNumber): 0, or -1 with msg. */
int gotmpl_number(const struct gotmpl_token *t, struct gotmpl_node *n, char *msg, size_t msglen);

/* ---- parse tree (gotmpl_parse.c) ---- */

enum gotmpl_ntype {
	N_LIST,
	N_TEXT,
	N_ACTION,
	N_IF,
	N_RANGE,
	N_WITH,
	N_TEMPLATE,
	N_BREAK,
	N_CONTINUE,
	N_PIPE,
	N_CMD,
	N_FIELD,
	N_VAR,
	N_CHAIN,
	N_DOT,
	N_NIL,
	N_BOOL,
	N_NUMBER,
	N_STRING,
	N_IDENT,
};

struct gotmpl_node {
	enum gotmpl_ntype type;
	size_t pos;		   /* byte offset of the node's first token */
	int line;		   /* its line */
	struct gotmpl_node **kids; /* LIST: items; PIPE: commands; CMD: arguments */
	size_t nkids;		   /* how many */
	size_t capkids;		   /* room in kids */
	struct gotmpl_node *pipe;  /* ACTION, IF, RANGE, WITH, TEMPLATE: the pipeline */
	struct gotmpl_node *list;  /* IF, RANGE, WITH: the body */
	struct gotmpl_node *elist; /* IF, RANGE, WITH: the else part (NULL when none) */
	struct gotmpl_node *sub;   /* CHAIN: the node fields are taken of */
	char **ids;		   /* FIELD: names; VAR: "$x" then names; CHAIN: names */
	size_t nids;		   /* how many */
	char **decl;		   /* PIPE: declared or assigned variables ("$x") */
	size_t ndecl;		   /* how many (0-2) */
	int assign;		   /* PIPE: `=` rather than `:=` */
	const char *text;     /* TEXT: bytes; STRING: the value; TEMPLATE: the name; NUMBER: text */
	size_t tlen;	      /* its length */
	const char *raw;      /* STRING, NUMBER, IDENT: the source text (for messages) */
	size_t rawlen;	      /* its length */
	int bval;	      /* BOOL */
	int is_int, is_float; /* NUMBER: which Go constant kinds it fits */
	int is_uint;	      /* NUMBER: fits uint64 (parse.NumberNode's IsUint) */
	int64_t ival;	      /* NUMBER as int */
	uint64_t uval;	      /* NUMBER as uint64 */
	double fval;	      /* NUMBER as float */
	const struct gotmpl_func *fn; /* IDENT: the function */
};

struct gotmpl_tmpl {
	const char *name; /* "" for NFD's main template */
	struct gotmpl_node *root;
};

struct gotmpl {
	struct gotmpl_arena a; /* owns every node and string below */
	const char *src;       /* a copy of the source (messages count lines in it) */
	size_t srclen;
	struct gotmpl_tmpl *tm; /* tm[0] the main template, then the define'd ones */
	size_t ntm;
	size_t captm; /* room in tm (doubled: a define each grew it by one, quadratic) */
};

/* ---- the parser's state and the pipeline stage (gotmpl_pipe.c), used by gotmpl_parse.c ---- */

struct gotmpl_parser {
	struct gotmpl *t;
	struct gotmpl_lexed *lx;
	size_t i;    /* next token */
	char **vars; /* variables in scope, "$" first */
	size_t nvars, capvars;
	int depth;	 /* nesting of actions and parentheses */
	int in_range;	 /* inside a range body */
	int rc;		 /* first error (0 while none) */
	const char *top; /* the set's name: parse errors name it, as Go's ParseName does */
	struct gotmpl_err *err;
};

struct gotmpl_token *gotmpl_p_tok(struct gotmpl_parser *p, size_t i);
struct gotmpl_token *gotmpl_p_next(struct gotmpl_parser *p);
struct gotmpl_token *gotmpl_p_peek(struct gotmpl_parser *p);
struct gotmpl_token *gotmpl_p_next_ns(struct gotmpl_parser *p);
struct gotmpl_token *gotmpl_p_peek_ns(struct gotmpl_parser *p);
void gotmpl_p_backup(struct gotmpl_parser *p);
/* Fail with "template: NAME:LINE: msg" (the first error wins). */
void gotmpl_p_perr(struct gotmpl_parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void gotmpl_p_lex_fail(struct gotmpl_parser *p);
void gotmpl_p_unexpected(struct gotmpl_parser *p, const struct gotmpl_token *t, const char *ctx);
struct gotmpl_node *gotmpl_p_node(struct gotmpl_parser *p, enum gotmpl_ntype type,
				  const struct gotmpl_token *t);
int gotmpl_p_add_kid(struct gotmpl_parser *p, struct gotmpl_node *n, struct gotmpl_node *k);
char *gotmpl_p_sdup(struct gotmpl_parser *p, const char *s, size_t n);
/* A string or raw-string token's value into *text (the arena) and *len: 0, or -1 (p->rc). */
int gotmpl_p_string(struct gotmpl_parser *p, const struct gotmpl_token *t, const char **text,
		    size_t *len);
void gotmpl_p_push_var(struct gotmpl_parser *p, const char *name);
/* A pipeline up to the token end (consumed); NULL on error (p->rc). */
struct gotmpl_node *gotmpl_p_pipeline(struct gotmpl_parser *p, const char *ctx,
				      enum gotmpl_tok end);

/*
 * The value of a constant node (bool, string, number) in a: 0 and *out (NULL for any other node),
 * -ERANGE for an integer constant no int holds (Go's "overflows int"), -ENOMEM.
 */
int gotmpl_node_constant(struct gotmpl_arena *a, const struct gotmpl_node *n,
			 struct gotmpl_val **out);
/* Go's String() of a node (for "executing ... at <...>"). */
int gotmpl_node_string(struct strbuf *sb, const struct gotmpl_node *n);
/* *out: the template named name[0..len) with a tree (the last so defined), or NULL. It reads
 * every template's name, and charges a t->ntm units: 0, or -ELOOP when that passes the budget. */
int gotmpl_tmpl_find(const struct gotmpl *t, struct gotmpl_arena *a, const char *name, size_t len,
		     const struct gotmpl_tmpl **out);

#endif
