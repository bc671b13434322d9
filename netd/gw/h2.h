/*
 * h2 - the API gateway's HTTP/2 engine for one client connection whose TLS
 * ALPN chose "h2" on both sides (the worker connects upstream first with the
 * client's ALPN offers, so both speak HTTP/2: no translation).  Two nghttp2
 * sessions: a server facing the sandbox and a client facing the upstream;
 * every client stream becomes one upstream stream, checked first with
 * gw_req_check() (netd/gw/req.h) and the caller's rate bucket.
 *
 * Pure apart from nghttp2: bytes in through gw_h2_from_client() and
 * gw_h2_from_upstream() (the caller passes the time), bytes out through
 * the ops, so the worker owns the sockets and the clock.  Never logs.
 * RFC 9113 (HTTP/2), RFC 9110 (semantics), RFC 7541 (HPACK).
 *
 * Not here: TLS, sockets, timers (the caller's), extended CONNECT
 * (RFC 8441, WebSocket over HTTP/2: SETTINGS_ENABLE_CONNECT_PROTOCOL is
 * never sent, so nghttp2 refuses :protocol; a plain CONNECT gets 405),
 * server push (disabled upstream), h2c and the HTTP/1.1 Upgrade.
 */
#ifndef NETD_GW_H2_H
#define NETD_GW_H2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netd/gw/h2buf.h"	/* GW_H2_MAX_HEADER_LIST, GW_H2_STREAM_WINDOW, ... */
#include "netd/gw/req.h"

#define GW_H2_MAX_STREAMS 100		/* SETTINGS_MAX_CONCURRENT_STREAMS to the client */
#define GW_H2_CONN_WINDOW (256 * 1024)	/* connection receive window, both sessions */
#define GW_H2_MAX_RST_PER_S 100		/* RST_STREAM from the client a second, then GOAWAY */
#define GW_H2_MAX_CONTINUATIONS 8	/* CONTINUATION frames after one HEADERS */

struct gw_h2;

/*
 * One finished stream, for the "http" audit record: the same names as
 * H1's struct gw_h1_record (netd/gw/h1.h, not on main yet) so the worker
 * maps both alike; stream_id and error_code are HTTP/2's own.  Bytes are
 * the stream's on the client's connection, head and body, as HTTP/1's are
 * (docs/audit.md): the payloads of its HEADERS and CONTINUATION frames
 * (the header blocks as HPACK compressed them, trailers included) and of
 * its DATA frames (padding aside); not the 9-byte frame headers nor
 * connection-level frames.  Every pointer is borrowed for the
 * duration of the ops->record() call only.
 */
struct gw_h2_record {
	int32_t stream_id;		/* the client's stream */
	const char *method;		/* "" when the request never completed its headers */
	const char *host;		/* :authority, or Host when absent; "" if neither */
	const char *path;		/* :path without its query string; "" if none */
	unsigned int status;		/* final status sent to the client; 0: none (reset) */
	uint64_t request_bytes;		/* request header block and body bytes received
					 * (forwarded or not) */
	uint64_t response_bytes;	/* response header block bytes sent and body bytes
					 * handed to the client's session */
	uint64_t start_ns;		/* request headers began */
	uint64_t first_byte_ns;		/* response headers (or the refusal) out; 0: none */
	uint64_t end_ns;		/* the client's stream closed */
	const char *credential;		/* credential rewritten or misdirected, or NULL */
	const char *reason;		/* refusal/failure word, NULL when forwarded */
	bool refused;			/* answered by the checks (400, 403, 405, 421, 429, 431) */
	uint32_t error_code;		/* RST_STREAM/GOAWAY code the stream ended with; 0 */
};

/*
 * What the engine calls.  Never re-enter the engine from an op.
 * to_client/to_upstream: take all @len bytes (append them to the socket's
 * output buffer); @buf is borrowed for the call.  Return 0, or -errno to
 * fail the connection (the engine function returns it).
 * rate_take: take one token of the (sandbox, rule) bucket, gw_rate_take()
 * (netd/gw/rate.h) in the worker; return 0 when taken, -EAGAIN when over the
 * rate with *@retry_after_s set (>= 1).  NULL: no rate.
 * record: one per client stream, when it closes (or at gw_h2_free()).
 */
