/*
 * test_box_cli - the real clients against the daemon in a box
 * (tests/unit/box_daemon.h): build/asan/netd's subcommands and
 * build/asan/netd-cni's CNI verbs, run as processes (as nobody when the
 * test runs as root) on the box's control socket, their exit statuses and
 * output asserted, and what they changed read back from the daemon's side
 * (the fake nf_tables model, the box's links, the state dir).
 *
 * What stays with the root integration tests: `netd exec` entering a
 * namespace, netd-cni's reads inside the container's netns (the peer's MAC
 * in ADD's result, CHECK's interface and address probe, chained mode's
 * prevResult view): the box's netns are files, no kernel's.
 *
 * The scenario runs in order on one box; each step leaves what the next
 * one reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "cni-plugin/cni.h"
#include "common/addr.h"
#include "netd/cli/cli_help.h"
#include "tests/unit/box_daemon.h"

static char netd_bin[PATH_MAX], cni_bin[PATH_MAX], sock_arg[PATH_MAX];

/*
 * build/asan/netd ARGS... (NULL-terminated), after `--socket ROOT/ctl.sock`
 * if @socket; its output in @r.
 */
static void run_netd(struct box_run *r, bool socket, ...)
{
	const char *argv[24] = { netd_bin, "--socket", sock_arg };
	size_t n = socket ? 3 : 1;
	va_list ap;

	va_start(ap, socket);
	while (n < 23 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	box_run(argv, NULL, NULL, r);
}

/* A client of the box's daemon; a command that needs none (or finds its own). */
#define netd(r, ...)       run_netd(r, true, __VA_ARGS__)
#define netd_plain(r, ...) run_netd(r, false, __VA_ARGS__)

/* stdout parsed as JSON (the test fails if it is not); caller decrefs. */
static json_t *out_json(const struct box_run *r)
{
	json_error_t e;
	json_t *j = json_loads(r->out, 0, &e);

	if (!j)
		fail_msg("not JSON (%s): %s", e.text, r->out);
	return j;
}

static bool has(const char *s, const char *needle)
{
	return s && strstr(s, needle);
}

/* Assert @r exited @status; on a surprise, show what it said. */
#define assert_exit(r, st)                                                                    \
	do {                                                                                  \
		if ((r)->status != (st))                                                      \
			fail_msg("exit %d, wanted %d\nstdout: %s\nstderr: %s", (r)->status,  \
				 (st), (r)->out, (r)->err);                                   \
	} while (0)

/* stdout of a run that exited 0, parsed as JSON (caller decrefs); @r released. */
static json_t *ok_json(struct box_run *r)
{
	json_t *j;

	assert_exit(r, 0);
	j = out_json(r);
	box_run_done(r);
	return j;
}

/*
 * Assert @r exited @status and its stdout holds @out_has and its stderr
 * @err_has (each unless NULL); then release @r.
 */
static void expect(struct box_run *r, int status, const char *out_has, const char *err_has)
{
	assert_exit(r, status);
	if (out_has && !has(r->out, out_has))
		fail_msg("stdout lacks \"%s\": %s", out_has, r->out);
	if (err_has && !has(r->err, err_has))
		fail_msg("stderr lacks \"%s\": %s", err_has, r->err);
	box_run_done(r);
}

/* Assert @r exited 0 and its stdout holds each of @needles (NULL-terminated); release @r. */
static void expect_lines(struct box_run *r, const char *const needles[])
{
	for (size_t i = 0; needles[i]; i++)
		if (!has(r->out, needles[i]))
			fail_msg("stdout lacks \"%s\": %s", needles[i], r->out);
	expect(r, 0, NULL, NULL);
}

/*
 * `policy check` says what a file means: the limits it enforces (rates,
 * budgets, connections, egress_bytes) as it says a wildcard's dns:
 * defaults; a directory stands for its policy files; errors in file order.
 */
static void test_cli_policy_check_limits(void **state)
{
	char dir[PATH_MAX], pol[PATH_MAX], bad[PATH_MAX];
	struct box_run r;
	const char *e1, *e2, *e3;

	(void)state;
	box_path(dir, sizeof(dir), "lim");
	assert_int_equal(mkdir(dir, 0755), 0);
	box_put("lim/agent.yaml", "name: agent\negress:\n"
		"  - domains: [pypi.org, files.pythonhosted.org]\n    ports: [443]\n"
		"    budget: 1MB/hour\n"
		"  - domains: [\"*.github.com\"]\n    ports: [443]\n"
		"limits:\n  bandwidth: { egress: 10mbit, ingress: 20mbit }\n"
		"  connections: 64\n  egress_bytes: 500M\n  on_exceed: cut\n");
	box_path(pol, sizeof(pol), "lim/agent.yaml");
	netd_plain(&r, "policy", "check", pol, NULL);
	assert_exit(&r, CLI_OK);
	assert_true(has(r.out, "agent.yaml: ok (policy agent, 2 rules)"));
	assert_true(has(r.out, "agent.yaml:9:3: note: limits: bandwidth egress 10mbit, "
			"ingress 20mbit"));
	assert_true(has(r.out, "agent.yaml:9:3: note: limits: connections 64"));
	assert_true(has(r.out, "agent.yaml:9:3: note: limits: egress_bytes 524288000 bytes"));
	assert_true(has(r.out, "agent.yaml:3:5: note: egress[0]: budget 1MB/hour"));
	box_run_done(&r);

	/* a directory: its policy files, as netd run reads policy_dir */
	box_put("lim/other.yml", "name: other\negress: []\n");
	box_put("lim/notes.txt", "not a policy\n");
	netd_plain(&r, "policy", "check", dir, NULL);
	assert_exit(&r, CLI_OK);
	assert_true(has(r.out, "/lim/agent.yaml: ok (policy agent, 2 rules)"));
	assert_true(has(r.out, "/lim/other.yml: ok (policy other, 0 rules)"));
	assert_false(has(r.out, "notes.txt"));
	assert_false(has(r.err, "notes.txt"));
	box_run_done(&r);
	box_path(dir, sizeof(dir), "lim/empty");
	assert_int_equal(mkdir(dir, 0755), 0);
	netd_plain(&r, "policy", "check", dir, NULL);
	expect(&r, CLI_OK, NULL, "/lim/empty: a directory without policy files (*.yaml, *.yml)");

	/* errors in file order: rules' (lines 5, 8) before limits' (line 10) */
	box_put("lim/bad.yaml", "name: bad\negress:\n  - domains: [a.example]\n    ports: [443]\n"
		"    protocol: tcpx\n  - domains: [b.example]\n    ports: [443]\n"
		"    protocol: udpx\nlimits:\n  bandwidth: { egress: 10zbit }\n");
	box_path(bad, sizeof(bad), "lim/bad.yaml");
	netd_plain(&r, "policy", "check", bad, NULL);
	assert_exit(&r, CLI_REJECTED);
	e1 = strstr(r.err, "bad.yaml:5:15:");
	e2 = strstr(r.err, "bad.yaml:8:15:");
	e3 = strstr(r.err, "bad.yaml:10:24:");
	if (!e1 || !e2 || !e3 || !(e1 < e2 && e2 < e3))
		fail_msg("not in file order: %s", r.err);
	box_run_done(&r);
}

/* ---- fixture ------------------------------------------------------------------ */

/*
 * Copy binary @src into the box as ROOT/bin/@name (0755) and put that path
 * in @dst (PATH_MAX): the checkout may sit where nobody cannot reach it (a
 * clone in /root, mode 0700, as on a fresh machine).  Return: 0; -1.
 */
static int box_copy_bin(const char *src, const char *name, char *dst)
{
	char buf[1 << 16];
	int in, out = -1, r = -1;
	ssize_t n;

	box_path(dst, PATH_MAX, "bin");
	if (mkdir(dst, 0755) < 0 && errno != EEXIST)
		return -1;
	box_path(dst, PATH_MAX, "bin/%s", name);
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in >= 0)
		out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			goto done;
	r = in >= 0 && out >= 0 && n == 0 && fchmod(out, 0755) == 0 ? 0 : -1;
done:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return r;
}

