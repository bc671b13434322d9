/*
 * cli_help - help texts for every `netd` command and subcommand, and the
 * exit statuses they share.  Only text and lookup: no daemon, no I/O but
 * the FILE the caller names.  Keep in step with docs/man/netd.8.
 */
#include "netd/cli/cli_help.h"

#include <stdio.h>
#include <string.h>

struct help {
	const char *topic;	/* "sandbox create"; a bare "sandbox" covers the group */
	const char *text;
};

static const struct help helps[] = {
	{ "run",
	  "usage: netd run [--config FILE]\n"
	  "Run the daemon in the foreground (needs root, or CAP_NET_ADMIN and CAP_SYS_ADMIN).\n"
	  "  --config FILE   the config (netd.yaml(5)); default /etc/netd/netd.yaml if present\n"
	  "Signals: SIGHUP reloads policy_dir (all or nothing); SIGUSR1 reopens the audit\n"
	  "log (logrotate); SIGTERM/SIGINT stop (the kernel keeps the rules).\n"
	  "Under systemd (Type=notify) it reports READY=1, RELOADING=1 and STOPPING=1.\n" },
	{ "sandbox",
	  "usage: netd sandbox create|list|show|delete ...\n"
	  "  create NAME --policy P [--netns PATH | --pid PID] [--ifname IF] [--mode M] [--json]\n"
	  "         [--egress-rate RATE] [--ingress-rate RATE]\n"
	  "  create NAME --policy P --tap [--tap-name TAP] [--tap-owner UID[:GID]]\n"
	  "         [--tap-queues N] [--tap-mtu N] [--egress-rate RATE] [--ingress-rate RATE]\n"
	  "         [--mode M] [--json]\n"
	  "  list [--json]\n"
	  "  show NAME [--json]\n"
	  "  delete NAME\n"
	  "`netd sandbox SUBCOMMAND --help` for each.\n" },
	{ "sandbox create",
	  "usage: netd sandbox create NAME --policy P [--netns PATH | --pid PID] [--ifname IF]\n"
	  "                           [--mode audit|enforce] [--egress-rate RATE]\n"
	  "                           [--ingress-rate RATE] [--json]\n"
	  "       netd sandbox create NAME --policy P --tap [--tap-name TAP] [--tap-owner U[:G]]\n"
	  "                           [--tap-queues N] [--tap-mtu N] [--egress-rate RATE] [--ingress-rate RATE]\n"
	  "                           [--mode audit|enforce] [--json]\n"
	  "Create sandbox NAME under policy P: a new network namespace /run/netns/NAME,\n"
	  "or attach an existing one (--netns PATH, or --pid PID for /proc/PID/ns/net),\n"
	  "with a veth to the host, an address from the pool and DNS through netd.\n"
	  "  --policy P     a policy in policy_dir (netd policy list)\n"
	  "  --netns PATH   attach this network namespace instead of making one\n"
	  "  --pid PID      attach the network namespace of process PID\n"
	  "  --ifname IF    the interface name inside the sandbox (default eth0)\n"
	  "  --mode M       audit: deny nothing, mark what enforce would deny in the audit\n"
	  "                 log; enforce: enforce even if the policy says mode: audit.\n"
	  "                 Default: the policy's mode (docs/policy-workflow.md)\n"
	  "  --egress-rate RATE   what it may send, e.g. 20mbit (bit, kbit, mbit, gbit;\n"
	  "                 8kbit-100gbit), over its policy's limits.bandwidth.egress\n"
	  "  --ingress-rate RATE  what it may receive, likewise (docs/policies.md)\n"
	  "  --json         print the daemon's record as JSON\n"
	  "A microVM's sandbox (docs/microvm.md): --tap makes a persistent tap in netd's\n"
	  "namespace instead, for the VMM (Firecracker, QEMU, Cloud Hypervisor) to open.\n"
	  "  --tap               a tap, not a veth; no namespace\n"
	  "  --tap-name TAP      its name (default ndt + 4 hex digits)\n"
	  "  --tap-owner U[:G]   the user (and group; numbers or names) whose VMM may\n"
	  "                      open it (default: the user running this command)\n"
	  "  --tap-queues N      multi-queue tap, N queues (1-256; default 1)\n"
	  "  --tap-mtu N         the tap's and guest's MTU (default 1500 or the uplink's)\n"
	  "Each option at most once; --egress-rate and --ingress-rate work on a tap too.\n" },
	{ "sandbox list",
	  "usage: netd sandbox list [--json]\n"
	  "List sandboxes with their addresses, DNS and traffic counters.\n"
	  "  --json   a JSON array instead of the table\n" },
	{ "sandbox show",
	  "usage: netd sandbox show NAME [--json]\n"
	  "Print sandbox NAME's record as JSON (--json changes nothing): its policy, mode,\n"
	  "netns, addresses, counters, and for a CNI sandbox the container_id, pod_namespace,\n"
	  "pod_name and pod_uid it is for (docs/cni.md).\n" },
	{ "sandbox delete",
	  "usage: netd sandbox delete NAME\n"
	  "Delete sandbox NAME: its rules, pins, veth or tap and (if netd made it) its netns.\n" },
	{ "exec",
	  "usage: netd exec [--user USER[:GROUP]] [--no-caps | --net-admin] NAME -- COMMAND [ARG...]\n"
	  "Run COMMAND inside sandbox NAME's network namespace, with its resolv.conf, in\n"
	  "its own PID and mount namespaces that hide netd's socket, config, policies,\n"
	  "state and audit log; as root with a container's capabilities (CAP_NET_RAW;\n"
	  "never CAP_SYS_ADMIN).  Root there is not a boundary: it can still write the\n"
	  "host's files.  --user USER[:GROUP] runs it as that user; --no-caps (with a\n"
	  "non-root --user only) without any capability (and no_new_privs).\n"
	  "--net-admin adds CAP_NET_ADMIN, to change the sandbox's interfaces and routes;\n"
	  "it also reaches netd's own interfaces (through the veth's netns id).\n"
	  "Once COMMAND runs, the exit status is COMMAND's (128 + N if signal N ended it);\n"
	  "126 if it cannot run, 127 if it is not found.  The statuses below are netd's\n"
	  "own, before COMMAND runs.\n" },
	{ "policy",
	  "usage: netd policy check|suggest|replay|list|show|reload ...\n"
	  "  check [--config NETD_YAML] [FILE...]   validate policy files (no daemon needed)\n"
	  "  suggest ...     a policy from what the audit log shows was used\n"
	  "  replay ...      what proposed policies would have decided differently\n"
	  "  list [--json]\n"
	  "  show NAME\n"
	  "  reload          re-read policy_dir (all or nothing)\n"
	  "`netd policy SUBCOMMAND --help` for each; the format is netd-policy(5).\n" },
	{ "policy check",
	  "usage: netd policy check [--config NETD_YAML] FILE...\n"
	  "       netd policy check [--config NETD_YAML]\n"
	  "Validate policy files as the daemon would (errors as FILE:LINE:COL, in file\n"
	  "order); no daemon needed.  A FILE that is a directory: its *.yaml and *.yml, as\n"
	  "`netd run` reads policy_dir.  A valid file's meaning on stdout, as notes\n"
	  "(FILE:LINE:COL: note: ...): each rule's dns: defences and excepts, the limits\n"
	  "it enforces a sandbox (limits.bandwidth, connections, egress_bytes, a rule's\n"
	  "budget).  --config (before or after the FILEs): gateway rules are checked against\n"
	  "that netd.yaml as `netd run` checks them: the gateway on (gateway.port not 0),\n"
	  "every credential they name defined (without it, a note says they were not\n"
	  "checked).  Without FILE: every policy file (*.yaml, *.yml) of the policy_dir\n"
	  "of the netd.yaml --config names, else of /etc/netd/netd.yaml (`netd run`'s\n"
	  "default; no environment variable changes it), else, without that file, of the\n"
	  "default policy_dir /etc/netd/policies: what `netd run` would load, with its\n"
	  "gateway checks; exit status 3 if --config's file or the policy_dir does not\n"
	  "exist.\n"
	  "Exit status 6 if any file is invalid.  On stderr, the warnings and the notes\n"
	  "about what other rules make of a rule\n"
	  "(a CIDR rule over never-pin addresses, an except another rule allows, a rule\n"
	  "without the tls/http check that can pin an address of a checked rule's names;\n"
	  "a gateway rule with a lower-case method, a port but 443, or with --config a\n"
	  "credential whose hosts cover none of its domains)\n"
	  "leave the exit status at 0.\n" },
	{ "policy suggest",
	  "usage: netd policy suggest --sandbox NAME | --policy NAME [--since T]\n"
	  "                           [--file AUDIT]... [--name NEW] [--wildcards]\n"
	  "Write (stdout) a policy allowing what the audit log shows sandbox NAME (or\n"
	  "every sandbox under policy NAME) used, and nothing more: exact names with the\n"
	  "ports seen, /32 and /128 rules only for connections made without a name;\n"
	  "counts and bytes in comments.  The output always passes `netd policy check`.\n"
	  "  --since T    records from T on: RFC 3339 UTC, or N[smhd] ago\n"
	  "  --file AUDIT the audit log (repeat for rotated files, oldest first); default\n"
	  "               the log `netd audit` reads: $NETD_AUDIT_LOG, else the running\n"
	  "               daemon's, else the config's audit_log, else /var/log/netd/audit.jsonl\n"
	  "               (no daemon needed with --file or $NETD_AUDIT_LOG)\n"
	  "  --name NEW   the policy's name (default NAME-suggested)\n"
	  "  --wildcards  widen: 3 or more names below one registrable domain, each\n"
	  "               connected to by name on the same ports, become '*.DOMAIN'\n"
	  "               (never over a public suffix; connections by address never count)\n" },
	{ "policy replay",
	  "usage: netd policy replay [--audit FILE]... [--since T] [--sandbox S | --policy P]\n"
	  "                          [--json] [--fail-on newly-denied|newly-allowed]...\n"
	  "                          POLICY.yaml...\n"
	  "Replay the audit log's DNS decisions and connections against proposed policy\n"
	  "files and report, per policy and sandbox, the names and flows newly denied and\n"
	  "newly allowed, with counts and first/last times.  Each file is replayed against\n"
	  "the records of sandboxes under the policy of its name; records of policies not\n"
	  "given are counted, not replayed.  Decided as the daemon decides: names by the\n"
	  "proxy's matcher (wildcards, except, max_qname_length), connections by the name\n"
	  "that pinned them and the rules' ports and protocol, or by CIDR rules; never-pin\n"
	  "addresses stay denied.  Audit mode's would_deny counts as denied.\n"
	  "  --audit FILE   the audit log (repeat for rotated files, oldest first); default\n"
	  "                 the log `netd audit` reads (no daemon needed with --audit)\n"
	  "  --since T      records from T on: RFC 3339 UTC, or N[smhd] ago\n"
	  "  --sandbox S    only sandbox S's records; --policy P: only policy P's.  With\n"
	  "                 one POLICY.yaml, it is replayed against them whatever its name\n"
	  "  --json         the report as JSON (docs/policy-workflow.md)\n"
	  "  --fail-on K    exit 7 if there is a change of kind K (newly-denied,\n"
	  "                 newly-allowed; repeat for both)\n" },
	{ "policy list",
	  "usage: netd policy list [--json]\n"
	  "List the daemon's loaded policies.\n" },
	{ "policy show",
	  "usage: netd policy show NAME\n"
	  "Print loaded policy NAME as JSON.\n" },
	{ "policy reload",
	  "usage: netd policy reload [--json]\n"
	  "Re-read policy_dir: every file valid, or nothing changes (exit status 6 and the\n"
	  "first error).  Prints what changed, a line per sandbox: the items added and\n"
	  "removed, the pins kept and removed, the connections cut.  Same as SIGHUP.\n"
	  "  --json   the daemon's answer: {\"changed\": [{sandbox, policy, deny_all, added,\n"
	  "           removed, pins_kept, pins_removed, connections_cut}]}\n" },
	{ "ca",
	  "usage: netd ca export [--out FILE]\n"
	  "The API gateway's certificate authority (docs/gateway.md).\n"
	  "`netd ca export --help` for its one subcommand.\n" },
	{ "ca export",
	  "usage: netd ca export [--out FILE]\n"
	  "Print the gateway CA's certificate (PEM), for sandboxes to trust.  The daemon\n"
	  "makes the CA on the first request (STATE_DIR/gateway-ca/: ca.key 0600, which\n"
	  "never leaves the host, and ca.pem); later requests and restarts give the same.\n"
	  "  --out FILE   write it to FILE (mode 0644, replaced whole) instead of stdout\n" },
	{ "config",
	  "usage: netd config check [FILE]\n"
	  "  check [FILE]   validate netd.yaml(5) as netd run reads it (no daemon needed)\n" },
	{ "config check",
	  "usage: netd config check [FILE]\n"
	  "Read netd.yaml(5) as `netd run` would, without starting anything: FILE:LINE:COL\n"
	  "and what is wrong on an error (unknown keys get a 'did you mean').  The gateway's\n"
	  "upstream_ca_file and user, and every credential's secret are read as netd reads\n"
	  "them (unreadable, bad mode or owner, bad bytes: an error; an inline value: in a\n"
	  "file others may read: a warning).  FILE: default /etc/netd/netd.yaml; when\n"
	  "that is absent, netd run takes the defaults, and so does the check (exit 0).\n"
	  "Exit 0 valid, 6 invalid, 3 no such FILE.\n" },
	{ "status",
	  "usage: netd status\n"
	  "Print the daemon's status as JSON (uptime, counts, audit log path and counters).\n"
	  "\"status\" is \"degraded\" while something stops sandboxes (another table's forward\n"
	  "chain that drops what netd accepts) or a sandbox attached by PID vanished with\n"
	  "its netns; each warning, with what to do, is also printed on stderr.  Exit status 0.\n" },
	{ "verify",
	  "usage: netd verify [NAME... | --all] [--allowed] [--json]\n"
	  "Prove, sandbox by sandbox, that its policy is enforced now: the daemon probes\n"
	  "from inside each sandbox's network namespace (nothing is installed there) and\n"
	  "reads its nf_tables state back.  Probes: a denied name gets NXDOMAIN/REFUSED\n"
	  "from netd and is not forwarded (UDP to the gateway, UDP to another resolver,\n"
	  "TCP); connections to an unpinned address, the metadata addresses, the host,\n"
	  "another sandbox and DoT (853) are dropped or rejected; a forged source is\n"
	  "dropped; IPv6 likewise; the kernel side: the jump to its policy chain, its\n"
	  "interface/source and mark elements, the DNS redirect, the anti-spoofing rule.\n"
	  "A dropped probe waits 1 s.  Probe traffic is recognised by netd and is not\n"
	  "counted or recorded as the sandbox's own (docs/verify.md).\n"
	  "  --all      every sandbox (probed concurrently)\n"
	  "  --allowed  also resolve and connect to an allowed name of its policy\n"
	  "  --json     the report: {ok, sandboxes, probes, passed, failed, skipped,\n"
	  "             duration_ms, results: [{sandbox, probe, verdict, detail}]}\n"
	  "Exit status 0 when every probe held, 7 when one failed.\n" },
	{ "audit",
	  "usage: netd audit [--file PATH] [-f [--from-start]] [--sandbox NAME] [--event EVENT]\n"
	  "                  [--domain NAME|*.SUFFIX] [--verdict V] [--reason R]\n"
	  "                  [--dst ADDR|CIDR] [--port N] [--since T] [--until T] [--last N]\n"
	  "                  [--json | --summary [--json]]\n"
	  "Read the audit log (JSON Lines).  Without --file: $NETD_AUDIT_LOG, else the\n"
	  "running daemon's log (asked over the control socket), else the config's\n"
	  "audit_log, else /var/log/netd/audit.jsonl.\n"
	  "  -f, --follow     keep reading as records are written, from the end like\n"
	  "                   tail -f (follows rotation); --from-start replays the log first\n"
	  "  --event EVENT    " CLI_AUDIT_EVENTS "\n"
	  "  --verdict, --reason, --dst, --port: only records with that value\n"
	  "                   (http records: --domain the host; --dst, --port the upstream)\n"
	  "  --last N         only the last N matching records\n"
	  "  --summary        per (sandbox, domain): connections, bytes, denials\n"
	  "  T: RFC 3339 UTC (2026-11-30T06:00:00Z, or a prefix of it) or N[smhd] ago\n" },
	{ "help",
	  "usage: netd help [COMMAND [SUBCOMMAND]]\n"
	  "Print the overview, or one command's help.\n" },
};

