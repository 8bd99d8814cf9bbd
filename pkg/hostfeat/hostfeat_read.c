/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostfeat_read: bounded, non-blocking reads of sysfs/procfs attributes, as NFD's os.ReadFile. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "feature/feature.h"
#include "fsutil/fsutil.h"
#include "hostfeat/hostfeat.h"
#include "hostfeat/hostfeat_internal.h"
#include "log/log.h"

int hf_read(const char *dir, const char *rel, struct hf_buf *b)
{
	char path[4096];
	struct stat st;
	ssize_t n = 0;
	int fd;

	b->len = 0;
	b->s[0] = '\0';
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	/* sysfs answers in one read (a page); loop for a regular file copied into a fixture */
	while (b->len < HOSTFEAT_FILE_MAX) {
		n = read(fd, b->s + b->len, HOSTFEAT_FILE_MAX - b->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		b->len += (size_t)n;
	}
	close(fd);
	if (n < 0) {
		log_debug("%s: %s, left out", path, strerror(errno));
		b->len = 0;
		b->s[0] = '\0';
		return 0;
	}
	b->s[b->len] = '\0';
	return 1;
}

char *hf_trim(struct hf_buf *b)
{
	size_t i = 0, n = b->len;

	while (n && isspace((unsigned char)b->s[n - 1]))
		n--;
	while (i < n && isspace((unsigned char)b->s[i]))
		i++;
	memmove(b->s, b->s + i, n - i);
	b->len = n - i;
	b->s[b->len] = '\0';
	return b->s;
}

const char *hf_value(const char *dir, const char *rel, struct hf_buf *b)
{
	return hf_read(dir, rel, b) ? hf_trim(b) : NULL;
}

int hf_list(const char *dir, char ***names, size_t *n, struct log_err *err)
{
	struct log_err e = {0};

	if (fs_list_dir(dir, names, n, &e) < 0) {
		if (e.code == -ENOMEM)
			return log_err_set(err, -ENOMEM, "out of memory");
		log_debug("%s", e.msg);
		return 1;
	}
	if (*n > HOSTFEAT_DIR_MAX) {
		fs_names_free(*names, *n);
		*names = NULL;
		*n = 0;
		return log_err_set(err, -E2BIG, "%s: more than %d entries", dir, HOSTFEAT_DIR_MAX);
	}
	return 0;
}

int hf_inst_attr(struct feat *inst, const char *key, const char *dir, const char *rel)
{
	struct hf_buf b;
	const char *v = hf_value(dir, rel, &b);

	return v && feat_instance_set(inst, key, v) < 0 ? -ENOMEM : 0;
}

int hf_attr(struct feat_set *fs, const char *feature, const char *key, const char *dir,
	    const char *rel)
{
	struct hf_buf b;
	const char *v = hf_value(dir, rel, &b);

	if (!v)
		return 0;
	return feat_attr_set(fs, feature, key, v) < 0 ? -ENOMEM : 1;
}
