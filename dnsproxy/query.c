/*
 * query - the proxy's query and answer path, one for UDP, TCP and the
 * replay seam, with no socket in it: a transport (struct transport)
 * sends, an upstream (struct proxy_upstream) resolves, proxy_ops names
 * the sandbox and commits its pins.
 *
 *   query_in():     parse -> which sandbox -> rate limit -> decide_query()
 *                   -> the rules' dns: keys (budget_filter()) -> denied:
 *                   deny_rcode, or REFUSED | cached: answer_pass() |
 *                   else forward upstream (a struct pending)
 *   on_upstream():  the answer -> answer_pass()
 *   answer_pass():  decide again -> decide_pins() -> pintrack_plan() ->
 *                   ops->pin() (the kernel's ack) -> only then the reply
 *   query_expire(): a pending query past its deadline -> SERVFAIL
 *
 * The ordering invariant lives in answer_pass(): no answer leaves before
 * the kernel acknowledged its pins.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/reason.h"
#include "dnsproxy/budget.h"
#include "dnsproxy/cache.h"
#include "dnsproxy/ede.h"
#include "dnsproxy/pintrack.h"
#include "dnsproxy/proxy_int.h"
#include "dnsproxy/refuselog.h"

/* ---- replies ------------------------------------------------------------ */

/*
 * reply() - send @msg (a complete response with the client's ID) for @rq.
 * Over UDP an answer longer than the client's buffer (512, or its EDNS0
 * size) becomes a TC=1 response with just the question (+OPT), so the
 * client retries over TCP (RFC 1035 4.2.1, RFC 6891 6.2.5, RFC 7766 5).
 */
static int reply(struct proxy *p, const struct request *rq, const uint8_t *msg, size_t len)
{
	const struct origin *o = rq->o;

	if (!o->t->stream && len > rq->q->udp_size) {
		uint8_t tc[WIRE_HDR_LEN + WIRE_NAME_MAX + 4 + 11];
		int n = wire_build_response(rq->msg, rq->len, rq->q, WIRE_RCODE_NOERROR, true, tc,
					    sizeof(tc));

		if (n < 0)
			return n;
		return o->t->send(p, o, tc, (size_t)n);
	}
	return o->t->send(p, o, msg, len);
}

/* reply_rcode() - an answerless response with @rcode.  Return: as reply(). */
static int reply_rcode(struct proxy *p, const struct request *rq, uint8_t rcode)
{
	uint8_t msg[WIRE_HDR_LEN + WIRE_NAME_MAX + 4 + 11];
	int n = wire_build_response(rq->msg, rq->len, rq->q, rcode, false, msg, sizeof(msg));

	if (n < 0) {
		p->n_dropped++;
		return n;
	}
	return reply(p, rq, msg, (size_t)n);
}

/* ---- audit -------------------------------------------------------------- */

/* What one decision was, for proxy_event.  Borrowed for the call. */
struct verdict {
	const char *sandbox, *policy;
	bool allowed;
	const char *reason;
	uint8_t rcode;
	const struct pin *pins;
	size_t n_pins;
	const struct addr *answers;
	size_t n_answers;
	uint32_t ttl_s;
	size_t n_rebind;
	void *owner;		/* proxy_client.owner */
	const char *would_deny;	/* audit mode: what enforce mode would have said */
	uint16_t ede_code;	/* a denial's RFC 8914 INFO-CODE (0: 15 Blocked) ... */
	const char *ede_text;	/* ... and EXTRA-TEXT (NULL: the policy's reason) */
};

static void audit(struct proxy *p, const struct request *rq, const struct verdict *v)
{
	struct proxy_event ev = {
		.sandbox = v->sandbox,
		.policy = v->policy,
		.client = &rq->o->client,
		.transport = rq->o->t->name,
		.qname = rq->q->qname,
		.qtype = rq->q->qtype,
		.allowed = v->allowed,
		.reason = v->reason,
		.rcode = v->rcode,
		.pins = v->pins,
		.n_pins = v->n_pins,
		.answers = v->answers,
		.n_answers = v->n_answers,
		.ttl_s = v->ttl_s,
		.n_rebind = v->n_rebind,
		.owner = v->owner,
		.would_deny = v->would_deny,
		.detail = v->ede_text,
	};

	if (p->ops->audit)
		p->ops->audit(p->ctx, &ev);
}

/* reply_audit() - answer @rq with @v->rcode (no records) and audit @v. */
static void reply_audit(struct proxy *p, const struct request *rq, const struct verdict *v)
{
	reply_rcode(p, rq, v->rcode);
	audit(p, rq, v);
}

/*
 * reply_deny() - a policy denial: @v->rcode with an RFC 8914 Extended DNS
 * Error (15 Blocked, with the reason; not the policy's name; or @v's own
 * code and text) when the client sent EDNS, and audit @v.  The audit
 * record is the same either way.
 */
static void reply_deny(struct proxy *p, const struct request *rq, const struct verdict *v)
{
	uint8_t msg[WIRE_HDR_LEN + WIRE_NAME_MAX + 4 + 11 + EDE_OPTION_MAX];
	char text[EDE_TEXT_MAX + 1];
	int n = ede_build_response(rq->msg, rq->len, rq->q, v->rcode,
				   v->ede_code ? v->ede_code : EDE_INFO_BLOCKED,
				   v->ede_text ? v->ede_text
					       : ede_policy_text(text, sizeof(text), v->reason),
				   msg, sizeof(msg));

	if (n < 0)
		p->n_dropped++;
	else
		reply(p, rq, msg, (size_t)n);
	audit(p, rq, v);
}

