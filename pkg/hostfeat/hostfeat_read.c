/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostfeat_read: bounded, non-blocking reads of sysfs/procfs attributes, as NFD's os.ReadFile. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of d, at most max + 1 of them (the one more tells "over"): 0 or -ENOMEM / -errno. */
static int list_bounded(DIR *d, size_t max, char ***names, size_t *n)
{
	size_t cap = 0;
	struct dirent *e;

	for (errno = 0; *n <= max && (e = readdir(d)); errno = 0) {
		char **grown;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(*names, cap * sizeof(char *));
			if (!grown)
				return -ENOMEM;
			*names = grown;
		}
		if (!((*names)[*n] = strdup(e->d_name)))
			return -ENOMEM;
		(*n)++;
	}
	return errno ? -errno : 0;
}

int hf_list(const char *dir, char ***names, size_t *n, struct log_err *err)
{
	DIR *d = opendir(dir);
	int r;

	*names = NULL;
	*n = 0;
	if (!d) {
		if (errno == ENOENT)
			return HF_ABSENT;
		log_debug("%s: %s", dir, strerror(errno));
		return HF_UNREADABLE;
	}
	r = list_bounded(d, HOSTFEAT_DIR_MAX, names, n);
	closedir(d);
	if (r == 0 && *n > HOSTFEAT_DIR_MAX) {
		log_warn("%s: more than %d entries, its feature left out", dir, HOSTFEAT_DIR_MAX);
		r = HF_UNREADABLE;
	} else if (r == -ENOMEM) {
		r = log_err_set(err, -ENOMEM, "out of memory");
	} else if (r < 0) {
		log_debug("%s: %s", dir, strerror(-r));
		r = HF_UNREADABLE;
	}
	if (r != 0) {
		fs_names_free(*names, *n);
		*names = NULL;
		*n = 0;
		return r;
	}
	if (*n > 1) /* an empty directory leaves *names NULL: qsort(NULL, 0) is undefined */
		qsort(*names, *n, sizeof(char *), name_cmp); /* Go's os.ReadDir sorts by name */
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
