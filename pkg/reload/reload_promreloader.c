/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload_promreloader: Reloader's metric names beside ours, latency histograms, build info. */
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "reload/reload_internal.h"

/*
 * Bucket bounds in seconds. Reloader v1.4.21 internal/pkg/metrics/prometheus.go
 * (reloader.md §9.9) gives reloader_action_latency_seconds these; our
 * change-to-PATCH histogram starts lower, where a PATCH on a quiet cluster lands.
 */
static const double action_bounds[RELOAD_HIST_MAX] = {.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60};
static const int action_nb = 11;
static const double change_bounds[RELOAD_HIST_MAX] = {.001, .0025, .005, .01, .025, .05, .1,
						      .25,  .5,	   1,	 2.5, 5,    10,	 30};
static const int change_nb = 14;

static pthread_mutex_t ns_lock = PTHREAD_MUTEX_INITIALIZER;

void reload_hist_observe(struct reload_hist *h, const double *bounds, int nb, long long us)
{
	int i;

	for (i = 0; i < nb; i++)
		if ((double)us / 1e6 <= bounds[i])
			METRIC_INC(h->b[i]);
	METRIC_INC(h->count);
	__atomic_add_fetch(&h->sum_us, (unsigned long long)us, __ATOMIC_RELAXED);
}

void reload_metrics_rolled(struct reload_metrics *m, int kind, const char *ns, int failed,
			   long long action_us, long long change_us)
{
	struct reload_ns_count *e;

	reload_hist_observe(&m->action_latency[kind], action_bounds, action_nb, action_us);
	if (!failed && change_us >= 0)
		reload_hist_observe(&m->change_latency, change_bounds, change_nb, change_us);
	if (!m->by_namespace)
		return;
	pthread_mutex_lock(&ns_lock);
	for (e = m->ns_counts; e && strcmp(e->ns, ns) != 0; e = e->next)
		;
	if (!e && (e = calloc(1, sizeof(*e) + strlen(ns) + 1))) {
		strcpy(e->ns, ns);
		e->next = m->ns_counts;
		m->ns_counts = e;
	}
	if (e)
		e->n[failed != 0]++;
	pthread_mutex_unlock(&ns_lock);
}

void reload_metrics_free(struct reload_metrics *m)
{
	while (m->ns_counts) {
		struct reload_ns_count *e = m->ns_counts;

		m->ns_counts = e->next;
		free(e);
	}
}

