/* SPDX-License-Identifier: GPL-2.0-or-later */
/* label: Kubernetes label key/value validation and a sorted set of labels. */
#include "label/label.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kvmap/kvmap.h"
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

struct label_set {
	struct kvmap m; /* key -> value, sorted by key */
};

struct label_set *label_set_new(void)
{
	return calloc(1, sizeof(struct label_set));
}

void label_set_free(struct label_set *ls)
{
	if (!ls)
		return;
	kvmap_free(&ls->m);
	free(ls);
}

int label_set_put(struct label_set *ls, const char *key, const char *value, struct log_err *err)
{
	if (!label_key_valid_prefixed(key))
		return log_err_set(err, -EINVAL, "invalid label key '%s'", key);
	if (!label_value_valid(value))
		return log_err_set(err, -EINVAL, "invalid value '%s' for label '%s'", value, key);
	return kvmap_set(&ls->m, key, value);
}

const char *label_set_get(const struct label_set *ls, const char *key)
{
	return kvmap_get(&ls->m, key);
}

int label_set_del(struct label_set *ls, const char *key)
{
	return kvmap_del(&ls->m, key);
}

size_t label_set_count(const struct label_set *ls)
{
	return ls->m.n;
}

void label_set_at(const struct label_set *ls, size_t i, const char **key, const char **value)
{
	*key = ls->m.v[i].key;
	*value = ls->m.v[i].value;
}

int label_set_format(const struct label_set *ls, struct strbuf *out)
{
	size_t i;
	int r;

	for (i = 0; i < ls->m.n; i++) {
		r = sb_addf(out, "%s=%s\n", ls->m.v[i].key, ls->m.v[i].value);
		if (r < 0)
			return r;
	}
	return 0;
}
