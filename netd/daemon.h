/*
 * daemon - `netd run`: owns the configuration, the policies, the sandbox
 * registry, the nf_tables table, the DNS proxy, the audit log and the
 * control socket, and ties them together on one libevent loop.  Its parts
 * live in netd/daemon/ (see netd/daemon/internal.h and
 * docs/architecture.md); the control API reaches them only through
 * struct ctl_ops (netd/api/ctl.h).
 */
#ifndef NETD_DAEMON_H
#define NETD_DAEMON_H


/*
 * daemon_main() - run the daemon until SIGINT/SIGTERM.  @config_path may be
 * NULL (all defaults); @socket_override, if non-NULL, replaces the
 * config's socket.  Return: process exit status (0 clean stop, 1 startup
 * error, already reported on stderr).
 */
int daemon_main(const char *config_path, const char *socket_override);

#endif
