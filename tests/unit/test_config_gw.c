/*
 * test_config_gw - netd.yaml's gateway: and credentials:
 * (netd/model/config_gw.c): defaults, every key, every refusal at
 * FILE:LINE:COL (never quoting a secret), a failed parse leaving the config
 * as it was, and config_gateway_check()'s CA file.
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

#include "netd/model/config.h"

#define CRED(name, rest) "  " name ":\n    header: Authorization\n" \
	"    placeholder: netd-placeholder-" name "-00001\n    hosts: [api." name ".com]\n" rest

static void parse_ok(struct config *c, const char *yaml)
{
	struct diag err = { 0 };
	char msg[1024];

	assert_int_equal(config_init(c), 0);
	if (config_parse(c, yaml, strlen(yaml), "netd.yaml", &err) != 0)
		fail_msg("unexpected: %s", diag_format(&err, msg, sizeof(msg)));
}

static void expect_bad(const char *yaml, unsigned int line, unsigned int col, const char *frag)
{
	struct config c, before;
	struct diag err = { 0 };
	char msg[1024];
	int r;

	assert_int_equal(config_init(&c), 0);
	before = c;
	r = config_parse(&c, yaml, strlen(yaml), "bad.yaml", &err);
	diag_format(&err, msg, sizeof(msg));
	if (r != -EINVAL || err.line != line || err.col != col || !strstr(err.msg, frag))
		fail_msg("r=%d got \"%s\", want %u:%u \"...%s...\" for:\n%s", r, msg, line, col,
			 frag, yaml);
	/* never a secret in a message */
	assert_null(strstr(msg, "SECRETBYTES"));
	assert_memory_equal(&c, &before, sizeof(c));
	config_done(&c);
}

static void test_defaults(void **state)
{
	struct config c;

	(void)state;
	parse_ok(&c, "");
	assert_int_equal(c.gw_port, 15443);
	assert_string_equal(c.gw_user, "nobody");
	assert_null(c.gw_upstream_ca_file);
	assert_int_equal(c.gw_connect_timeout_s, 10);
	assert_int_equal(c.gw_idle_timeout_s, 300);
	assert_int_equal(c.n_creds, 0);
	assert_null(config_find_credential(&c, "openai"));
	config_done(&c);
	config_done(&c);
}

static void test_gateway(void **state)
{
	struct config c;

	(void)state;
	parse_ok(&c, "gateway:\n  port: 0\n  user: netd-gw\n  upstream_ca_file: /etc/ssl/test.pem\n"
		 "  connect_timeout: 3\n  idle_timeout: 60\n");
	assert_int_equal(c.gw_port, 0);
	assert_string_equal(c.gw_user, "netd-gw");
	assert_string_equal(c.gw_upstream_ca_file, "/etc/ssl/test.pem");
	assert_int_equal(c.gw_ca_line, 4);
	assert_int_equal(c.gw_ca_col, 21);
	assert_int_equal(c.gw_connect_timeout_s, 3);
	assert_int_equal(c.gw_idle_timeout_s, 60);
	config_done(&c);
	parse_ok(&c, "gateway:\n");
	assert_int_equal(c.gw_port, 15443);
	config_done(&c);

	expect_bad("gateway: { prot: 1 }\n", 1, 12, "did you mean 'port'?");
	expect_bad("gateway: { port: 65536 }\n", 1, 18, "gateway.port: bad value '65536' (expected 0-65535)");
	expect_bad("gateway: { port: -1 }\n", 1, 18, "gateway.port: bad value");
	expect_bad("gateway: { user: Root }\n", 1, 18, "gateway.user: bad user name 'Root'");
	expect_bad("gateway: { user: \"a b\" }\n", 1, 18, "bad user name");
	expect_bad("gateway: { upstream_ca_file: ca.pem }\n", 1, 30, "expected an absolute path");
	expect_bad("gateway: { connect_timeout: 0 }\n", 1, 29, "expected 1-300");
	expect_bad("gateway: { idle_timeout: 86401 }\n", 1, 26, "expected 1-86400");
	expect_bad("gateway: [15443]\n", 1, 10, "gateway: expected a mapping, got a list");
}

