/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_opt: the class options nodeprobe and nodeprobe-devices share (one parser, so the
 * labels nodeprobe writes and the resources nodeprobe-devices serves come from one definition),
 * and the classes they name (devices_load). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/devices_internal.h"
#include "log/log.h"

static int push(const char *const **arr, size_t *n, const char *s)
{
	const char **a = realloc((void *)*arr, (*n + 1) * sizeof(*a));

	if (!a)
		return -1;
	a[(*n)++] = s;
	*arr = a;
	return 0;
}

int devices_opt(struct devices_opts *o, int id, const char *arg, char *msg, int msglen)
{
	char *end;

	switch (id) {
	case DEVICES_OPT_DEVICE:
		if (push(&o->device, &o->n_device, arg) < 0)
			break;
		return 0;
	case DEVICES_OPT_PRESET:
		if (push(&o->preset, &o->n_preset, arg) < 0)
			break;
		return 0;
	case DEVICES_OPT_DOMAIN:
		o->domain = arg;
		return 0;
	case DEVICES_OPT_CLASSES:
		o->classes_file = arg;
		return 0;
	case DEVICES_OPT_SHARED:
		errno = 0;
		o->po.shared_dev_num = (unsigned)strtoul(arg, &end, 10);
		if (*end || !arg[0] || errno || o->po.shared_dev_num < 1 ||
		    o->po.shared_dev_num > DEVICES_COUNT_MAX) {
			snprintf(msg, (size_t)msglen, "--shared-dev-num '%s': want 1 to %d", arg,
				 DEVICES_COUNT_MAX);
			return -1;
		}
		return 0;
	case DEVICES_OPT_POLICY:
		if (devices_policy_parse(arg, &o->po.policy) < 0) {
			snprintf(msg, (size_t)msglen,
				 "--allocation-policy '%s': want none, balanced or packed", arg);
			return -1;
		}
		return 0;
	default:
		snprintf(msg, (size_t)msglen, "unhandled option");
		return -1;
	}
	snprintf(msg, (size_t)msglen, "out of memory");
	return -1;
}

bool devices_opts_any(const struct devices_opts *o)
{
	return o->n_device || o->n_preset || o->classes_file;
}

void devices_opts_free(struct devices_opts *o)
{
	free((void *)o->device);
	free((void *)o->preset);
	o->device = o->preset = NULL;
	o->n_device = o->n_preset = 0;
}

int devices_load(const struct devices_opts *o, struct devices_classes **out, struct log_err *err)
{
	struct devices_classes *c = devices_classes_new();
	size_t i;
	int r = 0;

	*out = NULL;
	if (!c)
		return log_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < o->n_device && r >= 0; i++)
		r = devices_add_squat(c, o->device[i], o->domain, err);
	for (i = 0; i < o->n_preset && r >= 0; i++)
		r = devices_add_preset(c, o->preset[i], o->domain, &o->po, err);
	if (r >= 0 && o->classes_file)
		r = devices_load_file(c, o->classes_file, o->domain, err);
	if (r >= 0 && !c->n)
		r = log_err_set(err, -EINVAL,
				"no device class: give --device, --preset or --classes");
	if (r < 0) {
		devices_classes_free(c);
		return r == -ENOMEM ? r : -EINVAL;
	}
	*out = c;
	return 0;
}
