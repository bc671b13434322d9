/*
 * cli - the `netd` command line: argv -> subcommand.  Every subcommand but
 * `run`, `policy check` and `exec`'s final step is a client of the control
 * socket (netd/api/ctl.h).
 */
#ifndef NETD_CLI_H
#define NETD_CLI_H

#include <stdio.h>

#include <jansson.h>

/* cli_main() - run the command line; Return: the process exit status. */
int cli_main(int argc, char **argv);

/*
 * cli_reload_print() - `netd policy reload`'s human output, on @out, from
 * POST /v1/policies/reload's answer @reply (borrowed): "policies reloaded;
 * N sandboxes changed", then "credentials: N re-read, M changed" when
 * @reply has credentials_read (and credentials_changed), then a line per
 * changed sandbox.
 */
void cli_reload_print(const json_t *reply, FILE *out);

#endif
