fuzz_ct_SRC := netd/trail/ctmsg.c common/addr.c
