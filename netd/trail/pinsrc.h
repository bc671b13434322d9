/*
 * pinsrc - where each pin came from: per sandbox, (address, protocol, port)
 * -> the qnames whose answers pinned it, and until when.  The nf_tables pin
 * sets hold only addresses; a policy reload needs the names to know which
 * pins the new policy no longer allows.  Pure bookkeeping over memory: no
 * I/O, no logging.  Times are caller-supplied monotonic milliseconds.
 */
#ifndef NETD_PINSRC_H
#define NETD_PINSRC_H

#include <stddef.h>
#include <stdint.h>

#include "netd/fw.h"
#include "netd/model/policy.h"

#define PINSRC_MAX       (1u << 20)	/* entries over all sandboxes */
#define PINSRC_NAMES_MAX 8	/* qnames remembered per entry (oldest replaced) */

struct pinsrc;

/* pinsrc_new() - an empty map; caller frees with pinsrc_free().  Return: 0; -ENOMEM. */
int pinsrc_new(struct pinsrc **ret);

/* pinsrc_free() - NULL-safe. */
void pinsrc_free(struct pinsrc *m);

/*
 * pinsrc_note() - @qname's answer pinned @pins[0..@n) for @sandbox at @now_ms
 * (each until now + timeout_ms).  @qname: lower-case presentation form,
 * copied.  Return: 0; -ENOSPC (PINSRC_MAX entries: not recorded, the reload
 * will then drop that pin, fail closed); -ENOMEM; -EINVAL.
 */
int pinsrc_note(struct pinsrc *m, const char *sandbox, const char *qname,
		const struct pin *pins, size_t n, uint64_t now_ms);

/* pinsrc_forget() - drop every entry of @sandbox (it was deleted or reset). */
void pinsrc_forget(struct pinsrc *m, const char *sandbox);

/* One pin that a reload removes. */
struct pinsrc_cut {
	struct addr addr;
	uint8_t proto;
	uint16_t port;		/* host byte order */
	char qname[256];	/* one of the names it came from, for the report */
};

/*
 * pinsrc_split() - sort @sandbox's live entries (at @now_ms) by what policy
 * @pol allows: an entry is kept if any of its qnames matches a domain rule
 * of @pol for its protocol and port.  Kept ones go to @keep (timeout_ms =
 * the remaining lifetime, >= 1), removed ones to @cut.  Changes nothing;
 * pinsrc_drop() commits the removal once the kernel took it.
 * @keep/@max_keep, @cut/@max_cut: caller's arrays.
 * Return: 0 (*@n_keep, *@n_cut set); -E2BIG (an array too small).
 */
int pinsrc_split(const struct pinsrc *m, const char *sandbox, const struct policy *pol,
		 uint64_t now_ms, struct pin *keep, size_t max_keep, size_t *n_keep,
		 struct pinsrc_cut *cut, size_t max_cut, size_t *n_cut);

/* pinsrc_drop() - remove @sandbox's entries for @cut[0..@n). */
void pinsrc_drop(struct pinsrc *m, const char *sandbox, const struct pinsrc_cut *cut, size_t n);

/*
 * pinsrc_names() - the qnames whose answers pinned (@a, @proto, @port) for
 * @sandbox, if that pin is live at @now_ms (for the SNI check, sni_match.h).
 * @out: PINSRC_NAMES_MAX slots; the strings are borrowed until the next
 * call that changes @m.  Return: how many were stored (0: not pinned).
 */
size_t pinsrc_names(const struct pinsrc *m, const char *sandbox, const struct addr *a,
		    uint8_t proto, uint16_t port, uint64_t now_ms, const char **out);

/* pinsrc_count() - live and expired entries currently held. */
size_t pinsrc_count(const struct pinsrc *m);

/*
 * pinsrc_count_of() - the entries (live and expired) held for @sandbox: what
 * pinsrc_split() can return for it at most.  O(1).
 */
size_t pinsrc_count_of(const struct pinsrc *m, const char *sandbox);

#endif
