/*
 * expr - the rule vocabulary of fw's renderer: libnftnl expressions, the
 * match fragments the rulesets are written in, set keys and set
 * definitions, and the per-family table that replaces "IPv4 ? a : b" at
 * every use.  Pure: builds libnftnl objects in memory, nothing else.
 */
#include "netd/fw/render.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/xt_NFQUEUE.h>

const struct fw_fam fw_fams[2] = {
	{ .af = AF_INET, .nfproto = NFPROTO_IPV4, .alen = 4, .saddr_off = 12, .daddr_off = 16,
	  .addr_type = TYPE_IPADDR, .sfx = '4', .icmp = IPPROTO_ICMP, .port_unreach = { 3, 3 },
	  .hdr_len = 20, .proto_off = 9 },
	{ .af = AF_INET6, .nfproto = NFPROTO_IPV6, .alen = 16, .saddr_off = 8, .daddr_off = 24,
	  .addr_type = TYPE_IP6ADDR, .sfx = '6', .icmp = IPPROTO_ICMPV6, .port_unreach = { 1, 4 },
	  .hdr_len = 40, .proto_off = 6 },
};

const struct fw_fam *fw_fam_of(int af)
{
	return af == AF_INET ? FW_FAM_V4 : af == AF_INET6 ? FW_FAM_V6 : NULL;
}

struct fw_name fw_fam_name(const char *base, const struct fw_fam *f)
{
	struct fw_name n;

	snprintf(n.s, sizeof(n.s), "%s%c", base, f->sfx);
	return n;
}

/* ---- expressions --------------------------------------------------------- */

void rb_init(struct rb *rb, const struct fw_rcfg *rc, const char *chain)
{
	rb->err = 0;
	rb->r = nftnl_rule_alloc();
	if (!rb->r) {
		rb->err = -ENOMEM;
		return;
	}
	nftnl_rule_set_str(rb->r, NFTNL_RULE_TABLE, rc->table);
	nftnl_rule_set_str(rb->r, NFTNL_RULE_CHAIN, chain);
	nftnl_rule_set_u32(rb->r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	rb->queue_native = rc->queue_native;
}

struct nftnl_expr *fx_new(struct rb *rb, const char *name)
{
	struct nftnl_expr *e;

	if (rb->err)
		return NULL;
	e = nftnl_expr_alloc(name);
	if (!e) {
		rb->err = -ENOMEM;
		return NULL;
	}
	nftnl_rule_add_expr(rb->r, e);	/* the rule owns it from here */
	return e;
}

void fx_meta(struct rb *rb, uint32_t key, uint32_t dreg)
{
	struct nftnl_expr *e = fx_new(rb, "meta");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, dreg);
	}
}

void fx_payload(struct rb *rb, uint32_t base, uint32_t off, uint32_t len, uint32_t dreg)
{
	struct nftnl_expr *e = fx_new(rb, "payload");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
	}
}

void fx_cmp(struct rb *rb, uint32_t sreg, uint32_t op, const void *data, size_t len)
{
	struct nftnl_expr *e = fx_new(rb, "cmp");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, sreg);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
		nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, (uint32_t)len);
	}
}

void fx_bitwise(struct rb *rb, uint32_t reg, const void *mask, const void *xor, size_t len)
{
	struct nftnl_expr *e = fx_new(rb, "bitwise");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, reg);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, reg);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, (uint32_t)len);
		nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, (uint32_t)len);
		nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, xor, (uint32_t)len);
	}
}

void fx_lookup(struct rb *rb, const char *set, uint32_t sreg, int dreg, bool inv)
{
	struct nftnl_expr *e = fx_new(rb, "lookup");

	if (e) {
		nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, sreg);
		if (dreg >= 0)
			nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_DREG, (uint32_t)dreg);
		if (inv)
			nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
	}
}

void fx_verdict(struct rb *rb, int verdict)
{
	struct nftnl_expr *e = fx_new(rb, "immediate");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	}
}

