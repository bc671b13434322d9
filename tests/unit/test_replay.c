/*
 * test_replay - the DNS proxy's data path (dnsproxy/query.c, the code the
 * daemon runs) through the replay seam (dnsproxy/replay.h): scripted
 * queries, upstream answers and pin acknowledgements in, and what is sent
 * when out.  No root, no sockets, no network.
 *
 * The log: every event the seam reports (a reply, an upstream query, a pin
 * batch, an audit record) is appended to h.log in order, so a test can
 * assert that the pin came before the answer, not just that both happened.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dnsproxy/replay.h"
#include "dnsproxy/wire.h"
#include "netd/model/policy.h"
#include "netd/model/policy_dns.h"

#define MAX_EV 64

enum ev_kind { EV_REPLY, EV_UPSTREAM, EV_PIN, EV_AUDIT };

struct ev {
	enum ev_kind kind;
	uint64_t tag;		/* EV_REPLY */
	bool tcp;
	uint8_t msg[4096];	/* EV_REPLY, EV_UPSTREAM */
	size_t len;
	unsigned int id;	/* EV_UPSTREAM */
	struct pin pins[8];	/* EV_PIN */
	size_t n_pins;
	char sandbox[32];	/* EV_PIN, EV_AUDIT */
	char reason[32];	/* EV_AUDIT */
	char would_deny[32];	/* EV_AUDIT: "" if none */
	size_t n_answers;	/* EV_AUDIT */
	uint8_t rcode;
};

struct harness {
	struct proxy *p;
	struct policy *allow, *deny;
	struct policy *keep;	/* sb2's instead of allow when sb2_keep: ech.test keeps ECH */
	bool sb2_keep;
	struct addr sb1, sb2, stranger;
	bool sb1_denies;	/* sb1's policy reloaded to one that denies all */
	bool sb1_audit;		/* sb1 in audit mode */
	int pin_result;		/* what the "kernel" acknowledges: 0 or -errno */
	struct ev log[MAX_EV];
	size_t n;
	bool quiet;		/* count replies by rcode instead of logging events */
	unsigned int n_rcode[16];
};

static struct harness h;

static struct ev scratch;

static struct ev *ev_new(enum ev_kind kind)
{
	struct ev *e;

	if (h.quiet)
		return &scratch;