static int group_setup(void **state)
{
	char path[PATH_MAX], src[PATH_MAX];

	if (box_setup(NULL) < 0)
		return -1;
	if (!realpath(getenv("NETD_BIN") ? getenv("NETD_BIN") : "build/asan/netd", src) ||
	    box_copy_bin(src, "netd", netd_bin) < 0 ||
	    !realpath(getenv("NETD_CNI_BIN") ? getenv("NETD_CNI_BIN") : "build/asan/netd-cni", src) ||
	    box_copy_bin(src, "netd-cni", cni_bin) < 0) {
		fprintf(stderr, "test_box_cli: build/asan/netd and netd-cni first (make asan)\n");
		return -1;
	}
	box_path(sock_arg, sizeof(sock_arg), "ctl.sock");
	box_path(path, sizeof(path), "cni-bin");
	return mkdir(path, 0755);
}

static int group_teardown(void **state)
{
	return box_teardown();
}

/* ---- netd ------------------------------------------------------------------------- */

static char web_if[16], web_v4[ADDR_STRLEN];

/* `status`, `--version`, help, usage errors, and a daemon that is not there. */
static void test_cli_basics(void **state)
{
	struct box_run r;
	char nope[PATH_MAX];
	json_t *o;

	netd(&r, "status", NULL);
	o = ok_json(&r);
	assert_int_equal(json_integer_value(json_object_get(o, "sandboxes")), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(o, "paths"),
							      "socket")), sock_arg);
	json_decref(o);

	/* What needs no daemon, and what the CLI refuses before asking it. */
	static const struct {
		const char *argv[10];
		int status;
		const char *out, *err;
	} cases[] = {
		{ { "--version" }, CLI_OK, "netd ", NULL },
		{ { "help" }, CLI_OK, "sandbox create NAME --policy P", NULL },
		{ { "sandbox", "create", "--help" }, CLI_OK, "--policy", NULL },
		{ { "frobnicate" }, CLI_USAGE, NULL, "unknown command 'frobnicate'" },
		{ { "sandbox", "create", "x" }, CLI_USAGE, NULL, "wants NAME and --policy POLICY" },
		{ { "sandbox", "create", "x", "--policy", "deny-all", "--mode", "loud" }, CLI_USAGE,
		  NULL, "--mode wants audit or enforce" },
		{ { "sandbox", "create", "x", "--policy", "deny-all", "--tap-mtu", "1400" }, CLI_USAGE,
		  NULL, "need --tap" },
		{ { "sandbox", "show", "-bad" }, CLI_REJECTED, NULL, "invalid sandbox name" },
		/* a repeated option is refused, not the last one taken */
		{ { "sandbox", "create", "x", "--policy", "deny-all", "--egress-rate", "5mbit",
		    "--egress-rate", "6mbit" }, CLI_USAGE, NULL,
		  "netd: sandbox create: --egress-rate given twice (\"5mbit\", then \"6mbit\"): "
		  "give it once" },
		{ { "sandbox", "create", "x", "--policy", "a", "--policy", "b" }, CLI_USAGE, NULL,
		  "--policy given twice" },
		/* which option lacks its value, not the words reordered */
		{ { "sandbox", "create", "--policy", "plain", "myw-bad", "--egress-rate" }, CLI_USAGE,
		  NULL, "netd: sandbox create: --egress-rate wants a value\n" },
		{ { "sandbox", "create", "x", "--policy", "plain", "--bogus" }, CLI_USAGE, NULL,
		  "netd: sandbox create: unknown option '--bogus'\n" },
		/* ... and so in the other commands (a repeatable one, --audit, --file, may repeat) */
		{ { "policy", "replay", "--since", "1h", "--since", "2h", "x.yaml" }, CLI_USAGE,
		  NULL, "netd: policy replay: --since given twice (\"1h\", then \"2h\")" },
		{ { "policy", "suggest", "--sandbox", "a", "--sandbox", "b" }, CLI_USAGE, NULL,
		  "netd: policy suggest: --sandbox given twice" },
		{ { "policy", "suggest", "--sandbox" }, CLI_USAGE, NULL,
		  "netd: policy suggest: --sandbox wants a value\n" },
		{ { "audit", "--event", "dns", "--event", "budget" }, CLI_USAGE, NULL,
		  "netd: audit: --event given twice (\"dns\", then \"budget\"): give it once" },
		{ { "audit", "--file", "/dev/null", "--last" }, CLI_USAGE, NULL,
		  "netd: audit: --last wants a value\n" },
		{ { "run", "--config", "a.yaml", "--config", "b.yaml" }, CLI_USAGE, NULL,
		  "netd: run: --config given twice (\"a.yaml\", then \"b.yaml\"): give it once" },
		{ { "run", "--config" }, CLI_USAGE, NULL, "netd: run: --config wants a value\n" },
		{ { "ca", "export", "--out", "a.pem", "--out=b.pem" }, CLI_USAGE, NULL,
		  "netd: ca export: --out given twice (\"a.pem\", then \"b.pem\"): give it once" },
		{ { "policy", "check", "--config", "a.yaml", "--config=b.yaml" }, CLI_USAGE, NULL,
		  "netd: policy check: --config given twice (\"a.yaml\", then \"b.yaml\"): "
		  "give it once" },
		{ { "policy", "check", "--config" }, CLI_USAGE, NULL,
		  "netd: policy check: --config wants a FILE (netd.yaml)\n" },
		/* the tap synopsis has the rates too */
		{ { "help" }, CLI_OK, "[--tap-mtu N] [--egress-rate RATE] [--ingress-rate RATE]", NULL },
		{ { "sandbox", "create", "--help" }, CLI_OK,
		  "[--tap-mtu N] [--egress-rate RATE] [--ingress-rate RATE]", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[14] = { netd_bin, "--socket", sock_arg };

		for (size_t k = 0; cases[i].argv[k]; k++)
			argv[3 + k] = cases[i].argv[k];
		box_run(argv, NULL, NULL, &r);
		expect(&r, cases[i].status, cases[i].out, cases[i].err);
	}

	box_path(nope, sizeof(nope), "nope.sock");
	netd_plain(&r, "--socket", nope, "status", NULL);
	expect(&r, CLI_UNREACHABLE, NULL, "cannot reach the daemon");
}

