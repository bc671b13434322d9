fuzz_ct_SRC := netd/ctmsg.c common/addr.c