static int head(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	return sb_addf(sb, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int hist(struct strbuf *sb, const char *name, const char *labels,
		const struct reload_hist *h, const double *bounds, int nb)
{
	int i, r = 0;

	for (i = 0; i < nb && !r; i++)
		r = sb_addf(sb, "%s_bucket{%s%sle=\"%g\"} %lu\n", name, labels, *labels ? "," : "",
			    bounds[i], METRIC_GET(h->b[i]));
	if (!r)
		r = sb_addf(sb, "%s_bucket{%s%sle=\"+Inf\"} %lu\n", name, labels,
			    *labels ? "," : "", METRIC_GET(h->count));
	if (!r)
		r = sb_addf(sb, "%s_sum%s%s%s %.6f\n", name, *labels ? "{" : "", labels,
			    *labels ? "}" : "",
			    (double)__atomic_load_n(&h->sum_us, __ATOMIC_RELAXED) / 1e6);
	if (!r)
		r = sb_addf(sb, "%s_count%s%s%s %lu\n", name, *labels ? "{" : "", labels,
			    *labels ? "}" : "", METRIC_GET(h->count));
	return r;
}

/* The second whitespace-separated field after the ")" of /proc/self/stat is field 3. */
static int stat_fields(unsigned long long *utime, unsigned long long *stime,
		       unsigned long long *start, unsigned long *vsize, long *rss)
{
	struct strbuf sb = STRBUF_INIT(4096);
	const char *p;
	int n = -1;

	if (sb_read_file(&sb, "/proc/self/stat") > 0 && (p = strrchr(sb.buf, ')')))
		n = sscanf(p + 2,
			   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
			   "%*d %*d %llu %lu %ld",
			   utime, stime, start, vsize, rss);
	sb_free(&sb);
	return n == 5 ? 0 : -1;
}

static double boot_time(void)
{
	struct strbuf sb = STRBUF_INIT(1024 * 1024);
	const char *p;
	double bt = 0;

	if (sb_read_file(&sb, "/proc/stat") > 0 && (p = strstr(sb.buf, "\nbtime ")))
		bt = strtod(p + 7, NULL);
	sb_free(&sb);
	return bt;
}

static long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

/*
 * The process metrics Prometheus clients export (client_golang's process collector, which
 * Reloader's default registry includes): dashboards watch Reloader's memory through them.
 */
static int render_process(struct strbuf *sb)
{
	unsigned long long ut, st, start;
	unsigned long vsize;
	long rss, tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE), fds = open_fds();
	struct rlimit rl;
	int r;

	if (stat_fields(&ut, &st, &start, &vsize, &rss) < 0 || tck <= 0)
		return 0;
	r = head(sb, "process_cpu_seconds_total", "counter",
		 "Total user and system CPU time spent in seconds.");
	r = r ? r : sb_addf(sb, "process_cpu_seconds_total %.2f\n", (double)(ut + st) / tck);
	r = r ? r
	      : head(sb, "process_resident_memory_bytes", "gauge",
		     "Resident memory size in bytes.");
	r = r ? r : sb_addf(sb, "process_resident_memory_bytes %ld\n", rss * page);
	r = r ? r
	      : head(sb, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
	r = r ? r : sb_addf(sb, "process_virtual_memory_bytes %lu\n", vsize);
	r = r ? r
	      : head(sb, "process_start_time_seconds", "gauge",
		     "Start time of the process since unix epoch in seconds.");
	r = r ? r
	      : sb_addf(sb, "process_start_time_seconds %.2f\n", boot_time() + (double)start / tck);
	if (!r && fds >= 0) {
		r = head(sb, "process_open_fds", "gauge", "Number of open file descriptors.");
		r = r ? r : sb_addf(sb, "process_open_fds %ld\n", fds);
	}
	if (!r && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		r = head(sb, "process_max_fds", "gauge",
			 "Maximum number of open file descriptors.");
		r = r ? r : sb_addf(sb, "process_max_fds %lu\n", (unsigned long)rl.rlim_cur);
	}
	return r;
}

int reload_render_reloader(struct strbuf *sb, struct reload_metrics *m)
{
	static const char exec[] = "reloader_reload_executed_total";
	static const char byns[] = "reloader_reload_executed_total_by_namespace";
	static const char action[] = "reloader_action_total";
	static const char lat[] = "reloader_action_latency_seconds";
	static const char skipped[] = "reloader_skipped_total";
	static const char events[] = "reloader_events_received_total";
	static const char *const evnames[] = {"add", "update", "delete"};
	/* Reloader's resource_type values (reloader.md §9.9) */
	static const char *const restypes[] = {"configmaps", "secrets",
					       "secretproviderclasspodstatuses"};
	static const char change[] = "nodeprobe_reload_change_to_patch_seconds";
	static const char info[] = "nodeprobe_reload_build_info";
	unsigned long ok = 0, fail = 0, strat;
	char labels[128];
	int k, r;

	for (k = 0; k < RELOAD_NKINDS; k++) {
		ok += METRIC_GET(m->reloads[k][0]);
		fail += METRIC_GET(m->reloads[k][1]);
	}
	/* Reloader pre-creates both success values at 0 */
	r = head(sb, exec, "counter", "Counter of reloads executed by Reloader.");
	r = r ? r
	      : sb_addf(sb, "%s{success=\"false\"} %lu\n%s{success=\"true\"} %lu\n", exec, fail,
			exec, ok);
	if (!r && m->by_namespace) {
		const struct reload_ns_count *e;

		r = head(sb, byns, "counter",
			 "Counter of reloads executed by Reloader with namespace breakdown.");
		pthread_mutex_lock(&ns_lock);
		for (e = m->ns_counts; e && !r; e = e->next)
			r = sb_addf(sb,
				    "%s{namespace=\"%s\",success=\"false\"} %lu\n"
				    "%s{namespace=\"%s\",success=\"true\"} %lu\n",
				    byns, e->ns, e->n[1], byns, e->ns, e->n[0]);
		pthread_mutex_unlock(&ns_lock);
	}
	r = r ? r
	      : head(sb, action, "counter",
		     "Total number of reload actions by workload kind and result.");
	for (k = 0; k < RELOAD_NKINDS && !r; k++)
		r = sb_addf(sb,
			    "%s{result=\"error\",workload_kind=\"%s\"} %lu\n"
			    "%s{result=\"success\",workload_kind=\"%s\"} %lu\n",
			    action, reload_kind_name((enum reload_kind)k),
			    METRIC_GET(m->reloads[k][1]), action,
			    reload_kind_name((enum reload_kind)k), METRIC_GET(m->reloads[k][0]));
	r = r ? r : head(sb, lat, "histogram", "Latency of reload actions by workload kind.");
	for (k = 0; k < RELOAD_NKINDS && !r; k++) {
		snprintf(labels, sizeof(labels), "workload_kind=\"%s\"",
			 reload_kind_name((enum reload_kind)k));
		r = hist(sb, lat, labels, &m->action_latency[k], action_bounds, action_nb);
	}
	/* Reloader's reasons: an unchanged update; matched but already current (or no
	 * container); dropped by the namespace filters */
	strat = METRIC_GET(m->skipped[SKIP_CURRENT]) + METRIC_GET(m->skipped[SKIP_NOT_USED]) +
		METRIC_GET(m->skipped[SKIP_NO_CONTAINER]);
	r = r ? r : head(sb, skipped, "counter", "Total number of skipped reloads by reason.");
	r = r ? r
	      : sb_addf(sb,
			"%s{reason=\"ignored_or_not_selected\"} %lu\n"
			"%s{reason=\"no_data_change\"} %lu\n"
			"%s{reason=\"strategy_not_updated\"} %lu\n",
			skipped, METRIC_GET(m->not_selected), skipped,
			METRIC_GET(m->skipped[SKIP_UNCHANGED]), skipped, strat);
	r = r ? r
	      : head(sb, events, "counter", "Total number of events received by the controller.");
	for (k = 0; k < (m->csi ? 9 : 6) && !r; k++)
		r = sb_addf(sb, "%s{event_type=\"%s\",resource_type=\"%s\"} %lu\n", events,
			    evnames[k % 3], restypes[k / 3], METRIC_GET(m->events[k / 3][k % 3]));
	r = r ? r
	      : head(
		    sb, change, "histogram",
		    "Seconds from a ConfigMap or Secret change seen to its rollout PATCH answered.");
	r = r ? r : hist(sb, change, "", &m->change_latency, change_bounds, change_nb);
	r = r ? r : head(sb, info, "gauge", "nodeprobe-reload's version; always 1.");
	r = r ? r : sb_addf(sb, "%s{version=\"%s\"} 1\n", info, NP_VERSION);
	return r ? r : render_process(sb);
}
