/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kube_stream: LIST bodies and WATCH streams parsed with yajl as bytes arrive; items never held in
 * bulk. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "kube/kube.h"

#define MAX_DEPTH 96
#define KEY_MAX	  1024
/* A ':' or ',' with more spaces after it than this leads no token (kube_stream_feed). */
#define LEAD_MAX 64
/*
 * The most held in pend: a lead, then a string cut at STR_CUT with a \uXXXX escape or a UTF-8
 * sequence's rest after it and its quotes, or a number of KUBE_VALUE_MAX and the byte after it.
 */
#define PEND_MAX (LEAD_MAX + KUBE_VALUE_MAX + 2)
/* pend's memory is given back after a token longer than this */
#define PEND_KEEP (64 * 1024)

/*
 * Nesting is tracked from the document root. In a LIST the item root is at
 * level 2 (root map, "items" array); in a WATCH at level 1 (root map, key
 * "object"). lvl counts open containers.
 */
struct kube_stream {
	enum kube_stream_kind kind;
	enum kube_item_mode mode;
	const struct kube_stream_ops *ops;
	void *ctx;
	yajl_handle y;
	int lvl;			  /* open containers */
	int item_lvl;			  /* lvl of the current item's root map, 0 if none */
	char is_array[MAX_DEPTH + 1];	  /* per open container */
	struct strbuf key[MAX_DEPTH + 1]; /* last key per open map (levels 1..) */
	struct strbuf type;		  /* watch event type */
	struct strbuf cont;		  /* list metadata.continue */
	struct strbuf rv;		  /* newest resourceVersion */
	json_t *stack[MAX_DEPTH + 1];	  /* JSON mode: containers being built, item root at 0 */
	int jdepth;			  /* JSON mode: entries used in stack */
	json_t *item;			  /* JSON mode: finished item waiting for its event end */
	int item_done;			  /* FLAT mode: an item ended, waiting for its event end */
	int cb_err;			  /* a callback's negative return */
	size_t item_bytes;		  /* JSON mode: bytes fed since the current item started */
	struct log_err *err;
	/* an item over a limit (ops->oversize): skipped, named by its metadata */
	int over;	     /* the current item is over a limit: not built, not reported */
	char over_what[64];  /* what was over it */
	struct strbuf iname; /* the current item's metadata.name */
	struct strbuf ins;   /* its metadata.namespace */
	/* the bytes before yajl (it buffers an unfinished string or number whole) */
	unsigned char in_str; /* inside a string (key or value) */
	unsigned char esc; /* 1: the byte after a backslash comes; 2..5: \u hex digits left + 1 */
	unsigned char dropping; /* the rest of an over-long string is not fed to yajl */
	size_t slen;		/* bytes of the current string so far */
	size_t run;		/* bytes of the current number or literal so far */
	size_t lead;		/* bytes of a ':' or ',' and the spaces after it so far */
	struct strbuf pend;	/* what was open at the end of the last feed; yajl has none of it */
};

static int in_item(const struct kube_stream *st)
{
	return st->item_lvl && st->lvl >= st->item_lvl;
}

/* Depth of a value inside the item (1 = a key of the item root). */
static int item_depth(const struct kube_stream *st)
{
	return st->lvl - st->item_lvl + 1;
}

/* JSON mode: the item is built and its values attached. */
static int building(const struct kube_stream *st)
{
	return st->mode == KUBE_ITEM_JSON && in_item(st) && !st->over;
}

/* An item over a limit can be skipped: ops->oversize is set and yajl is inside an item. */
static int skippable(const struct kube_stream *st)
{
	return st->ops->oversize && in_item(st);
}

/*
 * The current item passed a limit (what): with ops->oversize, it is skipped (what is built of it
 * freed) and 1 returned; without, 0 with err set, as before.
 */
