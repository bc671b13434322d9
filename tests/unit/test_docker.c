/*
 * test_docker - netd-docker's pure core (docker-plugin/dkreq.c): the calls
 * by path; the requests Docker 20.10 sent in docs/docker.md's measurement,
 * decoded; what is refused and why; the state records round trip; the
 * policy an endpoint gets; netd's create body, the Join and
 * EndpointOperInfo replies.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "docker-plugin/dkreq.h"

#define NID "1134fc17041633c17adba40c8f98b472bbccdfe9f7153b1f2ccf833aac056ef8"
#define EID "d3cd9eaa4e8eee5ac6e2bafbf5b17697f9bf19414814e0c8d5ae16dac232ec85"

/* As Docker 20.10 sent them (`docker network create -d netd -o netd.policy=web80`, `docker run`). */
#define CREATE_NETWORK "{\"NetworkID\":\"" NID "\",\"Options\":{\"com.docker.network.enable_ipv6\":false," \
	"\"com.docker.network.generic\":{\"netd.policy\":\"web80\"}},\"IPv4Data\":[{\"AddressSpace\":" \
	"\"LocalDefault\",\"Gateway\":\"172.17.0.1/16\",\"Pool\":\"172.17.0.0/16\"}],\"IPv6Data\":[]}"
#define CREATE_ENDPOINT "{\"NetworkID\":\"" NID "\",\"EndpointID\":\"" EID "\",\"Interface\":{\"Address\":" \
	"\"172.17.0.2/16\",\"AddressIPv6\":\"\",\"MacAddress\":\"\"},\"Options\":{" \
	"\"com.docker.network.endpoint.exposedports\":[],\"com.docker.network.portmap\":[]}}"
#define JOIN "{\"NetworkID\":\"" NID "\",\"EndpointID\":\"" EID "\",\"SandboxKey\":" \
	"\"/var/run/docker/netns/d412f5524c8d\",\"Options\":{\"com.docker.network.endpoint.exposedports\":[]," \
	"\"com.docker.network.portmap\":[]}}"

static int parse(enum dk_method m, const char *body, struct dk_req *r, char *err, size_t errsz)
{
	return dk_parse(m, body, strlen(body), r, err, errsz);
}

static void test_methods(void **state)
{
	(void)state;
	assert_int_equal(dk_method_of("/Plugin.Activate"), DK_ACTIVATE);
	assert_int_equal(dk_method_of("/NetworkDriver.Join"), DK_JOIN);
	assert_int_equal(dk_method_of("/NetworkDriver.join"), DK_UNKNOWN);	/* exact */
	assert_int_equal(dk_method_of("NetworkDriver.Join"), DK_UNKNOWN);
	assert_int_equal(dk_method_of("/NetworkDriver.Join/x"), DK_UNKNOWN);
	assert_int_equal(dk_method_of("/IpamDriver.RequestPool"), DK_UNKNOWN);	/* 404: not ours */
	assert_int_equal(dk_method_of(NULL), DK_UNKNOWN);
	for (int m = 1; m < DK_METHODS; m++) {
		char path[128];

		snprintf(path, sizeof(path), "/%s", dk_method_name((enum dk_method)m));
		assert_int_equal(dk_method_of(path), m);
	}
}

