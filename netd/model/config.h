/*
 * config - the daemon's configuration file (netd.yaml).  Pure parser.
 * Every key has a default; an unknown key is an error with file:line:col.
 *
 *   socket: /run/netd/netd.sock
 *   state_dir: /var/lib/netd
 *   policy_dir: /etc/netd/policies
 *   audit_log: /var/log/netd/audit.jsonl
 *   upstream: [192.0.2.53, "2001:db8::53"]   # default: /etc/resolv.conf nameservers
 *   egress_interface: eth0                   # default: the default route's interface
 *   pool: { ipv4: 10.87.0.0/16, ipv6: "fd00:87::/48" }   # ipv6: "" disables IPv6
 *   # one block per node, picked by the node's address (NETD_NODE_IP):
 *   pool: { ipv4: 10.87.0.0/16, node_block4: 24, ipv6: "fd00:87::/48", node_block6: 64 }
 *   policy_watch: false                      # true: reload when policy_dir changes
 *   dns: { port: 5300, min_ttl: 5, max_ttl: 3600, deny_rcode: nxdomain,
 *          qps: 1000, burst: 2000, max_outstanding: 256, max_pins: 16384,
 *          max_pins_per_name: 64, cache_size: 10000, idle_grace: 0, udp_gso: true,
 *          upstream_deadline_ms: 2500, never_pin_documentation: false }
 *   log_level: info
 *   audit: { rotate_size: 104857600, keep: 5, conn_update_interval: 60, journal: false }
 *   dataplane: { fast_path: true, flowtable: auto }  # fast_path false: established flows
 *                                            # walk every rule; flowtable auto|true|false
 *   limits: { connections: 4096 }           # per sandbox, unless its policy says
 *   gateway: { port: 15443, user: nobody, upstream_ca_file: /path,   # the API gateway
 *              connect_timeout: 10, idle_timeout: 300 }             # (config_gw.c)
 *   ipfix: { collectors: [udp://192.0.2.9:4739, "tcp://[2001:db8::9]:4739"],  # flows to
 *            observation_domain: 1, enterprise: 32473, interim_interval: 0,   # collectors
 *            template_refresh: 600, reconnect_interval: 60,                  # (config_ipfix.c)
 *            buffer_size: 4194304, message_size: 1400 }
 *   credentials:                             # secrets the gateway brokers (config_gw.c)
 *     openai: { header: Authorization, format: "Bearer {secret}",
 *               placeholder: netd-placeholder-openai-0001, hosts: [api.openai.com],
 *               file: /etc/netd/secrets/openai }   # or systemd: NAME, or value: "..."
 */
#ifndef NETD_CONFIG_H
#define NETD_CONFIG_H

/* dataplane.flowtable */
#define CONFIG_FLOWTABLE_AUTO 0
#define CONFIG_FLOWTABLE_ON   1
#define CONFIG_FLOWTABLE_OFF  2

#include <stdbool.h>
#include <stdint.h>

#include "common/addr.h"
#include "common/diag.h"
#include "dnsproxy/proxy_config.h"	/* struct upstream_server, the dns: limits */

#define CONFIG_MAX_UPSTREAM 8
#define CONFIG_FILE_MAX     (1u << 20)	/* bytes */
#define CONFIG_MAX_TTL_S    604800	/* one week: the largest min_ttl/max_ttl */
#define CONFIG_IDLE_GRACE_MAX_S 86400	/* one day: the largest dns.idle_grace */
#define CONFIG_CONN_LIMIT_DEFAULT 4096	/* limits.connections */
#define CONFIG_CONN_LIMIT_MAX (1u << 20)	/* = POLICY_CONNS_MAX */