/*
 * audit_pass() - does audit mode let @dv through?  Only the policy's own
 * denials (no rule, or only rules whose max_qname_length it exceeds, whose
 * name budget it would exceed or that refuse it as encoded); bad names and
 * classes are refused in either mode.
 */
static bool audit_pass(const struct proxy_client *cl, enum decide_verdict dv)
{
	return cl->audit && (dv == DECIDE_DENY || dv == DECIDE_DENY_LONG ||
			     dv == DECIDE_DENY_BUDGET || dv == DECIDE_DENY_ENCODED);
}

/*
 * deny_verdict() - @v's rcode, reason and EDE for denying verdict @dv: the
 * rules' dns: keys refuse (REFUSED, RFC 8914 18 Prohibited for a spent
 * budget, 15 Blocked for an encoded name, @text saying why); the policy
 * denies with dns.deny_rcode.
 */
static void deny_verdict(const struct proxy *p, enum decide_verdict dv, const char *text,
			 struct verdict *v)
{
	v->reason = decide_reason(dv);
	v->rcode = p->cfg.deny_rcode;
	if (dv == DECIDE_DENY_BUDGET || dv == DECIDE_DENY_ENCODED) {
		v->rcode = WIRE_RCODE_REFUSED;
		v->ede_code = dv == DECIDE_DENY_BUDGET ? EDE_INFO_PROHIBITED : EDE_INFO_BLOCKED;
		v->ede_text = text;
	}
}

/*
 * query_tunnel() - the dns: keys of the rules an allowed query @q of @cl
 * matched (budget_filter(): the encoded-label score, the name budget):
 * rules that refuse it drop out of @rules/@n_rules.  A name counts when it
 * is first asked, here, before it goes upstream; deciding its answer again
 * counts nothing new.  @text (EDE_TEXT_MAX + 1 bytes): why, on a refusal.
 * @why (may be NULL): what budget_filter() found.
 * Return: DECIDE_ALLOW, DECIDE_DENY_BUDGET, DECIDE_DENY_ENCODED.
 */
static enum decide_verdict query_tunnel(struct proxy *p, const struct proxy_client *cl,
					const struct wire_query *q, const struct decide_ctx *dc,
					uint16_t *rules, size_t *n_rules, char *text,
					struct budget_why *why)
{
	struct budget_why w;
	enum decide_verdict dv = budget_filter(p->budget, dc, cl->sandbox, q->qname,
					       proxy_now_ms(p), rules, n_rules, &w);

	if (dv == DECIDE_DENY_BUDGET || dv == DECIDE_DENY_ENCODED)
		budget_text(text, EDE_TEXT_MAX + 1, dv, &w);
	if (why)
		*why = w;
	return dv;
}

/*
 * tunnel_account() - count and log what query_tunnel() found for the query
 * of @v (its own decision, once): @refused unless audit mode let it pass.
 * A spent budget is logged at its first refusal; a full sandbox's
 * refusals and the names an encoded: log rule lets through are logged at
 * most one a second (bursts of 10), the rest counted.
 */
static void tunnel_account(struct proxy *p, const struct request *rq, const struct verdict *v,
			   enum decide_verdict dv, const struct budget_why *why, bool refused)
{
	char w[BUDGET_WINDOW_STRLEN];

	if (why->encoded || why->logged)
		p->stats.tunnel_suspect++;
	if (refused && dv == DECIDE_DENY_ENCODED)
		p->stats.encoded_refused++;
	if (refused && dv == DECIDE_DENY_BUDGET && why->full)
		p->stats.budget_full++;
	else if (refused && dv == DECIDE_DENY_BUDGET)
		p->stats.budget_refused++;
	if (why->first_over)
		log_warn("dns: sandbox %s spent the name budget of %s (%u names per %s): new "
			 "names below it are %s for %u s", v->sandbox,
			 why->pattern ? why->pattern : "a rule", why->names,
			 budget_window_format(why->window_s, w, sizeof(w)),
			 refused ? "refused" : "marked would_deny (audit mode)", why->retry_s);
	if (why->full && refused && dv == DECIDE_DENY_BUDGET &&
	    tbucket_take(&p->tunnel_log, 1, 10, proxy_now_ms(p)))
		log_warn("dns: sandbox %s holds %u names under DNS budgets: refusing \"%s\"",
			 v->sandbox, BUDGET_NAMES_MAX, rq->q->qname);
	if (why->logged && !why->encoded &&
	    tbucket_take(&p->tunnel_log, 1, 10, proxy_now_ms(p)))
		log_warn("dns: sandbox %s asked \"%s\": it looks encoded (%s; DNS tunnelling?)",
			 v->sandbox, rq->q->qname, tunnel_shape_name(why->score.shape));
}