static void test_docker_requests(void **state)
{
	struct dk_req r;
	char err[256], buf[64];

	(void)state;
	assert_int_equal(parse(DK_ACTIVATE, "", &r, err, sizeof(err)), 0);	/* Content-Length: 0 */
	assert_int_equal(parse(DK_CREATE_NETWORK, CREATE_NETWORK, &r, err, sizeof(err)), 0);
	assert_string_equal(r.network_id, NID);
	assert_string_equal(r.net.policy, "web80");
	assert_int_equal(r.net.n_v4, 1);
	assert_int_equal(r.net.n_v6, 0);
	assert_string_equal(prefix_format(&r.net.v4[0].pool, buf, sizeof(buf)), "172.17.0.0/16");
	assert_string_equal(addr_format(&r.net.v4[0].gateway, buf, sizeof(buf)), "172.17.0.1");
	assert_int_equal(parse(DK_CREATE_ENDPOINT, CREATE_ENDPOINT, &r, err, sizeof(err)), 0);
	assert_string_equal(r.endpoint_id, EID);
	assert_string_equal(addr_format(&r.addr4, buf, sizeof(buf)), "172.17.0.2");
	assert_int_equal(r.plen4, 16);
	assert_int_equal(r.addr6.family, 0);
	assert_false(r.mac_given);
	assert_false(r.ports_published);
	assert_string_equal(r.policy, "");
	assert_int_equal(parse(DK_JOIN, JOIN, &r, err, sizeof(err)), 0);
	assert_string_equal(r.sandbox_key, "/var/run/docker/netns/d412f5524c8d");
	/* --driver-opt netd.policy=deny-all lands in the endpoint's Options */
	assert_int_equal(parse(DK_CREATE_ENDPOINT, "{\"NetworkID\":\"" NID "\",\"EndpointID\":\"" EID
			       "\",\"Interface\":{\"Address\":\"172.18.0.2/16\"},\"Options\":{"
			       "\"netd.policy\":\"deny-all\",\"com.docker.network.portmap\":[{\"Port\":80}]}}",
			       &r, err, sizeof(err)), 0);
	assert_string_equal(r.policy, "deny-all");
	assert_true(r.ports_published);	/* -p */
	/* Options of other namespaces (-o com.docker.network.driver.mtu=1500) pass as before. */
	assert_int_equal(parse(DK_CREATE_NETWORK, "{\"NetworkID\":\"" NID "\",\"Options\":{"
			       "\"com.docker.network.generic\":{\"com.docker.network.driver.mtu\":"
			       "\"1500\",\"netd.policy\":\"web80\"}}}", &r, err, sizeof(err)), 0);
	assert_string_equal(r.net.policy, "web80");
	/* Unknown members: Docker may add some. */
	assert_int_equal(parse(DK_LEAVE, "{\"NetworkID\":\"" NID "\",\"EndpointID\":\"" EID
			       "\",\"Future\":[1,2]}", &r, err, sizeof(err)), 0);
}

