/*
 * gw/conn - one steered connection in the gateway worker (netd/gw/conn.h).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/reason.h"
#include "netd/gw/conn.h"
#include "netd/gw/engine.h"
#include "netd/gw/leafcache.h"
#include "netd/sni/sni.h"

#define PEEK_TIMEOUT_S   10	/* the ClientHello must be complete by then */
#define ASK_TIMEOUT_S    5	/* netd's verdict */
#define HIGH_WATER       (256 * 1024)	/* bytes queued to one side before the other is paused */
#define LINGER_MS        2000	/* after our last byte: the sandbox's unread bytes drained */
#define LINGER_MAX_MS    10000	/* ... while it keeps sending, at most this long */

enum conn_state {
	CS_PEEK,		/* reading the ClientHello without consuming it */
	CS_ASK,			/* waiting for netd */
	CS_PASS,		/* splicing to the original destination */
	CS_UPSTREAM,		/* TLS to the upstream under way */
	CS_HANDSHAKE,		/* TLS to the sandbox under way */
	CS_RUN,			/* the HTTP engine between them */
};

struct gw_conn {
	struct gw_worker *w;
	struct gw_conn *prev, *next;	/* every live connection */
	uint64_t id;
	enum conn_state state;
	int fd;			/* the sandbox's socket until a bufferevent owns it */
	struct event *timer;	/* peek/ask deadline, then the idle check */
	uint64_t last_ms;	/* last byte either way (idle timeout) */
	uint64_t peek_end_ms;	/* the ClientHello's deadline, from accept */
	struct gw_ipc_ask ask;
	struct sockaddr_storage orig;	/* SO_ORIGINAL_DST */
	socklen_t orig_len;
	struct gw_ipc_verdict v;
	struct bufferevent *cli, *up;
	bool h2;		/* the protocol both sides speak */
	unsigned int up_fail;	/* 502/504 if the upstream failed before the sandbox's TLS */
	const char *up_reason;
	struct gw_engine *engine;
	bool closing;		/* flush what is queued to the sandbox, then close */
	/* Values a rotation replaced: an engine may still point at one (an
	 * HTTP/2 header not yet written), so they are wiped at the end. */
	struct retired { uint8_t *p; size_t n; } *retired;
	size_t n_retired;
	bool lingering;		/* ... flushed and shut for writing: drain until its EOF */
	uint64_t linger_ms;	/* ... since then (monotonic ms) */
	const char *end_reason;	/* why requests still open at the end ended; NULL: connection-closed */
};

int gw_worker_send(struct gw_worker *w, const char *msg, size_t len)
{
	if (send(w->chan, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return -errno;
	return 0;
}

int gw_conn_new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct gw_conn *c = SSL_get_app_data(ssl);

	if (!c)
		return 0;
	gw_leafcache_session_put(c->w->leaves, c->ask.sni, sess);
	return 1;	/* the cache took the reference */
}

const char *gw_conn_alpn(const struct gw_conn *c)
{
	return c && c->h2 ? "h2" : "http/1.1";
}

static void conn_link(struct gw_worker *w, struct gw_conn *c)
{
	c->next = w->conns;
	if (w->conns)
		w->conns->prev = c;
	w->conns = c;
	w->n_conns++;
}

static void conn_free(struct gw_conn *c)
{
	struct gw_worker *w = c->w;

	if (c->prev)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	w->n_conns--;
	if (c->engine) {
		/* the requests still open get their records: why they ended */
		gw_engine_abort(c->engine, c->end_reason, clock_mono_us() * 1000);
		gw_engine_free(c->engine);
	}
	if (c->timer)
		event_free(c->timer);
	if (c->cli && c->state != CS_PASS && bufferevent_openssl_get_ssl(c->cli) &&
	    !(SSL_get_shutdown(bufferevent_openssl_get_ssl(c->cli)) & SSL_SENT_SHUTDOWN))
		SSL_shutdown(bufferevent_openssl_get_ssl(c->cli));	/* close_notify */
	if (c->cli)
		bufferevent_free(c->cli);
	else if (c->fd >= 0)
		close(c->fd);
	if (c->up)
		bufferevent_free(c->up);
	gw_ipc_verdict_clear(&c->v);
	for (size_t i = 0; i < c->n_retired; i++) {
		explicit_bzero(c->retired[i].p, c->retired[i].n);
		free(c->retired[i].p);
	}
	free(c->retired);
	free(c);
}

/* Close at once with a TCP RST: a refusal, or a connection we cannot serve. */
static void conn_reset(struct gw_conn *c)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };
	int fd = c->cli ? bufferevent_getfd(c->cli) : c->fd;

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	conn_free(c);
}

