/*
 * refuselog - log the answer addresses never pinned (see refuselog.h).
 * The proxy calls it after decide_pins() counted n_rebind > 0; the audit
 * record keeps only the count ("rebind": N), this is where the addresses
 * and their names go.
 */
#include "dnsproxy/refuselog.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/special.h"

char *refuse_log_describe(const struct addr *a, char *buf, size_t sz)
{
	struct special_hit h;
	char v4[ADDR_STRLEN];

	if (special_find(a, 0, &h)) {
		if (h.form)
			snprintf(buf, sz, "the %s form of %s, %s (%s)", h.form,
				 addr_format(&h.v4, v4, sizeof(v4)), h.entry->what, h.entry->cidr);
		else
			snprintf(buf, sz, "%s (%s, %s)", h.entry->what, h.entry->cidr,
				 h.entry->source);
	} else if (special_find(a, SPECIAL_WITH_DOC, &h)) {
		/* Which of the two the proxy does not know: the flag is the config's. */
		snprintf(buf, sz, "the host's own address or a sandbox pool, or %s (%s) "
			 "with dns.never_pin_documentation", h.entry->what, h.entry->cidr);
	} else {
		snprintf(buf, sz, "the host's own address or a sandbox pool");
	}
	return buf;
}

size_t refuse_log_answer(struct refuse_log *rl, const struct decide_ctx *c, const char *sandbox,
			 const char *qname, const struct wire_addr *addrs, size_t n,
			 uint64_t now_ms)
{
	size_t refused = 0;

	if (!rl->started) {
		tbucket_init(&rl->tb, REFUSELOG_BURST, now_ms);
		rl->started = true;
	}
	for (size_t i = 0; i < n; i++) {
		char a[ADDR_STRLEN], q[4 * 255 + 1], sb[4 * 64 + 1], what[1024];

		if (addr_len(addrs[i].addr.family) == 0 || !decide_never_pin(c, &addrs[i].addr))
			continue;
		refused++;
		rl->total++;
		if (!tbucket_take(&rl->tb, REFUSELOG_RATE_PER_S, REFUSELOG_BURST, now_ms)) {
			rl->suppressed++;
			continue;
		}
		/* The qname is the sandbox's, the address the upstream's: quote the
		 * one, print the other only in its numeric form. */
		log_quote(qname, strlen(qname), q, sizeof(q));
		log_quote(sandbox, strlen(sandbox), sb, sizeof(sb));
		log_warn("dns: not pinning %s for \"%s\" (sandbox %s): %s",
			 addr_format(&addrs[i].addr, a, sizeof(a)), q, sb,
			 refuse_log_describe(&addrs[i].addr, what, sizeof(what)));
		if (rl->suppressed) {
			log_warn("dns: %llu refused answer addresses not logged (rate limit %u/s)",
				 (unsigned long long)rl->suppressed, REFUSELOG_RATE_PER_S);
			rl->suppressed = 0;
		}
	}
	return refused;
}