/* `sandbox create`: the line it prints is what the daemon made, and the rules are in the model. */
static void test_cli_create(void **state)
{
	char key[256], want[256];
	struct box_run r;
	json_t *o;

	netd(&r, "sandbox", "create", "web", "--policy", "python-dev", NULL);
	assert_exit(&r, CLI_OK);
	assert_true(has(r.out, "sandbox web: policy python-dev (enforce mode), /run/netns/web, "
			       "address 10.87.0.2"));
	assert_true(has(r.out, "DNS 10.87.0.1\n"));
	box_run_done(&r);
	assert_int_equal(box_api("GET", "/v1/sandboxes/web", NULL, &o), 200);
	snprintf(web_if, sizeof(web_if), "%s", box_jstr(o, "host_ifname"));
	snprintf(web_v4, sizeof(web_v4), "%s", box_jstr(o, "ipv4"));
	json_decref(o);
	box_ifname_key(web_if, key, sizeof(key));
	assert_true(box_model_has("sandbox_ifs", key));
	snprintf(want, sizeof(want), "links/%s", web_if);
	assert_true(box_file_exists(want));

	/* --json and --mode audit: the daemon's answer, printed whole. */
	netd(&r, "sandbox", "create", "job", "--policy", "deny-all", "--mode", "audit", "--json",
	     NULL);
	o = ok_json(&r);
	assert_string_equal(box_jstr(o, "name"), "job");
	assert_string_equal(box_jstr(o, "mode"), "audit");
	json_decref(o);

	/* Refusals map to their exit statuses; nothing is made. */
	netd(&r, "sandbox", "create", "web", "--policy", "deny-all", NULL);
	expect(&r, CLI_CONFLICT, NULL, "exists");
	netd(&r, "sandbox", "create", "other", "--policy", "nope", NULL);
	expect(&r, CLI_NOT_FOUND, NULL, "unknown policy \"nope\"");
	assert_false(box_file_exists("state/sandboxes/other.json"));
}

/* A microVM's tap: the guest's fields printed, the tap asked of the links. */
static void test_cli_tap(void **state)
{
	char tap[16], line[128];
	struct box_run r;
	json_t *o;

	netd(&r, "sandbox", "create", "vm1", "--policy", "deny-all", "--tap", "--tap-owner",
	     "1000:1000", "--tap-mtu", "1400", NULL);
	assert_exit(&r, CLI_OK);
	assert_true(has(r.out, "sandbox vm1: policy deny-all (enforce mode), tap "));
	assert_true(has(r.out, "(owner 1000)"));
	assert_true(has(r.out, "MTU 1400"));
	assert_true(has(r.out, "kernel argument: ip="));
	box_run_done(&r);
	assert_int_equal(box_api("GET", "/v1/sandboxes/vm1", NULL, &o), 200);
	assert_string_equal(box_jstr(o, "kind"), "tap");
	snprintf(tap, sizeof(tap), "%s", box_jstr(o, "tap"));
	json_decref(o);
	snprintf(line, sizeof(line), "tap_create %s owner=1000 queues=1 mtu=1400\n", tap);
	assert_int_equal(box_count_in("link.log", line), 1);

	/* exec has no namespace to enter on a tap. */
	netd(&r, "exec", "vm1", "--", "true", NULL);
	expect(&r, CLI_USAGE, NULL, "microVM's tap");
	netd(&r, "sandbox", "delete", "vm1", NULL);
	expect(&r, CLI_OK, "sandbox vm1 deleted", NULL);
	snprintf(line, sizeof(line), "del %s\n", tap);
	assert_int_equal(box_count_in("link.log", line), 1);
	assert_false(box_file_exists("state/sandboxes/vm1.json"));
}

/* `sandbox list` (table and JSON) and `sandbox show`. */
static void test_cli_list_show(void **state)
{
	struct box_run r;
	json_t *o;

	netd(&r, "sandbox", "list", NULL);
	assert_false(has(r.out, "vm1"));
	expect_lines(&r, (const char *[]){ "NAME", "DNS-OK", "\nweb ", "\njob ", web_if, NULL });
	netd(&r, "sandbox", "list", "--json", NULL);
	o = ok_json(&r);
	assert_int_equal(json_array_size(o), 2);
	json_decref(o);
	netd(&r, "sandbox", "show", "web", "--json", NULL);
	o = ok_json(&r);
	assert_string_equal(box_jstr(o, "ipv4"), web_v4);
	assert_string_equal(box_jstr(o, "policy"), "python-dev");
	json_decref(o);
	netd(&r, "sandbox", "show", "ghost", NULL);
	expect(&r, CLI_NOT_FOUND, NULL, NULL);

	/* exec: the box's netns is no kernel's, and exec says so rather than run. */
	netd(&r, "exec", "web", "--", "/bin/true", NULL);
	expect(&r, 126, NULL, "sandbox web: /run/netns/web");
	netd(&r, "exec", "--no-caps", "web", "--", "/bin/true", NULL);
	expect(&r, CLI_USAGE, NULL, NULL);
}

