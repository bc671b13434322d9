/*
 * test_cni - the pure core of netd-cni: config decoding and its error
 * codes, CNI_ARGS, attachment names, policy selection order, result and
 * error JSON per version (CNI spec 1.1.0 §1, §2, §5).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cni-plugin/chain.h"
#include "cni-plugin/cni.h"

static int parse(const char *text, struct cni_conf *c, struct cni_err *err)
{
	return cni_conf_parse(text, strlen(text), c, err);
}

static void test_conf_minimal(void **state)
{
	struct cni_conf c;
	struct cni_err err;

	(void)state;
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"net\",\"type\":\"netd-cni\"}", &c, &err), 0);
	assert_string_equal(c.name, "net");
	assert_string_equal(c.socket, CNI_DEFAULT_SOCKET);
	assert_string_equal(c.tombstone_dir, CNI_DEFAULT_TOMBSTONE_DIR);
	assert_int_equal(c.mode, CNI_MODE_INTERFACE);
	assert_false(c.ip_version_field);
	assert_null(c.prev_result);
	cni_conf_done(&c);
	cni_conf_done(&c);	/* idempotent */
}

static void test_conf_errors(void **state)
{
	static const struct {
		const char *text;
		int code;
	} cases[] = {
		{ "", CNI_ERR_DECODE },
		{ "{\"cniVersion\":", CNI_ERR_DECODE },
		{ "[]", CNI_ERR_DECODE },
		{ "{\"cniVersion\":\"1.0.0\",\"name\":\"a\",\"name\":\"b\",\"type\":\"t\"}", CNI_ERR_DECODE },
		{ "{\"name\":\"n\",\"type\":\"t\"}", CNI_ERR_CONFIG },
		{ "{\"cniVersion\":\"2.0.0\",\"name\":\"n\",\"type\":\"t\"}", CNI_ERR_VERSION },
		{ "{\"cniVersion\":\"1.0.0\",\"type\":\"t\"}", CNI_ERR_CONFIG },
		{ "{\"cniVersion\":\"1.0.0\",\"name\":\"_n\",\"type\":\"t\"}", CNI_ERR_CONFIG },
		{ "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}", CNI_ERR_CONFIG },
		{ "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"a/b\"}", CNI_ERR_CONFIG },
		{ "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\",\"socket\":\"rel\"}", CNI_ERR_CONFIG },
		{ "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\",\"mode\":\"x\"}", CNI_ERR_CONFIG },
		{ "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\",\"policy\":\"a b\"}", CNI_ERR_CONFIG },
		{ "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\",\"prevResult\":3}", CNI_ERR_DECODE },
		{ "{\"cniVersion\":\"1.1.0\",\"name\":\"n\",\"type\":\"t\",\"cni.dev/attachments\":[{}]}", CNI_ERR_DECODE },
		{ "{\"cniVersion\":1,\"name\":\"n\",\"type\":\"t\"}", CNI_ERR_CONFIG },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cni_conf c;
		struct cni_err err = { 0 };

		if (parse(cases[i].text, &c, &err) != -EINVAL || err.code != cases[i].code)
			fail_msg("case %zu (%s): code %d, want %d", i, cases[i].text, err.code,
				 cases[i].code);
		assert_non_null(err.msg[0] ? err.msg : NULL);
	}
}

static void test_conf_keys(void **state)
{
	struct cni_conf c;
	struct cni_err err;

	(void)state;
	assert_int_equal(parse("{\"cniVersion\":\"0.4.0\",\"name\":\"n\",\"type\":\"t\","
			       "\"socket\":\"/s\",\"mode\":\"chained\",\"policy\":\"p\","
			       "\"defaultPolicy\":\"d\",\"unknownKey\":{\"x\":1},"
			       "\"capabilities\":{\"portMappings\":true},"
			       "\"runtimeConfig\":{\"IO.KUBERNETES.CRI.POD-ANNOTATIONS\":{\"netd.io/policy\":\"a\"}},"
			       "\"prevResult\":{\"cniVersion\":\"0.4.0\"}}", &c, &err), 0);
	assert_true(c.ip_version_field);
	assert_string_equal(c.socket, "/s");
	assert_int_equal(c.mode, CNI_MODE_CHAINED);
	assert_string_equal(c.policy, "p");
	assert_string_equal(c.default_policy, "d");
	assert_string_equal(c.annotation_policy, "a");
	assert_non_null(c.prev_result);
	cni_conf_done(&c);
}