	assert_true(h.n < MAX_EV);
	e = &h.log[h.n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	return e;
}

/* ---- proxy_ops: the daemon's side ---------------------------------------- */

static int t_lookup(void *ctx, const struct addr *src, struct proxy_client *out)
{
	if (addr_equal(src, &h.sb1)) {
		out->sandbox = "sb1";
		out->policy = policy_dns_view(h.sb1_denies ? h.deny : h.allow);
		out->audit = h.sb1_audit;
		return 0;
	}
	if (addr_equal(src, &h.sb2)) {
		out->sandbox = "sb2";
		out->policy = policy_dns_view(h.sb2_keep ? h.keep : h.allow);
		return 0;
	}
	return -ENOENT;
}

static int t_pin(void *ctx, const char *sandbox, const struct pin *pins, size_t n)
{
	struct ev *e = ev_new(EV_PIN);

	snprintf(e->sandbox, sizeof(e->sandbox), "%s", sandbox);
	e->n_pins = n < 8 ? n : 8;
	memcpy(e->pins, pins, e->n_pins * sizeof(pins[0]));
	return h.pin_result;
}

static void t_audit(void *ctx, const struct proxy_event *pe)
{
	struct ev *e = ev_new(EV_AUDIT);

	snprintf(e->sandbox, sizeof(e->sandbox), "%s", pe->sandbox ? pe->sandbox : "");
	snprintf(e->reason, sizeof(e->reason), "%s", pe->reason ? pe->reason : "");
	snprintf(e->would_deny, sizeof(e->would_deny), "%s", pe->would_deny ? pe->would_deny : "");
	e->n_answers = pe->n_answers;
	e->rcode = pe->rcode;
	e->tcp = strcmp(pe->transport, "tcp") == 0;
}

/* ---- replay_ops: the wire's side ------------------------------------------ */

static void t_reply(void *ctx, uint64_t tag, bool tcp, const uint8_t *msg, size_t len)
{
	struct ev *e = ev_new(EV_REPLY);

	if (h.quiet && len >= 4)
		h.n_rcode[msg[3] & 0x0f]++;
	assert_true(len <= sizeof(e->msg));
	e->tag = tag;
	e->tcp = tcp;
	memcpy(e->msg, msg, len);
	e->len = len;
}

static void t_upstream(void *ctx, unsigned int id, const uint8_t *msg, size_t len)
{
	struct ev *e = ev_new(EV_UPSTREAM);

	assert_true(len <= sizeof(e->msg));
	e->id = id;
	memcpy(e->msg, msg, len);
	e->len = len;
}

static const struct proxy_ops ops = { t_lookup, t_pin, t_audit };
static const struct replay_ops rops = { t_reply, t_upstream };

/* ---- messages -------------------------------------------------------------- */

/* query() - a query for @name/@qtype with @id, RD set; Return: its length. */
static size_t query(uint8_t *buf, uint16_t id, const char *name, uint16_t qtype)
{
	size_t o = 12;

	memset(buf, 0, 12);
	buf[0] = (uint8_t)(id >> 8);
	buf[1] = (uint8_t)id;
	buf[2] = 0x01;	/* RD */
	buf[5] = 1;	/* QDCOUNT */
	while (*name) {
		size_t l = strcspn(name, ".");

		buf[o++] = (uint8_t)l;
		memcpy(buf + o, name, l);
		o += l;
		name += l;
		if (*name == '.')
			name++;
	}
	buf[o++] = 0;
	buf[o++] = (uint8_t)(qtype >> 8);
	buf[o++] = (uint8_t)qtype;
	buf[o++] = 0;
	buf[o++] = 1;	/* IN */
	return o;
}

/*
 * answer_a() - the response to @q/@qlen (its question, ID 0x7777: the
 * upstream's) with @n A records 198.51.100.(first..first+n-1), TTL @ttl_s.
 */
static size_t answer_a(uint8_t *buf, const uint8_t *q, size_t qlen, unsigned int n,
		       unsigned int first, uint32_t ttl_s)
{
	size_t o = qlen;

	memcpy(buf, q, qlen);
	buf[0] = 0x77;
	buf[1] = 0x77;
	buf[2] = 0x81;	/* QR, RD */
	buf[3] = 0x80;	/* RA, NOERROR */
	buf[6] = (uint8_t)(n >> 8);
	buf[7] = (uint8_t)n;
	for (unsigned int i = 0; i < n; i++) {
		const uint8_t rr[] = { 0xc0, 0x0c, 0, 1, 0, 1,
				       (uint8_t)(ttl_s >> 24), (uint8_t)(ttl_s >> 16),
				       (uint8_t)(ttl_s >> 8), (uint8_t)ttl_s, 0, 4,
				       198, 51, 100, (uint8_t)(first + i) };

		memcpy(buf + o, rr, sizeof(rr));
		o += sizeof(rr);
	}
	return o;
}

static uint16_t msg_id(const struct ev *e)
{
	return (uint16_t)(e->msg[0] << 8 | e->msg[1]);
}

static uint8_t msg_rcode(const struct ev *e)
{
	return e->msg[3] & 0x0f;
}

static uint16_t msg_ancount(const struct ev *e)
{
	return (uint16_t)(e->msg[6] << 8 | e->msg[7]);
}

/* find() - the @nth (0-based) event of @kind in the log, or NULL. */
static const struct ev *find(enum ev_kind kind, unsigned int nth, size_t *ret_idx)
{
	for (size_t i = 0; i < h.n; i++) {
		if (h.log[i].kind != kind || nth-- > 0)
			continue;
		if (ret_idx)
			*ret_idx = i;
		return &h.log[i];
	}
	return NULL;
}

static unsigned int count(enum ev_kind kind)
{
	unsigned int n = 0;

	for (size_t i = 0; i < h.n; i++)
		n += h.log[i].kind == kind;
	return n;
}

/* ---- fixtures ---------------------------------------------------------------- */

static const char allow_yaml[] =
	"name: allow\n"
	"egress:\n"
	"  - domains: [www.example.com, \"*.cdn.test\"]\n"
	"    ports: [443]\n"
	"  - domains: [ech.test]\n"
	"    ports: [443]\n"
	"    tls: { sni: enforce }\n"
	"  - domains: [\"*.tun.test\"]\n"		/* a small name budget */
	"    ports: [443]\n"
	"    dns: { budget: 3/1m }\n"
	"  - domains: [\"*.log.test\"]\n"		/* encoded names logged, answered */
	"    ports: [443]\n"
	"    dns: { budget: off, encoded: log }\n";
static const char deny_yaml[] = "name: denyall\negress: []\n";
static const char keep_yaml[] =
	"name: keep\n"
	"egress:\n"
	"  - domains: [ech.test]\n"
	"    ports: [443]\n"
	"    tls: { sni: enforce, ech: keep }\n";

static int setup(void **state)
{
	struct proxy_config cfg = { .min_ttl_s = 5, .max_ttl_s = 300, .deny_rcode = 3,
				    .cache_size = 100 };
	struct diag err = { 0 };

	memset(&h, 0, sizeof(h));
	assert_int_equal(policy_parse(allow_yaml, strlen(allow_yaml), "allow.yaml", &h.allow, &err), 0);
	assert_int_equal(policy_parse(deny_yaml, strlen(deny_yaml), "deny.yaml", &h.deny, &err), 0);
	assert_int_equal(policy_parse(keep_yaml, strlen(keep_yaml), "keep.yaml", &h.keep, &err), 0);
	assert_int_equal(addr_parse("10.87.0.2", &h.sb1), 0);
	assert_int_equal(addr_parse("10.87.0.6", &h.sb2), 0);
	assert_int_equal(addr_parse("203.0.113.9", &h.stranger), 0);
	assert_int_equal(replay_new(&cfg, &ops, NULL, &rops, NULL, &h.p), 0);
	return 0;
}

static int teardown(void **state)
{
	proxy_free(h.p);
	policy_free(h.allow);
	policy_free(h.deny);
	policy_free(h.keep);
	return 0;
}

/* ---- the tests ------------------------------------------------------------------ */

/* Allowed: upstream, then the pin, and only after its ack the answer. */
static void test_allowed_pin_then_answer(void **state)
{
	uint8_t q[512], a[1024];
	size_t qlen = query(q, 0x1234, "www.example.com", WIRE_TYPE_A), alen, i_pin, i_reply;
	const struct ev *up, *pin, *rep, *au;

	replay_query(h.p, &h.sb1, false, q, qlen, 1);
	up = find(EV_UPSTREAM, 0, NULL);
	assert_non_null(up);
	assert_null(find(EV_REPLY, 0, NULL));	/* nothing before the upstream answer */
	assert_int_equal(replay_outstanding(h.p), 1);

	alen = answer_a(a, q, qlen, 1, 80, 600);
	assert_int_equal(replay_answer(h.p, up->id, 0, a, alen), 0);
	pin = find(EV_PIN, 0, &i_pin);
	rep = find(EV_REPLY, 0, &i_reply);
	assert_non_null(pin);
	assert_non_null(rep);
	assert_true(i_pin < i_reply);	/* the answer never leaves before the pin's ack */
	assert_string_equal(pin->sandbox, "sb1");
	assert_int_equal(pin->n_pins, 1);
	assert_int_equal(pin->pins[0].proto, IPPROTO_TCP);
	assert_int_equal(pin->pins[0].port, 443);
	assert_int_equal(pin->pins[0].timeout_ms, 300000);	/* TTL 600 clamped to max_ttl */
	assert_int_equal(rep->tag, 1);
	assert_int_equal(msg_id(rep), 0x1234);	/* the client's ID, not the upstream's */
	assert_int_equal(msg_rcode(rep), WIRE_RCODE_NOERROR);
	assert_int_equal(msg_ancount(rep), 1);
	au = find(EV_AUDIT, 0, NULL);
	assert_non_null(au);
	assert_string_equal(au->reason, "policy");
	assert_int_equal(replay_outstanding(h.p), 0);
}

/* The kernel refuses the pin: SERVFAIL, and the addresses never leave. */
static void test_pin_failed_servfail(void **state)
{
	uint8_t q[512], a[1024];
	size_t qlen = query(q, 0x2222, "www.example.com", WIRE_TYPE_A), alen;
	const struct ev *rep;

	h.pin_result = -ENOBUFS;
	replay_query(h.p, &h.sb1, false, q, qlen, 2);
	alen = answer_a(a, q, qlen, 1, 80, 60);
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 0, NULL)->id, 0, a, alen), 0);
	assert_int_equal(count(EV_PIN), 1);
	rep = find(EV_REPLY, 0, NULL);
	assert_non_null(rep);
	assert_int_equal(msg_rcode(rep), WIRE_RCODE_SERVFAIL);
	assert_int_equal(msg_ancount(rep), 0);
	assert_null(memmem(rep->msg, rep->len, (const uint8_t[]){ 198, 51, 100, 80 }, 4));
	assert_string_equal(find(EV_AUDIT, 0, NULL)->reason, "pin-failed");
}

