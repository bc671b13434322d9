/*
 * update - a policy reload's transaction (fw_sandboxes_update()): ONE batch
 * re-rendering many sandboxes in place, each policy chain once (and only if
 * its rules changed), the pins replaced where asked.  All-or-nothing however
 * many sandboxes it covers: one batch, one sendmsg(), one nf_tables
 * transaction (nl.c).  The restart's transaction is reconcile.c.
 */
#include "netd/fw/core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"

struct upd_arg {
	struct sb_arg *sbs;
	size_t n;
};

static void render_update(struct bt *bt, const void *argp)
{
	const struct upd_arg *a = argp;

	for (size_t i = 0; i < a->n; i++)
		render_sandbox(bt, &a->sbs[i]);
}

static int update_ok(struct fw *fw, const struct fw_update *u)
{
	if (!u->sb || !fw_name_ok(u->sb->name) || !fw_sb_ok(u->sb) || !u->pol ||
	    (u->pol->egress_bytes && !u->sb->ct_mark) ||
	    !fw_sb_find(fw, u->sb->name) || u->n_pins > FW_PIN_SET_SIZE || (u->n_pins && !u->pins))
		return -EINVAL;
	for (size_t j = 0; j < u->n_pins; j++)
		if (!fw_pin_ok(&fw->rc, &u->pins[j]))
			return -EINVAL;
	return 0;
}

/*
 * The policy chains of a reload's batch: each sandbox's new chain, the
 * first sandbox of each renders it (only if its rules changed), and a chain
 * every one of whose sandboxes leaves it in this batch is removed by the
 * last of them (one pass over the batch).  Return: 0; -ENOMEM (nothing sent).
 */
static int update_chains(struct fw *fw, const struct fw_update *u, size_t n, struct upd_arg *a,
			 struct pchain_names *nm, uint64_t *cdig)
{
	long *stay = calloc(fw->n_pcs ? fw->n_pcs : 1, sizeof(*stay));
	size_t *last = calloc(fw->n_pcs ? fw->n_pcs : 1, sizeof(*last));

	if (!stay || !last) {
		free(stay);
		free(last);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct fw_sb_rec *rec = fw_sb_find(fw, u[i].sb->name);
		const struct fw_pchain *pc;
		bool first = true;

		pchain_names(&fw->rc, u[i].pol, fw_mode_audit(u[i].sb->mode, u[i].pol), &nm[i]);
		for (size_t j = 0; j < i && first; j++)
			first = strcmp(nm[j].chain, nm[i].chain) != 0;
		pc = fw_pc_find(fw, nm[i].chain);
		a->sbs[i].render_chain = first;
		a->sbs[i].chain_exists = pc != NULL;
		a->sbs[i].chain_old_digest = pc ? pc->digest : 0;
		a->sbs[i].chain_digest_out = &cdig[i];
		/* A new conn-limit set (N changed): the old one goes after the chain no longer uses it. */
		if (first && pc && pc->nm.connset[0] && strcmp(pc->nm.connset, nm[i].connset) != 0)
			a->sbs[i].old_connset = pc->nm.connset;
		if (rec && rec->chain[0]) {
			a->sbs[i].old_chain = rec->chain;
			a->sbs[i].old_mark = rec->ct_mark;
		}
		if (rec)
			a->sbs[i].old_metered = rec->metered;
	}
	/*
	 * Chains left by all their sandboxes: the last leaver removes it.  One
	 * pass: what stays on each chain fw has (few), and its last leaver.
	 */
	for (size_t k = 0; k < fw->n_pcs; k++) {
		stay[k] = (long)fw->pcs[k].refs;
		last[k] = SIZE_MAX;
	}
	for (size_t i = 0; i < n; i++) {
		const char *old = a->sbs[i].old_chain;
		const struct fw_pchain *po, *pn;

		if (old && strcmp(old, nm[i].chain) == 0)
			continue;	/* stays where it is */
		if (old && (po = fw_pc_find(fw, old))) {
			stay[po - fw->pcs]--;
			last[po - fw->pcs] = i;
		}
		if ((pn = fw_pc_find(fw, nm[i].chain)))
			stay[pn - fw->pcs]++;
	}
	for (size_t k = 0; k < fw->n_pcs; k++)
		if (stay[k] <= 0 && last[k] != SIZE_MAX) {
			a->sbs[last[k]].drop_chain = fw->pcs[k].nm.chain;
			a->sbs[last[k]].drop_connset = fw->pcs[k].nm.connset;
		}
	free(stay);
	free(last);
	return 0;
}

/* Per-sandbox scratch of one fw_sandboxes_update(), n entries each. */
struct upd_scratch {
	uint64_t *gens;			/* the gives of replaced pins, made before the batch */
	uint64_t *digests;		/* each sandbox's digest as rendered */
	struct pchain_names *nm;	/* the policy chain each will jump to */
	uint64_t *cdig;			/* that chain's fingerprint */
};

static void scratch_free(struct upd_scratch *sc)
{
	free(sc->gens);
	free(sc->digests);
	free(sc->nm);
	free(sc->cdig);
}

