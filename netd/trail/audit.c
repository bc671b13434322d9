/*
 * audit - JSON Lines writer for the audit trail.  Whole lines only, with
 * O_APPEND, so concurrent readers never see half a line.  Without an event
 * loop (audit_attach()) every record is one write(2); with one, the records
 * of a loop turn are gathered and written when the turn ends, before netd
 * waits for the next event - at once when nothing was written in the last
 * AUDIT_HOLD_US, else when that much has passed since the last write or
 * AUDIT_BATCH bytes are gathered, whichever comes first.  So a record
 * waits at most a millisecond, a DNS flood costs one write per ~64 KiB
 * (the page cache's cost per byte falls by half from 9 to 64 KiB writes:
 * larger folios), and a crash loses at most the last millisecond's
 * records.  Size-based rotation
 * (audit.jsonl -> .1 -> ... -> .keep) happens between records, so a record
 * is never split across files; audit_reopen() serves SIGUSR1 after an
 * external rotation (logrotate: move, then USR1).  A failing write (disk
 * full, file gone read-only) is counted, and never leaves half a record
 * behind (write_lines()); the writer logs once when writing
 * starts failing and once when it recovers, and retries opening the file
 * at most once a second meanwhile.  This is an edge module: it logs.
 */
#include "netd/trail/audit.h"

#include "common/clock.h"
#include "common/fsutil.h"
#include "common/log.h"
#include "netd/trail/journal.h"

#include <event2/event.h>

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
	bool dangling;		/* a cut record could not be removed: '\n' goes first */
	char *path;		/* NULL for stdout */
	uint64_t size;		/* bytes in the current file (fstat at open, then counted) */
	uint64_t rotate_bytes;	/* 0 = never rotate */
	uint32_t keep;		/* rotated files kept: path.1 .. path.keep */
	time_t last_reopen;	/* CLOCK_MONOTONIC seconds of the last retry after a failure */
	uint64_t written;
	uint64_t dropped;
	uint64_t rotations;
	struct event *flush_ev;	/* the turn's end; NULL: write each record at once */
	struct event *hold_ev;	/* timer: AUDIT_HOLD_US after the last write */
	uint64_t last_write_us;	/* clock_mono_us() of the last flush() that wrote */
	char *buf;		/* records not yet written, whole lines */
	size_t buf_len;
	unsigned int buf_records;
	struct journal *journal;	/* audit_set_journal(): every record there too; borrowed */
};

#define AUDIT_BUF_MAX (256u * 1024)	/* bytes gathered before an early flush */
#define AUDIT_BATCH   (64u * 1024)	/* gathered bytes written without waiting */
#define AUDIT_HOLD_US 1000u		/* a gathered record waits at most this */

#define AUDIT_MAX_KEEP 1000
#define AUDIT_RETRY_S  1	/* reopen attempts after a failure, at most this often */

