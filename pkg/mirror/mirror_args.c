/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_args: Spegel's `configuration` command line (go-arg forms) rewritten into ours. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "goconv/goconv.h"
#include "mirror/mirror.h"

/*
 * Spegel's flags (main.go ConfigurationCmd, spegel-org/spegel, read at
 * 00216e1) are parsed by go-arg: a list flag takes every following argument
 * up to the next one starting with '-' ("--mirror-targets http://a http://b",
 * what the Helm chart renders), a bool flag takes no separate value
 * ("--resolve-tags", "--resolve-tags=false").
 */
struct alias {
	const char *spegel; /* Spegel's long name, without "--" */
	const char *ours;   /* ours, without "--" */
	bool list;	    /* takes several values */
};

static const struct alias aliases[] = {
    {"mirrored-registries", "registry", true},
    {"mirror-targets", "mirror-target", true},
    {"containerd-registry-config-path", "config-path", false},
};

/* Append the concatenation a b c d to out. */
static int push4(struct mirror_list *out, const char *a, const char *b, const char *c,
		 const char *d)
{
	size_t n = strlen(a) + strlen(b) + strlen(c) + strlen(d) + 1;
	char *s = malloc(n);
	int r;

	if (!s)
		return -ENOMEM;
	snprintf(s, n, "%s%s%s%s", a, b, c, d);
	r = mirror_list_add(out, s);
	free(s);
	return r;
}

static int push(struct mirror_list *out, const char *a, const char *b, const char *c)
{
	return push4(out, a, b, c, "");
}

/* go-arg's --log-level names as our -v count: DEBUG -vv, INFO -v, WARN/ERROR none. */
static int log_level(struct mirror_list *out, const char *v)
{
	if (!strcasecmp(v, "debug"))
		return push(out, "-vv", "", "");
	if (!strcasecmp(v, "info"))
		return push(out, "-v", "", "");
	if (!strcasecmp(v, "warn") || !strcasecmp(v, "error"))
		return 0;
	return -EINVAL;
}

int mirror_spegel_args(int argc, char **argv, struct mirror_list *out)
{
	int i, r = 0;
	size_t k;

	for (i = 0; r == 0 && i < argc; i++) {
		const char *a = argv[i], *eq;
		size_t nl;

		if (!strcmp(a, "--")) { /* the rest is positional: copied as is */
			for (; r == 0 && i < argc; i++)
				r = mirror_list_add(out, argv[i]);
			break;
		}
		if (strncmp(a, "--", 2) != 0) {
			r = mirror_list_add(out, i == 1 && !strcmp(a, "configuration") ? "configure"
										       : a);
			continue;
		}
		eq = strchr(a, '=');
		nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		for (k = 0; k < sizeof(aliases) / sizeof(aliases[0]); k++)
			if (strlen(aliases[k].spegel) == nl &&
			    !strncmp(a + 2, aliases[k].spegel, nl))
				break;
		if (k < sizeof(aliases) / sizeof(aliases[0])) {
			if (eq) {
				r = push4(out, "--", aliases[k].ours, "=", eq + 1);
				continue;
			}
			if (i + 1 >= argc) { /* no value: let the parser name the option */
				r = push(out, "--", aliases[k].ours, "");
				continue;
			}
			do {
				r = push4(out, "--", aliases[k].ours, "=", argv[++i]);
			} while (r == 0 && aliases[k].list && i + 1 < argc &&
				 argv[i + 1][0] != '-');
			continue;
		}
		if (!strcmp(a, "--resolve-tags")) {
			/* go-arg: a bare bool flag is true; ours also takes "--resolve-tags false"
			 */
			if (i + 1 < argc && goconv_parse_bool(argv[i + 1]) >= 0)
				r = push(out, "--resolve-tags=", argv[++i], "");
			else
				r = push(out, "--resolve-tags=true", "", "");
			continue;
		}
		if (!strncmp(a, "--log-level", 11) && (a[11] == '=' || a[11] == '\0')) {
			const char *v = a[11] == '=' ? a + 12 : (i + 1 < argc ? argv[++i] : "");

			r = log_level(out, v);
			if (r == -EINVAL) /* our parser reports it as an unknown option */
				r = push(out, a, "", "");
			continue;
		}
		r = mirror_list_add(out, a);
	}
	return r;
}
