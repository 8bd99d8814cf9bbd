/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_devices_watch: hotplug events from inotify on a temp dev root, new subdirectories too. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/devices.h"
#include "log/log.h"

#include "harness.h"

static int ready(struct devices_watch *w)
{
	struct pollfd p = {.fd = devices_watch_fd(w), .events = POLLIN};

	return poll(&p, 1, 2000) == 1 ? devices_watch_drain(w) : 0;
}

TEST(devices_watch_nodes_and_new_dirs)
{
	const char *dir = harness_tmpdir();
	struct devices_watch *w = NULL;
	struct log_err err = {0};
	char p[300], q[400];

	REQUIRE_INT(devices_watch_new(dir, &w, &err), 0);
	CHECK_INT(devices_watch_drain(w), 0); /* nothing yet, and no blocking */
	snprintf(p, sizeof(p), "%s/ttyUSB0", dir);
	harness_put_str(dir, "ttyUSB0", "");
	CHECK_INT(ready(w), 1);
	unlink(p);
	CHECK_INT(ready(w), 1);
	/* a directory made after the start (/dev/bus/usb/003) is watched too */
	snprintf(p, sizeof(p), "%s/serial", dir);
	REQUIRE(mkdir(p, 0755) == 0);
	CHECK_INT(ready(w), 1);
	snprintf(q, sizeof(q), "%s/by-id", p);
	REQUIRE(mkdir(q, 0755) == 0);
	CHECK_INT(ready(w), 1);
	harness_put_str(dir, "serial/by-id/usb-x", "");
	CHECK_INT(ready(w), 1);
	devices_watch_free(w);
	CHECK_INT(devices_watch_new("/nonexistent/dev", &w, &err), -ENOENT);
	CHECK(strstr(err.msg, "/nonexistent/dev") != NULL);
}
