/*
 * audit - JSON Lines writer for the audit trail.  One write(2) per record
 * (O_APPEND), so concurrent readers never see half a line and a crash
 * loses at most the record being written.  Size-based rotation
 * (audit.jsonl -> .1 -> ... -> .keep) happens between records, so a record
 * is never split across files; audit_reopen() serves SIGHUP after an
 * external rotation (logrotate: move, then HUP).  A failing write (disk
 * full, file gone read-only) is counted; the writer logs once when writing
 * starts failing and once when it recovers, and retries opening the file
 * at most once a second meanwhile.  This is an edge module: it logs.
 */
#include "netd/audit.h"

#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct audit {
	int fd;			/* -1 while the file cannot be opened */
	bool own_fd;
	bool failing;		/* writes are failing; logged once on entry and exit */
	char *path;		/* NULL for stdout */
	uint64_t size;		/* bytes in the current file (fstat at open, then counted) */
	uint64_t rotate_bytes;	/* 0 = never rotate */
	uint32_t keep;		/* rotated files kept: path.1 .. path.keep */
	time_t last_reopen;	/* CLOCK_MONOTONIC seconds of the last retry after a failure */
	uint64_t written;
	uint64_t dropped;
	uint64_t rotations;
};

#define AUDIT_MAX_KEEP 1000
#define AUDIT_RETRY_S  1	/* reopen attempts after a failure, at most this often */

static int mkdir_parent(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(dir, 0750) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Open a->path into a->fd and learn its size.  Return: 0; -errno. */
static int open_file(struct audit *a)
{
	struct stat st;
	int fd, r;

	r = mkdir_parent(a->path);
	if (r < 0)
		return r;
	fd = open(a->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	a->fd = fd;
	a->size = (uint64_t)st.st_size;
	return 0;
}

int audit_open(const char *path, struct audit **ret)
{
	struct audit *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->fd = -1;
	a->keep = 5;
	if (strcmp(path, "-") == 0) {
		a->fd = STDOUT_FILENO;
	} else {
		a->path = strdup(path);
		if (!a->path) {
			free(a);
			return -ENOMEM;
		}
		r = open_file(a);
		if (r < 0) {
			free(a->path);
			free(a);
			return r;
		}
		a->own_fd = true;
	}
	*ret = a;
	return 0;
}

void audit_close(struct audit *a)
{
	if (!a)
		return;
	if (a->own_fd && a->fd >= 0)
		close(a->fd);
	free(a->path);
	free(a);
}

void audit_set_rotation(struct audit *a, uint64_t rotate_bytes, uint32_t keep)
{
	a->rotate_bytes = rotate_bytes;
	a->keep = keep < 1 ? 1 : keep > AUDIT_MAX_KEEP ? AUDIT_MAX_KEEP : keep;
}

int audit_reopen(struct audit *a)
{
	int r;

	if (!a->path)
		return 0;	/* stdout */
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	r = open_file(a);
	if (r < 0 && !a->failing) {
		a->failing = true;
		log_err("audit log %s: cannot reopen: %s; records are counted as dropped until it can be written",
			a->path, strerror(-r));
	}
	return r;
}

/*
 * Shift path.(keep-1) -> path.keep ... path -> path.1, then open a new path.
 * A rename that fails (other than a missing file) is logged and the shift
 * stops there; the current file is then reopened and grows past the limit
 * rather than losing records.
 */
static int rotate(struct audit *a)
{
	char from[PATH_MAX], to[PATH_MAX];
	int r;

	for (uint32_t i = a->keep; i >= 1; i--) {
		if (i == 1)
			r = snprintf(from, sizeof(from), "%s", a->path);
		else
			r = snprintf(from, sizeof(from), "%s.%u", a->path, i - 1);
		if (r < 0 || r >= (int)sizeof(from) ||
		    snprintf(to, sizeof(to), "%s.%u", a->path, i) >= (int)sizeof(to))
			return -ENAMETOOLONG;
		/* rename() replaces path.keep: the oldest file is dropped here. */
		if (rename(from, to) < 0 && errno != ENOENT) {
			r = -errno;
			log_warn("audit log rotation: rename %s -> %s: %s", from, to, strerror(-r));
			break;
		}
	}
	a->rotations++;
	return audit_reopen(a);
}

/* Monotonic seconds, for the reopen rate limit. */
static time_t mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* One write of @line (@len bytes, ending in '\n').  Return: 0; -errno. */
static int write_line(struct audit *a, const char *line, size_t len)
{
	ssize_t n;

	if (a->fd < 0)
		return -EBADF;
	n = write(a->fd, line, len);
	if (n < 0)
		return -errno;
	if (n > 0)
		a->size += (uint64_t)n;
	if ((size_t)n != len) {
		/*
		 * A short write (disk full mid-record) leaves half a line; end
		 * it so the next record starts on its own line.  Readers skip
		 * the unparseable fragment; the record is counted as dropped.
		 */
		if (write(a->fd, "\n", 1) == 1)
			a->size++;
		return -ENOSPC;
	}
	return 0;
}

char *audit_timestamp(char *buf, size_t sz)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, sz, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 ts.tv_nsec / 1000000);
	return buf;
}

int audit_write(struct audit *a, const char *event, json_t *obj)
{
	char ts[32];
	char *line = NULL;
	json_t *rec = NULL;
	size_t len;
	int r = 0;

	if (!obj) {
		r = -ENOMEM;
		goto out;
	}
	/* "ts" and "event" first in the line, for humans reading it with less. */
	rec = json_pack("{s:s, s:s}", "ts", audit_timestamp(ts, sizeof(ts)), "event", event);
	if (!rec || json_object_update(rec, obj) < 0) {
		r = -ENOMEM;
		goto out;
	}
	line = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII |
				 JSON_REAL_PRECISION(12));	/* "duration_s":0.123, not 0.12300000000000001 */
	if (!line) {
		r = -ENOMEM;
		goto out;
	}
	len = strlen(line);
	line[len] = '\n';	/* json_dumps() NUL is replaced; we write len+1 bytes */
	/* Rotate between records: never split one across two files. */
	if (a->path && a->fd >= 0 && a->rotate_bytes && a->size > 0 &&
	    a->size + len + 1 > a->rotate_bytes)
		rotate(a);
	r = write_line(a, line, len + 1);
	if (r < 0 && a->path && mono_s() - a->last_reopen >= AUDIT_RETRY_S) {
		/* Space may have returned or the file been replaced: retry once. */
		a->last_reopen = mono_s();
		if (audit_reopen(a) == 0)
			r = write_line(a, line, len + 1);
	}
	if (r < 0 && !a->failing) {
		a->failing = true;
		log_err("audit log %s: write failed: %s; enforcement continues, records are counted as dropped",
			a->path ? a->path : "-", strerror(-r));
	} else if (r == 0 && a->failing) {
		a->failing = false;
		log_info("audit log %s: writing again (%llu records dropped so far)",
			 a->path ? a->path : "-", (unsigned long long)a->dropped);
	}
out:
	free(line);
	json_decref(rec);
	json_decref(obj);
	if (r < 0)
		a->dropped++;
	else
		a->written++;
	return r;
}

uint64_t audit_dropped(const struct audit *a)
{
	return a->dropped;
}

uint64_t audit_written(const struct audit *a)
{
	return a->written;
}

uint64_t audit_rotations(const struct audit *a)
{
	return a->rotations;
}
