/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_rules: Reloader's contract as pure functions: hash, env names, annotations, uses, patches.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "base64/base64.h"
#include "goregex/goregex.h"
#include "kube/kube.h"
#include "reload/reload.h"

static const char *const ann_keys[RA_N] = {
    [RA_AUTO] = "reloader.stakater.com/auto",
    [RA_CM_AUTO] = "configmap.reloader.stakater.com/auto",
    [RA_SEC_AUTO] = "secret.reloader.stakater.com/auto",
    [RA_CM_RELOAD] = "configmap.reloader.stakater.com/reload",
    [RA_SEC_RELOAD] = "secret.reloader.stakater.com/reload",
    [RA_SEARCH] = "reloader.stakater.com/search",
    [RA_CM_EXCLUDE] = "configmaps.exclude.reloader.stakater.com/reload",
    [RA_SEC_EXCLUDE] = "secrets.exclude.reloader.stakater.com/reload",
};

const char *reload_ann_key(enum reload_ann a)
{
	return a < RA_N ? ann_keys[a] : "";
}

const char *reload_type_name(enum reload_type t)
{
	return t == RELOAD_SECRET ? "Secret" : "ConfigMap";
}

const char *reload_type_upper(enum reload_type t)
{
	return t == RELOAD_SECRET ? "SECRET" : "CONFIGMAP";
}

const char *reload_kind_name(enum reload_kind k)
{
	static const char *const names[] = {"Deployment", "StatefulSet", "DaemonSet"};

	return k < RELOAD_NKINDS ? names[k] : "?";
}

const char *reload_verdict_name(enum reload_verdict v)
{
	static const char *const names[] = {"reload",	    "ignored",	"excluded",
					    "not_selected", "not_used", "namespace"};

	return v <= RELOAD_NO_NAMESPACE ? names[v] : "?";
}

/* ---- hash ---- */

/* SHA-1 of the empty string: the hash of an object without entries. */
static const char sha1_empty[] = "da39a3ee5e6b4b0d3255bfef95601890afd80709";

static int md_init(void **md, const EVP_MD *type)
{
	*md = EVP_MD_CTX_new();
	return *md && EVP_DigestInit_ex(*md, type, NULL) == 1 ? 0 : -ENOMEM;
}

int reload_hasher_init(struct reload_hasher *h)
{
	memset(h, 0, sizeof(*h));
	sb_init(&h->prev, 64 * 1024);
	if (md_init(&h->md, EVP_sha1()) < 0 || md_init(&h->md2, EVP_sha512_256()) < 0) {
		reload_hasher_free(h);
		return -ENOMEM;
	}
	return 0;
}

void reload_hasher_free(struct reload_hasher *h)
{
	EVP_MD_CTX_free(h->md);
	EVP_MD_CTX_free(h->md2);
	h->md = h->md2 = NULL;
	sb_free(&h->prev);
}

/* Feed both digests. */
static void hasher_update(struct reload_hasher *h, const void *p, size_t n)
{
	EVP_DigestUpdate(h->md, p, n);
	EVP_DigestUpdate(h->md2, p, n);
}

/*
 * Order of the entries "a=..." and "b=..." for distinct keys a and b: decided
 * within the keys and the "=", so the values never need to be kept.
 */
static int entry_key_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t m = alen < blen ? alen : blen;
	int c = memcmp(a, b, m);
	unsigned char ca, cb;

	if (c)
		return c;
	if (alen == blen)
		return 0;
	ca = alen > m ? (unsigned char)a[m] : '=';
	cb = blen > m ? (unsigned char)b[m] : '=';
	return (int)ca - (int)cb; /* 0 only for a key containing '=': treated as unordered */
}

static int hasher_key(struct reload_hasher *h, const char *key, size_t klen)
{
	if (!h->md)
		return -EINVAL;
	if (h->n && entry_key_cmp(key, klen, h->prev.buf, h->prev.len) <= 0)
		h->unordered = 1;
	sb_reset(&h->prev);
	if (sb_addn(&h->prev, key, klen) < 0)
		h->unordered = 1; /* absurdly long key: let the slow path decide */
	if (h->n)
		hasher_update(h, ";", 1);
	hasher_update(h, key, klen);
	hasher_update(h, "=", 1);
	h->n++;
	return 0;
}