static void decide_ctx_init(const struct proxy *p, const struct decide_policy *pol,
			    struct decide_ctx *dc)
{
	memset(dc, 0, sizeof(*dc));
	dc->policy = pol;
	dc->internal = p->cfg.internal;
	dc->n_internal = p->cfg.n_internal;
	dc->internal_ix = &p->internal_ix;
	dc->min_ttl_s = p->cfg.min_ttl_s;
	dc->max_ttl_s = p->cfg.max_ttl_s;
}

/*
 * What enforce mode would have said of @q for audit-mode client @cl (the
 * record's would_deny), for a query that got no answer to decide on (the
 * upstream failed): the query's own decision.  NULL: nothing (or not
 * audit mode).
 */
static const char *audit_would_deny(struct proxy *p, const struct proxy_client *cl,
				    const struct wire_query *q)
{
	uint16_t rules[DECIDE_MAX_RULES];
	struct decide_ctx dc;
	enum decide_verdict dv;
	size_t n_rules;

	char text[EDE_TEXT_MAX + 1];

	if (!cl->audit)
		return NULL;
	decide_ctx_init(p, &cl->policy, &dc);
	dv = decide_query(&dc, q, rules, &n_rules);
	if (dv == DECIDE_ALLOW)
		dv = query_tunnel(p, cl, q, &dc, rules, &n_rules, text, NULL);
	return dv != DECIDE_ALLOW && audit_pass(cl, dv) ? decide_reason(dv) : NULL;
}

/*
 * client_lookup() - the sandbox sending from @a (ops->lookup), its name
 * copied into @buf (it must outlive a reload during this call).
 * Return: 0; -ENOENT (no sandbox, or one without a policy).
 */
static int client_lookup(struct proxy *p, const struct addr *a, struct proxy_client *cl,
			 char *buf, size_t sz)
{
	size_t sl;

	memset(cl, 0, sizeof(*cl));
	if (p->ops->lookup(p->ctx, a, cl) < 0 || !cl->sandbox || !cl->policy.ops)
		return -ENOENT;
	sl = strnlen(cl->sandbox, sz - 1);
	memcpy(buf, cl->sandbox, sl);
	buf[sl] = '\0';
	cl->sandbox = buf;
	return 0;
}

/* ---- the answer: pin, then send ------------------------------------------- */

/* One allowed query's answer on its way to the client (answer_pass()). */
struct answer {
	struct request rq;
	const struct proxy_client *cl;
	size_t len;		/* bytes of the answer in p->ans: ID and question the client's */
	uint8_t *out;		/* what this client gets (answer_ech()): p->ans, or p->ech */
	size_t out_len;
	bool cached;		/* a cache hit: TTLs were capped when stored; not stored again */
	uint64_t rx_ms;		/* a fresh answer: when it arrived (its cache entry's birth) */
	const uint16_t *rules;	/* the rules decide_query() matched for it in this same
				 * call stack, against cl->policy (a cache hit); NULL:
				 * decide again */
	size_t n_rules;
};

/* answer_decide() - may @a still be answered?  Fills @rules/@n_rules. */
static enum decide_verdict answer_decide(const struct decide_ctx *dc, const struct answer *a,
					 uint16_t *rules, size_t *n_rules)
{
	if (a->rules && a->n_rules <= DECIDE_MAX_RULES) {
		/* Decided a moment ago, synchronously, against this very policy. */
		memcpy(rules, a->rules, a->n_rules * sizeof(rules[0]));
		*n_rules = a->n_rules;
		return DECIDE_ALLOW;
	}
	/* The policy may have been reloaded while the query was upstream. */
	return decide_query(dc, a->rq.q, rules, n_rules);
}

/*
 * The last answers walked.  wire_walk_answer() is a pure function of the
 * answer's bytes and the question's name, type and class, and a hot name's
 * cache hits carry the same bytes but the ID until the cache ages their
 * TTLs, once a second: those are walked once, then compared (every byte
 * after the ID, and the question) and copied; a client whose RD bit or
 * 0x20 case differs just misses.  Small answers with few addresses only;
 * direct-mapped by the qname's hash.
 */
#define WALK_MEMO_MSG	512
#define WALK_MEMO_ADDRS 16

struct walk_memo {
	size_t len;			/* of @msg; 0: empty */
	uint8_t msg[WALK_MEMO_MSG];
	uint16_t qtype, qclass;
	char qname[WIRE_NAME_STRLEN];
	struct wire_answer wa;
	struct wire_addr addrs[WALK_MEMO_ADDRS];
};

/* walk() - wire_walk_answer(@buf, @len, @q) into p->addrs and @wa, through p->walks. */
static int walk(struct proxy *p, const uint8_t *buf, size_t len, const struct wire_query *q,
		struct wire_answer *wa)
{
	struct walk_memo *m = NULL;
	int r;

