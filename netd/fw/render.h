/*
 * render - fw's renderer, shared by base.c (the base ruleset), pchain.c (a
 * policy's chain), sandbox.c (one sandbox's elements, objects and hookup)
 * and reconcile.c: the netd ruleset
 * (documented in netd/fw.h) as libnftnl objects appended to a batch
 * (batch.h).  Pure: no socket, no logging, no state but the batch; what was
 * sent before is the caller's to remember (fw.c).
 *
 *   expr.c   expressions and match fragments (rules), keys, set definitions,
 *            the per-family table
 *   emit.c   objects into the batch: tables, chains, sets, elements, rules,
 *            quota objects, and the create-then-delete removals
 */
#ifndef NETD_FW_RENDER_H
#define NETD_FW_RENDER_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter/nf_tables.h>

#include "common/addr.h"
#include "netd/fw.h"
#include "netd/fw/batch.h"
#include "netd/fw/ruleset.h"
#include "netd/model/pinreg.h"

/* nft's datatype ids (nftables include/datatype.h), so `nft list` prints keys. */
#define TYPE_NFPROTO       2
#define TYPE_IPADDR        7
#define TYPE_IP6ADDR       8
#define TYPE_INET_PROTOCOL 12
#define TYPE_INET_SERVICE  13
#define TYPE_ETHERADDR     9
#define TYPE_IFNAME        41
#define TYPE_BITS          6	/* concat type = t1 << 6 | t2 ... (nft concat_type_alloc) */

/* nft's enum byteorder, stored in set userdata so `nft list` can print keys. */
#define BYTEORDER_HOST_ENDIAN 1
#define BYTEORDER_BIG_ENDIAN  2

#define FW_PIN_SET_SIZE    65536	/* live pins per sandbox (fw.c counts them); over -> -ENOSPC */
#define FW_PIN_SET_TOTAL   2097152	/* elements of the shared set pin4 (and pin6) */
#define FW_PINS_TOTAL_MAX  (FW_PIN_SET_TOTAL / 2)	/* pins of all sandboxes; over -> -ENOSPC */
#define FW_ELEMS_PER_MSG   32	/* elements per NEWSETELEM message */

#define PRIO_RAW    (-300)
#define PRIO_DSTNAT (-100)
#define PRIO_FILTER 0
#define PRIO_SRCNAT 100

/* 32-bit registers; a 16-byte value at REG32(0) spans REG32(0..3) (nft's reg 1). */
#define REG32(n) (NFT_REG32_00 + (n))

/*
 * The packet mark bit prerouting_raw sets on what a metered sandbox sends
 * (an egress quota, or an SNI/Host check: fw/pchain.c pchain_slow_path()):
 * its raw_ifs element goes to metered_raw (tap: metered_tap_raw), which
 * sets it, then to the usual checks.  forward's fast path takes no packet
 * with it, so those go on to the sandbox's policy chain - a mark test
 * instead of a lookup of the interface on every forwarded packet.  ORed
 * in like the bit above; something else on the host that cleared it
 * between the raw and filter hooks would let such a sandbox's established
 * packets past its quota (docs/architecture.md, The fast path).
 */
#define FW_METERED_MARK 0x00200000u

/* ---- the per-family table ------------------------------------------------ */

/* What differs between IPv4 and IPv6 wherever a rule or set names an address. */
struct fw_fam {
	int af;			/* AF_INET / AF_INET6 */
	uint8_t nfproto;	/* meta nfproto: NFPROTO_IPV4 / NFPROTO_IPV6 */
	uint8_t alen;		/* address bytes */
	uint8_t saddr_off;	/* in the network header */
	uint8_t daddr_off;
	uint32_t addr_type;	/* nft datatype: ipv4_addr / ipv6_addr */
	char sfx;		/* set name suffix: '4' / '6' */
	uint8_t icmp;		/* IPPROTO_ICMP / IPPROTO_ICMPV6 */
	uint8_t port_unreach[2];	/* type, code: 3/3 (RFC 792), 1/4 (RFC 4443 3.1) */
	uint8_t hdr_len;	/* the network header without options: 20 / 40 */
	uint8_t proto_off;	/* its protocol / next header field: 9 / 6 */
};

/* [0] IPv4, [1] IPv6. */
extern const struct fw_fam fw_fams[2];

#define FW_FAM_V4 (&fw_fams[0])
#define FW_FAM_V6 (&fw_fams[1])

/* fw_fam_of() - the entry of @af; NULL if neither AF_INET nor AF_INET6. */
const struct fw_fam *fw_fam_of(int af);