int reload_hasher_add(struct reload_hasher *h, const char *key, size_t klen, const char *val,
		      size_t vlen)
{
	int r = hasher_key(h, key, klen);

	if (r < 0)
		return r;
	hasher_update(h, val, vlen);
	return 0;
}

int reload_hasher_add_b64(struct reload_hasher *h, const char *key, size_t klen, const char *b64,
			  size_t len)
{
	unsigned char out[3072];
	size_t off = 0;
	int r = hasher_key(h, key, klen);

	if (r < 0)
		return r;
	while (off < len) {
		size_t n = len - off > 4096 ? 4096 : len - off;
		long d = base64_decode(b64 + off, n, out, sizeof(out));

		if (d < 0) {
			h->bad = 1;
			return 0;
		}
		hasher_update(h, out, (size_t)d);
		off += n;
	}
	return 0;
}

static void to_hex(const unsigned char *d, unsigned int n, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	unsigned int i;

	for (i = 0; i < n; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[2 * n] = '\0';
}

/* Finish md (SHA-1) into hex and md2 (SHA-512/256) into alt (if not NULL). */
static int digests_final(void *md, void *md2, char hex[RELOAD_HASH_HEX], unsigned char *alt)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (EVP_DigestFinal_ex(md, d, &n) != 1 || n != 20)
		return -ENOMEM;
	to_hex(d, n, hex);
	if (alt && (EVP_DigestFinal_ex(md2, d, &n) != 1 || n != RELOAD_HASH_ALT))
		return -ENOMEM;
	if (alt)
		memcpy(alt, d, RELOAD_HASH_ALT);
	return 0;
}

int reload_hasher_final(struct reload_hasher *h, char hex[RELOAD_HASH_HEX], unsigned char *alt)
{
	int r = 0;

	hex[0] = '\0';
	if (!h->md || !h->md2)
		return -EINVAL;
	if (h->bad)
		r = -EINVAL;
	else if (h->unordered)
		r = -EAGAIN;
	else
		r = digests_final(h->md, h->md2, hex, alt);
	if (r < 0)
		hex[0] = '\0';
	reload_hasher_free(h);
	return r;
}

int reload_hash_current(const char *rec, const char *hex, const unsigned char *alt)
{
	char ahex[2 * RELOAD_HASH_ALT + 1];
	size_t n;

	if (!rec || !hex || !hex[0])
		return 0;
	n = strlen(rec);
	if (n == 2 * RELOAD_HASH_ALT && alt) {
		to_hex(alt, RELOAD_HASH_ALT, ahex);
		return strcmp(rec, ahex) == 0;
	}
	if (n == 0)
		return strcmp(hex, sha1_empty) == 0;
	return strcmp(rec, hex) == 0;
}

struct entry {
	char *s;
	size_t len;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	size_t m = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, m);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Append "key=value" entries of one data section to ents. */
static int collect(json_t *section, int decode, struct entry **ents, size_t *n, size_t *cap)
{
	const char *key;
	json_t *v;

	if (!json_is_object(section))
		return 0;
	json_object_foreach(section, key, v)
	{
		size_t klen = strlen(key), vlen = json_string_length(v);
		const char *val = json_string_value(v);
		struct entry *e;
		long d;

		if (!val)
			continue;
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 16;
			struct entry *ne = realloc(*ents, nc * sizeof(*ne));

			if (!ne)
				return -ENOMEM;
			*ents = ne;
			*cap = nc;
		}
		e = &(*ents)[*n];
		e->s = malloc(klen + 1 + vlen + 1);
		if (!e->s)
			return -ENOMEM;
		memcpy(e->s, key, klen);
		e->s[klen] = '=';
		if (decode) {
			d = base64_decode(val, vlen, (unsigned char *)e->s + klen + 1, vlen);
			if (d < 0) {
				free(e->s);
				return -EINVAL;
			}
			e->len = klen + 1 + (size_t)d;
		} else {
			memcpy(e->s + klen + 1, val, vlen);
			e->len = klen + 1 + vlen;
		}
		(*n)++;
	}
	return 0;
}

