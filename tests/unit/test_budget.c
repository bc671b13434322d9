/*
 * test_budget - DNS tunnelling's defences, pure (dnsproxy/budget.h):
 *   the encoded-label score (dnsproxy/limits.c) on the corpus of legitimate
 *   names (tests/unit/dns/legit_names.txt: none flagged) and on encoders'
 *   labels (iodine's, base32, base36, base64, hex: flagged past the limits);
 *   the name budget (dnsproxy/budget.c): the sliding window, counting
 *   (distinct names, per rule, per sandbox), the per-sandbox bound (fail
 *   closed), reset and expiry; every section of the corpus replayed under
 *   the default budget with room to spare; budget_filter() over real
 *   policies (dns: keys and their defaults); SipHash-2-4's test vector;
 *   the EDE texts.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dnsproxy/budget.h"
#include "netd/model/policy.h"
#include "netd/model/policy_dns.h"

#define CORPUS "tests/unit/dns/legit_names.txt"

static const uint8_t key[BUDGET_KEY_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

/* ---- the corpus --------------------------------------------------------------- */

struct corpus {
	char names[1024][256];
	unsigned int section[1024];	/* which section each name is in */
	char rules[128][256];		/* each section's rule */
	unsigned int n, n_sections;
};

static struct corpus cp;

static void corpus_load(void)
{
	FILE *f = fopen(CORPUS, "r");
	char line[512];

	if (!f)
		fail_msg("run from the source tree: %s not found", CORPUS);
	memset(&cp, 0, sizeof(cp));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (line[0] == '[') {
			assert_true(cp.n_sections < 128);
			snprintf(cp.rules[cp.n_sections++], 256, "%.*s",
				 (int)strcspn(line + 1, "]"), line + 1);
			continue;
		}
		assert_true(cp.n_sections > 0 && cp.n < 1024);
		snprintf(cp.names[cp.n], 256, "%.255s", line);
		cp.section[cp.n++] = cp.n_sections - 1;
	}
	fclose(f);
	assert_true(cp.n > 300);
}

/* ---- the score ------------------------------------------------------------------ */