static void test_names(void **state)
{
	(void)state;
	assert_true(cni_name_valid("a"));
	assert_true(cni_name_valid("0abc-._x"));
	assert_false(cni_name_valid(""));
	assert_false(cni_name_valid(NULL));
	assert_false(cni_name_valid("-a"));
	assert_false(cni_name_valid("a/b"));
	assert_true(cni_ifname_valid("eth0"));
	assert_true(cni_ifname_valid("abcdefghijklmno"));
	assert_false(cni_ifname_valid("abcdefghijklmnop"));
	assert_false(cni_ifname_valid("."));
	assert_false(cni_ifname_valid(".."));
	assert_false(cni_ifname_valid("a:b"));
	assert_false(cni_ifname_valid("a b"));
	assert_false(cni_ifname_valid("a/b"));
	assert_false(cni_ifname_valid(""));
}

static void test_args(void **state)
{
	char v[16];

	(void)state;
	assert_int_equal(cni_args_get(NULL, "K", v, sizeof(v)), 0);
	assert_int_equal(cni_args_get("", "K", v, sizeof(v)), 0);
	assert_int_equal(cni_args_get("IgnoreUnknown=1;NETD_POLICY=strict;K8S_POD_NAME=x",
				      "NETD_POLICY", v, sizeof(v)), 1);
	assert_string_equal(v, "strict");
	assert_int_equal(cni_args_get("NETD_POLICYX=a;XNETD_POLICY=b", "NETD_POLICY", v, sizeof(v)), 0);
	assert_int_equal(cni_args_get("NETD_POLICY=a=b", "NETD_POLICY", v, sizeof(v)), 1);
	assert_string_equal(v, "a=b");	/* split on the first '=' */
	assert_int_equal(cni_args_get("NETD_POLICY=", "NETD_POLICY", v, sizeof(v)), 1);
	assert_string_equal(v, "");
	assert_int_equal(cni_args_get(";;NETD_POLICY;NETD_POLICY=z;", "NETD_POLICY", v, sizeof(v)), 1);
	assert_string_equal(v, "z");
	assert_int_equal(cni_args_get("K=0123456789abcdefg", "K", v, sizeof(v)), -ENAMETOOLONG);
}

/*
 * The container and pod netd-cni gives netd: what containerd's CRI sends
 * (random order, IgnoreUnknown), podman's K8S_POD_NAME alone, ctr's empty
 * CNI_ARGS; a bad or too long value is code 4 naming the key.
 */
