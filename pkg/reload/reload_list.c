/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_list: one paged LIST (limit/continue), bounded, started over when its token expires. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kube/kube.h"
#include "reload/reload_in.h"
#include "reload/reload_internal.h"

int reload_list_pages(struct ctl *c, const struct reload_list *l, struct log_err *err)
{
	struct strbuf cont = STRBUF_INIT(64 * 1024), errbody = STRBUF_INIT(64 * 1024);
	int max = c->in.list_max_pages > 0 ? c->in.list_max_pages : LIST_MAX_PAGES;
	int r = 0, page = 0, restarts = 0;

	for (;;) {
		struct kube_stream *st = kube_stream_new(KUBE_STREAM_LIST, l->mode, l->ops, l->ctx);
		struct kube_query q = l->q;

		if (!st) {
			r = log_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		q.limit = c->o->page_size;
		q.cont = cont.len ? cont.buf : NULL;
		sb_reset(&c->url);
		kube_url(&c->url, kube_client_server(c->cl), l->res, l->ns, NULL, &q);
		r = kube_get_stream(c->cl, c->url.buf, st, &errbody, err);
		if (r >= 0 && l->status && l->status(l->ctx, r)) {
			r = 0; /* the caller's answer for this status: the LIST ends here */
			kube_stream_free(st);
			break;
		}
		if (r == 410 && page > 0 && restarts < LIST_RESTARTS) {
			/* continue token expired: start over from the first page (the API
			 * docs' "Retrieving large results sets in chunks") */
			kube_stream_free(st);
			sb_reset(&cont);
			page = 0;
			restarts++;
			if (l->restart)
				l->restart(l->ctx); /* what the first pass saw may be gone since */
			continue;
		}
		if (r != 200) {
			if (r >= 0)
				r = log_err_set(err, r == 401 || r == 403 ? KUBE_EAUTH : KUBE_EHTTP,
						"LIST %s: HTTP %d: %.300s", c->url.buf, r,
						errbody.buf);
			kube_stream_free(st);
			break;
		}
		r = 0;
		snprintf(l->rv, RV_MAX, "%s", kube_stream_rv(st));
		/* A server that hands back the token it was given (or never stops) would
		 * loop for ever: a bounded number of pages, and a repeat is an error. */
		if (cont.len && strcmp(cont.buf, kube_stream_continue(st)) == 0)
			r = log_err_set(err, KUBE_EHTTP,
					"LIST %s: page %d: the continue token repeats; the server "
					"does not advance",
					c->url.buf, page + 1);
		else if (page + 1 >= max && kube_stream_continue(st)[0])
			r = log_err_set(err, KUBE_EHTTP, "LIST %s: more than %d pages", c->url.buf,
					max);
		sb_reset(&cont);
		sb_add(&cont, kube_stream_continue(st));
		kube_stream_free(st);
		page++;
		if (r < 0 || !cont.len)
			break;
	}
	sb_free(&cont);
	sb_free(&errbody);
	return r < 0 ? r : restarts;
}
