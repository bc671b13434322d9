/*
 * verify_plan - `netd verify`'s pure half (verify_plan.h): the probes of
 * one sandbox, the judgement of each from what was observed, the report.
 *
 * Every destination a probe needs is netd's own choice and safe to send
 * to: documentation addresses (RFC 5737 TEST-NET-1 192.0.2.0/24, RFC 3849
 * 2001:db8::/32), the metadata addresses (which must be unreachable), the
 * sandbox's own gateway (the host) and another sandbox's address.  None
 * is a real internet address.
 */
#include "netd/daemon/verify_plan.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Probe destinations (documentation blocks, and the metadata services). */
#define V4_RESOLVER "192.0.2.203"	/* "another resolver": nothing serves there */
#define V6_RESOLVER "2001:db8::203"
#define V4_UNPINNED "192.0.2.201"	/* an address no answer pinned */
#define V6_UNPINNED "2001:db8::201"
#define V4_DOT      "192.0.2.202"	/* DNS over TLS, port 853 */
#define V6_DOT      "2001:db8::202"
#define V4_SPOOFED  "192.0.2.250"	/* the forged source of the spoof probe */
#define V6_SPOOFED  "2001:db8::250"
#define V4_SPOOF_TO "192.0.2.209"
#define V6_SPOOF_TO "2001:db8::209"

#define DOT_PORT 853
#define METADATA_PORT 80

