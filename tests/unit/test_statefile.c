/*
 * test_statefile - sandbox state files: the four kinds parse, format and
 * parse back to the same struct; what a restore must never take (bad
 * names, NUL, negative or too-large slots, wrong families, IPAM without a
 * gateway, trailing junk, a bad pod name) is refused with a reason; the
 * container and pod fields are optional and round-trip.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netd/daemon/statefile.h"

static int parse(const char *text, struct statefile *sf, char *err, size_t errsz)
{
	return statefile_parse(text, strlen(text), sf, err, errsz);
}

static void roundtrip(const struct statefile *sf)
{
	struct statefile back;
	char err[256] = "";
	char *text = statefile_format(sf);

	assert_non_null(text);
	assert_int_equal(parse(text, &back, err, sizeof(err)), 0);
	assert_memory_equal(sf, &back, sizeof(back));
	free(text);
}

static void test_pool(void **state)
{
	struct statefile sf;
	char err[256] = "";

	assert_int_equal(parse("{\"name\":\"sb1\",\"policy\":\"python-dev\",\"netns\":\"/run/netns/sb1\","
			       "\"netns_owned\":true,\"ifname\":\"eth0\",\"slot\":3,\"created\":7,"
			       "\"policy_digest\":\"00ff\",\"future_key\":[1]}", &sf, err, sizeof(err)), 0);
	assert_string_equal(sf.name, "sb1");
	assert_string_equal(sf.policy, "python-dev");
	assert_true(sf.netns_owned);
	assert_int_equal(sf.slot, 3);
	assert_int_equal(sf.created, 7);
	assert_string_equal(sf.digest, "00ff");
	assert_true(sf.ipv6);	/* absent: true, as netd before "ipv6" wrote it */
	assert_int_equal(sf.kind, STATEFILE_POOL);
	roundtrip(&sf);
}

