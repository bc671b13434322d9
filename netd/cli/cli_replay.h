/*
 * cli_replay - `netd policy replay`: read audit logs (no daemon needed),
 * replay them against proposed policy files through netd/cli/pdiff.c, print
 * what would change.
 */
#ifndef NETD_CLI_REPLAY_H
#define NETD_CLI_REPLAY_H

/*
 * cli_replay() - `netd policy replay [--audit FILE]... [--since T]
 * [--sandbox S | --policy P] [--json] [--fail-on newly-denied|newly-allowed]
 * POLICY.yaml...`; @argv[0] is "replay".  @socket_path: the control socket
 * to ask for the daemon's audit log when no --audit is given
 * (cli_audit_locate(), as `netd audit` does); borrowed.
 * Return: exit status: CLI_OK (nothing changed, or nothing --fail-on names);
 * CLI_CHANGED (a change --fail-on names); CLI_USAGE; CLI_REJECTED (a policy
 * file is invalid: FILE:LINE:COL on stderr); CLI_NOT_FOUND (no log at the
 * path); CLI_FAILED (netd/cli/cli_help.h).
 */
int cli_replay(int argc, char **argv, const char *socket_path);

#endif
