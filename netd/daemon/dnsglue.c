/*
 * dnsglue - the daemon's side of the DNS proxy (dnsproxy/proxy.h's ops):
 * which sandbox and policy a client address is, the pin call into
 * nf_tables, and the audit record of every query (built without jansson on
 * the hot path, with one-entry caches for runs of one sandbox's queries).
 * Denied queries cost a sandbox nothing to send, so their records are
 * rate limited per sandbox (common/tbucket.h) and what was left out is
 * counted in a "dns_suppressed" record.
 */
#include "netd/model/policy_dns.h"
#include "netd/daemon/internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/jsonl.h"
#include "common/tbucket.h"
#include "dnsproxy/proxy.h"
#include "dnsproxy/wire.h"
#include "netd/trail/audit.h"
#include "netd/fw.h"
#include "netd/model/pinreg.h"
#include "netd/trail/trail.h"

#define DNS_DENY_AUDIT_RATE  20	/* denied-query records per second per sandbox */
#define DNS_DENY_AUDIT_BURST 100

static int ops_lookup(void *ctx, const struct addr *src, struct proxy_client *out)
{
	struct daemon *d = ctx;
	struct sandbox *sb = sandbox_by_addr(d->sandboxes, src);
	const struct policy *pol;

	if (!sb)
		return -ENOENT;
	pol = daemon_policy_find(d, sb->policy);
	if (!pol)
		return -ENOENT;
	out->sandbox = sb->name;
	out->policy = daemon_budget_dns_view(sb, pol);	/* less its rules whose budget is spent */
	out->owner = sb;	/* ops_audit() of this same call gets it back */
	out->audit = fw_mode_audit(sb->mode, pol);
	return 0;
}

static int ops_pin(void *ctx, const char *sandbox, const struct pin *pins, size_t n)
{
	struct daemon *d = ctx;

	return fw_pin(d->fw, sandbox, pins, n);
}

static const char *qtype_name(uint16_t t, char *buf, size_t sz)
{
	switch (t) {
	case WIRE_TYPE_A: return "A";
	case WIRE_TYPE_NS: return "NS";
	case WIRE_TYPE_CNAME: return "CNAME";
	case WIRE_TYPE_SOA: return "SOA";
	case WIRE_TYPE_PTR: return "PTR";
	case WIRE_TYPE_MX: return "MX";
	case WIRE_TYPE_TXT: return "TXT";
	case WIRE_TYPE_AAAA: return "AAAA";
	case WIRE_TYPE_DNAME: return "DNAME";
	case WIRE_TYPE_SVCB: return "SVCB";
	case WIRE_TYPE_HTTPS: return "HTTPS";
	case WIRE_TYPE_ANY: return "ANY";
	default:
		snprintf(buf, sz, "TYPE%u", t);	/* RFC 3597 presentation */
		return buf;
	}
}

static const char *rcode_name(uint8_t rc)
{
	/* RFC 1035 4.1.1, RFC 2136 (6-10), RFC 6891 6.1.3 (16, an extended RCODE). */
	static const char *const names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					     "NOTIMP", "REFUSED", "YXDOMAIN", "YXRRSET",
					     "NXRRSET", "NOTAUTH", "NOTZONE" };

	if (rc == 16)
		return "BADVERS";
	return rc < sizeof(names) / sizeof(names[0]) ? names[rc] : "OTHER";
}

/*
 * audit_who() - the members that say who asked ("sandbox", "policy",
 * "client", "transport"), from a one-entry cache: one sandbox's queries
 * come in runs, and these are the same for the whole run.
 */