static void test_refused(void **state)
{
	static const struct { enum dk_method m; const char *body, *says; } bad[] = {
		{ DK_JOIN, "{not json", "not JSON" },
		{ DK_JOIN, "[]", "JSON object" },
		{ DK_JOIN, "{\"NetworkID\":\"" NID "\",\"NetworkID\":\"" NID "\"}", "not JSON" },	/* twice */
		{ DK_LEAVE, "{\"NetworkID\":\"" NID "\"}", "EndpointID" },
		{ DK_LEAVE, "{\"NetworkID\":\"../../etc\",\"EndpointID\":\"" EID "\"}", "NetworkID" },
		{ DK_LEAVE, "{\"NetworkID\":\"" NID "\",\"EndpointID\":\"D3CD9EAA4E8EEE5AC6E2BAFBF5B17697F9BF19414814E0C8D5AE16DAC232EC85\"}", "EndpointID" },
		{ DK_DELETE_NETWORK, "{\"NetworkID\":7}", "must be a string" },
		{ DK_JOIN, "{\"NetworkID\":\"" NID "\",\"EndpointID\":\"" EID "\",\"SandboxKey\":\"netns/x\"}", "absolute" },
		{ DK_JOIN, "{\"NetworkID\":\"" NID "\",\"EndpointID\":\"" EID "\"}", "absolute" },
		{ DK_CREATE_NETWORK, "{\"NetworkID\":\"" NID "\",\"Options\":{\"com.docker.network.generic\":{\"netd.polcy\":\"x\"}}}", "unknown option" },
		/* -o policy=... (no netd. prefix) must not fall back to the default silently */
		{ DK_CREATE_NETWORK, "{\"NetworkID\":\"" NID "\",\"Options\":{\"com.docker.network.generic\":{\"policy\":\"python-dev\"}}}", "unknown option 'policy' (did you mean 'netd.policy'?)" },
		{ DK_CREATE_NETWORK, "{\"NetworkID\":\"" NID "\",\"Options\":{\"com.docker.network.generic\":{\"mode\":\"audit\"}}}", "unknown option 'mode' (did you mean 'netd.mode'?)" },
		{ DK_CREATE_NETWORK, "{\"NetworkID\":\"" NID "\",\"Options\":{\"com.docker.network.generic\":{\"polcy\":\"x\"}}}", "unknown option 'polcy'" },
		{ DK_CREATE_NETWORK, "{\"NetworkID\":\"" NID "\",\"Options\":{\"com.docker.network.generic\":{\"netd.policy\":\"-x\"}}}", "policy name" },
		{ DK_CREATE_NETWORK, "{\"NetworkID\":\"" NID "\",\"Options\":{\"com.docker.network.generic\":{\"netd.policy\":7}}}", "must be a string" },
		{ DK_CREATE_NETWORK, "{\"NetworkID\":\"" NID "\",\"Options\":{\"com.docker.network.generic\":{\"netd.mode\":\"loud\"}}}", "audit or enforce" },
		{ DK_CREATE_NETWORK, "{\"NetworkID\":\"" NID "\",\"IPv4Data\":[{\"Pool\":\"172.17.0.0/16\",\"Gateway\":\"10.0.0.1/8\"}]}", "inside" },
		{ DK_CREATE_NETWORK, "{\"NetworkID\":\"" NID "\",\"IPv4Data\":[{\"Pool\":\"fd00::/64\"}]}", "IPv4 CIDR" },
		{ DK_CREATE_NETWORK, "{\"NetworkID\":\"" NID "\",\"IPv4Data\":[{\"Pool\":\"172.17.0.1/16\"}]}", "IPv4 CIDR" },
		{ DK_CREATE_NETWORK, "{\"NetworkID\":\"" NID "\",\"IPv4Data\":{}}", "array" },
		{ DK_CREATE_ENDPOINT, "{\"NetworkID\":\"" NID "\",\"EndpointID\":\"" EID "\",\"Interface\":{\"Address\":\"172.17.0.2\"}}", "ADDR/PLEN" },
		{ DK_CREATE_ENDPOINT, "{\"NetworkID\":\"" NID "\",\"EndpointID\":\"" EID "\",\"Interface\":{\"Address\":\"fd00::2/64\"}}", "IPv4" },
		{ DK_CREATE_ENDPOINT, "{\"NetworkID\":\"" NID "\",\"EndpointID\":\"" EID "\",\"Interface\":{\"Address\":\"172.17.0.2/32\"}}", "ADDR/PLEN" },
		{ DK_CREATE_ENDPOINT, "{\"NetworkID\":\"" NID "\",\"EndpointID\":\"" EID "\",\"Interface\":{\"MacAddress\":\"03:00:00:00:00:01\"}}", "unicast" },
		{ DK_CREATE_ENDPOINT, "{\"NetworkID\":\"" NID "\",\"EndpointID\":\"" EID "\",\"Options\":{\"netd.x\":\"y\"}}", "unknown option" },
	};
	struct dk_req r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";

		assert_int_equal(parse(bad[i].m, bad[i].body, &r, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].says))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err, bad[i].says);
		assert_string_equal(r.network_id, "");
	}
	{
		char big[DK_BODY_MAX + 2], err[128];

		memset(big, ' ', sizeof(big));
		assert_int_equal(dk_parse(DK_JOIN, big, sizeof(big), &r, err, sizeof(err)), -EMSGSIZE);
	}
}

