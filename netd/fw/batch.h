/*
 * batch - one nf_tables transaction being built in memory: BATCH_BEGIN,
 * the messages, BATCH_END, in libnftnl's paged batch buffer (nftnl_batch),
 * with a record per message (its sequence number, type and object name) so
 * that a kernel error can be mapped back to what caused it.
 *
 * Pure: no socket, no logging.  nl.c sends a closed batch to the kernel;
 * a test's stand-in kernel (tests/golden/fake_nft.c) applies it instead.
 */
#ifndef NETD_FW_BATCH_H
#define NETD_FW_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <linux/netlink.h>

/* One message of the batch, for describing an error. */
struct fw_batch_msg {
	uint32_t seq;
	uint16_t type;		/* NFT_MSG_* */
	char what[96];		/* the object's name */
};

struct fw_batch;

/*
 * fw_batch_new() - an empty batch buffer, reusable across transactions.
 * Return: the batch (caller frees with fw_batch_free()); NULL on ENOMEM.
 */
struct fw_batch *fw_batch_new(void);

/* fw_batch_free() - NULL-safe. */
void fw_batch_free(struct fw_batch *b);

/*
 * fw_batch_begin() - forget what @b held and start a transaction: write
 * BATCH_BEGIN with sequence number @seq0; the messages get @seq0 + 1, ....
 */
void fw_batch_begin(struct fw_batch *b, uint32_t seq0);

/*
 * fw_batch_msg_start() - the header of the next message (@type, nfgen
 * family @family, @flags | NLM_F_REQUEST); the caller writes the payload and
 * calls fw_batch_msg_end().  Return: the header, borrowed until
 * fw_batch_msg_end(); NULL if the batch already failed (see fw_batch_err()).
 */
struct nlmsghdr *fw_batch_msg_start(struct fw_batch *b, uint16_t type, uint8_t family,
				    uint16_t flags);

/* fw_batch_msg_end() - finish the message of @nlh; @what names its object. */
void fw_batch_msg_end(struct fw_batch *b, struct nlmsghdr *nlh, const char *what);

/*
 * fw_batch_digest_begin() - until fw_batch_digest_end(), the messages
 * started are not added: each is hashed whole (FNV-1a, 64 bits; its
 * sequence number 0), so a caller can tell whether what it would send is
 * what it sent before.  fw_batch_digest_end() - the hash, 0 if the batch
 * failed; messages are added again from now on.
 */
void fw_batch_digest_begin(struct fw_batch *b);
uint64_t fw_batch_digest_end(struct fw_batch *b);

/* fw_batch_fail() - make @err (-errno) the batch's error unless it has one. */
void fw_batch_fail(struct fw_batch *b, int err);

/* fw_batch_err() - 0, or the first -errno building ran into (-ENOMEM, -E2BIG). */
int fw_batch_err(const struct fw_batch *b);

/*
 * fw_batch_close() - write BATCH_END and ask the kernel to acknowledge the
 * last message (NLM_F_ACK on it only: nfnetlink reports every failing
 * message whatever its flags, so one ack on success keeps the reply to any
 * batch small; see nl.c).  Return: 0; -errno (fw_batch_err()).
 */
int fw_batch_close(struct fw_batch *b);

/*
 * fw_batch_close_check() - close without BATCH_END: nfnetlink then checks
 * every message and aborts the transaction (NFNL_ABORT_VALIDATE, what
 * `nft --check` relies on), so the answers tell what the kernel would do
 * and nothing changes.  The last message is acknowledged as by
 * fw_batch_close().  Return: 0; -errno (fw_batch_err()).
 */
int fw_batch_close_check(struct fw_batch *b);

/* fw_batch_count() - messages between BEGIN and END. */
size_t fw_batch_count(const struct fw_batch *b);

/* fw_batch_seq_begin() - BEGIN's sequence number. */
uint32_t fw_batch_seq_begin(const struct fw_batch *b);
/* fw_batch_seq_last() - the last message's sequence number; 0 if none. */
uint32_t fw_batch_seq_last(const struct fw_batch *b);
/* fw_batch_seq_end() - the last number handed out: END's once closed. */
uint32_t fw_batch_seq_end(const struct fw_batch *b);

/*
 * fw_batch_iov() - the closed batch as an iovec (one entry per page).
 * @ret_n: entries.  Return: a malloc()ed array the caller frees; NULL on ENOMEM.
 */
struct iovec *fw_batch_iov(const struct fw_batch *b, size_t *ret_n);

/* fw_batch_msg() - the record of the message numbered @seq; NULL if none. */
const struct fw_batch_msg *fw_batch_msg(const struct fw_batch *b, uint32_t seq);

#endif
