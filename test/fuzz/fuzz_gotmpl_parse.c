/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_gotmpl_parse: libFuzzer target for pkg/gotmpl's lexer and parser: any bytes as a template.
 */
// seeds: test/fuzz/fuzz_gotmpl.seeds
#include <stddef.h>
#include <stdint.h>

#include "gotmpl/gotmpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gotmpl_err err;
	struct gotmpl *t;

	if (gotmpl_parse("fuzz", (const char *)data, size, &t, &err) == 0)
		gotmpl_free(t);
	return 0;
}
