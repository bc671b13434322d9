/*
 * netd/cli/ - the `netd` command: argv to subcommand (cli.c), help texts
 * and exit statuses (cli_help.c), tables (cli_table.c), `netd audit`
 * (cli_audit.c), `netd policy suggest` (cli_suggest.c over suggest.c and
 * suggest_render.c, pure), `netd policy replay` (cli_replay.c over pdiff.c,
 * pure).  Every command but `run`, `policy check` and
 * `exec`'s last step is a client of the control socket.
 */
/*
 * cli - `netd` subcommands.  Output for humans by default, JSON with
 * --json; errors on stderr with the exit statuses of enum cli_exit
 * (netd/cli/cli_help.h): 2 usage, 3 not found, 4 conflict, 5 daemon
 * unreachable, 6 rejected, 7 changed (policy replay --fail-on), 1 anything
 * else.  `--help` anywhere before a "--" prints that command's help
 * (netd/cli/cli_help.c).
 */
#include "netd/cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/fsutil.h"
#include "common/httpc.h"
#include "common/paths.h"
#include "common/workload.h"
#include "netd/api/ctl.h"
#include "netd/daemon.h"
#include "netd/link/link.h"
#include "netd/link/nsexec.h"
#include "netd/model/policy.h"
#include "netd/cli/cli_replay.h"
#include "netd/cli/cli_suggest.h"
#include "netd/link/tap.h"
#include "netd/cli/cli_args.h"
#include "netd/cli/cli_audit.h"
#include "netd/cli/cli_check.h"
#include "netd/cli/cli_help.h"
#include "netd/cli/cli_table.h"
#include "netd/common/version.h"
#include "netd/gw/worker.h"


static const char usage_text[] =
	"usage: netd [--socket PATH] COMMAND ...\n"
	"\n"
	"  run [--config FILE]                     run the daemon in the foreground\n"
	"                                          (default config: " NETD_DEFAULT_CONFIG " if present)\n"
	"  sandbox create NAME --policy P [--netns PATH | --pid PID] [--ifname IF] [--mode M] [--json]\n"
	"                 [--egress-rate RATE] [--ingress-rate RATE]   bandwidth limits\n"
	"  sandbox create NAME --policy P --tap [--tap-name TAP] [--tap-owner UID[:GID]] [--tap-queues N]\n"
	"                 [--tap-mtu N] [--egress-rate RATE] [--ingress-rate RATE] [--mode M] [--json]\n"
	"                                          a microVM's tap (docs/microvm.md)\n"
	"  sandbox list [--json]\n"
	"  sandbox show NAME [--json]\n"
	"  sandbox delete NAME\n"
	"  exec [--user USER[:GROUP]] [--no-caps | --net-admin] NAME -- COMMAND [ARG...]\n"
	"                                          run COMMAND inside sandbox NAME (as root\n"
	"                                          with a container's capabilities)\n"
	"  policy check [--config NETD_YAML] [FILE...]   validate policy files (no daemon\n"
	"                                          needed; no FILE: the policy_dir of\n"
	"                                          NETD_YAML, default " NETD_DEFAULT_CONFIG ")\n"
	"  policy suggest --sandbox S | --policy P [--since T] [--file AUDIT]... [--name NEW] [--wildcards]\n"
	"                                          a policy from what the audit log shows used\n"
	"  policy replay [--audit FILE]... [--since T] [--sandbox S | --policy P] [--json]\n"
	"                [--fail-on newly-denied|newly-allowed] POLICY.yaml...\n"
	"                                          what proposed policies would decide differently\n"
	"  policy list [--json]\n"
	"  policy show NAME\n"
	"  policy reload [--json]                  re-read policy_dir (all or nothing)\n"
	"  verify [NAME... | --all] [--allowed] [--json]\n"
	"                                          probe each sandbox from inside: does its\n"
	"                                          policy hold? exit 7 if a probe failed\n"
	"  config check [FILE]                     validate netd.yaml, as netd run reads it\n"
	"                                          (no daemon needed; default " NETD_DEFAULT_CONFIG ")\n"
	"  status\n"
	"  ca export [--out FILE]                  the gateway CA's certificate, PEM (made on\n"
	"                                          first use; docs/gateway.md)\n"
	"  audit [--file PATH] [-f] [--sandbox S] [--event E] [--domain D] [--since T] [--until T]\n"
	"        [--json] [--summary]              read the audit log (no daemon needed)\n"
	"\n"
	"  --version                               print the version\n"
	"\n"
	"Clients use the control socket --socket (before COMMAND), else $NETD_SOCKET,\n"
	"else " NETD_DEFAULT_SOCKET "; `netd run` uses --socket, else its config's socket.\n"
	"`netd help` (or -h, --help) prints this on stdout.\n";

static const char *socket_path;
static int api_exit = CLI_FAILED;	/* the exit status for api()'s last failure */

static int usage(void)
{
	fputs(usage_text, stderr);
	return CLI_USAGE;
}

