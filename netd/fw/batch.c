/*
 * batch - an nf_tables transaction in memory (see batch.h).  The messages
 * go into libnftnl's paged batch (nftnl_batch): a page that fills moves its
 * last message to a fresh page, so a batch of any size is built once, never
 * re-rendered into a bigger buffer.  The pages reach the kernel in ONE
 * sendmsg() as an iovec (nl.c): nfnetlink treats one skb as one
 * transaction, so a batch is never split across sends.
 */
#include "netd/fw/batch.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <libnftnl/batch.h>
#include <libnftnl/common.h>
#include <linux/netfilter/nfnetlink.h>

#include "common/hash.h"

#define BATCH_PAGE     (128u * 1024)	/* bytes per page */
#define BATCH_OVERRUN  (16u * 1024)	/* the largest single message */
#define BATCH_PAGES_MAX 1024		/* UIO_MAXIOV: iovec entries of one sendmsg() */

struct fw_batch {
	struct nftnl_batch *nb;
	bool digesting;		/* messages are hashed into dig, not added */
	uint64_t dig;
	char *scratch;		/* where a hashed message is built */
	uint32_t seq0, seq;	/* BEGIN's; the last one handed out */
	int err;
	bool closed;
	struct nlmsghdr *last;	/* the last message (after any page move) */
	struct fw_batch_msg *msgs;
	size_t n, cap;
};

struct fw_batch *fw_batch_new(void)
{
	return calloc(1, sizeof(struct fw_batch));
}

void fw_batch_free(struct fw_batch *b)
{
	if (!b)
		return;
	if (b->nb)
		nftnl_batch_free(b->nb);
	free(b->msgs);
	free(b->scratch);
	free(b);
}

void fw_batch_fail(struct fw_batch *b, int err)
{
	if (!b->err)
		b->err = err;
}

int fw_batch_err(const struct fw_batch *b)
{
	return b->err;
}

/* Account for the message just written at the tail and move past it. */
static void batch_advance(struct fw_batch *b)
{
	uint32_t len = ((struct nlmsghdr *)nftnl_batch_buffer(b->nb))->nlmsg_len;

	if (nftnl_batch_update(b->nb) < 0) {
		fw_batch_fail(b, -ENOMEM);
		return;
	}
	/* Wherever it ended up (a page that filled moves it), it ends at the tail. */
	b->last = (struct nlmsghdr *)((char *)nftnl_batch_buffer(b->nb) - MNL_ALIGN(len));
	if (nftnl_batch_iovec_len(b->nb) > BATCH_PAGES_MAX)
		fw_batch_fail(b, -E2BIG);
}

void fw_batch_begin(struct fw_batch *b, uint32_t seq0)
{
	if (b->nb)
		nftnl_batch_free(b->nb);
	b->nb = nftnl_batch_alloc(BATCH_PAGE, BATCH_OVERRUN);
	b->err = b->nb ? 0 : -ENOMEM;
	b->closed = false;
	b->digesting = false;
	b->last = NULL;
	b->n = 0;
	b->seq0 = b->seq = seq0;
	if (b->err)
		return;
	nftnl_batch_begin(nftnl_batch_buffer(b->nb), seq0);
	batch_advance(b);
	b->last = NULL;
}

struct nlmsghdr *fw_batch_msg_start(struct fw_batch *b, uint16_t type, uint8_t family,
				    uint16_t flags)
{
	if (b->err || b->closed)
		return NULL;
	if (b->digesting)
		return nftnl_nlmsg_build_hdr(b->scratch, type, family, flags, 0);
	if (b->n == b->cap) {
		size_t nc = b->cap ? 2 * b->cap : 64;
		struct fw_batch_msg *nm = realloc(b->msgs, nc * sizeof(*nm));

		if (!nm) {
			fw_batch_fail(b, -ENOMEM);
			return NULL;
		}
		b->msgs = nm;
		b->cap = nc;
	}
	return nftnl_nlmsg_build_hdr(nftnl_batch_buffer(b->nb), type, family, flags, ++b->seq);
}

void fw_batch_msg_end(struct fw_batch *b, struct nlmsghdr *nlh, const char *what)
{
	struct fw_batch_msg *m;

	if (b->digesting) {
		b->dig = fnv64_add(b->dig, nlh, nlh->nlmsg_len);
		/*
		 * Zeroed again for the next one: libmnl before 1.0.5 does not
		 * clear an attribute's padding, and stale bytes there would
		 * make equal messages hash differently.
		 */
		memset(b->scratch, 0, MNL_ALIGN(nlh->nlmsg_len));
		return;
	}
	m = &b->msgs[b->n++];
	m->seq = nlh->nlmsg_seq;
	m->type = (uint16_t)(nlh->nlmsg_type & 0xff);
	snprintf(m->what, sizeof(m->what), "%s", what ? what : "");
	batch_advance(b);
}

void fw_batch_digest_begin(struct fw_batch *b)
{
	if (!b->scratch)
		b->scratch = calloc(1, BATCH_PAGE + BATCH_OVERRUN);	/* as much as a page may take */
	if (!b->scratch) {
		fw_batch_fail(b, -ENOMEM);
		return;
	}
	b->digesting = true;
	b->dig = FNV64_INIT;
}

uint64_t fw_batch_digest_end(struct fw_batch *b)
{
	b->digesting = false;
	return b->err ? 0 : b->dig;
}

int fw_batch_close(struct fw_batch *b)
{
	if (b->err)
		return b->err;
	if (b->last)
		b->last->nlmsg_flags |= NLM_F_ACK;
	nftnl_batch_end(nftnl_batch_buffer(b->nb), ++b->seq);
	batch_advance(b);
	b->closed = true;
	return b->err;
}

int fw_batch_close_check(struct fw_batch *b)
{
	if (b->err)
		return b->err;
	if (b->last)
		b->last->nlmsg_flags |= NLM_F_ACK;
	b->closed = true;
	return 0;
}

size_t fw_batch_count(const struct fw_batch *b)
{
	return b->n;
}

uint32_t fw_batch_seq_begin(const struct fw_batch *b)
{
	return b->seq0;
}

uint32_t fw_batch_seq_last(const struct fw_batch *b)
{
	return b->n ? b->msgs[b->n - 1].seq : 0;
}

uint32_t fw_batch_seq_end(const struct fw_batch *b)
{
	return b->seq;
}

struct iovec *fw_batch_iov(const struct fw_batch *b, size_t *ret_n)
{
	int n = nftnl_batch_iovec_len(b->nb);
	struct iovec *iov = calloc(n > 0 ? (size_t)n : 1, sizeof(*iov));

	*ret_n = 0;
	if (!iov)
		return NULL;
	nftnl_batch_iovec(b->nb, iov, (uint32_t)n);
	*ret_n = (size_t)n;
	return iov;
}

const struct fw_batch_msg *fw_batch_msg(const struct fw_batch *b, uint32_t seq)
{
	/* Messages are numbered seq0 + 1 ... in order. */
	if (seq <= b->seq0 || seq - b->seq0 > b->n)
		return NULL;
	return &b->msgs[seq - b->seq0 - 1];
}