/* verdict @verdict (NFT_GOTO, NFT_JUMP) to @chain */
static void fx_to_chain(struct rb *rb, int verdict, const char *chain)
{
	struct nftnl_expr *e = fx_new(rb, "immediate");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
		nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
	}
}

void fx_goto(struct rb *rb, const char *chain)
{
	fx_to_chain(rb, NFT_GOTO, chain);
}

void fx_jump(struct rb *rb, const char *chain)
{
	fx_to_chain(rb, NFT_JUMP, chain);
}

void fx_limit(struct rb *rb, uint64_t per_s, uint32_t burst)
{
	struct nftnl_expr *e = fx_new(rb, "limit");

	if (e) {
		nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, per_s);
		nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);	/* seconds */
		nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_BURST, burst);
		nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
	}
}

void fx_reject(struct rb *rb, bool tcp_rst)
{
	struct nftnl_expr *e = fx_new(rb, "reject");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE,
				   tcp_rst ? NFT_REJECT_TCP_RST : NFT_REJECT_ICMPX_UNREACH);
		nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE,
				  tcp_rst ? 0 : NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
	}
}

void fx_counter(struct rb *rb)
{
	fx_new(rb, "counter");
}

void fx_notrack(struct rb *rb)
{
	fx_new(rb, "notrack");
}

void fx_deny_log(struct rb *rb, const struct fw_rcfg *rc, const char *reason)
{
	char prefix[64];
	struct nftnl_expr *e;

	if (!rc->log_group)
		return;
	e = fx_new(rb, "log");
	if (e) {
		snprintf(prefix, sizeof(prefix), "netd:%s", reason);
		nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix);
		nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, rc->log_group);
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_SNAPLEN, 128);
	}
}

/* reg @dreg = ct @key (NFT_CT_*). */
static void fx_ct_load(struct rb *rb, uint32_t key, uint32_t dreg)
{
	struct nftnl_expr *e = fx_new(rb, "ct");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, dreg);
	}
}

/* ct @key (NFT_CT_*) = reg @sreg. */
static void fx_ct_store(struct rb *rb, uint32_t key, uint32_t sreg)
{
	struct nftnl_expr *e = fx_new(rb, "ct");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_SREG, sreg);
	}
}

void fx_ct_mark_set(struct rb *rb, uint32_t mark)
{
	struct nftnl_expr *e = fx_new(rb, "immediate");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
		nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &mark, sizeof(mark));
	}
	fx_ct_store(rb, NFT_CT_MARK, NFT_REG_1);
}

void fx_ct_mark_from_src(struct rb *rb, const struct fw_fam *f, const char *map)
{
	fx_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, f->saddr_off, f->alen, NFT_REG_1);
	fx_lookup(rb, map, NFT_REG_1, NFT_REG_1, false);
	fx_ct_store(rb, NFT_CT_MARK, NFT_REG_1);
}

void fx_ct_mark_key(struct rb *rb)
{
	uint32_t mask = ~FW_SNI_CTMARK_BITS, xor = 0;

	fx_ct_load(rb, NFT_CT_MARK, NFT_REG_1);
	fx_bitwise(rb, NFT_REG_1, &mask, &xor, 4);
}

void fx_objref_map(struct rb *rb, uint32_t sreg, const char *map)
{
	struct nftnl_expr *e = fx_new(rb, "objref");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_SET_SREG, sreg);
		nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_SET_NAME, map);
	}
}

void fx_dynset_add(struct rb *rb, uint32_t sreg, const char *set, struct nftnl_expr *per_elem)
{
	struct nftnl_expr *e = per_elem ? fx_new(rb, "dynset") : NULL;

	if (!e) {
		nftnl_expr_free(per_elem);
		if (!rb->err)
			rb->err = -ENOMEM;
		return;
	}
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, NFT_DYNSET_OP_ADD);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, sreg);
	nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, set);
	nftnl_expr_set(e, NFTNL_EXPR_DYNSET_EXPR, per_elem, 0);	/* takes it */
}

