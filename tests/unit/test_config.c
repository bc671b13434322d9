/*
 * test_config - netd.yaml: defaults, every key, located errors, a failed
 * parse leaving the config untouched, and the resolv.conf fallback.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/log.h"
#include "netd/model/config.h"

static int cparse(struct config *c, const char *yaml, const char *file, struct diag *err)
{
	return config_parse(c, yaml, strlen(yaml), file, err);
}

static char *fmt_prefix(const struct prefix *p, char *buf)
{
	return prefix_format(p, buf, PREFIX_STRLEN);
}

static void check_defaults(const struct config *c)
{
	char b[PREFIX_STRLEN];

	assert_string_equal(c->socket, "/run/netd/netd.sock");
	assert_string_equal(c->state_dir, "/var/lib/netd");
	assert_string_equal(c->policy_dir, "/etc/netd/policies");
	assert_string_equal(c->audit_log, "/var/log/netd/audit.jsonl");
	assert_int_equal(c->n_upstream, 0);
	assert_string_equal(c->egress_interface, "");
	assert_string_equal(fmt_prefix(&c->pool4, b), "10.87.0.0/16");
	assert_true(c->pool6_enabled);
	assert_string_equal(fmt_prefix(&c->pool6, b), "fd00:87::/48");
	assert_int_equal(c->dns_port, 5300);
	assert_int_equal(c->min_ttl_s, 5);
	assert_int_equal(c->max_ttl_s, 3600);
	assert_int_equal(c->deny_rcode, 3);
	assert_int_equal(c->log_level, LOG_LVL_INFO);
	assert_int_equal(c->conn_limit, 4096);
}

static void test_defaults(void **state)
{
	struct config c;
	struct diag err = { 0 };

	(void)state;
	assert_int_equal(config_init(&c), 0);
	check_defaults(&c);
	/* An empty file, a comment-only file, and "---" keep every default. */
	assert_int_equal(cparse(&c, "", "e.yaml", &err), 0);
	assert_int_equal(cparse(&c, "# nothing\n", "e.yaml", &err), 0);
	assert_int_equal(cparse(&c, "---\n", "e.yaml", &err), 0);
	assert_int_equal(cparse(&c, "dns: {}\npool:\n", "e.yaml", &err), 0);
	check_defaults(&c);
	config_done(&c);
	config_done(&c);	/* idempotent */
}

static void test_full(void **state)
{
	static const char y[] =
		"socket: /tmp/n.sock\n"
		"state_dir: /tmp/state\n"
		"policy_dir: /tmp/pol\n"
		"audit_log: /tmp/audit.jsonl\n"
		"upstream: [192.0.2.53, \"2001:db8::53\", \"192.0.2.54:5353\", \"[2001:db8::54]:5354\", \"[2001:db8::55]\"]\n"
		"egress_interface: eth0\n"
		"pool: { ipv4: 10.200.0.0/20, ipv6: \"fd00:1::/64\" }\n"
		"dns: { port: 53, min_ttl: 1, max_ttl: 60, deny_rcode: REFUSED }\n"
		"log_level: debug\n";
	struct config c;
	struct diag err = { 0 };
	char b[PREFIX_STRLEN];

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_parse(&c, y, sizeof(y) - 1, "netd.yaml", &err), 0);
	assert_string_equal(c.socket, "/tmp/n.sock");
	assert_string_equal(c.state_dir, "/tmp/state");
	assert_string_equal(c.policy_dir, "/tmp/pol");
	assert_string_equal(c.audit_log, "/tmp/audit.jsonl");
	assert_int_equal(c.n_upstream, 5);
	assert_string_equal(addr_format(&c.upstream[0].addr, b, sizeof(b)), "192.0.2.53");
	assert_int_equal(c.upstream[0].port, 53);
	assert_string_equal(addr_format(&c.upstream[1].addr, b, sizeof(b)), "2001:db8::53");
	assert_int_equal(c.upstream[1].port, 53);
	assert_string_equal(addr_format(&c.upstream[2].addr, b, sizeof(b)), "192.0.2.54");
	assert_int_equal(c.upstream[2].port, 5353);
	assert_string_equal(addr_format(&c.upstream[3].addr, b, sizeof(b)), "2001:db8::54");
	assert_int_equal(c.upstream[3].port, 5354);
	assert_int_equal(c.upstream[4].addr.family, AF_INET6);
	assert_int_equal(c.upstream[4].port, 53);
	assert_string_equal(c.egress_interface, "eth0");
	assert_string_equal(fmt_prefix(&c.pool4, b), "10.200.0.0/20");
	assert_string_equal(fmt_prefix(&c.pool6, b), "fd00:1::/64");
	assert_true(c.pool6_enabled);
	assert_int_equal(c.dns_port, 53);
	assert_int_equal(c.min_ttl_s, 1);
	assert_int_equal(c.max_ttl_s, 60);
	assert_int_equal(c.deny_rcode, 5);
	assert_int_equal(c.log_level, LOG_LVL_DEBUG);

	/* A second file on top: only what it names changes; upstream is replaced. */
	assert_int_equal(cparse(&c, "upstream: [198.51.100.1]\nlog_level: warning\n"
				      "egress_interface: \"\"\n", "2.yaml", &err), 0);
	assert_int_equal(c.n_upstream, 1);
	assert_int_equal(c.log_level, LOG_LVL_WARN);
	assert_string_equal(c.egress_interface, "");
	assert_string_equal(c.socket, "/tmp/n.sock");
	assert_int_equal(c.max_ttl_s, 60);
	/* upstream: [] goes back to resolv.conf. */
	assert_int_equal(cparse(&c, "upstream: []\n", "3.yaml", &err), 0);
	assert_int_equal(c.n_upstream, 0);
	config_done(&c);
}

