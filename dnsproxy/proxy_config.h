/*
 * proxy_config - what the DNS proxy is configured with, declared on the
 * proxy's side: netd/model/config.c parses netd.yaml's dns: section and upstream
 * list into its own struct config (whose upstream[] is this file's
 * struct upstream_server), and the daemon fills a struct proxy_config from
 * it.  The limits and defaults the parser checks against live here too, so
 * netd needs no other dnsproxy header to validate a key.  Types only.
 */
#ifndef NETD_DNSPROXY_PROXY_CONFIG_H
#define NETD_DNSPROXY_PROXY_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"

/* Answer cache entries (dns.cache_size; dnsproxy/cache.h enforces the same). */
#define PROXY_CACHE_DEFAULT_ENTRIES 10000
#define PROXY_CACHE_MAX_ENTRIES     1000000

/*
 * dns.upstream_deadline_ms: how long a client waits for an upstream answer
 * before it gets SERVFAIL, whatever the upstream does.  Well under the 5 s
 * a glibc stub waits (resolv.conf(5) "timeout"), so the client sees it.
 */
#define PROXY_DEADLINE_DEFAULT_MS 2500
#define PROXY_DEADLINE_MIN_MS     100
#define PROXY_DEADLINE_MAX_MS     30000

/* One upstream resolver. */
struct upstream_server {
	struct addr addr;
	uint16_t port;		/* host byte order; default 53 */
};

struct proxy_config {
	uint16_t port;		/* listen on [::]:port (v4-mapped too), udp+tcp */
	const struct upstream_server *upstream;	/* borrowed for the proxy's lifetime */
	size_t n_upstream;
	uint32_t min_ttl_s, max_ttl_s;
	uint8_t deny_rcode;	/* NXDOMAIN or REFUSED */
	const struct prefix *internal;	/* borrowed for the proxy's lifetime */
	size_t n_internal;
	uint32_t upstream_timeout_ms;	/* c-ares, per try; default 2000 */
	uint32_t upstream_deadline_ms;	/* a client's SERVFAIL at the latest this long
					 * after its query went upstream; 0 = the default
					 * (PROXY_DEADLINE_DEFAULT_MS) */
	/* Abuse limits; 0 = the default (docs/dns.md, "Abuse limits"). */
	uint32_t qps;		/* queries/s per client address (token bucket rate) */
	uint32_t burst;		/* ... bucket depth */
	uint32_t max_outstanding;	/* upstream queries in flight per client address */
	uint32_t max_pins_per_sandbox;	/* live pin elements per sandbox */
	uint32_t max_addrs_per_name;	/* addresses one answer may pin */
	uint32_t cache_size;	/* answer cache entries (dnsproxy/cache.h); 0 = no cache */
	bool no_udp_gso;	/* never group UDP replies on gateway sockets (udp_flush()) */
};

#endif
