/*
 * pinreg - the pin registry: netd's one record of every pin, per sandbox.
 * One entry per (sandbox, address, protocol, port, gateway flag) holds
 * (a plain pin, pin4/6, and a gateway pin, gw4/6, of one address and port
 * are two entries with their own expiries, given and named on their own)
 *   - two expiries: fw's (the latest it gave the kernel) and the answers'
 *     (until when its names hold it; a lapsed entry's names go when an
 *     answer pins it again, not when fw does: an idle grace re-pin keeps
 *     the address's last name, and its old names no longer hold it),
 *   - whether fw gave it to the kernel's shared sets pin4/6 or gw4/6 ("given":
 *     fw deletes exactly those when the sandbox goes, counts them for the
 *     per-sandbox and total limits),
 *   - the qnames whose answers pinned it (at most PINREG_NAMES_MAX, the
 *     oldest replaced): a reload's keep/cut split, the SNI check's names,
 *   - the name noted last, for the conn/deny records' "domain" of an
 *     address (by sandbox and address, any port).
 * An address an answer named without a pin (audit mode) is an entry with
 * protocol and port 0 that only carries its name.
 *
 * fw writes what it gives (before each batch), the daemon what each DNS
 * answer named (after the kernel's ack), the trail and the SNI check read.
 * Noting a pin is one hash probe whatever the sandbox holds: entries hash
 * by (sandbox, address), so every port of an address and the address's
 * last name are found by the same probe; each sandbox's entries are also
 * on a list of its own, so a per-sandbox question costs what that sandbox
 * holds.  Bounded: PINREG_MAX entries over all sandboxes; past it a new
 * entry is refused (-ENOSPC: fw fails the pin, fail closed).
 *
 * Pure: memory only, no I/O, no logging; times are the caller's monotonic
 * milliseconds.  Not thread-safe (the daemon's one loop).
 */
#ifndef NETD_MODEL_PINREG_H
#define NETD_MODEL_PINREG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pin.h"
#include "netd/model/policy.h"

#define PINREG_MAX       (1u << 20)	/* entries over all sandboxes */
#define PINREG_NAMES_MAX 8		/* qnames remembered per entry (oldest replaced) */
#define PINREG_QNAME_MAX 255		/* bytes of a qname, presentation form, without NUL */
/*
 * An entry whose expiry passed this long ago is dropped (by the sweep each
 * note does over a few buckets, or a whole sweep when the registry is
 * full): the kernel's element lapses at about the same moment (its own
 * jiffies), and removing an already-lapsed element is harmless, forgetting
 * a live one is not.  Its names stay readable (pinreg_last_name()) until then.
 */
#define PINREG_SLACK_MS  60000u

struct pinreg;

/* pinreg_new() - an empty registry; caller frees with pinreg_free().  Return: 0; -ENOMEM. */
int pinreg_new(struct pinreg **ret);

/* pinreg_free() - every entry and the registry.  NULL-safe. */
void pinreg_free(struct pinreg *r);

/* ---- fw's part: what is in the kernel's pin sets ------------------------ */

/*
 * pinreg_give() - fw gives @pins[0..@n) of @sandbox to the kernel at @now_ms
 * (each until @now_ms + timeout_ms; an entry keeps the later of its two
 * expiries).  Call it BEFORE the batch: a pin the kernel has must be here,
 * or the sandbox's removal would leave it behind; one the kernel refused
 * is removed harmlessly later.  Names are left alone (pinreg_names() and
 * pinreg_split() go by the answers' expiry).
 * @ret_gen: if not NULL, this call's mark, for pinreg_retain().
 * Return: 0; -EINVAL; -ENOSPC (PINREG_MAX entries, after dropping the
 * lapsed ones); -ENOMEM.  On error the pins given so far stay given.
 */
int pinreg_give(struct pinreg *r, const char *sandbox, const struct pin *pins, size_t n,
		uint64_t now_ms, uint64_t *ret_gen);

