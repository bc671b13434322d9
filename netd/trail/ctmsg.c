/*
 * ctmsg - ctnetlink and nfnetlink_log message decoding, audit record
 * bodies.  Pure: memory in, structs and JSON out.
 */
#include "netd/trail/ctmsg.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nfnetlink_log.h>

#include "common/nlbuf.h"
#include "netd/fw.h"

/* ---- attribute helpers ------------------------------------------------------ */

/* Collect the attributes of one nesting level, last one wins, types <= max. */
struct attrs {
	const struct nlattr *tb[32];
	unsigned int max;
};

static int attr_cb(const struct nlattr *a, void *data)
{
	struct attrs *t = data;
	uint16_t type = mnl_attr_get_type(a);

	if (type <= t->max && type < 32)
		t->tb[type] = a;
	return MNL_CB_OK;
}

static int parse_nested(const struct nlattr *nest, struct attrs *t, unsigned int max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
	if (!nest)
		return -EBADMSG;
	return mnl_attr_parse_nested(nest, attr_cb, t) < 0 ? -EBADMSG : 0;
}

/* The attribute if present and exactly @len payload bytes long. */
static const void *attr_exact(const struct nlattr *a, size_t len)
{
	if (!a || mnl_attr_get_payload_len(a) != len)
		return NULL;
	return mnl_attr_get_payload(a);
}

static int attr_u8(const struct nlattr *a, uint8_t *v)
{
	const uint8_t *p = attr_exact(a, 1);

	if (!p)
		return -EBADMSG;
	*v = *p;
	return 0;
}

static int attr_be16(const struct nlattr *a, uint16_t *v)
{
	const void *p = attr_exact(a, 2);
	uint16_t x;

	if (!p)
		return -EBADMSG;
	memcpy(&x, p, 2);
	*v = ntohs(x);
	return 0;
}

static int attr_be32(const struct nlattr *a, uint32_t *v)
{
	const void *p = attr_exact(a, 4);
	uint32_t x;

	if (!p)
		return -EBADMSG;
	memcpy(&x, p, 4);
	*v = ntohl(x);
	return 0;
}

static int attr_be64(const struct nlattr *a, uint64_t *v)
{
	const void *p = attr_exact(a, 8);
	uint64_t x;

	if (!p)
		return -EBADMSG;
	memcpy(&x, p, 8);
	*v = be64toh(x);
	return 0;
}

int ct_walk(const void *buf, size_t len, uint32_t seq,
	    void (*cb)(const void *msg, size_t len, void *arg), void *arg)
{
	const uint8_t *p = buf, *msg = p;
	ssize_t n;

	/* Each message is checked as it is reached (nlbuf_step()), so the
	 * ones before a bad length are still delivered. */
	for (; (n = nlbuf_step(&p, &len)) > 0; msg = p) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)msg;

		if (seq && nlh->nlmsg_seq != seq) {
			/* not ours (a stale reply) */
		} else if (nlh->nlmsg_type == NLMSG_DONE) {
			return 1;
		} else if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = (const void *)(msg + sizeof(*nlh));

			if ((size_t)n < sizeof(*nlh) + sizeof(*e))
				return -EBADMSG;
			return e->error ? (e->error < 0 ? e->error : -e->error) : 1;
		} else if (nlh->nlmsg_type >= NLMSG_MIN_TYPE) {
			cb(msg, (size_t)n, arg);
		}
	}
	return n < 0 ? -EBADMSG : 0;
}

/* ---- ctnetlink ---------------------------------------------------------------- */

