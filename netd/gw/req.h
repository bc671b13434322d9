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
	/* The secret's own bytes inside @value (the format around them not):
	 * what an upstream echoing it would show (netd/gw/scrub.h). */
	size_t secret_off, secret_len;
	/*
	 * The names it may go to (as in netd.yaml: exact or "*.suffix"), for
	 * the refusal's message only ("may only be sent to api.openai.com");
	 * NULL/0: the message names none.  Never consulted for the decision:
	 * @value != NULL is netd's word that this connection may carry it.
	 */
	const char *const *hosts;
	size_t n_hosts;
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
	uint32_t rate_milli;	/* the rule's rate, requests per second x 1000; 0 = none */
	uint32_t burst;		/* requests at once; >= 1 when rate_milli != 0 */
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
	/*
	 * Not from gw_req_check(): an answer the engine makes itself when the
	 * upstream failed (502 "upstream-failure", "upstream-closed",
	 * "bad-response"; 504 "upstream-timeout"); status and reason are the
	 * caller's.  gw_req_refusal() writes its body as for a refusal.
	 */
	GW_REQ_UPSTREAM,
};

/* A header the engine must replace before forwarding: hdrs[index]'s whole value becomes cred->value. */
struct gw_rewrite {
	size_t index;		/* into the request's header array */
	const struct gw_cred *cred;	/* the credential whose value replaces the placeholder */
};

struct gw_req_result {
	enum gw_req_verdict verdict;
	unsigned int status;	/* HTTP status for a refusal; 0 when OK */
	const char *reason;	/* the audit reason word (static storage); NULL when OK */
	const char *cred_name;	/* the credential rewritten or misdirected, or NULL */
	const struct gw_cred *cred;	/* ... the same credential (its hosts name the message) */
	uint32_t retry_after_s;	/* GW_REQ_RATE: seconds, >= 1 (set by whoever took the rate) */
	struct gw_rewrite rewrites[GW_REQ_MAX_CREDS];
	size_t n_rewrites;
};

/*
 * gw_req_check() - decide one request (RFC 9110 7.2, 9.1; RFC 9112 3.2).
 * @ctx: the connection's decision (borrowed for the call).
 * @method, @method_len: the request method, compared byte for byte with
 * ctx->methods (case-sensitive, RFC 9110 9.1).
 * @authority, @authority_len: HTTP/2's :authority; NULL for HTTP/1.x, where
 * the authority is the one Host header among @hdrs (none or two: 400).  With
 * :authority given, a Host header among @hdrs must be byte-identical to it
 * (RFC 9113 8.3.1), two Host headers are 400 too.  The authority is
 * host[:port], OWS around it ignored: host must equal ctx->sni ignoring
 * ASCII case and :port, if present, must be @port (the connection's port):
 * anything else, or an empty host, is 421 "host-mismatch" (RFC 9110 15.5.20)
 * except an empty authority, which is 400.
 * @path, @path_len: the request target, which must be origin-form
 * (RFC 9112 3.2.1: "/" then visible ASCII, query included; anything else,
 * "*", absolute-form, a fragment, a control byte, is 400).  The query is
 * ignored by the path rules.  When ctx->paths restricts paths, a path
 * with a dot segment ("/../", "/./", "/..;x/", a final "/.."), a
 * percent-encoded '.', '/' or '\' (%2e, %2f, %5c, any case) or a '\' is
 * 400: the upstream may decode or normalize what the rule compares raw.
 * Paths match ctx->paths exactly, or by prefix for a pattern ending in '*'.
 * @hdrs, @n: the request's header fields, in order (for HTTP/1.x all of
 * them, Host included; @res's rewrites index this array).
 * Placeholders: each credential's placeholder is looked for in every
 * header value, the path and the query.  Found in a header named
 * cred->header (ASCII case ignored) while cred->value != NULL, it becomes a
 * rewrite of that header (one credential per header); found anywhere else
 * (another header, the path or query, or while cred->value == NULL) the
 * request is 403 "credential-misdirected" naming that credential, even if
 * another credential is rewritten in the same request.  A TRACE that would
 * carry a rewrite is refused the same way: the server sends a TRACE back as
 * it received it (RFC 9110 9.3.8), secret and all.
 * Order of the checks: 400, 421, 403 credential, 403 method, 403 path.
 * The rate is not checked here (gw_rate_take(), netd/gw/rate.h).
 * Return: @res filled (verdict, status, reason, cred, rewrites); never fails.
 */
void gw_req_check(const struct gw_req_ctx *ctx, const char *method, size_t method_len,
		  const char *authority, size_t authority_len, uint16_t port,
		  const char *path, size_t path_len, const struct gw_hdr *hdrs, size_t n,
		  struct gw_req_result *res);

/*
 * A request that carries a secret asks for its answer without a content
 * coding (RFC 9110 12.5.3 Accept-Encoding "identity"), so that a secret
 * the upstream shows back reaches the masking (netd/gw/scrub.h) as bytes,
 * not compressed.  The engines send GW_REQ_IDENTITY_NAME: "identity" in
 * place of what gw_req_field_dropped() leaves out.
 */
#define GW_REQ_IDENTITY_NAME "accept-encoding"
#define GW_REQ_IDENTITY_VALUE "identity"

/*
 * gw_req_field_dropped() - whether an engine forwarding the request
 * decided in @res leaves out the field @name (@name_len bytes, any case)
 * with @value (@value_len bytes): when @res rewrites a credential,
 * Accept-Encoding, a TE other than "trailers" (RFC 9110 10.1.4: the
 * transfer codings the client accepts, gzip among them) and
 * Sec-WebSocket-Extensions (RFC 6455 9.1; RFC 7692 permessage-deflate
 * compresses the messages).  False otherwise.
 */
bool gw_req_field_dropped(const struct gw_req_result *res, const char *name, size_t name_len,
			  const char *value, size_t value_len);

/*
 * gw_req_result_set() - fill @res as a refusal with @verdict: its status
 * and reason word (GW_REQ_UPSTREAM: @status and @reason as given, @reason
 * static storage), no credential, no rewrites.  For the engines' own
 * answers (400 of the HTTP/1 pre-check, 429, 502, 504).
 */
void gw_req_result_set(struct gw_req_result *res, enum gw_req_verdict verdict,
		       unsigned int status, const char *reason);

#define GW_REQ_REFUSAL_MAX 8192	/* a body buffer this large is never truncated */

/*
 * gw_req_refusal() - the body of a refusal or a gateway error: one JSON
 * object {"error": reason, "status": N, "sandbox", "policy", "rule": the
 * rule's index as in ctx->rule, "message": what happened and what the agent
 * may do instead, "docs": "docs/gateway.md"}.  Names only what netd's
 * config and policy say (sandbox, policy, methods, paths, the
 * credential's name and hosts, the SNI), never a credential's value or
 * placeholder, never anything the request carried.  Strings are JSON-escaped and
 * each capped (sandbox, policy 128 bytes; message 512), so a @buf of
 * GW_REQ_REFUSAL_MAX bytes always holds the whole object.
 * @buf, @size: written NUL-terminated; a smaller @size truncates (the
 * result is then not valid JSON).  Return: the length written (< @size),
 * 0 if @size is 0.
 */
size_t gw_req_refusal(const struct gw_req_ctx *ctx, const struct gw_req_result *res,
		      char *buf, size_t size);

#endif