/*
 * usage_of() - a usage error in the words @argv[0..@argc) (@argv[0] the
 * command): which words were not understood, then that command's own
 * usage (cli_help_print()), on stderr.  Return: CLI_USAGE.
 */
static int usage_of(int argc, char **argv)
{
	fputs("netd: not understood:", stderr);
	for (int i = 0; i < argc; i++)
		fprintf(stderr, " %s", argv[i]);
	fputs("\n\n", stderr);
	cli_help_print(argc, argv, stderr);
	return CLI_USAGE;
}

/*
 * One API call; prints the error and returns NULL unless 2xx, with
 * api_exit set from the HTTP status (or CLI_UNREACHABLE).
 */
static json_t *api(const char *method, const char *path, json_t *body, int *ret_status)
{
	json_t *reply = NULL;
	int status = 0, r;

	r = httpc_request(socket_path, method, path, body, &status, &reply);
	json_decref(body);
	if (r < 0) {
		api_exit = CLI_FAILED;
		if (r == -ENOENT || r == -ECONNREFUSED) {
			fprintf(stderr, "netd: cannot reach the daemon at %s: %s (is `netd run` running?)\n",
				socket_path, strerror(-r));
			api_exit = CLI_UNREACHABLE;
		} else {
			fprintf(stderr, "netd: %s %s: %s\n", method, path, strerror(-r));
		}
		return NULL;
	}
	if (ret_status)
		*ret_status = status;
	api_exit = cli_exit_from_http(status);
	if (status < 200 || status > 299) {
		const char *msg = json_string_value(
			json_object_get(json_object_get(reply, "error"), "message"));

		/* The exit status says what kind of error (docs/install.md), not the HTTP code. */
		if (msg)
			fprintf(stderr, "netd: %s\n", msg);
		else
			fprintf(stderr, "netd: %s %s: the daemon answered HTTP %d\n", method, path, status);
		json_decref(reply);
		return NULL;
	}
	return reply ? reply : json_object();
}

static void print_json(const json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s)
		puts(s);
	free(s);
}

static const char *str(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : "-";
}

/* A row's integer cell: @key of object @o, in @buf. */
static const char *num(const json_t *o, const char *key, char *buf, size_t sz)
{
	snprintf(buf, sz, "%lld", (long long)json_integer_value(json_object_get(o, key)));
	return buf;
}

/*
 * `sandbox list`'s CONTAINER cell: the pod as NAMESPACE/NAME (Kubernetes),
 * else the pod name alone (podman puts the container's name there), else
 * the container ID (64 hex digits at its end cut to 12, as docker and
 * crictl print them; nerdctl's "<ns>-<id>" keeps its "<ns>-"), else "-".  @buf: room for a namespace, '/' and a name.
 */
static const char *container_cell(const json_t *sb, char *buf, size_t sz)
{
	const char *ns = json_string_value(json_object_get(sb, "pod_namespace")),
		   *pod = json_string_value(json_object_get(sb, "pod_name")),
		   *cid = json_string_value(json_object_get(sb, "container_id"));

	if (pod && ns)
		snprintf(buf, sz, "%s/%s", ns, pod);
	else if (pod)
		snprintf(buf, sz, "%s", pod);
	else if (cid && strlen(cid) >= 64 &&
		 strspn(cid + strlen(cid) - 64, "0123456789abcdef") == 64)
		snprintf(buf, sz, "%.*s", (int)strlen(cid) - 52, cid);
	else
		snprintf(buf, sz, "%s", cid ? cid : "-");
	return buf;
}

/* `sandbox list`: columns as wide as their widest cell. Return: 0; -ENOMEM. */
static int print_sandbox_table(const json_t *arr)
{
	/*
	 * KIND as main had it, then CONTAINER (the widest); MODE after POLICY.
	 * Scripts find columns by their header (tests/integ/acct_conn.sh),
	 * not by counting.
	 */
	static const char *const head[] = { "NAME", "POLICY", "MODE", "IPV4", "IPV6", "IFACE",
					    "DNS-OK", "DNS-DENY", "CONNS", "BYTES-OUT", "BYTES-IN",
					    "DENIED", "KIND", "CONTAINER" };
	struct cli_table *t = cli_table_new(14, head, "llllllrrrrrrll");
	const json_t *sb;
	size_t i;
	int r = 0;

	if (!t)
		return -ENOMEM;
	json_array_foreach(arr, i, sb) {
		const json_t *dns = json_object_get(sb, "dns_queries"),
			     *tr = json_object_get(sb, "traffic");
		char n[6][24], who[WORKLOAD_POD_NAMESPACE_MAX + WORKLOAD_POD_NAME_MAX + 2];
		const char *row[] = { str(sb, "name"), str(sb, "policy"), str(sb, "mode"),
				      str(sb, "ipv4"),
				      str(sb, "ipv6"), str(sb, "host_ifname"),
				      num(dns, "allowed", n[0], sizeof(n[0])),
				      num(dns, "denied", n[1], sizeof(n[1])),
				      num(tr, "conns", n[2], sizeof(n[2])),
				      num(tr, "bytes_out", n[3], sizeof(n[3])),
				      num(tr, "bytes_in", n[4], sizeof(n[4])),
				      num(tr, "denied", n[5], sizeof(n[5])), str(sb, "kind"),
				      container_cell(sb, who, sizeof(who)) };

		if ((r = cli_table_add(t, row)) < 0)
			break;
	}
	if (r == 0)
		cli_table_print(t, stdout);
	cli_table_free(t);
	return r;
}