static void arm(struct gw_conn *c, uint64_t ms);

/*
 * All of it left: close_notify, FIN, then read and drop what the sandbox
 * still sends until its EOF, LINGER_MS of quiet or LINGER_MAX_MS.  Closing a socket with unread
 * bytes sends an RST, which can destroy our last answer (a 400 for a head
 * too big, sent while the rest of the head was arriving) before the
 * sandbox read it.
 */
static void conn_linger(struct gw_conn *c)
{
	SSL *ssl = c->state != CS_PASS ? bufferevent_openssl_get_ssl(c->cli) : NULL;
	int fd = bufferevent_getfd(c->cli);

	if (ssl)
		SSL_shutdown(ssl);
	if (fd < 0 || shutdown(fd, SHUT_WR) < 0 || !c->timer) {
		conn_free(c);
		return;
	}
	c->lingering = true;
	c->linger_ms = clock_mono_ms();
	arm(c, LINGER_MS);
}

/* Close once what is queued for the sandbox has left (conn_linger()). */
static void conn_finish(struct gw_conn *c)
{
	if (!c->cli) {
		conn_free(c);
		return;
	}
	c->closing = true;
	if (c->up) {
		bufferevent_free(c->up);
		c->up = NULL;
	}
	if (evbuffer_get_length(bufferevent_get_output(c->cli)) == 0) {
		/* Our last bytes are in the kernel already; the sandbox may still
		 * be sending (a flood we answered with GOAWAY): linger all the
		 * same, or the close resets them away (gw_attack saw it under load). */
		bufferevent_enable(c->cli, EV_READ);
		conn_linger(c);
		return;
	}
	bufferevent_enable(c->cli, EV_READ);	/* read and dropped (on_read) */
	bufferevent_setwatermark(c->cli, EV_WRITE, 0, 0);	/* on_write once all left */
	/* a sandbox that never reads its answer: reset at the idle timeout (on_timer) */
	if (c->timer)
		arm(c, c->w->cfg.idle_timeout_ms);
}

static void touch(struct gw_conn *c)
{
	c->last_ms = clock_mono_ms();
}

static void arm(struct gw_conn *c, uint64_t ms)
{
	struct timeval tv = { .tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000 };

	event_add(c->timer, &tv);
}

static void upstream_ready(struct gw_conn *c);

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct gw_conn *c = arg;
	uint64_t idle = c->w->cfg.idle_timeout_ms, quiet = clock_mono_ms() - c->last_ms;

	if (c->lingering && quiet < LINGER_MS && clock_mono_ms() - c->linger_ms < LINGER_MAX_MS) {
		/* Still sending (a flood we answered with GOAWAY, slowly): a close
		 * now would reset our answer away before it is read. */
		arm(c, LINGER_MS - quiet);
		return;
	}
	if (c->lingering) {
		/* Take what arrived last, so the close sends FIN, not RST, if it stopped. */
		int cfd = bufferevent_getfd(c->cli);
		char junk[4096];

		for (int i = 0; cfd >= 0 && i < 256 && recv(cfd, junk, sizeof(junk), MSG_DONTWAIT) > 0; i++)
			;
		conn_free(c);
		return;
	}
	if (c->closing) {
		conn_reset(c);	/* what was queued for it did not leave in time */
		return;
	}
	if (c->state == CS_RUN || c->state == CS_PASS) {
		if (quiet < idle) {
			arm(c, idle - quiet);
			return;
		}
		conn_finish(c);
		return;
	}
	if (c->state == CS_UPSTREAM) {
		/* The upstream took too long: the sandbox gets a 504 once its TLS is up. */
		c->up_fail = 504;
		c->up_reason = reason_gw_name(REASON_GW_UPSTREAM_TIMEOUT);
		bufferevent_free(c->up);
		c->up = NULL;
		upstream_ready(c);
		return;
	}
	conn_reset(c);	/* no ClientHello, no verdict or no handshake in time */
}

