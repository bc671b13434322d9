/*
 * test_fjudge - what another table's forward-hook chain does to a
 * sandbox's packet (netd/fw/fjudge.c): interface conditions against the
 * "nd" + 5 hex digits pattern and the egress name, unknown conditions,
 * jumps, gotos, returns, policies; Docker's FORWARD with and without the
 * DOCKER-USER fix, half a fix, firewalld's final reject, a loop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "netd/fw/fjudge.h"

static const struct fj_packet egress = { .iifname = NULL, .oifname = "eth0" };
static const struct fj_packet reply = { .iifname = "eth0", .oifname = NULL };

/* A cmp of @len bytes of @name on @field. */
static struct fj_match m_if(uint8_t field, const char *name, uint8_t len, bool neq)
{
	struct fj_match m = { .field = field, .neq = neq, .len = len };

	memcpy(m.name, name, strnlen(name, sizeof(m.name)));
	return m;
}

static struct fj_rule rule(uint8_t verdict, const char *target)
{
	struct fj_rule r = { .verdict = verdict };

	if (target)
		strcpy(r.target, target);
	return r;
}

static struct fj_rule rule_if(uint8_t field, const char *prefix, uint8_t verdict)
{
	struct fj_rule r = rule(verdict, NULL);

	r.m[0] = m_if(field, prefix, (uint8_t)strlen(prefix), false);	/* "nd*": 2 bytes */
	r.n_m = 1;
	return r;
}

static void test_match_pattern(void **state)
{
	struct fj_match m;

	(void)state;
	m = m_if(FJ_IIFNAME, "nd", 2, false);	/* iptables' -i nd+ */
	assert_int_equal(fj_match_eval(&m, &egress), 1);
	assert_int_equal(fj_match_eval(&m, &reply), 0);	/* eth0 is not nd* */
	m = m_if(FJ_IIFNAME, "nd00a", 5, false);	/* some sandboxes only */
	assert_int_equal(fj_match_eval(&m, &egress), -1);
	m = m_if(FJ_IIFNAME, "ndx", 3, false);	/* x is no hex digit */
	assert_int_equal(fj_match_eval(&m, &egress), 0);
	m = m_if(FJ_IIFNAME, "nd0000", 7, false);	/* "nd0000\0": six bytes and the end */
	assert_int_equal(fj_match_eval(&m, &egress), 0);
	m = m_if(FJ_IIFNAME, "docker0", 8, false);
	assert_int_equal(fj_match_eval(&m, &egress), 0);
	m = m_if(FJ_IIFNAME, "docker0", 8, true);	/* ! -i docker0 */
	assert_int_equal(fj_match_eval(&m, &egress), 1);
	m = m_if(FJ_OIFNAME, "eth0", 5, false);	/* exact, with its NUL */
	assert_int_equal(fj_match_eval(&m, &egress), 1);
	m = m_if(FJ_OIFNAME, "eth", 3, false);	/* eth* */
	assert_int_equal(fj_match_eval(&m, &egress), 1);
	m = m_if(FJ_OIFNAME, "eth0", 4, false);
	assert_int_equal(fj_match_eval(&m, &egress), 1);
	m = m_if(FJ_OIFNAME, "eth1", 5, false);
	assert_int_equal(fj_match_eval(&m, &egress), 0);
	m = m_if(FJ_OIFNAME, "nd", 2, true);	/* != "nd*" for a sandbox: surely not */
	assert_int_equal(fj_match_eval(&m, &reply), 0);
}

/* iptables -P FORWARD DROP, nothing else: both ways dropped. */
static void test_policy_drop(void **state)
{
	struct fj_chain c[] = { { .name = "FORWARD", .base = true, .policy_drop = true } };
	struct fj_table t = { c, 1 };

	(void)state;
	assert_int_equal(fj_judge(&t, "FORWARD", &egress), FJ_DROPS);
	assert_int_equal(fj_judge(&t, "FORWARD", &reply), FJ_DROPS);
	c[0].policy_drop = false;
	assert_int_equal(fj_judge(&t, "FORWARD", &egress), FJ_PASSES);
	assert_int_equal(fj_judge(&t, "nothere", &egress), FJ_PASSES);
}