static void print_created(const json_t *reply)
{
	if (strcmp(str(reply, "kind"), "tap") == 0) {
		printf("sandbox %s: policy %s (%s mode), tap %s (owner %lld), guest %s via %s, MAC %s, "
		       "MTU %lld\n  kernel argument: %s\n", str(reply, "name"), str(reply, "policy"),
		       str(reply, "mode"), str(reply, "tap"),
		       (long long)json_integer_value(json_object_get(reply, "tap_owner")),
		       str(reply, "guest_ipv4"), str(reply, "gateway_ipv4"), str(reply, "mac"),
		       (long long)json_integer_value(json_object_get(reply, "mtu")),
		       str(reply, "kernel_ip_arg"));
		return;
	}
	printf("sandbox %s: policy %s (%s mode), %s, address %s (%s), DNS %s\n", str(reply, "name"),
	       str(reply, "policy"), str(reply, "mode"), str(reply, "netns"), str(reply, "ipv4"),
	       str(reply, "ipv6"), str(reply, "gateway4"));
}

/* Add "kind": "tap" and the "tap" object to create request @body. Return: 0; -EINVAL (said). */
static int tap_body(json_t *body, const char *tap_owner, const char *tap_name, unsigned queues,
		    unsigned mtu)
{
	uint32_t uid = (uint32_t)getuid(), gid = 0;
	bool group_set = false;
	json_t *t;

	/* Default owner: whoever runs this; a tap is never ownerless. */
	if (tap_owner && cli_tap_owner_arg(tap_owner, &uid, &group_set, &gid) < 0) {
		fprintf(stderr, "netd: --tap-owner wants UID[:GID] (numbers or names), got \"%s\"\n",
			tap_owner);
		return -EINVAL;
	}
	t = json_pack("{s:I}", "owner", (json_int_t)uid);
	if (t && group_set)
		json_object_set_new(t, "group", json_integer(gid));
	if (t && tap_name)
		json_object_set_new(t, "name", json_string(tap_name));
	if (t && queues)
		json_object_set_new(t, "queues", json_integer(queues));
	if (t && mtu)
		json_object_set_new(t, "mtu", json_integer(mtu));
	json_object_set_new(body, "kind", json_string("tap"));
	json_object_set_new(body, "tap", t);
	return 0;
}

