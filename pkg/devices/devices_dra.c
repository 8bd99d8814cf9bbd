/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devices_dra: the classes whose api is dra (issue 28). Each device of such a class is a device of
 * our pool (the node's name) named "<class>-<device>" as a DNS label; hooks/devices/dra.c serves
 * them over pkg/dra (another layer). ../shared/reference/dra.md.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "devices/devices_internal.h"
#include "log/log.h"

int devices_dra_name(const char *cls, const char *dev, char *out, size_t cap)
{
	size_t at = 0;
	char buf[512];

	if (cap < 2)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s-%s", cls, dev);
	for (const char *p = buf; *p && at + 1 < cap && at < 63; p++) {
		char ch = (char)tolower((unsigned char)*p);

		if (!isalnum((unsigned char)ch))
			ch = '-';
		if (ch == '-' && (at == 0 || out[at - 1] == '-'))
			continue;
		out[at++] = ch;
	}
	while (at && out[at - 1] == '-')
		at--;
	out[at] = 0;
	return at ? 0 : -EINVAL;
}

bool devices_dra_is(const struct devices_classes *c, size_t i, enum devices_api dflt)
{
	enum devices_api a = c->c[i].api;

	return (a == DEVICES_API_UNSET ? dflt : a) == DEVICES_API_DRA;
}

bool devices_dra_any(const struct devices_classes *c, enum devices_api dflt)
{
	for (size_t i = 0; i < c->n; i++)
		if (devices_dra_is(c, i, dflt))
			return true;
	return false;
}

int devices_dra_check(const struct devices_classes *c, enum devices_api dflt, struct log_err *err)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct dclass *k = &c->c[i];

		if (!devices_dra_is(c, i, dflt))
			continue;
		for (size_t g = 0; g < k->ng; g++)
			if (k->g[g].count > 1)
				return log_err_set(
				    err, -EINVAL,
				    "class %s: api: dra with count %u: shares are a device-plugin "
				    "scheme; in DRA several claims share a device through the API "
				    "(adminAccess, consumable capacity), which nodeprobe-devices does "
				    "not offer yet: use api: device-plugin for this class",
				    k->name, k->g[g].count);
	}
	return 0;
}

const struct devices_dev *devices_dra_find(const struct devices_classes *c,
					   const struct devices_found *const *f, const char *device)
{
	char name[64];

	for (size_t i = 0; i < c->n; i++)
		for (size_t k = 0; f[i] && k < f[i]->n; k++)
			if (devices_dra_name(c->c[i].name, f[i]->d[k].name, name, sizeof(name)) ==
				0 &&
			    !strcmp(name, device))
				return &f[i]->d[k];
	return NULL;
}
