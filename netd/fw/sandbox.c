/*
 * sandbox - one sandbox's objects in the netd ruleset, rendered: the jump
 * to its policy's chain (pchain.c; sandbox_fwd, or chained_fwd4/6 for a
 * chained attachment), what that chain reads of it (its ct mark by source
 * address in sb_mark4/6, its quota object q-NAME in sb_quota), its
 * anti-spoofing and hookup elements (sandbox_ifs, sandbox_src4/6,
 * metered_ifs; for a chained attachment the chained_* sets of both
 * tables), its policy's CIDR sets pc-POLICY-cidr4/6 (shared by the
 * policy's sandboxes; intervals), its pins and dns_local elements.  No set
 * or chain is the sandbox's own: nf_tables finds sets by name in a list and
 * validates every chain on each commit that adds a rule or a jump, so
 * per-sandbox ones made every create, reload and restart cost grow with
 * the number of sandboxes.  Pure renderer.
 *
 * How a pin is rendered: the proxy's (address, proto, port, TTL) for the
 * sandbox with source address S becomes one element "S . addr . proto .
 * port timeout T expires T" of the shared set pin4/6; the chain's rule
 * "saddr . daddr . l4proto . dport @pin4 accept" then lets the connection
 * through until the element expires.  The anti-spoofing rules make S the
 * sandbox's own; fw.c's ledger lets the sandbox's removal delete exactly
 * its elements.  A gateway pin (struct pin.gateway) becomes "S . addr .
 * port" of gw4/6 instead, which steers the connection to the API gateway
 * (gwsteer.c); never an element of pin4/6.
 */
#include "netd/fw/render.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>

static const struct addr no_addr;

int sb_arg_init(struct sb_arg *a, const struct fw_sandbox *sb, const struct policy *pol)
{
	memset(a, 0, sizeof(*a));
	a->sb = sb;
	a->pol = pol;
	for (int i = 0; pol && i < 2; i++) {
		int r = ruleset_cidr_boxes(pol, fw_fams[i].af, &a->box[i]);

		if (r < 0)
			return r;
		a->n_box[i] = r;
	}
	return 0;
}

void sb_args_mark_cidr(struct sb_arg *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool first = a[i].pol != NULL;

		for (size_t j = 0; j < i && first; j++)
			first = !a[j].pol || strcmp(a[j].pol->name, a[i].pol->name) != 0;
		a[i].fill_cidr = first;
	}
}

void sb_arg_done(struct sb_arg *a)
{
	free(a->box[0]);
	free(a->box[1]);
	a->box[0] = a->box[1] = NULL;
}

/* Is there a gateway, whose sets gw4/6 a pin of kind @gw may be in?  (Plain ones: always.) */
static bool pin_kind_on(const struct bt *bt, int gw)
{
	return !gw || bt->rc->gw_port;
}

void render_pins(struct bt *bt, const struct addr src[2], const struct pin *pins, size_t n)
{
	/* Plain pins to pin4/6, gateway pins to gw4/6 (fw_pin() took none without a gateway). */
	for (int i = 0; i < 4; i++) {
		const struct fw_fam *f = &fw_fams[i % 2];
		int gw = i / 2;
		struct setdef d;
		struct elemq q;

		if (src[i % 2].family != f->af || !pin_kind_on(bt, gw))
			continue;
		setdef_pin_of(&d, f, gw);
		elq_init(&q, bt, NFT_MSG_NEWSETELEM, d.name);
		for (size_t k = 0; k < n; k++) {
			const struct pin *p = &pins[k];
			struct nftnl_set_elem *e;
			uint8_t key[FKEY_PIN_MAX];

			if (p->addr.family != f->af || p->gateway != gw)
				continue;
			e = elem_new(key, fkey_pin_of(key, &src[i % 2], p));
			if (e) {
				/*
				 * An existing element is updated in place (no
				 * NLM_F_EXCL); giving the expiration as well makes
				 * the kernel restart the countdown even when the
				 * timeout value is unchanged.
				 */
				nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_TIMEOUT, p->timeout_ms);
				nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_EXPIRATION, p->timeout_ms);
			}
			elq_add(&q, e);
		}
		elq_flush(&q);
	}
}

/*
 * Created (without a timeout: the delete follows in the same batch), then
 * deleted: the element is gone afterwards whether or not it was there, or
 * had lapsed, so the batch never fails on it.
 */