static int mark_over(struct kube_stream *st, const char *what)
{
	if (!skippable(st)) {
		log_err_set(st->err, KUBE_EJSON, "%s from the API server exceeds %d bytes", what,
			    strcmp(what, "a JSON value") == 0 ? KUBE_VALUE_MAX : KUBE_ITEM_MAX);
		return 0;
	}
	if (!st->over && strcmp(what, "a JSON value") == 0)
		snprintf(st->over_what, sizeof(st->over_what), "a value over %d bytes",
			 KUBE_VALUE_MAX);
	else if (!st->over && strcmp(what, "an object") == 0)
		snprintf(st->over_what, sizeof(st->over_what), "over %d bytes in all",
			 KUBE_ITEM_MAX);
	else if (!st->over)
		snprintf(st->over_what, sizeof(st->over_what), "a key over %d bytes", KEY_MAX);
	st->over = 1;
	while (st->jdepth > 0)
		json_decref(st->stack[--st->jdepth]);
	return 1;
}

static int emit_item(struct kube_stream *st)
{
	const char *type = st->kind == KUBE_STREAM_LIST ? "LIST" : st->type.buf;
	int r;

	if (st->over)
		r = st->ops->oversize(st->ctx, type, st->ins.len ? st->ins.buf : "",
				      st->iname.len ? st->iname.buf : "", st->over_what);
	else
		r = st->ops->item ? st->ops->item(st->ctx, type, st->item) : 0;
	st->over = 0;
	if (st->item) {
		json_decref(st->item);
		st->item = NULL;
	}
	st->item_done = 0;
	if (r < 0) {
		st->cb_err = r;
		return 0;
	}
	return 1;
}

/* JSON mode: attach v to the container being built (steals v). */
static int json_attach(struct kube_stream *st, json_t *v)
{
	json_t *parent;

	if (!v)
		return 0;
	if (st->jdepth == 0) {
		json_decref(v);
		return 1;
	}
	parent = st->stack[st->jdepth - 1];
	if (json_is_array(parent))
		json_array_append_new(parent, v);
	else
		json_object_setn_new_nocheck(parent, st->key[st->lvl].buf, st->key[st->lvl].len, v);
	return 1;
}

static void note_rv(struct kube_stream *st, const char *val, size_t len)
{
	sb_reset(&st->rv);
	sb_addn(&st->rv, val, len);
}

/* A scalar value (string, number, bool, null); str is NULL for null/bool. */
static int on_scalar(struct kube_stream *st, const char *val, size_t len, json_t *jv)
{
	int d;

	if (!in_item(st)) {
		json_decref(jv);
		if (!val || st->is_array[st->lvl])
			return 1;
		if (st->kind == KUBE_STREAM_WATCH && st->lvl == 1 &&
		    strcmp(st->key[1].buf, "type") == 0) {
			sb_reset(&st->type);
			sb_addn(&st->type, val, len);
		} else if (st->kind == KUBE_STREAM_LIST && st->lvl == 2 &&
			   strcmp(st->key[1].buf, "metadata") == 0) {
			if (strcmp(st->key[2].buf, "continue") == 0) {
				sb_reset(&st->cont);
				sb_addn(&st->cont, val, len);
			} else if (strcmp(st->key[2].buf, "resourceVersion") == 0) {
				note_rv(st, val, len);
			}
		}
		return 1;
	}
	d = item_depth(st);
	if (val && !st->is_array[st->lvl] && d == 2 &&
	    strcmp(st->key[st->item_lvl].buf, "metadata") == 0) {
		const char *k = st->key[st->lvl].buf;

		if (strcmp(k, "resourceVersion") == 0 && st->kind == KUBE_STREAM_WATCH)
			note_rv(st, val, len);
		else if (strcmp(k, "name") == 0 || strcmp(k, "namespace") == 0) {
			struct strbuf *to = k[4] ? &st->ins : &st->iname;

			sb_reset(to);
			sb_addn(to, val, len < to->max ? len : to->max); /* what fits names it */
		}
	}
	if (st->mode == KUBE_ITEM_JSON) {
		if (st->over) {
			json_decref(jv);
			return 1;
		}
		return json_attach(st, jv);
	}
	json_decref(jv);
	if (val && d <= KUBE_FLAT_DEPTH && st->ops->scalar && !st->over) {
		const char *keys[KUBE_FLAT_DEPTH];
		int i, r;

		for (i = 0; i < d; i++) {
			if (st->is_array[st->item_lvl + i])
				return 1;
			keys[i] = st->key[st->item_lvl + i].buf;
		}
		r = st->ops->scalar(st->ctx, d, keys, val, len);
		if (r < 0) {
			st->cb_err = r;
			return 0;
		}
	}
	return 1;
}