/* An object name built on the stack, e.g. fw_fam_name("chained_src", f).s */
struct fw_name {
	char s[NFT_SET_MAXNAMELEN];
};

/* fw_fam_name() - @base with @f's suffix: "chained_src" -> "chained_src4". */
struct fw_name fw_fam_name(const char *base, const struct fw_fam *f);

/* ---- what the renderer renders for -------------------------------------- */

/* The fixed parts of a ruleset (from struct fw_config), owned by fw.c. */
struct fw_rcfg {
	char table[NFT_TABLE_MAXNAMELEN];
	uint16_t dns_port;	/* host byte order */
	uint16_t log_group;	/* 0: no deny logging */
	char egress[IFNAMSIZ];	/* "" = any non-sandbox interface */
	struct prefix pool4, pool6;	/* family 0: none (pool6: IPv6 disabled) */
	bool fast_path;		/* the established-flow rule at the head of forward */
	bool flowtable;		/* the flowtable fast path is in use (flowtable.c) */
	bool ft_kernel;		/* the kernel has flowtables (so a leftover one can be removed) */
	bool ft_uplink;		/* @egress exists (when last looked): the flowtable's device */
	bool sni_queue;		/* the kernel takes a queue rule in the table (probed):
				 * forward queues the SNI check's replies (base.c) */
	bool queue_native;	/* ... as nftables' own "queue" (nft_queue), which the
				 * kernel loads on demand; else the xtables NFQUEUE
				 * target (nft_compat), which it does not load for an
				 * inet table: it must be built in or loaded already */
	uint32_t conn_limit;	/* default per-sandbox "ct count" limit; 0 = none */
	uint16_t gw_port;	/* the API gateway's port (host byte order); 0 = no gateway:
				 * no gw4/6 and no steering rules (gwsteer.c) */
};

static inline bool fw_rcfg_v6(const struct fw_rcfg *rc)
{
	return rc->pool6.addr.family == AF_INET6;
}

/* One batch being rendered into. */
struct bt {
	struct fw_batch *b;
	const struct fw_rcfg *rc;
	/*
	 * Reconcile mode (restart, reload): objects that may already exist are
	 * created without NLM_F_EXCL and then emptied, so every NEWCHAIN is
	 * followed by a flush of its rules and every NEWSET of a set without
	 * timeouts by a flush of its elements.  Sets with timeouts (the pins)
	 * keep their elements.  All of it in one batch: no window.
	 */
	bool keep;
	/*
	 * The family of the objects being emitted: NFPROTO_INET (0 reads as
	 * inet) for "table inet NAME", NFPROTO_BRIDGE while the bridge table
	 * of chained attachments is written.
	 */
	uint8_t family;
};

static inline void bt_fail(struct bt *bt, int err)
{
	fw_batch_fail(bt->b, err);
}

/* ---- expr.c: rules ------------------------------------------------------- */

/* A rule under construction; the first failure sticks. */
struct rb {
	struct nftnl_rule *r;
	int err;
	bool queue_native;	/* from fw_rcfg: how fx_queue() queues */
};

/*
 * rb_init() - start a rule of @chain in table @rc->table; append it with
 * bt_rule(), which frees it.  An allocation failure sticks in @rb->err and
 * fails the batch at bt_rule(), so the fx_ and fm_ calls just carry on.
 */