static void test_credentials(void **state)
{
	struct config c;
	const struct config_credential *cr;

	(void)state;
	parse_ok(&c, "credentials:\n"
		 "  openai:\n    header: Authorization\n    format: \"Bearer {secret}\"\n"
		 "    placeholder: netd-placeholder-openai-0001\n"
		 "    hosts: [API.OpenAI.com., \"*.openai.azure.com\"]\n"
		 "    file: /etc/netd/secrets/openai\n"
		 "  gh:\n    header: X-Token\n    placeholder: netd-placeholder-gh-000001\n"
		 "    hosts: [api.github.com]\n    systemd: gh-token\n"
		 "  inline:\n    header: X-Key\n    placeholder: netd-placeholder-inline-0001\n"
		 "    hosts: [x.example.com]\n    value: \"sk 123\"\n");
	assert_int_equal(c.n_creds, 3);
	cr = config_find_credential(&c, "openai");
	assert_non_null(cr);
	assert_string_equal(cr->header, "Authorization");
	assert_string_equal(cr->format, "Bearer {secret}");
	assert_string_equal(cr->placeholder, "netd-placeholder-openai-0001");
	assert_int_equal(cr->n_hosts, 2);
	assert_string_equal(cr->hosts[0], "api.openai.com");	/* normalized */
	assert_string_equal(cr->hosts[1], "*.openai.azure.com");
	assert_int_equal(cr->src, CONFIG_CRED_FILE);
	assert_string_equal(cr->src_arg, "/etc/netd/secrets/openai");
	assert_null(cr->value);
	assert_int_equal(cr->line, 2);
	assert_int_equal(cr->col, 3);
	assert_int_equal(cr->src_line, 7);
	assert_int_equal(cr->src_col, 11);
	cr = config_find_credential(&c, "gh");
	assert_string_equal(cr->format, "{secret}");	/* the default */
	assert_int_equal(cr->src, CONFIG_CRED_SYSTEMD);
	assert_string_equal(cr->src_arg, "gh-token");
	cr = config_find_credential(&c, "inline");
	assert_int_equal(cr->src, CONFIG_CRED_VALUE);
	assert_null(cr->src_arg);
	assert_int_equal(cr->value_len, 6);
	assert_memory_equal(cr->value, "sk 123", 6);
	assert_string_equal(c.src_file, "netd.yaml");
	config_done(&c);
	assert_int_equal(c.n_creds, 0);
	assert_null(c.creds);
}

/* Parsed on top: a file without credentials: keeps them; one with credentials: replaces them. */
static void test_on_top(void **state)
{
	struct config c;
	struct diag err = { 0 };
	static const char more[] = "credentials:\n" CRED("b", "    value: x\n");

	(void)state;
	parse_ok(&c, "credentials:\n" CRED("a", "    value: x\n"));
	assert_int_equal(config_parse(&c, "log_level: debug\n", 17, "2.yaml", &err), 0);
	assert_non_null(config_find_credential(&c, "a"));
	assert_int_equal(config_parse(&c, more, strlen(more), "3.yaml", &err), 0);
	assert_null(config_find_credential(&c, "a"));
	assert_non_null(config_find_credential(&c, "b"));
	assert_int_equal(config_parse(&c, "credentials: {}\n", 16, "4.yaml", &err), 0);
	assert_int_equal(c.n_creds, 0);
	/* a bad file leaves them */
	assert_int_equal(config_parse(&c, more, strlen(more), "3.yaml", &err), 0);
	assert_int_equal(config_parse(&c, "credentials: { B: 1 }\n", 22, "5.yaml", &err), -EINVAL);
	assert_non_null(config_find_credential(&c, "b"));
	config_done(&c);
}

