/*
 * cli_args - option values of `netd sandbox create` parsed on the client.
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

#endif
