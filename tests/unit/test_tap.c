/*
 * test_tap - the pure parts of netd/link/tap.c: the taps' names, the guest's
 * MAC, the kernel ip= argument, the MTU choice and the owner syntax; and
 * tap_create()'s refusals that come before any system call; and the API's
 * "kind": "tap" requests (netd/api/ctlreq.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/addr.h"
#include "netd/api/ctlreq.h"
#include "netd/link/tap.h"

static struct addr a4(const char *s)
{
	struct addr a;

	assert_int_equal(addr_parse(s, &a), 0);
	return a;
}

static void test_ifname(void **state)
{
	char b[16];

	(void)state;
	assert_int_equal(tap_ifname(1, b, sizeof(b)), 0);
	assert_string_equal(b, "ndt0001");
	assert_int_equal(tap_ifname(0xabcd, b, sizeof(b)), 0);
	assert_string_equal(b, "ndtabcd");
	assert_int_equal(tap_ifname(0x10000, b, sizeof(b)), -ERANGE);
	assert_int_equal(tap_ifname(1, b, 7), -ENOSPC);	/* needs 8 with the NUL */
	assert_int_equal(tap_ifname(1, b, 8), 0);
}

static void test_mac(void **state)
{
	uint8_t m1[6], m2[6], m3[6];
	char s[TAP_MAC_STRLEN];

	(void)state;
	tap_mac_from_name("vm1", m1);
	tap_mac_from_name("vm1", m2);
	tap_mac_from_name("vm2", m3);
	assert_memory_equal(m1, m2, 6);		/* stable */
	assert_memory_not_equal(m1, m3, 6);	/* name-derived */
	for (int i = 0; i < 4096; i++) {
		char name[16];
		uint8_t m[6];

		snprintf(name, sizeof(name), "sb%d", i);
		tap_mac_from_name(name, m);
		assert_int_equal(m[0] & 0x03, 0x02);	/* local, unicast */
	}
	tap_mac_format(m1, s);
	assert_int_equal(strlen(s), 17);
	assert_int_equal(tap_mac_parse(s, m2), 0);
	assert_memory_equal(m1, m2, 6);		/* round trip */
	assert_int_equal(tap_mac_parse("02:AB:cd:00:00:01", m2), 0);
	assert_int_equal(m2[1], 0xab);
	assert_int_equal(tap_mac_parse("03:00:00:00:00:01", m2), -EINVAL);	/* multicast */
	assert_int_equal(tap_mac_parse("ff:ff:ff:ff:ff:ff", m2), -EINVAL);
	assert_int_equal(tap_mac_parse("00:00:00:00:00:00", m2), -EINVAL);
	assert_int_equal(tap_mac_parse("02:00:00:00:00:0", m2), -EINVAL);
	assert_int_equal(tap_mac_parse("02-00-00-00-00-01", m2), -EINVAL);
	assert_int_equal(tap_mac_parse("02:00:00:00:00:0g", m2), -EINVAL);
	assert_int_equal(tap_mac_parse(NULL, m2), -EINVAL);
}

static void test_ip_arg(void **state)
{
	struct addr g = a4("10.87.0.2"), w = a4("10.87.0.1"), six;
	char b[TAP_IP_ARG_MAX];

	(void)state;
	assert_int_equal(tap_kernel_ip_arg(&g, &w, 30, b, sizeof(b)),
			 (int)strlen("ip=10.87.0.2::10.87.0.1:255.255.255.252::eth0:off"));
	assert_string_equal(b, "ip=10.87.0.2::10.87.0.1:255.255.255.252::eth0:off");
	assert_true(tap_kernel_ip_arg(&g, &w, 24, b, sizeof(b)) > 0);
	assert_string_equal(b, "ip=10.87.0.2::10.87.0.1:255.255.255.0::eth0:off");
	assert_true(tap_kernel_ip_arg(&g, &w, 32, b, sizeof(b)) > 0);
	assert_string_equal(b, "ip=10.87.0.2::10.87.0.1:255.255.255.255::eth0:off");
	assert_true(tap_kernel_ip_arg(&g, &w, 1, b, sizeof(b)) > 0);
	assert_string_equal(b, "ip=10.87.0.2::10.87.0.1:128.0.0.0::eth0:off");
	assert_int_equal(tap_kernel_ip_arg(&g, &w, 0, b, sizeof(b)), -EINVAL);
	assert_int_equal(tap_kernel_ip_arg(&g, &w, 33, b, sizeof(b)), -EINVAL);
	assert_int_equal(addr_parse("fd00::2", &six), 0);
	assert_int_equal(tap_kernel_ip_arg(&six, &w, 30, b, sizeof(b)), -EINVAL);
	assert_int_equal(tap_kernel_ip_arg(&g, &w, 30, b, 20), -ENOSPC);
}

