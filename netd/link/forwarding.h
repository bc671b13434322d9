/*
 * forwarding.h - the sysctls that make netd's namespace a router: the only
 * /proc/sys writes netd makes, in its own netns (docs/operations.md).
 */
#ifndef NETD_FORWARDING_H
#define NETD_FORWARDING_H

/*
 * forwarding_enable() - net.ipv4.ip_forward=1 and, if @ipv6,
 * net.ipv6.conf.all.forwarding=1, in the caller's netns.  Return: 0; -errno.
 */
int forwarding_enable(int ipv6);

#endif