/* ---- bytes between the two sides ---------------------------------------- */

static struct bufferevent *other(struct gw_conn *c, struct bufferevent *bev)
{
	return bev == c->cli ? c->up : c->cli;
}

static size_t queued(struct bufferevent *bev)
{
	return bev ? evbuffer_get_length(bufferevent_get_output(bev)) : 0;
}

/*
 * The sandbox may send again: the engine wants its bytes and neither what
 * goes to the upstream nor what goes back to the sandbox itself (refusals,
 * HTTP/2 SETTINGS and PING acknowledgements) is above the mark.  A client
 * that never reads is held by TCP, not by the worker's memory.
 */
static void resume_client(struct gw_conn *c)
{
	if (!c->engine || !c->cli || !(gw_engine_flags(c->engine) & GW_ENGINE_READ_CLIENT))
		return;
	if (queued(c->up) > HIGH_WATER || queued(c->cli) > HIGH_WATER)
		return;
	bufferevent_enable(c->cli, EV_READ);
}

/*
 * The upstream may send again: neither what goes to the sandbox nor what
 * goes back to the upstream itself (HTTP/2 SETTINGS and PING
 * acknowledgements) is above the mark.  An upstream that floods frames
 * asking for answers and never reads them is held by TCP, not by the
 * worker's memory.
 */
static void resume_upstream(struct gw_conn *c)
{
	if (!c->up || queued(c->cli) > HIGH_WATER || queued(c->up) > HIGH_WATER)
		return;
	bufferevent_enable(c->up, EV_READ);
}

/* A side drained below the mark: what writes to it may read again. */
static void on_write(struct bufferevent *bev, void *arg)
{
	struct gw_conn *c = arg;
	struct bufferevent *o = other(c, bev);

	if (c->closing && bev == c->cli) {
		if (!c->lingering)
			conn_linger(c);
		return;
	}
	if (c->state != CS_RUN) {
		if (o)
			bufferevent_enable(o, EV_READ);
		return;
	}
	resume_upstream(c);
	resume_client(c);
}

/* Pause @from while what it produced for @to is above the mark. */
static void backpressure(struct gw_conn *c, struct bufferevent *from, struct bufferevent *to)
{
	if (queued(to) > HIGH_WATER)
		bufferevent_disable(from, EV_READ);
}

/* Client bytes into the engine, as many as it takes now. */
static void feed_client(struct gw_conn *c, uint64_t now)
{
	struct evbuffer *in = bufferevent_get_input(c->cli);

	while (evbuffer_get_length(in) && (gw_engine_flags(c->engine) & GW_ENGINE_READ_CLIENT)) {
		struct evbuffer_iovec v;
		size_t took;

		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			break;
		took = gw_engine_from_client(c->engine, v.iov_base, v.iov_len, now);
		evbuffer_drain(in, took);
		if (took < v.iov_len)
			break;
	}
}