/* Not one name of the corpus is flagged, and the margins are what docs/dns.md says. */
static void test_score_corpus(void **state)
{
	unsigned int most = 0;

	(void)state;
	corpus_load();
	for (unsigned int i = 0; i < cp.n; i++) {
		struct tunnel_score sc;

		if (tunnel_score(cp.names[i], &sc))
			fail_msg("%s: flagged (why %u, shape %s, %u characters)", cp.names[i],
				 sc.why, tunnel_shape_name(sc.shape), sc.chars);
		if (sc.ids > most)
			most = sc.ids;
	}
	assert_int_equal(most, 49);	/* the NLB name: 32 hex, '-', 16 hex */
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* @n random characters of @alphabet, not starting or ending with '-' or '_'. */
static void rand_label(char *out, size_t n, const char *alphabet)
{
	size_t a = strlen(alphabet);

	do {
		for (size_t i = 0; i < n; i++)
			out[i] = alphabet[next() % a];
		out[n] = '\0';
	} while (strchr("-_", out[0]) || strchr("-_", out[n - 1]));
}

#define B32  "abcdefghijklmnopqrstuvwxyz234567"
#define B36  "abcdefghijklmnopqrstuvwxyz0123456789"
#define HEX  "0123456789abcdef"
#define B64U "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz-_"	/* lower-cased */

/* How many of @tries names of @labels random labels of @len flag. */
static unsigned int flagged(const char *alphabet, size_t len, unsigned int labels,
			    unsigned int tries)
{
	unsigned int hits = 0;

	for (unsigned int t = 0; t < tries; t++) {
		char name[512] = "", l[64];

		for (unsigned int k = 0; k < labels; k++) {
			rand_label(l, len, alphabet);
			strcat(name, l);
			strcat(name, ".");
		}
		strcat(name, "t.tunnel.dt.example");
		hits += tunnel_score(name, NULL);
	}
	return hits;
}

/* Encoders' labels: past the limits every time (base64 nearly), under them never. */
static void test_score_encoders(void **state)
{
	(void)state;
	/* One label over 32 characters: a run no ID is that long. */
	assert_int_equal(flagged(B32, 33, 1, 200), 200);
	assert_int_equal(flagged(B36, 40, 1, 200), 200);
	assert_int_equal(flagged(HEX, 33, 1, 200), 200);
	assert_int_equal(flagged(B32, 57, 3, 200), 200);	/* iodine's shape */
	assert_true(flagged(B64U, 57, 1, 200) >= 190);	/* '-' and '_' cut its runs */
	assert_int_equal(flagged(B64U, 57, 3, 200), 200);
	/* Two labels of 29: more ID-like characters than any legitimate name. */
	assert_int_equal(flagged(B32, 29, 2, 200), 200);
	assert_int_equal(flagged(HEX, 29, 2, 200), 200);
	/* Under the limits: the budget's part. */
	assert_int_equal(flagged(B32, 24, 1, 200), 0);
	assert_int_equal(flagged(HEX, 32, 1, 200), 0);
	assert_int_equal(flagged(B32, 16, 3, 200), 0);
}

/*
 * What iodine 0.7.0 asked through netd (tests/integ/dns_tunnel.sh's audit
 * log): its data and most of its handshake's probes are refused; the
 * version, login and ping queries pass (they carry a few bytes each), as
 * may fragment-size probes whose padding repeats like words.
 */
static void test_score_iodine(void **state)
{
	static const char *const refused[] = {
		"rbeadtws0tbw0tbw0tbw0tbw0tbw0tbw0tbw0tbw0tbw0tbw0tbw0tbw0tbw0t.bw0tbw0tbw0tbw0t"
		"bw0tbw0tbw0tbw0tbw0tbw0tbw0tbw0tbw0tbw0tb.t.tunnel.dt.example",
		"zzfraabbccddeeffgghhiijjkkllmmnnooppqqrrssttuuvvwwxxyyzz_0129-.t.tunnel.dt.example",
		"rbpiduws4ubm4ubm4ubm4ubm4ubm4ubm4ubm4ubm4ubm4ubm4ubm4ubm4ubm4u.bm4ubm4ubm4ubm4u"
		"bm4ubm4ubm4ubm4ubm4ubm4ubm4ubm4ubm4ubm4ub.t.tunnel.dt.example",
		/* data: user 0, its base32 (a-z, 0-5) in labels of 57 and more */
		"0iabepdnggyhambygkyfqbhsxmydqmc35barltgaqtcazd412qjlw3vo1hbibb.aldb5np1dq2rqgay"
		"tbofrgcytarki5yxqesjtwiztgakagzkag44.t.tunnel.dt.example",
		"0eabapdnggydixon2aaaedrlp55zvgcaidvl403ldtd11e55dgmjaaotfnbx5b.3aqyacwzif1u.t."
		"tunnel.dt.example",
	};
	static const char *const passed[] = {
		"vaaaakatevq.t.tunnel.dt.example",		/* version */
		"labhjc3qzlfwxwlwo0zxp2nsrff1wjli.t.tunnel.dt.example",	/* login: 32 */
		"yrbzfl.t.tunnel.dt.example",
	};
	struct tunnel_score sc;

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		assert_true(tunnel_score(refused[i], &sc));
	assert_int_equal(sc.why, TUNNEL_TOKEN);
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		assert_false(tunnel_score(passed[i], NULL));
}

/* Why and what shape, for the EDE text. */
static void test_score_why(void **state)
{
	struct tunnel_score sc;

	(void)state;
	assert_true(tunnel_score("mfrggzdfmztwq2lknnwg23tpobyxe43uov3ho6dzpjqwe2lm.x.example", &sc));
	assert_int_equal(sc.why, TUNNEL_TOKEN);
	assert_string_equal(tunnel_shape_name(sc.shape), "base32");
	assert_int_equal(sc.chars, 48);
	/* A label of hex runs: 49 passes (an NLB), 50 does not. */
	assert_false(tunnel_score("a24af17feb19ea94bd27134c0442a912-b3313f12262f5c85.elb.example", &sc));
	assert_int_equal(sc.ids, 49);
	assert_true(tunnel_score("a24af17feb19ea94bd27134c0442a912-b3313f12262f5c851.elb.example", &sc));
	assert_int_equal(sc.why, TUNNEL_LABEL);
	assert_string_equal(tunnel_shape_name(sc.shape), "hex");
	/* Not hex: 32 per label. */
	assert_true(tunnel_score("k1cu5onvr12xdnw4d6bhh8zq-5onvr12x.example", &sc));
	assert_int_equal(sc.why, TUNNEL_LABEL);
	assert_string_equal(tunnel_shape_name(sc.shape), "base64");
	/* The name: 57 ID-like characters over labels that pass one by one. */
	assert_true(tunnel_score("ytbtwt3ytucfnx3bq2p5zy5vqy.k1cu5onvr12xdnw4d6bhh8zqjbq7x2m.example", &sc));
	assert_int_equal(sc.why, TUNNEL_NAME);
	assert_int_equal(sc.chars, 57);
	/* Words are not IDs, however long; nor are names of no ID at all. */
	assert_false(tunnel_score("customer-notification-preferences-service.prod.example", &sc));
	assert_int_equal(sc.ids, 0);
	assert_false(tunnel_score("mycompanyterraformstateproductionuseast1.example", NULL));
	assert_false(tunnel_score("", NULL));
	assert_false(tunnel_score("...", NULL));
	/* Letters with no word's shape, over 32: flagged. */
	assert_true(tunnel_score("qwrtzpsdfghjklxcvbnmqwrtzpsdfghjklx.example", &sc));
	assert_string_equal(tunnel_shape_name(sc.shape), "letters");
	assert_string_equal(tunnel_shape_name(99), "data");
}

/* ---- SipHash ------------------------------------------------------------------ */

/* The paper's vector (Appendix A): key 00..0f, message 00..0e. */
static void test_siphash(void **state)
{
	uint8_t k[16], m[15];

	(void)state;
	for (int i = 0; i < 16; i++)
		k[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		m[i] = (uint8_t)i;
	assert_true(budget_name_hash(k, m, sizeof(m)) == 0xa129ca6149be45e5ull);
	assert_true(budget_name_hash(k, m, 0) == 0x726fdb47dd0e0e31ull);
	assert_true(budget_name_hash(key, m, 8) != budget_name_hash(k, m, 8));
}

/* ---- the budget ------------------------------------------------------------------ */

#define S(x) ((uint64_t)(x) * 1000)

/* Distinct names count once; per rule; per sandbox. */
static void test_counting(void **state)
{
	struct budget *b;

	(void)state;
	assert_int_equal(budget_new(key, &b), 0);
	assert_int_equal(budget_charge(b, "sb1", 0, 2, 60, "a.x", S(1), NULL), BUDGET_ADDED);
	assert_int_equal(budget_charge(b, "sb1", 0, 2, 60, "a.x", S(2), NULL), BUDGET_KNOWN);
	assert_int_equal(budget_charge(b, "sb1", 0, 2, 60, "b.x", S(3), NULL), BUDGET_ADDED);
	assert_int_equal(budget_names(b), 2);
	assert_int_equal(budget_charge(b, "sb1", 0, 2, 60, "c.x", S(4), NULL), BUDGET_OVER);
	assert_int_equal(budget_charge(b, "sb1", 0, 2, 60, "c.x", S(5), NULL), BUDGET_OVER);
	assert_int_equal(budget_names(b), 2);	/* a refused name is not held */
	assert_int_equal(budget_charge(b, "sb1", 0, 2, 60, "b.x", S(6), NULL), BUDGET_KNOWN);
	/* Another rule, another sandbox: their own counts. */
	assert_int_equal(budget_charge(b, "sb1", 1, 2, 60, "c.x", S(7), NULL), BUDGET_ADDED);
	assert_int_equal(budget_charge(b, "sb2", 0, 2, 60, "c.x", S(8), NULL), BUDGET_ADDED);
	assert_int_equal(budget_names(b), 4);
	/* No budget: nothing counted. */
	assert_int_equal(budget_charge(b, "sb1", 2, 0, 60, "d.x", S(9), NULL), BUDGET_KNOWN);
	/* Reset: sb1 starts afresh; sb2 keeps its own. */
	budget_reset(b, "sb1");
	budget_reset(b, "never-seen");
	assert_int_equal(budget_names(b), 1);
	assert_int_equal(budget_charge(b, "sb1", 0, 2, 60, "c.x", S(10), NULL), BUDGET_ADDED);
	assert_int_equal(budget_charge(b, "sb2", 0, 2, 60, "c.x", S(11), NULL), BUDGET_KNOWN);
	budget_free(b);
	budget_free(NULL);
}

/* The window slides name by name; a name in use stays; "retry in" is exact. */
static void test_window(void **state)
{
	struct budget *b;
	uint32_t retry = 0;

	(void)state;
	assert_int_equal(budget_new(key, &b), 0);
	assert_int_equal(budget_charge(b, "sb", 3, 3, 600, "a", S(100), NULL), BUDGET_ADDED);
	assert_int_equal(budget_charge(b, "sb", 3, 3, 600, "b", S(200), NULL), BUDGET_ADDED);
	assert_int_equal(budget_charge(b, "sb", 3, 3, 600, "c", S(300), NULL), BUDGET_ADDED);
	assert_int_equal(budget_charge(b, "sb", 3, 3, 600, "d", S(301), &retry), BUDGET_OVER);
	assert_int_equal(retry, 399);	/* "a" leaves at 700 */
	/* "a" asked again at 650: not new, and now it stays until 1250. */
	assert_int_equal(budget_charge(b, "sb", 3, 3, 600, "a", S(650), NULL), BUDGET_KNOWN);
	assert_int_equal(budget_charge(b, "sb", 3, 3, 600, "d", S(700), &retry), BUDGET_OVER);
	assert_int_equal(retry, 100);	/* "b" leaves at 800 */
	assert_int_equal(budget_charge(b, "sb", 3, 3, 600, "d", S(799), &retry), BUDGET_OVER);
	assert_int_equal(retry, 1);
	assert_int_equal(budget_charge(b, "sb", 3, 3, 600, "d", S(800), NULL), BUDGET_ADDED);
	/* "b" left: asking it again is a new name, and the budget is spent again. */
	assert_int_equal(budget_charge(b, "sb", 3, 3, 600, "b", S(801), NULL), BUDGET_OVER);
	/* Expiry: at 1250 "a" leaves, "c" (300) left at 900, "d" stays. */
	assert_int_equal(budget_expire(b, S(1250)), 2);
	assert_int_equal(budget_names(b), 1);
	assert_int_equal(budget_expire(b, S(1400)), 1);	/* "d": the sandbox goes too */
	assert_int_equal(budget_names(b), 0);
	assert_int_equal(budget_charge(b, "sb", 3, 3, 600, "b", S(1401), NULL), BUDGET_ADDED);
	budget_free(b);
}

/* BUDGET_NAMES_MAX names a sandbox, over all its rules: then FULL (fail closed). */
static void test_bound(void **state)
{
	struct budget *b;
	uint32_t retry = 0;
	char name[64];

	(void)state;
	assert_int_equal(budget_new(key, &b), 0);
	for (unsigned int i = 0; i < BUDGET_NAMES_MAX; i++) {
		snprintf(name, sizeof(name), "n%u.x", i);
		assert_int_equal(budget_charge(b, "sb", (uint16_t)(i % 4), BUDGET_NAMES_MAX,
					       60 + i % 4, name, S(10), NULL), BUDGET_ADDED);
	}
	assert_int_equal(budget_names(b), BUDGET_NAMES_MAX);
	/* Known names still pass; a new one under any rule does not. */
	assert_int_equal(budget_charge(b, "sb", 1, BUDGET_NAMES_MAX, 61, "n1.x", S(11), NULL),
			 BUDGET_KNOWN);
	assert_int_equal(budget_charge(b, "sb", 9, 5, 60, "new.x", S(11), &retry), BUDGET_FULL);
	assert_int_equal(retry, 59);	/* rule 0's names (window 60) leave first */
	/* Other sandboxes are not affected. */
	assert_int_equal(budget_charge(b, "sb2", 9, 5, 60, "new.x", S(11), NULL), BUDGET_ADDED);
	/* Once rule 0's window passed, there is room again. */
	assert_int_equal(budget_charge(b, "sb", 9, 5, 60, "new.x", S(70), NULL), BUDGET_ADDED);
	assert_int_equal(budget_names(b), BUDGET_NAMES_MAX - BUDGET_NAMES_MAX / 4 + 2);
	budget_free(b);
}

/* Every section of the corpus, one sandbox each, within the default budget, twice over. */
static void test_corpus_budget(void **state)
{
	struct budget *b;
	unsigned int most = 0, per[128] = { 0 };

	(void)state;
	corpus_load();
	assert_int_equal(budget_new(key, &b), 0);
	for (unsigned int i = 0; i < cp.n; i++) {
		char sb[16];

		snprintf(sb, sizeof(sb), "s%u", cp.section[i]);
		assert_int_equal(budget_charge(b, sb, 0, BUDGET_DEF_NAMES, BUDGET_DEF_WINDOW,
					       cp.names[i], S(5) + i * 100, NULL), BUDGET_ADDED);
		if (++per[cp.section[i]] > most)
			most = per[cp.section[i]];
	}
	/* The largest section (*.amazonaws.com, the S3 bucket pattern) has 177. */
	assert_int_equal(most, 177);
	assert_true(2 * most <= BUDGET_DEF_NAMES);
	/* The whole corpus in one sandbox, each rule its own budget: still none refused. */
	for (unsigned int i = 0; i < cp.n; i++)
		assert_int_equal(budget_charge(b, "all", (uint16_t)cp.section[i], BUDGET_DEF_NAMES,
					       BUDGET_DEF_WINDOW, cp.names[i], S(100), NULL),
				 BUDGET_ADDED);
	budget_free(b);
}

/* ---- budget_filter() over real policies ------------------------------------------ */

static const char yaml[] =
	"name: t\n"
	"egress:\n"
	"  - domains: [\"*.tun.example\"]\n"		/* 0: the defaults */
	"    ports: [443]\n"
	"  - domains: [\"*.small.example\"]\n"	/* 1: 2 names a minute */
	"    ports: [443]\n"
	"    dns: { budget: 2/1m }\n"
	"  - domains: [\"*.log.example\"]\n"		/* 2: scored, logged */
	"    ports: [443]\n"
	"    dns: { budget: 0, encoded: log }\n"
	"  - domains: [exact.small.example]\n"		/* 3: exact: nothing to budget */
	"    ports: [80]\n"
	"  - domains: [\"*.both.example\"]\n"		/* 4, 5: two rules on one name */
	"    ports: [443]\n"
	"    dns: { budget: 1/1h }\n"
	"  - domains: [\"*.both.example\"]\n"
	"    ports: [8443]\n"
	"    dns: { budget: 2/1h, encoded: off }\n";

struct fixture {
	struct policy *p;
	struct decide_policy view;
	struct decide_ctx dc;
	struct budget *b;
};

static void fixture_up(struct fixture *f)
{
	struct diag err = { 0 };

	assert_int_equal(policy_parse(yaml, strlen(yaml), "t.yaml", &f->p, &err), 0);
	f->view = policy_dns_view(f->p);
	memset(&f->dc, 0, sizeof(f->dc));
	f->dc.policy = &f->view;
	assert_int_equal(budget_new(key, &f->b), 0);
}

static void fixture_down(struct fixture *f)
{
	budget_free(f->b);
	policy_free(f->p);
}

/* decide_query()'s rules for @name, then budget_filter(). */
static enum decide_verdict filter(struct fixture *f, const char *name, uint64_t now_ms,
				  uint16_t *rules, size_t *n, struct budget_why *why)
{
	*n = policy_match(f->p, name, rules, DECIDE_MAX_RULES);
	return budget_filter(f->b, &f->dc, "sb", name, now_ms, rules, n, why);
}

#define ENC "mfrggzdfmztwq2lknnwg23tpobyxe43uov3ho6dzpjqwe2lm"

static void test_filter(void **state)
{
	struct fixture f;
	struct budget_why why;
	uint16_t rules[DECIDE_MAX_RULES];
	char text[161];
	size_t n;

	(void)state;
	fixture_up(&f);
	/* Defaults of a wildcard rule: refuse encoded, 500 names per 10 minutes. */
	assert_int_equal(f.p->rules[0].dns_budget, 500);
	assert_int_equal(f.p->rules[0].dns_window_s, 600);
	assert_int_equal(f.p->rules[0].dns_encoded, POLICY_ENCODED_REFUSE);
	assert_int_equal(f.p->rules[3].dns_budget, 0);	/* exact names: none */
	assert_int_equal(f.p->rules[3].dns_encoded, POLICY_ENCODED_OFF);
	assert_int_equal(filter(&f, ENC ".tun.example", S(1), rules, &n, &why),
			 DECIDE_DENY_ENCODED);
	assert_int_equal(n, 0);
	assert_true(why.encoded);
	assert_string_equal(budget_text(text, sizeof(text), DECIDE_DENY_ENCODED, &why),
			    "netd: refused as DNS tunnelling: a run of 48 characters looks "
			    "base32-encoded");
	assert_int_equal(budget_names(f.b), 0);	/* refused before the budget */

	/* A budget of 2 a minute: the third name is refused, with when to retry. */
	assert_int_equal(filter(&f, "a.small.example", S(10), rules, &n, &why), DECIDE_ALLOW);
	assert_int_equal(n, 1);
	assert_int_equal(filter(&f, "b.small.example", S(20), rules, &n, &why), DECIDE_ALLOW);
	assert_int_equal(filter(&f, "c.small.example", S(30), rules, &n, &why), DECIDE_DENY_BUDGET);
	assert_true(why.over && why.first_over);
	assert_string_equal(budget_text(text, sizeof(text), DECIDE_DENY_BUDGET, &why),
			    "netd: DNS name budget spent: 2 new names per 1m below *.small.example; "
			    "retry in 40s");
	assert_int_equal(filter(&f, "d.small.example", S(31), rules, &n, &why), DECIDE_DENY_BUDGET);
	assert_false(why.first_over);	/* logged once */
	/* Decided again (the answer): nothing new counted. */
	assert_int_equal(filter(&f, "a.small.example", S(32), rules, &n, &why), DECIDE_ALLOW);
	/* The exact rule under the wildcard keeps its name whatever the budget. */
	assert_int_equal(filter(&f, "exact.small.example", S(33), rules, &n, &why), DECIDE_ALLOW);
	assert_int_equal(n, 1);
	assert_int_equal(rules[0], 3);

	/* encoded: log: answered, reported. */
	assert_int_equal(filter(&f, ENC ".log.example", S(40), rules, &n, &why), DECIDE_ALLOW);
	assert_true(why.logged && !why.encoded);

	/* Two rules on one name: the spent one drops out, the other keeps it. */
	assert_int_equal(filter(&f, "a.both.example", S(50), rules, &n, &why), DECIDE_ALLOW);
	assert_int_equal(n, 2);
	assert_int_equal(filter(&f, "b.both.example", S(51), rules, &n, &why), DECIDE_ALLOW);
	assert_int_equal(n, 1);
	assert_int_equal(rules[0], 5);
	assert_int_equal(filter(&f, "c.both.example", S(52), rules, &n, &why), DECIDE_DENY_BUDGET);
	/* ... and an encoded name: rule 4 refuses it, rule 5 scores nothing: spent too. */
	assert_int_equal(filter(&f, ENC ".both.example", S(53), rules, &n, &why), DECIDE_DENY_ENCODED);
	fixture_down(&f);
}

/* The words of the refusals. */
/* The last names' scores are remembered (budget.c): whatever evicts whom,
 * every name gets its own verdict, an encoded one between many clean ones
 * (which share its memo slot now and then) and a name one character from
 * another. */
static void test_score_memo(void **state)
{
	struct fixture f;
	struct budget_why why;
	uint16_t rules[DECIDE_MAX_RULES];
	char name[64];
	size_t n;

	(void)state;
	fixture_up(&f);
	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "host%d.tun.example", i);
		assert_int_equal(filter(&f, name, S(1), rules, &n, &why), DECIDE_ALLOW);
		assert_int_equal(filter(&f, ENC ".tun.example", S(1), rules, &n, &why),
				 DECIDE_DENY_ENCODED);
		/* A prefix of the encoded run is still one, a short one is not. */
		assert_int_equal(filter(&f, ENC "x.tun.example", S(1), rules, &n, &why),
				 DECIDE_DENY_ENCODED);
		assert_int_equal(filter(&f, "mfrg.tun.example", S(1), rules, &n, &why),
				 DECIDE_ALLOW);
	}
	fixture_down(&f);
}

