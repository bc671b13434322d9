/*
 * sandbox - one sandbox's objects in the netd ruleset, rendered: chain
 * sb-NAME, its quota object, its policy's CIDR sets pc-POLICY-cidr4/6
 * (shared by the policy's sandboxes; intervals), and the hookup elements
 * that send its traffic there (sandbox_ifs, sandbox_src4/6, sandbox_fwd;
 * for a chained attachment the chained_* sets of both tables).  Also the
 * pins and dns_local elements.  No set is the sandbox's own: nf_tables
 * finds sets by name in a list, so per-sandbox sets made every create,
 * reload and restart cost grow with the number of sandboxes.  Pure
 * renderer.
 *
 * How a pin is rendered: the proxy's (address, proto, port, TTL) for the
 * sandbox with source address S becomes one element "S . addr . proto .
 * port timeout T expires T" of the shared set pin4/6; the chain's rule
 * "saddr . daddr . l4proto . dport @pin4 accept" then lets the connection
 * through until the element expires.  The anti-spoofing rules make S the
 * sandbox's own; fw.c's ledger lets the sandbox's removal delete exactly
 * its elements.
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

static void sb_chain_name(char *buf, size_t sz, const char *name)
{
	snprintf(buf, sz, "sb-%s", name);
}

void render_pins(struct bt *bt, const struct addr src[2], const struct fw_pin *pins, size_t n)
{
	for (int i = 0; i < 2; i++) {
		const struct fw_fam *f = &fw_fams[i];
		struct setdef d;
		struct elemq q;

		if (src[i].family != f->af)
			continue;
		setdef_pin(&d, f);
		elq_init(&q, bt, NFT_MSG_NEWSETELEM, d.name);
		for (size_t k = 0; k < n; k++) {
			const struct fw_pin *p = &pins[k];
			struct nftnl_set_elem *e;
			uint8_t key[FKEY_PIN_MAX];

			if (p->addr.family != f->af)
				continue;
			e = elem_new(key, fkey_pin(key, &src[i], p));
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
void render_pin_keys_remove(struct bt *bt, const struct fw_fam *f, const uint8_t *keys,
			    size_t stride, size_t n)
{
	static const uint16_t types[] = { NFT_MSG_NEWSETELEM, NFT_MSG_DELSETELEM };
	struct setdef d;

	if (n == 0)
		return;
	setdef_pin(&d, f);
	for (int t = 0; t < 2; t++) {
		struct elemq q;

		elq_init(&q, bt, types[t], d.name);
		for (size_t k = 0; k < n; k++)
			elq_add(&q, elem_new(keys + k * stride, d.key_len));
		elq_flush(&q);
	}
}

void render_pins_remove(struct bt *bt, const struct addr src[2], const struct fw_ledger_pin *pins,
			size_t n)
{
	static const uint16_t types[] = { NFT_MSG_NEWSETELEM, NFT_MSG_DELSETELEM };

	for (int i = 0; i < 2; i++) {
		const struct fw_fam *f = &fw_fams[i];
		struct setdef d;

		if (src[i].family != f->af)
			continue;
		setdef_pin(&d, f);
		for (int t = 0; t < 2; t++) {
			struct elemq q;

			elq_init(&q, bt, types[t], d.name);
			for (size_t k = 0; k < n; k++) {
				uint8_t key[FKEY_PIN_MAX];

				if (pins[k].p.addr.family == f->af)
					elq_add(&q, elem_new(key, fkey_pin(key, &src[i], &pins[k].p)));
			}
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

static void unhook_tap(struct bt *bt, const struct fw_sandbox *sb)
{
	tap_elems(bt, sb, false);
}

/* The removal half: everything @sb's hookup may own, created-then-deleted. */
static void unhook(struct bt *bt, const struct fw_sandbox *sb, const struct addr *d4,
		   const struct addr *d6)
{
	char chain[NFT_CHAIN_MAXNAMELEN];
	uint8_t key[IFNAMSIZ + 16];
	size_t len;

	sb_chain_name(chain, sizeof(chain), sb->name);
	if (sb->chained) {
		unhook_chained(bt, sb, chain);
		return;
	}
	len = fkey_ifname(key, sb->host_ifname);
	/* The map element references the chain: it goes first. */
	elem_remove(bt, "sandbox_fwd", key, len, chain);
	elem_remove(bt, "sandbox_ifs", key, len, NULL);
	elem_remove(bt, "metered_ifs", key, len, NULL);
	ifaddr_remove(bt, "sandbox_src", sb->host_ifname, &sb->addr4);
	ifaddr_remove(bt, "sandbox_src", sb->host_ifname, &sb->addr6);
	if (sb->tap)
		unhook_tap(bt, sb);
	ifaddr_remove(bt, "dns_local", sb->host_ifname, d4);
	ifaddr_remove(bt, "dns_local", sb->host_ifname, d6);
}