static int cb_null(void *c)
{
	struct kube_stream *st = c;

	return on_scalar(st, NULL, 0, building(st) ? json_null() : NULL);
}

static int cb_bool(void *c, int b)
{
	struct kube_stream *st = c;

	return on_scalar(st, NULL, 0, building(st) ? json_boolean(b) : NULL);
}

static int cb_number(void *c, const char *s, size_t len)
{
	struct kube_stream *st = c;
	json_t *jv = NULL;

	if (building(st)) {
		char buf[64];
		char *end;

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, s, len);
		buf[len] = '\0';
		if (strpbrk(buf, ".eE"))
			jv = json_real(strtod(buf, &end));
		else
			jv = json_integer(strtoll(buf, &end, 10));
	}
	return on_scalar(st, s, len, jv);
}

static int cb_string(void *c, const unsigned char *s, size_t len)
{
	struct kube_stream *st = c;
	json_t *jv = NULL;

	if (building(st))
		jv = json_stringn_nocheck((const char *)s, len);
	return on_scalar(st, (const char *)s, len, jv);
}

static int open_container(struct kube_stream *st, int array)
{
	int starts_item = 0;

	if (st->lvl >= MAX_DEPTH) {
		log_err_set(st->err, KUBE_EJSON, "JSON nested deeper than %d levels", MAX_DEPTH);
		return 0;
	}
	if (!st->item_lvl && !array && !st->is_array[st->lvl]) {
		if (st->kind == KUBE_STREAM_WATCH && st->lvl == 1 &&
		    strcmp(st->key[1].buf, "object") == 0)
			starts_item = 1;
	}
	if (!st->item_lvl && !array && st->kind == KUBE_STREAM_LIST && st->lvl == 2 &&
	    st->is_array[2] && strcmp(st->key[1].buf, "items") == 0)
		starts_item = 1;
	if (starts_item) {
		st->over = 0;
		sb_reset(&st->iname);
		sb_reset(&st->ins);
	}
	if (st->mode == KUBE_ITEM_JSON && (starts_item || building(st))) {
		json_t *v = array ? json_array() : json_object();

		if (!v) {
			st->cb_err = -ENOMEM;
			return 0;
		}
		if (!starts_item)
			json_attach(st, json_incref(v));
		st->stack[st->jdepth++] = v;
	}
	st->lvl++;
	st->is_array[st->lvl] = (char)array;
	sb_reset(&st->key[st->lvl]);
	if (starts_item) {
		st->item_lvl = st->lvl;
		st->item_bytes = 0;
		if (st->mode == KUBE_ITEM_FLAT && st->ops->begin) {
			int r = st->ops->begin(st->ctx);

			if (r < 0) {
				st->cb_err = r;
				return 0;
			}
		}
	}
	return 1;
}

static int close_container(struct kube_stream *st)
{
	int ends_item = st->item_lvl && st->lvl == st->item_lvl;

	if (building(st)) {
		json_t *v = st->stack[--st->jdepth];

		if (ends_item) {
			json_decref(st->item);
			st->item = v;
		} else {
			json_decref(v);
		}
	}
	st->lvl--;
	if (ends_item) {
		st->item_lvl = 0;
		st->item_done = 1;
		if (st->kind == KUBE_STREAM_LIST)
			return emit_item(st);
	}
	/* A watch event ends with its root map: report the item with its type. */
	if (st->kind == KUBE_STREAM_WATCH && st->lvl == 0) {
		int ok = st->item_done ? emit_item(st) : 1;

		sb_reset(&st->type);
		return ok;
	}
	return 1;
}

static int cb_start_map(void *c)
{
	return open_container(c, 0);
}

static int cb_end_map(void *c)
{
	return close_container(c);
}

static int cb_start_array(void *c)
{
	return open_container(c, 1);
}

static int cb_end_array(void *c)
{
	return close_container(c);
}

