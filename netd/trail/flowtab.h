/*
 * flowtab - what the audit trail has already done with each live
 * conntrack entry: the counters already folded into the per-sandbox
 * metrics, and (once its `conn` record was written at the close) the
 * counters that record reported.  It is what makes the byte metrics grow
 * while connections are live and stay exact, and what lets a TCP
 * connection be recorded at its close without its late DESTROY counting
 * it twice.  Pure: memory only, no I/O, no logging.
 *
 * An entry is keyed by the conntrack id and the original tuple's
 * protocol, addresses and ports; it is added by flowtab_open() (with the
 * name the flow was opened under), flowtab_live() or flowtab_close() and
 * removed by flowtab_end() (conntrack DESTROY, which
 * acct.h delivers reliably).  Bounded: when the table is full a flow is
 * simply not tracked - its counters are then folded whole at its end and
 * its record written at DESTROY, as if it had never been seen: late, but
 * never wrong.
 */
#ifndef NETD_FLOWTAB_H
#define NETD_FLOWTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netd/trail/ctmsg.h"

struct flowtab;

/* Counters of one flow, or a difference of two (original = out, reply = in). */
struct flow_ctr {
	uint64_t bytes_out, bytes_in, packets_out, packets_in;
};

/* flowtab_ctr() - @f's counters. */
struct flow_ctr flowtab_ctr(const struct ct_flow *f);

/* flowtab_ctr_zero() - are all four zero? */
bool flowtab_ctr_zero(const struct flow_ctr *c);

/*
 * flowtab_new() - a table of at most @cap entries (rounded up to a power
 * of two, >= 16).  @ret: caller frees with flowtab_free().
 * Return: 0; -ENOMEM; -EINVAL (@cap 0 or over 2^24).
 */
int flowtab_new(size_t cap, struct flowtab **ret);

/* flowtab_free() - NULL-safe. */
void flowtab_free(struct flowtab *t);

/*
 * flowtab_live() - @f is live with these counters (a periodic dump).
 * An untracked flow is added while the table is under 3/4 full (the rest
 * is kept for closes).  *@fold: what the metrics have not counted yet (0
 * if nothing grew); it is now counted.
 * Return: 1 tracked (fold *@fold); 2 tracked and its record was already
 * written at the close (fold, but write no conn_update); 0 not tracked,
 * table too full (*@fold is zero: its end folds it whole).
 */
int flowtab_live(struct flowtab *t, const struct ct_flow *f, struct flow_ctr *fold);

/*
 * flowtab_open() - @f was just confirmed (conntrack NEW), opened under the
 * name @name (a nametab.h id; 0: none): remembered with it, so its records
 * name what it was opened for.  Adds only while the table is under 3/4
 * full, as flowtab_live().  Return: 1 remembered (the entry holds @name
 * until flowtab_end()); 0 already there (@name not taken); -ENOSPC too
 * full (@name not taken).
 */
int flowtab_open(struct flowtab *t, const struct ct_flow *f, uint32_t name);

/*
 * flowtab_name() - the name @f was opened under, into *@name (0: none).
 * Return: true if flowtab_open() saw @f (then *@name is its answer, 0
 * meaning "opened under no name"); false if not (*@name is 0): name it
 * now as best one can.
 */
bool flowtab_name(struct flowtab *t, const struct ct_flow *f, uint32_t *name);

/*
 * flowtab_close() - TCP @f closed with these counters: its `conn` record
 * is to be written now with them.  *@fold: the part not in the metrics yet.
 * Return: 1 write the record (now remembered as recorded); 0 already
 * recorded (a second closing state: write nothing, *@fold still folds);
 * -ENOSPC the table is full (write nothing, fold nothing: DESTROY does both).
 */
int flowtab_close(struct flowtab *t, const struct ct_flow *f, struct flow_ctr *fold);

/*
 * flowtab_end() - @f was destroyed with its final counters; forgets it
 * (the name it held, flowtab_name(), is the caller's to give back).
 * *@fold: what the metrics have not counted yet (everything if untracked).
 * *@late: if the flow's record was written at its close, what came after
 * it (zero: nothing more to write).
 * Return: true if a record was written at the close (then write a
 * `conn_late` only if *@late is not zero); false: write the `conn` record now.
 */
bool flowtab_end(struct flowtab *t, const struct ct_flow *f, struct flow_ctr *fold,
		 struct flow_ctr *late);

/*
 * flowtab_interim() - IPFIX interim export (ipfixexp.h) of the live flow @f
 * with these counters: due if it is tracked, its record was not written at
 * a close, and @interval_ns have passed since its last interim export (or
 * its start, @f->start_ns).  *@delta: what it counted since that export;
 * *@since_ns: when that was.  The export is then remembered (@now_ns, the
 * counters).  Return: true if due.
 */
bool flowtab_interim(struct flowtab *t, const struct ct_flow *f, uint64_t now_ns,
		     uint64_t interval_ns, struct flow_ctr *delta, uint64_t *since_ns);

/*
 * flowtab_exported() - what @f's interim exports reported so far, and when
 * the last one was (*@since_ns; 0 if none): a final export reports the
 * rest.  Zero counters for an untracked flow or one without interim exports.
 */
struct flow_ctr flowtab_exported(struct flowtab *t, const struct ct_flow *f, uint64_t *since_ns);

/* flowtab_ctr_sub() - @a - @b per counter, 0 where @a is smaller. */
struct flow_ctr flowtab_ctr_sub(const struct flow_ctr *a, const struct flow_ctr *b);

/* flowtab_count() - entries held. */
size_t flowtab_count(const struct flowtab *t);

#endif
