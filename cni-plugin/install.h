/*
 * install - `netd-cni chain DIR ENTRY.json` and `netd-cni unchain DIR`:
 * the installer's file work, run by the DaemonSet (deploy/kubernetes/
 * install-cni.sh), never by a runtime (runtimes exec plugins with no
 * arguments).  Finds the network config the runtime uses - the first
 * NAME.conf, NAME.conflist or NAME.json in DIR by name, as libcni and containerd
 * (max_conf_num = 1) pick it - merges netd-cni's entry into it
 * (cni-plugin/chain.h) and replaces it atomically: a temp file in DIR,
 * fsync, rename.  A runtime reading the file sees the old or the new
 * config, never half of one.
 */
#ifndef NETD_CNI_INSTALL_H
#define NETD_CNI_INSTALL_H

#define INSTALL_CONF_MAX (1u << 20)	/* bytes of a conflist we read */

/*
 * install_main() - the installer's entry point: @argv[1] is "chain" or
 * "unchain".  Prints one line saying what it did (stdout) or why not
 * (stderr).
 * Return: exit status: 0 done or nothing to do; 1 error; 2 usage.
 */
int install_main(int argc, char **argv);

#endif