#define CONFIG_GW_PORT_DEFAULT 15443	/* gateway.port */
#define CONFIG_GW_USER_DEFAULT "nobody"	/* gateway.user */
#define CONFIG_GW_USER_MAX     32	/* bytes of gateway.user */
#define CONFIG_GW_CONNECT_TIMEOUT_DEFAULT 10	/* seconds */
#define CONFIG_GW_CONNECT_TIMEOUT_MAX 300	/* seconds */
#define CONFIG_GW_IDLE_TIMEOUT_DEFAULT 300	/* seconds */
#define CONFIG_GW_IDLE_TIMEOUT_MAX 86400	/* seconds */
#define CONFIG_MAX_CREDENTIALS 64	/* credentials: entries */
#define CONFIG_CRED_HOSTS_MAX  64	/* hosts of one credential */
#define CONFIG_CRED_HEADER_MAX 64	/* bytes of a header name */
#define CONFIG_CRED_FORMAT_MAX 256	/* bytes of format, {secret} included */
#define CONFIG_CRED_PLACEHOLDER_MIN 16	/* bytes */
#define CONFIG_CRED_PLACEHOLDER_MAX 256	/* bytes */
#define CONFIG_CRED_SECRET_MAX 8192	/* bytes of a secret (file, systemd or value) */

#define CONFIG_IPFIX_MAX_COLLECTORS 4	/* ipfix.collectors */
#define CONFIG_IPFIX_PORT_DEFAULT 4739	/* RFC 7011 10.3.1, 10.4.1: the IPFIX port */
#define CONFIG_IPFIX_URL_MAX 64		/* bytes of "tcp://[V6]:PORT" (config_ipfix_format()) */

/* One ipfix.collectors entry: udp://ADDR[:PORT] or tcp://ADDR[:PORT]. */
struct config_ipfix_collector {
	bool tcp;
	struct addr addr;
	uint16_t port;		/* host byte order */
};

/* ipfix: (netd/model/config_ipfix.c, docs/flows.md).  No collector: export is off. */
struct config_ipfix {
	struct config_ipfix_collector collectors[CONFIG_IPFIX_MAX_COLLECTORS];
	unsigned int n_collectors;
	uint32_t observation_domain;	/* the Observation Domain ID (RFC 7011 3.1); default 1 */
	uint32_t enterprise;	/* the PEN of netd's own elements; default 32473 (RFC 5612) */
	uint32_t interim_s;	/* interim records of live connections; 0 = none */
	uint32_t template_refresh_s;	/* UDP: Templates resent this often (RFC 7011 8.4) */
	uint32_t reconnect_s;	/* TCP: the least time between connection attempts */
	uint64_t buffer_bytes;	/* records held per collector while it is down or slow */
	uint32_t message_size;	/* the largest IPFIX Message, bytes (RFC 7011 10.3.3) */
};

/* Where a credential's secret comes from (exactly one of file:, systemd:, value:). */
enum config_cred_src {
	CONFIG_CRED_FILE,	/* src_arg: an absolute path */
	CONFIG_CRED_SYSTEMD,	/* src_arg: a name in $CREDENTIALS_DIRECTORY (LoadCredential=) */
	CONFIG_CRED_VALUE,	/* the secret inline in netd.yaml: value (wiped when freed) */
};

/*
 * One entry of credentials: (netd/model/config_gw.c, docs/config.md).  The
 * secrets of file: and systemd: are not read here: netd/gw/creds.c does.
 */
struct config_credential {
	char *name;		/* owned; [a-z0-9][a-z0-9_.-]{0,63} */
	char *header;		/* owned; an RFC 9110 field name, e.g. "Authorization" */
	char *format;		/* owned; exactly one "{secret}", default "{secret}" */
	char *placeholder;	/* owned; >= CONFIG_CRED_PLACEHOLDER_MIN token bytes, unique,
				 * none inside another credential's */
	char **hosts;		/* owned; normalized names or "*.suffix", >= 1 */
	size_t n_hosts;
	enum config_cred_src src;
	char *src_arg;		/* owned; FILE: the path, SYSTEMD: the name; VALUE: NULL */
	char *value;		/* owned; VALUE only: the secret, value_len bytes and a NUL;
				 * explicit_bzero()ed before it is freed */
	size_t value_len;
	unsigned int line, col;	/* where the credential's name is in src_file */
	unsigned int src_line, src_col;	/* ... and its file:/systemd:/value: */
};

