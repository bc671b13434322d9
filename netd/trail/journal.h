/*
 * journal - the audit records, also in the systemd journal (audit.journal:
 * docs/flows.md), as structured entries: every member of a record is a
 * field NETD_<MEMBER> (NETD_EVENT=conn, NETD_SANDBOX=web-1, NETD_DST=...,
 * one NETD_ANSWERS= per answer), with MESSAGE= a one-line summary,
 * PRIORITY= and SYSLOG_IDENTIFIER=netd-audit, so `journalctl
 * NETD_SANDBOX=web-1` finds a sandbox's records and journald's forwarding
 * carries them off the host.
 *
 * Sent by libsystemd's sd_journal_sendv(3) from a thread of its own: that
 * call blocks while journald's socket is full (a journald that stalls on
 * its disk), and netd's loop must not.  The loop only converts and queues a
 * record (journal_record()); a full queue drops it and counts it, as the
 * audit file's writer counts what it cannot write.  journald's own rate
 * limit (RateLimitBurst=, per service) applies on top and is journald's to
 * count.  Without journald (no /run/systemd/journal/socket) libsystemd
 * discards records silently; netd says so once at start.
 */
#ifndef NETD_JOURNAL_H
#define NETD_JOURNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <jansson.h>

struct journal;

#define JOURNAL_QUEUE_MAX 8192		/* records waiting for the writer thread */
#define JOURNAL_QUEUE_BYTES (8u << 20)	/* ... and their bytes */
#define JOURNAL_FIELDS_MAX 64		/* fields of one entry; more members are left out */
#define JOURNAL_ENTRY_MAX 16384		/* bytes of one entry's fields; a longer value is cut */

/*
 * journal_new() - start the writer thread.  @ret: caller frees with
 * journal_free().  Return: 0; -errno (no thread, no memory).
 */
int journal_new(struct journal **ret);

/*
 * journal_free() - let the thread send what is queued (at most about a
 * second), stop it, count what is left as dropped; NULL-safe.
 */
void journal_free(struct journal *j);

/*
 * journal_record() - queue audit record @rec (with "ts" and "event"; borrowed
 * for the call).  Never blocks.  Return: 0; -ENOBUFS (queue full: dropped,
 * counted); -ENOMEM; -EINVAL (@rec is no object with an "event").
 */
int journal_record(struct journal *j, const json_t *rec);

/* journal_written() / journal_dropped() - entries journald took / never sent. */
uint64_t journal_written(struct journal *j);
uint64_t journal_dropped(struct journal *j);

/*
 * journal_fields() - @rec as journal fields in @buf (@cap bytes), each
 * "NAME=value" with its length in @iov (at most @max_iov): MESSAGE=,
 * PRIORITY= (5 for deny, would_deny, a denied query, sni; else 6),
 * SYSLOG_IDENTIFIER=netd-audit, then NETD_<KEY>= per member in record order
 * (names upper-cased, other than [A-Z0-9_] as '_'; strings as they are,
 * numbers and booleans as JSON writes them, null left out, an array one
 * field per element, an object as compact JSON).  Pure.
 * Return: the number of fields; -EINVAL (no "event"); -ENOSPC (@cap or
 * @max_iov too short for the three first fields).  Members past what fits
 * are left out: the fields that fit are returned, the record still sent.
 */
int journal_fields(const json_t *rec, char *buf, size_t cap, struct iovec *iov, size_t max_iov);

#endif
