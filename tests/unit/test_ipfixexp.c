/*
 * test_ipfixexp - the IPFIX exporter (netd/trail/ipfixexp.c) against
 * collectors in this test: real UDP and TCP sockets on the loopback of a
 * network namespace of its own (as root a plain one; otherwise inside a
 * user namespace, as test_userns_link), every message read back by the
 * tests' reader (tests/unit/ipfix_read.h).  Checked: the Template Set leads
 * a session and comes again on schedule and after a refusal (UDP) or a
 * reconnect (TCP); Sequence Numbers count the Data Records before each
 * message, and jump over what the bound dropped; records queued while a
 * TCP collector is away arrive after it returns; what is offered is sent,
 * dropped or still queued, never anything else.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>

#include "common/log.h"
#include "netd/trail/ipfixexp.h"
#include "tests/unit/ipfix_read.h"

#define PEN 32473

static bool in_ns;

static int proc_write(const char *file, const char *s)
{
	char path[64];
	int fd, r;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -EIO;
	close(fd);
	return r;
}

/* A network namespace of our own with lo up: never the host's network. */
static int enter_netns(void)
{
	struct ifreq ifr = { 0 };
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];
	int fd, r = 0;

	if (uid == 0) {
		if (unshare(CLONE_NEWNET) < 0)
			return -errno;
	} else {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
			return -errno;
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
		if (proc_write("uid_map", map) < 0 || proc_write("setgroups", "deny") < 0)
			return -EPERM;
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
		if (proc_write("gid_map", map) < 0)
			return -EPERM;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		r = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!r && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int group_setup(void **state)
{
	int r = enter_netns();

	(void)state;
	in_ns = r == 0;
	if (!in_ns)
		fprintf(stderr, "test_ipfixexp: no network namespace of our own (%s): failed\n",
			strerror(-r));
	log_set_level(LOG_LVL_ERR);
	return 0;
}

/* A collector socket on 127.0.0.1, its port into *@port. */
static int collector(int type, uint16_t *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				  .sin_port = htons(*port) };
	socklen_t sl = sizeof(sa);
	int one = 1, fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (type == SOCK_STREAM)
		assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

static struct config_ipfix cfg_for(bool tcp, uint16_t port)
{
	struct config_ipfix c = {
		.n_collectors = 1, .observation_domain = 7, .enterprise = PEN,
		.template_refresh_s = 600, .reconnect_s = 1, .buffer_bytes = 1u << 20,
		.message_size = 1400,
	};

	c.collectors[0].tcp = tcp;
	c.collectors[0].port = port;
	assert_int_equal(addr_parse("127.0.0.1", &c.collectors[0].addr), 0);
	return c;
}

static struct ipfix_flow flow(uint16_t sport)
{
	struct ipfix_flow f = {
		.sport = sport, .dport = 443, .proto = IPPROTO_TCP, .end_reason = IPFIX_END_FLOW,
		.start_ms = 1700000000000ull, .end_ms = 1700000001000ull, .octets_out = sport,
		.packets_out = 1, .octets_in = 1000, .packets_in = 2, .sandbox = "sb1",
		.policy = "python-dev", .domain = "pypi.org", .rule = "pypi.org", .verdict = "allow",
	};

	assert_int_equal(addr_parse("10.87.0.2", &f.src), 0);
	assert_int_equal(addr_parse("198.51.100.10", &f.dst), 0);
	return f;
}

/* What a collector saw: messages, templates, records, the last sequence. */
struct seen {
	struct ipr_reader rd;
	struct ipr_msg m;
	size_t messages, template_msgs, records;
	uint32_t next_seq;	/* the last message's seq + its records */
	bool seq_ok;		/* every message's seq was next_seq, or beyond it (a gap) */
	uint32_t gaps;		/* records the sequence numbers say were lost */
	uint8_t stream[1 << 17];	/* TCP: bytes not yet a whole message */
	size_t have;
};

static void seen_msg(struct seen *s, const uint8_t *p, size_t len)
{
	assert_int_equal(ipr_parse(&s->rd, p, len, &s->m), 0);
	assert_int_equal(s->m.domain, 7);
	assert_int_equal(s->rd.unknown_sets, 0);	/* never data before its Template */
	if (s->messages && s->m.seq != s->next_seq) {
		if (s->m.seq > s->next_seq)
			s->gaps += s->m.seq - s->next_seq;
		else
			s->seq_ok = false;
	}
	s->messages++;
	s->template_msgs += s->m.n_templates > 0;
	s->records += s->m.n_rec;
	s->next_seq = s->m.seq + (uint32_t)s->m.n_rec;
}

/* Read what is there now: datagrams, or the stream cut into messages. */
static void drain(int fd, bool tcp, struct seen *s)
{
	uint8_t buf[65536];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		if (!tcp) {
			seen_msg(s, buf, (size_t)n);
			continue;
		}
		assert_true(s->have + (size_t)n <= sizeof(s->stream));
		memcpy(s->stream + s->have, buf, (size_t)n);
		s->have += (size_t)n;
		while (s->have >= 4 && s->have >= ipr_16(s->stream + 2)) {
			size_t ml = ipr_16(s->stream + 2);

			assert_true(ml >= 16);
			seen_msg(s, s->stream, ml);
			memmove(s->stream, s->stream + ml, s->have - ml);
			s->have -= ml;
		}
	}
}