static void test_credentials_bad(void **state)
{
	char big[16384];
	size_t n;

	(void)state;
	expect_bad("credentials: [a]\n", 1, 14, "credentials: expected a mapping of names");
	expect_bad("credentials:\n  OpenAI: {}\n", 2, 3, "credentials: bad name 'OpenAI'");
	expect_bad("credentials:\n  a: x\n", 2, 6, "credentials.a: expected a mapping");
	expect_bad("credentials:\n" CRED("a", "    value: x\n") CRED("a", "    value: y\n"), 7, 3,
		   "duplicate name 'a' (first at line 2, column 3)");
	expect_bad("credentials:\n  a:\n    headr: X\n", 3, 5, "did you mean 'header'?");
	expect_bad("credentials:\n  a:\n    placeholder: netd-placeholder-a-0000001\n"
		   "    hosts: [a.com]\n    value: x\n", 2, 3, "missing required key 'header'");
	expect_bad("credentials:\n  a:\n    header: X\n    hosts: [a.com]\n    value: x\n", 2, 3,
		   "missing required key 'placeholder'");
	expect_bad("credentials:\n  a:\n    header: X\n    placeholder: netd-placeholder-a-0000001\n"
		   "    value: x\n", 2, 3, "missing required key 'hosts'");
	/* header */
	expect_bad("credentials:\n  a:\n    header: \"X Key\"\n    placeholder: netd-placeholder-a-0000001\n    hosts: [a.com]\n    value: x\n", 3, 13,
		   "expected a header name (an RFC 9110 token");
	expect_bad("credentials:\n  a:\n    header: host\n    placeholder: netd-placeholder-a-0000001\n"
		   "    hosts: [a.com]\n    value: x\n", 3, 13, "'host' frames the message");
	expect_bad("credentials:\n  a:\n    header: Content-Length\n"
		   "    placeholder: netd-placeholder-a-0000001\n    hosts: [a.com]\n    value: x\n",
		   3, 13, "frames the message");
	/* format */
	expect_bad("credentials:\n" CRED("a", "    format: Bearer\n    value: x\n"), 6, 13,
		   "has no {secret}");
	expect_bad("credentials:\n" CRED("a", "    format: \"{secret}{secret}\"\n    value: x\n"),
		   6, 13, "more than once");
	expect_bad("credentials:\n" CRED("a", "    format: \"Bearer\\r\\n{secret}\"\n    value: x\n"),
		   6, 13, "a control byte at byte 6");
	expect_bad("credentials:\n" CRED("a", "    format: \" {secret}\"\n    value: x\n"),
		   6, 13, "starts or ends with a space");
	/* placeholder */
	expect_bad("credentials:\n  a:\n    header: X\n    placeholder: short\n    hosts: [a.com]\n    value: x\n", 4, 18,
		   "placeholder: expected 16-256 bytes");
	expect_bad("credentials:\n  a:\n    header: X\n    placeholder: \"netd placeholder 0001\"\n    hosts: [a.com]\n    value: x\n",
		   4, 18, "expected 16-256 bytes of letters");
	expect_bad("credentials:\n  a:\n    header: X\n    placeholder: netd-placeholder-a-0000001\n"
		   "    hosts: [a.com]\n    value: x\n"
		   "  b:\n    header: X\n    placeholder: netd-placeholder-a-0000001\n"
		   "    hosts: [a.com]\n    value: x\n", 9, 18, "'netd-placeholder-a-0000001' is the "
		   "same as credentials.a's placeholder (line 2)");
	expect_bad("credentials:\n  a:\n    header: X\n    placeholder: netd-placeholder-a-0000001\n"
		   "    hosts: [a.com]\n    value: x\n"
		   "  b:\n    header: X\n    placeholder: netd-placeholder-a-0000001-long\n"
		   "    hosts: [a.com]\n    value: x\n", 9, 18, "holds credentials.a's placeholder");
	expect_bad("credentials:\n  a:\n    header: X\n    placeholder: xx-netd-placeholder-a-0000001\n"
		   "    hosts: [a.com]\n    value: x\n"
		   "  b:\n    header: X\n    placeholder: netd-placeholder-a-0000001\n"
		   "    hosts: [a.com]\n    value: x\n", 9, 18, "is inside credentials.a's");
	/* hosts */
	expect_bad("credentials:\n  a:\n    header: X\n    placeholder: netd-placeholder-a-0000001\n"
		   "    hosts: []\n    value: x\n", 5, 12, "empty list: a credential goes to at least one name");
	expect_bad("credentials:\n  a:\n    header: X\n    placeholder: netd-placeholder-a-0000001\n"
		   "    hosts: [\"*.com\"]\n    value: x\n", 5, 13, "bad host '*.com'");
	expect_bad("credentials:\n  a:\n    header: X\n    placeholder: netd-placeholder-a-0000001\n"
		   "    hosts: [\"a.*.com\"]\n    value: x\n", 5, 13, "bad host");
	expect_bad("credentials:\n  a:\n    header: X\n    placeholder: netd-placeholder-a-0000001\n"
		   "    hosts: [192.0.2.1]\n    value: x\n", 5, 13, "bad host");
	expect_bad("credentials:\n  a:\n    header: X\n    placeholder: netd-placeholder-a-0000001\n"
		   "    hosts: [a.com, A.com.]\n    value: x\n", 5, 20, "'a.com' is listed twice");
	/* the source */
	expect_bad("credentials:\n" CRED("a", ""), 2, 3, "where is the secret?");
	expect_bad("credentials:\n" CRED("a", "    file: /x\n    value: y\n"), 7, 5,
		   "one of file:, systemd: or value:, not 2");
	expect_bad("credentials:\n" CRED("a", "    file: secrets/a\n"), 6, 11,
		   "expected an absolute path");
	expect_bad("credentials:\n" CRED("a", "    systemd: a/b\n"), 6, 14, "LoadCredential=");
	expect_bad("credentials:\n" CRED("a", "    systemd: ..\n"), 6, 14, "LoadCredential=");
	expect_bad("credentials:\n" CRED("a", "    value: \"\"\n"), 6, 12, "credentials.a.value: empty");
	expect_bad("credentials:\n" CRED("a", "    value: \"SECRETBYTES\\r\\nX: y\"\n"), 6, 12,
		   "credentials.a.value: a CR, LF, NUL or other control byte at byte 11");
	expect_bad("credentials:\n" CRED("a", "    value: \"SECRETBYTES\\u0000\"\n"), 6, 12,
		   "expected a string");
	expect_bad("credentials:\n" CRED("a", "    value: \"SECRETBYTES \"\n"), 6, 12,
		   "a space at its start or end");
	n = (size_t)snprintf(big, sizeof(big), "credentials:\n" CRED("a", "    value: "));
	memset(big + n, 'S', CONFIG_CRED_SECRET_MAX + 1);
	snprintf(big + n + CONFIG_CRED_SECRET_MAX + 1, sizeof(big) - n - CONFIG_CRED_SECRET_MAX - 1,
		 "\n");
	expect_bad(big, 6, 12, "8193 bytes; the limit is 8192");
}

