test_flowtab_SRC := netd/flowtab.c netd/ctmsg.c common/addr.c