int reload_hash_object(json_t *obj, enum reload_type type, char hex[RELOAD_HASH_HEX],
		       unsigned char *alt)
{
	struct entry *ents = NULL;
	size_t n = 0, cap = 0, i;
	struct reload_hasher h = {0};
	int r;

	hex[0] = '\0';
	r = collect(json_object_get(obj, "data"), type == RELOAD_SECRET, &ents, &n, &cap);
	if (!r && type == RELOAD_CONFIGMAP)
		r = collect(json_object_get(obj, "binaryData"), 0, &ents, &n, &cap);
	if (r < 0)
		goto out;
	if (n)
		qsort(ents, n, sizeof(*ents), entry_cmp);
	r = reload_hasher_init(&h);
	if (r < 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (i)
			hasher_update(&h, ";", 1);
		hasher_update(&h, ents[i].s, ents[i].len);
	}
	r = digests_final(h.md, h.md2, hex, alt);
	if (r < 0)
		hex[0] = '\0';
out:
	for (i = 0; i < n; i++)
		free(ents[i].s);
	free(ents);
	reload_hasher_free(&h);
	return r;
}

/* ---- names ---- */

int reload_env_name(struct strbuf *sb, const char *name, enum reload_type type)
{
	int r = sb_add(sb, "STAKATER_"), prev_alnum = 0;
	const char *p;

	for (p = name; *p && r == 0; p++) {
		char c = *p;

		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			r = sb_addch(sb, c);
			prev_alnum = 1;
		} else if (prev_alnum) {
			r = sb_addch(sb, '_');
			prev_alnum = 0;
		}
	}
	if (r == 0)
		r = sb_addch(sb, '_');
	if (r == 0)
		r = sb_add(sb, reload_type_upper(type));
	return r;
}

/* ---- workloads ---- */

/* Go's strconv.ParseBool, true side. */
static int go_true(const char *s)
{
	static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
	size_t i;

	if (!s)
		return 0;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(s, t[i]) == 0)
			return 1;
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Trimmed copy of [s, e) (Go strings.TrimSpace for ASCII space). */
static char *trimmed(const char *s, const char *e)
{
	char *out;

	while (s < e && strchr(" \t\r\n\v\f", *s))
		s++;
	while (e > s && strchr(" \t\r\n\v\f", e[-1]))
		e--;
	out = malloc((size_t)(e - s) + 1);
	if (!out)
		return NULL;
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = '\0';
	return out;
}

static int compile_list(struct reload_relist *rl, const char *val, const struct reload_workload *w,
			const char *key, int quiet)
{
	const char *p = val, *e;
	size_t n = 1;

	for (e = val; *e; e++)
		n += *e == ',';
	rl->re = calloc(n, sizeof(*rl->re));
	if (!rl->re)
		return -ENOMEM;
	for (;;) {
		char *item, *pat;
		int rc;

		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		item = trimmed(p, e);
		if (!item)
			return -ENOMEM;
		if (*item) {
			char msg[128];

			/*
			 * Reloader matches regexp.MatchString("^" + item + "$"), Go's regexp:
			 * the anchors are text, so "a|b" is "^a|b$" (pkg/goregex).
			 */
			if (asprintf(&pat, "^%s$", item) < 0) {
				free(item);
				return -ENOMEM;
			}
			rc = goregex_compile(pat, 0, &rl->re[rl->n], msg, sizeof(msg));
			free(pat);
			if (rc == -ENOMEM) {
				free(item);
				return -ENOMEM;
			}
			if (rc == 0)
				rl->n++;
			else if (!quiet)
				log_warn(
				    "%s %s/%s: annotation %s: invalid regex '%.200s' skipped: %s",
				    reload_kind_name(w->kind), w->ns, w->name, key, item,
				    rc == -E2BIG ? "pattern too long" : msg);
		}
		free(item);
		if (!*e)
			break;
		p = e + 1;
	}
	return 0;
}

static void free_list(struct reload_relist *rl)
{
	size_t i;

	for (i = 0; i < rl->n; i++)
		goregex_free(rl->re[i]);
	free(rl->re);
	rl->re = NULL;
	rl->n = 0;
}