	if (len > 2 && len <= WALK_MEMO_MSG) {
		if (!p->walks)
			p->walks = calloc(PROXY_WALK_MEMO_N, sizeof(*p->walks));
		if (p->walks)
			m = &p->walks[fnv32_str(fnv32_add(FNV32_INIT, &q->qtype, sizeof(q->qtype)),
						q->qname) % PROXY_WALK_MEMO_N];
	}
	if (m && m->len == len && m->qtype == q->qtype && m->qclass == q->qclass &&
	    memcmp(m->msg + 2, buf + 2, len - 2) == 0 && strcmp(m->qname, q->qname) == 0) {
		*wa = m->wa;
		wa->id = (uint16_t)(buf[0] << 8 | buf[1]);
		memcpy(p->addrs, m->addrs, wa->n_addrs * sizeof(p->addrs[0]));
		return 0;
	}
	r = wire_walk_answer(buf, len, q, p->addrs, PROXY_MAX_ADDRS, wa);
	if (m && r == 0 && wa->n_addrs <= WALK_MEMO_ADDRS) {
		size_t n = strnlen(q->qname, sizeof(m->qname) - 1);

		m->len = len;
		memcpy(m->msg, buf, len);
		m->qtype = q->qtype;
		m->qclass = q->qclass;
		memcpy(m->qname, q->qname, n);	/* (snprintf() cost a tenth of the walk) */
		m->qname[n] = '\0';
		m->wa = *wa;
		memcpy(m->addrs, p->addrs, wa->n_addrs * sizeof(p->addrs[0]));
	} else if (m) {
		m->len = 0;
	}
	return r;
}

/*
 * answer_pins() - the pins of @a (p->pins) and the addresses they open
 * (p->pinned) into @v, its rcode in *@ret_rcode, the walk of @a->out in
 * *@ret_wa (wire_cap_ttls_walked() of the same bytes).
 * Return: 0; -EBADMSG, -ENOBUFS, -EDQUOT with @v->reason set (SERVFAIL).
 */
static int answer_pins(struct proxy *p, const struct answer *a, const struct decide_ctx *dc,
		       const uint16_t *rules, size_t n_rules, struct verdict *v,
		       uint8_t *ret_rcode, struct wire_answer *ret_wa)
{
	struct wire_answer wa;
	size_t n_rebind = 0;
	int n_pins, r;

	r = walk(p, a->out, a->out_len, a->rq.q, &wa);
	*ret_wa = wa;
	if (r < 0) {
		v->reason = reason_dns_name(r == -ELOOP ? REASON_DNS_ANSWER_LOOP :
					    r == -ENOBUFS ? REASON_DNS_ANSWER_TOO_LARGE :
					    REASON_DNS_BAD_ANSWER);
		return -EBADMSG;
	}
	*ret_rcode = wa.rcode;
	/*
	 * Only a NOERROR answer carries addresses a client will use; records a
	 * hostile upstream tucks into an NXDOMAIN or REFUSED are not pinned.
	 */
	if (wa.rcode != WIRE_RCODE_NOERROR)
		wa.n_addrs = 0;
	n_pins = decide_pins(dc, rules, n_rules, p->addrs, wa.n_addrs, p->pins, PROXY_MAX_PINS,
			     &n_rebind);
	if (n_pins < 0) {
		v->reason = reason_dns_name(REASON_DNS_TOO_MANY_PINS);
		return -ENOBUFS;
	}
	v->n_rebind = n_rebind;
	if (n_rebind)
		refuse_log_answer(&p->refused, dc, a->cl->sandbox, a->rq.q->qname, p->addrs,
				  wa.n_addrs, proxy_now_ms(p));
	v->pins = p->pins;
	v->n_pins = (size_t)n_pins;
	for (int i = 0; i < n_pins; i++) {
		bool seen = false;

		for (size_t k = 0; k < v->n_answers && !seen; k++)
			seen = addr_equal(&p->pinned[k], &p->pins[i].addr);
		if (!seen && v->n_answers < PROXY_MAX_ADDRS)
			p->pinned[v->n_answers++] = p->pins[i].addr;
		if (p->pins[i].timeout_ms / 1000 > v->ttl_s)
			v->ttl_s = p->pins[i].timeout_ms / 1000;
	}
	/* Audit mode, a name the policy does not allow: nothing pinned, but the
	 * addresses are reported (the trail names connections by them), the
	 * never-pin ones left out and counted as in enforce mode. */
	for (size_t i = 0; v->would_deny && i < wa.n_addrs; i++) {
		bool seen = false;

		if (decide_never_pin(dc, &p->addrs[i].addr)) {
			v->n_rebind++;
			continue;
		}
		for (size_t k = 0; k < v->n_answers && !seen; k++)
			seen = addr_equal(&p->pinned[k], &p->addrs[i].addr);
		if (!seen && v->n_answers < PROXY_MAX_ADDRS)
			p->pinned[v->n_answers++] = p->addrs[i].addr;
	}
	v->answers = p->pinned;

	/* Per name: one answer may not pin more than this many addresses. */
	if (v->n_answers > p->cfg.max_addrs_per_name) {
		log_warn("dns: %s (sandbox %s) answered %zu addresses, more than the %u "
			 "allowed per name: SERVFAIL", a->rq.q->qname, a->cl->sandbox,
			 v->n_answers, p->cfg.max_addrs_per_name);
		p->stats.limit_name++;
		v->reason = reason_dns_name(REASON_DNS_NAME_PIN_LIMIT);
		return -EDQUOT;
	}
	return 0;
}

/*
 * answer_commit() - commit @v's pins: only what the kernel does not cover
 * yet (pintrack), synchronously through ops->pin().
 * Return: 0 once the kernel acknowledged them (or nothing needed pinning);
 * -ENOSPC (the sandbox's pin limit), -errno from ops->pin(), with
 * *@ret_reason set (SERVFAIL).
 */
