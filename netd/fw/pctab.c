/*
 * pctab - the policy chains fw has in the kernel (pchain.c): for each, its
 * names, the fingerprint of its rules as last rendered and how many
 * sandboxes jump to it.  A create renders a chain only when it is new or
 * its rules changed; the last sandbox to leave a chain removes it.  A few
 * entries (one per policy and mode in use): a plain array.
 */
#include "netd/fw/core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct fw_pchain *fw_pc_find(struct fw *fw, const char *chain)
{
	for (size_t i = 0; chain && i < fw->n_pcs; i++)
		if (strcmp(fw->pcs[i].nm.chain, chain) == 0)
			return &fw->pcs[i];
	return NULL;
}

int fw_pc_reserve(struct fw *fw, size_t extra)
{
	struct fw_pchain *v;

	if (fw->n_pcs + extra <= fw->cap_pcs)
		return 0;
	v = reallocarray(fw->pcs, fw->n_pcs + extra, sizeof(*v));
	if (!v)
		return -ENOMEM;
	fw->pcs = v;
	fw->cap_pcs = fw->n_pcs + extra;
	return 0;
}

int fw_pc_ref(struct fw *fw, const struct pchain_names *nm, uint64_t digest)
{
	struct fw_pchain *pc = fw_pc_find(fw, nm->chain);

	if (!pc) {
		if (fw_pc_reserve(fw, 1) < 0)
			return -ENOMEM;
		pc = &fw->pcs[fw->n_pcs++];
		memset(pc, 0, sizeof(*pc));
	}
	pc->nm = *nm;	/* a reload may have given it another conn set */
	if (digest)
		pc->digest = digest;
	pc->refs++;
	return 0;
}

void fw_pc_unref(struct fw *fw, const char *chain)
{
	struct fw_pchain *pc = fw_pc_find(fw, chain);

	if (!pc || --pc->refs > 0)
		return;
	*pc = fw->pcs[--fw->n_pcs];	/* the last one moves into the hole */
}

size_t fw_pc_policy_refs(const struct fw *fw, const char *policy)
{
	size_t n = 0;

	for (size_t i = 0; i < fw->n_pcs; i++)
		if (strcmp(fw->pcs[i].nm.chain + 3, policy) == 0)
			n += fw->pcs[i].refs;
	return n;
}