static const char exit_codes[] =
	"Exit status:\n"
	"  0  success\n"
	"  1  failure (I/O error, daemon-side error)\n"
	"  2  usage: bad command line\n"
	"  3  not found: no such sandbox or policy\n"
	"  4  conflict: it already exists, or is busy\n"
	"  5  the daemon is unreachable on the control socket\n"
	"  6  rejected: invalid input (bad name, bad policy file, refused request)\n"
	"  7  changed: `policy replay --fail-on` found a change of that kind;\n"
	"     `verify`: a probe found a sandbox's policy not held\n";

/* The commands whose help lists only the exit statuses they can return
 * ({ topic, table }); every other topic prints exit_codes. */
static const struct help own_exits[] = {
	/* cli_audit() returns only these: it reads a file and needs no daemon
	 * (one that does not answer only means the path comes from elsewhere). */
	{ "audit",
	  "Exit status:\n"
	  "  0  success (also when no record matches)\n"
	  "  1  failure (the log unreadable, an I/O error)\n"
	  "  2  usage: bad command line\n"
	  "  3  not found: no such audit log file\n" },
	/* cli_policy_check(): files only, no daemon. */
	{ "policy check",
	  "Exit status:\n"
	  "  0  every file is valid (warnings and notes do not change it)\n"
	  "  1  failure (a file unreadable, out of memory)\n"
	  "  2  usage: bad command line\n"
	  "  3  not found: no such --config file or policy_dir\n"
	  "  6  rejected: a policy file (or --config's netd.yaml) is invalid\n" },
	/* cli_policy_suggest(): the audit log in, a policy out. */
	{ "policy suggest",
	  "Exit status:\n"
	  "  0  success\n"
	  "  1  failure (the log unreadable, an I/O error)\n"
	  "  2  usage: bad command line\n"
	  "  3  not found: no such audit log file\n" },
	/* cli_policy_replay(): the audit log and policy files in, a report out. */
	{ "policy replay",
	  "Exit status:\n"
	  "  0  success (with --fail-on: no change of that kind)\n"
	  "  1  failure (the log unreadable, an I/O error)\n"
	  "  2  usage: bad command line\n"
	  "  3  not found: no such audit log file\n"
	  "  6  rejected: a policy file is invalid or missing\n"
	  "  7  --fail-on found a change of that kind\n" },
};

