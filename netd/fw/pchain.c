/*
 * pchain - a policy's chain, shared by every sandbox of that policy and
 * mode: pe-POLICY (enforce) and pa-POLICY (audit).  What is a sandbox's own
 * is not in the chain but in maps and sets keyed by its conntrack mark
 * (acct.h ACCT_MARK, one per slot), which the chain's second rule sets on
 * each new connection from the sandbox's source address (sb_mark4/6):
 *
 *   sb_quota          mark -> its quota object q-NAME
 *   ce-/ca-POLICY-N   mark -> its tracked connections (ct count, dynamic)
 *   sb_reject         mark -> its reject rate (limit, dynamic)
 *
 * With a gateway, each policy chain has a twin, ge-/ga-POLICY, holding only
 * the conn-limit rule below: a steered connection never reaches forward,
 * so prerouting_nat jumps there by the sandbox's mark before redirecting
 * it (gwsteer.c, sb_gwlim), and its connection counts in the same ce-/ca-
 * set as the forwarded ones.
 *
 * So a create, delete or reload adds and removes set elements, not rules:
 * nf_tables validates the whole table on every commit that adds a rule or
 * a jump, and with a chain per sandbox that walk grew with every sandbox
 * (a third of a create's time at 5,000).  Pure renderer.
 */
#include "netd/fw/render.h"

#include <stdio.h>
#include <string.h>

#include <linux/netfilter.h>

#include "common/reason.h"

#define FW_SNI_PORTS_MAX 64	/* distinct ports the SNI check queues, per mode */

void pchain_names(const struct fw_rcfg *rc, const struct policy *pol, bool audit,
		  struct pchain_names *out)
{
	uint32_t n = pol->max_conns ? pol->max_conns : rc->conn_limit;

	snprintf(out->chain, sizeof(out->chain), "p%c-%s", audit ? 'a' : 'e', pol->name);
	out->connset[0] = '\0';
	if (n)
		snprintf(out->connset, sizeof(out->connset), "c%c-%s-%u", audit ? 'a' : 'e',
			 pol->name, n);
	out->conn_limit = n;
}

/* What the rules below are rendered for. */
struct pc {
	struct bt *bt;
	const struct policy *pol;
	bool audit;
	const struct pchain_names *nm;
};

/* A rule of the chain; the caller appends it with bt_rule(). */
static void pc_rule(const struct pc *c, struct rb *rb)
{
	rb_init(rb, c->bt->rc, c->nm->chain);
}

/* ct state new ct mark set saddr map @sb_mark4/6: the connection is the sandbox's. */
static void pc_mark(const struct pc *c)
{
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		struct setdef d;
		struct rb rb;

		setdef_mark_map(&d, f);
		pc_rule(c, &rb);
		fm_nfproto(&rb, f->nfproto);
		fm_ct_new(&rb);
		fx_ct_mark_from_src(&rb, f, d.name);
		bt_rule(c->bt, &rb);
	}
}

/*
 * Egress byte quota (policy limits.egress_bytes), before the ct state test
 * so every packet leaving the sandbox is counted exactly once (one objref
 * per packet: each evaluation adds the packet's length), established ones
 * included.  The sandbox's quota object comes from sb_quota by its mark.
 * Over the quota: "finish" drops only packets of new connections, "cut"
 * every packet.
 */
static void pc_quota(const struct pc *c)
{
	struct setdef d;
	struct rb rb;

	if (!c->pol->egress_bytes)
		return;
	setdef_quota_map(&d);
	pc_rule(c, &rb);
	fx_ct_mark_key(&rb);
	fx_objref_map(&rb, NFT_REG_1, d.name);
	if (!c->pol->quota_cut)
		fm_ct_new(&rb);
	fx_counter(&rb);
	fx_deny_log(&rb, c->bt->rc, reason_deny_name(REASON_DENY_QUOTA));
	fx_verdict(&rb, NF_DROP);
	bt_rule(c->bt, &rb);
}

/* pchain_sni_ports() and pchain_quic_ports(): @proto's checked ports in @mode. */
static size_t l7_ports(const struct policy *pol, uint8_t proto, bool audit, enum policy_l7 mode,
		       uint16_t *out)
{
	size_t n = 0;

	if (audit && mode == POLICY_L7_ENFORCE)
		return 0;
	for (size_t i = 0; i < pol->n_rules; i++)
		for (size_t k = 0; k < pol->rules[i].n_ports; k++) {
			uint16_t port = pol->rules[i].ports[k].lo;
			bool enf = policy_l7_port_proto(pol, proto, port, POLICY_L7_ENFORCE), dup = false;

			if (pol->rules[i].proto != proto)
				continue;
			if (audit ? !enf && !policy_l7_port_proto(pol, proto, port, POLICY_L7_LOG)
				  : !policy_l7_port_proto(pol, proto, port, mode) ||
				    (mode == POLICY_L7_LOG && enf))
				continue;
			for (size_t j = 0; j < n && !dup; j++)
				dup = out[j] == port;
			if (!dup && n < FW_SNI_PORTS_MAX)
				out[n++] = port;
		}
	return n;
}

