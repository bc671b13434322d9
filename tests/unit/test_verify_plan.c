/*
 * test_verify_plan - `netd verify`'s pure half: which probes a sandbox gets
 * (families, taps, audit mode, a CIDR rule that opens a destination on
 * purpose, --allowed), how each outcome is judged (dropped, rejected,
 * let through by the kernel, the DNS proxy's evidence), and the report.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/diag.h"
#include "netd/daemon/verify_plan.h"

#define P_WEB "name: web\negress:\n  - domains: [\"*.example.org\", api.example.com]\n    ports: [443]\n"
#define P_OPEN "name: open\negress:\n  - cidrs: [192.0.2.0/24]\n    ports: [443, 853]\n"

static struct policy *pol(const char *yaml)
{
	struct policy *p = NULL;
	struct diag err = { 0 };

	assert_int_equal(policy_parse(yaml, strlen(yaml), "t.yaml", &p, &err), 0);
	return p;
}

static void facts(struct verify_facts *f, const struct policy *p)
{
	memset(f, 0, sizeof(*f));
	addr_parse("10.87.0.2", &f->addr4);
	addr_parse("10.87.0.1", &f->gw4);
	addr_parse("fd00:87::2", &f->addr6);
	addr_parse("fd00:87::1", &f->gw6);
	addr_parse("10.87.0.6", &f->other4);
	f->pol = p;
	f->log_on = true;
}

static const struct verify_probe *find(const struct verify_probe *pr, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(pr[i].name, name) == 0)
			return &pr[i];
	return NULL;
}

static void test_plan_families(void **state)
{
	struct policy *p = pol(P_WEB);
	struct verify_probe pr[VERIFY_PROBES_MAX];
	struct verify_facts f;
	char a[ADDR_STRLEN];
	size_t n;

	(void)state;
	facts(&f, p);
	n = verify_plan(&f, pr);
	assert_non_null(find(pr, n, "dns-deny"));
	assert_non_null(find(pr, n, "dns-tcp6"));
	assert_non_null(find(pr, n, "metadata6"));
	assert_non_null(find(pr, n, "kernel-anti-spoof"));
	assert_null(find(pr, n, "allowed-dns"));
	/* The unpinned probe: a documentation address, on the policy's port. */
	assert_string_equal(addr_format(&find(pr, n, "unpinned")->dst, a, sizeof(a)), "192.0.2.201");
	assert_int_equal(find(pr, n, "unpinned")->dport, 443);
	assert_int_equal(find(pr, n, "dot")->dport, 853);
	/* Another sandbox: only IPv4 known, so sandbox6 is skipped and says why. */
	assert_int_equal(find(pr, n, "sandbox")->kind, VK_DROP);
	assert_int_equal(find(pr, n, "sandbox6")->verdict, VV_SKIP);
	/* The host: the gateway, never port 53. */
	assert_true(addr_equal(&find(pr, n, "host")->dst, &f.gw4));
	/* No IPv6: none of its probes. */
	memset(&f.addr6, 0, sizeof(f.addr6));
	n = verify_plan(&f, pr);
	assert_null(find(pr, n, "dns-deny6"));
	assert_null(find(pr, n, "spoof6"));
	for (size_t i = 0; i < n; i++)
		assert_true(pr[i].kind == VK_KERNEL || pr[i].dst.family != AF_INET6);
	policy_free(p);
}

