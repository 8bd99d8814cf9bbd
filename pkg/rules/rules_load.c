/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_load: NodeFeatureRule files (YAML, libyaml) into rules, and their memory: rules, objects,
 * documents and files, on top of rules_load_expr.c's values and matchFeatures terms. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ydoc/ydoc.h"
#include "rules/rules_internal.h"

/* ---------------------------------------------------------------- memory */

static void kv_free(struct kv *kv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(kv[i].k);
		free(kv[i].v);
	}
	free(kv);
}

static void rule_free(struct rule *r)
{
	size_t i;

	kv_free(r->labels, r->nlabels);
	kv_free(r->vars, r->nvars);
	rules_matcher_free(&r->mf);
	for (i = 0; i < r->nany; i++)
		rules_matcher_free(&r->any[i]);
	free(r->any);
	free(r->name);
	free(r->where);
	free(r->object);
}

struct rules *rules_new(void)
{
	return calloc(1, sizeof(struct rules));
}

void rules_free(struct rules *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		rule_free(&r->r[i]);
	free(r->r);
	rules_cache_free(&r->cache);
	free(r);
}

size_t rules_count(const struct rules *r)
{
	return r->n;
}

/* ------------------------------------------------------------------ YAML */

/* A map of string to string (labels, vars, annotations, extendedResources); nulls pruned. */
static int parse_strmap(struct ctx *c, const yaml_node_t *n, const char *what, struct kv **out,
			size_t *nout)
{
	yaml_node_pair_t *p;
	char w[80];
	int rc;

	if (rules_is_null(n))
		return 0;
	rc = rules_want_map(c, n, what);
	if (rc < 0)
		return rc;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *v = rules_node(c, p->value);
		const char *s;
		struct kv *kv;

		if (rules_is_null(v))
			continue;
		if (!rules_is_string(v)) { /* the message formatted only for a bad value */
			snprintf(w, sizeof(w), "%s value", what);
			return rules_want_string(c, v, w, &s);
		}
		s = (const char *)v->data.scalar.value;
		kv = rules_grow(out, nout, sizeof(*kv));
		if (!kv)
			return log_err_set(c->err, -ENOMEM, "out of memory");
		kv->k = strdup(rules_key_of(c, p));
		kv->v = strdup(s);
		if (!kv->k || !kv->v)
			return log_err_set(c->err, -ENOMEM, "out of memory");
	}
	return 0;
}

static int parse_template(struct ctx *c, const yaml_node_t *n, const char *what, struct rtmpl *out)
{
	const char *s;
	char why[600];
	int rc;

	if (rules_is_null(n))
		return 0;
	rc = rules_want_string(c, n, what, &s);
	if (rc < 0)
		return rc;
	if (!*s)
		return 0; /* NFD: an empty template is none */
	out->set = true;  /* also when not parsed below: the rule has one (countLabelsTemplate) */
	if (c->over[0])	  /* the rule is skipped (a limit of all the rules): parse nothing more */
		return 0;
	/* parsed once per distinct text; one that does not parse fails the rule when it runs,
	 * as in NFD (rule.go's executeTemplate parses it then) */
	rc = rules_tmpl(c->cache, s, out, why, sizeof(why));
	if (rc == -ENOMEM)
		return log_err_set(c->err, rc, "out of memory");
	if (rc < 0) /* a limit of all the rules: why says which; the rule is skipped */
		return rules_over(c, n, what, why);
	return 0;
}

/* RFC 3339 date-time, as the CRD's "format: date-time" (kube-openapi's strfmt). */
static bool date_time(const char *s)
{
	static const char form[] = "dddd-dd-ddTdd:dd:dd";
	size_t i;

	for (i = 0; form[i]; i++) {
		if (form[i] == 'd' ? !isdigit((unsigned char)s[i])
				   : (form[i] == 'T' ? (s[i] != 'T' && s[i] != 't' && s[i] != ' ')
						     : s[i] != form[i]))
			return false;
	}
	s += i;
	if (*s == '.') {
		if (!isdigit((unsigned char)*++s))
			return false;
		while (isdigit((unsigned char)*s))
			s++;
	}
	if (*s == 'Z' || *s == 'z')
		return !s[1];
	return (*s == '+' || *s == '-') && isdigit((unsigned char)s[1]) &&
	       isdigit((unsigned char)s[2]) && s[3] == ':' && isdigit((unsigned char)s[4]) &&
	       isdigit((unsigned char)s[5]) && !s[6];
}

