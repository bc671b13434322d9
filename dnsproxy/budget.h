/*
 * budget - the DNS proxy's defences against tunnelling through an allowed
 * wildcard (issue 25; docs/dns.md, "Tunnelling through a wildcard"):
 *
 *   - the encoded-label score (tunnel_score(), dnsproxy/limits.c): a name
 *     whose labels look like data (long runs of base32, base36, base64 or
 *     hex; more ID-like characters than any name of the legitimate corpus,
 *     tests/unit/dns/legit_names.txt) is refused before it can spend the
 *     budget;
 *   - the name budget (budget.c): per sandbox and rule, at most N distinct
 *     names in a sliding window of W seconds (a name counts when it is
 *     first asked, before it goes upstream, whatever the answer); a name
 *     asked again within the window is not new.
 *
 * budget_filter() applies both to the rules decide_query() matched, the
 * way max_qname_length is applied there: a rule that refuses the name is
 * dropped, and the name is refused when no rule is left.  Pure: memory in,
 * memory out; the clock and the hash key are the caller's, nothing logs.
 */
#ifndef NETD_DNSPROXY_BUDGET_H
#define NETD_DNSPROXY_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dnsproxy/decide.h"

#define BUDGET_NAMES_MAX   4096	/* names one sandbox holds over all its rules (so
				 * also the most one rule's budget may be) */
#define BUDGET_WINDOW_MAX  86400	/* seconds: a window of a day at most */
#define BUDGET_DEF_NAMES   500	/* the default of a rule with a wildcard ... */
#define BUDGET_DEF_WINDOW  600	/* ... per 10 minutes (docs/dns.md says why) */
#define BUDGET_KEY_LEN     16	/* SipHash-2-4 key */

/* ---- the encoded-label score (dnsproxy/limits.c) ---------------------------- */

/* The thresholds, from the legitimate corpus (docs/dns.md has the table). */
#define TUNNEL_TOKEN_MAX   32	/* a run of letters and digits longer than this
				 * that does not read as words */
#define TUNNEL_LABEL_IDS   32	/* ID-like characters in one label, at most ... */
#define TUNNEL_LABEL_HEX   49	/* ... or this many when all of them are hex (an AWS
				 * NLB name: 32 hex, '-', 16 hex) */
#define TUNNEL_NAME_IDS    56	/* ID-like characters in a whole name, at most */

enum tunnel_why {
	TUNNEL_NONE = 0,
	TUNNEL_TOKEN,		/* a run longer than TUNNEL_TOKEN_MAX, not words */
	TUNNEL_LABEL,		/* a label over TUNNEL_LABEL_IDS (TUNNEL_LABEL_HEX) */
	TUNNEL_NAME,		/* the name over TUNNEL_NAME_IDS */
};

enum tunnel_shape {
	TUNNEL_HEX = 0,		/* [0-9a-f] */
	TUNNEL_BASE32,		/* [a-z2-7] with digits (RFC 4648 6, lower-cased) */
	TUNNEL_BASE36,		/* letters and digits */
	TUNNEL_BASE64,		/* ... with '-' or '_' inside (RFC 4648 5, lower-cased) */
	TUNNEL_LETTERS,		/* letters that do not read as words */
	TUNNEL_DIGITS,
};

/* Why tunnel_score() flagged a name, for the EDE text and the log. */
struct tunnel_score {
	uint8_t why;		/* enum tunnel_why; TUNNEL_NONE: not flagged */
	uint8_t shape;		/* enum tunnel_shape of what tripped it */
	uint16_t chars;		/* its size: the run's length, the label's or the
				 * name's ID-like characters */
	uint16_t ids;		/* ID-like characters in the whole name (as far as read) */
};

/*
 * tunnel_score() - does @qname look like data encoded into a name?  Read
 * label by label (RFC 1035 presentation form, lower case, no trailing dot;
 * any byte other than [a-z0-9] and '.' separates the runs a label is read
 * in).  A run is ID-like when it is a number of 5 digits or more, hex of 8
 * or more with a digit, letters and digits mixed (3 alternations or more),
 * or 8 letters or more with no word's shape (a quarter vowels, no
 * consonant cluster over 4); in a label with an ID-like run, short runs
 * with a digit or without a vowel count too.  Flagged: a run over
 * TUNNEL_TOKEN_MAX that is not words, a label over TUNNEL_LABEL_IDS ID-like
 * characters (TUNNEL_LABEL_HEX if all hex), a name over TUNNEL_NAME_IDS.
 * @out (may be NULL): why.  Pure; O(strlen).
 * Return: true if flagged.
 */
bool tunnel_score(const char *qname, struct tunnel_score *out);

/* tunnel_shape_name() - "hex", "base32", ...; static storage. */
const char *tunnel_shape_name(unsigned int shape);

/* ---- the name budget (dnsproxy/budget.c) ------------------------------------ */

