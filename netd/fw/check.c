/*
 * check - `netd verify`'s kernel side: read back from nf_tables what fw
 * rendered for one sandbox (its jump in sandbox_fwd and, with a gateway,
 * its jump by mark in sb_gwlim, its mark in
 * sb_mark4/6, its sandbox_ifs and sandbox_src4/6 elements, a tap's
 * tap_ifs/tap_mac) and the base rules every sandbox relies on (the DNS
 * redirect in prerouting_nat, the anti-spoofing drops in sandbox_raw, a
 * tap's MAC drop among them).
 * Gets and dumps only, through kernel.h's talk(): nothing is changed.
 * What is expected comes from fw's own record of what it rendered
 * (struct fw_sb_rec), so a mismatch means the kernel no longer has it.
 */
#include "netd/fw/core.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

/* What one element get found: is it there, and its data (a verdict's chain, a mark). */
struct elem_res {
	bool found;
	char chain[NFT_CHAIN_MAXNAMELEN];
	uint8_t data[16];
	uint32_t dlen;
};

static void elem_note(void *arg, const struct nftnl_set_elem *ce)
{
	struct elem_res *res = arg;
	struct nftnl_set_elem *e = (struct nftnl_set_elem *)ce;	/* libnftnl's getters take non-const */
	uint32_t len = 0;
	const void *d;

	if (res->found)
		return;
	res->found = true;
	if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_CHAIN))
		snprintf(res->chain, sizeof(res->chain), "%s",
			 nftnl_set_elem_get_str(e, NFTNL_SET_ELEM_CHAIN));
	d = nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_DATA) ?
		    nftnl_set_elem_get(e, NFTNL_SET_ELEM_DATA, &len) : NULL;
	if (d && len <= sizeof(res->data)) {
		memcpy(res->data, d, len);
		res->dlen = len;
	}
}

static int elem_cb(const struct nlmsghdr *nlh, void *data)
{
	return fw_set_elems_walk(nlh, elem_note, data);
}

/* Is the element @key in set @set?  Return: 1 (@res filled); 0; -errno. */
static int elem_get(struct fw *fw, const char *set, const void *key, size_t len,
		    struct elem_res *res)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nftnl_set *s = nftnl_set_alloc();
	struct nftnl_set_elem *e = elem_new(key, len);
	struct nlmsghdr *nlh;
	int r;

	memset(res, 0, sizeof(*res));
	if (!s || !e) {
		nftnl_set_free(s);
		nftnl_set_elem_free(e);
		return -ENOMEM;
	}
	nftnl_set_set_str(s, NFTNL_SET_TABLE, fw->rc.table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, set);
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_elem_add(s, e);
	nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETSETELEM, NFPROTO_INET, 0, 0);
	nftnl_set_elems_nlmsg_build_payload(nlh, s);
	r = fw->k->ops->talk(fw->k, nlh, elem_cb, res);
	nftnl_set_free(s);
	if (r == -ENOENT)
		return 0;
	return r < 0 ? r : res->found;
}

/* One verdict: "ok", or what is missing or wrong (the caller's buffer). */
static void say(char *out, size_t sz, int r, const char *missing)
{
	if (r < 0)
		snprintf(out, sz, "cannot read nf_tables: %s", strerror(-r));
	else if (r == 0)
		snprintf(out, sz, "%s", missing);
	else
		out[0] = '\0';
}

/* A chained attachment's jump: from chained_fwd4/6 by its first address. */
static void check_jump_chained(struct fw *fw, const struct fw_sb_rec *rec, struct fw_sb_check *out)
{
	const struct addr *ad[2] = { &rec->addr4, &rec->addr6 };
	struct elem_res res;
	int r;

	for (int i = 0; i < 2; i++) {
		if (ad[i]->family != fw_fams[i].af)
			continue;
		r = elem_get(fw, fw_fam_name("chained_fwd", &fw_fams[i]).s, ad[i]->a,
			     fw_fams[i].alen, &res);
		if (r > 0 && strcmp(res.chain, rec->chain) != 0)
			snprintf(out->jump, sizeof(out->jump),
				 "chained_fwd jumps to \"%.40s\", not \"%.40s\"", res.chain, rec->chain);
		else
			say(out->jump, sizeof(out->jump), r, "no chained_fwd element");
		return;
	}
}