/* taints: [{key, value, effect, timeAdded}], checked against the CRD. */
static int parse_taints(struct ctx *c, const yaml_node_t *n, size_t *count)
{
	static const char *const fields[] = {"key", "value", "effect", "timeAdded", NULL};
	yaml_node_item_t *it;
	int rc;

	if (rules_is_null(n))
		return 0;
	rc = rules_want_type(c, n, YAML_SEQUENCE_NODE, "taints");
	if (rc < 0)
		return rc;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *tn = rules_node(c, *it), *v;
		const char *s;
		size_t i;

		if (!rules_visit(c))
			return ydoc_too_complex(c->y, n);
		rc = rules_want_map(c, tn, "taint");
		if (rc == 0)
			rc = rules_only_fields(c, tn, fields, "taint");
		for (i = 0; rc == 0 && fields[i]; i++) {
			v = rules_map_get(c, tn, fields[i]);
			if ((!v || rules_is_null(v)) && i != 0 && i != 2)
				continue;
			if (!v || rules_is_null(v))
				return rules_at(c, tn, "taint without '%s'", fields[i]);
			rc = rules_want_string(c, v, fields[i], &s);
			if (rc == 0 && i == 3 && !date_time(s))
				return rules_at(
				    c, v, "timeAdded '%.100s' is not an RFC 3339 date-time", s);
		}
		if (rc < 0)
			return rc;
		(*count)++;
	}
	return 0;
}

/*
 * One rule. NodeFeatureRule: the CRD's fields. LabelCountRule (nodeprobe's
 * own kind, counting): name, countLabelsTemplate, matchFeatures, matchAny.
 */
static int parse_rule(struct ctx *c, const yaml_node_t *n, struct rule *r, bool counting)
{
	static const char *const nfr[] = {
	    "name",   "labels", "labelsTemplate", "annotations",   "extendedResources",
	    "taints", "vars",	"varsTemplate",	  "matchFeatures", "matchAny",
	    NULL};
	static const char *const lcr[] = {"name", "countLabelsTemplate", "matchFeatures",
					  "matchAny", NULL};
	struct kv *ignored = NULL;
	size_t nignored = 0, ntaints = 0;
	yaml_node_pair_t *p;
	yaml_node_t *v;
	const char *name;
	char where[300], what[300];
	int rc;

	rc = rules_want_map(c, n, "rule");
	if (rc < 0)
		return rc;
	snprintf(where, sizeof(where), "%s:%zu:%zu", c->file, n->start_mark.line + 1,
		 n->start_mark.column + 1);
	r->where = strdup(where);
	v = rules_map_get(c, n, "name");
	if (!v || rules_is_null(v))
		return rules_at(c, n, "rule without 'name'");
	rc = rules_want_string(c, v, "name", &name);
	if (rc < 0)
		return rc;
	r->name = strdup(name);
	if (!r->where || !r->name)
		return log_err_set(c->err, -ENOMEM, "out of memory");
	if (!rules_fields_known(c, n, counting ? lcr : nfr)) { /* what formatted only then */
		snprintf(what, sizeof(what), "rule '%.200s'", name);
		return rules_only_fields(c, n, counting ? lcr : nfr, what);
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top && rc == 0; p++) {
		const char *k = rules_key_of(c, p);
		yaml_node_t *val = rules_node(c, p->value);
		size_t before = nignored + ntaints;

		if (!strcmp(k, "labels")) {
			rc = parse_strmap(c, val, "labels", &r->labels, &r->nlabels);
		} else if (!strcmp(k, "vars")) {
			rc = parse_strmap(c, val, "vars", &r->vars, &r->nvars);
		} else if (!strcmp(k, "annotations") || !strcmp(k, "extendedResources")) {
			rc = parse_strmap(c, val, k, &ignored, &nignored);
		} else if (!strcmp(k, "taints")) {
			rc = parse_taints(c, val, &ntaints);
		} else if (!strcmp(k, "labelsTemplate")) {
			rc = parse_template(c, val, k, &r->tmpl);
		} else if (!strcmp(k, "varsTemplate")) {
			rc = parse_template(c, val, k, &r->vtmpl);
		} else if (!strcmp(k, "countLabelsTemplate")) {
			rc = parse_template(c, val, k, &r->count);
		} else if (!strcmp(k, "matchFeatures")) {
			rc = rules_parse_matcher(c, val, &r->mf);
		} else if (!strcmp(k, "matchAny") && !rules_is_null(val)) {
			yaml_node_item_t *it;

			rc = rules_want_type(c, val, YAML_SEQUENCE_NODE, "matchAny");
			for (it = val->data.sequence.items.start;
			     rc == 0 && it < val->data.sequence.items.top; it++) {
				static const char *const fields[] = {"matchFeatures", NULL};
				yaml_node_t *e = rules_node(c, *it), *mf;
				struct matcher *m;

				if (!rules_visit(c))
					return ydoc_too_complex(c->y, val);
				rc = rules_want_map(c, e, "matchAny item");
				if (rc == 0)
					rc = rules_only_fields(c, e, fields, "matchAny item");
				if (rc < 0)
					break;
				m = rules_grow(&r->any, &r->nany, sizeof(*m));
				if (!m)
					return log_err_set(c->err, -ENOMEM, "out of memory");
				mf = rules_map_get(c, e, "matchFeatures");
				if (!mf || rules_is_null(mf))
					return rules_at(c, e,
							"matchAny item without 'matchFeatures'");
				rc = rules_parse_matcher(c, mf, m);
			}
		}
		/* a features.d file carries labels only: say so for what the rule would do */
		if (rc == 0 && nignored + ntaints > before)
			log_warn("%s: rule '%s': '%s' ignored: a features.d file carries labels "
				 "only (nfd-master applies it from a NodeFeatureRule object)",
				 r->where, r->name, k);
	}
	kv_free(ignored, nignored);
	if (rc == 0 && counting && !r->count.set)
		return rules_at(c, n, "LabelCountRule rule '%s' without 'countLabelsTemplate'",
				r->name);
	return rc;
}

