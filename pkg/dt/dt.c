/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dt: load a devicetree (blob or live directory tree) through libfdt; labels and raw features. */
#include "dt/dt.h"
#include "dt/dt_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libfdt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "feature/feature.h"
#include "label/label.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

#define BUILD_INITIAL (64u << 10) /* first buffer for a tree -> blob build */

int dt_check(const void *buf, size_t size, struct log_err *err)
{
	const void *p;
	int r, len;

	if (size > INT32_MAX)
		size = INT32_MAX;
	r = fdt_check_full(buf, size);
	if (r < 0)
		return log_err_set(err, -EINVAL, "not a valid devicetree blob: %s",
				   fdt_strerror(r));
	p = fdt_getprop(buf, 0, "compatible", &len);
	if (!p || len == 0)
		return DT_NONE;
	if (fdt_stringlist_count(buf, 0, "compatible") < 0)
		return log_err_set(err, -EINVAL, "root compatible is not a list of strings");
	return 0;
}

void dt_blob_free(struct dt_blob *b)
{
	if (!b)
		return;
	free(b->fdt);
	b->fdt = NULL;
	b->size = 0;
}

/* Keep blob buf (malloc'd, size bytes) in out when r == 0, else free it. */
static int keep_or_free(int r, void *buf, size_t size, struct dt_blob *out)
{
	if (r == 0) {
		out->fdt = buf;
		out->size = size;
	} else {
		free(buf);
	}
	return r;
}

int dt_load_file(const char *path, struct dt_blob *out, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(DT_BLOB_MAX);
	struct stat st;
	size_t size;
	char *buf;
	int r;

	out->fdt = NULL;
	out->size = 0;
	/* Refuse a too-large regular file before reading it; the read is capped anyway. */
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > (off_t)DT_BLOB_MAX)
		r = -E2BIG;
	else
		r = sb_read_file(&sb, path);
	if (r < 0)
		sb_free(&sb);
	if (r == -E2BIG)
		return log_err_set(err, r, "%s: larger than %u bytes", path, DT_BLOB_MAX);
	if (r < 0)
		return log_err_set(err, r, "%s: %s", path,
				   r == -EINVAL ? "not a regular file" : strerror(-r));
	size = sb.len;
	buf = sb_take(&sb);
	if (!buf)
		return log_err_set(err, -ENOMEM, "%s: out of memory", path);
	r = dt_check(buf, size, err);
	if (r < 0)
		log_err_wrap(err, "%s", path);
	return keep_or_free(r, buf, size, out);
}

/* ---- live tree -> blob with libfdt's sequential-write API ---- */

struct level {
	struct strbuf names; /* entries of one directory: type byte, name, NUL */
	size_t *off;	     /* start of each entry in names */
	size_t n, cap;	     /* used, allocated entries of off */
};

struct builder {
	char *fdt;			   /* sequential-write buffer, owned */
	size_t size;			   /* its size */
	struct strbuf val;		   /* scratch: one property's bytes */
	struct strbuf path;		   /* current path, for messages */
	struct level lv[DT_DEPTH_MAX + 1]; /* per depth, reused by siblings */
	struct log_err *err;
};

enum { ENT_PROP = 'p', ENT_NODE = 'n', ENT_SKIP = 's' };

static int fdt_err(struct builder *b, int r)
{
	return log_err_set(b->err, -EINVAL, "%s: libfdt: %s", b->path.buf, fdt_strerror(r));
}

/* Double the buffer after -FDT_ERR_NOSPACE. Returns 0 or -E2BIG/-ENOMEM. */
static int grow(struct builder *b)
{
	size_t nsize = b->size * 2;
	char *nbuf;

	if (nsize > DT_BLOB_MAX)
		return log_err_set(b->err, -E2BIG, "%s: tree is larger than %u bytes as a blob",
				   b->path.buf, DT_BLOB_MAX);
	nbuf = malloc(nsize);
	if (!nbuf)
		return log_err_set(b->err, -ENOMEM, "%s: out of memory", b->path.buf);
	if (fdt_resize(b->fdt, nbuf, (int)nsize) < 0) {
		free(nbuf);
		return fdt_err(b, -FDT_ERR_INTERNAL);
	}
	free(b->fdt);
	b->fdt = nbuf;
	b->size = nsize;
	return 0;
}

enum sw_op { SW_RESERVEMAP, SW_BEGIN, SW_PROP, SW_END, SW_FINISH };