void fx_flow_add(struct rb *rb, const char *ft)
{
	struct nftnl_expr *e = fx_new(rb, "flow_offload");

	if (e)
		nftnl_expr_set_str(e, NFTNL_EXPR_FLOW_TABLE_NAME, ft);
}

void fx_redirect(struct rb *rb, uint16_t port)
{
	uint16_t port_be = htons(port);
	struct nftnl_expr *e;

	e = fx_new(rb, "immediate");
	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
		nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &port_be, 2);
	}
	e = fx_new(rb, "redir");
	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
	}
}

void fx_mark_or(struct rb *rb, uint32_t bits)
{
	uint32_t mask = ~bits, xor = bits;
	struct nftnl_expr *e;

	fx_meta(rb, NFT_META_MARK, NFT_REG_1);
	fx_bitwise(rb, NFT_REG_1, &mask, &xor, 4);
	e = fx_new(rb, "meta");
	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, NFT_META_MARK);
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_SREG, NFT_REG_1);
	}
}

/* ---- match fragments ----------------------------------------------------- */

void fm_nfproto(struct rb *rb, uint8_t nfproto)
{
	fx_meta(rb, NFT_META_NFPROTO, NFT_REG_1);
	fx_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &nfproto, 1);
}

void fm_l4proto(struct rb *rb, uint8_t proto)
{
	fx_meta(rb, NFT_META_L4PROTO, NFT_REG_1);
	fx_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &proto, 1);
}

void fm_dport(struct rb *rb, uint16_t port)
{
	uint16_t be = htons(port);

	fx_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
	fx_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &be, 2);
}

void fm_sport(struct rb *rb, uint16_t port)
{
	uint16_t be = htons(port);

	fx_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 2, NFT_REG_1);
	fx_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &be, 2);
}

void fm_ifset(struct rb *rb, uint32_t meta_key, const char *set, bool inv)
{
	fx_meta(rb, meta_key, NFT_REG_1);
	fx_lookup(rb, set, NFT_REG_1, -1, inv);
}

void fm_ifname_eq(struct rb *rb, uint32_t meta_key, const char *name)
{
	char buf[IFNAMSIZ] = { 0 };

	/* Zero-padded to IFNAMSIZ: an exact name match, not a prefix. */
	memcpy(buf, name, strnlen(name, sizeof(buf) - 1));
	fx_meta(rb, meta_key, NFT_REG_1);
	fx_cmp(rb, NFT_REG_1, NFT_CMP_EQ, buf, sizeof(buf));
}

void fm_egress(struct rb *rb, const struct fw_rcfg *rc)
{
	if (rc->egress[0])
		fm_ifname_eq(rb, NFT_META_OIFNAME, rc->egress);
	else
		fm_ifset(rb, NFT_META_OIFNAME, "sandbox_ifs", true);
}

/*
 * A 32-bit field under a mask: @load (fx_ct_load or fx_meta) puts @key into
 * register 1, then (reg & @mask) @op @value, host byte order as the kernel
 * keeps marks and ct state.  The one shape of every ct state, ct mark and
 * meta mark match below.
 */
static void fm_masked(struct rb *rb, void (*load)(struct rb *, uint32_t, uint32_t), uint32_t key,
		      uint32_t mask, uint32_t op, uint32_t value)
{
	uint32_t xor = 0;

	load(rb, key, NFT_REG_1);
	fx_bitwise(rb, NFT_REG_1, &mask, &xor, 4);
	fx_cmp(rb, NFT_REG_1, op, &value, 4);
}

static void fm_ct_state(struct rb *rb, uint32_t mask)
{
	fm_masked(rb, fx_ct_load, NFT_CT_STATE, mask, NFT_CMP_NEQ, 0);
}

void fm_ct_est(struct rb *rb)
{
	fm_ct_state(rb, NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED));
}

void fm_ct_new(struct rb *rb)
{
	fm_ct_state(rb, NF_CT_STATE_BIT(IP_CT_NEW));
}

