/*
 * ctlreq - the control API's request bodies, parsed and validated.  Pure:
 * JSON text in, a struct out (no daemon state, no I/O), so every byte an
 * API client can send is covered by a fuzz target (tests/fuzz/fuzz_ctlreq).
 */
#ifndef NETD_CTLREQ_H
#define NETD_CTLREQ_H

#include <stddef.h>

#include <jansson.h>

#include "netd/daemon.h"

/*
 * ctlreq_sandbox() - parse a POST /v1/sandboxes body:
 *   {"name", "policy", "netns"?, "ifname"?,
 *    "attach"?: {"host_ifname", "ipv4"?, "ipv6"?},
 *    "addresses"?: {"ipv4"?, "gateway4"?, "ipv6"?, "gateway6"?},
 *    "kind"?: "interface" | "tap",
 *    "tap"?: {"name"?, "owner", "group"?, "queues"?, "mtu"?}}
 * Unknown keys, wrong types and duplicate keys are errors; "name" and
 * "policy" are required; "attach" needs "host_ifname" and an address;
 * "addresses" needs each address with its gateway and excludes "attach";
 * "kind": "tap" needs "tap" with "owner" (a UID) and takes none of netns,
 * ifname, attach, addresses; "tap" without "kind": "tap" is an error.
 * (Whether the values make sense — a valid name, an existing policy —
 * is daemon_sandbox_create()'s to say.)
 * @text, @len: the body, not NUL-terminated; at most CTL_MAX_BODY bytes.
 * @sr: filled with pointers into *@ret_obj, valid until the caller
 *      json_decref()s it.
 * @err, @errsz: on failure, a message for an HTTP 400 body.
 * Return: 0; -EINVAL (bad request, @err filled); -ENOMEM.
 */
int ctlreq_sandbox(const char *text, size_t len, struct sandbox_request *sr, json_t **ret_obj,
		   char *err, size_t errsz);

#endif