size_t pchain_sni_ports(const struct policy *pol, bool audit, enum policy_l7 mode, uint16_t *out)
{
	return l7_ports(pol, IPPROTO_TCP, audit, mode, out);
}

size_t pchain_quic_ports(const struct policy *pol, bool audit, enum policy_l7 mode, uint16_t *out)
{
	return l7_ports(pol, IPPROTO_UDP, audit, mode, out);
}

/* The first bit of the UDP payload: a QUIC long header (RFC 9000 17.2, RFC 8999 5.1). */
static void fm_quic_long_header(struct rb *rb)
{
	uint8_t mask = 0x80, zero = 0;

	fx_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 8, 1, NFT_REG_1);
	fx_bitwise(rb, NFT_REG_1, &mask, &zero, 1);
	fx_cmp(rb, NFT_REG_1, NFT_CMP_NEQ, &zero, 1);
}

/*
 * The QUIC check's queue rules (fw.h), per checked udp port P and queue Q:
 * @established: "udp dport P ct state established ct mark & DONE == 0
 * queue" and "udp dport P ct state established @th,64,1 == 1 queue" (a
 * long header: a new connection on the flow's tuple begins with one);
 * otherwise, before the pin accept, the same two for ct state new with
 * the pin lookup - a UDP flow is "new" until its first reply, and only a
 * pinned destination may be queued (netd's accept is the pin's).  The
 * rest (short headers of a flow netd passed) stays in the kernel.
 */
static void pc_quic_queue(const struct pc *c, bool established)
{
	static const enum policy_l7 modes[] = { POLICY_L7_ENFORCE, POLICY_L7_LOG };
	uint16_t ports[FW_SNI_PORTS_MAX];
	struct setdef d;
	struct rb rb;

	for (int m = 0; m < 2; m++) {
		size_t n = pchain_quic_ports(c->pol, c->audit, modes[m], ports);
		bool log = modes[m] == POLICY_L7_LOG;

		for (size_t i = 0; i < n; i++)
			for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++)
				for (int lh = 0; lh < 2; lh++) {
					if (established && f != FW_FAM_V4)
						break;	/* one rule for both families */
					pc_rule(c, &rb);
					if (!established)
						fm_nfproto(&rb, f->nfproto);
					fm_l4proto(&rb, IPPROTO_UDP);
					fm_dport(&rb, ports[i]);
					if (established)
						fm_ct_est_only(&rb);
					else
						fm_ct_new(&rb);
					if (lh)
						fm_quic_long_header(&rb);
					else
						fm_ct_mark_clear(&rb, FW_SNI_DONE_CTMARK);
					if (!established) {
						setdef_pin(&d, f);
						fm_pin_lookup(&rb, f, d.name);
					}
					fx_queue(&rb, log ? FW_SNI_QUEUE_LOG : FW_SNI_QUEUE_ENFORCE, log);
					bt_rule(c->bt, &rb);
				}
	}
}

/* "meta l4proto udp ct mark & CTMARK_BITS == DROP counter drop": a flow the QUIC check refused. */
static void pc_quic_drop(const struct pc *c)
{
	uint16_t ports[FW_SNI_PORTS_MAX];
	struct rb rb;

	if (!pchain_quic_ports(c->pol, false, POLICY_L7_ENFORCE, ports))
		return;
	pc_rule(c, &rb);
	fm_l4proto(&rb, IPPROTO_UDP);
	fm_ct_mark_masked(&rb, FW_SNI_CTMARK_BITS, FW_SNI_DROP_CTMARK);
	fx_counter(&rb);
	fx_verdict(&rb, NF_DROP);
	bt_rule(c->bt, &rb);
}

/*
 * The SNI check's queue rules.  @established: first "tcp dport P tcp flags
 * & (fin|syn|rst|ack) == syn ct state established ct mark set ct mark &
 * ~DONE | WATCH": a new connection that reuses an established entry (the
 * server reset the old one; conntrack keeps it for 10 s) starts unchecked
 * otherwise; then "tcp dport P ct state established ct mark & DONE == 0
 * queue" - no pin lookup, so a pin that expires between the SYN and the
 * first payload does not let it by (netd passes connections it is not to
 * check, e.g. through a cidr rule, and sets the bit).  Otherwise, for new
 * connections just before the pin accept: "... ct state new saddr . daddr
 * . tcp . P @pinF ct mark set ct mark | WATCH queue", so netd sees the SYN
 * and knows where the stream starts, and forward queues the server's
 * replies until netd is done (fw.h).
 */