static int cb_map_key(void *c, const unsigned char *k, size_t len)
{
	struct kube_stream *st = c;
	struct strbuf *key = &st->key[st->lvl];

	sb_reset(key);
	if (sb_addn(key, k, len) < 0) {
		if (skippable(st)) { /* skipped; the key's start stands in */
			sb_addn(key, k, key->max);
			return mark_over(st, "a key");
		}
		log_err_set(st->err, KUBE_EJSON, "JSON key longer than %d bytes", KEY_MAX);
		return 0;
	}
	return 1;
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_bool,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end_map,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end_array,
};

struct kube_stream *kube_stream_new(enum kube_stream_kind kind, enum kube_item_mode mode,
				    const struct kube_stream_ops *ops, void *ctx)
{
	struct kube_stream *st = calloc(1, sizeof(*st));
	int i;

	if (!st)
		return NULL;
	st->kind = kind;
	st->mode = mode;
	st->ops = ops;
	st->ctx = ctx;
	for (i = 0; i <= MAX_DEPTH; i++)
		sb_init(&st->key[i], KEY_MAX);
	sb_init(&st->type, 64);
	sb_init(&st->cont, 64 * 1024);
	sb_init(&st->rv, 256);
	sb_init(&st->iname, 256);
	sb_init(&st->ins, 256);
	sb_init(&st->pend, PEND_MAX);
	st->y = yajl_alloc(&callbacks, NULL, st);
	if (!st->y) {
		free(st);
		return NULL;
	}
	if (kind == KUBE_STREAM_WATCH)
		yajl_config(st->y, yajl_allow_multiple_values, 1);
	return st;
}

static int parse_error(struct kube_stream *st, const unsigned char *buf, size_t len)
{
	unsigned char *msg;

	if (st->cb_err)
		return st->cb_err;
	if (st->err && st->err->code)
		return st->err->code;
	msg = yajl_get_error(st->y, 0, buf, len);
	log_err_set(st->err, KUBE_EJSON, "bad JSON from the API server: %s",
		    msg ? (const char *)msg : "parse error");
	if (msg) {
		/* yajl's message ends with a newline */
		size_t n = strlen(st->err ? st->err->msg : "");

		if (n && st->err->msg[n - 1] == '\n')
			st->err->msg[n - 1] = '\0';
		yajl_free_error(st->y, msg);
	}
	return KUBE_EJSON;
}

/* A string is cut once it holds this much (then at most 4 bytes of a UTF-8 sequence more). */
#define STR_CUT (KUBE_VALUE_MAX - 8)

/* JSON mode: n more bytes of the current item have come; an item is built whole, so cap it too
 * (counted per feed, so roughly). Returns 0, or KUBE_EJSON with st->err set. */
static int count_item(struct kube_stream *st, size_t n)
{
	if (st->mode != KUBE_ITEM_JSON || !st->item_lvl || st->over)
		return 0;
	st->item_bytes += n;
	if (st->item_bytes > KUBE_ITEM_MAX && !mark_over(st, "an object"))
		return KUBE_EJSON;
	return 0;
}

/* Give yajl buf[0..len), then count n bytes of it to the item. Returns 0, or the error code. */
static int feed_yajl(struct kube_stream *st, const unsigned char *buf, size_t len, size_t n)
{
	if (!len)
		return 0;
	if (yajl_parse(st->y, buf, len) != yajl_status_ok)
		return parse_error(st, buf, len);
	return count_item(st, n);
}

/* Give yajl the held token (counted to the item as it came) and empty pend. */
static int flush(struct kube_stream *st)
{
	int r = feed_yajl(st, (const unsigned char *)st->pend.buf, st->pend.len, 0);

	if (st->pend.cap > PEND_KEEP)
		sb_free(&st->pend);
	else
		sb_reset(&st->pend);
	return r;
}

