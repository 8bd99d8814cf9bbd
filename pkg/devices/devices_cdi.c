/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices_cdi: a class's CDI spec (CDI SPEC.md: cdiVersion, kind, devices[].containerEdits), and
 * its file in the CDI directory. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "devices/devices_internal.h"
#include "fsutil/fsutil.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

#define OWNER_KEY  "nodeprobe.io/written-by" /* the annotation our 0.6.0 specs carried */
#define OWNER_VAL  "nodeprobe-devices"
#define DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER)
#define FIRST	   "{\n  \"cdiVersion\": " /* how our specs begin */

int devices_cdi_class(const char *name, char *out, size_t size)
{
	size_t n = 0;

	if (size < 2)
		return -ENAMETOOLONG;
	if (!isalpha((unsigned char)name[0]))
		out[n++] = 'c';
	for (; *name && n + 1 < size; name++)
		out[n++] =
		    isalnum((unsigned char)*name) || *name == '-' || *name == '_' ? *name : '_';
	out[n] = 0;
	if (*name)
		return -ENAMETOOLONG;
	while (n && !isalnum((unsigned char)out[n - 1]))
		out[--n] = 0;
	return n ? 0 : -EINVAL;
}

static json_t *edits(const struct devices_dev *d)
{
	json_t *e = json_object(), *nodes = json_array(), *mounts = json_array();
	size_t i;

	for (i = 0; i < d->n_nodes; i++) {
		const struct devices_node *x = &d->nodes[i];

		if (x->mount)
			json_array_append_new(
			    mounts, json_pack("{s:s, s:s, s:[s,s,s,s], s:s}", "hostPath", x->host,
					      "containerPath", x->container, "options",
					      x->read_only ? "ro" : "rw", "nosuid", "nodev",
					      "rbind", "type", "bind"));
		else
			json_array_append_new(nodes, json_pack("{s:s, s:s, s:s}", "path",
							       x->container, "hostPath", x->host,
							       "permissions", x->perms));
	}
	if (json_array_size(nodes))
		json_object_set(e, "deviceNodes", nodes);
	if (json_array_size(mounts))
		json_object_set(e, "mounts", mounts);
	json_decref(nodes);
	json_decref(mounts);
	return e;
}

int devices_cdi_json(const struct devices_found *f, const char *cls_name, char **out)
{
	json_t *spec, *devs = json_array();
	char kind[300];
	size_t i;

	*out = NULL;
	snprintf(kind, sizeof(kind), "%s/%s", DEVICES_CDI_VENDOR, cls_name);
	for (i = 0; devs && i < f->n; i++)
		json_array_append_new(devs, json_pack("{s:s, s:o}", "name", f->d[i].name,
						      "containerEdits", edits(&f->d[i])));
	spec = json_pack("{s:s, s:s, s:o}", "cdiVersion", DEVICES_CDI_VERSION, "kind", kind,
			 "devices", devs);
	if (!spec)
		return -ENOMEM;
	*out = json_dumps(spec, DUMP_FLAGS);
	json_decref(spec);
	if (!*out)
		return -ENOMEM;
	return (int)strlen(*out);
}

/*
 * True when path is a spec we wrote. CDI 0.5.0 has no annotations (and consumers on the CDI
 * library before 0.6.0, such as Debian bookworm's 0.5.2, refuse a spec with an unknown field or a
 * cdiVersion they do not know: test/bats/devices-cdi.bats), so a spec of ours
 * is recognised by its shape: our kind, and exactly what our writer makes of its own content
 * (cdiVersion, kind, devices, in that order, dumped byte for byte as devices_cdi_json dumps it).
 * A spec with our 0.6.0 annotation (an older nodeprobe-devices) is ours too.
 */
static bool ours(const char *path, const char *kind)
{
	struct strbuf sb = STRBUF_INIT(1 << 20);
	json_t *j = NULL, *a;
	bool yes = false;
	char *again = NULL;

	if (sb_read_file(&sb, path) < 0 || !(j = json_loads(sb.buf, 0, NULL)) ||
	    !json_is_string(json_object_get(j, "kind")) ||
	    strcmp(json_string_value(json_object_get(j, "kind")), kind))
		goto out;
	a = json_object_get(json_object_get(j, "annotations"), OWNER_KEY);
	if (json_is_string(a) && !strcmp(json_string_value(a), OWNER_VAL)) {
		yes = true;
		goto out;
	}
	again = json_object_size(j) == 3 && json_object_get(j, "cdiVersion") &&
			json_is_array(json_object_get(j, "devices"))
		    ? json_dumps(j, DUMP_FLAGS)
		    : NULL;
	yes = again && !strcmp(again, sb.buf) && !strncmp(sb.buf, FIRST, strlen(FIRST));
out:
	free(again);
	json_decref(j);
	sb_free(&sb);
	return yes;
}

int devices_cdi_write(const char *dir, const struct devices_found *f, const char *cls_name,
		      struct log_err *err)
{
	char name[300], path[4400], kind[300], *js;
	int r;

	snprintf(name, sizeof(name), "%s-%s.json", DEVICES_CDI_VENDOR, cls_name);
	snprintf(kind, sizeof(kind), "%s/%s", DEVICES_CDI_VENDOR, cls_name);
	if (!f->n) { /* a spec with no device is not valid CDI: take ours away */
		if (fs_path_join(path, sizeof(path), dir, name, err) < 0)
			return -ENAMETOOLONG;
		if (access(path, F_OK) != 0 || !ours(path, kind))
			return 0;
		if (unlink(path) < 0)
			return log_err_set(err, -errno, "%s: cannot remove: %s", path,
					   strerror(errno));
		return 1;
	}
	if (fs_path_join(path, sizeof(path), dir, name, err) < 0)
		return -ENAMETOOLONG;
	if (!access(path, F_OK) || errno != ENOENT) { /* there (or unreadable): ours only */
		if (!ours(path, kind))
			return log_err_set(err, -EEXIST,
					   "%s: not a spec nodeprobe-devices wrote (not kind %s "
					   "as our writer makes it): left untouched",
					   path, kind);
	}
	r = devices_cdi_json(f, cls_name, &js);
	if (r < 0)
		return log_err_set(err, r, "out of memory");
	r = fs_publish(dir, name, js, strlen(js), 0644, err);
	free(js);
	return r;
}
