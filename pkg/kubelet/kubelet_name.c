/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kubelet_name: the extended resource name check, alone in its file so that what only checks names
 * (nodeprobe's device-class options, through pkg/devices) does not link the gRPC server and with
 * it libnghttp2 and libprotobuf-c.
 *
 * The kubelet's own check, which refuses a plugin's Register otherwise: its device manager calls
 * v1helper.IsExtendedResourceName (kubernetes/kubernetes pkg/apis/core/v1/helper/helpers.go, the
 * same as pkg/apis/core/helper/helpers.go):
 *   IsNativeResource(name) || strings.HasPrefix(name, "requests.")  -> refused
 *     (IsNativeResource: no "/" at all, or strings.Contains(name, "kubernetes.io/"))
 *   validation.IsQualifiedName("requests." + name) must hold:
 *     prefix (before the one "/") a DNS-1123 subdomain of at most 253 characters,
 *     name 1..63 characters of ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
 * so the domain itself has at most 253 - 9 = 244 characters.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "kubelet/kubelet.h"

#define REQUESTS "requests." /* quota's prefix (core.DefaultResourceRequestsPrefix) */

static bool lower_an(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool any_an(char c)
{
	return lower_an(c) || (c >= 'A' && c <= 'Z');
}

/* s[0..n) a DNS-1123 subdomain: labels of lowercase letters, digits and '-', each beginning and
 * ending with a letter or digit, joined by '.'. */
static bool subdomain(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (lower_an(s[i]))
			continue;
		if ((s[i] != '-' && s[i] != '.') || i == 0 || i == n - 1)
			return false;
		if (s[i] == '.' && (!lower_an(s[i - 1]) || !lower_an(s[i + 1])))
			return false;
	}
	return n > 0;
}

const char *kubelet_resource_why(const char *r)
{
	const char *slash = strchr(r, '/'), *name;
	size_t dl, nl;

	if (!slash)
		return "no '<domain>/': a name without a domain is one of the kubelet's own "
		       "(kubernetes.io)";
	if (strstr(r, "kubernetes.io/"))
		return "'kubernetes.io/' in it: the kubelet takes it for one of its own names "
		       "(kubernetes.io and its subdomains)";
	if (!strncmp(r, REQUESTS, strlen(REQUESTS)))
		return "a 'requests.' prefix is resource quota's";
	name = slash + 1;
	if (strchr(name, '/'))
		return "more than one '/'";
	dl = (size_t)(slash - r);
	nl = strlen(name);
	if (!subdomain(r, dl))
		return "the domain is not a DNS-1123 subdomain (lowercase letters, digits, '-' and "
		       "'.', each part beginning and ending with a letter or digit)";
	if (dl + strlen(REQUESTS) > 253)
		return "the domain is longer than 244 characters (253 with quota's 'requests.')";
	if (!nl || nl > 63)
		return "the name after '/' must have 1 to 63 characters";
	for (size_t i = 0; i < nl; i++)
		if (!any_an(name[i]) &&
		    ((name[i] != '-' && name[i] != '_' && name[i] != '.') || i == 0 || i == nl - 1))
			return "the name after '/' is not letters, digits, '-', '_' and '.', "
			       "beginning and ending with a letter or digit";
	return NULL;
}

bool kubelet_resource_ok(const char *r)
{
	return !kubelet_resource_why(r);
}