/* Add buf[0..n) to the held token. Returns 0, or the error code with st->err set. */
static int pend_add(struct kube_stream *st, const unsigned char *buf, size_t n)
{
	int r = sb_addn(&st->pend, buf, n);

	/*
	 * Only a string past the cut on UTF-8 continuation bytes (never cut there: invalid UTF-8)
	 * gets here: yajl gets what is held and these bytes too, for its error, as it did when fed
	 * all along; whichever feed the bytes came in, not ours.
	 */
	if (r == -E2BIG) {
		r = flush(st);
		if (!r)
			r = feed_yajl(st, buf, n, 0);
		return r ? r
			 : log_err_set(st->err, KUBE_EJSON,
				       "a JSON value from the API server exceeds %d bytes",
				       KUBE_VALUE_MAX);
	}
	if (r < 0)
		return log_err_set(st->err, r, "out of memory");
	return 0;
}

/*
 * What is open now (a token, or its lead) began at p[tok], or in an earlier feed if pend holds
 * its start: yajl gets what is before it in p. *from: the first byte of p not given nor held.
 */
static int give_before(struct kube_stream *st, const unsigned char *p, size_t *from, size_t tok)
{
	int r;

	if (st->pend.len)
		return 0;
	r = feed_yajl(st, p + *from, tok - *from, tok - *from);
	*from = tok;
	return r;
}

/* Hold p[*from..end), more of what is open, in pend (after give_before). */
static int hold(struct kube_stream *st, const unsigned char *p, size_t *from, size_t end)
{
	size_t n = end - *from;
	int r = pend_add(st, p + *from, n);

	*from = end;
	return r ? r : count_item(st, n);
}

/* What is held (if anything) ends before p[end]: yajl gets it whole, in one call. */
static int release(struct kube_stream *st, const unsigned char *p, size_t *from, size_t end)
{
	size_t n = end - *from;
	int r;

	if (!st->pend.len)
		return 0;
	r = pend_add(st, p + *from, n);
	*from = end;
	if (!r)
		r = flush(st);
	return r ? r : count_item(st, n);
}

/* Give yajl all before p[end]: what pend holds, then p[from..end). Before an error of ours, so
 * that yajl's own error in those bytes, if any, comes first. */
static int give_all(struct kube_stream *st, const unsigned char *p, size_t from, size_t end)
{
	int r = flush(st);

	return r ? r : feed_yajl(st, p + from, end - from, end - from);
}

/*
 * yajl 2.1 reads an unfinished token again from its start on every yajl_parse call: in
 * src/yajl_lex.c, yajl_lex_lex (at its "lexed:" label) appends what it has of a token that the
 * end of the text cut to lexer->buf (bufInUse = 1, bufOff = 0), and the next call's readChar and
 * yajl_lex_string read lexer->buf from bufOff 0 before the new text. A 4.5 MiB string fed in
 * 16 KiB reads was lexed some 290 times over. So a string, number or literal still open at the
 * end of a feed is held in pend (bounded by the cuts below), and yajl gets it whole with the byte
 * that ends it, in one call: each byte is lexed once.
 *
 * The same label leaves bufInUse set after every call (the end of the text lexes as an empty
 * token), so the first token of a call is copied to lexer->buf. A held token is held from the
 * ':' or ',' before it (st->lead), whose one byte is copied then, not the value; yajl calls
 * nothing for either, so what it reports is as before. Not a ':' or ',' right after a number:
 * yajl reports a number only once it has the byte after it (src/yajl_lex.c yajl_lex_number
 * returns yajl_tok_eof at the end of the text), so that byte goes to yajl before a long value
 * after it is cut and its item marked over, else the number would not be reported.
 *
 * Track strings byte by byte: yajl holds an unfinished string whole, so one inside an item is
 * cut at STR_CUT (before a backslash escape or a UTF-8 sequence, so what yajl gets is valid)
 * and the rest of it not fed, the item marked over; outside an item, or without
 * ops->oversize, it is an error as before. A number or literal longer than KUBE_VALUE_MAX is
 * one too (no object has one).
 */