static void test_ipv6_disable(void **state)
{
	struct config c;
	struct diag err = { 0 };
	const char *forms[] = { "pool: { ipv6: \"\" }\n", "pool:\n  ipv6:\n", "pool: { ipv6: '' }\n" };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(config_init(&c), 0);
		assert_int_equal(config_parse(&c, forms[i], strlen(forms[i]), "x.yaml", &err), 0);
		assert_false(c.pool6_enabled);
		assert_int_equal(c.pool6.plen, 0);
		assert_int_equal(c.pool6.addr.family, 0);
		config_done(&c);
	}
}

static void expect_bad(const char *yaml, unsigned int line, unsigned int col, const char *frag)
{
	struct config c, before;
	struct diag err = { 0 };
	char msg[1024];
	int r;

	assert_int_equal(config_init(&c), 0);
	before = c;
	r = config_parse(&c, yaml, strlen(yaml), "netd.yaml", &err);
	diag_format(&err, msg, sizeof(msg));
	if (r != -EINVAL || err.line != line || err.col != col || !strstr(err.msg, frag))
		print_error("input \"%s\": r=%d got \"%s\", want %u:%u \"...%s...\"\n", yaml, r, msg,
			    line, col, frag);
	assert_int_equal(r, -EINVAL);
	assert_string_equal(err.file, "netd.yaml");
	assert_int_equal(err.line, line);
	assert_int_equal(err.col, col);
	assert_non_null(strstr(err.msg, frag));
	/* Rejected whole: nothing changed, not even the pointers. */
	assert_memory_equal(&c, &before, sizeof(c));
	check_defaults(&c);
	config_done(&c);
}

