/*
 * linkwatch - rtnetlink link events (RTNLGRP_LINK) on a libevent loop:
 * tells its user when an interface of the caller's netns is deleted
 * (RTM_DELLINK), e.g. a sandbox's veth whose other end died with its
 * netns.  If the kernel dropped events (the socket overran, ENOBUFS) it
 * says so instead, and the user rechecks what it watches.  An edge module:
 * it owns one netlink socket and decides nothing.
 */
#ifndef NETD_LINKWATCH_H
#define NETD_LINKWATCH_H

struct event_base;
struct linkwatch;

struct linkwatch_ops {
	/* Interface @ifname (NUL-terminated, <= 15 bytes) was deleted. */
	void (*deleted)(void *ctx, const char *ifname);
	/* Events were lost: recheck every interface of interest. */
	void (*lost)(void *ctx);
};

/*
 * linkwatch_new() - subscribe in the caller's netns.  @ops/@ctx borrowed
 * for the watch's life.  @ret: caller frees with linkwatch_free().
 * Return: 0; -errno.
 */
int linkwatch_new(struct event_base *base, const struct linkwatch_ops *ops, void *ctx,
		  struct linkwatch **ret);

/* linkwatch_free() - unsubscribe and close; NULL-safe. */
void linkwatch_free(struct linkwatch *w);

#endif