static int cmd_sandbox_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "netns", required_argument, NULL, 'n' },
		{ "pid", required_argument, NULL, 'P' },
		{ "ifname", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "tap", no_argument, NULL, 't' },
		{ "tap-name", required_argument, NULL, 'N' },
		{ "tap-owner", required_argument, NULL, 'o' },
		{ "tap-queues", required_argument, NULL, 'q' },
		{ "tap-mtu", required_argument, NULL, 'm' },
		{ "mode", required_argument, NULL, 'M' },
		{ "egress-rate", required_argument, NULL, 'E' },
		{ "ingress-rate", required_argument, NULL, 'I' },
		{ 0 }
	};
	const char *policy = NULL, *netns = NULL, *ifname = NULL, *name = NULL, *mode = NULL;
	const char *tap_name = NULL, *tap_owner = NULL, *rate[2] = { NULL, NULL }, *seen[128] = { 0 };
	unsigned queues = 0, mtu = 0;
	bool json = false, tap = false, tap_opts = false;
	char pidns[64];
	json_t *reply, *body;
	int c;

	optind = 2;
	while ((c = cli_opt_next("sandbox create", argc, argv, opts, NULL, seen)) != -1) {
		switch (c) {
		case 'p': policy = optarg; break;
		case 'n':
			if (netns) {
				fprintf(stderr, "netd: give --netns or --pid, not both\n");
				return CLI_USAGE;
			}
			netns = optarg;
			break;
		case 'i': ifname = optarg; break;
		case 'j': json = true; break;
		case 'M':
			if (strcmp(optarg, "audit") != 0 && strcmp(optarg, "enforce") != 0) {
				fprintf(stderr, "netd: --mode wants audit or enforce, got \"%s\"\n",
					optarg);
				return CLI_USAGE;
			}
			mode = optarg;
			break;
		case 'E': rate[0] = optarg; break;	/* checked by the daemon, as a policy's */
		case 'I': rate[1] = optarg; break;
		case 't': tap = true; break;
		case 'N': tap_name = optarg; tap_opts = true; break;
		case 'o': tap_owner = optarg; tap_opts = true; break;
		case 'q':
			if (cli_uint_arg("--tap-queues", optarg, 1, TAP_QUEUES_MAX, &queues) < 0)
				return CLI_USAGE;
			tap_opts = true;
			break;
		case 'm':
			if (cli_uint_arg("--tap-mtu", optarg, TAP_MTU_MIN, TAP_MTU_MAX, &mtu) < 0)
				return CLI_USAGE;
			tap_opts = true;
			break;
		case 'P': {
			char *end;
			long pid = strtol(optarg, &end, 10);

			if (*end || pid <= 0 || pid > INT_MAX) {
				fprintf(stderr, "netd: --pid wants a process ID, got \"%s\"\n", optarg);
				return CLI_USAGE;
			}
			if (netns) {
				fprintf(stderr, "netd: give --netns or --pid, not both\n");
				return CLI_USAGE;
			}
			snprintf(pidns, sizeof(pidns), "/proc/%ld/ns/net", pid);
			netns = pidns;
			break;
		}
		default:	/* cli_opt_next() said what; then the usage */
			fputc('\n', stderr);
			cli_help_print(2, argv, stderr);
			return CLI_USAGE;
		}
	}
	if (optind < argc)
		name = argv[optind++];
	if (!name || !policy || optind != argc) {
		fprintf(stderr, "netd: sandbox create wants NAME and --policy POLICY\n");
		return CLI_USAGE;
	}
	if (tap_opts && !tap) {
		fprintf(stderr, "netd: --tap-name, --tap-owner, --tap-queues and --tap-mtu need --tap\n");
		return CLI_USAGE;
	}
	if (tap && (netns || ifname)) {
		fprintf(stderr, "netd: a --tap sandbox has no namespace: no --netns, --pid or --ifname\n");
		return CLI_USAGE;
	}
	body = json_pack("{s:s, s:s, s:s?, s:s?, s:s?}", "name", name, "policy", policy,
			 "netns", netns, "ifname", ifname, "mode", mode);
	if (body && (rate[0] || rate[1]))
		json_object_set_new(body, "bandwidth", json_pack("{s:s?, s:s?}", "egress", rate[0],
								 "ingress", rate[1]));
	if (tap && body && tap_body(body, tap_owner, tap_name, queues, mtu) < 0) {
		json_decref(body);
		return CLI_USAGE;
	}
	reply = api("POST", "/v1/sandboxes", body, NULL);
	if (!reply)
		return api_exit;
	if (json)
		print_json(reply);
	else
		print_created(reply);
	json_decref(reply);
	return 0;
}

static int cmd_sandbox(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub)
		return usage_of(argc, argv);
	if (strcmp(sub, "create") == 0)
		return cmd_sandbox_create(argc, argv);
	if (strcmp(sub, "list") == 0) {
		bool json = argc > 2 && strcmp(argv[2], "--json") == 0;
		json_t *reply, *arr;

		if (argc > 3 || (argc == 3 && !json))
			return usage_of(argc, argv);
		reply = api("GET", "/v1/sandboxes", NULL, NULL);
		if (!reply)
			return api_exit;
		arr = json_object_get(reply, "sandboxes");
		if (json) {
			print_json(arr);
		} else {
			if (print_sandbox_table(arr) < 0) {
				json_decref(reply);
				return CLI_FAILED;
			}
		}
		json_decref(reply);
		return 0;
	}
	/* show is JSON already; --json is accepted for symmetry with list. */
	if (strcmp(sub, "show") == 0 && argc == 4 && strcmp(argv[3], "--json") == 0)
		argc = 3;
	if ((strcmp(sub, "show") == 0 || strcmp(sub, "delete") == 0) && argc == 3) {
		char path[512];
		json_t *reply;

		if (!policy_name_valid(argv[2])) {
			fprintf(stderr, "netd: invalid sandbox name \"%s\"\n", argv[2]);
			return CLI_REJECTED;
		}
		snprintf(path, sizeof(path), "/v1/sandboxes/%s", argv[2]);
		reply = api(strcmp(sub, "show") == 0 ? "GET" : "DELETE", path, NULL, NULL);
		if (!reply)
			return api_exit;
		if (strcmp(sub, "show") == 0)
			print_json(reply);
		else
			printf("sandbox %s deleted\n", argv[2]);
		json_decref(reply);
		return 0;
	}
	return usage_of(argc, argv);
}