static void test_records(void **state)
{
	struct dk_req r;
	struct dk_network n;
	struct dk_endpoint e, back;
	char err[256], *text, buf[64];
	const char *policy, *mode, *rec;

	(void)state;
	assert_int_equal(parse(DK_CREATE_NETWORK, CREATE_NETWORK, &r, err, sizeof(err)), 0);
	{
		json_t *o = dk_network_json(&r.net);

		text = json_dumps(o, 0);
		json_decref(o);
	}
	assert_non_null(text);
	assert_int_equal(dk_network_parse(text, strlen(text), &n, err, sizeof(err)), 0);
	assert_memory_equal(&n, &r.net, sizeof(n));
	free(text);
	assert_int_equal(parse(DK_CREATE_ENDPOINT, CREATE_ENDPOINT, &r, err, sizeof(err)), 0);
	assert_int_equal(dk_endpoint_from(&r, &e, err, sizeof(err)), 0);
	/* No MAC from Docker: Docker's own convention, 02:42 and the IPv4 address. */
	assert_memory_equal(e.mac, ((uint8_t[]){ 0x02, 0x42, 172, 17, 0, 2 }), 6);
	{
		json_t *o = dk_endpoint_json(&e);

		text = json_dumps(o, 0);
		json_decref(o);
	}
	assert_int_equal(dk_endpoint_parse(text, strlen(text), &back, err, sizeof(err)), 0);
	assert_memory_equal(&back, &e, sizeof(e));
	free(text);
	/* Joined: the record keeps the container's SandboxKey (one netd network per container). */
	assert_string_equal(e.sandbox_key, "");
	snprintf(e.sandbox_key, sizeof(e.sandbox_key), "/var/run/docker/netns/d412f5524c8d");
	{
		json_t *o = dk_endpoint_json(&e);

		text = json_dumps(o, 0);
		json_decref(o);
	}
	assert_non_null(strstr(text, "\"sandbox_key\": \"/var/run/docker/netns/d412f5524c8d\""));
	assert_int_equal(dk_endpoint_parse(text, strlen(text), &back, err, sizeof(err)), 0);
	assert_memory_equal(&back, &e, sizeof(e));
	free(text);
	/* A record of before (no sandbox_key) still reads; a relative one does not. */
	rec = "{\"network\":\"" NID "\",\"ipv4\":\"172.17.0.2/16\",\"mac\":\"02:42:00:00:00:01\"}";
	assert_int_equal(dk_endpoint_parse(rec, strlen(rec), &back, err, sizeof(err)), 0);
	assert_string_equal(back.sandbox_key, "");
	rec = "{\"network\":\"" NID "\",\"ipv4\":\"172.17.0.2/16\",\"mac\":\"02:42:00:00:00:01\","
	      "\"sandbox_key\":\"x\"}";
	assert_int_equal(dk_endpoint_parse(rec, strlen(rec), &back, err, sizeof(err)), -EINVAL);
	e.sandbox_key[0] = '\0';
	assert_int_equal(dk_endpoint_parse("{\"network\":\"" NID "\",\"ipv4\":null,\"ipv6\":null,"
					   "\"mac\":\"02:42:00:00:00:01\"}", 80, &back, err, sizeof(err)),
			 -EINVAL);
	/* The endpoint's own policy wins, else the network's, else the default. */
	dk_policy_of(&e, &n, "deny-all", &policy, &mode);
	assert_string_equal(policy, "web80");
	snprintf(e.policy, sizeof(e.policy), "python-dev");
	dk_policy_of(&e, &n, "deny-all", &policy, &mode);
	assert_string_equal(policy, "python-dev");
	e.policy[0] = n.policy[0] = '\0';
	dk_policy_of(&e, &n, "deny-all", &policy, &mode);
	assert_string_equal(policy, "deny-all");
	/* The gateway of the pool holding the address. */
	assert_true(dk_gateway_of(&n, &e.addr4, &back.addr4));
	assert_string_equal(addr_format(&back.addr4, buf, sizeof(buf)), "172.17.0.1");
	addr_parse("10.0.0.1", &back.addr6);
	assert_false(dk_gateway_of(&n, &back.addr6, &back.addr4));
	/* No address at all: netd needs Docker's IPAM. */
	memset(&r.addr4, 0, sizeof(r.addr4));
	assert_int_equal(dk_endpoint_from(&r, &e, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "IPAM"));
}