void render_pin_keys_remove(struct bt *bt, const struct fw_fam *f, bool gateway,
			    const uint8_t *keys, size_t stride, size_t n)
{
	static const uint16_t types[] = { NFT_MSG_NEWSETELEM, NFT_MSG_DELSETELEM };
	struct setdef d;

	if (n == 0)
		return;
	setdef_pin_of(&d, f, gateway);
	for (int t = 0; t < 2; t++) {
		struct elemq q;

		elq_init(&q, bt, types[t], d.name);
		for (size_t k = 0; k < n; k++)
			elq_add(&q, elem_new(keys + k * stride, d.key_len));
		elq_flush(&q);
	}
}

/* One given pin into the queue of its family's set (pinreg_given_each()). */
struct pin_rm {
	struct elemq *q;
	const struct fw_fam *f;
	const struct addr *src;
	bool gateway;		/* the queue is gw4/6's */
};

static void pin_rm_one(void *arg, const struct pin *p)
{
	const struct pin_rm *x = arg;
	uint8_t key[FKEY_PIN_MAX];

	if (p->addr.family == x->f->af && p->gateway == x->gateway)
		elq_add(x->q, elem_new(key, fkey_pin_of(key, x->src, p)));
}

void render_pins_remove(struct bt *bt, const struct addr src[2], const struct pinreg *reg,
			const char *name)
{
	static const uint16_t types[] = { NFT_MSG_NEWSETELEM, NFT_MSG_DELSETELEM };

	if (!reg || !name || !pinreg_given_count(reg, name))
		return;
	for (int i = 0; i < 4; i++) {
		const struct fw_fam *f = &fw_fams[i % 2];
		int gw = i / 2;
		struct setdef d;

		if (src[i % 2].family != f->af || !pin_kind_on(bt, gw))
			continue;
		setdef_pin_of(&d, f, gw);
		for (int t = 0; t < 2; t++) {
			struct elemq q;
			struct pin_rm x = { .q = &q, .f = f, .src = &src[i % 2], .gateway = gw };

			elq_init(&q, bt, types[t], d.name);
			pinreg_given_each(reg, name, pin_rm_one, &x);
			elq_flush(&q);
		}
	}
}

/* The hookup a chained attachment had: its addresses in both tables. */
static void unhook_chained(struct bt *bt, const struct fw_sandbox *sb, const char *chain)
{
	const struct addr *ad[2] = { &sb->addr4, &sb->addr6 };
	uint8_t key[IFNAMSIZ + 16];

	/* The verdict map elements reference the chain: they go first. */
	for (int i = 0; i < 2; i++) {
		const struct fw_fam *f = &fw_fams[i];

		if (ad[i]->family != f->af)
			continue;
		if (chain)
			elem_remove(bt, fw_fam_name("chained_fwd", f).s, ad[i]->a, f->alen, chain);
		elem_remove(bt, fw_fam_name("chained_src", f).s, ad[i]->a, f->alen, NULL);
	}
	bt->family = NFPROTO_BRIDGE;
	elem_remove(bt, "chained_ports", key, fkey_ifname(key, sb->host_ifname), NULL);
	ifaddr_remove(bt, "chained_port_src", sb->host_ifname, &sb->addr4);
	ifaddr_remove(bt, "chained_port_src", sb->host_ifname, &sb->addr6);
	bt->family = 0;
}

/*
 * A tap's MAC elements: tap_ifs and tap_mac here, tap_ifs and tap_arp in
 * the arp table.  @add: add them, else remove them.
 */
static void tap_elems(struct bt *bt, const struct fw_sandbox *sb, bool add)
{
	uint8_t key[FKEY_IFARP_LEN];
	size_t len;

	len = fkey_ifname(key, sb->host_ifname);
	for (int t = 0; t < 2; t++) {
		bt->family = t == 0 ? 0 : NFPROTO_ARP;
		if (add)
			elem_add1(bt, "tap_ifs", elem_new(key, len));
		else
			elem_remove(bt, "tap_ifs", key, len, NULL);
	}
	bt->family = 0;
	if (add)
		elem_add1(bt, "tap_mac", elem_new(key, fkey_ifmac(key, sb->host_ifname, sb->mac)));
	else
		elem_remove(bt, "tap_mac", key, fkey_ifmac(key, sb->host_ifname, sb->mac), NULL);
	if (sb->addr4.family == AF_INET) {
		bt->family = NFPROTO_ARP;
		if (add)
			elem_add1(bt, "tap_arp",
				  elem_new(key, fkey_ifarp(key, sb->host_ifname, sb->mac, &sb->addr4)));
		else
			elem_remove(bt, "tap_arp", key,
				    fkey_ifarp(key, sb->host_ifname, sb->mac, &sb->addr4), NULL);
		bt->family = 0;
	}
}