/* Turn the loop and read, until @done(@arg) or about @ms milliseconds. */
static void run(struct event_base *b, int fd, bool tcp, struct seen *s, int ms,
		bool (*done)(const struct seen *, const void *), const void *arg)
{
	for (int i = 0; i < ms / 5; i++) {
		struct timespec nap = { .tv_nsec = 5 * 1000 * 1000 };

		event_base_loop(b, EVLOOP_NONBLOCK);
		if (fd >= 0)
			drain(fd, tcp, s);
		if (done && done(s, arg))
			return;
		nanosleep(&nap, NULL);
	}
}

static bool has_records(const struct seen *s, const void *arg)
{
	return s->records >= *(const size_t *)arg;
}

static bool has_template_msgs(const struct seen *s, const void *arg)
{
	return s->template_msgs >= *(const size_t *)arg;
}

static void stats(struct ipfixexp *x, struct ipfixexp_stats *st)
{
	assert_int_equal(ipfixexp_stats(x, 0, st), 0);
}

static void test_udp(void **state)
{
	static struct seen s;
	struct event_base *b = event_base_new();
	struct ipfixexp *x = NULL;
	struct ipfixexp_stats st;
	uint16_t port = 0;
	int fd = collector(SOCK_DGRAM, &port);
	struct config_ipfix c = cfg_for(false, port);
	struct ipfix_flow f;
	size_t want;

	(void)state;
	if (!in_ns)
		fail();
	memset(&s, 0, sizeof(s));
	s.seq_ok = true;
	c.template_refresh_s = 1;
	assert_int_equal(ipfixexp_new(b, &c, &x), 0);
	/* At start, the Templates alone. */
	want = 1;
	run(b, fd, false, &s, 3000, has_template_msgs, &want);
	assert_int_equal(s.messages, 1);
	assert_int_equal(s.m.n_templates, 2);
	assert_int_equal(s.m.n_rec, 0);
	for (uint16_t i = 0; i < 30; i++) {
		f = flow(1000 + i);
		ipfixexp_add(x, &f);
	}
	want = 30;
	run(b, fd, false, &s, 3000, has_records, &want);
	assert_int_equal(s.records, 30);
	assert_true(s.messages >= 4);	/* 30 records of 99 bytes: 1400-byte messages */
	assert_true(s.seq_ok);
	assert_int_equal(s.gaps, 0);
	assert_int_equal(ipr_uint(&s.m.rec[s.m.n_rec - 1], 0, 7), 1029);
	stats(x, &st);
	assert_int_equal(st.records_sent, 30);
	assert_int_equal(st.records_dropped, 0);
	assert_true(st.up);
	assert_int_equal(strncmp(st.name, "udp://127.0.0.1:", 16), 0);
	/* On schedule (template_refresh: 1 s), the Templates again. */
	want = s.template_msgs + 1;
	run(b, fd, false, &s, 5000, has_template_msgs, &want);
	assert_true(s.template_msgs >= want);

	/*
	 * The collector goes away: the port answers ICMP unreachable, which the
	 * next send reports (loopback delivers the ICMP before send() returns).
	 */
	close(fd);
	for (uint16_t i = 0; i < 2; i++) {
		f = flow(2000 + i);
		ipfixexp_add(x, &f);
		run(b, -1, false, &s, 20, NULL, NULL);
	}
	stats(x, &st);
	assert_int_equal(st.records_dropped, 1);	/* refused: counted, not lost silently */
	assert_false(st.up);
	assert_int_equal(st.records_sent + st.records_dropped, 32);
	/* It comes back: the first message it gets carries the Templates. */
	fd = collector(SOCK_DGRAM, &port);
	memset(&s.rd, 0, sizeof(s.rd));	/* a new collector knows nothing */
	f = flow(3000);
	ipfixexp_add(x, &f);
	want = 1;
	s.records = 0;
	s.template_msgs = 0;
	run(b, fd, false, &s, 3000, has_records, &want);
	assert_int_equal(s.records, 1);
	assert_true(s.template_msgs >= 1);
	stats(x, &st);
	assert_true(st.up);
	assert_int_equal(st.records_sent + st.records_dropped, 33);
	ipfixexp_free(x);
	event_base_free(b);
	close(fd);
}