void rb_init(struct rb *rb, const struct fw_rcfg *rc, const char *chain);
/* fx_new() - append expression @name ("meta", "cmp", ...); NULL after a failure. */
struct nftnl_expr *fx_new(struct rb *rb, const char *name);
/* meta load @key => reg @dreg */
void fx_meta(struct rb *rb, uint32_t key, uint32_t dreg);
/* payload load @len bytes at @base + @off (bytes) => reg @dreg */
void fx_payload(struct rb *rb, uint32_t base, uint32_t off, uint32_t len, uint32_t dreg);
/* cmp @op reg @sreg, @data (@len bytes, network byte order where it matters) */
void fx_cmp(struct rb *rb, uint32_t sreg, uint32_t op, const void *data, size_t len);
/* reg @reg = (reg @reg & @mask) ^ @xor over @len bytes */
void fx_bitwise(struct rb *rb, uint32_t reg, const void *mask, const void *xor, size_t len);
/* @dreg < 0: a plain membership test; NFT_REG_VERDICT: a verdict map. */
void fx_lookup(struct rb *rb, const char *set, uint32_t sreg, int dreg, bool inv);
/* immediate verdict @verdict (NF_ACCEPT, NF_DROP, ...) */
void fx_verdict(struct rb *rb, int verdict);
/* goto @chain */
void fx_goto(struct rb *rb, const char *chain);
/* jump @chain (its end returns here) */
void fx_jump(struct rb *rb, const char *chain);
/* limit rate @per_s/second burst @burst packets: matches while under it */
void fx_limit(struct rb *rb, uint64_t per_s, uint32_t burst);
/* reject with tcp reset (@tcp_rst; match TCP first), else with icmpx admin-prohibited */
void fx_reject(struct rb *rb, bool tcp_rst);
/* counter (packets and bytes, listed by nft) */
void fx_counter(struct rb *rb);
/* notrack: the packet gets no conntrack entry (raw priority chains only). */
void fx_notrack(struct rb *rb);
/* log prefix "netd:@reason" group N snaplen 128; nothing when logging is off. */
void fx_deny_log(struct rb *rb, const struct fw_rcfg *rc, const char *reason);
/* ct mark set @mark: ties the connection's conntrack entry to its sandbox (acct.h). */
void fx_ct_mark_set(struct rb *rb, uint32_t mark);
/* ct mark set saddr map @map: the sandbox's mark by its (anti-spoofing checked) source. */
void fx_ct_mark_from_src(struct rb *rb, const struct fw_fam *f, const char *map);
/* reg 1 = ct mark & ~FW_SNI_CTMARK_BITS: the sandbox's mark, the key of its per-sandbox state. */
void fx_ct_mark_key(struct rb *rb);
/* objref: the object that map @map gives for the key in reg @sreg (no element: no match). */
void fx_objref_map(struct rb *rb, uint32_t sreg, const char *map);
/*
 * add @set { reg @sreg EXPR }: the element of that key (made on first use)
 * evaluates its own copy of @per_elem (connlimit, limit; taken, freed on
 * failure), and the rule goes on only if that matches.
 */
void fx_dynset_add(struct rb *rb, uint32_t sreg, const char *set, struct nftnl_expr *per_elem);
/* redirect to :@port (host byte order) */
void fx_redirect(struct rb *rb, uint16_t port);
/* meta mark |= @bits (FW_CHAINED_MARK, FW_METERED_MARK) */
void fx_mark_or(struct rb *rb, uint32_t bits);

/* Match fragments: each leaves its result in the registers it names. */
/* meta nfproto == @nfproto (inet tables: IPv4 or IPv6) */
void fm_nfproto(struct rb *rb, uint8_t nfproto);
/* meta l4proto == @proto */
void fm_l4proto(struct rb *rb, uint8_t proto);
void fm_dport(struct rb *rb, uint16_t port);	/* th dport == @port */
void fm_sport(struct rb *rb, uint16_t port);	/* th sport == @port */
/* iifname/oifname [!=] @set */
void fm_ifset(struct rb *rb, uint32_t meta_key, const char *set, bool inv);
/* iifname/oifname == @name, exactly */
void fm_ifname_eq(struct rb *rb, uint32_t meta_key, const char *name);
/* oifname == the egress interface, or (none configured) oifname != @sandbox_ifs */
void fm_egress(struct rb *rb, const struct fw_rcfg *rc);
void fm_ct_est(struct rb *rb);	/* ct state established,related */
void fm_ct_new(struct rb *rb);	/* ct state new */
void fm_ct_untracked(struct rb *rb);	/* ct state invalid,untracked: no conntrack entry */
/* saddr/daddr at network header offset @off in @p */
void fm_prefix(struct rb *rb, uint32_t off, const struct prefix *p);
/* daddr . meta l4proto . th dport @set */
void fm_tuple_lookup(struct rb *rb, const struct fw_fam *f, const char *set);
/* saddr . daddr . meta l4proto . th dport @set (the shared pin sets) */
void fm_pin_lookup(struct rb *rb, const struct fw_fam *f, const char *set);
/* iifname . saddr != @set */
void fm_ifaddr_not_in(struct rb *rb, const struct fw_fam *f, const char *set);
/* iifname/oifname (@meta_key) . daddr/saddr @set; nfproto checked first */
void fm_ifaddr_in(struct rb *rb, uint32_t meta_key, const struct fw_fam *f, bool daddr,
		  const char *set);
