/*
 * fw_golden - a line-driven driver for netd/fw.c, used by the golden ruleset
 * test (tests/golden/run.sh) and the datapath test (tests/integ/fw_datapath.sh).
 * Run it inside a throwaway netns only.  One command per stdin line, one
 * answer per stdout line ("ok", "err -ERRNO text", "found EXPIRES_MS",
 * "notfound"):
 *
 *   open TABLE DNSPORT EGRESS|- POOL4|- POOL6|- [INTERNAL-PREFIX ...]
 *   add NAME IFNAME ADDR4|- ADDR6|- [RULE ...]
 *       RULE = PROTO:CIDR[,CIDR...]:PORTS   PORTS = 443,9000-9010 | -
 *            | PROTO:@DOMAIN[,DOMAIN...]:PORTS   (a domain rule: never rendered)
 *   del NAME IFNAME ADDR4|- ADDR6|-
 *   dns NAME DNS4|- DNS6|-
 *   pin NAME ADDR PROTO PORT TIMEOUT_MS
 *   lookup NAME ADDR PROTO PORT
 *   addmany PREFIX N RULE       N sandboxes PREFIX0..: veth PREFIX%x, 10.88.x.y
 *                               (with opt ct_mark=M: marks M, M+1, ...)
 *   updatemany PREFIX N [RULE]  all of them reloaded in one batch
 *   ftrefresh                   fw_flowtable_refresh()
 *   opt KEY=VALUE               for the commands after it: log_group=N, fast_path=0|1,
 *                               conn_limit=N (open), ct_mark=N, chained=0|1,
 *                               quota=BYTES, quota_cut=0|1, conns=N,
 *                               tap=0|1 (MAC 02:00:5e:00:53:01), audit=0|1, reject=0|1,
 *                               mode=0|1|2 (add), flowtable=0..3 (open: FW_FLOWTABLE_*)
 *   close
 *
 * `fw_golden --fake OUT` runs on tests/golden/fake_nft.c instead of the
 * kernel (no root, no netns) and prints both tables into OUT at the end.
 *
 * The policy is built by hand from the public struct (netd/model/policy.h); no
 * policy_* function is called, so policy.c is not linked.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/addr.h"
#include "netd/fw.h"
#include "netd/model/pinreg.h"
#ifndef FW_GOLDEN_KERNEL_ONLY	/* (builds against any fw with the public API of netd/fw.h) */
#include "netd/fw/kernel.h"
#include "tests/golden/fake_nft.h"
#endif

#define MAXTOK 64

static struct fw *g_fw;
static struct pinreg *g_pins;	/* g_fw's pin registry: a fresh one at each open, as a restart */
#ifndef FW_GOLDEN_KERNEL_ONLY
static struct fw_kernel *g_fake;	/* --fake: the model g_fw commits to */
#endif
static const char *g_fake_out;
static struct {
	unsigned long log_group, ct_mark, chained, quota, quota_cut, tap, no_fast_path,
		conn_limit, conns, flowtable, gw_port;
	unsigned long audit, reject, mode;	/* policy mode/on_deny, fw_sandbox.mode */
} g_opt;

/* The sandboxes of addmany (their names and interfaces). */
static struct many {
	char name[64], ifname[16];
	struct fw_sandbox sb;
} *g_many;
static size_t g_n_many;

static int parse_proto(const char *s, uint8_t *ret)
{
	if (strcmp(s, "tcp") == 0)
		*ret = IPPROTO_TCP;
	else if (strcmp(s, "udp") == 0)
		*ret = IPPROTO_UDP;
	else
		return -EINVAL;
	return 0;
}

static int parse_opt_addr(const char *s, struct addr *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (strcmp(s, "-") == 0)
		return 0;
	return addr_parse(s, ret);
}



static void free_policy(struct policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		struct policy_rule *r = &p->rules[i];

		for (size_t j = 0; j < r->n_domains; j++)
			free(r->domains[j]);
		free(r->domains);
		free(r->cidrs);
		free(r->ports);
		free(r->gateway);	/* zeroed by the driver: nothing inside */
	}
	free(p->rules);
	free(p->name);
}

