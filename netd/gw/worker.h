/*
 * gw/worker - the gateway worker process (`netd gateway-worker`, started by
 * netd only): the one place netd parses TLS and HTTP from sandboxes and
 * upstreams.  netd hands it a listening TCP socket (fd GW_IPC_FD_LISTEN)
 * and its end of a socketpair (fd GW_IPC_FD_CHAN, netd/gw/ipc.h); it loads
 * the upstream trust store, then gives up what it could misuse: chroot to
 * an empty directory, netd's chosen user, no capabilities, no new
 * privileges, and a seccomp filter (no exec, no ptrace, no namespaces, no
 * file opened for writing, sockets of AF_INET, AF_INET6 and AF_UNIX only).
 * Its connections: netd/gw/conn.c.  docs/gateway.md.
 */
#ifndef NETD_GW_WORKER_H
#define NETD_GW_WORKER_H

#include <stdint.h>

#include "netd/gw/ipc.h"

/*
 * gw_worker_main() - `netd gateway-worker --user USER --root DIR
 * [--ca-file FILE] [--debug]`: set up, drop privileges, serve until netd closes the
 * channel.  Return: the process's exit status (0: netd closed the
 * channel; 1: set-up failed, said on stderr).
 */
int gw_worker_main(int argc, char **argv);

#endif