void fm_ct_untracked(struct rb *rb)
{
	fm_ct_state(rb, NF_CT_STATE_INVALID_BIT | NF_CT_STATE_UNTRACKED_BIT);
}

void fm_prefix(struct rb *rb, uint32_t off, const struct prefix *p)
{
	size_t len = addr_len(p->addr.family);
	uint8_t mask[16] = { 0 }, zero[16] = { 0 };

	for (unsigned int bit = 0; bit < p->plen; bit++)
		mask[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
	fx_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, off, (uint32_t)len, NFT_REG_1);
	if (p->plen < len * 8)
		fx_bitwise(rb, NFT_REG_1, mask, zero, len);
	fx_cmp(rb, NFT_REG_1, NFT_CMP_EQ, p->addr.a, len);
}

void fm_tuple_lookup(struct rb *rb, const struct fw_fam *f, const char *set)
{
	fx_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, f->daddr_off, f->alen, REG32(0));
	fx_meta(rb, NFT_META_L4PROTO, REG32(f->alen / 4));
	fx_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, REG32(f->alen / 4 + 1));
	fx_lookup(rb, set, REG32(0), -1, false);
}

void fm_pin_lookup(struct rb *rb, const struct fw_fam *f, const char *set)
{
	fx_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, f->saddr_off, f->alen, REG32(0));
	fx_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, f->daddr_off, f->alen, REG32(f->alen / 4));
	fx_meta(rb, NFT_META_L4PROTO, REG32(2 * f->alen / 4));
	fx_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, REG32(2 * f->alen / 4 + 1));
	fx_lookup(rb, set, REG32(0), -1, false);
}

void fm_ifaddr_not_in(struct rb *rb, const struct fw_fam *f, const char *set)
{
	fx_meta(rb, NFT_META_IIFNAME, REG32(0));
	fx_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, f->saddr_off, f->alen, REG32(4));
	fx_lookup(rb, set, REG32(0), -1, true);
}

void fm_ifaddr_in(struct rb *rb, uint32_t meta_key, const struct fw_fam *f, bool daddr,
		  const char *set)
{
	fm_nfproto(rb, f->nfproto);
	fx_meta(rb, meta_key, REG32(0));
	fx_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, daddr ? f->daddr_off : f->saddr_off, f->alen,
		   REG32(4));
	fx_lookup(rb, set, REG32(0), -1, false);
}

void fm_addr_in(struct rb *rb, const struct fw_fam *f, bool daddr, const char *set, bool vmap)
{
	fm_nfproto(rb, f->nfproto);
	fx_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, daddr ? f->daddr_off : f->saddr_off, f->alen,
		   NFT_REG_1);
	fx_lookup(rb, set, NFT_REG_1, vmap ? NFT_REG_VERDICT : -1, false);
}

/*
 * udp dport 53 iifname . ip daddr @dns_local4, or for a reply udp sport 53
 * oifname . ip saddr @dns_local4 (IPv6: ip6, dns_local6).
 */
void fm_dns_local(struct rb *rb, const struct fw_fam *f, bool reply)
{
	fm_l4proto(rb, IPPROTO_UDP);
	if (reply)
		fm_sport(rb, 53);
	else
		fm_dport(rb, 53);
	fm_ifaddr_in(rb, reply ? NFT_META_OIFNAME : NFT_META_IIFNAME, f, !reply,
		     fw_fam_name("dns_local", f).s);
}

void fm_marks_clear(struct rb *rb, uint32_t bits)
{
	fm_masked(rb, fx_meta, NFT_META_MARK, bits, NFT_CMP_EQ, 0);
}

/*
 * The xtables NFQUEUE target (revision 3) through nft_compat, not nft's own
 * "queue" expression: kernels built without CONFIG_NFT_QUEUE (this test
 * machine's among them) have no nft_queue, while nft_compat + xt_NFQUEUE
 * are in every distribution kernel (iptables-nft depends on them).  The
 * verdict path is the same nfnetlink_queue either way.
 */