void render_sandbox_remove_objects(struct bt *bt, const char *name)
{
	char chain[NFT_CHAIN_MAXNAMELEN];

	sb_chain_name(chain, sizeof(chain), name);
	bt_flush_chain(bt, chain);
	bt_chain(bt, NFT_MSG_DELCHAIN, chain, -1, 0, NULL);
	/* After the chain: its rules referenced the quota. */
	bt_quota_remove(bt, name);
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
		render_pins_remove(bt, a->old_src, a->old_pins, a->n_old_pins);
	if (bt->keep && a->replace_pins)
		render_pins(bt, src, a->pins, a->n_pins);
}

/*
 * Egress byte quota (policy limits.egress_bytes), first in the chain so
 * every packet leaving the sandbox is counted exactly once (one objref per
 * packet: each evaluation adds the packet's length).  Over the quota:
 * "finish" drops only packets of new connections, "cut" every packet.  The
 * quota is evaluated before the ct state test, so established packets are
 * counted even though they do not match.
 */
static void sb_quota_rule(struct bt *bt, const struct sb_arg *a, const char *chain)
{
	char qname[NFT_OBJ_MAXNAMELEN];
	struct nftnl_expr *e;
	struct rb rb;

	if (!a->pol->egress_bytes) {
		/* A reload that dropped the limit: the chain no longer refers to it. */
		if (bt->keep)
			bt_quota_remove(bt, a->sb->name);
		return;
	}
	snprintf(qname, sizeof(qname), "q-%s", a->sb->name);
	bt_quota(bt, NFT_MSG_NEWOBJ, a->sb->name, a->pol->egress_bytes);
	rb_init(&rb, bt->rc, chain);
	e = fx_new(&rb, "objref");
	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_QUOTA);
		nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, qname);
	}
	if (!a->pol->quota_cut)
		fm_ct_new(&rb);
	fx_counter(&rb);
	fx_deny_log(&rb, bt->rc, "quota");
	fx_verdict(&rb, NF_DROP);
	bt_rule(bt, &rb);
}

#define FW_SNI_PORTS_MAX 64	/* distinct ports the SNI check queues, per mode */

/*
 * The ports whose connections the SNI check (fw.h) queues in @mode: every
 * tcp port of a rule with tls.sni or http.host at @mode; a port that
 * enforce and log share is an enforce port.  @audit (an audit-mode
 * sandbox, fw_mode_audit()): nothing is enforced, every checked port goes
 * to the log queue (which fails open), and netd reports a mismatch that
 * enforce would have reset as would_deny "sni-mismatch" (daemon/sniglue.c).
 */
static size_t sni_ports(const struct policy *pol, bool audit, enum policy_l7 mode,
			uint16_t *out)
{
	size_t n = 0;

	if (audit && mode == POLICY_L7_ENFORCE)
		return 0;
	for (size_t i = 0; i < pol->n_rules; i++)
		for (size_t k = 0; k < pol->rules[i].n_ports; k++) {
			uint16_t port = pol->rules[i].ports[k].lo;
			bool enf = policy_l7_port(pol, port, POLICY_L7_ENFORCE), dup = false;

			if (audit ? !enf && !policy_l7_port(pol, port, POLICY_L7_LOG)
				  : !policy_l7_port(pol, port, mode) ||
				    (mode == POLICY_L7_LOG && enf))
				continue;
			for (size_t j = 0; j < n && !dup; j++)
				dup = out[j] == port;
			if (!dup && n < FW_SNI_PORTS_MAX)
				out[n++] = port;
		}
	return n;
}