/* Run one sequential-write call, growing the buffer while libfdt reports NOSPACE. */
static int sw(struct builder *b, enum sw_op op, const char *name, const void *val, size_t len)
{
	int r, g;

	for (;;) {
		switch (op) {
		case SW_RESERVEMAP:
			r = fdt_finish_reservemap(b->fdt);
			break;
		case SW_BEGIN:
			r = fdt_begin_node(b->fdt, name);
			break;
		case SW_PROP:
			r = fdt_property(b->fdt, name, val, (int)len);
			break;
		case SW_END:
			r = fdt_end_node(b->fdt);
			break;
		default:
			r = fdt_finish(b->fdt);
			break;
		}
		if (r != -FDT_ERR_NOSPACE)
			break;
		g = grow(b);
		if (g < 0)
			return g;
	}
	return r < 0 ? fdt_err(b, r) : 0;
}

static const char *ent_name(const struct level *l, size_t i)
{
	return l->names.buf + l->off[i] + 1;
}

static char ent_type(const struct level *l, size_t i)
{
	return l->names.buf[l->off[i]];
}

static int cmp_ent(const void *a, const void *b, void *names)
{
	const char *base = names;

	return strcmp(base + *(const size_t *)a + 1, base + *(const size_t *)b + 1);
}

/* Read directory d's entries into l, sorted by name, classified without following symlinks. */
static int read_dir(struct builder *b, DIR *d, struct level *l)
{
	struct dirent *de;
	struct stat st;
	char type;
	int r;

	sb_reset(&l->names);
	l->n = 0;
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_type == DT_DIR) {
			type = ENT_NODE;
		} else if (de->d_type == DT_REG) {
			type = ENT_PROP;
		} else if (de->d_type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				return log_err_set(b->err, -errno, "%s/%s: %s", b->path.buf,
						   de->d_name, strerror(errno));
			type = ENT_SKIP;
			if (S_ISDIR(st.st_mode))
				type = ENT_NODE;
			else if (S_ISREG(st.st_mode))
				type = ENT_PROP;
		} else {
			type = ENT_SKIP;
		}
		if (type == ENT_SKIP) {
			log_warn("%s/%s: not a regular file or directory, skipped", b->path.buf,
				 de->d_name);
			continue;
		}
		if (l->n == l->cap) {
			size_t ncap = l->cap ? l->cap * 2 : 64;
			size_t *noff = realloc(l->off, ncap * sizeof(*noff));

			if (!noff)
				return log_err_set(b->err, -ENOMEM, "out of memory");
			l->off = noff;
			l->cap = ncap;
		}
		l->off[l->n] = l->names.len;
		r = sb_addch(&l->names, type);
		if (r == 0)
			r = sb_addn(&l->names, de->d_name, strlen(de->d_name) + 1);
		if (r < 0)
			return log_err_set(b->err, r, "%s: too many entries", b->path.buf);
		l->n++;
	}
	if (errno)
		return log_err_set(b->err, -errno, "%s: %s", b->path.buf, strerror(errno));
	if (l->n > 1)
		qsort_r(l->off, l->n, sizeof(*l->off), cmp_ent, l->names.buf);
	return 0;
}

/* The kernel's "name" property that merely repeats the node name (up to '@'). */
static bool redundant_name(const char *node, const struct strbuf *val)
{
	size_t base = strcspn(node, "@");

	return val->len == base + 1 && memcmp(val->buf, node, base) == 0 && val->buf[base] == '\0';
}