const char *fw_raw_chain(bool tap, bool metered)
{
	if (metered)
		return tap ? "metered_tap_raw" : "metered_raw";
	return tap ? "tap_raw" : "sandbox_raw";
}

/* @sb's raw_ifs element as rendered with @metered, created-then-deleted. */
static void raw_elem_remove(struct bt *bt, const struct fw_sandbox *sb, bool metered)
{
	uint8_t key[IFNAMSIZ];
	size_t len = fkey_ifname(key, sb->host_ifname);

	elem_remove_data(bt, "raw_ifs", elem_new_goto(key, len, fw_raw_chain(sb->tap, metered)), key,
			 len);
}

static void unhook_tap(struct bt *bt, const struct fw_sandbox *sb)
{
	tap_elems(bt, sb, false);
}

void render_marks_remove(struct bt *bt, const struct fw_sandbox *sb, uint32_t mark)
{
	const struct addr *ad[2] = { &sb->addr4, &sb->addr6 };

	for (int i = 0; i < 2 && mark; i++) {
		const struct fw_fam *f = &fw_fams[i];
		struct setdef d;

		if (ad[i]->family != f->af)
			continue;
		setdef_mark_map(&d, f);
		elem_remove_data(bt, d.name, elem_new_data(ad[i]->a, f->alen, &mark, sizeof(mark)),
				 ad[i]->a, f->alen);
	}
}

/* Only @sb's jump to @chain (sandbox_fwd, or chained_fwd4/6), created-then-deleted. */
static void unhook_jump(struct bt *bt, const struct fw_sandbox *sb, const char *chain)
{
	const struct addr *ad[2] = { &sb->addr4, &sb->addr6 };
	uint8_t key[IFNAMSIZ + 16];

	render_gw_jump(bt, sb->ct_mark, chain, false);
	if (!sb->chained) {
		elem_remove(bt, "sandbox_fwd", key, fkey_ifname(key, sb->host_ifname), chain);
		return;
	}
	for (int i = 0; i < 2; i++)
		if (ad[i]->family == fw_fams[i].af)
			elem_remove(bt, fw_fam_name("chained_fwd", &fw_fams[i]).s, ad[i]->a,
				    fw_fams[i].alen, chain);
}

/*
 * The removal half: everything @sb's hookup may own (its jump to @chain,
 * NULL: not known, left; its marks @mark; @metered: its raw_ifs element's
 * chain), created-then-deleted.
 */
static void unhook(struct bt *bt, const struct fw_sandbox *sb, const char *chain, uint32_t mark,
		   bool metered, const struct addr *d4, const struct addr *d6)
{
	uint8_t key[IFNAMSIZ + 16];
	size_t len;

	render_marks_remove(bt, sb, mark);
	render_gw_jump(bt, mark, chain, false);	/* (it refers to the chain's twin) */
	if (sb->chained) {
		unhook_chained(bt, sb, chain);
		return;
	}
	len = fkey_ifname(key, sb->host_ifname);
	/* The map element references the chain: it goes first. */
	if (chain)
		elem_remove(bt, "sandbox_fwd", key, len, chain);
	raw_elem_remove(bt, sb, metered);
	elem_remove(bt, "sandbox_ifs", key, len, NULL);
	ifaddr_remove(bt, "sandbox_src", sb->host_ifname, &sb->addr4);
	ifaddr_remove(bt, "sandbox_src", sb->host_ifname, &sb->addr6);
	if (sb->tap)
		unhook_tap(bt, sb);
	ifaddr_remove(bt, "dns_local", sb->host_ifname, d4);
	ifaddr_remove(bt, "dns_local", sb->host_ifname, d6);
}

void render_quota_remove(struct bt *bt, const char *name, const uint32_t marks[2])
{
	char qname[NFT_OBJ_MAXNAMELEN];
	struct setdef d;

	snprintf(qname, sizeof(qname), "q-%s", name);
	setdef_quota_map(&d);
	/* The object exists for the elements' creates; they go first, then it. */
	bt_quota(bt, NFT_MSG_NEWOBJ, name, 1);
	for (int i = 0; i < 2; i++)
		if (marks[i] && (i == 0 || marks[1] != marks[0])) {
			render_gw_quota_mode(bt, marks[i], false);
			elem_remove_data(bt, d.name, elem_new_obj(&marks[i], 4, qname), &marks[i], 4);
		}
	bt_quota(bt, NFT_MSG_DELOBJ, name, 0);
}

