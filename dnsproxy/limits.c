/*
 * limits - the proxy's per client address counters: queries upstream, TCP
 * connections, and the query-rate token bucket (common/tbucket.h), in a
 * small hash table (common/hash.h) keyed by address.  A slot lives while
 * anything counts or its bucket still remembers recent queries.  Also the
 * tunnelling heuristic.  No I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "dnsproxy/proxy_int.h"

static unsigned int slot_hash(const struct addr *a)
{
	uint32_t h = fnv32_add(FNV32_INIT, &a->family, 1);

	return fnv32_add(h, a->a, addr_len(a->family)) % PROXY_CLIENT_BUCKETS;
}

struct client_slot *slot_get(struct proxy *p, const struct addr *a, bool create)
{
	unsigned int h = slot_hash(a);
	struct client_slot *s;

	for (s = p->slots[h]; s; s = s->next)
		if (addr_equal(&s->addr, a))
			return s;
	if (!create)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->addr = *a;
	tbucket_init(&s->rate, p->cfg.burst, proxy_now_ms(p));
	s->next = p->slots[h];
	p->slots[h] = s;
	return s;
}

void slot_put(struct proxy *p, const struct addr *a)
{
	unsigned int h = slot_hash(a);

	for (struct client_slot **pp = &p->slots[h]; *pp; pp = &(*pp)->next) {
		struct client_slot *s = *pp;

		if (!addr_equal(&s->addr, a))
			continue;
		/* Keep it while its rate bucket still remembers queries (a
		 * refill changes nothing the next take would not). */
		tbucket_refill(&s->rate, p->cfg.qps, p->cfg.burst, proxy_now_ms(p));
		if (s->queries == 0 && s->conns == 0 && tbucket_full(&s->rate, p->cfg.burst)) {
			*pp = s->next;
			free(s);
		}
		return;
	}
}

bool rate_ok(struct proxy *p, const struct addr *a, uint64_t *ret_limited)
{
	struct client_slot *s = slot_get(p, a, true);
	bool ok;

	if (!s)
		return true;	/* out of memory: the outstanding limit still holds */
	ok = tbucket_take(&s->rate, p->cfg.qps, p->cfg.burst, proxy_now_ms(p));
	if (ok)
		s->limited = 0;
	else
		s->limited++;
	*ret_limited = s->limited;
	slot_put(p, a);
	return ok;
}

void slots_free(struct proxy *p)
{
	for (size_t i = 0; i < PROXY_CLIENT_BUCKETS; i++) {
		while (p->slots[i]) {
			struct client_slot *s = p->slots[i];

			p->slots[i] = s->next;
			free(s);
		}
	}
}

/*
 * At least PROXY_LONG_LABEL characters drawn from PROXY_LONG_LABEL_DISTINCT
 * or more distinct ones (base32/hex/base64 encodings; host names repeat
 * letters far more).
 */
bool tunnel_suspect(const char *qname)
{
	const char *label = qname;

	while (*label) {
		size_t len = strcspn(label, ".");

		if (len >= PROXY_LONG_LABEL) {
			bool seen[256] = { false };
			unsigned int distinct = 0;

			for (size_t i = 0; i < len; i++) {
				if (!seen[(uint8_t)label[i]])
					distinct++;
				seen[(uint8_t)label[i]] = true;
			}
			if (distinct >= PROXY_LONG_LABEL_DISTINCT)
				return true;
		}
		label += len;
		if (*label == '.')
			label++;
	}
	return false;
}