static int add_props(struct builder *b, int dfd, const struct level *l, const char *node)
{
	size_t i;
	int r;

	for (i = 0; i < l->n; i++) {
		const char *name = ent_name(l, i);

		if (ent_type(l, i) != ENT_PROP)
			continue;
		sb_reset(&b->val);
		r = sb_read_fileat(&b->val, dfd, name);
		if ((r == -EACCES || r == -EPERM) && strncmp(name, "security-", 9) == 0) {
			/* The kernel makes security-* properties root-only (drivers/of/kobj.c). */
			log_debug("%s/%s: not readable, skipped", b->path.buf, name);
			continue;
		}
		if (r == -E2BIG)
			return log_err_set(b->err, r, "%s/%s: property larger than %u bytes",
					   b->path.buf, name, DT_PROP_MAX);
		if (r < 0)
			return log_err_set(b->err, r, "%s/%s: %s", b->path.buf, name, strerror(-r));
		if (strcmp(name, "name") == 0 && redundant_name(node, &b->val))
			continue;
		r = sw(b, SW_PROP, name, b->val.buf, b->val.len);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Emit node name (directory dfd, owned and closed here) and its subtree. */
static int add_node(struct builder *b, int dfd, const char *name, int depth)
{
	struct level *l = &b->lv[depth];
	size_t plen = b->path.len, i;
	DIR *d;
	int r;

	d = fdopendir(dfd);
	if (!d) {
		r = -errno;
		close(dfd);
		return log_err_set(b->err, r, "%s: %s", b->path.buf, strerror(-r));
	}
	r = sw(b, SW_BEGIN, name, NULL, 0);
	if (r == 0)
		r = read_dir(b, d, l);
	if (r == 0)
		r = add_props(b, dirfd(d), l, name);
	for (i = 0; r == 0 && i < l->n; i++) {
		const char *sub = ent_name(l, i);
		int fd;

		if (ent_type(l, i) != ENT_NODE)
			continue;
		r = sb_addch(&b->path, '/');
		if (r == 0)
			r = sb_add(&b->path, sub);
		if (r < 0) {
			r = log_err_set(b->err, r, "%s: path too long", b->path.buf);
			break;
		}
		if (depth + 1 > DT_DEPTH_MAX) {
			r = log_err_set(b->err, -ELOOP, "%s: nodes nest deeper than %d",
					b->path.buf, DT_DEPTH_MAX);
			break;
		}
		fd = openat(dirfd(d), sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			r = log_err_set(b->err, -errno, "%s: %s", b->path.buf, strerror(errno));
			break;
		}
		r = add_node(b, fd, sub, depth + 1);
		sb_truncate(&b->path, plen);
	}
	closedir(d);
	if (r < 0)
		return r;
	return sw(b, SW_END, NULL, NULL, 0);
}

static int build(struct builder *b, int dfd)
{
	int r;

	b->size = BUILD_INITIAL;
	b->fdt = malloc(b->size);
	if (!b->fdt) {
		close(dfd);
		return log_err_set(b->err, -ENOMEM, "out of memory");
	}
	/* No name dedup: its linear search per property costs more than the bytes it saves. */
	r = fdt_create_with_flags(b->fdt, (int)b->size, FDT_CREATE_FLAG_NO_NAME_DEDUP);
	if (r < 0) {
		close(dfd);
		return fdt_err(b, r);
	}
	r = sw(b, SW_RESERVEMAP, NULL, NULL, 0);
	if (r < 0) {
		close(dfd);
		return r;
	}
	r = add_node(b, dfd, "", 0);
	if (r < 0)
		return r;
	return sw(b, SW_FINISH, NULL, NULL, 0);
}

int dt_load_tree(const char *dir, struct dt_blob *out, struct log_err *err)
{
	struct builder b = {.err = err};
	size_t i;
	int dfd, r;

	out->fdt = NULL;
	out->size = 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == ENOENT)
			return DT_NONE;
		return log_err_set(err, -errno, "%s: %s", dir, strerror(errno));
	}
	sb_init(&b.val, DT_PROP_MAX);
	sb_init(&b.path, 4096);
	for (i = 0; i <= DT_DEPTH_MAX; i++)
		sb_init(&b.lv[i].names, DT_BLOB_MAX);
	r = sb_add(&b.path, dir);
	if (r < 0) {
		close(dfd);
		r = log_err_set(err, r, "%s: path too long", dir);
	} else {
		r = build(&b, dfd);
	}
	if (r == 0) {
		r = dt_check(b.fdt, b.size, err);
		if (r < 0)
			log_err_wrap(err, "%s", dir);
	}
	r = keep_or_free(r, b.fdt, b.size, out);
	sb_free(&b.val);
	sb_free(&b.path);
	for (i = 0; i <= DT_DEPTH_MAX; i++) {
		sb_free(&b.lv[i].names);
		free(b.lv[i].off);
	}
	return r;
}

/* ---- scanning: one walk over a validated blob serves labels and features ---- */

struct walk {
	const void *fdt;
	int off;		       /* current node */
	int depth;		       /* its depth (root = 0) */
	const char *name;	       /* its name, NUL-terminated in the blob */
	bool enabled;		       /* it and every ancestor have status okay/ok/absent */
	struct strbuf path;	       /* its path */
	size_t plen[DT_DEPTH_MAX + 2]; /* path length at each depth */
	bool en[DT_DEPTH_MAX + 2];     /* enabled at each depth */
};

static bool status_ok(const void *fdt, int off)
{
	int len;
	const char *s = fdt_getprop(fdt, off, "status", &len);
	size_t n;

	if (!s)
		return true;
	n = strnlen(s, (size_t)len);
	return (n == 4 && memcmp(s, "okay", 4) == 0) || (n == 2 && memcmp(s, "ok", 2) == 0);
}