static int parse_tuple(const struct nlattr *nest, struct ct_flow *f)
{
	struct attrs t, ip, pr;
	const void *p;
	int r;

	r = parse_nested(nest, &t, CTA_TUPLE_MAX);
	if (r < 0)
		return r;
	r = parse_nested(t.tb[CTA_TUPLE_IP], &ip, CTA_IP_MAX);
	if (r < 0)
		return r;
	if ((p = attr_exact(ip.tb[CTA_IP_V4_SRC], 4))) {
		f->src.family = AF_INET;
		memcpy(f->src.a, p, 4);
		p = attr_exact(ip.tb[CTA_IP_V4_DST], 4);
		if (!p)
			return -EBADMSG;
		f->dst.family = AF_INET;
		memcpy(f->dst.a, p, 4);
	} else if ((p = attr_exact(ip.tb[CTA_IP_V6_SRC], 16))) {
		f->src.family = AF_INET6;
		memcpy(f->src.a, p, 16);
		p = attr_exact(ip.tb[CTA_IP_V6_DST], 16);
		if (!p)
			return -EBADMSG;
		f->dst.family = AF_INET6;
		memcpy(f->dst.a, p, 16);
	} else {
		return -EBADMSG;
	}
	r = parse_nested(t.tb[CTA_TUPLE_PROTO], &pr, CTA_PROTO_MAX);
	if (r < 0)
		return r;
	if (attr_u8(pr.tb[CTA_PROTO_NUM], &f->proto) < 0)
		return -EBADMSG;
	if (f->proto == IPPROTO_ICMP || f->proto == IPPROTO_ICMPV6) {
		bool v6 = f->proto == IPPROTO_ICMPV6;
		uint8_t type = 0, code = 0;

		attr_be16(pr.tb[v6 ? CTA_PROTO_ICMPV6_ID : CTA_PROTO_ICMP_ID], &f->sport);
		attr_u8(pr.tb[v6 ? CTA_PROTO_ICMPV6_TYPE : CTA_PROTO_ICMP_TYPE], &type);
		attr_u8(pr.tb[v6 ? CTA_PROTO_ICMPV6_CODE : CTA_PROTO_ICMP_CODE], &code);
		f->dport = (uint16_t)(type << 8 | code);
	} else {
		/* Absent for protocols without ports (GRE keys etc. are not ports). */
		attr_be16(pr.tb[CTA_PROTO_SRC_PORT], &f->sport);
		attr_be16(pr.tb[CTA_PROTO_DST_PORT], &f->dport);
	}
	return 0;
}

static void parse_counters(const struct nlattr *nest, uint64_t *packets, uint64_t *bytes,
			   bool *has)
{
	struct attrs t;
	uint32_t v32;

	if (!nest || parse_nested(nest, &t, CTA_COUNTERS_MAX) < 0)
		return;
	if (attr_be64(t.tb[CTA_COUNTERS_PACKETS], packets) == 0)
		*has = true;
	else if (attr_be32(t.tb[CTA_COUNTERS32_PACKETS], &v32) == 0)
		*packets = v32, *has = true;
	if (attr_be64(t.tb[CTA_COUNTERS_BYTES], bytes) < 0 &&
	    attr_be32(t.tb[CTA_COUNTERS32_BYTES], &v32) == 0)
		*bytes = v32;
}

int ct_parse(const void *buf, size_t len, struct ct_flow *out)
{
	const struct nlmsghdr *nlh = buf;
	struct ct_flow f = { 0 };
	struct attrs t;
	int type, r;

	if (len < sizeof(*nlh) || nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len ||
	    !mnl_nlmsg_ok(nlh, (int)nlh->nlmsg_len))
		return -EBADMSG;
	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_CTNETLINK)
		return -EPROTONOSUPPORT;
	switch (NFNL_MSG_TYPE(nlh->nlmsg_type)) {
	case IPCTNL_MSG_CT_NEW:
		type = CT_EV_NEW;
		break;
	case IPCTNL_MSG_CT_DELETE:
		type = CT_EV_DESTROY;
		break;
	default:
		return -EPROTONOSUPPORT;
	}
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg)))
		return -EBADMSG;
	memset(&t, 0, sizeof(t));
	t.max = CTA_MAX;
	if (mnl_attr_parse(nlh, sizeof(struct nfgenmsg), attr_cb, &t) < 0)
		return -EBADMSG;
	r = parse_tuple(t.tb[CTA_TUPLE_ORIG], &f);
	if (r < 0)
		return r;
	attr_be32(t.tb[CTA_MARK], &f.mark);
	attr_be32(t.tb[CTA_ID], &f.id);
	parse_counters(t.tb[CTA_COUNTERS_ORIG], &f.packets_out, &f.bytes_out, &f.has_counters);
	parse_counters(t.tb[CTA_COUNTERS_REPLY], &f.packets_in, &f.bytes_in, &f.has_counters);
	/* TCP state: present in dumps and in events that changed it. */
	if (f.proto == IPPROTO_TCP && t.tb[CTA_PROTOINFO]) {
		struct attrs pi, tcp;

		if (parse_nested(t.tb[CTA_PROTOINFO], &pi, CTA_PROTOINFO_MAX) == 0 &&
		    pi.tb[CTA_PROTOINFO_TCP] &&
		    parse_nested(pi.tb[CTA_PROTOINFO_TCP], &tcp, CTA_PROTOINFO_TCP_MAX) == 0 &&
		    attr_u8(tcp.tb[CTA_PROTOINFO_TCP_STATE], &f.tcp_state) == 0)
			f.has_tcp_state = true;
	}
	if (t.tb[CTA_TIMESTAMP]) {
		struct attrs ts;

		if (parse_nested(t.tb[CTA_TIMESTAMP], &ts, CTA_TIMESTAMP_MAX) == 0) {
			attr_be64(ts.tb[CTA_TIMESTAMP_START], &f.start_ns);
			attr_be64(ts.tb[CTA_TIMESTAMP_STOP], &f.stop_ns);
		}
	}
	*out = f;
	return type;
}

