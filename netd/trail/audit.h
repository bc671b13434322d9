/*
 * audit - the audit trail: append-only JSON Lines, one object per line,
 * never split.  Every record carries "ts" (RFC 3339 UTC with
 * milliseconds) and "event"; the callers add "sandbox", "policy" and the
 * event's own fields.  A record that cannot be written is counted, never
 * silently lost: enforcement does not depend on the log.
 */
#ifndef NETD_AUDIT_H
#define NETD_AUDIT_H

#include <stdint.h>

#include <jansson.h>

struct audit;

/*
 * audit_open() - open @path for appending (created 0640, parent directory
 * created 0750 if missing).  @path "-" writes to stdout.
 * @ret: caller frees with audit_close().  Return: 0; -errno.
 */
int audit_open(const char *path, struct audit **ret);

struct event_base;

/*
 * audit_attach() - from now on gather the records of each turn of @base's
 * loop and write them when the turn ends, or, when the last write was less
 * than a millisecond ago, when that millisecond is over or 64 KiB are
 * gathered (one write(2) per turn or per 64 KiB instead of per record).
 * Before it, and without it, every record is written at once.
 * Return: 0; -ENOMEM (nothing changed).
 */
int audit_attach(struct audit *a, struct event_base *base);

/* audit_close() - flush and close; NULL-safe. */
void audit_close(struct audit *a);

/*
 * audit_write() - add "ts" and "event" (@event) to @obj and append it as
 * one line.  Takes ownership of @obj (decref'd here, also on error).
 * Return: 0; -errno (the record is counted as dropped).
 */
int audit_write(struct audit *a, const char *event, json_t *obj);

/*
 * audit_set_rotation() - rotate when a record would take the file past
 * @rotate_bytes (0 = never): path -> path.1 -> ... -> path.@keep (the
 * oldest is deleted), then a new path.  @keep is clamped to 1..1000.
 * Rotation happens between records, never inside one.  No-op for stdout.
 */
void audit_set_rotation(struct audit *a, uint64_t rotate_bytes, uint32_t keep);

/*
 * audit_reopen() - close and reopen the file by its path (SIGUSR1, after
 * logrotate moved it away).  Failure is logged once and the writer keeps
 * retrying on later writes.  Return: 0; -errno.  No-op for stdout.
 */
int audit_reopen(struct audit *a);

/* audit_rotations() - size-based rotations done since open. */
uint64_t audit_rotations(const struct audit *a);

#define AUDIT_LINE_MAX 8192	/* bytes, for audit_write_members() */

/*
 * audit_write_members() - like audit_write() for records built on the hot
 * path without jansson: @members/@len are the object's members without
 * braces (common/jsonl.h), valid JSON and ASCII; "ts" and "event" are put
 * first.  Not retained.  Return: 0; -EMSGSIZE (over AUDIT_LINE_MAX, counted
 * as dropped); -errno.
 */
int audit_write_members(struct audit *a, const char *event, const char *members, size_t len);

struct journal;

/*
 * audit_set_journal() - from now on every record also goes to @j (the
 * systemd journal, netd/trail/journal.h; NULL: no more), whether or not the
 * file takes it.  @j borrowed until unset or audit_close().
 */
void audit_set_journal(struct audit *a, struct journal *j);

/* audit_dropped() - records that could not be written since open. */
uint64_t audit_dropped(const struct audit *a);

/* audit_written() - records written since open. */
uint64_t audit_written(const struct audit *a);

/*
 * audit_timestamp() - RFC 3339 UTC time with milliseconds
 * ("2026-11-30T06:41:19.123Z") of the current time into @buf (>= 32 bytes).
 */
char *audit_timestamp(char *buf, size_t sz);

#endif
