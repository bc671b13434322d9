/*
 * policy - egress policies: the YAML schema (files under policies/), its parser
 * and the qname matcher.  Pure: reads a buffer or a file, never logs.
 *
 *   name: python-dev                 # [a-z0-9][a-z0-9_.-]{0,63}
 *   description: "..."               # optional
 *   mode: enforce                    # optional: enforce (default) | audit
 *   on_deny: drop                    # optional: drop (default) | reject
 *   egress:                          # list; empty list = deny all
 *     - domains: [pypi.org, "*.pythonhosted.org"]
 *       except: [uploads.pythonhosted.org, "*.user.pythonhosted.org"]
 *       ports: [443]                 # single ports for domain rules
 *       protocol: tcp                # tcp (default) | udp
 *       min_ttl: 60                  # optional: pins last at least 60 s
 *       max_qname_length: 64         # optional: longer names are denied
 *       idle_grace: 30               # optional: overrides dns.idle_grace (0 = off)
 *       tls: { sni: enforce }        # optional: off (default) | log | enforce;
 *                                    # ech: strip (default where the SNI is checked) | keep | outer
 *       http: { host: log }          # optional: the same for a plain-HTTP Host
 *       gateway: { credentials: [openai], rate: 5/s }   # optional, instead of tls/http:
 *                                    # HTTPS through the API gateway (struct policy_gateway)
 *       dns: { budget: 500/10m, encoded: refuse }     # optional: DNS tunnelling defences
 *                                    # (the defaults of a rule with a wildcard)
 *     - cidrs: [198.51.100.7/32]
 *       ports: [8080, "9000-9010"]   # ranges allowed for cidr rules
 *
 * A rule has exactly one of domains/cidrs.  Exact names match only
 * themselves; "*.example.com" matches any name at any depth below
 * example.com but not example.com itself.  Names are stored lower-case,
 * without trailing dot, in A-label (punycode) form; non-ASCII is an error.
 *
 * `except:` (domain rules only) takes names back from its own rule: the
 * same pattern forms, each inside one of the rule's wildcards (an except
 * no wildcard of the rule covers, one that equals a wildcard, and an
 * exact domain of the rule inside an except are errors).  Another rule
 * that allows the name still allows it.
 */
#ifndef NETD_POLICY_H
#define NETD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/addr.h"	/* struct prefix, struct port_range */
#include "common/diag.h"

#define POLICY_NAME_MAX     64	/* bytes, without NUL */
#define POLICY_MAX_RULES    256
#define POLICY_MAX_ITEMS    1024	/* domains or cidrs per rule */
#define POLICY_MAX_PORTS    64	/* port entries per rule */
#define POLICY_FILE_MAX     (1u << 20)	/* bytes */
#define POLICY_DESCRIPTION_MAX 1024	/* bytes */
#define POLICY_MIN_TTL_MAX  604800	/* seconds: a rule's min_ttl, one week at most */
#define POLICY_IDLE_GRACE_MAX 86400	/* seconds: a rule's idle_grace, one day at most */
#define POLICY_EGRESS_MAX   (1ull << 50)	/* bytes: limits.egress_bytes, 1 PiB at most */
#define POLICY_CONNS_MAX    (1u << 20)	/* limits.connections: tracked connections per sandbox */
#define POLICY_RATE_MIN     8000ull		/* bit/s: limits.bandwidth, 8kbit at least */
#define POLICY_RATE_MAX     100000000000ull	/* bit/s: 100gbit at most */
#define POLICY_BUDGET_MAX   (1ull << 50)	/* bytes: a rule's budget, 1 PiB at most */
#define POLICY_BUDGET_RULES 64		/* rules with a budget in one policy */
#define POLICY_RATE_STRLEN  24		/* policy_rate_format()'s buffer */
#define POLICY_BUDGET_STRLEN 40		/* policy_budget_format()'s buffer */

/*
 * tls.sni / http.host of a domain rule: does a new TCP connection to an
 * address it pinned have to name (in its TLS server_name or HTTP Host) a
 * name of the rule that pinned it?  docs/sni.md.  Ordered: a larger value
 * is stricter.
 */
enum policy_l7 {
	POLICY_L7_OFF = 0,	/* not looked at */
	POLICY_L7_LOG,		/* looked at; a mismatch is audited, the connection passes */
	POLICY_L7_ENFORCE,	/* a mismatch is reset and audited */
};

/*
 * tls.ech of a domain rule: do its names' DNS answers keep their ECH
 * configurations (the ech SvcParam of HTTPS/SVCB RRs, RFC 9848), and what
 * does the check make of a ClientHello that carries the ECH extension?
 * Only on a rule whose connections' SNI is checked (policy_rule_ech_strip()),
 * where a client using ECH would hide the name: docs/dns.md, docs/sni.md.
 */
