/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kube_curl: the libcurl functions pkg/kube calls, loaded (dlopen) when the first client is made.
 * Internal to pkg/kube. */
#ifndef NP_KUBE_CURL_H
#define NP_KUBE_CURL_H

#include <curl/curl.h>

#include "log/log.h"

#define KUBE_CURL_SONAME "libcurl.so.4"

/* Pointers to libcurl's functions; set once kube_curl_load returned 0. setopt and getinfo are
 * variadic as libcurl declares them, so they are called through variadic pointers. */
struct kube_curl {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_easy_reset) *easy_reset;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_multi_init) *multi_init;
	__typeof__(curl_multi_cleanup) *multi_cleanup;
	__typeof__(curl_multi_add_handle) *multi_add_handle;
	__typeof__(curl_multi_remove_handle) *multi_remove_handle;
	__typeof__(curl_multi_perform) *multi_perform;
	__typeof__(curl_multi_poll) *multi_poll;
	__typeof__(curl_multi_info_read) *multi_info_read;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
};

extern struct kube_curl kube_curl;

/*
 * Load libcurl (KUBE_CURL_SONAME) and resolve every function above, once per process (thread
 * safe); later calls return the first one's result. Returns 0, or -ENOENT with err naming the
 * library (and the missing function, if one is): the caller makes no libcurl call then.
 */
int kube_curl_load(struct log_err *err);

#endif
