/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_kubeconfig: libFuzzer target for kubeconfig parsing (pkg/kube, libyaml). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kube/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct kube_config cfg;
	struct log_err err = {0};
	char path[64];

	if (fd < 0)
		fd = memfd_create("kubeconfig", 0);
	if (fd < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	kube_config_load(&cfg, path, NULL, &err);
	kube_config_free(&cfg);
	return 0;
}