enum policy_ech {
	POLICY_ECH_DEFAULT = 0,	/* not written: strip where the SNI is checked */
	POLICY_ECH_STRIP,	/* answers lose their ECH configs; an ECH hello is refused */
	POLICY_ECH_KEEP,	/* answers keep them; an ECH hello is refused */
	POLICY_ECH_OUTER,	/* answers lose them; an ECH hello is judged by its
				 * outer SNI like any other (GREASE ECH: Chrome) */
};

/* Where a value is in the policy file, 1-based. */
struct policy_pos {
	unsigned int line, col;
};

#define POLICY_GW_MAX_ITEMS 64	/* credentials, methods or paths of one gateway rule */

/*
 * gateway: of a domain rule (TCP only): its HTTPS goes through netd's API
 * gateway (netd/gw/, docs/gateway.md), which terminates TLS with a leaf of
 * netd's CA, checks each request, brokers credentials and rate-limits per
 * sandbox.  Names of the rule without it keep end-to-end TLS.
 *
 *   gateway:
 *     credentials: [openai]      # names of netd.yaml's credentials:
 *     rate: 5/s burst 20         # per sandbox and rule; N/s or N/m, burst >= 1
 *     methods: [GET, POST]       # optional: tokens, case-sensitive (RFC 9110 9.1)
 *     paths: ["/v1/models"]      # optional: exact, or a prefix that ends in a star
 *
 * Parsed by netd/model/policy_gw.c: domain rules with protocol tcp only,
 * never with tls:/http: (the gateway checks SNI and Host itself); rate
 * N 1..POLICY_GW_RATE_MAX per second or minute, burst 1..POLICY_GW_BURST_MAX
 * (default max(1, ceil(N per second))); methods RFC 9110 tokens as written;
 * paths start with '/', visible ASCII but '?' and '#', a '*' only last;
 * credentials [a-z0-9][a-z0-9_.-]{0,63}; no duplicates in a list.
 */
struct policy_gateway {
	char **credentials;	/* owned; credential names, as written */
	struct policy_pos *credential_pos;	/* owned; where each is (n_credentials) */
	size_t n_credentials;
	uint32_t rate_milli;	/* requests per second x 1000; 0 = no rate limit */
	uint32_t burst;		/* requests; >= 1 when rate_milli != 0 */
	char **methods;		/* owned; 0 entries = any method */
	struct policy_pos *method_pos;	/* owned; where each is (n_methods) */
	size_t n_methods;
	char **paths;		/* owned; 0 entries = any path */
	size_t n_paths;
	unsigned int line, col;	/* where `gateway:` is */
};

#define POLICY_GW_RATE_MAX   1000000u	/* requests per second (N/s), or 60x that per minute */
#define POLICY_GW_BURST_MAX  1000000u	/* requests */
#define POLICY_GW_METHOD_MAX 32		/* bytes of one method */
#define POLICY_GW_PATH_MAX   1024	/* bytes of one path */
#define POLICY_CRED_NAME_MAX 64		/* bytes of a credential's name */

/* policy_gateway_free() - free @g and what it owns; NULL is a no-op. */
void policy_gateway_free(struct policy_gateway *g);

/*
 * policy_gw_rate_parse() - "5/s", "300/m", "5/s burst 20" (words apart by
 * spaces or tabs) -> requests per second x 1000 (a minute's rate rounded to
 * the nearest milli-request, at least 1) and the burst (given, else
 * max(1, ceil(requests per second))).  @s, @len: the text, not
 * NUL-terminated.  @why (@whysz bytes) says what is wrong, with a
 * suggestion where one is likely ("5/sec": did you mean 5/s?).
 * Return: 0; -EINVAL (malformed, zero, per hour); -ERANGE (over the maxima).
 */
int policy_gw_rate_parse(const char *s, size_t len, uint32_t *rate_milli, uint32_t *burst,
			 char *why, size_t whysz);

/*
 * policy_gw_rate_format() - @g's rate as policy_gw_rate_parse() reads it,
 * canonical: "N/s burst B" when rate_milli is whole requests per second,
 * else "N/m burst B"; "" when @g has no rate.  @buf >= 48 bytes.  Return: @buf.
 */
const char *policy_gw_rate_format(const struct policy_gateway *g, char *buf, size_t sz);

/*
 * policy_cred_name_valid() - is @s (@len bytes) a credential name:
 * [a-z0-9][a-z0-9_.-]{0,63}?  The same rule for a policy's
 * gateway.credentials and netd.yaml's credentials: keys.
 */
