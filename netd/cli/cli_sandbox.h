/*
 * cli_sandbox - `netd sandbox create|list|show|delete`, a client of the
 * control socket (POST/GET/DELETE /v1/sandboxes; docs/api.md).
 */
#ifndef NETD_CLI_SANDBOX_H
#define NETD_CLI_SANDBOX_H

/*
 * cli_sandbox() - run `sandbox ...` (@argv[0] is "sandbox") against the
 * socket set by cli_api_socket_set().  Return: the exit status (enum
 * cli_exit, netd/cli/cli_help.h).
 */
int cli_sandbox(int argc, char **argv);

#endif