static void test_workload(void **state)
{
	struct workload w;
	struct cni_err err;
	char args[1024], big[300];

	(void)state;
	assert_int_equal(cni_workload("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				      "K8S_POD_UID=3f1b2c4d-0a9e-4b7c-8d6f-1e2a3b4c5d6e;IgnoreUnknown=1;"
				      "K8S_POD_NAMESPACE=team-a;K8S_POD_NAME=web-0;"
				      "K8S_POD_INFRA_CONTAINER_ID=0123", &w, &err), 0);
	assert_int_equal(strlen(w.container_id), 64);
	assert_string_equal(w.pod_namespace, "team-a");
	assert_string_equal(w.pod_name, "web-0");
	assert_string_equal(w.pod_uid, "3f1b2c4d-0a9e-4b7c-8d6f-1e2a3b4c5d6e");
	assert_int_equal(cni_workload("c1", "IgnoreUnknown=1;K8S_POD_NAME=pc2;NETD_POLICY=x", &w, &err), 0);
	assert_string_equal(w.pod_name, "pc2");
	assert_string_equal(w.pod_namespace, "");
	assert_int_equal(cni_workload("default-t1", "", &w, &err), 0);
	assert_int_equal(cni_workload("default-t1", NULL, &w, &err), 0);
	assert_string_equal(w.container_id, "default-t1");
	assert_int_equal(cni_workload("c1", "K8S_POD_NAME=", &w, &err), 0);	/* empty: absent */
	assert_string_equal(w.pod_name, "");

	assert_int_equal(cni_workload("c1", "K8S_POD_NAME=a b", &w, &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_ENV);
	assert_non_null(strstr(err.details, "CNI_ARGS K8S_POD_NAME=\"a b\" must match"));
	assert_int_equal(cni_workload("c1", "K8S_POD_NAMESPACE=../x", &w, &err), -EINVAL);
	assert_non_null(strstr(err.details, "K8S_POD_NAMESPACE"));
	memset(big, 'n', 64);
	big[64] = '\0';
	snprintf(args, sizeof(args), "K8S_POD_NAMESPACE=%s", big);
	assert_int_equal(cni_workload("c1", args, &w, &err), -EINVAL);
	assert_string_equal(err.details, "CNI_ARGS K8S_POD_NAMESPACE is longer than 63 bytes");
	memset(big, 'p', 254);
	big[254] = '\0';
	snprintf(args, sizeof(args), "K8S_POD_NAME=%s", big);
	assert_int_equal(cni_workload("c1", args, &w, &err), -EINVAL);
	assert_non_null(strstr(err.details, "longer than 253"));
	big[253] = '\0';
	snprintf(args, sizeof(args), "K8S_POD_NAME=%s", big);
	assert_int_equal(cni_workload("c1", args, &w, &err), 0);
	assert_int_equal(cni_workload("-c1", NULL, &w, &err), -EINVAL);
	assert_non_null(strstr(err.details, "CNI_CONTAINERID"));
	assert_true(workload_empty(&w));
}

/*
 * The attachment's own rates: runtimeConfig's bandwidth capability (bits per
 * second) first, then CNI_ARGS NETD_EGRESS_RATE/NETD_INGRESS_RATE, passed on
 * as text for netd to check; bad ones refused before anything is made.
 */
static void test_bandwidth(void **state)
{
	struct cni_conf c;
	struct cni_err err;
	char eg[CNI_RATE_MAX], in[CNI_RATE_MAX];

	(void)state;
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"netd-cni\"}",
			       &c, &err), 0);
	assert_int_equal(cni_bandwidth(&c, NULL, eg, in, &err), 0);
	assert_string_equal(eg, "");
	assert_string_equal(in, "");
	assert_int_equal(cni_bandwidth(&c, "IgnoreUnknown=1;NETD_EGRESS_RATE=20mbit", eg, in, &err),
			 0);
	assert_string_equal(eg, "20mbit");
	assert_string_equal(in, "");
	assert_int_equal(cni_bandwidth(&c, "NETD_INGRESS_RATE=20 mbit", eg, in, &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_ENV);
	assert_non_null(strstr(err.details, "NETD_INGRESS_RATE must be a rate"));
	assert_int_equal(cni_bandwidth(&c, "NETD_INGRESS_RATE=123456789012345678901234567890123mbit",
				       eg, in, &err), -EINVAL);
	cni_conf_done(&c);

	/* runtimeConfig (Kubernetes' annotations, in bits per second) wins over CNI_ARGS. */
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"netd-cni\","
			       "\"runtimeConfig\":{\"bandwidth\":{\"ingressRate\":100000000,"
			       "\"ingressBurst\":1600,\"egressRate\":20000000}}}", &c, &err), 0);
	assert_true(c.rc_egress_bps == 20000000 && c.rc_ingress_bps == 100000000);
	assert_int_equal(cni_bandwidth(&c, "NETD_EGRESS_RATE=1mbit", eg, in, &err), 0);
	assert_string_equal(eg, "20000000bit");
	assert_string_equal(in, "100000000bit");
	cni_conf_done(&c);
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"netd-cni\","
			       "\"runtimeConfig\":{\"bandwidth\":{\"egressRate\":-1}}}", &c, &err),
			 -EINVAL);
	assert_int_equal(err.code, CNI_ERR_CONFIG);
	assert_non_null(strstr(err.details, "bandwidth.egressRate"));
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"netd-cni\","
			       "\"runtimeConfig\":{\"bandwidth\":{\"ingressRate\":\"10M\"}}}", &c, &err),
			 -EINVAL);
}

static void test_sandbox_name(void **state)
{
	char a[CNI_SANDBOX_NAME_LEN + 1], b[CNI_SANDBOX_NAME_LEN + 1], p[16];

	(void)state;
	cni_sandbox_name("net", "cid", "eth0", a);
	cni_sandbox_name("net", "cid", "eth0", b);
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), CNI_SANDBOX_NAME_LEN);
	cni_sandbox_prefix("net", p);
	assert_int_equal(strncmp(a, p, strlen(p)), 0);
	cni_sandbox_name("net", "cid", "eth1", b);
	assert_string_not_equal(a, b);
	cni_sandbox_name("net", "cide", "th0", b);	/* fields are separated */
	assert_string_not_equal(a, b);
	cni_sandbox_name("net2", "cid", "eth0", b);
	assert_int_not_equal(strncmp(b, p, strlen(p)), 0);
	for (size_t i = 0; i < strlen(a); i++)
		assert_true((a[i] >= 'a' && a[i] <= 'z') || (a[i] >= '0' && a[i] <= '9') || a[i] == '-');
}

static const char *select_policy(const char *conf, const char *args, enum cni_policy_source *src,
				 char *buf, size_t sz, struct cni_conf *c)
{
	struct cni_err err;

	assert_int_equal(parse(conf, c, &err), 0);
	return cni_policy_select(c, args, buf, sz, src, &err);
}