static int scratch_alloc(struct upd_scratch *sc, size_t n)
{
	sc->gens = calloc(n, sizeof(*sc->gens));
	sc->digests = calloc(n, sizeof(*sc->digests));
	sc->nm = calloc(n, sizeof(*sc->nm));
	sc->cdig = calloc(n, sizeof(*sc->cdig));
	if (sc->gens && sc->digests && sc->nm && sc->cdig)
		return 0;
	scratch_free(sc);
	return -ENOMEM;
}

/*
 * Check each update and fill its render argument; a sandbox whose pins are
 * replaced has the new ones given before the batch.  Return: 0; -errno
 * (fw->err says which sandbox; nothing was sent).
 */
static int update_prepare(struct fw *fw, const struct fw_update *u, size_t n, struct upd_arg *a,
			  struct upd_scratch *sc, uint64_t now)
{
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		const struct fw_sb_rec *rec;

		r = update_ok(fw, &u[i]);
		if (r == 0)
			r = sb_arg_init(&a->sbs[i], u[i].sb, u[i].pol);
		a->sbs[i].replace_pins = u[i].replace_pins;
		a->sbs[i].pins = u[i].pins;
		a->sbs[i].n_pins = u[i].n_pins;
		a->sbs[i].digest_out = &sc->digests[i];
		rec = r == 0 ? fw_sb_find(fw, u[i].sb->name) : NULL;
		if (rec)
			a->sbs[i].old_digest = rec->digest;
		if (rec && u[i].replace_pins) {
			a->sbs[i].old_pins = fw->pins;
			a->sbs[i].old_pins_of = rec->name;
			a->sbs[i].old_src[0] = rec->addr4;
			a->sbs[i].old_src[1] = rec->addr6;
			/*
			 * Given before the batch, beside the old ones (the
			 * render removes those first, then adds these): until
			 * the kernel's answer says which set it has, it may
			 * have either.
			 */
			r = pinreg_give(fw->pins, rec->name, u[i].pins, u[i].n_pins, now,
					&sc->gens[i]);
		}
		if (r < 0)	/* nothing was sent: say which sandbox */
			snprintf(fw->err, sizeof(fw->err), "sandbox %.64s (%zu of %zu): %s, nothing sent",
				 u[i].sb && u[i].sb->name ? u[i].sb->name : "?", i + 1, n, strerror(-r));
	}
	return r;
}

/*
 * After the batch (@r its result): committed, each record takes its new
 * chain (new refs first, so a kept chain never drops to 0), policy and
 * digest.  Committed, the kernel has exactly the new pins; not committed,
 * or not known to be (a timeout), it may have either set, so both stay
 * given.  Every render argument is released.
 */
static void update_finish(struct fw *fw, const struct fw_update *u, size_t n, struct upd_arg *a,
			  const struct upd_scratch *sc, int r)
{
	for (size_t i = 0; i < n && r == 0; i++) {
		struct fw_sb_rec *rec = fw_sb_find(fw, u[i].sb->name);

		if (rec && fw_pc_ref(fw, &sc->nm[i], a->sbs[i].render_chain ? sc->cdig[i] : 0) == 0) {
			fw_pc_unref(fw, rec->chain);
			snprintf(rec->chain, sizeof(rec->chain), "%s", sc->nm[i].chain);
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct fw_sb_rec *rec = r == 0 ? fw_sb_find(fw, u[i].sb->name) : NULL;

		if (rec) {
			snprintf(rec->policy, sizeof(rec->policy), "%s", u[i].pol->name);
			rec->metered = pchain_slow_path(u[i].pol);
			rec->digest = sc->digests[i];
		}
		if (rec && u[i].replace_pins)
			pinreg_retain(fw->pins, rec->name, sc->gens[i]);
		sb_arg_done(&a->sbs[i]);
	}
}

int fw_sandboxes_update(struct fw *fw, const struct fw_update *u, size_t n)
{
	struct upd_arg a = { .n = n };
	struct upd_scratch sc = { 0 };
	int r;

	if (fw)
		fw->err[0] = '\0';	/* argument errors below are not the kernel's */

	if (!fw || (n && !u))
		return -EINVAL;
	if (n == 0)
		return 0;
	a.sbs = calloc(n, sizeof(*a.sbs));
	if (!a.sbs || scratch_alloc(&sc, n) < 0) {
		free(a.sbs);
		return -ENOMEM;
	}
	r = update_prepare(fw, u, n, &a, &sc, clock_mono_ms());
	if (r == 0)
		r = fw_pc_reserve(fw, n);	/* the refs after the commit cannot fail */
	if (r == 0) {
		sb_args_mark_cidr(a.sbs, n);
		r = update_chains(fw, u, n, &a, sc.nm, sc.cdig);
	}
	if (r == 0)
		r = fw_run(fw, render_update, &a, true);
	update_finish(fw, u, n, &a, &sc, r);
	scratch_free(&sc);
	free(a.sbs);
	return r == -ENFILE ? -ENOSPC : r;
}