/*
 * pinreg_retain() - the kernel now holds for @sandbox exactly what
 * pinreg_give() call @gen gave it (0: nothing): every other entry is no
 * longer given; one that has no name either is dropped.
 */
void pinreg_retain(struct pinreg *r, const char *sandbox, uint64_t gen);

/* pinreg_given_count() - entries of @sandbox given (live or lapsed).  O(1). */
size_t pinreg_given_count(const struct pinreg *r, const char *sandbox);

/*
 * pinreg_given_total() - entries given over all sandboxes (an upper bound of
 * pin4 + pin6, and of gw4 + gw6).  O(1).
 */
size_t pinreg_given_total(const struct pinreg *r);

/*
 * pinreg_given_live() - how many of @sandbox's given entries, plus those of
 * @pins[0..@n) not given and live yet, would be live at @now_ms (fw's
 * per-sandbox limit).  O(what @sandbox holds + @n).
 */
size_t pinreg_given_live(const struct pinreg *r, const char *sandbox, const struct pin *pins,
			 size_t n, uint64_t now_ms);

/* One given pin (timeout_ms 0), borrowed for the call. */
typedef void pinreg_pin_fn(void *arg, const struct pin *p);

/* pinreg_given_each() - @fn for each entry of @sandbox given.  Return: how many. */
size_t pinreg_given_each(const struct pinreg *r, const char *sandbox, pinreg_pin_fn *fn,
			 void *arg);

/* pinreg_sweep() - drop every entry lapsed for PINREG_SLACK_MS at @now_ms.  O(all).  Return: dropped. */
size_t pinreg_sweep(struct pinreg *r, uint64_t now_ms);

/* ---- the daemon's part: which names pinned what -------------------------- */

/*
 * pinreg_note() - @qname's answer pinned @pins[0..@n) for @sandbox at @now_ms
 * (each until now + timeout_ms; an expiry never shrinks; an entry whose
 * names had lapsed loses them first).  @qname:
 * lower-case presentation form, copied; it becomes the name noted last of
 * each pin's address.  Also sweeps a few buckets of lapsed entries.
 * Return: 0; -ENOSPC (PINREG_MAX entries: that pin is not named, so a
 * reload drops it, fail closed); -ENOMEM; -EINVAL.
 */
int pinreg_note(struct pinreg *r, const char *sandbox, const char *qname, const struct pin *pins,
		size_t n, uint64_t now_ms);

/*
 * pinreg_name() - @qname's answer named @addrs[0..@n) for @sandbox without
 * pinning them (audit mode): each address's name noted last becomes @qname.
 * Return: 0; -ENOSPC; -ENOMEM; -EINVAL (as pinreg_note()).
 */
int pinreg_name(struct pinreg *r, const char *sandbox, const char *qname,
		const struct addr *addrs, size_t n, uint64_t now_ms);

/*
 * pinreg_last_name() - the name noted last for @addr in @sandbox, on any
 * port, live or lapsed (the "domain" of conn and deny records); NULL if
 * none.  Borrowed until the next call that changes @r.
 */
const char *pinreg_last_name(const struct pinreg *r, const char *sandbox, const struct addr *addr);

/*
 * pinreg_names() - the qnames whose answers pinned (@a, @proto, @port) for
 * @sandbox as a plain pin (pin4/6), if that pin is live at @now_ms (the
 * SNI check, sni_match.h).  pinreg_names_gw(@gateway false).
 * @out: PINREG_NAMES_MAX slots, oldest slot first; the strings are borrowed
 * until the next call that changes @r.  Return: how many (0: not pinned).
 */
size_t pinreg_names(const struct pinreg *r, const char *sandbox, const struct addr *a,
		    uint8_t proto, uint16_t port, uint64_t now_ms, const char **out);