static void test_policy_order(void **state)
{
	enum cni_policy_source src;
	struct cni_conf c;
	char buf[80];
	struct cni_err err;
	const char *p;

	(void)state;
	p = select_policy("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\",\"policy\":\"cfg\","
			  "\"defaultPolicy\":\"def\",\"runtimeConfig\":{\"io.kubernetes.cri.pod-annotations\":"
			  "{\"netd.io/policy\":\"ann\"}}}", "NETD_POLICY=arg", &src, buf, sizeof(buf), &c);
	assert_string_equal(p, "ann");
	assert_int_equal(src, CNI_POLICY_ANNOTATION);
	cni_conf_done(&c);
	p = select_policy("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\",\"policy\":\"cfg\","
			  "\"defaultPolicy\":\"def\"}", "A=1;NETD_POLICY=arg", &src, buf, sizeof(buf), &c);
	assert_string_equal(p, "arg");
	assert_int_equal(src, CNI_POLICY_ARGS);
	cni_conf_done(&c);
	p = select_policy("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\",\"policy\":\"cfg\","
			  "\"defaultPolicy\":\"def\"}", NULL, &src, buf, sizeof(buf), &c);
	assert_string_equal(p, "cfg");
	cni_conf_done(&c);
	p = select_policy("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\","
			  "\"defaultPolicy\":\"def\"}", "OTHER=x", &src, buf, sizeof(buf), &c);
	assert_string_equal(p, "def");
	assert_int_equal(src, CNI_POLICY_DEFAULT);
	cni_conf_done(&c);
	p = select_policy("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\"}", NULL, &src, buf,
			  sizeof(buf), &c);
	assert_string_equal(p, "deny-all");
	assert_int_equal(src, CNI_POLICY_BUILTIN);
	cni_conf_done(&c);
	/* A bad name from CNI_ARGS is refused (code 4), never passed on. */
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\"}", &c, &err), 0);
	assert_null(cni_policy_select(&c, "NETD_POLICY=../x", buf, sizeof(buf), &src, &err));
	assert_int_equal(err.code, CNI_ERR_ENV);
	cni_conf_done(&c);
}

#define OPTIN "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"netd-cni\",\"mode\":\"chained\"," \
	"\"optIn\":true,\"namespaces\":{\"agents\":\"python-dev\"}"
#define K8S_ARGS(ns) "K8S_POD_UID=u;IgnoreUnknown=1;K8S_POD_NAMESPACE=" ns ";K8S_POD_NAME=p"

/* "optIn": only a pod that names a policy (or whose namespace does) is enforced. */
static void test_opt_in(void **state)
{
	enum cni_policy_source src;
	struct cni_conf c;
	struct cni_err err = { 0 };
	char buf[80];
	const char *p;

	(void)state;
	/* No annotation, namespace not listed: not opted in, and not an error. */
	p = select_policy(OPTIN "}", K8S_ARGS("kube-system"), &src, buf, sizeof(buf), &c);
	assert_null(p);
	assert_int_equal(src, CNI_POLICY_NONE);
	assert_true(c.opt_in);
	cni_conf_done(&c);
	/* Other annotations do not opt in. */
	p = select_policy(OPTIN ",\"runtimeConfig\":{\"io.kubernetes.cri.pod-annotations\":"
			  "{\"kubernetes.io/config.seen\":\"x\"}}}", K8S_ARGS("default"), &src, buf,
			  sizeof(buf), &c);
	assert_null(p);
	assert_int_equal(src, CNI_POLICY_NONE);
	cni_conf_done(&c);
	/* The annotation opts in. */
	p = select_policy(OPTIN ",\"runtimeConfig\":{\"io.kubernetes.cri.pod-annotations\":"
			  "{\"netd.io/policy\":\"openai-only\"}}}", K8S_ARGS("default"), &src, buf,
			  sizeof(buf), &c);
	assert_string_equal(p, "openai-only");
	assert_int_equal(src, CNI_POLICY_ANNOTATION);
	cni_conf_done(&c);
	/* A listed namespace opts in, and its policy beats the pod's annotation. */
	p = select_policy(OPTIN ",\"runtimeConfig\":{\"io.kubernetes.cri.pod-annotations\":"
			  "{\"netd.io/policy\":\"openai-only\"}}}", K8S_ARGS("agents"), &src, buf,
			  sizeof(buf), &c);
	assert_string_equal(p, "python-dev");
	assert_int_equal(src, CNI_POLICY_NAMESPACE);
	cni_conf_done(&c);
	/* podman's CNI_ARGS NETD_POLICY opts in too. */
	p = select_policy(OPTIN "}", "IgnoreUnknown=1;K8S_POD_NAME=c;NETD_POLICY=deny-all", &src,
			  buf, sizeof(buf), &c);
	assert_string_equal(p, "deny-all");
	cni_conf_done(&c);
	/* Without optIn, "namespaces" still applies and the rest falls back to the default. */
	p = select_policy("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\","
			  "\"namespaces\":{\"agents\":\"python-dev\"}}", K8S_ARGS("agents"), &src,
			  buf, sizeof(buf), &c);
	assert_string_equal(p, "python-dev");
	cni_conf_done(&c);
	/* What optIn refuses. */
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\","
			       "\"optIn\":true}", &c, &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_CONFIG);
	assert_non_null(strstr(err.details, "chained"));
	assert_int_equal(parse(OPTIN ",\"defaultPolicy\":\"deny-all\"}", &c, &err), -EINVAL);
	assert_non_null(strstr(err.details, "every pod"));
	assert_int_equal(parse(OPTIN ",\"optIn\":\"true\"}", &c, &err), -EINVAL);
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\","
			       "\"mode\":\"chained\",\"optIn\":\"yes\"}", &c, &err), -EINVAL);
	assert_non_null(strstr(err.details, "true or false"));
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\","
			       "\"namespaces\":{\"a\":\"../x\"}}", &c, &err), -EINVAL);
	assert_non_null(strstr(err.details, "namespaces"));
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\","
			       "\"namespaces\":[\"a\"]}", &c, &err), -EINVAL);
}