/* Docker 20.10's filter table, and the DOCKER-USER fix. */
static void test_docker(void **state)
{
	struct fj_rule fwd[6], user[3], iso1[2], iso2[2];
	struct fj_chain c[] = {
		{ .name = "FORWARD", .base = true, .policy_drop = true, .rules = fwd, .n_rules = 6 },
		{ .name = "DOCKER-USER", .rules = user, .n_rules = 1 },
		{ .name = "DOCKER-ISOLATION-STAGE-1", .rules = iso1, .n_rules = 2 },
		{ .name = "DOCKER-ISOLATION-STAGE-2", .rules = iso2, .n_rules = 2 },
		{ .name = "DOCKER" },
	};
	struct fj_table t = { c, 5 };

	(void)state;
	fwd[0] = rule(FJ_JUMP, "DOCKER-USER");
	fwd[1] = rule(FJ_JUMP, "DOCKER-ISOLATION-STAGE-1");
	/* -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT */
	fwd[2] = rule_if(FJ_OIFNAME, "docker0", FJ_ACCEPT);
	fwd[2].m[0].len = 8;
	fwd[2].unknown = true;
	fwd[3] = rule_if(FJ_OIFNAME, "docker0", FJ_JUMP);
	fwd[3].m[0].len = 8;
	strcpy(fwd[3].target, "DOCKER");
	fwd[4] = rule_if(FJ_IIFNAME, "docker0", FJ_ACCEPT);	/* -i docker0 ! -o docker0 */
	fwd[4].m[0].len = 8;
	fwd[4].m[1] = m_if(FJ_OIFNAME, "docker0", 8, true);
	fwd[4].n_m = 2;
	fwd[5] = rule_if(FJ_IIFNAME, "docker0", FJ_ACCEPT);
	fwd[5].m[0].len = 8;
	user[0] = rule(FJ_RETURN, NULL);
	iso1[0] = rule_if(FJ_IIFNAME, "docker0", FJ_JUMP);
	iso1[0].m[0].len = 8;
	strcpy(iso1[0].target, "DOCKER-ISOLATION-STAGE-2");
	iso1[1] = rule(FJ_RETURN, NULL);
	iso2[0] = rule_if(FJ_OIFNAME, "docker0", FJ_DROP);
	iso2[0].m[0].len = 8;
	iso2[1] = rule(FJ_RETURN, NULL);

	/* As dockerd leaves it: everything of netd's dropped. */
	assert_int_equal(fj_judge(&t, "FORWARD", &egress), FJ_DROPS);
	assert_int_equal(fj_judge(&t, "FORWARD", &reply), FJ_DROPS);
	/* Half the fix: -i nd+ only; replies still dropped. */
	user[0] = rule_if(FJ_IIFNAME, "nd", FJ_ACCEPT);
	user[1] = rule(FJ_RETURN, NULL);
	c[1].n_rules = 2;
	assert_int_equal(fj_judge(&t, "FORWARD", &egress), FJ_PASSES);
	assert_int_equal(fj_judge(&t, "FORWARD", &reply), FJ_DROPS);
	/* The whole fix. */
	user[1] = rule_if(FJ_OIFNAME, "nd", FJ_ACCEPT);
	user[2] = rule(FJ_RETURN, NULL);
	c[1].n_rules = 3;
	assert_int_equal(fj_judge(&t, "FORWARD", &egress), FJ_PASSES);
	assert_int_equal(fj_judge(&t, "FORWARD", &reply), FJ_PASSES);
}

/* ct state established accept, then policy drop: netd cannot tell. */
static void test_unknown(void **state)
{
	struct fj_rule r[2];
	struct fj_chain c[] = { { .name = "fwd", .base = true, .policy_drop = true, .rules = r, .n_rules = 1 } };
	struct fj_table t = { c, 1 };

	(void)state;
	r[0] = rule(FJ_ACCEPT, NULL);
	r[0].unknown = true;
	assert_int_equal(fj_judge(&t, "fwd", &egress), FJ_MAY_DROP);
	/* An unknown drop under an accept policy: may drop. */
	c[0].policy_drop = false;
	r[0].verdict = FJ_DROP;
	assert_int_equal(fj_judge(&t, "fwd", &egress), FJ_MAY_DROP);
	/* A drop of netd's interfaces outright, before any accept. */
	r[0] = rule_if(FJ_IIFNAME, "nd", FJ_DROP);
	r[1] = rule(FJ_ACCEPT, NULL);
	c[0].n_rules = 2;
	assert_int_equal(fj_judge(&t, "fwd", &egress), FJ_DROPS);
	assert_int_equal(fj_judge(&t, "fwd", &reply), FJ_PASSES);
	/* A verdict netd cannot tell (a queue, a vmap). */
	r[0] = rule(FJ_ANY, NULL);
	c[0].n_rules = 1;
	assert_int_equal(fj_judge(&t, "fwd", &egress), FJ_MAY_DROP);
}

/* firewalld: policy accept, jumps, and a final reject; a goto; a loop. */
static void test_flow(void **state)
{
	struct fj_rule base[3], zone[1], sub[1];
	struct fj_chain c[] = {
		{ .name = "filter_FORWARD", .base = true, .rules = base, .n_rules = 3 },
		{ .name = "zone", .rules = zone, .n_rules = 1 },
		{ .name = "sub", .rules = sub, .n_rules = 1 },
	};
	struct fj_table t = { c, 3 };

	(void)state;
	base[0] = rule(FJ_JUMP, "zone");
	base[1] = rule(FJ_DROP, NULL);	/* reject with icmpx admin-prohibited */
	base[2] = rule(FJ_ACCEPT, NULL);
	zone[0] = rule(FJ_CONTINUE, NULL);	/* a counter */
	assert_int_equal(fj_judge(&t, "filter_FORWARD", &egress), FJ_DROPS);
	zone[0] = rule_if(FJ_IIFNAME, "nd", FJ_GOTO);
	strcpy(zone[0].target, "sub");
	sub[0] = rule(FJ_ACCEPT, NULL);
	assert_int_equal(fj_judge(&t, "filter_FORWARD", &egress), FJ_PASSES);
	assert_int_equal(fj_judge(&t, "filter_FORWARD", &reply), FJ_DROPS);
	/* A goto's return returns from the chain that went there: to base, then the reject. */
	sub[0] = rule(FJ_RETURN, NULL);
	assert_int_equal(fj_judge(&t, "filter_FORWARD", &egress), FJ_DROPS);
	/* A loop (nft refuses them; a judge must not hang on one): either outcome. */
	sub[0] = rule(FJ_JUMP, "zone");
	assert_int_equal(fj_judge(&t, "filter_FORWARD", &egress), FJ_MAY_DROP);
	/* A jump to a chain that is not there: either outcome. */
	base[0] = rule(FJ_JUMP, "gone");
	assert_int_equal(fj_judge(&t, "filter_FORWARD", &egress), FJ_MAY_DROP);
	/* "return" in a base chain: its policy. */
	base[0] = rule(FJ_RETURN, NULL);
	assert_int_equal(fj_judge(&t, "filter_FORWARD", &egress), FJ_PASSES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_pattern),
		cmocka_unit_test(test_policy_drop),
		cmocka_unit_test(test_docker),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_flow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