struct gw_h2_ops {
	int (*to_client)(void *user, const uint8_t *buf, size_t len);
	int (*to_upstream)(void *user, const uint8_t *buf, size_t len);
	int (*rate_take)(void *user, uint64_t now_ns, uint32_t *retry_after_s);
	void (*record)(void *user, const struct gw_h2_record *rec);
};

/*
 * gw_h2_new() - an engine for one connection.
 * @ctx: the connection's decision (SNI, rule, credentials); borrowed until
 * gw_h2_free() (credential values are referenced, never copied).
 * @port: the connection's original destination port (for :authority).
 * @ops, @user: borrowed until gw_h2_free().
 * Nothing is sent until gw_h2_start().
 * Return: the engine (caller frees with gw_h2_free()), or NULL (ENOMEM).
 */
struct gw_h2 *gw_h2_new(const struct gw_req_ctx *ctx, uint16_t port,
			const struct gw_h2_ops *ops, void *user, uint64_t now_ns);

/*
 * gw_h2_start() - queue the server's SETTINGS (max concurrent streams
 * GW_H2_MAX_STREAMS, header list GW_H2_MAX_HEADER_LIST) and window to the
 * client, and the connection preface and SETTINGS (push disabled) to the
 * upstream, and send them through the ops.
 * Return: 0; -ENOMEM; an op's error.
 */
int gw_h2_start(struct gw_h2 *h2, uint64_t now_ns);

/*
 * gw_h2_from_client() / gw_h2_from_upstream() - bytes read from that side's
 * TLS stream, in order (any split; the client's start with the preface).
 * @buf, @len: not retained.  Everything that follows is sent through the
 * ops before returning.
 *
 * Backpressure: body bytes are acknowledged (WINDOW_UPDATE) to their
 * sender only once handed to the other side's session, so the engine
 * holds at most GW_H2_STREAM_WINDOW bytes of a stream and
 * GW_H2_CONN_WINDOW of a connection in each direction, and a slow reader
 * slows the sender through HTTP/2 flow control.  The engine writes only
 * from these calls, gw_h2_start() and gw_h2_upstream_failed(): a worker
 * whose output buffer toward one side passes its high-water mark stops
 * reading the other side (and its own, for control frames) until it drains;
 * nothing needs to be called on resume.
 *
 * Errors are per stream where HTTP/2 allows it: a refused or failed request
 * gets its status on its own stream, the others go on.
 * Return: 0 to go on; -EPROTO when that side broke HTTP/2 (a bad frame, a
 * flood: the client got GOAWAY; from the upstream, its open streams got
 * 502 or RST_STREAM and the client a GOAWAY): flush what the ops got, then
 * close both; -ENOMEM; an op's error (close at once).
 */
int gw_h2_from_client(struct gw_h2 *h2, const uint8_t *buf, size_t len, uint64_t now_ns);
int gw_h2_from_upstream(struct gw_h2 *h2, const uint8_t *buf, size_t len, uint64_t now_ns);

/*
 * gw_h2_upstream_failed() - the upstream connection is gone (closed, TLS or
 * read error: @status 502) or did not answer in the caller's time (504),
 * for the reason word @reason (static storage, e.g. "upstream-failure",
 * "upstream-timeout").  Streams still waiting for response headers get
 * @status with x-netd-reason @reason and a JSON body; streams whose
 * response had begun get RST_STREAM(INTERNAL_ERROR); the client gets
 * GOAWAY(NO_ERROR), so it opens a new connection for more requests.  The
 * upstream's bytes are ignored from now on.  Idempotent (the first wins).
 * Return: 0; -ENOMEM; an op's error.
 */
int gw_h2_upstream_failed(struct gw_h2 *h2, unsigned int status, const char *reason,
			  uint64_t now_ns);

/*
 * gw_h2_finished() - true when the client's session will read and write
 * nothing more (GOAWAY either way and no stream left): close after flushing.
 */
bool gw_h2_finished(const struct gw_h2 *h2);

/*
 * gw_h2_free() - free the engine (NULL-safe); a stream still open gets its
 * record now (end_ns = the last time passed in, error_code CANCEL).
 */
void gw_h2_free(struct gw_h2 *h2);

#endif
