/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_api: which kubelet API serves a class: a class document's spec.api (device-plugin, the
 * default, or dra: issue 28), nodeprobe-devices' --api for classes that say none. */
#include <errno.h>
#include <string.h>

#include "devices/devices_internal.h"
#include "log/log.h"
#include "ydoc/ydoc.h"

int devices_api_parse(const char *s, enum devices_api *a)
{
	if (!strcmp(s, "device-plugin"))
		*a = DEVICES_API_DEVICE_PLUGIN;
	else if (!strcmp(s, "dra"))
		*a = DEVICES_API_DRA;
	else
		return -EINVAL;
	return 0;
}

enum devices_api devices_class_api(const struct devices_classes *c, size_t i)
{
	return c->c[i].api;
}

int devices_api_doc(struct devices_classes *c, struct ydoc *y, const char *domain,
		    int (*parse)(struct devices_classes *, struct ydoc *, const char *))
{
	const yaml_node_t *root, *spec, *v;
	size_t from = c->n;
	enum devices_api a;
	const char *s;
	int r = parse(c, y, domain);

	if (r < 0 || !(root = ydoc_root(y)) || !(spec = ydoc_get(y, root, "spec")) ||
	    spec->type != YAML_MAPPING_NODE || !(v = ydoc_get(y, spec, "api")))
		return r;
	s = ydoc_scalar(v);
	if (!s || devices_api_parse(s, &a) < 0)
		return ydoc_fail(y, v, "api '%s': want device-plugin or dra", s ? s : "");
	for (size_t i = from; i < c->n; i++)
		c->c[i].api = a;
	return r;
}
