/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_talos: Talos RegistryMirrorConfig documents for users who configure mirrors at boot. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log/log.h"
#include "mirror/mirror_internal.h"
#include "strbuf/strbuf.h"

/*
 * Talos 1.12+ machine-config document (siderolabs/talos website
 * content/v1.15/reference/configuration/cri/registrymirrorconfig.md): name is a
 * registry host or "*", endpoints are tried in order. Talos writes the hosts
 * into /etc/cri/conf.d/hosts itself and keeps them across its re-syncs, which
 * delete every directory there it did not generate (cri_config.go syncHosts).
 */
static int talos_doc(struct strbuf *out, const char *reg, const struct mirror_list *targets,
		     struct log_err *err)
{
	char dir[256];
	size_t i;
	int r;

	r = mirror_registry_dir(reg, dir, sizeof(dir), err);
	if (r < 0)
		return r;
	r = sb_addf(out,
		    "%sapiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: %s\nendpoints:\n",
		    out->len ? "---\n" : "", strcmp(dir, "_default") ? dir : "'*'");
	for (i = 0; r == 0 && i < targets->n; i++)
		r = sb_addf(out, "  - url: %s\n", targets->v[i]);
	if (r == 0 && strcmp(dir, "_default") != 0) {
		/* then the registry itself: Spegel's server line */
		struct strbuf server = STRBUF_INIT(4096);

		r = mirror_render(&server, reg, targets, false, NULL, NULL, err);
		if (r == 0) {
			const char *q = strchr(server.buf, '\''),
				   *e = q ? strchr(q + 1, '\'') : NULL;

			if (q && e)
				r = sb_addf(out, "  - url: %.*s\n", (int)(e - q - 1), q + 1);
		}
		sb_free(&server);
	}
	if (r == -E2BIG || r == -ENOMEM)
		log_err_set(err, r, "talos-config: %s", strerror(-r));
	return r;
}

int mirror_talos_config(const struct mirror_opts *o, struct log_err *err)
{
	struct strbuf out = STRBUF_INIT(1 << 20);
	struct mirror_list targets = {0};
	size_t i, n = o->registries.n ? o->registries.n : 1;
	int r;

	r = mirror_expand_targets(&o->targets, &targets, err);
	for (i = 0; r == 0 && i < n; i++)
		r = talos_doc(&out, o->registries.n ? o->registries.v[i] : "_default", &targets,
			      err);
	if (r == 0 && o->output)
		o->output(o->report_data, out.buf);
	mirror_list_free(&targets);
	sb_free(&out);
	return r;
}