/* `policy list`, `show`, `reload` (good, --json, bad) and `check`. */
static void test_cli_policy(void **state)
{
	char want[PATH_MAX + 32], again[PATH_MAX], *model, *after, *text, *cidr;
	struct box_run r;
	json_t *o;

	netd(&r, "policy", "list", NULL);
	expect_lines(&r, (const char *[]){ "NAME", "RULES", "\npython-dev ", "\ndeny-all ", NULL });
	netd(&r, "policy", "list", "--json", NULL);
	o = ok_json(&r);
	assert_int_equal(json_array_size(o), 2);
	json_decref(o);
	netd(&r, "policy", "show", "python-dev", NULL);
	o = ok_json(&r);
	assert_string_equal(box_jstr(o, "name"), "python-dev");
	/* tls.ech where a rule says nothing: strip (on a rule that checks the SNI) */
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
				    o, "defaults"), "tls"), "ech")), "strip");
	json_decref(o);

	/* A reload that moves the CIDR rule: web is named, the model follows. */
	text = box_slurp("policies/python-dev.yaml");
	assert_non_null(text);
	assert_non_null(cidr = strstr(text, "198.51.100.7/32"));
	cidr[11] = '8';
	box_put("policies/python-dev.yaml", text);
	free(text);
	netd(&r, "policy", "reload", NULL);
	assert_exit(&r, CLI_OK);
	assert_true(has(r.out, "policies reloaded; 1 sandbox changed\n"));
	assert_true(has(r.out, "  web (policy python-dev): added "));
	assert_true(has(r.out, "198.51.100.8"));
	box_run_done(&r);
	assert_true(box_model_has("pc-python-dev-cidr4", "086433c6 00000006 0000901f"));
	assert_false(box_model_has("pc-python-dev-cidr4", "076433c6 00000006 0000901f"));
	netd(&r, "policy", "reload", "--json", NULL);
	o = ok_json(&r);
	assert_int_equal(json_array_size(json_object_get(o, "changed")), 0);
	json_decref(o);

	/* A bad one: refused with FILE:LINE:COL, the model as it was. */
	model = box_slurp("nft.txt");
	box_put("policies/broken.yaml",
		"name: broken\negress:\n  - domains: [pypi.org]\n    prots: [443]\n");
	netd(&r, "policy", "reload", NULL);
	assert_exit(&r, CLI_REJECTED);
	snprintf(want, sizeof(want), "%s/policies/broken.yaml:4:5", box_root);
	assert_true(has(r.err, want));
	box_run_done(&r);
	after = box_slurp("nft.txt");
	assert_string_equal(after, model);
	free(after);
	free(model);

	/* `policy check` needs no daemon: the same error, and a good file's summary. */
	box_path(want, sizeof(want), "policies/broken.yaml");
	netd_plain(&r, "policy", "check", want, NULL);
	expect(&r, CLI_REJECTED, NULL, "broken.yaml:4:5");
	assert_int_equal(unlink(want), 0);
	box_put("policies/wide.yaml", "name: wide\negress:\n"
		"  - {domains: [\"*.example.com\"], except: [secret.example.com], ports: [443]}\n"
		"  - {domains: [secret.example.com], ports: [443]}\n"
		"  - {cidrs: [10.0.0.0/8], ports: [5432]}\n");
	box_path(want, sizeof(want), "policies/wide.yaml");
	netd_plain(&r, "policy", "check", want, NULL);
	assert_exit(&r, CLI_OK);
	assert_true(has(r.out, "wide.yaml: ok (policy wide, 3 rules)"));
	assert_true(has(r.out, "except secret.example.com"));
	assert_true(has(r.err, "is still allowed by egress[1]"));	/* the except undone */
	assert_true(has(r.err, "10.0.0.0/8 opens"));	/* the never-pin warning */
	/* The wildcard rule's tunnelling defaults; none for exact names (issue 25). */
	/* Informational lines are notes, FILE:LINE:COL: note: (never FILE:LINE: alone,
	 * the shape of an error); warnings carry a column too. */
	assert_true(has(r.out, "wide.yaml:3:5: note: egress[0]: DNS tunnelling: 500 names per 10m "
			"a sandbox, encoded names refused (the defaults of a wildcard rule)"));
	assert_true(has(r.out, "wide.yaml:3:5: note: egress[0]: except secret.example.com"));
	assert_true(has(r.err, "wide.yaml:3:5: warning: egress[0].except[0]"));
	assert_true(has(r.err, "wide.yaml:5:5: warning: egress[2].cidrs[0] 10.0.0.0/8 opens"));
	assert_false(has(r.out, "egress[1]: DNS tunnelling"));
	box_run_done(&r);
	assert_int_equal(unlink(want), 0);

	/* What an SNI check cannot prove (docs/sni.md), and one name in two files. */
	box_put("l7.yaml", "name: l7\negress:\n"
		"  - {domains: [api.example.com], ports: [443], tls: {sni: enforce}}\n"
		"  - {domains: [cdn.example.com], ports: [443]}\n"
		"  - {cidrs: [198.51.100.0/24], ports: [443]}\n"
		"  - {domains: [api.example.com], ports: [443], protocol: udp}\n");
	box_put("l7-again.yaml", "name: l7\negress: []\n");
	box_path(want, sizeof(want), "l7.yaml");
	box_path(again, sizeof(again), "l7-again.yaml");
	netd_plain(&r, "policy", "check", want, again, NULL);
	assert_exit(&r, CLI_REJECTED);
	assert_true(has(r.out, "l7.yaml: ok (policy l7, 4 rules)"));
	assert_true(has(r.err, "are likely one site's"));	/* api. and cdn.example.com */
	assert_true(has(r.err, "cidrs 198.51.100.0/24) gives tcp port 443"));
	/* egress[3], api.example.com's HTTP/3 twin, inherits the check: each
	 * warning is said once, about the tcp rule, never about the udp one. */
	assert_true(has(r.err, "egress[1].domains[0] cdn.example.com"));
	assert_false(has(strstr(r.err, "egress[1].domains[0] cdn.example.com") + 1,
			 "egress[1].domains[0] cdn.example.com"));
	assert_false(has(r.err, "with egress[3]"));
	assert_false(has(r.err, "where egress[3]"));
	assert_true(has(r.err, "policy name 'l7' is also used by"));
	box_run_done(&r);
}

/*
 * `policy check --config NETD_YAML`: options before or after the files;
 * without FILE, the config's policy_dir; the gateway checks `netd run` makes.
 */
static void test_cli_policy_check_config(void **state)
{
	char dir[PATH_MAX], pol[PATH_MAX], port0[PATH_MAX], on[PATH_MAX], yaml[PATH_MAX + 256];
	struct box_run r;

	(void)state;
	box_path(dir, sizeof(dir), "chk");
	assert_int_equal(mkdir(dir, 0755), 0);
	box_path(dir, sizeof(dir), "chk/pol");
	assert_int_equal(mkdir(dir, 0755), 0);
	box_put("chk/pol/a.yaml", "name: a\negress:\n  - domains: [api.example.com]\n"
		"    ports: [443]\n    gateway: {}\n");
	box_put("chk/pol/.hidden.yaml", "not: a policy\n");
	box_put("chk/pol/README", "not a policy either\n");
	box_path(pol, sizeof(pol), "chk/pol/a.yaml");
	snprintf(yaml, sizeof(yaml), "policy_dir: %s\ngateway:\n  port: 0\n", dir);
	box_put("chk/port0.yaml", yaml);
	snprintf(yaml, sizeof(yaml), "policy_dir: %s\ncredentials:\n  openai:\n"
		 "    header: Authorization\n    placeholder: netd-placeholder-openai-0001\n"
		 "    hosts: [api.openai.com]\n    value: sk-1\n", dir);
	box_put("chk/on.yaml", yaml);
	box_path(port0, sizeof(port0), "chk/port0.yaml");
	box_path(on, sizeof(on), "chk/on.yaml");

	/* gateway.port: 0 and a gateway rule: what `netd run` refuses, at FILE:LINE:COL */
	netd_plain(&r, "policy", "check", "--config", port0, pol, NULL);
	expect(&r, CLI_REJECTED, NULL, "a.yaml:5:14: egress[0].gateway: needs the API gateway");
	/* --config after the files is an option, not a file */
	netd_plain(&r, "policy", "check", pol, "--config", port0, NULL);
	expect(&r, CLI_REJECTED, NULL, "a.yaml:5:14: egress[0].gateway: needs the API gateway");
	netd_plain(&r, "policy", "check", pol, "--config=" , NULL);
	expect(&r, CLI_USAGE, NULL, "--config wants a FILE");
	/* no FILE: every policy file of policy_dir, as `netd run` picks them */
	netd_plain(&r, "policy", "check", "--config", port0, NULL);
	expect(&r, CLI_REJECTED, NULL, "a.yaml:5:14: egress[0].gateway: needs the API gateway");
	netd_plain(&r, "policy", "check", "--config", on, NULL);
	assert_exit(&r, CLI_OK);
	assert_true(has(r.out, "/chk/pol/a.yaml: ok (policy a, 1 rule)"));
	assert_false(has(r.out, "hidden"));
	assert_false(has(r.err, "hidden"));
	box_run_done(&r);
	/* valid but surely not meant: warnings at FILE:LINE:COL, exit 0 */
	box_put("chk/w.yaml", "name: w\negress:\n  - domains: [api.example.com]\n"
		"    ports: [80]\n    gateway: { credentials: [openai], methods: [get] }\n");
	box_path(pol, sizeof(pol), "chk/w.yaml");
	netd_plain(&r, "policy", "check", pol, "--config", on, NULL);
	assert_exit(&r, CLI_OK);
	assert_true(has(r.err, "w.yaml:5:30: warning: egress[0].gateway.credentials[0]: the hosts "
			"of credential 'openai' (api.openai.com) cover none of this rule's domains"));
	assert_true(has(r.err, "w.yaml:5:49: warning: egress[0].gateway.methods[0]: 'get': methods "
			"are case-sensitive (RFC 9110 9.1); did you mean GET?"));
	assert_true(has(r.err, "w.yaml:5:14: warning: egress[0].gateway: port 80 is steered to "
			"the gateway, which terminates TLS only"));
	box_run_done(&r);
	/* a wildcard over public suffixes (the PSL's text, Debian's publicsuffix) */
	box_put("chk/amz.yaml", "name: amz\negress:\n  - domains: [\"*.amazonaws.com\"]\n"
		"    ports: [443]\n  - domains: [\"*.b.amazonaws.com\"]\n    ports: [80]\n");
	box_path(pol, sizeof(pol), "chk/amz.yaml");
	netd_plain(&r, "policy", "check", pol, NULL);
	assert_exit(&r, CLI_OK);
	assert_true(has(r.err, "amz.yaml:3:15: warning: egress[0].domains[0] *.amazonaws.com covers "));
	assert_true(has(r.err, "public suffixes below it (") && has(r.err, ".amazonaws.com, ...)"));
	assert_false(has(r.err, "egress[1].domains[0]"));	/* nothing below b.amazonaws.com */
	box_run_done(&r);
	box_path(pol, sizeof(pol), "chk/w.yaml");
	/* an unknown option is a usage error, not a file name */
	netd_plain(&r, "policy", "check", pol, "--confg", on, NULL);
	expect(&r, CLI_USAGE, NULL, "unknown option '--confg'");
	/* `policy check` with no FILE reads the default netd.yaml's policy_dir,
	 * as its help says; without that file, the default policy_dir, as `netd
	 * run` does (exit 3 when that is missing too, not a usage error).  Only
	 * where the machine has neither. */
	if (access("/etc/netd/netd.yaml", F_OK) < 0 && access("/etc/netd/policies", F_OK) < 0) {
		netd_plain(&r, "policy", "check", NULL);
		expect(&r, CLI_NOT_FOUND, NULL, "netd: policy check: no /etc/netd/netd.yaml, so the "
		       "default policy_dir /etc/netd/policies (as `netd run` without a netd.yaml)\n"
		       "netd: policy check: policy_dir /etc/netd/policies: No such file or "
		       "directory\n");
	}
	netd_plain(&r, "policy", "check", "--help", NULL);
	expect(&r, CLI_OK, "of the netd.yaml --config names, else of /etc/netd/netd.yaml", NULL);
}