/*
 * What the policy chain reads of the sandbox: its marks by source address,
 * and its quota object and the sb_quota element naming it (a reload that
 * dropped the quota: both removed), and its sb_gwq_cut element for the
 * gateway's quota rules.
 */
static void sb_objects(struct bt *bt, const struct sb_arg *a)
{
	const struct fw_sandbox *sb = a->sb;
	const struct addr *ad[2] = { &sb->addr4, &sb->addr6 };
	uint32_t mark = sb->ct_mark;
	char qname[NFT_OBJ_MAXNAMELEN];
	struct setdef d;

	for (int i = 0; i < 2 && mark; i++) {
		const struct fw_fam *f = &fw_fams[i];

		if (ad[i]->family != f->af)
			continue;
		setdef_mark_map(&d, f);
		elem_add1(bt, d.name, elem_new_data(ad[i]->a, f->alen, &mark, sizeof(mark)));
	}
	if (!a->pol->egress_bytes || !mark) {
		const uint32_t marks[2] = { mark, 0 };

		if (bt->keep)
			render_quota_remove(bt, sb->name, marks);
		return;
	}
	snprintf(qname, sizeof(qname), "q-%s", sb->name);
	/* NEWOBJ on an existing quota updates its limit and keeps what it has used. */
	bt_quota(bt, NFT_MSG_NEWOBJ, sb->name, a->pol->egress_bytes);
	setdef_quota_map(&d);
	elem_add1(bt, d.name, elem_new_obj(&mark, sizeof(mark), qname));
	/* The same quota on what it sends to the gateway, cut or finish (gwsteer.c). */
	render_gw_quota_mode(bt, mark, a->pol->quota_cut);
}

/*
 * The policy's CIDR sets pc-POLICY-cidr4/6: created or kept, emptied and
 * filled (every sandbox of the policy sees the new contents at once, in
 * this batch).
 */
static void sb_policy_sets(struct bt *bt, const struct sb_arg *a)
{
	struct setdef d;
	struct elemq q;

	for (int i = 0; i < 2; i++) {
		const struct fw_fam *f = &fw_fams[i];

		setdef_cidr(&d, a->pol->name, f);
		bt_set(bt, NFT_MSG_NEWSET, &d);
		if (!bt->keep)	/* reconcile mode flushes it already */
			bt_flush_set(bt, d.name);
		elq_init(&q, bt, NFT_MSG_NEWSETELEM, d.name);
		for (int j = 0; j < a->n_box[i]; j++) {
			const struct ruleset_box *b = &a->box[i][j];
			uint8_t lo[24], hi[24];
			struct nftnl_set_elem *e;
			size_t len;

			len = fkey_tuple(lo, b->lo, f->alen, b->proto, b->port_lo);
			fkey_tuple(hi, b->hi, f->alen, b->proto, b->port_hi);
			e = elem_new(lo, len);
			if (e)
				nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY_END, hi, (uint32_t)len);
			elq_add(&q, e);
		}
		elq_flush(&q);
	}
}

/* Created (or kept) then deleted: gone afterwards, never an error. */
static void sb_policy_sets_remove(struct bt *bt, const char *policy)
{
	struct setdef d;

	for (int i = 0; i < 2; i++) {
		setdef_cidr(&d, policy, &fw_fams[i]);
		bt_set(bt, NFT_MSG_NEWSET, &d);
		bt_set(bt, NFT_MSG_DELSET, &d);
	}
}

/* The sandbox's pins: the recorded ones removed when it is made afresh or replaced. */
static void sb_pins(struct bt *bt, const struct sb_arg *a)
{
	const struct addr src[2] = { a->sb->addr4, a->sb->addr6 };

	if (!bt->keep || a->replace_pins)
		render_pins_remove(bt, a->old_src, a->old_pins, a->old_pins_of);
	if (bt->keep && a->replace_pins)
		render_pins(bt, src, a->pins, a->n_pins);
}

/*
 * Hook it up: interface, anti-spoofing sources, then the jump.  A chained
 * attachment: its port and port . source pairs in the bridge table
 * (anti-spoofing, isolation), then its addresses and the address -> chain
 * map in the inet table.
 */