/* Accept the exporter's connection (it connects on its own). */
static int accept_one(struct event_base *b, int lfd, struct seen *s)
{
	for (int i = 0; i < 600; i++) {
		struct timespec nap = { .tv_nsec = 5 * 1000 * 1000 };
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0)
			return fd;
		event_base_loop(b, EVLOOP_NONBLOCK);
		nanosleep(&nap, NULL);
	}
	(void)s;
	fail_msg("the exporter did not connect");
	return -1;
}

/* Turn the loop until the exporter holds its session (it saw its connect complete). */
static void wait_up(struct event_base *b, struct ipfixexp *x)
{
	struct ipfixexp_stats st;

	for (int i = 0; i < 600; i++) {
		struct timespec nap = { .tv_nsec = 5 * 1000 * 1000 };

		event_base_loop(b, EVLOOP_NONBLOCK);
		assert_int_equal(ipfixexp_stats(x, 0, &st), 0);
		if (st.up)
			return;
		nanosleep(&nap, NULL);
	}
	fail_msg("the exporter's session did not start");
}

static void test_tcp_reconnect(void **state)
{
	static struct seen s;
	struct event_base *b = event_base_new();
	struct ipfixexp *x = NULL;
	struct ipfixexp_stats st;
	uint16_t port = 0;
	int lfd = collector(SOCK_STREAM, &port), fd;
	struct config_ipfix c = cfg_for(true, port);
	struct ipfix_flow f;
	size_t want;

	(void)state;
	if (!in_ns)
		fail();
	memset(&s, 0, sizeof(s));
	s.seq_ok = true;
	fcntl(lfd, F_SETFL, O_NONBLOCK);
	assert_int_equal(ipfixexp_new(b, &c, &x), 0);
	fd = accept_one(b, lfd, &s);
	for (uint16_t i = 0; i < 100; i++) {
		f = flow(1000 + i);
		ipfixexp_add(x, &f);
	}
	want = 100;
	run(b, fd, true, &s, 3000, has_records, &want);
	assert_int_equal(s.records, 100);
	assert_true(s.seq_ok);
	assert_int_equal(s.template_msgs, 1);	/* once, at the session's start */
	stats(x, &st);
	assert_int_equal(st.sessions, 1);
	assert_int_equal(st.records_sent, 100);

	/* The collector goes away; records made meanwhile wait in the queue. */
	close(fd);
	run(b, -1, true, &s, 200, NULL, NULL);
	stats(x, &st);
	assert_false(st.up);
	for (uint16_t i = 0; i < 50; i++) {
		f = flow(2000 + i);
		ipfixexp_add(x, &f);
	}
	run(b, -1, true, &s, 20, NULL, NULL);
	stats(x, &st);
	assert_int_equal(st.queued_records, 50);
	/* It is back: a new session, the Templates first, the queue delivered. */
	memset(&s, 0, sizeof(s));
	s.seq_ok = true;
	fd = accept_one(b, lfd, &s);
	want = 50;
	run(b, fd, true, &s, 3000, has_records, &want);
	assert_int_equal(s.records, 50);
	assert_int_equal(s.template_msgs, 1);
	assert_int_equal(s.m.seq + s.m.n_rec, 50);	/* the new session counts from 0 */
	assert_true(s.seq_ok);
	stats(x, &st);
	assert_int_equal(st.sessions, 2);
	assert_int_equal(st.records_sent, 150);
	assert_int_equal(st.records_dropped, 0);
	assert_int_equal(st.queued_records, 0);
	ipfixexp_free(x);
	event_base_free(b);
	close(fd);
	close(lfd);
}