/*
 * The SNI check's queue rules.  @established: "tcp dport P ct state
 * established ct mark & DONE == 0 queue" - no pin lookup, so a pin that
 * expires between the SYN and the first payload does not let it by (netd
 * passes connections it is not to check, e.g. through a cidr rule, and
 * sets the bit).  Otherwise, for new connections just before the pin
 * accept: "... ct state new saddr . daddr . tcp . P @pinF queue", so netd
 * sees the SYN and knows where the stream starts.
 */
static void sb_sni_queue(struct bt *bt, const struct sb_arg *a, const char *chain,
			 bool established)
{
	static const enum policy_l7 modes[] = { POLICY_L7_ENFORCE, POLICY_L7_LOG };
	bool audit = fw_mode_audit(a->sb->mode, a->pol);
	uint16_t ports[FW_SNI_PORTS_MAX];
	struct setdef d;
	struct rb rb;

	for (int m = 0; m < 2; m++) {
		size_t n = sni_ports(a->pol, audit, modes[m], ports);
		bool log = modes[m] == POLICY_L7_LOG;

		for (size_t i = 0; i < n; i++)
			for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
				if (established && f != FW_FAM_V4)
					break;	/* one rule for both families */
				rb_init(&rb, bt->rc, chain);
				if (!established)
					fm_nfproto(&rb, f->nfproto);
				fm_l4proto(&rb, IPPROTO_TCP);
				fm_dport(&rb, ports[i]);
				if (established) {
					fm_ct_est_only(&rb);
					fm_ct_mark_clear(&rb, FW_SNI_DONE_CTMARK);
				} else {
					fm_ct_new(&rb);
					setdef_pin(&d, f);
					fm_pin_lookup(&rb, f, d.name);
				}
				fx_queue(&rb, log ? FW_SNI_QUEUE_LOG : FW_SNI_QUEUE_ENFORCE, log);
				bt_rule(bt, &rb);
			}
	}
}

/* "meta mark & FW_SNI_RESET_MARK != 0 counter reject with tcp reset": netd's reset. */
static void sb_sni_reset(struct bt *bt, const struct sb_arg *a, const char *chain)
{
	uint16_t ports[FW_SNI_PORTS_MAX];
	struct rb rb;

	/* Audit mode too: its log queue's ports (a reset never comes then). */
	if (!sni_ports(a->pol, false, POLICY_L7_ENFORCE, ports) &&
	    !sni_ports(a->pol, false, POLICY_L7_LOG, ports))
		return;
	rb_init(&rb, bt->rc, chain);
	fm_l4proto(&rb, IPPROTO_TCP);
	fm_mark_set(&rb, FW_SNI_RESET_MARK);
	fx_counter(&rb);
	fx_reject(&rb, true);
	bt_rule(bt, &rb);
}

/*
 * What the policy does not allow, at the end of the chain.  Enforce mode:
 * counted, logged ("not-pinned"), dropped; with on_deny: reject, refused
 * first while under FW_REJECT_RATE (TCP: RST, so connect() fails with
 * ECONNREFUSED; the rest: ICMP/ICMPv6 administratively prohibited,
 * EHOSTUNREACH), then dropped.  Audit mode: counted and accepted, not
 * logged: conntrack confirms the connection and its one conn_open record
 * (trail.c write_open()) is marked would_deny; the rules above still drop
 * internal addresses.
 */
static void sb_chain_tail(struct bt *bt, const struct sb_arg *a, const char *chain)
{
	const struct fw_rcfg *rc = bt->rc;
	bool audit = fw_mode_audit(a->sb->mode, a->pol);
	struct rb rb;

	rb_init(&rb, rc, chain);
	fx_counter(&rb);
	if (!audit)
		fx_deny_log(&rb, rc, "not-pinned");
	if (audit || !a->pol->reject)
		fx_verdict(&rb, audit ? NF_ACCEPT : NF_DROP);
	bt_rule(bt, &rb);
	if (audit || !a->pol->reject)
		return;
	rb_init(&rb, rc, chain);
	fm_l4proto(&rb, IPPROTO_TCP);
	fx_limit(&rb, FW_REJECT_RATE, FW_REJECT_BURST);
	fx_reject(&rb, true);
	bt_rule(bt, &rb);
	rb_init(&rb, rc, chain);
	fx_limit(&rb, FW_REJECT_RATE, FW_REJECT_BURST);
	fx_reject(&rb, false);
	bt_rule(bt, &rb);
	rb_init(&rb, rc, chain);
	fx_verdict(&rb, NF_DROP);
	bt_rule(bt, &rb);
}