/* After the engine ran: end, or pause and resume the sandbox's reading. */
static void engine_after(struct gw_conn *c)
{
	unsigned int f = gw_engine_flags(c->engine);

	if (f & GW_ENGINE_DONE) {
		conn_finish(c);
		return;
	}
	if (!(f & GW_ENGINE_READ_CLIENT))
		bufferevent_disable(c->cli, EV_READ);
	else if (!(bufferevent_get_enabled(c->cli) & EV_READ))
		resume_client(c);
	backpressure(c, c->cli, c->up);
	backpressure(c, c->cli, c->cli);	/* what it made us answer, unread */
	if (c->up) {
		backpressure(c, c->up, c->cli);
		backpressure(c, c->up, c->up);	/* the same, of the upstream */
	}
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct gw_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	uint64_t now = clock_mono_us() * 1000;

	touch(c);
	if (c->closing) {
		evbuffer_drain(in, evbuffer_get_length(in));	/* after our last answer */
		return;
	}
	if (c->state == CS_PASS) {
		if (other(c, bev))
			bufferevent_write_buffer(other(c, bev), in);
		else
			evbuffer_drain(in, evbuffer_get_length(in));
		backpressure(c, bev, other(c, bev));
		return;
	}
	if (bev == c->cli) {
		feed_client(c, now);
	} else {
		while (evbuffer_get_length(in)) {
			struct evbuffer_iovec v;

			if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
				break;
			gw_engine_from_upstream(c->engine, v.iov_base, v.iov_len, now);
			evbuffer_drain(in, v.iov_len);
		}
		/* Answers completed may let held client bytes in. */
		if (c->cli && (gw_engine_flags(c->engine) & GW_ENGINE_READ_CLIENT))
			feed_client(c, now);
	}
	engine_after(c);
}

/* Engine output (netd/gw/engine.h ops). */
static int out_client(void *arg, const void *buf, size_t len)
{
	struct gw_conn *c = arg;

	return c->cli ? bufferevent_write(c->cli, buf, len) : -EPIPE;
}

static int out_upstream(void *arg, const void *buf, size_t len)
{
	struct gw_conn *c = arg;

	return c->up ? bufferevent_write(c->up, buf, len) : -EPIPE;
}

static void out_record(void *arg, const struct gw_ipc_http *rec)
{
	struct gw_conn *c = arg;
	char *msg;
	size_t len;

	if (gw_ipc_encode_http(rec, &msg, &len) < 0) {
		/* netd quotes this into its log: a request without its record is said */
		fprintf(stderr, "gateway: a request's record (sandbox %s, status %u) could not "
			"be encoded; it is lost\n", rec->sandbox, rec->status);
		return;
	}
	gw_worker_send(c->w, msg, len);
	free(msg);
}

static void on_event(struct bufferevent *bev, short what, void *arg);
static void nodelay(int fd);

/* ---- pass: a splice to the original destination ------------------------- */

static void start_pass(struct gw_conn *c)
{
	c->state = CS_PASS;
	c->cli = bufferevent_socket_new(c->w->base, c->fd, BEV_OPT_CLOSE_ON_FREE);
	c->up = bufferevent_socket_new(c->w->base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!c->cli || !c->up) {
		conn_reset(c);
		return;
	}
	c->fd = -1;
	bufferevent_setcb(c->cli, on_read, on_write, on_event, c);
	bufferevent_setcb(c->up, on_read, on_write, on_event, c);
	bufferevent_setwatermark(c->cli, EV_WRITE, HIGH_WATER / 2, 0);
	bufferevent_setwatermark(c->up, EV_WRITE, HIGH_WATER / 2, 0);
	if (bufferevent_socket_connect(c->up, (struct sockaddr *)&c->orig, (int)c->orig_len) < 0) {
		conn_reset(c);
		return;
	}
	bufferevent_enable(c->cli, EV_READ);
	touch(c);
	arm(c, c->w->cfg.idle_timeout_ms);
}

/* ---- gateway: upstream TLS first, then the sandbox's -------------------- */

/* The ALPN list to offer the upstream: what the sandbox offered, of h2 and http/1.1. */
static void offer_alpn(SSL *ssl, unsigned int alpn)
{
	unsigned char list[16];
	size_t n = 0;

	if (alpn & SNI_ALPN_H2) {
		memcpy(list + n, "\x02h2", 3);
		n += 3;
	}
	if ((alpn & SNI_ALPN_HTTP11) || !(alpn & SNI_ALPN_H2)) {
		memcpy(list + n, "\x08http/1.1", 9);
		n += 9;
	}
	SSL_set_alpn_protos(ssl, list, (unsigned int)n);
}