/* A veth's or tap's jump by interface (sandbox_fwd), then sandbox_ifs and raw_ifs. */
static void check_jump_if(struct fw *fw, const struct fw_sb_rec *rec, struct fw_sb_check *out)
{
	uint8_t key[IFNAMSIZ];
	const char *raw = fw_raw_chain(rec->tap, rec->metered);
	struct elem_res res;
	int r;

	r = elem_get(fw, "sandbox_fwd", key, fkey_ifname(key, rec->ifname), &res);
	if (r > 0 && strcmp(res.chain, rec->chain) != 0)
		snprintf(out->jump, sizeof(out->jump), "sandbox_fwd jumps to \"%.40s\", not \"%.40s\"",
			 res.chain, rec->chain);
	else
		say(out->jump, sizeof(out->jump), r, "no element in sandbox_fwd (no jump)");
	if (!out->jump[0]) {
		r = elem_get(fw, "sandbox_ifs", key, fkey_ifname(key, rec->ifname), &res);
		say(out->ifs, sizeof(out->ifs), r, "not in sandbox_ifs");
	}
	if (out->ifs[0])
		return;
	r = elem_get(fw, "raw_ifs", key, fkey_ifname(key, rec->ifname), &res);
	if (r > 0 && strcmp(res.chain, raw) != 0)
		snprintf(out->ifs, sizeof(out->ifs), "raw_ifs sends it to \"%.40s\", not %s",
			 res.chain, raw);
	else
		say(out->ifs, sizeof(out->ifs), r, "not in raw_ifs (no anti-spoofing)");
}

/* With a gateway, its steered connections' jump by mark (sb_gwlim) to the chain's twin. */
static void check_jump_gw(struct fw *fw, const struct fw_sb_rec *rec, struct fw_sb_check *out)
{
	char twin[NFT_CHAIN_MAXNAMELEN];
	struct elem_res res;
	int r;

	pchain_gw_name(rec->chain, twin);
	r = elem_get(fw, "sb_gwlim", &rec->ct_mark, sizeof(rec->ct_mark), &res);
	if (r > 0 && strcmp(res.chain, twin) != 0)
		snprintf(out->jump, sizeof(out->jump), "sb_gwlim jumps to \"%.40s\", not \"%.40s\"",
			 res.chain, twin);
	else
		say(out->jump, sizeof(out->jump), r, "no element in sb_gwlim (its mark)");
}

/* Its mark by source address (sb_mark4/6) and, veth or tap, its interface . source pairs. */
static void check_by_addr(struct fw *fw, const struct fw_sb_rec *rec, struct fw_sb_check *out)
{
	const struct addr *ad[2] = { &rec->addr4, &rec->addr6 };
	uint8_t key[IFNAMSIZ + 16 + 8];
	struct elem_res res;
	int r;

	for (int i = 0; i < 2; i++) {
		const struct fw_fam *f = &fw_fams[i];

		if (ad[i]->family != f->af || (i == 1 && !fw_rcfg_v6(&fw->rc)))
			continue;
		if (rec->ct_mark && !out->mark[0]) {
			r = elem_get(fw, fw_fam_name("sb_mark", f).s, ad[i]->a, f->alen, &res);
			if (r > 0 && (res.dlen != 4 || memcmp(res.data, &rec->ct_mark, 4) != 0))
				snprintf(out->mark, sizeof(out->mark), "sb_mark%c gives another mark",
					 f->sfx);
			else
				say(out->mark, sizeof(out->mark), r,
				    i == 0 ? "no element in sb_mark4" : "no element in sb_mark6");
		}
		if (!rec->chained && !out->src[0]) {
			r = elem_get(fw, fw_fam_name("sandbox_src", f).s, key,
				     fkey_ifaddr(key, rec->ifname, ad[i]), &res);
			say(out->src, sizeof(out->src), r,
			    i == 0 ? "no element in sandbox_src4" : "no element in sandbox_src6");
		}
	}
}