static void test_mtu(void **state)
{
	(void)state;
	assert_int_equal(tap_mtu(0, 0), 1500);
	assert_int_equal(tap_mtu(0, 1500), 1500);
	assert_int_equal(tap_mtu(0, 9000), 1500);	/* jumbo uplink: guest stays at 1500 */
	assert_int_equal(tap_mtu(0, 1450), 1450);	/* cloud overlay uplink */
	assert_int_equal(tap_mtu(0, 1000), TAP_MTU_MIN);
	assert_int_equal(tap_mtu(9000, 1450), 9000);	/* asked for: the caller's choice */
	assert_int_equal(tap_mtu(1280, 0), 1280);
	assert_int_equal(tap_mtu(1279, 0), -ERANGE);
	assert_int_equal(tap_mtu(65522, 0), -ERANGE);
}

static void test_owner(void **state)
{
	uid_t u;
	gid_t g;

	(void)state;
	assert_int_equal(tap_owner_parse("1000", &u, &g), 0);
	assert_int_equal(u, 1000);
	assert_int_equal(g, TAP_NO_GROUP);
	assert_int_equal(tap_owner_parse("1000:2000", &u, &g), 0);
	assert_int_equal(u, 1000);
	assert_int_equal(g, 2000);
	assert_int_equal(tap_owner_parse("0:0", &u, &g), 0);
	assert_int_equal(u, 0);
	assert_int_equal(tap_owner_parse("4294967294", &u, &g), 0);
	assert_int_equal(tap_owner_parse("4294967295", &u, &g), -EINVAL);	/* (uid_t)-1 */
	assert_int_equal(tap_owner_parse("1000:4294967295", &u, &g), -EINVAL);
	assert_int_equal(tap_owner_parse("99999999999", &u, &g), -EINVAL);
	assert_int_equal(tap_owner_parse("", &u, &g), -EINVAL);
	assert_int_equal(tap_owner_parse(":5", &u, &g), -EINVAL);
	assert_int_equal(tap_owner_parse("5:", &u, &g), -EINVAL);
	assert_int_equal(tap_owner_parse("-1", &u, &g), -EINVAL);
	assert_int_equal(tap_owner_parse("alice", &u, &g), -EINVAL);
	assert_int_equal(tap_owner_parse("1:2:3", &u, &g), -EINVAL);
	assert_int_equal(tap_owner_parse(NULL, &u, &g), -EINVAL);
}

static void test_create_refusals(void **state)
{
	struct tap_spec s = { .ifname = "ndt0001", .owner = 1000, .group = TAP_NO_GROUP, .queues = 1 };
	struct tap_spec t;

	(void)state;
	t = s;
	t.owner = (uid_t)-1;	/* never ownerless */
	assert_int_equal(tap_create(&t), -EINVAL);
	t = s;
	t.queues = 0;
	assert_int_equal(tap_create(&t), -EINVAL);
	t.queues = TAP_QUEUES_MAX + 1;
	assert_int_equal(tap_create(&t), -EINVAL);
	t = s;
	t.ifname = "a-name-too-long-";
	assert_int_equal(tap_create(&t), -EINVAL);
	t.ifname = "a/b";
	assert_int_equal(tap_create(&t), -EINVAL);
	t.ifname = "";
	assert_int_equal(tap_create(&t), -EINVAL);
	t = s;
	t.mtu = 100;
	assert_int_equal(tap_create(&t), -EINVAL);
	assert_int_equal(tap_create(NULL), -EINVAL);
	assert_int_equal(tap_delete("a b"), -EINVAL);
}

