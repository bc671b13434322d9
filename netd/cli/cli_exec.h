/*
 * cli_exec - `netd exec`: a command inside a sandbox's network namespace,
 * as a user, with or without capabilities, the daemon's files hidden.
 */
#ifndef NETD_CLI_EXEC_H
#define NETD_CLI_EXEC_H

/*
 * cli_exec() - run `exec ...` (@argv[0] is "exec"); the sandbox is asked
 * of the socket set by cli_api_socket_set().  Return: the command's exit
 * status; 126 (it could not be run, or the namespace is not visible here),
 * 127 (not found), or netd's own (enum cli_exit, netd/cli/cli_help.h).
 */
int cli_exec(int argc, char **argv);

#endif