/*
 * Tracked connections per sandbox (policy limits.connections, else
 * netd.yaml's limits.connections):
 *
 *   ct state new ct count over N counter log prefix "netd:conn-limit" drop
 *
 * after the replies' accept, so only new connections are counted; the
 * expression's list keeps every connection it let through while conntrack
 * still tracks it (a dropped attempt is never confirmed and leaves the list
 * at its next walk).  One list per rule, both families: re-rendering the
 * chain (its policy changed in a reload, a restart) starts a fresh count.
 */
static void sb_conn_limit_rule(struct bt *bt, const struct sb_arg *a, const char *chain)
{
	uint32_t n = a->pol->max_conns ? a->pol->max_conns : bt->rc->conn_limit;
	struct nftnl_expr *e;
	struct rb rb;

	if (!n)
		return;
	rb_init(&rb, bt->rc, chain);
	fm_ct_new(&rb);
	e = fx_new(&rb, "connlimit");
	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CONNLIMIT_COUNT, n);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CONNLIMIT_FLAGS, NFT_CONNLIMIT_F_INV);	/* "over" */
	}
	fx_counter(&rb);
	fx_deny_log(&rb, bt->rc, "conn-limit");
	fx_verdict(&rb, NF_DROP);
	bt_rule(bt, &rb);
}

/*
 * The sandbox's chain: SNI reset, quota, SNI queue, replies, conn limit (a
 * host protection: audit mode keeps it), ct mark, CIDR rules, internal
 * drop, SNI queue (new), pins, the tail (sb_chain_tail()).
 */
static void sb_chain(struct bt *bt, const struct sb_arg *a, const char *chain)
{
	const struct fw_sandbox *sb = a->sb;
	const struct fw_rcfg *rc = bt->rc;
	struct setdef d;
	struct rb rb;

	bt_chain(bt, NFT_MSG_NEWCHAIN, chain, -1, 0, NULL);
	sb_sni_reset(bt, a, chain);
	sb_quota_rule(bt, a, chain);
	sb_sni_queue(bt, a, chain, true);
	rb_init(&rb, rc, chain);
	fm_ct_est(&rb);
	fx_verdict(&rb, NF_ACCEPT);
	bt_rule(bt, &rb);
	sb_conn_limit_rule(bt, a, chain);
	/* Every new connection of the sandbox carries its mark (acct.h). */
	if (sb->ct_mark) {
		rb_init(&rb, rc, chain);
		fx_ct_mark_set(&rb, sb->ct_mark);
		bt_rule(bt, &rb);
	}
	/* Explicit CIDR rules win over the internal ranges ... */
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		setdef_cidr(&d, a->pol->name, f);
		rb_init(&rb, rc, chain);
		fm_nfproto(&rb, f->nfproto);
		fm_tuple_lookup(&rb, f, d.name);
		fx_verdict(&rb, NF_ACCEPT);
		bt_rule(bt, &rb);
	}
	/* ... but a DNS answer can never open an internal address. */
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		rb_init(&rb, rc, chain);
		fm_nfproto(&rb, f->nfproto);
		fx_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, f->daddr_off, f->alen, NFT_REG_1);
		fx_lookup(&rb, fw_fam_name("internal", f).s, NFT_REG_1, -1, false);
		fx_counter(&rb);
		fx_deny_log(&rb, rc, "internal");
		fx_verdict(&rb, NF_DROP);
		bt_rule(bt, &rb);
	}
	sb_sni_queue(bt, a, chain, false);
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		setdef_pin(&d, f);
		rb_init(&rb, rc, chain);
		fm_nfproto(&rb, f->nfproto);
		fm_pin_lookup(&rb, f, d.name);
		fx_verdict(&rb, NF_ACCEPT);
		bt_rule(bt, &rb);
	}
	sb_chain_tail(bt, a, chain);
}

/*
 * sb_slow_path() - must every packet a sandbox under @pol sends, established
 * ones too, reach its chain (the veth goes into metered_ifs, off base.c's
 * forward fast path)?  Its egress quota counts every packet; the SNI check
 * queues the first payload packets of established connections.
 */