/* Denied: NXDOMAIN at once, nothing upstream, nothing pinned. */
static void test_denied(void **state)
{
	uint8_t q[512];
	size_t qlen = query(q, 0x3333, "other.example.com", WIRE_TYPE_A);
	const struct ev *rep;

	replay_query(h.p, &h.sb1, false, q, qlen, 3);
	rep = find(EV_REPLY, 0, NULL);
	assert_non_null(rep);
	assert_int_equal(msg_rcode(rep), WIRE_RCODE_NXDOMAIN);
	assert_int_equal(count(EV_UPSTREAM), 0);
	assert_int_equal(count(EV_PIN), 0);
	assert_string_equal(find(EV_AUDIT, 0, NULL)->reason, "not-in-policy");
}

/* Denied with EDNS: the answer carries EDE 15 with the reason, not the policy (RFC 8914). */
static void test_denied_ede(void **state)
{
	uint8_t q[512];
	size_t qlen = query(q, 0x3334, "other.example.com", WIRE_TYPE_A);
	static const uint8_t opt[] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 };
	static const char text[] = "netd: blocked by the sandbox's policy: not in policy";
	const uint8_t ede[] = { 0, 15, 0, (uint8_t)(2 + strlen(text)), 0, 15 };
	const struct ev *rep;

	q[11] = 1;
	memcpy(q + qlen, opt, sizeof(opt));
	qlen += sizeof(opt);
	replay_query(h.p, &h.sb1, false, q, qlen, 3);
	rep = find(EV_REPLY, 0, NULL);
	assert_non_null(rep);
	assert_int_equal(msg_rcode(rep), WIRE_RCODE_NXDOMAIN);
	assert_int_equal(rep->len, qlen + 6 + strlen(text));
	assert_memory_equal(rep->msg + rep->len - strlen(text) - 6, ede, 6);
	assert_memory_equal(rep->msg + rep->len - strlen(text), text, strlen(text));
	assert_string_equal(find(EV_AUDIT, 0, NULL)->reason, "not-in-policy");
}

/*
 * Audit mode: a name the policy does not allow goes upstream, its answer
 * reaches the client with nothing pinned, the audit says would_deny; a
 * cache hit of it is marked the same; bad names stay refused.
 */
static void test_audit_mode(void **state)
{
	uint8_t q[512], a[1024];
	size_t qlen = query(q, 0x5151, "other.example.com", WIRE_TYPE_A), alen;
	const struct ev *up, *rep, *au;

	h.sb1_audit = true;
	replay_query(h.p, &h.sb1, false, q, qlen, 1);
	up = find(EV_UPSTREAM, 0, NULL);
	assert_non_null(up);
	alen = answer_a(a, q, qlen, 2, 80, 60);
	assert_int_equal(replay_answer(h.p, up->id, 0, a, alen), 0);
	rep = find(EV_REPLY, 0, NULL);
	assert_non_null(rep);
	assert_int_equal(msg_rcode(rep), WIRE_RCODE_NOERROR);
	assert_int_equal(msg_ancount(rep), 2);
	assert_int_equal(count(EV_PIN), 0);
	au = find(EV_AUDIT, 0, NULL);
	assert_string_equal(au->reason, "audit-mode");
	assert_string_equal(au->would_deny, "not-in-policy");
	assert_int_equal(au->n_answers, 2);	/* for the trail's names, unpinned */
	/* Again: a cache hit, marked the same, still nothing pinned. */
	q[0] = 0x52;
	replay_query(h.p, &h.sb1, false, q, qlen, 2);
	assert_int_equal(count(EV_UPSTREAM), 1);
	assert_int_equal(count(EV_REPLY), 2);
	assert_int_equal(count(EV_PIN), 0);
	au = find(EV_AUDIT, 1, NULL);
	assert_non_null(au);
	assert_string_equal(au->would_deny, "not-in-policy");
	/* An allowed name in audit mode: pinned and not marked. */
	qlen = query(q, 0x5353, "www.example.com", WIRE_TYPE_A);
	replay_query(h.p, &h.sb1, false, q, qlen, 3);
	up = find(EV_UPSTREAM, 1, NULL);
	assert_non_null(up);
	alen = answer_a(a, q, qlen, 1, 90, 60);
	assert_int_equal(replay_answer(h.p, up->id, 0, a, alen), 0);
	assert_int_equal(count(EV_PIN), 1);
	au = find(EV_AUDIT, 2, NULL);
	assert_string_equal(au->reason, "policy");
	assert_string_equal(au->would_deny, "");
	h.sb1_audit = false;
}