void fx_queue(struct rb *rb, uint16_t num, bool bypass)
{
	struct xt_NFQ_info_v3 *info;
	struct nftnl_expr *e;

	if (rb->queue_native) {
		e = fx_new(rb, "queue");
		if (e) {
			nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_NUM, num);
			nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_TOTAL, 1);
			nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_FLAGS, bypass ? NFT_QUEUE_FLAG_BYPASS : 0);
		}
		return;
	}
	e = fx_new(rb, "target");
	if (!e)
		return;
	info = calloc(1, sizeof(*info));
	if (!info) {
		rb->err = -ENOMEM;
		return;
	}
	info->queuenum = num;
	info->queues_total = 1;
	info->flags = bypass ? NFQ_FLAG_BYPASS : 0;
	nftnl_expr_set_str(e, NFTNL_EXPR_TG_NAME, "NFQUEUE");
	nftnl_expr_set_u32(e, NFTNL_EXPR_TG_REV, 3);
	nftnl_expr_set(e, NFTNL_EXPR_TG_INFO, info, sizeof(*info));	/* takes @info */
}

void fm_ct_est_only(struct rb *rb)
{
	fm_ct_state(rb, NF_CT_STATE_BIT(IP_CT_ESTABLISHED));
}

void fm_ct_reply(struct rb *rb)
{
	uint8_t reply = IP_CT_DIR_REPLY;

	fx_ct_load(rb, NFT_CT_DIRECTION, NFT_REG_1);
	fx_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &reply, 1);
}

void fm_ct_mark_masked(struct rb *rb, uint32_t mask, uint32_t value)
{
	fm_masked(rb, fx_ct_load, NFT_CT_MARK, mask, NFT_CMP_EQ, value);
}

void fm_ct_mark_any(struct rb *rb, uint32_t bits)
{
	fm_masked(rb, fx_ct_load, NFT_CT_MARK, bits, NFT_CMP_NEQ, 0);
}

void fm_ct_mark_clear(struct rb *rb, uint32_t bit)
{
	fm_ct_mark_masked(rb, bit, 0);
}

void fx_ct_mark_bits(struct rb *rb, uint32_t clear, uint32_t set)
{
	uint32_t mask = ~(clear | set);

	fx_ct_load(rb, NFT_CT_MARK, NFT_REG_1);
	fx_bitwise(rb, NFT_REG_1, &mask, &set, 4);
	fx_ct_store(rb, NFT_CT_MARK, NFT_REG_1);
}

void fm_tcp_syn_only(struct rb *rb)
{
	uint8_t mask = 0x17, syn = 0x02;	/* fin|syn|rst|ack; syn (RFC 9293 3.1) */

	fx_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 13, 1, NFT_REG_1);
	fx_bitwise(rb, NFT_REG_1, &mask, &(uint8_t){ 0 }, 1);
	fx_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &syn, 1);
}

void fm_mark_set(struct rb *rb, uint32_t bit)
{
	fm_masked(rb, fx_meta, NFT_META_MARK, bit, NFT_CMP_NEQ, 0);
}

void fm_ethertype(struct rb *rb, uint16_t ethertype)
{
	uint16_t be = htons(ethertype);

	fx_payload(rb, NFT_PAYLOAD_LL_HEADER, 12, 2, NFT_REG_1);
	fx_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &be, 2);
}

/* ---- keys ------------------------------------------------------------------ */

size_t fkey_ifname(uint8_t *out, const char *ifname)
{
	memset(out, 0, IFNAMSIZ);
	memcpy(out, ifname, strnlen(ifname, IFNAMSIZ - 1));
	return IFNAMSIZ;
}

size_t fkey_tuple(uint8_t *out, const uint8_t *a, size_t alen, uint8_t proto, uint16_t port)
{
	uint16_t be = htons(port);

	memset(out, 0, alen + 8);
	memcpy(out, a, alen);
	out[alen] = proto;
	memcpy(out + alen + 4, &be, 2);
	return alen + 8;
}

