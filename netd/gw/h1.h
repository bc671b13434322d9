/*
 * gw/h1 - the API gateway's HTTP/1.x engine for one client connection:
 * client <-> gateway <-> upstream, both sides already TLS-terminated by the
 * caller (netd/gw/conn.c).  Bytes in from either side; bytes out, and one
 * record per request, through the caller's ops.  Every request head is read
 * strictly (netd/gw/h1_head.h) and by http-parser, both of which must agree
 * on its framing, checked (netd/gw/req.h, netd/gw/rate.h) and re-serialized
 * with a credential header rewritten; bodies and responses pass as raw
 * bytes as they arrive, never waiting for a whole body.
 * Pure: no sockets, no clock (the caller's now_ns), no logging.
 * Not thread-safe; one engine per client connection.  RFC 9110, RFC 9112.
 */
#ifndef NETD_GW_H1_H
#define NETD_GW_H1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netd/gw/rate.h"
#include "netd/gw/req.h"

#define GW_H1_QUEUE_MAX 16	/* requests read and not yet answered (pipelining) */

/* One request, as the audit's "http" record wants it; valid during ops->record only. */
struct gw_h1_record {
	const char *method;	/* as sent; "" if the head could not be read */
	const char *host;	/* the Host value as sent (OWS trimmed); "" if none */
	const char *path;	/* the target without its query; "" if none */
	unsigned int status;	/* the status the client got; 0: none (the connection ended) */
	uint64_t request_bytes;	/* from the client: head as received + body */
	uint64_t response_bytes;	/* to the client: head + body (ours or the upstream's) */
	uint64_t start_ns;	/* now_ns of the call that brought the head's first byte */
	uint64_t first_byte_ns;	/* ... that sent the first response byte; 0: none */
	uint64_t end_ns;	/* ... that completed the response (or ended the connection) */
	const char *credential;	/* the credential rewritten or misdirected; NULL: none */
	const char *reason;	/* the reason word; NULL for a forwarded, answered request */
	bool refused;		/* answered by the gateway's checks (400 pre-check, 403, 421, 429) */
};

/*
 * The caller's side.  to_client/to_upstream: bytes to send, to be copied
 * before returning (e.g. evbuffer_add); the engine wipes its own buffer of a
 * re-serialized head once to_upstream returns, as it may hold a secret, so
 * the caller's copy is the only one left (conn.c: its output buffer).
 * Return 0, or < 0 to fail: the engine then ends (GW_H1_DONE).
 * record: one call per request, in request order, exactly once each.
 */
struct gw_h1_ops {
	int (*to_client)(void *user, const uint8_t *buf, size_t len);
	int (*to_upstream)(void *user, const uint8_t *buf, size_t len);
	void (*record)(void *user, const struct gw_h1_record *rec);
};

struct gw_h1;

/*
 * gw_h1_new() - an engine for one client connection.
 * @ctx: netd's decision for the connection (SNI, rule, credentials, rate);
 * borrowed, must outlive the engine.  @port: the port the client connected
 * to (Host's :port must be it).  @rate: the worker's buckets, borrowed;
 * NULL: no rate limit.  @ops, @user: borrowed.
 * Return: the engine, caller frees with gw_h1_free(); NULL: no memory.
 */
struct gw_h1 *gw_h1_new(const struct gw_req_ctx *ctx, uint16_t port, struct gw_rate *rate,
			const struct gw_h1_ops *ops, void *user);

/*
 * gw_h1_abort() - the connection ends now: every request still pending
 * gets its record, with @reason (static storage; NULL: "connection-closed")
 * where it has none; then GW_H1_DONE.  A no-op once done.
 */
void gw_h1_abort(struct gw_h1 *h, const char *reason, uint64_t now_ns);

/*
 * gw_h1_free() - free @h; requests still pending get no record (call
 * gw_h1_abort(), gw_h1_client_eof() or gw_h1_upstream_error() first for
 * them).  NULL is a no-op.
 */
void gw_h1_free(struct gw_h1 *h);

#define GW_H1_READ_CLIENT 0x1	/* the engine takes client bytes now */
#define GW_H1_DONE        0x2	/* over: flush what was sent to the client, close both sides */
#define GW_H1_UPGRADED    0x4	/* a 101 switched the connection to raw pass-through */

/*
 * gw_h1_flags() - what the caller does next; read after every call.
 * Backpressure: without GW_H1_READ_CLIENT (GW_H1_QUEUE_MAX requests
 * await answers, or a WebSocket upgrade awaits its answer), stop reading
 * the client and keep the bytes gw_h1_from_client() did not take; feed
 * them again when the flag is back (it returns inside
 * gw_h1_from_upstream() as answers complete).  The other way, the engine
 * never holds bytes: the caller stops reading the upstream while its
 * client output is over its high-water mark, and the client while its
 * upstream output is.
 */
unsigned int gw_h1_flags(const struct gw_h1 *h);

/*
 * gw_h1_from_client() - bytes the client sent, @len of them, at @now_ns
 * (monotonic nanoseconds).  A request that fails the strict reading gets a
 * 400 (Connection: close) in its turn and the connection ends; a refused
 * request gets its refusal in its turn, and the connection stays when its
 * body can be skipped (length or chunked, no Expect: 100-continue) and it
 * was keep-alive.  Bytes after the last request of a closing connection
 * are taken and dropped.
 * Return: bytes taken (< @len only while GW_H1_READ_CLIENT is clear).
 */
size_t gw_h1_from_client(struct gw_h1 *h, const uint8_t *buf, size_t len, uint64_t now_ns);

/*
 * gw_h1_from_upstream() - bytes the upstream sent.  Always takes them all.
 * A response head that fails the strict reading, an answer to nothing or a
 * 101 to a request without Upgrade: 502 "bad-response" if the client got
 * nothing of the answer yet, then the connection ends.
 */
void gw_h1_from_upstream(struct gw_h1 *h, const uint8_t *buf, size_t len, uint64_t now_ns);

/*
 * gw_h1_client_eof() - the client closed (or half-closed) its side.  A
 * request cut short is answered 400 when nothing else is owed before it
 * (for a forwarded one the connection just ends); answers still owed to
 * complete requests are delivered, then GW_H1_DONE.
 */
void gw_h1_client_eof(struct gw_h1 *h, uint64_t now_ns);

/*
 * gw_h1_upstream_eof() - the upstream closed.  Ends a close-delimited
 * response normally; during any other response, 502 "upstream-closed" if
 * the client got nothing of its answer yet (else the connection just ends).
 * With nothing pending the connection ends (a request still arriving is
 * answered 502 first).
 */
void gw_h1_upstream_eof(struct gw_h1 *h, uint64_t now_ns);

/*
 * gw_h1_upstream_error() - the caller's verdict on the upstream: @status 502
 * (@reason "upstream-failure": connect, TLS, verification) or 504
 * ("upstream-timeout"); @reason static storage.  The request waiting for
 * an answer gets @status (JSON body, X-Netd-Reason: @reason, Connection:
 * close) if the client got nothing of its answer yet; with none waiting,
 * the next request gets it.  Then the connection ends.
 */
void gw_h1_upstream_error(struct gw_h1 *h, unsigned int status, const char *reason,
			  uint64_t now_ns);

#endif