int kube_stream_feed(struct kube_stream *st, const void *buf, size_t len, struct log_err *err)
{
	const unsigned char *p = buf;
	size_t i, from = 0, tok = 0; /* tok: where what is open now began, if in this feed */
	int r;

	st->err = err;
	log_err_clear(err);
	for (i = 0; i < len; i++) {
		unsigned char ch = p[i];

		if (!st->in_str) {
			int space = ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
			int sep = space || (ch && strchr("{}[],:", ch));
			int ended = st->run && (sep || ch == '"');

			if (ended) {
				/* a number or literal ends: a held one goes with this byte, unless
				 * a string's quote */
				st->run = 0;
				if (st->pend.len) {
					r = release(st, p, &from, ch == '"' ? i : i + 1);
					if (r)
						return r;
					if (ch != '"')
						continue;
				}
			}
			if (st->lead && space && st->lead < LEAD_MAX) {
				st->lead++;
				continue;
			}
			if (st->lead && sep) { /* no token after it: a held lead goes */
				st->lead = 0;
				r = release(st, p, &from, i);
				if (r)
					return r;
			}
			if ((ch == ':' || ch == ',') && !ended) {
				st->lead = 1;
				tok = i;
			} else if (ch == '"') {
				st->in_str = 1;
				st->slen = 0;
				tok = st->lead ? tok : i;
				st->lead = 0;
			} else if (!sep && st->run++ == 0) {
				tok = st->lead ? tok : i;
				st->lead = 0;
			}
			if (st->run > KUBE_VALUE_MAX) {
				r = give_all(st, p, from, i);
				return r ? r
					 : log_err_set(err, KUBE_EJSON,
						       "a JSON value from the API server "
						       "exceeds %d bytes",
						       KUBE_VALUE_MAX);
			}
			continue;
		}
		if (st->esc) {
			st->esc = st->esc == 1 ? (ch == 'u' ? 5 : 0) : (unsigned char)(st->esc - 1);
			if (st->esc == 1)
				st->esc = 0; /* the last hex digit */
			st->slen++;
			if (st->dropping)
				from = i + 1;
			continue;
		}
		if (ch == '"') {
			st->in_str = 0;
			if (st->dropping) {
				st->dropping = 0;
				from = i; /* the closing quote ends what yajl gets */
			}
			r = release(st, p, &from, i + 1);
			if (r)
				return r;
			continue;
		}
		if (!st->dropping && st->slen >= STR_CUT && (ch < 0x80 || ch >= 0xC0)) {
			/* yajl sees what is before it first. Skipped: the string so far waits in
			 * pend for its closing quote. Else the error, after yajl's own if it has
			 * one. */
			r = give_before(st, p, &from, tok);
			if (!r && skippable(st))
				r = hold(st, p, &from, i);
			else if (!r)
				r = give_all(st, p, from, i);
			if (r)
				return r;
			if (!mark_over(st, "a JSON value"))
				return KUBE_EJSON;
			st->dropping = 1;
		}
		if (ch == '\\')
			st->esc = 1;
		st->slen++;
		if (st->dropping)
			from = i + 1;
	}
	if (st->in_str || st->run || st->lead) {
		r = give_before(st, p, &from, tok);
		return r ? r : hold(st, p, &from, len);
	}
	return feed_yajl(st, p + from, len - from, len - from);
}

int kube_stream_finish(struct kube_stream *st, struct log_err *err)
{
	yajl_status s;
	int r;

	st->err = err;
	log_err_clear(err);
	r = flush(st);
	if (r)
		return r;
	s = yajl_complete_parse(st->y);
	if (s != yajl_status_ok)
		return parse_error(st, NULL, 0);
	if (st->lvl != 0)
		return log_err_set(err, KUBE_EJSON, "truncated JSON from the API server");
	return 0;
}

const char *kube_stream_continue(const struct kube_stream *st)
{
	return st->cont.buf;
}

const char *kube_stream_rv(const struct kube_stream *st)
{
	return st->rv.buf;
}

void kube_stream_free(struct kube_stream *st)
{
	int i;

	if (!st)
		return;
	while (st->jdepth > 0)
		json_decref(st->stack[--st->jdepth]);
	json_decref(st->item);
	for (i = 0; i <= MAX_DEPTH; i++)
		sb_free(&st->key[i]);
	sb_free(&st->type);
	sb_free(&st->cont);
	sb_free(&st->rv);
	sb_free(&st->iname);
	sb_free(&st->ins);
	sb_free(&st->pend);
	yajl_free(st->y);
	free(st);
}
