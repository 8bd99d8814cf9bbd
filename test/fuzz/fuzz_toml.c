/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the strict TOML reader, its writer (round trip) and the hosts.toml check. */
// seeds: test/e2e/hosts-cases test/bats/mirror/input test/bats/mirror/expected
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/log.h"
#include "mirror/mirror.h"
#include "mirror/mirror_internal.h"
#include "strbuf/strbuf.h"
#include "toml/toml.h"

static void ignore(void *data, const struct mirror_finding *f)
{
	(void)data;
	if (!f->msg || !f->file)
		abort();
}

/* Write root as "[r]" + its tables; returns the text or NULL when the cap is hit. */
static char *write_all(const struct toml_value *root, size_t *len)
{
	struct strbuf sb = STRBUF_INIT(1 << 22);
	char *s;

	if (toml_write_table(&sb, "r", root) < 0) {
		sb_free(&sb);
		return NULL;
	}
	*len = sb.len;
	s = sb_take(&sb);
	sb_free(&sb);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct toml_value *root = NULL, *again = NULL;
	struct log_err err = {0};
	char *w1 = NULL, *w2 = NULL;
	size_t l1 = 0, l2 = 0;

	mirror_check_hosts((const char *)data, size, "f.toml", "/nonexistent",
			   size % 2 ? "1.6.20" : NULL, ignore, NULL);
	if (toml_parse((const char *)data, size, "f.toml", &root, &err) < 0) {
		if (root || err.code >= 0 || !err.msg[0])
			abort(); /* an error always comes with a message and no tree */
		return 0;
	}
	/* what the writer emits must parse, and writing that again gives the same bytes */
	w1 = write_all(root, &l1);
	if (w1) {
		memset(&err, 0, sizeof(err));
		/* the "r." prefix adds a level: at the 64-level limit the re-read may refuse it */
		if (toml_parse(w1, l1, "w.toml", &again, &err) < 0 &&
		    !strstr(err.msg, "more than 64 parts") && !strstr(err.msg, "deeper than 64")) {
			fprintf(stderr, "writer output does not parse: %s\n%s\n", err.msg, w1);
			abort();
		}
		w2 = again ? write_all(toml_get(again, "r"), &l2) : NULL;
		if (w2 && (l1 != l2 || memcmp(w1, w2, l1) != 0)) {
			fprintf(stderr, "writer not stable:\n%s\n---\n%s\n", w1, w2);
			abort();
		}
	}
	free(w1);
	free(w2);
	toml_free(again);
	toml_free(root);
	return 0;
}
