/*
 * proxy_harness - runs the DNS proxy (dnsproxy/proxy.c and its files) for real with fake proxy_ops, for
 * tests/integ/dnsproxy.sh (inside a throwaway netns only):
 *
 *   proxy_harness PORT UPSTREAM SANDBOX_ADDR POLICY.yaml [--pin-fail]
 *
 * lookup() knows one sandbox ("sb1", at SANDBOX_ADDR, with the policy);
 * pin() records every pin as a line "PIN addr proto port timeout_ms" and
 * succeeds (or fails with -EIO under --pin-fail); audit() prints "AUDIT
 * ..." lines.  Prints "READY" once listening; SIGTERM/SIGINT stop it.
 */
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/special.h"
#include "dnsproxy/decide.h"
#include "dnsproxy/proxy.h"
#include "netd/model/policy.h"
#include "netd/model/policy_dns.h"

struct harness {
	struct addr sandbox;
	struct policy *policy;
	bool pin_fail;
	unsigned int n_pin_calls;
};

static int h_lookup(void *ctx, const struct addr *src, struct proxy_client *out)
{
	struct harness *h = ctx;

	if (!addr_equal(src, &h->sandbox))
		return -ENOENT;
	out->sandbox = "sb1";
	out->policy = policy_dns_view(h->policy);
	return 0;
}

static int h_pin(void *ctx, const char *sandbox, const struct pin *pins, size_t n)
{
	struct harness *h = ctx;

	h->n_pin_calls++;
	for (size_t i = 0; i < n; i++) {
		char a[ADDR_STRLEN];

		printf("PIN %s %s %s %u %u\n", sandbox, addr_format(&pins[i].addr, a, sizeof(a)),
		       pins[i].proto == IPPROTO_TCP ? "tcp" : "udp", pins[i].port,
		       pins[i].timeout_ms);
	}
	fflush(stdout);
	return h->pin_fail ? -EIO : 0;
}

static void h_audit(void *ctx, const struct proxy_event *ev)
{
	char c[ADDR_STRLEN];

	printf("AUDIT sandbox=%s policy=%s client=%s transport=%s qname=%s qtype=%u "
	       "allowed=%d reason=%s rcode=%u pins=%zu answers=%zu ttl=%u rebind=%zu\n",
	       ev->sandbox, ev->policy, addr_format(ev->client, c, sizeof(c)), ev->transport,
	       ev->qname, ev->qtype, ev->allowed, ev->reason, ev->rcode, ev->n_pins,
	       ev->n_answers, ev->ttl_s, ev->n_rebind);
	fflush(stdout);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	event_base_loopbreak(arg);
}

int main(int argc, char **argv)
{
	static const struct proxy_ops ops = { h_lookup, h_pin, h_audit };
	struct prefix internal[SPECIAL_TABLE_MAX];
	struct upstream_server up = { .port = 53 };
	struct proxy_config cfg = { .min_ttl_s = 5, .max_ttl_s = 300,
				    .deny_rcode = 3, .upstream_timeout_ms = 1000 };
	struct harness h = { 0 };
	struct event_base *base;
	struct event *sigterm, *sigint;
	struct proxy *p;
	struct diag err;
	int r;

	if (argc < 5) {
		fprintf(stderr, "usage: %s PORT UPSTREAM SANDBOX_ADDR POLICY [--pin-fail]\n",
			argv[0]);
		return 2;
	}
	cfg.port = (uint16_t)atoi(argv[1]);
	if (addr_parse(argv[2], &up.addr) < 0 || addr_parse(argv[3], &h.sandbox) < 0) {
		fprintf(stderr, "bad address\n");
		return 2;
	}
	memset(&err, 0, sizeof(err));
	if (policy_load_file(argv[4], &h.policy, &err) < 0) {
		fprintf(stderr, "%s:%u:%u: %s\n", err.file, err.line, err.col, err.msg);
		return 2;
	}
	h.pin_fail = argc > 5 && strcmp(argv[5], "--pin-fail") == 0;
	cfg.upstream = &up;
	cfg.n_upstream = 1;
	cfg.n_internal = special_prefixes(internal, SPECIAL_TABLE_MAX, 0);
	cfg.internal = internal;
	log_set_level(LOG_LVL_DEBUG);

	base = event_base_new();
	if (!base)
		return 1;
	r = proxy_new(base, &cfg, &ops, &h, &p);
	if (r < 0) {
		fprintf(stderr, "proxy_new: %s\n", strerror(-r));
		return 1;
	}
	sigterm = evsignal_new(base, SIGTERM, on_signal, base);
	sigint = evsignal_new(base, SIGINT, on_signal, base);
	evsignal_add(sigterm, NULL);
	evsignal_add(sigint, NULL);
	printf("READY\n");
	fflush(stdout);
	event_base_dispatch(base);
	proxy_free(p);
	event_free(sigterm);
	event_free(sigint);
	event_base_free(base);
	policy_free(h.policy);
	printf("EXIT pin_calls=%u\n", h.n_pin_calls);
	return 0;
}