static int add_rule(struct rules *rs, struct rule *r)
{
	if (rs->n == rs->cap) {
		size_t ncap = rs->cap ? rs->cap * 2 : 16;
		struct rule *nr = realloc(rs->r, ncap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		rs->r = nr;
		rs->cap = ncap;
	}
	rs->r[rs->n++] = *r;
	return 0;
}

/* Drop the rules of object name (of the same kind) from rs; returns how many. */
static size_t drop_object(struct rules *rs, const char *name, bool counting)
{
	size_t i, j = 0, n = rs->n;

	for (i = 0; i < rs->n; i++) {
		if (!strcmp(rs->r[i].object, name) && rs->r[i].counting == counting) {
			rule_free(&rs->r[i]);
			continue;
		}
		rs->r[j++] = rs->r[i];
	}
	rs->n = j;
	return n - j;
}

/* Kubernetes' name of a custom resource: [a-z0-9]([-a-z0-9]*[a-z0-9])? labels joined by '.', <=
 * 253. */
static bool dns_subdomain(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 253)
		return false;
	for (i = 0; i < n; i++) {
		bool alnum = islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]);
		bool edge = i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.';

		if (!alnum && !(s[i] == '-' && !edge) && !(s[i] == '.' && !edge))
			return false;
	}
	return true;
}

/* metadata.name (Kubernetes requires it; nfd-master orders objects by it). */
static int parse_meta(struct ctx *c, const yaml_node_t *root, const char **name)
{
	yaml_node_t *m = rules_map_get(c, root, "metadata"), *v;
	int rc;

	if (!m || rules_is_null(m))
		return rules_at(c, root, "object without 'metadata.name'");
	rc = rules_want_map(c, m, "metadata");
	if (rc < 0)
		return rc;
	v = rules_map_get(c, m, "name");
	if (!v || rules_is_null(v))
		return rules_at(c, m, "object without 'metadata.name'");
	rc = rules_want_string(c, v, "metadata.name", name);
	if (rc == 0 && !dns_subdomain(*name))
		return rules_at(c, v,
				"metadata.name '%.100s' is not a DNS-1123 subdomain (lower case, "
				"digits, '-' and '.')",
				*name);
	return rc;
}

#define LCR_API "nodeprobe.io/v1alpha1"

