/*
 * netd/cli/ - the `netd` command: argv to subcommand (cli.c), the control
 * socket's client (cli_api.c), `netd sandbox` (cli_sandbox.c), `netd exec`
 * (cli_exec.c), help texts and exit statuses (cli_help.c), tables
 * (cli_table.c), `netd audit` (cli_audit.c), `netd policy suggest`
 * (cli_suggest.c over suggest.c and suggest_render.c, pure), `netd policy
 * replay` (cli_replay.c over pdiff.c, pure).  Every command but `run`,
 * `policy check` and `exec`'s last step is a client of the control socket.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/fsutil.h"
#include "common/paths.h"
#include "netd/daemon.h"
#include "netd/model/policy.h"
#include "netd/cli/cli_api.h"
#include "netd/cli/cli_args.h"
#include "netd/cli/cli_audit.h"
#include "netd/cli/cli_check.h"
#include "netd/cli/cli_exec.h"
#include "netd/cli/cli_help.h"
#include "netd/cli/cli_replay.h"
#include "netd/cli/cli_sandbox.h"
#include "netd/cli/cli_suggest.h"
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

static int usage(void)
{
	fputs(usage_text, stderr);
	return CLI_USAGE;
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
		const char *cells[] = { cli_str(row, "sandbox"), cli_str(row, "probe"), cli_str(row, "verdict"),
					cli_str(row, "detail") };

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
			return cli_usage_of(argc, argv);
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
	reply = cli_api("POST", "/v1/verify", body, NULL);
	if (!reply)
		return cli_api_exit();
	if (json)
		cli_print_json(reply);
	else if (print_verify_table(reply) < 0) {
		json_decref(reply);
		return CLI_FAILED;
	}
	/* 0 only when every probe held (docs/install.md, exit codes). */
	rc = json_is_true(json_object_get(reply, "ok")) ? CLI_OK : CLI_VERIFY_FAILED;
	json_decref(reply);
	return rc;
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

		fprintf(out, "  %s (policy %s): ", cli_str(c, "sandbox"), cli_str(c, "policy"));
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

static int cmd_policy(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub)
		return cli_usage_of(argc, argv);
	if (strcmp(sub, "suggest") == 0)
		return cli_suggest(argc - 1, argv + 1, cli_api_socket_path());
	if (strcmp(sub, "replay") == 0)
		return cli_replay(argc - 1, argv + 1, cli_api_socket_path());
	if (strcmp(sub, "check") == 0)
		return cli_policy_check(argc, argv);
	if (strcmp(sub, "list") == 0) {
		bool json = argc > 2 && strcmp(argv[2], "--json") == 0;
		static const char *const head[] = { "NAME", "RULES", "FILE" };
		struct cli_table *t;
		json_t *reply, *p;
		size_t i;

		if (argc > 3 || (argc == 3 && !json))
			return cli_usage_of(argc, argv);
		reply = cli_api("GET", "/v1/policies", NULL, NULL);
		if (!reply)
			return cli_api_exit();
		if (json) {
			cli_print_json(json_object_get(reply, "policies"));
		} else if ((t = cli_table_new(3, head, "lrl"))) {
			json_array_foreach(json_object_get(reply, "policies"), i, p) {
				char n[24];
				const char *row[] = { cli_str(p, "name"), cli_num(p, "rules", n, sizeof(n)),
						      cli_str(p, "file") };

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
		json_t *reply = cli_api("POST", "/v1/policies/reload", NULL, NULL);

		if (!reply)
			return cli_api_exit();
		if (argc == 3)
			cli_print_json(reply);
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
		reply = cli_api("GET", path, NULL, NULL);
		if (!reply)
			return cli_api_exit();
		cli_print_json(reply);
		json_decref(reply);
		return 0;
	}
	return cli_usage_of(argc, argv);
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
		return cli_usage_of(argc, argv);
	optind = 1;
	while ((c = cli_opt_next("ca export", argc - 1, argv + 1, opts, NULL, seen)) != -1) {
		if (c != 'o')
			return cli_usage_of(argc, argv);
		out = optarg;
	}
	if (optind != argc - 1)
		return cli_usage_of(argc, argv);
	reply = cli_api("GET", "/v1/gateway/ca", NULL, NULL);
	if (!reply)
		return cli_api_exit();
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

/* `netd run [--config FILE]` on @socket_path (--socket's, else NULL: the config's). */
static int cmd_run(int argc, char **argv, const char *socket_path)
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
			return cli_usage_of(argc, argv);
		config = optarg;
	}
	if (optind != argc)
		return cli_usage_of(argc, argv);
	/* Without --config, the packaged location if it is there, else defaults. */
	if (!config && access(NETD_DEFAULT_CONFIG, F_OK) == 0)
		config = NETD_DEFAULT_CONFIG;
	return daemon_main(config, socket_path);
}

int cli_main(int argc, char **argv)
{
	const char *explicit_socket = NULL, *sock;
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
	sock = explicit_socket ? explicit_socket : getenv("NETD_SOCKET");
	if (!sock || !sock[0])
		sock = NETD_DEFAULT_SOCKET;
	if (strcmp(argv[i], "audit") == 0)
		return cli_audit(argc - i, argv + i, sock);
	/* Started by `netd run` only (netd/gw/worker.h); not in the usage. */
	if (strcmp(argv[i], "gateway-worker") == 0)
		return gw_worker_main(argc - i, argv + i);
	if (strcmp(argv[i], "run") == 0) {
		/*
		 * `run` takes the socket from its config unless --socket is
		 * given: $NETD_SOCKET is for clients, and exporting it must
		 * not silently move the daemon off its configured socket.
		 */
		return cmd_run(argc - i, argv + i, explicit_socket);
	}
	cli_api_socket_set(sock);
	if (strcmp(argv[i], "sandbox") == 0)
		return cli_sandbox(argc - i, argv + i);
	if (strcmp(argv[i], "exec") == 0)
		return cli_exec(argc - i, argv + i);
	if (strcmp(argv[i], "ca") == 0)
		return cmd_ca(argc - i, argv + i);
	if (strcmp(argv[i], "policy") == 0)
		return cmd_policy(argc - i, argv + i);
	if (strcmp(argv[i], "verify") == 0)
		return cmd_verify(argc - i, argv + i);
	if (strcmp(argv[i], "config") == 0)
		return cli_config_check(argc - i, argv + i, usage_text);
	if (strcmp(argv[i], "status") == 0 && argc == i + 1) {
		json_t *reply = cli_api("GET", "/v1/status", NULL, NULL), *w;
		size_t k;

		if (!reply)
			return cli_api_exit();
		cli_print_json(reply);
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