/* saddr/daddr [vmap] @set; nfproto checked first */
void fm_addr_in(struct rb *rb, const struct fw_fam *f, bool daddr, const char *set, bool vmap);
/* a sandbox's UDP query to (or @reply: answer from) port 53 of @dns_local4/6 */
void fm_dns_local(struct rb *rb, const struct fw_fam *f, bool reply);
/* meta mark & @bits == 0 (none of them set) */
void fm_marks_clear(struct rb *rb, uint32_t bits);
/* queue num @num [bypass] (the SNI check, fw.h) */
void fx_queue(struct rb *rb, uint16_t num, bool bypass);
/* ct state established (not related) */
void fm_ct_est_only(struct rb *rb);
/* ct mark & @bit == 0 */
void fm_ct_mark_clear(struct rb *rb, uint32_t bit);
/* ct mark & @bits != 0 */
void fm_ct_mark_any(struct rb *rb, uint32_t bits);
/* ct mark & @mask == @value */
void fm_ct_mark_masked(struct rb *rb, uint32_t mask, uint32_t value);
/* ct mark set ct mark & ~(@clear | @set) | @set: bits of the mark alone */
void fx_ct_mark_bits(struct rb *rb, uint32_t clear, uint32_t set);
/* tcp flags & (fin|syn|rst|ack) == syn: a connection's first SYN (after fm_l4proto TCP) */
void fm_tcp_syn_only(struct rb *rb);
/* meta mark & @bit != 0 */
void fm_mark_set(struct rb *rb, uint32_t bit);
/* bridge family: ether type == @ethertype (host byte order) */
void fm_ethertype(struct rb *rb, uint16_t ethertype);

/* ---- expr.c: keys and set definitions ------------------------------------ */

/* Zero-padded interface name: IFNAMSIZ bytes. */
size_t fkey_ifname(uint8_t *out, const char *ifname);
/* addr . inet_proto . inet_service, each field padded to 4 bytes: @alen + 8 bytes. */
size_t fkey_tuple(uint8_t *out, const uint8_t *a, size_t alen, uint8_t proto, uint16_t port);
/* saddr . daddr . inet_proto . inet_service: the pin4/6 key of @p sent from @src: 2 alen + 8 bytes. */
size_t fkey_pin(uint8_t *out, const struct addr *src, const struct pin *p);
#define FKEY_PIN_MAX (16 + 16 + 8)
/* ifname . addr */
size_t fkey_ifaddr(uint8_t *out, const char *ifname, const struct addr *a);
/* ifname . ether_addr (the MAC padded to 8 bytes, as in a register pair): 24 bytes */
size_t fkey_ifmac(uint8_t *out, const char *ifname, const uint8_t mac[6]);
#define FKEY_IFMAC_LEN (IFNAMSIZ + 8)
/* ifname . ether_addr . ether_addr . ipv4_addr (frame source, ARP sender MAC and address): 36 bytes */
size_t fkey_ifarp(uint8_t *out, const char *ifname, const uint8_t mac[6], const struct addr *a4);
#define FKEY_IFARP_LEN (IFNAMSIZ + 8 + 8 + 4)

struct setdef {
	char name[NFT_SET_MAXNAMELEN];
	uint32_t flags;
	uint32_t key_type, key_len;
	bool verdict_map;
	uint8_t concat[4];	/* field lengths (unpadded), 0-terminated; only for interval+concat */
	uint32_t size;		/* 0 = unlimited */
	uint32_t key_byteorder;	/* nft's BYTEORDER_*: 0 = leave unset (concatenations) */
	uint32_t data_type, data_len;	/* a value map (NFT_SET_MAP): nft datatype, bytes */
	uint32_t obj_type;	/* an object map (NFT_SET_OBJECT): NFT_OBJECT_* */
};

/* setdef_plain() - set @name of nft datatype @type, keys of @len bytes, NFT_SET_* @flags. */
void setdef_plain(struct setdef *d, const char *name, uint32_t type, uint32_t len,
		  uint32_t flags);
/* pin4/6, shared by every sandbox (timeout): saddr . daddr . proto . port */
void setdef_pin(struct setdef *d, const struct fw_fam *f);
/* pc-POLICY-cidr4/6, shared by the sandboxes of @policy (interval): daddr . proto . port */
void setdef_cidr(struct setdef *d, const char *policy, const struct fw_fam *f);
/* sb_mark4/6: a sandbox's source address -> its ct mark (acct.h ACCT_MARK) */
void setdef_mark_map(struct setdef *d, const struct fw_fam *f);
/* sb_quota: a sandbox's mark -> its quota object q-NAME */
void setdef_quota_map(struct setdef *d);
/* Per-sandbox state made by the packet path, keyed by mark (@name: sb_reject, cn-...). */
void setdef_by_mark(struct setdef *d, const char *name);
#define FW_MARK_SET_SIZE 32768	/* one element per slot at most (acct.h ACCT_MARK_SLOT_BITS) */
/* Elements of a set with one per sandbox (its interface; its address of a family). */
#define FW_SANDBOX_SET_SIZE FW_MARK_SET_SIZE
#define TYPE_MARK 19