/* An unknown source: REFUSED, not audited. */
static void test_stranger_refused(void **state)
{
	uint8_t q[512];
	size_t qlen = query(q, 0x4444, "www.example.com", WIRE_TYPE_A);

	replay_query(h.p, &h.stranger, false, q, qlen, 4);
	assert_int_equal(msg_rcode(find(EV_REPLY, 0, NULL)), WIRE_RCODE_REFUSED);
	assert_int_equal(count(EV_AUDIT), 0);
	assert_int_equal(count(EV_UPSTREAM), 0);
}

/*
 * A cache hit goes the same way: no upstream query, but the pins of the
 * sandbox asking (sb2 has none yet) are committed before the answer, and
 * the TTLs handed out are aged.
 */
static void test_cache_hit_pins_first(void **state)
{
	uint8_t q[512], a[1024];
	size_t qlen = query(q, 0x5555, "a.cdn.test", WIRE_TYPE_A), alen, i_pin, i_reply;
	const struct ev *rep;

	replay_query(h.p, &h.sb1, false, q, qlen, 5);
	alen = answer_a(a, q, qlen, 1, 90, 100);
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 0, NULL)->id, 0, a, alen), 0);
	assert_int_equal(count(EV_PIN), 1);
	h.n = 0;

	replay_set_clock(h.p, 1000 + 30000);	/* 30 s later */
	qlen = query(q, 0x5556, "a.cdn.test", WIRE_TYPE_A);
	replay_query(h.p, &h.sb2, false, q, qlen, 6);
	assert_int_equal(count(EV_UPSTREAM), 0);	/* from the cache */
	assert_non_null(find(EV_PIN, 0, &i_pin));
	rep = find(EV_REPLY, 0, &i_reply);
	assert_non_null(rep);
	assert_true(i_pin < i_reply);
	assert_string_equal(find(EV_PIN, 0, NULL)->sandbox, "sb2");
	assert_int_equal(find(EV_PIN, 0, NULL)->pins[0].timeout_ms, 70000);	/* aged TTL */
	assert_int_equal(msg_id(rep), 0x5556);
	assert_int_equal(msg_ancount(rep), 1);
	assert_int_equal(proxy_get_stats(h.p)->cache_hits, 1);

	/* sb1 asking again: its pin already lasts as long, nothing to commit. */
	h.n = 0;
	qlen = query(q, 0x5557, "a.cdn.test", WIRE_TYPE_A);
	replay_query(h.p, &h.sb1, false, q, qlen, 7);
	assert_int_equal(count(EV_PIN), 0);
	assert_int_equal(msg_ancount(find(EV_REPLY, 0, NULL)), 1);
	assert_int_equal(proxy_get_stats(h.p)->pins_skipped, 1);
}

/* pin_addr() - the address of the first pin of the first EV_PIN, as text. */
static const char *pin_addr(char *buf, size_t sz)
{
	const struct ev *e = find(EV_PIN, 0, NULL);

	assert_non_null(e);
	return addr_format(&e->pins[0].addr, buf, sz);
}

/* fresh_pin() - sb1 asks a.cdn.test (ID @id, tag @tag), the upstream
 * answers 198.51.100.@first, TTL 10: the address of its first pin. */
static const char *fresh_pin(uint16_t id, uint64_t tag, unsigned int first, char *buf, size_t sz)
{
	uint8_t q[512], a[1024];
	size_t qlen = query(q, id, "a.cdn.test", WIRE_TYPE_A), alen;

	h.n = 0;
	replay_query(h.p, &h.sb1, false, q, qlen, tag);
	alen = answer_a(a, q, qlen, 1, first, 10);
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 0, NULL)->id, 0, a, alen), 0);
	return pin_addr(buf, sz);
}

/* cached_pin() - sb2 asks a.cdn.test (ID @id, tag @tag), answered from the
 * cache: the address of its first pin. */
static const char *cached_pin(uint16_t id, uint64_t tag, char *buf, size_t sz)
{
	uint8_t q[512];
	size_t qlen = query(q, id, "a.cdn.test", WIRE_TYPE_A);

	h.n = 0;
	replay_query(h.p, &h.sb2, false, q, qlen, tag);
	assert_int_equal(count(EV_UPSTREAM), 0);
	return pin_addr(buf, sz);
}

/*
 * The proxy remembers the answers it walked (query.c walk()): an answer
 * one address byte apart from the last (same name, length and TTL) is
 * walked again, and every sandbox gets the pins of the very answer it is
 * handed, fresh or from the cache.
 */