/* `audit` and `policy suggest` over what the daemon wrote for web's DNS. */
static void test_cli_audit_suggest(void **state)
{
	char a[ADDR_STRLEN], log[PATH_MAX];
	struct box_run r;
	json_t *o;

	assert_int_equal(box_dns_ask(web_v4, "pypi.org", a, sizeof(a)), 0);
	assert_string_equal(a, BOX_ANSWER_A);
	assert_int_equal(box_dns_ask(web_v4, "evil.example", a, sizeof(a)), 3);
	assert_int_equal(box_count_when("audit.jsonl", "\"qname\":\"evil.example\"", 1), 1);
	box_path(log, sizeof(log), "audit.jsonl");

	netd_plain(&r, "audit", "--file", log, "--sandbox", "web", "--event", "dns", NULL);
	assert_exit(&r, CLI_OK);
	assert_true(has(r.out, "pypi.org"));
	assert_true(has(r.out, "evil.example"));
	assert_false(has(r.out, "\"action\""));
	box_run_done(&r);
	netd_plain(&r, "audit", "--file", log, "--domain", "pypi.org", "--json", NULL);
	assert_exit(&r, CLI_OK);
	o = json_loads(r.out, JSON_DISABLE_EOF_CHECK, NULL);	/* the first line */
	assert_non_null(o);
	assert_string_equal(box_jstr(o, "sandbox"), "web");
	json_decref(o);
	assert_false(has(r.out, "evil.example"));
	box_run_done(&r);
	/* No --file: the running daemon says where its log is. */
	netd(&r, "audit", "--event", "dns", "--sandbox", "web", NULL);
	expect(&r, CLI_OK, "pypi.org", NULL);
	/* The summary folds conn and deny records, which a box has none of (no conntrack). */
	netd_plain(&r, "audit", "--file", log, "--summary", NULL);
	assert_exit(&r, CLI_OK);
	assert_true(has(r.out, "SANDBOX"));
	assert_false(has(r.out, "pypi.org"));
	box_run_done(&r);

	netd_plain(&r, "policy", "suggest", "--sandbox", "web", "--file", log, "--name", "web-seen",
		   NULL);
	assert_exit(&r, CLI_OK);
	/* A box has no conntrack, so no connection: nothing to allow, the names noted. */
	assert_true(has(r.out, "2 DNS records, 0 connections"));
	assert_true(has(r.out, "\nname: web-seen\n"));
	assert_true(has(r.out, "\negress: []"));
	assert_true(has(r.out, "denied by the policy in force: evil.example (1 query)"));
	assert_true(has(r.out, "resolved, never connected to: pypi.org (1 query)"));
	box_put("suggested.yaml", r.out);
	box_run_done(&r);
	box_path(log, sizeof(log), "suggested.yaml");
	netd_plain(&r, "policy", "check", log, NULL);
	expect(&r, CLI_OK, "ok (policy web-seen, 0 rules)", NULL);
	box_path(log, sizeof(log), "audit.jsonl");
	netd_plain(&r, "policy", "suggest", "--file", log, NULL);
	expect(&r, CLI_USAGE, NULL, NULL);
}

/*
 * `audit` over records a box cannot make (no conntrack, nflog or SNI
 * check): conn, deny and sni records as docs/audit.md shows them, a
 * line that is not JSON; the table, the filters, --last, the summary.
 */
static void test_cli_audit_records(void **state)
{
	char log[PATH_MAX];
	struct box_run r;
	json_t *o;

	box_put("records.jsonl",
		"{\"ts\":\"2026-11-30T07:20:00.100Z\",\"event\":\"dns\",\"sandbox\":\"sb1\","
		"\"qname\":\"pypi.org\",\"qtype\":\"A\",\"verdict\":\"allow\",\"rcode\":\"NOERROR\"}\n"
		"{\"ts\":\"2026-11-30T07:20:02.623Z\",\"event\":\"conn\",\"sandbox\":\"sb1\","
		"\"proto\":\"tcp\",\"dst\":\"198.51.100.10\",\"dport\":443,\"domain\":\"pypi.org\","
		"\"bytes_out\":2452,\"bytes_in\":1053778}\n"
		"not a record\n"
		"{\"ts\":\"2026-11-30T07:21:03.104Z\",\"event\":\"deny\",\"sandbox\":\"sb1\","
		"\"proto\":\"tcp\",\"dst\":\"203.0.113.66\",\"dport\":80,\"domain\":null,"
		"\"reason\":\"not-pinned\",\"count\":3}\n"
		"{\"ts\":\"2026-11-30T07:22:00.000Z\",\"event\":\"conn\",\"sandbox\":\"sb2\","
		"\"proto\":\"tcp\",\"dst\":\"198.51.100.11\",\"dport\":443,"
		"\"domain\":\"files.pythonhosted.org\",\"bytes_out\":10,\"bytes_in\":20}\n");
	box_path(log, sizeof(log), "records.jsonl");

	netd_plain(&r, "audit", "--file", log, NULL);
	assert_false(has(r.out, "not a record"));
	expect_lines(&r, (const char *[]){ "198.51.100.10:443", "1053778", "not-pinned x3",
					   "203.0.113.66:80", "files.pythonhosted.org", NULL });
	netd_plain(&r, "audit", "--file", log, NULL);
	expect(&r, CLI_OK, NULL, "1 lines were not JSON records");

	/* Filters: each keeps only what it names. */
	netd_plain(&r, "audit", "--file", log, "--verdict", "deny", "--json", NULL);
	assert_false(has(r.out, "pypi.org"));
	expect(&r, CLI_OK, "\"reason\":\"not-pinned\"", NULL);
	netd_plain(&r, "audit", "--file", log, "--dst", "198.51.100.0/24", "--port", "443", NULL);
	assert_false(has(r.out, "203.0.113.66"));
	expect_lines(&r, (const char *[]){ "198.51.100.10:443", "198.51.100.11:443", NULL });
	netd_plain(&r, "audit", "--file", log, "--domain", "*.pythonhosted.org", NULL);
	assert_false(has(r.out, "pypi.org"));
	expect(&r, CLI_OK, "files.pythonhosted.org", NULL);
	netd_plain(&r, "audit", "--file", log, "--since", "2026-11-30T07:21",
		   "--until", "2026-11-30T07:21", NULL);
	assert_false(has(r.out, "pypi.org"));
	assert_false(has(r.out, "sb2"));
	expect(&r, CLI_OK, "not-pinned", NULL);
	netd_plain(&r, "audit", "--file", log, "--last", "1", "--json", NULL);
	o = ok_json(&r);
	assert_string_equal(box_jstr(o, "sandbox"), "sb2");
	json_decref(o);
	netd_plain(&r, "audit", "--file", log, "--since", "yesterday", NULL);
	expect(&r, CLI_USAGE, NULL, NULL);

	/* The summary: per sandbox and name, connections, bytes and denied packets. */
	netd_plain(&r, "audit", "--file", log, "--summary", NULL);
	expect_lines(&r, (const char *[]){ "SANDBOX", "pypi.org", "2452", "1053778",
					   "files.pythonhosted.org", NULL });
	netd_plain(&r, "audit", "--file", log, "--summary", "--json", "--sandbox", "sb1", NULL);
	assert_exit(&r, CLI_OK);
	assert_true(has(r.out, "\"domain\":\"pypi.org\",\"conns\":1,\"bytes_out\":2452,"
			       "\"bytes_in\":1053778,\"denied\":0"));
	assert_true(has(r.out, "\"denied\":3"));
	assert_false(has(r.out, "sb2"));
	box_run_done(&r);
}

