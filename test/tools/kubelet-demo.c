// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kubelet-demo: a test provider over pkg/kubelet, for the wire without pkg/devices.
 *   kubelet-demo DIR RESOURCE[,N] [RESOURCE[,N]]  (N fake devices, default 2: <name>-0 ...)
 * Serves each resource in DIR (sockets "demo-<resource>.sock"); SIGUSR1 flips the health of
 * every resource's first device; SIGTERM/SIGINT: clean exit (sockets removed). Allocate answers,
 * per ID: a DeviceSpec /dev/<id> (host /dev/null, "rw"), a read-only mount /mnt/<id> of /tmp,
 * env DEMO_<i>=<id>, annotation demo.nodeprobe.io/<id>=<resource>, CDI name
 * nodeprobe.io/demo=<id>; an unknown ID fails NOT_FOUND. Preferred: the must IDs, then the
 * first available ones. Logs to stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "kubelet/kubelet.h"
#include "log/log.h"

struct demo {
	struct kubelet_srv *s;
	char names[2][64];
	struct kubelet_device devs[2][16];
	char ids[2][16][80];
	size_t n[2], n_res;
	int sfd;
};

static bool known(struct demo *d, size_t res, const char *id)
{
	for (size_t i = 0; i < d->n[res]; i++)
		if (!strcmp(d->ids[res][i], id))
			return true;
	return false;
}

static int demo_alloc(void *ctx, size_t res, const char *const *ids, size_t n,
		      struct kubelet_alloc *out, struct log_err *err)
{
	struct demo *d = ctx;
	/* One block: the arrays, then the strings. */
	size_t strsz = n * 4 * 128 + 1;
	char *blk, *p;

	for (size_t i = 0; i < n; i++)
		if (!known(d, res, ids[i]))
			return log_err_set(err, -ENOENT, "unknown device '%s'", ids[i]);
	blk = calloc(1, n * (sizeof(struct kubelet_spec) + sizeof(struct kubelet_mount) +
			     2 * sizeof(struct kubelet_kv) + sizeof(char *)) +
			    strsz + 64);
	if (!blk)
		return log_err_set(err, -ENOMEM, "out of memory");
	out->specs = (struct kubelet_spec *)blk;
	out->mounts = (struct kubelet_mount *)(out->specs + n);
	out->envs = (struct kubelet_kv *)(out->mounts + n);
	out->annotations = out->envs + n;
	out->cdi_names = (const char **)(out->annotations + n);
	p = (char *)(out->cdi_names + n);
	for (size_t i = 0; i < n; i++) {
		char *a = p;

		p += sprintf(p, "/dev/%s", ids[i]) + 1;
		out->specs[i] = (struct kubelet_spec){a, "/dev/null", "rw"};
		a = p;
		p += sprintf(p, "/mnt/%s", ids[i]) + 1;
		out->mounts[i] = (struct kubelet_mount){a, "/tmp", true};
		a = p;
		p += sprintf(p, "DEMO_%zu", i) + 1;
		out->envs[i] = (struct kubelet_kv){a, ids[i]};
		a = p;
		p += sprintf(p, "demo.nodeprobe.io/%s", ids[i]) + 1;
		out->annotations[i] = (struct kubelet_kv){a, d->names[res]};
		a = p;
		p += sprintf(p, "nodeprobe.io/demo=%s", ids[i]) + 1;
		out->cdi_names[i] = a;
	}
	out->n_specs = out->n_mounts = out->n_envs = out->n_annotations = out->n_cdi = n;
	out->priv = blk;
	return 0;
}

static void demo_free(void *ctx, struct kubelet_alloc *a)
{
	(void)ctx;
	free(a->priv);
}

static int demo_preferred(void *ctx, size_t res, const char *const *avail, size_t n_avail,
			  const char *const *must, size_t n_must, size_t size, const char **out,
			  struct log_err *err)
{
	size_t k = 0;

	(void)ctx;
	(void)res;
	(void)err;
	for (size_t i = 0; i < n_must && k < size; i++)
		out[k++] = must[i];
	for (size_t i = 0; i < n_avail && k < size; i++) {
		bool dup = false;

		for (size_t j = 0; j < n_must; j++)
			dup |= !strcmp(must[j], avail[i]);
		if (!dup)
			out[k++] = avail[i];
	}
	return (int)k;
}

static int on_signal(void *ctx, struct log_err *err)
{
	struct demo *d = ctx;
	struct signalfd_siginfo si;

	if (read(d->sfd, &si, sizeof(si)) != sizeof(si))
		return 0;
	if (si.ssi_signo != SIGUSR1)
		return 1;
	for (size_t r = 0; r < d->n_res; r++) {
		int rc;

		if (!d->n[r])
			continue;
		d->devs[r][0].healthy = !d->devs[r][0].healthy;
		rc = kubelet_srv_set_devices(d->s, r, d->devs[r], d->n[r], err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void to_stderr(void *data, enum log_level lvl, const char *msg)
{
	(void)data;
	fprintf(stderr, "kubelet-demo: %s: %s\n",
		lvl == LOG_LVL_ERROR  ? "error"
		: lvl == LOG_LVL_WARN ? "warning"
				      : "info",
		msg);
}

int main(int argc, char **argv)
{
	struct demo d = {0};
	struct log_err err = {0};
	struct kubelet_opts o = {
	    .socket_prefix = "demo-", .ops = {demo_alloc, demo_free, demo_preferred}, .ctx = &d};
	struct kubelet_poll p = {.ready = on_signal, .ctx = &d};
	sigset_t ss;
	int rc;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: kubelet-demo DIR RESOURCE[,N] [RESOURCE[,N]]\n");
		return 2;
	}
	log_set_fn(to_stderr, NULL, getenv("DEMO_DEBUG") ? LOG_LVL_DEBUG : LOG_LVL_INFO);
	sigemptyset(&ss);
	sigaddset(&ss, SIGUSR1);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	d.sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	p.fd = d.sfd;
	o.dir = argv[1];
	rc = kubelet_srv_new(&o, &d.s, &err);
	for (int a = 2; rc >= 0 && a < argc; a++) {
		char *comma = strchr(argv[a], ',');
		size_t r = d.n_res++, n = comma ? strtoul(comma + 1, NULL, 10) : 2;
		const char *base;

		if (comma)
			*comma = '\0';
		snprintf(d.names[r], sizeof(d.names[r]), "%s", argv[a]);
		base = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
		d.n[r] = n > 16 ? 16 : n;
		for (size_t i = 0; i < d.n[r]; i++) {
			snprintf(d.ids[r][i], sizeof(d.ids[r][i]), "%s-%zu", base, i);
			d.devs[r][i] = (struct kubelet_device){d.ids[r][i], true, i % 2 ? 1 : -1};
		}
		rc = kubelet_srv_add(d.s, argv[a], &err);
		if (rc >= 0)
			rc = kubelet_srv_set_devices(d.s, r, d.devs[r], d.n[r], &err);
	}
	if (rc >= 0)
		rc = kubelet_srv_run(d.s, &p, 1, &err);
	kubelet_srv_free(d.s);
	if (rc < 0) {
		fprintf(stderr, "kubelet-demo: error: %s\n", err.msg);
		return 1;
	}
	return 0;
}