bool policy_cred_name_valid(const char *s, size_t len);

struct yamlx_node;

/*
 * policy_gw_parse() - (internal to netd/model/policy*.c: parse_rule()
 * calls it) `gateway:` node @n of rule @where into a new *@ret, which the
 * caller owns (policy_gateway_free()).  Errors at @file:LINE:COL in @err.
 * Return: 0; -EINVAL; -ENOMEM.  Implemented in netd/model/policy_gw.c.
 */
int policy_gw_parse(const struct yamlx_node *n, const char *file, struct diag *err,
		    const char *where, struct policy_gateway **ret);

/*
 * dns: of a domain rule: the DNS tunnelling defences (netd/model/policy_dns.c;
 * the proxy's side is dnsproxy/budget.h; docs/dns.md).
 *
 *   dns:
 *     budget: 500/10m    # distinct names a sandbox may ask below the rule per
 *                        # window (N/s, N/m, N/h: N 1..4096, window 1 s..24 h);
 *                        # 0 or off: none
 *     encoded: refuse    # refuse | log | off: names the encoded-label score flags
 *
 * A rule with a wildcard gets POLICY_DNS_BUDGET_DEF names per
 * POLICY_DNS_WINDOW_DEF and encoded: refuse unless it says otherwise; a
 * rule of exact names only gets neither (it has nothing to budget).
 */
enum policy_encoded {
	POLICY_ENCODED_OFF = 0,
	POLICY_ENCODED_LOG,
	POLICY_ENCODED_REFUSE,
};

#define POLICY_DNS_BUDGET_MAX 4096	/* names (a sandbox holds at most this many) */
#define POLICY_DNS_WINDOW_MAX 86400	/* seconds */
#define POLICY_DNS_BUDGET_DEF 500	/* the default of a rule with a wildcard ... */
#define POLICY_DNS_WINDOW_DEF 600	/* ... per 10 minutes */

/*
 * policy_rate_parse() - "20mbit" -> 20000000 bit/s: a decimal number (an
 * optional fraction, "1.5gbit") and a unit bit, kbit, mbit or gbit
 * (decimal: 10^3, 10^6, 10^9; case-insensitive), as tc(8) writes rates.
 * @s, @len: the text, not NUL-terminated.  @why (@whysz bytes) says what
 * is wrong, with a hint for the usual slips ("20 mbps": a space, tc's
 * bytes per second; "20MB": bytes; "10m": a prefix alone).  Return: 0;
 * -EINVAL (malformed, negative, not whole bits); -ERANGE (zero, a bare
 * "0" included, or under POLICY_RATE_MIN, over POLICY_RATE_MAX).
 */
int policy_rate_parse(const char *s, size_t len, uint64_t *bps, char *why, size_t whysz);

/*
 * policy_rate_format() - @bps in the largest unit that writes it whole
 * ("20mbit", "1500kbit", "9bit"), as policy_rate_parse() reads it.
 * @buf >= POLICY_RATE_STRLEN bytes.  Return: @buf.
 */
const char *policy_rate_format(uint64_t bps, char *buf, size_t sz);

/*
 * policy_budget_parse() - "1GB/day", "500MiB/hour" -> bytes and the
 * window in seconds (3600 or 86400): a whole number of B, KB, MB, GB, TB,
 * PB (10^3 steps) or KiB, MiB, GiB, TiB, PiB (2^10 steps), then "/hour"
 * or "/day", up to POLICY_BUDGET_MAX inclusive.  @why as
 * policy_rate_parse(); a fraction ("1.5GB/day") is told the same budget
 * in whole units where there is one ("1500MB/day").  Return: 0; -EINVAL;
 * -ERANGE (zero, a bare "0" included; over POLICY_BUDGET_MAX).
 */
int policy_budget_parse(const char *s, size_t len, uint64_t *bytes, uint32_t *period_s,
			char *why, size_t whysz);

/*
 * policy_budget_format() - "1GB/day" (the largest decimal or binary unit
 * that writes it whole).  @buf >= POLICY_BUDGET_STRLEN.  Return: @buf.
 */
const char *policy_budget_format(uint64_t bytes, uint32_t period_s, char *buf, size_t sz);

struct policy;
struct policy_rule;

/*
 * policy_bw_want() - the rates a sandbox runs at, bit/s (0: no limit):
 * its own from its create (@own_eg, @own_in; 0: none) where it has one,
 * else its policy @p's limits.bandwidth (@p NULL: none).  The one place
 * this is decided: the shaping (netd/daemon/bwglue.c) and a reload's
 * report (netd/daemon/reload_plan.c) both ask here.
 */
void policy_bw_want(const struct policy *p, uint64_t own_eg, uint64_t own_in, uint64_t *eg,
		    uint64_t *in);

