/*
 * cli_sandbox - `netd sandbox create|list|show|delete`: the create request
 * from its options (a namespace by path or PID, or a microVM's tap), the
 * list as a table, a control-socket client (cli_api.h).
 */
#include "netd/cli/cli_sandbox.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/workload.h"
#include "netd/cli/cli_api.h"
#include "netd/cli/cli_args.h"
#include "netd/cli/cli_help.h"
#include "netd/cli/cli_table.h"
#include "netd/link/tap.h"
#include "netd/model/policy.h"

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
		const char *row[] = { cli_str(sb, "name"), cli_str(sb, "policy"), cli_str(sb, "mode"),
				      cli_str(sb, "ipv4"),
				      cli_str(sb, "ipv6"), cli_str(sb, "host_ifname"),
				      cli_num(dns, "allowed", n[0], sizeof(n[0])),
				      cli_num(dns, "denied", n[1], sizeof(n[1])),
				      cli_num(tr, "conns", n[2], sizeof(n[2])),
				      cli_num(tr, "bytes_out", n[3], sizeof(n[3])),
				      cli_num(tr, "bytes_in", n[4], sizeof(n[4])),
				      cli_num(tr, "denied", n[5], sizeof(n[5])), cli_str(sb, "kind"),
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
	if (strcmp(cli_str(reply, "kind"), "tap") == 0) {
		printf("sandbox %s: policy %s (%s mode), tap %s (owner %lld), guest %s via %s, MAC %s, "
		       "MTU %lld\n  kernel argument: %s\n", cli_str(reply, "name"), cli_str(reply, "policy"),
		       cli_str(reply, "mode"), cli_str(reply, "tap"),
		       (long long)json_integer_value(json_object_get(reply, "tap_owner")),
		       cli_str(reply, "guest_ipv4"), cli_str(reply, "gateway_ipv4"), cli_str(reply, "mac"),
		       (long long)json_integer_value(json_object_get(reply, "mtu")),
		       cli_str(reply, "kernel_ip_arg"));
		return;
	}
	printf("sandbox %s: policy %s (%s mode), %s, address %s (%s), DNS %s\n", cli_str(reply, "name"),
	       cli_str(reply, "policy"), cli_str(reply, "mode"), cli_str(reply, "netns"), cli_str(reply, "ipv4"),
	       cli_str(reply, "ipv6"), cli_str(reply, "gateway4"));
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
	reply = cli_api("POST", "/v1/sandboxes", body, NULL);
	if (!reply)
		return cli_api_exit();
	if (json)
		cli_print_json(reply);
	else
		print_created(reply);
	json_decref(reply);
	return 0;
}

int cli_sandbox(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub)
		return cli_usage_of(argc, argv);
	if (strcmp(sub, "create") == 0)
		return cmd_sandbox_create(argc, argv);
	if (strcmp(sub, "list") == 0) {
		bool json = argc > 2 && strcmp(argv[2], "--json") == 0;
		json_t *reply, *arr;

		if (argc > 3 || (argc == 3 && !json))
			return cli_usage_of(argc, argv);
		reply = cli_api("GET", "/v1/sandboxes", NULL, NULL);
		if (!reply)
			return cli_api_exit();
		arr = json_object_get(reply, "sandboxes");
		if (json) {
			cli_print_json(arr);
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
		reply = cli_api(strcmp(sub, "show") == 0 ? "GET" : "DELETE", path, NULL, NULL);
		if (!reply)
			return cli_api_exit();
		if (strcmp(sub, "show") == 0)
			cli_print_json(reply);
		else
			printf("sandbox %s deleted\n", argv[2]);
		json_decref(reply);
		return 0;
	}
	return cli_usage_of(argc, argv);
}
