/*
 * core - the fw object shared by fw.c (the public calls) and reconcile.c
 * (restart and reload): the rendering config, the kernel it commits to, the
 * record of what each sandbox was given, and fw_run(), which renders one
 * transaction and commits it.
 */
#ifndef NETD_FW_CORE_H
#define NETD_FW_CORE_H

#include "netd/fw/kernel.h"
#include "netd/fw/render.h"
#include "netd/model/pinreg.h"

/* What fw_sandbox_add() / fw_sandbox_set_dns() gave a sandbox, to undo it later. */
struct fw_sb_rec {
	char name[POLICY_NAME_MAX + 1];
	char ifname[IFNAMSIZ];
	char policy[POLICY_NAME_MAX + 1];	/* whose chain and sets pc-POLICY-cidr4/6 it uses */
	char chain[NFT_CHAIN_MAXNAMELEN];	/* the policy chain it jumps to (pchain.c) */
	uint32_t ct_mark;	/* its mark in sb_mark4/6 (and key in sb_quota); 0: none */
	struct addr addr4, addr6;
	struct addr dns4, dns6;
	bool chained;
	bool tap;
	bool metered;	/* its policy meters it (pchain_slow_path()): raw_ifs goes to the metered chain */
	uint8_t mac[6];
	uint64_t digest;	/* of its own elements and hookup as last rendered (sb_arg.old_digest) */
	uint32_t name_next;	/* the next record in its name bucket, index + 1; 0: none */
};

/* A policy chain in the kernel (pctab.c). */
struct fw_pchain {
	struct pchain_names nm;
	uint64_t digest;	/* of its rules as last rendered (pchain_digest()); 0: unknown */
	size_t refs;		/* records that jump to it */
};

struct fw {
	struct fw_kernel *k;
	struct fw_rcfg rc;
	uint32_t seq;		/* the last batch sequence number used */
	struct fw_batch *b;	/* reused for every transaction */
	struct fw_sb_rec *sbs;
	size_t n_sbs, cap_sbs;
	uint32_t *by_name;	/* FW_NAME_BUCKETS heads: record index + 1 (fw_sb_find()) */
	struct pinreg *pins;	/* borrowed (fw_config.pins): what each sandbox was given in pin4/6 */
	struct fw_pchain *pcs;	/* the policy chains in the kernel (pctab.c) */
	size_t n_pcs, cap_pcs;
	char ft_why[320];	/* the flowtable is off: why (fw_flowtable_state()) */
	char err[512];
};

typedef void fw_render_fn(struct bt *bt, const void *arg);

/*
 * fw_run() - render one transaction with @render (reconcile mode if @keep)
 * and commit it.  Return: 0; -errno (fw->err says what and why).
 */
int fw_run(struct fw *fw, fw_render_fn *render, const void *arg, bool keep);

/*
 * fw_run_check() - render one batch with @render and have the kernel check
 * it without applying it (fw_batch_close_check()).  Return: 0 (it would
 * apply); -errno (fw->err says what and why).
 */
int fw_run_check(struct fw *fw, fw_render_fn *render, const void *arg);

/* fw_new() - @cfg checked and copied, no batch sent.  Takes @k.  Return: 0; -errno. */
int fw_new(const struct fw_config *cfg, struct fw_kernel *k, struct fw **ret);

/* A sandbox name as netd/fw.h describes it ([A-Za-z0-9][A-Za-z0-9_.-]{0,63}). */
bool fw_name_ok(const char *s);
/* @sb complete and consistent (name, interface, address families, chained needs an address). */
bool fw_sb_ok(const struct fw_sandbox *sb);
/* @p: IPv4/IPv6, TCP/UDP, timeout > 0; a gateway pin: TCP, and @rc has a gateway port. */
bool fw_pin_ok(const struct fw_rcfg *rc, const struct pin *p);
#define FW_NAME_BUCKETS 8192	/* power of two */

/* The record of sandbox @name; NULL if fw has none.  Borrowed: valid until a record is added or removed. */
struct fw_sb_rec *fw_sb_find(struct fw *fw, const char *name);
/* fw_sb_index_add() - put record @i (already filled) into the name index. */
void fw_sb_index_add(struct fw *fw, size_t i);
/* A fw_sandbox view of @rec (strings borrowed from it). */
struct fw_sandbox fw_sb_view(const struct fw_sb_rec *rec);

/* fw_pc_find() - the policy chain named @chain; NULL if fw has none.  Borrowed until the next ref/unref. */
struct fw_pchain *fw_pc_find(struct fw *fw, const char *chain);
/*
 * fw_pc_reserve() - room for @extra more chains, so that the fw_pc_ref()s
 * after a commit cannot fail.  Return: 0; -ENOMEM.
 */
int fw_pc_reserve(struct fw *fw, size_t extra);
/* fw_pc_ref() - one more record jumps to chain @nm (added if new; @digest, if not 0, recorded).  Return: 0; -ENOMEM. */
int fw_pc_ref(struct fw *fw, const struct pchain_names *nm, uint64_t digest);
/* fw_pc_unref() - one record fewer jumps to @chain; the last one forgets it. */
void fw_pc_unref(struct fw *fw, const char *chain);
/* fw_pc_policy_refs() - records that jump to either chain of @policy (so use its CIDR sets). */
size_t fw_pc_policy_refs(const struct fw *fw, const char *policy);

/* One element of a set's elements (its key, @len bytes; ms until it expires, 0: no expiry). */
typedef void fw_elem_fn(void *arg, const void *key, uint32_t len, uint64_t expires_ms);

/*
 * fw_elems_each() - @fn for every element in @nlh, one NEWSETELEM message
 * of a GETSETELEM reply or dump.  Return: MNL_CB_OK; MNL_CB_ERROR (out of
 * memory, or not a set elements message).
 */
int fw_elems_each(const struct nlmsghdr *nlh, fw_elem_fn *fn, void *arg);

/* fw_set_elems_walk() - fw_elems_each() with each whole element (borrowed for the call). */
typedef void fw_set_elem_fn(void *arg, const struct nftnl_set_elem *e);
int fw_set_elems_walk(const struct nlmsghdr *nlh, fw_set_elem_fn *fn, void *arg);

/*
 * fw_sni_queue_probe() - ask the kernel whether a table of ours may hold a
 * queue rule as fw->rc.queue_native says to write it (nftables' "queue", or
 * the xtables NFQUEUE target through nft_compat), with a batch it checks
 * and aborts (ftdev.c).  Without either, forward queues no replies and a
 * policy with tls.sni/http.host cannot be loaded.  Return: 0; -errno
 * (fw->err says what the kernel said).
 */
int fw_sni_queue_probe(struct fw *fw);

/*
 * fw_ft_probe() - ask the kernel whether it has flowtables, with a batch
 * it checks and aborts (fw_batch_close_check()): a table, a flowtable and
 * a chain with a `flow add` rule in it, never created.  Return: 0 (it has); -errno (its answer; @fw->err
 * says what failed).
 */
int fw_ft_probe(struct fw *fw);

/* The base ruleset's render function: @arg is a const struct fw_config *. */
void fw_render_open(struct bt *bt, const void *arg);

#endif