/*
 * policy_bw_parse() - (internal to netd/model/policy*.c: the limits
 * section calls it) `limits.bandwidth:` node @n, a mapping of egress
 * and/or ingress rates, into @p.  Errors at @file:LINE:COL in @err.
 * Return: 0; -EINVAL.  Implemented in netd/model/policy_bw.c.
 */
int policy_bw_parse(const struct yamlx_node *n, const char *file, struct diag *err,
		    struct policy *p);

/*
 * policy_budget_node() - (internal: parse_rule() calls it) rule @where's
 * `budget:` value @n into @rule.  Return: 0; -EINVAL (@err filled).
 */
int policy_budget_node(const struct yamlx_node *n, const char *file, struct diag *err,
		       const char *where, struct policy_rule *rule);

/*
 * policy_budget_check() - (internal: policy_parse() calls it) at most
 * POLICY_BUDGET_RULES rules of @p have a budget, and no two of them share
 * a policy_rule_key() (their counters would be one); @eg is the egress
 * list node, for the error's place: the later rule's.
 * Return: 0; -EINVAL (@err filled).
 */
int policy_budget_check(const struct policy *p, const struct yamlx_node *eg, const char *file,
			struct diag *err);

#define POLICY_RULE_KEY_MAX 272	/* policy_rule_key()'s buffer */

/*
 * policy_rule_key() - what names rule @r across reloads and restarts, for
 * its budget's counter: its first domain or CIDR and its protocol
 * ("api.openai.com tcp").  A reload that keeps them keeps the counter.
 * @buf >= POLICY_RULE_KEY_MAX bytes.  Return: @buf.
 */
const char *policy_rule_key(const struct policy_rule *r, char *buf, size_t sz);

struct policy_rule {
	char **domains;		/* owned; normalized pattern strings */
	size_t n_domains;
	struct policy_pos *domain_pos;	/* owned; where each domain is (n_domains
					 * entries); NULL: not parsed from a file */
	char **excepts;		/* owned; normalized patterns taken back from domains */
	size_t n_excepts;
	struct prefix *cidrs;	/* owned */
	size_t n_cidrs;
	struct port_range *ports;	/* owned */
	size_t n_ports;
	uint8_t proto;		/* IPPROTO_TCP or IPPROTO_UDP */
	uint32_t min_ttl_s;	/* domain rules: pins last at least this (s); 0 = the
				 * global dns.min_ttl only; <= POLICY_MIN_TTL_MAX */
	uint16_t max_qname_len;	/* domain rules: names longer than this (presentation
				 * form, no trailing dot) do not match; 0 = no cap */
	bool idle_grace_set;	/* domain rules: idle_grace given; overrides dns.idle_grace */
	uint32_t idle_grace_s;	/* ... seconds (0 = off), <= POLICY_IDLE_GRACE_MAX */
	uint8_t tls_sni;	/* enum policy_l7; domain rules; on a udp rule the QUIC
				 * check (docs/sni.md), at least what tcp rules
				 * check on its ports (tls_sni_inherited) */
	bool tls_sni_inherited;	/* udp: tls_sni raised to a tcp rule's tls.sni or
				 * http.host on one of its ports */
	uint8_t http_host;	/* enum policy_l7; domain rules, protocol tcp only */
	uint8_t tls_ech;	/* enum policy_ech; only with tls.sni or http.host on;
				 * on a udp rule whose tls.sni is inherited and whose
				 * tls.ech is not written, outer when every tcp rule it
				 * inherits from says outer (tls_sni_inherited) */
	struct policy_pos ech_pos;	/* where tls.ech's value is (0:0 if not written) */
	struct policy_gateway *gateway;	/* owned; NULL: not through the gateway */
	uint32_t dns_budget;	/* dns.budget: distinct names per window; 0 = none */
	uint32_t dns_window_s;	/* ... the window, 1..POLICY_DNS_WINDOW_MAX s (0: none) */
	uint8_t dns_encoded;	/* dns.encoded: enum policy_encoded */
	bool dns_set;		/* `dns:` is written in the rule (shown, digested) */
	/*
	 * budget: 1GB/day (netd/model/policy_bw.c): the bytes (both ways, IP
	 * headers included, as conntrack counts them) of connections this rule
	 * allowed, per sandbox and window of @budget_period_s (an hour or a
	 * day, UTC); past it the rule's new connections are refused and live
	 * ones cut.  0 = no budget.  1..POLICY_BUDGET_MAX.
	 */
	uint64_t budget_bytes;
	uint32_t budget_period_s;	/* 3600 or 86400 when budget_bytes != 0 */
	unsigned int line;	/* where the rule starts in the file, 1-based */
	unsigned int col;	/* ... and its column, 1-based (0: not known) */
};

