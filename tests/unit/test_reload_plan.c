/*
 * test_reload_plan - a reload's plan over memory (no nf_tables): only
 * sandboxes whose policy changed are in it; the pins a new policy still
 * allows are kept and the rest cut; added/removed items are what the
 * reload reports, and so are the limits that changed (rates, budgets: no
 * rule changes, yet the sandbox is in the plan); a sandbox whose policy
 * file is gone gets deny-all (fail closed); no room for that deny-all
 * rejects the whole plan.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netd/daemon/reload_plan.h"

static struct policy *pol(const char *yaml)
{
	struct policy *p = NULL;
	struct diag err = { 0 };

	assert_int_equal(policy_parse(yaml, strlen(yaml), "t.yaml", &p, &err), 0);
	return p;
}

#define P_OLD "name: web\negress:\n  - domains: [a.example, b.example]\n    ports: [443]\n"
#define P_NEW "name: web\negress:\n  - domains: [a.example]\n    ports: [443]\n  - cidrs: [198.51.100.0/24]\n    ports: [80]\n"
#define P_OTHER "name: other\negress:\n  - domains: [c.example]\n    ports: [443]\n"

struct world {
	struct sandbox_table *t;
	struct pinreg *pins;
	struct policy *old[2];
	struct reload_input in;
};

static void sandbox_add(struct world *w, const char *name, const char *policy)
{
	struct sandbox *sb;

	assert_int_equal(sandbox_alloc(w->t, name, -1, &sb), 0);
	snprintf(sb->policy, sizeof(sb->policy), "%s", policy);
	sandbox_insert(w->t, sb);
}

static void pin(struct world *w, const char *sandbox, const char *qname, const char *addr)
{
	struct pin p = { .proto = IPPROTO_TCP, .port = 443, .timeout_ms = 60000 };

	assert_int_equal(addr_parse(addr, &p.addr), 0);
	assert_int_equal(pinreg_note(w->pins, sandbox, qname, &p, 1, 1000), 0);
}

static int setup(void **state)
{
	static struct world w;
	struct prefix pool4, pool6 = { 0 };

	memset(&w, 0, sizeof(w));
	assert_int_equal(prefix_parse("10.87.0.0/16", &pool4), 0);
	assert_int_equal(sandbox_table_new(&pool4, &pool6, &w.t), 0);
	assert_int_equal(pinreg_new(&w.pins), 0);
	w.old[0] = pol(P_OLD);
	w.old[1] = pol(P_OTHER);
	sandbox_add(&w, "sb-web", "web");
	sandbox_add(&w, "sb-other", "other");
	pin(&w, "sb-web", "a.example", "192.0.2.1");
	pin(&w, "sb-web", "b.example", "192.0.2.2");
	w.in = (struct reload_input){ .sandboxes = w.t, .old = (const struct policy *const *)w.old,
				      .n_old = 2, .pins = w.pins, .now_ms = 2000,
				      .max_policies = 16 };
	*state = &w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	sandbox_table_free(w->t);
	pinreg_free(w->pins);
	policy_free(w->old[0]);
	policy_free(w->old[1]);
	return 0;
}

static bool has_item(json_t *arr, const char *item)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (strcmp(json_string_value(v), item) == 0)
			return true;
	return false;
}

static void test_unchanged(void **state)
{
	struct world *w = *state;
	struct policy *newp[2] = { pol(P_OLD), pol(P_OTHER) };
	struct reload_plan plan;
	char err[256] = "";

	assert_int_equal(reload_plan_build(&w->in, newp, 2, &plan, err, sizeof(err)), 0);
	assert_int_equal(plan.n_changes, 0);
	assert_int_equal(plan.n_policies, 2);
	reload_plan_free(&plan);
}

static void test_changed(void **state)
{
	struct world *w = *state;
	struct policy *newp[2] = { pol(P_NEW), pol(P_OTHER) };
	struct reload_plan plan;
	const struct reload_change *c;
	char err[256] = "", a[ADDR_STRLEN];

	assert_int_equal(reload_plan_build(&w->in, newp, 2, &plan, err, sizeof(err)), 0);
	assert_int_equal(plan.n_changes, 1);
	c = &plan.changes[0];
	assert_string_equal(c->sb->name, "sb-web");
	assert_false(c->deny_all);
	assert_int_equal(c->n_keep, 1);
	assert_string_equal(addr_format(&c->keep[0].addr, a, sizeof(a)), "192.0.2.1");
	assert_int_equal(c->keep[0].timeout_ms, 59000);	/* remaining lifetime at now_ms */
	assert_int_equal(c->n_cut, 1);
	assert_string_equal(c->cut[0].qname, "b.example");
	assert_true(has_item(c->removed, "b.example tcp/443"));
	assert_true(has_item(c->added, "198.51.100.0/24 tcp/80"));
	assert_false(has_item(c->added, "a.example tcp/443"));
	reload_plan_free(&plan);
	reload_plan_free(&plan);	/* idempotent */
}

