/*
 * sniglue - the daemon's side of the SNI/Host check (docs/sni.md): the two
 * netfilter queues (netd/sni/queue.h) on the event loop, and for each
 * queued packet: which sandbox and policy, the flow's stream so far
 * (netd/sni/flow.h), which names pinned the destination (netd/model/pinreg.h),
 * the match and the verdict (netd/sni/sni_match.h), and the audit record
 * of every mismatch.  QUIC flows (UDP, issue 25) take the same path with
 * their own table (netd/sni/qflow.h): a refused one is dropped, not reset.  Every packet gets its verdict before the callback
 * returns: netd never holds one, so it cannot stall a sandbox.
 */
#include "netd/daemon/internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <event2/event.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/tbucket.h"
#include "netd/trail/audit.h"
#include "netd/fw.h"
#include "netd/model/pinreg.h"
#include "netd/model/sandbox.h"
#include "netd/sni/flow.h"
#include "netd/sni/qflow.h"
#include "netd/sni/queue.h"
#include "netd/sni/rst.h"
#include "netd/sni/sni_match.h"

#define SNI_DEADLINE_MS   5000	/* from the SYN to a decided ClientHello / request */
#define SNI_QUEUE_MAXLEN  4096	/* packets waiting per queue */
#define SNI_READ_BATCH    64	/* messages per wakeup */
#define SNI_SWEEP_S       5
#define SNI_AUDIT_RATE    50	/* mismatch records per second, all sandboxes */
#define SNI_AUDIT_BURST   200	/* ... and, in a bucket of their own, records of ECH
				 * hellos passed on their outer name (tls.ech: outer):
				 * a browser's every connection must not crowd out
				 * the mismatches */

/*
 * A flow's tag (flow.h, qflow.h: the caller's two bytes) holds the check's
 * modes at its start: [0] tls.sni, [1] http.host, and in [1] this bit if an
 * ECH hello is judged by its outer name (sni_modes()).  The modes are 0-2.
 */
#define SNI_TAG_ECH_OUTER 0x80

struct sni_state {
	struct sniq *q[2];	/* [0] enforce, [1] log */
	struct event *ev[2];
	struct event *sweep;
	struct sniflow_tab *flows;
	struct qflow_tab *qflows;	/* QUIC */
	struct tbucket audit_tb;
	struct tbucket outer_tb;	/* the "ech-outer" records' */
	uint64_t suppressed;	/* mismatch records left out since the last report */
	uint64_t outer_suppressed;	/* ... "ech-outer" records */
};

static struct sni_state sni;

struct judge {
	const struct sandbox *sb;
	const struct policy *pol;
	const char *names[PINREG_NAMES_MAX];
	size_t n_names;
	enum policy_l7 tls, http, mode;
	bool ech_outer;		/* an ECH hello is judged by its outer name (sni_modes()) */
	const char *detail;	/* why undecided: "no-syn", "deadline", NULL */
	bool audit;		/* the sandbox is in audit mode (fw_mode_audit()) */
	bool would_deny;	/* audit mode passed what enforce would have reset */
	bool quic;		/* a QUIC flow: refusals are drops */
	bool reset_server;	/* a refusal just decided: reset the server's side too */
	uint32_t rst_seq;	/* ... with this sequence number (its RCV.NXT) */
};

/*
 * The sni record of verdict @v on @res: a mismatch ("sni-mismatch"), or an
 * ECH hello passed on its outer name ("ech-outer", action "passed"); each
 * kind rate limited in a bucket of its own.  "ech": true on every record
 * of a hello that carried the extension.
 */
