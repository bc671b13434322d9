/*
 * gw/engine - the HTTP engine of one gateway connection, whichever the
 * protocol: HTTP/1.x (netd/gw/h1.h) or HTTP/2 (netd/gw/h2.h), chosen by
 * the ALPN both TLS sides agreed on.  Built from netd's verdict (the
 * rule's checks, the credentials); bytes in from either side, bytes out
 * and one record per request through the caller's io.  The worker's
 * connection (netd/gw/conn.c) owns the sockets.
 */
#ifndef NETD_GW_ENGINE_H
#define NETD_GW_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "netd/gw/ipc.h"

struct gw_engine;
struct gw_rate;

/* Where the engine's output goes; @arg is gw_engine_conf.arg. */
struct gw_engine_io {
	int (*to_client)(void *arg, const void *buf, size_t len);	/* 0; <0 closes */
	int (*to_upstream)(void *arg, const void *buf, size_t len);
	void (*record)(void *arg, const struct gw_ipc_http *rec);	/* one per request */
};

struct gw_engine_conf {
	bool h2;			/* HTTP/2 on both sides, else HTTP/1.x */
	bool no_upstream;		/* the upstream failed already: gw_engine_upstream_failed() follows */
	const struct gw_ipc_verdict *v;	/* borrowed for the engine's life */
	struct gw_rate *rate;		/* the worker's buckets */
	uint16_t port;			/* the connection's port (Host's :port) */
	const char *sni;		/* borrowed */
	const struct addr *dst;		/* the upstream's address, for records */
	const struct gw_engine_io *io;
	void *arg;
};

/* gw_engine_new() - an engine for one connection; NULL: out of memory. */
struct gw_engine *gw_engine_new(const struct gw_engine_conf *conf);

#define GW_ENGINE_READ_CLIENT 0x1	/* the engine takes client bytes now */
#define GW_ENGINE_DONE        0x2	/* over: flush what went to the client, close */

/*
 * gw_engine_flags() - what the caller does next; read after every call.
 * Without GW_ENGINE_READ_CLIENT (HTTP/1.x: too many requests await
 * answers), stop reading the client and keep the bytes not taken; they are
 * fed again once the flag is back (it returns during
 * gw_engine_from_upstream()).
 */
unsigned int gw_engine_flags(const struct gw_engine *e);

/*
 * gw_engine_from_client() - @len bytes that arrived (decrypted) from the
 * sandbox at @now_ns (monotonic).  Return: bytes taken (fewer than @len
 * only while GW_ENGINE_READ_CLIENT is clear).
 */
size_t gw_engine_from_client(struct gw_engine *e, const uint8_t *buf, size_t len, uint64_t now_ns);

/* gw_engine_from_upstream() - @len bytes from the upstream; all are taken. */
void gw_engine_from_upstream(struct gw_engine *e, const uint8_t *buf, size_t len, uint64_t now_ns);

/*
 * gw_engine_upstream_failed() - there is no upstream (connect, TLS,
 * verification: @status 502; a timeout: 504) for the reason word @reason
 * (static storage): the requests get @status with it, then GW_ENGINE_DONE.
 */
void gw_engine_upstream_failed(struct gw_engine *e, unsigned int status, const char *reason,
			       uint64_t now_ns);

/* gw_engine_upstream_eof(), gw_engine_client_eof() - that side closed. */
void gw_engine_upstream_eof(struct gw_engine *e, uint64_t now_ns);
void gw_engine_client_eof(struct gw_engine *e, uint64_t now_ns);

/*
 * gw_engine_abort() - the connection ends now, whatever is open: each
 * request not yet recorded gets its record, with @reason (static storage;
 * NULL: "connection-closed") where it has none (HTTP/2's streams: CANCEL,
 * at gw_engine_free()).  Then GW_ENGINE_DONE.  NULL-safe.
 */
void gw_engine_abort(struct gw_engine *e, const char *reason, uint64_t now_ns);

/* gw_engine_free() - the engine and every buffer it holds (wiped); NULL-safe. */
void gw_engine_free(struct gw_engine *e);

#endif