static void start_client_tls(struct gw_conn *c);

static void start_upstream(struct gw_conn *c)
{
	SSL *ssl = SSL_new(c->w->up_ctx);
	SSL_SESSION *sess;

	c->state = CS_UPSTREAM;
	if (!ssl || SSL_set_tlsext_host_name(ssl, c->ask.sni) != 1 ||
	    SSL_set1_host(ssl, c->ask.sni) != 1) {
		SSL_free(ssl);
		conn_reset(c);
		return;
	}
	offer_alpn(ssl, c->ask.alpn);
	SSL_set_app_data(ssl, c);
	sess = gw_leafcache_session_get(c->w->leaves, c->ask.sni);
	if (sess) {
		SSL_set_session(ssl, sess);	/* resume: no full handshake, a shared peer chain */
		SSL_SESSION_free(sess);
	}
	c->up = bufferevent_openssl_socket_new(c->w->base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
					       BEV_OPT_CLOSE_ON_FREE);
	if (!c->up) {
		conn_reset(c);
		return;
	}
	bufferevent_setcb(c->up, on_read, on_write, on_event, c);
	bufferevent_setwatermark(c->up, EV_WRITE, HIGH_WATER / 2, 0);
	if (bufferevent_socket_connect(c->up, (struct sockaddr *)&c->orig, (int)c->orig_len) < 0) {
		c->up_fail = 502;
		c->up_reason = reason_gw_name(REASON_GW_UPSTREAM_CONNECT);
		bufferevent_free(c->up);
		c->up = NULL;
		start_client_tls(c);
		return;
	}
	arm(c, c->w->cfg.connect_timeout_ms);
}

/* The upstream's TLS is up (or failed): choose the protocol, then the sandbox's TLS. */
static void upstream_ready(struct gw_conn *c)
{
	const unsigned char *p = NULL;
	unsigned int n = 0;

	if (c->up) {
		SSL_get0_alpn_selected(bufferevent_openssl_get_ssl(c->up), &p, &n);
		c->h2 = n == 2 && !memcmp(p, "h2", 2);
		bufferevent_disable(c->up, EV_READ);	/* until the engine is there */
	} else {
		/* No upstream: speak what the sandbox prefers, to tell it why. */
		c->h2 = (c->ask.alpn & SNI_ALPN_H2) && !(c->ask.alpn & SNI_ALPN_HTTP11);
	}
	event_del(c->timer);
	start_client_tls(c);
}