/* ---- nfnetlink_log ---------------------------------------------------------- */

/* Ports from a transport header (RFC 793/768: ports first; ICMP: type, code). */
static void l4_ports(struct ct_logpkt *p, const uint8_t *l4, size_t n)
{
	if ((p->proto == IPPROTO_TCP || p->proto == IPPROTO_UDP || p->proto == IPPROTO_SCTP ||
	     p->proto == IPPROTO_UDPLITE) && n >= 4) {
		p->sport = (uint16_t)(l4[0] << 8 | l4[1]);
		p->dport = (uint16_t)(l4[2] << 8 | l4[3]);
	} else if ((p->proto == IPPROTO_ICMP || p->proto == IPPROTO_ICMPV6) && n >= 2) {
		p->dport = (uint16_t)(l4[0] << 8 | l4[1]);
		if (n >= 6)
			p->sport = (uint16_t)(l4[4] << 8 | l4[5]);
	}
}

static int parse_ip(struct ct_logpkt *p, const uint8_t *pkt, size_t n)
{
	if (n < 1)
		return -EPROTONOSUPPORT;
	if (pkt[0] >> 4 == 4) {
		size_t ihl = (size_t)(pkt[0] & 0x0f) * 4;	/* RFC 791 3.1 */

		if (n < 20 || ihl < 20)
			return -EBADMSG;
		p->src.family = p->dst.family = AF_INET;
		memcpy(p->src.a, pkt + 12, 4);
		memcpy(p->dst.a, pkt + 16, 4);
		p->proto = pkt[9];
		p->len = (uint16_t)(pkt[2] << 8 | pkt[3]);
		/* Only the first fragment carries the transport header. */
		if (ihl <= n && ((pkt[6] & 0x1f) | pkt[7]) == 0)
			l4_ports(p, pkt + ihl, n - ihl);
		return 0;
	}
	if (pkt[0] >> 4 == 6) {
		if (n < 40)
			return -EBADMSG;
		p->src.family = p->dst.family = AF_INET6;
		memcpy(p->src.a, pkt + 8, 16);
		memcpy(p->dst.a, pkt + 24, 16);
		p->proto = pkt[6];
		p->len = (uint16_t)(40 + (pkt[4] << 8 | pkt[5]));
		l4_ports(p, pkt + 40, n - 40);
		return 0;
	}
	return -EPROTONOSUPPORT;
}

int ct_parse_log(const void *buf, size_t len, struct ct_logpkt *out)
{
	const struct nlmsghdr *nlh = buf;
	struct ct_logpkt p = { 0 };
	struct attrs t;
	int r;

	if (len < sizeof(*nlh) || nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len ||
	    !mnl_nlmsg_ok(nlh, (int)nlh->nlmsg_len))
		return -EBADMSG;
	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_ULOG ||
	    NFNL_MSG_TYPE(nlh->nlmsg_type) != NFULNL_MSG_PACKET)
		return -EPROTONOSUPPORT;
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg)))
		return -EBADMSG;
	memset(&t, 0, sizeof(t));
	t.max = NFULA_MAX;
	if (mnl_attr_parse(nlh, sizeof(struct nfgenmsg), attr_cb, &t) < 0)
		return -EBADMSG;
	if (t.tb[NFULA_PREFIX]) {
		const char *s = mnl_attr_get_payload(t.tb[NFULA_PREFIX]);
		size_t n = mnl_attr_get_payload_len(t.tb[NFULA_PREFIX]);

		/* The kernel sends it NUL-terminated; do not rely on it. */
		n = strnlen(s, n);
		if (n >= sizeof(p.prefix))
			n = sizeof(p.prefix) - 1;
		memcpy(p.prefix, s, n);
		p.prefix[n] = '\0';
	}
	attr_be32(t.tb[NFULA_IFINDEX_INDEV], &p.indev);
	attr_be32(t.tb[NFULA_IFINDEX_OUTDEV], &p.outdev);
	attr_be32(t.tb[NFULA_MARK], &p.mark);
	if (!t.tb[NFULA_PAYLOAD])
		return -EPROTONOSUPPORT;
	r = parse_ip(&p, mnl_attr_get_payload(t.tb[NFULA_PAYLOAD]),
		     mnl_attr_get_payload_len(t.tb[NFULA_PAYLOAD]));
	if (r < 0)
		return r;
	*out = p;
	return 0;
}