static struct verify_probe *add(struct verify_probe *out, size_t *n, const char *name,
				uint8_t kind, uint8_t proto, const char *dst, const struct addr *dsta,
				uint16_t dport)
{
	struct verify_probe *p;

	if (*n >= VERIFY_PROBES_MAX)
		return NULL;
	p = &out[(*n)++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->kind = kind;
	p->proto = proto;
	if (dsta)
		p->dst = *dsta;
	else if (dst)
		addr_parse(dst, &p->dst);	/* constants above: they parse */
	p->dport = dport;
	return p;
}

static void skip(struct verify_probe *p, const char *why)
{
	if (!p)
		return;
	p->kind = VK_SKIP;
	p->verdict = VV_SKIP;
	snprintf(p->detail, sizeof(p->detail), "%s", why);
}

bool verify_allowed_target(const struct policy *pol, const char **name, uint16_t *port)
{
	for (size_t i = 0; pol && i < pol->n_rules; i++) {
		const struct policy_rule *r = &pol->rules[i];

		if (r->proto != IPPROTO_TCP || !r->n_ports)
			continue;
		for (size_t k = 0; k < r->n_domains; k++)
			if (r->domains[k][0] != '*') {
				*name = r->domains[k];
				*port = r->ports[0].lo;
				return true;
			}
	}
	return false;
}

/* The TCP port the connection probes use: the policy's first TCP port, else 443. */
static uint16_t policy_port(const struct policy *pol)
{
	for (size_t i = 0; pol && i < pol->n_rules; i++)
		if (pol->rules[i].proto == IPPROTO_TCP && pol->rules[i].n_ports)
			return pol->rules[i].ports[0].lo;
	return 443;
}

/* A connection probe that must be dropped, unless the policy opens it on purpose. */
static void drop_probe(struct verify_probe *out, size_t *n, const struct verify_facts *f,
		       const char *name, const char *dst, const struct addr *dsta, uint16_t port)
{
	struct verify_probe *p = add(out, n, name, VK_DROP, IPPROTO_TCP, dst, dsta, port);

	if (p && f->pol && policy_allows(f->pol, NULL, &p->dst, IPPROTO_TCP, port))
		skip(p, "a CIDR rule of its policy opens this destination on purpose");
}

/* A tap's frame probe cannot be judged without the deny log (its evidence). */
static void frame_skip(struct verify_probe *p, const struct verify_facts *f)
{
	if (p && !f->log_on)
		skip(p, "the deny rules do not log (no nflog group): a spoof drop cannot be seen "
			"(kernel-tap-mac still checked)");
}

/* Why @f's socket probes cannot run (NULL: they can). */
static const char *live_skip_reason(const struct verify_facts *f)
{
	if (f->tap)
		return "a microVM's tap: the guest's network stack is not netd's to enter, so no "
		       "socket probes (the tap-mac and tap-spoof frames and the kernel checks are "
		       "what the host can do)";
	if (f->chained)
		return "a chained attachment: probed through its kernel elements only";
	if (f->no_netns)
		return "no network namespace known for it";
	if (f->audit)
		return "audit mode: denials pass by design (kernel side still checked)";
	if (!f->pol)
		return "its policy is not loaded";
	return NULL;
}

/* The socket probes of one family (@v6) from inside the sandbox, each of which must fail. */
static void plan_live(const struct verify_facts *f, bool v6, struct verify_probe *out, size_t *n)
{
	const struct addr *own = v6 ? &f->addr6 : &f->addr4, *gw = v6 ? &f->gw6 : &f->gw4;
	const struct addr *other = v6 ? &f->other6 : &f->other4;
	const char *sfx = v6 ? "6" : "";
	uint16_t port = policy_port(f->pol);
	struct verify_probe *p;
	char nm[VERIFY_NAME_LEN];

	if (!own->family)
		return;
	if (gw->family) {
		snprintf(nm, sizeof(nm), "dns-deny%s", sfx);
		add(out, n, nm, VK_DNS_UDP, IPPROTO_UDP, NULL, gw, 53);
	}
	snprintf(nm, sizeof(nm), "dns-other%s", sfx);
	add(out, n, nm, VK_DNS_UDP, IPPROTO_UDP, v6 ? V6_RESOLVER : V4_RESOLVER, NULL, 53);
	if (gw->family) {
		snprintf(nm, sizeof(nm), "dns-tcp%s", sfx);
		add(out, n, nm, VK_DNS_TCP, IPPROTO_TCP, NULL, gw, 53);
	}
	snprintf(nm, sizeof(nm), "unpinned%s", sfx);
	drop_probe(out, n, f, nm, v6 ? V6_UNPINNED : V4_UNPINNED, NULL, port);
	if (!v6) {
		drop_probe(out, n, f, "metadata", "169.254.169.254", NULL, METADATA_PORT);
		drop_probe(out, n, f, "metadata-azure", "168.63.129.16", NULL, METADATA_PORT);
	} else {
		drop_probe(out, n, f, "metadata6", "fd00:ec2::254", NULL, METADATA_PORT);
	}
	if (gw->family) {
		snprintf(nm, sizeof(nm), "host%s", sfx);
		drop_probe(out, n, f, nm, NULL, gw, port == 53 ? 443 : port);
	}
	snprintf(nm, sizeof(nm), "sandbox%s", sfx);
	if (other->family)
		drop_probe(out, n, f, nm, NULL, other, port);
	else
		skip(add(out, n, nm, VK_SKIP, IPPROTO_TCP, NULL, NULL, port),
		     "no other sandbox with an address of this family");
	snprintf(nm, sizeof(nm), "dot%s", sfx);
	drop_probe(out, n, f, nm, v6 ? V6_DOT : V4_DOT, NULL, DOT_PORT);
	snprintf(nm, sizeof(nm), "spoof%s", sfx);
	p = add(out, n, nm, VK_SPOOF, IPPROTO_UDP, v6 ? V6_SPOOF_TO : V4_SPOOF_TO, NULL,
		VERIFY_SPOOF_PORT);
	if (p)
		addr_parse(v6 ? V6_SPOOFED : V4_SPOOFED, &p->src);
	if (p && !f->log_on)
		skip(p, "the deny rules do not log (no nflog group): a spoof "
			"drop cannot be seen (kernel-anti-spoof still checked)");
}

/* A tap's frames of one family (@v6), written into it as the guest's, dropped before conntrack. */
static void plan_tap(const struct verify_facts *f, bool v6, struct verify_probe *out, size_t *n)
{
	const struct addr *own = v6 ? &f->addr6 : &f->addr4;
	const char *sfx = v6 ? "6" : "";
	struct verify_probe *p;
	char nm[VERIFY_NAME_LEN];

	if (!own->family)
		return;
	snprintf(nm, sizeof(nm), "tap-mac%s", sfx);
	p = add(out, n, nm, VK_FRAME_MAC, IPPROTO_UDP, v6 ? V6_SPOOF_TO : V4_SPOOF_TO, NULL,
		VERIFY_SPOOF_PORT);
	if (p)
		p->src = *own;
	frame_skip(p, f);
	snprintf(nm, sizeof(nm), "tap-spoof%s", sfx);
	p = add(out, n, nm, VK_FRAME_SPOOF, IPPROTO_UDP, v6 ? V6_SPOOF_TO : V4_SPOOF_TO, NULL,
		VERIFY_SPOOF_PORT);
	if (p)
		addr_parse(v6 ? V6_SPOOFED : V4_SPOOFED, &p->src);
	frame_skip(p, f);
}

/* What the kernel must hold for @f (its elements, the redirect, anti-spoofing, no foreign drop). */
static void plan_kernel(const struct verify_facts *f, struct verify_probe *out, size_t *n)
{
	add(out, n, "kernel-jump", VK_KERNEL, 0, NULL, NULL, 0);
	if (!f->chained)
		add(out, n, "kernel-src", VK_KERNEL, 0, NULL, NULL, 0);
	add(out, n, "kernel-mark", VK_KERNEL, 0, NULL, NULL, 0);
	add(out, n, "kernel-dns-redirect", VK_KERNEL, 0, NULL, NULL, 0);
	add(out, n, "kernel-anti-spoof", VK_KERNEL, 0, NULL, NULL, 0);
	/* Another table's forward chain that drops what netd accepts (health.c). */
	add(out, n, "foreign-forward", VK_KERNEL, 0, NULL, NULL, 0);
	if (f->tap)
		add(out, n, "kernel-tap-mac", VK_KERNEL, 0, NULL, NULL, 0);
}

/* --allowed: one exact name of the policy resolved and connected to, which must work. */
static void plan_allowed(const struct verify_facts *f, const char *live_skip,
			 struct verify_probe *out, size_t *n)
{
	const char *name;
	uint16_t aport;
	bool have = verify_allowed_target(f->pol, &name, &aport);
	struct verify_probe *d = add(out, n, "allowed-dns", VK_ALLOWED_DNS, IPPROTO_UDP, NULL,
				     f->gw4.family ? &f->gw4 : &f->gw6, 53);
	struct verify_probe *c = add(out, n, "allowed-conn", VK_ALLOWED_CONN, IPPROTO_TCP, NULL,
				     NULL, have ? aport : 0);
	const char *why = live_skip ? live_skip :
			  !have ? "its policy has no exact TCP name to try" :
			  d && !d->dst.family ? "no gateway to ask" : NULL;

	if (why) {
		skip(d, why);
		skip(c, why);
	}
}

size_t verify_plan(const struct verify_facts *f, struct verify_probe *out)
{
	const char *live_skip = live_skip_reason(f);
	size_t n = 0;

	for (int v6 = 0; v6 < 2 && !live_skip; v6++)
		plan_live(f, v6, out, &n);
	for (int v6 = 0; v6 < 2 && f->tap; v6++)
		plan_tap(f, v6, out, &n);
	if (live_skip)
		skip(add(out, &n, "live", VK_SKIP, 0, NULL, NULL, 0), live_skip);
	plan_kernel(f, out, &n);
	if (f->allowed)
		plan_allowed(f, live_skip, out, &n);
	return n;
}

const char *verify_verdict_name(uint8_t v)
{
	return v == VV_PASS ? "pass" : v == VV_FAIL ? "fail" : "skip";
}

static void set(struct verify_probe *p, uint8_t v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set(struct verify_probe *p, uint8_t v, const char *fmt, ...)
{
	va_list ap;

	p->verdict = v;
	va_start(ap, fmt);
	vsnprintf(p->detail, sizeof(p->detail), fmt, ap);
	va_end(ap);
}

static const char *rcode_word(int rc)
{
	static const char *const names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					     "NOTIMP", "REFUSED" };

	return rc >= 0 && rc < 6 ? names[rc] : "another RCODE";
}

static void judge_dns(struct verify_probe *p, const struct verify_obs *o)
{
	const char *via = p->kind == VK_DNS_TCP ? "over TCP" : "over UDP";

	if (o->send_err) {
		set(p, VV_FAIL, "could not send the query: %s", strerror(-o->send_err));
	} else if (o->seen && o->seen_allowed) {
		set(p, VV_FAIL, "netd's proxy let the denied name through (%s): forwarded upstream",
		    o->seen_reason);
	} else if (o->rcode < 0) {
		set(p, VV_FAIL, "no answer %s within %u ms%s", via, o->wait_ms,
		    o->seen ? " (the proxy saw the query)" : " (it never reached netd's proxy)");
	} else if (!o->seen) {
		set(p, VV_FAIL, "answered %s (%s) by something other than netd's proxy", via,
		    rcode_word(o->rcode));
	} else if (o->rcode != 3 && o->rcode != 5) {
		set(p, VV_FAIL, "netd answered %s, not NXDOMAIN or REFUSED", rcode_word(o->rcode));
	} else {
		set(p, VV_PASS, "%s from netd %s (%s), not forwarded upstream", rcode_word(o->rcode),
		    via, o->seen_reason[0] ? o->seen_reason : "deny");
	}
}

static void judge_drop(struct verify_probe *p, const struct verify_obs *o, bool reject)
{
	char logged[64] = "";

	if (o->denied[0])
		snprintf(logged, sizeof(logged), ", logged as %s", o->denied);
	if (o->send_err) {
		set(p, VV_FAIL, "could not start the connection: %s", strerror(-o->send_err));
	} else if (o->connected) {
		set(p, VV_FAIL, "connected: nothing dropped it");
	} else if (o->ct > 0) {
		set(p, VV_FAIL, "the kernel let it through (conntrack holds the connection)%s",
		    o->sock_err ? " and the destination refused it" : ", nobody answered");
	} else if (o->ct < 0 && !o->denied[0]) {
		set(p, VV_FAIL, "not connected, but unconfirmed: conntrack could not be asked (%s) "
			        "and no deny was logged", strerror(-o->ct));
	} else if (o->sock_err) {
		set(p, VV_PASS, "%s (%s)%s", reject ? "rejected" : "refused", strerror(o->sock_err),
		    logged);
	} else {
		set(p, VV_PASS, "dropped (no answer in %u ms, no conntrack entry%s)%s", o->wait_ms,
		    o->ct < 0 ? " unknown" : "", logged);
	}
}

/*
 * A frame written into a tap as the guest's: dropped in raw prerouting
 * (before conntrack) by the MAC or the source rule, which logs "spoof".
 * Without that rule the frame goes on, to be dropped later under another
 * reason (not-pinned) or let through (a conntrack entry).
 */
static void judge_frame(struct verify_probe *p, const struct verify_obs *o)
{
	const char *what = p->kind == VK_FRAME_MAC ? "a frame from a MAC not the guest's" :
						     "a frame from the guest's MAC, a source not its own";
	const char *rule = p->kind == VK_FRAME_MAC ? "MAC" : "anti-spoofing";

	if (o->send_err == -EBUSY)
		set(p, VV_SKIP, "a VMM holds the tap: netd writes frames as its guest only while none "
				"is attached (kernel-tap-mac still checked)");
	else if (o->send_err)
		set(p, VV_FAIL, "could not write the frame into the tap: %s", strerror(-o->send_err));
	else if (o->ct > 0)
		set(p, VV_FAIL, "%s passed the %s rule: the kernel let it through (conntrack holds it)",
		    what, rule);
	else if (strcmp(o->denied, "spoof") == 0)
		set(p, VV_PASS, "%s was dropped (no conntrack entry%s, logged as spoof)", what,
		    o->ct < 0 ? " unknown" : "");
	else if (o->denied[0])
		set(p, VV_FAIL, "%s passed the %s rule (dropped later, as %s)", what, rule, o->denied);
	else
		set(p, VV_FAIL, "no spoof drop was logged within %u ms for %s", o->wait_ms, what);
}

void verify_judge(struct verify_probe *p, const struct verify_obs *o, bool reject)
{
	switch (p->kind) {
	case VK_SKIP:
		return;
	case VK_DNS_UDP:
	case VK_DNS_TCP:
		judge_dns(p, o);
		return;
	case VK_DROP:
		judge_drop(p, o, reject);
		return;
	case VK_SPOOF:
		if (o->send_err)
			set(p, VV_FAIL, "could not send from a forged source: %s",
			    strerror(-o->send_err));
		else if (strcmp(o->denied, "spoof") == 0)
			set(p, VV_PASS, "a datagram from a source not its own was dropped (logged as spoof)");
		else if (o->denied[0])
			set(p, VV_FAIL, "a forged source passed the anti-spoofing rule (dropped later, as %s)",
			    o->denied);
		else
			set(p, VV_FAIL, "no spoof drop was logged within %u ms for a forged source",
			    o->wait_ms);
		return;
	case VK_FRAME_MAC:
	case VK_FRAME_SPOOF:
		judge_frame(p, o);
		return;
	case VK_KERNEL:
		if (o->kernel && o->kernel[0])
			set(p, VV_FAIL, "%s", o->kernel);
		else
			set(p, VV_PASS, "%s", o->kernel ? "in place" : "not checked");
		if (!o->kernel)
			p->verdict = VV_SKIP;
		return;
	case VK_ALLOWED_DNS:
		if (o->send_err)
			set(p, VV_FAIL, "could not send the query: %s", strerror(-o->send_err));
		else if (o->rcode < 0)
			set(p, VV_FAIL, "no answer within %u ms", o->wait_ms);
		else if (o->rcode != 0 || o->n_addrs <= 0)
			set(p, VV_FAIL, "answered %s with %d addresses", rcode_word(o->rcode),
			    o->n_addrs);
		else
			set(p, VV_PASS, "resolved (%d addresses)", o->n_addrs);
		return;
	case VK_ALLOWED_CONN:
		if (o->send_err)
			set(p, VV_FAIL, "not tried: %s", strerror(-o->send_err));
		else if (o->connected)
			set(p, VV_PASS, "connected");
		else if (o->sock_err)
			set(p, VV_FAIL, "refused: %s", strerror(o->sock_err));
		else
			set(p, VV_FAIL, "no connection within %u ms", o->wait_ms);
		return;
	}
}

json_t *verify_row_json(const char *sandbox, const struct verify_probe *p)
{
	char a[ADDR_STRLEN], t[ADDR_STRLEN + 16] = "";

	/* "ADDR:PORT" ("[ADDR]:PORT" for IPv6) of what it reached for; "" for kernel checks */
	if (p->dst.family)
		snprintf(t, sizeof(t), p->dst.family == AF_INET6 ? "[%s]:%u" : "%s:%u",
			 addr_format(&p->dst, a, sizeof(a)), p->dport);
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "sandbox", sandbox, "probe", p->name,
			 "verdict", verify_verdict_name(p->verdict), "target", t, "detail", p->detail);
}

