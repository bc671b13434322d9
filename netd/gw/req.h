/*
 * req - the API gateway's check of one HTTP request, the same for HTTP/1.x
 * and HTTP/2 (netd/gw/h1.c, netd/gw/h2.c): Host/:authority against the TLS
 * server_name, the rule's methods and paths, the per-sandbox rate, and
 * credential brokering (a placeholder is replaced by its secret only on the
 * way to one of that credential's hosts; sent anywhere else it is refused).
 * Pure: memory in, a verdict and header rewrites out; never logs.
 * docs/gateway.md; RFC 9110 (7.2 Host, 9.1 methods, 15.5.20 421).
 */
#ifndef NETD_GW_REQ_H
#define NETD_GW_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GW_REQ_MAX_CREDS 64	/* credentials known to one connection */

/* One credential as the gateway process holds it (from netd, per connection). */
struct gw_cred {
	const char *name;	/* netd.yaml's name; in records, never the value */
	const char *header;	/* the header that carries it, e.g. "Authorization" */
	const char *placeholder;	/* what the sandbox holds; >= 16 bytes */
	/*
	 * The whole header value that replaces the sandbox's (the credential's
	 * format applied to its secret, e.g. "Bearer sk-..."): a request whose
	 * @header carries @placeholder anywhere in its value gets @header set to
	 * this,
	 * or NULL when this connection's name is not one of the credential's
	 * hosts: netd sends a secret only where it may go.  Bytes, not
	 * NUL-terminated; wiped by the owner when freed.
	 */
	const uint8_t *value;
	size_t value_len;
};

/* What netd decided for a connection (one SNI) once; every request is checked against it. */
struct gw_req_ctx {
	const char *sni;	/* lower-case server_name the leaf was minted for */
	const char *sandbox, *policy;
	int rule;		/* index of the gateway rule in the policy */
	const char *const *methods;	/* NULL/0: any */
	size_t n_methods;
	const char *const *paths;	/* NULL/0: any; exact, or prefix ending in '*' */
	size_t n_paths;
	const struct gw_cred *creds;	/* every credential of the config (placeholders) */
	size_t n_creds;
};

/* One request header, bytes as received (no NUL). */
struct gw_hdr {
	const char *name;
	size_t name_len;
	const char *value;
	size_t value_len;
};

/* Why a request is refused; the audit's reason words (common/reason.h). */
enum gw_req_verdict {
	GW_REQ_OK = 0,
	GW_REQ_MISDIRECTED,	/* 421 "host-mismatch": Host/:authority != SNI */
	GW_REQ_METHOD,		/* 403 "method-denied" */
	GW_REQ_PATH,		/* 403 "path-denied" */
	GW_REQ_RATE,		/* 429 "rate-limited", Retry-After */
	GW_REQ_CRED_MISDIRECTED,	/* 403 "credential-misdirected" */
	GW_REQ_BAD,		/* 400 "bad-request" (no Host, two Hosts, bad target) */
};

/* A header the engine must replace before forwarding: hdrs[index]'s whole value becomes cred->value. */
struct gw_rewrite {
	size_t index;		/* into the request's header array */
	const struct gw_cred *cred;	/* the credential whose value replaces the placeholder */
};

struct gw_req_result {
	enum gw_req_verdict verdict;
	unsigned int status;	/* HTTP status for a refusal; 0 when OK */
	const char *reason;	/* the audit reason word; NULL when OK */
	const char *cred_name;	/* the credential used or misdirected, or NULL */
	struct gw_rewrite rewrites[GW_REQ_MAX_CREDS];
	size_t n_rewrites;
};

/*
 * gw_req_check() - decide one request.
 * @ctx: the connection's decision; @method: the request method (token);
 * @authority: Host (HTTP/1.x) or :authority (HTTP/2), with an optional
 * :port, which must be the connection's port or absent; @path: the
 * request target's path (origin-form), query string included (the check
 * ignores it); @hdrs, @n: the other headers, in order.
 * A placeholder anywhere in a header value, the path or the query is
 * looked for: in the credential's header of a request to one of its hosts
 * (value != NULL) it becomes a rewrite; anywhere else the request is
 * GW_REQ_CRED_MISDIRECTED.  The rate is not checked here (gw_rate_take()).
 * Return: @res filled; never fails.
 */
void gw_req_check(const struct gw_req_ctx *ctx, const char *method, size_t method_len,
		  const char *authority, size_t authority_len, uint16_t port,
		  const char *path, size_t path_len, const struct gw_hdr *hdrs, size_t n,
		  struct gw_req_result *res);

/*
 * gw_req_refusal() - the body of a refusal: a JSON object naming the
 * sandbox, policy, rule and reason, with guidance for the agent, e.g.
 * {"error":"credential-misdirected","rule":"policy.yaml rule 2",...}.
 * Written into @buf (NUL-terminated, truncated to @size).  Return: length.
 */
size_t gw_req_refusal(const struct gw_req_ctx *ctx, const struct gw_req_result *res,
		      char *buf, size_t size);

#endif
