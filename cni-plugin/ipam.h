/*
 * ipam - netd-cni's delegation to an IPAM plugin (CNI spec 1.1.0 §4
 * "Delegated plugin execution procedure"): find it in CNI_PATH, run it with
 * the same environment (CNI_COMMAND replaced) and the same stdin, read its
 * result.  Interface mode only; chained mode leaves addressing to the
 * plugin before netd-cni.
 */
#ifndef NETD_CNI_IPAM_H
#define NETD_CNI_IPAM_H

#include <stddef.h>

#include <jansson.h>

#include "cni-plugin/cni.h"

/*
 * ipam_stdin() - the network config exactly as the runtime wrote it (a
 * delegate gets the same, §4).  Borrowed until the process exits.
 */
void ipam_stdin(const char *buf, size_t len);

/*
 * ipam_exec() - run @c's IPAM plugin for @cmd (ADD, DEL, CHECK, GC); its
 * stderr is ours.  @ret: ADD's parsed result (caller decrefs), or NULL for
 * other commands.  A failing plugin's error object becomes @err (its code,
 * its message prefixed with the plugin).
 * Return: 0; -EINVAL with @err filled.
 */
int ipam_exec(const struct cni_conf *c, const char *cmd, json_t **ret, struct cni_err *err);

/* ipam_undo() - DEL the delegate after a failed ADD (§4); a failure is only logged. */
void ipam_undo(const struct cni_conf *c);

#endif