struct budget;

/*
 * budget_new() - an empty budget.  @key: BUDGET_KEY_LEN random bytes (the
 * proxy's, from getrandom()); names are held as their keyed SipHash-2-4,
 * so a sandbox cannot compute names that collide with ones it already
 * spent.  Caller frees with budget_free().  Return: 0; -ENOMEM.
 */
int budget_new(const uint8_t key[BUDGET_KEY_LEN], struct budget **ret);

/*
 * budget_name_hash() - SipHash-2-4 of @data/@len under @key (Aumasson and
 * Bernstein, "SipHash: a fast short-input PRF", 2012): how the budget
 * holds a name.  Exposed for its test vector.
 */
uint64_t budget_name_hash(const uint8_t key[BUDGET_KEY_LEN], const void *data, size_t len);

/* budget_free() - NULL-safe. */
void budget_free(struct budget *b);

/*
 * budget_reset() - forget every name @sandbox spent: it was created or
 * deleted, or a reload changed its policy (whose rules the counts are
 * kept by).  NULL-safe, unknown names ignored.
 */
void budget_reset(struct budget *b, const char *sandbox);

/*
 * budget_expire() - drop the names whose window has passed at @now_ms
 * (monotonic ms), and sandboxes left with none.  Return: names dropped.
 */
size_t budget_expire(struct budget *b, uint64_t now_ms);

/* budget_names() - names held over all sandboxes. */
size_t budget_names(const struct budget *b);

enum budget_result {
	BUDGET_KNOWN,		/* asked before within the window: not new */
	BUDGET_ADDED,		/* new, and counted */
	BUDGET_OVER,		/* new, and the rule's budget is spent */
	BUDGET_FULL,		/* new, and the sandbox holds BUDGET_NAMES_MAX names
				 * (or memory ran out): refused, fail closed */
};

/*
 * budget_charge() - count @qname for rule @rule of @sandbox: at most
 * @names (1..BUDGET_NAMES_MAX) distinct names within the last @window_s
 * seconds (1..BUDGET_WINDOW_MAX) of @now_ms.  A name already counted has
 * its time refreshed (it stays in the window while it is used).
 * @ret_retry_s (may be NULL): on OVER or FULL, seconds until the oldest
 * name of the rule (of the sandbox) leaves its window.
 * Return: an enum budget_result.
 */
enum budget_result budget_charge(struct budget *b, const char *sandbox, uint16_t rule,
				 uint32_t names, uint32_t window_s, const char *qname,
				 uint64_t now_ms, uint32_t *ret_retry_s);

/* What budget_filter() found; the refusal it reports is the last one. */
struct budget_why {
	bool encoded;		/* a rule refused the name as encoded (@score) */
	bool logged;		/* a rule with encoded: log let it through (@score) */
	struct tunnel_score score;
	bool over;		/* a rule's budget was spent (@names, @window_s) */
	bool full;		/* the sandbox's table was full */
	bool first_over;	/* the first refusal of that rule since its last new name */
	uint32_t names, window_s, retry_s;
	const char *pattern;	/* the refusing rule's pattern (borrowed), may be NULL */
};

/*
 * budget_filter() - the dns: keys of the rules @rules[0..*@n_rules), that
 * decide_query() matched for @qname, for @sandbox at @now_ms: each rule
 * with encoded: refuse drops out if tunnel_score() flags the name; each
 * rule with a budget is charged (budget_charge()) and drops out when OVER
 * or FULL.  A rule without either keeps the name; a refused name charges
 * nothing.  Calling it again for the same name (the answer, decided again)
 * charges nothing new.  @why: what happened (zeroed first).
 * Return: DECIDE_ALLOW with the rules left in @rules and *@n_rules;
 * DECIDE_DENY_ENCODED if some rule refused it as encoded and none is left;
 * DECIDE_DENY_BUDGET otherwise when none is left (*@n_rules = 0).
 */
enum decide_verdict budget_filter(struct budget *b, const struct decide_ctx *c,
				  const char *sandbox, const char *qname, uint64_t now_ms,
				  uint16_t *rules, size_t *n_rules, struct budget_why *why);

#define BUDGET_WINDOW_STRLEN 16

/* budget_window_format() - @s as "10m", "1h" or "90s" (exact).  Return: @buf. */
char *budget_window_format(uint32_t s, char *buf, size_t sz);

/*
 * budget_text() - the EXTRA-TEXT (RFC 8914) for a refusal @v
 * (DECIDE_DENY_BUDGET or DECIDE_DENY_ENCODED) that @why explains: printable
 * ASCII, at most @sz - 1 bytes (EDE_TEXT_MAX + 1 is enough), nothing the
 * sandbox wrote.  Return: @buf.
 */
char *budget_text(char *buf, size_t sz, enum decide_verdict v, const struct budget_why *why);

#endif
