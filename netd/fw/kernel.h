/*
 * kernel - what fw needs from nf_tables, as a small ops table: commit one
 * batch, and one request (a get or a dump) whose replies a callback sees.
 * nl.c implements it over netlink (the only file with an nf_tables socket);
 * tests may hand fw_open_with() a stand-in that applies batches to a model
 * (tests/golden/fake_nft.c), which is how the golden ruleset test runs
 * without root.
 */
#ifndef NETD_FW_KERNEL_H
#define NETD_FW_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

#include "netd/fw.h"
#include "netd/fw/batch.h"

struct fw_kernel;

struct fw_kernel_ops {
	/*
	 * Apply the closed batch @b whole or not at all.  On failure, write
	 * what failed and why into @err (the failing message as
	 * fw_batch_msg() describes it, and strerror()).
	 * Return: 0 (the kernel acknowledged the batch: it is in effect);
	 * -errno (the kernel changed nothing); -ETIMEDOUT (no answer: unknown).
	 */
	int (*commit)(struct fw_kernel *k, const struct fw_batch *b, char *err, size_t err_len);
	/*
	 * Send the one request @req (its nlmsg_seq is set here) and run @cb on
	 * every reply until the ack or, for a dump, NLMSG_DONE.
	 * Return: 0; the kernel's -errno; -errno.
	 */
	int (*talk)(struct fw_kernel *k, struct nlmsghdr *req, mnl_cb_t cb, void *data);
	/* Release @k. */
	void (*free)(struct fw_kernel *k);
};

struct fw_kernel {
	const struct fw_kernel_ops *ops;
};

/*
 * fw_nl_new() - nf_tables over a NETLINK_NETFILTER socket in the caller's
 * current netns.  @ret: freed with (*ret)->ops->free().  Return: 0; -errno.
 */
int fw_nl_new(struct fw_kernel **ret);

/*
 * fw_open_with() - fw_open() on the kernel @k instead of a netlink socket.
 * Takes ownership of @k (freed by fw_close(), or here on failure).
 */
int fw_open_with(const struct fw_config *cfg, struct fw_kernel *k, struct fw **ret);

#endif