/* `netd verify`'s report as a table: one row per sandbox and probe, then a summary. */
static int print_verify_table(const json_t *rep)
{
	static const char *const head[] = { "SANDBOX", "PROBE", "VERDICT", "DETAIL" };
	struct cli_table *t = cli_table_new(4, head, "llll");
	const json_t *row;
	size_t i;
	int r = 0;

	if (!t)
		return -ENOMEM;
	json_array_foreach(json_object_get(rep, "results"), i, row) {
		const char *cells[] = { str(row, "sandbox"), str(row, "probe"), str(row, "verdict"),
					str(row, "detail") };

		if ((r = cli_table_add(t, cells)) < 0)
			break;
	}
	if (r == 0)
		cli_table_print(t, stdout);
	cli_table_free(t);
	printf("%s: %lld sandboxes, %lld probes: %lld passed, %lld failed, %lld skipped (%lld ms)\n",
	       json_is_true(json_object_get(rep, "ok")) ? "held" : "NOT HELD",
	       json_integer_value(json_object_get(rep, "sandboxes")),
	       json_integer_value(json_object_get(rep, "probes")),
	       json_integer_value(json_object_get(rep, "passed")),
	       json_integer_value(json_object_get(rep, "failed")),
	       json_integer_value(json_object_get(rep, "skipped")),
	       json_integer_value(json_object_get(rep, "duration_ms")));
	return r;
}

/* netd verify [NAME... | --all] [--allowed] [--json] */
static int cmd_verify(int argc, char **argv)
{
	json_t *body = json_object(), *names = json_array(), *reply;
	bool all = false, json = false, allowed = false;
	int rc;

	if (!body || !names) {
		json_decref(body);
		json_decref(names);
		return CLI_FAILED;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--all") == 0) {
			all = true;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--allowed") == 0) {
			allowed = true;
		} else if (argv[i][0] == '-') {
			json_decref(body);
			json_decref(names);
			return usage_of(argc, argv);
		} else if (!policy_name_valid(argv[i])) {
			fprintf(stderr, "netd: invalid sandbox name \"%s\"\n", argv[i]);
			json_decref(body);
			json_decref(names);
			return CLI_REJECTED;
		} else {
			json_array_append_new(names, json_string(argv[i]));
		}
	}
	if (all == (json_array_size(names) > 0)) {
		fprintf(stderr, "netd: verify takes sandbox names or --all (not both)\n");
		json_decref(body);
		json_decref(names);
		return CLI_USAGE;
	}
	if (all)
		json_object_set_new(body, "all", json_true());
	json_object_set_new(body, "sandboxes", names);
	json_object_set_new(body, "allowed", json_boolean(allowed));
	reply = api("POST", "/v1/verify", body, NULL);
	if (!reply)
		return api_exit;
	if (json)
		print_json(reply);
	else if (print_verify_table(reply) < 0) {
		json_decref(reply);
		return CLI_FAILED;
	}
	/* 0 only when every probe held (docs/install.md, exit codes). */
	rc = json_is_true(json_object_get(reply, "ok")) ? CLI_OK : CLI_VERIFY_FAILED;
	json_decref(reply);
	return rc;
}

/*
 * Can this process enter sandbox @name's netns at @netns?  Return: 0; else
 * an exit status, said why on stderr: a /run/netns entry that is a plain
 * file here is mounted in another mount namespace (netd's own, when it was
 * started under `ip netns exec`).
 */
static int exec_netns_visible(const char *name, const char *netns)
{
	int fd = link_netns_open(netns);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (fd == -EINVAL)
		fprintf(stderr, "netd: sandbox %s: %s is not visible in this mount namespace as a "
			"network namespace: netd mounted it in a mount namespace of its own (was it "
			"started under `ip netns exec`? start it with `nsenter --net=...` instead; "
			"docs/operations.md)\n", name, netns);
	else
		fprintf(stderr, "netd: sandbox %s: %s: %s\n", name, netns, strerror(-fd));
	return 126;
}

/* @a (a JSON array of strings) as "x, y", or "-" when empty, on @out. */
static void print_list(const json_t *a, FILE *out)
{
	const json_t *v;
	size_t i;

	if (!json_array_size(a))
		fputs("-", out);
	json_array_foreach(a, i, v)
		fprintf(out, "%s%s", i ? ", " : "",
			json_string_value(v) ? json_string_value(v) : "?");
}

void cli_reload_print(const json_t *reply, FILE *out)
{
	const json_t *changed = json_object_get(reply, "changed"), *c;
	const json_t *cr = json_object_get(reply, "credentials_read");
	const json_t *cc = json_object_get(reply, "credentials_changed");
	size_t i, n = json_array_size(changed);

	if (!n)
		fprintf(out, "policies reloaded; no sandbox changed\n");
	else
		fprintf(out, "policies reloaded; %zu sandbox%s changed\n", n, n == 1 ? "" : "es");
	/* A reload re-reads every secret too (rotation): say so when the daemon counts them. */
	if (json_is_integer(cr))
		fprintf(out, "credentials: %lld re-read, %lld changed\n",
			(long long)json_integer_value(cr),
			json_is_integer(cc) ? (long long)json_integer_value(cc) : 0LL);
	json_array_foreach(changed, i, c) {
		const json_t *lim = json_object_get(c, "limits"), *v;
		size_t k;

		fprintf(out, "  %s (policy %s): ", str(c, "sandbox"), str(c, "policy"));
		if (json_is_true(json_object_get(c, "deny_all"))) {
			fprintf(out, "the policy is gone: denied all egress\n");
			continue;
		}
		/* Only its limits changed (rates, budgets): say those, not an empty rule diff. */
		if (!json_array_size(lim) || json_array_size(json_object_get(c, "added")) ||
		    json_array_size(json_object_get(c, "removed")) ||
		    json_array_size(json_object_get(c, "pins_removed")) ||
		    json_integer_value(json_object_get(c, "connections_cut"))) {
			fputs("added ", out);
			print_list(json_object_get(c, "added"), out);
			fputs("; removed ", out);
			print_list(json_object_get(c, "removed"), out);
			fprintf(out, "; pins kept %lld, removed %zu; connections cut %lld%s",
				(long long)json_integer_value(json_object_get(c, "pins_kept")),
				json_array_size(json_object_get(c, "pins_removed")),
				(long long)json_integer_value(json_object_get(c, "connections_cut")),
				json_array_size(lim) ? "; " : "");
		}
		json_array_foreach(lim, k, v)
			fprintf(out, "%s%s", k ? "; " : "",
				json_string_value(v) ? json_string_value(v) : "?");
		fputc('\n', out);
	}
}