static json_t *jparse(const char *s)
{
	json_t *o = json_loads(s, 0, NULL);

	assert_non_null(o);
	return o;
}

static void test_chain(void **state)
{
	json_t *conf = jparse("{\"name\":\"cbr0\",\"cniVersion\":\"0.3.1\",\"plugins\":"
			      "[{\"type\":\"flannel\"},{\"type\":\"portmap\"}]}");
	json_t *entry = jparse("{\"type\":\"netd-cni\",\"mode\":\"chained\",\"optIn\":true}");
	json_t *entry2 = jparse("{\"type\":\"netd-cni\",\"mode\":\"chained\",\"optIn\":false}");
	json_t *orig = json_deep_copy(conf), *bad;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(cni_chain_merge(conf, entry, &err), 1);
	assert_int_equal(json_array_size(json_object_get(conf, "plugins")), 3);
	assert_true(json_equal(json_array_get(json_object_get(conf, "plugins"), 2), entry));
	assert_int_equal(cni_chain_merge(conf, entry, &err), 0);	/* already so */
	/* A changed entry replaces the old where it stands. */
	json_array_insert_new(json_object_get(conf, "plugins"), 2, json_pack("{s:s}", "type", "bandwidth"));
	assert_int_equal(cni_chain_merge(conf, entry2, &err), 1);
	assert_true(json_equal(json_array_get(json_object_get(conf, "plugins"), 3), entry2));
	assert_int_equal(json_array_size(json_object_get(conf, "plugins")), 4);
	assert_int_equal(cni_chain_remove(conf), 1);
	json_array_remove(json_object_get(conf, "plugins"), 2);
	assert_true(json_equal(conf, orig));
	assert_int_equal(cni_chain_remove(conf), 0);
	/* Refusals: no plugins (a .conf), netd-cni first, an interface-mode entry. */
	bad = jparse("{\"name\":\"x\",\"type\":\"bridge\"}");
	assert_int_equal(cni_chain_merge(bad, entry, &err), -EINVAL);
	assert_non_null(strstr(err.details, ".conflist"));
	assert_int_equal(cni_chain_remove(bad), -EINVAL);
	json_decref(bad);
	bad = jparse("{\"name\":\"x\",\"plugins\":[{\"type\":\"netd-cni\"}]}");
	assert_int_equal(cni_chain_merge(bad, entry, &err), -EINVAL);
	assert_non_null(strstr(err.details, "first plugin"));
	json_decref(bad);
	bad = jparse("{\"type\":\"netd-cni\",\"mode\":\"interface\"}");
	assert_int_equal(cni_chain_merge(conf, bad, &err), -EINVAL);
	json_decref(bad);
	bad = jparse("{\"name\":\"x\",\"plugins\":[{\"type\":\"a\"}, 7]}");
	assert_int_equal(cni_chain_merge(bad, entry, &err), -EINVAL);
	json_decref(bad);
	json_decref(conf);
	json_decref(orig);
	json_decref(entry);
	json_decref(entry2);
}