struct config {
	char *socket;		/* owned */
	char *state_dir;	/* owned */
	char *policy_dir;	/* owned */
	char *audit_log;	/* owned */
	struct upstream_server upstream[CONFIG_MAX_UPSTREAM];
	unsigned int n_upstream;	/* 0 = take /etc/resolv.conf at startup */
	char egress_interface[16];	/* "" = the default route's interface */
	struct prefix pool4;	/* plen 8..28 */
	struct prefix pool6;	/* plen 0 and family 0 = IPv6 disabled; else /8../64 */
	bool pool6_enabled;
	/* pool.node_block4/6: this node uses one block of that length of the
	 * pool, chosen by config_pool_for_node(); 0 = the whole pool. */
	uint8_t node_block4, node_block6;
	bool policy_watch;	/* reload policies when policy_dir changes (netd/daemon/policywatch.h) */
	uint16_t dns_port;	/* the proxy's listening port in the host netns */
	uint32_t min_ttl_s;	/* pins last at least this long (seconds) */
	uint32_t max_ttl_s;	/* ... and at most this long */
	uint8_t deny_rcode;	/* 3 = NXDOMAIN (default) or 5 = REFUSED */
	/* DNS abuse limits (dns: section); 0 = the proxy's default. */
	uint32_t dns_qps;	/* queries/s per sandbox address (token bucket) */
	uint32_t dns_burst;	/* ... bucket depth */
	uint32_t dns_max_outstanding;	/* upstream queries in flight per sandbox address */
	uint32_t dns_max_pins;	/* live pins per sandbox */
	uint32_t dns_max_pins_per_name;	/* addresses one answer may pin */
	uint32_t dns_cache_size;	/* answer cache entries; 0 = no cache */
	uint32_t dns_idle_grace_s;	/* re-pin a name's address for this long after a
					 * connection to it closed (netd/trail/grace.h); 0 = off */
	bool dns_udp_gso;	/* grouped UDP replies on gateway sockets (UDP_SEGMENT) */
	uint32_t dns_upstream_deadline_ms;	/* a client's SERVFAIL at the latest this long
						 * after its query went upstream (ms) */
	bool dns_never_pin_doc;	/* dns.never_pin_documentation: the documentation blocks
				 * (RFC 5737, 3849, 9637) are never pinned either; default false */
	int log_level;		/* enum log_level */
	/* audit: { rotate_size: 104857600, keep: 5, conn_update_interval: 60 } */
	uint64_t audit_rotate_bytes;	/* rotate the audit log at this size; 0 = never */
	uint32_t audit_keep;		/* rotated files kept (audit.jsonl.1 .. .N) */
	uint32_t conn_update_interval_s;	/* conn_update lines for longer connections; 0 = none */
	uint32_t conntrack_rcvbuf_bytes;	/* audit.conntrack_rcvbuf: conntrack event socket
						 * receive buffer; 0 = acct's default (8 MiB) */
	bool conn_open;		/* audit.conn_open: a conn_open record per allowed
				 * connection (default true) */
	bool audit_journal;	/* audit.journal: every record also to the systemd journal */
	struct config_ipfix ipfix;	/* ipfix: flow export (config_ipfix.c) */
	/* metrics_listen: ADDR:PORT ("127.0.0.1:9153", "[::1]:9153") serving GET
	 * /metrics over TCP; family 0 = off (the default) */
	struct addr metrics_addr;
	uint16_t metrics_port;
	/* verify_interval: seconds between the daemon's own `netd verify --all` runs
	 * (docs/verify.md); 0 = off (the default) */
	uint32_t verify_interval_s;
	/* reload: { cut_removed: true } - a reload that removes a name also cuts live connections to it */
	bool reload_cut_removed;
	/* dataplane: { fast_path: true } - established, unmetered flows are accepted by
	 * the first rule of forward (netd/fw.h, fw_config.no_fast_path) */
	bool fast_path;
	/* dataplane: { flowtable: auto } - replies of established connections offloaded to
	 * an nftables flowtable on the egress interface (true: required; false: never) */
	uint8_t flowtable;
	/* limits: { connections: 4096 } - tracked connections per sandbox when its policy
	 * sets no limits.connections (nftables "ct count"); 0 = no default limit */
	uint32_t conn_limit;
	/* gateway: the API gateway's worker (docs/gateway.md) */
	uint16_t gw_port;	/* port: TCP port the steered connections go to; 0 = off */
	char *gw_user;		/* owned; user: the worker's user, default "nobody" */
	unsigned int gw_user_line, gw_user_col;	/* where user's value is; 0 = the default */
	char *gw_upstream_ca_file;	/* owned; upstream_ca_file: CAs trusted for upstreams
					 * instead of the system store; NULL = the store */
	unsigned int gw_ca_line, gw_ca_col;	/* where upstream_ca_file's value is */
	uint32_t gw_connect_timeout_s;	/* upstream connect + TLS handshake (s) */
	uint32_t gw_idle_timeout_s;	/* no bytes either way for this long: closed (s) */
	/* credentials: the secrets the gateway brokers, in file order */
	struct config_credential *creds;	/* owned */
	size_t n_creds;
	char *src_file;		/* owned; the file gateway:/credentials: were read from
				 * (for located messages); NULL before a parse */
};