static void sni_audit(struct daemon *d, const struct judge *j, const struct addr *dst,
		      uint16_t dport, const struct sni_result *res, struct sni_verdict v)
{
	uint64_t now = clock_mono_ms();
	char ds[ADDR_STRLEN];
	const char *action;
	json_t *rec, *names;

	if (!tbucket_take(v.ech_outer ? &sni.outer_tb : &sni.audit_tb, SNI_AUDIT_RATE,
			  SNI_AUDIT_BURST, now)) {
		if (v.ech_outer)
			sni.outer_suppressed++;
		else
			sni.suppressed++;
		return;
	}
	action = v.ech_outer ? "passed" : v.accept ? "logged" : j->quic ? "dropped" : "reset";
	names = json_array();
	for (size_t i = 0; names && i < j->n_names; i++)
		json_array_append_new(names, json_string(j->names[i]));
	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:o*}",
			"sandbox", j->sb->name, "policy", j->pol->name, "reason",
			v.ech_outer ? "ech-outer" : "sni-mismatch", "action", action,
			"mode", j->would_deny ? "enforce" : policy_l7_str(j->mode),
			"proto", sni_proto_str(res->proto), "status", sni_status_str(res->status),
			"name", res->name, "dst", addr_format(dst, ds, sizeof(ds)), "dport",
			(int)dport, "pinned_by", names);
	if (rec && res->ech)
		json_object_set_new(rec, "ech", json_true());
	if (rec && j->detail)
		json_object_set_new(rec, "detail", json_string(j->detail));
	/* Audit mode: what enforce would have reset; an ECH hello that passed
	 * on its outer name passes under enforce too. */
	if (rec && j->would_deny && !v.ech_outer)
		json_object_set_new(rec, "would_deny", json_string("sni-mismatch"));
	audit_write(d->audit, "sni", rec);
}

/* The verdict on a flow that decided, ran late, or has no known start. */
static enum sniq_verdict settle(struct daemon *d, struct judge *j, const struct sniflow_pkt *p,
				struct sni_result *res, bool decided, uint64_t now)
{
	struct sni_verdict v;
	bool matched;

	j->mode = sni_mode_for(res->proto, j->tls, j->http);
	/* Audit mode resets nothing: enforce is judged as log, and marked. */
	if (j->audit && j->mode == POLICY_L7_ENFORCE) {
		j->mode = POLICY_L7_LOG;
		j->would_deny = true;
	}
	if (j->ech_outer)	/* tls.ech: outer: an ECH hello is judged by its outer name */
		sni_ech_outer(res);
	matched = decided && sni_match(j->pol, j->names, j->n_names, IPPROTO_TCP, p->dport, res->name);
	if (!decided && res->status == SNI_MORE)
		res->status = SNI_TOO_LONG;	/* undecided: reported as too long */
	v = sni_decide(j->mode, res, matched);
	if (v.audit)
		sni_audit(d, j, &p->dst, p->dport, res, v);
	/* Accepted on what netd read: watched until the server acknowledged
	 * those bytes (flow.h), so no segment it discarded decided.  Without
	 * the replies (fw_sni_replies()) no acknowledgment ever comes: done
	 * now, as on what was read. */
	if (sniflow_settle(sni.flows, p, v.accept, now) && fw_sni_replies(d->fw))
		return SNIQ_ACCEPT;
	if (!v.accept) {
		struct sniflow_meta meta = { 0 };

		/* The flow is settled as rejected now: this packet becomes the
		 * server's reset (on_packet()), the sandbox's next one (its
		 * retransmission of what was refused) gets the sandbox's. */
		j->reset_server = true;
		j->rst_seq = sniflow_meta(sni.flows, p, &meta) && meta.rcv_nxt_known ?
				     meta.rcv_nxt : p->seq;
	}
	return v.accept ? SNIQ_ACCEPT_DONE : SNIQ_RESET;
}

/* Why a flow was settled undecided or taken away from its parse, for the audit record. */
static const char *step_detail(enum sniflow_step step, const struct sniflow_pkt *p)
{
	switch (step) {
	case SNIFLOW_UNKNOWN:
		return "no-syn";
	case SNIFLOW_FULL:
		return "table-full";
	case SNIFLOW_LATE:
		return "deadline";
	case SNIFLOW_TOO_MANY:
		return "packets";
	case SNIFLOW_REWRITTEN:
		return "rewritten";
	case SNIFLOW_UNMODELLED:
		return p->urg ? "urgent" : "tcp-option";
	default:
		return NULL;
	}
}

/*
 * A flow without room in the table: nothing was read, so what this one
 * segment says (if it says it whole) is the name the record shows.
 */
static void parse_alone(const struct sniflow_pkt *p, struct sni_result *res)
{
	if (p->len && sni_parse(p->payload, p->len, res) != SNI_MORE)
		return;
	*res = (struct sni_result){ .status = SNI_MORE };
}

