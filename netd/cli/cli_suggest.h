/*
 * cli_suggest - `netd policy suggest`: read audit logs (no daemon needed),
 * feed netd/cli/suggest.c, check the result parses as a policy, print it.
 */
#ifndef NETD_CLI_SUGGEST_H
#define NETD_CLI_SUGGEST_H

/*
 * cli_suggest() - `netd policy suggest --sandbox NAME | --policy NAME
 * [--since T] [--file AUDIT]... [--name NEW]`; @argv[0] is "suggest".
 * @socket_path: the control socket to ask for the daemon's audit log when
 * no --file is given (cli_audit_locate(), as `netd audit` does); borrowed.
 * Return: exit status (CLI_OK; CLI_FAILED; CLI_USAGE: netd/cli/cli_help.h).
 */
int cli_suggest(int argc, char **argv, const char *socket_path);

#endif