static void test_errors(void **state)
{
	(void)state;
	expect_bad("sockets: /x\n", 1, 1, "config: unknown key 'sockets'; did you mean 'socket'? (allowed: socket, state_dir, "
		   "policy_dir, audit_log, upstream, egress_interface, pool, dns, log_level, audit, reload, policy_watch, metrics_listen, dataplane, limits, verify_interval, gateway, credentials, ipfix)");
	expect_bad("metrics_listen: 9153\n", 1, 17, "metrics_listen: '9153' is not ADDR:PORT");
	expect_bad("metrics_listen: ::1:9153\n", 1, 17, "is not ADDR:PORT");
	expect_bad("metrics_listen: \"[127.0.0.1]:9153\"\n", 1, 17, "is not ADDR:PORT");
	expect_bad("metrics_listen: 127.0.0.1:0\n", 1, 17, "is not ADDR:PORT");
	expect_bad("metrics_listen: 127.0.0.1:65536\n", 1, 17, "is not ADDR:PORT");
	expect_bad("audit: { conn_open: maybe }\n", 1, 21, "audit.conn_open: expected true or false");
	expect_bad("audit: { keep: 0 }\n", 1, 16, "audit.keep: 0 is out of range (1-1000)");
	expect_bad("audit: { rotate: 1 }\n", 1, 10, "audit: unknown key 'rotate'");
	expect_bad("log_level: debug\nlog_level: info\n", 2, 1, "duplicate key 'log_level' (first at line 1, column 1)");
	expect_bad("- a\n", 1, 1, "config: expected a mapping, got a list");
	expect_bad("socket: [a]\n", 1, 9, "socket: expected a path, got a list");
	expect_bad("socket: ''\n", 1, 9, "socket: expected a path, got an empty string");
	expect_bad("state_dir:\n", 1, 11, "state_dir: expected a path, got null");
	expect_bad("socket: /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
		   1, 9, "socket: path is 108 bytes long; the limit is 107");
	/* state_dir changed, then a later key fails: the whole file is rejected. */
	expect_bad("state_dir: /new\nlog_level: loud\n", 2, 12,
		   "log_level: bad value 'loud' (expected error, warning, info or debug)");
	expect_bad("upstream: 192.0.2.53\n", 1, 11, "upstream: expected a list, got a string");
	expect_bad("upstream: [192.0.2.300]\n", 1, 12, "upstream[0]: bad server '192.0.2.300'");
	expect_bad("upstream: [192.0.2.1, \"192.0.2.53:0\"]\n", 1, 23, "upstream[1]: bad port in '192.0.2.53:0'");
	expect_bad("upstream: [\"192.0.2.53:65536\"]\n", 1, 12, "bad port");
	expect_bad("upstream: [\"[2001:db8::1\"]\n", 1, 12, "bad server '[2001:db8::1'");
	expect_bad("upstream: [\"[192.0.2.1]:53\"]\n", 1, 12, "bad server");
	expect_bad("upstream: [\"[2001:db8::1]x\"]\n", 1, 12, "bad server");
	expect_bad("upstream: [\"2001:db8::1:53x\"]\n", 1, 12, "bad server");
	expect_bad("upstream: [\"fe80::1%eth0\"]\n", 1, 12, "bad server");
	expect_bad("upstream: [dns.example]\n", 1, 12, "bad server 'dns.example' (expected ADDR, IPV4:PORT or [IPV6]:PORT)");
	expect_bad("upstream: [[a]]\n", 1, 12, "upstream[0]: expected an address, got a list");
	expect_bad("upstream: [192.0.2.1, 192.0.2.2, 192.0.2.3, 192.0.2.4, 192.0.2.5, 192.0.2.6, "
		   "192.0.2.7, 192.0.2.8, 192.0.2.9]\n", 1, 100, "upstream: too many servers (the limit is 8)");
	expect_bad("egress_interface: averyveryverylongname\n", 1, 19, "is longer than 15 bytes");
	expect_bad("egress_interface: \"eth 0\"\n", 1, 19, "bad interface name 'eth 0'");
	expect_bad("egress_interface: a/b\n", 1, 19, "bad interface name");
	expect_bad("egress_interface: ..\n", 1, 19, "bad interface name");
	expect_bad("egress_interface: [eth0]\n", 1, 19, "expected an interface name, got a list");
	expect_bad("pool: 10.87.0.0/16\n", 1, 7, "pool: expected a mapping, got a string");
	expect_bad("pool: { ipv5: x }\n", 1, 9, "pool: unknown key 'ipv5'; did you mean 'ipv4'? (allowed: ipv4, ipv6, node_block4, node_block6)");
	expect_bad("pool: { ipv4: 10.87.0.1/16 }\n", 1, 15, "pool.ipv4: bad CIDR '10.87.0.1/16': host bits set (did you mean 10.87.0.0/16?)");
	expect_bad("pool: { ipv4: 10.0.0.0/7 }\n", 1, 15, "pool.ipv4: prefix length /7 out of range (/8 to /28)");
	expect_bad("pool: { ipv4: 10.0.0.0/29 }\n", 1, 15, "out of range (/8 to /28)");
	expect_bad("pool: { ipv4: \"fd00::/48\" }\n", 1, 15, "pool.ipv4: 'fd00::/48' is not an IPv4 prefix");
	expect_bad("pool: { ipv4: ten }\n", 1, 15, "pool.ipv4: bad CIDR 'ten'");
	expect_bad("pool: { ipv6: 10.0.0.0/8 }\n", 1, 15, "pool.ipv6: '10.0.0.0/8' is not an IPv6 prefix");
	expect_bad("pool: { ipv6: \"fd00::/65\" }\n", 1, 15, "pool.ipv6: prefix length /65 out of range (/8 to /64)");
	expect_bad("pool: { ipv6: \"fc00::/7\" }\n", 1, 15, "out of range (/8 to /64)");
	expect_bad("pool: { ipv6: [] }\n", 1, 15, "pool.ipv6: expected a CIDR, got a list");
	expect_bad("dns: []\n", 1, 6, "dns: expected a mapping, got a list");
	expect_bad("dns: { prt: 53 }\n", 1, 8, "dns: unknown key 'prt'; did you mean 'port'? (allowed: port, min_ttl, max_ttl, deny_rcode, qps, burst, max_outstanding, max_pins, max_pins_per_name, cache_size, idle_grace, udp_gso, upstream_deadline_ms, never_pin_documentation)");
	expect_bad("dns: { port: 0 }\n", 1, 14, "dns.port: 0 is out of range (1-65535)");
	expect_bad("dns: { port: 65536 }\n", 1, 14, "dns.port: 65536 is out of range (1-65535)");
	expect_bad("dns: { port: 99999999999999999999999 }\n", 1, 14, "dns.port: '99999999999999999999999' is not a number");
	expect_bad("dns: { port: domain }\n", 1, 14, "dns.port: 'domain' is not a number (expected 1-65535)");
	expect_bad("dns: { port: -1 }\n", 1, 14, "is not a number");
	expect_bad("dns: { port: [53] }\n", 1, 14, "dns.port: expected a number, got a list");
	expect_bad("dns: { min_ttl: 0 }\n", 1, 17, "dns.min_ttl: 0 is out of range (1-604800)");
	expect_bad("dns: { max_ttl: 604801 }\n", 1, 17, "dns.max_ttl: 604801 is out of range");
	expect_bad("dns: { min_ttl: 100, max_ttl: 10 }\n", 1, 17, "dns: min_ttl (100) is greater than max_ttl (10)");
	expect_bad("dns:\n  max_ttl: 2\n", 2, 12, "dns: min_ttl (5) is greater than max_ttl (2)");
	expect_bad("dns: { deny_rcode: servfail }\n", 1, 20, "dns.deny_rcode: bad value 'servfail' (expected nxdomain or refused)");
	expect_bad("dns: { deny_rcode: 3 }\n", 1, 20, "bad value '3'");
	expect_bad("dns: { idle_grace: 86401 }\n", 1, 20, "dns.idle_grace: 86401 is out of range (0-86400)");
	expect_bad("dns: { idle_grace: 30s }\n", 1, 20, "dns.idle_grace: '30s' is not a number");
	expect_bad("dns: { idle_grace: -1 }\n", 1, 20, "is not a number");
	expect_bad("log_level: [info]\n", 1, 12, "log_level: expected error, warning, info or debug, got a list");
	expect_bad("socket: /a\n---\nsocket: /b\n", 2, 1, "a second YAML document");
	expect_bad("socket: &s /a\nstate_dir: *s\n", 2, 12, "YAML aliases (*name) are not allowed");
	expect_bad("socket: /a\n  state_dir: /b\n", 2, 12, "YAML syntax error: a ': ' where YAML did not expect a key");
	expect_bad("dns: { port: 53\n", 2, 1, "YAML syntax error");
}

