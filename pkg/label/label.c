/* SPDX-License-Identifier: GPL-2.0-or-later */
/* label: Kubernetes label key/value validation and a sorted set of labels. */
#include "label/label.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log/log.h"
#include "strbuf/strbuf.h"

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], n characters, 1..max. */
static bool name_ok(const char *s, size_t n, size_t max)
{
	size_t i;

	if (n == 0 || n > max || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (i = 1; i + 1 < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/*
 * DNS-1123 subdomain (k8s IsDNS1123Subdomain): parts [a-z0-9]([-a-z0-9]*[a-z0-9])?
 * joined by '.', at most 253 in all; no limit per part (unlike a DNS-1123 label).
 */
static bool subdomain_ok(const char *s, size_t n)
{
	size_t i, start = 0;

	if (n == 0 || n > LABEL_PREFIX_MAX)
		return false;
	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			char c = s[i];

			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
				return false;
			continue;
		}
		if (i == start || s[start] == '-' || s[i - 1] == '-')
			return false;
		start = i + 1;
	}
	return true;
}

bool label_key_valid(const char *key)
{
	const char *slash = strchr(key, '/');

	if (!slash)
		return name_ok(key, strlen(key), LABEL_NAME_MAX);
	if (strchr(slash + 1, '/'))
		return false;
	return subdomain_ok(key, (size_t)(slash - key)) &&
	       name_ok(slash + 1, strlen(slash + 1), LABEL_NAME_MAX);
}

bool label_key_valid_prefixed(const char *key)
{
	return strchr(key, '/') && label_key_valid(key);
}

bool label_value_valid(const char *value)
{
	size_t n = strlen(value);

	return n == 0 || name_ok(value, n, LABEL_VALUE_MAX);
}

struct label {
	char *key;   /* owned */
	char *value; /* owned */
};

struct label_set {
	struct label *v; /* sorted by key */
	size_t n;	 /* used */
	size_t cap;	 /* allocated */
};

struct label_set *label_set_new(void)
{
	return calloc(1, sizeof(struct label_set));
}

void label_set_free(struct label_set *ls)
{
	size_t i;

	if (!ls)
		return;
	for (i = 0; i < ls->n; i++) {
		free(ls->v[i].key);
		free(ls->v[i].value);
	}
	free(ls->v);
	free(ls);
}

/* Index of key, or -(insertion point) - 1. */
static long find(const struct label_set *ls, const char *key)
{
	size_t lo = 0, hi = ls->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(ls->v[mid].key, key);

		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

int label_set_put(struct label_set *ls, const char *key, const char *value, struct log_err *err)
{
	char *k = NULL, *v = NULL;
	long at;
	size_t pos;

	if (!label_key_valid_prefixed(key))
		return log_err_set(err, -EINVAL, "invalid label key '%s'", key);
	if (!label_value_valid(value))
		return log_err_set(err, -EINVAL, "invalid value '%s' for label '%s'", value, key);
	v = strdup(value);
	if (!v)
		return -ENOMEM;
	at = find(ls, key);
	if (at >= 0) {
		free(ls->v[at].value);
		ls->v[at].value = v;
		return 0;
	}
	k = strdup(key);
	if (!k)
		goto nomem;
	if (ls->n == ls->cap) {
		size_t ncap = ls->cap ? ls->cap * 2 : 16;
		struct label *nv = realloc(ls->v, ncap * sizeof(*nv));

		if (!nv)
			goto nomem;
		ls->v = nv;
		ls->cap = ncap;
	}
	pos = (size_t)(-at - 1);
	memmove(&ls->v[pos + 1], &ls->v[pos], (ls->n - pos) * sizeof(*ls->v));
	ls->v[pos].key = k;
	ls->v[pos].value = v;
	ls->n++;
	return 0;
nomem:
	free(k);
	free(v);
	return -ENOMEM;
}

const char *label_set_get(const struct label_set *ls, const char *key)
{
	long at = find(ls, key);

	return at >= 0 ? ls->v[at].value : NULL;
}

int label_set_del(struct label_set *ls, const char *key)
{
	long at = find(ls, key);

	if (at < 0)
		return 0;
	free(ls->v[at].key);
	free(ls->v[at].value);
	memmove(&ls->v[at], &ls->v[at + 1], (ls->n - (size_t)at - 1) * sizeof(*ls->v));
	ls->n--;
	return 1;
}

size_t label_set_count(const struct label_set *ls)
{
	return ls->n;
}

void label_set_at(const struct label_set *ls, size_t i, const char **key, const char **value)
{
	*key = ls->v[i].key;
	*value = ls->v[i].value;
}

int label_set_format(const struct label_set *ls, struct strbuf *out)
{
	size_t i;
	int r;

	for (i = 0; i < ls->n; i++) {
		r = sb_addf(out, "%s=%s\n", ls->v[i].key, ls->v[i].value);
		if (r < 0)
			return r;
	}
	return 0;
}