static void pc_sni_queue(const struct pc *c, bool established)
{
	static const enum policy_l7 modes[] = { POLICY_L7_ENFORCE, POLICY_L7_LOG };
	uint16_t ports[FW_SNI_PORTS_MAX];
	struct setdef d;
	struct rb rb;

	for (int m = 0; m < 2; m++) {
		size_t n = pchain_sni_ports(c->pol, c->audit, modes[m], ports);
		bool log = modes[m] == POLICY_L7_LOG;
		uint32_t watch = log ? FW_SNI_WATCH_LOG : FW_SNI_WATCH_ENFORCE;

		for (size_t i = 0; i < n; i++)
			for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
				if (established && f != FW_FAM_V4)
					break;	/* one rule for both families */
				if (established) {
					pc_rule(c, &rb);
					fm_l4proto(&rb, IPPROTO_TCP);
					fm_dport(&rb, ports[i]);
					fm_tcp_syn_only(&rb);
					fm_ct_est_only(&rb);
					fx_ct_mark_bits(&rb, FW_SNI_CTMARK_BITS, watch);
					bt_rule(c->bt, &rb);
				}
				pc_rule(c, &rb);
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
					fx_ct_mark_bits(&rb, FW_SNI_CTMARK_BITS, watch);
				}
				fx_queue(&rb, log ? FW_SNI_QUEUE_LOG : FW_SNI_QUEUE_ENFORCE, log);
				bt_rule(c->bt, &rb);
			}
	}
}

/* "meta mark & FW_SNI_RESET_MARK != 0 counter reject with tcp reset": netd's reset. */
static void pc_sni_reset(const struct pc *c)
{
	uint16_t ports[FW_SNI_PORTS_MAX];
	struct rb rb;

	/* Audit mode too: its log queue's ports (a reset never comes then). */
	if (!pchain_sni_ports(c->pol, false, POLICY_L7_ENFORCE, ports) &&
	    !pchain_sni_ports(c->pol, false, POLICY_L7_LOG, ports))
		return;
	pc_rule(c, &rb);
	fm_l4proto(&rb, IPPROTO_TCP);
	fm_mark_set(&rb, FW_SNI_RESET_MARK);
	fx_counter(&rb);
	fx_reject(&rb, true);
	bt_rule(c->bt, &rb);
}

