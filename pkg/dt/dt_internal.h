/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dt_internal: pkg/dt's naming rules, exposed to its unit tests only (not a contract). */
#ifndef NP_DT_INTERNAL_H
#define NP_DT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/*
 * True if node name (as in the tree, "cpu@0") is selected by want, as
 * k8s-dt-node-labeller matches names: name == want, or name is want, then
 * optional decimal digits, then "@" and anything. want is literal text, not a
 * regular expression.
 */
bool dt_name_matches(const char *name, const char *want);

/*
 * Label name for one compatible string: "vendor,model" -> "vendor-model"
 * (vendor "xlnx" -> "xilinx"); every further ',' also becomes '-'; any other
 * byte outside [A-Za-z0-9._-] becomes '_'; leading and trailing bytes that
 * are not letters or digits are dropped. Writes at most outsz bytes with NUL.
 * Returns the length (1..63), or -EINVAL when the result is empty or longer
 * than 63 characters (not a valid label name).
 */
int dt_label_name(const char *compat, char *out, size_t outsz);

#endif
