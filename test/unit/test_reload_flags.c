/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for pkg/reload's command line (reload_flags.c): Reloader's flags and environment
 * into struct reload_opts, without a binary or a server. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "reload/reload.h"

/* Set flag name (its id looked up in reload_flags) to arg; msg gets the refusal. */
static int set(struct reload_args *a, const char *name, const char *arg, char *msg)
{
	size_t i;

	msg[0] = '\0';
	for (i = 0; reload_flags[i].lng; i++)
		if (strcmp(reload_flags[i].lng, name) == 0)
			return reload_args_set(a, reload_flags[i].id, arg, msg, 256);
	fprintf(stderr, "no flag --%s\n", name);
	abort();
}

/* Defaults are Reloader's: metrics on :9090, log level unset; the once-mode and HA flags off. */
TEST(defaults_are_reloaders)
{
	static struct reload_args a;

	reload_args_init(&a);
	CHECK_STR(a.o.listen, ":9090");
	CHECK_INT(a.log_level, -1);
	CHECK_INT(a.o.ha, 0);
	CHECK_INT(a.o.auto_all, 0);
	reload_args_free(&a);
}

/* pflag's bool flags take an optional =VALUE (Go's ParseBool); anything else is refused. */
TEST(bool_flags_optional_value)
{
	static struct reload_args a;
	char msg[256];

	reload_args_init(&a);
	CHECK_INT(set(&a, "enable-ha", NULL, msg), 0);
	CHECK_INT(a.o.ha, 1);
	CHECK_INT(set(&a, "enable-ha", "false", msg), 0);
	CHECK_INT(a.o.ha, 0);
	CHECK_INT(set(&a, "enable-ha", "maybe", msg), -1);
	CHECK_STR(msg, "--enable-ha: 'maybe' is not a boolean");
	/* --enable-csi-integration is a pflag BoolVar as well (Reloader v1.4.21) */
	CHECK_INT(a.o.csi, 0);
	CHECK_INT(set(&a, "enable-csi-integration", NULL, msg), 0);
	CHECK_INT(a.o.csi, 1);
	CHECK_INT(set(&a, "enable-csi-integration", "f", msg), 0);
	CHECK_INT(a.o.csi, 0);
	CHECK_INT(set(&a, "enable-csi-integration", "on", msg), -1);
	CHECK_STR(msg, "--enable-csi-integration: 'on' is not a boolean");
	reload_args_free(&a);
}

/* Reloader enables the kind flags only for exactly "true": "True" is refused, not ignored. */
TEST(exact_true_for_kind_flags)
{
	static struct reload_args a;
	char msg[256];

	reload_args_init(&a);
	CHECK_INT(set(&a, "reload-on-create", "true", msg), 0);
	CHECK_INT(a.o.reload_on_create, 1);
	CHECK_INT(set(&a, "reload-on-create", "True", msg), -1);
	CHECK(strstr(msg, "--reload-on-create: 'True' is not true or false") == msg);
	reload_args_free(&a);
}

/* String-slice flags split on commas (spaces trimmed, empty items dropped) and add up with -n. */
TEST(lists_split_on_commas)
{
	static struct reload_args a;
	struct log_err err = {0};
	char msg[256];

	reload_args_init(&a);
	CHECK_INT(set(&a, "namespaces", "a, b,,c", msg), 0);
	CHECK_INT(set(&a, "namespace", "d", msg), 0);
	CHECK_INT(reload_args_finish(&a, &err), 0);
	CHECK_INT((int)a.nns, 4);
	CHECK_STR(a.o.namespaces[1], "b");
	CHECK_STR(a.o.namespaces[3], "d");
	CHECK(a.o.namespaces[4] == NULL);
	reload_args_free(&a);
}

TEST(resources_to_ignore_not_both)
{
	static struct reload_args a;
	char msg[256];

	reload_args_init(&a);
	CHECK_INT(set(&a, "resources-to-ignore", "configmaps,secrets", msg), -1);
	CHECK_STR(msg, "--resources-to-ignore: configmaps or secrets, not both");
	CHECK_INT(set(&a, "resources-to-ignore", "pods", msg), -1);
	CHECK_STR(msg, "--resources-to-ignore: 'pods' is not configmaps or secrets");
	reload_args_free(&a);
}

/* ALERT_* trimmed (the sink lowered), KUBERNETES_NAMESPACE only without a namespace flag. */
TEST(environment_read)
{
	static struct reload_args a;
	struct log_err err = {0};
	char msg[256];

	setenv("ALERT_ON_RELOAD", "true", 1);
	setenv("ALERT_SINK", "  Slack ", 1);
	setenv("KUBERNETES_NAMESPACE", "tenant", 1);
	reload_args_init(&a);
	CHECK_INT(reload_args_env(&a, &err), 0);
	CHECK_INT(a.o.alert.on, 1);
	CHECK_STR(a.o.alert.sink, "slack");
	CHECK_INT((int)a.nns, 1);
	CHECK_STR(a.ns[0], "tenant");
	reload_args_free(&a);
	reload_args_init(&a);
	CHECK_INT(set(&a, "namespace", "mine", msg), 0);
	CHECK_INT(reload_args_env(&a, &err), 0);
	CHECK_INT((int)a.nns, 1);
	CHECK_STR(a.ns[0], "mine");
	reload_args_free(&a);
	unsetenv("ALERT_ON_RELOAD");
	unsetenv("ALERT_SINK");
	unsetenv("KUBERNETES_NAMESPACE");
}

/* Selectors are translated in finish; one that does not parse names its flag. */
TEST(selectors_translated_or_refused)
{
	static struct reload_args a;
	struct log_err err = {0};
	char msg[256];

	reload_args_init(&a);
	CHECK_INT(set(&a, "namespace-selector", "team=a", msg), 0);
	CHECK_INT(reload_args_finish(&a, &err), 0);
	CHECK(a.o.namespace_selector != NULL);
	reload_args_free(&a);
	reload_args_init(&a);
	CHECK_INT(set(&a, "namespace-selector", "env in (a", msg), 0);
	CHECK_INT(reload_args_finish(&a, &err), -EINVAL);
	CHECK_STR(a.bad_flag, "namespace-selector");
	CHECK_STR(err.msg, "'env in (a': expected ')' at ''");
	reload_args_free(&a);
}

/* The tables: long names unique; the refused flags are Reloader's two pprof ones. */
TEST(tables_well_formed)
{
	size_t i, j, n = 0;

	for (i = 0; reload_flags[i].lng; i++)
		for (j = i + 1; reload_flags[j].lng; j++)
			CHECK(strcmp(reload_flags[i].lng, reload_flags[j].lng) != 0);
	for (i = 0; reload_refused_flags[i].lng; i++)
		n++;
	CHECK_INT((int)n, 2);
	CHECK_STR(reload_refused_flags[0].lng, "enable-pprof");
	CHECK_STR(reload_refused_flags[1].lng, "pprof-addr");
}
