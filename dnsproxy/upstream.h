/*
 * upstream - the proxy's recursive resolvers, through c-ares on libevent.
 * Forwards a client's query byte for byte (c-ares only replaces the message
 * ID), lets c-ares retry a truncated UDP answer over TCP, and hands back
 * every answer whatever its rcode (SERVFAIL and REFUSED too).  This file
 * and upstream.c are the only ones that know c-ares exists.
 */
#ifndef NETD_DNSPROXY_UPSTREAM_H
#define NETD_DNSPROXY_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dnsproxy/proxy_config.h"	/* struct upstream_server */

struct event_base;
struct upstream;

/*
 * upstream_cb - one query's outcome.  @err: 0 (@ans/@len: the answer,
 * borrowed for the call; its ID is c-ares's, not the client's);
 * -ETIMEDOUT (no server answered); -ECANCELED (upstream_free() while
 * pending: do not reply); -EIO (any other failure).  Called exactly once
 * per upstream_send(), possibly before upstream_send() returns.
 */
typedef void (*upstream_cb)(void *arg, int err, const uint8_t *ans, size_t len);

/*
 * upstream_new() - a c-ares channel on @base asking @servers (borrowed only
 * during the call; n == 0 keeps /etc/resolv.conf's), @timeout_ms per try
 * (0 = 2000), 2 tries per server.
 * @ret: caller frees with upstream_free().  Return: 0; -ENOMEM; -EINVAL.
 */
int upstream_new(struct event_base *base, const struct upstream_server *servers, size_t n,
		 uint32_t timeout_ms, struct upstream **ret);

/*
 * upstream_send() - forward @query/@len (a complete DNS message, 12..65535
 * bytes, copied) and call @cb with @arg once it is resolved.
 */
void upstream_send(struct upstream *u, const uint8_t *query, size_t len, upstream_cb cb,
		   void *arg);

/*
 * upstream_turn_fn - called with @begin true before c-ares handles one
 * readiness event of its sockets (or its timer), and with false after:
 * the outcomes reported in between (every answer one read brings) form one
 * turn, which the caller may handle as a batch (its replies sent together).
 */
typedef void (*upstream_turn_fn)(void *arg, bool begin);

/* upstream_set_turn() - call @fn with @arg around each turn (NULL: none). */
void upstream_set_turn(struct upstream *u, upstream_turn_fn fn, void *arg);

/* upstream_free() - cancel everything (callbacks get -ECANCELED); NULL-safe. */
void upstream_free(struct upstream *u);

#endif
