/*
 * box_link - a stand-in for the host's links (netd/link/kernel.h), for the
 * daemon in a box (tests/unit/test_daemon.c): no kernel is asked.  Its
 * "host" is a directory, so it outlives a daemon's restart and the test
 * reads it from another process:
 *
 *   ROOT/links/IFNAME   an interface (a veth's host end, a tap), its text
 *                       the addresses it was given
 *   ROOT/netns/NAME     a named netns (what /run/netns/NAME would be)
 *   ROOT/link.log       one line per op that changes something, in order
 *                       ("netns_create sb1", "veth_setup nd00000 eth0 ...",
 *                       "del nd00000", ...)
 *   ROOT/linkwatch.sock a unix datagram socket, bound while the daemon
 *                       watches links: a datagram "deleted IFNAME" removes
 *                       the interface and tells the daemon, as the kernel's
 *                       RTM_DELLINK event would
 *
 * The host has one interface BOX_LINK_EGRESS (default route via
 * BOX_LINK_ROUTER) with address BOX_LINK_HOST_ADDR.
 */
#ifndef TESTS_UNIT_BOX_LINK_H
#define TESTS_UNIT_BOX_LINK_H

#include "netd/link/kernel.h"

#define BOX_LINK_EGRESS    "eth0"
#define BOX_LINK_HOST_ADDR "192.0.2.1"
#define BOX_LINK_ROUTER    "192.0.2.254"

/*
 * box_link_new() - a stand-in over directory @root (which must exist; its
 * links/ and netns/ are made here).  Return: the table, freed with
 * box_link_free(); NULL (out of memory, or @root unusable: errno).
 */
struct link_kernel *box_link_new(const char *root);

/* box_link_free() - free @k (the watch, if any, closed); NULL-safe. */
void box_link_free(struct link_kernel *k);

#endif