/* A tap's guest MAC (tap_mac) and its place in tap_ifs. */
static void check_tap(struct fw *fw, const struct fw_sb_rec *rec, struct fw_sb_check *out)
{
	uint8_t key[FKEY_IFMAC_LEN];
	struct elem_res res;
	int r;

	r = elem_get(fw, "tap_mac", key, fkey_ifmac(key, rec->ifname, rec->mac), &res);
	say(out->tap, sizeof(out->tap), r, "no element in tap_mac (the guest's MAC)");
	if (out->tap[0])
		return;
	r = elem_get(fw, "tap_ifs", key, fkey_ifname(key, rec->ifname), &res);
	say(out->tap, sizeof(out->tap), r, "not in tap_ifs");
}

int fw_sandbox_check(struct fw *fw, const char *name, struct fw_sb_check *out)
{
	const struct fw_sb_rec *rec;

	memset(out, 0, sizeof(*out));
	if (!fw || !fw_name_ok(name))
		return -EINVAL;
	rec = fw_sb_find(fw, name);
	if (!rec)
		return -ENOENT;
	if (rec->chained)
		check_jump_chained(fw, rec, out);
	else
		check_jump_if(fw, rec, out);
	if (!out->jump[0] && fw->rc.gw_port && rec->ct_mark)
		check_jump_gw(fw, rec, out);
	snprintf(out->chain, sizeof(out->chain), "%.63s", rec->chain);
	check_by_addr(fw, rec, out);
	out->mark_set = rec->ct_mark != 0;
	if (rec->tap)
		check_tap(fw, rec, out);
	out->tap_set = rec->tap;
	out->chained = rec->chained;
	return 0;
}

/* What the rules of one chain show: redirects and anti-spoofing drops. */
struct rule_scan {
	uint16_t dns_port_be;
	bool redir_udp, redir_tcp;	/* prerouting_nat: l4proto X ... redirect to :dns_port */
	/*
	 * sandbox_raw's anti-spoofing for IPv4/IPv6: "iifname . saddr
	 * @sandbox_src4/6 accept" and, after it, "meta nfproto ipv4/ipv6 drop".
	 */
	bool src_accept[2], fam_drop[2];
	bool tap_mac;			/* tap_raw: iifname . ether saddr != @tap_mac drop */
	const char *want_goto;		/* a goto to this chain ... */
	bool goto_ok;			/* ... was seen, in the chain's first rule */
	/*
	 * An accept or return netd never renders there, which would let a
	 * packet past the checks after it: in sandbox_raw any but the
	 * accept of a sandbox's own source and neighbour discovery's; in the
	 * other raw chains any.  Its 1-based position, 0: none.
	 */
	bool sandbox_raw;
	unsigned int n_rules, stray_accept;
};

struct expr_walk {
	struct rule_scan *rs;
	bool l4proto_next, nfproto_next, is_redir, is_drop, is_accept, lookup_ifs;
	bool other_match;		/* a payload, bitwise, ct or lookup expression */
	uint8_t proto, nfproto;
	bool port_ok;
	int src_fam;			/* 0/1: a sandbox_src4/6 lookup; -1 none */
	bool mac_inv;			/* an inverted tap_mac lookup */
};