static void test_plan_skips(void **state)
{
	struct policy *p = pol(P_WEB), *open = pol(P_OPEN);
	struct verify_probe pr[VERIFY_PROBES_MAX];
	struct verify_facts f;
	char a[ADDR_STRLEN];
	size_t n;

	(void)state;
	facts(&f, p);
	f.tap = true;
	n = verify_plan(&f, pr);
	assert_int_equal(find(pr, n, "live")->verdict, VV_SKIP);
	assert_non_null(strstr(find(pr, n, "live")->detail, "tap"));
	assert_non_null(find(pr, n, "kernel-tap-mac"));
	assert_null(find(pr, n, "dns-deny"));
	/* ... but frames instead, per family: another MAC from the guest's own
	 * address; the guest's MAC from a forged one; UDP to TEST-NET-1. */
	assert_int_equal(find(pr, n, "tap-mac")->kind, VK_FRAME_MAC);
	assert_int_equal(find(pr, n, "tap-spoof6")->kind, VK_FRAME_SPOOF);
	assert_true(addr_equal(&find(pr, n, "tap-mac")->src, &f.addr4));
	assert_true(addr_equal(&find(pr, n, "tap-mac6")->src, &f.addr6));
	assert_string_equal(addr_format(&find(pr, n, "tap-spoof")->src, a, sizeof(a)), "192.0.2.250");
	assert_string_equal(addr_format(&find(pr, n, "tap-mac")->dst, a, sizeof(a)), "192.0.2.209");
	assert_int_equal(find(pr, n, "tap-mac")->proto, IPPROTO_UDP);
	/* No nflog: their evidence cannot be seen. */
	f.log_on = false;
	n = verify_plan(&f, pr);
	assert_int_equal(find(pr, n, "tap-mac")->verdict, VV_SKIP);
	facts(&f, p);
	f.audit = true;
	n = verify_plan(&f, pr);
	assert_non_null(strstr(find(pr, n, "live")->detail, "audit mode"));
	assert_int_equal(find(pr, n, "kernel-jump")->kind, VK_KERNEL);
	/* A CIDR rule that opens TEST-NET-1 on 443 and 853: those probes are skipped, said why. */
	facts(&f, open);
	n = verify_plan(&f, pr);
	assert_int_equal(find(pr, n, "unpinned")->verdict, VV_SKIP);
	assert_int_equal(find(pr, n, "dot")->verdict, VV_SKIP);
	assert_non_null(strstr(find(pr, n, "dot")->detail, "CIDR rule"));
	assert_int_equal(find(pr, n, "metadata")->kind, VK_DROP);
	/* No nflog: a spoof drop cannot be seen.  A veth gets no frames. */
	facts(&f, p);
	f.log_on = false;
	n = verify_plan(&f, pr);
	assert_int_equal(find(pr, n, "spoof")->verdict, VV_SKIP);
	assert_null(find(pr, n, "tap-mac"));
	policy_free(p);
	policy_free(open);
}

static void test_judge_frame(void **state)
{
	struct verify_probe p = { .kind = VK_FRAME_MAC };
	struct verify_obs o = { .rcode = -1, .wait_ms = 1000 };

	(void)state;
	snprintf(o.denied, sizeof(o.denied), "spoof");
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_PASS);
	assert_non_null(strstr(p.detail, "logged as spoof"));
	/* The MAC rule gone: the policy drops it later. */
	snprintf(o.denied, sizeof(o.denied), "not-pinned");
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	assert_non_null(strstr(p.detail, "passed the MAC rule"));
	/* ... or nothing does. */
	o.denied[0] = '\0';
	o.ct = 1;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	assert_non_null(strstr(p.detail, "conntrack"));
	o.ct = 0;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	assert_non_null(strstr(p.detail, "no spoof drop"));
	/* A VMM holds the tap: not run, not a failure. */
	o.send_err = -EBUSY;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_SKIP);
	assert_non_null(strstr(p.detail, "VMM"));
	o.send_err = -ENODEV;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	p.kind = VK_FRAME_SPOOF;
	o.send_err = 0;
	snprintf(o.denied, sizeof(o.denied), "not-pinned");
	verify_judge(&p, &o, false);
	assert_non_null(strstr(p.detail, "anti-spoofing rule"));
}

