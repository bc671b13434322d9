/*
 * fjudge - the verdict another table's forward-hook chain gives a
 * sandbox's packet (fjudge.h).  Pure.
 *
 * A chain's "outcomes" are the set of what entering it can end in:
 * accept, drop, or return to the caller (falling off a regular chain's end
 * too).  Rules are taken in order: one whose conditions surely hold ends
 * the walk with its verdict (a jump: with what the target can end in,
 * going on after it only if the target can return); one that surely does
 * not hold is skipped; one that may hold adds its verdict's outcomes and
 * the walk goes on, as the rule may not match.  A base chain's end is its
 * policy.  So the set is exact when every condition could be told, and
 * otherwise holds every outcome some packet of the kind could get.
 */
#include "netd/fw/fjudge.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { O_ACCEPT = 1, O_DROP = 2, O_RETURN = 4 };

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/*
 * Byte @i of every sandbox interface name: 1 if it is surely @c, 0 if
 * surely not, -1 if some names have it and some do not.
 */
static int sb_byte(size_t i, char c)
{
	const size_t pre = sizeof(FJ_SB_PREFIX) - 1;

	if (i < pre)
		return c == FJ_SB_PREFIX[i];
	if (i < pre + FJ_SB_HEX)
		return is_hex(c) ? -1 : 0;
	return c == '\0';	/* the name ends, NUL-padded */
}

int fj_match_eval(const struct fj_match *m, const struct fj_packet *p)
{
	const char *name = m->field == FJ_IIFNAME ? p->iifname : p->oifname;
	int res = 1;

	if (m->len == 0 || m->len > FJ_IFNAME_MAX)
		return -1;
	for (size_t i = 0; i < m->len && res != 0; i++) {
		int b;

		if (name) {	/* a known name, NUL-padded as the kernel compares it */
			size_t n = strnlen(name, FJ_IFNAME_MAX);

			b = (i < n ? name[i] : '\0') == m->name[i];
		} else {
			b = sb_byte(i, m->name[i]);
		}
		if (b == 0)
			res = 0;
		else if (b < 0)
			res = -1;
	}
	if (res >= 0 && m->neq)
		res = !res;
	return res;
}

/* Do @r's conditions hold: 1 surely, 0 surely not, -1 maybe. */
static int rule_holds(const struct fj_rule *r, const struct fj_packet *p)
{
	int res = r->unknown ? -1 : 1;

	for (size_t i = 0; i < r->n_m && i < FJ_MATCHES; i++) {
		int e = fj_match_eval(&r->m[i], p);

		if (e == 0)
			return 0;
		if (e < 0)
			res = -1;
	}
	return res;
}

/* One walk: the table, the packet, and what each chain was found to end in. */
struct walk {
	const struct fj_table *t;
	const struct fj_packet *p;
	uint8_t *memo;		/* per chain: outcomes | MEMO_DONE, or MEMO_BUSY while walked */
};

enum { MEMO_DONE = 0x40, MEMO_BUSY = 0x80 };

static long chain_index(const struct fj_table *t, const char *name)
{
	for (size_t i = 0; i < t->n_chains; i++)
		if (strcmp(t->chains[i].name, name) == 0)
			return (long)i;
	return -1;
}

static unsigned chain_outcomes(struct walk *w, size_t ci, unsigned depth);

/* What @r's verdict can end in; *@goes_on: the walk may go on after it. */
static unsigned verdict_outcomes(struct walk *w, const struct fj_rule *r, unsigned depth,
				 bool *goes_on)
{
	long ti;
	unsigned o;

	*goes_on = false;
	switch (r->verdict) {
	case FJ_CONTINUE:
		*goes_on = true;
		return 0;
	case FJ_ACCEPT:
		return O_ACCEPT;
	case FJ_DROP:
		return O_DROP;
	case FJ_RETURN:
		return O_RETURN;
	case FJ_JUMP:
	case FJ_GOTO:
		ti = chain_index(w->t, r->target);
		/* Too deep, a loop or a chain that is not there: anything. */
		o = ti < 0 || depth >= FJ_DEPTH || (w->memo[ti] & MEMO_BUSY) ?
			    O_ACCEPT | O_DROP | O_RETURN :
			    chain_outcomes(w, (size_t)ti, depth + 1);
		if (r->verdict == FJ_JUMP && (o & O_RETURN)) {
			*goes_on = true;	/* back from the jump: the next rule */
			o &= (unsigned)~O_RETURN;
		}
		return o;	/* a goto's return is this chain's return */
	default:		/* FJ_ANY */
		*goes_on = true;
		return O_ACCEPT | O_DROP;
	}
}

/* What entering chain @ci can end in (O_*); a base chain's end is its policy. */
static unsigned chain_outcomes(struct walk *w, size_t ci, unsigned depth)
{
	const struct fj_chain *c = &w->t->chains[ci];
	unsigned out = 0;
	bool ended = false;

	if (w->memo[ci] & MEMO_DONE)
		return w->memo[ci] & (O_ACCEPT | O_DROP | O_RETURN);
	w->memo[ci] |= MEMO_BUSY;
	for (size_t i = 0; i < c->n_rules && !ended; i++) {
		const struct fj_rule *r = &c->rules[i];
		int holds = rule_holds(r, w->p);
		bool goes_on;

		if (holds == 0)
			continue;
		out |= verdict_outcomes(w, r, depth, &goes_on);
		ended = holds > 0 && !goes_on;	/* surely taken, and it ends here */
	}
	if (!ended)
		out |= O_RETURN;	/* some packet falls off the end */
	if (c->base && (out & O_RETURN))	/* a base chain's end (or return): its policy */
		out = (out & (unsigned)~O_RETURN) | (c->policy_drop ? O_DROP : O_ACCEPT);
	w->memo[ci] = (uint8_t)(MEMO_DONE | out);
	return out;
}

int fj_judge(const struct fj_table *t, const char *chain, const struct fj_packet *p)
{
	struct walk w = { .t = t, .p = p };
	long ci = chain_index(t, chain);
	unsigned o;

	if (ci < 0)
		return FJ_PASSES;
	w.memo = calloc(t->n_chains, 1);
	if (!w.memo)
		return -ENOMEM;
	o = chain_outcomes(&w, (size_t)ci, 0);
	free(w.memo);
	if (!(o & O_DROP))
		return FJ_PASSES;
	return o & O_ACCEPT ? FJ_MAY_DROP : FJ_DROPS;
}