static void walk_init(struct walk *w, const void *fdt)
{
	memset(w, 0, sizeof(*w));
	w->fdt = fdt;
	w->off = -1;
	sb_init(&w->path, DT_BLOB_MAX);
}

/*
 * Advance to the next node (the root first). Returns 1 with w's fields set, 0
 * at the end, -ENOMEM. Nodes deeper than DT_DEPTH_MAX are passed over.
 */
static int walk_next(struct walk *w)
{
	int len, r;

	for (;;) {
		if (w->off < 0) {
			w->off = 0;
			w->depth = 0;
		} else {
			w->off = fdt_next_node(w->fdt, w->off, &w->depth);
			if (w->off < 0 || w->depth <= 0)
				return 0;
		}
		if (w->depth > DT_DEPTH_MAX)
			continue;
		w->name = fdt_get_name(w->fdt, w->off, &len);
		if (!w->name)
			continue;
		if (w->depth == 0) {
			sb_reset(&w->path);
			r = sb_add(&w->path, "/");
			w->plen[0] = 0; /* children append "/name" to "" */
			w->en[0] = status_ok(w->fdt, w->off);
		} else {
			sb_truncate(&w->path, w->plen[w->depth - 1]);
			r = sb_addch(&w->path, '/');
			if (r == 0)
				r = sb_addn(&w->path, w->name, (size_t)len);
			w->plen[w->depth] = w->path.len;
			w->en[w->depth] = w->en[w->depth - 1] && status_ok(w->fdt, w->off);
		}
		if (r < 0)
			return r;
		w->enabled = w->en[w->depth];
		return 1;
	}
}

static void walk_free(struct walk *w)
{
	sb_free(&w->path);
}

/* The compatible strings of node off: first string in *list, total bytes in *len; 0 if none. */
static int compat_list(const struct walk *w, const char **list, int *len)
{
	*list = fdt_getprop(w->fdt, w->off, "compatible", len);
	if (!*list || *len <= 0)
		return 0;
	if (fdt_stringlist_count(w->fdt, w->off, "compatible") < 0) {
		log_warn("devicetree %s: compatible is not a list of strings, skipped",
			 w->path.buf);
		return 0;
	}
	return 1;
}

bool dt_name_matches(const char *name, const char *want)
{
	size_t n = strlen(want);

	if (strncmp(name, want, n) != 0)
		return false;
	name += n;
	if (*name == '\0')
		return true;
	while (*name >= '0' && *name <= '9')
		name++;
	return *name == '@';
}

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int dt_label_name(const char *compat, char *out, size_t outsz)
{
	const char *comma = strchr(compat, ',');
	const char *s = compat;
	size_t n = 0, keep = 0, limit = outsz ? outsz - 1 : 0;

	if (limit > LABEL_NAME_MAX)
		limit = LABEL_NAME_MAX;
	if (comma && comma - compat == 4 && memcmp(compat, "xlnx", 4) == 0) {
		memcpy(out, "xilinx", limit < 6 ? limit : 6);
		n = keep = 6;
		s = comma;
	}
	for (; *s; s++) {
		char c = *s;

		if (c == ',')
			c = '-';
		else if (!alnum(c) && c != '.' && c != '_' && c != '-')
			c = '_';
		if (n == 0 && !alnum(c))
			continue; /* leading non-alphanumerics are dropped */
		if (n < limit)
			out[n] = c;
		n++;
		if (alnum(c))
			keep = n;
	}
	if (keep == 0 || keep > LABEL_NAME_MAX || keep > limit) {
		if (outsz)
			out[0] = '\0';
		return -EINVAL;
	}
	out[keep] = '\0';
	return (int)keep;
}

struct count {
	char name[LABEL_NAME_MAX + 1];
	unsigned n;
};

struct counts {
	struct count *v;
	size_t n, cap;
};

static int count_add(struct counts *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (strcmp(c->v[i].name, name) == 0) {
			c->v[i].n++;
			return 0;
		}
	}
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		struct count *nv = realloc(c->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		c->v = nv;
		c->cap = ncap;
	}
	strcpy(c->v[c->n].name, name);
	c->v[c->n].n = 1;
	c->n++;
	return 0;
}

static bool selected(const char *name, const char *const *names, size_t n_names)
{
	static const char *const defaults[] = {"cpu", "gpu"};
	size_t i;

	for (i = 0; i < 2; i++)
		if (dt_name_matches(name, defaults[i]))
			return true;
	for (i = 0; i < n_names; i++)
		if (names[i] && names[i][0] && dt_name_matches(name, names[i]))
			return true;
	return false;
}