static void test_walk_memo_follows_bytes(void **state)
{
	char buf[ADDR_STRLEN];

	(void)state;
	replay_set_clock(h.p, 1000);
	assert_string_equal(fresh_pin(0x6001, 1, 90, buf, sizeof(buf)), "198.51.100.90");

	/* From the cache (its walk remembered): sb2's pin, the same address. */
	assert_string_equal(cached_pin(0x6002, 2, buf, sizeof(buf)), "198.51.100.90");

	/* Expired: asked again, and the upstream now answers .91. */
	replay_set_clock(h.p, 1000 + 11000);
	assert_string_equal(fresh_pin(0x6003, 3, 91, buf, sizeof(buf)), "198.51.100.91");
	assert_string_equal(cached_pin(0x6004, 4, buf, sizeof(buf)), "198.51.100.91");
	assert_int_equal(proxy_get_stats(h.p)->cache_hits, 2);
}

/*
 * answer_https() - the response to @q/@qlen with one HTTPS RR owned by the
 * qname: priority 1, ".", ipv4hint 198.51.100.41, then (@ech) an ech
 * SvcParam of @ech_len octets of @ech.  ID 0x7777, TTL 60.
 */
static size_t answer_https(uint8_t *buf, const uint8_t *q, size_t qlen, const uint8_t *ech,
			   size_t ech_len)
{
	static const uint8_t head[] = { 0xc0, 0x0c, 0, 65, 0, 1, 0, 0, 0, 60 };
	static const uint8_t rdata[] = { 0, 1, 0, 0, 4, 0, 4, 198, 51, 100, 41 };
	size_t o = qlen, rdlen = sizeof(rdata) + (ech ? 4 + ech_len : 0);

	memcpy(buf, q, qlen);
	buf[0] = 0x77;
	buf[1] = 0x77;
	buf[2] = 0x81;
	buf[3] = 0x80;
	buf[7] = 1;
	memcpy(buf + o, head, sizeof(head));
	o += sizeof(head);
	buf[o++] = (uint8_t)(rdlen >> 8);
	buf[o++] = (uint8_t)rdlen;
	memcpy(buf + o, rdata, sizeof(rdata));
	o += sizeof(rdata);
	if (ech) {
		buf[o++] = 0;
		buf[o++] = 5;
		buf[o++] = (uint8_t)(ech_len >> 8);
		buf[o++] = (uint8_t)ech_len;
		memcpy(buf + o, ech, ech_len);
		o += ech_len;
	}
	return o;
}

/*
 * Issue 25: under a rule that checks the SNI, the ech SvcParam never
 * reaches the client, fresh or from the cache; the hint is pinned before
 * the answer leaves; the cache keeps the upstream's answer, which a rule
 * that keeps ECH gets byte for byte (but its ID).  An answer whose ech
 * cannot be cut (a later name reads its bytes) is SERVFAIL, not passed on.
 */
static void test_ech_stripped(void **state)
{
	static const uint8_t ech[] = { 0x00, 0x06, 0xfe, 0x0d, 0x00, 0x02, 0x42, 0x42 };
	uint8_t q[512], a[1024], want[1024];
	size_t qlen = query(q, 0x2525, "ech.test", WIRE_TYPE_HTTPS), alen, wlen, i_pin, i_reply;
	const struct ev *rep;

	replay_query(h.p, &h.sb1, false, q, qlen, 1);
	alen = answer_https(a, q, qlen, ech, sizeof(ech));
	wlen = answer_https(want, q, qlen, NULL, 0);
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 0, NULL)->id, 0, a, alen), 0);
	assert_non_null(find(EV_PIN, 0, &i_pin));
	rep = find(EV_REPLY, 0, &i_reply);
	assert_non_null(rep);
	assert_true(i_pin < i_reply);
	assert_int_equal(find(EV_PIN, 0, NULL)->pins[0].addr.a[3], 41);	/* the hint */
	want[0] = 0x25, want[1] = 0x25;
	assert_int_equal(rep->len, wlen);
	assert_memory_equal(rep->msg, want, wlen);	/* exactly: no ech, nothing else changed */
	assert_int_equal(proxy_get_stats(h.p)->ech_stripped, 1);

	/* From the cache: stripped again, for this client. */
	h.n = 0;
	q[0] = 0x26;
	replay_query(h.p, &h.sb1, false, q, qlen, 2);
	assert_int_equal(count(EV_UPSTREAM), 0);
	rep = find(EV_REPLY, 0, NULL);
	assert_int_equal(rep->len, wlen);
	assert_null(memmem(rep->msg, rep->len, ech, sizeof(ech)));
	assert_int_equal(proxy_get_stats(h.p)->cache_hits, 1);
	assert_int_equal(proxy_get_stats(h.p)->ech_stripped, 2);

	/* A rule that keeps ECH: the cached upstream answer, byte for byte. */
	h.n = 0;
	h.sb2_keep = true;
	q[0] = 0x27;
	replay_query(h.p, &h.sb2, false, q, qlen, 3);
	rep = find(EV_REPLY, 0, NULL);
	a[0] = 0x27, a[1] = 0x25;
	assert_int_equal(rep->len, alen);
	assert_memory_equal(rep->msg, a, alen);
	assert_int_equal(proxy_get_stats(h.p)->ech_stripped, 2);
	h.sb2_keep = false;

	/* The ech's bytes read by a later name: cannot be cut, SERVFAIL. */
	h.n = 0;
	qlen = query(q, 0x2828, "ech.test", WIRE_TYPE_A);
	replay_query(h.p, &h.sb1, false, q, qlen, 4);
	alen = answer_https(a, q, qlen, (const uint8_t *)"\x01x\xc0\x0c", 4);
	a[7] = 2;
	memcpy(a + alen, (const uint8_t[]){ 0xc0, (uint8_t)(alen - 4), 0, 1, 0, 1, 0, 0, 0, 60,
					   0, 4, 198, 51, 100, 42 }, 16);
	alen += 16;
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 0, NULL)->id, 0, a, alen), 0);
	assert_int_equal(msg_rcode(find(EV_REPLY, 0, NULL)), WIRE_RCODE_SERVFAIL);
	assert_int_equal(count(EV_PIN), 0);
	assert_string_equal(find(EV_AUDIT, 0, NULL)->reason, "bad-answer");
	/* (the same answer where ECH is kept: well-formed, delivered) */
	h.n = 0;
	h.sb2_keep = true;
	replay_query(h.p, &h.sb2, false, q, qlen, 5);
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 0, NULL)->id, 0, a, alen), 0);
	assert_int_equal(msg_rcode(find(EV_REPLY, 0, NULL)), WIRE_RCODE_NOERROR);
	h.sb2_keep = false;
}

