// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dra_state: what dra_prep keeps on disk, and what it trusts of it: the checkpoint of prepared
 * claims (<state_dir>/checkpoint.json: written whole, atomically; loaded only when every field
 * is as we write it), the claim CDI specs' names and the test of a file being one of ours, and
 * the clean-up of what a killed run leaves (specs no checkpoint holds, dot-temp files).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dra/dra_internal.h"
#include "fsutil/fsutil.h"
#include "log/log.h"
#include "strbuf/strbuf.h"

void dst_claim_free(struct pclaim *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->d[i].request);
		free(c->d[i].pool);
		free(c->d[i].device);
		free(c->d[i].cdi);
	}
	free(c->d);
	free(c->uid);
	free(c->ns);
	free(c->name);
	free(c);
}

long dst_find(const struct dra_prep *p, const char *uid)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->c[i]->uid, uid))
			return (long)i;
	return -1;
}

/* "<driver>-claim_<uid>.json" */
int dst_spec_name(const struct dra_prep *p, const char *uid, char *out, size_t cap)
{
	if ((size_t)snprintf(out, cap, "%s-%s_%s.json", p->driver, DRA_CDI_CLASS, uid) >= cap ||
	    !fs_name_is_safe(out))
		return -EINVAL;
	return 0;
}

/*
 * A claim UID we put in a file name and a CDI id: 1..36 of [A-Za-z0-9-] (the API server's are
 * UUIDs; the CDI device-name grammar takes these, and no '_', '.' or '/').
 */
bool dra_uid_ok(const char *uid)
{
	size_t n = 0;

	for (; uid && uid[n]; n++)
		if (n >= 36 ||
		    !((uid[n] >= 'a' && uid[n] <= 'z') || (uid[n] >= 'A' && uid[n] <= 'Z') ||
		      (uid[n] >= '0' && uid[n] <= '9') || uid[n] == '-'))
			return false;
	return n > 0;
}

/*
 * Is the file at path a claim spec we wrote for uid? A regular file (lstat), kind
 * <driver>/claim, every device named <uid>-... (like pkg/devices/devices_cdi.c ours()): a file
 * we did not write is never deleted.
 */
static bool spec_is_ours(const struct dra_prep *p, const char *uid, const char *path)
{
	struct stat st;
	char kind[300];
	json_t *j, *devs, *d;
	size_t i, ul = strlen(uid);
	bool yes;

	if (!dra_uid_ok(uid) || lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > DRA_CLAIM_BYTES_MAX)
		return false;
	j = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
	devs = json_object_get(j, "devices");
	snprintf(kind, sizeof(kind), "%s/%s", p->driver, DRA_CDI_CLASS);
	yes = json_is_array(devs) &&
	      !strcmp(json_string_value(json_object_get(j, "kind")) ?: "", kind);
	json_array_foreach(devs, i, d)
	{
		const char *n = json_string_value(json_object_get(d, "name")) ?: "";

		yes = yes && !strncmp(n, uid, ul) && n[ul] == '-';
	}
	json_decref(j);
	return yes;
}

/* Remove the spec file of uid if it is ours (spec_is_ours); a foreign file is logged. */
void dst_unlink(const struct dra_prep *p, const char *uid)
{
	char name[512], path[4096];

	if (dst_spec_name(p, uid, name, sizeof(name)) < 0 ||
	    fs_path_join(path, sizeof(path), p->cdi_dir, name, NULL) < 0 || access(path, F_OK) != 0)
		return;
	if (spec_is_ours(p, uid, path))
		unlink(path);
	else
		log_warn("dra: %s: not a claim spec of ours (kind %s/%s, devices %s-*): left alone",
			 path, p->driver, DRA_CDI_CLASS, uid);
}