/* Which names pinned @p's destination, and how strictly it is checked. */
static void judge_modes(struct daemon *d, struct judge *j, const struct sniflow_pkt *p,
			uint64_t now)
{
	struct sniflow_meta meta = { 0 };

	/* As at the SYN if we saw it (a pin may have expired since; the
	 * connection was admitted by it). */
	if (sniflow_meta(sni.flows, p, &meta) && meta.tagged) {
		j->tls = (enum policy_l7)meta.tag[0];
		j->http = (enum policy_l7)(meta.tag[1] & ~SNI_TAG_ECH_OUTER);
		j->ech_outer = meta.tag[1] & SNI_TAG_ECH_OUTER;
	} else {
		meta.start_ms = now;
	}
	j->n_names = pinreg_names(d->pins, j->sb->name, &p->dst, IPPROTO_TCP, p->dport,
				  meta.start_ms, j->names);
	if (meta.tagged)
		return;
	if (j->n_names)
		sni_modes(j->pol, j->names, j->n_names, IPPROTO_TCP, p->dport, &j->tls, &j->http,
			  &j->ech_outer);
	else	/* pinned by nothing netd knows of (a reused entry): the port's strictest */
		sni_modes_port(j->pol, IPPROTO_TCP, p->dport, &j->tls, &j->http, &j->ech_outer);
}

/* A packet from a sandbox (@j->sb) on a checked port. */
static enum sniq_verdict judge(struct daemon *d, struct judge *j, const struct sniflow_pkt *p)
{
	uint64_t now = clock_mono_ms();
	struct sni_result res = { .status = SNI_MORE };
	enum sniflow_step step;

	j->audit = fw_mode_audit(j->sb->mode, j->pol);
	if (policy_cidr_allows(j->pol, &p->dst, IPPROTO_TCP, p->dport)) {	/* not for the check */
		sniflow_settle(sni.flows, p, true, now);
		return SNIQ_ACCEPT_DONE;
	}
	step = sniflow_packet(sni.flows, p, j->sb->slot, now, SNI_DEADLINE_MS, &res);
	switch (step) {
	case SNIFLOW_DROP:
		return SNIQ_DROP;
	case SNIFLOW_ACCEPTED:
		return SNIQ_ACCEPT_DONE;
	case SNIFLOW_REJECTED:
		return SNIQ_RESET;
	case SNIFLOW_FULL:
		parse_alone(p, &res);
		break;
	default:
		break;
	}
	judge_modes(d, j, p, now);
	if (step == SNIFLOW_ACCEPT) {
		if (!(p->syn && !p->ack))
			return SNIQ_ACCEPT;
		if (j->tls == POLICY_L7_OFF && j->http == POLICY_L7_OFF) {
			/* Pinned only by rules that check nothing: settled at the SYN.
			 * Its conntrack entry is not confirmed yet (ctnetlink cannot
			 * find it), so the done bit goes on with its next packet. */
			sniflow_settle(sni.flows, p, true, now);
			return SNIQ_ACCEPT;
		}
		sniflow_tag(sni.flows, p, (uint8_t)j->tls,
			    (uint8_t)j->http | (j->ech_outer ? SNI_TAG_ECH_OUTER : 0));
		return SNIQ_ACCEPT;
	}
	j->detail = step_detail(step, p);
	if (step == SNIFLOW_FULL && !p->len &&
	    (j->audit || sni_mode_for(SNI_PROTO_UNKNOWN, j->tls, j->http) != POLICY_L7_ENFORCE))
		return SNIQ_ACCEPT;	/* passes anyway: judged (and named) on its first data, alone */
	return settle(d, j, p, &res,
		      step == SNIFLOW_DECIDED || (step == SNIFLOW_FULL && res.status != SNI_MORE), now);
}

