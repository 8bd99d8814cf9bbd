/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_reload_selector: libFuzzer target for Reloader's selector flags (translation and check). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reload/reload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input is the flag values, split on ',' as pflag splits them (NUL bytes end an entry). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *entries[64];
	struct log_err err = {0};
	char *copy = malloc(size + 1), *p, *tok, *save = NULL, *out = NULL;
	size_t n = 0;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	p = copy;
	for (tok = strtok_r(p, ",", &save); tok && n < 64; tok = strtok_r(NULL, ",", &save))
		entries[n++] = tok;
	if (reload_selector(&out, entries, n, &err) == 0 && !out)
		abort(); /* success always gives a string */
	free(out);
	free(copy);
	return 0;
}
