/*
 * config_ipfix - netd.yaml's ipfix: section (flow export to IPFIX
 * collectors, docs/flows.md): the collectors' udp:// and tcp:// addresses,
 * the export's numbers and their ranges, errors at FILE:LINE:COL.  Pure.
 * Not here: sockets and the encoder (netd/trail/ipfixexp.c, ipfix.c).
 */
#include "netd/model/config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/yamlx.h"

#define FAIL(n, ...) diag_set(err, file, (n)->line, (n)->col, __VA_ARGS__)
#define NAMES_N (sizeof(names) / sizeof(names[0]))

#define IPFIX_TEMPLATE_REFRESH_DEFAULT 600	/* s: RFC 6728's templateRefreshTimeout */
#define IPFIX_RECONNECT_DEFAULT 60	/* s: RFC 7011 10.4.4, at most once a minute */
#define IPFIX_BUFFER_DEFAULT (4u << 20)	/* bytes per collector */
#define IPFIX_MESSAGE_DEFAULT 1400	/* bytes: a UDP datagram within a 1500-byte MTU */

void config_ipfix_init(struct config *c)
{
	memset(&c->ipfix, 0, sizeof(c->ipfix));
	c->ipfix.observation_domain = 1;
	c->ipfix.enterprise = 32473;	/* RFC 5612: for documentation */
	c->ipfix.template_refresh_s = IPFIX_TEMPLATE_REFRESH_DEFAULT;
	c->ipfix.reconnect_s = IPFIX_RECONNECT_DEFAULT;
	c->ipfix.buffer_bytes = IPFIX_BUFFER_DEFAULT;
	c->ipfix.message_size = IPFIX_MESSAGE_DEFAULT;
}

/* Decimal @s/@n, no sign, no leading zero, <= @max (yamlx_digits()). */
static int dec(const char *s, size_t n, unsigned long long max, unsigned long long *ret)
{
	uint64_t v;
	int r = yamlx_digits(s, n, max, &v);

	if (r == 0)
		*ret = v;
	return r;
}

int config_ipfix_collector_parse(const char *s, size_t len, struct config_ipfix_collector *ret)
{
	char host[ADDR_STRLEN + 1];
	const char *p, *end = s + len, *hs, *he, *port = NULL;
	unsigned long long v = CONFIG_IPFIX_PORT_DEFAULT;

	memset(ret, 0, sizeof(*ret));
	if (len >= 6 && memcmp(s, "udp://", 6) == 0)
		ret->tcp = false;
	else if (len >= 6 && memcmp(s, "tcp://", 6) == 0)
		ret->tcp = true;
	else
		return -EPROTONOSUPPORT;
	p = s + 6;
	if (p < end && *p == '[') {		/* [V6] or [V6]:PORT */
		hs = p + 1;
		he = memchr(hs, ']', (size_t)(end - hs));
		if (!he)
			return -EINVAL;
		if (he + 1 < end) {
			if (he[1] != ':')
				return -EINVAL;
			port = he + 2;
		}
	} else {				/* V4 or V4:PORT; an IPv6 address needs brackets */
		hs = p;
		he = memchr(hs, ':', (size_t)(end - hs));
		if (he)
			port = he + 1;
		else
			he = end;
	}
	if (he - hs <= 0 || (size_t)(he - hs) > ADDR_STRLEN)
		return -EINVAL;
	memcpy(host, hs, (size_t)(he - hs));
	host[he - hs] = '\0';
	if (addr_parse(host, &ret->addr) < 0 ||
	    (ret->addr.family == AF_INET6) != (*p == '['))
		return -EINVAL;
	if (port && (dec(port, (size_t)(end - port), 65535, &v) < 0 || v == 0))
		return -ERANGE;
	ret->port = (uint16_t)v;
	return 0;
}

char *config_ipfix_format(const struct config_ipfix_collector *c, char *buf, size_t sz)
{
	char a[ADDR_STRLEN];
	bool v6 = c->addr.family == AF_INET6;

	snprintf(buf, sz, "%s://%s%s%s:%u", c->tcp ? "tcp" : "udp", v6 ? "[" : "",
		 addr_format(&c->addr, a, sizeof(a)), v6 ? "]" : "", c->port);
	return buf;
}

/* A number of @n in [@lo, @hi] into *@ret. */
static int get_num(const struct yamlx_node *n, const char *file, struct diag *err,
		   const char *where, unsigned long long lo, unsigned long long hi,
		   unsigned long long *ret)
{
	char q[300];
	int r;

	if (!yamlx_is_str(n))
		return FAIL(n, "ipfix.%s: expected a number, got %s", where, yamlx_kind(n));
	r = dec(n->str, n->len, hi, ret);
	if (r == -EINVAL)
		return FAIL(n, "ipfix.%s: '%s' is not a number (expected %llu-%llu)", where,
			    yamlx_quote(n->str, n->len, q, sizeof(q)), lo, hi);
	if (r < 0 || *ret < lo)
		return FAIL(n, "ipfix.%s: %s is out of range (%llu-%llu)", where,
			    yamlx_quote(n->str, n->len, q, sizeof(q)), lo, hi);
	return 0;
}