/* Count every compatible string of the current node. */
static int count_node(const struct walk *w, struct counts *c)
{
	char lname[LABEL_NAME_MAX + 1];
	const char *list, *s;
	int len, r;

	if (!compat_list(w, &list, &len))
		return 0;
	for (s = list; s < list + len; s += strlen(s) + 1) {
		if (dt_label_name(s, lname, sizeof(lname)) < 0) {
			log_warn("devicetree %s: compatible \"%s\" cannot be a label name, skipped",
				 w->path.buf, s);
			continue;
		}
		r = count_add(c, lname);
		if (r < 0)
			return r;
	}
	return 0;
}

int dt_labels(const void *fdt, const char *const *names, size_t n_names, struct label_set *ls,
	      struct log_err *err)
{
	char key[sizeof(DT_LABEL_PREFIX) + LABEL_NAME_MAX], val[16];
	struct counts c = {0};
	struct walk w;
	size_t i;
	int r;

	walk_init(&w, fdt);
	while ((r = walk_next(&w)) > 0) {
		if (!w.enabled)
			continue;
		if (w.depth > 0 && !selected(w.name, names, n_names))
			continue;
		r = count_node(&w, &c);
		if (r < 0)
			break;
	}
	for (i = 0; r == 0 && i < c.n; i++) {
		snprintf(key, sizeof(key), "%s%s", DT_LABEL_PREFIX, c.v[i].name);
		snprintf(val, sizeof(val), "%u", c.v[i].n);
		r = label_set_put(ls, key, val, err);
	}
	walk_free(&w);
	free(c.v);
	if (r < 0)
		return r == -ENOMEM ? log_err_set(err, r, "devicetree: out of memory") : r;
	return (int)c.n;
}

/* The first string of property prop of node off, or NULL. */
static const char *first_string(const void *fdt, int off, const char *prop)
{
	int len;
	const char *s = fdt_getprop(fdt, off, prop, &len);

	if (!s || len <= 0 || fdt_stringlist_count(fdt, off, prop) < 1)
		return NULL;
	return s;
}

static int root_features(const void *fdt, struct feat_set *fs)
{
	static const char *const attrs[] = {"compatible", "model", "chassis-type"};
	const char *s, *list;
	size_t i;
	int len, r;

	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		s = first_string(fdt, 0, attrs[i]);
		if (!s)
			continue;
		r = feat_attr_set(fs, "dt.root", attrs[i], s);
		if (r < 0)
			return r;
	}
	list = fdt_getprop(fdt, 0, "compatible", &len);
	if (!list || fdt_stringlist_count(fdt, 0, "compatible") < 1)
		return 0;
	for (s = list; s < list + len; s += strlen(s) + 1) {
		if (!*s)
			continue;
		r = feat_flag_add(fs, "dt.compatible", s);
		if (r < 0)
			return r;
	}
	return 0;
}

static int node_feature(const struct walk *w, struct feat_set *fs, struct strbuf *all)
{
	const char *list, *s;
	struct feat *inst;
	int len, r;

	if (!compat_list(w, &list, &len))
		return 0;
	sb_reset(all);
	for (s = list; s < list + len; s += strlen(s) + 1) {
		if (!*s)
			continue;
		r = all->len ? sb_addch(all, ' ') : 0;
		if (r == 0)
			r = sb_add(all, s);
		if (r < 0)
			return r;
	}
	inst = feat_instance_add(fs, "dt.node");
	if (!inst)
		return -ENOMEM;
	r = feat_instance_set(inst, "name", w->name);
	if (r == 0)
		r = feat_instance_set(inst, "path", w->path.buf);
	if (r == 0)
		r = feat_instance_set(inst, "compatible", list);
	if (r == 0)
		r = feat_instance_set(inst, "compatibles", all->buf);
	return r;
}

int dt_features(const void *fdt, struct feat_set *fs, struct log_err *err)
{
	struct strbuf all = STRBUF_INIT(DT_BLOB_MAX);
	struct walk w;
	int r;

	r = root_features(fdt, fs);
	walk_init(&w, fdt);
	while (r == 0 && (r = walk_next(&w)) > 0) {
		r = 0;
		if (w.depth > 0 && w.enabled)
			r = node_feature(&w, fs, &all);
	}
	walk_free(&w);
	sb_free(&all);
	if (r < 0)
		return log_err_set(err, r, "devicetree features: %s", strerror(-r));
	return 0;
}
