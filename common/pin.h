/*
 * pin.h - one pin: an address a sandbox may reach for a while because a DNS
 * answer named it, as an nf_tables set element (address . protocol . port)
 * with a timeout.  The DNS proxy decides pins (dnsproxy/decide.h), tracks
 * them (dnsproxy/pintrack.h) and hands them to its ops; netd's fw commits
 * them.  Both sides use this one type, so neither includes the other.
 */
#ifndef NETD_COMMON_PIN_H
#define NETD_COMMON_PIN_H

#include <stdint.h>

#include "common/addr.h"

struct pin {
	struct addr addr;	/* destination */
	uint8_t proto;		/* IPPROTO_TCP / IPPROTO_UDP */
	uint16_t port;		/* host byte order */
	uint32_t timeout_ms;	/* element timeout; > 0 */
};

#endif