static int expr_cb(struct nftnl_expr *e, void *data)
{
	struct expr_walk *w = data;
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	uint32_t len = 0;

	if (!name)
		return 0;
	if (strcmp(name, "meta") == 0) {
		uint32_t key = nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY);

		w->l4proto_next = key == NFT_META_L4PROTO;
		w->nfproto_next = key == NFT_META_NFPROTO;
	} else if (strcmp(name, "cmp") == 0) {
		const uint8_t *d = nftnl_expr_get(e, NFTNL_EXPR_CMP_DATA, &len);

		if (w->l4proto_next && d && len == 1)
			w->proto = d[0];
		if (w->nfproto_next && d && len == 1)
			w->nfproto = d[0];
		w->l4proto_next = w->nfproto_next = false;
	} else if (strcmp(name, "immediate") == 0) {
		const void *d = nftnl_expr_is_set(e, NFTNL_EXPR_IMM_DATA) ?
					nftnl_expr_get(e, NFTNL_EXPR_IMM_DATA, &len) : NULL;

		if (d && len == 2 && memcmp(d, &w->rs->dns_port_be, 2) == 0)
			w->port_ok = true;
		if (nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT) &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT) == NF_DROP)
			w->is_drop = true;
		if (nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT) &&
		    (nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT) == NF_ACCEPT ||
		     nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT) == (uint32_t)NFT_RETURN))
			w->is_accept = true;
		if (w->rs->want_goto && w->rs->n_rules == 0 &&
		    nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT) &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT) == (uint32_t)NFT_GOTO &&
		    nftnl_expr_is_set(e, NFTNL_EXPR_IMM_CHAIN) &&
		    strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN), w->rs->want_goto) == 0)
			w->rs->goto_ok = true;
	} else if (strcmp(name, "redir") == 0) {
		w->is_redir = true;
	} else if (strcmp(name, "lookup") == 0) {
		const char *set = nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET);
		bool inv = nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_FLAGS) &&
			   (nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_FLAGS) & NFT_LOOKUP_F_INV);

		w->other_match = true;
		if (set && strcmp(set, "sandbox_ifs") == 0 && !inv)
			w->lookup_ifs = true;
		if (set && !inv && strcmp(set, "sandbox_src4") == 0)
			w->src_fam = 0;
		if (set && !inv && strcmp(set, "sandbox_src6") == 0)
			w->src_fam = 1;
		if (set && inv && strcmp(set, "tap_mac") == 0)
			w->mac_inv = true;
	} else if (strcmp(name, "payload") == 0 || strcmp(name, "bitwise") == 0 ||
		   strcmp(name, "ct") == 0 || strcmp(name, "range") == 0) {
		w->other_match = true;
	}
	return 0;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rule_scan *rs = data;
	struct nftnl_rule *ru = nftnl_rule_alloc();
	struct expr_walk w = { .rs = rs, .src_fam = -1 };

	if (!ru)
		return MNL_CB_ERROR;
	if (nftnl_rule_nlmsg_parse(nlh, ru) < 0) {
		nftnl_rule_free(ru);
		return MNL_CB_ERROR;
	}
	nftnl_expr_foreach(ru, expr_cb, &w);
	if (w.is_redir && w.port_ok && w.lookup_ifs && w.proto == IPPROTO_UDP)
		rs->redir_udp = true;
	if (w.is_redir && w.port_ok && w.lookup_ifs && w.proto == IPPROTO_TCP)
		rs->redir_tcp = true;
	if (w.is_accept && w.src_fam >= 0)
		rs->src_accept[w.src_fam] = true;
	/*
	 * A family's drop (of all of it: no other match) after its accept (a
	 * drop first would drop all: not a gap).
	 */
	for (int i = 0; i < 2; i++)
		if (w.is_drop && !w.other_match && w.nfproto == fw_fams[i].nfproto &&
		    rs->src_accept[i])
			rs->fam_drop[i] = true;
	rs->n_rules++;
	if (w.is_accept && !rs->stray_accept &&
	    !(rs->sandbox_raw && (w.src_fam >= 0 || (w.nfproto == NFPROTO_IPV6 &&
						     w.proto == IPPROTO_ICMPV6))))
		rs->stray_accept = rs->n_rules;
	if (w.is_drop && w.mac_inv)
		rs->tap_mac = true;
	nftnl_rule_free(ru);
	return MNL_CB_OK;
}

/*
 * Dump the rules of @chain through rule_cb(), into @rs's per-chain findings
 * (counted afresh; its settings - the port, want_goto - stay; sandbox_raw
 * is whether @chain is that chain).
 * Return: 0; -errno.
 */