static json_t *result_for(const char *version, const char *prev)
{
	struct cni_attachment a = {
		.host_ifname = "nd00001", .host_mac = "02:00:00:00:00:01", .ifname = "eth0",
		.netns = "/proc/1/ns/net", .ipv4 = "10.87.0.2", .gateway4 = "10.87.0.1",
		.ipv6 = "fd00:87::2", .gateway6 = "fd00:87::1", .plen4 = 30, .plen6 = 126,
	};
	char text[512];
	struct cni_conf c;
	struct cni_err err;
	json_t *r;

	snprintf(text, sizeof(text), "{\"cniVersion\":\"%s\",\"name\":\"n\",\"type\":\"t\"%s%s}",
		 version, prev ? ",\"prevResult\":" : "", prev ? prev : "");
	assert_int_equal(parse(text, &c, &err), 0);
	r = cni_result_new(&c, &a);
	assert_non_null(r);
	cni_conf_done(&c);
	return r;
}

static void test_result_versions(void **state)
{
	json_t *r, *ip;

	(void)state;
	r = result_for("1.0.0", NULL);
	assert_string_equal(json_string_value(json_object_get(r, "cniVersion")), "1.0.0");
	assert_int_equal(json_array_size(json_object_get(r, "interfaces")), 2);
	ip = json_array_get(json_object_get(r, "ips"), 0);
	assert_string_equal(json_string_value(json_object_get(ip, "address")), "10.87.0.2/30");
	assert_int_equal(json_integer_value(json_object_get(ip, "interface")), 1);
	assert_null(json_object_get(ip, "version"));
	ip = json_array_get(json_object_get(r, "ips"), 1);
	assert_string_equal(json_string_value(json_object_get(ip, "address")), "fd00:87::2/126");
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(r, "dns"),
									      "nameservers"), 0)),
			    "10.87.0.1");
	assert_int_equal(json_array_size(json_object_get(r, "routes")), 2);
	json_decref(r);

	r = result_for("0.3.1", NULL);
	ip = json_array_get(json_object_get(r, "ips"), 0);
	assert_string_equal(json_string_value(json_object_get(ip, "version")), "4");
	ip = json_array_get(json_object_get(r, "ips"), 1);
	assert_string_equal(json_string_value(json_object_get(ip, "version")), "6");
	json_decref(r);

	/* prevResult passes through; our interface indexes follow its interfaces. */
	r = result_for("1.1.0", "{\"cniVersion\":\"1.1.0\",\"interfaces\":[{\"name\":\"lo\",\"sandbox\":\"/x\"}],"
			"\"ips\":[{\"address\":\"127.0.0.1/8\",\"interface\":0}],\"dns\":{\"search\":[\"a\"]}}");
	assert_int_equal(json_array_size(json_object_get(r, "interfaces")), 3);
	assert_int_equal(json_array_size(json_object_get(r, "ips")), 3);
	ip = json_array_get(json_object_get(r, "ips"), 1);
	assert_int_equal(json_integer_value(json_object_get(ip, "interface")), 2);
	assert_non_null(json_object_get(json_object_get(r, "dns"), "search"));
	json_decref(r);
}

/* Chained mode: prevResult passes through; only dns.nameservers and ips[].version change. */
static void test_result_chained(void **state)
{
	static const char *const prev =
		"\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"cni0\"},"
		"{\"name\":\"veth1\"},{\"name\":\"eth0\",\"sandbox\":\"/n\"}],"
		"\"ips\":[{\"address\":\"10.88.0.5/24\",\"gateway\":\"10.88.0.1\",\"interface\":2},"
		"{\"address\":\"fd00::5/64\",\"interface\":2,\"version\":\"6\"}],"
		"\"routes\":[{\"dst\":\"0.0.0.0/0\"}],\"dns\":{\"search\":[\"x\"]}}}";
	static const char *const vers[] = { "0.4.0", "1.0.0" };
	char text[1024];

	(void)state;
	for (size_t v = 0; v < 2; v++) {
		struct cni_attachment a = { .gateway4 = "10.88.0.1" };
		struct cni_conf c;
		struct cni_err err;
		json_t *res, *ips;

		snprintf(text, sizeof(text),
			 "{\"cniVersion\":\"%s\",\"name\":\"n\",\"type\":\"t\",\"mode\":\"chained\",%s",
			 vers[v], prev);
		assert_int_equal(parse(text, &c, &err), 0);
		res = cni_result_new(&c, &a);
		assert_non_null(res);
		assert_string_equal(json_string_value(json_object_get(res, "cniVersion")), vers[v]);
		assert_int_equal(json_array_size(json_object_get(res, "interfaces")), 3);
		ips = json_object_get(res, "ips");
		assert_int_equal(json_array_size(ips), 2);
		assert_int_equal(json_array_size(json_object_get(res, "routes")), 1);
		if (v == 0) {
			assert_string_equal(json_string_value(json_object_get(json_array_get(ips, 0),
									      "version")), "4");
			assert_string_equal(json_string_value(json_object_get(json_array_get(ips, 1),
									      "version")), "6");
		} else {
			assert_null(json_object_get(json_array_get(ips, 0), "version"));
			assert_null(json_object_get(json_array_get(ips, 1), "version"));
		}
		assert_string_equal(json_string_value(json_array_get(json_object_get(
					    json_object_get(res, "dns"), "nameservers"), 0)), "10.88.0.1");
		assert_non_null(json_object_get(json_object_get(res, "dns"), "search"));
		json_decref(res);
		cni_conf_done(&c);
	}
}

