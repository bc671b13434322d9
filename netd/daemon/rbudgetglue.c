/*
 * budgetglue - a rule's byte budget per sandbox (`budget: 1GB/day`,
 * docs/policies.md), the daemon's side.  The trail folds each byte
 * conntrack counts for a sandbox's flow once (netd/trail/trail.h); here
 * those bytes go to the counter of the rule that allowed the flow
 * (netd/model/rbudget.h).  When a counter reaches its budget the rule is
 * closed for that sandbox:
 *
 *   - its names no longer resolve there (the DNS decision's view of the
 *     policy leaves the rule out: policy_dns_view_masked()), so it makes
 *     no new pin;
 *   - the pins only its names held are removed (one nf_tables batch, as a
 *     reload removes a name), so no new connection reaches them;
 *   - live connections to them are cut (conntrack entries deleted,
 *     ctcut.h; their next packet meets the policy chain and is dropped);
 *   - a "budget" audit record, and the netd_rule_budget_* metrics.
 *
 * Other rules, and other sandboxes, are untouched.  When the window ends
 * (an hour or a day, UTC) the rule opens again.  Counters are kept in each
 * sandbox's state file (written on a timer when they changed, and at
 * shutdown), so a reload and a restart keep them.
 */
#include "netd/daemon/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "common/clock.h"
#include "common/log.h"
#include "dnsproxy/proxy.h"
#include "netd/common/metrics.h"
#include "netd/daemon/statefile.h"
#include "netd/fw.h"
#include "netd/model/rbudget.h"
#include "netd/model/pinreg.h"
#include "netd/trail/audit.h"
#include "netd/trail/ctcut.h"
#include "netd/trail/ctmsg.h"

#define BUDGET_TICK_S 5	/* windows checked this often */
#define BUDGET_SAVE_TICKS 12	/* changed counters saved every 12 ticks (a minute): each save
				 * is a state file written and fsync()ed, and at 1,000 busy
				 * sandboxes every 5 s would be 200 a second */

static int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

/*
 * The rule of @p that allowed a connection to @f's destination opened
 * under @name: the first that matches the name on the flow's protocol and
 * port and is open (a closed rule's names do not resolve, so a connection
 * made since came through another), else the first that matches.
 * Return: its index; -1 (no name: opened by address, or before netd's
 * restart; a CIDR rule, which has no budget).
 */
static int rule_of(const struct policy *p, const struct rbudget_set *bs,
		   const struct ct_flow *f, const char *name)
{
	uint16_t idx[POLICY_MAX_RULES];
	size_t n;
	int first = -1;

	if (!p || !name || !*name || strchr(name, '/'))
		return -1;
	n = policy_match(p, name, idx, POLICY_MAX_RULES);
	for (size_t i = 0; i < n && i < POLICY_MAX_RULES; i++) {
		if (!policy_rule_port(&p->rules[idx[i]], f->proto, f->dport))
			continue;
		if (!rbudget_closed(bs, idx[i]))
			return idx[i];
		if (first < 0)
			first = idx[i];
	}
	return first;
}

/* One "budget" audit record and log line: rule @c of @sb @action ("closed", "opened"). */
static void budget_record(struct daemon *d, const struct sandbox *sb,
			  const struct rbudget_counter *c, const char *action, size_t pins,
			  int conns)
{
	char b[POLICY_BUDGET_STRLEN];
	json_t *rec;

	policy_budget_format(c->limit, c->period_s, b, sizeof(b));
	log_info("sandbox %s: rule \"%s\" of policy %s %s: %llu of %s used (%zu pins removed, "
		 "%d connections cut)", sb->name, c->key, sb->policy, action,
		 (unsigned long long)c->used, b, pins, conns);
	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I}", "sandbox", sb->name,
			"policy", sb->policy, "rule", c->key, "action", action, "budget", b,
			"budget_bytes", (json_int_t)c->limit, "used_bytes",
			(json_int_t)(c->used > INT64_MAX ? INT64_MAX : c->used), "window_start",
			(json_int_t)c->window_s, "window_end",
			(json_int_t)(c->window_s + c->period_s));
	if (rec && strcmp(action, "closed") == 0)
		json_object_update_new(rec, json_pack("{s:I, s:I}", "pins_removed", (json_int_t)pins,
						      "connections_cut", (json_int_t)conns));
	audit_write(d->audit, "budget", rec);
}