void reload_workload_free(struct reload_workload *w)
{
	size_t i;
	int a, b;

	free(w->ns);
	free(w->name);
	free(w->uid);
	for (a = 0; a < 2; a++) {
		for (b = 0; b < RA_N; b++)
			free(w->ann[a][b]);
		free_list(&w->relist[a][0]);
		free_list(&w->relist[a][1]);
	}
	for (i = 0; i < w->nrefs; i++) {
		free(w->refs[i].name);
		free(w->refs[i].container);
	}
	free(w->refs);
	for (i = 0; i < w->nenv; i++) {
		free(w->env[i].container);
		free(w->env[i].name);
		free(w->env[i].value);
	}
	free(w->env);
	free(w->first_container);
	free(w->lr_type);
	free(w->lr_name);
	free(w->lr_hash);
	memset(w, 0, sizeof(*w));
}

static const struct reload_ref *find_ref(const struct reload_workload *w, enum reload_type t,
					 const char *name)
{
	size_t i;

	for (i = 0; i < w->nrefs; i++)
		if (w->refs[i].type == t && strcmp(w->refs[i].name, name) == 0)
			return &w->refs[i];
	return NULL;
}

static int add_ref(struct reload_workload *w, enum reload_type t, const char *name,
		   const char *container)
{
	struct reload_ref *nr = realloc(w->refs, (w->nrefs + 1) * sizeof(*nr));

	if (!nr)
		return -ENOMEM;
	w->refs = nr;
	nr[w->nrefs].type = t;
	nr[w->nrefs].name = strdup(name);
	nr[w->nrefs].container = dup_or_null(container);
	if (!nr[w->nrefs].name || (container && !nr[w->nrefs].container)) {
		free(nr[w->nrefs].name);
		free(nr[w->nrefs].container);
		return -ENOMEM;
	}
	w->nrefs++;
	return 0;
}

/* Add parent.<ref>.name as used by container ct unless already known. */
static int add_new_ref(struct reload_workload *w, enum reload_type t, json_t *parent,
		       const char *ref, const char *ct)
{
	const char *name = json_string_value(json_object_get(json_object_get(parent, ref), "name"));

	if (!name || find_ref(w, t, name))
		return 0;
	return add_ref(w, t, name, ct);
}

static const char *cname(json_t *c)
{
	return json_string_value(json_object_get(c, "name"));
}

/* The container that mounts volume vol: regular ones first, an init hit maps to the first regular.
 */
static const char *mounting_container(json_t *containers, json_t *inits, const char *vol)
{
	json_t *lists[2] = {containers, inits}, *c, *m;
	size_t i, j, l;

	for (l = 0; l < 2; l++) {
		json_array_foreach(lists[l], i, c)
		{
			json_array_foreach(json_object_get(c, "volumeMounts"), j, m)
			{
				const char *n = json_string_value(json_object_get(m, "name"));

				if (n && strcmp(n, vol) == 0)
					return l == 0 ? cname(c)
						      : cname(json_array_get(containers, 0));
			}
		}
	}
	return NULL;
}

/* A list of (type, name) pairs being filled, up to max. */
struct objlist {
	enum reload_type *types;
	const char **names;
	size_t n, max;
};

static void objlist_add(struct objlist *l, enum reload_type t, json_t *parent, const char *ref,
			const char *field)
{
	const char *s = json_string_value(json_object_get(json_object_get(parent, ref), field));

	if (s && l->n < l->max) {
		l->types[l->n] = t;
		l->names[l->n++] = s;
	}
}

/* Objects a volume refers to: up to max (type, name) pairs. */
static size_t volume_objects(json_t *vol, enum reload_type *types, const char **names, size_t max)
{
	struct objlist l = {types, names, 0, max};
	json_t *src;
	size_t i;

	objlist_add(&l, RELOAD_CONFIGMAP, vol, "configMap", "name");
	objlist_add(&l, RELOAD_SECRET, vol, "secret", "secretName");
	json_array_foreach(json_object_get(json_object_get(vol, "projected"), "sources"), i, src)
	{
		objlist_add(&l, RELOAD_CONFIGMAP, src, "configMap", "name");
		objlist_add(&l, RELOAD_SECRET, src, "secret", "name");
	}
	return l.n;
}

struct seen {
	enum reload_type type;
	const char *name;
};