/* "sni=enforce,host=log" (after a rule's '+'): its tls.sni / http.host; "gw": gateway: (empty). */
static int parse_l7(char *s, struct policy_rule *r)
{
	char *tok, *save;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint8_t m;

		if (strcmp(tok, "gw") == 0 && !r->gateway) {
			r->gateway = calloc(1, sizeof(*r->gateway));
			if (!r->gateway)
				return -ENOMEM;
			continue;
		}
		if (!eq)
			return -EINVAL;
		*eq = '\0';
		m = strcmp(eq + 1, "enforce") == 0 ? POLICY_L7_ENFORCE :
		    strcmp(eq + 1, "log") == 0 ? POLICY_L7_LOG : POLICY_L7_OFF;
		if (strcmp(tok, "sni") == 0)
			r->tls_sni = m;
		else if (strcmp(tok, "host") == 0)
			r->http_host = m;
		else
			return -EINVAL;
	}
	return 0;
}

/* "tcp:198.51.100.7/32,2001:db8::/64:80,9000-9010" - the proto and ports
 * are split at the first and the last colon (CIDRs may contain colons).
 * A '+' after the ports adds the SNI check's modes: "tcp:@a.example:443+sni=enforce". */
static int parse_rule(char *s, struct policy_rule *r)
{
	char *plus = strchr(s, '+'), *c1, *c2, *tok, *save;

	if (plus)
		*plus = '\0';
	c1 = strchr(s, ':');
	c2 = strrchr(s, ':');

	memset(r, 0, sizeof(*r));
	if (!c1 || c2 == c1)
		return -EINVAL;
	*c1 = *c2 = '\0';
	if (parse_proto(s, &r->proto) < 0)
		return -EINVAL;
	for (tok = strtok_r(c1 + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (tok[0] == '@') {
			r->domains = realloc(r->domains, (r->n_domains + 1) * sizeof(char *));
			r->domains[r->n_domains++] = strdup(tok + 1);
			continue;
		}
		r->cidrs = realloc(r->cidrs, (r->n_cidrs + 1) * sizeof(*r->cidrs));
		if (prefix_parse(tok, &r->cidrs[r->n_cidrs]) < 0)
			return -EINVAL;
		r->n_cidrs++;
	}
	if (plus && parse_l7(plus + 1, r) < 0)
		return -EINVAL;
	if (strcmp(c2 + 1, "-") == 0)
		return 0;
	for (tok = strtok_r(c2 + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned int lo, hi;
		int n = sscanf(tok, "%u-%u", &lo, &hi);

		if (n == 1)
			hi = lo;
		else if (n != 2)
			return -EINVAL;
		r->ports = realloc(r->ports, (r->n_ports + 1) * sizeof(*r->ports));
		r->ports[r->n_ports++] = (struct port_range){ (uint16_t)lo, (uint16_t)hi };
	}
	return 0;
}

/* A policy named @name of the @n RULE tokens @t, with the quota options. */
static int build_policy(struct policy *pol, const char *name, char **t, int n)
{
	int r = 0;

	memset(pol, 0, sizeof(*pol));
	pol->name = strdup(name);
	pol->rules = calloc((size_t)n + 1, sizeof(*pol->rules));
	pol->egress_bytes = g_opt.quota;
	pol->quota_cut = g_opt.quota_cut != 0;
	pol->max_conns = (uint32_t)g_opt.conns;
	pol->audit = g_opt.audit != 0;
	pol->reject = g_opt.reject != 0;
	for (int i = 0; i < n && r == 0; i++) {
		r = parse_rule(t[i], &pol->rules[pol->n_rules]);
		pol->n_rules++;
	}
	return r;
}

/*
 * addmany PREFIX N RULE: sandboxes PREFIX0 .. PREFIX(N-1) on interfaces
 * PREFIX + hex index, addresses 10.88.(i / 250).(i % 250 + 1), one
 * fw_sandbox_add() each; updatemany PREFIX N [RULE]: all of them given a
 * new policy in ONE fw_sandboxes_update() (a reload at size).
 */
static int do_many(char **t, int n)
{
	size_t cnt = n >= 3 ? strtoul(t[2], NULL, 10) : 0;
	struct fw_update *u;
	struct policy pol;
	int r;

	if (n < 3 || cnt == 0 || cnt > 60000 || strlen(t[1]) > 8)
		return -EINVAL;
	r = build_policy(&pol, t[1], t + 3, n - 3);
	if (r < 0) {
		free_policy(&pol);
		return r;
	}
	if (t[0][0] == 'a') {
		free(g_many);
		g_many = calloc(cnt, sizeof(*g_many));
		g_n_many = 0;
		for (size_t i = 0; g_many && i < cnt && r == 0; i++) {
			struct many *m = &g_many[i];
			char a4[32];

			snprintf(m->name, sizeof(m->name), "%s%zu", t[1], i);
			snprintf(m->ifname, sizeof(m->ifname), "%.8s%zx", t[1], i & 0xffff);
			snprintf(a4, sizeof(a4), "10.88.%zu.%zu", i / 250, i % 250 + 1);
			m->sb = (struct fw_sandbox){ .name = m->name, .host_ifname = m->ifname,
						     .ct_mark = g_opt.ct_mark ? (uint32_t)(g_opt.ct_mark + i) : 0 };
			addr_parse(a4, &m->sb.addr4);
			r = fw_sandbox_add(g_fw, &m->sb, &pol);
			g_n_many += r == 0;
		}
		free_policy(&pol);
		return g_many ? r : -ENOMEM;
	}
	u = calloc(g_n_many ? g_n_many : 1, sizeof(*u));
	for (size_t i = 0; u && i < g_n_many; i++)
		u[i] = (struct fw_update){ .sb = &g_many[i].sb, .pol = &pol };
	r = u ? fw_sandboxes_update(g_fw, u, g_n_many) : -ENOMEM;
	free(u);
	free_policy(&pol);
	return r;
}

static int do_cmd(char **t, int n, uint64_t *expires, int *found)
{
	if (strcmp(t[0], "open") == 0 && n >= 6) {
		struct prefix internal[MAXTOK];
		struct fw_config cfg = { 0 };
		int r;

		cfg.table = t[1];
		cfg.dns_port = (uint16_t)atoi(t[2]);
		cfg.egress_ifname = strcmp(t[3], "-") ? t[3] : "";
		if (strcmp(t[4], "-") && prefix_parse(t[4], &cfg.pool4) < 0)
			return -EINVAL;
		if (strcmp(t[5], "-") && prefix_parse(t[5], &cfg.pool6) < 0)
			return -EINVAL;
		for (int i = 6; i < n; i++)
			if (prefix_parse(t[i], &internal[i - 6]) < 0)
				return -EINVAL;
		cfg.internal = internal;
		cfg.n_internal = (size_t)(n - 6);
		cfg.log_group = (uint16_t)g_opt.log_group;
		cfg.no_fast_path = g_opt.no_fast_path != 0;
		cfg.conn_limit = (uint32_t)g_opt.conn_limit;
		cfg.flowtable = (uint8_t)g_opt.flowtable;
		cfg.gw_port = (uint16_t)g_opt.gw_port;
		fw_close(g_fw);
		g_fw = NULL;
		pinreg_free(g_pins);
		g_pins = NULL;
		if (pinreg_new(&g_pins) < 0)
			return -ENOMEM;
		cfg.pins = g_pins;
#ifndef FW_GOLDEN_KERNEL_ONLY
		if (g_fake_out) {
			g_fake = fake_nft_new();
			if (!g_fake)
				return -ENOMEM;
			r = fw_open_with(&cfg, g_fake, &g_fw);
			if (r < 0)
				g_fake = NULL;
			return r;
		}
#endif
		r = fw_open(&cfg, &g_fw);
		return r;
	}
	if (strcmp(t[0], "opt") == 0 && n == 2) {
		char *eq = strchr(t[1], '=');
		unsigned long v;

		if (!eq)
			return -EINVAL;
		*eq = '\0';
		v = strtoul(eq + 1, NULL, 0);
		if (strcmp(t[1], "log_group") == 0)
			g_opt.log_group = v;
		else if (strcmp(t[1], "ct_mark") == 0)
			g_opt.ct_mark = v;
		else if (strcmp(t[1], "chained") == 0)
			g_opt.chained = v;
		else if (strcmp(t[1], "quota") == 0)
			g_opt.quota = v;
		else if (strcmp(t[1], "quota_cut") == 0)
			g_opt.quota_cut = v;
		else if (strcmp(t[1], "audit") == 0)
			g_opt.audit = v;
		else if (strcmp(t[1], "reject") == 0)
			g_opt.reject = v;
		else if (strcmp(t[1], "mode") == 0)
			g_opt.mode = v;
		else if (strcmp(t[1], "tap") == 0)	/* tap=1: a tap, guest MAC 02:00:5e:00:53:NN (NN = slot) */
			g_opt.tap = v;
		else if (strcmp(t[1], "fast_path") == 0)
			g_opt.no_fast_path = v == 0;
		else if (strcmp(t[1], "conn_limit") == 0)
			g_opt.conn_limit = v;
		else if (strcmp(t[1], "conns") == 0)
			g_opt.conns = v;
		else if (strcmp(t[1], "flowtable") == 0)
			g_opt.flowtable = v;
		else if (strcmp(t[1], "gw_port") == 0)	/* the API gateway's port (next open) */
			g_opt.gw_port = v;
		else
			return -EINVAL;
		return 0;
	}
	if (strcmp(t[0], "addmany") == 0 || strcmp(t[0], "updatemany") == 0)
		return do_many(t, n);
	if ((strcmp(t[0], "add") == 0 && n >= 5) || (strcmp(t[0], "del") == 0 && n == 5)) {
		struct fw_sandbox sb = { .name = t[1], .host_ifname = t[2] };
		struct policy pol = { 0 };
		int r = 0;

		if (parse_opt_addr(t[3], &sb.addr4) < 0 || parse_opt_addr(t[4], &sb.addr6) < 0)
			return -EINVAL;
		sb.ct_mark = (uint32_t)g_opt.ct_mark;
		sb.chained = g_opt.chained != 0;
		sb.mode = (uint8_t)g_opt.mode;
		sb.tap = g_opt.tap != 0;
		if (sb.tap)
			memcpy(sb.mac, (const uint8_t[6]){ 0x02, 0x00, 0x5e, 0x00, 0x53, 0x01 }, 6);
		if (t[0][0] == 'd')
			return fw_sandbox_del(g_fw, &sb);
		r = build_policy(&pol, t[1], t + 5, n - 5);
		if (r == 0)
			r = fw_sandbox_add(g_fw, &sb, &pol);
		free_policy(&pol);
		return r;
	}
	if (strcmp(t[0], "dns") == 0 && n == 4) {	/* dns NAME DNS4|- DNS6|- */
		struct addr d4, d6;

		if (parse_opt_addr(t[2], &d4) < 0 || parse_opt_addr(t[3], &d6) < 0)
			return -EINVAL;
		return fw_sandbox_set_dns(g_fw, t[1], &d4, &d6);
	}
	/* pin NAME ADDR PROTO PORT TIMEOUT_MS [gw]: a gateway pin with "gw" */
	if (strcmp(t[0], "pin") == 0 && (n == 6 || (n == 7 && strcmp(t[6], "gw") == 0))) {
		struct pin p = { .gateway = n == 7 };

		if (addr_parse(t[2], &p.addr) < 0 || parse_proto(t[3], &p.proto) < 0)
			return -EINVAL;
		p.port = (uint16_t)atoi(t[4]);
		p.timeout_ms = (uint32_t)strtoul(t[5], NULL, 10);
		return fw_pin(g_fw, t[1], &p, 1);
	}
	/* lookup NAME ADDR PROTO PORT [gw] */
	if (strcmp(t[0], "lookup") == 0 && (n == 5 || (n == 6 && strcmp(t[5], "gw") == 0))) {
		struct pin what = { .gateway = n == 6 };
		struct addr a;
		int r;

		if (addr_parse(t[2], &a) < 0 || parse_proto(t[3], &what.proto) < 0)
			return -EINVAL;
		what.port = (uint16_t)atoi(t[4]);
		r = fw_pin_find(g_fw, t[1], &a, &what, expires);
		if (r >= 0)
			*found = r;
		return r < 0 ? r : 0;
	}
	if (strcmp(t[0], "ftrefresh") == 0 && n == 1)
		return fw_flowtable_refresh(g_fw);
	if (strcmp(t[0], "close") == 0) {
		fw_close(g_fw);
		g_fw = NULL;
		pinreg_free(g_pins);
		g_pins = NULL;
		return 0;
	}
	return -EINVAL;
}

int main(int argc, char **argv)
{
	char line[262144];

	if (argc == 3 && strcmp(argv[1], "--fake") == 0)
		g_fake_out = argv[2];
	else if (argc != 1)
		return 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		char *t[MAXTOK], *save;
		uint64_t expires = 0;
		int n = 0, found = -1, r;

		for (char *tok = strtok_r(line, " \t\n", &save); tok && n < MAXTOK;
		     tok = strtok_r(NULL, " \t\n", &save))
			t[n++] = tok;
		if (n == 0 || t[0][0] == '#')
			continue;
		r = do_cmd(t, n, &expires, &found);
		if (r < 0)
			printf("err %d %s: %s\n", r, strerror(-r), g_fw ? fw_last_error(g_fw) : "");
		else if (found == 1)
			printf("found %llu\n", (unsigned long long)expires);
		else if (found == 0)
			printf("notfound\n");
		else
			printf("ok\n");
	}
#ifndef FW_GOLDEN_KERNEL_ONLY
	if (g_fake_out && g_fake) {
		FILE *out = fopen(g_fake_out, "w");

		if (!out)
			return 1;
		fake_nft_print(g_fake, out);
		fclose(out);
	}
#endif
	fw_close(g_fw);
	pinreg_free(g_pins);
	free(g_many);
	return 0;
}
