/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mirror_internal: helpers shared by the files of pkg/mirror, not exported. */
#ifndef NP_MIRROR_INTERNAL_H
#define NP_MIRROR_INTERNAL_H

#include "mirror/mirror.h"

/* Largest hosts.toml or certificate file read. */
#define MIRROR_MAX_FILE (1u << 20)

/* Check run over the whole config path (check.c). */
int mirror_check_run(const struct mirror_opts *o, struct log_err *err);

#endif
