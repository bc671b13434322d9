/*
 * test_config_example - deploy/netd.yaml.example, the config `make install`
 * ships: as shipped (all commented) it is the defaults; with every key
 * uncommented it still parses (so no key is misspelt or unknown), every
 * key netd knows is in it, and the values it shows are the defaults.
 * The same for docs/configuration.md's "A complete file with every default".
 * Run from the repository root (tests/run.sh does).
 */
#include <errno.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/log.h"
#include "netd/model/config.h"

#define EXAMPLE "deploy/netd.yaml.example"
#define DOC "docs/configuration.md"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* "#key: v" and "  #key: v" -> "key: v"; prose ("# ...") stays a comment. */
static char *uncomment(const char *in)
{
	char *out = malloc(strlen(in) + 1), *o = out;
	const char *p = in;

	assert_non_null(out);
	while (*p) {
		const char *sp = p;

		while (*sp == ' ')
			sp++;
		if (*sp == '#' && sp[1] >= 'a' && sp[1] <= 'z') {
			memcpy(o, p, (size_t)(sp - p));
			o += sp - p;
			p = sp + 1;
		}
		while (*p && *p != '\n')
			*o++ = *p++;
		if (*p)
			*o++ = *p++;
	}
	*o = '\0';
	return out;
}

static void as_shipped_is_the_defaults(void **state)
{
	struct config c, d;
	struct diag err = { 0 };
	size_t len;
	char *y = slurp(EXAMPLE, &len);

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_init(&d), 0);
	assert_int_equal(config_parse(&c, y, len, EXAMPLE, &err), 0);
	assert_string_equal(c.socket, d.socket);
	assert_int_equal(c.dns_port, d.dns_port);
	config_done(&c);
	config_done(&d);
	free(y);
}

static void uncommented_parses_with_the_defaults(void **state)
{
	struct config c, d;
	struct diag err = { 0 };
	char msg[512], addr[64];
	size_t len;
	char *raw = slurp(EXAMPLE, &len), *y = uncomment(raw);
	int r;

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_init(&d), 0);
	r = config_parse(&c, y, strlen(y), EXAMPLE " (uncommented)", &err);
	if (r < 0)
		fail_msg("%s", diag_format(&err, msg, sizeof(msg)));
	assert_string_equal(c.socket, d.socket);
	assert_string_equal(c.state_dir, d.state_dir);
	assert_string_equal(c.policy_dir, d.policy_dir);
	assert_string_equal(c.audit_log, d.audit_log);
	assert_string_equal(prefix_format(&c.pool4, addr, sizeof(addr)), "10.87.0.0/16");
	assert_string_equal(prefix_format(&c.pool6, addr, sizeof(addr)), "fd00:87::/48");
	assert_int_equal(c.dns_port, d.dns_port);
	assert_int_equal(c.min_ttl_s, d.min_ttl_s);
	assert_int_equal(c.max_ttl_s, d.max_ttl_s);
	assert_int_equal(c.deny_rcode, d.deny_rcode);
	assert_int_equal(c.dns_cache_size, d.dns_cache_size);
	assert_int_equal(c.dns_idle_grace_s, d.dns_idle_grace_s);
	assert_int_equal(c.dns_udp_gso, d.dns_udp_gso);
	assert_int_equal(c.log_level, d.log_level);
	assert_int_equal(c.audit_rotate_bytes, d.audit_rotate_bytes);
	assert_int_equal(c.audit_keep, d.audit_keep);
	assert_int_equal(c.conn_update_interval_s, d.conn_update_interval_s);
	assert_int_equal(c.reload_cut_removed, d.reload_cut_removed);
	assert_int_equal(c.conn_limit, d.conn_limit);
	/* 0 in struct config means the module's default; the example spells it out. */
	assert_int_equal(c.dns_qps, 1000);
	assert_int_equal(c.dns_burst, 2000);
	assert_int_equal(c.dns_max_outstanding, 256);
	assert_int_equal(c.dns_max_pins, 16384);
	assert_int_equal(c.dns_max_pins_per_name, 64);
	assert_int_equal(c.conntrack_rcvbuf_bytes, 8u << 20);
	assert_int_equal(c.audit_journal, d.audit_journal);
	assert_int_equal(c.ipfix.observation_domain, d.ipfix.observation_domain);
	assert_int_equal(c.ipfix.enterprise, 32473);
	assert_int_equal(c.ipfix.interim_s, d.ipfix.interim_s);
	assert_int_equal(c.ipfix.template_refresh_s, d.ipfix.template_refresh_s);
	assert_int_equal(c.ipfix.reconnect_s, d.ipfix.reconnect_s);
	assert_int_equal(c.ipfix.buffer_bytes, d.ipfix.buffer_bytes);
	assert_int_equal(c.ipfix.message_size, d.ipfix.message_size);
	/* examples, not defaults: upstream, egress_interface, ipfix.collectors */
	assert_int_equal(c.ipfix.n_collectors, 2);
	assert_int_equal(c.n_upstream, 2);
	assert_string_equal(c.egress_interface, "eth0");
	config_done(&c);
	config_done(&d);
	free(raw);
	free(y);
}