static void audit_who(struct daemon *d, const struct proxy_event *ev, struct jsonl *j)
{
	struct audit_who *w = &d->who;
	const char *transport = ev->transport ? ev->transport : "udp";
	struct addr none = { 0 };
	const struct addr *client = ev->client ? ev->client : &none;

	if (!w->valid || !ev->sandbox || !ev->policy || strcmp(w->sandbox, ev->sandbox) != 0 ||
	    strcmp(w->policy, ev->policy) != 0 || strcmp(w->transport, transport) != 0 ||
	    !addr_equal(&w->client, client)) {
		char cbuf[ADDR_STRLEN];
		struct jsonl m;
		int n;

		w->valid = false;
		jsonl_init(&m, w->members, sizeof(w->members));
		jsonl_str(&m, "sandbox", ev->sandbox);
		jsonl_str(&m, "policy", ev->policy);
		jsonl_str(&m, "client", ev->client ? addr_format(ev->client, cbuf, sizeof(cbuf)) : NULL);
		jsonl_str(&m, "transport", transport);
		n = jsonl_done(&m);
		if (n < 0) {
			j->overflow = true;	/* counted as dropped by the caller */
			return;
		}
		w->len = (size_t)n;
		/* Cached only when every key is known (names fit: <= 64 bytes). */
		if (ev->sandbox && ev->policy && strlen(ev->sandbox) < sizeof(w->sandbox) &&
		    strlen(ev->policy) < sizeof(w->policy) && strlen(transport) < sizeof(w->transport)) {
			strcpy(w->sandbox, ev->sandbox);
			strcpy(w->policy, ev->policy);
			strcpy(w->transport, transport);
			w->client = *client;
			w->valid = true;
		}
	}
	jsonl_raw(j, w->members, w->len);
}

/* Does the one-entry cache @w hold the "what" members of @ev? */
static bool audit_what_same(const struct audit_what *w, const struct proxy_event *ev)
{
	return w->valid && ev->qname && ev->reason && w->qtype == ev->qtype &&
	       w->allowed == ev->allowed && w->rcode == ev->rcode && w->ttl_s == ev->ttl_s &&
	       w->n_rebind == ev->n_rebind && w->n_answers == ev->n_answers &&
	       strcmp(w->qname, ev->qname) == 0 && strcmp(w->reason, ev->reason) == 0 &&
	       (ev->n_answers == 0 ||
		memcmp(w->answers, ev->answers, ev->n_answers * sizeof(ev->answers[0])) == 0);
}

/*
 * audit_what() - the members that say what was asked and decided ("qname"
 * ... "rebind"), from a one-entry cache like audit_who()'s: a client that
 * asks the same name again gets the same record but for its timestamp.
 */
static void audit_what(struct daemon *d, const struct proxy_event *ev, struct jsonl *j)
{
	struct audit_what *w = &d->what;
	char tbuf[16], cbuf[ADDR_STRLEN];
	struct jsonl m;
	int n;

	/* A refusal's detail is not in the cache: such a record is built afresh. */
	if (!ev->detail && audit_what_same(w, ev)) {
		jsonl_raw(j, w->members, w->len);
		return;
	}
	w->valid = false;
	jsonl_init(&m, w->members, sizeof(w->members));
	jsonl_str(&m, "qname", ev->qname ? ev->qname : "");
	jsonl_str(&m, "qtype", qtype_name(ev->qtype, tbuf, sizeof(tbuf)));
	jsonl_str(&m, "verdict", ev->allowed ? "allow" : "deny");
	jsonl_str(&m, "reason", ev->reason ? ev->reason : "");
	jsonl_str(&m, "rcode", rcode_name(ev->rcode));
	jsonl_array_begin(&m, "answers");
	for (size_t i = 0; i < ev->n_answers; i++)
		jsonl_array_str(&m, addr_format(&ev->answers[i], cbuf, sizeof(cbuf)));
	jsonl_array_end(&m);
	jsonl_uint(&m, "ttl", ev->ttl_s);
	jsonl_uint(&m, "rebind", ev->n_rebind);
	if (ev->detail)	/* the EDE text, without its "netd: " */
		jsonl_str(&m, "detail", strncmp(ev->detail, "netd: ", 6) == 0 ? ev->detail + 6
									 : ev->detail);
	n = jsonl_done(&m);
	if (n < 0) {
		j->overflow = true;	/* counted as dropped by the caller */
		return;
	}
	w->len = (size_t)n;
	jsonl_raw(j, w->members, w->len);
	/* Kept for the next record only if every field fits the cache. */
	if (!ev->detail && ev->qname && ev->reason && strlen(ev->qname) < sizeof(w->qname) &&
	    strlen(ev->reason) < sizeof(w->reason) && ev->n_answers <= AUDIT_WHAT_ADDRS) {
		strcpy(w->qname, ev->qname);
		strcpy(w->reason, ev->reason);
		w->qtype = ev->qtype;
		w->allowed = ev->allowed;
		w->rcode = ev->rcode;
		w->ttl_s = ev->ttl_s;
		w->n_rebind = ev->n_rebind;
		w->n_answers = ev->n_answers;
		if (ev->n_answers)	/* (no answers: ev->answers may be NULL) */
			memcpy(w->answers, ev->answers, ev->n_answers * sizeof(ev->answers[0]));
		w->valid = true;
	}
}

