/*
 * pin.h - one pin: an address a sandbox may reach for a while because a DNS
 * answer named it, as an nf_tables set element (address . protocol . port)
 * with a timeout.  The DNS proxy decides pins (dnsproxy/decide.h), tracks
 * them (dnsproxy/pintrack.h) and hands them to its ops; netd's fw commits
 * them.  Both sides use this one type, so neither includes the other.
 *
 * A gateway pin (@gateway) is made for a name a rule with `gateway:`
 * matched: fw puts it into gw4/gw6 (the connection is steered to netd's
 * API gateway), never into pin4/pin6 (a direct path).  The flag is part of
 * the pin's identity: the plain and the gateway pin of one (address,
 * protocol, port) are two pins, each with its own expiry.
 */
#ifndef NETD_COMMON_PIN_H
#define NETD_COMMON_PIN_H

#include <stdbool.h>
#include <stdint.h>

#include "common/addr.h"

struct pin {
	struct addr addr;	/* destination */
	uint8_t proto;		/* IPPROTO_TCP / IPPROTO_UDP */
	uint16_t port;		/* host byte order */
	uint32_t timeout_ms;	/* element timeout; > 0 */
	bool gateway;		/* through netd's API gateway (gw4/gw6): TCP only */
};

#endif