/* "paths" members of /v1/status that `netd exec` hides, and the client's socket. */
static const char *const exec_hide_keys[] = { "config", "socket", "state_dir", "policy_dir",
					      "audit_log" };
#define EXEC_MAX_HIDE (sizeof(exec_hide_keys) / sizeof(exec_hide_keys[0]) + 1)

/* Is @path one of the first @n entries of @list? */
static bool path_listed(const char *const list[], size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], path) == 0)
			return true;
	return false;
}

/*
 * The paths netd uses, as the daemon reports them (it read its config; we
 * did not), plus the socket this client reached it on, into @hide
 * (NULL-terminated, EXEC_MAX_HIDE + 1 entries, pointing into @buf).
 * Return: 0; -EIO (API failure, printed; status in api_exit); -EPROTO (no
 * "paths" in the answer, printed).
 */
static int exec_hidden_paths(const char *hide[], char buf[][PATH_MAX])
{
	json_t *reply = api("GET", "/v1/status", NULL, NULL), *paths;
	size_t n = 0;

	if (!reply)
		return -EIO;
	paths = json_object_get(reply, "paths");
	if (!json_is_object(paths)) {
		json_decref(reply);
		fprintf(stderr, "netd: exec: the daemon did not say where its files are (/v1/status "
			"has no \"paths\"), so the command could reach them: not running it\n");
		return -EPROTO;
	}
	for (size_t k = 0; k < sizeof(exec_hide_keys) / sizeof(exec_hide_keys[0]); k++) {
		const char *p = json_string_value(json_object_get(paths, exec_hide_keys[k]));

		if (!p || !*p || path_listed(hide, n, p))
			continue;
		snprintf(buf[n], PATH_MAX, "%s", p);
		hide[n] = buf[n];
		n++;
	}
	json_decref(reply);
	if (!realpath(socket_path, buf[n]))
		snprintf(buf[n], PATH_MAX, "%s", socket_path);
	if (!path_listed(hide, n, buf[n])) {
		hide[n] = buf[n];
		n++;
	}
	hide[n] = NULL;
	return 0;
}

