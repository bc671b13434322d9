/*
 * cli - the `netd` command line: argv -> subcommand.  Every subcommand but
 * `run`, `policy check` and `exec`'s final step is a client of the control
 * socket (netd/api/ctl.h).
 */
#ifndef NETD_CLI_H
#define NETD_CLI_H

/* cli_main() - run the command line; Return: the process exit status. */
int cli_main(int argc, char **argv);

#endif