/* add @sb_reject { mark limit rate FW_REJECT_RATE/second burst FW_REJECT_BURST }: the sandbox's own rate. */
static void pc_reject_limit(struct rb *rb)
{
	struct nftnl_expr *lim = nftnl_expr_alloc("limit");

	if (lim) {
		nftnl_expr_set_u64(lim, NFTNL_EXPR_LIMIT_RATE, FW_REJECT_RATE);
		nftnl_expr_set_u64(lim, NFTNL_EXPR_LIMIT_UNIT, 1);	/* seconds */
		nftnl_expr_set_u32(lim, NFTNL_EXPR_LIMIT_BURST, FW_REJECT_BURST);
		nftnl_expr_set_u32(lim, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
	}
	fx_ct_mark_key(rb);
	fx_dynset_add(rb, NFT_REG_1, "sb_reject", lim);
}

/*
 * What the policy does not allow, at the end of the chain.  Enforce mode:
 * counted, logged ("not-pinned"), dropped; with on_deny: reject, refused
 * first while the sandbox is under FW_REJECT_RATE (TCP: RST, so connect()
 * fails with ECONNREFUSED; the rest: ICMP/ICMPv6 administratively
 * prohibited, EHOSTUNREACH), then dropped.  One rate per sandbox (its
 * sb_reject element), TCP and the rest together.  Audit mode: counted and
 * accepted, not logged: conntrack confirms the connection and its one
 * conn_open record (trail.c write_open()) is marked would_deny; the rules
 * above still drop internal addresses.
 */
static void pc_tail(const struct pc *c)
{
	const struct fw_rcfg *rc = c->bt->rc;
	struct rb rb;

	pc_rule(c, &rb);
	fx_counter(&rb);
	if (!c->audit)
		fx_deny_log(&rb, rc, reason_deny_name(REASON_DENY_NOT_PINNED));
	if (c->audit || !c->pol->reject)
		fx_verdict(&rb, c->audit ? NF_ACCEPT : NF_DROP);
	bt_rule(c->bt, &rb);
	if (c->audit || !c->pol->reject)
		return;
	pc_rule(c, &rb);
	fm_l4proto(&rb, IPPROTO_TCP);
	pc_reject_limit(&rb);
	fx_reject(&rb, true);
	bt_rule(c->bt, &rb);
	pc_rule(c, &rb);
	pc_reject_limit(&rb);
	fx_reject(&rb, false);
	bt_rule(c->bt, &rb);
	pc_rule(c, &rb);
	fx_verdict(&rb, NF_DROP);
	bt_rule(c->bt, &rb);
}

/*
 * Tracked connections per sandbox (policy limits.connections, else
 * netd.yaml's limits.connections):
 *
 *   ct state new add @ce-POLICY-N { ct mark ct count over N } counter log prefix "netd:conn-limit" drop
 *
 * after the replies' accept, so only new connections are counted; each
 * sandbox's element keeps every connection it let through while conntrack
 * still tracks it (a dropped attempt is never confirmed and leaves the list
 * at its next walk).  Both families together.  The set is named for N, so
 * a reload that changes N starts fresh counts in a new set; any other
 * reload or a restart keeps them.
 */
static void pc_conn_limit(const struct pc *c, const char *chain)
{
	struct nftnl_expr *cl;
	struct rb rb;

	if (!c->nm->conn_limit)
		return;
	cl = nftnl_expr_alloc("connlimit");
	if (cl) {
		nftnl_expr_set_u32(cl, NFTNL_EXPR_CONNLIMIT_COUNT, c->nm->conn_limit);
		nftnl_expr_set_u32(cl, NFTNL_EXPR_CONNLIMIT_FLAGS, NFT_CONNLIMIT_F_INV);	/* "over" */
	}
	rb_init(&rb, c->bt->rc, chain);
	fm_ct_new(&rb);
	fx_ct_mark_key(&rb);
	fx_dynset_add(&rb, NFT_REG_1, c->nm->connset, cl);
	fx_counter(&rb);
	fx_deny_log(&rb, c->bt->rc, reason_deny_name(REASON_DENY_CONN_LIMIT));
	fx_verdict(&rb, NF_DROP);
	bt_rule(c->bt, &rb);
}

/*
 * The rules: SNI reset, QUIC drop, the mark, quota, SNI and QUIC queue,
 * replies, conn limit (a host protection: audit mode keeps it), CIDR rules,
 * internal drop, SNI and QUIC queue (new), pins, the tail (pc_tail()).
 */
static void pc_rules(const struct pc *c)
{
	const struct fw_rcfg *rc = c->bt->rc;
	struct setdef d;
	struct rb rb;

	pc_sni_reset(c);
	pc_quic_drop(c);
	/*
	 * What conntrack does not track has no mark: nothing below that is a
	 * sandbox's own (its quota above all) could see it.  Dropped.
	 */
	pc_rule(c, &rb);
	fm_ct_untracked(&rb);
	fx_counter(&rb);
	fx_verdict(&rb, NF_DROP);
	bt_rule(c->bt, &rb);
	pc_mark(c);
	pc_quota(c);
	pc_sni_queue(c, true);
	pc_quic_queue(c, true);
	/*
	 * Established, not related: what a sandbox sends that conntrack calls
	 * related is an ICMP error (no helper is in use), and one naming
	 * another sandbox's connection would leave as part of it, past this
	 * sandbox's rules and quota.  Its own need not leave either: it meets
	 * the rules below as any packet does (and the final drop).
	 */
	pc_rule(c, &rb);
	fm_ct_est_only(&rb);
	fx_verdict(&rb, NF_ACCEPT);
	bt_rule(c->bt, &rb);
	pc_conn_limit(c, c->nm->chain);
	/* Explicit CIDR rules win over the internal ranges ... */
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		setdef_cidr(&d, c->pol->name, f);
		pc_rule(c, &rb);
		fm_nfproto(&rb, f->nfproto);
		fm_tuple_lookup(&rb, f, d.name);
		fx_verdict(&rb, NF_ACCEPT);
		bt_rule(c->bt, &rb);
	}
	/* ... but a DNS answer can never open an internal address. */
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		pc_rule(c, &rb);
		fm_nfproto(&rb, f->nfproto);
		fx_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, f->daddr_off, f->alen, NFT_REG_1);
		fx_lookup(&rb, fw_fam_name("internal", f).s, NFT_REG_1, -1, false);
		fx_counter(&rb);
		fx_deny_log(&rb, rc, reason_deny_name(REASON_DENY_INTERNAL));
		fx_verdict(&rb, NF_DROP);
		bt_rule(c->bt, &rb);
	}
	pc_sni_queue(c, false);
	pc_quic_queue(c, false);
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		setdef_pin(&d, f);
		pc_rule(c, &rb);
		fm_nfproto(&rb, f->nfproto);
		fm_pin_lookup(&rb, f, d.name);
		fx_verdict(&rb, NF_ACCEPT);
		bt_rule(c->bt, &rb);
	}
	pc_tail(c);
}