/* netd/model/config.c's schema: parse_doc(), parse_pool(), parse_dns(),
 * parse_audit(), parse_reload(), parse_limits(); config_ipfix.c's parse_ipfix().
 * A new key belongs here, in the example and in the documentation. */
static const char *const keys[] = {
	"socket:", "state_dir:", "policy_dir:", "audit_log:", "upstream:",
	"egress_interface:", "pool:", "ipv4:", "ipv6:", "dns:", "port:", "min_ttl:",
	"max_ttl:", "deny_rcode:", "qps:", "burst:", "max_outstanding:", "max_pins:",
	"max_pins_per_name:", "cache_size:", "idle_grace:", "udp_gso:", "log_level:",
	"audit:", "rotate_size:", "keep:", "conn_update_interval:", "conntrack_rcvbuf:",
	"reload:", "cut_removed:", "limits:", "connections:", "verify_interval:",
	"gateway:", "user:", "upstream_ca_file:", "connect_timeout:", "idle_timeout:",
	"credentials:", "journal:", "ipfix:", "collectors:", "observation_domain:",
	"enterprise:", "interim_interval:", "template_refresh:", "reconnect_interval:",
	"buffer_size:", "message_size:",
};

static void every_key_is_there(void **state)
{
	size_t len;
	char *y = slurp(EXAMPLE, &len);

	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char pat[64];
		regex_t re;

		snprintf(pat, sizeof(pat), "^ *#%s", keys[i]);
		assert_int_equal(regcomp(&re, pat, REG_NEWLINE | REG_NOSUB), 0);
		if (regexec(&re, y, 0, NULL, 0) != 0)
			fail_msg("%s: no commented key line for %s", EXAMPLE, keys[i]);
		regfree(&re);
	}
	free(y);
}

/* docs/configuration.md's "A complete file with every default": the yaml
 * block after that heading. */
static char *doc_complete_file(void)
{
	size_t len;
	char *md = slurp(DOC, &len), *b, *e, *y;

	b = strstr(md, "## A complete file with every default");
	assert_non_null(b);
	b = strstr(b, "```yaml\n");
	assert_non_null(b);
	b += strlen("```yaml\n");
	e = strstr(b, "```");
	assert_non_null(e);
	y = strndup(b, (size_t)(e - b));
	assert_non_null(y);
	free(md);
	return y;
}

static void doc_complete_file_is_the_defaults(void **state)
{
	struct config c, d;
	struct diag err = { 0 };
	char msg[512];
	char *y = doc_complete_file();

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_init(&d), 0);
	if (config_parse(&c, y, strlen(y), DOC, &err) < 0)
		fail_msg("%s", diag_format(&err, msg, sizeof(msg)));
	assert_string_equal(c.socket, d.socket);
	assert_string_equal(c.state_dir, d.state_dir);
	assert_string_equal(c.audit_log, d.audit_log);
	assert_int_equal(c.dns_port, d.dns_port);
	assert_int_equal(c.dns_cache_size, d.dns_cache_size);
	assert_int_equal(c.audit_journal, d.audit_journal);
	assert_int_equal(c.ipfix.n_collectors, 0);
	assert_int_equal(c.ipfix.enterprise, 32473);
	assert_int_equal(c.ipfix.interim_s, d.ipfix.interim_s);
	assert_int_equal(c.ipfix.template_refresh_s, d.ipfix.template_refresh_s);
	assert_int_equal(c.ipfix.reconnect_s, d.ipfix.reconnect_s);
	assert_int_equal(c.ipfix.buffer_bytes, d.ipfix.buffer_bytes);
	assert_int_equal(c.ipfix.message_size, d.ipfix.message_size);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strstr(y, keys[i]))
			fail_msg("%s: the complete file has no %s", DOC, keys[i]);
	config_done(&c);
	config_done(&d);
	free(y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(as_shipped_is_the_defaults),
		cmocka_unit_test(uncommented_parses_with_the_defaults),
		cmocka_unit_test(every_key_is_there),
		cmocka_unit_test(doc_complete_file_is_the_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