/* Which names pinned QUIC flow @p's destination, and how strictly it is checked. */
static void quic_modes(struct daemon *d, struct judge *j, const struct qflow_pkt *p,
		       uint64_t now)
{
	uint8_t a = 0, b = 0;
	uint64_t start = now;
	bool tagged = qflow_tagged(sni.qflows, p, &a, &b, &start);

	j->n_names = pinreg_names(d->pins, j->sb->name, &p->dst, IPPROTO_UDP, p->dport, start,
				  j->names);
	if (tagged) {
		j->tls = (enum policy_l7)a;
		j->http = (enum policy_l7)(b & ~SNI_TAG_ECH_OUTER);
		j->ech_outer = b & SNI_TAG_ECH_OUTER;
	} else if (j->n_names) {
		sni_modes(j->pol, j->names, j->n_names, IPPROTO_UDP, p->dport, &j->tls, &j->http,
			  &j->ech_outer);
	} else {
		sni_modes_port(j->pol, IPPROTO_UDP, p->dport, &j->tls, &j->http, &j->ech_outer);
	}
}

/* The verdict on a QUIC flow whose check ended (decided, or not). */
static enum sniq_verdict settle_quic(struct daemon *d, struct judge *j, const struct qflow_pkt *p,
				     struct sni_result *res, bool decided, uint64_t now)
{
	struct sni_verdict v;
	bool matched;

	j->mode = sni_mode_for(SNI_PROTO_QUIC, j->tls, j->http);
	if (j->audit && j->mode == POLICY_L7_ENFORCE) {
		j->mode = POLICY_L7_LOG;
		j->would_deny = true;
	}
	if (j->ech_outer)
		sni_ech_outer(res);
	matched = decided &&
		  sni_match(j->pol, j->names, j->n_names, IPPROTO_UDP, p->dport, res->name);
	if (!decided && res->status == SNI_MORE)
		res->status = SNI_TOO_LONG;
	res->proto = SNI_PROTO_QUIC;
	v = sni_decide(j->mode, res, matched);
	if (v.audit)
		sni_audit(d, j, &p->dst, p->dport, res, v);
	qflow_settle(sni.qflows, p, v.accept, now);
	return v.accept ? SNIQ_ACCEPT_DONE : SNIQ_DROP_MARK;
}

static const char *qstep_detail(enum qflow_step step)
{
	switch (step) {
	case QFLOW_LATE: return "deadline";
	case QFLOW_TOO_MANY: return "packets";
	case QFLOW_REWRITTEN: return "rewritten";
	case QFLOW_FULL: return "table-full";
	case QFLOW_VERSION: return "quic-version";
	default: return NULL;
	}
}

/* A datagram from a sandbox (@j->sb) to a checked udp port (docs/sni.md, QUIC). */
static enum sniq_verdict judge_quic(struct daemon *d, struct judge *j, const struct qflow_pkt *p)
{
	uint64_t now = clock_mono_ms();
	struct sni_result res;
	enum qflow_step step;

	j->quic = true;
	j->audit = fw_mode_audit(j->sb->mode, j->pol);
	if (policy_cidr_allows(j->pol, &p->dst, IPPROTO_UDP, p->dport))
		return SNIQ_ACCEPT_DONE;	/* not for the check */
	step = qflow_packet(sni.qflows, p, j->sb->slot, now, SNI_DEADLINE_MS, &res);
	if (step == QFLOW_ACCEPTED)
		return SNIQ_ACCEPT_DONE;
	if (step == QFLOW_REJECTED)
		return SNIQ_DROP_MARK;
	quic_modes(d, j, p, now);
	if (step == QFLOW_PASS || step == QFLOW_DROP) {
		if (j->tls == POLICY_L7_OFF && j->http == POLICY_L7_OFF) {
			/* Pinned only by rules that check nothing: settled now. */
			qflow_settle(sni.qflows, p, true, now);
			return SNIQ_ACCEPT_DONE;
		}
		qflow_tag(sni.qflows, p, (uint8_t)j->tls,
			  (uint8_t)j->http | (j->ech_outer ? SNI_TAG_ECH_OUTER : 0));
		/* What waits for the name (0-RTT, 1-RTT) is dropped under enforce only. */
		if (step == QFLOW_DROP && !j->audit &&
		    sni_mode_for(SNI_PROTO_QUIC, j->tls, j->http) == POLICY_L7_ENFORCE)
			return SNIQ_DROP;
		return SNIQ_ACCEPT;
	}
	j->detail = qstep_detail(step);
	return settle_quic(d, j, p, &res, step == QFLOW_DECIDED || step == QFLOW_VERSION, now);
}