/* `sandbox delete`: gone from the daemon and the model; a second delete is not found. */
static void test_cli_delete(void **state)
{
	char key[256];
	struct box_run r;

	netd(&r, "sandbox", "delete", "web", NULL);
	expect(&r, CLI_OK, "sandbox web deleted", NULL);
	box_ifname_key(web_if, key, sizeof(key));
	assert_false(box_model_has("sandbox_ifs", key));
	assert_false(box_file_exists("state/sandboxes/web.json"));
	netd(&r, "sandbox", "delete", "web", NULL);
	expect(&r, CLI_NOT_FOUND, NULL, NULL);
	netd(&r, "sandbox", "delete", "job", NULL);
	expect(&r, CLI_OK, NULL, NULL);
}

/* ---- netd-cni ----------------------------------------------------------------------- */

/*
 * The network config netd-cni reads on stdin; @extra: more members, "" for
 * none.  In one of four static buffers, used round: valid until the
 * fourth call after.
 */
static const char *cni_conf(const char *version, const char *extra)
{
	static char buf[4][2 * PATH_MAX + 512];
	static unsigned int next;
	char *s = buf[next++ % 4];
	int n = snprintf(s, sizeof(buf[0]),
			 "{\"cniVersion\": \"%s\", \"name\": \"boxnet\", \"type\": \"netd-cni\", "
			 "\"socket\": \"%s\", \"tombstoneDir\": \"%s/state/tombstones\", "
			 "\"policy\": \"python-dev\"%s}",
			 version, sock_arg, box_root, extra);

	assert_true(n > 0 && (size_t)n < sizeof(buf[0]));
	return s;
}

/* netd-cni with CNI_COMMAND=@cmd, container @cid, netns ROOT/netns/@cid, @conf on stdin. */
static void cni(struct box_run *r, const char *cmd, const char *cid, const char *conf)
{
	static char e_cmd[64], e_cid[128], e_ns[2 * PATH_MAX], e_path[2 * PATH_MAX];
	const char *argv[] = { cni_bin, NULL };
	const char *env[] = { e_cmd, e_cid, "CNI_IFNAME=eth0", e_ns, e_path, NULL };

	snprintf(e_cmd, sizeof(e_cmd), "CNI_COMMAND=%s", cmd);
	snprintf(e_cid, sizeof(e_cid), "CNI_CONTAINERID=%s", cid);
	snprintf(e_ns, sizeof(e_ns), "CNI_NETNS=%s/netns/%s", box_root, cid);
	snprintf(e_path, sizeof(e_path), "CNI_PATH=%s/cni-bin", box_root);
	box_run(argv, env, conf, r);
}

/*
 * GET the netd sandbox of container @cid on boxnet (as netd-cni names it).
 * @ret: its answer (caller decrefs), or NULL to drop it.  Return: the HTTP status.
 */
static int pod_sandbox(const char *cid, json_t **ret)
{
	char name[CNI_SANDBOX_NAME_LEN + 1], path[128];
	json_t *o;
	int status;

	snprintf(path, sizeof(path), "/v1/sandboxes/%s", cni_sandbox_name("boxnet", cid, "eth0",
									    name));
	status = box_api("GET", path, NULL, &o);
	if (ret)
		*ret = o;
	else
		json_decref(o);
	return status;
}

/* A container's netns, as a runtime would have made it (a file in the box). */
static void pod_netns(const char *cid)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "netns/%s", cid);
	box_put(rel, "netns\n");
}

static json_t *cni_error(const struct box_run *r, int code)
{
	json_t *o = out_json(r);

	assert_int_equal(r->status, 1);
	if (json_integer_value(json_object_get(o, "code")) != code)
		fail_msg("CNI error %lld, wanted %d: %s", (long long)json_integer_value(
				 json_object_get(o, "code")), code, r->out);
	return o;
}

/* netd-cni @cmd for @cid refused with CNI error @code (spec §5), nothing else said on stdout. */
static void cni_refused(const char *cmd, const char *cid, const char *conf, int code)
{
	struct box_run r;

	cni(&r, cmd, cid, conf);
	json_decref(cni_error(&r, code));
	box_run_done(&r);
}

/* netd-cni @cmd for @cid succeeded with nothing on stdout (DEL, STATUS: spec §5). */
static void cni_quiet(const char *cmd, const char *cid, const char *conf)
{
	struct box_run r;

	cni(&r, cmd, cid, conf);
	assert_exit(&r, 0);
	assert_string_equal(r.out, "");
	box_run_done(&r);
}

/* VERSION, and a config or environment netd-cni refuses before asking netd. */
static void test_cni_version_errors(void **state)
{
	const char *argv[] = { cni_bin, NULL };
	const char *env[] = { "CNI_COMMAND=VERSION", NULL };
	const char *conf = cni_conf("1.1.0", "");
	struct box_run r;
	json_t *o, *v;

	box_run(argv, env, "{\"cniVersion\": \"1.0.0\"}", &r);
	o = ok_json(&r);
	assert_string_equal(box_jstr(o, "cniVersion"), "1.0.0");
	v = json_object_get(o, "supportedVersions");
	assert_true(json_array_size(v) >= 5);
	json_decref(o);

	cni_refused("ADD", "c0", "{\"cniVersion\": \"9.9.9\", \"name\": \"boxnet\", \"type\": \"x\"}",
		    CNI_ERR_VERSION);
	cni_refused("ADD", "c0", "not json", CNI_ERR_DECODE);
	cni(&r, "ADD", "bad/id", conf);
	o = cni_error(&r, CNI_ERR_ENV);
	assert_true(has(box_jstr(o, "details"), "CNI_CONTAINERID"));
	json_decref(o);
	box_run_done(&r);
	cni_refused("FROB", "c0", conf, CNI_ERR_ENV);
	cni_refused("ADD", "c0", cni_conf("1.1.0", ", \"policy\": \"nope\""),	/* "policy" twice */
		    CNI_ERR_DECODE);
	cni_quiet("STATUS", "c0", conf);	/* netd answers */
}

