fuzz_ctcut_SRC := common/addr.c netd/ctmsg.c common/nlbuf.c