/* One document into tmp (a scratch rule list). 0, or error. */
static int parse_doc_body(struct ctx *c, struct rules *tmp)
{
	static const char *const fields[] = {"apiVersion", "kind", "metadata", "spec", NULL};
	static const char *const spec_fields[] = {"rules", NULL};
	yaml_node_t *root = ydoc_root(c->y), *v, *k, *spec, *list;
	yaml_node_item_t *it;
	const char *api, *kind, *name;
	bool nfr, lcr;
	int rc;

	if (!root || rules_is_null(root))
		return 0;
	rc = rules_want_map(c, root, "document");
	if (rc < 0)
		return rc;
	v = rules_map_get(c, root, "apiVersion");
	if (!v)
		return rules_at(c, root, "document without 'apiVersion'");
	rc = rules_want_string(c, v, "apiVersion", &api);
	if (rc < 0)
		return rc;
	k = rules_map_get(c, root, "kind");
	if (!k)
		return rules_at(c, root, "document without 'kind'");
	rc = rules_want_string(c, k, "kind", &kind);
	if (rc < 0)
		return rc;
	nfr = !strcmp(api, "nfd.k8s-sigs.io/v1alpha1") && !strcmp(kind, "NodeFeatureRule");
	lcr = !strcmp(api, LCR_API) && !strcmp(kind, "LabelCountRule");
	if (!nfr && !lcr) {
		log_warn("%s:%zu:%zu: %s '%s' is not nfd.k8s-sigs.io/v1alpha1 NodeFeatureRule, "
			 "document skipped",
			 c->file, v->start_mark.line + 1, v->start_mark.column + 1,
			 strcmp(api, "nfd.k8s-sigs.io/v1alpha1") ? "apiVersion" : "kind",
			 strcmp(api, "nfd.k8s-sigs.io/v1alpha1") ? api : kind);
		return 0;
	}
	rc = rules_only_fields(c, root, fields, kind);
	if (rc == 0)
		rc = parse_meta(c, root, &name);
	if (rc < 0)
		return rc;
	spec = rules_map_get(c, root, "spec");
	if (!spec || rules_is_null(spec))
		return rules_at(c, root, "%s without 'spec'", kind);
	rc = rules_want_map(c, spec, "spec");
	if (rc == 0)
		rc = rules_only_fields(c, spec, spec_fields, "spec");
	if (rc < 0)
		return rc;
	list = rules_map_get(c, spec, "rules");
	if (!list || rules_is_null(list))
		return rules_at(c, spec, "spec without 'rules'");
	rc = rules_want_type(c, list, YAML_SEQUENCE_NODE, "spec.rules");
	if (rc < 0)
		return rc;
	/* a second object of the same name replaces the first, as a second kubectl apply */
	if (drop_object(tmp, name, lcr))
		log_warn("%s:%zu:%zu: %s '%s' replaces the earlier one of that name", c->file,
			 root->start_mark.line + 1, root->start_mark.column + 1, kind, name);
	for (it = list->data.sequence.items.start; it < list->data.sequence.items.top; it++) {
		struct rule r = {0};

		r.counting = lcr;
		r.object = strdup(name);
		c->over[0] = '\0';
		rc = r.object ? parse_rule(c, rules_node(c, *it), &r, lcr)
			      : log_err_set(c->err, -ENOMEM, "out of memory");
		/*
		 * A rule whose pattern or template would pass a limit of all the rules loaded (in
		 * load order) is skipped with one warning; what it compiled before stays (dropped,
		 * each rule sharing those texts would compile them all again: work without bound).
		 * The others load, and the run goes on (exit 0), as for a rule that fails when it
		 * runs. nfd-master does the same with a rule that fails: it logs "failed to
		 * process rule" naming it and goes on with the next (pkg/nfd-master/nfd-master.go,
		 * processNodeFeatureRule: klog.ErrorS, continue), as nfd-worker's custom source
		 * does (source/custom/custom.go, GetLabels). A file the CRD refuses is still an
		 * error, even after the rule passed a limit.
		 */
		if (rc == 0 && c->over[0]) {
			log_warn("%s: rule '%s' not applied: %s", r.where, r.name, c->over);
			rule_free(&r);
			continue;
		}
		if (rc == 0)
			rc = add_rule(tmp, &r) < 0 ? log_err_set(c->err, -ENOMEM, "out of memory")
						   : 0;
		if (rc < 0) {
			rule_free(&r);
			return rc;
		}
	}
	return 0;
}

/*
 * parse_doc_body, and a document whose walking budget ran out is refused: a lookup past the
 * budget finds nothing, so what was read of it may lack fields it has.
 */
static int parse_doc(struct ctx *c, struct rules *tmp)
{
	int rc = parse_doc_body(c, tmp);

	if (rc != -ENOMEM && c->y->budget < 0) /* whatever failed past it, the budget says why */
		rc = ydoc_too_complex(c->y, ydoc_root(c->y));
	return rc;
}

/* Move the rules of one file (tmp, emptied) into rs: its objects replace same-named ones of
 * earlier files. Returns the count, or -ENOMEM (tmp freed either way). */
