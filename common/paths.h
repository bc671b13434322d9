/*
 * paths.h - the default locations netd, its CLI and the CNI plugin agree on.
 * Each can be overridden (config keys, --socket, the CNI config's "socket").
 */
#ifndef NETD_COMMON_PATHS_H
#define NETD_COMMON_PATHS_H

#define NETD_DEFAULT_SOCKET "/run/netd/netd.sock"	/* the control API's unix socket */
#define NETD_DEFAULT_CONFIG "/etc/netd/netd.yaml"

#endif