static int parse_uses(struct reload_workload *w, json_t *pod)
{
	json_t *containers = json_object_get(pod, "containers");
	json_t *inits = json_object_get(pod, "initContainers");
	json_t *lists[2] = {containers, inits}, *vol, *c, *e;
	struct seen *seen = NULL;
	size_t nseen = 0, i, j, k, l;
	int r = 0;

	/* Volumes: only the first volume naming an object is examined. */
	json_array_foreach(json_object_get(pod, "volumes"), i, vol)
	{
		enum reload_type types[64];
		const char *names[64], *vname = json_string_value(json_object_get(vol, "name"));
		size_t n = volume_objects(vol, types, names, 64);

		for (k = 0; k < n && r == 0; k++) {
			const char *ct;
			int dup = 0;

			for (j = 0; j < nseen; j++)
				if (seen[j].type == types[k] && strcmp(seen[j].name, names[k]) == 0)
					dup = 1;
			if (dup)
				continue;
			{
				struct seen *ns = realloc(seen, (nseen + 1) * sizeof(*ns));

				if (!ns) {
					r = -ENOMEM;
					break;
				}
				seen = ns;
				seen[nseen].type = types[k];
				seen[nseen++].name = names[k];
			}
			ct = vname ? mounting_container(containers, inits, vname) : NULL;
			if (ct)
				r = add_ref(w, types[k], names[k], ct);
		}
	}
	free(seen);
	/* env[].valueFrom and envFrom[], containers then init containers. */
	for (l = 0; l < 2 && r == 0; l++) {
		json_array_foreach(lists[l], i, c)
		{
			const char *ct = l == 0 ? cname(c) : cname(json_array_get(containers, 0));

			json_array_foreach(json_object_get(c, "env"), j, e)
			{
				json_t *vf = json_object_get(e, "valueFrom");

				r = r ? r
				      : add_new_ref(w, RELOAD_CONFIGMAP, vf, "configMapKeyRef", ct);
				r = r ? r : add_new_ref(w, RELOAD_SECRET, vf, "secretKeyRef", ct);
			}
			json_array_foreach(json_object_get(c, "envFrom"), j, e)
			{
				r = r ? r : add_new_ref(w, RELOAD_CONFIGMAP, e, "configMapRef", ct);
				r = r ? r : add_new_ref(w, RELOAD_SECRET, e, "secretRef", ct);
			}
		}
	}
	return r;
}

/* Keep the STAKATER_* env vars of regular containers: the env-vars strategy's record. */
static int parse_env_records(struct reload_workload *w, json_t *containers)
{
	json_t *c, *e;
	size_t i, j;

	json_array_foreach(containers, i, c)
	{
		json_array_foreach(json_object_get(c, "env"), j, e)
		{
			const char *n = json_string_value(json_object_get(e, "name"));
			const char *v = json_string_value(json_object_get(e, "value"));
			struct reload_envrec *ne;

			if (!n || !v || strncmp(n, "STAKATER_", 9) != 0)
				continue;
			ne = realloc(w->env, (w->nenv + 1) * sizeof(*ne));
			if (!ne)
				return -ENOMEM;
			w->env = ne;
			ne[w->nenv].container = dup_or_null(cname(c));
			ne[w->nenv].name = strdup(n);
			ne[w->nenv].value = strdup(v);
			w->nenv++;
			if (!ne[w->nenv - 1].name || !ne[w->nenv - 1].value)
				return -ENOMEM;
		}
	}
	return 0;
}

static int parse_last_reloaded(struct reload_workload *w, const char *val)
{
	json_t *j = json_loads(val, 0, NULL);
	int r = 0;

	if (!j)
		return 0; /* not ours to judge; treated as no record */
	w->lr_type = dup_or_null(json_string_value(json_object_get(j, "type")));
	w->lr_name = dup_or_null(json_string_value(json_object_get(j, "name")));
	w->lr_hash = dup_or_null(json_string_value(json_object_get(j, "hash")));
	json_decref(j);
	return r;
}

