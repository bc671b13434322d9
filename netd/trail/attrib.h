/*
 * attrib - whose sandbox a packet the kernel logged (nfnetlink_log) came
 * from, for its deny record.  Pure apart from if_indextoname(3): memory
 * and the sandbox registry only.
 */
#ifndef NETD_TRAIL_ATTRIB_H
#define NETD_TRAIL_ATTRIB_H

struct attrib;
struct ct_logpkt;
struct sandbox_table;

/*
 * attrib_new() - an attribution over @sbs (borrowed; it outlives the
 * attribution).  Caller frees with attrib_free().  Return: 0; -ENOMEM.
 */
int attrib_new(struct sandbox_table *sbs, struct attrib **ret);

/* attrib_free() - free @a (NULL-safe); the sandbox table is not touched. */
void attrib_free(struct attrib *a);

/*
 * attrib_sandbox() - the sandbox @p (a logged packet) came from:
 * - by its incoming interface: netd's host veth ("nd%05x" of the slot) or
 *   a microVM's tap, by name; each interface is looked up once, then
 *   cached by ifindex (so is one that is no sandbox's);
 * - else, on a packet that carries FW_CHAINED_MARK (netd/fw.h: the bridge
 *   table checked it at that container's own port), the chained
 *   attachment whose address is its source: behind a bridge the inet hooks
 *   see only the bridge.  The same source without the mark (the uplink,
 *   another interface) is nobody's.
 * Return: borrowed, or NULL (nobody's).
 */
struct sandbox *attrib_sandbox(struct attrib *a, const struct ct_logpkt *p);

/* attrib_forget() - empty the interface cache (a sandbox and its interfaces went). */
void attrib_forget(struct attrib *a);

#endif