static SSL *leaf_ssl(struct gw_conn *c)
{
	SSL *ssl = SSL_new(c->w->cli_ctx);
	X509 *cert = NULL;
	EVP_PKEY *key = NULL;
	bool ok = ssl && gw_leafcache_get(c->w->leaves, c->ask.sni, c->v.cert_pem, c->v.key_pem,
					  &cert, &key) == 0 &&
		  SSL_use_certificate(ssl, cert) == 1 && SSL_use_PrivateKey(ssl, key) == 1;

	X509_free(cert);
	EVP_PKEY_free(key);
	/* The PEM is parsed (and shared): this connection keeps no copy of it. */
	free(c->v.cert_pem);
	c->v.cert_pem = NULL;
	if (c->v.key_pem) {
		explicit_bzero(c->v.key_pem, strlen(c->v.key_pem));
		free(c->v.key_pem);
		c->v.key_pem = NULL;
	}
	if (!ok) {
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_app_data(ssl, c);
	return ssl;
}

static void start_client_tls(struct gw_conn *c)
{
	SSL *ssl = leaf_ssl(c);

	c->state = CS_HANDSHAKE;
	if (!ssl) {
		log_warn("gateway worker: cannot use the leaf for %s", c->ask.sni);
		conn_reset(c);
		return;
	}
	c->cli = bufferevent_openssl_socket_new(c->w->base, c->fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
						BEV_OPT_CLOSE_ON_FREE);
	if (!c->cli) {
		conn_reset(c);
		return;
	}
	c->fd = -1;
	bufferevent_setcb(c->cli, on_read, on_write, on_event, c);
	bufferevent_setwatermark(c->cli, EV_WRITE, HIGH_WATER / 2, 0);
	bufferevent_enable(c->cli, EV_READ);
	arm(c, c->w->cfg.connect_timeout_ms);
}

/* The sandbox's TLS is up: the engine runs. */
static void client_ready(struct gw_conn *c)
{
	static const struct gw_engine_io io = {
		.to_client = out_client, .to_upstream = out_upstream, .record = out_record,
	};
	struct gw_engine_conf conf = {
		.h2 = c->h2, .no_upstream = c->up_fail != 0, .v = &c->v, .rate = c->w->rate, .port = c->ask.dport,
		.sni = c->ask.sni, .dst = &c->ask.dst, .io = &io, .arg = c,
	};

	c->engine = gw_engine_new(&conf);
	if (!c->engine) {
		conn_reset(c);
		return;
	}
	c->state = CS_RUN;
	if (c->up_fail)
		gw_engine_upstream_failed(c->engine, c->up_fail, c->up_reason,
					  clock_mono_us() * 1000);
	else
		bufferevent_enable(c->up, EV_READ);
	touch(c);
	arm(c, c->w->cfg.idle_timeout_ms);
	/* Bytes the sandbox sent with its handshake are in the input already. */
	feed_client(c, clock_mono_us() * 1000);
	engine_after(c);
}

/* Why an upstream's TLS failed, for the 502's reason. */
static const char *upstream_error(struct bufferevent *bev)
{
	unsigned long e = bufferevent_get_openssl_error(bev);

	if (!e)
		return reason_gw_name(REASON_GW_UPSTREAM_CONNECT);
	return reason_gw_name(ERR_GET_REASON(e) == SSL_R_CERTIFICATE_VERIFY_FAILED
			      ? REASON_GW_UPSTREAM_UNTRUSTED : REASON_GW_UPSTREAM_TLS);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct gw_conn *c = arg;
	bool up = bev == c->up;

	if (c->closing) {
		if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
			conn_free(c);	/* the sandbox is done too */
		return;
	}
	if (what & BEV_EVENT_CONNECTED) {
		touch(c);
		if (up)
			nodelay(bufferevent_getfd(bev));
		if (up && c->state == CS_UPSTREAM)
			upstream_ready(c);
		else if (!up && c->state == CS_HANDSHAKE)
			client_ready(c);
		return;
	}
	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)))
		return;
	if (up && c->state == CS_UPSTREAM) {
		c->up_fail = 502;
		c->up_reason = upstream_error(bev);
		while (bufferevent_get_openssl_error(bev))
			;
		bufferevent_free(c->up);
		c->up = NULL;
		upstream_ready(c);
		return;
	}
	if (up && c->state == CS_RUN) {
		/* The upstream closed: the engine ends a close-delimited response. */
		bufferevent_free(c->up);
		c->up = NULL;
		gw_engine_upstream_eof(c->engine, clock_mono_us() * 1000);
		engine_after(c);
		return;
	}
	if (!up && c->state == CS_RUN && (what & BEV_EVENT_EOF) && (what & BEV_EVENT_READING)) {
		/*
		 * The sandbox's close_notify.  libevent's TLS bufferevent stops
		 * writing with it, so a response still on its way would queue
		 * for good while the upstream streams on (each byte keeping the
		 * connection from its idle timeout).  Writing resumes: the
		 * response leaves if the sandbox only half-closed, and a write to
		 * one that is gone ends in EOF or an error while writing, which
		 * frees the connection and its upstream (below).
		 */
		bufferevent_enable(bev, EV_WRITE);
		gw_engine_client_eof(c->engine, clock_mono_us() * 1000);
		engine_after(c);
		return;
	}
	if (up && c->state == CS_PASS) {
		bufferevent_free(c->up);
		c->up = NULL;
		conn_finish(c);
		return;
	}
	if (!up)
		c->end_reason = reason_gw_name(REASON_GW_CLIENT_CLOSED);
	conn_free(c);	/* the sandbox went, or its TLS failed */
}