static void test_levels_and_rcodes(void **state)
{
	static const struct {
		const char *yaml;
		int level;
	} lv[] = {
		{ "log_level: error\n", LOG_LVL_ERR }, { "log_level: warning\n", LOG_LVL_WARN },
		{ "log_level: warn\n", LOG_LVL_WARN }, { "log_level: info\n", LOG_LVL_INFO },
		{ "log_level: DEBUG\n", LOG_LVL_DEBUG },
	};
	struct config c;
	struct diag err = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
		assert_int_equal(config_init(&c), 0);
		assert_int_equal(config_parse(&c, lv[i].yaml, strlen(lv[i].yaml), NULL, &err), 0);
		assert_int_equal(c.log_level, lv[i].level);
		config_done(&c);
	}
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(cparse(&c, "dns: {deny_rcode: refused}\n", NULL, &err), 0);
	assert_int_equal(c.deny_rcode, 5);
	assert_int_equal(cparse(&c, "dns: {deny_rcode: nxdomain}\n", NULL, &err), 0);
	assert_int_equal(c.deny_rcode, 3);
	/* DNS abuse limits: unset = 0 (the proxy's defaults), bounded. */
	assert_int_equal(c.dns_qps, 0);
	assert_int_equal(cparse(&c, "dns: {qps: 50, burst: 60, max_outstanding: 4, max_pins: 10, "
			      "max_pins_per_name: 3}\n", NULL, &err), 0);
	assert_int_equal(c.dns_qps, 50);
	assert_int_equal(c.dns_burst, 60);
	assert_int_equal(c.dns_max_outstanding, 4);
	assert_int_equal(c.dns_max_pins, 10);
	assert_int_equal(c.dns_max_pins_per_name, 3);
	assert_int_equal(cparse(&c, "dns: {qps: 0}\n", NULL, &err), -EINVAL);
	assert_int_equal(cparse(&c, "dns: {max_pins_per_name: 129}\n", NULL, &err), -EINVAL);
	/* The answer cache: on by default, 0 turns it off, bounded. */
	assert_int_equal(c.dns_cache_size, 10000);
	assert_int_equal(cparse(&c, "dns: {cache_size: 0}\n", NULL, &err), 0);
	assert_int_equal(c.dns_cache_size, 0);
	assert_int_equal(cparse(&c, "dns: {cache_size: 500}\n", NULL, &err), 0);
	assert_int_equal(c.dns_cache_size, 500);
	assert_int_equal(cparse(&c, "dns: {cache_size: 1000001}\n", NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "dns.cache_size: 1000001 is out of range (0-1000000)"));
	/* Grouped UDP replies: on by default, true or false only. */
	assert_true(c.dns_udp_gso);
	assert_int_equal(cparse(&c, "dns: {udp_gso: false}\n", NULL, &err), 0);
	assert_false(c.dns_udp_gso);
	assert_int_equal(cparse(&c, "dns: {udp_gso: true}\n", NULL, &err), 0);
	assert_true(c.dns_udp_gso);
	assert_int_equal(cparse(&c, "dns: {udp_gso: off}\n", NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "dns.udp_gso: expected true or false, got 'off'"));
	assert_int_equal(cparse(&c, "dns: {udp_gso: [1]}\n", NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "dns.udp_gso: expected true or false, got a list"));
	/* The documentation blocks join the never-pin table only when asked. */
	assert_false(c.dns_never_pin_doc);
	assert_int_equal(cparse(&c, "dns: {never_pin_documentation: true}\n", NULL, &err), 0);
	assert_true(c.dns_never_pin_doc);
	assert_int_equal(cparse(&c, "dns: {never_pin_documentation: 1}\n", NULL, &err), -EINVAL);
	assert_int_equal(cparse(&c, "reload: {cut_removed: maybe}\n", NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "reload.cut_removed: expected true or false, got 'maybe'"));
	/* The upstream deadline: 2500 ms by default (under glibc's 5 s), 100..30000. */
	assert_int_equal(c.dns_upstream_deadline_ms, 2500);
	assert_int_equal(cparse(&c, "dns: {upstream_deadline_ms: 1000}\n", NULL, &err), 0);
	assert_int_equal(c.dns_upstream_deadline_ms, 1000);
	assert_int_equal(cparse(&c, "dns: {upstream_deadline_ms: 99}\n", NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "dns.upstream_deadline_ms: 99 is out of range (100-30000)"));
	assert_int_equal(cparse(&c, "dns: {upstream_deadline_ms: 30001}\n", NULL, &err), -EINVAL);
	assert_int_equal(cparse(&c, "dns: {upstream_deadline_ms: 2s}\n", NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "dns.upstream_deadline_ms: '2s' is not a number"));
	assert_int_equal(c.dns_upstream_deadline_ms, 1000);	/* the last good value stays */
	/* Tracked connections per sandbox: 4096 by default, 0 (none) .. 2^20. */
	assert_int_equal(c.conn_limit, 4096);
	assert_int_equal(cparse(&c, "limits: {connections: 100}\n", NULL, &err), 0);
	assert_int_equal(c.conn_limit, 100);
	assert_int_equal(cparse(&c, "limits: {connections: 0}\n", NULL, &err), 0);
	assert_int_equal(c.conn_limit, 0);
	assert_int_equal(cparse(&c, "limits: {connections: 1048576}\n", NULL, &err), 0);
	assert_int_equal(c.conn_limit, 1048576);
	assert_int_equal(cparse(&c, "limits: {connections: 1048577}\n", NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "limits.connections: 1048577 is out of range (0-1048576)"));
	assert_int_equal(cparse(&c, "limits: {connections: many}\n", NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "limits.connections: 'many' is not a number"));
	assert_int_equal(cparse(&c, "limits: {conns: 5}\n", NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "limits: unknown key 'conns'"));
	assert_int_equal(cparse(&c, "limits: 5\n", NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "limits: expected a mapping"));
	assert_int_equal(c.conn_limit, 1048576);	/* the last good value stays */
	/* The idle grace: off by default, 0..86400 s. */
	assert_int_equal(c.dns_idle_grace_s, 0);
	assert_int_equal(cparse(&c, "dns: {idle_grace: 30}\n", NULL, &err), 0);
	assert_int_equal(c.dns_idle_grace_s, 30);
	assert_int_equal(cparse(&c, "dns: {idle_grace: 86400}\n", NULL, &err), 0);
	assert_int_equal(c.dns_idle_grace_s, 86400);
	assert_int_equal(cparse(&c, "dns: {idle_grace: 0}\n", NULL, &err), 0);
	assert_int_equal(c.dns_idle_grace_s, 0);
	/* Port and TTLs may be quoted; the largest values are accepted. */
	assert_int_equal(cparse(&c, "dns: {port: \"65535\", min_ttl: 604800, max_ttl: 604800}\n",
				      NULL, &err), 0);
	assert_int_equal(c.dns_port, 65535);
	assert_int_equal(c.min_ttl_s, 604800);
	config_done(&c);

	/* NULL file name: diagnostics say <input>. */
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(cparse(&c, "x: 1\n", NULL, &err), -EINVAL);
	assert_string_equal(err.file, "<input>");
	config_done(&c);
}