/*
 * pinreg_names_gw() - the qnames whose answers pinned (@a, @proto, @port)
 * for @sandbox as a gateway pin (@gateway: gw4/6, a name of a rule with
 * gateway:) or as a plain pin (!@gateway: pin4/6), if that pin is live at
 * @now_ms (its answers' expiry: pinreg_note()).  The gateway's question for
 * a steered connection (sandbox, original destination, port): is there a
 * live gateway pin and which names made it, and which names a plain pin
 * of that address holds (a connection whose SNI is one of those passes
 * untouched).  @a: the destination (an IPv4-mapped IPv6 address is not
 * the IPv4 one: pass the family the connection has).  @out:
 * PINREG_NAMES_MAX slots, oldest slot first; lower-case presentation form,
 * no trailing dot; borrowed until the next call that changes @r.  O(one
 * bucket).  Return: how many (0: no such live pin; also for a NULL @r, @a,
 * an unknown sandbox or @proto 0).
 */
size_t pinreg_names_gw(const struct pinreg *r, const char *sandbox, const struct addr *a,
		       uint8_t proto, uint16_t port, bool gateway, uint64_t now_ms,
		       const char **out);

/* One pin that a reload removes. */
struct pinreg_cut {
	struct addr addr;
	uint8_t proto;
	uint16_t port;		/* host byte order */
	bool gateway;		/* a gateway pin (gw4/6) */
	char qname[PINREG_QNAME_MAX + 1];	/* one of the names it came from, for the report */
};

/*
 * pinreg_split() - sort @sandbox's live named pins (at @now_ms) by what
 * policy @pol allows (NULL: nothing): a pin is kept if any of its qnames
 * matches a domain rule of @pol for its protocol and port, a rule with
 * gateway: for a gateway pin, one without for a plain pin.  Kept ones go
 * to @keep (timeout_ms = the remaining lifetime, >= 1), removed ones to
 * @cut.  Pins no answer named (fw's alone, e.g. found at a restart) are in
 * neither.  Changes nothing; pinreg_drop() commits the removal once the
 * kernel took it.  @keep/@max_keep, @cut/@max_cut: caller's arrays
 * (pinreg_count_of() entries always fit).
 * Return: 0 (*@n_keep, *@n_cut set); -E2BIG (an array too small).
 */
int pinreg_split(const struct pinreg *r, const char *sandbox, const struct policy *pol,
		 uint64_t now_ms, struct pin *keep, size_t max_keep, size_t *n_keep,
		 struct pinreg_cut *cut, size_t max_cut, size_t *n_cut);

/*
 * pinreg_split_off() - pinreg_split() as if the rules of @pol whose bit is
 * set in @off (POLICY_MAX_RULES bits, rule i at off[i / 64] bit i % 64;
 * NULL: none) were not there: a rule whose byte budget is spent for
 * @sandbox (netd/model/rbudget.h).
 */
int pinreg_split_off(const struct pinreg *r, const char *sandbox, const struct policy *pol,
		     const uint64_t *off, uint64_t now_ms, struct pin *keep, size_t max_keep,
		     size_t *n_keep, struct pinreg_cut *cut, size_t max_cut, size_t *n_cut);

/*
 * pinreg_drop() - a reload removed @sandbox's pins @cut[0..@n): their names
 * no longer hold them (pinreg_split() and pinreg_names() see them no more;
 * an answer that pins one again starts its names afresh).  The address
 * keeps its last name (pinreg_last_name(): a connection the reload did not
 * cut is still named) until the entry lapses and is swept.
 */
void pinreg_drop(struct pinreg *r, const char *sandbox, const struct pinreg_cut *cut, size_t n);

/*
 * pinreg_forget() - @sandbox is deleted: every entry of it loses its names;
 * those not given are dropped (a given one stays until fw removed it from
 * the kernel: pinreg_retain(r, sandbox, 0)).
 */
void pinreg_forget(struct pinreg *r, const char *sandbox);

/* pinreg_count() - entries held over all sandboxes (live and lapsed). */
size_t pinreg_count(const struct pinreg *r);

/* pinreg_count_of() - entries held for @sandbox (live and lapsed).  O(1). */
size_t pinreg_count_of(const struct pinreg *r, const char *sandbox);

#endif