static void test_error_and_version_json(void **state)
{
	struct cni_err err;
	json_t *o;

	(void)state;
	cni_err_set(&err, 11, "try later", "socket %s", "/x");
	o = cni_error_json("0.4.0", &err);
	assert_string_equal(json_string_value(json_object_get(o, "cniVersion")), "0.4.0");
	assert_int_equal(json_integer_value(json_object_get(o, "code")), 11);
	assert_string_equal(json_string_value(json_object_get(o, "details")), "socket /x");
	json_decref(o);
	cni_err_set(&err, 4, "env", NULL);
	o = cni_error_json(NULL, &err);
	assert_string_equal(json_string_value(json_object_get(o, "cniVersion")), "1.1.0");
	assert_null(json_object_get(o, "details"));
	json_decref(o);
	o = cni_version_json("0.3.0");
	assert_string_equal(json_string_value(json_object_get(o, "cniVersion")), "0.3.0");
	assert_int_equal(json_array_size(json_object_get(o, "supportedVersions")), 5);
	json_decref(o);
	o = cni_version_json("7.0.0");
	assert_string_equal(json_string_value(json_object_get(o, "cniVersion")), "1.1.0");
	json_decref(o);
}

/* "ipam" in interface mode: its type must be a binary name (spec §4). */
static void test_ipam_conf(void **state)
{
	struct cni_conf c;
	struct cni_err err;

	(void)state;
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"netd-cni\","
			       "\"ipam\":{\"type\":\"host-local\",\"ranges\":[]}}", &c, &err), 0);
	assert_string_equal(c.ipam_type, "host-local");
	cni_conf_done(&c);
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"netd-cni\"}",
			       &c, &err), 0);
	assert_null(c.ipam_type);
	cni_conf_done(&c);
	/* chained mode: the plugin before us did the addressing; ipam is not ours */
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"netd-cni\","
			       "\"mode\":\"chained\",\"ipam\":{\"type\":\"x\"}}", &c, &err), 0);
	assert_null(c.ipam_type);
	cni_conf_done(&c);
	static const char *const bad[] = {
		"{\"type\":\"../bin/sh\"}", "{\"type\":\"\"}", "{\"type\":\"..\"}", "{}",
		"{\"type\":7}", "\"host-local\"", "{\"type\":\"a\\nb\"}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];

		snprintf(text, sizeof(text),
			 "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"netd-cni\",\"ipam\":%s}",
			 bad[i]);
		assert_int_equal(parse(text, &c, &err), -EINVAL);
		assert_int_equal(err.code, CNI_ERR_CONFIG);
	}
}

static json_t *load(const char *text)
{
	json_t *o = json_loads(text, 0, NULL);

	assert_non_null(o);
	return o;
}

/* host-local's answers, 1.0.0 and 0.4.0 shapes. */
static void test_ipam_parse(void **state)
{
	struct cni_ipam ip;
	struct cni_err err;
	json_t *r;

	(void)state;
	r = load("{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.89.0.5/24\","
		 "\"gateway\":\"10.89.0.1\"},{\"address\":\"10.89.1.5/24\",\"gateway\":\"10.89.1.1\"},"
		 "{\"address\":\"fd00:89::5/64\",\"gateway\":\"fd00:89::1\"}],"
		 "\"routes\":[{\"dst\":\"0.0.0.0/0\"}],\"dns\":{}}");
	assert_int_equal(cni_ipam_parse(r, &ip, &err), 0);
	assert_string_equal(ip.ipv4, "10.89.0.5");	/* the first of a family */
	assert_string_equal(ip.gateway4, "10.89.0.1");
	assert_int_equal(ip.plen4, 24);
	assert_string_equal(ip.ipv6, "fd00:89::5");
	assert_string_equal(ip.gateway6, "fd00:89::1");
	assert_int_equal(ip.plen6, 64);
	assert_int_equal(json_array_size(ip.routes), 1);
	json_decref(r);

	r = load("{\"cniVersion\":\"0.4.0\",\"ips\":[{\"version\":\"4\",\"address\":\"192.168.7.9/16\","
		 "\"gateway\":\"192.168.0.1\"}]}");
	assert_int_equal(cni_ipam_parse(r, &ip, &err), 0);
	assert_string_equal(ip.ipv4, "192.168.7.9");
	assert_int_equal(ip.plen4, 16);
	assert_string_equal(ip.ipv6, "");
	assert_null(ip.routes);
	json_decref(r);
}