static int req(const char *body, struct sandbox_request *sr, char *err, size_t errsz)
{
	json_t *obj = NULL;
	int r = ctlreq_sandbox(body, strlen(body), sr, &obj, err, errsz);

	json_decref(obj);	/* (the string members die with it; tests below use numbers) */
	return r;
}

static void test_request(void **state)
{
	struct sandbox_request sr;
	char err[256];

	(void)state;
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\","
			     "\"tap\":{\"owner\":1000,\"group\":2000,\"queues\":4,\"mtu\":1400}}",
			     &sr, err, sizeof(err)), 0);
	assert_true(sr.tap);
	assert_int_equal(sr.tap_owner, 1000);
	assert_true(sr.tap_group_set);
	assert_int_equal(sr.tap_group, 2000);
	assert_int_equal(sr.tap_queues, 4);
	assert_int_equal(sr.tap_mtu, 1400);
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\","
			     "\"tap\":{\"owner\":0}}", &sr, err, sizeof(err)), 0);
	assert_false(sr.tap_group_set);
	assert_int_equal(sr.tap_queues, 0);
	/* A veth sandbox, said out loud. */
	assert_int_equal(req("{\"name\":\"a\",\"policy\":\"p\",\"kind\":\"interface\"}", &sr, err,
			     sizeof(err)), 0);
	assert_false(sr.tap);
	/* Never ownerless. */
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\"}", &sr, err,
			     sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "owner"));
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\",\"tap\":{}}", &sr,
			     err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "tap.owner"));
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\","
			     "\"tap\":{\"owner\":4294967295}}", &sr, err, sizeof(err)), -EINVAL);
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\","
			     "\"tap\":{\"owner\":-1}}", &sr, err, sizeof(err)), -EINVAL);
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\","
			     "\"tap\":{\"owner\":\"1000\"}}", &sr, err, sizeof(err)), -EINVAL);
	/* Limits. */
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\","
			     "\"tap\":{\"owner\":1,\"queues\":257}}", &sr, err, sizeof(err)), -EINVAL);
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\","
			     "\"tap\":{\"owner\":1,\"queues\":0}}", &sr, err, sizeof(err)), -EINVAL);
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\","
			     "\"tap\":{\"owner\":1,\"mtu\":100}}", &sr, err, sizeof(err)), -EINVAL);
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\","
			     "\"tap\":{\"owner\":1,\"colour\":1}}", &sr, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "tap.colour"));
	/* What a tap has no use for. */
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\","
			     "\"netns\":\"/proc/1/ns/net\",\"tap\":{\"owner\":1}}", &sr, err,
			     sizeof(err)), -EINVAL);
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"tap\","
			     "\"attach\":{\"host_ifname\":\"x\",\"ipv4\":\"10.0.0.1\"},"
			     "\"tap\":{\"owner\":1}}", &sr, err, sizeof(err)), -EINVAL);
	/* "tap" alone, or another kind. */
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"tap\":{\"owner\":1}}", &sr, err,
			     sizeof(err)), -EINVAL);
	assert_int_equal(req("{\"name\":\"vm1\",\"policy\":\"p\",\"kind\":\"chained\"}", &sr, err,
			     sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ifname),
		cmocka_unit_test(test_mac),
		cmocka_unit_test(test_ip_arg),
		cmocka_unit_test(test_mtu),
		cmocka_unit_test(test_owner),
		cmocka_unit_test(test_create_refusals),
		cmocka_unit_test(test_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