static int chain_scan(struct fw *fw, const char *chain, struct rule_scan *rs)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nftnl_rule *ru = nftnl_rule_alloc();
	struct nlmsghdr *nlh;
	int r;

	rs->goto_ok = false;
	rs->n_rules = rs->stray_accept = 0;
	rs->sandbox_raw = strcmp(chain, "sandbox_raw") == 0;
	if (!ru)
		return -ENOMEM;
	nftnl_rule_set_str(ru, NFTNL_RULE_TABLE, fw->rc.table);
	nftnl_rule_set_str(ru, NFTNL_RULE_CHAIN, chain);
	nftnl_rule_set_u32(ru, NFTNL_RULE_FAMILY, NFPROTO_INET);
	nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETRULE, NFPROTO_INET, NLM_F_DUMP, 0);
	nftnl_rule_nlmsg_build_payload(nlh, ru);
	nftnl_rule_free(ru);
	r = fw->k->ops->talk(fw->k, nlh, rule_cb, rs);
	return r;
}

int fw_base_check(struct fw *fw, struct fw_base_check *out)
{
	struct rule_scan rs = { 0 };
	int r;

	memset(out, 0, sizeof(*out));
	if (!fw)
		return -EINVAL;
	rs.dns_port_be = htons(fw->rc.dns_port);
	r = chain_scan(fw, "prerouting_nat", &rs);
	if (r < 0)
		snprintf(out->redirect, sizeof(out->redirect), "cannot read prerouting_nat: %s",
			 strerror(-r));
	else if (!rs.redir_udp || !rs.redir_tcp)
		snprintf(out->redirect, sizeof(out->redirect),
			 "prerouting_nat has no %s%s%s redirect of port 53 to :%u",
			 rs.redir_udp ? "" : "UDP", !rs.redir_udp && !rs.redir_tcp ? "/" : "",
			 rs.redir_tcp ? "" : "TCP", fw->rc.dns_port);
	r = chain_scan(fw, "sandbox_raw", &rs);
	if (r < 0)
		snprintf(out->spoof, sizeof(out->spoof), "cannot read sandbox_raw: %s",
			 strerror(-r));
	else if (rs.stray_accept)
		snprintf(out->spoof, sizeof(out->spoof),
			 "sandbox_raw's rule %u accepts what netd's rules do not", rs.stray_accept);
	for (int i = 0; i < 2 && r == 0 && !out->spoof[0]; i++)
		if (!rs.fam_drop[i] && (i == 0 || fw_rcfg_v6(&fw->rc)))
			snprintf(out->spoof, sizeof(out->spoof),
				 "sandbox_raw has no anti-spoofing drop for %s sources (%s)",
				 i ? "IPv6" : "IPv4",
				 rs.src_accept[i] ? "no drop after the accept of its own" :
						    "no accept of a sandbox's own");
	/*
	 * A metered sandbox's way in must lead on to the same checks, first
	 * thing; no raw chain but sandbox_raw accepts anything.
	 */
	for (int i = 0; i < 3 && !out->spoof[0]; i++) {
		const char *chain = i < 2 ? fw_raw_chain(i, true) : "prerouting_raw";

		rs.want_goto = i < 2 ? fw_raw_chain(i, false) : NULL;
		r = chain_scan(fw, chain, &rs);
		if (r < 0)
			snprintf(out->spoof, sizeof(out->spoof), "%s cannot be read: %s", chain,
				 strerror(-r));
		else if (rs.want_goto && !rs.goto_ok)
			snprintf(out->spoof, sizeof(out->spoof), "%s does not go on to %s first",
				 chain, rs.want_goto);
		else if (rs.stray_accept)
			snprintf(out->spoof, sizeof(out->spoof),
				 "%s's rule %u accepts what netd's rules do not", chain,
				 rs.stray_accept);
	}
	rs.want_goto = NULL;
	r = chain_scan(fw, "tap_raw", &rs);
	if (r < 0)
		snprintf(out->tap_mac, sizeof(out->tap_mac), "cannot read tap_raw: %s",
			 strerror(-r));
	else if (!rs.tap_mac)
		snprintf(out->tap_mac, sizeof(out->tap_mac),
			 "tap_raw has no drop for a tap's frames from another MAC (@tap_mac)");
	else if (rs.stray_accept)
		snprintf(out->tap_mac, sizeof(out->tap_mac),
			 "tap_raw's rule %u accepts what netd's rules do not", rs.stray_accept);
	return 0;
}