static int cmd_exec(int argc, char **argv)
{
	static const char exec_usage[] =
		"netd: usage: netd exec [--user USER[:GROUP]] [--no-caps | --net-admin] NAME -- "
		"COMMAND [ARG...]\n";
	char path[512], netns[PATH_MAX];
	static char hide_buf[EXEC_MAX_HIDE][PATH_MAX];
	const char *hide[EXEC_MAX_HIDE + 1];
	struct nsexec_cred cred = { 0 };
	const char *name = NULL;
	json_t *reply;
	int i, r;

	if (argc < 2)
		return usage_of(argc, argv);
	/* Options and NAME, in any order, up to "--". */
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--no-caps") == 0) {
			cred.no_caps = true;
		} else if (strcmp(argv[i], "--net-admin") == 0) {
			cred.net_admin = true;
		} else if (strcmp(argv[i], "--user") == 0 && i + 1 < argc) {
			r = nsexec_parse_user(argv[++i], &cred);
			if (r < 0) {
				fprintf(stderr, "netd: --user %s: %s\n", argv[i],
					r == -ENOENT ? "no such user or group"
						     : "expected USER[:GROUP] (names or numbers; "
						       "a numeric UID without a passwd entry needs :GROUP)");
				return 2;
			}
		} else if (argv[i][0] == '-' || name) {
			fputs(exec_usage, stderr);
			return 2;
		} else {
			name = argv[i];
		}
	}
	if (!name || i + 1 >= argc) {
		fputs(exec_usage, stderr);
		return 2;
	}
	/* uid 0 owns the host's files, netd's policies among them, with or without capabilities. */
	if (cred.no_caps && (!cred.set_user || cred.uid == 0)) {
		fprintf(stderr, "netd: --no-caps needs --user with a non-root user (uid 0 owns the "
			"host's files, netd's among them, with or without capabilities): e.g. "
			"netd exec --user nobody --no-caps %s -- ...\n", name);
		return 2;
	}
	if (cred.no_caps && cred.net_admin) {
		fputs("netd: --net-admin and --no-caps contradict each other\n", stderr);
		return 2;
	}
	if (!policy_name_valid(name)) {
		fprintf(stderr, "netd: invalid sandbox name \"%s\"\n", name);
		return CLI_REJECTED;
	}
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", name);
	reply = api("GET", path, NULL, NULL);
	if (!reply)
		return api_exit;	/* not found, daemon unreachable, ... (docs/install.md) */
	if (strcmp(str(reply, "kind"), "tap") == 0) {
		fprintf(stderr, "netd: sandbox %s is a microVM's tap (%s): there is no namespace to run "
			"a command in; run it inside the guest\n", name, str(reply, "tap"));
		json_decref(reply);
		return CLI_USAGE;
	}
	snprintf(netns, sizeof(netns), "%s", str(reply, "netns"));
	json_decref(reply);
	r = exec_netns_visible(name, netns);
	if (r != 0)
		return r;
	r = exec_hidden_paths(hide, hide_buf);
	if (r < 0)
		return r == -EPROTO ? CLI_FAILED : api_exit;
	/* netd writes /etc/netns/NAME/resolv.conf for every sandbox, attached ones too. */
	r = nsexec_run(netns, name, cred.set_user || cred.no_caps || cred.net_admin ? &cred : NULL,
		       hide, argv + i + 1);
	if (r >= 0)
		return r;	/* the command's own status */
	fprintf(stderr, "netd: exec %s in sandbox %s: %s\n", argv[i + 1], name, strerror(-r));
	return r == -ENOENT ? 127 : 126;
}

static int cmd_policy(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub)
		return usage_of(argc, argv);
	if (strcmp(sub, "suggest") == 0)
		return cli_suggest(argc - 1, argv + 1,
				   socket_path && socket_path[0] ? socket_path : NETD_DEFAULT_SOCKET);
	if (strcmp(sub, "replay") == 0)
		return cli_replay(argc - 1, argv + 1,
				  socket_path && socket_path[0] ? socket_path : NETD_DEFAULT_SOCKET);
	if (strcmp(sub, "check") == 0)
		return cli_policy_check(argc, argv);
	if (strcmp(sub, "list") == 0) {
		bool json = argc > 2 && strcmp(argv[2], "--json") == 0;
		static const char *const head[] = { "NAME", "RULES", "FILE" };
		struct cli_table *t;
		json_t *reply, *p;
		size_t i;

		if (argc > 3 || (argc == 3 && !json))
			return usage_of(argc, argv);
		reply = api("GET", "/v1/policies", NULL, NULL);
		if (!reply)
			return api_exit;
		if (json) {
			print_json(json_object_get(reply, "policies"));
		} else if ((t = cli_table_new(3, head, "lrl"))) {
			json_array_foreach(json_object_get(reply, "policies"), i, p) {
				char n[24];
				const char *row[] = { str(p, "name"), num(p, "rules", n, sizeof(n)),
						      str(p, "file") };

				if (cli_table_add(t, row) < 0)
					break;
			}
			cli_table_print(t, stdout);
			cli_table_free(t);
		} else {
			json_decref(reply);
			return CLI_FAILED;
		}
		json_decref(reply);
		return 0;
	}
	if (strcmp(sub, "reload") == 0 &&
	    (argc == 2 || (argc == 3 && strcmp(argv[2], "--json") == 0))) {
		json_t *reply = api("POST", "/v1/policies/reload", NULL, NULL);

		if (!reply)
			return api_exit;
		if (argc == 3)
			print_json(reply);
		else
			cli_reload_print(reply, stdout);
		json_decref(reply);
		return 0;
	}
	if (strcmp(sub, "show") == 0 && argc == 3) {
		char path[512];
		json_t *reply;

		if (!policy_name_valid(argv[2])) {
			fprintf(stderr, "netd: invalid policy name \"%s\"\n", argv[2]);
			return CLI_REJECTED;
		}
		snprintf(path, sizeof(path), "/v1/policies/%s", argv[2]);
		reply = api("GET", path, NULL, NULL);
		if (!reply)
			return api_exit;
		print_json(reply);
		json_decref(reply);
		return 0;
	}
	return usage_of(argc, argv);
}