/* Only limits.connections differs: the sandbox is re-rendered (its new ct count rule), pins kept. */
static void test_conn_limit_changed(void **state)
{
	struct world *w = *state;
	struct policy *newp[2] = { pol(P_OLD "limits: { connections: 64 }\n"), pol(P_OTHER) };
	struct reload_plan plan;
	char err[256] = "";

	assert_int_equal(reload_plan_build(&w->in, newp, 2, &plan, err, sizeof(err)), 0);
	assert_int_equal(plan.n_changes, 1);
	assert_string_equal(plan.changes[0].sb->name, "sb-web");
	assert_int_equal(plan.changes[0].pol->max_conns, 64);
	assert_int_equal(plan.changes[0].n_keep, 2);
	assert_int_equal(plan.changes[0].n_cut, 0);
	assert_true(plan.changes[0].rules);
	assert_true(has_item(plan.changes[0].limits, "connections: netd.yaml's -> 64"));
	reload_plan_free(&plan);
}

/*
 * Only limits.bandwidth differs: no rule changes, yet the sandbox's rates do,
 * so the reload reports it (what changed), without touching its pins.
 */
static void test_bw_changed(void **state)
{
	struct world *w = *state;
	struct policy *newp[2] = {
		pol(P_OLD "limits: { bandwidth: { egress: 10mbit, ingress: 4mbit } }\n"),
		pol(P_OTHER) };
	struct reload_plan plan;
	const struct reload_change *c;
	struct sandbox *own;
	char err[256] = "";

	/* A sandbox with its own egress rate (create's --egress-rate): only ingress moves. */
	sandbox_add(w, "sb-own", "web");
	own = sandbox_find(w->t, "sb-own");
	own->bw_egress_bps = 5000000;
	assert_int_equal(reload_plan_build(&w->in, newp, 2, &plan, err, sizeof(err)), 0);
	assert_int_equal(plan.n_changes, 2);
	c = &plan.changes[0];
	assert_string_equal(c->sb->name, "sb-web");
	assert_false(c->rules);		/* nothing for nf_tables */
	assert_int_equal(c->n_keep, 2);
	assert_int_equal(c->n_cut, 0);
	assert_int_equal(json_array_size(c->added), 0);
	assert_int_equal(json_array_size(c->removed), 0);
	assert_int_equal(json_array_size(c->limits), 2);
	assert_true(has_item(c->limits, "bandwidth egress: unlimited -> 10mbit"));
	assert_true(has_item(c->limits, "bandwidth ingress: unlimited -> 4mbit"));
	c = &plan.changes[1];
	assert_string_equal(c->sb->name, "sb-own");
	assert_int_equal(json_array_size(c->limits), 1);
	assert_true(has_item(c->limits, "bandwidth ingress: unlimited -> 4mbit"));
	reload_plan_free(&plan);

	/* 4mbit -> 20mbit, and egress taken off */
	policy_free(w->old[0]);
	w->old[0] = pol(P_OLD "limits: { bandwidth: { egress: 10mbit, ingress: 4mbit } }\n");
	newp[0] = pol(P_OLD "limits: { bandwidth: { ingress: 20mbit } }\n");
	newp[1] = pol(P_OTHER);
	assert_int_equal(reload_plan_build(&w->in, newp, 2, &plan, err, sizeof(err)), 0);
	assert_int_equal(plan.n_changes, 2);
	c = &plan.changes[0];
	assert_true(has_item(c->limits, "bandwidth egress: 10mbit -> unlimited"));
	assert_true(has_item(c->limits, "bandwidth ingress: 4mbit -> 20mbit"));
	c = &plan.changes[1];
	assert_int_equal(json_array_size(c->limits), 1);	/* its own egress stays */
	assert_true(has_item(c->limits, "bandwidth ingress: 4mbit -> 20mbit"));
	reload_plan_free(&plan);
}