static void test_too_many(void **state)
{
	static char big[65536];
	size_t n = 0;

	(void)state;
	n += (size_t)snprintf(big + n, sizeof(big) - n, "credentials:\n");
	for (unsigned int i = 0; i <= CONFIG_MAX_CREDENTIALS; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "  c%u: {}\n", i);
	expect_bad(big, 2 + CONFIG_MAX_CREDENTIALS, 3, "credentials: too many (the limit is 64)");
}

static void test_gateway_check(void **state)
{
	char dir[] = "/tmp/test_config_gw.XXXXXX", path[128], yaml[256];
	struct config c;
	struct diag err = { 0 };
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ca.pem", dir);
	snprintf(yaml, sizeof(yaml), "gateway: { port: 0, upstream_ca_file: %s }\n", path);
	parse_ok(&c, yaml);
	assert_int_equal(config_gateway_check(&c, &err), -EINVAL);
	assert_int_equal(err.line, 1);
	assert_int_equal(err.col, 39);
	assert_non_null(strstr(err.msg, "gateway.upstream_ca_file: "));
	assert_non_null(strstr(err.msg, "No such file"));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("-----BEGIN CERTIFICATE-----\n", f);
	fclose(f);
	assert_int_equal(config_gateway_check(&c, &err), 0);
	config_done(&c);
	/* a directory is no CA file */
	snprintf(yaml, sizeof(yaml), "gateway: { port: 0, upstream_ca_file: %s }\n", dir);
	parse_ok(&c, yaml);
	assert_int_equal(config_gateway_check(&c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is not a regular file"));
	config_done(&c);
	/* a user that does not exist, only when the gateway is on */
	parse_ok(&c, "gateway: { user: no-such-user-netd-test }\n");
	assert_int_equal(config_gateway_check(&c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no user 'no-such-user-netd-test'"));
	assert_int_equal(err.line, 1);	/* at the value, as every other error */
	assert_int_equal(err.col, 18);
	config_done(&c);
	parse_ok(&c, "gateway: { port: 0, user: no-such-user-netd-test }\n");
	assert_int_equal(config_gateway_check(&c, &err), 0);
	config_done(&c);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_gateway),
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_on_top),
		cmocka_unit_test(test_credentials_bad),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_gateway_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