static void ops_audit(void *ctx, const struct proxy_event *ev)
{
	struct daemon *d = ctx;
	struct sandbox *sb = ev->owner;	/* ops_lookup()'s, earlier in this call */

	/* `netd verify`'s own query: its evidence, not the sandbox's traffic. */
	if (sb && d->verify && daemon_verify_dns(d, sb, ev))
		return;

	/*
	 * Which names each pin came from (a reload's split, the SNI check)
	 * and the name each address was pinned for last (the conn and deny
	 * records' domain): one note, one registry probe a pin.  @answers are
	 * the pins' addresses when there are pins (proxy.h); without pins
	 * (audit mode, a name the policy does not list) they are named only.
	 * Before the answer leaves (ORDERING INVARIANT: trail.c's records
	 * find the name).  Full (-ENOSPC): not named, so a reload drops the
	 * pin (fail closed); fw refused the pin itself already when full.
	 */
	if (ev->allowed && ev->sandbox && ev->qname && ev->n_pins)
		pinreg_note(d->pins, ev->sandbox, ev->qname, ev->pins, ev->n_pins, clock_mono_ms());
	else if (ev->allowed && ev->sandbox && ev->qname && ev->n_answers)
		pinreg_name(d->pins, ev->sandbox, ev->qname, ev->answers, ev->n_answers,
			    clock_mono_ms());
	if (ev->allowed && ev->rcode != WIRE_RCODE_SERVFAIL)
		d->dns_allowed++;
	else if (ev->allowed)
		d->dns_failed++;
	else
		d->dns_denied++;
	if (sb) {
		if (ev->allowed)
			sb->dns_allowed++;
		else
			sb->dns_denied++;
		trail_dns_decided(d->trail, sb, ev->allowed, ev->reason, ev->rcode);
	}
	/*
	 * Denied queries cost a sandbox nothing to send, so their records are
	 * rate limited per sandbox (a flood must not fill the disk); what was
	 * left out is counted in the next record's "suppressed".
	 */
	if (!ev->allowed && sb &&
	    !tbucket_take(&sb->audit_bucket, DNS_DENY_AUDIT_RATE, DNS_DENY_AUDIT_BURST,
			  clock_mono_ms())) {
		sb->audit_suppressed++;
		return;
	}
	if (sb && sb->audit_suppressed && !ev->allowed) {
		json_t *rec = json_pack("{s:s?, s:s?, s:s, s:s, s:I}", "sandbox", ev->sandbox, "policy",
					ev->policy, "verdict", "deny", "reason", "rate-limited",
					"suppressed", (json_int_t)sb->audit_suppressed);

		audit_write(d->audit, "dns_suppressed", rec);
		sb->audit_suppressed = 0;
	}
	/* Hot path: one line per query, built without jansson (common/jsonl.h). */
	{
		char members[AUDIT_LINE_MAX - 128];
		struct jsonl j;
		int n;

		jsonl_init(&j, members, sizeof(members));
		audit_who(d, ev, &j);
		audit_what(d, ev, &j);
		/* Audit mode: what enforce mode would have done (not cached: rare). */
		if (ev->would_deny)
			jsonl_str(&j, "would_deny", ev->would_deny);
		n = jsonl_done(&j);
		if (n < 0)
			audit_write(d->audit, "dns", NULL);	/* counted as dropped */
		else
			audit_write_members(d->audit, "dns", members, (size_t)n);
	}
}

const struct proxy_ops daemon_proxy_ops = {
	.lookup = ops_lookup,
	.pin = ops_pin,
	.audit = ops_audit,
};