/* Only a rule's budget differs: reported as a change too. */
static void test_budget_changed(void **state)
{
	struct world *w = *state;
	struct policy *newp[2] = {
		pol("name: web\negress:\n  - domains: [a.example, b.example]\n    ports: [443]\n"
		    "    budget: 1MB/hour\n"),
		pol(P_OTHER) };
	struct reload_plan plan;
	char err[256] = "";

	assert_int_equal(reload_plan_build(&w->in, newp, 2, &plan, err, sizeof(err)), 0);
	assert_int_equal(plan.n_changes, 1);
	assert_string_equal(plan.changes[0].sb->name, "sb-web");
	assert_false(plan.changes[0].rules);
	assert_int_equal(json_array_size(plan.changes[0].limits), 1);
	assert_true(has_item(plan.changes[0].limits, "budget a.example tcp: none -> 1MB/hour"));
	reload_plan_free(&plan);

	/* changed, and taken off: one line per counter key */
	policy_free(w->old[0]);
	w->old[0] = pol("name: web\negress:\n  - domains: [a.example]\n    ports: [443]\n"
			"    budget: 1MB/hour\n  - domains: [b.example]\n    ports: [443]\n"
			"    budget: 5GB/day\n");
	newp[0] = pol("name: web\negress:\n  - domains: [a.example]\n    ports: [443]\n"
		      "    budget: 2MB/day\n  - domains: [b.example]\n    ports: [443]\n");
	newp[1] = pol(P_OTHER);
	assert_int_equal(reload_plan_build(&w->in, newp, 2, &plan, err, sizeof(err)), 0);
	assert_int_equal(plan.n_changes, 1);
	assert_int_equal(json_array_size(plan.changes[0].limits), 2);
	assert_true(has_item(plan.changes[0].limits, "budget a.example tcp: 1MB/hour -> 2MB/day"));
	assert_true(has_item(plan.changes[0].limits, "budget b.example tcp: 5GB/day -> none"));
	reload_plan_free(&plan);
}

static void test_gone_is_deny_all(void **state)
{
	struct world *w = *state;
	struct policy *newp[1] = { pol(P_OLD) };	/* "other" is gone */
	struct reload_plan plan;
	struct policy **set;
	char err[256] = "";
	size_t n;

	assert_int_equal(reload_plan_build(&w->in, newp, 1, &plan, err, sizeof(err)), 0);
	assert_int_equal(plan.n_changes, 1);
	assert_string_equal(plan.changes[0].sb->name, "sb-other");
	assert_true(plan.changes[0].deny_all);
	assert_int_equal(plan.changes[0].pol->n_rules, 0);
	assert_true(has_item(plan.changes[0].removed, "c.example tcp/443"));
	set = reload_plan_take_policies(&plan, &n);
	assert_int_equal(n, 2);	/* the new one and the deny-all stand-in */
	assert_null(plan.policies);
	for (size_t i = 0; i < n; i++)
		policy_free(set[i]);
	free(set);
	reload_plan_free(&plan);
}

static void test_no_room_rejects_all(void **state)
{
	struct world *w = *state;
	struct policy *newp[1] = { pol(P_OLD) };
	struct reload_plan plan;
	char err[256] = "";

	w->in.max_policies = 1;	/* no room for "other"'s deny-all */
	assert_true(reload_plan_build(&w->in, newp, 1, &plan, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "deny-all"));
	reload_plan_free(&plan);	/* frees the taken policies too (ASan checks) */
	w->in.max_policies = 16;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unchanged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conn_limit_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bw_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_is_deny_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_room_rejects_all, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