/* config_init() - fill @c with the defaults (documented in docs/configuration.md). */
int config_init(struct config *c);

/*
 * config_parse() - parse YAML @buf/@len on top of the values already in
 * @c (call config_init() first).  @file names the input in diagnostics.
 * Return: 0; -EINVAL with @err filled (unknown key, wrong type, duplicate
 * key, bad address/prefix, min_ttl > max_ttl, ...); -ENOMEM.
 */
int config_parse(struct config *c, const char *buf, size_t len, const char *file,
		 struct diag *err);

/* config_load_file() - read @path and config_parse() it. -errno if unreadable. */
int config_load_file(struct config *c, const char *path, struct diag *err);

/*
 * config_read_resolv_conf() - if @c has no upstream servers yet
 * (n_upstream == 0), take them from the "nameserver ADDR" lines of @path
 * (resolv.conf(5), normally "/etc/resolv.conf"), port 53, in file order, at
 * most CONFIG_MAX_UPSTREAM.  Lines whose address does not parse (e.g. a
 * link-local one with "%zone") are skipped.  Reads at most CONFIG_FILE_MAX
 * bytes.  Return: the number of servers taken (0 if @c already had some or
 * the file names none); -errno if @path is unreadable.
 */
int config_read_resolv_conf(struct config *c, const char *path);

/*
 * config_pool_for_node() - narrow pool4 (and pool6) to this node's block
 * when pool.node_block4 (node_block6) is set: block number = the low
 * (node_block - pool length) bits of @node_ip, the node's IPv4 address
 * (e.g. 10.87.0.0/16, /24 blocks, node 192.168.1.23 -> 10.87.23.0/24).
 * Distinct nodes get distinct blocks as long as their addresses differ in
 * those bits - true for every pair of nodes in one subnet no larger than
 * the number of blocks (a /24 of nodes with 256 blocks).
 * @node_ip: text, or NULL/"" if unknown.  Idempotent only once: call after
 * loading the file.  @err: why, on failure.
 * Return: 1 narrowed; 0 no node_block set (nothing to do); -EINVAL
 * (node_block set but @node_ip missing or not IPv4).
 */
int config_pool_for_node(struct config *c, const char *node_ip, struct diag *err);

/*
 * config_find_credential() - credential @name of @c, or NULL.  Borrowed
 * from @c.
 */
const struct config_credential *config_find_credential(const struct config *c,
						       const char *name);