/*
 * Refuse what @sb's closed rules allowed: the pins no open rule holds
 * are removed from the kernel (one batch, the way a reload removes a
 * name) and from the registry, and live connections to them cut.
 * *@n_pins, *@n_conns: how many.  Return: 0; -errno (logged).
 */
static int enforce(struct daemon *d, struct sandbox *sb, const struct policy *pol,
		   size_t *n_pins, int *n_conns)
{
	size_t cap = pinreg_count_of(d->pins, sb->name), nk = 0, nc = 0;
	struct pin *keep = calloc(cap ? cap : 1, sizeof(*keep));
	struct pinreg_cut *cut = calloc(cap ? cap : 1, sizeof(*cut));
	struct fw_sandbox fv;
	int r;

	*n_pins = 0;
	*n_conns = 0;
	if (!keep || !cut) {
		r = -ENOMEM;
		goto out;
	}
	r = pinreg_split_off(d->pins, sb->name, pol, sb->budgets->off, clock_mono_ms(), keep, cap,
			     &nk, cut, cap, &nc);
	if (r < 0 || nc == 0)
		goto out;
	daemon_fw_view(sb, &fv);
	r = fw_sandboxes_update(d->fw, &(struct fw_update){ .sb = &fv, .pol = pol,
			      .replace_pins = true, .pins = keep, .n_pins = nk }, 1);
	if (r < 0) {
		log_err("sandbox %s: cannot remove the pins of a rule whose budget is spent: %s",
			sb->name, fw_last_error(d->fw));
		goto out;
	}
	pinreg_drop(d->pins, sb->name, cut, nc);
	proxy_sandbox_reset(d->proxy, sb->name);	/* it re-pins on the next answer */
	*n_pins = nc;
	for (int f = 0; f < 2 && !d->box; f++) {	/* a box has no conntrack */
		const struct addr *src = f == 0 ? &sb->addr4 : &sb->addr6;
		int k;

		if (!src->family)
			continue;
		k = ctcut_run(src, cut, nc);
		if (k < 0)
			log_warn("sandbox %s: cannot cut the connections of a rule whose budget is "
				 "spent: %s", sb->name, k == -EBUSY ? "the kernel refuses to delete "
				 "entries offloaded to the flowtable (set dataplane.flowtable: false)" :
				 strerror(-k));
		else
			*n_conns += k;
	}
out:
	free(keep);
	free(cut);
	return r;
}

/* @sb's state file, now (a rule closed or opened). */
static void save_now(struct daemon *d, struct sandbox *sb)
{
	int r = daemon_state_save(d, sb);

	if (r < 0)
		log_warn("sandbox %s: cannot save its budget counters: %s", sb->name, strerror(-r));
	else if (sb->budgets)
		sb->budgets->dirty = false;
}

/* Rule @c of @sb just closed: refuse it (enforce mode) and say so. */
static void close_rule(struct daemon *d, struct sandbox *sb, const struct rbudget_counter *c)
{
	const struct policy *pol = daemon_policy_find(d, sb->policy);
	size_t pins = 0;
	int conns = 0;

	d->budget_closures++;
	/* Audit mode denies nothing: the record says what enforce would have closed. */
	if (pol && !fw_mode_audit(sb->mode, pol) && d->fw)
		enforce(d, sb, pol, &pins, &conns);
	budget_record(d, sb, c, fw_mode_audit(sb->mode, pol) ? "exceeded" : "closed", pins,
		      conns);
	save_now(d, sb);	/* a restart must find it closed */
}

void daemon_budget_bytes(void *ctx, const struct sandbox *csb, const struct ct_flow *f,
			 const char *domain, uint64_t bytes)
{
	struct daemon *d = ctx;
	struct sandbox *sb = sandbox_find(d->sandboxes, csb->name);
	const struct policy *pol;
	int rule;

	if (!sb || !sb->budgets)
		return;
	pol = daemon_policy_find(d, sb->policy);
	rule = rule_of(pol, sb->budgets, f, domain);
	if (rule >= 0 && rbudget_add(sb->budgets, (uint16_t)rule, bytes, now_s()) == 1)
		close_rule(d, sb, rbudget_of(sb->budgets, (uint16_t)rule));
}