int reload_workload_parse(struct reload_workload *w, enum reload_kind kind, json_t *obj, int quiet,
			  struct log_err *err)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *tmpl = json_object_get(json_object_get(obj, "spec"), "template");
	json_t *pod = json_object_get(tmpl, "spec");
	json_t *anns[2];
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *lr;
	int a, b, r;

	memset(w, 0, sizeof(*w));
	w->kind = kind;
	if (!name)
		return log_err_set(err, -EINVAL, "%s without metadata.name",
				   reload_kind_name(kind));
	w->name = strdup(name);
	w->ns = strdup(ns ? ns : "");
	w->uid = dup_or_null(json_string_value(json_object_get(meta, "uid")));
	if (!w->name || !w->ns || (json_object_get(meta, "uid") && !w->uid))
		return -ENOMEM;
	anns[0] = json_object_get(meta, "annotations");
	anns[1] = json_object_get(json_object_get(tmpl, "metadata"), "annotations");
	for (a = 0; a < 2; a++) {
		for (b = 0; b < RA_N; b++) {
			const char *v = json_string_value(json_object_get(anns[a], ann_keys[b]));

			if (!v)
				continue;
			w->ann[a][b] = strdup(v);
			if (!w->ann[a][b])
				return -ENOMEM;
		}
		if (w->ann[a][RA_CM_RELOAD]) {
			r = compile_list(&w->relist[a][RELOAD_CONFIGMAP], w->ann[a][RA_CM_RELOAD],
					 w, ann_keys[RA_CM_RELOAD], quiet);
			if (r < 0)
				return r;
		}
		if (w->ann[a][RA_SEC_RELOAD]) {
			r = compile_list(&w->relist[a][RELOAD_SECRET], w->ann[a][RA_SEC_RELOAD], w,
					 ann_keys[RA_SEC_RELOAD], quiet);
			if (r < 0)
				return r;
		}
	}
	w->first_container =
	    dup_or_null(cname(json_array_get(json_object_get(pod, "containers"), 0)));
	r = parse_uses(w, pod);
	if (r == 0)
		r = parse_env_records(w, json_object_get(pod, "containers"));
	lr = json_string_value(json_object_get(anns[1], RELOAD_LAST_RELOADED_FROM));
	if (r == 0 && lr)
		r = parse_last_reloaded(w, lr);
	return r;
}

/* ---- decision ---- */

static int in_list(const char *list, const char *name)
{
	const char *p = list, *e;

	for (;;) {
		char *item;
		int hit;

		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		item = trimmed(p, e);
		hit = item && strcmp(item, name) == 0;
		free(item);
		if (hit)
			return 1;
		if (!*e)
			return 0;
		p = e + 1;
	}
}

static int list_match(const struct reload_relist *rl, const char *name)
{
	size_t i;

	for (i = 0; i < rl->n; i++)
		if (goregex_match(rl->re[i], name, strlen(name)) == 1)
			return 1;
	return 0;
}

enum reload_verdict reload_should(const struct reload_workload *w, const struct reload_object *o,
				  int auto_all, const char **container)
{
	int t = o->type == RELOAD_SECRET;
	enum reload_ann rk = t ? RA_SEC_RELOAD : RA_CM_RELOAD;
	enum reload_ann ak = t ? RA_SEC_AUTO : RA_CM_AUTO;
	enum reload_ann ek = t ? RA_SEC_EXCLUDE : RA_CM_EXCLUDE;
	const struct reload_ref *ref = find_ref(w, o->type, o->name);
	const char *autov, *typedv;
	int where;

	if (container)
		*container = NULL;
	if (strcmp(o->ns, w->ns) != 0)
		return RELOAD_NO_NAMESPACE;
	if (o->ignore)
		return RELOAD_NO_IGNORED;
	/* All-or-nothing: metadata if it has any of the four keys, else the pod template. */
	where =
	    (w->ann[0][rk] || w->ann[0][ak] || w->ann[0][RA_SEARCH] || w->ann[0][RA_AUTO]) ? 0 : 1;
	if (w->ann[0][ek] && in_list(w->ann[0][ek], o->name))
		return RELOAD_NO_EXCLUDED;
	if (list_match(&w->relist[where][t], o->name)) {
		if (container)
			*container = ref ? ref->container : w->first_container;
		return RELOAD_YES;
	}
	if (w->ann[where][RA_SEARCH] && strcmp(w->ann[where][RA_SEARCH], "true") == 0 && o->match) {
		if (!ref)
			return RELOAD_NO_NOT_USED;
		if (container)
			*container = ref->container;
		return RELOAD_YES;
	}
	autov = w->ann[where][RA_AUTO] ? w->ann[where][RA_AUTO] : "";
	typedv = w->ann[where][ak] ? w->ann[where][ak] : "";
	if (go_true(autov) || go_true(typedv) || (!*autov && !*typedv && auto_all)) {
		if (!ref)
			return RELOAD_NO_NOT_USED;
		if (container)
			*container = ref->container;
		return RELOAD_YES;
	}
	return RELOAD_NO_NOT_SELECTED;
}

