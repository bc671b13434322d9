/*
 * test_hostcheck - requested addresses and interfaces against the host's:
 * upstream resolver, own addresses, router, loopback, multicast, lo and
 * the egress interface are refused with the reason; a shared IPAM gateway
 * is not a collision; ordinary addresses pass.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "netd/daemon/hostcheck.h"

static struct addr A(const char *s)
{
	struct addr a;

	assert_int_equal(addr_parse(s, &a), 0);
	return a;
}

static struct prefix local[3];
static struct addr routers[1], upstreams[2];
static struct hostcheck_facts facts;

static int setup(void **state)
{
	local[0] = (struct prefix){ A("192.0.2.10"), 32 };
	local[1] = (struct prefix){ A("2001:db8::10"), 128 };
	local[2] = (struct prefix){ A("10.89.0.1"), 32 };	/* an IPAM gateway on a sandbox veth */
	routers[0] = A("192.0.2.1");
	upstreams[0] = A("198.51.100.53");
	upstreams[1] = A("2001:db8::53");
	facts = (struct hostcheck_facts){ local, 3, routers, 1, upstreams, 2, "eth0" };
	return 0;
}

static void refused(const char *addr, enum hostcheck_role role, const char *why_part)
{
	struct addr a = A(addr);
	char why[128] = "";

	assert_int_equal(hostcheck_addr(&facts, &a, role, false, why, sizeof(why)), -EINVAL);
	if (!strstr(why, why_part))
		fail_msg("%s: reason \"%s\" lacks \"%s\"", addr, why, why_part);
}

static void test_collisions(void **state)
{
	refused("198.51.100.53", HOSTCHECK_GATEWAY, "upstream resolver");
	refused("2001:db8::53", HOSTCHECK_SANDBOX, "upstream resolver");
	refused("192.0.2.10", HOSTCHECK_SANDBOX, "host's own");
	refused("192.0.2.10", HOSTCHECK_GATEWAY, "host's own");
	refused("192.0.2.1", HOSTCHECK_GATEWAY, "router");
	refused("127.0.0.1", HOSTCHECK_GATEWAY, "loopback");
	refused("127.3.4.5", HOSTCHECK_SANDBOX, "loopback");
	refused("::1", HOSTCHECK_SANDBOX, "loopback");
	refused("0.0.0.0", HOSTCHECK_SANDBOX, "unspecified");
	refused("224.0.0.1", HOSTCHECK_SANDBOX, "multicast");
	refused("ff02::1", HOSTCHECK_GATEWAY, "multicast");
	refused("255.255.255.255", HOSTCHECK_GATEWAY, "broadcast");
	refused("::ffff:127.0.0.1", HOSTCHECK_SANDBOX, "IPv4-mapped");
}

static void test_allowed(void **state)
{
	struct addr a = A("10.89.0.10"), g = A("10.89.0.1");
	char why[128] = "";

	assert_int_equal(hostcheck_addr(&facts, &a, HOSTCHECK_SANDBOX, false, why, sizeof(why)), 0);
	/* The range's gateway is on another sandbox's veth already: shared, fine ... */
	assert_int_equal(hostcheck_addr(&facts, &g, HOSTCHECK_GATEWAY, true, why, sizeof(why)), 0);
	/* ... but never as a sandbox's own address, nor unshared. */
	assert_int_equal(hostcheck_addr(&facts, &g, HOSTCHECK_SANDBOX, true, why, sizeof(why)), -EINVAL);
	assert_int_equal(hostcheck_addr(&facts, &g, HOSTCHECK_GATEWAY, false, why, sizeof(why)), -EINVAL);
}

static void test_ifname(void **state)
{
	char why[128] = "";

	assert_int_equal(hostcheck_ifname(&facts, "lo", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "loopback"));
	assert_int_equal(hostcheck_ifname(&facts, "eth0", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "egress"));
	assert_int_equal(hostcheck_ifname(&facts, "veth1234", why, sizeof(why)), 0);
	facts.egress_ifname = "";
	assert_int_equal(hostcheck_ifname(&facts, "eth0", why, sizeof(why)), 0);
	facts.egress_ifname = "eth0";
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collisions),
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_ifname),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