json_t *verify_report(json_t *rows, size_t n_sandboxes, uint64_t duration_ms)
{
	size_t counts[3] = { 0 }, i;
	json_t *row;

	if (!rows)
		return NULL;
	json_array_foreach(rows, i, row) {
		const char *v = json_string_value(json_object_get(row, "verdict"));

		counts[!v ? 1 : strcmp(v, "pass") == 0 ? 0 : strcmp(v, "skip") == 0 ? 2 : 1]++;
	}
	return json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "ok", counts[1] == 0,
			 "sandboxes", (json_int_t)n_sandboxes, "probes",
			 (json_int_t)json_array_size(rows), "passed", (json_int_t)counts[0],
			 "failed", (json_int_t)counts[1], "skipped", (json_int_t)counts[2],
			 "duration_ms", (json_int_t)duration_ms, "results", rows);
}

/* ---- a tap's frames ---- */

/* The Internet checksum (RFC 1071) of @len bytes, folded onto @sum (host order). */
static uint32_t csum_add(uint32_t sum, const uint8_t *b, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)(b[len - 1] << 8);
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

size_t verify_frame(uint8_t *buf, size_t sz, const uint8_t dst_mac[6], const uint8_t src_mac[6],
		    const struct addr *src, uint16_t sport, const struct addr *dst, uint16_t dport)
{
	static const char payload[] = "netd-verify";
	const size_t plen = sizeof(payload) - 1, ulen = 8 + plen;
	bool v6 = src->family == AF_INET6;
	size_t alen = v6 ? 16 : 4, ihl = v6 ? 40 : 20, len = 14 + ihl + ulen;
	uint8_t *ip = buf + 14, *udp = ip + ihl, pseudo[4];
	uint32_t sum;

	if (src->family != dst->family || (src->family != AF_INET && !v6) || sz < len ||
	    len > VERIFY_FRAME_MAX)
		return 0;
	memset(buf, 0, len);
	memcpy(buf, dst_mac, 6);
	memcpy(buf + 6, src_mac, 6);
	put16(buf + 12, v6 ? 0x86dd : 0x0800);
	if (v6) {
		ip[0] = 0x60;				/* version 6 */
		put16(ip + 4, (uint16_t)ulen);		/* payload length */
		ip[6] = IPPROTO_UDP;
		ip[7] = 64;				/* hop limit */
		memcpy(ip + 8, src->a, 16);
		memcpy(ip + 24, dst->a, 16);
	} else {
		ip[0] = 0x45;				/* version 4, 5 words */
		put16(ip + 2, (uint16_t)(ihl + ulen));
		put16(ip + 6, 0x4000);			/* DF */
		ip[8] = 64;
		ip[9] = IPPROTO_UDP;
		memcpy(ip + 12, src->a, 4);
		memcpy(ip + 16, dst->a, 4);
		put16(ip + 10, csum_fold(csum_add(0, ip, ihl)));
	}
	put16(udp, sport);
	put16(udp + 2, dport);
	put16(udp + 4, (uint16_t)ulen);
	memcpy(udp + 8, payload, plen);
	/* Pseudo-header: addresses, protocol, UDP length (RFC 768; RFC 8200 8.1). */
	sum = csum_add(0, src->a, alen);
	sum = csum_add(sum, dst->a, alen);
	pseudo[0] = 0;
	pseudo[1] = IPPROTO_UDP;
	put16(pseudo + 2, (uint16_t)ulen);
	sum = csum_add(sum, pseudo, 4);
	sum = csum_add(sum, udp, ulen);
	/* RFC 768: a computed 0 is sent as all ones (0 means "none", IPv6 forbids it). */
	put16(udp + 6, csum_fold(sum) ? csum_fold(sum) : 0xffff);
	return len;
}

void verify_foreign_mac(const uint8_t guest[6], uint8_t out[6])
{
	static const uint8_t mac[6] = { 0x02, 0x6e, 0x64, 0x76, 0x66, 0x79 };

	memcpy(out, mac, 6);
	if (memcmp(out, guest, 6) == 0)
		out[5] ^= 0x01;
}
