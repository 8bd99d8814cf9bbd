/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_internal: helpers shared by the files of pkg/mirror, not exported. */
#ifndef NP_MIRROR_INTERNAL_H
#define NP_MIRROR_INTERNAL_H

#include "mirror/mirror.h"

/* Largest hosts.toml or certificate file read. */
#define MIRROR_MAX_FILE (1u << 20)

/* containerd version as check understands it. */
struct mirror_ver {
	bool known; /* false: unknown, report what any version would reject */
	int major, minor, patch;
};

/* Parse "1.6.20", "v2.1.0", "1.6.20~ds1-1". Returns 0 or -EINVAL. */
int mirror_ver_parse(const char *s, struct mirror_ver *v);

/* Go url.Parse-like validation of a server or host URL; NULL if fine, else why not. */
const char *mirror_url_problem(const char *url);

/* Check run over the whole config path (check.c). */
int mirror_check_run(const struct mirror_opts *o, struct log_err *err);

#endif