/* Was the counter of @key and @period_s closed in @bs (a copy from before a sync)? */
static bool was_closed(const struct rbudget_set *bs, const char *key, uint32_t period_s)
{
	for (size_t i = 0; bs && i < bs->n; i++)
		if (bs->c[i].spent && bs->c[i].period_s == period_s &&
		    strcmp(bs->c[i].key, key) == 0)
			return true;
	return false;
}

/*
 * @sb's counters for its policy now (a reload, a restart's @saved), then
 * whatever that closed refused and what it opened said.  Return: 0; -ENOMEM.
 */
static int sync_one(struct daemon *d, struct sandbox *sb, const struct policy *pol,
		    const struct rbudget_saved *saved, size_t n_saved, bool quiet)
{
	struct rbudget_set *old = NULL;
	bool closed_now = false;
	int r;

	/* A copy of the old closed set: rbudget_sync() frees it. */
	if (sb->budgets) {
		size_t sz = sizeof(*old) + sb->budgets->n * sizeof(old->c[0]);

		old = malloc(sz);
		if (!old)
			return -ENOMEM;
		memcpy(old, sb->budgets, sz);
	}
	r = rbudget_sync(&sb->budgets, pol, now_s(), saved, n_saved);
	for (size_t i = 0; r == 0 && sb->budgets && i < sb->budgets->n; i++) {
		const struct rbudget_counter *c = &sb->budgets->c[i];
		bool was = was_closed(old, c->key, c->period_s);

		closed_now |= c->spent && !was;
		if (!quiet && c->spent != was)
			budget_record(d, sb, c, c->spent ? "closed" : "opened", 0, 0);
	}
	free(old);
	/* A reload that closed a rule (a lower budget) refuses it as a count would. */
	if (r == 0 && closed_now && !quiet && pol && !fw_mode_audit(sb->mode, pol) && d->fw) {
		size_t pins;
		int conns;

		enforce(d, sb, pol, &pins, &conns);
	}
	return r;
}

int daemon_budget_init(struct daemon *d, struct sandbox *sb, const struct policy *pol)
{
	return sync_one(d, sb, pol, NULL, 0, true);
}

void daemon_budget_restore(struct daemon *d, struct sandbox *sb, const struct policy *pol,
			   const struct statefile *sf)
{
	struct rbudget_saved saved[POLICY_BUDGET_RULES];

	for (size_t i = 0; i < sf->n_budgets && i < POLICY_BUDGET_RULES; i++)
		saved[i] = (struct rbudget_saved){ .key = sf->budgets[i].rule,
						  .period_s = sf->budgets[i].period_s,
						  .window_s = sf->budgets[i].window_s,
						  .used = sf->budgets[i].used };
	if (sync_one(d, sb, pol, saved, sf->n_budgets, true) < 0)
		log_err("sandbox %s: out of memory for its budgets; they count from 0", sb->name);
}

void daemon_budget_sync_all(struct daemon *d)
{
	uint32_t cur = 0;
	struct sandbox *sb;

	while ((sb = sandbox_next(d->sandboxes, &cur)))
		if (sync_one(d, sb, daemon_policy_find(d, sb->policy), NULL, 0, false) < 0)
			log_err("sandbox %s: out of memory for its budgets", sb->name);
}

/* Save the state file of every sandbox whose counters changed. */
static void save_dirty(struct daemon *d)
{
	uint32_t cur = 0;
	struct sandbox *sb;

	while ((sb = sandbox_next(d->sandboxes, &cur))) {
		int r;

		if (!sb->budgets || !sb->budgets->dirty)
			continue;
		r = daemon_state_save(d, sb);
		if (r < 0)
			log_warn("sandbox %s: cannot save its budget counters: %s", sb->name,
				 strerror(-r));
		else
			sb->budgets->dirty = false;
	}
}

