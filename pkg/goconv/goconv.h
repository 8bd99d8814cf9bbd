/* SPDX-License-Identifier: GPL-2.0-or-later */
/* goconv: Go's strconv.ParseBool, strconv.Atoi and time.ParseDuration, as the flags and env of our
 * upstreams read them. */
#ifndef NP_GOCONV_H
#define NP_GOCONV_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Go's strconv.ParseBool: 1 for "1", "t", "T", "TRUE", "true", "True"; 0 for
 * "0", "f", "F", "FALSE", "false", "False"; -EINVAL for anything else.
 */
int goconv_parse_bool(const char *s);

/*
 * Go's strconv.Atoi (ParseInt base 10, 64-bit): an optional sign, then one or
 * more decimal digits, nothing else (no spaces), in int64 range. True with
 * *out set; false when Go refuses s (*out then unspecified).
 */
bool goconv_atoi(const char *s, long long *out);

/*
 * Go's time.ParseDuration, exactly: an optional sign, then one or more decimal
 * numbers with an optional fraction and a unit (ns, us, µs, μs, ms, s, m, h),
 * such as "300ms", "-1.5h" or "2h45m"; "0" alone needs no unit. On success
 * *ns is the duration in nanoseconds and 0 is returned; -EINVAL for bad
 * syntax, -ERANGE when it does not fit in int64 nanoseconds (about 292 years),
 * as Go's "invalid duration". *ns is untouched on error.
 */
int goconv_parse_duration(const char *s, int64_t *ns);

#endif