/*
 * policy_dns_parse() - (internal to netd/model/policy*.c: parse_rule() calls
 * it) `dns:` node @n of domain rule @where into @rule's dns_* fields (over
 * the defaults policy_dns_defaults() put there).  Errors at @file:LINE:COL
 * of the bad value in @err.  Return: 0; -EINVAL.  In netd/model/policy_dns.c.
 */
int policy_dns_parse(const struct yamlx_node *n, const char *file, struct diag *err,
		     const char *where, struct policy_rule *rule);

/*
 * policy_dns_defaults() - (internal, the same) @rule's dns_* fields as a
 * rule without `dns:` has them: the default budget and encoded: refuse if
 * one of its domains is a wildcard, nothing otherwise.
 */
void policy_dns_defaults(struct policy_rule *rule);

/*
 * policy_dns_budget_parse() - "500/10m" (N/WINDOW: N 1..POLICY_DNS_BUDGET_MAX,
 * WINDOW an optional decimal and s, m or h, 1 s..24 h; "500/m" is per
 * minute), "0" or "off" (none: *@names = *@window_s = 0).  @s, @len: the
 * text, not NUL-terminated.  @why (@whysz bytes) says what is wrong, with a
 * suggestion where one is likely ("500/10min": did you mean 500/10m?).
 * Return: 0; -EINVAL (malformed, negative, a zero window); -ERANGE (over
 * the maxima).
 */
int policy_dns_budget_parse(const char *s, size_t len, uint32_t *names, uint32_t *window_s,
			    char *why, size_t whysz);

/*
 * policy_dns_budget_format() - @r's budget as policy_dns_budget_parse()
 * reads it, canonical ("500/10m", "90/90s"), or "off".  @buf >= 32 bytes.
 * Return: @buf.
 */
const char *policy_dns_budget_format(const struct policy_rule *r, char *buf, size_t sz);

/* policy_encoded_str() - "off", "log", "refuse". */
const char *policy_encoded_str(enum policy_encoded e);

struct policy {
	char *name;		/* owned */
	char *description;	/* owned, may be NULL */
	char *file;		/* owned, the path it was read from, may be NULL */
	unsigned int name_line, name_col;	/* where `name:`'s value is, 1-based */
	unsigned int limits_line;	/* where `limits:`'s mapping starts (0: none) */
	unsigned int limits_col;	/* ... and its column, 1-based */
	struct policy_rule *rules;	/* owned */
	size_t n_rules;
	void *index;		/* owned: the name-matcher index (opaque) */
	/*
	 * limits: { egress_bytes: 500M, on_exceed: finish|cut }.  Bytes the
	 * sandbox may send (IP packets leaving it, headers included, all
	 * connections together; K/M/G = 2^10/2^20/2^30); 0 = no limit.  Over it,
	 * new connections are refused; with on_exceed: cut, packets of existing
	 * ones are dropped too (default finish: they may complete).
	 */
	uint64_t egress_bytes;
	bool quota_cut;
	/*
	 * limits: { connections: N }: at most N tracked connections of the
	 * sandbox at once (nftables "ct count over N", all protocols and both
	 * families together); over it new connections are dropped (deny
	 * record reason "conn-limit").  0 = not given: netd.yaml's
	 * limits.connections applies.  1..POLICY_CONNS_MAX.
	 */
	uint32_t max_conns;
	/*
	 * limits: { bandwidth: { egress: 20mbit, ingress: 100mbit } }: the
	 * rates a sandbox may send (egress, its uploads) and receive (ingress,
	 * its downloads) at, in bits per second of IP packets with their
	 * Ethernet header, shaped by the kernel's traffic control on its host
	 * interface (netd/link/shape.c).  0 = no limit (no qdisc at all).
	 * POLICY_RATE_MIN..POLICY_RATE_MAX; a sandbox's create may override
	 * either.
	 */
	uint64_t bw_egress_bps, bw_ingress_bps;
	/*
	 * mode: audit -> nothing the policy would deny is denied: every name
	 * resolves, every connection passes (never-pin addresses, spoofing
	 * and the other base-chain rules still hold), and the audit log marks
	 * what enforce mode would have denied ("would_deny").
	 */
	bool audit;
	/*
	 * on_deny: reject -> a connection the policy denies is refused at once
	 * (TCP RST; ICMP/ICMPv6 administratively prohibited for the rest),
	 * rate limited per sandbox (over the rate: dropped); denied DNS
	 * answers carry an Extended DNS Error either way.  Default drop.
	 */
	bool reject;
};