/* ADD: the sandbox netd made for the container, and the spec §5 result. */
static void test_cni_add(void **state)
{
	const char *conf = cni_conf("1.1.0", "");
	char key[256];
	struct box_run r;
	json_t *o, *res, *ip;

	pod_netns("c1");
	cni(&r, "ADD", "c1", conf);
	assert_exit(&r, 0);
	res = out_json(&r);
	box_run_done(&r);
	assert_string_equal(box_jstr(res, "cniVersion"), "1.1.0");
	ip = json_array_get(json_object_get(res, "ips"), 0);
	assert_non_null(ip);
	assert_true(has(box_jstr(ip, "address"), "/30"));
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(res,
		"dns"), "nameservers"), 0)), box_jstr(ip, "gateway"));

	/* netd's side: that sandbox, that netns, those rules. */
	assert_int_equal(pod_sandbox("c1", &o), 200);
	assert_string_equal(box_jstr(o, "policy"), "python-dev");
	assert_true(has(box_jstr(ip, "address"), box_jstr(o, "ipv4")));
	assert_true(has(box_jstr(o, "netns"), "/netns/c1"));
	box_ifname_key(box_jstr(o, "host_ifname"), key, sizeof(key));
	assert_true(box_model_has("sandbox_ifs", key));
	json_decref(o);
	json_decref(res);

	/* A second ADD of the same attachment: "exists", nothing new. */
	cni_refused("ADD", "c1", conf, CNI_ERR_EXISTS);

	/* A policy netd does not have: refused before anything is made. */
	pod_netns("c9");
	{
		const char *argv[] = { cni_bin, NULL };
		char e_ns[2 * PATH_MAX];
		const char *env[] = { "CNI_COMMAND=ADD", "CNI_CONTAINERID=c9", "CNI_IFNAME=eth0",
				      e_ns, "CNI_ARGS=IgnoreUnknown=1;NETD_POLICY=nope", NULL };
		char *c = NULL;

		snprintf(e_ns, sizeof(e_ns), "CNI_NETNS=%s/netns/c9", box_root);
		assert_true(asprintf(&c, "{\"cniVersion\": \"1.1.0\", \"name\": \"boxnet\", "
				     "\"type\": \"netd-cni\", \"socket\": \"%s\"}", sock_arg) > 0);
		box_run(argv, env, c, &r);
		free(c);
	}
	json_decref(cni_error(&r, CNI_ERR_POLICY));
	box_run_done(&r);
	assert_int_equal(pod_sandbox("c9", NULL), 404);
}

/*
 * ADD with the runtime's bandwidth capability (Kubernetes' bandwidth
 * annotations, bits per second): netd shapes the sandbox to them; a bad
 * rate is refused with nothing made.
 */
static void test_cni_bandwidth(void **state)
{
	const char *conf = cni_conf("1.1.0", ", \"runtimeConfig\": {\"bandwidth\": "
				    "{\"egressRate\": 20000000, \"ingressRate\": 100000000}}");
	struct box_run r;
	json_t *o, *bw;

	pod_netns("c5");
	cni(&r, "ADD", "c5", conf);
	assert_exit(&r, 0);
	box_run_done(&r);
	assert_int_equal(pod_sandbox("c5", &o), 200);
	bw = json_object_get(o, "bandwidth");
	assert_string_equal(box_jstr(json_object_get(bw, "egress"), "limit"), "20mbit");
	assert_string_equal(box_jstr(json_object_get(bw, "ingress"), "limit"), "100mbit");
	assert_string_equal(box_jstr(json_object_get(bw, "egress"), "from"), "sandbox");
	assert_true(box_count_in("link.log", "ingress 100000000 egress 20000000\n") >= 1);
	json_decref(o);
	cni_quiet("DEL", "c5", conf);
	assert_int_equal(pod_sandbox("c5", NULL), 404);

	pod_netns("c6");
	cni(&r, "ADD", "c6", cni_conf("1.1.0", ", \"runtimeConfig\": {\"bandwidth\": "
				     "{\"egressRate\": 1}}"));
	json_decref(cni_error(&r, CNI_ERR_NETD));	/* 1 bit/s: netd says why */
	box_run_done(&r);
	assert_int_equal(pod_sandbox("c6", NULL), 404);
}

/* CHECK of an attachment netd has no record of; DEL (twice: idempotent). */
static void test_cni_check_del(void **state)
{
	const char *conf = cni_conf("1.1.0", "");
	struct box_run r;

	pod_netns("c2");
	cni_refused("CHECK", "c2", conf, CNI_ERR_CHECK_RECORD);
	conf = cni_conf("0.3.1", "");
	cni_refused("CHECK", "c1", conf, CNI_ERR_VERSION);	/* no CHECK before 0.4.0 */

	conf = cni_conf("1.1.0", "");
	cni_quiet("DEL", "c1", conf);
	assert_int_equal(pod_sandbox("c1", NULL), 404);
	cni(&r, "DEL", "c1", conf);
	expect(&r, 0, NULL, NULL);
}

/* GC: this network's sandboxes not in validAttachments go; others stay. */
static void test_cni_gc(void **state)
{
	const char *conf = cni_conf("1.1.0", "");
	struct box_run r;
	json_t *o;

	pod_netns("k1");
	pod_netns("k2");
	cni(&r, "ADD", "k1", conf);
	expect(&r, 0, NULL, NULL);
	cni(&r, "ADD", "k2", conf);
	expect(&r, 0, NULL, NULL);
	assert_int_equal(box_api("POST", "/v1/sandboxes",
				 "{\"name\": \"bystander\", \"policy\": \"deny-all\"}", &o), 201);
	json_decref(o);
	const char *gc = cni_conf("1.1.0", ", \"cni.dev/valid-attachments\": "
			       "[{\"containerID\": \"k2\", \"ifname\": \"eth0\"}]");
	cni(&r, "GC", "k1", gc);
	expect(&r, 0, NULL, NULL);
	assert_int_equal(pod_sandbox("k1", NULL), 404);
	assert_int_equal(pod_sandbox("k2", NULL), 200);
	assert_int_equal(box_api("DELETE", "/v1/sandboxes/bystander", NULL, &o), 200);
	json_decref(o);
}

/*
 * An IPAM plugin picks the addresses (spec §4): netd-cni runs it from
 * CNI_PATH, netd uses what it chose, and DEL runs it again to release.
 */