/* ---- emit.c: objects into the batch -------------------------------------- */

/*
 * The emitters: each appends one message to @bt's batch; failures stick in
 * the batch.  Objects are in table @bt->rc->table of family @bt->family.
 */
/* NEWTABLE / DELTABLE with @flags (NLM_F_CREATE). */
void bt_table(struct bt *bt, uint16_t type, uint16_t flags);
/*
 * NEWCHAIN (created or kept; in reconcile mode also flushed) / DELCHAIN of
 * chain @name; @hook >= 0: a base chain at @prio of type @ctype ("filter",
 * "nat"), policy accept.  @hook < 0: a regular chain.
 */
void bt_chain(struct bt *bt, uint16_t type, const char *name, int hook, int prio,
	      const char *ctype);
/* DELRULE without a handle: every rule of chain @name. */
void bt_flush_chain(struct bt *bt, const char *name);
/* NEWSET (created or kept; in reconcile mode a set without timeouts also flushed) / DELSET. */
void bt_set(struct bt *bt, uint16_t type, const struct setdef *d);
/* DELSETELEM without elements: every element of set @name. */
void bt_flush_set(struct bt *bt, const char *name);
/* Append the rule of @rb (freed; @rb->r is NULL afterwards). */
void bt_rule(struct bt *bt, struct rb *rb);
/* Named quota object "q-NAME": NEWOBJ (@bytes, flags over) or DELOBJ. */
void bt_quota(struct bt *bt, uint16_t type, const char *sb_name, uint64_t bytes);
/* Remove the quota object if there is one: create-then-delete never fails. */
void bt_quota_remove(struct bt *bt, const char *sb_name);

/* Elements of one set, sent FW_ELEMS_PER_MSG per message. */
struct elemq {
	struct bt *bt;
	uint16_t type;		/* NFT_MSG_NEWSETELEM / NFT_MSG_DELSETELEM */
	const char *set;
	struct nftnl_set *s;
	unsigned int n;
};

/* elq_init() - queue elements of @set for messages of @type; @set borrowed until elq_flush(). */
void elq_init(struct elemq *q, struct bt *bt, uint16_t type, const char *set);
/* Takes ownership of @e (may be NULL: allocation failed). */
void elq_add(struct elemq *q, struct nftnl_set_elem *e);
/* elq_flush() - send what is queued (a message is sent every FW_ELEMS_PER_MSG anyway). */
void elq_flush(struct elemq *q);
/* elem_new() - an element with key @key (@len bytes); the caller gives it to elq_add(). */
struct nftnl_set_elem *elem_new(const void *key, size_t len);
/* ... with a verdict: jump @chain */
struct nftnl_set_elem *elem_new_jump(const void *key, size_t len, const char *chain);
/* ... with a verdict: goto @chain */
struct nftnl_set_elem *elem_new_goto(const void *key, size_t len, const char *chain);
/* ... with @data (@dlen bytes) / with the object @obj */
struct nftnl_set_elem *elem_new_data(const void *key, size_t len, const void *data, size_t dlen);
struct nftnl_set_elem *elem_new_obj(const void *key, size_t len, const char *obj);
/* elem_remove() of an element of a value or object map: created with its data, then deleted. */
void elem_remove_data(struct bt *bt, const char *set, struct nftnl_set_elem *created,
		      const void *key, size_t len);
/* Add the one element @e to @set in a message of its own. */
void elem_add1(struct bt *bt, const char *set, struct nftnl_set_elem *e);
/* NEWSETELEM then DELSETELEM of one element: gone afterwards, never an error. */
void elem_remove(struct bt *bt, const char *set, const void *key, size_t len, const char *jump);
/* Remove @ifname . @a from set @base + "4"/"6" by @a's family (family 0: nothing). */
void ifaddr_remove(struct bt *bt, const char *base, const char *ifname, const struct addr *a);

/* ---- gwsteer.c: the API gateway's sets and rules -------------------------- */