static void sb_hookup(struct bt *bt, const struct fw_sandbox *sb, const char *chain,
		      bool metered)
{
	const struct addr *ad[2] = { &sb->addr4, &sb->addr6 };
	uint8_t key[IFNAMSIZ + 16];

	/* Its steered connections' way to the chain's twin (gwsteer.c): by mark. */
	render_gw_jump(bt, sb->ct_mark, chain, true);
	if (sb->chained) {
		bt->family = NFPROTO_BRIDGE;
		elem_add1(bt, "chained_ports", elem_new(key, fkey_ifname(key, sb->host_ifname)));
		for (int i = 0; i < 2; i++)
			if (ad[i]->family == fw_fams[i].af)
				elem_add1(bt, fw_fam_name("chained_port_src", &fw_fams[i]).s,
					  elem_new(key, fkey_ifaddr(key, sb->host_ifname, ad[i])));
		bt->family = 0;
		for (int i = 0; i < 2; i++) {
			const struct fw_fam *f = &fw_fams[i];

			if (ad[i]->family != f->af)
				continue;
			elem_add1(bt, fw_fam_name("chained_src", f).s, elem_new(ad[i]->a, f->alen));
			/* prerouting_raw's gate to the chained checks (base.c; stays). */
			elem_add1(bt, "chained_fams", elem_new(&f->nfproto, 1));
			elem_add1(bt, fw_fam_name("chained_fwd", f).s,
				  elem_new_jump(ad[i]->a, f->alen, chain));
		}
		return;
	}
	elem_add1(bt, "sandbox_ifs", elem_new(key, fkey_ifname(key, sb->host_ifname)));
	/* A tap's MAC before the jump, like its sources: no frame is let by unchecked. */
	if (sb->tap)
		tap_elems(bt, sb, true);
	for (int i = 0; i < 2; i++)
		if (ad[i]->family == fw_fams[i].af)
			elem_add1(bt, fw_fam_name("sandbox_src", &fw_fams[i]).s,
				  elem_new(key, fkey_ifaddr(key, sb->host_ifname, ad[i])));
	/*
	 * prerouting_raw's way in, after the sources it checks; a quota or an
	 * SNI check marks its packets there, off the fast path (base.c forward_fast).
	 */
	elem_add1(bt, "raw_ifs", elem_new_goto(key, fkey_ifname(key, sb->host_ifname),
					       fw_raw_chain(sb->tap, metered)));
	elem_add1(bt, "sandbox_fwd",
		  elem_new_jump(key, fkey_ifname(key, sb->host_ifname), chain));
}

/*
 * The fingerprint of the sandbox's own elements, objects and hookup as
 * reconcile mode renders them (fw_batch_digest_begin()): equal
 * fingerprints, equal messages.  0 if the batch failed.
 */
static uint64_t sb_digest(struct bt *bt, const struct sb_arg *a, const char *chain)
{
	struct bt d = *bt;

	d.keep = true;
	fw_batch_digest_begin(d.b);
	sb_objects(&d, a);
	sb_hookup(&d, a->sb, chain, pchain_slow_path(a->pol));
	return fw_batch_digest_end(d.b);
}

/* Policy chain @chain and, with a gateway, its twin: created or kept (removals refer to them). */
static void chain_ensure(struct bt *bt, const char *chain)
{
	char twin[NFT_CHAIN_MAXNAMELEN];

	bt_chain(bt, NFT_MSG_NEWCHAIN, chain, -1, 0, NULL);
	if (!bt->rc->gw_port)
		return;
	pchain_gw_name(chain, twin);
	bt_chain(bt, NFT_MSG_NEWCHAIN, twin, -1, 0, NULL);
}

/*
 * 1. (Not reconciling.)  Whatever an earlier add of this name hooked up
 * (its interface or addresses may differ), then whatever the new
 * description would collide with, and its quota; removing twice is
 * harmless.  The chains are made sure of first, so the removals can refer
 * to them.  Its dns_local elements are in the record of an earlier add
 * only (fw_sandbox_set_dns() adds them).  The chain and the policy's sets
 * it was the last to use go after it (a chain before the sets its rules
 * refer to).
 */