/*
 * policy_parse_size() - "500M" -> 524288000: decimal digits with an
 * optional K, M or G suffix (binary: 2^10, 2^20, 2^30; case-insensitive).
 * @s, @len: the text, not NUL-terminated.  Return: 0 and *@ret;
 * -EINVAL if malformed; -ERANGE if above POLICY_EGRESS_MAX or zero.
 */
int policy_parse_size(const char *s, size_t len, uint64_t *ret);

/*
 * policy_parse() - parse one policy document.
 * @buf, @len: YAML text (not retained; need not be NUL-terminated).
 * @file: name used in diagnostics and stored in the policy (copied).
 * @ret: on success a new policy; caller frees with policy_free().
 * @err: on failure, FILE:LINE:COL and a message (unknown key, wrong type,
 *       duplicate key, bad CIDR, bad pattern, bad port, ...).
 * Return: 0; -EINVAL (bad input, @err filled); -ENOMEM.
 */
int policy_parse(const char *buf, size_t len, const char *file, struct policy **ret,
		 struct diag *err);

/*
 * policy_load_file() - read @path (at most POLICY_FILE_MAX bytes) and
 * policy_parse() it.  Return: as policy_parse(); -errno if unreadable
 * (@err filled too).
 */
int policy_load_file(const char *path, struct policy **ret, struct diag *err);

/*
 * policy_parse_all(), policy_load_file_all() - as policy_parse() and
 * policy_load_file(), but a bad rule does not stop the reading: @err gets
 * the first error, and each later bad rule's error goes to
 * @more[0..@more_max) (*@n_more of them; those past the room are left
 * out), so `netd policy check` lists every rule to fix at once; then all
 * are put in file order (line, column: limits: is read before the rules
 * above it), @err the earliest.  A YAML
 * syntax error or a bad top-level key still stops at once.
 * Return: as policy_parse().
 */
int policy_parse_all(const char *buf, size_t len, const char *file, struct policy **ret,
		     struct diag *err, struct diag *more, unsigned int more_max,
		     unsigned int *n_more);
int policy_load_file_all(const char *path, struct policy **ret, struct diag *err,
			 struct diag *more, unsigned int more_max, unsigned int *n_more);

/*
 * policy_rule_port() - is @r for @proto (IPPROTO_TCP / IPPROTO_UDP) and
 * does one of its port ranges hold @port (host byte order)?
 */
bool policy_rule_port(const struct policy_rule *r, uint8_t proto, uint16_t port);

/*
 * policy_cidr_allows() - does a `cidrs` rule of @p allow @proto to @dst
 * port @port (host byte order)?  Such traffic needs no pin: no grace, no
 * SNI check.  NULL @p or @dst: false.
 */
bool policy_cidr_allows(const struct policy *p, const struct addr *dst, uint8_t proto,
			uint16_t port);

/*
 * policy_cidr_rule() - as policy_cidr_allows(), but which rule: the index
 * into p->rules of the first `cidrs` rule that allows it, or -1.
 */
ssize_t policy_cidr_rule(const struct policy *p, const struct addr *dst, uint8_t proto,
			 uint16_t port);

/*
 * policy_l7_port() - does any tcp rule of @p have tls.sni or http.host at
 * @mode (POLICY_L7_LOG or POLICY_L7_ENFORCE) exactly, on @port?  For the
 * ruleset: which ports' first payload packets go to netd, and how.
 */
bool policy_l7_port(const struct policy *p, uint16_t port, enum policy_l7 mode);

/*
 * policy_l7_port_proto() - the same for @proto: IPPROTO_TCP as
 * policy_l7_port(); IPPROTO_UDP: does a udp domain rule of @p have tls.sni
 * at @mode on @port (its QUIC Initials go to netd).
 */
bool policy_l7_port_proto(const struct policy *p, uint8_t proto, uint16_t port,
			  enum policy_l7 mode);

/*
 * The SNI/Host check follows the rules that pinned an address
 * (docs/sni.md): when a rule without the check (or with a weaker one) pins
 * an address a checked rule's names are also served from, whichever
 * rule's answer pinned it decides whether the check runs there.  Which
 * names share an address is not in the file; what is:
 */
enum policy_l7_gap_kind {
	/* Two tcp domain rules share a port; a name only the weaker rule
	 * allows and a name of the checked rule are under one registrable
	 * domain (or one pattern covers the other): likely one front end. */
	POLICY_GAP_RELATED,
	/* The same, but no such pair of names: they share an address only if
	 * both sites sit behind one CDN or load balancer; the file cannot say. */
	POLICY_GAP_PORT,
	/* A cidr rule gives the port: its addresses are accepted before the
	 * check (netd/fw/pchain.c), even when a checked rule's name pinned them. */
	POLICY_GAP_CIDR,
};