int dst_write(struct dra_prep *p, struct log_err *err)
{
	json_t *root = json_object(), *arr = json_array();
	char *s;
	int rc;

	if (!root || !arr)
		goto oom;
	json_object_set_new(root, "kind", json_string("NodeprobeDRACheckpoint"));
	json_object_set_new(root, "version", json_integer(1));
	json_object_set_new(root, "driver", json_string(p->driver));
	json_object_set_new(root, "claims", arr);
	for (size_t i = 0; i < p->n; i++) {
		const struct pclaim *c = p->c[i];
		json_t *jc = json_pack("{s:s,s:s,s:s,s:[]}", "uid", c->uid, "namespace", c->ns,
				       "name", c->name, "devices");

		if (!jc)
			goto oom;
		for (size_t k = 0; k < c->n; k++)
			json_array_append_new(json_object_get(jc, "devices"),
					      json_pack("{s:s,s:s,s:s,s:s,s:b}", "request",
							c->d[k].request, "pool", c->d[k].pool,
							"device", c->d[k].device, "cdi",
							c->d[k].cdi, "adminAccess", c->d[k].admin));
		json_array_append_new(arr, jc);
	}
	s = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(root);
	if (!s)
		return log_err_set(err, -ENOMEM, "out of memory");
	if (strlen(s) > DRA_CHECKPOINT_BYTES_MAX) { /* what we write we can load again */
		free(s);
		return log_err_set(err, -E2BIG, "%s/%s: would be over %d bytes", p->state_dir,
				   DRA_CHECKPOINT, DRA_CHECKPOINT_BYTES_MAX);
	}
	rc = fs_publish(p->state_dir, DRA_CHECKPOINT, s, strlen(s), 0600, err);
	free(s);
	return rc < 0 ? rc : 0;
oom:
	json_decref(root);
	json_decref(arr);
	return log_err_set(err, -ENOMEM, "out of memory");
}

/*
 * Is v a name of 1..max characters of [a-z0-9-] (and '.' with dots), beginning and ending with
 * a letter or digit (a Kubernetes DNS label or subdomain, a DRA device or request name)? NULL,
 * or the rule it breaks.
 */
const char *dst_name_rule(const char *v, size_t max, bool dots)
{
	size_t n = v ? strlen(v) : 0;

	if (n == 0 || n > max)
		return dots ? "want 1 to 253 characters" : "want 1 to 63 characters";
	for (size_t i = 0; i < n; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') ||
		      (v[i] == '-' && i > 0 && i < n - 1) || (dots && v[i] == '.')))
			return dots
				   ? "want lower-case letters, digits, '-' and '.' (a DNS subdomain)"
				   : "want lower-case letters, digits and '-' (a DNS label)";
	return NULL;
}

/* The string field k of o, checked; NULL with err naming the checkpoint, where and why. */
static char *field(const char *path, size_t i, long k_dev, json_t *o, const char *k, size_t max,
		   bool dots, struct log_err *err)
{
	const char *v = json_string_value(json_object_get(o, k));
	const char *why = !v ? "missing or not a string" : dst_name_rule(v, max, dots);
	char *d;

	if (why) {
		if (k_dev >= 0)
			log_err_set(err, -EBADMSG, "%s: claims[%zu].devices[%ld].%s: '%.64s': %s",
				    path, i, k_dev, k, v ? v : "", why);
		else
			log_err_set(err, -EBADMSG, "%s: claims[%zu].%s: '%.64s': %s", path, i, k,
				    v ? v : "", why);
		return NULL;
	}
	d = strdup(v);
	if (!d)
		log_err_set(err, -ENOMEM, "out of memory");
	return d;
}

/* Claim i of the checkpoint at path (every field checked) into c. 0 or -EBADMSG/-ENOMEM. */
static int load_claim(struct dra_prep *p, const char *path, size_t i, json_t *jc, struct pclaim *c,
		      struct log_err *err)
{
	json_t *devs = json_object_get(jc, "devices"), *jd;
	const char *uid = json_string_value(json_object_get(jc, "uid"));
	size_t k;

