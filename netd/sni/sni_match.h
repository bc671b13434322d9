/*
 * sni_match - may a connection that says it is for @seen (its TLS SNI or
 * HTTP Host, from sni.h) use an address that the names @pinned pinned for
 * that sandbox (from the pin registry)?  Pure: policy and names in, yes/no out.
 *
 * The rule: @seen must be covered by a domain pattern of the policy that
 * also covers one of the pinned names, in a rule for the connection's
 * protocol and port.  An exact pattern covers only itself, so a name
 * pinned through "allowed.example.com" admits only that SNI; a name
 * pinned through "*.cdn.example" admits any name under cdn.example (the
 * operator allowed all of them, and one edge serves them all).  A name
 * the policy allows through a different pattern that pinned other
 * addresses does not count: the address was not pinned for it.
 */
#ifndef NETD_SNI_MATCH_H
#define NETD_SNI_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netd/model/policy.h"
#include "netd/sni/sni.h"

/*
 * sni_pattern_covers() - does domain pattern @pat (normalized, as stored in
 * policy_rule.domains) cover @name (lower-case, no trailing dot)?  "*.x.y"
 * covers names strictly below x.y at any depth; other patterns only
 * themselves (policy.h).
 */
bool sni_pattern_covers(const char *pat, const char *name);

/*
 * sni_match() - the check above.
 * @pol: the sandbox's current policy (borrowed).
 * @pinned, @n_pinned: the qnames whose answers pinned the destination for
 *       this sandbox (pinreg_names()), lower-case presentation form.
 * @proto, @port: the connection's (IPPROTO_TCP, host byte order).
 * @seen: the normalized name the client sent (sni.h); NULL or "" never
 *       matches.
 * Honours each rule's max_qname_length for @seen.
 * Return: true if allowed.
 */
bool sni_match(const struct policy *pol, const char *const *pinned, size_t n_pinned,
	       uint8_t proto, uint16_t port, const char *seen);

/*
 * sni_modes() - how strictly a connection to a destination that @pinned
 * pinned is checked: the strictest tls.sni (*@tls) and http.host (*@http)
 * of the rules that pinned it (each pinned name's matching rules for
 * @proto/@port).  Both POLICY_L7_OFF: not checked at all.
 * *@ech_outer: an ECH hello is judged by its outer name (sni_ech_outer()):
 * true only if every one of those rules that checks something says
 * tls.ech: outer - the strictest applies here too, and any other value
 * refuses an ECH hello.  False when nothing is checked.
 */
void sni_modes(const struct policy *pol, const char *const *pinned, size_t n_pinned,
	       uint8_t proto, uint16_t port, enum policy_l7 *tls, enum policy_l7 *http,
	       bool *ech_outer);

/*
 * sni_modes_port() - the same (*@tls, *@http, *@ech_outer) over every domain
 * rule of @pol for @proto/@port, whatever pinned what: for a connection on
 * a checked port whose pinning names are unknown (a new connection that
 * reuses a conntrack entry after its pin expired), which is then checked
 * rather than waved through.
 */
void sni_modes_port(const struct policy *pol, uint8_t proto, uint16_t port,
		    enum policy_l7 *tls, enum policy_l7 *http, bool *ech_outer);

/*
 * sni_mode_for() - the mode that applies to what the stream turned out to
 * be: a TLS stream (or a QUIC ClientHello) is judged by tls.sni, an HTTP/1 one by http.host - each
 * falling back to the other if it is off, so that plain HTTP on a port where
 * only the SNI is enforced (or TLS where only the Host is) is no way
 * around the check; anything else (garbage, HTTP/2 prior knowledge, too
 * long, undecided at the deadline) gets the stricter of the two.
 */
enum policy_l7 sni_mode_for(enum sni_proto proto, enum policy_l7 tls, enum policy_l7 http);

/*
 * sni_ech_outer() - tls.ech: outer (docs/sni.md): a ClientHello that carries
 * the ECH extension is judged by its outer server_name like any other.
 * SNI_ECH in @res becomes SNI_NAME (the outer name, already normalized),
 * or SNI_NO_NAME when the outer hello names nothing; res->ech stays true,
 * so the verdict and the record still say ECH.  Any other status is left
 * as it is.  What this gives up: the server may act on the encrypted
 * inner name, which no one but it reads.
 */
void sni_ech_outer(struct sni_result *res);

struct sni_verdict {
	bool accept;		/* false: reset the connection */
	bool audit;		/* write an audit record: reason "sni-mismatch", or
				 * "ech-outer" with @ech_outer */
	bool ech_outer;		/* passed on the outer name of a hello with ECH
				 * (sni_ech_outer()): recorded, not a mismatch */
};

/*
 * sni_decide() - the verdict on a decided stream.
 * @mode: from sni_mode_for(); @res: the parse (SNI_MORE means the deadline
 * or packet bound passed first); @matched: sni_match() of res->name.
 * Only SNI_NAME with @matched passes under enforce: no name, ECH (the
 * real name is encrypted; the outer one names the front end, not the
 * destination), a bad name, garbage and "too long" are reset.  Under log
 * everything passes and every non-match is audited; under off everything
 * passes silently.  An ECH hello that sni_ech_outer() turned into SNI_NAME
 * is judged as such; when it passes under log or enforce it is audited
 * all the same (@ech_outer): the name the server acts on went unseen.
 */
struct sni_verdict sni_decide(enum policy_l7 mode, const struct sni_result *res, bool matched);

#endif