/* ---- accept, peek, ask --------------------------------------------------- */

static void ask_netd(struct gw_conn *c)
{
	char *msg;
	size_t len;

	c->state = CS_ASK;
	if (gw_ipc_encode_ask(&c->ask, &msg, &len) < 0) {
		conn_reset(c);
		return;
	}
	if (gw_worker_send(c->w, msg, len) < 0) {
		free(msg);
		conn_reset(c);
		return;
	}
	free(msg);
	arm(c, ASK_TIMEOUT_S * 1000);
}

static void on_peek(evutil_socket_t fd, short what, void *arg)
{
	struct gw_conn *c = arg;
	static uint8_t buf[SNI_STREAM_MAX];
	struct sni_result res;
	ssize_t n;
	int low;

	if (what & EV_TIMEOUT) {
		conn_reset(c);
		return;
	}
	n = recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		conn_free(c);
		return;
	}
	if (sni_parse(buf, (size_t)n, &res) == SNI_MORE) {
		uint64_t now = clock_mono_ms();
		struct timeval tv;

		if (now >= c->peek_end_ms) {
			conn_reset(c);
			return;
		}
		/* Wake only when more than what we have arrived. */
		low = (int)n + 1;
		setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &low, sizeof(low));
		/*
		 * EV_PERSIST restarted the whole timeout as this ran: put back
		 * what is left of it, or a byte every few seconds would keep a
		 * connection in the peek for ever (slowloris).
		 */
		tv.tv_sec = (time_t)((c->peek_end_ms - now) / 1000);
		tv.tv_usec = (suseconds_t)((c->peek_end_ms - now) % 1000) * 1000;
		if (event_add(c->timer, &tv) < 0)
			conn_reset(c);
		return;
	}
	low = 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &low, sizeof(low));
	event_free(c->timer);
	c->timer = evtimer_new(c->w->base, on_timer, c);
	if (!c->timer) {
		conn_reset(c);
		return;
	}
	if (res.proto == SNI_PROTO_TLS && res.status == SNI_NAME)
		memcpy(c->ask.sni, res.name, strlen(res.name) + 1);
	c->ask.alpn = res.alpn;
	ask_netd(c);
}

/* Who connected, and where it was going before the redirect. */
static int conn_addrs(struct gw_conn *c)
{
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	int r;

	c->orig_len = sizeof(c->orig);
	if (getpeername(c->fd, (struct sockaddr *)&peer, &pl) < 0)
		return -errno;
	if (peer.ss_family == AF_INET6 &&
	    !IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&peer)->sin6_addr))
		r = getsockopt(c->fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &c->orig, &c->orig_len);
	else
		r = getsockopt(c->fd, SOL_IP, SO_ORIGINAL_DST, &c->orig, &c->orig_len);
	if (r < 0)
		return -errno;
	if (peer.ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&peer)->sin6_addr)) {
		/* The dual-stack listener's view of an IPv4 peer: netd keys by IPv4. */
		struct sockaddr_in6 s6 = *(struct sockaddr_in6 *)&peer;
		struct sockaddr_in *s4 = (struct sockaddr_in *)&peer;

		memset(&peer, 0, sizeof(peer));
		s4->sin_family = AF_INET;
		s4->sin_port = s6.sin6_port;
		memcpy(&s4->sin_addr, &s6.sin6_addr.s6_addr[12], 4);
	}
	if (addr_from_sockaddr((struct sockaddr *)&peer, &c->ask.src) < 0 ||
	    addr_from_sockaddr((struct sockaddr *)&c->orig, &c->ask.dst) < 0)
		return -EAFNOSUPPORT;
	c->ask.sport = ntohs(peer.ss_family == AF_INET ? ((struct sockaddr_in *)&peer)->sin_port
						       : ((struct sockaddr_in6 *)&peer)->sin6_port);
	c->ask.dport = ntohs(c->orig.ss_family == AF_INET
				     ? ((struct sockaddr_in *)&c->orig)->sin_port
				     : ((struct sockaddr_in6 *)&c->orig)->sin6_port);
	return 0;
}