/* Open a->path into a->fd and learn its size.  Return: 0; -errno. */
static int open_file(struct audit *a)
{
	struct stat st;
	int fd, r;

	r = fs_mkdir_parent(a->path, 0750);
	if (r < 0)
		return r;
	fd = fs_open_stat(a->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640, &st);
	if (fd < 0)
		return fd;
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

static void flush(struct audit *a);

void audit_close(struct audit *a)
{
	if (!a)
		return;
	flush(a);
	if (a->flush_ev)
		event_free(a->flush_ev);
	if (a->hold_ev)
		event_free(a->hold_ev);
	free(a->buf);
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
	flush(a);	/* what was gathered belongs to the old file */
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

/* Whole records (lines) at the start of @data/@len. */
static unsigned int count_lines(const char *data, size_t len)
{
	unsigned int n = 0;

	for (size_t i = 0; i < len; i++)
		n += data[i] == '\n';
	return n;
}

/*
 * Write @data/@len (whole lines).  A short write (the disk filled up in
 * the middle) leaves part of a record: the file is cut back to the end of
 * the last whole line, so no half record stays to be glued to the next
 * one.  Where that cannot be done (a pipe, ftruncate refused), the
 * fragment is remembered and terminated by a '\n' before the next record
 * goes out: an unparseable line, but never two records merged into one.
 * @nrec: the whole records in @data (counted only after a short write).
 * @n_done: whole records now in the file.  Return: 0; -errno.
 */
static int write_lines(struct audit *a, const char *data, size_t len, unsigned int nrec,
		       unsigned int *n_done)
{
	size_t keep;
	ssize_t n;
	off_t end;

	*n_done = 0;
	if (a->fd < 0)
		return -EBADF;
	if (a->dangling) {
		if (write(a->fd, "\n", 1) != 1)
			return errno ? -errno : -ENOSPC;
		a->size++;
		a->dangling = false;
	}
	n = write(a->fd, data, len);
	if (n < 0)
		return -errno;
	if ((size_t)n == len) {
		a->size += (uint64_t)n;
		*n_done = nrec;
		return 0;
	}
	for (keep = (size_t)n; keep > 0 && data[keep - 1] != '\n'; keep--)
		;
	*n_done = count_lines(data, keep);
	/* O_APPEND: the offset is now the end of what this write added. */
	end = lseek(a->fd, 0, SEEK_CUR);
	if (end < n || ftruncate(a->fd, end - n + (off_t)keep) < 0) {
		a->size += (uint64_t)n;
		a->dangling = keep < (size_t)n;
	} else {
		a->size += keep;
	}
	return -ENOSPC;
}

char *audit_timestamp(char *buf, size_t sz)
{
	/* The date and time change once a second; format them only then. */
	static time_t cached_sec = -1;
	static char cached[64];	/* 19 used; room for what gcc cannot rule out */
	struct timespec ts;
	long ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec != cached_sec) {
		struct tm tm;

		gmtime_r(&ts.tv_sec, &tm);
		snprintf(cached, sizeof(cached), "%04d-%02d-%02dT%02d:%02d:%02d",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec);
		cached_sec = ts.tv_sec;
	}
	ms = ts.tv_nsec / 1000000;
	if (sz >= 25) {
		memcpy(buf, cached, 19);
		buf[19] = '.';
		buf[20] = (char)('0' + ms / 100);
		buf[21] = (char)('0' + ms / 10 % 10);
		buf[22] = (char)('0' + ms % 10);
		buf[23] = 'Z';
		buf[24] = '\0';
	} else if (sz) {
		buf[0] = '\0';
	}
	return buf;
}

/*
 * Write @len bytes holding @nrec whole records, count them, and log when
 * writing starts or stops failing.  Return: 0; -errno.
 */
static int commit(struct audit *a, const char *data, size_t len, unsigned int nrec)
{
	unsigned int done = 0, more = 0;
	int r = write_lines(a, data, len, nrec, &done);

	if (r < 0 && a->path && clock_mono_s() - a->last_reopen >= AUDIT_RETRY_S) {
		/* Space may have returned or the file been replaced: retry the rest once. */
		size_t off = 0;

		for (unsigned int k = 0; k < done; off++)
			k += data[off] == '\n';
		a->last_reopen = clock_mono_s();
		if (audit_reopen(a) == 0)
			r = write_lines(a, data + off, len - off, nrec - done, &more);
		done += more;
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
	if (done > nrec)
		done = nrec;
	a->written += done;
	a->dropped += nrec - done;
	return r;
}

/* Write what was gathered. */
static void flush(struct audit *a)
{
	size_t len = a->buf_len;
	unsigned int n = a->buf_records;

	if (!len)
		return;
	/* Cleared first: commit() may reopen, and audit_reopen() flushes. */
	a->buf_len = 0;
	a->buf_records = 0;
	a->last_write_us = clock_mono_us();
	commit(a, a->buf, len, n);
}

/* The hold after the last write has passed. */
static void on_hold(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	flush(arg);
}

/* A loop turn that gathered records ended: write them now, or at the hold. */
static void on_turn_end(evutil_socket_t fd, short what, void *arg)
{
	struct audit *a = arg;
	uint64_t since = clock_mono_us() - a->last_write_us;
	struct timeval tv = { 0, 0 };

	(void)fd;
	(void)what;
	if (a->buf_len >= AUDIT_BATCH || since >= AUDIT_HOLD_US) {
		flush(a);
		return;
	}
	if (event_pending(a->hold_ev, EV_TIMEOUT, NULL))
		return;
	tv.tv_usec = (suseconds_t)(AUDIT_HOLD_US - since);
	if (event_add(a->hold_ev, &tv) < 0)
		flush(a);
}

int audit_attach(struct audit *a, struct event_base *base)
{
	a->buf = malloc(AUDIT_BUF_MAX);
	a->flush_ev = a->buf ? event_new(base, -1, 0, on_turn_end, a) : NULL;
	a->hold_ev = a->flush_ev ? evtimer_new(base, on_hold, a) : NULL;
	if (!a->hold_ev) {
		if (a->flush_ev)
			event_free(a->flush_ev);
		a->flush_ev = NULL;
		free(a->buf);
		a->buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int emit(struct audit *a, const char *line, size_t len);

int audit_write(struct audit *a, const char *event, json_t *obj)
{
	char ts[32];
	char *line = NULL;
	json_t *rec = NULL;
	size_t len;
	int r = 0;

	if (!obj) {
		r = -ENOMEM;
		goto fail;
	}
	/* "ts" and "event" first in the line, for humans reading it with less. */
	rec = json_pack("{s:s, s:s}", "ts", audit_timestamp(ts, sizeof(ts)), "event", event);
	if (!rec || json_object_update(rec, obj) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	if (a->journal)		/* queued for its thread: never blocks (journal.h) */
		journal_record(a->journal, rec);
	line = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII |
				 JSON_REAL_PRECISION(12));	/* "duration_s":0.123, not 0.12300000000000001 */
	if (!line) {
		r = -ENOMEM;
		goto fail;
	}
	len = strlen(line);
	line[len++] = '\n';	/* json_dumps() NUL is replaced; the line is len bytes */
	r = emit(a, line, len);
	free(line);
	json_decref(rec);
	json_decref(obj);
	return r;
fail:
	free(line);
	json_decref(rec);
	json_decref(obj);
	a->dropped++;
	return r;
}

/* One whole line (@len bytes, ending in '\n'): now, or gathered (on_turn_end()). */
static int emit(struct audit *a, const char *line, size_t len)
{
	int r = 0;

	/* Rotate between records: never split one across two files. */
	if (a->path && a->fd >= 0 && a->rotate_bytes && a->size + a->buf_len > 0 &&
	    a->size + a->buf_len + len > a->rotate_bytes) {
		flush(a);
		if (a->size > 0)
			rotate(a);
	}
	if (!a->flush_ev || len > AUDIT_BUF_MAX) {
		flush(a);
		r = commit(a, line, len, 1);
	} else {
		if (a->buf_len + len > AUDIT_BUF_MAX)
			flush(a);
		memcpy(a->buf + a->buf_len, line, len);
		a->buf_len += len;
		a->buf_records++;
		/* Written when this loop turn ends (a no-op if already due). */
		event_active(a->flush_ev, 0, 0);
	}
	return r;
}

int audit_write_members(struct audit *a, const char *event, const char *members, size_t len)
{
	char line[AUDIT_LINE_MAX];
	size_t elen = strlen(event), n = 0;

	/* {"ts":"...","event":"EVENT",MEMBERS}\n, assembled without printf. */
	if (7 + 24 + 11 + elen + 2 + len + 2 > sizeof(line)) {
		a->dropped++;
		return -EMSGSIZE;
	}
	memcpy(line, "{\"ts\":\"", 7);
	n = 7;
	audit_timestamp(line + n, 25);
	n += 24;
	memcpy(line + n, "\",\"event\":\"", 11);
	n += 11;
	memcpy(line + n, event, elen);
	n += elen;
	line[n++] = '"';
	if (len) {
		line[n++] = ',';
		memcpy(line + n, members, len);
		n += len;
	}
	line[n++] = '}';
	line[n++] = '\n';
	if (a->journal) {	/* the hot path's records: parsed back only when asked for */
		json_t *rec = json_loadb(line, n, 0, NULL);

		journal_record(a->journal, rec);
		json_decref(rec);
	}
	return emit(a, line, n);
}

void audit_set_journal(struct audit *a, struct journal *j)
{
	a->journal = j;
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