int cli_exit_from_http(int status)
{
	if (status >= 200 && status <= 299)
		return CLI_OK;
	switch (status) {
	case 404:
		return CLI_NOT_FOUND;
	case 409:
		return CLI_CONFLICT;
	case 400:
	case 413:
	case 422:
		return CLI_REJECTED;
	default:
		return CLI_FAILED;
	}
}

bool cli_help_wanted(int argc, char *const *argv)
{
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return true;
	}
	return false;
}

static const struct help *find(const char *cmd, const char *sub)
{
	const struct help *group = NULL;
	size_t cl = strlen(cmd);

	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++) {
		const char *t = helps[i].topic;

		if (strncmp(t, cmd, cl) != 0 || (t[cl] != '\0' && t[cl] != ' '))
			continue;
		if (t[cl] == '\0')
			group = &helps[i];
		else if (sub && strcmp(t + cl + 1, sub) == 0)
			return &helps[i];
	}
	return group;
}

int cli_help_print(int argc, char *const *argv, FILE *out)
{
	const struct help *h;

	if (argc < 1)
		return CLI_USAGE;
	h = find(argv[0], argc > 1 && argv[1][0] != '-' ? argv[1] : NULL);
	if (!h) {
		fprintf(stderr, "netd: no help for unknown command '%s' (netd --help)\n", argv[0]);
		return CLI_USAGE;
	}
	fputs(h->text, out);
	fputc('\n', out);
	for (size_t i = 0; i < sizeof(own_exits) / sizeof(own_exits[0]); i++)
		if (strcmp(own_exits[i].topic, h->topic) == 0) {
			fputs(own_exits[i].text, out);
			return CLI_OK;
		}
	cli_help_exit_codes(out);
	return CLI_OK;
}

void cli_help_exit_codes(FILE *out)
{
	fputs(exit_codes, out);
}

const char *cli_help_topic(size_t i)
{
	return i < sizeof(helps) / sizeof(helps[0]) ? helps[i].topic : NULL;
}

int cli_usage_of(int argc, char **argv)
{
	fputs("netd: not understood:", stderr);
	for (int i = 0; i < argc; i++)
		fprintf(stderr, " %s", argv[i]);
	fputs("\n\n", stderr);
	cli_help_print(argc, argv, stderr);
	return CLI_USAGE;
}
