/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kube_curl: libcurl for pkg/kube, loaded (dlopen) on the first kube_client_new. Debian's libcurl
 * brings some 28 more shared libraries (OpenSSL, GnuTLS, nghttp2, libssh2, LDAP, Kerberos...);
 * a binary that links pkg/kube but talks to no API server (nodeprobe-devices without a DRA class)
 * does not record it as NEEDED (--as-needed) and never maps it (make bench,
 * test/bench/devices.sh). pkg/mirror and pkg/reload call libcurl directly. */
#include "kube/kube_curl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

struct kube_curl kube_curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_err[256]; /* empty: loaded */

static void load(void)
{
	void *l = dlopen(KUBE_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	struct kube_curl c;

	if (!l) {
		snprintf(load_err, sizeof(load_err), "the Kubernetes API client needs %s: %s",
			 KUBE_CURL_SONAME, dlerror());
		return;
	}
#define KC_SYM(f)                                                                                  \
	if (!(*(void **)&c.f = dlsym(l, "curl_" #f))) {                                            \
		snprintf(load_err, sizeof(load_err), "%s lacks curl_%s", KUBE_CURL_SONAME, #f);    \
		dlclose(l);                                                                        \
		return;                                                                            \
	}
	KC_SYM(global_init)
	KC_SYM(easy_init)
	KC_SYM(easy_cleanup)
	KC_SYM(easy_reset)
	KC_SYM(easy_setopt)
	KC_SYM(easy_getinfo)
	KC_SYM(easy_perform)
	KC_SYM(easy_strerror)
	KC_SYM(multi_init)
	KC_SYM(multi_cleanup)
	KC_SYM(multi_add_handle)
	KC_SYM(multi_remove_handle)
	KC_SYM(multi_perform)
	KC_SYM(multi_poll)
	KC_SYM(multi_info_read)
	KC_SYM(slist_append)
	KC_SYM(slist_free_all)
#undef KC_SYM
	kube_curl = c;
	/* libcurl's process-wide setup (before any thread of ours uses it): in here, once. */
	kube_curl.global_init(CURL_GLOBAL_DEFAULT);
}

int kube_curl_load(struct log_err *err)
{
	pthread_once(&load_once, load);
	if (load_err[0])
		return log_err_set(err, -ENOENT, "%s", load_err);
	return 0;
}