static void test_ipam_parse_errors(void **state)
{
	static const char *const bad[] = {
		"[]",
		"{\"ips\":{}}",
		"{\"ips\":[]}",						/* no address */
		"{\"ips\":[{\"address\":\"10.89.0.5\",\"gateway\":\"10.89.0.1\"}]}",	/* no /plen */
		"{\"ips\":[{\"address\":\"10.89.0.5/24\"}]}",		/* no gateway */
		"{\"ips\":[{\"address\":\"10.89.0.5/24\",\"gateway\":\"10.90.0.1\"}]}",	/* off-prefix */
		"{\"ips\":[{\"address\":\"10.89.0.5/24\",\"gateway\":\"10.89.0.5\"}]}",	/* itself */
		"{\"ips\":[{\"address\":\"10.89.0.5/32\",\"gateway\":\"10.89.0.1\"}]}",	/* no room */
		"{\"ips\":[{\"address\":\"10.89.0.5/0\",\"gateway\":\"10.89.0.1\"}]}",
		"{\"ips\":[{\"address\":\"10.89.0.5/24x\",\"gateway\":\"10.89.0.1\"}]}",
		"{\"ips\":[{\"address\":\"10.89.0.5/-1\",\"gateway\":\"10.89.0.1\"}]}",
		"{\"ips\":[{\"address\":\"fd00::5/64\",\"gateway\":\"10.89.0.1\"}]}",	/* family */
		"{\"ips\":[{\"address\":\"garbage/24\",\"gateway\":\"10.89.0.1\"}]}",
		"{\"ips\":[7]}",
		"{\"ips\":[{\"address\":\"10.89.0.5/24\",\"gateway\":\"10.89.0.1\"}],\"routes\":{}}",
	};
	struct cni_ipam ip;
	struct cni_err err;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *r = load(bad[i]);

		err.code = 0;
		assert_int_equal(cni_ipam_parse(r, &ip, &err), -EINVAL);
		assert_int_equal(err.code, CNI_ERR_CONFIG);
		json_decref(r);
	}
}

/* The ADD result from IPAM addresses: its prefix, its routes, dns = gateway. */
static void test_result_ipam(void **state)
{
	struct cni_conf c;
	struct cni_err err;
	struct cni_attachment a = { .host_ifname = "nd00001", .ifname = "eth0",
				    .netns = "/run/netns/x", .ipv4 = "10.89.0.5",
				    .gateway4 = "10.89.0.1", .plen4 = 24 };
	json_t *res, *routes = load("[{\"dst\":\"10.0.0.0/8\",\"gw\":\"10.89.0.1\"}]");
	char *text;

	(void)state;
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"netd-cni\","
			       "\"ipam\":{\"type\":\"host-local\"}}", &c, &err), 0);
	res = cni_result_new(&c, &a);
	text = json_dumps(res, JSON_COMPACT);
	assert_non_null(strstr(text, "\"ips\":[{\"address\":\"10.89.0.5/24\",\"interface\":1,"
				     "\"gateway\":\"10.89.0.1\"}]"));
	assert_non_null(strstr(text, "\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":\"10.89.0.1\"}]"));
	assert_non_null(strstr(text, "\"nameservers\":[\"10.89.0.1\"]"));
	free(text);
	json_decref(res);
	a.routes = routes;
	res = cni_result_new(&c, &a);
	text = json_dumps(res, JSON_COMPACT);
	assert_non_null(strstr(text, "\"routes\":[{\"dst\":\"10.0.0.0/8\",\"gw\":\"10.89.0.1\"}]"));
	free(text);
	json_decref(res);
	json_decref(routes);
	cni_conf_done(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_minimal),
		cmocka_unit_test(test_conf_errors),
		cmocka_unit_test(test_conf_keys),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_workload),
		cmocka_unit_test(test_bandwidth),
		cmocka_unit_test(test_sandbox_name),
		cmocka_unit_test(test_policy_order),
		cmocka_unit_test(test_opt_in),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_result_versions),
		cmocka_unit_test(test_result_chained),
		cmocka_unit_test(test_error_and_version_json),
		cmocka_unit_test(test_ipam_conf),
		cmocka_unit_test(test_ipam_parse),
		cmocka_unit_test(test_ipam_parse_errors),
		cmocka_unit_test(test_result_ipam),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
