/*
 * fjudge - what another table's forward-hook chain does to a sandbox's
 * packet that netd's own forward chain accepted.  nf_tables runs every
 * base chain on the forward hook, whatever its table: an accept in table
 * inet netd does not undo a drop elsewhere (Docker's `iptables -P FORWARD
 * DROP`, ufw, firewalld's final reject), so such a chain blackholes every
 * sandbox while DNS still answers.  Pure: chains and rules in memory (read
 * from the kernel by foreign.c), a verdict out.
 *
 * A rule is reduced to what can be told of it without a packet: its
 * interface-name conditions (meta iifname/oifname compared with cmp, the
 * way nft and iptables-nft write `iifname "nd*"` and `-i nd+`), whether it
 * has any other condition (ct state, an address, a set lookup, an xt
 * match...: "unknown": it may or may not match), and its verdict.  The
 * walk follows jumps and gotos and collects which outcomes are possible;
 * a chain that can only drop "drops", one that can drop or accept "may
 * drop".
 */
#ifndef NETD_FW_FJUDGE_H
#define NETD_FW_FJUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FJ_NAME_MAX   256	/* bytes of a chain name with its NUL (NFT_CHAIN_MAXNAMELEN) */
#define FJ_IFNAME_MAX 16	/* bytes of an interface name with its NUL (IFNAMSIZ) */
#define FJ_MATCHES    4		/* interface conditions kept per rule; more: unknown */
#define FJ_DEPTH      16	/* jumps followed; deeper: either outcome */

enum fj_field { FJ_IIFNAME = 1, FJ_OIFNAME };

/* One `meta iifname/oifname` cmp: the first @len bytes equal (or not) @name. */
struct fj_match {
	uint8_t field;		/* enum fj_field */
	bool neq;		/* NFT_CMP_NEQ */
	uint8_t len;		/* 1..FJ_IFNAME_MAX bytes compared */
	char name[FJ_IFNAME_MAX];	/* the compared bytes (NUL-padded) */
};

enum fj_verdict {
	FJ_CONTINUE = 0,	/* no verdict: the next rule (counter, log, ...) */
	FJ_ACCEPT,
	FJ_DROP,		/* drop, reject (native or xt REJECT) */
	FJ_JUMP,
	FJ_GOTO,
	FJ_RETURN,
	FJ_ANY,			/* a verdict netd cannot tell (queue, a verdict map): any */
};

struct fj_rule {
	struct fj_match m[FJ_MATCHES];
	uint8_t n_m;
	bool unknown;		/* another condition: the rule may not match */
	uint8_t verdict;	/* enum fj_verdict */
	char target[FJ_NAME_MAX];	/* FJ_JUMP/FJ_GOTO: the chain */
};

struct fj_chain {
	char name[FJ_NAME_MAX];
	bool base;		/* a base chain: its end is @policy_drop's verdict */
	bool policy_drop;
	const struct fj_rule *rules;	/* borrowed */
	size_t n_rules;
};

/* One table's chains (borrowed, any order). */
struct fj_table {
	const struct fj_chain *chains;
	size_t n_chains;
};

/*
 * The interfaces one packet crosses: each side either a known name (the
 * egress interface) or netd's sandbox interfaces as a pattern: "nd" and
 * FJ_SB_HEX lowercase hex digits (a veth netd made, the host end of a
 * Docker endpoint).  A cmp of a few of those hex digits matches some
 * sandboxes and not others: unknown.
 */
#define FJ_SB_PREFIX "nd"
#define FJ_SB_HEX    5
struct fj_packet {
	const char *iifname;	/* NULL: a sandbox's interface */
	const char *oifname;	/* NULL: a sandbox's interface */
};

/* What a base chain may do to the packet. */
enum fj_outcome {
	FJ_PASSES = 0,		/* only accept (or nothing that drops) */
	FJ_MAY_DROP,		/* accept or drop, depending on what netd cannot tell */
	FJ_DROPS,		/* every path drops */
};

/*
 * fj_judge() - walk base chain @chain of @t for packet @p: its rules in
 * order, the jumps and gotos they make (at most FJ_DEPTH deep, a loop or
 * a missing chain counts as either outcome), its policy at the end.
 * Each chain is walked once per call (what it can end in is kept).
 * Return: enum fj_outcome; FJ_PASSES if @chain is not in @t; -ENOMEM.
 */
int fj_judge(const struct fj_table *t, const char *chain, const struct fj_packet *p);

/*
 * fj_match_eval() - does @m hold for @p?  Return: 1 yes, 0 no, -1 unknown
 * (it holds for some sandboxes' interfaces only).  For the unit tests.
 */
int fj_match_eval(const struct fj_match *m, const struct fj_packet *p);

#endif