/*
 * A packet from a server to a sandbox (@sb) of a connection still watched
 * (fw.h FW_SNI_WATCH_*): once it acknowledges what the check read, the
 * connection leaves the queue.  Replies never carry a sandbox's bytes out,
 * so they always pass.
 */
static enum sniq_verdict judge_reply(const struct sniflow_pkt *p, struct sniq_tuple *orig)
{
	enum sniflow_step step = sniflow_reply(sni.flows, p, clock_mono_ms());

	*orig = (struct sniq_tuple){ .src = p->dst, .dst = p->src, .sport = p->dport,
				     .dport = p->sport };
	return step == SNIFLOW_CONFIRMED || step == SNIFLOW_ACCEPTED ? SNIQ_ACCEPT_DONE : SNIQ_ACCEPT;
}

/*
 * A refusal that just decided (issue 32): the refused segment, rewritten
 * into a bare RST with the server's RCV.NXT (netd/sni/rst.h), is accepted
 * in its own place, so it takes the connection's own path (NAT included)
 * to the server, and the refused bytes never do.  One verdict carries one
 * packet: the sandbox's side is reset when its next packet (its
 * retransmission of the refused bytes, a flow settled as rejected by now)
 * meets the reset rule, as every refusal was before.  A segment that
 * cannot become a reset (a SYN: the server has no connection yet; a RST)
 * gets the sandbox's reset now, as before.
 */
static int reset_server(struct sniq *q, const struct sniq_packet *qp, enum sniq_verdict v,
			const struct sniq_tuple *t, uint32_t seq)
{
	uint8_t rst[SNIRST_MAX];
	int n = snirst_build(qp->ip, qp->len, seq, rst);

	if (n < 0 || (qp->mark & FW_SNI_RESET_MARK))
		return sniq_verdict(q, qp, v, t);
	return sniq_verdict_replace(q, qp, rst, (size_t)n, t);
}

/*
 * @qp as a UDP datagram (issue 25): from a sandbox, judged (*@v, and *@t
 * its flow); anything else in a UDP queue rule (a reply is never queued)
 * gets the queue's own rule.  Return: false if it is not UDP.
 */
static bool quic_packet(struct daemon *d, const struct sniq_packet *qp, bool enforce_q,
			enum sniq_verdict *v, struct sniq_tuple *t)
{
	struct qflow_pkt p;
	struct judge j = { 0 };

	if (qflow_pkt_parse(qp->ip, qp->len, &p) < 0)
		return false;
	*t = (struct sniq_tuple){ .src = p.src, .dst = p.dst, .sport = p.sport, .dport = p.dport,
				  .proto = IPPROTO_UDP };
	if (!(j.sb = sandbox_by_addr(d->sandboxes, &p.src)) ||
	    !(j.pol = daemon_policy_find(d, j.sb->policy)))
		*v = enforce_q ? SNIQ_DROP : SNIQ_ACCEPT_DONE;	/* only the queue's own rule applies */
	else
		*v = judge_quic(d, &j, &p);
	return true;
}