static bool sb_slow_path(const struct policy *pol)
{
	uint16_t ports[FW_SNI_PORTS_MAX];

	return pol->egress_bytes != 0 || sni_ports(pol, false, POLICY_L7_ENFORCE, ports) ||
	       sni_ports(pol, false, POLICY_L7_LOG, ports);
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
			elem_add1(bt, fw_fam_name("chained_fwd", f).s,
				  elem_new_jump(ad[i]->a, f->alen, chain));
		}
		return;
	}
	elem_add1(bt, "sandbox_ifs", elem_new(key, fkey_ifname(key, sb->host_ifname)));
	/* A tap's MAC before the jump, like its sources: no frame is let by unchecked. */
	if (sb->tap)
		tap_elems(bt, sb, true);
	/* A quota or an SNI check: its packets stay off the fast path (base.c forward_fast). */
	if (metered)
		elem_add1(bt, "metered_ifs", elem_new(key, fkey_ifname(key, sb->host_ifname)));
	else if (bt->keep)	/* a reload that dropped the quota or the check */
		elem_remove(bt, "metered_ifs", key, fkey_ifname(key, sb->host_ifname), NULL);
	for (int i = 0; i < 2; i++)
		if (ad[i]->family == fw_fams[i].af)
			elem_add1(bt, fw_fam_name("sandbox_src", &fw_fams[i]).s,
				  elem_new(key, fkey_ifaddr(key, sb->host_ifname, ad[i])));
	elem_add1(bt, "sandbox_fwd",
		  elem_new_jump(key, fkey_ifname(key, sb->host_ifname), chain));
}

/*
 * The fingerprint of the sandbox's chain and hookup as reconcile mode
 * renders them (fw_batch_digest_begin()): equal fingerprints, equal
 * messages.  0 if the batch failed.
 */
static uint64_t sb_digest(struct bt *bt, const struct sb_arg *a, const char *chain)
{
	struct bt d = *bt;

	d.keep = true;
	fw_batch_digest_begin(d.b);
	sb_chain(&d, a, chain);
	sb_hookup(&d, a->sb, chain, sb_slow_path(a->pol));
	return fw_batch_digest_end(d.b);
}

void render_sandbox(struct bt *bt, const struct sb_arg *a)
{
	const struct fw_sandbox *sb = a->sb;
	char chain[NFT_CHAIN_MAXNAMELEN];
	uint64_t digest;

	sb_chain_name(chain, sizeof(chain), sb->name);
	/*
	 * 1. Make sure the chain exists so the removals below can refer to it.
	 * (Its dns_local elements are in the record of an earlier add only:
	 * fw_sandbox_set_dns() adds them.)  Reconciling (bt->keep) skips
	 * this: the chain (and with fill_cidr the policy's CIDR sets) is
	 * emptied and refilled in place, the pins are kept unless replaced,
	 * and the hookup elements are re-added unchanged.
	 */
	if (!bt->keep) {
		bt_chain(bt, NFT_MSG_NEWCHAIN, chain, -1, 0, NULL);
		/*
		 * Whatever an earlier add of this name hooked up (its interface
		 * or addresses may differ), then whatever the new description
		 * would collide with.  Removing twice is harmless.
		 */
		if (a->old)
			unhook(bt, a->old, &a->old_dns4, &a->old_dns6);
		unhook(bt, sb, &no_addr, &no_addr);
		render_sandbox_remove_objects(bt, sb->name);
		if (a->drop_policy && (!a->pol || strcmp(a->drop_policy, a->pol->name) != 0))
			sb_policy_sets_remove(bt, a->drop_policy);
	}
	sb_pins(bt, a);
	if (!a->pol)
		return;
	/* 2. Build the sandbox afresh: its policy's sets first, then the chain; 3. hook it up. */
	if (a->fill_cidr)
		sb_policy_sets(bt, a);
	digest = sb_digest(bt, a, chain);
	if (a->digest_out)
		*a->digest_out = digest;
	/* Reconciling what this fw rendered last time, unchanged: nothing to send (its pins were done above). */
	if (bt->keep && digest && digest == a->old_digest)
		return;
	sb_chain(bt, a, chain);
	sb_hookup(bt, sb, chain, sb_slow_path(a->pol));
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
