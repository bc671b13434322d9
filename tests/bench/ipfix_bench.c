/*
 * ipfix_bench - what exporting one connection record costs netd's loop
 * (`make bench`, tests/bench/run.sh; bench code, not product code): the
 * optimized build's ipfix_record() alone, then ipfixexp_add() plus the
 * loop turn that sends it to a UDP collector on a private loopback
 * (messages of 1400 bytes, the default), with the collector read between
 * turns (its reading not counted); beside it, what the audit line of the same record costs
 * (ct_conn_json() and json_dumps()), and a journal entry's conversion
 * (journal_fields()).  Prints nanoseconds per record; asserts nothing.
 *
 *   ipfix_bench [RECORDS]     (root: a network namespace of its own)
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "netd/trail/ctmsg.h"
#include "netd/trail/ipfixexp.h"
#include "netd/trail/journal.h"

#define TURN 100	/* records per loop turn, as a burst of closes gives */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int lo_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), r;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	r = fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0 ? -1 : 0;
	ifr.ifr_flags |= IFF_UP;
	if (!r)
		r = ioctl(fd, SIOCSIFFLAGS, &ifr);
	if (fd >= 0)
		close(fd);
	return r;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	struct ipfix_flow f = { .sport = 40000, .dport = 443, .proto = 6, .end_reason = 3,
				.start_ms = 1700000000000ull, .end_ms = 1700000002500ull,
				.octets_out = 2452, .packets_out = 40, .octets_in = 1053778,
				.packets_in = 760, .sandbox = "sandbox-0001", .policy = "python-dev",
				.domain = "files.pythonhosted.org", .rule = "files.pythonhosted.org",
				.verdict = "allow" };
	struct ct_flow ct = { .proto = 6, .sport = 40000, .dport = 443, .bytes_out = 2452,
			      .bytes_in = 1053778, .packets_out = 40, .packets_in = 760,
			      .has_counters = true, .start_ns = 1700000000000000000ull,
			      .stop_ns = 1700000002500000000ull };
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	struct config_ipfix cfg = { .n_collectors = 1, .observation_domain = 1, .enterprise = 32473,
				    .template_refresh_s = 600, .reconnect_s = 60,
				    .buffer_bytes = 4u << 20, .message_size = 1400 };
	struct ipfixexp *x = NULL;
	struct ipfixexp_stats st;
	struct event_base *b;
	uint8_t buf[IPFIX_RECORD_MAX], dgram[65536];
	struct iovec iov[JOURNAL_FIELDS_MAX];
	static char jbuf[JOURNAL_ENTRY_MAX + 4096];
	double t0, enc, exp, line, jf;
	uint16_t tid;
	int fd, sink = 0;

	if (unshare(CLONE_NEWNET) < 0 || lo_up() < 0) {
		fprintf(stderr, "ipfix_bench: a network namespace of its own: %s (root?)\n",
			strerror(errno));
		return 1;
	}
	addr_parse("10.87.0.2", &f.src);
	addr_parse("198.51.100.10", &f.dst);
	ct.src = f.src;
	ct.dst = f.dst;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &(int){ 32 << 20 }, sizeof(int));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)
		return 1;
	cfg.collectors[0].port = ntohs(sa.sin_port);
	addr_parse("127.0.0.1", &cfg.collectors[0].addr);

	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		f.sport = (uint16_t)i;
		sink += ipfix_record(&f, buf, sizeof(buf), &tid);
	}
	enc = (now_ns() - t0) / (double)n;

	b = event_base_new();
	if (!b || ipfixexp_new(b, &cfg, &x) < 0)
		return 1;
	event_base_loop(b, EVLOOP_NONBLOCK);
	while (recv(fd, dgram, sizeof(dgram), MSG_DONTWAIT) > 0)
		;
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		f.sport = (uint16_t)i;
		ipfixexp_add(x, &f);
		if (i % TURN == TURN - 1) {
			double r0;

			event_base_loop(b, EVLOOP_NONBLOCK);	/* the turn ends: messages go */
			r0 = now_ns();	/* the collector's reading is not netd's cost */
			while (recv(fd, dgram, sizeof(dgram), MSG_DONTWAIT) > 0)
				;
			t0 += now_ns() - r0;
		}
	}
	event_base_loop(b, EVLOOP_NONBLOCK);
	exp = (now_ns() - t0) / (double)n;
	ipfixexp_stats(x, 0, &st);

	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		json_t *o = ct_conn_json(&ct, "sandbox-0001", "python-dev", "files.pythonhosted.org",
					 0);
		char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);

		sink += (int)strlen(s);
		free(s);
		json_decref(o);
	}
	line = (now_ns() - t0) / (double)n;

	{
		json_t *o = ct_conn_json(&ct, "sandbox-0001", "python-dev", "files.pythonhosted.org", 0);

		json_object_set_new(o, "event", json_string("conn"));
		t0 = now_ns();
		for (long i = 0; i < n; i++)
			sink += journal_fields(o, jbuf, sizeof(jbuf), iov, JOURNAL_FIELDS_MAX);
		jf = (now_ns() - t0) / (double)n;
		json_decref(o);
	}

	printf("IPFIX, per connection record (%ld records, %d a loop turn):\n", n, TURN);
	printf("  encode (ipfix_record)                      %7.0f ns\n", enc);
	printf("  export to a UDP collector (queue + send)   %7.0f ns   %llu sent, %llu dropped, "
	       "%llu messages\n", exp, (unsigned long long)st.records_sent,
	       (unsigned long long)st.records_dropped, (unsigned long long)st.messages_sent);
	printf("  for scale: the audit line's JSON           %7.0f ns\n", line);
	printf("  journal entry's fields (journal_fields)    %7.0f ns\n", jf);
	ipfixexp_free(x);
	event_base_free(b);
	close(fd);
	return sink == 42;	/* keeps the loops from being optimized away */
}
