/*
 * chain - putting netd-cni at the end of the cluster's own conflist (CNI
 * spec 1.1.0 §1 "plugins", §3 chaining): the DaemonSet's installer reads
 * the node's first network config, appends netd-cni's entry (or updates an
 * entry of type netd-cni already there) and writes it back atomically.
 * Pure over JSON; cni-plugin/install.c does the files.
 */
#ifndef NETD_CNI_CHAIN_H
#define NETD_CNI_CHAIN_H

#include <jansson.h>

#include "cni-plugin/cni.h"

#define CNI_CHAIN_TYPE "netd-cni"

/*
 * cni_chain_merge() - make @conflist's plugins[] end with (or hold) @entry.
 * @conflist: a parsed conflist {cniVersion, name, plugins: [...]}; changed
 * in place.  @entry: a plugin object of "type" netd-cni, "mode" chained;
 * copied, not retained.  An existing netd-cni entry is replaced where it
 * stands (the admin may have put it before portmap); otherwise @entry is
 * appended.
 * Return: 1 changed; 0 already so (nothing to write); -EINVAL with @err
 * (code 7) if @conflist is not a conflist (a single-plugin .conf, no
 * plugins[]) or @entry is not a chained netd-cni entry; -ENOMEM.
 */
int cni_chain_merge(json_t *conflist, const json_t *entry, struct cni_err *err);

/*
 * cni_chain_remove() - drop every netd-cni entry from @conflist's plugins[].
 * Return: how many were dropped (0: nothing to write); -EINVAL if
 * @conflist has no plugins[].
 */
int cni_chain_remove(json_t *conflist);

#endif