static int answer_commit(struct proxy *p, const struct answer *a, const struct verdict *v,
			 const char **ret_reason)
{
	const char *sandbox = a->cl->sandbox;
	uint64_t t0, us;
	int n_plan, r;

	if (v->n_pins == 0)
		return 0;
	/* A re-add SETS the timeout, so re-pinning with a shorter TTL would
	 * shorten a pin an earlier answer handed out.  @t0 is taken before the
	 * batch, so the tracked expiry is never later than the kernel's. */
	t0 = proxy_now_ms(p);
	n_plan = pintrack_plan(p->pt, sandbox, v->pins, v->n_pins, t0,
			       p->cfg.max_pins_per_sandbox, p->plan);
	if (n_plan == -ENOSPC) {
		log_warn("dns: sandbox %s holds %zu pins, the most allowed (%u): %s: SERVFAIL",
			 sandbox, pintrack_live(p->pt, sandbox), p->cfg.max_pins_per_sandbox,
			 a->rq.q->qname);
		p->stats.limit_pins++;
		*ret_reason = reason_dns_name(REASON_DNS_PIN_LIMIT);
		return -ENOSPC;
	}
	if (n_plan <= 0) {
		p->stats.pins_skipped++;
		return 0;
	}
	us = clock_mono_us();
	/* Synchronous: returns once the kernel acknowledged the batch. */
	r = p->ops->pin(p->ctx, sandbox, p->plan, (size_t)n_plan);
	if (r < 0) {
		log_warn("dns: pinning %d addresses for %s (sandbox %s) failed: %s", n_plan,
			 a->rq.q->qname, sandbox, strerror(-r));
		*ret_reason = reason_dns_name(REASON_DNS_PIN_FAILED);
		return r;
	}
	proxy_stats_pin(&p->stats, clock_mono_us() - us);
	if (pintrack_commit(p->pt, sandbox, p->plan, (size_t)n_plan, t0) < 0)
		log_warn("dns: out of memory tracking pins of sandbox %s", sandbox);
	return 0;
}

/*
 * answer_ech() - what @a's client gets: where a rule that matched its name
 * checks the SNI (decide_ech_strip()), the answer without its ECH configs
 * (wire_ech_strip(): a client would hide the name the check reads), in
 * p->ech; else p->ans as it is, byte for byte.  Per client, every time:
 * the cache keeps the upstream's answer (p->ans), since another sandbox's
 * rule may keep ECH.  Return: 0 (@a->out, @a->out_len set); -EBADMSG with
 * *@ret_reason set (SERVFAIL: an answer that cannot be stripped is never
 * passed on with its ECH).
 */
static int answer_ech(struct proxy *p, struct answer *a, const struct decide_ctx *dc,
		      const uint16_t *rules, size_t n_rules, const char **ret_reason)
{
	struct wire_ech_result res;
	int n;

	a->out = p->ans;
	a->out_len = a->len;
	if (!decide_ech_strip(dc, rules, n_rules))
		return 0;
	n = wire_ech_strip(p->ans, a->len, p->ech, sizeof(p->ech), &res);
	if (n < 0) {
		log_warn("dns: %s (sandbox %s): the answer's ECH configs cannot be removed "
			 "(%s): SERVFAIL", a->rq.q->qname, a->cl->sandbox, strerror(-n));
		*ret_reason = reason_dns_name(REASON_DNS_BAD_ANSWER);
		return -EBADMSG;
	}
	if (n == 0)
		return 0;
	p->stats.ech_stripped++;
	log_debug("dns: %s (sandbox %s): ECH removed (%u SvcParams, %u RRs, %u RRSIGs)",
		  a->rq.q->qname, a->cl->sandbox, res.params, res.rrs, res.sigs);
	a->out = p->ech;
	a->out_len = (size_t)n;
	return 0;
}

/* answer_store() - a delivered fresh answer into the cache. */
static void answer_store(struct proxy *p, const struct answer *a)
{
	struct cache_key k;
	uint32_t ttl_s;

	if (a->cached || !p->cache)
		return;
	/* Stored as delivered (TTLs capped at max_ttl), for at most its
	 * smallest TTL; negative answers per RFC 2308. */
	cache_key_from_query(a->rq.q, &k);
	if (wire_cache_ttl(p->ans, a->len, CACHE_NEG_MAX_S, &ttl_s) == 0 && ttl_s > 0)
		cache_put(p->cache, &k, p->ans, a->len, ttl_s, a->rx_ms);
}

/*
 * answer_pass() - an allowed query's answer (in p->ans): pin, then send.
 * The same path for a fresh upstream answer and for a cache hit: the
 * policy is checked again, the pins are the ones of the TTLs actually
 * handed out, and nothing is sent before the kernel acknowledged them.
 */
