/*
 * test_reason - common/reason.c: every reason's word (DNS, deny, gateway)
 * maps back to it; NULL, an unknown word and "other" itself map to the
 * OTHER entry; a few words the audit log and its readers depend on, to
 * the letter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/reason.h"

static void test_dns(void **state)
{
	(void)state;
	for (int r = 0; r < REASON_DNS_OTHER; r++)
		assert_int_equal(reason_dns_of(reason_dns_name((enum reason_dns)r)), r);
	assert_int_equal(reason_dns_of(NULL), REASON_DNS_OTHER);
	assert_int_equal(reason_dns_of("other"), REASON_DNS_OTHER);
	assert_int_equal(reason_dns_of("rate-limited"), REASON_DNS_OTHER);
	assert_string_equal(reason_dns_name(REASON_DNS_OTHER), "other");
	assert_string_equal(reason_dns_name(REASON_DNS_POLICY), "policy");
	assert_string_equal(reason_dns_name(REASON_DNS_NOT_IN_POLICY), "not-in-policy");
	assert_string_equal(reason_dns_name(REASON_DNS_QNAME_TOO_LONG), "qname-too-long");
	assert_string_equal(reason_dns_name(REASON_DNS_UPSTREAM_FAILURE), "upstream-failure");
	assert_string_equal(reason_dns_name(REASON_DNS_BUDGET), "dns-budget");
	assert_string_equal(reason_dns_name(REASON_DNS_ENCODED), "dns-encoded");
	assert_string_equal(reason_dns_name(N_REASON_DNS), "other");
}

static void test_deny(void **state)
{
	(void)state;
	for (int r = 0; r < REASON_DENY_OTHER; r++)
		assert_int_equal(reason_deny_of(reason_deny_name((enum reason_deny)r)), r);
	assert_int_equal(reason_deny_of(NULL), REASON_DENY_OTHER);
	assert_int_equal(reason_deny_of("other"), REASON_DENY_OTHER);
	assert_int_equal(reason_deny_of("to-sandbox"), REASON_DENY_OTHER);
	assert_string_equal(reason_deny_name(REASON_DENY_NOT_PINNED), "not-pinned");
	assert_string_equal(reason_deny_name(REASON_DENY_SANDBOX_TO_SANDBOX), "sandbox-to-sandbox");
	assert_string_equal(reason_deny_name(N_REASON_DENY), "other");
}

static void test_gw(void **state)
{
	(void)state;
	for (int r = 0; r < REASON_GW_OTHER; r++)
		assert_int_equal(reason_gw_of(reason_gw_name((enum reason_gw)r)), r);
	assert_int_equal(reason_gw_of(NULL), REASON_GW_OTHER);
	assert_int_equal(reason_gw_of("other"), REASON_GW_OTHER);
	assert_int_equal(reason_gw_of("not-pinned"), REASON_GW_OTHER);
	/* the words sandboxes see in X-Netd-Reason and the integration tests grep */
	assert_string_equal(reason_gw_name(REASON_GW_HOST_MISMATCH), "host-mismatch");
	assert_string_equal(reason_gw_name(REASON_GW_CREDENTIAL_MISDIRECTED),
			    "credential-misdirected");
	assert_string_equal(reason_gw_name(REASON_GW_RATE_LIMITED), "rate-limited");
	assert_string_equal(reason_gw_name(REASON_GW_UPSTREAM_UNTRUSTED), "upstream-untrusted");
	assert_string_equal(reason_gw_name(REASON_GW_UPSTREAM_CONNECT), "upstream-connect");
	assert_string_equal(reason_gw_name(REASON_GW_UPSTREAM_TLS), "upstream-tls");
	assert_string_equal(reason_gw_name(REASON_GW_SNI_NOT_PINNED), "sni-not-pinned");
	assert_string_equal(reason_gw_name(N_REASON_GW), "other");
	/* each word fits the "http" message's reason field (netd/gw/ipc.h: 32 bytes) */
	for (int r = 0; r < N_REASON_GW; r++)
		assert_true(strlen(reason_gw_name((enum reason_gw)r)) < 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_deny),
		cmocka_unit_test(test_gw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