static void test_texts(void **state)
{
	struct budget_why why = { .full = true, .retry_s = 7 };
	char text[161], w[BUDGET_WINDOW_STRLEN];

	(void)state;
	assert_string_equal(budget_text(text, sizeof(text), DECIDE_DENY_BUDGET, &why),
			    "netd: this sandbox holds 4096 names under DNS budgets, the most; "
			    "retry in 7s");
	why = (struct budget_why){ .over = true, .names = 500, .window_s = 600, .retry_s = 3 };
	assert_string_equal(budget_text(text, sizeof(text), DECIDE_DENY_BUDGET, &why),
			    "netd: DNS name budget spent: 500 new names per 10m below this rule; "
			    "retry in 3s");
	why = (struct budget_why){ .score = { .why = TUNNEL_NAME, .shape = TUNNEL_HEX, .chars = 60 } };
	assert_string_equal(budget_text(text, sizeof(text), DECIDE_DENY_ENCODED, &why),
			    "netd: refused as DNS tunnelling: 60 ID-like characters in the name (hex)");
	assert_string_equal(budget_text(text, 10, DECIDE_DENY_ENCODED, &why), "netd: ref");
	assert_string_equal(budget_window_format(3600, w, sizeof(w)), "1h");
	assert_string_equal(budget_window_format(90, w, sizeof(w)), "90s");
	assert_string_equal(budget_window_format(120, w, sizeof(w)), "2m");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_score_corpus),
		cmocka_unit_test(test_score_encoders),
		cmocka_unit_test(test_score_iodine),
		cmocka_unit_test(test_score_why),
		cmocka_unit_test(test_siphash),
		cmocka_unit_test(test_counting),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_corpus_budget),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_score_memo),
		cmocka_unit_test(test_texts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