	if (!dra_uid_ok(uid))
		return log_err_set(err, -EBADMSG,
				   "%s: claims[%zu].uid: '%.64s': want 1 to 36 letters, digits "
				   "or '-'",
				   path, i, uid ? uid : "");
	if (dst_find(p, uid) >= 0)
		return log_err_set(err, -EBADMSG, "%s: claims[%zu].uid: '%s' twice", path, i, uid);
	if (!json_is_array(devs) || json_array_size(devs) > DRA_RESULTS_MAX)
		return log_err_set(err, -EBADMSG,
				   "%s: claims[%zu].devices: want a list of at most %d", path, i,
				   DRA_RESULTS_MAX);
	c->uid = strdup(uid);
	c->ns = c->uid ? field(path, i, -1, jc, "namespace", 63, false, err) : NULL;
	c->name = c->ns ? field(path, i, -1, jc, "name", 253, true, err) : NULL;
	c->d = c->name ? calloc(json_array_size(devs) + 1, sizeof(*c->d)) : NULL;
	if (!c->d)
		return c->name ? log_err_set(err, -ENOMEM, "out of memory") : err->code;
	json_array_foreach(devs, k, jd)
	{
		struct pdev *d = &c->d[c->n++];
		char want[512];
		const char *cdi = json_string_value(json_object_get(jd, "cdi"));

		if (!(d->request = field(path, i, (long)k, jd, "request", 63, false, err)) ||
		    !(d->pool = field(path, i, (long)k, jd, "pool", 253, true, err)) ||
		    !(d->device = field(path, i, (long)k, jd, "device", 63, false, err)))
			return err->code;
		/* the id is ours to make: <driver>/claim=<uid>-<device>, nothing else */
		snprintf(want, sizeof(want), "%s/%s=%s-%s", p->driver, DRA_CDI_CLASS, uid,
			 d->device);
		if (!cdi || strcmp(cdi, want))
			return log_err_set(err, -EBADMSG,
					   "%s: claims[%zu].devices[%zu].cdi: want '%s'", path, i,
					   k, want);
		d->cdi = strdup(cdi);
		if (!d->cdi)
			return log_err_set(err, -ENOMEM, "out of memory");
		d->admin = json_is_true(json_object_get(jd, "adminAccess"));
	}
	return 0;
}

/*
 * Load the checkpoint, trusting nothing of it: at most DRA_CHECKPOINT_BYTES_MAX bytes, our kind,
 * version and driver, at most DRA_PREPARED_MAX claims, each field as we write it (a UID usable
 * in a file name, names and devices as the API has them, each CDI id the one we would make). A
 * file that is not: -EBADMSG with err naming it, the claim and the field (nothing is removed).
 */