/* The ones' complement sum of @len bytes (RFC 1071), folded; 0xffff over a right checksum. */
static uint16_t sum16(const uint8_t *b, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)(b[len - 1] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static void test_frame(void **state)
{
	static const uint8_t hw[6] = { 0xaa, 1, 2, 3, 4, 5 }, guest[6] = { 2, 0x6e, 0x64, 0x76, 0x66, 0x79 };
	uint8_t buf[VERIFY_FRAME_MAX], mac[6];
	struct addr s4, d4, s6, d6;
	uint32_t pseudo;
	size_t len;

	(void)state;
	addr_parse("10.87.0.2", &s4);
	addr_parse("192.0.2.209", &d4);
	addr_parse("fd00:87::2", &s6);
	addr_parse("2001:db8::209", &d6);
	len = verify_frame(buf, sizeof(buf), hw, guest, &s4, 50000, &d4, 9);
	assert_int_equal(len, 14 + 20 + 8 + 11);
	assert_memory_equal(buf, hw, 6);
	assert_memory_equal(buf + 6, guest, 6);
	assert_int_equal(buf[12] << 8 | buf[13], 0x0800);
	assert_int_equal(buf[14 + 9], IPPROTO_UDP);
	assert_int_equal(sum16(buf + 14, 20, 0), 0xffff);	/* IPv4 header checksum */
	assert_memory_equal(buf + 14 + 12, s4.a, 4);
	assert_int_equal(buf[34] << 8 | buf[35], 50000);
	assert_int_equal(buf[36] << 8 | buf[37], 9);
	pseudo = IPPROTO_UDP + 19u;
	pseudo += sum16(s4.a, 4, 0) + sum16(d4.a, 4, 0);
	assert_int_equal(sum16(buf + 34, 19, pseudo), 0xffff);	/* UDP checksum */
	len = verify_frame(buf, sizeof(buf), hw, guest, &s6, 50001, &d6, 9);
	assert_int_equal(len, 14 + 40 + 8 + 11);
	assert_int_equal(buf[12] << 8 | buf[13], 0x86dd);
	assert_int_equal(buf[14 + 6], IPPROTO_UDP);
	pseudo = IPPROTO_UDP + 19u + sum16(s6.a, 16, 0) + sum16(d6.a, 16, 0);
	assert_int_equal(sum16(buf + 54, 19, pseudo), 0xffff);
	assert_int_not_equal(buf[54 + 6] << 8 | buf[54 + 7], 0);	/* IPv6 forbids no checksum */
	/* Families differ, or no room: nothing. */
	assert_int_equal(verify_frame(buf, sizeof(buf), hw, guest, &s4, 1, &d6, 9), 0);
	assert_int_equal(verify_frame(buf, 40, hw, guest, &s4, 1, &d4, 9), 0);
	/* Another MAC: never the guest's, always unicast and locally administered. */
	verify_foreign_mac(hw, mac);
	assert_memory_not_equal(mac, hw, 6);
	verify_foreign_mac(guest, mac);
	assert_memory_not_equal(mac, guest, 6);
	assert_int_equal(mac[0] & 0x03, 0x02);
}

static void test_plan_allowed(void **state)
{
	struct policy *p = pol(P_WEB), *open = pol(P_OPEN);
	struct verify_probe pr[VERIFY_PROBES_MAX];
	struct verify_facts f;
	const char *name;
	uint16_t port;
	size_t n;

	(void)state;
	/* The first exact name of a TCP rule: wildcards are not names. */
	assert_true(verify_allowed_target(p, &name, &port));
	assert_string_equal(name, "api.example.com");
	assert_int_equal(port, 443);
	assert_false(verify_allowed_target(open, &name, &port));
	facts(&f, p);
	f.allowed = true;
	n = verify_plan(&f, pr);
	assert_int_equal(find(pr, n, "allowed-dns")->kind, VK_ALLOWED_DNS);
	assert_int_equal(find(pr, n, "allowed-conn")->dport, 443);
	facts(&f, open);
	f.allowed = true;
	n = verify_plan(&f, pr);
	assert_int_equal(find(pr, n, "allowed-conn")->verdict, VV_SKIP);
	policy_free(p);
	policy_free(open);
}

static struct verify_probe probe(uint8_t kind)
{
	struct verify_probe p = { .kind = kind };

	snprintf(p.name, sizeof(p.name), "x");
	return p;
}

static void test_judge_drop(void **state)
{
	struct verify_probe p = probe(VK_DROP);
	struct verify_obs o = { .rcode = -1, .wait_ms = 1000 };

	(void)state;
	/* Pending, no conntrack entry: dropped; the deny log's reason in the detail. */
	snprintf(o.denied, sizeof(o.denied), "internal");
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_PASS);
	assert_non_null(strstr(p.detail, "internal"));
	/* Conntrack holds it: the filter let it through, whatever answered. */
	o.ct = 1;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	o.sock_err = ECONNREFUSED;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	/* Refused, never through: on_deny: reject's answer. */
	o.ct = 0;
	verify_judge(&p, &o, true);
	assert_int_equal(p.verdict, VV_PASS);
	assert_non_null(strstr(p.detail, "rejected"));
	/* Connected: fail. */
	o.connected = true;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	/* Unconfirmed either way: no conntrack answer and no deny log. */
	memset(&o, 0, sizeof(o));
	o.ct = -EIO;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	/* Could not even start. */
	memset(&o, 0, sizeof(o));
	o.send_err = -ENETUNREACH;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
}