static char *write_tmp(const char *content)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/netd-test-config-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
	return path;
}

static void test_load_file(void **state)
{
	struct config c;
	struct diag err = { 0 };
	char *path;

	(void)state;
	assert_int_equal(config_init(&c), 0);
	path = write_tmp("dns:\n  port: 5353\n  bogus: 1\n");
	assert_int_equal(config_load_file(&c, path, &err), -EINVAL);
	assert_string_equal(err.file, path);
	assert_int_equal(err.line, 3);
	assert_int_equal(err.col, 3);
	assert_int_equal(c.dns_port, 5300);
	unlink(path);

	path = write_tmp("dns:\n  port: 5353\n");
	assert_int_equal(config_load_file(&c, path, &err), 0);
	assert_int_equal(c.dns_port, 5353);
	unlink(path);

	assert_int_equal(config_load_file(&c, "/nonexistent/netd.yaml", &err), -ENOENT);
	assert_non_null(strstr(err.msg, "cannot read"));
	assert_int_equal(config_load_file(&c, "/tmp", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not a regular file"));
	config_done(&c);
}

static void test_resolv_conf(void **state)
{
	struct config c;
	char b[ADDR_STRLEN], *path;

	(void)state;
	assert_int_equal(config_init(&c), 0);
	path = write_tmp("# generated\n"
			 "search example.test\n"
			 "nameserver 192.0.2.53\n"
			 "; comment\n"
			 "nameserver\t2001:db8::53   # trailing\r\n"
			 "nameserver fe80::1%eth0\n"
			 "nameserver not-an-address\n"
			 "nameserver\n"
			 "options ndots:2\n"
			 "  nameserver 198.51.100.53\n");
	assert_int_equal(config_read_resolv_conf(&c, path), 3);
	assert_int_equal(c.n_upstream, 3);
	assert_string_equal(addr_format(&c.upstream[0].addr, b, sizeof(b)), "192.0.2.53");
	assert_int_equal(c.upstream[0].port, 53);
	assert_string_equal(addr_format(&c.upstream[1].addr, b, sizeof(b)), "2001:db8::53");
	assert_string_equal(addr_format(&c.upstream[2].addr, b, sizeof(b)), "198.51.100.53");
	/* Already configured: the file is not consulted. */
	assert_int_equal(config_read_resolv_conf(&c, path), 0);
	assert_int_equal(c.n_upstream, 3);
	unlink(path);

	/* At most CONFIG_MAX_UPSTREAM. */
	c.n_upstream = 0;
	path = write_tmp("nameserver 192.0.2.1\nnameserver 192.0.2.2\nnameserver 192.0.2.3\n"
			 "nameserver 192.0.2.4\nnameserver 192.0.2.5\nnameserver 192.0.2.6\n"
			 "nameserver 192.0.2.7\nnameserver 192.0.2.8\nnameserver 192.0.2.9\n");
	assert_int_equal(config_read_resolv_conf(&c, path), CONFIG_MAX_UPSTREAM);
	assert_int_equal(c.n_upstream, CONFIG_MAX_UPSTREAM);
	assert_string_equal(addr_format(&c.upstream[7].addr, b, sizeof(b)), "192.0.2.8");
	unlink(path);

	c.n_upstream = 0;
	path = write_tmp("search x\n");
	assert_int_equal(config_read_resolv_conf(&c, path), 0);
	assert_int_equal(c.n_upstream, 0);
	unlink(path);
	assert_int_equal(config_read_resolv_conf(&c, "/nonexistent/resolv.conf"), -ENOENT);
	config_done(&c);
}

static void test_size_limit(void **state)
{
	struct config c;
	struct diag err = { 0 };
	char *big = malloc(CONFIG_FILE_MAX + 1);

	(void)state;
	assert_non_null(big);
	memset(big, '#', CONFIG_FILE_MAX + 1);
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_parse(&c, big, CONFIG_FILE_MAX + 1, "big.yaml", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "the limit is 1048576"));
	free(big);
	config_done(&c);
}

/* Two nodes of one /24 get two blocks of the cluster range; errors fail closed. */
static void test_node_pool(void **state)
{
	static const char yaml[] = "pool: { ipv4: 10.87.0.0/16, node_block4: 24,\n"
				   "        ipv6: \"fd00:87::/48\", node_block6: 64 }\n";
	struct config a, b, c;
	struct diag err = { 0 };
	char p[PREFIX_STRLEN];

	(void)state;
	assert_int_equal(config_init(&a), 0);
	assert_int_equal(config_init(&b), 0);
	assert_int_equal(cparse(&a, yaml, "n.yaml", &err), 0);
	assert_int_equal(cparse(&b, yaml, "n.yaml", &err), 0);
	assert_int_equal(a.node_block4, 24);
	assert_int_equal(config_pool_for_node(&a, "192.168.1.23", &err), 1);
	assert_int_equal(config_pool_for_node(&b, "192.168.1.24", &err), 1);
	assert_string_equal(fmt_prefix(&a.pool4, p), "10.87.23.0/24");
	assert_string_equal(fmt_prefix(&b.pool4, p), "10.87.24.0/24");
	assert_string_equal(fmt_prefix(&a.pool6, p), "fd00:87:0:117::/64");
	assert_string_equal(fmt_prefix(&b.pool6, p), "fd00:87:0:118::/64");
	config_done(&b);
	/* A /12 of /24 blocks: 4096 blocks, the node's low 12 bits. */
	assert_int_equal(config_init(&b), 0);
	assert_int_equal(cparse(&b, "pool: { ipv4: 10.80.0.0/12, node_block4: 24, ipv6: \"\" }\n",
				"n.yaml", &err), 0);
	assert_int_equal(config_pool_for_node(&b, "172.16.9.5", &err), 1);
	assert_string_equal(fmt_prefix(&b.pool4, p), "10.89.5.0/24");
	config_done(&b);
	/* No node_block: nothing happens, with or without an address. */
	assert_int_equal(config_init(&b), 0);
	assert_int_equal(config_pool_for_node(&b, NULL, &err), 0);
	assert_string_equal(fmt_prefix(&b.pool4, p), "10.87.0.0/16");
	config_done(&b);
	/* node_block but no usable address: refused, saying where it comes from. */
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(cparse(&c, yaml, "n.yaml", &err), 0);
	assert_int_equal(config_pool_for_node(&c, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "NETD_NODE_IP"));
	assert_int_equal(config_pool_for_node(&c, "2001:db8::1", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "2001:db8::1"));
	config_done(&c);
	/* One family per node and the other shared would collide. */
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(cparse(&c, "pool: { ipv4: 10.87.0.0/16, node_block4: 24 }\n", "n.yaml",
				&err), -EINVAL);
	assert_non_null(strstr(err.msg, "node_block6"));
	assert_int_equal(err.line, 1);
	assert_int_equal(cparse(&c, "pool: { ipv4: 10.87.0.0/16, node_block4: 16, ipv6: \"\" }\n",
				"n.yaml", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not inside pool.ipv4"));
	assert_int_equal(cparse(&c, "pool: { node_block4: 29 }\n", "n.yaml", &err), -EINVAL);
	assert_int_equal(c.node_block4, 0);	/* a failed parse changes nothing */
	config_done(&c);
	config_done(&a);
}

static void test_metrics_listen(void **state)
{
	struct config c;
	struct diag err = { 0 };
	char buf[ADDR_STRLEN];

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(c.metrics_addr.family, 0);	/* off by default */
	assert_true(c.conn_open);			/* on by default */
	assert_int_equal(cparse(&c, "metrics_listen: 127.0.0.1:9153\n", "m.yaml", &err), 0);
	assert_string_equal(addr_format(&c.metrics_addr, buf, sizeof(buf)), "127.0.0.1");
	assert_int_equal(c.metrics_port, 9153);
	assert_int_equal(cparse(&c, "metrics_listen: \"[2001:db8::1]:9100\"\n", "m.yaml", &err), 0);
	assert_string_equal(addr_format(&c.metrics_addr, buf, sizeof(buf)), "2001:db8::1");
	assert_int_equal(c.metrics_port, 9100);
	assert_int_equal(cparse(&c, "audit: { conn_open: false }\n", "m.yaml", &err), 0);
	assert_false(c.conn_open);
	config_done(&c);
}

static void test_policy_watch(void **state)
{
	struct config c;
	struct diag err = { 0 };

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_false(c.policy_watch);
	assert_int_equal(cparse(&c, "policy_watch: true\n", "w.yaml", &err), 0);
	assert_true(c.policy_watch);
	assert_int_equal(cparse(&c, "policy_watch: yes please\n", "w.yaml", &err), -EINVAL);
	assert_true(c.policy_watch);
	config_done(&c);
}

/* verify_interval: off by default; seconds, at most a day; a bad value is rejected whole. */
static void test_verify_interval(void **state)
{
	struct config c;
	struct diag err = { 0 };

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(c.verify_interval_s, 0);
	assert_int_equal(cparse(&c, "verify_interval: 300\n", "v.yaml", &err), 0);
	assert_int_equal(c.verify_interval_s, 300);
	assert_int_equal(cparse(&c, "verify_interval: 86401\n", "v.yaml", &err), -EINVAL);
	assert_int_equal(c.verify_interval_s, 300);
	assert_int_equal(cparse(&c, "verify_interval: soon\n", "v.yaml", &err), -EINVAL);
	assert_int_equal(cparse(&c, "verify_interval: 0\n", "v.yaml", &err), 0);
	assert_int_equal(c.verify_interval_s, 0);
	config_done(&c);
}

/* dataplane.fast_path: on by default; a bad value is rejected whole. */
static void test_dataplane(void **state)
{
	struct config c;
	struct diag err = { 0 };

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_true(c.fast_path);
	assert_int_equal(cparse(&c, "dataplane: { fast_path: false }\n", "d.yaml", &err), 0);
	assert_false(c.fast_path);
	assert_int_equal(cparse(&c, "dataplane: { fast_path: true }\n", "d.yaml", &err), 0);
	assert_true(c.fast_path);
	assert_int_equal(c.flowtable, CONFIG_FLOWTABLE_AUTO);
	assert_int_equal(cparse(&c, "dataplane: { fast_path: false, flowtable: true }\n", "d.yaml", &err),
			 0);
	assert_false(c.fast_path);
	assert_int_equal(c.flowtable, CONFIG_FLOWTABLE_ON);
	assert_int_equal(cparse(&c, "dataplane: { flowtable: false }\n", "d.yaml", &err), 0);
	assert_int_equal(c.flowtable, CONFIG_FLOWTABLE_OFF);
	assert_int_equal(cparse(&c, "dataplane: { flowtable: auto }\n", "d.yaml", &err), 0);
	assert_int_equal(c.flowtable, CONFIG_FLOWTABLE_AUTO);
	/* A bad value: a clear error at its line, the last good value kept. */
	assert_int_equal(cparse(&c, "dataplane:\n  flowtable: yes\n", "d.yaml", &err), -EINVAL);
	assert_int_equal(err.line, 2);
	assert_non_null(strstr(err.msg, "dataplane.flowtable: expected auto, true or false, got 'yes'"));
	assert_int_equal(c.flowtable, CONFIG_FLOWTABLE_AUTO);
	assert_int_equal(cparse(&c, "dataplane: { flowtable: [auto] }\n", "d.yaml", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "dataplane.flowtable: expected auto, true or false, got a list"));
	assert_int_equal(cparse(&c, "dataplane: { fast_path: true, nope: 1 }\n", "d.yaml", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "dataplane: unknown key 'nope' (allowed: fast_path, flowtable)"));
	c.fast_path = true;
	assert_int_equal(cparse(&c, "dataplane: off\n", "d.yaml", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "dataplane: expected a mapping"));
	assert_true(c.fast_path);
	config_done(&c);
}

/* ipfix: and audit.journal: defaults, every key, the collector forms, errors at LINE:COL. */
static void test_ipfix(void **state)
{
	struct config c;
	struct diag err = { 0 };
	struct config_ipfix_collector cl;
	char u[CONFIG_IPFIX_URL_MAX];

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(c.ipfix.n_collectors, 0);
	assert_int_equal(c.ipfix.enterprise, 32473);	/* RFC 5612 */
	assert_int_equal(c.ipfix.observation_domain, 1);
	assert_int_equal(c.ipfix.template_refresh_s, 600);
	assert_int_equal(c.ipfix.reconnect_s, 60);
	assert_int_equal(c.ipfix.buffer_bytes, 4u << 20);
	assert_int_equal(c.ipfix.message_size, 1400);
	assert_false(c.audit_journal);
	assert_int_equal(cparse(&c, "audit: { journal: true }\n"
				"ipfix:\n"
				"  collectors: [udp://192.0.2.9, \"tcp://[2001:db8::9]:9995\", "
				"tcp://192.0.2.9:4739]\n"
				"  observation_domain: 4294967295\n"
				"  enterprise: 99\n"
				"  interim_interval: 30\n"
				"  template_refresh: 5\n"
				"  reconnect_interval: 1\n"
				"  buffer_size: 1073741824\n"
				"  message_size: 65535\n", "i.yaml", &err), 0);
	assert_true(c.audit_journal);
	assert_int_equal(c.ipfix.n_collectors, 3);
	assert_false(c.ipfix.collectors[0].tcp);
	assert_int_equal(c.ipfix.collectors[0].port, 4739);
	assert_string_equal(config_ipfix_format(&c.ipfix.collectors[0], u, sizeof(u)),
			    "udp://192.0.2.9:4739");
	assert_string_equal(config_ipfix_format(&c.ipfix.collectors[1], u, sizeof(u)),
			    "tcp://[2001:db8::9]:9995");
	assert_int_equal(c.ipfix.observation_domain, 4294967295u);
	assert_int_equal(c.ipfix.enterprise, 99);
	assert_int_equal(c.ipfix.interim_s, 30);
	assert_int_equal(c.ipfix.template_refresh_s, 5);
	assert_int_equal(c.ipfix.reconnect_s, 1);
	assert_int_equal(c.ipfix.buffer_bytes, 1u << 30);
	assert_int_equal(c.ipfix.message_size, 65535);
	/* null: no collectors, the rest stays */
	assert_int_equal(cparse(&c, "ipfix: { collectors: null }\n", "i.yaml", &err), 0);
	assert_int_equal(c.ipfix.n_collectors, 0);
	assert_int_equal(c.ipfix.enterprise, 99);
	config_done(&c);

	/* The collector parser alone. */
	assert_int_equal(config_ipfix_collector_parse("udp://[::1]", 11, &cl), 0);
	assert_int_equal(cl.port, 4739);
	assert_int_equal(config_ipfix_collector_parse("udp://::1", 9, &cl), -EINVAL);
	assert_int_equal(config_ipfix_collector_parse("sctp://192.0.2.9", 16, &cl), -EPROTONOSUPPORT);
	assert_int_equal(config_ipfix_collector_parse("udp://192.0.2.9:0", 17, &cl), -ERANGE);
	assert_int_equal(config_ipfix_collector_parse("udp://192.0.2.9:65536", 21, &cl), -ERANGE);
	assert_int_equal(config_ipfix_collector_parse("udp://192.0.2.9:", 16, &cl), -ERANGE);
	assert_int_equal(config_ipfix_collector_parse("udp://[2001:db8::1]x", 20, &cl), -EINVAL);
	assert_int_equal(config_ipfix_collector_parse("udp://[192.0.2.9]", 17, &cl), -EINVAL);
	assert_int_equal(config_ipfix_collector_parse("tcp://collector.example:4739", 28, &cl),
			 -EINVAL);
	assert_int_equal(config_ipfix_collector_parse("tcp://", 6, &cl), -EINVAL);
	/* Not NUL-terminated: only @len bytes are read. */
	assert_int_equal(config_ipfix_collector_parse("udp://192.0.2.9:47390", 20, &cl), 0);
	assert_int_equal(cl.port, 4739);

	expect_bad("ipfix:\n  collectors: [udp://192.0.2.9, ftp://192.0.2.9]\n", 2, 33,
		   "ipfix.collectors[1]: 'ftp://192.0.2.9': expected udp:// or tcp://");
	expect_bad("ipfix:\n  collectors:\n    - tcp://collector.example\n", 3, 7,
		   "names are not resolved");
	expect_bad("ipfix: { collectors: [\"udp://192.0.2.9:99999\"] }\n", 1, 23,
		   "bad port in 'udp://192.0.2.9:99999' (1-65535)");
	expect_bad("ipfix: { collectors: [udp://192.0.2.9, udp://192.0.2.9:4739] }\n", 1, 40,
		   "is listed twice");
	expect_bad("ipfix: { collectors: [udp://192.0.2.1, udp://192.0.2.2, udp://192.0.2.3, "
		   "udp://192.0.2.4, udp://192.0.2.5] }\n", 1, 91,
		   "too many collectors (the limit is 4)");
	expect_bad("ipfix: { collectors: udp://192.0.2.9 }\n", 1, 22,
		   "ipfix.collectors: expected a list");
	expect_bad("ipfix:\n  enterprise: 29305\n", 2, 15, "reserved for reverse elements");
	expect_bad("ipfix:\n  enterprise: 0\n", 2, 15,
		   "ipfix.enterprise: 0 is out of range (1-4294967295)");
	expect_bad("ipfix:\n  message_size: 512\n", 2, 17,
		   "ipfix.message_size: 512 is out of range (1024-65535)");
	expect_bad("ipfix:\n  buffer_size: 1k\n", 2, 16, "ipfix.buffer_size: '1k' is not a number");
	expect_bad("ipfix:\n  template_refresh: 0\n", 2, 21, "out of range (1-86400)");
	expect_bad("ipfix: { collector: [] }\n", 1, 10, "ipfix: unknown key 'collector'");
	expect_bad("ipfix: [udp://192.0.2.9]\n", 1, 8, "ipfix: expected a mapping");
	expect_bad("audit: { journal: yes }\n", 1, 19, "audit.journal: expected true or false");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_ipv6_disable),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_levels_and_rcodes),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_resolv_conf),
		cmocka_unit_test(test_size_limit),
		cmocka_unit_test(test_node_pool),
		cmocka_unit_test(test_policy_watch),
		cmocka_unit_test(test_verify_interval),
		cmocka_unit_test(test_metrics_listen),
		cmocka_unit_test(test_dataplane),
		cmocka_unit_test(test_ipfix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
