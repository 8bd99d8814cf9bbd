/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_reload_lists: libFuzzer target for Reloader's reload-list annotations (Go regexes,
 * pkg/goregex) and the reload decision over them. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "log/log.h"
#include "reload/reload.h"
#include "reload/reload_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"cfg", "cfg-12", "app-a-9", "x.y", "", "a\\b"};
	struct reload_workload w;
	json_t *obj, *ann;
	size_t i;

	/* The input is the annotation value, as any bytes (jansson wants UTF-8). */
	ann = json_object();
	json_object_set_new(ann, "configmap.reloader.stakater.com/reload",
			    json_stringn_nocheck((const char *)data, size));
	json_object_set_new(ann, "secrets.exclude.reloader.stakater.com/reload",
			    json_stringn_nocheck((const char *)data, size));
	obj = json_pack("{s:{s:s,s:s,s:o},s:{s:{s:{s:[{s:s}]}}}}", "metadata", "name", "w",
			"namespace", "ns", "annotations", ann, "spec", "template", "spec",
			"containers", "name", "app");
	if (!obj)
		return 0;
	if (reload_workload_parse(&w, RELOAD_DEPLOYMENT, obj, 1, NULL) == 0) {
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			struct reload_object o = {
			    RELOAD_CONFIGMAP, "ns", names[i], "h", NULL, 0, 0};
			const char *c;

			reload_should(&w, &o, 0, &c);
			o.type = RELOAD_SECRET;
			reload_should(&w, &o, 1, &c);
		}
	}
	reload_workload_free(&w);
	json_decref(obj);
	return 0;
}
