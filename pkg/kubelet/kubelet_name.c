/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kubelet_name: the extended resource name check, alone in its file so that what only checks names
 * (nodeprobe's device-class options, through pkg/devices) does not link the gRPC server and with
 * it libnghttp2 and libprotobuf-c.
 */
#include <stdbool.h>
#include <string.h>

#include "kubelet/kubelet.h"

/* A DNS-1123 subdomain (the domain) / a qualified name (the name); not kubernetes.io. */
bool kubelet_resource_ok(const char *r)
{
	const char *slash = strchr(r, '/');
	size_t dl, nl;

	if (!slash || strchr(slash + 1, '/'))
		return false;
	dl = (size_t)(slash - r);
	nl = strlen(slash + 1);
	if (dl == 0 || dl > 253 || nl == 0 || nl > 63)
		return false;
	for (size_t i = 0; i < dl; i++) {
		char c = r[i];
		bool an = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!an && c != '-' && c != '.')
			return false;
		if (!an && (i == 0 || i == dl - 1 || r[i - 1] == '.' || r[i + 1] == '.'))
			return false;
	}
	if ((dl == 13 && !strncmp(r, "kubernetes.io", 13)) ||
	    (dl > 14 && !strncmp(slash - 14, ".kubernetes.io", 14)))
		return false;
	for (size_t i = 0; i < nl; i++) {
		char c = slash[1 + i];
		bool an =
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!an && ((c != '-' && c != '_' && c != '.') || i == 0 || i == nl - 1))
			return false;
	}
	return true;
}
