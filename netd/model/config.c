/*
 * netd/model/ - what netd is told: netd.yaml (config.c), the policies
 * (policy.c; policy_parse.c, policy_names.c, policy_index.c; the DNS
 * decision's view, policy_dns.c) and the sandbox registry (sandbox.c).
 * Pure but for reading the files it is asked to read; nothing here logs.
 */
/*
 * config - netd.yaml, the daemon's own settings: schema checker over
 * common/yamlx, defaults, and the resolv.conf fallback for upstream
 * servers.  Pure apart from reading the files it is asked to read; never
 * logs.  Not here: applying the settings (the daemon does that).
 */
#include "netd/model/config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "common/log.h"
#include "common/paths.h"
#include "common/yamlx.h"

#define DEF_STATE_DIR  "/var/lib/netd"
#define DEF_POLICY_DIR "/etc/netd/policies"
#define DEF_AUDIT_LOG  "/var/log/netd/audit.jsonl"
#define DEF_POOL4      "10.87.0.0/16"
#define DEF_POOL6      "fd00:87::/48"

struct ctx {
	const char *file;
	struct diag *err;
};

#define FAIL(cx, n, ...) diag_set((cx)->err, (cx)->file, (n)->line, (n)->col, __VA_ARGS__)

/* The number of keys in a parse function's names[] (its v[] has one slot a key). */
#define NAMES_N (sizeof(names) / sizeof(names[0]))

static void strings_free(struct config *c)
{
	config_gw_done(c);
	free(c->socket);
	free(c->state_dir);
	free(c->policy_dir);
	free(c->audit_log);
	c->socket = c->state_dir = c->policy_dir = c->audit_log = NULL;
}

/* Deep-copy the owned strings of @from into @to (which already holds a shallow copy). */
static int strings_dup(struct config *to, const struct config *from)
{
	to->socket = from->socket ? strdup(from->socket) : NULL;
	to->state_dir = from->state_dir ? strdup(from->state_dir) : NULL;
	to->policy_dir = from->policy_dir ? strdup(from->policy_dir) : NULL;
	to->audit_log = from->audit_log ? strdup(from->audit_log) : NULL;
	if ((from->socket && !to->socket) || (from->state_dir && !to->state_dir) ||
	    (from->policy_dir && !to->policy_dir) || (from->audit_log && !to->audit_log) ||
	    config_gw_dup(to, from) < 0) {
		strings_free(to);
		return -ENOMEM;
	}
	return 0;
}

int config_init(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->socket = strdup(NETD_DEFAULT_SOCKET);
	c->state_dir = strdup(DEF_STATE_DIR);
	c->policy_dir = strdup(DEF_POLICY_DIR);
	c->audit_log = strdup(DEF_AUDIT_LOG);
	if (!c->socket || !c->state_dir || !c->policy_dir || !c->audit_log ||
	    config_gw_init(c) < 0) {
		strings_free(c);
		return -ENOMEM;
	}
	/* Constants: these cannot fail. */
	prefix_parse(DEF_POOL4, &c->pool4);
	prefix_parse(DEF_POOL6, &c->pool6);
	c->pool6_enabled = true;
	c->dns_port = 5300;
	c->dns_cache_size = PROXY_CACHE_DEFAULT_ENTRIES;
	c->min_ttl_s = 5;
	c->max_ttl_s = 3600;
	c->reload_cut_removed = true;
	c->fast_path = true;
	c->dns_udp_gso = true;
	c->dns_upstream_deadline_ms = PROXY_DEADLINE_DEFAULT_MS;
	c->deny_rcode = 3;	/* NXDOMAIN, RFC 1035 4.1.1 */
	c->log_level = LOG_LVL_INFO;
	c->audit_rotate_bytes = 100u << 20;
	c->audit_keep = 5;
	c->conn_update_interval_s = 60;
	c->conn_open = true;
	c->conn_limit = CONFIG_CONN_LIMIT_DEFAULT;
	config_ipfix_init(c);
	return 0;
}

void config_done(struct config *c)
{
	if (!c)
		return;
	strings_free(c);
}