struct policy_l7_gap {
	enum policy_l7_gap_kind kind;
	size_t checked, other;	/* indexes into p->rules: the stricter rule, the other */
	size_t cd, od;		/* RELATED: checked->domains[cd], other->domains[od];
				 * PORT: od is a name only @other allows; CIDR: od is
				 * other->cidrs[0]; cd is 0 unless RELATED */
	uint16_t port;		/* the first tcp port (host order) both give */
};

/*
 * policy_l7_gaps() - the pairs of rules through which one address could be
 * reached on a tcp port where one of them, a tcp rule, checks tls.sni or
 * http.host more strictly than the other (compared as the check reads them: a TLS
 * stream by tls.sni, else http.host; HTTP by http.host, else tls.sni),
 * for `netd policy check`'s warnings.  Rules whose every name the checked
 * rule also allows add nothing (the strictest rule of a pinned name
 * applies) and are not listed.  Pure; no resolution.
 * @out, @max: filled in rule order (checked, then other); @out may be NULL
 *             when @max is 0 (to count).
 * Return: the number of pairs (may exceed @max; only @max were stored).
 */
size_t policy_l7_gaps(const struct policy *p, struct policy_l7_gap *out, size_t max);

/*
 * policy_rule_ech_strip() - do @r's names' answers lose their ECH configs?
 * Where the SNI of its connections is checked: tls.sni, or http.host
 * (which a TLS stream falls back to, docs/sni.md), at log or enforce,
 * unless tls.ech is keep (outer strips too); and a gateway: rule (the
 * gateway reads the TLS server_name itself and cannot decrypt an ECH hello).
 */
bool policy_rule_ech_strip(const struct policy_rule *r);

/* policy_ech_str() - "strip", "keep", "outer"; "" for POLICY_ECH_DEFAULT. */
const char *policy_ech_str(enum policy_ech e);

/* policy_l7_str() - "off", "log", "enforce". */
const char *policy_l7_str(enum policy_l7 m);

/* policy_free() - free @p and everything it owns; NULL-safe. */
void policy_free(struct policy *p);

struct config;

/*
 * policy_gateway_check() - can netd.yaml @c serve the gateway rules of @p:
 * is the gateway on (gateway.port not 0) and does @c define every
 * credential they name?  What `netd run` and `netd policy check --config`
 * both ask, so the two agree.  Pure; @c and @p are borrowed.
 * @err: the first problem at the policy's FILE:LINE:COL: the rule's
 *       gateway: key when the gateway is off, else the credential's name
 *       (with a did-you-mean among @c's names when one is close).
 * Return: 0; -EINVAL (@err filled).
 */
int policy_gateway_check(const struct policy *p, const struct config *c, struct diag *err);

/* One thing policy_gateway_warnings() found: valid, but surely not meant. */
struct policy_gw_warning {
	struct policy_pos at;	/* in the policy's file */
	char msg[320];		/* "egress[0].gateway...: ..." without the position */
};

/*
 * policy_gateway_warnings() - gateway rules of @p that load but cannot
 * work as written, for `netd policy check`'s warnings:
 * - a method with lower-case letters whose upper case is a standard one
 *   ("get": methods are case-sensitive, RFC 9110 9.1; never matches GET);
 * - a port other than 443 (the gateway terminates TLS only: plain HTTP
 *   steered to it is reset);
 * - with @c (may be NULL: skipped), a credential defined in @c whose hosts
 *   cover none of the rule's domains (every request using it would be
 *   refused credential-misdirected).
 * Pure; @p and @c are borrowed.
 * @out, @max: filled in rule order; @out may be NULL when @max is 0.
 * Return: the number found (may exceed @max; only @max were stored).
 */
size_t policy_gateway_warnings(const struct policy *p, const struct config *c,
			       struct policy_gw_warning *out, size_t max);

/*
 * policy_match() - which domain rules allow @qname: a domain of the rule
 * matches it and no except of the same rule does.
 * @qname: lower-case presentation form without trailing dot, as produced
 *         by wire_parse_query(); names with bytes outside [a-z0-9-_] in a
 *         label never match (the caller has already refused them).
 * @out, @max: filled with indexes into p->rules, ascending.
 * Cost: O(number of labels) hash lookups (twice that when a rule has an
 * except), independent of policy size.
 * Return: number of matching rules (0 = denied); may exceed @max, in which
 *         case only @max were stored.
 */
size_t policy_match(const struct policy *p, const char *qname, uint16_t *out, size_t max);