/* gw4/6, shared by every sandbox (timeout): saddr . daddr . dport (TCP: gateway pins) */
void setdef_gw(struct setdef *d, const struct fw_fam *f);
/* saddr . daddr . inet_service: the gw4/6 key of gateway pin @p sent from @src: 2 alen + 4 bytes. */
size_t fkey_gw(uint8_t *out, const struct addr *src, const struct pin *p);
/* The set of @gateway pins of @f: gw4/6 if @gateway, else pin4/6. */
void setdef_pin_of(struct setdef *d, const struct fw_fam *f, bool gateway);
/* @p's key in its set (fkey_gw() for a gateway pin, else fkey_pin()); FKEY_PIN_MAX bytes fit. */
size_t fkey_pin_of(uint8_t *out, const struct addr *src, const struct pin *p);
/*
 * The renderers below render nothing when @bt->rc->gw_port is 0.
 * render_gw_sets() - with the base sets: gw4/6, created or kept with their elements.
 */
void render_gw_sets(struct bt *bt);
/* setdef_gwq_cut() - sb_gwq_cut: the marks of quota'd sandboxes whose policy cuts (gwsteer.c). */
void setdef_gwq_cut(struct setdef *d);
/*
 * render_gw_quota_mode() - sandbox mark @mark in sb_gwq_cut if @cut (its
 * policy has a quota and cuts), else not (removed if there); nothing
 * without a gateway.
 */
void render_gw_quota_mode(struct bt *bt, uint32_t mark, bool cut);
/* setdef_gwlim() - sb_gwlim: a sandbox's mark -> jump to its policy chain's twin (gwsteer.c). */
void setdef_gwlim(struct setdef *d);
/*
 * render_gw_jump() - @add: sandbox mark @mark's element in sb_gwlim, a jump
 * to the twin of policy chain @chain (pchain_gw_name()); else that element
 * removed (created-then-deleted: there or not; the twin must exist).
 * Nothing without a gateway, a mark or a chain.
 */
void render_gw_jump(struct bt *bt, uint32_t mark, const char *chain, bool add);
/* render_gw_nat() - prerouting_nat, after the DNS redirects: steered connections of @n_fams families. */
void render_gw_nat(struct bt *bt, size_t n_fams);
/* render_gw_input() - input's head: a steered connection from a sandbox interface to the port, accepted. */
void render_gw_input(struct bt *bt, size_t n_fams);
/* render_gw_chained_in() - chained_in: the same for chained attachments. */
void render_gw_chained_in(struct bt *bt);
/* render_gw_input_drop() - input: the port from anything but a sandbox or lo, dropped. */
void render_gw_input_drop(struct bt *bt);

/* ---- base.c, sandbox.c --------------------------------------------------- */

/*
 * render_base() - the base ruleset, both tables: created (an old table of
 * the name replaced), or in reconcile mode (bt->keep) created-or-kept and
 * refilled.  @internal, @n_internal: the ranges no pin may open.
 */
void render_base(struct bt *bt, const struct prefix *internal, size_t n_internal);

/* ---- flowtable.c: the flowtable fast path ---------------------------------- */

/*
 * One flowtable, "ft", whose one device is the egress interface: the
 * replies of sandboxes' connections arrive there, and the kernel forwards
 * those of offloaded connections straight to the sandbox's interface.  What
 * a sandbox sends never takes it (its interface is no device), so it meets
 * every rule: anti-spoofing, the tap's MAC, its quota, the SNI check.
 */
#define FW_FT_NAME "ft"
#define FW_FT_PRIO 0	/* hook ingress priority filter */

/*
 * render_ft_base() - with the base ruleset: flowtable ft, created or kept,
 * with the egress interface if it exists (@bt->rc->ft_uplink); with the
 * flowtable off, in reconcile mode, one an earlier run made removed (when
 * the kernel has flowtables).  After the base chains (their rules, which
 * refer to it, are flushed first in reconcile mode).
 */
void render_ft_base(struct bt *bt);
/* render_ft_rules() - forward's `ct state established ct direction reply oifname @sandbox_ifs flow add @ft`. */
void render_ft_rules(struct bt *bt);
/* render_ft_uplink() - the egress interface added to ft's devices (NEWFLOWTABLE: kept if there). */
void render_ft_uplink(struct bt *bt);

/* bt_flowtable() - NEWFLOWTABLE (created, or devices added) / DELFLOWTABLE of flowtable
 * @name (hook ingress, flags counter) with @n devices @devs (@n <= 1). */
void bt_flowtable(struct bt *bt, uint16_t type, const char *name, const char *const *devs,
		  size_t n);
/* flow add @ft: offload the packet's connection into flowtable @ft. */
void fx_flow_add(struct rb *rb, const char *ft);
/* ct direction reply: the packet goes the way the connection's replies do. */
void fm_ct_reply(struct rb *rb);