/* Upstream failure: SERVFAIL, audited as such. */
static void test_upstream_failure(void **state)
{
	uint8_t q[512];
	size_t qlen = query(q, 0x6666, "www.example.com", WIRE_TYPE_A);

	replay_query(h.p, &h.sb1, false, q, qlen, 8);
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 0, NULL)->id, -EIO, NULL, 0), 0);
	assert_int_equal(msg_rcode(find(EV_REPLY, 0, NULL)), WIRE_RCODE_SERVFAIL);
	assert_string_equal(find(EV_AUDIT, 0, NULL)->reason, "upstream-failure");
	assert_int_equal(count(EV_PIN), 0);
	assert_int_equal(replay_answer(h.p, 9999, -EIO, NULL, 0), -ENOENT);
}

/*
 * Audit mode, a name the policy does not allow, and the upstream fails: the
 * record still says what enforce would have done (a new user's audit log
 * lost the would_deny of names asked while the upstream was down, and so
 * did policy suggest); an allowed name's failure stays unmarked.
 */
static void test_audit_upstream_failure(void **state)
{
	uint8_t q[512];
	size_t qlen = query(q, 0x6767, "other.example.com", WIRE_TYPE_A);
	const struct ev *au;

	h.sb1_audit = true;
	replay_query(h.p, &h.sb1, false, q, qlen, 8);
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 0, NULL)->id, -EIO, NULL, 0), 0);
	assert_int_equal(msg_rcode(find(EV_REPLY, 0, NULL)), WIRE_RCODE_SERVFAIL);
	au = find(EV_AUDIT, 0, NULL);
	assert_string_equal(au->reason, "upstream-failure");
	assert_string_equal(au->would_deny, "not-in-policy");
	qlen = query(q, 0x6868, "www.example.com", WIRE_TYPE_A);
	replay_query(h.p, &h.sb1, false, q, qlen, 9);
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 1, NULL)->id, -EIO, NULL, 0), 0);
	au = find(EV_AUDIT, 1, NULL);
	assert_string_equal(au->reason, "upstream-failure");
	assert_string_equal(au->would_deny, "");
	h.sb1_audit = false;
}

/*
 * The upstream deadline (issue 12): no answer by 2500 ms -> SERVFAIL at
 * the deadline, not before; the answer that comes later is dropped.
 */
static void test_deadline_servfail_then_late_answer_dropped(void **state)
{
	uint8_t q[512], a[1024];
	size_t qlen = query(q, 0x7070, "www.example.com", WIRE_TYPE_A), alen;
	unsigned int id;

	replay_query(h.p, &h.sb1, true, q, qlen, 9);
	id = find(EV_UPSTREAM, 0, NULL)->id;
	replay_set_clock(h.p, 1000 + 2499);
	replay_tick(h.p);
	assert_int_equal(count(EV_REPLY), 0);	/* not yet */
	replay_set_clock(h.p, 1000 + 2500);
	replay_tick(h.p);
	assert_int_equal(count(EV_REPLY), 1);
	assert_true(find(EV_REPLY, 0, NULL)->tcp);
	assert_int_equal(msg_rcode(find(EV_REPLY, 0, NULL)), WIRE_RCODE_SERVFAIL);
	assert_string_equal(find(EV_AUDIT, 0, NULL)->reason, "upstream-timeout");
	assert_true(find(EV_AUDIT, 0, NULL)->tcp);
	/* Still upstream (c-ares keeps trying): counted until it reports back. */
	assert_int_equal(replay_outstanding(h.p), 1);

	alen = answer_a(a, q, qlen, 1, 80, 60);
	assert_int_equal(replay_answer(h.p, id, 0, a, alen), 0);
	assert_int_equal(count(EV_REPLY), 1);	/* no second reply */
	assert_int_equal(count(EV_PIN), 0);	/* and nothing pinned */
	assert_int_equal(replay_outstanding(h.p), 0);
}

/* The policy is checked again when the answer arrives: reloaded to deny. */
static void test_reload_while_upstream(void **state)
{
	uint8_t q[512], a[1024];
	size_t qlen = query(q, 0x7171, "www.example.com", WIRE_TYPE_A), alen;

	replay_query(h.p, &h.sb1, false, q, qlen, 10);
	h.sb1_denies = true;
	alen = answer_a(a, q, qlen, 1, 80, 60);
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 0, NULL)->id, 0, a, alen), 0);
	assert_int_equal(count(EV_PIN), 0);
	assert_int_equal(msg_rcode(find(EV_REPLY, 0, NULL)), WIRE_RCODE_NXDOMAIN);
	assert_string_equal(find(EV_AUDIT, 0, NULL)->reason, "not-in-policy");
}

