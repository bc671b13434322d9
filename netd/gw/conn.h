/*
 * gw/conn - one steered connection in the gateway worker, from accept to
 * close: the ClientHello read without consuming it (MSG_PEEK, SO_RCVLOWAT),
 * netd's verdict asked for, then either a splice to the original
 * destination (pass: TLS stays end to end) or the gateway: a TLS client to
 * the upstream first (SNI = the name, verified; ALPN = what the sandbox
 * offered), then TLS to the sandbox with netd's leaf and the upstream's
 * ALPN choice, and the HTTP engine of that protocol (netd/gw/h1.h,
 * netd/gw/h2.h) between them, streaming both ways with bounded buffers.
 */
#ifndef NETD_GW_CONN_H
#define NETD_GW_CONN_H

#include <stdint.h>

#include "netd/gw/ipc.h"

struct event_base;
struct gw_conn;
struct gw_rate;
struct gw_leafcache;
struct ssl_ctx_st;
struct ssl_st;
struct ssl_session_st;

/* The worker's state; one per process. */
struct gw_worker {
	struct event_base *base;
	int chan;		/* GW_IPC_FD_CHAN */
	struct ssl_ctx_st *up_ctx;	/* TLS to upstreams: verifies them */
	struct ssl_ctx_st *cli_ctx;	/* TLS to sandboxes: our leaves, ALPN */
	struct gw_ipc_config cfg;
	struct gw_rate *rate;	/* per (sandbox, rule) request buckets */
	struct gw_leafcache *leaves;	/* parsed leaves by name */
	uint64_t next_id;
	struct gw_conn *conns;	/* every live connection (list; netd/gw/conn.c) */
	unsigned int n_conns;	/* live connections */
};

/*
 * gw_worker_send() - send one message (JSON text @msg/@len) to netd.
 * Return: 0; -errno (EAGAIN: the channel is full: the message is lost and
 * the caller counts it).
 */
int gw_worker_send(struct gw_worker *w, const char *msg, size_t len);


/* gw_conn_accept() - take accepted socket @fd (non-blocking); closes it on failure. */
void gw_conn_accept(struct gw_worker *w, int fd);

/*
 * gw_conn_verdict() - netd's verdict @v for a waiting connection (by
 * v->id; an unknown id is ignored).  Takes what @v owns (cleared here).
 */
void gw_conn_verdict(struct gw_worker *w, struct gw_ipc_verdict *v);

/* gw_conn_alpn() - the ALPN protocol the sandbox's TLS must select: "h2" or "http/1.1". */
const char *gw_conn_alpn(const struct gw_conn *c);

/*
 * gw_conn_new_session() - OpenSSL's new-session callback of the upstream
 * context: keep the upstream's session for the connection's name
 * (netd/gw/leafcache.h).  Return: 1 (the reference was taken), 0.
 */
int gw_conn_new_session(struct ssl_st *ssl, struct ssl_session_st *sess);

/*
 * gw_conn_rotate() - a reload changed these credentials' secrets (@r):
 * every connection that holds one's value takes the new one for its next
 * request (the old is wiped when the connection ends).
 */
void gw_conn_rotate(struct gw_worker *w, const struct gw_ipc_rotate *r);

/* gw_conn_close_all() - close every connection (the worker is ending). */
void gw_conn_close_all(struct gw_worker *w);

#endif
