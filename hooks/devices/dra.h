/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dra: nodeprobe-devices' DRA side (pkg/dra over pkg/kube) for pkg/devices' api: dra classes. */
#ifndef NP_HOOKS_DEVICES_DRA_H
#define NP_HOOKS_DEVICES_DRA_H

#include "devices/devices.h"

/* The hooks devices_run drives; one run per process. */
extern const struct devices_dra_hooks devices_dra_side;

#endif