/* ---- records ------------------------------------------------------------------- */

const char *ct_proto_name(uint8_t proto, char *buf, size_t sz)
{
	switch (proto) {
	case IPPROTO_TCP: return "tcp";
	case IPPROTO_UDP: return "udp";
	case IPPROTO_ICMP: return "icmp";
	case IPPROTO_ICMPV6: return "icmpv6";
	case IPPROTO_SCTP: return "sctp";
	default:
		snprintf(buf, sz, "%u", proto);
		return buf;
	}
}

char *ct_time_format(uint64_t ns, char *buf, size_t sz)
{
	time_t s = (time_t)(ns / 1000000000u);
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(buf, sz, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned int)(ns % 1000000000u / 1000000u));
	return buf;
}

static bool is_icmp(uint8_t proto)
{
	return proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6;
}

/* Add proto, src, sport, dst, dport (ICMP: type and code instead of ports). */
static int add_addressing(json_t *o, uint8_t proto, const struct addr *src, uint16_t sport,
			  const struct addr *dst, uint16_t dport)
{
	char pb[8], sb[ADDR_STRLEN], db[ADDR_STRLEN];
	int r = 0;

	r |= json_object_set_new(o, "proto", json_string(ct_proto_name(proto, pb, sizeof(pb))));
	r |= json_object_set_new(o, "src", json_string(addr_format(src, sb, sizeof(sb))));
	r |= json_object_set_new(o, "sport", is_icmp(proto) ? json_null() : json_integer(sport));
	r |= json_object_set_new(o, "dst", json_string(addr_format(dst, db, sizeof(db))));
	r |= json_object_set_new(o, "dport", is_icmp(proto) ? json_null() : json_integer(dport));
	if (is_icmp(proto)) {
		r |= json_object_set_new(o, "icmp_type", json_integer(dport >> 8));
		r |= json_object_set_new(o, "icmp_code", json_integer(dport & 0xff));
	}
	return r;
}

void ct_flow_span(const struct ct_flow *f, uint64_t now_ns, uint64_t *start_ns, uint64_t *end_ns)
{
	uint64_t end = f->stop_ns ? f->stop_ns : now_ns;
	uint64_t start = f->start_ns ? f->start_ns : end;

	*start_ns = start;
	*end_ns = end < start ? start : end;
}

bool ct_flow_sni_refused(const struct ct_flow *f)
{
	return (f->mark & FW_SNI_CTMARK_BITS) == FW_SNI_DROP_CTMARK;
}