/* Too big for the client's 512 bytes: TC=1 over UDP, all of it over TCP. */
static void test_truncation(void **state)
{
	uint8_t q[512], a[2048];
	size_t qlen = query(q, 0x7272, "big.cdn.test", WIRE_TYPE_A), alen;
	const struct ev *rep;

	replay_query(h.p, &h.sb1, false, q, qlen, 11);
	alen = answer_a(a, q, qlen, 40, 100, 60);	/* 40 records: > 512 bytes */
	assert_true(alen > 512);
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 0, NULL)->id, 0, a, alen), 0);
	rep = find(EV_REPLY, 0, NULL);
	assert_true(rep->msg[2] & 0x02);	/* TC */
	assert_int_equal(msg_ancount(rep), 0);
	/* Over TCP: from the cache, whole. */
	h.n = 0;
	qlen = query(q, 0x7273, "big.cdn.test", WIRE_TYPE_A);
	replay_query(h.p, &h.sb1, true, q, qlen, 12);
	rep = find(EV_REPLY, 0, NULL);
	assert_false(rep->msg[2] & 0x02);
	assert_int_equal(msg_ancount(rep), 40);
}

/* Query rate: a burst of 2000, then REFUSED (audited once per run). */
static void test_rate_limit(void **state)
{
	uint8_t q[512];
	size_t qlen = query(q, 0x7474, "nope.example.com", WIRE_TYPE_A);
	unsigned int refused = 0;

	h.quiet = true;
	for (int i = 0; i < 2010; i++)
		replay_query(h.p, &h.sb1, false, q, qlen, 13);
	h.quiet = false;
	refused = h.n_rcode[WIRE_RCODE_REFUSED];
	assert_int_equal(refused, 10);
	assert_int_equal(h.n_rcode[WIRE_RCODE_NXDOMAIN], 2000);
	assert_int_equal(proxy_get_stats(h.p)->limit_qps, 10);
	/* Half a second later 500 more tokens: answered (denied) again. */
	h.n = 0;
	replay_set_clock(h.p, 1000 + 500);
	replay_query(h.p, &h.sb1, false, q, qlen, 14);
	assert_int_equal(msg_rcode(find(EV_REPLY, 0, NULL)), WIRE_RCODE_NXDOMAIN);
}

/* query_opt() - query() with an OPT RR (EDNS 0, 1232 bytes): room for an EDE. */
static size_t query_opt(uint8_t *buf, uint16_t id, const char *name, uint16_t qtype)
{
	static const uint8_t opt[] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 };
	size_t n = query(buf, id, name, qtype);

	buf[11] = 1;
	memcpy(buf + n, opt, sizeof(opt));
	return n + sizeof(opt);
}

/* The EDE option of reply @e: its INFO-CODE, and its EXTRA-TEXT into @text. */
static unsigned int reply_ede(const struct ev *e, char *text, size_t sz)
{
	const uint8_t *o = memmem(e->msg, e->len, (const uint8_t[]){ 0, 15 }, 2);
	size_t tl;

	/* The EDE is the last thing in our replies: code, length, info, text. */
	while (o && (size_t)(e->msg + e->len - o) != 4 + (size_t)(o[2] << 8 | o[3]))
		o = memmem(o + 1, (size_t)(e->msg + e->len - o - 1), (const uint8_t[]){ 0, 15 }, 2);
	if (!o)
		return 0;
	tl = (size_t)(o[2] << 8 | o[3]) - 2;
	snprintf(text, sz, "%.*s", (int)tl, (const char *)o + 6);
	return (unsigned int)(o[4] << 8 | o[5]);
}

/* Ask @name from sb1; answer it upstream with @rcode (NOERROR: one A). */
static void ask_answer(const char *name, uint8_t rcode)
{
	uint8_t q[512], a[1024];
	size_t qlen = query(q, 0x4242, name, WIRE_TYPE_A), alen;
	unsigned int before = count(EV_UPSTREAM);
	const struct ev *up;

	replay_query(h.p, &h.sb1, false, q, qlen, 40);
	assert_int_equal(count(EV_UPSTREAM), before + 1);
	up = find(EV_UPSTREAM, before, NULL);
	alen = answer_a(a, q, qlen, rcode ? 0 : 1, 70, 60);
	a[3] = (uint8_t)(0x80 | rcode);
	assert_int_equal(replay_answer(h.p, up->id, 0, a, alen), 0);
}

/*
 * The name budget (issue 25): 3 distinct names a minute below *.tun.test;
 * a name counts when asked, whatever the answer (NXDOMAIN, upstream
 * failure); the 4th is REFUSED at once with EDE 18 and why, audited
 * dns-budget, nothing upstream; names asked before still resolve; other
 * sandboxes have their own; the window slides; a reset forgets.
 */
