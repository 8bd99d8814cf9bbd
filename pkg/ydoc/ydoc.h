/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ydoc: the one libyaml walker: bounded loading, mappings, scalars, "file:line:col: what" errors.
 */
#ifndef NP_YDOC_H
#define NP_YDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "log/log.h"

/*
 * Every YAML file we read (NodeFeatureRule files, kubeconfig, the mirror's
 * config) goes through here. Loading is bounded before libyaml builds a
 * document: the input's events are first scanned once, and nesting deeper
 * than YDOC_MAX_DEPTH, more than YDOC_MAX_NODES nodes or YDOC_MAX_TEXT bytes
 * of scalar text, more than YDOC_MAX_ANCHORS anchors in a document or
 * YDOC_MAX_ALIASES aliases, or an alias inside the node it names, refuse the
 * stream (file:line:col) before any cost that grows with them. Nodes and text
 * are counted as if every alias were expanded (an alias counts as all the
 * nodes and text under its anchor): libyaml keeps an alias as a reference,
 * but a reader that builds something per node it walks (the rules loader)
 * pays for each expansion, so a billion-laughs document is refused here.
 * Walking is bounded too: ydoc_visit spends a per-document budget. Nodes are
 * libyaml's own (yaml_node_t), valid while their document is. (Named ydoc,
 * not yaml: libyaml owns the yaml_ prefix.)
 */

#define YDOC_MAX_DEPTH	 64	    /* nested mappings and sequences */
#define YDOC_MAX_NODES	 1000000    /* nodes in one stream, aliases expanded */
#define YDOC_MAX_TEXT	 (64 << 20) /* scalar bytes in one stream, aliases expanded */
#define YDOC_MAX_ANCHORS 10000	    /* anchors in one document */
#define YDOC_MAX_ALIASES 10000	    /* aliases in one stream */
#define YDOC_BUDGET	 10000000   /* ydoc_visit calls per document */

/* One loaded document. */
struct ydoc {
	yaml_document_t doc; /* libyaml's document */
	const char *file;    /* name in messages; borrowed from the stream */
	struct log_err *err; /* where ydoc_fail writes; borrowed */
	long budget;	     /* ydoc_visit calls left */
	bool borrowed;	     /* doc is someone else's (ydoc_borrow): never freed */
	bool told;	     /* ydoc_too_complex has set err */
};

/* A stream of documents ("---" separated) being read from a buffer. */
struct ydoc_stream {
	yaml_parser_t parser;
	const char *file;    /* borrowed */
	struct log_err *err; /* borrowed */
	bool done;	     /* the end was reached */
};

/*
 * Open buf[0..len) (borrowed until ydoc_stream_close) named file in messages.
 * Scans it first: bad YAML, or nesting, nodes, text, anchors or aliases
 * over the limits (nodes and text counted with aliases expanded), give
 * -EINVAL with err "file:line:col: what". -ENOMEM. On error nothing
 * needs closing.
 */
int ydoc_stream_open(struct ydoc_stream *s, const char *file, const char *buf, size_t len,
		     struct log_err *err);

/*
 * Load the next document into d: 1 when loaded (free with ydoc_free), 0 at
 * the end of the stream, -EINVAL (err: file:line:col) or -ENOMEM.
 */
int ydoc_stream_next(struct ydoc_stream *s, struct ydoc *d);

/* Release the stream (not its documents). */
void ydoc_stream_close(struct ydoc_stream *s);

/*
 * The first document of buf into d (an empty input gives an empty document):
 * ydoc_stream_open + ydoc_stream_next in one. 0 (free d with ydoc_free),
 * -EINVAL with err set, -ENOMEM.
 */
int ydoc_load(struct ydoc *d, const char *file, const char *buf, size_t len, struct log_err *err);

/*
 * d walks doc, a document loaded beforehand (the built-in rules, compiled into
 * the binary by scripts/embed-yaml), which stays the caller's: ydoc_free
 * leaves it alone. Nothing is parsed or checked: doc must be what
 * ydoc_stream_next would load (test_ydoc checks the built-in ones).
 */
void ydoc_borrow(struct ydoc *d, const char *file, const yaml_document_t *doc, struct log_err *err);

/* Free what d holds. */
void ydoc_free(struct ydoc *d);

/* The root node, or NULL for an empty document. */
yaml_node_t *ydoc_root(struct ydoc *d);

/* Node id of d (from a pair or an item), or NULL. */
yaml_node_t *ydoc_node(struct ydoc *d, int id);

/* Spend one unit of d's walking budget: false once it is used up. */
bool ydoc_visit(struct ydoc *d);

/* True for a plain null scalar: "", "~", "null", "Null", "NULL". */
bool ydoc_is_null(const yaml_node_t *n);

/* The text of a scalar node (borrowed), or NULL for another node or NULL. */
const char *ydoc_scalar(const yaml_node_t *n);

/*
 * What a plain (unquoted) scalar resolves to as Kubernetes reads YAML
 * (sigs.k8s.io/yaml, go-yaml v2's YAML 1.1 resolver): "a boolean" (true,
 * yes, on and their false forms, in the case variants go-yaml lists), "an
 * integer" (decimal, 0x, 0o, 0b, octal 0, '_' allowed), "a number" (floats,
 * .inf, .nan), "null"; NULL for a string (any quoted scalar, or any other
 * text) and for a node that is not a scalar. A schema field of type string
 * rejects the others.
 */
const char *ydoc_scalar_type(const yaml_node_t *n);

/* "a mapping", "a list", "null" or "a string": what n is, for messages. */
const char *ydoc_kind(const yaml_node_t *n);

/* The value of key in mapping map (first match), or NULL (absent, or map is not a mapping). */
yaml_node_t *ydoc_get(struct ydoc *d, const yaml_node_t *map, const char *key);

/*
 * Check that mapping m has scalar keys, each once: 0, or -EINVAL with
 * "file:line:col: duplicate key 'k'" (or a non-string key, or ydoc_too_complex's
 * message when the budget runs out).
 */
int ydoc_check_map(struct ydoc *d, const yaml_node_t *m);

/*
 * The walking budget ran out: set d->err to "file:line:col: document too complex: ..." at
 * node n, naming YDOC_BUDGET and what to do, unless already set so; returns -EINVAL.
 */
int ydoc_too_complex(struct ydoc *d, const yaml_node_t *n);

/* Set d->err to "file:line:col: <fmt...>" at node n; returns -EINVAL. */
int ydoc_fail(struct ydoc *d, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
