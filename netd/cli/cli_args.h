/*
 * cli_args - option values of `netd sandbox create` parsed on the client,
 * and its options read once each with a clear word on each error.
 */
#ifndef NETD_CLI_ARGS_H
#define NETD_CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * cli_tap_owner_arg() - --tap-owner UID[:GID], where either may also be a
 * user or group name, resolved here in the caller's user database (NSS),
 * not by the daemon.  *@group_set: a group was given (*@gid).
 * Return: 0; -EINVAL (malformed or too long); -ENOENT (no such user or group).
 */
int cli_tap_owner_arg(const char *s, uint32_t *uid, bool *group_set, uint32_t *gid);

/*
 * cli_uint_arg() - @s as a decimal in [@min, @max] into *@out (--tap-queues,
 * --tap-mtu); on error says so on stderr naming @opt.  Return: 0; -EINVAL.
 */
int cli_uint_arg(const char *opt, const char *s, unsigned min, unsigned max, unsigned *out);

struct option;

/*
 * cli_opt_next() - getopt_long() over @argv for command @cmd ("sandbox
 * create"), with what it finds wrong said on stderr in one line naming the
 * option: "netd: CMD: --egress-rate wants a value", "unknown option
 * '--bogus'", and "--egress-rate given twice ("5mbit", then "6mbit"): give
 * it once" for an option that takes a value, unless its val is in
 * @repeatable (NULL: none; --audit, --file add up); @seen: the caller's,
 * 128 entries zeroed, indexed by the options' val (< 128).
 * getopt's own message is kept off (its program name would be the
 * command's word).  Return: the option's val; -1 at the end; '?' on an
 * error (said).
 */
int cli_opt_next(const char *cmd, int argc, char **argv, const struct option *opts,
		 const char *repeatable, const char *seen[128]);

#endif
