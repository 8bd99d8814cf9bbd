/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gotmpl_json: template data from JSON, shared by test/unit/test_gotmpl.c and gotmpl-run. */
#ifndef NP_TEST_GOTMPL_JSON_H
#define NP_TEST_GOTMPL_JSON_H

#include <stdlib.h>

#include <jansson.h>

#include "gotmpl/gotmpl.h"

/*
 * Test data is JSON; values map to template data as Go's json.Unmarshal
 * would, except: integral numbers are Go ints, {"$strmap": {...}} is a
 * map[string]string, {"$strlist": [...]} a []string, {"$int64": N} an int64,
 * {"$float": N} a float64 even when integral.
 */
static inline struct gotmpl_val *from_json(json_t *j)
{
	struct gotmpl_val *v;
	const char *k;
	json_t *x;
	size_t i;

	switch (json_typeof(j)) {
	case JSON_OBJECT:
		if ((x = json_object_get(j, "$strmap")) || (x = json_object_get(j, "$strlist"))) {
			int map = json_is_object(x);

			v = map ? gotmpl_val_map(1) : gotmpl_val_list(1);
			if (map) {
				json_object_foreach(x, k, j)
				{
					if (gotmpl_map_set(v, k,
							   gotmpl_val_str(json_string_value(j))))
						abort();
				}
			} else {
				json_array_foreach(x, i, j)
				{
					if (gotmpl_list_push(v,
							     gotmpl_val_str(json_string_value(j))))
						abort();
				}
			}
			return v;
		}
		if ((x = json_object_get(j, "$int64")))
			return gotmpl_val_int64(json_integer_value(x));
		if ((x = json_object_get(j, "$float")))
			return gotmpl_val_float(json_number_value(x));
		v = gotmpl_val_map(0);
		json_object_foreach(j, k, x)
		{
			if (gotmpl_map_set(v, k, from_json(x)))
				abort();
		}
		return v;
	case JSON_ARRAY:
		v = gotmpl_val_list(0);
		json_array_foreach(j, i, x)
		{
			if (gotmpl_list_push(v, from_json(x)))
				abort();
		}
		return v;
	case JSON_STRING:
		return gotmpl_val_strn(json_string_value(j), json_string_length(j));
	case JSON_INTEGER:
		return gotmpl_val_int(json_integer_value(j));
	case JSON_REAL:
		return gotmpl_val_float(json_real_value(j));
	case JSON_TRUE:
		return gotmpl_val_bool(1);
	case JSON_FALSE:
		return gotmpl_val_bool(0);
	default:
		return gotmpl_val_nil();
	}
}

#endif