static void test_budget(void **state)
{
	uint8_t q[512];
	size_t qlen;
	const struct ev *rep;
	char text[200];

	ask_answer("a.tun.test", WIRE_RCODE_NOERROR);
	ask_answer("b.tun.test", WIRE_RCODE_NXDOMAIN);
	qlen = query(q, 0x4343, "c.tun.test", WIRE_TYPE_TXT);
	replay_query(h.p, &h.sb1, false, q, qlen, 41);
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 2, NULL)->id, -EIO, NULL, 0), 0);
	h.n = 0;

	qlen = query_opt(q, 0x4444, "d.tun.test", WIRE_TYPE_A);
	replay_query(h.p, &h.sb1, false, q, qlen, 42);
	assert_int_equal(count(EV_UPSTREAM), 0);
	rep = find(EV_REPLY, 0, NULL);
	assert_non_null(rep);
	assert_int_equal(msg_rcode(rep), WIRE_RCODE_REFUSED);
	assert_int_equal(reply_ede(rep, text, sizeof(text)), 18);
	assert_string_equal(text, "netd: DNS name budget spent: 3 new names per 1m below "
			    "*.tun.test; retry in 60s");
	assert_string_equal(find(EV_AUDIT, 0, NULL)->reason, "dns-budget");
	assert_int_equal(find(EV_AUDIT, 0, NULL)->rcode, WIRE_RCODE_REFUSED);
	assert_int_equal(proxy_get_stats(h.p)->budget_refused, 1);
	assert_int_equal(proxy_get_stats(h.p)->budget_names, 3);

	/* A name asked before: answered (here from the cache, pinned first). */
	h.n = 0;
	qlen = query(q, 0x4545, "a.tun.test", WIRE_TYPE_A);
	replay_query(h.p, &h.sb1, false, q, qlen, 43);
	assert_int_equal(msg_rcode(find(EV_REPLY, 0, NULL)), WIRE_RCODE_NOERROR);
	/* sb2 has a budget of its own. */
	h.n = 0;
	qlen = query(q, 0x4646, "d.tun.test", WIRE_TYPE_A);
	replay_query(h.p, &h.sb2, false, q, qlen, 44);
	assert_int_equal(count(EV_UPSTREAM), 1);
	/* 59 s after "b" (asked at 1 s): still refused; at 61 s, "b" left the window. */
	h.n = 0;
	replay_set_clock(h.p, 1000 + 59000);
	qlen = query(q, 0x4747, "e.tun.test", WIRE_TYPE_A);
	replay_query(h.p, &h.sb1, false, q, qlen, 45);
	assert_int_equal(msg_rcode(find(EV_REPLY, 0, NULL)), WIRE_RCODE_REFUSED);
	replay_set_clock(h.p, 1000 + 61000);
	replay_query(h.p, &h.sb1, false, q, qlen, 46);
	assert_int_equal(count(EV_UPSTREAM), 1);
	/* A reload that changes the sandbox's policy resets its budgets. */
	h.n = 0;
	proxy_sandbox_reset(h.p, "sb1");
	qlen = query(q, 0x4848, "f.tun.test", WIRE_TYPE_A);
	replay_query(h.p, &h.sb1, false, q, qlen, 47);
	assert_int_equal(count(EV_UPSTREAM), 1);
}

#define ENCODED "mfrggzdfmztwq2lknnwg23tpobyxe43uov3ho6dzpjqwe2lm"

/*
 * The encoded-label score: refused at once (EDE 15, dns-encoded), nothing
 * upstream, the budget untouched; under encoded: log, answered and counted.
 */
static void test_encoded(void **state)
{
	uint8_t q[512];
	size_t qlen = query_opt(q, 0x4949, ENCODED ".x.cdn.test", WIRE_TYPE_A);
	const struct ev *rep;
	char text[200];

	replay_query(h.p, &h.sb1, false, q, qlen, 50);
	assert_int_equal(count(EV_UPSTREAM), 0);
	rep = find(EV_REPLY, 0, NULL);
	assert_int_equal(msg_rcode(rep), WIRE_RCODE_REFUSED);
	assert_int_equal(reply_ede(rep, text, sizeof(text)), 15);
	assert_string_equal(text, "netd: refused as DNS tunnelling: a run of 48 characters "
			    "looks base32-encoded");
	assert_string_equal(find(EV_AUDIT, 0, NULL)->reason, "dns-encoded");
	/* Three encoded names under *.tun.test spend none of its 3. */
	for (int i = 0; i < 3; i++) {
		char name[128];

		snprintf(name, sizeof(name), "%s.%d.tun.test", ENCODED, i);
		qlen = query(q, 0x4a4a, name, WIRE_TYPE_A);
		replay_query(h.p, &h.sb1, false, q, qlen, 51);
	}
	assert_int_equal(count(EV_UPSTREAM), 0);
	assert_int_equal(proxy_get_stats(h.p)->encoded_refused, 4);
	ask_answer("a.tun.test", WIRE_RCODE_NOERROR);
	ask_answer("b.tun.test", WIRE_RCODE_NOERROR);
	ask_answer("c.tun.test", WIRE_RCODE_NOERROR);
	/* encoded: log: it goes upstream and is answered. */
	ask_answer(ENCODED ".log.test", WIRE_RCODE_NOERROR);
	assert_int_equal(proxy_get_stats(h.p)->tunnel_suspect, 5);
	assert_int_equal(proxy_get_stats(h.p)->encoded_refused, 4);
}

/* Audit mode: over the budget, resolved all the same, marked would_deny dns-budget. */
static void test_budget_audit_mode(void **state)
{
	uint8_t q[512], a[1024];
	size_t qlen, alen;
	const struct ev *au;

	ask_answer("a.tun.test", WIRE_RCODE_NOERROR);
	ask_answer("b.tun.test", WIRE_RCODE_NOERROR);
	ask_answer("c.tun.test", WIRE_RCODE_NOERROR);
	h.sb1_audit = true;
	h.n = 0;
	qlen = query(q, 0x4b4b, "d.tun.test", WIRE_TYPE_A);
	replay_query(h.p, &h.sb1, false, q, qlen, 60);
	assert_int_equal(count(EV_UPSTREAM), 1);
	alen = answer_a(a, q, qlen, 1, 77, 60);
	assert_int_equal(replay_answer(h.p, find(EV_UPSTREAM, 0, NULL)->id, 0, a, alen), 0);
	assert_int_equal(count(EV_PIN), 0);
	assert_int_equal(msg_rcode(find(EV_REPLY, 0, NULL)), WIRE_RCODE_NOERROR);
	au = find(EV_AUDIT, 0, NULL);
	assert_string_equal(au->reason, "audit-mode");
	assert_string_equal(au->would_deny, "dns-budget");
	assert_int_equal(proxy_get_stats(h.p)->budget_refused, 0);	/* not refused */
	h.sb1_audit = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_allowed_pin_then_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pin_failed_servfail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_denied_ede, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stranger_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_hit_pins_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_memo_follows_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ech_stripped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upstream_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_upstream_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline_servfail_then_late_answer_dropped,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_while_upstream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rate_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_encoded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_audit_mode, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