static void sb_unhook_all(struct bt *bt, const struct sb_arg *a, const struct pchain_names *nm)
{
	const struct fw_sandbox *sb = a->sb;
	const uint32_t marks[2] = { a->old ? a->old_mark : 0, sb->ct_mark };

	if (a->pol)
		chain_ensure(bt, nm->chain);
	if (a->old && a->old_chain)
		chain_ensure(bt, a->old_chain);
	if (a->old)
		unhook(bt, a->old, a->old_chain, a->old_mark, a->old_metered, &a->old_dns4,
		       &a->old_dns6);
	unhook(bt, sb, a->pol ? nm->chain : NULL, sb->ct_mark, a->pol && pchain_slow_path(a->pol),
	       &no_addr, &no_addr);
	render_quota_remove(bt, sb->name, marks);
	if (a->drop_chain)
		render_pchain_remove(bt, a->drop_chain, a->drop_connset);
	if (a->drop_policy && (!a->pol || strcmp(a->drop_policy, a->pol->name) != 0))
		sb_policy_sets_remove(bt, a->drop_policy);
}

/* 2. Its policy's sets and chain, by the first sandbox of the batch that uses them. */
static void sb_policy_objects(struct bt *bt, const struct sb_arg *a)
{
	bool audit = fw_mode_audit(a->sb->mode, a->pol);
	uint64_t cd;

	if (a->fill_cidr)
		sb_policy_sets(bt, a);
	if (!a->render_chain)
		return;
	cd = pchain_digest(bt, a->pol, audit);
	if (a->chain_digest_out)
		*a->chain_digest_out = cd;
	/* Sent only if new or changed (fw's fingerprint of what it sent last). */
	if (!a->chain_exists || !cd || cd != a->chain_old_digest)
		render_pchain(bt, a->pol, audit);
	if (a->old_connset) {	/* N changed: the chain uses a new conn set */
		struct setdef d;

		setdef_by_mark(&d, a->old_connset);
		bt_set(bt, NFT_MSG_NEWSET, &d);
		bt_set(bt, NFT_MSG_DELSET, &d);
	}
}

/*
 * 3. Its own objects and elements, then the jump.  Reconciling what this fw
 * rendered last time, unchanged: nothing to send.  A reload that moved it
 * to the other mode's chain takes the old jump out first, one that gave it
 * or took its quota or SNI check its old way in (raw_ifs: an element's
 * verdict is replaced only by removing it).
 */
static void sb_own(struct bt *bt, const struct sb_arg *a, const struct pchain_names *nm)
{
	uint64_t digest = sb_digest(bt, a, nm->chain);
	bool metered = pchain_slow_path(a->pol);

	if (a->digest_out)
		*a->digest_out = digest;
	if (bt->keep && digest && digest == a->old_digest)
		return;
	if (bt->keep && a->old_chain && strcmp(a->old_chain, nm->chain) != 0)
		unhook_jump(bt, a->sb, a->old_chain);
	if (bt->keep && !a->sb->chained && a->old_metered != metered)
		raw_elem_remove(bt, a->sb, a->old_metered);
	sb_objects(bt, a);
	sb_hookup(bt, a->sb, nm->chain, metered);
}

void render_sandbox(struct bt *bt, const struct sb_arg *a)
{
	struct pchain_names nm = { 0 };

	if (a->pol)
		pchain_names(bt->rc, a->pol, fw_mode_audit(a->sb->mode, a->pol), &nm);
	/* Reconciling (bt->keep) re-adds in place: pins kept unless replaced. */
	if (!bt->keep)
		sb_unhook_all(bt, a, &nm);
	sb_pins(bt, a);
	if (a->pol) {
		sb_policy_objects(bt, a);
		sb_own(bt, a, &nm);
	}
	/* 4. Reconciling: the chain it left, if it was the last to use it (its jumps are gone). */
	if (bt->keep && a->drop_chain)
		render_pchain_remove(bt, a->drop_chain, a->drop_connset);
}

void render_dns(struct bt *bt, const char *ifname, const struct addr old[2],
		const struct addr cur[2])
{
	uint8_t key[IFNAMSIZ + 16];

	for (int i = 0; i < 2; i++)
		ifaddr_remove(bt, "dns_local", ifname, &old[i]);
	for (int i = 0; i < (fw_rcfg_v6(bt->rc) ? 2 : 1); i++) {
		if (cur[i].family != fw_fams[i].af)
			continue;
		elem_add1(bt, fw_fam_name("dns_local", &fw_fams[i]).s,
			  elem_new(key, fkey_ifaddr(key, ifname, &cur[i])));
	}
}