static void answer_pass(struct proxy *p, struct answer *a)
{
	struct verdict v = {
		.sandbox = a->cl->sandbox, .policy = a->cl->policy.name, .owner = a->cl->owner,
	};
	uint16_t rules[DECIDE_MAX_RULES];
	char text[EDE_TEXT_MAX + 1];
	struct decide_ctx dc;
	enum decide_verdict dv;
	uint8_t rcode = WIRE_RCODE_SERVFAIL;
	struct wire_answer wa;
	size_t n_rules;
	bool again = !a->rules;

	decide_ctx_init(p, &a->cl->policy, &dc);
	dv = answer_decide(&dc, a, rules, &n_rules);
	/* A cache hit audit mode let through comes with no rules: why not. */
	if (dv == DECIDE_ALLOW && n_rules == 0) {
		dv = decide_query(&dc, a->rq.q, rules, &n_rules);
		again = true;
	}
	/* Decided again: the rules' dns: keys too (the name counted at its query). */
	if (dv == DECIDE_ALLOW && again)
		dv = query_tunnel(p, a->cl, a->rq.q, &dc, rules, &n_rules, text, NULL);
	if (dv != DECIDE_ALLOW && audit_pass(a->cl, dv)) {
		v.would_deny = decide_reason(dv);
		n_rules = 0;	/* nothing to pin: the audit chain lets it pass */
	} else if (dv != DECIDE_ALLOW) {
		deny_verdict(p, dv, text, &v);
		reply_deny(p, &a->rq, &v);
		return;
	}
	v.allowed = true;
	/* The pins are those of what this client gets (without ECH, an RR
	 * whose mandatory listed it is gone, and its hints with it). */
	if (answer_ech(p, a, &dc, rules, n_rules, &v.reason) < 0 ||
	    answer_pins(p, a, &dc, rules, n_rules, &v, &rcode, &wa) < 0 ||
	    answer_commit(p, a, &v, &v.reason) < 0)
		goto servfail;
	/* No client may cache the answer longer than its pins last (a cached
	 * answer was stored capped, and aging only lowers its TTLs); the
	 * upstream's answer is capped too when it goes to the cache. */
	if (!a->cached && (wire_cap_ttls_walked(a->out, a->out_len, p->cfg.max_ttl_s, &wa) < 0 ||
			   (a->out != p->ans &&
			    wire_cap_ttls(p->ans, a->len, p->cfg.max_ttl_s) < 0))) {
		v.reason = reason_dns_name(REASON_DNS_BAD_ANSWER);
		goto servfail;
	}
	/*
	 * ORDERING INVARIANT: this is the only place an answer from upstream or
	 * the cache is sent, and it is reached only after answer_commit()
	 * returned 0, i.e. after ops->pin() returned 0: the kernel acknowledged
	 * every pin of this answer (or the answer carries nothing to pin).
	 * Never move it before answer_commit().  tests/unit/test_replay.c
	 * checks it.
	 */
	reply(p, &a->rq, a->out, a->out_len);
	v.reason = reason_dns_name(v.would_deny ? REASON_DNS_AUDIT_MODE : REASON_DNS_POLICY);
	answer_store(p, a);
	v.rcode = rcode;
	audit(p, &a->rq, &v);
	return;

servfail:
	v.pins = NULL;
	v.n_pins = 0;
	v.answers = NULL;
	v.n_answers = 0;
	v.ttl_s = 0;
	v.rcode = WIRE_RCODE_SERVFAIL;
	reply_audit(p, &a->rq, &v);
}

/*
 * cache_hit() - answer allowed query @rq from the cache: the stored
 * response with its TTLs aged, the client's ID, its RD bit and its
 * question bytes (0x20 case preserved), then answer_pass() as for a fresh
 * answer, with @rules/@n_rules that decide_query() just matched.
 * Return: true if answered (SERVFAIL included).
 */
static bool cache_hit(struct proxy *p, const struct request *rq, const struct proxy_client *cl,
		      const uint16_t *rules, size_t n_rules)
{
	const struct wire_query *q = rq->q;
	struct answer a = { .rq = *rq, .cl = cl, .cached = true, .rules = rules,
			    .n_rules = n_rules };
	struct cache_key k;
	int n;

	cache_key_from_query(q, &k);
	n = cache_get(p->cache, &k, proxy_now_ms(p), p->ans, sizeof(p->ans));
	/* The question is copied byte for byte, so it must be as long. */
	if (n < 0 || wire_question_end(p->ans, (size_t)n) != (int)q->question_end) {
		p->stats.cache_misses++;
		return false;
	}
	p->stats.cache_hits++;
	wire_set_id(p->ans, q->id);
	p->ans[2] = (uint8_t)((p->ans[2] & ~0x01) | (rq->msg[2] & 0x01));	/* RD */
	memcpy(p->ans + WIRE_HDR_LEN, rq->msg + WIRE_HDR_LEN, q->question_end - WIRE_HDR_LEN);
	a.len = (size_t)n;
	answer_pass(p, &a);
	return true;
}

/* ---- pending queries ------------------------------------------------------ */

static void pending_unlink(struct pending *pq)
{
	struct proxy *p = pq->p;

	if (pq->prev)
		pq->prev->next = pq->next;
	else
		p->pending = pq->next;
	if (pq->next)
		pq->next->prev = pq->prev;
	else
		p->pending_tail = pq->prev;
	pq->prev = pq->next = NULL;
}

/* pending_free() - the upstream reported back on @pq: forget it. */
static void pending_free(struct pending *pq)
{
	struct proxy *p = pq->p;
	struct client_slot *s;

	if (!pq->answered)
		pending_unlink(pq);
	p->n_pending--;
	s = slot_get(p, &pq->o.client, false);
	if (s && s->queries)
		s->queries--;
	slot_put(p, &pq->o.client);
	if (!pq->answered)
		pq->o.t->release(&pq->o);
	free(pq);
}