/*
 * config_gateway_check() - what config_parse() cannot see in the text:
 * gateway.upstream_ca_file is a regular file this process can read, and
 * gateway.user exists (getpwnam(3), through NSS) when gateway.port is not 0.
 * Not pure: stat(2), access(2), NSS.  The secrets are gw_creds_load()'s
 * (netd/gw/creds.h).  @err: FILE:LINE:COL of the value at fault.
 * Return: 0; -EINVAL (@err filled); -ENOMEM.
 */
int config_gateway_check(const struct config *c, struct diag *err);

/*
 * The gateway: and credentials: sections, parsed by netd/model/config_gw.c
 * into the struct config config.c builds: internal to netd/model/config*.c.
 */
struct yamlx_node;

/*
 * config_gw_init() - gateway: defaults into @c (port 15443, user "nobody",
 * timeouts 10 s and 300 s, no CA file, no credentials).  Return: 0; -ENOMEM.
 */
int config_gw_init(struct config *c);

/*
 * config_gw_dup() - deep copies of @from's gateway strings into @to, which
 * holds a shallow copy of @from; the credentials are not copied: @to gets
 * none (config_parse() keeps @from's unless the file has credentials:).
 * Return: 0; -ENOMEM (@to's gateway strings NULL).
 */
int config_gw_dup(struct config *to, const struct config *from);

/* config_gw_done() - free @c's gateway strings and credentials (wiping values); idempotent. */
void config_gw_done(struct config *c);

/* config_creds_free() - free @n credentials @v (inline values wiped); NULL-safe. */
void config_creds_free(struct config_credential *v, size_t n);

/*
 * config_gw_parse() - gateway: (@gw, may be NULL) and credentials: (@cr,
 * may be NULL) of @file into @c; @c->creds must be empty.  Errors at
 * FILE:LINE:COL in @err, never with a secret in them.
 * Return: 0; -EINVAL; -ENOMEM.
 */
int config_gw_parse(struct config *c, const struct yamlx_node *gw, const struct yamlx_node *cr,
		    const char *file, struct diag *err);

/*
 * config_gw_wipe() - explicit_bzero() every credentials.*.value scalar of
 * document @root (the secrets' copies in the YAML tree), before it is freed.
 * (libyaml's own transient buffers are out of reach.)
 * Return: whether @root has a credentials: key (then it replaces the
 * credentials a config parsed on top of had).
 */
bool config_gw_wipe(struct yamlx_node *root);

/* config_ipfix_init() - ipfix: defaults into @c (no collector, domain 1, PEN 32473, ...). */
void config_ipfix_init(struct config *c);

/*
 * config_ipfix_parse() - the ipfix: section @n of @file into @c.  Errors at
 * FILE:LINE:COL in @err.  Return: 0; -EINVAL.
 */
int config_ipfix_parse(struct config *c, const struct yamlx_node *n, const char *file,
		       struct diag *err);

/*
 * config_ipfix_collector_parse() - "udp://ADDR[:PORT]" or
 * "tcp://ADDR[:PORT]" (@s, @len bytes, not NUL-terminated) into @ret; an
 * IPv6 ADDR in brackets; PORT 1-65535, default 4739.  Names are not
 * resolved: addresses only.  Pure.
 * Return: 0; -EPROTONOSUPPORT (another scheme); -EINVAL (bad address or
 * shape); -ERANGE (bad port).
 */
int config_ipfix_collector_parse(const char *s, size_t len, struct config_ipfix_collector *ret);

/*
 * config_ipfix_format() - @c back as "udp://192.0.2.9:4739" or
 * "tcp://[2001:db8::9]:4739" into @buf (>= CONFIG_IPFIX_URL_MAX).  Return: @buf.
 */
char *config_ipfix_format(const struct config_ipfix_collector *c, char *buf, size_t sz);

/* config_done() - free what @c owns; @c may be re-initialised afterwards. */
void config_done(struct config *c);

#endif