const char *reload_recorded(const struct reload_workload *w, const struct reload_object *o,
			    const char *container, enum reload_strategy s)
{
	struct strbuf var = STRBUF_INIT(1024);
	const char *found = NULL;
	size_t i;

	if (s == RELOAD_ANNOTATIONS) {
		if (w->lr_type && w->lr_name && w->lr_hash &&
		    strcmp(w->lr_type, reload_type_upper(o->type)) == 0 &&
		    strcmp(w->lr_name, o->name) == 0)
			return w->lr_hash;
		return NULL;
	}
	if (reload_env_name(&var, o->name, o->type) < 0) {
		sb_free(&var);
		return NULL;
	}
	for (i = 0; i < w->nenv && !found; i++) {
		if (strcmp(w->env[i].name, var.buf) != 0)
			continue;
		if (!container ||
		    (w->env[i].container && strcmp(w->env[i].container, container) == 0))
			found = w->env[i].value;
	}
	sb_free(&var);
	return found;
}

/* ---- patches ---- */

static int env_patch(struct strbuf *sb, const struct reload_trigger *t, size_t n)
{
	char *done = calloc(n, 1);
	int r, firstc = 1;
	size_t i, j;

	if (!done)
		return -ENOMEM;
	r = sb_add(sb, "{\"spec\":{\"template\":{\"spec\":{\"containers\":[");
	for (i = 0; i < n && r == 0; i++) {
		int firste = 1;

		if (done[i] || !t[i].container)
			continue;
		r = sb_addf(sb, "%s{\"name\":", firstc ? "" : ",");
		r = r ? r : sb_add_json_str(sb, t[i].container);
		r = r ? r : sb_add(sb, ",\"env\":[");
		firstc = 0;
		for (j = i; j < n && r == 0; j++) {
			if (done[j] || !t[j].container ||
			    strcmp(t[j].container, t[i].container) != 0)
				continue;
			done[j] = 1;
			r = sb_addf(sb, "%s{\"name\":\"", firste ? "" : ",");
			r = r ? r : reload_env_name(sb, t[j].name, t[j].type);
			r = r ? r : sb_add(sb, "\",\"value\":");
			r = r ? r : sb_add_json_str(sb, t[j].hash);
			r = r ? r : sb_addch(sb, '}');
			firste = 0;
		}
		r = r ? r : sb_add(sb, "]}");
	}
	r = r ? r : sb_add(sb, "]}}}}");
	free(done);
	if (r == 0 && firstc)
		return -EINVAL; /* no trigger had a container */
	return r;
}

static int annotation_patch(struct strbuf *sb, const char *ns, const struct reload_trigger *t,
			    long long now)
{
	struct strbuf v = STRBUF_INIT(8192);
	int r;

	r = sb_addf(&v, "{\"type\":\"%s\",\"name\":", reload_type_upper(t->type));
	r = r ? r : sb_add_json_str(&v, t->name);
	r = r ? r : sb_add(&v, ",\"namespace\":");
	r = r ? r : sb_add_json_str(&v, ns);
	r = r ? r : sb_add(&v, ",\"hash\":");
	r = r ? r : sb_add_json_str(&v, t->hash);
	r = r ? r : sb_add(&v, ",\"containerRefs\":[");
	if (t->container)
		r = r ? r : sb_add_json_str(&v, t->container);
	r = r ? r : sb_addf(&v, "],\"observedAt\":%lld}", now);
	r = r ? r : sb_add(sb, "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{");
	r = r ? r : sb_add_json_str(sb, RELOAD_LAST_RELOADED_FROM);
	r = r ? r : sb_addch(sb, ':');
	r = r ? r : sb_add_json_str(sb, v.buf);
	r = r ? r : sb_add(sb, "}}}}}");
	sb_free(&v);
	return r;
}

int reload_patch_body(struct strbuf *sb, enum reload_strategy s, const char *ns,
		      const struct reload_trigger *t, size_t n, long long now)
{
	if (n == 0)
		return -EINVAL;
	if (s == RELOAD_ANNOTATIONS)
		return annotation_patch(sb, ns, &t[n - 1], now);
	return env_patch(sb, t, n);
}
