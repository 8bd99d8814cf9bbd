/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_osrelease: os-release files (real Talos, Raspberry Pi OS, Debian) as system.osrelease. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "feature/feature.h"
#include "harness.h"
#include "log/log.h"
#include "osrelease/osrelease.h"

/* The elements of system.osrelease as "k=v;" in name order, or "absent". */
static const char *dump(const struct feat_set *fs)
{
	static char out[4096];
	const struct feat *f = feat_get(fs, OSRELEASE_FEATURE);
	size_t i, n = 0;

	if (!f)
		return "absent";
	out[0] = '\0';
	for (i = 0; i < feat_nelems(f); i++) {
		const char *k, *v;

		feat_elem_at(f, i, &k, &v);
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s=%s;", k, v);
	}
	return out;
}

static const char *parse(const char *text)
{
	struct feat_set *fs = feat_set_new();
	static char out[4096];

	if (osrelease_parse(text, strlen(text), fs) < 0)
		snprintf(out, sizeof(out), "error");
	else
		snprintf(out, sizeof(out), "%s", dump(fs));
	feat_set_free(fs);
	return out;
}

TEST(osrelease_nfd_version_parts)
{
	/* NFD's ^(\d+)(\.(\d+))?(\..*)?$, vectors as reference/nfd.md 10.4 verified them */
	CHECK_STR(parse("VERSION_ID=\"22.04\"\n"),
		  "VERSION_ID=22.04;VERSION_ID.major=22;VERSION_ID.minor=04;");
	CHECK_STR(parse("VERSION_ID=12"), "VERSION_ID=12;VERSION_ID.major=12;");
	CHECK_STR(parse("VERSION_ID=9.2.1\n"),
		  "VERSION_ID=9.2.1;VERSION_ID.major=9;VERSION_ID.minor=2;");
	CHECK_STR(parse("VERSION_ID=8.10-beta\n"), "VERSION_ID=8.10-beta;VERSION_ID.major=8;");
	CHECK_STR(parse("VERSION_ID=rolling\n"), "VERSION_ID=rolling;");
	CHECK_STR(parse("VERSION_ID=1.\n"), "VERSION_ID=1.;VERSION_ID.major=1;");
	CHECK_STR(parse("VERSION_ID=v1.9.5\n"), "VERSION_ID=v1.9.5;");
}

TEST(osrelease_nfd_line_rules)
{
	/* ^\w+=.+ from column 0; quotes of both kinds trimmed at both ends; later key wins */
	CHECK_STR(parse(" ID=x\nNAME=\nA-B=c\n#C=d\nE=\"'v'\"\nF=a=b\nG=1\nG=2\r\nH=\"\"\n"),
		  "E=v;F=a=b;G=2;H=;");
	CHECK_STR(parse(""), "");
	CHECK_STR(parse("no equals here\n\n\n"), "");
	/* a value of quotes only is non-empty for the regexp, empty after the trim */
	CHECK_STR(parse("X='\"'\nY=\\\"a\\\"\n"), "X=;Y=\\\"a\\;");
}

/* Real files: Talos (its os-release template), Raspberry Pi OS, and Debian 12 (this machine). */
TEST(osrelease_real_files)
{
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};

	REQUIRE_INT(osrelease_scan(harness_fixture("os-release/talos-v1.9.5"), fs, &err), 0);
	CHECK_STR(dump(fs), "BUG_REPORT_URL=https://github.com/siderolabs/talos/issues;"
			    "HOME_URL=https://www.talos.dev/;ID=talos;NAME=Talos;"
			    "PRETTY_NAME=Talos (v1.9.5);VENDOR_NAME=Sidero Labs;"
			    "VENDOR_URL=https://www.siderolabs.com/;VERSION_ID=v1.9.5;");
	feat_set_free(fs);
	fs = feat_set_new();
	REQUIRE_INT(osrelease_scan(harness_fixture("os-release/raspbian-11-bullseye"), fs, &err),
		    0);
	CHECK_STR(feat_lookup(feat_get(fs, OSRELEASE_FEATURE), "ID"), "raspbian");
	CHECK_STR(feat_lookup(feat_get(fs, OSRELEASE_FEATURE), "ID_LIKE"), "debian");
	CHECK_STR(feat_lookup(feat_get(fs, OSRELEASE_FEATURE), "VERSION_ID.major"), "11");
	CHECK(feat_lookup(feat_get(fs, OSRELEASE_FEATURE), "VERSION_ID.minor") == NULL);
	feat_set_free(fs);
	fs = feat_set_new();
	REQUIRE_INT(
	    osrelease_scan(harness_fixture("host/firecracker-x86/etc/os-release"), fs, &err), 0);
	CHECK_STR(feat_lookup(feat_get(fs, OSRELEASE_FEATURE), "PRETTY_NAME"),
		  "Debian GNU/Linux 12 (bookworm)");
	feat_set_free(fs);
}

TEST(osrelease_missing_and_bad)
{
	struct feat_set *fs = feat_set_new();
	struct log_err err = {0};
	const char *dir = harness_tmpdir();
	char path[128], big[OSRELEASE_MAX + 10];

	snprintf(path, sizeof(path), "%s/none", dir);
	CHECK_INT(osrelease_scan(path, fs, &err), 0);
	CHECK_STR(dump(fs), "absent");
	CHECK_INT(osrelease_scan(dir, fs, &err), -EISDIR);
	CHECK(strstr(err.msg, dir) != NULL);
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	harness_put_str(dir, "big", big);
	snprintf(path, sizeof(path), "%s/big", dir);
	CHECK_INT(osrelease_scan(path, fs, &err), -E2BIG);
	CHECK(strstr(err.msg, "longer than 65536 bytes") != NULL);
	feat_set_free(fs);
}