int dst_load(struct dra_prep *p, struct log_err *err)
{
	struct strbuf sb = STRBUF_INIT(DRA_CHECKPOINT_BYTES_MAX);
	char path[4096];
	json_error_t je;
	json_t *root, *arr, *jc;
	size_t i;
	int rc;

	if (fs_path_join(path, sizeof(path), p->state_dir, DRA_CHECKPOINT, err) < 0)
		return -ENAMETOOLONG;
	if (access(path, F_OK) != 0)
		return 0;
	rc = sb_read_file(&sb, path);
	if (rc < 0) {
		sb_free(&sb);
		if (rc == -E2BIG)
			return log_err_set(err, -EBADMSG,
					   "%s: over %d bytes: not a checkpoint of ours", path,
					   DRA_CHECKPOINT_BYTES_MAX);
		return log_err_set(err, rc, "%s: %s", path, strerror(-rc));
	}
	root = json_loadb(sb.buf, sb.len, JSON_REJECT_DUPLICATES, &je);
	sb_free(&sb);
	arr = json_object_get(root, "claims");
	if (!root || !json_is_array(arr) ||
	    strcmp(json_string_value(json_object_get(root, "kind")) ?: "",
		   "NodeprobeDRACheckpoint") ||
	    json_integer_value(json_object_get(root, "version")) != 1 ||
	    strcmp(json_string_value(json_object_get(root, "driver")) ?: "", p->driver)) {
		if (!root)
			rc = log_err_set(err, -EBADMSG, "%s:%d: not a checkpoint: %s", path,
					 je.line, je.text);
		else if (!json_is_array(arr))
			rc = log_err_set(err, -EBADMSG, "%s: not a checkpoint: no claims list",
					 path);
		else
			rc = log_err_set(
			    err, -EBADMSG,
			    "%s: not a checkpoint of driver %s: want kind NodeprobeDRACheckpoint, version 1 and our driver",
			    path, p->driver);
		json_decref(root);
		return rc;
	}
	if (json_array_size(arr) > DRA_PREPARED_MAX) {
		json_decref(root);
		return log_err_set(err, -EBADMSG, "%s: %zu claims: at most %d", path,
				   json_array_size(arr), DRA_PREPARED_MAX);
	}
	p->c = calloc(json_array_size(arr) + 1, sizeof(*p->c));
	rc = p->c ? 0 : log_err_set(err, -ENOMEM, "out of memory");
	json_array_foreach(arr, i, jc)
	{
		struct pclaim *c = rc == 0 ? calloc(1, sizeof(*c)) : NULL;

		if (!c) {
			rc = rc < 0 ? rc : log_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		rc = load_claim(p, path, i, jc, c, err);
		if (rc < 0) {
			dst_claim_free(c);
			break;
		}
		p->c[p->n++] = c;
	}
	json_decref(root);
	return rc;
}

/*
 * Remove the dot-temp files of ours (fs_publish's ".<name>.XXXXXX") a run killed mid-write left,
 * older than max_age seconds: the checkpoint's, and claim specs' (".<driver>-claim_<uid>.json.
 * XXXXXX" with a valid UID). Nothing else is touched (fs_publish_clean).
 */
void dst_clean_temps(struct dra_prep *p, long max_age)
{
	char prefix[256], **names = NULL;
	size_t n = 0, pl;

	fs_publish_clean(p->state_dir, DRA_CHECKPOINT, max_age);
	pl = (size_t)snprintf(prefix, sizeof(prefix), ".%s-%s_", p->driver, DRA_CDI_CLASS);
	if (fs_list_dir(p->cdi_dir, &names, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(names[i]);
		char uid[64];

		/* ".<driver>-claim_" <uid> ".json." and six characters */
		if (strncmp(names[i], prefix, pl) || l < pl + 12 || l - pl - 12 >= sizeof(uid) ||
		    strncmp(names[i] + l - 12, ".json.", 6))
			continue;
		snprintf(uid, sizeof(uid), "%.*s", (int)(l - pl - 12), names[i] + pl);
		names[i][l - 7] = '\0'; /* the name the temp file was for, without the dot */
		if (dra_uid_ok(uid))
			fs_publish_clean(p->cdi_dir, names[i] + 1, max_age);
	}
	fs_names_free(names, n);
}

/* Remove our claim specs the checkpoint does not hold (a run killed before writing it). */
void dst_clean_orphans(struct dra_prep *p)
{
	char prefix[256], **names = NULL;
	size_t n = 0, pl;

	snprintf(prefix, sizeof(prefix), "%s-%s_", p->driver, DRA_CDI_CLASS);
	pl = strlen(prefix);
	if (fs_list_dir(p->cdi_dir, &names, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(names[i]);
		char uid[256], path[4096];

		if (strncmp(names[i], prefix, pl) || l < pl + 6 ||
		    strcmp(names[i] + l - 5, ".json"))
			continue;
		snprintf(uid, sizeof(uid), "%.*s", (int)(l - pl - 5), names[i] + pl);
		if (dst_find(p, uid) >= 0 ||
		    fs_path_join(path, sizeof(path), p->cdi_dir, names[i], NULL) < 0)
			continue;
		if (!spec_is_ours(p, uid, path)) {
			log_warn("dra: %s: named like a claim spec but not ours (kind %s/%s, "
				 "devices <uid>-*): left alone",
				 path, p->driver, DRA_CDI_CLASS);
			continue;
		}
		log_info("dra: %s/%s: a claim spec no checkpoint holds (a run stopped "
			 "mid-prepare): removed",
			 p->cdi_dir, names[i]);
		unlink(path);
	}
	fs_names_free(names, n);
}
