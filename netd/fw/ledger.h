/*
 * ledger - the pins fw has put into the shared pin sets for one sandbox
 * (destination, protocol, port, when the kernel's element expires), so
 * that removing the sandbox, re-adding it or replacing its pins can delete
 * exactly its elements: the sets pin4/pin6 are keyed by the sandbox's
 * source address, and the kernel cannot delete "every element of this
 * source".  An open-addressing hash over the entries: noting a pin is
 * O(1) whatever the sandbox holds.  Pure: no kernel, no clock (callers
 * pass monotonic milliseconds).
 */
#ifndef NETD_FW_LEDGER_H
#define NETD_FW_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "common/pin.h"

/*
 * Slack before an entry whose expiry has passed is forgotten: the kernel's
 * element lapses at about the same moment (its own jiffies), and removing
 * an already-lapsed element is harmless, forgetting a live one is not.
 */
#define FW_LEDGER_SLACK_MS 60000u

struct fw_ledger_pin {
	struct pin p;	/* timeout_ms: the last one given */
	uint64_t expires_ms;	/* CLOCK_MONOTONIC ms */
};

struct fw_ledger {
	struct fw_ledger_pin *v;	/* owned */
	size_t n, cap;
	uint32_t *slot;		/* owned: index + 1 into v, 0 = empty; nslot a power of 2 */
	size_t nslot;
};

/*
 * fw_ledger_note() - record @pins[0..@n) as given at @now_ms (a pin already
 * there keeps the later of its two expiries).  Entries lapsed for FW_LEDGER_SLACK_MS are
 * dropped first when the ledger would grow.  Return: 0; -ENOMEM (the
 * ledger is unchanged).
 */
int fw_ledger_note(struct fw_ledger *l, const struct pin *pins, size_t n, uint64_t now_ms);

/*
 * fw_ledger_live() - how many of @l's pins, plus those of @pins[0..@n) not
 * in it yet, would be live at @now_ms (the per-sandbox limit check).
 */
size_t fw_ledger_live(const struct fw_ledger *l, const struct pin *pins, size_t n,
		      uint64_t now_ms);

/* fw_ledger_prune() - drop the entries lapsed for FW_LEDGER_SLACK_MS at @now_ms. */
void fw_ledger_prune(struct fw_ledger *l, uint64_t now_ms);

/* fw_ledger_clear() - forget every pin (memory kept). */
void fw_ledger_clear(struct fw_ledger *l);

/* fw_ledger_free() - free @l's memory; @l is empty afterwards. NULL-safe. */
void fw_ledger_free(struct fw_ledger *l);

#endif