static int merge_file(struct rules *rs, const char *name, struct rules *tmp, struct log_err *err)
{
	size_t i, j;
	int n = (int)tmp->n;

	for (i = 0; i < tmp->n; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(tmp->r[j].object, tmp->r[i].object) &&
			    tmp->r[j].counting == tmp->r[i].counting)
				break;
		if (j == i && drop_object(rs, tmp->r[i].object, tmp->r[i].counting))
			log_warn("%s: %s '%s' replaces the one of that name loaded before", name,
				 tmp->r[i].counting ? "LabelCountRule" : "NodeFeatureRule",
				 tmp->r[i].object);
	}
	for (i = 0; i < tmp->n; i++) {
		tmp->r[i].seq = rs->seq++;
		if (add_rule(rs, &tmp->r[i]) < 0) {
			for (; i < tmp->n; i++)
				rule_free(&tmp->r[i]);
			n = log_err_set(err, -ENOMEM, "out of memory");
			break;
		}
	}
	free(tmp->r);
	memset(tmp, 0, sizeof(*tmp));
	return n;
}

static void drop_file(struct rules *tmp)
{
	size_t i;

	for (i = 0; i < tmp->n; i++)
		rule_free(&tmp->r[i]);
	free(tmp->r);
	memset(tmp, 0, sizeof(*tmp));
}

int rules_load_buffer(struct rules *rs, const char *name, const char *buf, size_t len,
		      struct log_err *err)
{
	struct rules tmp = {0};
	struct ydoc_stream st;
	struct ydoc y;
	struct ctx c = {.y = &y, .file = name, .err = err, .cache = &rs->cache, .skip_rule = true};
	int rc;

	rc = ydoc_stream_open(&st, name, buf, len, err);
	if (rc < 0)
		return rc;
	while ((rc = ydoc_stream_next(&st, &y)) > 0) {
		rc = parse_doc(&c, &tmp);
		ydoc_free(&y);
		if (rc < 0)
			break;
	}
	ydoc_stream_close(&st);
	if (rc < 0) {
		drop_file(&tmp);
		return rc;
	}
	return merge_file(rs, name, &tmp, err);
}

int rules_load_docs(struct rules *rs, const char *name, const struct yaml_document_s *docs,
		    size_t ndocs, struct log_err *err)
{
	struct rules tmp = {0};
	struct ydoc y;
	struct ctx c = {.y = &y, .file = name, .err = err, .cache = &rs->cache, .skip_rule = true};
	size_t i;
	int rc;

	for (i = 0; i < ndocs; i++) {
		ydoc_borrow(&y, name, &docs[i], err);
		rc = parse_doc(&c, &tmp);
		ydoc_free(&y);
		if (rc < 0) {
			drop_file(&tmp);
			return rc;
		}
	}
	return merge_file(rs, name, &tmp, err);
}

static int load_file(struct rules *rs, const char *path, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(RULES_FILE_MAX);
	int r = sb_read_file(&sb, path);

	if (r == -E2BIG)
		r = log_err_set(err, r,
				"%s: larger than the %u MiB limit for a rules file (split it)",
				path, RULES_FILE_MAX >> 20);
	else if (r < 0)
		r = log_err_set(err, r, "%s: %s", path, strerror(-r));
	else
		r = rules_load_buffer(rs, path, sb.buf, sb.len, err);
	sb_free(&sb);
	return r;
}

static int yaml_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	if (d->d_name[0] == '.')
		return 0;
	return (n > 5 && !strcmp(d->d_name + n - 5, ".yaml")) ||
	       (n > 4 && !strcmp(d->d_name + n - 4, ".yml"));
}

int rules_load_path(struct rules *rs, const char *path, struct log_err *err)
{
	struct dirent **ents = NULL;
	struct stat st;
	int n, i, total = 0, r = 0;

	if (stat(path, &st) < 0)
		return log_err_set(err, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return load_file(rs, path, err);
	n = scandir(path, &ents, yaml_name, alphasort);
	if (n < 0)
		return log_err_set(err, -errno, "%s: %s", path, strerror(errno));
	for (i = 0; i < n; i++) {
		char file[PATH_MAX];

		if (r >= 0) {
			snprintf(file, sizeof(file), "%s/%s", path, ents[i]->d_name);
			r = load_file(rs, file, err);
			if (r > 0)
				total += r;
		}
		free(ents[i]);
	}
	free(ents);
	return r < 0 ? r : total;
}
