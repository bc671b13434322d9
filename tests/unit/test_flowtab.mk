test_flowtab_SRC := netd/trail/flowtab.c netd/trail/ctmsg.c common/addr.c