/*
 * No Nagle: a streamed answer (server-sent events, tokens) is many small
 * writes, each of which must leave at once, not wait for the ACK of the
 * last (40 ms of delayed ACK per event).
 */
static void nodelay(int fd)
{
	int one = 1;

	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void gw_conn_accept(struct gw_worker *w, int fd)
{
	struct gw_conn *c = calloc(1, sizeof(*c));
	struct timeval tv = { .tv_sec = PEEK_TIMEOUT_S };

	if (!c) {
		close(fd);
		return;
	}
	c->w = w;
	c->fd = fd;
	c->id = ++w->next_id;
	c->ask.id = c->id;
	nodelay(fd);
	c->v.rule = -1;
	c->peek_end_ms = clock_mono_ms() + PEEK_TIMEOUT_S * 1000;
	conn_link(w, c);
	if (conn_addrs(c) < 0) {
		conn_reset(c);	/* not steered to us: nobody's connection */
		return;
	}
	c->timer = event_new(w->base, fd, EV_READ | EV_PERSIST, on_peek, c);
	if (!c->timer || event_add(c->timer, &tv) < 0)
		conn_reset(c);
}

void gw_conn_verdict(struct gw_worker *w, struct gw_ipc_verdict *v)
{
	struct gw_conn *c = w->conns;

	while (c && !(c->state == CS_ASK && c->id == v->id))
		c = c->next;
	if (!c) {
		gw_ipc_verdict_clear(v);
		return;
	}
	c->v = *v;
	memset(v, 0, sizeof(*v));
	log_debug("gateway worker: connection %llu to %s: %s", (unsigned long long)c->id,
		  c->ask.sni, c->v.verdict == GW_IPC_GATEWAY ? "gateway" :
			      c->v.verdict == GW_IPC_PASS ? "pass" : "refuse");
	event_del(c->timer);
	switch (c->v.verdict) {
	case GW_IPC_PASS:
		start_pass(c);
		break;
	case GW_IPC_GATEWAY:
		start_upstream(c);
		break;
	default:
		conn_reset(c);
		break;
	}
}

/* One connection's copy of credential @name, if it holds its value: now @value. */
static void conn_rotate(struct gw_conn *c, const struct gw_cred *nc)
{
	for (size_t i = 0; i < c->v.n_creds; i++) {
		struct gw_cred *cr = &c->v.creds[i];
		struct retired *rt;
		uint8_t *b;

		if (!cr->value || strcmp(cr->name, nc->name) != 0)
			continue;
		rt = realloc(c->retired, (c->n_retired + 1) * sizeof(*rt));
		if (!rt || !(b = malloc(nc->value_len + 1))) {
			if (rt)
				c->retired = rt;
			continue;	/* keeps the old value: the next connection has the new */
		}
		c->retired = rt;
		rt[c->n_retired++] = (struct retired){ (uint8_t *)cr->value, cr->value_len };
		memcpy(b, nc->value, nc->value_len + 1);
		cr->value = b;
		cr->value_len = nc->value_len;
		cr->secret_off = nc->secret_off;
		cr->secret_len = nc->secret_len;
	}
}

void gw_conn_rotate(struct gw_worker *w, const struct gw_ipc_rotate *r)
{
	for (struct gw_conn *c = w->conns; c; c = c->next)
		for (size_t k = 0; k < r->n_creds; k++)
			conn_rotate(c, &r->creds[k]);
}

void gw_conn_close_all(struct gw_worker *w)
{
	while (w->conns)
		conn_free(w->conns);
}