/* A bound of 64 KiB and a collector that reads nothing for a while. */
static void test_bound(void **state)
{
	static struct seen s;
	struct event_base *b = event_base_new();
	struct ipfixexp *x = NULL;
	struct ipfixexp_stats st;
	uint16_t port = 0;
	int lfd = collector(SOCK_STREAM, &port), fd;
	struct config_ipfix c = cfg_for(true, port);
	struct ipfix_flow f;
	const size_t offered = 20000;
	size_t want;

	(void)state;
	if (!in_ns)
		fail();
	memset(&s, 0, sizeof(s));
	s.seq_ok = true;
	fcntl(lfd, F_SETFL, O_NONBLOCK);
	c.buffer_bytes = 65536;
	assert_int_equal(ipfixexp_new(b, &c, &x), 0);
	fd = accept_one(b, lfd, &s);
	wait_up(b, x);
	/* Offered faster than the loop turns: the queue holds 64 KiB, the rest drops. */
	for (size_t i = 0; i < offered; i++) {
		f = flow((uint16_t)i);
		ipfixexp_add(x, &f);
	}
	stats(x, &st);
	assert_true(st.records_dropped > 0);
	assert_true(st.queued_bytes <= 65536);
	assert_int_equal(st.records_dropped + st.queued_records, offered);
	/* One more after the drops: its message's Sequence Number shows the gap. */
	want = offered - st.records_dropped;
	run(b, fd, true, &s, 3000, has_records, &want);
	f = flow(1);
	ipfixexp_add(x, &f);
	want = offered - st.records_dropped + 1;
	run(b, fd, true, &s, 3000, has_records, &want);
	stats(x, &st);
	assert_int_equal(st.records_sent + st.records_dropped + st.queued_records, offered + 1);
	assert_int_equal(s.records, st.records_sent);
	assert_int_equal(s.gaps, st.records_dropped);	/* the collector can count the loss */
	assert_int_equal(s.next_seq, offered + 1);
	assert_true(s.seq_ok);
	ipfixexp_free(x);
	event_base_free(b);
	close(fd);
	close(lfd);
}

/* A TCP collector that is not there: attempts wait; the queue keeps its bound. */
static void test_tcp_down(void **state)
{
	struct event_base *b = event_base_new();
	struct ipfixexp *x = NULL;
	struct ipfixexp_stats st;
	uint16_t port = 0;
	int lfd = collector(SOCK_STREAM, &port);
	struct config_ipfix c;
	struct ipfix_flow f = flow(1);

	(void)state;
	if (!in_ns)
		fail();
	close(lfd);	/* nothing listens there now */
	c = cfg_for(true, port);
	c.buffer_bytes = 65536;
	assert_int_equal(ipfixexp_new(b, &c, &x), 0);
	run(b, -1, true, NULL, 100, NULL, NULL);
	for (int i = 0; i < 2000; i++)
		ipfixexp_add(x, &f);
	run(b, -1, true, NULL, 100, NULL, NULL);
	stats(x, &st);
	assert_false(st.up);
	assert_int_equal(st.sessions, 0);
	assert_int_equal(st.records_sent, 0);
	assert_true(st.queued_bytes <= 65536);
	assert_int_equal(st.queued_records + st.records_dropped, 2000);
	ipfixexp_free(x);	/* what is queued counts as dropped at the end */
	event_base_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp),
		cmocka_unit_test(test_tcp_reconnect),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_tcp_down),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