/* ---- pchain.c: a policy's chain ----------------------------------------- */

/* The names of a policy's chain (pe-/pa-POLICY) and its conn-limit set (ce-/ca-POLICY-N). */
struct pchain_names {
	char chain[NFT_CHAIN_MAXNAMELEN];
	char connset[NFT_SET_MAXNAMELEN];	/* "": no limit */
	uint32_t conn_limit;			/* N; 0: none */
};

/* pchain_names() - for @pol in mode @audit (fw_mode_audit()); N from the policy, else @rc's. */
void pchain_names(const struct fw_rcfg *rc, const struct policy *pol, bool audit,
		  struct pchain_names *out);

/*
 * render_pchain() - the chain of @pol in mode @audit, and its conn-limit
 * set: created, or emptied and refilled in place, with its rules.
 */
void render_pchain(struct bt *bt, const struct policy *pol, bool audit);

/* pchain_digest() - the fingerprint of the rules render_pchain() would send (0: failed). */
uint64_t pchain_digest(struct bt *bt, const struct policy *pol, bool audit);

/*
 * pchain_gw_name() - the twin of policy chain @chain ("pe-X" -> "ge-X",
 * "pa-X" -> "ga-X"): what a steered connection of its sandboxes meets in
 * prerouting_nat (gwsteer.c), the policy's conn-limit rule.  @out: NFT_CHAIN_MAXNAMELEN bytes.
 */
void pchain_gw_name(const char *chain, char *out);

/*
 * render_pchain_remove() - chain @chain (and with a gateway its twin), then
 * set @connset ("" or NULL: none): gone, never an error.
 */
void render_pchain_remove(struct bt *bt, const char *chain, const char *connset);

/*
 * pchain_slow_path() - must every packet a sandbox under @pol sends,
 * established ones too, reach its policy chain (the veth goes into metered_ifs,
 * off base.c's forward fast path)?  Its egress quota counts every packet;
 * the SNI check queues the first payload packets of established connections.
 */
bool pchain_slow_path(const struct policy *pol);
/*
 * fw_raw_chain() - the chain a sandbox's raw_ifs element goes to: its
 * anti-spoofing checks (a @tap's MAC check first), behind the mark of a
 * @metered one (FW_METERED_MARK).  A static string.
 */
const char *fw_raw_chain(bool tap, bool metered);

/*
 * pchain_sni_ports() - the ports whose connections the SNI check (fw.h)
 * queues in @mode: every tcp port of a rule with tls.sni or http.host at
 * @mode; a port that enforce and log share is an enforce port.  @audit (an
 * audit-mode sandbox): nothing is enforced, every checked port goes to the
 * log queue (which fails open), and netd reports a mismatch that enforce
 * would have reset as would_deny "sni-mismatch" (daemon/sniglue.c).
 * @out: 64 slots.  Return: how many.
 */
size_t pchain_sni_ports(const struct policy *pol, bool audit, enum policy_l7 mode, uint16_t *out);

/*
 * pchain_quic_ports() - the same for QUIC: the udp ports of domain rules
 * with tls.sni at @mode (policy_l7_port_proto()), whose flows' first
 * datagrams go to netd (fw.h).  @out: 64 slots.  Return: how many.
 */
size_t pchain_quic_ports(const struct policy *pol, bool audit, enum policy_l7 mode, uint16_t *out);

/* ---- sandbox.c ----------------------------------------------------------- */

