/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_base: string lists and the read-error and symbolic-link messages, the bottom of
 * pkg/mirror (calls no one). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"
#include "mirror/mirror_internal.h"

int mirror_list_add(struct mirror_list *l, const char *s)
{
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
	char *c;

	if (!v)
		return -ENOMEM;
	l->v = v;
	c = strdup(s);
	if (!c)
		return -ENOMEM;
	l->v[l->n++] = c;
	return 0;
}

int mirror_list_add_split(struct mirror_list *l, const char *s)
{
	char buf[4096];
	size_t n;
	int r;

	while (*s) {
		while (*s == ',' || isspace((unsigned char)*s))
			s++;
		n = strcspn(s, ", \t\n\r");
		if (n == 0)
			break;
		if (n >= sizeof(buf))
			return -E2BIG;
		memcpy(buf, s, n);
		buf[n] = '\0';
		r = mirror_list_add(l, buf);
		if (r < 0)
			return r;
		s += n;
	}
	return 0;
}

bool mirror_listed(const struct mirror_list *l, const char *name)
{
	size_t i;

	for (i = 0; l && i < l->n; i++)
		if (!strcmp(l->v[i], name))
			return true;
	return false;
}

void mirror_list_free(struct mirror_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int mirror_read_error(struct log_err *err, const char *path, int r, size_t cap)
{
	if (r == -E2BIG)
		return log_err_set(err, r, "%s: file too large (over %zu KiB)", path, cap / 1024);
	return log_err_set(err, r, "%s: %s", path, strerror(-r));
}

int mirror_refuse_link(const char *path, const char *why, struct log_err *err)
{
	char to[PATH_MAX];
	ssize_t n = readlink(path, to, sizeof(to) - 1);

	to[n < 0 ? 0 : n] = '\0';
	return log_err_set(err, -ELOOP, "%s is a symbolic link (to %s)%s", path, to, why);
}