/*
 * policy_allows() - would enforce mode let a connection to @dst (may be
 * NULL), @proto, @port (host order) through, reached by @name (the name it
 * was pinned for; NULL = none)?  A domain rule matching @name with that
 * protocol and port, or a CIDR rule containing @dst with them.  For audit
 * mode's would_deny marks.  Pure.
 */
bool policy_allows(const struct policy *p, const char *name, const struct addr *dst,
		   uint8_t proto, uint16_t port);

/*
 * policy_port_refused() - is a connection to @dst, @proto, @port (host
 * order) refused for want of that protocol and port alone?  Yes when
 * policy_allows() says no and yet @name (the name that pinned @dst; NULL =
 * none) is one a domain rule matches, or (no @name) @dst is inside a CIDR
 * rule: the policy gives that name or address other ports or protocols
 * only.  The "port-not-allowed" reason of deny records and would_deny
 * marks (netd/trail/trail.c): the kernel's pin set holds address . protocol
 * . port, so its drop alone cannot tell this from an address nothing
 * pinned.  Pure.
 */
bool policy_port_refused(const struct policy *p, const char *name, const struct addr *dst,
			 uint8_t proto, uint16_t port);

/*
 * policy_rule_pattern() - the rule pattern that allows @name on @proto/@port
 * (host order) under @p ("pypi.org", "*.pythonhosted.org"): the most
 * specific pattern of the first matching rule that allows the port (of the
 * first matching rule if none does).  Bounded by the policy's size, unlike
 * the names a wildcard matches: the per-rule counters' key and the IPFIX
 * "rule" element.  Borrowed from @p.  Pure.
 * Return: the pattern; NULL if no rule matches @name (@p NULL: none).
 */
const char *policy_rule_pattern(const struct policy *p, const char *name, uint8_t proto,
				uint16_t port);

/*
 * policy_except_shadows() - the other rules that still allow some name
 * that except @ex of rule @rule takes back (an exact except: the rules
 * matching it; "*.T": rules with a domain inside T's subtree, or a
 * wildcard around it), for `netd policy check`'s warning.
 * @out, @max: rule indexes, ascending.  Return: the count (may exceed @max).
 */
size_t policy_except_shadows(const struct policy *p, size_t rule, size_t ex, uint16_t *out,
			     size_t max);

/*
 * policy_registrable_domain() - the registrable domain ("eTLD+1") of @name
 * (lower case, no trailing dot) by the Public Suffix List data the parser
 * checks wildcards against: "a.b.example.co.uk" -> "example.co.uk".
 * Return: a pointer into @name; NULL if @name is a public suffix itself or
 * no list data is available.
 */
const char *policy_registrable_domain(const char *name);

/*
 * policy_pattern_check() - would @pattern ("a.example.com", "*.example.com")
 * be accepted in a rule's domains as it is: valid, already normalized
 * (lower case, no trailing dot), not an address, no wildcard over a public
 * suffix.  @why (@whysz bytes) says why not.  Return: 0; -EINVAL.
 */
int policy_pattern_check(const char *pattern, char *why, size_t whysz);

/* A domain pattern's longest presentation form, no trailing dot (RFC 1035 3.1). */
#define POLICY_PATTERN_MAX 253

/*
 * policy_pattern_norm() - (internal to netd/model/: policies, and the hosts
 * of netd.yaml's credentials) normalize domain
 * pattern @in (@len bytes) into @out (>= POLICY_PATTERN_MAX + 2 bytes):
 * lower case, trailing dot stripped, checked as policy_pattern_check()
 * does.  @narrow: an except pattern (a wildcard over a public suffix is
 * fine there).  @why (@whysz bytes) says what is wrong.
 * Return: 0; -EINVAL.  Implemented in netd/model/policy_names.c.
 */
int policy_pattern_norm(const char *in, size_t len, char *out, char *why, size_t whysz,
			bool narrow);

/*
 * policy_name_below() - (internal to netd/model/policy*.c) is @name strictly below
 * @suffix ("a.b.example.com" below "example.com")?  Both normalized.
 */
bool policy_name_below(const char *name, const char *suffix);

/*
 * policy_index_build() - (internal to netd/model/policy*.c: policy_parse() calls
 * it) index @p's domains and excepts into p->index, owned by @p and freed
 * by policy_free(); the index borrows the validated, normalized patterns.
 * Implemented in netd/model/policy_index.c.  Return: 0; -ENOMEM.
 */
int policy_index_build(struct policy *p);

/* policy_index_free() - free an index from policy_index_build(); NULL-safe. */
void policy_index_free(void *index);

/*
 * policy_name_valid() - true if @name is a valid policy (or sandbox) name:
 * [A-Za-z0-9][A-Za-z0-9_.-]{0,63}.
 */
bool policy_name_valid(const char *name);

#endif