json_t *ct_conn_json(const struct ct_flow *f, const char *sandbox, const char *policy,
		     const char *domain, uint64_t now_ns)
{
	json_t *o = json_object();
	uint64_t start, end;
	char sbuf[32], ebuf[32];
	int r = 0;

	if (!o)
		return NULL;
	ct_flow_span(f, now_ns, &start, &end);
	r |= json_object_set_new(o, "sandbox", sandbox ? json_string(sandbox) : json_null());
	r |= json_object_set_new(o, "policy", policy ? json_string(policy) : json_null());
	r |= add_addressing(o, f->proto, &f->src, f->sport, &f->dst, f->dport);
	r |= json_object_set_new(o, "domain", domain ? json_string(domain) : json_null());
	r |= json_object_set_new(o, "bytes_out", json_integer((json_int_t)f->bytes_out));
	r |= json_object_set_new(o, "bytes_in", json_integer((json_int_t)f->bytes_in));
	r |= json_object_set_new(o, "packets_out", json_integer((json_int_t)f->packets_out));
	r |= json_object_set_new(o, "packets_in", json_integer((json_int_t)f->packets_in));
	r |= json_object_set_new(o, "start", json_string(ct_time_format(start, sbuf, sizeof(sbuf))));
	r |= json_object_set_new(o, "end", json_string(ct_time_format(end, ebuf, sizeof(ebuf))));
	/* Milliseconds, as a number of seconds (printed with 3 decimals at most). */
	r |= json_object_set_new(o, "duration_s",
				 json_real((double)((end - start) / 1000000u) / 1000.0));
	if (ct_flow_sni_refused(f)) {
		r |= json_object_set_new(o, "verdict", json_string("deny"));
		r |= json_object_set_new(o, "reason", json_string("sni-check"));
	}
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *ct_open_json(const struct ct_flow *f, const char *sandbox, const char *policy,
		     const char *domain, uint64_t start_ns)
{
	json_t *o = json_object();
	char sbuf[32];
	int r = 0;

	if (!o)
		return NULL;
	r |= json_object_set_new(o, "sandbox", sandbox ? json_string(sandbox) : json_null());
	r |= json_object_set_new(o, "policy", policy ? json_string(policy) : json_null());
	r |= add_addressing(o, f->proto, &f->src, f->sport, &f->dst, f->dport);
	r |= json_object_set_new(o, "domain", domain ? json_string(domain) : json_null());
	r |= json_object_set_new(o, "start",
				 json_string(ct_time_format(start_ns, sbuf, sizeof(sbuf))));
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *ct_deny_json(const struct ct_logpkt *p, const char *sandbox, const char *policy,
		     const char *domain, const char *reason, uint64_t suppressed,
		     const struct ct_deny_span *span)
{
	json_t *o = json_object();
	char b1[32], b2[32];
	int r = 0;

	if (!o)
		return NULL;
	r |= json_object_set_new(o, "sandbox", sandbox ? json_string(sandbox) : json_null());
	r |= json_object_set_new(o, "policy", policy ? json_string(policy) : json_null());
	r |= add_addressing(o, p->proto, &p->src, p->sport, &p->dst, p->dport);
	r |= json_object_set_new(o, "domain", domain ? json_string(domain) : json_null());
	r |= json_object_set_new(o, "reason", json_string(reason ? reason : ""));
	r |= json_object_set_new(o, "count", json_integer(span ? (json_int_t)span->count : 1));
	if (span) {
		r |= json_object_set_new(o, "first",
					 json_string(ct_time_format(span->first_ns, b1, sizeof(b1))));
		r |= json_object_set_new(o, "last",
					 json_string(ct_time_format(span->last_ns, b2, sizeof(b2))));
	}
	r |= json_object_set_new(o, "suppressed", json_integer((json_int_t)suppressed));
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

struct nlmsghdr *ct_put_request(void *buf, uint16_t type, uint16_t flags, uint8_t family,
				uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *g;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = family;
	g->version = NFNETLINK_V0;
	g->res_id = 0;
	return nlh;
}

/* IPCTNL_MSG_CT_GET of the entry whose tuple @attr (CTA_TUPLE_ORIG/REPLY) is @f's. */
static struct nlmsghdr *put_get(void *buf, const struct ct_flow *f, uint32_t seq, uint16_t attr)
{
	bool v6 = f->src.family == AF_INET6;
	struct nlmsghdr *nlh = ct_put_request(buf, IPCTNL_MSG_CT_GET, 0, v6 ? AF_INET6 : AF_INET,
					      seq);
	struct nlattr *tuple, *ip, *proto;

	tuple = mnl_attr_nest_start(nlh, attr);
	ip = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	mnl_attr_put(nlh, v6 ? CTA_IP_V6_SRC : CTA_IP_V4_SRC, v6 ? 16 : 4, f->src.a);
	mnl_attr_put(nlh, v6 ? CTA_IP_V6_DST : CTA_IP_V4_DST, v6 ? 16 : 4, f->dst.a);
	mnl_attr_nest_end(nlh, ip);
	proto = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, f->proto);
	mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(f->sport));
	mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(f->dport));
	mnl_attr_nest_end(nlh, proto);
	mnl_attr_nest_end(nlh, tuple);
	if (f->id)
		mnl_attr_put_u32(nlh, CTA_ID, htonl(f->id));
	return nlh;
}

struct nlmsghdr *ct_put_get(void *buf, const struct ct_flow *f, uint32_t seq)
{
	return put_get(buf, f, seq, CTA_TUPLE_ORIG);
}

struct nlmsghdr *ct_put_get_reply(void *buf, const struct ct_flow *reply, uint32_t seq)
{
	return put_get(buf, reply, seq, CTA_TUPLE_REPLY);
}
