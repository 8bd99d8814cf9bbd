/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_cmd: the verbs of nodeprobe-mirror as a table, and the one call its main makes (the top
 * of pkg/mirror). Calls config, watch, apply, restore, check, talos. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "log/log.h"
#include "mirror/mirror_internal.h"

static int configure(const struct mirror_opts *o, struct log_err *err)
{
	return mirror_configure(o, false, err);
}

/* One verb, at the index of its enum mirror_cmd. */
static const struct verb {
	const char *name; /* as on the command line */
	bool locked;	  /* takes turns with the other writers of the config path (mirror_lock) */
	int (*run)(const struct mirror_opts *o, struct log_err *err);
} verbs[] = {
    [MIRROR_CONFIGURE] = {"configure", true, configure},
    [MIRROR_CLEANUP] = {"cleanup", true, mirror_cleanup},
    [MIRROR_CHECK] = {"check", false, mirror_check_run},
    [MIRROR_WATCH] = {"watch", false, mirror_watch_run},
    [MIRROR_TALOS_CONFIG] = {"talos-config", false, mirror_talos_config},
};

#define NVERBS (sizeof(verbs) / sizeof(verbs[0]))

int mirror_cmd_parse(const char *name)
{
	size_t i;

	for (i = 0; name && i < NVERBS; i++)
		if (!strcmp(name, verbs[i].name))
			return (int)i;
	return -EINVAL;
}

int mirror_run(struct mirror_opts *o, struct log_err *err)
{
	const struct verb *v = (unsigned)o->cmd < NVERBS ? &verbs[o->cmd] : NULL;
	int lock, r;

	if (!v)
		return log_err_set(err, -EINVAL, "unknown command");
	if (!v->locked)
		return v->run(o, err);
	lock = mirror_lock(o->config_path, err);
	if (lock < 0)
		return lock;
	r = v->run(o, err);
	mirror_unlock(lock);
	return r;
}

int mirror_exec(struct mirror_opts *o, struct log_err *err)
{
	int r = mirror_opts_resolve(o, err);

	return r < 0 ? r : mirror_run(o, err);
}
