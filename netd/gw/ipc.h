/*
 * gw/ipc - the messages between netd and its gateway worker (netd/gw/worker.c):
 * one JSON object per AF_UNIX SOCK_SEQPACKET message, at most GW_IPC_MAX
 * bytes.  Pure: structs to bytes and back; the sockets are the callers'.
 *
 *   worker -> netd   "conn"  a new steered connection: who (source), where
 *                            it was going (SO_ORIGINAL_DST), the ClientHello's
 *                            server_name and ALPN offers
 *                    "http"  one request's record, for the audit log and metrics
 *   netd -> worker   "config" once, first: timeouts
 *                    "conn"  the verdict for a connection: gateway (a leaf for
 *                            the name, the rule's checks, the credentials),
 *                            pass (splice bytes untouched: the name has no
 *                            gateway: rule) or refuse (close)
 *
 * A verdict carries secrets (the credentials' header values) and a leaf's
 * private key: the buffers that held a message are the callers' to wipe.
 */
#ifndef NETD_GW_IPC_H
#define NETD_GW_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "netd/gw/req.h"

#define GW_IPC_MAX (64 * 1024)	/* bytes: one message */
#define GW_IPC_FD_LISTEN 3	/* the worker's listening TCP socket */
#define GW_IPC_FD_CHAN   4	/* the worker's end of the socketpair */
/* entries of a verdict's methods, paths, creds and a credential's hosts */
#define GW_IPC_LIST_MAX  GW_REQ_MAX_CREDS	/* 64: POLICY_GW_MAX_ITEMS, CONFIG_CRED_HOSTS_MAX */

/* "conn" from the worker: a connection to decide. */
struct gw_ipc_ask {
	uint64_t id;		/* the worker's, echoed in the verdict */
	struct addr src, dst;	/* the sandbox's address; the original destination */
	uint16_t sport, dport;	/* host byte order */
	char sni[254];		/* lower-case server_name, "" if none */
	unsigned int alpn;	/* SNI_ALPN_* bits offered (netd/sni/sni.h) */
};

enum gw_ipc_action {
	GW_IPC_REFUSE = 0,	/* close the connection */
	GW_IPC_PASS,		/* splice to dst untouched: end-to-end TLS */
	GW_IPC_GATEWAY,		/* terminate TLS, check, broker, forward */
};

/* "conn" from netd: the verdict.  Strings are owned by the struct (gw_ipc_verdict_clear()). */
struct gw_ipc_verdict {
	uint64_t id;
	enum gw_ipc_action verdict;
	char *reason;		/* why (refuse), the audit reason word; may be NULL */
	char *sandbox, *policy;
	int rule;		/* the gateway rule's index in the policy, -1 if none */
	char *cert_pem, *key_pem;	/* the leaf for sni (gateway only); key wiped on clear */
	char **methods, **paths;
	size_t n_methods, n_paths;
	uint32_t rate_milli, burst;	/* per sandbox and rule; 0 = no limit */
	/*
	 * Every credential: name, header, placeholder, hosts (for the
	 * refusal's message); values only where they may go.  Each string
	 * and the hosts array owned; the value wiped on clear.
	 */
	struct gw_cred *creds;
	size_t n_creds;
};

/* "config" from netd: what the worker needs once. */
struct gw_ipc_config {
	uint32_t connect_timeout_ms;	/* upstream TCP + TLS: past it, 504 */
	uint32_t idle_timeout_ms;	/* no byte either way: the connection is closed */
};

/* "http" from the worker: one request's record (docs/audit.md, event "http"). */
struct gw_ipc_http {
	char sandbox[64], policy[64];
	int rule;
	char method[32];
	char host[254];		/* Host / :authority as the sandbox sent it */
	char sni[254];		/* the connection's TLS server_name: a name of the policy */
	char path[512];		/* without the query; cut at 511 bytes */
	unsigned int status;	/* sent to the client; 0 if none was (connection lost) */
	uint64_t bytes_in, bytes_out;	/* request bytes from the sandbox, response bytes to it */
	uint64_t duration_us, ttfb_us;	/* request start to end; to the first response byte */
	char cred[64];		/* the credential used or misdirected, "" if none */
	char reason[32];	/* the gateway's refusal reason word, "" if forwarded */
	char upstream[48];	/* "198.51.100.10:443" */
	char proto[8];		/* "h1" or "h2" */
};