static void test_netd_and_replies(void **state)
{
	struct dk_req r;
	struct dk_network n;
	struct dk_endpoint e;
	char err[256], name[32];
	json_t *body, *sb, *rep;

	(void)state;
	dk_sandbox_name(EID, name, sizeof(name));
	assert_string_equal(name, "dk-d3cd9eaa4e8e");
	assert_int_equal(parse(DK_CREATE_NETWORK, CREATE_NETWORK, &r, err, sizeof(err)), 0);
	n = r.net;
	assert_int_equal(parse(DK_CREATE_ENDPOINT, CREATE_ENDPOINT, &r, err, sizeof(err)), 0);
	assert_int_equal(dk_endpoint_from(&r, &e, err, sizeof(err)), 0);
	body = dk_create_body(EID, &e, &n, "/var/run/docker/netns/d412f5524c8d", "deny-all", err,
			      sizeof(err));
	assert_non_null(body);
	assert_string_equal(json_string_value(json_object_get(body, "name")), "dk-d3cd9eaa4e8e");
	assert_string_equal(json_string_value(json_object_get(body, "kind")), "peer");
	assert_string_equal(json_string_value(json_object_get(body, "policy")), "web80");
	assert_string_equal(json_string_value(json_object_get(body, "mac")), "02:42:ac:11:00:02");
	assert_string_equal(json_string_value(json_object_get(body, "netns")),
			    "/var/run/docker/netns/d412f5524c8d");
	assert_string_equal(json_string_value(json_object_get(json_object_get(body, "addresses"),
							      "ipv4")), "172.17.0.2/16");
	assert_string_equal(json_string_value(json_object_get(json_object_get(body, "addresses"),
							      "gateway4")), "172.17.0.1");
	assert_null(json_object_get(body, "mode"));
	json_decref(body);
	/* An address outside every pool (a record from another network). */
	n.n_v4 = 0;
	assert_null(dk_create_body(EID, &e, &n, "/x", "deny-all", err, sizeof(err)));
	assert_non_null(strstr(err, "pools"));

	sb = json_pack("{s:s, s:s, s:s, s:s, s:n}", "name", "dk-d3cd9eaa4e8e", "ifname", "ndp00004",
		       "gateway4", "172.17.0.1", "policy", "web80", "gateway6");
	rep = dk_join_reply(sb);
	assert_string_equal(json_string_value(json_object_get(json_object_get(rep, "InterfaceName"),
							      "SrcName")), "ndp00004");
	assert_string_equal(json_string_value(json_object_get(json_object_get(rep, "InterfaceName"),
							      "DstPrefix")), "eth");
	assert_string_equal(json_string_value(json_object_get(rep, "Gateway")), "172.17.0.1");
	assert_null(json_object_get(rep, "GatewayIPv6"));
	assert_true(json_is_true(json_object_get(rep, "DisableGatewayService")));
	json_decref(rep);
	rep = dk_oper_info("dk-d3cd9eaa4e8e", sb, NULL);
	assert_string_equal(json_string_value(json_object_get(json_object_get(rep, "Value"),
							      "netd.policy")), "web80");
	json_decref(rep);
	rep = dk_oper_info("dk-d3cd9eaa4e8e", NULL, "not joined");
	assert_string_equal(json_string_value(json_object_get(json_object_get(rep, "Value"),
							      "netd.state")), "not joined");
	json_decref(rep);
	json_object_del(sb, "ifname");
	assert_null(dk_join_reply(sb));
	json_decref(sb);
	rep = dk_error("why");
	assert_string_equal(json_string_value(json_object_get(rep, "Err")), "why");
	json_decref(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_methods),
		cmocka_unit_test(test_docker_requests),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_netd_and_replies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
