/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_finding: one finding of check or probe, formatted, reported and folded into the run's
 * worst (calls no one in pkg/mirror). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log/log.h"
#include "toml/toml.h"
#include "mirror/mirror_internal.h"

void mirror_vfind(mirror_report_fn report, void *data, struct mirror_finding *f, int *worst,
		  const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	f->msg = msg;
	if (report)
		report(data, f);
	f->msg = NULL; /* msg ends here */
	if (f->sev == MIRROR_ERROR)
		*worst = MIRROR_ERRORS;
	else if (f->sev == MIRROR_WARNING && *worst == MIRROR_CLEAN)
		*worst = MIRROR_WARNINGS;
}

void mirror_found(struct mirror_checker *c, enum mirror_severity sev, int line, int col,
		  const char *fmt, ...)
{
	struct mirror_finding f = {sev, c->file, line, col, NULL, c->fix};
	va_list ap;

	c->fix = NULL;
	va_start(ap, fmt);
	mirror_vfind(c->report, c->data, &f, &c->worst, fmt, ap);
	va_end(ap);
}

void mirror_found_parse_error(struct mirror_checker *c, const struct log_err *err)
{
	const char *msg = err->msg;
	size_t fl = strlen(c->file);
	int line = 0, col = 0, n = 0;

	if (!strncmp(msg, c->file, fl) && sscanf(msg + fl, ":%d:%d: %n", &line, &col, &n) == 2 &&
	    n > 0)
		msg += fl + (size_t)n;
	mirror_found(c, MIRROR_ERROR, line, col, "%s", msg);
}

const char *mirror_toml_type(const struct toml_value *v)
{
	static const char *const names[] = {"a string",	  "an integer", "a float", "a boolean",
					    "a datetime", "an array",	"a table"};

	if (v->type == TOML_ARRAY && v->origin == TOML_HEADER)
		return "an array of tables";
	return names[v->type];
}