/*
 * answer_failed() - SERVFAIL for @pq: no usable answer came (@err:
 * -ETIMEDOUT for the deadline or c-ares's timeout, else a failure).
 */
static void answer_failed(struct pending *pq, int err)
{
	struct proxy *p = pq->p;
	struct request rq = { &pq->o, pq->query, pq->qlen, &pq->q };
	char sandbox[PROXY_SANDBOX_NAME_MAX];
	struct proxy_client cl;
	struct verdict v;

	/* The sandbox may be gone (its address even reused) by now: ask again
	 * by the client's address and drop the query if nobody owns it. */
	if (client_lookup(p, &pq->o.client, &cl, sandbox, sizeof(sandbox)) < 0)
		return;
	if (pq->o.t->gone && pq->o.t->gone(&pq->o))
		return;	/* the client hung up */
	v = (struct verdict){
		.sandbox = cl.sandbox, .policy = cl.policy.name, .owner = cl.owner,
		.allowed = true,
		.reason = reason_dns_name(err == -ETIMEDOUT ? REASON_DNS_UPSTREAM_TIMEOUT :
					  REASON_DNS_UPSTREAM_FAILURE),
		.rcode = WIRE_RCODE_SERVFAIL,
		.would_deny = audit_would_deny(p, &cl, &pq->q),
	};
	reply_audit(p, &rq, &v);
}

static void on_upstream(void *arg, int err, const uint8_t *ans, size_t len)
{
	struct pending *pq = arg;
	struct proxy *p = pq->p;
	char sandbox[PROXY_SANDBOX_NAME_MAX];
	struct proxy_client cl;
	struct answer a;

	/* Cancelled, or too late: the client already got SERVFAIL at its
	 * deadline (query_expire()), and this answer is dropped. */
	if (err == -ECANCELED || p->closing || pq->answered)
		goto out;
	if (err < 0 || len > sizeof(p->ans)) {
		answer_failed(pq, err < 0 ? err : -EIO);
		goto out;
	}
	if (client_lookup(p, &pq->o.client, &cl, sandbox, sizeof(sandbox)) < 0)
		goto out;
	if (pq->o.t->gone && pq->o.t->gone(&pq->o))
		goto out;	/* the client hung up */
	memcpy(p->ans, ans, len);
	/* c-ares put its own ID on the wire; the client gets its own back. */
	wire_set_id(p->ans, pq->q.id);
	a = (struct answer){
		.rq = { &pq->o, pq->query, pq->qlen, &pq->q },
		.cl = &cl,
		.len = len,
		.rx_ms = proxy_now_ms(p),
	};
	answer_pass(p, &a);
out:
	pending_free(pq);
}

uint64_t query_expire(struct proxy *p, uint64_t now_ms)
{
	/* p->pending is in deadline order: one deadline for all, oldest first. */
	while (p->pending && p->pending->deadline_ms <= now_ms) {
		struct pending *pq = p->pending;

		pending_unlink(pq);
		pq->answered = true;
		answer_failed(pq, -ETIMEDOUT);
		/* Replied: the socket or connection is free; the query itself
		 * stays counted (and its memory held) until the upstream
		 * reports back, since it is still in flight there. */
		pq->o.t->release(&pq->o);
	}
	return p->pending ? p->pending->deadline_ms : 0;
}

/* ---- a query, from either transport -------------------------------------- */

/*
 * query_forward() - send allowed query @rq upstream (a struct pending),
 * unless the client or the proxy has too many there already.  @v: its
 * verdict so far, for a SERVFAIL's audit.
 */
static void query_forward(struct proxy *p, const struct request *rq, struct verdict *v)
{
	struct client_slot *slot = slot_get(p, &rq->o->client, true);
	uint8_t up[WIRE_HDR_LEN + WIRE_NAME_MAX + 4 + 11];
	struct pending *pq = NULL;
	int n;

	v->allowed = true;
	v->rcode = WIRE_RCODE_SERVFAIL;
	if (!slot || p->n_pending >= PROXY_MAX_OUTSTANDING ||
	    slot->queries >= p->cfg.max_outstanding) {
		if (slot && slot->queries >= p->cfg.max_outstanding) {
			p->stats.limit_outstanding++;
			log_warn("dns: sandbox %s has %u queries upstream, the most allowed: "
				 "SERVFAIL for %s", v->sandbox, slot->queries, rq->q->qname);
		}
		v->reason = reason_dns_name(REASON_DNS_OVERLOAD);
	} else if (!(pq = malloc(sizeof(*pq) + rq->len))) {
		v->reason = reason_dns_name(REASON_DNS_NO_MEMORY);
	}
	if (!pq) {
		reply_audit(p, rq, v);
		if (slot)
			slot_put(p, &rq->o->client);
		return;
	}
	memset(pq, 0, sizeof(*pq));
	pq->p = p;
	pq->o = *rq->o;
	pq->q = *rq->q;
	pq->qlen = rq->len;
	memcpy(pq->query, rq->msg, rq->len);
	/* Appended: one deadline for every query keeps the list in deadline order. */
	pq->deadline_ms = proxy_now_ms(p) + p->cfg.upstream_deadline_ms;
	pq->prev = p->pending_tail;
	if (p->pending_tail)
		p->pending_tail->next = pq;
	else
		p->pending = pq;
	p->pending_tail = pq;
	p->n_pending++;
	slot->queries++;
	pq->o.t->hold(&pq->o);
	proxy_deadline_arm(p);
	/*
	 * The question and EDNS basics as the client sent them, nothing else
	 * (wire_build_upstream_query()); may call back right away.
	 */
	n = wire_build_upstream_query(rq->msg, rq->len, rq->q, up, sizeof(up));
	if (n < 0) {
		/* Cannot happen for a parsed query; fail it like an upstream error. */
		on_upstream(pq, n, NULL, 0);
		return;
	}
	p->up.send(p->up.impl, up, (size_t)n, on_upstream, pq);
}

