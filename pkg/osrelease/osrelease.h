/* SPDX-License-Identifier: GPL-2.0-or-later */
/* osrelease: the host's os-release file as NFD's system.osrelease feature. */
#ifndef NP_OSRELEASE_H
#define NP_OSRELEASE_H

#include <stddef.h>

struct feat_set;
struct log_err;

#define OSRELEASE_FEATURE "system.osrelease" /* attributes: KEY -> value */
#define OSRELEASE_MAX	  65536		     /* bytes read of an os-release file */

/*
 * Add system.osrelease from the text of an os-release file, as NFD's system
 * source (source/system/system.go): lines as Go's bufio.Scanner gives them
 * (split on '\n', one trailing '\r' dropped); a line counts when it matches
 * ^\w+=.+ (key of [0-9A-Za-z_] from column 0, non-empty value); the value is
 * the text after the first '=' with every leading and trailing '"' and '\''
 * removed, nothing unescaped; a later key wins. When VERSION_ID is set,
 * VERSION_ID.major and VERSION_ID.minor come from
 * ^(\d+)(\.(\d+))?(\..*)?$, each only when not empty ("22.04" -> 22 and
 * "04", "12" -> 12, "8.10-beta" -> 8, "v1.9.5" -> neither). The feature is
 * declared even when no line counts. Returns the number of keys or -ENOMEM.
 */
int osrelease_parse(const char *text, size_t len, struct feat_set *fs);

/*
 * Read path (at most OSRELEASE_MAX bytes) and add system.osrelease. A missing
 * file gives no feature and returns 0 (logged). Any other read error, or a
 * longer file, returns -errno/-E2BIG with err naming path.
 */
int osrelease_scan(const char *path, struct feat_set *fs, struct log_err *err);

#endif