size_t fkey_pin(uint8_t *out, const struct addr *src, const struct pin *p)
{
	size_t alen = addr_len(p->addr.family);

	memcpy(out, src->a, alen);
	return alen + fkey_tuple(out + alen, p->addr.a, alen, p->proto, p->port);
}

size_t fkey_ifaddr(uint8_t *out, const char *ifname, const struct addr *a)
{
	size_t alen = addr_len(a->family);

	fkey_ifname(out, ifname);
	memcpy(out + IFNAMSIZ, a->a, alen);
	return IFNAMSIZ + alen;
}

size_t fkey_ifmac(uint8_t *out, const char *ifname, const uint8_t mac[6])
{
	fkey_ifname(out, ifname);
	memset(out + IFNAMSIZ, 0, 8);
	memcpy(out + IFNAMSIZ, mac, 6);
	return FKEY_IFMAC_LEN;
}

size_t fkey_ifarp(uint8_t *out, const char *ifname, const uint8_t mac[6], const struct addr *a4)
{
	fkey_ifmac(out, ifname, mac);
	memset(out + FKEY_IFMAC_LEN, 0, 8);
	memcpy(out + FKEY_IFMAC_LEN, mac, 6);
	memcpy(out + FKEY_IFMAC_LEN + 8, a4->a, 4);
	return FKEY_IFARP_LEN;
}

/* ---- set definitions ----------------------------------------------------- */

void setdef_plain(struct setdef *d, const char *name, uint32_t type, uint32_t len,
		  uint32_t flags)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->key_type = type;
	d->key_len = len;
	d->flags = flags;
	if (type == TYPE_IFNAME)
		d->key_byteorder = BYTEORDER_HOST_ENDIAN;
	else if (type == TYPE_IPADDR || type == TYPE_IP6ADDR)
		d->key_byteorder = BYTEORDER_BIG_ENDIAN;
}

void setdef_pin(struct setdef *d, const struct fw_fam *f)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "pin%c", f->sfx);
	d->key_type = ((f->addr_type << TYPE_BITS | f->addr_type) << TYPE_BITS |
		       TYPE_INET_PROTOCOL) << TYPE_BITS | TYPE_INET_SERVICE;
	d->key_len = 2u * f->alen + 4u + 4u;
	d->flags = NFT_SET_TIMEOUT;
	d->size = FW_PIN_SET_TOTAL;
}

void setdef_cidr(struct setdef *d, const char *policy, const struct fw_fam *f)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "pc-%s-cidr%c", policy, f->sfx);
	d->key_type = (f->addr_type << TYPE_BITS | TYPE_INET_PROTOCOL) << TYPE_BITS |
		      TYPE_INET_SERVICE;
	d->key_len = f->alen + 4u + 4u;
	/* Interval + concatenation: the kernel picks pipapo. */
	d->flags = NFT_SET_INTERVAL | NFT_SET_CONCAT;
	d->concat[0] = f->alen;
	d->concat[1] = 1;
	d->concat[2] = 2;
}

void setdef_mark_map(struct setdef *d, const struct fw_fam *f)
{
	setdef_plain(d, fw_fam_name("sb_mark", f).s, f->addr_type, f->alen, NFT_SET_MAP);
	d->data_type = TYPE_MARK;
	d->data_len = 4;
}

void setdef_quota_map(struct setdef *d)
{
	setdef_plain(d, "sb_quota", TYPE_MARK, 4, NFT_SET_OBJECT);
	d->obj_type = NFT_OBJECT_QUOTA;
	d->key_byteorder = BYTEORDER_HOST_ENDIAN;
}

void setdef_by_mark(struct setdef *d, const char *name)
{
	/* Elements the packet path adds (dynamic); a reconcile keeps them (bt_set()). */
	setdef_plain(d, name, TYPE_MARK, 4, NFT_SET_EVAL);
	d->key_byteorder = BYTEORDER_HOST_ENDIAN;
	d->size = FW_MARK_SET_SIZE;
}
