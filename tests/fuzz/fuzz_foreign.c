/*
 * fuzz_foreign - what netd reads of another table's forward chains and how
 * it judges them (netd/fw/foreign.c's rule_reduce(), netd/fw/fjudge.c's
 * fj_judge()), on arbitrary rules.  The input is a small program that
 * builds chains and rules with libnftnl's setters, as libnftnl's parser
 * would hand them over from the kernel: any expression (meta, cmp,
 * immediate verdicts and data, lookup and verdict maps, reject, xt target
 * and match, counter, payload, bitwise, queue, limit, a name netd does not
 * know), any register, operator, length and bytes, jumps to any chain.
 * libnftnl's own parser is not the target: it exits the process on a
 * malformed kernel message by design ("nf_tables kernel ABI is broken"),
 * so the kernel's bytes are trusted there as everywhere netd uses it.
 *
 *   [chains] then per chain [flags: bit 0 base, bit 1 policy drop],
 *   then rules until the end: [chain] [expressions], each [kind] [args...]
 *
 * Asserts: a reduced rule keeps at most FJ_MATCHES interface compares of
 * 1..FJ_IFNAME_MAX bytes and a verdict fjudge.h knows, with a
 * NUL-terminated target; every judgement is one of the three outcomes;
 * nothing leaks (a judgement allocates).  Seeds: hand-made programs of
 * Docker's FORWARD with and without the DOCKER-USER fix, firewalld's
 * final reject, a verdict map, a loop.
 */
#include "netd/fw/foreign.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_CHAINS 8
#define FZ_RULES  64
#define FZ_EXPRS  8

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t next(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/* One expression of kind @kind, its arguments from @in; NULL on ENOMEM. */
static struct nftnl_expr *expr_make(struct in *in, uint8_t kind, unsigned n_chains)
{
	static const char *const targets[] = { "REJECT", "LOG", "NFQUEUE", "MARK", "TPROXY" };
	static const char *const names[] = { "meta", "cmp", "immediate", "immediate", "lookup",
					     "reject", "target", "match", "counter", "payload",
					     "bitwise", "xyzzy", "queue", "limit" };
	struct nftnl_expr *e;
	char chain[8];
	uint8_t b[16];

	kind %= sizeof(names) / sizeof(names[0]);
	e = nftnl_expr_alloc(names[kind]);
	if (!e)
		return NULL;
	switch (kind) {
	case 0:	/* meta KEY into a register */
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, next(in) & 1 ? NFT_META_IIFNAME + (next(in) & 1) :
									 next(in));
		if (next(in) & 1)	/* else a meta set statement: no dreg */
			nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, next(in) % 24);
		break;
	case 1: {	/* cmp REG OP LEN BYTES */
		uint8_t len = next(in) % 18;

		nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, next(in) % 24);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, next(in) % 7);
		for (uint8_t i = 0; i < len && i < sizeof(b); i++)
			b[i] = next(in);
		if (len)
			nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, b, len > sizeof(b) ? sizeof(b) : len);
		break;
	}
	case 2: {	/* immediate verdict [code] [chain] */
		static const int32_t codes[] = { NF_ACCEPT, NF_DROP, NFT_JUMP, NFT_GOTO, NFT_RETURN,
						 NFT_CONTINUE, NFT_BREAK, 3 /* NF_QUEUE */ };
		uint8_t c = next(in) % (sizeof(codes) / sizeof(codes[0]));

		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)codes[c]);
		if (codes[c] == NFT_JUMP || codes[c] == NFT_GOTO) {
			snprintf(chain, sizeof(chain), "c%u", next(in) % (n_chains + 1));	/* may be missing */
			nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
		}
		break;
	}
	case 3:	/* immediate data into a register */
		b[0] = next(in);
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, next(in) % 24);
		nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, b, 1);
		break;
	case 4:	/* lookup: a set, or a map into a register or the verdict */
		nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, "s");
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, next(in) % 24);
		if (next(in) & 1)
			nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_DREG, next(in) % 24);
		break;
	case 6:	/* xt target */
		nftnl_expr_set_str(e, NFTNL_EXPR_TG_NAME,
				   targets[next(in) % (sizeof(targets) / sizeof(targets[0]))]);
		break;
	case 9:
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, next(in) % 24);
		break;
	case 10:
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, next(in) % 24);
		break;
	default:
		break;
	}
	return e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct fj_chain chains[FZ_CHAINS];
	struct fj_rule rules[FZ_RULES], sorted[FZ_RULES];
	size_t rule_chain[FZ_RULES], n_rules = 0;
	unsigned n_chains = next(&in) % FZ_CHAINS + 1;
	const struct fj_packet egress = { .iifname = NULL, .oifname = "eth0" };
	const struct fj_packet reply = { .iifname = "eth0", .oifname = NULL };
	struct fj_table ft = { chains, n_chains };

	memset(chains, 0, sizeof(chains));
	for (unsigned c = 0; c < n_chains; c++) {
		uint8_t f = next(&in);

		snprintf(chains[c].name, sizeof(chains[c].name), "c%u", c);
		chains[c].base = f & 1;
		chains[c].policy_drop = f & 2;
	}
	while (in.n && n_rules < FZ_RULES) {
		struct nftnl_rule *ru = nftnl_rule_alloc();
		unsigned c = next(&in) % n_chains, n_e = next(&in) % (FZ_EXPRS + 1);
		struct fj_rule *r = &rules[n_rules];

		if (!ru)
			return 0;
		for (unsigned i = 0; i < n_e; i++) {
			struct nftnl_expr *e = expr_make(&in, next(&in), n_chains);

			if (e)
				nftnl_rule_add_expr(ru, e);
		}
		rule_reduce(ru, r);
		nftnl_rule_free(ru);
		if (r->n_m > FJ_MATCHES || r->verdict > FJ_ANY ||
		    strnlen(r->target, FJ_NAME_MAX) >= FJ_NAME_MAX)
			abort();
		for (size_t k = 0; k < r->n_m; k++)
			if (r->m[k].len < 1 || r->m[k].len > FJ_IFNAME_MAX ||
			    (r->m[k].field != FJ_IIFNAME && r->m[k].field != FJ_OIFNAME))
				abort();
		rule_chain[n_rules++] = c;
	}
	/* Grouped per chain, in order, as table_read() does. */
	for (size_t ci = 0, k = 0; ci < n_chains; ci++) {
		chains[ci].rules = sorted + k;
		for (size_t i = 0; i < n_rules; i++)
			if (rule_chain[i] == ci)
				sorted[k++] = rules[i];
		chains[ci].n_rules = (size_t)(sorted + k - chains[ci].rules);
	}
	for (size_t ci = 0; ci < n_chains; ci++) {
		int e = fj_judge(&ft, chains[ci].name, &egress);
		int b = fj_judge(&ft, chains[ci].name, &reply);

		if (e < FJ_PASSES || e > FJ_DROPS || b < FJ_PASSES || b > FJ_DROPS)
			abort();
		/* A chain with no rule ends in its policy (base), or passes (regular: it returns). */
		if (!chains[ci].n_rules &&
		    e != (chains[ci].base && chains[ci].policy_drop ? FJ_DROPS : FJ_PASSES))
			abort();
	}
	return 0;
}