/*
 * query_over_rate() - refuse @rq if its client is over its query rate.
 * @parse_err: wire_parse_query()'s result.  Return: true if refused.
 */
static bool query_over_rate(struct proxy *p, const struct request *rq, int parse_err,
			    struct verdict *v, struct wire_query *q)
{
	uint64_t limited = 0;

	if (rate_ok(p, &rq->o->client, &limited))
		return false;
	/* REFUSED, nothing upstream.  Logged and audited for the first
	 * refusal of a run, counted always. */
	p->stats.limit_qps++;
	if (limited == 1) {
		log_warn("dns: sandbox %s is over its query rate (%u/s, burst %u): refusing",
			 v->sandbox, p->cfg.qps, p->cfg.burst);
		v->reason = reason_dns_name(REASON_DNS_RATE_LIMIT);
		v->rcode = WIRE_RCODE_REFUSED;
		audit(p, rq, v);
	}
	if (parse_err < 0)
		q->question_end = WIRE_HDR_LEN;
	reply_rcode(p, rq, WIRE_RCODE_REFUSED);
	return true;
}

/* query_decide() - a well-formed query of a known sandbox: deny, cache or forward. */
static void query_decide(struct proxy *p, const struct request *rq,
			 const struct proxy_client *cl, struct verdict *v)
{
	uint16_t rules[DECIDE_MAX_RULES];
	char text[EDE_TEXT_MAX + 1];
	struct budget_why why;
	struct decide_ctx dc;
	enum decide_verdict dv;
	size_t n_rules;

	decide_ctx_init(p, &cl->policy, &dc);
	dv = decide_query(&dc, rq->q, rules, &n_rules);
	if (dv == DECIDE_ALLOW) {
		/* The encoded-label score, then the name budget: before the
		 * cache and upstream, so a refused name never leaves. */
		dv = query_tunnel(p, cl, rq->q, &dc, rules, &n_rules, text, &why);
		tunnel_account(p, rq, v, dv, &why, !audit_pass(cl, dv));
	}
	if (dv != DECIDE_ALLOW && audit_pass(cl, dv)) {
		/* Audit mode: resolved all the same; answer_pass() marks it. */
		n_rules = 0;
	} else if (dv != DECIDE_ALLOW) {
		/* Denied: nothing goes upstream. */
		deny_verdict(p, dv, text, v);
		reply_deny(p, rq, v);
		return;
	}
	/* Allowed (decided first: a denied name is never served from the
	 * cache): a cached answer goes through the same pin path. */
	if (p->cache && cache_hit(p, rq, cl, rules, n_rules))
		return;
	query_forward(p, rq, v);
}

void query_in(struct proxy *p, const uint8_t *buf, size_t len, const struct origin *o)
{
	char sandbox[PROXY_SANDBOX_NAME_MAX];
	struct proxy_client cl;
	struct wire_query q;
	struct request rq = { o, buf, len, &q };
	struct verdict v = { 0 };
	int r;

	r = wire_parse_query(buf, len, &q);
	if (r == -EPROTO) {	/* a response, or not even a header: no reply */
		p->n_dropped++;
		return;
	}
	if (client_lookup(p, &o->client, &cl, sandbox, sizeof(sandbox)) < 0) {
		/* Not a sandbox we know: refuse, nothing to audit. */
		if (r < 0)
			q.question_end = WIRE_HDR_LEN;
		reply_rcode(p, &rq, WIRE_RCODE_REFUSED);
		return;
	}
	v.sandbox = sandbox;
	v.policy = cl.policy.name;
	v.owner = cl.owner;
	if (query_over_rate(p, &rq, r, &v, &q))
		return;
	if (r < 0) {
		/* RFC 1035 4.1.1: FORMERR / NOTIMP, with the question only if
		 * it parsed (question_end stays 12 otherwise). */
		v.rcode = r == -EOPNOTSUPP ? WIRE_RCODE_NOTIMP : WIRE_RCODE_FORMERR;
		v.reason = reason_dns_name(r == -EOPNOTSUPP ? REASON_DNS_NOTIMP : REASON_DNS_FORMERR);
		if (r == -EOPNOTSUPP)
			q.question_end = WIRE_HDR_LEN;
		reply_audit(p, &rq, &v);
		return;
	}
	/* EDNS versions and qtypes netd answers itself: before cache and policy. */
	v.rcode = (uint8_t)decide_local(&q, &v.reason);
	if (v.rcode) {
		reply_audit(p, &rq, &v);
		return;
	}
	query_decide(p, &rq, &cl, &v);
}