/*
 * gw_ipc_encode_*() - one message as JSON text, NUL-terminated, into a new
 * buffer (*@out, caller frees; wipe first for a verdict), *@len without
 * the NUL.  Return: 0; -EMSGSIZE over GW_IPC_MAX; -ENOMEM.
 */
int gw_ipc_encode_ask(const struct gw_ipc_ask *a, char **out, size_t *len);
int gw_ipc_encode_verdict(const struct gw_ipc_verdict *v, char **out, size_t *len);
int gw_ipc_encode_config(const struct gw_ipc_config *c, char **out, size_t *len);
int gw_ipc_encode_http(const struct gw_ipc_http *h, char **out, size_t *len);

/*
 * "rotate" from netd: the new values of credentials whose secret changed at
 * a reload (gw_cred's name and value only).  The worker puts each into the
 * connections that already hold that credential's value, so a rotated key
 * is used from the next request on, not only on new connections.
 */
struct gw_ipc_rotate {
	struct gw_cred *creds;	/* owned (gw_ipc_rotate_clear()) */
	size_t n_creds;
};

/* gw_ipc_encode_rotate() - as gw_ipc_encode_ask() above; the buffer holds secrets: wipe it. */
int gw_ipc_encode_rotate(const struct gw_ipc_rotate *r, char **out, size_t *len);

/* What a received message is. */
enum gw_ipc_type {
	GW_IPC_BAD = 0,
	GW_IPC_CONN,
	GW_IPC_CONFIG,
	GW_IPC_HTTP,
	GW_IPC_ROTATE,
};

/*
 * gw_ipc_type() - the "t" of message @buf/@len (not NUL-terminated) and,
 * for the decoders below, its parsed form (*@root, caller json_decref()s;
 * NULL for GW_IPC_BAD).  Strict: an object with a known "t" or GW_IPC_BAD
 * (also for @len over GW_IPC_MAX: a message the receive buffer cut).
 */
enum gw_ipc_type gw_ipc_type(const char *buf, size_t len, void **root);

/*
 * gw_ipc_decode_*() - the message @root (from gw_ipc_type()) into the
 * struct.  Every field is checked: types, ranges, string lengths, address
 * forms.  A verdict's strings are new copies (gw_ipc_verdict_clear()),
 * also on failure (cleared then).  Lists (methods, paths, creds, a
 * credential's hosts) hold at most GW_IPC_LIST_MAX non-empty strings; a
 * credential's value has no NUL, CR or LF.
 * Return: 0; -EBADMSG (what is wrong is not said: the peer is ours);
 * -ENOMEM.
 */
int gw_ipc_decode_ask(const void *root, struct gw_ipc_ask *a);
int gw_ipc_decode_verdict(const void *root, struct gw_ipc_verdict *v);
int gw_ipc_decode_config(const void *root, struct gw_ipc_config *c);
int gw_ipc_decode_http(const void *root, struct gw_ipc_http *h);
int gw_ipc_decode_rotate(const void *root, struct gw_ipc_rotate *r);

/* gw_ipc_rotate_clear() - free what @r owns, wiping the values. */
void gw_ipc_rotate_clear(struct gw_ipc_rotate *r);

/* gw_ipc_verdict_clear() - free what @v owns, wiping the key and the credential values. */
void gw_ipc_verdict_clear(struct gw_ipc_verdict *v);

/*
 * gw_ipc_wipe_allocators() - make jansson wipe every block it frees
 * (explicit_bzero of malloc_usable_size() bytes), so a secret that passed
 * through a JSON value leaves no copy in freed memory.  Call once, before
 * any jansson use, in each process that handles verdicts.
 */
void gw_ipc_wipe_allocators(void);

#endif
