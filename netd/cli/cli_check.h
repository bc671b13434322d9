/*
 * cli_check - netd's file checks that need no daemon: policies and netd.yaml.
 */
#ifndef NETD_CLI_CHECK_H
#define NETD_CLI_CHECK_H

/*
 * cli_policy_check() - `netd policy check [--config NETD_YAML] [FILE...]`
 * (@argv[0] "policy", @argv[1] "check"; --config before or after the
 * files, "--" ends the options): each file parsed as the daemon would,
 * with --config its gateway rules checked against that netd.yaml
 * (policy_gateway_check()), without it a note for a file that names
 * credentials; without FILE, every policy file of the policy_dir of
 * --config's netd.yaml, else of NETD_DEFAULT_CONFIG (no environment
 * variable), as `netd run` loads them; every bad rule
 * as FILE:LINE:COL on stderr, "FILE: ok" and the warnings and notes
 * (never-pin CIDRs, excepts another rule allows, SNI gaps) otherwise; one
 * policy name in two files is an error.  Return: CLI_OK; CLI_REJECTED (a
 * file is bad); CLI_NOT_FOUND (no such netd.yaml, policy_dir); CLI_USAGE;
 * CLI_FAILED (out of memory).
 */
int cli_policy_check(int argc, char **argv);

/*
 * cli_config_check() - `netd config check [FILE]` (@argv[0] "config"):
 * netd.yaml(5) read as `netd run` would (default NETD_DEFAULT_CONFIG), the
 * gateway's CA file and user (config_gateway_check()) and every
 * credential's secret loaded (gw_creds_load()) and dropped; a warning for
 * an inline value: in a file group or others may read;
 * @usage_text printed on a bad command line.  Return: CLI_OK; CLI_REJECTED
 * (FILE:LINE:COL on stderr); CLI_NOT_FOUND (no such file); CLI_USAGE;
 * CLI_FAILED.
 */
int cli_config_check(int argc, char **argv, const char *usage_text);

#endif