/* Decimal text @s/@n (no sign, no leading zero, <= @max) -> @ret. */
static int num_parse(const char *s, size_t n, unsigned long max, unsigned long *ret)
{
	unsigned long v = 0;

	if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

static int get_uint(struct ctx *cx, const struct yamlx_node *n, const char *where,
		    unsigned long lo, unsigned long hi, unsigned long *ret)
{
	char q[300];
	int r;

	if (!yamlx_is_str(n))
		return FAIL(cx, n, "%s: expected a number, got %s", where, yamlx_kind(n));
	r = num_parse(n->str, n->len, hi, ret);
	if (r == -EINVAL)
		return FAIL(cx, n, "%s: '%s' is not a number (expected %lu-%lu)", where,
			    yamlx_quote(n->str, n->len, q, sizeof(q)), lo, hi);
	if (r < 0 || *ret < lo)
		return FAIL(cx, n, "%s: %s is out of range (%lu-%lu)", where,
			    yamlx_quote(n->str, n->len, q, sizeof(q)), lo, hi);
	return 0;
}

/* get_uint() of @n, if present, into the uint32_t *@ret (@hi <= UINT32_MAX). */
static int get_u32(struct ctx *cx, const struct yamlx_node *n, const char *where,
		   unsigned long lo, unsigned long hi, uint32_t *ret)
{
	unsigned long x;
	int r;

	if (!n)
		return 0;
	if ((r = get_uint(cx, n, where, lo, hi, &x)) < 0)
		return r;
	*ret = (uint32_t)x;
	return 0;
}

/*
 * A section of netd.yaml that is a mapping of @names: absent or null is
 * nothing to do (0, defaults stay); anything but a mapping is an error
 * that shows @example; unknown keys are errors (yamlx_fields()).  @v gets
 * one node (or NULL) a name.  Return: 1 (read); 0 (absent); -EINVAL.
 */
static int section(struct ctx *cx, const struct yamlx_node *n, const char *name,
		   const char *example, const char *const *names, size_t n_names,
		   const struct yamlx_node **v)
{
	int r;

	if (yamlx_is_null(n))
		return 0;
	if (n->type != YAMLX_MAP)
		return FAIL(cx, n, "%s: expected a mapping, got %s (e.g. %s)", name, yamlx_kind(n),
			    example);
	r = yamlx_fields(n, cx->file, cx->err, name, names, n_names, NULL, v);
	return r < 0 ? r : 1;
}

/* true or false, nothing else. */
static int get_bool(struct ctx *cx, const struct yamlx_node *n, const char *where, bool *ret)
{
	char q[64];

	if (yamlx_is_str(n) && n->len == 4 && memcmp(n->str, "true", 4) == 0)
		*ret = true;
	else if (yamlx_is_str(n) && n->len == 5 && memcmp(n->str, "false", 5) == 0)
		*ret = false;
	else if (yamlx_is_str(n))
		return FAIL(cx, n, "%s: expected true or false, got '%s'", where,
			    yamlx_quote(n->str, n->len, q, sizeof(q)));
	else
		return FAIL(cx, n, "%s: expected true or false, got %s", where, yamlx_kind(n));
	return 0;
}

static int get_path(struct ctx *cx, const struct yamlx_node *n, const char *where, size_t max,
		    char **slot)
{
	char *s;

	if (!yamlx_is_str(n) || n->len == 0)
		return FAIL(cx, n, "%s: expected a path, got %s", where,
			    n->type == YAMLX_SCALAR && !yamlx_is_null(n) && n->len == 0 ?
			    "an empty string" : yamlx_kind(n));
	if (n->len >= max)
		return FAIL(cx, n, "%s: path is %zu bytes long; the limit is %zu", where, n->len,
			    max - 1);
	s = strdup(n->str);
	if (!s)
		return -ENOMEM;
	free(*slot);
	*slot = s;
	return 0;
}

/*
 * "ADDR" (v4 or v6), "V4:PORT", "[V6]" or "[V6]:PORT" -> @u.
 * Return: 0; -EINVAL (bad shape or address); -ERANGE (bad port).
 */
static int upstream_parse(const char *s, struct upstream_server *u)
{
	char tmp[ADDR_STRLEN + 1];
	const char *end, *port = NULL;
	unsigned long v;

	memset(u, 0, sizeof(*u));
	u->port = 53;
	if (s[0] == '[') {
		end = strchr(s, ']');
		if (!end || (size_t)(end - s - 1) >= sizeof(tmp))
			return -EINVAL;
		memcpy(tmp, s + 1, (size_t)(end - s - 1));
		tmp[end - s - 1] = '\0';
		if (addr_parse(tmp, &u->addr) < 0 || u->addr.family != AF_INET6)
			return -EINVAL;
		if (end[1] == ':')
			port = end + 2;
		else if (end[1] != '\0')
			return -EINVAL;
	} else if (addr_parse(s, &u->addr) == 0) {
		return 0;
	} else {
		end = strchr(s, ':');
		if (!end || strchr(end + 1, ':') || (size_t)(end - s) >= sizeof(tmp))
			return -EINVAL;
		memcpy(tmp, s, (size_t)(end - s));
		tmp[end - s] = '\0';
		if (addr_parse(tmp, &u->addr) < 0 || u->addr.family != AF_INET)
			return -EINVAL;
		port = end + 1;
	}
	if (port) {
		if (num_parse(port, strlen(port), 65535, &v) < 0 || v == 0)
			return -ERANGE;
		u->port = (uint16_t)v;
	}
	return 0;
}

static int parse_upstream(struct ctx *cx, const struct yamlx_node *n, struct config *c)
{
	char q[300];

	c->n_upstream = 0;
	if (yamlx_is_null(n))
		return 0;
	if (n->type != YAMLX_SEQ)
		return FAIL(cx, n, "upstream: expected a list, got %s (e.g. upstream: "
			    "[192.0.2.53, \"[2001:db8::53]:5353\"])", yamlx_kind(n));
	if (n->n_kids > CONFIG_MAX_UPSTREAM)
		return FAIL(cx, n->kids[CONFIG_MAX_UPSTREAM],
			    "upstream: too many servers (the limit is %u)", CONFIG_MAX_UPSTREAM);
	for (size_t i = 0; i < n->n_kids; i++) {
		const struct yamlx_node *u = n->kids[i];
		int r;

		if (!yamlx_is_str(u))
			return FAIL(cx, u, "upstream[%zu]: expected an address, got %s", i,
				    yamlx_kind(u));
		r = upstream_parse(u->str, &c->upstream[i]);
		if (r == -ERANGE)
			return FAIL(cx, u, "upstream[%zu]: bad port in '%s' (1-65535)", i,
				    yamlx_quote(u->str, u->len, q, sizeof(q)));
		if (r < 0)
			return FAIL(cx, u, "upstream[%zu]: bad server '%s' (expected ADDR, "
				    "IPV4:PORT or [IPV6]:PORT)", i,
				    yamlx_quote(u->str, u->len, q, sizeof(q)));
		c->n_upstream++;
	}
	return 0;
}

static int parse_prefix(struct ctx *cx, const struct yamlx_node *n, const char *where,
			int family, unsigned int lo, unsigned int hi, struct prefix *ret)
{
	char q[300], fixed[PREFIX_STRLEN];
	int r;

	if (!yamlx_is_str(n))
		return FAIL(cx, n, "%s: expected a CIDR, got %s", where, yamlx_kind(n));
	yamlx_quote(n->str, n->len, q, sizeof(q));
	r = prefix_parse(n->str, ret);
	if (r == -EDOM) {
		for (size_t bit = ret->plen; bit < addr_len(ret->addr.family) * 8; bit++)
			ret->addr.a[bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
		return FAIL(cx, n, "%s: bad CIDR '%s': host bits set (did you mean %s?)", where, q,
			    prefix_format(ret, fixed, sizeof(fixed)));
	}
	if (r < 0)
		return FAIL(cx, n, "%s: bad CIDR '%s' (expected ADDR/LEN)", where, q);
	if (ret->addr.family != family)
		return FAIL(cx, n, "%s: '%s' is not an %s prefix", where, q,
			    family == AF_INET ? "IPv4" : "IPv6");
	if (ret->plen < lo || ret->plen > hi)
		return FAIL(cx, n, "%s: prefix length /%u out of range (/%u to /%u)", where,
			    ret->plen, lo, hi);
	return 0;
}

static int parse_pool(struct ctx *cx, const struct yamlx_node *n, struct config *c)
{
	static const char *const names[] = { "ipv4", "ipv6", "node_block4", "node_block6" };
	const struct yamlx_node *v[NAMES_N];
	unsigned long x;
	int r;

	r = section(cx, n, "pool", "pool: { ipv4: 10.87.0.0/16, ipv6: \"fd00:87::/48\" }", names,
		    NAMES_N, v);
	if (r <= 0)
		return r;
	if (v[2]) {
		if ((r = get_uint(cx, v[2], "pool.node_block4", 9, 28, &x)) < 0)
			return r;
		c->node_block4 = (uint8_t)x;
	}
	if (v[3]) {
		if ((r = get_uint(cx, v[3], "pool.node_block6", 9, 64, &x)) < 0)
			return r;
		c->node_block6 = (uint8_t)x;
	}
	if (v[0]) {
		r = parse_prefix(cx, v[0], "pool.ipv4", AF_INET, 8, 28, &c->pool4);
		if (r < 0)
			return r;
	}
	if (v[1]) {
		/* "" (or null) turns IPv6 off: no pool, no AAAA pins. */
		if (yamlx_is_null(v[1]) || (v[1]->type == YAMLX_SCALAR && v[1]->len == 0)) {
			memset(&c->pool6, 0, sizeof(c->pool6));
			c->pool6_enabled = false;
		} else {
			r = parse_prefix(cx, v[1], "pool.ipv6", AF_INET6, 8, 64, &c->pool6);
			if (r < 0)
				return r;
			c->pool6_enabled = true;
		}
	}
	if (c->node_block4 && c->node_block4 <= c->pool4.plen)
		return FAIL(cx, v[2], "pool.node_block4: /%u is not inside pool.ipv4 (/%u): use a "
			    "longer prefix", c->node_block4, c->pool4.plen);
	if (c->node_block6 && c->pool6_enabled && c->node_block6 <= c->pool6.plen)
		return FAIL(cx, v[3], "pool.node_block6: /%u is not inside pool.ipv6 (/%u): use a "
			    "longer prefix", c->node_block6, c->pool6.plen);
	/* Fail closed: one family per node and the other shared would collide. */
	if (c->node_block4 && c->pool6_enabled && !c->node_block6)
		return FAIL(cx, v[2], "pool.node_block4 without pool.node_block6: every node would "
			    "use the same IPv6 pool (set node_block6, or ipv6: \"\")");
	if (c->node_block6 && !c->node_block4)
		return FAIL(cx, v[3], "pool.node_block6 without pool.node_block4: every node would "
			    "use the same IPv4 pool");
	return 0;
}

/* Block number @index (of length @block) inside @p: set bits plen..block-1. */
static void prefix_block(struct prefix *p, unsigned int block, uint32_t index)
{
	unsigned int bits = block - p->plen;

	for (unsigned int i = 0; i < bits && i < 32; i++) {
		unsigned int bit = block - 1 - i;	/* from the block's last bit up */

		if (index & (1u << i))
			p->addr.a[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
	}
	p->plen = (uint8_t)block;
}

int config_pool_for_node(struct config *c, const char *node_ip, struct diag *err)
{
	struct addr a;
	uint32_t ip;

	if (!c->node_block4)
		return 0;
	if (!node_ip || !node_ip[0] || addr_parse(node_ip, &a) < 0 || a.family != AF_INET)
		return diag_set(err, "NETD_NODE_IP", 0, 0,
				"pool.node_block4 needs this node's IPv4 address in NETD_NODE_IP "
				"(the DaemonSet sets it from status.hostIP)%s%.64s%s",
				node_ip && node_ip[0] ? ": got '" : "", node_ip ? node_ip : "",
				node_ip && node_ip[0] ? "'" : "");
	ip = (uint32_t)a.a[0] << 24 | (uint32_t)a.a[1] << 16 | (uint32_t)a.a[2] << 8 | a.a[3];
	prefix_block(&c->pool4, c->node_block4, ip);
	if (c->pool6_enabled && c->node_block6)
		prefix_block(&c->pool6, c->node_block6, ip);
	return 1;
}

static int parse_dns(struct ctx *cx, const struct yamlx_node *n, struct config *c,
		     const struct yamlx_node **ttl_node)
{
	static const char *const names[] = { "port", "min_ttl", "max_ttl", "deny_rcode", "qps",
					     "burst", "max_outstanding", "max_pins",
					     "max_pins_per_name", "cache_size", "idle_grace", "udp_gso",
					     "upstream_deadline_ms", "never_pin_documentation" };
	uint32_t *limits[] = { &c->dns_qps, &c->dns_burst, &c->dns_max_outstanding,
			       &c->dns_max_pins, &c->dns_max_pins_per_name };
	static const unsigned long limit_max[] = { 1000000, 1000000, 4096, 1000000, 128 };
	const struct yamlx_node *v[NAMES_N];
	unsigned long x;
	char q[300];
	int r;

	r = section(cx, n, "dns", "dns: { port: 5300 }", names, NAMES_N, v);
	if (r <= 0)
		return r;
	for (size_t i = 4; i < 9; i++) {
		char key[32];

		if (!v[i])
			continue;
		snprintf(key, sizeof(key), "dns.%s", names[i]);
		r = get_uint(cx, v[i], key, 1, limit_max[i - 4], &x);
		if (r < 0)
			return r;
		*limits[i - 4] = (uint32_t)x;
	}
	if (v[0]) {
		r = get_uint(cx, v[0], "dns.port", 1, 65535, &x);
		if (r < 0)
			return r;
		c->dns_port = (uint16_t)x;
	}
	/* The answer cache: entries, 0 turns it off (dnsproxy/cache.h). */
	if (v[9]) {
		r = get_uint(cx, v[9], "dns.cache_size", 0, PROXY_CACHE_MAX_ENTRIES, &x);
		if (r < 0)
			return r;
		c->dns_cache_size = (uint32_t)x;
	}
	/* Seconds an expired pin stays after a connection to it closed; 0 = off. */
	if (v[10]) {
		r = get_uint(cx, v[10], "dns.idle_grace", 0, CONFIG_IDLE_GRACE_MAX_S, &x);
		if (r < 0)
			return r;
		c->dns_idle_grace_s = (uint32_t)x;
	}
	/* Grouped UDP replies on gateway sockets (dnsproxy/udp.c, udp_flush()). */
	if (v[11]) {
		r = get_bool(cx, v[11], "dns.udp_gso", &c->dns_udp_gso);
		if (r < 0)
			return r;
	}
	/* How long a client waits at most for an upstream answer (then SERVFAIL). */
	if (v[12]) {
		r = get_uint(cx, v[12], "dns.upstream_deadline_ms", PROXY_DEADLINE_MIN_MS,
			     PROXY_DEADLINE_MAX_MS, &x);
		if (r < 0)
			return r;
		c->dns_upstream_deadline_ms = (uint32_t)x;
	}
	/* The documentation blocks join the never-pin table (common/special.h). */
	if (v[13]) {
		r = get_bool(cx, v[13], "dns.never_pin_documentation", &c->dns_never_pin_doc);
		if (r < 0)
			return r;
	}
	/* min_ttl >= 1: a zero timeout would make an nf_tables set element permanent. */
	if (v[1]) {
		r = get_uint(cx, v[1], "dns.min_ttl", 1, CONFIG_MAX_TTL_S, &x);
		if (r < 0)
			return r;
		c->min_ttl_s = (uint32_t)x;
		*ttl_node = v[1];
	}
	if (v[2]) {
		r = get_uint(cx, v[2], "dns.max_ttl", 1, CONFIG_MAX_TTL_S, &x);
		if (r < 0)
			return r;
		c->max_ttl_s = (uint32_t)x;
		if (!*ttl_node)
			*ttl_node = v[2];
	}
	if (v[3]) {
		if (!yamlx_is_str(v[3]))
			return FAIL(cx, v[3], "dns.deny_rcode: expected nxdomain or refused, got %s",
				    yamlx_kind(v[3]));
		if (strcasecmp(v[3]->str, "nxdomain") == 0)
			c->deny_rcode = 3;	/* RFC 1035 4.1.1 */
		else if (strcasecmp(v[3]->str, "refused") == 0)
			c->deny_rcode = 5;
		else
			return FAIL(cx, v[3], "dns.deny_rcode: bad value '%s' (expected nxdomain or "
				    "refused)", yamlx_quote(v[3]->str, v[3]->len, q, sizeof(q)));
	}
	return 0;
}

static int parse_ifname(struct ctx *cx, const struct yamlx_node *n, struct config *c)
{
	char q[300];

	if (yamlx_is_null(n)) {
		c->egress_interface[0] = '\0';
		return 0;
	}
	if (!yamlx_is_str(n))
		return FAIL(cx, n, "egress_interface: expected an interface name, got %s",
			    yamlx_kind(n));
	yamlx_quote(n->str, n->len, q, sizeof(q));
	if (n->len >= sizeof(c->egress_interface))
		return FAIL(cx, n, "egress_interface: '%s' is longer than %zu bytes", q,
			    sizeof(c->egress_interface) - 1);
	/* The kernel's dev_valid_name(): no '/', ':' or whitespace, not "." or "..". */
	for (size_t i = 0; i < n->len; i++) {
		unsigned char ch = (unsigned char)n->str[i];

		if (ch <= 0x20 || ch >= 0x7f || ch == '/' || ch == ':')
			return FAIL(cx, n, "egress_interface: bad interface name '%s'", q);
	}
	if (strcmp(n->str, ".") == 0 || strcmp(n->str, "..") == 0)
		return FAIL(cx, n, "egress_interface: bad interface name '%s'", q);
	memcpy(c->egress_interface, n->str, n->len + 1);
	return 0;
}

static int parse_log_level(struct ctx *cx, const struct yamlx_node *n, struct config *c)
{
	static const struct {
		const char *name;
		int lvl;
	} levels[] = {
		{ "error", LOG_LVL_ERR }, { "warning", LOG_LVL_WARN }, { "warn", LOG_LVL_WARN },
		{ "info", LOG_LVL_INFO }, { "debug", LOG_LVL_DEBUG },
	};
	char q[300];

	if (!yamlx_is_str(n))
		return FAIL(cx, n, "log_level: expected error, warning, info or debug, got %s",
			    yamlx_kind(n));
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (strcasecmp(n->str, levels[i].name) == 0) {
			c->log_level = levels[i].lvl;
			return 0;
		}
	return FAIL(cx, n, "log_level: bad value '%s' (expected error, warning, info or debug)",
		    yamlx_quote(n->str, n->len, q, sizeof(q)));
}

/*
 * audit: { rotate_size: BYTES (0 = never), keep: N, conn_update_interval: SECONDS (0 = none),
 *          conntrack_rcvbuf: BYTES, conn_open: BOOL, journal: BOOL }
 */
static int parse_audit(struct ctx *cx, const struct yamlx_node *n, struct config *c)
{
	static const char *const names[] = { "rotate_size", "keep", "conn_update_interval",
					     "conntrack_rcvbuf", "conn_open", "journal" };
	const struct yamlx_node *v[NAMES_N];
	unsigned long x;
	int r;

	r = section(cx, n, "audit", "audit: { keep: 5 }", names, NAMES_N, v);
	if (r <= 0)
		return r;
	if (v[0]) {
		r = get_uint(cx, v[0], "audit.rotate_size", 0, 1ul << 40, &x);
		if (r < 0)
			return r;
		c->audit_rotate_bytes = x;
	}
	if ((r = get_u32(cx, v[1], "audit.keep", 1, 1000, &c->audit_keep)) < 0 ||
	    (r = get_u32(cx, v[2], "audit.conn_update_interval", 0, 86400,
			 &c->conn_update_interval_s)) < 0 ||
	    /* The kernel's floor is ~2 KiB; tests shrink it to provoke ENOBUFS. */
	    (r = get_u32(cx, v[3], "audit.conntrack_rcvbuf", 4096, 1ul << 30,
			 &c->conntrack_rcvbuf_bytes)) < 0)
		return r;
	if (v[4] && (r = get_bool(cx, v[4], "audit.conn_open", &c->conn_open)) < 0)
		return r;
	/* Every record also to the systemd journal (netd/trail/journal.h). */
	if (v[5])
		return get_bool(cx, v[5], "audit.journal", &c->audit_journal);
	return 0;
}

/* metrics_listen: "ADDR:PORT", an IPv6 address in brackets ("[::1]:9153"). */
static int parse_metrics_listen(struct ctx *cx, const struct yamlx_node *n, struct config *c)
{
	char buf[80], q[100];
	char *port, *host = buf;
	unsigned long x;

	if (!yamlx_is_str(n))
		return FAIL(cx, n, "metrics_listen: expected ADDR:PORT, got %s", yamlx_kind(n));
	if (n->len == 0 || n->len >= sizeof(buf))
		goto bad;
	memcpy(buf, n->str, n->len);
	buf[n->len] = '\0';
	port = strrchr(buf, ':');
	if (!port)
		goto bad;
	*port++ = '\0';
	if (host[0] == '[') {
		size_t hl = strlen(host);

		if (hl < 3 || host[hl - 1] != ']')
			goto bad;
		host[hl - 1] = '\0';
		host++;
		if (!strchr(host, ':'))
			goto bad;	/* brackets are for IPv6 only */
	} else if (strchr(host, ':')) {
		goto bad;	/* an IPv6 address needs brackets */
	}
	if (addr_parse(host, &c->metrics_addr) < 0 ||
	    num_parse(port, strlen(port), 65535, &x) < 0 || x == 0)
		goto bad;
	c->metrics_port = (uint16_t)x;
	return 0;
bad:
	memset(&c->metrics_addr, 0, sizeof(c->metrics_addr));
	return FAIL(cx, n, "metrics_listen: '%s' is not ADDR:PORT (e.g. 127.0.0.1:9153, [::1]:9153)",
		    yamlx_quote(n->str, n->len, q, sizeof(q)));
}

/* limits: { connections: N } - the per-sandbox default of a policy's limits.connections (0 = none). */
static int parse_limits(struct ctx *cx, const struct yamlx_node *n, struct config *c)
{
	static const char *const names[] = { "connections" };
	const struct yamlx_node *v[NAMES_N];
	int r;

	r = section(cx, n, "limits", "limits: { connections: 4096 }", names, NAMES_N, v);
	if (r <= 0)
		return r;
	return get_u32(cx, v[0], "limits.connections", 0, CONFIG_CONN_LIMIT_MAX, &c->conn_limit);
}

/* reload: { cut_removed: true|false } */
static int parse_reload(struct ctx *cx, const struct yamlx_node *n, struct config *c)
{
	static const char *const names[] = { "cut_removed" };
	const struct yamlx_node *v[NAMES_N];
	int r;

	r = section(cx, n, "reload", "reload: { cut_removed: false }", names, NAMES_N, v);
	if (r <= 0)
		return r;
	if (v[0])
		return get_bool(cx, v[0], "reload.cut_removed", &c->reload_cut_removed);
	return 0;
}

/* dataplane.flowtable: auto, true or false. */
static int get_flowtable(struct ctx *cx, const struct yamlx_node *n, uint8_t *ret)
{
	char q[64];
	bool b;

	if (yamlx_is_str(n) && n->len == 4 && memcmp(n->str, "auto", 4) == 0) {
		*ret = CONFIG_FLOWTABLE_AUTO;
		return 0;
	}
	if (yamlx_is_str(n) && ((n->len == 4 && memcmp(n->str, "true", 4) == 0) ||
				(n->len == 5 && memcmp(n->str, "false", 5) == 0))) {
		int r = get_bool(cx, n, "dataplane.flowtable", &b);

		*ret = b ? CONFIG_FLOWTABLE_ON : CONFIG_FLOWTABLE_OFF;
		return r;
	}
	if (yamlx_is_str(n))
		return FAIL(cx, n, "dataplane.flowtable: expected auto, true or false, got '%s'",
			    yamlx_quote(n->str, n->len, q, sizeof(q)));
	return FAIL(cx, n, "dataplane.flowtable: expected auto, true or false, got %s",
		    yamlx_kind(n));
}

/* dataplane: { fast_path: true|false, flowtable: auto|true|false } */
static int parse_dataplane(struct ctx *cx, const struct yamlx_node *n, struct config *c)
{
	static const char *const names[] = { "fast_path", "flowtable" };
	const struct yamlx_node *v[NAMES_N];
	int r;

	r = section(cx, n, "dataplane", "dataplane: { fast_path: false }", names, NAMES_N, v);
	if (r <= 0)
		return r;
	if (v[0]) {
		r = get_bool(cx, v[0], "dataplane.fast_path", &c->fast_path);
		if (r < 0)
			return r;
	}
	if (v[1])
		return get_flowtable(cx, v[1], &c->flowtable);
	return 0;
}

static int parse_doc(struct ctx *cx, const struct yamlx_node *root, struct config *c)
{
	static const char *const names[] = {
		"socket", "state_dir", "policy_dir", "audit_log", "upstream",
		"egress_interface", "pool", "dns", "log_level", "audit", "reload", "policy_watch",
		"metrics_listen", "dataplane", "limits", "verify_interval", "gateway",
		"credentials", "ipfix",
	};
	const struct yamlx_node *v[NAMES_N], *ttl_node = NULL;
	int r = 0;

	if (!root || yamlx_is_null(root))
		return 0;	/* an empty file: every default stands */
	if (root->type != YAMLX_MAP)
		return FAIL(cx, root, "config: expected a mapping, got %s", yamlx_kind(root));
	r = yamlx_fields(root, cx->file, cx->err, "config", names, NAMES_N, NULL, v);
	if (r < 0)
		return r;
	if (v[0] && (r = get_path(cx, v[0], "socket", sizeof(((struct sockaddr_un *)0)->sun_path),
				  &c->socket)) < 0)
		return r;
	if (v[1] && (r = get_path(cx, v[1], "state_dir", PATH_MAX, &c->state_dir)) < 0)
		return r;
	if (v[2] && (r = get_path(cx, v[2], "policy_dir", PATH_MAX, &c->policy_dir)) < 0)
		return r;
	if (v[3] && (r = get_path(cx, v[3], "audit_log", PATH_MAX, &c->audit_log)) < 0)
		return r;
	if (v[4] && (r = parse_upstream(cx, v[4], c)) < 0)
		return r;
	if (v[5] && (r = parse_ifname(cx, v[5], c)) < 0)
		return r;
	if (v[6] && (r = parse_pool(cx, v[6], c)) < 0)
		return r;
	if (v[7] && (r = parse_dns(cx, v[7], c, &ttl_node)) < 0)
		return r;
	if (v[8] && (r = parse_log_level(cx, v[8], c)) < 0)
		return r;
	if (v[9] && (r = parse_audit(cx, v[9], c)) < 0)
		return r;
	if (v[10] && (r = parse_reload(cx, v[10], c)) < 0)
		return r;
	if (v[11] && (r = get_bool(cx, v[11], "policy_watch", &c->policy_watch)) < 0)
		return r;
	if (v[12] && (r = parse_metrics_listen(cx, v[12], c)) < 0)
		return r;
	if (v[13] && (r = parse_dataplane(cx, v[13], c)) < 0)
		return r;
	if (v[14] && (r = parse_limits(cx, v[14], c)) < 0)
		return r;
	/* verify_interval: SECONDS between `netd verify --all` runs inside the daemon; 0 = off. */
	if (v[15] && (r = get_u32(cx, v[15], "verify_interval", 0, 86400,
				  &c->verify_interval_s)) < 0)
		return r;
	/* gateway: and credentials: (config_gw.c) */
	if ((v[16] || v[17]) && (r = config_gw_parse(c, v[16], v[17], cx->file, cx->err)) < 0)
		return r;
	/* ipfix: (config_ipfix.c) */
	if (v[18] && (r = config_ipfix_parse(c, v[18], cx->file, cx->err)) < 0)
		return r;
	if (c->min_ttl_s > c->max_ttl_s) {
		const struct yamlx_node *at = ttl_node ? ttl_node : root;

		return FAIL(cx, at, "dns: min_ttl (%u) is greater than max_ttl (%u)", c->min_ttl_s,
			    c->max_ttl_s);
	}
	return 0;
}

int config_parse(struct config *c, const char *buf, size_t len, const char *file,
		 struct diag *err)
{
	struct ctx cx = { .file = file ? file : "<input>", .err = err };
	struct yamlx_doc *doc = NULL;
	struct config tmp;
	bool has_creds;
	int r;

	if (len > CONFIG_FILE_MAX)
		return diag_set(err, cx.file, 0, 0, "config is %zu bytes; the limit is %u", len,
				CONFIG_FILE_MAX);
	r = yamlx_load(buf, len, cx.file, &doc, err);
	if (r < 0)
		return r;
	/* Parse into a copy: a bad file leaves @c exactly as it was. */
	tmp = *c;
	r = strings_dup(&tmp, c);
	if (r < 0) {
		yamlx_free(doc);
		return r;
	}
	r = parse_doc(&cx, doc->root, &tmp);
	has_creds = config_gw_wipe(doc->root);	/* an inline secret's copy in the tree */
	yamlx_free(doc);
	if (r == 0) {
		free(tmp.src_file);
		tmp.src_file = strdup(cx.file);
		if (!tmp.src_file)
			r = -ENOMEM;
	}
	if (r < 0) {
		strings_free(&tmp);
		return r;
	}
	/* A file without credentials: keeps those @c had (parsing on top of @c). */
	if (!has_creds) {
		tmp.creds = c->creds;
		tmp.n_creds = c->n_creds;
		c->creds = NULL;
		c->n_creds = 0;
	}
	strings_free(c);
	*c = tmp;
	return 0;
}

int config_load_file(struct config *c, const char *path, struct diag *err)
{
	char *buf;
	size_t len;
	int r;

	r = yamlx_load_file(path, CONFIG_FILE_MAX, &buf, &len, err);
	if (r < 0)
		return r;
	r = config_parse(c, buf, len, path, err);
	explicit_bzero(buf, len);	/* it may hold an inline credential value */
	free(buf);
	return r;
}

int config_read_resolv_conf(struct config *c, const char *path)
{
	char *buf, *line, *save = NULL;
	size_t len;
	int r, n = 0;

	if (c->n_upstream)
		return 0;
	r = yamlx_read_file(path, CONFIG_FILE_MAX, &buf, &len);
	if (r < 0)
		return r;
	for (line = strtok_r(buf, "\n", &save); line && c->n_upstream < CONFIG_MAX_UPSTREAM;
	     line = strtok_r(NULL, "\n", &save)) {
		char *tok, *s2 = NULL;
		struct upstream_server *u = &c->upstream[c->n_upstream];

		/* resolv.conf(5): "nameserver ADDR", '#' or ';' start a comment line. */
		tok = strtok_r(line, " \t\r", &s2);
		if (!tok || strcmp(tok, "nameserver") != 0)
			continue;
		tok = strtok_r(NULL, " \t\r", &s2);
		if (!tok)
			continue;
		memset(u, 0, sizeof(*u));
		if (addr_parse(tok, &u->addr) < 0)
			continue;
		u->port = 53;
		c->n_upstream++;
		n++;
	}
	free(buf);
	return n;
}