/* One sandbox to render (or, pol NULL, to remove). */
struct sb_arg {
	const struct fw_sandbox *sb;
	const struct fw_sandbox *old;	/* what an earlier add made (may differ), or NULL */
	struct addr old_dns4, old_dns6;	/* its dns_local elements */
	const struct policy *pol;	/* NULL: delete only */
	struct ruleset_box *box[2];	/* its policy's CIDR rules per family (ruleset_cidr_boxes()) */
	int n_box[2];
	/*
	 * Fill the policy's sets pc-POLICY-cidr4/6 (shared by its sandboxes)
	 * from box[]: once per batch per policy is enough, and the first
	 * sandbox of each policy in the batch must do it.
	 */
	bool fill_cidr;
	/* Not NULL: the sandbox was the last of this policy: its sets pc-POLICY-cidr4/6 go. */
	const char *drop_policy;
	/*
	 * The policy chain (pchain.c): render it in this batch (the first
	 * sandbox of the batch that uses it, when it is new or its rules
	 * changed), emptying it first if it @chain_exists; not sent again if
	 * its fingerprint is @chain_old_digest.
	 */
	bool render_chain, chain_exists;
	uint64_t chain_old_digest;	/* of its rules as fw last rendered them (0: unknown) */
	uint64_t *chain_digest_out;	/* may be NULL: the fingerprint of its rules now */
	/* What an earlier render of this name jumped to and marked with (NULL, 0: nothing known). */
	const char *old_chain;
	uint32_t old_mark;
	/* Its raw_ifs element went to the metered chain (fw_raw_chain(); false: nothing known). */
	bool old_metered;
	/* Not NULL: the sandbox was the last to use this policy chain (and conn set): both go. */
	const char *drop_chain, *drop_connset;
	/* Not NULL (render_chain only): the chain's conn-limit set before this render; it goes. */
	const char *old_connset;
	/*
	 * The pins fw gave @old_pins_of (the registry @old_pins, borrowed;
	 * NULL: none), sent from @old_src (by family: [0] IPv4, [1] IPv6):
	 * removed from pin4/6 when the sandbox is deleted or added afresh, and
	 * in reconcile mode when replace_pins is set.
	 */
	const struct pinreg *old_pins;
	const char *old_pins_of;
	struct addr old_src[2];
	/*
	 * The fingerprint of the chain and hookup fw rendered for this name
	 * last (0: unknown); in reconcile mode an equal one means they are
	 * in the kernel as they would be rendered now, and are not sent
	 * again.  @digest_out (may be NULL): the fingerprint of this render.
	 */
	uint64_t old_digest;
	uint64_t *digest_out;
	/* Reconcile mode only: replace the sandbox's pins by these. */
	bool replace_pins;
	const struct pin *pins;
	size_t n_pins;
};

/*
 * sb_arg_init() - fill @a for @sb/@pol, its CIDR boxes computed.
 * Free with sb_arg_done() (also after a failure).  Return: 0; -EINVAL; -E2BIG; -ENOMEM.
 */
int sb_arg_init(struct sb_arg *a, const struct fw_sandbox *sb, const struct policy *pol);
/* sb_args_mark_cidr() - set fill_cidr on the first of @a[0..@n) of each policy (by name), clear it on the rest. */
void sb_args_mark_cidr(struct sb_arg *a, size_t n);
/* sb_arg_done() - free the boxes of @a; NULL-safe on a zeroed or half-filled @a. */
void sb_arg_done(struct sb_arg *a);

/*
 * render_sandbox() - everything of one sandbox: its pins (kept unless
 * replaced), its policy's sets and chain (as @a says), its own objects and
 * elements and the jump, after removing what an earlier add of the name
 * hooked up.  Reconcile mode re-renders in place.
 */
void render_sandbox(struct bt *bt, const struct sb_arg *a);

/*
 * render_quota_remove() - sandbox @name's quota object q-NAME and its
 * sb_quota elements under @marks[0..1] (0: none): gone, never an error.
 */
void render_quota_remove(struct bt *bt, const char *name, const uint32_t marks[2]);

/* render_marks_remove() - @sb's sb_mark4/6 elements (its addresses -> @mark; 0: none): gone, never an error. */
void render_marks_remove(struct bt *bt, const struct fw_sandbox *sb, uint32_t mark);

/*
 * render_pins() - add @pins[0..@n) to pin4/6 (gateway pins to gw4/6), each keyed by the source of
 * its family in @src ([0] IPv4, [1] IPv6; a family the sandbox has no
 * address of: its pins are left out).  An existing element gets the new
 * timeout.
 */
void render_pins(struct bt *bt, const struct addr src[2], const struct pin *pins, size_t n);

/*
 * render_pins_remove() - remove the elements the registry @reg says were
 * given to sandbox @name (NULL @reg: none), sent from @src: gone
 * afterwards, never an error.
 */
void render_pins_remove(struct bt *bt, const struct addr src[2], const struct pinreg *reg,
			const char *name);

/*
 * render_pin_keys_remove() - the same for @n raw keys of family @f, @stride
 * bytes apart, of pin4/6 (or, @gateway, of gw4/6).
 */
void render_pin_keys_remove(struct bt *bt, const struct fw_fam *f, bool gateway,
			    const uint8_t *keys, size_t stride, size_t n);

/* render_dns() - @ifname's dns_local4/6 elements: @old out, @cur in (family 0: none). */
void render_dns(struct bt *bt, const char *ifname, const struct addr old[2],
		const struct addr cur[2]);

#endif