/* `netd ca export [--out FILE]`: the gateway CA's certificate (GET /v1/gateway/ca). */
static int cmd_ca(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ 0 }
	};
	const char *out = NULL, *pem, *seen[128] = { 0 };
	json_t *reply;
	int c, r, rc = CLI_OK;

	if (argc < 2 || strcmp(argv[1], "export") != 0)
		return usage_of(argc, argv);
	optind = 1;
	while ((c = cli_opt_next("ca export", argc - 1, argv + 1, opts, NULL, seen)) != -1) {
		if (c != 'o')
			return usage_of(argc, argv);
		out = optarg;
	}
	if (optind != argc - 1)
		return usage_of(argc, argv);
	reply = api("GET", "/v1/gateway/ca", NULL, NULL);
	if (!reply)
		return api_exit;
	pem = json_string_value(json_object_get(reply, "certificate"));
	if (!pem || strncmp(pem, "-----BEGIN CERTIFICATE-----", 27) != 0) {
		fprintf(stderr, "netd: the daemon's answer holds no PEM certificate\n");
		rc = CLI_FAILED;
	} else if (out && (r = fs_write_atomic(out, pem, strlen(pem), 0644)) < 0) {
		fprintf(stderr, "netd: cannot write %s: %s\n", out, strerror(-r));
		rc = CLI_FAILED;
	} else if (!out) {
		fputs(pem, stdout);
	}
	json_decref(reply);
	return rc;
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ 0 }
	};
	const char *config = NULL, *seen[128] = { 0 };
	int c;

	optind = 1;
	while ((c = cli_opt_next("run", argc, argv, opts, NULL, seen)) != -1) {
		if (c != 'c')
			return usage_of(argc, argv);
		config = optarg;
	}
	if (optind != argc)
		return usage_of(argc, argv);
	/* Without --config, the packaged location if it is there, else defaults. */
	if (!config && access(NETD_DEFAULT_CONFIG, F_OK) == 0)
		config = NETD_DEFAULT_CONFIG;
	return daemon_main(config, socket_path);
}

int cli_main(int argc, char **argv)
{
	const char *explicit_socket = NULL;
	int i = 1;

	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
			explicit_socket = argv[i + 1];
			i += 2;
		} else if (strncmp(argv[i], "--socket=", 9) == 0) {
			explicit_socket = argv[i] + 9;
			i++;
		} else if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
			puts("netd " NETD_VERSION);
			return 0;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			fputs(usage_text, stdout);
			fputc('\n', stdout);
			cli_help_exit_codes(stdout);
			return 0;
		} else {
			return usage();
		}
	}
	if (i >= argc)
		return usage();
	if (strcmp(argv[i], "help") == 0 && argc == i + 1) {
		fputs(usage_text, stdout);	/* asked for: stdout, success */
		fputc('\n', stdout);
		cli_help_exit_codes(stdout);
		return 0;
	}
	/* Before any parsing: `netd sandbox create --help` is not a usage error. */
	if (cli_help_wanted(argc - i, argv + i))
		return cli_help_print(argc - i, argv + i, stdout);
	if (strcmp(argv[i], "help") == 0)
		return cli_help_print(argc - i - 1, argv + i + 1, stdout);
	socket_path = explicit_socket ? explicit_socket : getenv("NETD_SOCKET");
	if (strcmp(argv[i], "audit") == 0)
		return cli_audit(argc - i, argv + i,
				 socket_path && socket_path[0] ? socket_path : NETD_DEFAULT_SOCKET);
	/* Started by `netd run` only (netd/gw/worker.h); not in the usage. */
	if (strcmp(argv[i], "gateway-worker") == 0)
		return gw_worker_main(argc - i, argv + i);
	if (strcmp(argv[i], "run") == 0) {
		/*
		 * `run` takes the socket from its config unless --socket is
		 * given: $NETD_SOCKET is for clients, and exporting it must
		 * not silently move the daemon off its configured socket.
		 */
		socket_path = explicit_socket;
		return cmd_run(argc - i, argv + i);
	}
	if (!socket_path || !socket_path[0])
		socket_path = NETD_DEFAULT_SOCKET;
	if (strcmp(argv[i], "sandbox") == 0)
		return cmd_sandbox(argc - i, argv + i);
	if (strcmp(argv[i], "exec") == 0)
		return cmd_exec(argc - i, argv + i);
	if (strcmp(argv[i], "ca") == 0)
		return cmd_ca(argc - i, argv + i);
	if (strcmp(argv[i], "policy") == 0)
		return cmd_policy(argc - i, argv + i);
	if (strcmp(argv[i], "verify") == 0)
		return cmd_verify(argc - i, argv + i);
	if (strcmp(argv[i], "config") == 0)
		return cli_config_check(argc - i, argv + i, usage_text);
	if (strcmp(argv[i], "status") == 0 && argc == i + 1) {
		json_t *reply = api("GET", "/v1/status", NULL, NULL), *w;
		size_t k;

		if (!reply)
			return api_exit;
		print_json(reply);
		/* "degraded": each warning once more on stderr, where a person looks */
		json_array_foreach(json_object_get(reply, "warnings"), k, w)
			if (json_is_string(w))
				fprintf(stderr, "netd: warning: %s\n", json_string_value(w));
		json_decref(reply);
		return 0;
	}
	fprintf(stderr, "netd: unknown command '%s'%s\n", argv[i],
		strcmp(argv[i], "status") == 0 ? " (status takes no arguments)" : "");
	return usage();
}