/* A sandbox's own mode (create --mode): kept only when set; junk refused. */
static void test_mode(void **state)
{
	static const char base[] = "{\"name\":\"sb1\",\"policy\":\"p\",\"netns\":\"/run/netns/sb1\","
				   "\"netns_owned\":true,\"ifname\":\"eth0\",\"slot\":3";
	struct statefile sf;
	char err[256] = "", text[512];
	char *out;

	(void)state;
	snprintf(text, sizeof(text), "%s}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), 0);
	assert_int_equal(sf.mode, 0);
	out = statefile_format(&sf);
	assert_null(strstr(out, "\"mode\""));	/* older readers see what they did */
	free(out);
	snprintf(text, sizeof(text), "%s,\"mode\":\"audit\"}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), 0);
	assert_int_equal(sf.mode, 2);
	roundtrip(&sf);
	snprintf(text, sizeof(text), "%s,\"mode\":\"enforce\"}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), 0);
	assert_int_equal(sf.mode, 1);
	roundtrip(&sf);
	snprintf(text, sizeof(text), "%s,\"mode\":\"log\"}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "\"mode\" must be \"audit\" or \"enforce\""));
	snprintf(text, sizeof(text), "%s,\"mode\":2}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), -EINVAL);
}

static void test_ipam_and_chained(void **state)
{
	struct statefile sf;
	char err[256] = "", a[ADDR_STRLEN];

	assert_int_equal(parse("{\"name\":\"c1\",\"policy\":\"p\",\"netns\":\"/proc/1/ns/net\","
			       "\"netns_owned\":false,\"ifname\":\"eth0\",\"slot\":0,\"ipv6\":false,"
			       "\"ipv4_addr\":\"10.89.0.10\",\"gateway4\":\"10.89.0.1\",\"plen4\":24,"
			       "\"ipv6_addr\":null,\"gateway6\":null,\"plen6\":0}", &sf, err,
			       sizeof(err)), 0);
	assert_int_equal(sf.kind, STATEFILE_IPAM);
	assert_string_equal(addr_format(&sf.gw4, a, sizeof(a)), "10.89.0.1");
	assert_int_equal(sf.plen4, 24);
	assert_int_equal(sf.addr6.family, 0);
	assert_false(sf.ipv6);
	roundtrip(&sf);
	assert_int_equal(parse("{\"name\":\"k1\",\"policy\":\"p\",\"netns\":\"\",\"netns_owned\":false,"
			       "\"ifname\":\"eth0\",\"slot\":1,\"kind\":\"chained\",\"host_ifname\":"
			       "\"veth1\",\"ipv4_addr\":null,\"ipv6_addr\":\"2001:db8::5\"}", &sf, err,
			       sizeof(err)), 0);
	assert_int_equal(sf.kind, STATEFILE_CHAINED);
	assert_string_equal(sf.host_ifname, "veth1");
	assert_int_equal(sf.addr6.family, AF_INET6);
	roundtrip(&sf);
}

/* A peer (a Docker endpoint): IPAM's addresses, the peer's MAC; without a MAC, refused. */
static void test_peer(void **state)
{
	struct statefile sf;
	char err[256] = "";

	assert_int_equal(parse("{\"name\":\"dk-0123456789abcdef\",\"policy\":\"p\",\"netns\":"
			       "\"/var/run/docker/netns/0123456789ab\",\"netns_owned\":false,"
			       "\"ifname\":\"ndp00004\",\"slot\":4,\"kind\":\"peer\",\"mac\":"
			       "\"02:42:AC:12:00:02\",\"ipv4_addr\":\"172.18.0.2\",\"gateway4\":"
			       "\"172.18.0.1\",\"plen4\":16}", &sf, err, sizeof(err)), 0);
	assert_int_equal(sf.kind, STATEFILE_PEER);
	assert_int_equal(sf.mac[0], 0x02);
	assert_int_equal(sf.mac[2], 0xac);
	assert_int_equal(sf.plen4, 16);
	roundtrip(&sf);
	assert_int_equal(parse("{\"name\":\"dk1\",\"policy\":\"p\",\"netns\":\"\",\"netns_owned\":false,"
			       "\"ifname\":\"ndp00004\",\"slot\":4,\"kind\":\"peer\",\"ipv4_addr\":"
			       "\"172.18.0.2\",\"gateway4\":\"172.18.0.1\",\"plen4\":16}", &sf, err,
			       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "mac"));
	assert_int_equal(parse("{\"name\":\"dk1\",\"policy\":\"p\",\"netns\":\"\",\"netns_owned\":false,"
			       "\"ifname\":\"ndp00004\",\"slot\":4,\"kind\":\"peer\",\"mac\":"
			       "\"03:42:ac:12:00:02\",\"ipv4_addr\":\"172.18.0.2\",\"gateway4\":"
			       "\"172.18.0.1\",\"plen4\":16}", &sf, err, sizeof(err)), -EINVAL);
}

static void test_tap(void **state)
{
	struct statefile sf;
	char err[256] = "";

	assert_int_equal(parse("{\"name\":\"vm1\",\"policy\":\"p\",\"netns\":\"\",\"netns_owned\":false,"
			       "\"ifname\":\"eth0\",\"slot\":2,\"kind\":\"tap\",\"host_ifname\":\"ndt0002\","
			       "\"tap_owner\":1000,\"tap_group\":null,\"tap_queues\":1,\"mtu\":1500}",
			       &sf, err, sizeof(err)), 0);
	assert_int_equal(sf.kind, STATEFILE_TAP);
	assert_string_equal(sf.host_ifname, "ndt0002");
	assert_int_equal(sf.tap_owner, 1000);
	assert_int_equal(sf.tap_group, UINT32_MAX);
	assert_int_equal(sf.tap_queues, 1);
	assert_int_equal(sf.mtu, 1500);
	roundtrip(&sf);
	assert_int_equal(parse("{\"name\":\"vm1\",\"policy\":\"p\",\"netns\":\"\",\"netns_owned\":false,"
			       "\"ifname\":\"eth0\",\"slot\":2,\"kind\":\"tap\",\"host_ifname\":\"t\","
			       "\"tap_owner\":0,\"tap_group\":5,\"tap_queues\":4,\"mtu\":1280}",
			       &sf, err, sizeof(err)), 0);
	assert_int_equal(sf.tap_group, 5);
	roundtrip(&sf);
	/* Never ownerless, never out of range. */
	static const char *const bad[] = {
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"\",\"netns_owned\":false,\"ifname\":\"e\",\"slot\":1,\"kind\":\"tap\",\"host_ifname\":\"t\",\"tap_queues\":1,\"mtu\":1500}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"\",\"netns_owned\":false,\"ifname\":\"e\",\"slot\":1,\"kind\":\"tap\",\"host_ifname\":\"t\",\"tap_owner\":4294967295,\"tap_queues\":1,\"mtu\":1500}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"\",\"netns_owned\":false,\"ifname\":\"e\",\"slot\":1,\"kind\":\"tap\",\"host_ifname\":\"t\",\"tap_owner\":1,\"tap_queues\":0,\"mtu\":1500}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"\",\"netns_owned\":false,\"ifname\":\"e\",\"slot\":1,\"kind\":\"tap\",\"host_ifname\":\"t\",\"tap_owner\":1,\"tap_queues\":1,\"mtu\":100}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"\",\"netns_owned\":false,\"ifname\":\"e\",\"slot\":1,\"kind\":\"tap\",\"host_ifname\":\"a/b\",\"tap_owner\":1,\"tap_queues\":1,\"mtu\":1500}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"\",\"netns_owned\":false,\"ifname\":\"e\",\"slot\":1,\"kind\":\"vm\"}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(parse(bad[i], &sf, err, sizeof(err)), -EINVAL);
		assert_true(err[0] != '\0');
	}
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"[]",
		"{\"name\":\"a\"}",
		/* a NUL inside the name would name another file */
		"{\"name\":\"sb1\\u0000x\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"e\",\"slot\":1}",
		"{\"name\":\"../etc\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"e\",\"slot\":1}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"x\",\"netns_owned\":true,\"ifname\":\"e\",\"slot\":1}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"e\",\"slot\":-1}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"e\",\"slot\":99999999}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":1,\"ifname\":\"e\",\"slot\":1}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"a/b\",\"slot\":1}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"0123456789abcdef\",\"slot\":1}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"e\",\"slot\":1,\"kind\":\"chained\",\"host_ifname\":\"v\",\"ipv4_addr\":\"2001:db8::1\"}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"e\",\"slot\":1,\"kind\":\"chained\",\"host_ifname\":\"v\"}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"e\",\"slot\":1,\"kind\":\"bridge\"}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"e\",\"slot\":1,\"plen4\":24,\"ipv4_addr\":\"10.0.0.2\"}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"e\",\"slot\":1,\"plen4\":32,\"ipv4_addr\":\"10.0.0.2\",\"gateway4\":\"10.0.0.1\"}",
		"{\"name\":\"a\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"e\",\"slot\":1} junk",
		"{\"name\":\"a\",\"name\":\"b\",\"policy\":\"p\",\"netns\":\"/x\",\"netns_owned\":true,\"ifname\":\"e\",\"slot\":1}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct statefile sf;
		char err[256] = "";

		if (parse(bad[i], &sf, err, sizeof(err)) == 0)
			fail_msg("accepted: %s", bad[i]);
		assert_true(err[0] != '\0');
		assert_int_equal(sf.name[0], '\0');	/* nothing half-filled */
	}
}

/*
 * Who the sandbox is for (common/workload.h): kept on every kind, written
 * only when known (a file from before them loads with none and formats
 * without them); a bad or too long value refuses the file.
 */
static void test_workload(void **state)
{
	static const char base[] = "{\"name\":\"cni-0\",\"policy\":\"p\",\"netns\":\"/x\","
				   "\"netns_owned\":false,\"ifname\":\"eth0\",\"slot\":1";
	struct statefile sf;
	char err[256] = "", text[1024], long_ns[80];
	char *out;

	assert_int_equal(parse("{\"name\":\"cni-0\",\"policy\":\"p\",\"netns\":\"/x\","
			       "\"netns_owned\":false,\"ifname\":\"eth0\",\"slot\":1}", &sf, err,
			       sizeof(err)), 0);
	assert_true(workload_empty(&sf.workload));
	out = statefile_format(&sf);
	assert_non_null(out);
	assert_null(strstr(out, "container_id"));
	assert_null(strstr(out, "pod_"));
	free(out);

	snprintf(text, sizeof(text), "%s,\"container_id\":\"%s\",\"pod_namespace\":\"team-a\","
		 "\"pod_name\":\"web-0\",\"pod_uid\":\"3f1b2c4d-0a9e-4b7c-8d6f-1e2a3b4c5d6e\","
		 "\"kind\":\"chained\",\"host_ifname\":\"veth1\",\"ipv4_addr\":\"10.88.0.5\"}",
		 base, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	assert_int_equal(parse(text, &sf, err, sizeof(err)), 0);
	assert_int_equal(sf.kind, STATEFILE_CHAINED);
	assert_string_equal(sf.workload.pod_namespace, "team-a");
	assert_string_equal(sf.workload.pod_name, "web-0");
	assert_int_equal(strlen(sf.workload.container_id), 64);
	roundtrip(&sf);
	/* Only the container ID (ctr, nerdctl): the rest stays absent. */
	snprintf(text, sizeof(text), "%s,\"container_id\":\"default-t1\",\"pod_uid\":null}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), 0);
	assert_string_equal(sf.workload.container_id, "default-t1");
	assert_string_equal(sf.workload.pod_uid, "");
	roundtrip(&sf);

	snprintf(text, sizeof(text), "%s,\"pod_name\":\"a b\"}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "\"pod_name\" must match"));
	snprintf(text, sizeof(text), "%s,\"pod_name\":7}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), -EINVAL);
	memset(long_ns, 'n', 64);
	long_ns[64] = '\0';
	snprintf(text, sizeof(text), "%s,\"pod_namespace\":\"%s\"}", base, long_ns);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "longer than 63"));
	assert_int_equal(sf.name[0], '\0');
}

/*
 * Bandwidth and budgets (issue 27): the create's own rates, what netd put on
 * the interfaces, the budget counters; written only when set, refused when
 * out of range.
 */
static void test_bandwidth_budgets(void **state)
{
	static const char base[] = "{\"name\":\"sb1\",\"policy\":\"p\",\"netns\":\"/run/netns/sb1\","
				   "\"netns_owned\":true,\"ifname\":\"eth0\",\"slot\":3";
	struct statefile sf;
	char err[256] = "", text[1024];
	char *out;

	(void)state;
	snprintf(text, sizeof(text), "%s}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), 0);
	out = statefile_format(&sf);
	assert_null(strstr(out, "bandwidth"));
	assert_null(strstr(out, "shaped"));
	assert_null(strstr(out, "budgets"));
	free(out);
	snprintf(text, sizeof(text), "%s,\"bandwidth\":{\"egress\":20000000},"
		 "\"shaped\":{\"egress\":20000000,\"ingress\":100000000},"
		 "\"budgets\":[{\"rule\":\"api.openai.com tcp\",\"period\":86400,"
		 "\"window\":1728000000,\"used\":123456789},{\"rule\":\"x.example udp\","
		 "\"period\":3600,\"window\":3600,\"used\":0}]}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), 0);
	assert_true(sf.bw_egress_bps == 20000000 && sf.bw_ingress_bps == 0);
	assert_true(sf.shaped_egress_bps == 20000000 && sf.shaped_ingress_bps == 100000000);
	assert_int_equal(sf.n_budgets, 2);
	assert_string_equal(sf.budgets[0].rule, "api.openai.com tcp");
	assert_int_equal(sf.budgets[0].period_s, 86400);
	assert_true(sf.budgets[0].window_s == 1728000000);
	assert_true(sf.budgets[0].used == 123456789);
	roundtrip(&sf);

	snprintf(text, sizeof(text), "%s,\"bandwidth\":{\"egress\":0}}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), -EINVAL);
	snprintf(text, sizeof(text), "%s,\"shaped\":{\"ingress\":100000000001}}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), -EINVAL);
	snprintf(text, sizeof(text), "%s,\"bandwidth\":[1]}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), -EINVAL);
	snprintf(text, sizeof(text), "%s,\"budgets\":[{\"rule\":\"a tcp\",\"period\":7200,"
		 "\"window\":7200,\"used\":1}]}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "period 3600 or 86400"));
	snprintf(text, sizeof(text), "%s,\"budgets\":[{\"rule\":\"a tcp\",\"period\":3600,"
		 "\"window\":100,\"used\":1}]}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), -EINVAL);
	snprintf(text, sizeof(text), "%s,\"budgets\":[{\"rule\":\"a tcp\",\"period\":3600,"
		 "\"window\":3600,\"used\":-1}]}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), -EINVAL);
	snprintf(text, sizeof(text), "%s,\"budgets\":{}}", base);
	assert_int_equal(parse(text, &sf, err, sizeof(err)), -EINVAL);
}

static void test_size_limit(void **state)
{
	size_t n = STATEFILE_MAX_LEN + 1;
	char *big = malloc(n), err[256] = "";
	struct statefile sf;

	assert_non_null(big);
	memset(big, ' ', n);
	assert_int_equal(statefile_parse(big, n, &sf, err, sizeof(err)), -EMSGSIZE);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_ipam_and_chained),
		cmocka_unit_test(test_peer),
		cmocka_unit_test(test_tap),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_workload),
		cmocka_unit_test(test_bandwidth_budgets),
		cmocka_unit_test(test_size_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