bool pchain_slow_path(const struct policy *pol)
{
	uint16_t ports[FW_SNI_PORTS_MAX];

	return pol->egress_bytes != 0 || pchain_sni_ports(pol, false, POLICY_L7_ENFORCE, ports) ||
	       pchain_sni_ports(pol, false, POLICY_L7_LOG, ports) ||
	       pchain_quic_ports(pol, false, POLICY_L7_ENFORCE, ports) ||
	       pchain_quic_ports(pol, false, POLICY_L7_LOG, ports);
}

void pchain_gw_name(const char *chain, char *out)
{
	size_t n = chain[0] ? strnlen(chain + 1, NFT_CHAIN_MAXNAMELEN - 2) : 0;

	out[0] = 'g';
	memcpy(out + 1, chain + 1, n);
	out[1 + n] = '\0';
}

/* The twin's rules (pchain_gw_name()): the conn limit, if the policy has one. */
static void pc_gw_rules(const struct pc *c)
{
	char twin[NFT_CHAIN_MAXNAMELEN];

	pchain_gw_name(c->nm->chain, twin);
	pc_conn_limit(c, twin);
}

void render_pchain(struct bt *bt, const struct policy *pol, bool audit)
{
	struct pchain_names nm;
	struct pc c = { .bt = bt, .pol = pol, .audit = audit, .nm = &nm };
	char twin[NFT_CHAIN_MAXNAMELEN];

	pchain_names(bt->rc, pol, audit, &nm);
	/* Its conn-limit set first (created or kept, elements and all: dynamic). */
	if (nm.connset[0]) {
		struct setdef d;

		setdef_by_mark(&d, nm.connset);
		bt_set(bt, NFT_MSG_NEWSET, &d);
	}
	bt_chain(bt, NFT_MSG_NEWCHAIN, nm.chain, -1, 0, NULL);
	/*
	 * Emptied whether fw knows it or not (reconcile mode flushes it
	 * already): rules the kernel kept from a batch fw could not confirm
	 * must not come first.
	 */
	if (!bt->keep)
		bt_flush_chain(bt, nm.chain);
	pc_rules(&c);
	if (!bt->rc->gw_port)
		return;
	pchain_gw_name(nm.chain, twin);
	bt_chain(bt, NFT_MSG_NEWCHAIN, twin, -1, 0, NULL);
	if (!bt->keep)
		bt_flush_chain(bt, twin);
	pc_gw_rules(&c);
}

/* The rules only: a set's definition carries the batch's message id (NFTNL_SET_ID). */
uint64_t pchain_digest(struct bt *bt, const struct policy *pol, bool audit)
{
	struct pchain_names nm;
	struct bt d = *bt;
	struct pc c = { .bt = &d, .pol = pol, .audit = audit, .nm = &nm };

	d.keep = true;
	pchain_names(bt->rc, pol, audit, &nm);
	fw_batch_digest_begin(d.b);
	pc_rules(&c);
	if (bt->rc->gw_port)
		pc_gw_rules(&c);
	return fw_batch_digest_end(d.b);
}

void render_pchain_remove(struct bt *bt, const char *chain, const char *connset)
{
	char twin[NFT_CHAIN_MAXNAMELEN];
	struct setdef d;

	bt_chain(bt, NFT_MSG_NEWCHAIN, chain, -1, 0, NULL);
	bt_flush_chain(bt, chain);
	bt_chain(bt, NFT_MSG_DELCHAIN, chain, -1, 0, NULL);
	if (bt->rc->gw_port) {	/* its sb_gwlim jumps went with the sandboxes' */
		pchain_gw_name(chain, twin);
		bt_chain(bt, NFT_MSG_NEWCHAIN, twin, -1, 0, NULL);
		bt_flush_chain(bt, twin);
		bt_chain(bt, NFT_MSG_DELCHAIN, twin, -1, 0, NULL);
	}
	if (connset && connset[0]) {
		/* After the chain: its rule referred to it.  Created (kept) then deleted. */
		setdef_by_mark(&d, connset);
		bt_set(bt, NFT_MSG_NEWSET, &d);
		bt_set(bt, NFT_MSG_DELSET, &d);
	}
}