static void test_judge_dns(void **state)
{
	struct verify_probe p = probe(VK_DNS_UDP);
	struct verify_obs o = { .rcode = 3, .seen = true, .wait_ms = 1000 };

	(void)state;
	snprintf(o.seen_reason, sizeof(o.seen_reason), "not-in-policy");
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_PASS);
	assert_non_null(strstr(p.detail, "NXDOMAIN"));
	o.rcode = 5;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_PASS);
	/* Answered, but netd's proxy never decided it: someone else answered. */
	o.seen = false;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	/* No answer at all. */
	o.rcode = -1;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	/* netd let it through: forwarded upstream. */
	o.rcode = 3;
	o.seen = o.seen_allowed = true;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	assert_non_null(strstr(p.detail, "forwarded"));
	/* NOERROR from netd for a denied name. */
	o.seen_allowed = false;
	o.rcode = 0;
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
}

static void test_judge_other(void **state)
{
	struct verify_probe p = probe(VK_SPOOF);
	struct verify_obs o = { .wait_ms = 1000 };

	(void)state;
	snprintf(o.denied, sizeof(o.denied), "spoof");
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_PASS);
	snprintf(o.denied, sizeof(o.denied), "not-pinned");
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	o.denied[0] = '\0';
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);

	p = probe(VK_KERNEL);
	memset(&o, 0, sizeof(o));
	o.kernel = "";
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_PASS);
	o.kernel = "no element in sandbox_fwd (no jump)";
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_FAIL);
	assert_string_equal(p.detail, "no element in sandbox_fwd (no jump)");

	/* A skipped probe keeps its verdict and detail. */
	p = probe(VK_SKIP);
	p.verdict = VV_SKIP;
	snprintf(p.detail, sizeof(p.detail), "why");
	verify_judge(&p, &o, false);
	assert_int_equal(p.verdict, VV_SKIP);
	assert_string_equal(p.detail, "why");
}

static void test_report(void **state)
{
	struct verify_probe a = probe(VK_DROP), b = probe(VK_KERNEL), c = probe(VK_SKIP);
	json_t *rows = json_array(), *rep;

	(void)state;
	addr_parse("2001:db8::201", &a.dst);
	a.dport = 443;
	a.verdict = VV_PASS;
	b.verdict = VV_FAIL;
	c.verdict = VV_SKIP;
	json_array_append_new(rows, verify_row_json("sb1", &a));
	json_array_append_new(rows, verify_row_json("sb1", &b));
	json_array_append_new(rows, verify_row_json("sb2", &c));
	assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "target")),
			    "[2001:db8::201]:443");
	assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 1), "verdict")),
			    "fail");
	rep = verify_report(rows, 2, 1234);
	assert_non_null(rep);
	assert_false(json_is_true(json_object_get(rep, "ok")));
	assert_int_equal(json_integer_value(json_object_get(rep, "probes")), 3);
	assert_int_equal(json_integer_value(json_object_get(rep, "passed")), 1);
	assert_int_equal(json_integer_value(json_object_get(rep, "failed")), 1);
	assert_int_equal(json_integer_value(json_object_get(rep, "skipped")), 1);
	assert_int_equal(json_integer_value(json_object_get(rep, "duration_ms")), 1234);
	json_decref(rep);
	/* Nothing failed (an empty run included): ok. */
	rep = verify_report(json_array(), 0, 0);
	assert_true(json_is_true(json_object_get(rep, "ok")));
	json_decref(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_families), cmocka_unit_test(test_plan_skips),
		cmocka_unit_test(test_plan_allowed),  cmocka_unit_test(test_judge_drop),
		cmocka_unit_test(test_judge_dns),     cmocka_unit_test(test_judge_other),
		cmocka_unit_test(test_report),        cmocka_unit_test(test_judge_frame),
		cmocka_unit_test(test_frame),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