static void test_cni_ipam(void **state)
{
	const char *conf = cni_conf("1.1.0", ", \"ipam\": {\"type\": \"boxipam\"}");
	char rel[128], script[PATH_MAX];
	struct box_run r;
	json_t *res, *o;

	box_put("cni-bin/boxipam",
		"#!/bin/sh\n"
		"echo \"$CNI_COMMAND $CNI_CONTAINERID\" >>\"${0%/*}/../ipam.log\"\n"
		"cat >/dev/null\n"
		"[ \"$CNI_COMMAND\" = ADD ] || exit 0\n"
		"echo '{\"cniVersion\": \"1.1.0\", \"ips\": [{\"address\": \"10.99.0.5/24\", "
		"\"gateway\": \"10.99.0.1\"}], \"routes\": [{\"dst\": \"0.0.0.0/0\"}]}'\n");
	box_path(script, sizeof(script), "cni-bin/boxipam");
	assert_int_equal(chmod(script, 0755), 0);
	box_put("ipam.log", "");
	box_path(script, sizeof(script), "ipam.log");
	assert_int_equal(chmod(script, 0666), 0);

	pod_netns("i1");
	cni(&r, "ADD", "i1", conf);
	assert_exit(&r, 0);
	res = out_json(&r);
	box_run_done(&r);
	assert_string_equal(box_jstr(json_array_get(json_object_get(res, "ips"), 0), "address"),
			    "10.99.0.5/24");
	json_decref(res);
	assert_int_equal(pod_sandbox("i1", &o), 200);
	assert_string_equal(box_jstr(o, "ipv4"), "10.99.0.5");
	snprintf(rel, sizeof(rel), "state/sandboxes/%s.json", box_jstr(o, "name"));
	json_decref(o);
	assert_true(box_file_exists(rel));

	cni(&r, "DEL", "i1", conf);
	expect(&r, 0, NULL, NULL);
	assert_int_equal(box_count_in("ipam.log", "ADD i1\n"), 1);
	assert_int_equal(box_count_in("ipam.log", "DEL i1\n"), 1);
	assert_int_equal(pod_sandbox("i1", NULL), 404);
	assert_false(box_file_exists(rel));
}

/*
 * netd down: ADD fails closed (try later), DEL leaves a tombstone, and
 * netd's next start drops the sandbox it names (netd/daemon/tombstones.c).
 */
static void test_cni_tombstone(void **state)
{
	const char *conf = cni_conf("1.1.0", "");
	char name[CNI_SANDBOX_NAME_LEN + 1], rel[128];
	struct box_run r;

	cni_sandbox_name("boxnet", "k2", "eth0", name);	/* left by test_cni_gc */
	assert_int_equal(box_daemon_stop(), 0);
	pod_netns("c5");
	cni_refused("ADD", "c5", conf, CNI_ERR_TRY_LATER);
	cni_refused("STATUS", "c5", conf, CNI_ERR_STATUS_DOWN);
	cni(&r, "DEL", "k2", conf);
	expect(&r, 0, NULL, "tombstone");
	snprintf(rel, sizeof(rel), "state/tombstones/%s", name);
	assert_true(box_file_exists(rel));

	assert_int_equal(box_daemon_start(), 0);
	assert_int_equal(pod_sandbox("k2", NULL), 404);
	assert_false(box_file_exists(rel));
}

/*
 * policy_watch: true (netd/daemon/policywatch.c): a policy file written
 * into policy_dir is loaded without a reload request; and SIGUSR1
 * reopens the audit log (netd/daemon/opsig.c), as logrotate's postrotate
 * asks.
 */
static void test_watch_usr1(void **state)
{
	char *conf = box_slurp("netd.yaml"), *text = NULL, old[PATH_MAX], cur[PATH_MAX];
	struct box_run r;

	assert_non_null(conf);
	assert_true(asprintf(&text, "%spolicy_watch: true\n", conf) > 0);
	assert_int_equal(box_daemon_stop(), 0);
	box_put("netd.yaml", text);
	free(text);
	free(conf);
	assert_int_equal(box_daemon_start(), 0);

	box_put("policies/watched.yaml", "name: watched\negress: []\n");
	/* The watch debounces, then reloads on the daemon's loop: ask until it did. */
	assert_int_equal(box_api_until("/v1/policies/watched", 200), 200);

	/* Rotated away, then SIGUSR1: the next record goes to a new file at the old path. */
	box_path(cur, sizeof(cur), "audit.jsonl");
	box_path(old, sizeof(old), "audit.jsonl.1");
	assert_int_equal(rename(cur, old), 0);
	assert_int_equal(kill(box_daemon_pid(), SIGUSR1), 0);
	/* The signal is handled on the loop, before the next request: a create after it. */
	assert_int_equal(box_count_when("daemon.log", "SIGUSR1: audit log", 1), 1);
	netd(&r, "sandbox", "create", "after-usr1", "--policy", "watched", NULL);
	expect(&r, CLI_OK, NULL, NULL);
	assert_int_equal(box_count_when("audit.jsonl", "\"after-usr1\"", 1), 1);
	assert_int_equal(box_count_in("audit.jsonl.1", "\"after-usr1\""), 0);
}

/* `netd-cni chain DIR ENTRY.json` / `unchain DIR`: the installer's conflist surgery. */
static void test_cni_chain(void **state)
{
	char dir[PATH_MAX], entry[PATH_MAX];
	const char *chain[] = { cni_bin, "chain", dir, entry, NULL };
	const char *unchain[] = { cni_bin, "unchain", dir, NULL };
	struct box_run r;
	char *text;

	box_path(dir, sizeof(dir), "net.d");
	assert_int_equal(mkdir(dir, 0777), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	box_put("net.d/10-bridge.conflist",
		"{\"cniVersion\": \"1.0.0\", \"name\": \"k8s\", \"plugins\": "
		"[{\"type\": \"bridge\"}, {\"type\": \"portmap\"}]}\n");
	box_path(entry, sizeof(entry), "entry.json");
	box_put("entry.json", "{\"type\": \"netd-cni\", \"mode\": \"chained\"}\n");

	box_run(chain, NULL, NULL, &r);
	expect(&r, 0, NULL, NULL);
	text = box_slurp("net.d/10-bridge.conflist");
	assert_true(has(text, "\"netd-cni\""));
	assert_true(strstr(text, "portmap") < strstr(text, "netd-cni"));	/* appended */
	free(text);
	box_run(chain, NULL, NULL, &r);	/* twice: still once */
	assert_exit(&r, 0);
	box_run_done(&r);
	assert_int_equal(box_count_in("net.d/10-bridge.conflist", "netd-cni"), 1);

	box_run(unchain, NULL, NULL, &r);
	expect(&r, 0, NULL, NULL);
	assert_int_equal(box_count_in("net.d/10-bridge.conflist", "netd-cni"), 0);
	assert_int_equal(box_count_in("net.d/10-bridge.conflist", "portmap"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_basics),
		cmocka_unit_test(test_cli_create),
		cmocka_unit_test(test_cli_tap),
		cmocka_unit_test(test_cli_list_show),
		cmocka_unit_test(test_cli_policy),
		cmocka_unit_test(test_cli_policy_check_config),
		cmocka_unit_test(test_cli_policy_check_limits),
		cmocka_unit_test(test_cli_audit_suggest),
		cmocka_unit_test(test_cli_audit_records),
		cmocka_unit_test(test_cli_delete),
		cmocka_unit_test(test_cni_version_errors),
		cmocka_unit_test(test_cni_add),
		cmocka_unit_test(test_cni_bandwidth),
		cmocka_unit_test(test_cni_check_del),
		cmocka_unit_test(test_cni_gc),
		cmocka_unit_test(test_cni_ipam),
		cmocka_unit_test(test_cni_tombstone),
		cmocka_unit_test(test_cni_chain),
		cmocka_unit_test(test_watch_usr1),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