/*
 * Every BUDGET_TICK_S: windows that ended open their rules again (saved at
 * once); every BUDGET_SAVE_TICKS, the counters that changed are saved.
 */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	static unsigned int ticks;
	struct daemon *d = arg;
	uint32_t cur = 0;
	struct sandbox *sb;

	(void)fd;
	(void)what;
	while ((sb = sandbox_next(d->sandboxes, &cur))) {
		bool closed[POLICY_BUDGET_RULES];

		if (!sb->budgets)
			continue;
		for (size_t i = 0; i < sb->budgets->n; i++)
			closed[i] = sb->budgets->c[i].spent;
		if (!rbudget_roll(sb->budgets, now_s()))
			continue;
		for (size_t i = 0; i < sb->budgets->n; i++)
			if (closed[i] && !sb->budgets->c[i].spent)
				budget_record(d, sb, &sb->budgets->c[i], "opened", 0, 0);
		save_now(d, sb);
	}
	if (++ticks % BUDGET_SAVE_TICKS == 0)
		save_dirty(d);
}

int daemon_budget_start(struct daemon *d)
{
	struct timeval tv = { BUDGET_TICK_S, 0 };

	d->budget_tick = event_new(d->base, -1, EV_PERSIST, on_tick, d);
	if (!d->budget_tick || event_add(d->budget_tick, &tv) < 0)
		return -ENOMEM;
	return 0;
}

void daemon_budget_stop(struct daemon *d)
{
	if (d->budget_tick)
		event_free(d->budget_tick);
	d->budget_tick = NULL;
	if (d->sandboxes)
		save_dirty(d);
}

struct decide_policy daemon_budget_dns_view(struct sandbox *sb, const struct policy *pol)
{
	/* Audit mode closes nothing (the budget record says "exceeded"). */
	if (!sb->budgets || !rbudget_any_closed(sb->budgets) || fw_mode_audit(sb->mode, pol))
		return policy_dns_view(pol);
	sb->budgets->dns = (struct policy_dns_masked){ .p = pol, .off = sb->budgets->off };
	return policy_dns_view_masked(&sb->budgets->dns);
}

json_t *daemon_budget_json(const struct sandbox *sb)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && sb->budgets && i < sb->budgets->n; i++) {
		const struct rbudget_counter *c = &sb->budgets->c[i];
		char b[POLICY_BUDGET_STRLEN];

		json_array_append_new(arr, json_pack(
			"{s:s, s:i, s:s, s:I, s:I, s:I, s:b, s:I, s:I}", "rule", c->key,
			"rule_index", (int)c->rule, "budget",
			policy_budget_format(c->limit, c->period_s, b, sizeof(b)), "budget_bytes",
			(json_int_t)c->limit, "used_bytes",
			(json_int_t)(c->used > INT64_MAX ? INT64_MAX : c->used), "left_bytes",
			(json_int_t)(c->used >= c->limit ? 0 : c->limit - c->used), "closed", c->spent,
			"window_start", (json_int_t)c->window_s, "window_end",
			(json_int_t)(c->window_s + c->period_s)));
	}
	return arr;
}

void daemon_budget_metrics(struct daemon *d, FILE *out)
{
	static const char *const fam[][3] = {
		{ "netd_rule_budget_bytes", "gauge", "A rule's byte budget per window (budget:)." },
		{ "netd_rule_budget_used_bytes", "gauge",
		  "Bytes of the rule's connections in the current window (conntrack's counters)." },
		{ "netd_rule_budget_closed", "gauge",
		  "1 while the rule is closed for the sandbox: its budget is spent." },
		{ "netd_rule_budget_exceeded_total", "counter",
		  "Windows in which the rule's budget was spent, since netd started." },
	};

	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		uint32_t cur = 0;
		struct sandbox *sb;

		metrics_family(out, fam[f][0], fam[f][1], fam[f][2]);
		while ((sb = sandbox_next(d->sandboxes, &cur))) {
			for (size_t i = 0; sb->budgets && i < sb->budgets->n; i++) {
				const struct rbudget_counter *c = &sb->budgets->c[i];
				const char *l[] = { "sandbox", sb->name, "rule", c->key, NULL };

				metrics_u64(out, fam[f][0], l, f == 0 ? c->limit : f == 1 ? c->used :
					    f == 2 ? c->spent : c->exceeded);
			}
		}
	}
}