static void on_packet(void *ctx, struct sniq *q, const struct sniq_packet *qp)
{
	struct daemon *d = ctx;
	bool enforce_q = q == sni.q[0];
	struct sniflow_pkt p;
	struct sniq_tuple t = { 0 };
	struct judge j = { 0 };
	enum sniq_verdict v;
	int r;

	if ((r = sniflow_pkt_parse(qp->ip, qp->len, &p)) == -EPROTO && quic_packet(d, qp, enforce_q, &v, &t)) {
		;	/* a QUIC flow's datagram */
	} else if (r < 0) {
		v = enforce_q ? SNIQ_DROP : SNIQ_ACCEPT;	/* fragments, ESP: fail closed */
	} else if ((j.sb = sandbox_by_addr(d->sandboxes, &p.src))) {
		j.pol = daemon_policy_find(d, j.sb->policy);
		t = (struct sniq_tuple){ .src = p.src, .dst = p.dst, .sport = p.sport,
					 .dport = p.dport };
		if (!j.pol)	/* no policy of ours: only the queue's own rule applies */
			v = enforce_q ? SNIQ_RESET : SNIQ_ACCEPT_DONE;
		else
			v = judge(d, &j, &p);
	} else if (sandbox_by_addr(d->sandboxes, &p.dst)) {
		v = judge_reply(&p, &t);
	} else {
		/* no sandbox of ours sent or gets it: only the queue's own rule applies */
		v = enforce_q ? SNIQ_RESET : SNIQ_ACCEPT_DONE;
		t = (struct sniq_tuple){ .src = p.src, .dst = p.dst, .sport = p.sport,
					 .dport = p.dport };
	}
	if (v == SNIQ_RESET && j.reset_server)
		r = reset_server(q, qp, v, &t, j.rst_seq);
	else
		r = sniq_verdict(q, qp, v, &t);
	/* -ENOENT: the connection is gone already (a RST crossed it). */
	if (r < 0 && r != -ENOENT)
		log_warn("SNI check: verdict on packet %u: %s", qp->id, strerror(-r));
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	for (int i = 0; i < 2; i++)
		if (sni.q[i] && sniq_fd(sni.q[i]) == fd) {
			int r = sniq_receive(sni.q[i], SNI_READ_BATCH, on_packet, d);

			if (r == -ENOBUFS)
				log_warn("SNI check: queue %u overran; lost packets got the "
					 "kernel's default", i ? FW_SNI_QUEUE_LOG : FW_SNI_QUEUE_ENFORCE);
			else if (r < 0)
				log_warn("SNI check: queue read: %s", strerror(-r));
		}
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	sniflow_sweep(sni.flows, clock_mono_ms(), SNI_DEADLINE_MS);
	qflow_sweep(sni.qflows, clock_mono_ms(), SNI_DEADLINE_MS);
	if (sni.suppressed || sni.outer_suppressed) {
		json_t *rec = json_pack("{s:I}", "records", (json_int_t)sni.suppressed);

		if (rec && sni.outer_suppressed)
			json_object_set_new(rec, "ech_outer",
					    json_integer((json_int_t)sni.outer_suppressed));
		audit_write(d->audit, "sni_suppressed", rec);
		sni.suppressed = sni.outer_suppressed = 0;
	}
}

int daemon_sni_start(struct daemon *d)
{
	static const struct timeval every = { .tv_sec = SNI_SWEEP_S };
	static const uint16_t nums[2] = { FW_SNI_QUEUE_ENFORCE, FW_SNI_QUEUE_LOG };
	int r = sniflow_new(SANDBOX_MAX, &sni.flows);

	if (r < 0 || (r = qflow_new(SANDBOX_MAX, &sni.qflows)) < 0)
		return r;
	tbucket_init(&sni.audit_tb, SNI_AUDIT_BURST, clock_mono_ms());
	tbucket_init(&sni.outer_tb, SNI_AUDIT_BURST, clock_mono_ms());
	for (int i = 0; i < 2; i++) {
		/* The log queue fails open when full, the enforce queue closed. */
		r = sniq_open(nums[i], SNI_QUEUE_MAXLEN, i == 1, &sni.q[i]);
		if (r < 0)
			return r;
		sni.ev[i] = event_new(d->base, sniq_fd(sni.q[i]), EV_READ | EV_PERSIST, on_readable, d);
		if (!sni.ev[i] || event_add(sni.ev[i], NULL) < 0)
			return -ENOMEM;
	}
	if (!fw_sni_replies(d->fw))
		log_warn("SNI check: the kernel takes no queue rule (neither nft_queue nor a "
			 "loaded xt_NFQUEUE): a policy with tls.sni or http.host cannot be "
			 "loaded (docs/sni.md)");
	sni.sweep = event_new(d->base, -1, EV_PERSIST, on_sweep, d);
	if (!sni.sweep || event_add(sni.sweep, &every) < 0)
		return -ENOMEM;
	return 0;
}

void daemon_sni_stop(struct daemon *d)
{
	(void)d;
	for (int i = 0; i < 2; i++) {
		if (sni.ev[i])
			event_free(sni.ev[i]);
		sniq_close(sni.q[i]);
		sni.ev[i] = NULL;
		sni.q[i] = NULL;
	}
	if (sni.sweep)
		event_free(sni.sweep);
	sni.sweep = NULL;
	sniflow_free(sni.flows);
	sni.flows = NULL;
	qflow_free(sni.qflows);
	sni.qflows = NULL;
}
