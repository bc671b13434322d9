/*
 * audit - JSON Lines writer for the audit trail.  One write(2) per record
 * (O_APPEND), so concurrent readers never see half a line and a crash
 * loses at most the record being written.  Rotation and connection
 * records slot in here (issue: accounting); DNS decisions already use it.
 */
#include "netd/audit.h"

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
	int fd;
	bool own_fd;
	uint64_t written;
	uint64_t dropped;
};

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

int audit_open(const char *path, struct audit **ret)
{
	struct audit *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	if (strcmp(path, "-") == 0) {
		a->fd = STDOUT_FILENO;
	} else {
		r = mkdir_parent(path);
		if (r < 0) {
			free(a);
			return r;
		}
		a->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
		if (a->fd < 0) {
			r = -errno;
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
	if (a->own_fd)
		close(a->fd);
	free(a);
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
	ssize_t n;
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
	line = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	if (!line) {
		r = -ENOMEM;
		goto out;
	}
	len = strlen(line);
	line[len] = '\n';	/* json_dumps() NUL is replaced; we write len+1 bytes */
	n = write(a->fd, line, len + 1);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len + 1)
		r = -EIO;
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
