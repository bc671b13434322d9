/*
 * cli_help - `netd COMMAND [SUBCOMMAND] --help` and `netd help COMMAND`:
 * one text per command and subcommand, and the exit statuses every client
 * command shares (enum cli_exit).  Pure tables; prints only where told.
 */
#ifndef NETD_CLI_HELP_H
#define NETD_CLI_HELP_H

#include <stdbool.h>
#include <stdio.h>

/* Exit statuses of `netd` (documented in netd(8) and docs/install.md). */
enum cli_exit {
	CLI_OK = 0,
	CLI_FAILED = 1,		/* anything else: I/O error, daemon-side 5xx, out of memory */
	CLI_USAGE = 2,		/* bad command line */
	CLI_NOT_FOUND = 3,	/* no such sandbox or policy (HTTP 404) */
	CLI_CONFLICT = 4,	/* already exists, or busy (HTTP 409) */
	CLI_UNREACHABLE = 5,	/* no daemon answers on the control socket */
	CLI_REJECTED = 6,	/* invalid input: the daemon refused it (HTTP 400, 413) or
				 * `policy check` found an error */
	CLI_CHANGED = 7,	/* `policy replay --fail-on`: a change of that kind */
	CLI_VERIFY_FAILED = CLI_CHANGED,	/* `netd verify` ran, and a probe found a policy not
					 * held: the same "the check found something" status */
};

/*
 * CLI_AUDIT_EVENTS - the events `netd audit --event` takes (docs/audit.md),
 * wrapped as `netd audit --help` shows them: the one list that the help
 * prints and that cli_audit.c checks --event against (words apart by
 * commas and white space).  tests/docs_check.sh ("events") fails if a
 * product file writes an event this list lacks.
 */
#define CLI_AUDIT_EVENTS                                                              \
	"dns, dns_suppressed, conn, conn_open, conn_update, conn_late,\n"             \
	"                   deny, deny_suppressed, sni, sni_suppressed, sandbox,\n"    \
	"                   policy_reload, verify, http, budget, netd"

/*
 * cli_exit_from_http() - the exit status for an HTTP @status from the
 * control API (2xx -> CLI_OK).  Pure.
 */
int cli_exit_from_http(int status);

/*
 * cli_help_wanted() - is there a -h/--help among @argv[0..@argc) before a
 * "--" (after which the words belong to `exec`'s COMMAND)?  Pure.
 */
bool cli_help_wanted(int argc, char *const *argv);

/*
 * cli_help_print() - print the help of the most specific command that
 * @argv names ("sandbox create", else "sandbox", ...), with the exit
 * statuses (those it can return where its help lists them, as `audit`'s;
 * else the shared table), on @out.  @argv[0] is the command.
 * Return: CLI_OK; CLI_USAGE (and a line on stderr) if @argv[0] is no command.
 */
int cli_help_print(int argc, char *const *argv, FILE *out);

/* cli_help_exit_codes() - the exit status table, on @out. */
void cli_help_exit_codes(FILE *out);

/*
 * cli_usage_of() - a usage error in the words @argv[0..@argc) (@argv[0] the
 * command): which words were not understood, then that command's own
 * usage (cli_help_print()), on stderr.  Return: CLI_USAGE.
 */
int cli_usage_of(int argc, char **argv);

/*
 * cli_help_topics() - the i-th "command" or "command subcommand" that has
 * a help text, NULL past the end (for tests and the bash completion).
 */
const char *cli_help_topic(size_t i);

#endif