static int parse_collectors(struct config_ipfix *x, const struct yamlx_node *n,
			    const char *file, struct diag *err)
{
	char q[300];

	x->n_collectors = 0;
	if (yamlx_is_null(n))
		return 0;
	if (n->type != YAMLX_SEQ)
		return FAIL(n, "ipfix.collectors: expected a list, got %s (e.g. collectors: "
			    "[udp://192.0.2.9:4739])", yamlx_kind(n));
	if (n->n_kids > CONFIG_IPFIX_MAX_COLLECTORS)
		return FAIL(n->kids[CONFIG_IPFIX_MAX_COLLECTORS],
			    "ipfix.collectors: too many collectors (the limit is %u)",
			    CONFIG_IPFIX_MAX_COLLECTORS);
	for (size_t i = 0; i < n->n_kids; i++) {
		const struct yamlx_node *u = n->kids[i];
		struct config_ipfix_collector *cl = &x->collectors[i];
		int r;

		if (!yamlx_is_str(u))
			return FAIL(u, "ipfix.collectors[%zu]: expected udp://ADDR:PORT or "
				    "tcp://ADDR:PORT, got %s", i, yamlx_kind(u));
		yamlx_quote(u->str, u->len, q, sizeof(q));
		r = config_ipfix_collector_parse(u->str, u->len, cl);
		if (r == -EPROTONOSUPPORT)
			return FAIL(u, "ipfix.collectors[%zu]: '%s': expected udp:// or tcp://", i, q);
		if (r == -ERANGE)
			return FAIL(u, "ipfix.collectors[%zu]: bad port in '%s' (1-65535)", i, q);
		if (r < 0)
			return FAIL(u, "ipfix.collectors[%zu]: bad collector '%s' (expected "
				    "udp:// or tcp://, then an IPv4 address or an [IPv6] one, [:PORT]; names "
				    "are not resolved)",
				    i, q);
		for (size_t j = 0; j < i; j++)
			if (cl->tcp == x->collectors[j].tcp && cl->port == x->collectors[j].port &&
			    addr_equal(&cl->addr, &x->collectors[j].addr))
				return FAIL(u, "ipfix.collectors[%zu]: '%s' is listed twice", i, q);
		x->n_collectors++;
	}
	return 0;
}

/*
 * ipfix: { collectors: [...], observation_domain, enterprise, interim_interval,
 *          template_refresh, reconnect_interval, buffer_size, message_size }
 */
static int parse_ipfix(struct config *c, const struct yamlx_node *n, const char *file,
		       struct diag *err)
{
	static const char *const names[] = { "collectors", "observation_domain", "enterprise",
					     "interim_interval", "template_refresh",
					     "reconnect_interval", "buffer_size", "message_size" };
	/* names[1..7]: range and field; a uint32_t unless noted */
	static const struct {
		unsigned long long lo, hi;
		size_t off;
		bool u64;
	} nums[] = {
		{ 0, 4294967295u, offsetof(struct config_ipfix, observation_domain), false },
		{ 1, 4294967295u, offsetof(struct config_ipfix, enterprise), false },
		{ 0, 86400, offsetof(struct config_ipfix, interim_s), false },
		{ 1, 86400, offsetof(struct config_ipfix, template_refresh_s), false },
		{ 1, 3600, offsetof(struct config_ipfix, reconnect_s), false },
		{ 65536, 1ull << 30, offsetof(struct config_ipfix, buffer_bytes), true },
		{ 1024, 65535, offsetof(struct config_ipfix, message_size), false },
	};
	const struct yamlx_node *v[NAMES_N];
	struct config_ipfix x = c->ipfix;
	int r;

	if (yamlx_is_null(n))
		return 0;
	if (n->type != YAMLX_MAP)
		return FAIL(n, "ipfix: expected a mapping, got %s (e.g. ipfix: { collectors: "
			    "[udp://192.0.2.9:4739] })", yamlx_kind(n));
	r = yamlx_fields(n, file, err, "ipfix", names, NAMES_N, NULL, v);
	if (r < 0)
		return r;
	if (v[0] && (r = parse_collectors(&x, v[0], file, err)) < 0)
		return r;
	for (size_t i = 1; i < NAMES_N; i++) {
		unsigned long long val = 0;

		if (!v[i])
			continue;
		r = get_num(v[i], file, err, names[i], nums[i - 1].lo, nums[i - 1].hi, &val);
		if (r < 0)
			return r;
		if (nums[i - 1].u64)
			memcpy((char *)&x + nums[i - 1].off, &(uint64_t){ val }, sizeof(uint64_t));
		else
			memcpy((char *)&x + nums[i - 1].off, &(uint32_t){ (uint32_t)val },
			       sizeof(uint32_t));
	}
	/* 29305 is RFC 5103's reverse-direction number, which our own elements are not. */
	if (x.enterprise == 29305)
		return FAIL(v[2], "ipfix.enterprise: 29305 is reserved for reverse elements "
			    "(RFC 5103); use your own Private Enterprise Number");
	c->ipfix = x;
	return 0;
}

int config_ipfix_parse(struct config *c, const struct yamlx_node *n, const char *file,
		       struct diag *err)
{
	return parse_ipfix(c, n, file, err);
}
